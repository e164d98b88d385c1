/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): zmm latencies in core cycles at
 * 1.7379 cycles per tick (this session's dep_add): vpternlogd through its
 * destination and through either source, vpaddq, add/ternlog and add/xor
 * pairs; the throughput lines are bound by their own chains (ignore).
 * gcc -O1 -mavx512f tern.c; run pinned. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "probe.h"
#define R8(x) x x x x x x x x
#define T(name, body, clob...) static double name(void){ uint64_t t[31]; for(int r=0;r<31;r++){ long it=4096; uint64_t t0=tsc(); \
  __asm__ volatile("1:\n\t" R8(body) "dec %0\n\tjnz 1b\n\t" : "+r"(it) :: clob); t[r]=tsc()-t0;} qsort(t,31,8,cmp); return t[15]/4096.0/8*1.7379; }
#define Z "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7"
T(add_tp, "vpaddq %%zmm16,%%zmm0,%%zmm0\n\tvpaddq %%zmm16,%%zmm1,%%zmm1\n\tvpaddq %%zmm16,%%zmm2,%%zmm2\n\tvpaddq %%zmm16,%%zmm3,%%zmm3\n\tvpaddq %%zmm16,%%zmm4,%%zmm4\n\tvpaddq %%zmm16,%%zmm5,%%zmm5\n\tvpaddq %%zmm16,%%zmm6,%%zmm6\n\tvpaddq %%zmm16,%%zmm7,%%zmm7\n\t", Z)
T(tern_tp, "vpternlogd $0x96,%%zmm16,%%zmm17,%%zmm0\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm1\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm2\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm3\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm4\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm5\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm6\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm7\n\t", Z)
T(xor_tp, "vpxord %%zmm16,%%zmm0,%%zmm0\n\tvpxord %%zmm16,%%zmm1,%%zmm1\n\tvpxord %%zmm16,%%zmm2,%%zmm2\n\tvpxord %%zmm16,%%zmm3,%%zmm3\n\tvpxord %%zmm16,%%zmm4,%%zmm4\n\tvpxord %%zmm16,%%zmm5,%%zmm5\n\tvpxord %%zmm16,%%zmm6,%%zmm6\n\tvpxord %%zmm16,%%zmm7,%%zmm7\n\t", Z)
T(tern_lat_dst, "vpternlogd $0x96,%%zmm16,%%zmm17,%%zmm0\n\t", Z)
T(tern_lat_src, "vpternlogd $0x96,%%zmm0,%%zmm17,%%zmm1\n\tvpternlogd $0x96,%%zmm1,%%zmm17,%%zmm0\n\t", Z)
T(tern_lat_src2, "vpternlogd $0x96,%%zmm17,%%zmm0,%%zmm1\n\tvpternlogd $0x96,%%zmm17,%%zmm1,%%zmm0\n\t", Z)
T(add_lat, "vpaddq %%zmm16,%%zmm0,%%zmm0\n\t", Z)
T(mix_lat, "vpaddq %%zmm16,%%zmm0,%%zmm0\n\tvpternlogd $0x96,%%zmm16,%%zmm17,%%zmm0\n\t", Z)
T(addxor_lat, "vpaddq %%zmm16,%%zmm0,%%zmm0\n\tvpxord %%zmm16,%%zmm0,%%zmm0\n\t", Z)
int main(void){
 printf("throughput (cycles per instruction at 1.7379 c/tick): vpaddq %.2f vpternlogd %.2f vpxord %.2f\n", add_tp()/8, tern_tp()/8, xor_tp()/8);
 printf("latency per instruction: tern via dst %.2f, tern via src1 %.2f, tern via src2 %.2f, vpaddq %.2f, add+tern %.2f, add+xor %.2f\n",
   tern_lat_dst(), tern_lat_src()/2, tern_lat_src2()/2, add_lat(), mix_lat()/2, addxor_lat()/2);
 return 0; }
