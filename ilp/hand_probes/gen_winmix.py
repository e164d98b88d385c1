# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, session 9): probe.py's window loop
(a zmm load, L dependent vpxorq, the store) as is ('plain'), with an
eliminated move after each chain instruction ('mv'), a nop ('nopx'), or an
independent ready vpxorq ('indep'); core cycles per iteration at probe.py
run 1's clock (1.5918 cycles per tick). python3 gen_winmix.py > w.c;
gcc -O1 -mavx512f w.c; run pinned (taskset)."""
# window loops with and without eliminated moves in the chain
Ls = [16, 32, 48, 64, 96, 128]
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
 'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
 'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}',
 'static unsigned char buf[8192] __attribute__((aligned(64)));']
kinds = {
 'plain': lambda L: ''.join('vpxorq %%zmm16,%%zmm0,%%zmm0\\n\\t' for _ in range(L)),
 'mv':    lambda L: ''.join('vpxorq %%zmm16,%%zmm0,%%zmm1\\n\\tvmovdqa64 %%zmm1,%%zmm0\\n\\t' for _ in range(L)),
 'nopx':  lambda L: ''.join('vpxorq %%zmm16,%%zmm0,%%zmm0\\n\\tnop\\n\\t' for _ in range(L)),
 'indep': lambda L: ''.join('vpxorq %%zmm16,%%zmm0,%%zmm0\\n\\tvpxorq %%zmm17,%%zmm18,%%zmm2\\n\\t' for _ in range(L)),
}
for k, f in kinds.items():
    for L in Ls:
        asm = '1:\\n\\tvmovdqu64 (%1,%0),%%zmm0\\n\\t' + f(L) + 'vmovdqu64 %%zmm0,(%1,%0)\\n\\tadd $64,%0\\n\\tand $4032,%0\\n\\tdec %2\\n\\tjnz 1b\\n\\t'
        out.append('static __attribute__((noinline)) uint64_t f_%s_%d(long it){ uintptr_t idx=0; unsigned char *p=buf; uint64_t t0=tsc(); __asm__ volatile("%s" : "+r"(idx), "+r"(p), "+r"(it) :: "xmm0","xmm1","xmm2","memory"); return tsc()-t0; }' % (k, L, asm))
out.append('int main(void){ uint64_t t[101];')
for k in kinds:
    out.append('printf("%s:");' % k)
    for L in Ls:
        out.append('for(int r=0;r<101;r++) t[r]=f_%s_%d(2048); qsort(t,101,8,cmp); printf(" %d:%%.2f", t[50]/2048.0*1.5918);' % (k, L, L))
    out.append('printf("  (core cycles per iteration)\\n");')
out.append('return 0; }')
print('\n'.join(out))
