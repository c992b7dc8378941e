! test_gd_f - module river's graduated declustering (river/gd.h) from
! Fortran with mpi_f08, on 4 ranks. Each rank writes one partition of a
! collection mirrored twice (partition p on disks p and p+1, 4 KiB blocks
! of 128 records whose ids encode partition and index), partitioned and
! again interleaved; then the ranks read it with river_gd_open and
! river_gd_next until RIVER_EOS under each policy, in RIVER_GD_UNORDERED
! and RIVER_GD_STREAM mode, borrowed (c_ptr) and copied (bytes), with
! custom client and disk ranks, on 4, 2 and 1 ranks, and with emulated
! disk rates. Checked: every record exactly once (order-independent sums
! reduced over the ranks), each block's partition and block index
! (0-based) against its records, stream order (the write order:
! partitions ascending, or stripe by stripe for the interleaved layout),
! the stats, river_gd_fluid_ideal, bad arguments giving RIVER_EINVAL on
! every rank, and failover when a copy is missing or a block is corrupt
! (and the errors when no mirror may be used). A read's stats file
! (river_stats_add_gd, river_stats_write): its GD entry, named, with
! every rank's disk and every byte of the collection received.
module test_gd_f_util
  use, intrinsic :: iso_c_binding
  implicit none

  ! 8 + 4 + 4 + 8 + 8 = 32 bytes, every field on its natural alignment, so
  ! no padding (checked against the schema's record size).
  character(len=*), parameter :: SCHEMA_TEXT = &
      'id:int64, part:int32, idx:int32, hash:int64, neg:int64; key=id'
  type, bind(C) :: grec
    integer(c_int64_t) :: id
    integer(c_int32_t) :: part
    integer(c_int32_t) :: idx
    integer(c_int64_t) :: hash
    integer(c_int64_t) :: neg
  end type grec

  integer(c_int64_t), parameter :: ID_PART = 1000000_c_int64_t

contains

  pure function rec_hash(id) result(h)
    integer(c_int64_t), intent(in) :: id
    integer(c_int64_t) :: h
    h = ieor(id * 40503_c_int64_t, ishft(id, 13)) + 977_c_int64_t
    h = iand(h, int(z'7FFFFFFFFF', c_int64_t))
  end function rec_hash

  ! Record k (0-based) of partition p: every field derived from both.
  pure function make_rec(p, k) result(r)
    integer, intent(in) :: p
    integer(c_int64_t), intent(in) :: k
    type(grec) :: r
    r%id = int(p, c_int64_t) * ID_PART + k
    r%part = int(p, c_int32_t)
    r%idx = int(k, c_int32_t)
    r%hash = rec_hash(r%id)
    r%neg = not(r%id)
  end function make_rec

  logical function same_rec(a, b)
    type(grec), intent(in) :: a, b
    same_rec = a%id == b%id .and. a%part == b%part .and. a%idx == b%idx &
               .and. a%hash == b%hash .and. a%neg == b%neg
  end function same_rec
end module test_gd_f_util

program test_gd_f
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use river
  use ftest
  use test_gd_f_util
  implicit none

  integer, parameter :: NPART = 4, REPL = 2
  integer(c_size_t), parameter :: BLOCK = 4096, RECSZ = 32
  integer, parameter :: RPB = 128          ! records per block
  integer, parameter :: MAXB = 17          ! blocks of the largest partition
  character(len=*), parameter :: NAME = 'fgd.coll', NAME_ILV = 'fgd.ilv'
  integer :: rank, nranks, ierr, p
  integer(c_int64_t) :: nrec(0:NPART - 1), nblk(0:NPART - 1)
  integer(c_int64_t) :: expect(3), all_blocks, all_bytes
  type(river_schema) :: s
  type(river_pcoll) :: pc, pci
  type(river_pcoll_info) :: info
  type(river_perturb) :: pert
  character(len=:), allocatable :: root, str
  character(len=4096) :: disk(0:NPART - 1)
  integer(c_size_t) :: rs

  ! One gd_round on this rank: its plan (round_plan), what its read found
  ! (drain, judge_block) and this rank's stats after it (zero when the
  ! rank is outside the read).
  type :: round_t
    character(len=:), allocatable :: t    ! tag // ': ', heads every check
    logical :: stream, hurt, ilv, sub, default_roles, member, serves
    integer :: cl(0:NPART - 1), dk(0:NPART - 1)   ! client and disk ranks
    integer :: mine_n, mine(NPART)        ! the partitions this rank reads
    ! Stream mode's order: partition and block of the nexp blocks.
    integer :: nexp, exp_p(NPART * MAXB)
    integer(c_int64_t) :: exp_b(NPART * MAXB)
    logical :: seen(0:NPART - 1, 0:MAXB - 1)
    integer(c_int64_t) :: sums(3), nrecv  ! count, ids, hashes; blocks
    integer :: bad_recs, bad_blocks, order_errs, dups
    integer :: pos                        ! stream: blocks delivered so far
    type(river_gd_stats) :: st
  end type round_t

  call ftest_init(rank, nranks)
  call river_init(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_init')
  if (nranks /= NPART) then
    if (rank == 0) write (0, '(a)') 'test_gd_f needs 4 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end if

  ! Partition p: 1000 + 373 p records, 8, 11, 14 and 17 blocks (the last
  ! of each short).
  all_blocks = 0
  expect = 0
  do p = 0, NPART - 1
    nrec(p) = 1000 + 373 * p
    nblk(p) = (nrec(p) + RPB - 1) / RPB
    all_blocks = all_blocks + nblk(p)
    call add_expected(p, expect)
  end do
  all_bytes = expect(1) * RECSZ
  call check(maxval(nblk) == MAXB, 'largest partition has MAXB blocks')

  call constants()
  call fluid_ideal()

  ! ---- a private root, made by rank 0
  root = ftest_mkdtemp('river-gd-f-')

  ! ---- write: rank r writes partition r, mirrored on 2 of 4 disks
  call river_schema_parse(SCHEMA_TEXT, s, ierr)
  call check(ierr == RIVER_SUCCESS, 'schema parse')
  call river_schema_record_size(s, rs)
  call check(rs == RECSZ .and. c_sizeof(make_rec(0, 0_c_int64_t)) == RECSZ, &
             'grec is the record size')
  call river_pcoll_create(MPI_COMM_WORLD, NAME, s, pc, root=root, &
                          disks='d%d', replication=REPL, block_size=BLOCK, &
                          ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll create')
  call write_mine(pc)
  call river_pcoll_commit(pc, ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll commit')

  ! The same records again, as an interleaved collection.
  call river_pcoll_create(MPI_COMM_WORLD, NAME_ILV, s, pci, root=root, &
                          disks='d%d', replication=REPL, block_size=BLOCK, &
                          layout=RIVER_LAYOUT_INTERLEAVED, ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'interleaved pcoll create')
  call write_mine(pci)
  call river_pcoll_commit(pci, ierr)
  call check(ierr == RIVER_SUCCESS, 'interleaved pcoll commit')

  call river_pcoll_open(MPI_COMM_WORLD, NAME, pc, root=root, ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll open')
  call river_pcoll_open(MPI_COMM_WORLD, NAME_ILV, pci, root=root, ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'interleaved pcoll open')
  call river_pcoll_info_get(pc, info)
  call check(info%npartitions == NPART .and. info%ndisks == NPART .and. &
             info%replication == REPL .and. info%block_size == BLOCK .and. &
             info%nrecords == expect(1), 'collection info')
  do p = 0, NPART - 1
    call river_pcoll_disk_path(pc, p, str)
    disk(p) = str
  end do

  ! ---- healthy reads
  call stats_file()
  call gd_round('balanced unordered ptr', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .true.)
  call gd_round('balanced stream bytes', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .false.)
  call gd_round('balanced unordered bytes k=1', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .false., outstanding=1)
  call gd_round('mirror_nogd stream ptr k=1 w=1', RIVER_GD_MIRROR_NOGD, &
                RIVER_GD_STREAM, .true., outstanding=1, window=1)
  call gd_round('nomirror unordered bytes', RIVER_GD_NOMIRROR, &
                RIVER_GD_UNORDERED, .false.)
  call gd_round('nomirror stream ptr k=3', RIVER_GD_NOMIRROR, &
                RIVER_GD_STREAM, .true., outstanding=3)
  ! Roles apart: ranks 0-1 read two partitions each, ranks 2-3 serve the
  ! disks; and reading ranks reversed.
  call gd_round('roles stream ptr', RIVER_GD_BALANCED, RIVER_GD_STREAM, &
                .true., clients=[0, 0, 1, 1], disks=[3, 2, 3, 2])
  call gd_round('roles unordered bytes', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .false., clients=[0, 0, 1, 1], &
                disks=[3, 2, 3, 2])
  call gd_round('reversed stream bytes w=2', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .false., window=2, clients=[3, 2, 1, 0])
  ! On fewer ranks than partitions: 2 ranks each read 2 partitions and
  ! serve 2 disks; 1 rank reads and serves everything.
  call gd_round('2 ranks balanced stream ptr', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .true., nsub=2)
  call gd_round('2 ranks balanced unordered bytes', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .false., nsub=2)
  call gd_round('1 rank mirror_nogd stream bytes', RIVER_GD_MIRROR_NOGD, &
                RIVER_GD_STREAM, .false., nsub=1)
  call gd_round('1 rank balanced unordered ptr', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .true., nsub=1)
  ! The interleaved collection: stream mode goes stripe by stripe over a
  ! rank's partitions (8, 11, 14 and 17 blocks: the short ones drop out).
  call gd_round('interleaved stream ptr', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .true., interleaved=.true.)
  call gd_round('interleaved roles stream bytes', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .false., clients=[0, 0, 1, 1], &
                interleaved=.true.)
  call gd_round('interleaved 1 rank stream ptr w=3', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .true., window=3, nsub=1, interleaved=.true.)
  call gd_round('interleaved 2 ranks mirror_nogd stream bytes', &
                RIVER_GD_MIRROR_NOGD, RIVER_GD_STREAM, .false., nsub=2, &
                interleaved=.true.)
  call gd_round('interleaved unordered bytes', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .false., interleaved=.true.)
  call river_pcoll_close(pci)
  ! Emulated disks: 2 MB/s, disk 3 at half speed, a seek cost (and runs
  ! of 2 blocks' lead, as for spinning disks).
  call river_perturb_parse('disk:3=0.5', pert)
  call gd_round('emulated balanced unordered', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .true., rate=2.0e6_c_double, &
                seek=1.0e-4_c_double, pert=pert, run=2)
  call gd_round('emulated mirror_nogd stream', RIVER_GD_MIRROR_NOGD, &
                RIVER_GD_STREAM, .false., rate=2.0e6_c_double, pert=pert)
  call river_perturb_destroy(pert)

  call bad_arguments()

  ! ---- damage: copy 0 of partition 1 (disk 1) is lost, block 3 of copy
  ! 0 of partition 2 (disk 2) is corrupt
  call river_pcoll_close(pc)
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) call damage()
  call MPI_Barrier(MPI_COMM_WORLD)
  call river_pcoll_open(MPI_COMM_WORLD, NAME, pc, root=root, ierr=ierr)
  call check(ierr == RIVER_SUCCESS, 'pcoll reopen after damage')
  call river_log_set_handler(capture, c_null_ptr)
  call gd_round('damaged balanced unordered', RIVER_GD_BALANCED, &
                RIVER_GD_UNORDERED, .true., damaged=.true.)
  call gd_round('damaged balanced stream', RIVER_GD_BALANCED, &
                RIVER_GD_STREAM, .false., damaged=.true.)
  call gd_round('damaged mirror_nogd stream', RIVER_GD_MIRROR_NOGD, &
                RIVER_GD_STREAM, .true., damaged=.true.)
  call gd_round('damaged mirror_nogd unordered w/ roles', &
                RIVER_GD_MIRROR_NOGD, RIVER_GD_UNORDERED, .false., &
                clients=[2, 3, 0, 1], damaged=.true.)
  call river_log_reset_handler()
  call nomirror_fails()
  call river_pcoll_close(pc)

  ! ---- clean up: remove the collection, then the (empty) directories
  call MPI_Barrier(MPI_COMM_WORLD)
  if (rank == 0) then
    call river_pcoll_remove(NAME, root=root, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'pcoll remove')
    call river_pcoll_remove(NAME_ILV, root=root, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'interleaved pcoll remove')
    do p = 0, NPART - 1
      call check(c_rmdir(cstr(trim(disk(p)))) == 0, 'rmdir ' // trim(disk(p)))
    end do
    call check(c_rmdir(cstr(root)) == 0, 'rmdir ' // root)
  end if
  call river_schema_destroy(s)
  deallocate(root, str)   ! main's variables are saved: no leak reports

  call river_finalize(ierr)
  call check(ierr == RIVER_SUCCESS, 'river_finalize')
  call ftest_finish('test_gd_f')

contains

  ! A whole read with its stats file: rank 0 reads it back and finds the
  ! GD entry, a disk row for every rank and all_bytes received in all.
  subroutine stats_file()
    character(len=:), allocatable :: path, text
    type(river_stats) :: sf
    type(river_gd) :: gd
    type(c_ptr) :: ptr
    integer(c_size_t) :: n
    integer :: k, at, disks
    integer(c_int64_t) :: got, b

    path = root // '/gd.stats.json'
    call river_stats_create(MPI_COMM_WORLD, sf, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'stats: create')
    call river_gd_open(MPI_COMM_WORLD, pc, gd, ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'stats: gd open')
    do
      call river_gd_next(gd, ptr, n, ierr=ierr)
      if (ierr /= RIVER_SUCCESS) exit
    end do
    call check(ierr == RIVER_EOS, 'stats: the read to its end')
    call river_stats_add_gd(sf, gd, 'fread', ierr)
    call check(ierr == RIVER_SUCCESS, 'stats: add_gd')
    call river_gd_close(gd, ierr)
    call river_stats_write(sf, path, ierr)
    call check(ierr == RIVER_SUCCESS, 'stats: write')
    call river_stats_destroy(sf, ierr)
    if (rank /= 0) return
    call ftest_stats_ok(path, '--flows 0 --gd-bytes ' // itoa(all_bytes))
    if (.not. ftest_take_file(path, text)) return
    call check(index(text, '"label": "fread"') > 0, 'stats: the gd entry')
    ! Each disk's entry has "served"; each client's "bytes_received".
    disks = 0
    got = 0
    at = 1
    do
      k = index(text(at:), '"served": [')
      if (k == 0) exit
      disks = disks + 1
      at = at + k
    end do
    at = 1
    do
      k = index(text(at:), '"bytes_received": ')
      if (k == 0) exit
      at = at + k + len('"bytes_received": ') - 1
      read(text(at:at + scan(text(at:), ',}' // new_line('a')) - 2), *) b
      got = got + b
    end do
    call check(disks == NPART, 'stats: a disk row for every disk, ' // &
               itoa(int(disks, c_int64_t)))
    call check(got == all_bytes, 'stats: every byte received, ' // &
               itoa(got) // ' of ' // itoa(all_bytes))
  end subroutine stats_file

  ! Count, sum of ids and sum of hashes of partition p, added to sums.
  subroutine add_expected(pp, sums)
    integer, intent(in) :: pp
    integer(c_int64_t), intent(inout) :: sums(3)
    integer(c_int64_t) :: k
    type(grec) :: r
    do k = 0, nrec(pp) - 1
      r = make_rec(pp, k)
      sums = sums + [1_c_int64_t, r%id, r%hash]
    end do
  end subroutine add_expected

  subroutine constants()
    call check(RIVER_GD_BALANCED /= RIVER_GD_MIRROR_NOGD .and. &
               RIVER_GD_BALANCED /= RIVER_GD_NOMIRROR .and. &
               RIVER_GD_MIRROR_NOGD /= RIVER_GD_NOMIRROR, 'policies differ')
    call check(RIVER_GD_UNORDERED /= RIVER_GD_STREAM, 'modes differ')
    call check(RIVER_GD_DEFAULT_OUTSTANDING > 0, 'default outstanding > 0')
    call check(RIVER_GD_MAX_REPLICATION >= REPL, 'max replication')
  end subroutine constants

  subroutine fluid_ideal()
    real(c_double) :: per, tot, rates(5)
    real(c_double), parameter :: eps = 1.0e-12_c_double
    ! 4 disks at 1, one at 0.5, r = 2: the whole ring binds, 3.5 / 4.
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double, 1.0_c_double, &
                               0.5_c_double], 4, 2, per, tot, ierr)
    call check(ierr == RIVER_SUCCESS, 'fluid ideal')
    call check(abs(per - 0.875_c_double) < eps, 'fluid ideal per client')
    call check(abs(tot - 3.5_c_double) < eps, 'fluid ideal total')
    ! r = 1: each client has only its own disk, the slowest binds.
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double, 1.0_c_double, &
                               0.5_c_double], 4, 1, per, tot)
    call check(abs(per - 0.5_c_double) < eps .and. &
               abs(tot - 2.0_c_double) < eps, 'fluid ideal r=1')
    ! A dead disk with r = 2: the two clients next to it share 1 disk's
    ! worth with their other disks: run {2,3} on disks 2,3,0 = 2 / 2 = 1,
    ! run {3} on disks 3,0 = 1; the ring 3 / 4 binds.
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double, 1.0_c_double, &
                               0.0_c_double], 4, 2, per)
    call check(abs(per - 0.75_c_double) < eps, 'fluid ideal dead disk')
    ! Only the total, and a strided section of rates (passed as a copy).
    rates = [1.0_c_double, 9.0_c_double, 1.0_c_double, 9.0_c_double, &
             0.5_c_double]
    call river_gd_fluid_ideal(rates(1:5:2), 3, 3, total=tot)
    call check(abs(tot - 2.5_c_double) < eps, 'fluid ideal r=n section')
    ! Bad arguments.
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double], 2, 0, per, tot, &
                              ierr)
    call check(ierr == RIVER_EINVAL, 'fluid ideal r=0: RIVER_EINVAL')
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double], 2, 3, per, tot, &
                              ierr)
    call check(ierr == RIVER_EINVAL, 'fluid ideal r>n: RIVER_EINVAL')
    call river_gd_fluid_ideal([1.0_c_double, -1.0_c_double], 2, 1, per, &
                              tot, ierr)
    call check(ierr == RIVER_EINVAL, 'fluid ideal negative: RIVER_EINVAL')
    call river_gd_fluid_ideal([1.0_c_double, 1.0_c_double], 3, 1, per, tot, &
                              ierr)
    call check(ierr == RIVER_EINVAL, 'fluid ideal n>size: RIVER_EINVAL')
    call river_gd_fluid_ideal(rates(1:0), 0, 1, per, tot, ierr)
    call check(ierr == RIVER_EINVAL, 'fluid ideal n=0: RIVER_EINVAL')
  end subroutine fluid_ideal

  ! This rank's partition, written in a few pieces.
  subroutine write_mine(h)
    type(river_pcoll), intent(in) :: h
    type(grec), allocatable :: recs(:)
    integer(c_int64_t) :: k
    integer :: n
    n = int(nrec(rank))
    allocate(recs(n))
    do k = 0, nrec(rank) - 1
      recs(k + 1) = make_rec(rank, k)
    end do
    call river_pcoll_write(h, recs, 100_c_size_t, ierr)
    call check(ierr == RIVER_SUCCESS, 'pcoll write')
    call river_pcoll_write(h, recs(101:n), int(n - 100, c_size_t), ierr)
    call check(ierr == RIVER_SUCCESS, 'pcoll write rest')
  end subroutine write_mine

  ! Rank 0: lose copy 0 of partition 1, corrupt block 3 of copy 0 of
  ! partition 2 (one byte of its first record; the block's CRC no longer
  ! matches).
  subroutine damage()
    type(river_pcoll) :: h
    type(river_pcoll_part) :: part
    character(len=:), allocatable :: path
    integer(c_int8_t) :: byte
    integer :: u, ios
    integer(c_int64_t) :: pos
    call river_pcoll_open(MPI_COMM_SELF, NAME, h, root=root)
    call river_pcoll_partition(h, 1, part)
    path = trim(disk(part%first_disk)) // '/' // river_c_string(part%path)
    call check(c_unlink(cstr(path)) == 0, 'remove copy 0 of partition 1')
    call river_pcoll_partition(h, 2, part)
    path = trim(disk(part%first_disk)) // '/' // river_c_string(part%path)
    ! Block 3 starts after the 4 KiB header and 3 blocks (1-based pos).
    pos = 4096_c_int64_t + 3_c_int64_t * int(BLOCK, c_int64_t) + 1 + 9
    open (newunit=u, file=path, access='stream', form='unformatted', &
          action='readwrite', status='old', iostat=ios)
    call check(ios == 0, 'open copy 0 of partition 2')
    if (ios == 0) then
      read (u, pos=pos, iostat=ios) byte
      call check(ios == 0, 'read the byte to corrupt')
      byte = not(byte)
      write (u, pos=pos, iostat=ios) byte
      call check(ios == 0, 'corrupt block 3')
      close (u)
    end if
    call river_pcoll_close(h)
  end subroutine damage

  ! One GD read of the whole collection; every check on every rank.
  ! clients/disks: client_ranks/disk_ranks (default p mod size, d mod
  ! size). nsub: read on a communicator of ranks 0..nsub-1 (with the
  ! collection opened on it) instead of MPI_COMM_WORLD; the other ranks
  ! only join the checks. damaged: after damage() (failovers expected, no
  ! errors). interleaved: read the interleaved collection (stream order
  ! stripe by stripe) instead of the partitioned one.
  subroutine gd_round(tag, policy, mode, use_ptr, outstanding, window, &
                      clients, disks, rate, seek, pert, damaged, nsub, &
                      interleaved, run)
    character(len=*), intent(in) :: tag
    integer, intent(in) :: policy, mode
    logical, intent(in) :: use_ptr
    integer, optional, intent(in) :: outstanding, window
    integer, optional, intent(in) :: clients(:), disks(:)
    real(c_double), optional, intent(in) :: rate, seek
    type(river_perturb), optional, intent(in) :: pert
    logical, optional, intent(in) :: damaged
    integer, optional, intent(in) :: nsub
    logical, optional, intent(in) :: interleaved
    integer, optional, intent(in) :: run
    type(round_t) :: rd
    call round_plan(rd, tag, mode, clients, disks, damaged, nsub, &
                    interleaved)
    call round_read(rd, policy, mode, use_ptr, outstanding, window, &
                    clients, disks, rate, seek, pert, run)
    call round_check_stats(rd, policy)
    call round_check_totals(rd, rate)
  end subroutine gd_round

  ! Who reads and serves what in this round (gd_round's arguments of the
  ! same names), and in stream mode the order of this rank's blocks.
  subroutine round_plan(rd, tag, mode, clients, disks, damaged, nsub, &
                        interleaved)
    type(round_t), intent(out) :: rd
    character(len=*), intent(in) :: tag
    integer, intent(in) :: mode
    integer, optional, intent(in) :: clients(:), disks(:)
    logical, optional, intent(in) :: damaged
    integer, optional, intent(in) :: nsub
    logical, optional, intent(in) :: interleaved
    integer :: q, ns
    rd%t = tag // ': '
    rd%stream = mode == RIVER_GD_STREAM
    rd%hurt = .false.
    if (present(damaged)) rd%hurt = damaged
    rd%ilv = .false.
    if (present(interleaved)) rd%ilv = interleaved
    rd%sub = present(nsub)
    rd%default_roles = .not. present(disks) .and. &
                       .not. present(clients) .and. .not. present(nsub)
    ns = nranks
    if (present(nsub)) ns = nsub
    rd%member = rank < ns
    do q = 0, NPART - 1
      rd%cl(q) = mod(q, ns)
      rd%dk(q) = mod(q, ns)
      if (present(clients)) rd%cl(q) = clients(q + 1)
      if (present(disks)) rd%dk(q) = disks(q + 1)
    end do
    rd%serves = any(rd%dk == rank)
    rd%mine_n = 0
    do q = 0, NPART - 1
      if (rd%cl(q) == rank) then
        rd%mine_n = rd%mine_n + 1
        rd%mine(rd%mine_n) = q
      end if
    end do
    call stream_order(rd)
  end subroutine round_plan

  ! Stream mode's order: the write order of this rank's partitions, each
  ! whole in ascending order, or stripe by stripe (block b of each
  ! partition that has one, then block b + 1).
  subroutine stream_order(rd)
    type(round_t), intent(inout) :: rd
    integer :: k
    integer(c_int64_t) :: b
    rd%nexp = 0
    if (rd%ilv) then
      do b = 0, MAXB - 1
        do k = 1, rd%mine_n
          if (b < nblk(rd%mine(k))) then
            rd%nexp = rd%nexp + 1
            rd%exp_p(rd%nexp) = rd%mine(k)
            rd%exp_b(rd%nexp) = b
          end if
        end do
      end do
    else
      do k = 1, rd%mine_n
        do b = 0, nblk(rd%mine(k)) - 1
          rd%nexp = rd%nexp + 1
          rd%exp_p(rd%nexp) = rd%mine(k)
          rd%exp_b(rd%nexp) = b
        end do
      end do
    end if
  end subroutine stream_order

  ! The read, on the ranks of the round's communicator (the others keep
  ! rd's findings empty and the stats zero): the collection (opened on
  ! the sub-communicator with nsub), a GD handle over it, every block
  ! (drain), then the stats and the close (close_gd).
  subroutine round_read(rd, policy, mode, use_ptr, outstanding, window, &
                        clients, disks, rate, seek, pert, run)
    type(round_t), intent(inout) :: rd
    integer, intent(in) :: policy, mode
    logical, intent(in) :: use_ptr
    integer, optional, intent(in) :: outstanding, window, run
    integer, optional, intent(in) :: clients(:), disks(:)
    real(c_double), optional, intent(in) :: rate, seek
    type(river_perturb), optional, intent(in) :: pert
    character(len=:), allocatable :: cname
    type(MPI_Comm) :: comm
    type(river_pcoll) :: h
    type(river_gd) :: gd
    rd%seen = .false.
    rd%sums = 0
    rd%nrecv = 0
    rd%st = river_gd_stats()
    call MPI_Comm_split(MPI_COMM_WORLD, merge(0, MPI_UNDEFINED, rd%member), &
                        rank, comm)
    read: if (rd%member) then
      if (rd%sub) then
        cname = NAME
        if (rd%ilv) cname = NAME_ILV
        call river_pcoll_open(comm, cname, h, root=root, ierr=ierr)
        call check(ierr == RIVER_SUCCESS, &
                   rd%t // 'pcoll open on the sub-comm')
      else if (rd%ilv) then
        h = pci
      else
        h = pc
      end if
      call river_gd_open(comm, h, gd, policy=policy, mode=mode, &
                         outstanding=outstanding, window=window, &
                         disk_ranks=disks, client_ranks=clients, &
                         disk_rate=rate, seek_seconds=seek, perturb=pert, &
                         run_blocks=run, ierr=ierr)
      call check(ierr == RIVER_SUCCESS, &
                 rd%t // 'open: ' // river_err_name(ierr))
      if (ierr /= RIVER_SUCCESS) exit read   ! on every rank of comm
      call drain(rd, gd, use_ptr)
      call close_gd(rd, gd)
      if (rd%sub) call river_pcoll_close(h)
    end if read
    if (rd%member) call MPI_Comm_free(comm)
  end subroutine round_read

  ! river_gd_next until it stops, each block judged (judge_block); then
  ! the end: RIVER_EOS with nothing delivered, the faults counted on the
  ! way (check_blocks), and RIVER_EOS again.
  subroutine drain(rd, gd, use_ptr)
    type(round_t), intent(inout) :: rd
    type(river_gd), intent(in) :: gd
    logical, intent(in) :: use_ptr
    integer :: part
    integer(c_int64_t) :: blk
    integer(c_size_t) :: n
    type(c_ptr) :: ptr
    integer(c_int8_t), allocatable :: bytes(:)
    type(grec), allocatable :: recs(:)
    logical :: got
    rd%bad_recs = 0
    rd%bad_blocks = 0
    rd%order_errs = 0
    rd%dups = 0
    rd%pos = 0
    do
      if (use_ptr) then
        call river_gd_next(gd, ptr, n, part, blk, ierr)
      else
        call river_gd_next(gd, bytes, n, part, blk, ierr)
      end if
      if (ierr /= RIVER_SUCCESS) exit
      call unpack_block(use_ptr, ptr, bytes, n, recs, got)
      if (got) then
        call judge_block(rd, part, blk, n, recs)
      else
        rd%bad_blocks = rd%bad_blocks + 1
      end if
    end do
    call check(ierr == RIVER_EOS, rd%t // 'ends with RIVER_EOS, got ' // &
               river_err_name(ierr))
    if (use_ptr) then
      call check(.not. c_associated(ptr) .and. n == 0, &
                 rd%t // 'EOS: no records')
    else
      call check(allocated(bytes), rd%t // 'EOS: bytes allocated')
      if (allocated(bytes)) call check(size(bytes) == 0 .and. n == 0, &
                                       rd%t // 'EOS: bytes empty')
    end if
    call check_blocks(rd)
    ! EOS again; without ierr it is a status, not a stop.
    if (use_ptr) then
      call river_gd_next(gd, ptr, n)
      call check(.not. c_associated(ptr) .and. n == 0, rd%t // 'EOS again')
    else
      call river_gd_next(gd, bytes, n, ierr=ierr)
      call check(ierr == RIVER_EOS .and. size(bytes) == 0, &
                 rd%t // 'EOS again')
    end if
  end subroutine drain

  ! The n records of a delivered block, from the borrowed pointer
  ! (use_ptr) or the copied bytes; got is false when the buffer cannot
  ! hold them (a null pointer, no records, or the wrong number of bytes).
  subroutine unpack_block(use_ptr, ptr, bytes, n, recs, got)
    logical, intent(in) :: use_ptr
    type(c_ptr), intent(in) :: ptr
    integer(c_int8_t), allocatable, intent(in) :: bytes(:)
    integer(c_size_t), intent(in) :: n
    type(grec), allocatable, intent(inout) :: recs(:)
    logical, intent(out) :: got
    type(grec), pointer :: view(:)
    got = .false.
    if (use_ptr) then
      if (.not. c_associated(ptr) .or. n == 0) return
      call c_f_pointer(ptr, view, [n])
      recs = view
    else
      if (size(bytes, kind=c_size_t) /= n * RECSZ) return
      recs = transfer(bytes, [make_rec(0, 0_c_int64_t)])
    end if
    got = .true.
  end subroutine unpack_block

  ! The block: one of this rank's partitions, in range, not seen yet,
  ! holding exactly its records, and in stream mode the next one in
  ! rd's order. Faults are counted in rd (checked by check_blocks);
  ! the records go into rd's sums.
  subroutine judge_block(rd, part, blk, n, recs)
    type(round_t), intent(inout) :: rd
    integer, intent(in) :: part
    integer(c_int64_t), intent(in) :: blk
    integer(c_size_t), intent(in) :: n
    type(grec), intent(in) :: recs(:)
    integer(c_int64_t) :: nr
    integer :: k
    if (part < 0 .or. part >= NPART) then
      rd%bad_blocks = rd%bad_blocks + 1
      return
    end if
    if (rd%cl(part) /= rank .or. blk < 0 .or. blk >= nblk(part)) then
      rd%bad_blocks = rd%bad_blocks + 1
      return
    end if
    if (rd%seen(part, blk)) rd%dups = rd%dups + 1
    rd%seen(part, blk) = .true.
    nr = min(int(RPB, c_int64_t), nrec(part) - blk * RPB)
    if (int(n, c_int64_t) /= nr .or. size(recs) /= nr) then
      rd%bad_blocks = rd%bad_blocks + 1
      return
    end if
    do k = 1, size(recs)
      if (.not. same_rec(recs(k), &
                         make_rec(part, blk * RPB + k - 1))) &
        rd%bad_recs = rd%bad_recs + 1
      rd%sums = rd%sums + [1_c_int64_t, recs(k)%id, recs(k)%hash]
    end do
    rd%nrecv = rd%nrecv + 1
    if (rd%stream) then
      rd%pos = rd%pos + 1
      if (rd%pos > rd%nexp) then
        rd%order_errs = rd%order_errs + 1
      else if (part /= rd%exp_p(rd%pos) .or. blk /= rd%exp_b(rd%pos)) then
        rd%order_errs = rd%order_errs + 1
      end if
    end if
  end subroutine judge_block

  ! What judge_block counted, and every block of this rank's partitions
  ! seen.
  subroutine check_blocks(rd)
    type(round_t), intent(in) :: rd
    integer :: k
    integer(c_int64_t) :: nb
    call check(rd%bad_blocks == 0, rd%t // 'blocks with the right ' // &
               'partition, index and record count')
    call check(rd%bad_recs == 0, rd%t // 'records as written, in block order')
    call check(rd%dups == 0, rd%t // 'no block twice')
    if (rd%stream) call check(rd%order_errs == 0 .and. rd%pos == rd%nexp, &
                              rd%t // 'stream order (write order)')
    do k = 1, rd%mine_n
      nb = nblk(rd%mine(k))
      call check(all(rd%seen(rd%mine(k), 0:nb - 1)), rd%t // 'every ' // &
                 'block of partition ' // itoa(int(rd%mine(k), c_int64_t)))
    end do
  end subroutine check_blocks

  ! This rank's stats into rd%st; close (twice: the second is a no-op),
  ! then a closed handle refuses stats and next.
  subroutine close_gd(rd, gd)
    type(round_t), intent(inout) :: rd
    type(river_gd), intent(inout) :: gd
    type(river_gd_stats) :: st2
    type(c_ptr) :: ptr
    integer(c_size_t) :: n
    call river_gd_stats_get(gd, rd%st, ierr)
    call check(ierr == RIVER_SUCCESS, rd%t // 'stats')
    call river_gd_close(gd, ierr)
    call check(ierr == RIVER_SUCCESS, &
               rd%t // 'close: ' // river_err_name(ierr))
    call river_gd_close(gd, ierr)
    call check(ierr == RIVER_SUCCESS, rd%t // 'close null: no-op')
    call river_gd_stats_get(gd, st2, ierr)
    call check(ierr == RIVER_EINVAL, &
               rd%t // 'stats of a closed handle: EINVAL')
    call river_gd_next(gd, ptr, n, ierr=ierr)
    call check(ierr == RIVER_EINVAL, &
               rd%t // 'next on a closed handle: EINVAL')
  end subroutine close_gd

  ! This rank's stats (zero on a rank outside the read) against its roles,
  ! the policy and the damage.
  subroutine round_check_stats(rd, policy)
    type(round_t), intent(in) :: rd
    integer, intent(in) :: policy
    associate (st => rd%st, t => rd%t, hurt => rd%hurt, &
               mine => rd%mine(1:rd%mine_n))
      call check(st%blocks_received == rd%nrecv, t // 'stats blocks_received')
      call check(st%bytes_received == rd%sums(1) * RECSZ, &
                 t // 'stats bytes_received')
      if (rd%mine_n > 0) then
        call check(st%seconds > 0, t // 'stats seconds on a client')
      else
        call check(st%seconds == 0 .and. st%blocks_received == 0, &
                   t // 'stats: no partitions, nothing received')
      end if
      if (.not. rd%serves) call check(st%blocks_served == 0 .and. &
                                      st%bytes_served == 0 .and. &
                                      st%seeks == 0, &
                                      t // 'stats: no disks, nothing served')
      if (.not. hurt) then
        call check(st%failovers == 0, t // 'stats: no failovers')
      end if
      if (policy /= RIVER_GD_BALANCED .and. .not. hurt .and. &
          rd%default_roles) then
        ! One fixed mirror: disk d serves partition d's copy 0 alone.
        call check(st%blocks_served == nblk(rank), t // 'stats: fixed ' // &
                   'mirror serves its own partition: ' // &
                   itoa(st%blocks_served))
        call check(st%seeks == 0, t // 'stats: fixed mirror never seeks')
      end if
      if (hurt .and. policy == RIVER_GD_MIRROR_NOGD) then
        ! The fixed mirror (copy 0) fails: partition 1's every request in
        ! flight before the first reply (outstanding of them), partition
        ! 2's block 3 once.
        if (any(mine == 1) .and. .not. any(mine == 2)) &
          call check(st%failovers == RIVER_GD_DEFAULT_OUTSTANDING, &
                     t // 'stats: partition 1 fails over, got ' // &
                     itoa(st%failovers))
        if (any(mine == 2) .and. .not. any(mine == 1)) &
          call check(st%failovers == 1, t // 'stats: partition 2 block 3 ' &
                     // 'fails over once, got ' // itoa(st%failovers))
      end if
      if (hurt .and. policy == RIVER_GD_BALANCED .and. any(mine == 1)) &
        call check(st%failovers >= 1, t // 'stats: the lost copy fails over')
    end associate
  end subroutine round_check_stats

  ! Over all ranks: every record exactly once, served = received, and
  ! with an emulated rate no faster than the disks allow.
  subroutine round_check_totals(rd, rate)
    type(round_t), intent(in) :: rd
    real(c_double), optional, intent(in) :: rate
    integer(c_int64_t) :: gsums(3), cnt(4), gcnt(4)
    real(c_double) :: tmax
    call MPI_Allreduce(rd%sums, gsums, 3, MPI_INTEGER8, MPI_SUM, &
                       MPI_COMM_WORLD)
    call check(gsums(1) == expect(1), rd%t // 'exactly once: count ' // &
               itoa(gsums(1)) // ' of ' // itoa(expect(1)))
    call check(gsums(2) == expect(2), rd%t // 'exactly once: sum of ids')
    call check(gsums(3) == expect(3), rd%t // 'exactly once: sum of hashes')
    cnt = [rd%st%blocks_received, rd%st%blocks_served, &
           rd%st%bytes_served, rd%st%failovers]
    call MPI_Allreduce(cnt, gcnt, 4, MPI_INTEGER8, MPI_SUM, MPI_COMM_WORLD)
    call check(gcnt(1) == all_blocks, rd%t // 'stats: blocks received in all')
    call check(gcnt(2) == all_blocks, rd%t // 'stats: blocks served in ' // &
               'all ' // itoa(gcnt(2)) // ' of ' // itoa(all_blocks))
    call check(gcnt(3) == all_bytes, rd%t // 'stats: bytes served in all')
    if (rd%hurt) call check(gcnt(4) >= 1, rd%t // 'stats: failovers somewhere')
    if (present(rate)) then
      ! A disk delivers at most its rate x time + one block (its bucket):
      ! the last client cannot finish before the data could pass.
      call MPI_Allreduce(rd%st%seconds, tmax, 1, MPI_DOUBLE_PRECISION, &
                         MPI_MAX, MPI_COMM_WORLD)
      call check(tmax >= 0.9_c_double * real(all_bytes - NPART * BLOCK, &
                 c_double) / (3.5_c_double * rate), &
                 rd%t // 'emulated rate bounds the time')
    end if
  end subroutine round_check_totals

  ! Bad options: RIVER_EINVAL on every rank (also when only one rank is
  ! wrong), the handle left null, nothing hangs.
  subroutine bad_arguments()
    type(river_gd) :: gd
    type(river_gd_stats) :: st
    type(river_pcoll) :: none
    integer :: got(2)
    call river_log_set_handler(capture, c_null_ptr)
    logged = 0
    call river_gd_open(MPI_COMM_WORLD, pc, gd, outstanding=-1, ierr=ierr)
    call check(ierr == RIVER_EINVAL, 'outstanding=-1: RIVER_EINVAL, got ' &
               // river_err_name(ierr))
    call check(logged > 0, 'outstanding=-1 logged')
    call river_gd_stats_get(gd, st, ierr)
    call check(ierr == RIVER_EINVAL, 'failed open leaves the handle null')
    call expect_einval('policy=99', policy=99)
    call expect_einval('mode=7', mode=7)
    call expect_einval('window=-1', window=-1)
    call expect_einval('disk_rate=-1', rate=-1.0_c_double)
    call expect_einval('seek without a rate', seek=0.01_c_double)
    call expect_einval('run_blocks=-1', run=-1)
    call expect_einval('run_blocks over the most', &
                       run=RIVER_GD_MAX_RUN_BLOCKS + 1)
    call expect_einval('disk_ranks too short', disks=[0, 1])
    call expect_einval('client rank 4', clients=[0, 1, 2, 4])
    call expect_einval('disk rank -1', disks=[0, 1, -1, 3])
    ! One rank alone passes a bad value, or ranks differ.
    if (rank == 2) then
      call expect_einval('window=-1 on rank 2 only', window=-1)
    else
      call expect_einval('window=-1 on rank 2 only')
    end if
    call expect_einval('outstanding differs per rank', outstanding=1 + rank)
    ! A handle that is not an open collection.
    call river_gd_open(MPI_COMM_WORLD, none, gd, ierr=ierr)
    got(1) = ierr
    call MPI_Allreduce(ierr, got(2), 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(got(1) == RIVER_EINVAL .and. got(2) == RIVER_EINVAL, &
               'null collection: RIVER_EINVAL everywhere')
    call river_log_reset_handler()
  end subroutine bad_arguments

  subroutine expect_einval(what, policy, mode, outstanding, window, rate, &
                           seek, disks, clients, run)
    character(len=*), intent(in) :: what
    integer, optional, intent(in) :: policy, mode, outstanding, window, run
    real(c_double), optional, intent(in) :: rate, seek
    integer, optional, intent(in) :: disks(:), clients(:)
    type(river_gd) :: gd
    type(river_gd_stats) :: st
    integer :: e, lo, hi
    call river_gd_open(MPI_COMM_WORLD, pc, gd, policy=policy, mode=mode, &
                       outstanding=outstanding, window=window, &
                       disk_rate=rate, seek_seconds=seek, disk_ranks=disks, &
                       client_ranks=clients, run_blocks=run, ierr=ierr)
    e = ierr
    call MPI_Allreduce(e, lo, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    call MPI_Allreduce(e, hi, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check(e == RIVER_EINVAL .and. lo == hi, what // &
               ': RIVER_EINVAL on every rank, got ' // river_err_name(e))
    call river_gd_stats_get(gd, st, ierr)
    call check(ierr == RIVER_EINVAL, what // ': handle null')
    if (e == RIVER_SUCCESS) then
      ! Do not leave the others waiting: read to the end.
      block
        type(c_ptr) :: r
        integer(c_size_t) :: m
        do
          call river_gd_next(gd, r, m, ierr=ierr)
          if (ierr /= RIVER_SUCCESS) exit
        end do
        call river_gd_close(gd, ierr)
      end block
    end if
  end subroutine expect_einval

  ! With no mirror to fall back on, the damage is an error: the readers of
  ! partitions 1 (copy missing) and 2 (block 3 corrupt) get it from
  ! river_gd_next with a logged error naming partition and block, the
  ! others RIVER_EOS, and river_gd_close gives one error on every rank.
  subroutine nomirror_fails()
    type(river_gd) :: gd
    type(c_ptr) :: r
    integer(c_size_t) :: m
    integer :: e, lo, hi, part
    integer(c_int64_t) :: blk
    call river_log_set_handler(capture, c_null_ptr)
    wanted = 0
    if (rank == 1) want = 'partition 1 block'
    if (rank == 2) want = 'partition 2 block 3'
    call river_gd_open(MPI_COMM_WORLD, pc, gd, policy=RIVER_GD_NOMIRROR, &
                       ierr=ierr)
    call check(ierr == RIVER_SUCCESS, 'nomirror damaged: open')
    do
      call river_gd_next(gd, r, m, part, blk, ierr)
      if (ierr /= RIVER_SUCCESS) exit
      call check(part == rank, 'nomirror damaged: own partition')
      if (rank == 2) call check(blk /= 3, 'nomirror damaged: no corrupt block')
    end do
    select case (rank)
    case (1)
      call check(ierr == RIVER_ENOTFOUND, 'nomirror, lost copy: ' // &
                 'RIVER_ENOTFOUND, got ' // river_err_name(ierr))
      call check(wanted > 0, 'nomirror, lost copy: error names partition ' // &
                 'and block')
    case (2)
      call check(ierr == RIVER_ECORRUPT, 'nomirror, corrupt block: ' // &
                 'RIVER_ECORRUPT, got ' // river_err_name(ierr))
      call check(wanted > 0, 'nomirror, corrupt block: error names ' // &
                 'partition and block')
    case default
      call check(ierr == RIVER_EOS, 'nomirror, intact partition: ' // &
                 'RIVER_EOS, got ' // river_err_name(ierr))
    end select
    call river_gd_close(gd, ierr)
    e = ierr
    call MPI_Allreduce(e, lo, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD)
    call MPI_Allreduce(e, hi, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD)
    call check((e == RIVER_ENOTFOUND .or. e == RIVER_ECORRUPT) .and. &
               lo == hi, 'nomirror damaged: close gives one error ' // &
               'everywhere, got ' // river_err_name(e))
    if (allocated(want)) deallocate(want)
    call river_log_reset_handler()
  end subroutine nomirror_fails
end program test_gd_f
