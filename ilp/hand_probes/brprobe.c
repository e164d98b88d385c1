/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand probe (ilp/README, session 8): the cost of a loop exit whose trip count varies.
 * Build and run: ilp/README.md, session 8, the hand probes paragraph. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "probe.h"
#define NC 4096
static long ns[NC];
__attribute__((noinline)) static long loop(long n){ long a=0,b=0; __asm__ volatile(
 "1:\n\tadd $1,%0\n\tadd $1,%1\n\tdec %2\n\tjnz 1b\n\t" : "+r"(a),"+r"(b),"+r"(n)); return a+b; }
static double run(void){ uint64_t t[101]; long r=0;
  for(int s=0;s<101;s++){uint64_t t0=tsc(); for(int i=0;i<NC;i++) r+=loop(ns[i]); t[s]=tsc()-t0;}
  qsort(t,101,8,cmp); if(r==42)puts(""); return (double)t[50]/NC; }
int main(void){
  srand(1);
  for(int N=2;N<=40;N+=(N<24?2:8)){
   for(int i=0;i<NC;i++) ns[i]=N; double f=run();
   for(int i=0;i<NC;i++) ns[i]=N-1+rand()%3; double r=run();
   printf("N %2d fixed %.2f ticks/call  random{N-1..N+1} %.2f  diff %.2f\n",N,f,r,r-f);
  }
  return 0;
}
