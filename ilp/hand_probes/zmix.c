/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): zmm loads and stores to L1, apart
 * and mixed (2 loads, 1 store, 2 loads and a store, a load and a store per
 * group): ticks per group. gcc -O1 -mavx512f zmix.c; run pinned. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "probe.h"
static unsigned char buf[8192] __attribute__((aligned(64)));
#define R8(x) x x x x x x x x
#define T(name, body) static uint64_t name(long it){ unsigned char *p=buf; uint64_t t0=tsc(); \
  __asm__ volatile("1:\n\t" R8(body) "dec %0\n\tjnz 1b\n\t" : "+r"(it) : "r"(p) : "xmm0","xmm1","xmm2","memory"); return tsc()-t0; }
T(ld2, "vmovdqu64 64(%1),%%zmm0\n\tvmovdqu64 128(%1),%%zmm1\n\t")
T(st1, "vmovdqu64 %%zmm2,256(%1)\n\t")
T(l2s1, "vmovdqu64 64(%1),%%zmm0\n\tvmovdqu64 128(%1),%%zmm1\n\tvmovdqu64 %%zmm2,256(%1)\n\t")
T(l1s1, "vmovdqu64 64(%1),%%zmm0\n\tvmovdqu64 %%zmm2,256(%1)\n\t")
int main(void){ uint64_t t[51]; const char *n[]={"2 loads","1 store","2 loads+1 store","1 load+1 store"}; uint64_t (*f[])(long)={ld2,st1,l2s1,l1s1};
 for(int k=0;k<4;k++){ for(int r=0;r<51;r++) t[r]=f[k](4096); qsort(t,51,8,cmp); printf("%s: %.2f ticks per group\n", n[k], t[25]/4096.0/8); }
 return 0; }
