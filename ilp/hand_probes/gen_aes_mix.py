# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, session 9): what a checksum step
costs beside AES-CTR on 512-bit registers. Writes a C file to stdout.

Each variant is one inline-assembly loop body of four registers of
AES-CTR as the generated copy+aes128ctr+csum loop does it (per register:
counter byte reversal VPSHUFB, XOR of round key 0, counter add; ten VAESENC
round-major across the four; XOR with the input from memory; store), plus a
checksum step per register:

  none         no checksum (the cipher alone)
  vnni         XOR with 0x8000.. and VPDPWSSD (the generator's form)
  add-shift    VPADDQ; VPSRLQ + VPADDQ (the plain AVX-512 form, 3 ops)
  and-add      VPANDQ + VPADDQ (2 simple ops; not a checksum: cost only)
  srl-add      VPSRLQ + VPADDQ (2 ops; cost only)
  add          one VPADDQ (cost only)

It also times 16 independent VAESENC with 16 more instructions of one kind
(vpxorq, vpaddq, vpsrlq, vpshufb, vpdpwssd, vpsadbw): which share the AES
pipes. TSC ticks per loop iteration, median of 7 runs of 10^6.

  python3 gen_aes_mix.py > aes_mix.c
  gcc -O2 -mavx512f -mavx512bw -mvaes -mavx512vnni aes_mix.c -o aes_mix
  taskset -c 1 ./aes_mix

Measured 2026-11-24 (AMD EPYC VM, Zen 5 class): 16 VAESENC 4.6 ticks
alone and with 16 vpxorq/vpaddq/vpsrlq; 5.2-7.4 with 4-16 vpshufb; 9.2-9.3
with 16 vpdpwssd or vpsadbw (their pipes). Four AES-CTR registers: none
12.0, vnni 14.0, add-shift 16.9, and-add 14.7, srl-add 14.4, add 12.3 --
the cipher fills the vector pipes, so two operations of any kind per
register cost ~0.5 tick.

Run it with the other vCPU idle. With a second copy running on core 0 the
core-1 copy measured none 22.5, vnni 24.4, add-shift 37.5: the VM's two
vCPUs share vector pipes (lscpu reports one thread per core), so a helper's
benchmark on core 0 can double a vector-bound timing on core 1."""
import sys

REGS = 4
CLOBBER = ','.join('"xmm%d"' % i for i in range(32)) + ',"memory","k1"'


def aes_regs(csum):
    ins = []
    for r in range(REGS):
        ins += ['vpshufb %%zmm20,%%zmm24,%%zmm{0}'.format(r),
                'vpxorq %%zmm21,%%zmm{0},%%zmm{0}'.format(r),
                'vpaddq %%zmm22,%%zmm24,%%zmm24']
    for rnd in range(10):
        ins += ['vaesenc %%zmm{1},%%zmm{0},%%zmm{0}'.format(r, 8 + rnd) for r in range(REGS)]
    for r in range(REGS):
        ins += ['vpxorq {1}(%0),%%zmm{0},%%zmm{0}'.format(r, 64 * r),
                'vmovdqu64 %%zmm{0},{1}(%1)'.format(r, 64 * r)]
        ins += csum(r)
    return ins


CSUM = {
    'none': lambda r: [],
    'vnni': lambda r: ['vpxorq %%zmm23,%%zmm{0},%%zmm4'.format(r),
                       'vpdpwssd %%zmm25,%%zmm4,%%zmm{0}'.format(26 + r % 2)],
    'add-shift': lambda r: ['vpaddq %%zmm{0},%%zmm26,%%zmm26'.format(r),
                            'vpsrlq $32,%%zmm{0},%%zmm5'.format(r),
                            'vpaddq %%zmm5,%%zmm27,%%zmm27'],
    'and-add': lambda r: ['vpandq %%zmm23,%%zmm{0},%%zmm4'.format(r),
                          'vpaddq %%zmm4,%%zmm26,%%zmm26'],
    'srl-add': lambda r: ['vpsrlq $32,%%zmm{0},%%zmm4'.format(r),
                          'vpaddq %%zmm4,%%zmm26,%%zmm26'],
    'add': lambda r: ['vpaddq %%zmm{0},%%zmm26,%%zmm26'.format(r)],
}

# 16 independent AES chains (zmm0-15) and 16 extra instructions of a kind,
# writing zmm16-23 (inputs zmm29-31)
EXTRA = {
    'vpxorq': 'vpxorq %%zmm31,%%zmm{0},%%zmm{0}',
    'vpaddq': 'vpaddq %%zmm31,%%zmm{0},%%zmm{0}',
    'vpsrlq': 'vpsrlq $32,%%zmm{0},%%zmm{0}',
    'vpshufb': 'vpshufb %%zmm31,%%zmm{0},%%zmm{0}',
    'vpdpwssd': 'vpdpwssd %%zmm31,%%zmm29,%%zmm{0}',
    'vpsadbw': 'vpsadbw %%zmm31,%%zmm{0},%%zmm{0}',
}


def asm(ins):
    return ' '.join('"%s\\n\\t"' % i for i in ins)


def main():
    out = ['#include <stdint.h>', '#include <stdio.h>', '#include <stdlib.h>',
           '#include <x86intrin.h>', '#define N 1000000L',
           'static char in[4096] __attribute__((aligned(64))), out[4096] __attribute__((aligned(64)));',
           'static int cmp(const void *a, const void *b) { double x = *(const double *)a, '
           'y = *(const double *)b; return x < y ? -1 : x > y; }',
           '#define TIME(label, body) do { double s[7]; for (int k = 0; k < 7; k++) { '
           'uint64_t t = __rdtsc(); for (long i = 0; i < N; i++) body; '
           's[k] = (double)(__rdtsc() - t) / N; } qsort(s, 7, sizeof s[0], cmp); '
           'printf("%-28s %6.2f\\n", label, s[3]); } while (0)',
           'int main(void) {',
           '\tprintf("16 VAESENC + 16 of a kind, ticks per iteration\\n");']
    aes16 = ['vaesenc %%zmm30,%%zmm{0},%%zmm{0}'.format(i) for i in range(16)]
    out.append('\tTIME("alone", __asm__ volatile(%s ::: %s));' % (asm(aes16), CLOBBER))
    for name, fmt in EXTRA.items():
        extra = [fmt.format(16 + k % 8) for k in range(16)]
        out.append('\tTIME("+16 %s", __asm__ volatile(%s ::: %s));' % (name, asm(aes16 + extra), CLOBBER))
    out.append('\tprintf("\\n%d AES-CTR registers + checksum step, ticks per iteration\\n");' % REGS)
    for name, f in CSUM.items():
        out.append('\tTIME("%s", __asm__ volatile(%s :: "r"(in), "r"(out) : %s));'
                   % (name, asm(aes_regs(f)), CLOBBER))
    out.append('\treturn 0;\n}')
    sys.stdout.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
