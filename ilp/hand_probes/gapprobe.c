/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): the n = 1 seq kernels (s = 1..4)
 * called 64 times back to back at 1408 and 1460 B, with something between
 * the calls: nothing, an lfence (no overlap of calls), 64 or 128 nops, 32
 * independent ready vpxorq, 64 independent adds; ticks per call, median
 * of 1001 stretches. Build as seqprobe.c (README), with -mavx512f. */
/* n = 1 seq kernels called back to back at 1408 B with something between calls */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static unsigned char buf[4096] __attribute__((aligned(64)));
static uint64_t sink;
#define NS 1001
#define R16(x) x x x x x x x x x x x x x x x x
#define RUN(NAME, GAP) static double NAME(kfn f, size_t len){ static uint64_t t[NS]; uint64_t r=0; \
  for(int s=0;s<NS;s++){uint64_t t0=tsc(); for(int j=0;j<64;j++){ r+=f(buf,buf,len); GAP; } t[s]=tsc()-t0;} \
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/64.0; }
RUN(r_plain, )
RUN(r_lfence, __asm__ volatile("lfence":::"memory"))
RUN(r_nop64, __asm__ volatile(R16("nop\n\tnop\n\tnop\n\tnop\n\t")))
RUN(r_nop128, __asm__ volatile(R16("nop\n\tnop\n\tnop\n\tnop\n\t") R16("nop\n\tnop\n\tnop\n\tnop\n\t")))
RUN(r_vx32, __asm__ volatile(R16("vpxorq %%zmm17,%%zmm18,%%zmm19\n\tvpxorq %%zmm17,%%zmm18,%%zmm20\n\t"):::"xmm19","xmm20"))
RUN(r_add64, __asm__ volatile(R16("add $1,%%r8\n\tadd $1,%%r9\n\tadd $1,%%r10\n\tadd $1,%%r11\n\t"):::"r8","r9","r10","r11"))
int main(void){
  memset(buf,1,sizeof buf);
  kfn F[]={cn_ilp_syn_n1_s1_a10_seq_avx512,cn_ilp_syn_n1_s2_a10_seq_avx512,cn_ilp_syn_n1_s3_a10_seq_avx512,cn_ilp_syn_n1_s4_a10_seq_avx512};
  for(int i=0;i<4;i++) for (int k = 0; k < 2; k++){
    size_t len = k ? 1460 : 1408;
    printf("s=%d %4zu B: plain %.1f  lfence %.1f  +64 nop %.1f  +128 nop %.1f  +32 vpxorq %.1f  +64 add %.1f\n", i+1, len,
      r_plain(F[i],len), r_lfence(F[i],len), r_nop64(F[i],len), r_nop128(F[i],len), r_vx32(F[i],len), r_add64(F[i],len));
  }
  return (int)(sink&0);
}
