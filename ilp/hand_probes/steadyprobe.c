/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): the n = 1 seq kernels' steady
 * per-iteration time (16 KB minus 8 KB calls, in L1) beside their time per
 * call at 1408 B. Build as seqprobe.c (README). */
/* per-iteration ticks of the n = 1 seq kernels: long calls (steady chain) vs 22-iteration calls */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static unsigned char buf[32768] __attribute__((aligned(64)));
static uint64_t sink;
#define NS 1001
static double run(kfn f, size_t len, int calls){
  static uint64_t t[NS]; uint64_t r=0;
  for(int s=0;s<NS;s++){uint64_t t0=tsc();
    for(int j=0;j<calls;j++) r+=f(buf,buf,len);
    t[s]=tsc()-t0;}
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/(double)calls;
}
int main(void){
  memset(buf,1,sizeof buf);
  kfn F[]={cn_ilp_syn_n1_s1_a10_seq_avx512,cn_ilp_syn_n1_s2_a10_seq_avx512,cn_ilp_syn_n1_s3_a10_seq_avx512,cn_ilp_syn_n1_s4_a10_seq_avx512,
           cn_ilp_syn_n1_s5_a10_seq_avx512,cn_ilp_syn_n1_s6_a10_seq_avx512,cn_ilp_syn_n1_s8_a10_seq_avx512};
  int S[]={1,2,3,4,5,6,8};
  for(int i=0;i<7;i++){
    double a=run(F[i],1408,64), b=run(F[i],16384,4), c=run(F[i],8192,8);
    double per=(b-c)/128.0;
    printf("s=%d 1408B %.1f ticks/call (%.2f/iter) | 16K %.1f 8K %.1f -> steady %.3f ticks/iter = %.2f cyc/iter\n",
      S[i],a,a/22,b,c,per,per*1.5918);
  }
  return (int)(sink&0);
}
