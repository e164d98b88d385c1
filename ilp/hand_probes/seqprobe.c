/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README, session 8): seq kernels of n = 1..4 per call, and the tail at 1460 against 1408 bytes.
 * Build and run: ilp/README.md, session 8, the hand probes paragraph. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cn_ilp.h"
typedef uint64_t (*kfn)(void *, const void *, size_t);
#include "probe.h"
static unsigned char bufA[4096] __attribute__((aligned(64))), bufB[4096] __attribute__((aligned(64)));
static uint64_t sink;
#define NS 2001
/* mode 0: 64 calls on A; 1: 64 calls alternating A/B; 2: 64 x (f on A, g on A) */
static double run(kfn f, kfn g, int mode, size_t len){
  static uint64_t t[NS]; uint64_t r=0;
  for(int s=0;s<NS;s++){uint64_t t0=tsc();
    for(int j=0;j<64;j++){
      if(mode==0) r+=f(bufA,bufA,len);
      else if(mode==1) r+=f((j&1)?bufB:bufA,(j&1)?bufB:bufA,len);
      else {r+=f(bufA,bufA,len); r+=g(bufA,bufA,len);}
    }
    t[s]=tsc()-t0;}
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/64.0;
}
int main(void){
  memset(bufA,1,4096);memset(bufB,2,4096);
  struct {const char*n;kfn f[5];} S[]={
   {"s2",{0,cn_ilp_syn_n1_s2_a10_seq_avx512,cn_ilp_syn_n2_s2_a10_seq_avx512,cn_ilp_syn_n3_s2_a10_seq_avx512,cn_ilp_syn_n4_s2_a10_seq_avx512}},
   {"s3",{0,cn_ilp_syn_n1_s3_a10_seq_avx512,cn_ilp_syn_n2_s3_a10_seq_avx512,cn_ilp_syn_n3_s3_a10_seq_avx512,cn_ilp_syn_n4_s3_a10_seq_avx512}},
   {"s4",{0,cn_ilp_syn_n1_s4_a10_seq_avx512,cn_ilp_syn_n2_s4_a10_seq_avx512,cn_ilp_syn_n3_s4_a10_seq_avx512,cn_ilp_syn_n4_s4_a10_seq_avx512}},
   {"s1",{0,cn_ilp_syn_n1_s1_a10_seq_avx512,cn_ilp_syn_n2_s1_a10_seq_avx512,cn_ilp_syn_n3_s1_a10_seq_avx512,cn_ilp_syn_n4_s1_a10_seq_avx512}},
  };
  for(int i=0;i<4;i++){
    kfn *f=S[i].f;
    double a=run(f[1],0,0,1460), a1408=run(f[1],0,0,1408), alt=run(f[1],0,1,1460), two=run(f[1],f[1],2,1460);
    double n2=run(f[2],0,0,1460), n3=run(f[3],0,0,1460), n4=run(f[4],0,0,1460);
    printf("%s ticks/call: n1 %.1f (1408B %.1f, alternating bufs %.1f, n1 twice/iter %.1f = %.1f each) | seq n2 %.1f n3 %.1f n4 %.1f | per loop n2 %.1f n3 %.1f n4 %.1f\n",
      S[i].n,a,a1408,alt,two,two/2,n2,n3,n4,n2/2,n3/3,n4/4);
  }
  return (int)(sink&0);
}
