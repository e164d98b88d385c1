/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README.md, session 9): integrated and seq sweep kernels
 * at 1460 B back to back and with an lfence between calls, and their
 * steady per-iteration time (16 KB minus 8 KB calls). Build as seqprobe.c
 * (README) with -mavx512f. */
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
static double run(kfn f, size_t len, int calls, int fence){ static uint64_t t[NS]; uint64_t r=0;
  for(int s=0;s<NS;s++){uint64_t t0=tsc(); for(int j=0;j<calls;j++){ r+=f(buf,buf,len); if(fence) __asm__ volatile("lfence":::"memory");} t[s]=tsc()-t0;}
  sink+=r; qsort(t,NS,8,cmp); return t[NS/2]/(double)calls; }
int main(void){ memset(buf,1,sizeof buf);
  struct {const char *n; kfn f;} K[] = {{"n2.s2 int", cn_ilp_syn_n2_s2_a10_int_avx512}, {"n2.s4 int", cn_ilp_syn_n2_s4_a10_int_avx512},
    {"n4.s4 int", cn_ilp_syn_n4_s4_a10_int_avx512}, {"n3.s3 seq", cn_ilp_syn_n3_s3_a10_seq_avx512}, {"n2.s1 int", cn_ilp_syn_n2_s1_a10_int_avx512}, {"n3.s1 int", cn_ilp_syn_n3_s1_a10_int_avx512}};
  for (int i = 0; i < 6; i++) { double b = run(K[i].f, 16384, 4, 0), c = run(K[i].f, 8192, 8, 0);
    printf("%-10s 1460: %.1f (lfence %.1f)  steady %.2f ticks/iter x 22 = %.1f\n", K[i].n, run(K[i].f,1460,64,0), run(K[i].f,1460,64,1), (b-c)/128, (b-c)/128*22); }
  return (int)(sink&0); }
