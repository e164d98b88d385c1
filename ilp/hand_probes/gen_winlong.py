# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, session 9): the window loop at L =
128, 256, 512 beside the same vpxorq chain carried from iteration to
iteration (no load or store), its latency per instruction in that loop.
python3 gen_winlong.py > l.c; gcc -O1 -mavx512f l.c; run pinned."""
Ls = [128, 256, 512]
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
 'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
 'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}',
 'static unsigned char buf[8192] __attribute__((aligned(64)));']
kinds = {
 # the window loop as probe.py
 'win': lambda L: '1:\\n\\tvmovdqu64 (%1,%0),%%zmm0\\n\\t' + 'vpxorq %%zmm16,%%zmm0,%%zmm0\\n\\t' * L + 'vmovdqu64 %%zmm0,(%1,%0)\\n\\tadd $64,%0\\n\\tand $4032,%0\\n\\tdec %2\\n\\tjnz 1b\\n\\t',
 # the same chain carried across iterations (no load/store): pure latency
 'carried': lambda L: '1:\\n\\t' + 'vpxorq %%zmm16,%%zmm0,%%zmm0\\n\\t' * L + 'add $64,%0\\n\\tand $4032,%0\\n\\tdec %2\\n\\tjnz 1b\\n\\t',
}
for k, f in kinds.items():
    for L in Ls:
        out.append('static __attribute__((noinline)) uint64_t f_%s_%d(long it){ uintptr_t idx=0; unsigned char *p=buf; uint64_t t0=tsc(); __asm__ volatile("%s" : "+r"(idx), "+r"(p), "+r"(it) :: "xmm0","xmm1","xmm2","memory"); return tsc()-t0; }' % (k, L, f(L)))
out.append('int main(void){ uint64_t t[31];')
for k in kinds:
    out.append('printf("%s:");' % k)
    for L in Ls:
        out.append('for(int r=0;r<31;r++) t[r]=f_%s_%d(512); qsort(t,31,8,cmp); printf(" %d:%%.1f (%%.2f/op)", t[15]/512.0*1.5918, t[15]/512.0*1.5918/%d);' % (k, L, L, L))
    out.append('printf("  (core cycles per iteration)\\n");')
out.append('return 0; }')
print('\n'.join(out))
