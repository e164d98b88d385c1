# SPDX-License-Identifier: BSD-2-Clause
"""Hand probe generator (ilp/README.md, "AES-CTR at 1460 bytes: where the
checksum's cost sits"): the generated copy+aes128ctr+csum AVX-512
integrated loop beside edited copies of itself and the library's cipher
alone (cn_aes128ctr_xor, in place: the issue's "cipher alone"; and out of
place, src to dst, as the integrated loop runs). Writes a C file to stdout.

Variants that keep the result (their bytes and sums are checked against
the generated loop at every length 0..4200 and three source alignments
before anything is timed; the program exits 1 on a difference):
  exact   the remainder in one pass of exactly ceil(rest / 64) registers
          (1..8), where the generator runs passes of 1, 2 and 4;
  biask   the checksum's 0x8000 bias folded into the last round key
          (VAESENCLAST gives keystream ^ bias), so the summed value is
          in ^ key' and the stored one gets the bias back;
  order421  the remainder's passes largest first (4, 2, 1), as the
          library's kernel runs them.
Floors, which give wrong sums on purpose and are not checked:
  notail  no checksum in the remainder's passes;
  nofold  no final reduction (the first lane of the accumulators);
  alladd  every register's checksum one VPADDQ (the fewest instructions
          a vector checksum could add: one per register);
  nocsum  copy and cipher only, no checksum at all (nocsum421: with the
          passes 4, 2, 1).
Ticks per call: 64 calls on one hot buffer pair per sample, the median of
201 samples per round, the median over rounds, every variant in each
round in rotating order.

  python3 ilp/hand_probes/gen_aes_tail.py > at.c
  cc -O3 -fno-tree-vectorize -fno-tree-loop-distribute-patterns -std=gnu11 \\
     -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx2 -mbmi -mbmi2 -maes \\
     -mvaes -mavx512vnni -Iinclude -Ibuild/ilp at.c \\
     build/ilp/libcn_ilp.a build/src/libcachenet.a -o at
  taskset -c 1 ./at [length 1460] [rounds 41] [destination offset 2112]

Compile with the library's flags for the generated code (ilp/meson.build):
without -fno-tree-vectorize, gcc 12 merges the two byte-swapped IV loads
into a vector load, VPSHUFB and VPALIGNR, and every variant's call grows
by ~8 ticks (the generated loop without its checksum then read 1.11x the
library's kernel, against 1.00x with the flags).

Measured 2026-11-24 (AMD EPYC VM, Zen 5 class), 1460 B: see ilp/README.md.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import ilpgen  # noqa: E402

SYM = 'cn_ilp_copy_aes128ctr_csum_int_avx512'
DPW = re.compile(r'csum_(d[01]) = _mm512_dpwssd_epi32\(csum_d[01], '
                 r'_mm512_xor_si512\((x\d), csum_bias\), csum_ones\);')
TAIL_MARK = '\t/* the last bytes'
FOLD_MARK = '\t/* csum: reduce the vector state */'
LOOP_HEAD = '\tfor (; i + 512 <= len; i += 512) {'

# One pass of exactly R registers (R a constant), the last one byte-masked
# when MASKED; rk[] the round keys, LAST the last round key's name.
PASS = r'''
/* register q's checksum: even registers into csum_d0, odd into csum_d1,
 * as the generated loop alternates them */
#define CN_AT_SUM(q, v) do { \
	if ((q) & 1) csum_d1 = _mm512_dpwssd_epi32(csum_d1, (v), csum_ones); \
	else csum_d0 = _mm512_dpwssd_epi32(csum_d0, (v), csum_ones); \
} while (0)
#define CN_AT_PASS(R, MASKED, LAST, SUMX, STX) { \
	if (__builtin_expect(csum_nb - csum_wnb > 16384 - R, 0)) { \
		csum_w = cn_ilp_vnni_widen(csum_w, _mm512_add_epi32(csum_d0, csum_d1)); \
		csum_d0 = csum_d1 = _mm512_setzero_si512(); \
		csum_wnb = csum_nb; \
	} \
	csum_nb += R; \
	__m512i k[R]; \
	_Pragma("GCC unroll 8") for (int q = 0; q < R; q++) { \
		k[q] = _mm512_xor_si512(_mm512_shuffle_epi8(aes_ctr, aes_rev), rk[0]); \
		aes_ctr = _mm512_add_epi64(aes_ctr, aes_inc); \
	} \
	_Pragma("GCC unroll 10") for (int d = 1; d < 10; d++) { \
		_Pragma("GCC unroll 8") for (int q = 0; q < R; q++) \
			k[q] = _mm512_aesenc_epi128(k[q], rk[d]); \
	} \
	_Pragma("GCC unroll 8") for (int q = 0; q < R; q++) \
		k[q] = _mm512_aesenclast_epi128(k[q], LAST); \
	_Pragma("GCC unroll 8") for (int q = 0; q < R - MASKED; q++) { \
		__m512i x = _mm512_xor_si512(_mm512_loadu_si512((const void *)(src + i + 64 * q)), k[q]); \
		CN_AT_SUM(q, SUMX(x)); \
		_mm512_storeu_si512((void *)(dst + i + 64 * q), STX(x)); \
	} \
	if (MASKED) { \
		const size_t n = len - i - 64 * (R - 1); \
		const __mmask64 m = _bzhi_u64(~0ull, (unsigned)n); \
		__m512i x = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, (const void *)(src + i + 64 * (R - 1))), k[R - 1]); \
		/* past the message: the held form of zero bytes */ \
		x = _mm512_mask_mov_epi8(STX(_mm512_setzero_si512()), m, x); \
		CN_AT_SUM(R - 1, SUMX(x)); \
		_mm512_mask_storeu_epi8((void *)(dst + i + 64 * (R - 1)), m, STX(x)); \
	} \
}
/* plain: the value stored is the ciphertext, the summed one has the bias;
 * biask: the value held has the bias (from the last round key), the stored
 * one gets it back */
#define CN_AT_BIAS(x) _mm512_xor_si512((x), csum_bias)
#define CN_AT_SAME(x) (x)
'''

RK = ('\tconst __m512i rk[11] = { %s };\n'
      % ', '.join('aes_rk%d' % k for k in range(11)))


def split(fn):
    """The generated function in three parts: up to the remainder, the
    remainder's passes, the fold and return."""
    head, rest = fn.split(TAIL_MARK, 1)
    tail, fold = rest.split(FOLD_MARK, 1)
    return head, TAIL_MARK + tail, FOLD_MARK + fold


def rename(text, name):
    return text.replace('uint64_t %s(' % SYM, 'static uint64_t %s(' % name, 1)


def exact_tail(last='rk[10]', sumx='CN_AT_BIAS', stx='CN_AT_SAME'):
    cases = ''.join('\tcase %d: CN_AT_PASS(%d, 1, %s, %s, %s) break;\n' % (r, r, last, sumx, stx)
                    for r in range(1, 9))
    return ('\t{\n' + RK + '\tswitch ((len - i + 63) >> 6) {\n' + cases
            + '\tdefault: break;\n\t}\n\t}\n')


PASS_HEADS = ('\tif (((len - i + 63) >> 6) & 1) {', '\tif (((len - i + 63) >> 6) & 2) {',
              '\twhile (((len - i + 63) >> 6) >= 4) {')


def order_421(tail):
    """The remainder's three passes (1, 2, 4 registers, in that order in
    the generated text) reordered 4, 2, 1."""
    at = [tail.index(h) for h in PASS_HEADS]
    assert at == sorted(at), 'passes not in 1, 2, 4 order'
    one, two, four = tail[at[0]:at[1]], tail[at[1]:at[2]], tail[at[2]:]
    return tail[:at[0]] + four + two + one


def variants(fn):
    """[(name, checked, C text)] from the generated function's text."""
    head, tail, fold = split(fn)
    out = [('gen', True, fn)]
    out.append(('exact', True, head + exact_tail() + fold))
    # biask: the main loop's XOR with the bias moves from the summed value
    # to the stored one
    hb = re.sub(r'_mm512_aesenclast_epi128\((k\d), aes_rk10\)',
                r'_mm512_aesenclast_epi128(\1, aes_rk10b)', head)
    hb = hb.replace(LOOP_HEAD, '\tconst __m512i aes_rk10b = _mm512_xor_si512(aes_rk10, csum_bias);\n'
                    + LOOP_HEAD, 1)
    hb = DPW.sub(r'csum_\1 = _mm512_dpwssd_epi32(csum_\1, \2, csum_ones);', hb)
    hb = re.sub(r'_mm512_storeu_si512\(\(void \*\)\(dst \+ i([^)]*)\), (x\d)\);',
                r'_mm512_storeu_si512((void *)(dst + i\1), _mm512_xor_si512(\2, csum_bias));', hb)
    out.append(('biask', True, hb + exact_tail('aes_rk10b', 'CN_AT_SAME', 'CN_AT_BIAS') + fold))
    # the remainder's passes largest first, as the library's kernel runs
    # them (4, 2, 1 where the generator runs 1, 2, 4)
    out.append(('order421', True, head + order_421(tail) + fold))
    out.append(('notail', False, head + DPW.sub(r'(void)\2;', tail) + fold))
    out.append(('nofold', False, head + tail + '\treturn (uint64_t)_mm_cvtsi128_si64('
                '_mm512_castsi512_si128(_mm512_add_epi32(csum_d0, csum_d1)));\n}\n'))
    out.append(('alladd', False,
                DPW.sub(r'csum_\1 = _mm512_add_epi64(csum_\1, \2);', head + tail) + fold))
    out.append(('nocsum', False, DPW.sub(r'(void)\2;', head + tail) + '\treturn 0;\n}\n'))
    out.append(('nocsum421', False,
                DPW.sub(r'(void)\2;', head + order_421(tail)) + '\treturn 0;\n}\n'))
    return out


MAIN = r'''
typedef uint64_t (*cn_at_fn)(void *restrict, const void *restrict, size_t);
static uint64_t lib(void *restrict d, const void *restrict s, size_t n)
{
	(void)s;
	(void)cn_aes128ctr_xor(&cn_ilp_study_aes_sched, cn_ilp_study_aes_iv, d, d, n);
	return 0;
}
static uint64_t lib_copy(void *restrict d, const void *restrict s, size_t n)
{
	(void)cn_aes128ctr_xor(&cn_ilp_study_aes_sched, cn_ilp_study_aes_iv, s, d, n);
	return 0;
}
static const struct { const char *name; int checked; cn_at_fn f; } V[] = {
%(table)s
	{ "lib (cipher alone)", 0, lib },
	{ "lib out of place", 0, lib_copy },
};
#define NV (int)(sizeof V / sizeof V[0])
static int cmpu(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}
/* the source at a page boundary, the destination dst_off bytes into a page
 * further on (0 puts each store on the same 4 KB offset as a load) */
static unsigned char mem[3 * 16384] __attribute__((aligned(4096))), ref[8192 + 64];
static unsigned char *src = mem, *dst;
static uint64_t med[NV][401];
int main(int argc, char **argv)
{
	size_t len = argc > 1 ? strtoul(argv[1], 0, 0) : 1460;
	int rounds = argc > 2 ? atoi(argv[2]) : 41;
	long dst_off = argc > 3 ? atol(argv[3]) : 2112;
	if (len > 8192 || rounds < 1 || rounds > 401 || dst_off < 0 || dst_off > 4095) {
		fprintf(stderr, "usage: %%s [length <= 8192] [rounds 1..401] [destination offset 0..4095]\n",
			argv[0]);
		return 2;
	}
	dst = mem + 16384 + dst_off;
	for (size_t i = 0; i < 8192 + 64; i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (int v = 1; v < NV; v++) {
		if (!V[v].checked)
			continue;
		for (size_t n = 0; n <= 4200; n++)
			for (int a = 0; a < 3; a++) {
				memset(ref, 0, n + 64);
				memset(dst, 0, n + 64);
				uint64_t r0 = V[0].f(ref, src + a, n), r1 = V[v].f(dst, src + a, n);
				if (r0 != r1 || memcmp(ref, dst, n + 64)) {
					printf("%%s differs from gen at length %%zu, alignment %%d\n", V[v].name, n, a);
					return 1;
				}
			}
	}
	enum { SAMPLES = 201, CALLS = 64 };
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NV; k++) {
			int v = (k + r) %% NV;
			uint64_t t[SAMPLES], acc = 0;
			for (int s = 0; s < SAMPLES; s++) {
				uint64_t t0 = __rdtsc();
				for (int j = 0; j < CALLS; j++)
					acc += V[v].f(dst, src, len);
				_mm_lfence();
				t[s] = __rdtsc() - t0;
				__asm__ volatile("" ::"r"(acc) : "memory");
			}
			qsort(t, SAMPLES, sizeof t[0], cmpu);
			med[v][r] = t[SAMPLES / 2];
		}
	printf("copy+aes128ctr+csum int, %%zu B hot, destination %%ld bytes into its page, ticks per call\n"
	       "(median of %%d rounds; quartiles)\n", len, dst_off, rounds);
	for (int v = 0; v < NV; v++) {
		qsort(med[v], rounds, sizeof med[v][0], cmpu);
		printf("%%-20s %%7.2f  (%%.2f .. %%.2f)  %%s\n", V[v].name, med[v][rounds / 2] / (double)CALLS,
		       med[v][rounds / 4] / (double)CALLS, med[v][3 * rounds / 4] / (double)CALLS,
		       V[v].checked ? "checked" : v >= NV - 2 ? "" : "floor (wrong sums)");
	}
	return 0;
}
'''


def program():
    em = ilpgen.Emitter()
    fn = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
    vs = variants(fn)
    out = ['#include <stdio.h>', '#include <stdlib.h>', '#include <string.h>',
           '#include <x86intrin.h>', em.prelude('avx512'), PASS]
    for name, _, text in vs:
        out.append(rename(text, 'cn_at_' + name))
    table = '\n'.join('\t{ "%s", %d, cn_at_%s },' % (n, c, n) for n, c, _ in vs)
    out.append(MAIN % dict(table=table))
    return '\n'.join(out)


if __name__ == '__main__':
    sys.stdout.write(program())
