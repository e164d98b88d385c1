/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): the byte tails: kernels at 1408,
 * 1456, 1460 and 1464 B, hot, 64 calls; ticks per call. Build as
 * seqprobe.c (README) with -mavx512f. */
/* the copy kernels' byte tail: 1456 (no byte tail) vs 1460 B, hot, 64 calls */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static unsigned char src[4096] __attribute__((aligned(64))), dst[4096+2048] __attribute__((aligned(64)));
static uint64_t sink;
#define NS 1001
static double run(kfn f, size_t len, int copy){ static uint64_t t[NS]; uint64_t r=0;
  for(int s=0;s<NS;s++){uint64_t t0=tsc(); for(int j=0;j<64;j++) r+=f(dst+2048*0, copy?src:dst, len); t[s]=tsc()-t0;}
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/64.0; }
int main(void){ memset(src,1,sizeof src); memset(dst,2,sizeof dst);
  struct { const char *n; kfn f; int copy; } K[] = {
    {"copy+syn twin int", cn_ilp_copy_syn_n3_s0_1_1_a2_3_2_o110_int_avx512, 1},
    {"syn twin int (in place)", cn_ilp_syn_n3_s0_1_1_a2_3_2_o110_int_avx512, 0},
    {"copy+bswap32+pes+csum int", cn_ilp_copy_bswap32_pes_csum_int_avx512, 1},
    {"bswap32+pes+csum int", cn_ilp_bswap32_pes_csum_int_avx512, 0},
    {"syn.n1.s2 seq", cn_ilp_syn_n1_s2_a10_seq_avx512, 0} };
  for (int i = 0; i < 5; i++) printf("%-28s 1408 %.1f  1456 %.1f  1460 %.1f  1464 %.1f ticks/call\n", K[i].n,
     run(K[i].f,1408,K[i].copy), run(K[i].f,1456,K[i].copy), run(K[i].f,1460,K[i].copy), run(K[i].f,1464,K[i].copy));
  return (int)(sink&0); }
