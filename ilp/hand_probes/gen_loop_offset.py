# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, "Loop heads on 64-byte lines"):
what a scalar loop's start offset within a 64-byte line costs. Writes a C
file to stdout.

The loop is the compiled syn.n1.sS.a10 scalar kernel's: one 8-byte load,
the index add, S `add %rax,<state>` (one per state word), the bound
compare (with a register, or with a stack slot as gcc does once the
state words take every register) and the branch back: 52 bytes for
S = 12. Each variant places the loop head `offset` bytes after a 64-byte
boundary (.p2align 6, then .skip). TSC ticks per byte over 1460 bytes,
200 calls per sample, the median of 41 samples, variants interleaved.

  python3 gen_loop_offset.py [--states 12] [--bound mem|reg] [--offsets 1,4,...] > lo.c
  gcc -O2 lo.c -o lo && taskset -c 1 ./lo

Measured 2026-11-24 (AMD EPYC VM, Zen 5 class), S = 12, bound in memory:
0.244-0.247 TSC/B at offsets 1-10, 0.318-0.319 at 13-22 (the compare and
branch at the end of the next line), 0.250-0.258 at 25-61; S = 11 with the
bound in a register 0.24 and 0.317 at offset 24 alike.
"""
import argparse

STATE = ['r15', 'r13', 'r12', 'rbp', 'r9', 'r8', 'rbx', 'r11', 'rdi', 'rsi', 'rcx', 'r10']


def loop(name, nstate, bound, offset):
    adds = '\n'.join('\t"add %%%%rax,%%%%%s\\n"' % r for r in STATE[:nstate])
    cmp = ('"cmp %%rdx,-0x8(%%rsp)\\n"' if bound == 'mem' else '"cmp %%rdx,%%r10\\n"')
    skip = '.skip %d,0x90\\n' % offset if offset else ''
    return '''
__attribute__((noinline)) static unsigned long %s(const unsigned char *p, unsigned long n)
{
	unsigned long out;
	/* r14: the buffer; the bound in -0x8(%%%%rsp) (red zone) or r10 */
	__asm__ volatile(
	"push %%%%r15\\n push %%%%r14\\n push %%%%r13\\n push %%%%r12\\n push %%%%rbp\\n push %%%%rbx\\n"
	"mov %%%%rsi,-0x8(%%%%rsp)\\n mov %%%%rsi,%%%%r10\\n mov %%%%rdi,%%%%r14\\n"
	"xor %%%%r15d,%%%%r15d\\n xor %%%%r13d,%%%%r13d\\n xor %%%%r12d,%%%%r12d\\n xor %%%%ebp,%%%%ebp\\n"
	"xor %%%%r9d,%%%%r9d\\n xor %%%%r8d,%%%%r8d\\n xor %%%%ebx,%%%%ebx\\n xor %%%%r11d,%%%%r11d\\n"
	"xor %%%%edi,%%%%edi\\n xor %%%%ecx,%%%%ecx\\n xor %%%%esi,%%%%esi\\n mov $8,%%%%edx\\n"
	".p2align 6\\n%s"
	"1: mov -0x8(%%%%r14,%%%%rdx,1),%%%%rax\\n add $8,%%%%rdx\\n"
%s
	%s
	"jae 1b\\n"
	"mov %%%%r15,%%%%rax\\n add %%%%rsi,%%%%rax\\n add %%%%rcx,%%%%rax\\n"
	"pop %%%%rbx\\n pop %%%%rbp\\n pop %%%%r12\\n pop %%%%r13\\n pop %%%%r14\\n pop %%%%r15\\n"
	: "=a"(out), "+D"(p), "+S"(n) : : "rdx", "rcx", "r8", "r9", "r10", "r11", "memory", "cc");
	return out;
}
''' % (name, skip, adds, cmp)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--states', type=int, default=12, choices=range(1, 13))
    ap.add_argument('--bound', choices=('mem', 'reg'), default='mem')
    ap.add_argument('--offsets', default=','.join(str(x) for x in range(1, 64, 3)))
    a = ap.parse_args()
    if a.bound == 'reg' and a.states > 11:
        ap.error('the bound needs r10, a state register at 12 states: --bound mem')
    offs = [int(x) for x in a.offsets.split(',')]
    if any(not 0 <= x < 64 for x in offs):
        ap.error('offsets are bytes after a 64-byte boundary: 0..63')
    names = ['loop_%d' % x for x in offs]
    out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
           '#include <x86intrin.h>']
    out += [loop(n, a.states, a.bound, x) for n, x in zip(names, offs)]
    out.append('typedef unsigned long (*fn)(const unsigned char *, unsigned long);')
    out.append('static const fn fns[] = { %s };' % ', '.join(names))
    out.append('static const int off[] = { %s };' % ', '.join(str(x) for x in offs))
    out.append('''
static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	enum { NV = sizeof(fns) / sizeof(fns[0]), NR = 41, CALLS = 200, SIZE = 1460 };
	static unsigned char buf[1536] __attribute__((aligned(64)));
	static uint64_t t[NV][NR];
	unsigned long s = 0;

	for (int r = 0; r < NR; r++)
		for (int k = 0; k < NV; k++) {
			uint64_t t0 = __rdtsc();
			for (int i = 0; i < CALLS; i++)
				s += fns[k](buf, SIZE);
			t[k][r] = __rdtsc() - t0;
		}
	for (int k = 0; k < NV; k++) {
		qsort(t[k], NR, 8, cmp_u64);
		printf("offset %2d: %.3f TSC/B\\n", off[k], (double)t[k][NR / 2] / CALLS / SIZE);
	}
	return (int)(s & 1);
}''')
    print('\n'.join(out))


if __name__ == '__main__':
    main()
