/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README, session 8): zmm register moves, latency and rate (move elimination).
 * Build and run: ilp/README.md, session 8, the hand probes paragraph. */
#include <stdint.h>
#include <stdio.h>
#include "probe.h"
#define R4(x) x x x x
#define R16(x) R4(x) R4(x) R4(x) R4(x)
#define PROBE(name, ops, body) do { uint64_t best=~0ull; for(int r=0;r<200;r++){uint64_t t0=tsc(); for(long i=0;i<20000;i++) __asm__ volatile(body ::: "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","rax","rbx"); uint64_t t=tsc()-t0; if(t<best)best=t;} printf("%-28s %.3f ticks per op-group\n", name, (double)best/20000.0/(ops)); } while(0)
int main(void){
  PROBE("dep add (1 cyc)", 16, R16("add %%rax,%%rbx\n\t"));
  PROBE("dep vpxorq", 16, R16("vpxorq %%zmm1,%%zmm0,%%zmm0\n\t"));
  PROBE("dep vpxorq+vmovdqa64", 16, R16("vpxorq %%zmm1,%%zmm0,%%zmm2\n\tvmovdqa64 %%zmm2,%%zmm0\n\t"));
  PROBE("dep vpxorq+vmovdqa32", 16, R16("vpxorq %%zmm1,%%zmm0,%%zmm2\n\tvmovdqa32 %%zmm2,%%zmm0\n\t"));
  PROBE("dep vpxorq+2 moves", 16, R16("vpxorq %%zmm1,%%zmm0,%%zmm2\n\tvmovdqa64 %%zmm2,%%zmm3\n\tvmovdqa64 %%zmm3,%%zmm0\n\t"));
  PROBE("dep vpxorq+vmovdqa64 ymm", 16, R16("vpxorq %%ymm1,%%ymm0,%%ymm2\n\tvmovdqa64 %%ymm2,%%ymm0\n\t"));
  PROBE("dep vpternlogd", 16, R16("vpternlogd $0x96,%%zmm1,%%zmm2,%%zmm0\n\t"));
  PROBE("dep vpaddq", 16, R16("vpaddq %%zmm1,%%zmm0,%%zmm0\n\t"));
  PROBE("indep vmovdqa64 x8", 16, R4("vmovdqa64 %%zmm0,%%zmm1\n\tvmovdqa64 %%zmm0,%%zmm2\n\tvmovdqa64 %%zmm0,%%zmm3\n\tvmovdqa64 %%zmm0,%%zmm4\n\t"));
  PROBE("indep vpaddq x4 regs", 16, R4("vpaddq %%zmm7,%%zmm1,%%zmm1\n\tvpaddq %%zmm7,%%zmm2,%%zmm2\n\tvpaddq %%zmm7,%%zmm3,%%zmm3\n\tvpaddq %%zmm7,%%zmm4,%%zmm4\n\t"));
  return 0;
}
