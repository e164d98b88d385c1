/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README, session 8): the kernels called with trip counts around 22 (loop exit prediction).
 * Build and run: ilp/README.md, session 8, the hand probes paragraph. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static unsigned char buf[4096] __attribute__((aligned(64)));
static size_t lens[64];
static double run(kfn f){ static uint64_t t[2001]; uint64_t r=0;
  for(int s=0;s<2001;s++){uint64_t t0=tsc(); for(int j=0;j<64;j++) r+=f(buf,buf,lens[j]); t[s]=tsc()-t0;}
  qsort(t,2001,8,cmp); if(r==42)puts(""); return t[1000]/64.0; }
int main(void){ memset(buf,1,4096); srand(2);
  kfn F[]={cn_ilp_syn_n1_s1_a10_seq_avx512,cn_ilp_syn_n1_s2_a10_seq_avx512,cn_ilp_syn_n1_s3_a10_seq_avx512,cn_ilp_syn_n1_s4_a10_seq_avx512};
  for(int k=0;k<4;k++){
    double a[3];
    for(int m=0;m<3;m++){ for(int j=0;j<64;j++) lens[j]=1344+64*m; a[m]=run(F[k]); }
    for(int j=0;j<64;j++) lens[j]=1344+64*(rand()%3);
    double rnd=run(F[k]);
    printf("s%d fixed 21/22/23 iters: %.1f %.1f %.1f ticks; random mix %.1f (mean of fixed %.1f, +%.1f)\n",k+1,a[0],a[1],a[2],rnd,(a[0]+a[1]+a[2])/3,rnd-(a[0]+a[1]+a[2])/3);
  }
  return 0; }
