/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): the copy kernels at 1460 B, hot,
 * 64 calls, the destination 64 KB + d past the source; ticks per call.
 * Build as seqprobe.c (README) with -mavx512f. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static uint64_t sink;
#define NS 1001
static double run(kfn f, unsigned char *d, unsigned char *s, size_t len){ static uint64_t t[NS]; uint64_t r=0;
  for(int k=0;k<NS;k++){uint64_t t0=tsc(); for(int j=0;j<64;j++) r+=f(d, s, len); t[k]=tsc()-t0;}
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/64.0; }
int main(void){ unsigned char *base = aligned_alloc(4096, 1<<20); memset(base, 1, 1<<20);
  kfn F[] = {cn_ilp_copy_syn_n3_s0_1_1_a2_3_2_o110_int_avx512, cn_ilp_copy_bswap32_pes_csum_int_avx512, cn_ilp_copy_syn_n3_s0_1_1_a2_3_2_o110_seq_avx512, cn_ilp_copy_bswap32_pes_csum_seq_avx512};
  const char *N[] = {"copy twin int", "copy real int", "copy twin seq", "copy real seq"};
  size_t offs[] = {0, 64, 1024, 2048, 2048+64, 3072, 4096-64};
  for (int i = 0; i < 4; i++) { printf("%-14s", N[i]);
    for (int o = 0; o < 7; o++) printf(" +%zu:%.1f", offs[o], run(F[i], base + 65536 + offs[o], base, 1460));
    printf("  (dst - src - 64K, ticks per call)\n"); }
  return (int)(sink & 0); }
