# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, session 8): pointer chases through
DRAM that measure the core's queues. Writes a C file to stdout.

  gen_chase.py rob   two independent chases, K filler instructions between
                     their loads (nop, add, vpaddq): how many instructions
                     (or register-writing ones) the core keeps in flight
                     while a load misses (reorder buffer, register files)
  gen_chase.py sch   miss A; K instructions waiting on A's value (add,
                     vpaddq, zmm store, 64-bit store: session 9); miss B,
                     independent: how many waiting instructions the
                     schedulers hold

Per K and kind, ticks per iteration (median of 5). Build the output with
gcc -O1 -mavx512f, run pinned (taskset)."""
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else ''
if MODE not in ('rob', 'sch'):
    sys.exit('usage: gen_chase.py rob|sch > probe.c')
CLOBBER = ('"r8","r9","r10","r11","r12","r13","r14","r15",' +
           ','.join('"xmm%d"' % i for i in range(24)) + ',"memory"')
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
       'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
       '#define N (1<<20)', 'static char scratch[4096] __attribute__((aligned(64)));',
       'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}']
if MODE == 'rob':
    Ks = list(range(16, 513, 16))
    fill = {
        'nop': lambda k: 'nop\\n\\t',
        'add': lambda k: 'add %%%%r%d,%%%%r%d\\n\\t' % (8 + k % 4, 12 + k % 4),   # int PRF
        'vpaddq': lambda k: 'vpaddq %%%%zmm%d,%%%%zmm%d,%%%%zmm%d\\n\\t' % (16 + k % 8, 16 + (k + 1) % 8, k % 16),
    }
    for name, f in fill.items():
        for K in Ks:
            body = ''.join(f(k) for k in range(K))
            asm = '1:\\n\\tmov (%0),%0\\n\\t' + body + 'mov (%1),%1\\n\\t' + body + 'dec %2\\n\\tjnz 1b\\n\\t'
            out.append('static __attribute__((noinline)) void *f_%s_%d(void **pa, void **pb, long it){ void *a = *pa, *b = *pb; char *sc = scratch; __asm__ volatile("%s" : "+r"(a), "+r"(b), "+r"(it) : "r"(sc) : %s); *pa = a; *pb = b; return a; }' % (name, K, asm, CLOBBER))
else:
    Ks = list(range(8, 257, 8))
    fill = {
        'add_dep': (lambda o: '', lambda k, o: 'add %%%d,%%%%r%d\\n\\t' % (o, 8 + k % 8)),
        'vpaddq_dep': (lambda o: 'vmovq %%%d,%%%%xmm0\\n\\t' % o, lambda k, o: 'vpaddq %%%%zmm0,%%%%zmm%d,%%%%zmm%d\\n\\t' % (16 + k % 8, 1 + k % 15)),
        'vstore_dep': (lambda o: 'vmovq %%%d,%%%%xmm0\\n\\t' % o, lambda k, o: 'vmovdqu64 %%%%zmm0,%d(%%3)\\n\\t' % (64 * (k % 32))),
        'store_dep': (lambda o: '', lambda k, o: 'mov %%%d,%d(%%3)\\n\\t' % (o, 8 * (k % 256))),
    }
    for name, (pre, f) in fill.items():
        for K in Ks:
            body = pre(0) + ''.join(f(k, 0) for k in range(K)) + 'mov (%1),%1\\n\\t' + pre(1) + ''.join(f(k, 1) for k in range(K))
            asm = '1:\\n\\tmov (%0),%0\\n\\t' + body + 'dec %2\\n\\tjnz 1b\\n\\t'
            out.append('static __attribute__((noinline)) void *f_%s_%d(void **pa, void **pb, long it){ void *a = *pa, *b = *pb; char *sc = scratch; __asm__ volatile("%s" : "+r"(a), "+r"(b), "+r"(it) : "r"(sc) : %s); *pa = a; *pb = b; return a; }' % (name, K, asm, CLOBBER))
out.append('typedef void *(*rf)(void**,void**,long);')
for i, name in enumerate(fill):
    out.append('static rf T%d[] = {%s};' % (i, ','.join('f_%s_%d' % (name, K) for K in Ks)))
out.append('static int Ks[] = {%s};' % ','.join(map(str, Ks)))
out.append('static const char *nm[] = {%s}; static rf *T[] = {%s};' % (
    ','.join('"%s"' % n for n in fill), ','.join('T%d' % i for i in range(len(fill)))))
out.append(r'''
static void **mk(void){ void **a = aligned_alloc(64, (size_t)N * 64); long *perm = malloc(sizeof(long) * N);
  for (long i = 0; i < N; i++) perm[i] = i;
  for (long i = N - 1; i > 0; i--) { long j = rand() % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  for (long i = 0; i < N; i++) a[perm[i] * 8] = &a[perm[(i + 1) % N] * 8];
  void **p = a[perm[0]*8]; free(perm); return p; }
int main(void){ srand(3); void *a = mk(), *b = mk(); uint64_t s = 0;
  for (int t = 0; t < (int)(sizeof nm / sizeof nm[0]); t++) { printf("%s:", nm[t]);
    for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++) { uint64_t best[5];
      for (int r = 0; r < 5; r++) { uint64_t t0 = tsc(); void *x = T[t][k](&a, &b, 2000); best[r] = tsc() - t0; s += (uint64_t)x; }
      qsort(best, 5, 8, cmp); printf(" %d:%.0f", Ks[k], best[2] / 2000.0); fflush(stdout); }
    printf("\n"); }
  return (int)(s & 0); }''')
print('\n'.join(out))
