# SPDX-License-Identifier: BSD-2-Clause
# scheduler probe: miss A; K instructions waiting on A's value; miss B (independent)
Ks = list(range(8, 257, 8))
fill = {
 'add_dep': (lambda o: '', lambda k, o: 'add %%%d,%%%%r%d\\n\\t' % (o, 8 + k % 8)),
 'vpaddq_dep': (lambda o: 'vmovq %%%d,%%%%xmm0\\n\\t' % o, lambda k, o: 'vpaddq %%%%zmm0,%%%%zmm%d,%%%%zmm%d\\n\\t' % (16 + k % 8, 1 + k % 15)),
 'vpaddq_dep_store': (lambda o: 'vmovq %%%d,%%%%xmm0\\n\\t' % o, lambda k, o: 'vmovdqu64 %%%%zmm0,%d(%%3)\\n\\t' % (64 * (k % 32))),
}
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
 'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
 '#define N (1<<20)', 'static char scratch[4096] __attribute__((aligned(64)));', 'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}']
for name, (pre, f) in fill.items():
    for K in Ks:
        body = pre(0) + ''.join(f(k, 0) for k in range(K)) + 'mov (%1),%1\\n\\t' + pre(1) + ''.join(f(k, 1) for k in range(K))
        out.append('static __attribute__((noinline)) void *s_%s_%d(void **pa, void **pb, long it){ void *a = *pa, *b = *pb; char *sc = scratch; __asm__ volatile("1:\\n\\tmov (%%0),%%0\\n\\t%sdec %%2\\n\\tjnz 1b\\n\\t" : "+r"(a), "+r"(b), "+r"(it) : "r"(sc) : "r8","r9","r10","r11","r12","r13","r14","r15","xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","xmm14","xmm15","xmm16","xmm17","xmm18","xmm19","xmm20","xmm21","xmm22","xmm23","memory"); *pa = a; *pb = b; return a; }' % (name, K, body))
out.append('typedef void *(*rf)(void**,void**,long);')
for name in fill:
    out.append('static rf T_%s[] = {%s};' % (name, ','.join('s_%s_%d' % (name, K) for K in Ks)))
out.append('static int Ks[] = {%s};' % ','.join(map(str, Ks)))
out.append(r'''
static void **mk(void){ void **a = aligned_alloc(64, (size_t)N * 64); long *perm = malloc(sizeof(long) * N);
  for (long i = 0; i < N; i++) perm[i] = i;
  for (long i = N - 1; i > 0; i--) { long j = rand() % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  for (long i = 0; i < N; i++) a[perm[i] * 8] = &a[perm[(i + 1) % N] * 8];
  void **p = a[perm[0]*8]; free(perm); return p; }
int main(void){ srand(3); void *a = mk(), *b = mk(); uint64_t s = 0;
  const char *nm[] = {"add_dep", "vpaddq_dep", "vstore_dep"}; rf *T[] = {T_add_dep, T_vpaddq_dep, T_vpaddq_dep_store};
  for (int t = 0; t < 3; t++) { printf("%s:", nm[t]);
    for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++) { uint64_t best[5];
      for (int r = 0; r < 5; r++) { uint64_t t0 = tsc(); void *x = T[t][k](&a, &b, 2000); best[r] = tsc() - t0; s += (uint64_t)x; }
      qsort(best, 5, 8, cmp); printf(" %d:%.0f", Ks[k], best[2] / 2000.0); fflush(stdout); }
    printf("\n"); }
  return (int)(s & 0); }''')
open('schprobe.c', 'w').write('\n'.join(out))
