#!/bin/bash
# Build a chroot bundle with Open MPI + River's bench binary for the device machine.
set -e
R=${REPO:-/work/main}/.devmpi/root  # run from the repository root, after a build
rm -rf $R; mkdir -p $R/usr/bin $R/usr/lib; ln -s usr/bin $R/bin; ln -s usr/lib $R/lib; ln -s usr/sbin $R/sbin
files=$( (dpkg -L openmpi-bin libopenmpi3:amd64 openmpi-common libpmix2:amd64; ) | while read f; do [ -f "$f" ] && echo "$f"; done)
extra="/usr/bin/false /usr/bin/true /usr/bin/mkdir /usr/bin/rm /usr/bin/sh /bin/dash /usr/bin/env /etc/passwd /etc/group /etc/hosts /etc/nsswitch.conf /usr/bin/cat /usr/bin/ls"
cp_one() { [ -e "$R$1" ] && return 0; mkdir -p "$R$(dirname "$1")"; if [ -L "$1" ]; then cp -a "$1" "$R$1" 2>/dev/null || true; cp_one "$(readlink -f "$1")"; else cp -a "$1" "$R$1" 2>/dev/null || true; fi; }
for f in $files $extra; do cp_one "$f"; done
# symlinks of openmpi-bin (mpirun -> orterun) : recreate
for l in $(dpkg -L openmpi-bin libopenmpi3:amd64 libpmix2:amd64 | while read f; do [ -L "$f" ] && echo "$f"; done) /etc/alternatives/mpirun /usr/bin/mpirun /usr/bin/mpiexec; do cp_one "$l"; done
mkdir -p $R/usr/local/bin $R/usr/local/lib $R/tmp $R/proc $R/sys $R/dev $R/out
cp -L apps/.libs/river-bench $R/usr/local/bin/
cp -a src/.libs/libriver.so* $R/usr/local/lib/
# shared-library closure
elfs=$(find $R -type f \( -name '*.so*' -o -perm -u+x \) )
for e in $elfs; do
  ldd "$e" 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}' | grep "^/" || true;
done | sort -u > /tmp/libs.txt
for l in $(cat /tmp/libs.txt); do cp_one "$l"; done
# second round for new libs
for l in $(cat /tmp/libs.txt); do ldd "$l" 2>/dev/null | awk '/=>/ {print $3}' | grep '^/' || true; done | sort -u | while read l; do cp_one "$l"; done
cp_one /lib64/ld-linux-x86-64.so.2
du -sh $R
# perf and the memcpy probe
P=$(readlink -f /usr/bin/perf); cp_one /usr/bin/perf; cp_one $P
for l in $(ldd $P | awk '/=>/ {print $3}' | grep '^/'); do cp_one $l; done
cp /tmp/mc/mc $R/usr/local/bin/
