# SPDX-License-Identifier: BSD-2-Clause
# generate robprobe.c: two independent pointer chases through DRAM, K filler
# instructions between the loads; per K and filler type, ticks per iteration
Ks = list(range(16, 513, 16))
fill = {
 'nop': lambda k: 'nop\\n\\t',
 'add': lambda k: 'add %%%%r%d,%%%%r%d\\n\\t' % (8 + k % 4, 12 + k % 4),   # int PRF
 'vpaddq': lambda k: 'vpaddq %%%%zmm%d,%%%%zmm%d,%%%%zmm%d\\n\\t' % (16 + k % 8, 16 + (k+1) % 8, k % 16),
}
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
 'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
 '#define N (1<<20)', 'static void **A, **B;', 'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}']
for name, f in fill.items():
    for K in Ks:
        body = ''.join(f(k) for k in range(K))
        out.append('static __attribute__((noinline)) void *r_%s_%d(void **pa, void **pb, long it){ void *a = *pa, *b = *pb; __asm__ volatile("1:\\n\\tmov (%%0),%%0\\n\\t%smov (%%1),%%1\\n\\t%sdec %%2\\n\\tjnz 1b\\n\\t" : "+r"(a), "+r"(b), "+r"(it) :: "r8","r9","r10","r11","r12","r13","r14","r15","xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","xmm14","xmm15","xmm16","xmm17","xmm18","xmm19","xmm20","xmm21","xmm22","xmm23","memory"); *pa = a; *pb = b; return a; }' % (name, K, body, body))
out.append('typedef void *(*rf)(void**,void**,long);')
for name in fill:
    out.append('static rf T_%s[] = {%s};' % (name, ','.join('r_%s_%d' % (name, K) for K in Ks)))
out.append('static int Ks[] = {%s};' % ','.join(map(str, Ks)))
out.append(r'''
static void **mk(void){ void **a = aligned_alloc(64, (size_t)N * 64); long *perm = malloc(sizeof(long) * N);
  for (long i = 0; i < N; i++) perm[i] = i;
  for (long i = N - 1; i > 0; i--) { long j = rand() % (i + 1), t = perm[i]; perm[i] = perm[j]; perm[j] = t; }
  for (long i = 0; i < N; i++) a[perm[i] * 8] = &a[perm[(i + 1) % N] * 8];
  void **p = a[perm[0]*8]; free(perm); return (void **)&a[0] == 0 ? 0 : p; }
int main(void){ srand(3); A = mk(); B = mk(); void *a = A, *b = B; uint64_t s = 0;
  const char *nm[] = {"nop", "add", "vpaddq"}; rf *T[] = {T_nop, T_add, T_vpaddq};
  for (int t = 0; t < 3; t++) { printf("%s:", nm[t]);
    for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++) { uint64_t best[5];
      for (int r = 0; r < 5; r++) { uint64_t t0 = tsc(); void *x = T[t][k](&a, &b, 2000); best[r] = tsc() - t0; s += (uint64_t)x; }
      qsort(best, 5, 8, cmp); printf(" %d:%.0f", Ks[k], best[2] / 2000.0); fflush(stdout); }
    printf("\n"); }
  return (int)(s & 0); }''')
open('robprobe.c', 'w').write('\n'.join(out))
