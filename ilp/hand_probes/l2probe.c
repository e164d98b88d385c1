/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README, session 8): an in-place AVX-512 pass and a copy
 * over warm buffers of growing size, ticks per byte. gcc -O2 -mavx512f */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>
#include "probe.h"
__attribute__((noinline)) static void rw(char *p, size_t n){ __m512i k=_mm512_set1_epi64(1);
  for(size_t i=0;i<n;i+=64) _mm512_store_si512(p+i,_mm512_xor_si512(_mm512_load_si512(p+i),k)); }
__attribute__((noinline)) static void cp(char *d, const char *s, size_t n){
  for(size_t i=0;i<n;i+=64) _mm512_store_si512(d+i,_mm512_load_si512(s+i)); }
int main(void){ size_t sizes[]={1460&~63,16384,32768,49152,65536,131072,262144};
  char *a=aligned_alloc(4096,1<<20),*b=aligned_alloc(4096,1<<20); memset(a,1,1<<20); memset(b,2,1<<20);
  for(int z=0;z<7;z++){ size_t n=sizes[z]; uint64_t t[2][201];
    for(int r=0;r<201;r++){ uint64_t t1=tsc(); rw(a,n); uint64_t t2=tsc(); cp(b,a,n); uint64_t t3=tsc(); t[0][r]=t2-t1;t[1][r]=t3-t2; }
    for(int k=0;k<2;k++) qsort(t[k],201,8,cmp);
    printf("%7zu B: rmw %.4f  copy %.4f ticks/B (median)\n",n,(double)t[0][100]/n,(double)t[1][100]/n); }
  return 0; }
