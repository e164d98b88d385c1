# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, session 9): K 64-bit stores per
iteration to one word, consecutive words or one line each; with one or two
independent adds per store; read-modify-writes of consecutive words
(`add %rax,slot`, the spilled state of the scalar sweep); a load and a
store; three loads and a store ('l3s1', what probe.py mem_mix times);
loads alone. Cycles per group at run 1's clock (1.5918 per tick).
python3 gen_memmix.py > m.c; gcc -O1 m.c; run pinned (taskset)."""
# store rate: K 64-bit stores per iteration, consecutive qwords or one address
Ks = [8, 16, 21, 32, 64, 85]
out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
 'static inline uint64_t tsc(void){uint32_t lo,hi;__asm__ volatile("lfence\\n\\trdtsc\\n\\tlfence":"=a"(lo),"=d"(hi)::"memory");return ((uint64_t)hi<<32)|lo;}',
 'static int cmp(const void*a,const void*b){uint64_t x=*(uint64_t*)a,y=*(uint64_t*)b;return x<y?-1:x>y;}',
 'static unsigned char buf[8192] __attribute__((aligned(64)));']
kinds = {'consec': lambda K, o: ''.join('mov %%%%rax,%d(%%1)\\n\\t' % (o + 8 * k) for k in range(K)),
         'same': lambda K, o: ''.join('mov %%%%rax,%d(%%1)\\n\\t' % o for k in range(K)),
         'line': lambda K, o: ''.join('mov %%%%rax,%d(%%1)\\n\\t' % (o + 64 * k) for k in range(K)),
         'alu1': lambda K, o: ''.join('add $1,%%%%r%d\\n\\tmov %%%%rax,%d(%%1)\\n\\t' % (8 + k % 6, o + 8 * k) for k in range(K)),
         'alu2': lambda K, o: ''.join('add $1,%%%%r%d\\n\\tadd $1,%%%%r%d\\n\\tmov %%%%rax,%d(%%1)\\n\\t' % (8 + k % 6, 8 + (k + 3) % 6, o + 8 * k) for k in range(K)),
         'alu1reg': lambda K, o: ''.join('add $1,%%%%r%d\\n\\tmov %%%%r%d,%d(%%1)\\n\\t' % (8 + k % 6, 8 + (k + 2) % 6, o + 8 * k) for k in range(K)),
         'rmw': lambda K, o: ''.join('add %%%%rax,%d(%%1)\\n\\t' % (o + 8 * k) for k in range(K)),
         'ldst': lambda K, o: ''.join('mov %d(%%1),%%%%r%d\\n\\tmov %%%%rax,%d(%%1)\\n\\t' % (o + 8 * k + 2048, 8 + k % 6, o + 8 * k) for k in range(K)),
         'l3s1': lambda K, o: ''.join('mov %d(%%1),%%%%r%d\\n\\tmov %d(%%1),%%%%r%d\\n\\tmov %d(%%1),%%%%r%d\\n\\tmov %%%%rax,%d(%%1)\\n\\t' % (o + 8 * k + 2048, 8 + k % 6, o + 8 * k + 2560, 8 + (k + 1) % 6, o + 8 * k + 3072, 8 + (k + 2) % 6, o + 8 * k) for k in range(K)),
         'l4': lambda K, o: ''.join('mov %d(%%1),%%%%r%d\\n\\t' % (o + 8 * k + 2048, 8 + k % 6) for k in range(K)),
         'consec_add': lambda K, o: ''.join('add $1,%%%%rax\\n\\tmov %%%%rax,%d(%%1)\\n\\t' % (o + 8 * k) for k in range(K))}
for k, f in kinds.items():
    for K in Ks:
        for o in (0,):
            asm = '1:\\n\\t' + f(K, o) + 'dec %0\\n\\tjnz 1b\\n\\t'
            out.append('static __attribute__((noinline)) uint64_t f_%s_%d_%d(long it){ unsigned char *p=buf+1024; uint64_t t0=tsc(); __asm__ volatile("%s" : "+r"(it) : "r"(p) : "rax","r8","r9","r10","r11","r12","r13","memory"); return tsc()-t0; }' % (k, K, o, asm))
out.append('int main(void){ uint64_t t[51];')
for k in kinds:
    for o in (0,):
        out.append('printf("%s off %d:");' % (k, o))
        for K in Ks:
            out.append('for(int r=0;r<51;r++) t[r]=f_%s_%d_%d(4096); qsort(t,51,8,cmp); printf(" %d:%%.2f", t[25]/4096.0*1.5918/%d);' % (k, K, o, K, K))
        out.append('printf("  (cycles per store)\\n");')
out.append('return 0; }')
print('\n'.join(out))
