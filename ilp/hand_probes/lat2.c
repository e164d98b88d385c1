/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): latencies of the vector ops in the
 * kernels' loops and folds, core cycles at 1.7379 per tick: single-op
 * chains, and pairs that cross lanes or register files (per pair).
 * gcc -O1 -mavx512f lat2.c; run pinned. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "probe.h"
#define R8(x) x x x x x x x x
#define T(name, body) static double name(void){ uint64_t t[31]; for(int r=0;r<31;r++){ long it=4096; uint64_t t0=tsc(); \
  __asm__ volatile("1:\n\t" R8(body) "dec %0\n\tjnz 1b\n\t" : "+r"(it) :: "xmm0","xmm1","xmm2","rax"); t[r]=tsc()-t0;} qsort(t,31,8,cmp); return t[15]/4096.0/8*1.7379; }
T(prorq, "vprorq $1,%%zmm0,%%zmm0\n\t")
T(shufb, "vpshufb %%zmm16,%%zmm0,%%zmm0\n\t")
T(shufd, "vpshufd $0xb1,%%zmm0,%%zmm0\n\t")
T(srlq, "vpsrlq $1,%%zmm0,%%zmm0\n\t")
T(subq, "vpsubq %%zmm16,%%zmm0,%%zmm0\n\t")
T(ext4, "vextracti64x4 $1,%%zmm0,%%ymm1\n\tvinserti64x4 $1,%%ymm1,%%zmm0,%%zmm0\n\t")
T(movq_rt, "vmovq %%xmm0,%%rax\n\tvmovq %%rax,%%xmm0\n\t")
T(bcast, "vmovq %%xmm0,%%rax\n\tvpbroadcastq %%rax,%%zmm0\n\t")
T(pextr, "vpextrq $1,%%xmm0,%%rax\n\tvmovq %%rax,%%xmm0\n\t")
int main(void){
 printf("cycles per instruction (pairs: per pair): vprorq %.2f vpshufb %.2f vpshufd %.2f vpsrlq %.2f vpsubq %.2f | vextracti64x4+vinserti64x4 %.2f, vmovq xmm->r->xmm %.2f, vmovq+vpbroadcastq %.2f, vpextrq+vmovq %.2f\n",
  prorq(), shufb(), shufd(), srlq(), subq(), ext4(), movq_rt(), bcast(), pextr());
 return 0; }
