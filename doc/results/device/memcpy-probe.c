/* memcpy probe: 1 MiB copies cycling over a 64 MiB source into 8 slots. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+1e-9*t.tv_nsec;}
int main(void){
  size_t src_n=64u<<20, sizes[]={65536,262144,1048576};
  unsigned char *src=malloc(src_n); memset(src,1,src_n);
  for(int s=0;s<3;s++){ size_t m=sizes[s]; unsigned char *dst=malloc(8*(m+64)); memset(dst,0,8*(m+64));
    size_t total=4ull<<30, at=0; double t0=now();
    for(size_t done=0,i=0;done<total;done+=m,i++){ memcpy(dst+(i%8)*(m+64)+64, src+at, m); at=(at+m)%src_n; }
    double t=now()-t0; printf("memcpy %7zu B: %.0f MB/s\n", m, total/t/1e6); free(dst);}
  return 0; }
