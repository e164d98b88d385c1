#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the ILP generator (run by `meson test ilpgen`; the model's are
test_model.py and test_objcode.py)."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ilpgen  # noqa: E402
from functions import FUNCS  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class TestPipeline(unittest.TestCase):
    def test_block_is_lcm(self):
        self.assertEqual(ilpgen.Pipeline('copy,bswap32,pes,csum').block(), 8)
        self.assertEqual(ilpgen.Pipeline('bswap32,csum').block(), 4)
        self.assertEqual(ilpgen.Pipeline('copy,csum').block(), 2)

    def test_names(self):
        p = ilpgen.Pipeline('copy, bswap32 ,pes,csum')
        self.assertEqual(p.name, 'copy+bswap32+pes+csum')
        self.assertTrue(p.copy)
        self.assertFalse(ilpgen.Pipeline('bswap32,pes,csum').copy)

    def test_errors(self):
        for bad in ('', 'bswap32,copy', 'nosuch', 'csum,csum', 'chacha20,aes128ctr'):
            with self.assertRaises(ValueError, msg=bad):
                ilpgen.Pipeline(bad)

    def test_every_function_has_every_form(self):
        for f in FUNCS.values():
            for isa in ilpgen.ISAS:
                self.assertIn(isa, f.forms, f.name)
                self.assertIn('ops', f.forms[isa])


class TestCipher(unittest.TestCase):
    def test_aes_expansion_fips197(self):
        # FIPS-197 appendix A.1: w[4..7] and w[40..43] of the SP 800-38A key
        import functions
        rk = functions.aes128_expand(functions.STUDY_AES_KEY)
        self.assertEqual(len(rk), 176)
        self.assertEqual(rk[16:32].hex(), 'a0fafe1788542cb123a339392a6c7605')
        self.assertEqual(rk[160:].hex(), 'd014f9a8c9ee2589e13f0cc8b6630ca6')

    def test_integrated_uses_keystream_chunks(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('copy,chacha20,csum')
        self.assertEqual(p.cipher.name, 'chacha20')
        integ = em.function(p, 'int', 'avx512')
        # keystream per chunk and for an uncovered tail; one load, one store
        self.assertEqual(integ.count('cn_chacha20_keystream('), 2)
        self.assertIn('CN_ILP_KS_BYTES', integ)
        self.assertEqual(integ.count('_mm512_loadu_si512'), 1)
        self.assertEqual(integ.count('_mm512_storeu_si512'), 1)
        self.assertNotIn('cn_chacha20_xor(', integ)
        seq = em.function(p, 'seq', 'avx512')
        self.assertIn('cn_chacha20_xor(', seq)
        self.assertNotIn('cn_chacha20_keystream(', seq)
        aes = em.function(ilpgen.Pipeline('aes128ctr,csum'), 'intpf', 'scalar')
        self.assertIn('cn_aes128ctr_keystream(', aes)

    def test_aes_inline_round_major(self):
        import functions
        em = ilpgen.Emitter()
        text = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        main = text[text.index('for (; i + %d <= len' % ilpgen.INLINE_BYTES):]
        main = main[:main.index('\n\t}\n')]
        n = ilpgen.INLINE_BYTES // 64
        # every round issued across all n registers before the next round
        for rnd in range(1, 10):
            line = [ln for ln in main.split('\n') if 'aes_rk%d)' % rnd in ln]
            self.assertEqual(len(line), 1)
            self.assertEqual(line[0].count('_mm512_aesenc_epi128'), n)
        # the keystream before the block's loads, no carry compare per register
        self.assertLess(main.index('aes_rk10'), main.index('_mm512_loadu_si512'))
        self.assertNotIn('cmplt', text)
        # the no-carry contract is checked against the IV
        functions.aes_no_wrap_check(functions.STUDY_AES_IV)
        with self.assertRaises(ValueError):
            functions.aes_no_wrap_check(bytes(8) + (2**64 - 1000).to_bytes(8, 'big'))

    def test_masked_remainder(self):
        em = ilpgen.Emitter()
        # zero-padding pipelines (copy, csum, ciphers) end in byte-masked
        # registers on AVX-512: no scalar granules, no byte tail, no ks buffer
        for text in ('copy,aes128ctr,csum', 'copy,chacha20,csum', 'copy,csum', 'csum'):
            p = ilpgen.Pipeline(text)
            self.assertTrue(em.masked_rem(p, p.fns, 'avx512'), text)
            body = em.function(p, 'int', 'avx512')
            self.assertIn('_mm512_maskz_loadu_epi8(m, ', body)
            self.assertNotIn('8-byte granules', body)
            self.assertNotIn('size_t n = len - i;\n', body)
            # one masked register per pass (its last): AES passes of 1, 2, 4
            self.assertEqual(body.count('_mm512_mask_storeu_epi8('), 0 if text == 'csum' else
                             (3 if 'aes' in text else 1))
            # the other isas keep the scalar remainder
            self.assertIn('8-byte granules', em.function(p, 'int', 'scalar'))
        aes = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        self.assertNotIn('ks[', aes)
        # after the cipher, the bytes past the message are zeroed again for
        # the checksum; after the checksum (the last function) nothing is
        self.assertEqual(aes.count('_mm512_maskz_mov_epi8(m, '), 3)
        self.assertEqual(aes.count('_mm512_maskz_loadu_epi8(m, '), 3)
        # passes of 4, 2 and 1 registers after the 8-register loop, each
        # taken by its bit of the number of registers left
        self.assertEqual(aes.count('while (((len - i + 63) >> 6) >= 4) {'), 1)
        for b in (2, 1):
            self.assertEqual(aes.count('if (((len - i + 63) >> 6) & %d) {' % b), 1)
        # bswap/pes do not pad with zeros: their tails stay scalar
        p = ilpgen.Pipeline('copy,bswap32,pes,csum')
        self.assertFalse(em.masked_rem(p, p.fns, 'avx512'))
        self.assertIn('8-byte granules', em.function(p, 'int', 'avx512'))

    def test_vnni_checksum_two_accumulators(self):
        em = ilpgen.Emitter()
        aes = em.function(ilpgen.Pipeline('copy,aes128ctr,csum'), 'int', 'avx512')
        main = aes[aes.index('for (; i + %d <= len' % ilpgen.INLINE_BYTES):]
        main = main[:main.index('\n\t}\n')]
        # registers alternate between csum_d0 and csum_d1: two chains of
        # four VPDPWSSD per iteration instead of one of eight
        self.assertEqual(main.count('csum_d0 = _mm512_dpwssd_epi32(csum_d0'), 4)
        self.assertEqual(main.count('csum_d1 = _mm512_dpwssd_epi32(csum_d1'), 4)
        self.assertNotIn('{a}', aes)

    def test_ks_bytes_checked(self):
        with self.assertRaises(ValueError):
            ilpgen.Emitter(ks_bytes=100)


class TestEmit(unittest.TestCase):
    def gen(self, **kw):
        em = ilpgen.Emitter(**kw)
        pipes = [ilpgen.Pipeline(t) for t in ilpgen.read_pipelines(os.path.join(HERE, 'pipelines.txt'))]
        return em.files(pipes)

    def test_deterministic(self):
        self.assertEqual(self.gen(), self.gen())

    def test_outputs_and_symbols(self):
        files = self.gen()
        self.assertEqual(sorted(files), ['cn_ilp.h', 'cn_ilp_avx2.c', 'cn_ilp_avx512.c',
                                         'cn_ilp_scalar.c', 'cn_ilp_table.c'])
        for form in ilpgen.FORMS:
            for isa in ilpgen.ISAS:
                sym = 'cn_ilp_copy_bswap32_pes_csum_%s_%s(' % (form, isa)
                self.assertIn(sym, files['cn_ilp.h'])
                self.assertIn(sym, files['cn_ilp_%s.c' % isa])
        for text in files.values():
            self.assertTrue(text.startswith('/* SPDX-License-Identifier: BSD-2-Clause */'))

    def test_seq_has_one_loop_per_function_int_one(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('copy,bswap32,pes,csum')
        seq = em.function(p, 'seq', 'avx512')
        integ = em.function(p, 'int', 'avx512')
        # main loops run over 64-byte blocks; seq has copy + 3 of them
        self.assertEqual(len(re.findall(r'i \+ 64 <= len', seq)), 4)
        self.assertEqual(len(re.findall(r'i \+ 64 <= len', integ)), 1)
        self.assertEqual(integ.count('_mm512_loadu_si512'), 1)
        self.assertEqual(integ.count('_mm512_storeu_si512'), 1)
        self.assertNotIn('cn_ilp_pf_', integ)
        pf = em.function(p, 'intpf', 'avx512')
        self.assertIn('cn_ilp_pf_read(', pf)
        # the head the loop's prefetches never reach, before the loop
        self.assertLess(pf.index('cn_ilp_pf_head(src, len);'), pf.index('for (; i + 64'))

    def test_pf_dst_inside_the_guard(self):
        em = ilpgen.Emitter(pf_dst=True)
        text = em.function(ilpgen.Pipeline('copy,bswap32,pes,csum'), 'intpf', 'avx512')
        # the prefetching loop, up to the plain loop after it
        guard = text[text.index('for (; i + 64 <= pf_end; i += 64) {'):]
        guard = guard[:guard.index('for (; i + 64 <= len; i += 64) {')]
        self.assertIn('cn_ilp_pf_read(src + i + CN_ILP_PF_DIST);', guard)
        self.assertIn('cn_ilp_pf_write(dst + i + CN_ILP_PF_DIST);', guard)
        self.assertIn('cn_ilp_pf_write(', em.prelude('avx512'))
        self.assertNotIn('cn_ilp_pf_write(', ilpgen.Emitter().prelude('avx512'))

    def test_pf_loop_then_plain_loop(self):
        # every intpf kernel: the prefetching loop runs to pf_end and
        # prefetches in every iteration without a test, the same loop
        # without prefetches does the rest; int is the plain loop alone
        em = ilpgen.Emitter()
        for text in ('copy,bswap32,pes,csum', 'bswap16,pes,csum', 'copy,chacha20,csum',
                     'copy,aes128ctr,csum', 'syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1'):
            p = ilpgen.Pipeline(text)
            for isa in p.isas:
                pf = em.function(p, 'intpf', isa)
                integ = em.function(p, 'int', isa)
                self.assertIsNone(re.search(r'if \([^)]*pf_end\)', pf), (text, isa))
                loops = re.findall(r'for \(; i \+ (\d+) <= ([^;]+);', pf)
                first = [k for k, (_, lim) in enumerate(loops) if 'pf_end' in lim]
                self.assertEqual(len(first), 1, (text, isa, loops))
                k = first[0]
                # the same block after it, to the loop's own limit
                blk = int(re.findall(r'for \(; i \+ (\d+) <= (?:len|ks_end);', integ)[0])
                self.assertEqual(int(loops[k + 1][0]), blk, (text, isa, loops))
                self.assertNotIn('pf_end', loops[k + 1][1])
                body = pf[pf.index('<= %s;' % loops[k][1]):]
                body = body[:body.index('for (; i + %d <= %s;' % (blk, loops[k + 1][1]))]
                self.assertEqual(body.count('cn_ilp_pf_read('),
                                 max(1, int(loops[k][0]) // 64), (text, isa))
                self.assertEqual(pf.count('cn_ilp_pf_read('), body.count('cn_ilp_pf_read('))

    def test_pf_dist_in_header(self):
        self.assertIn('#define CN_ILP_PF_DIST 512', self.gen(pf_dist=512)['cn_ilp.h'])

    def test_synthetic_state_live(self):
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('syn:n=3,s=4,a=10')
        text = em.function(p, 'int', 'scalar')
        for f in range(3):
            for j in range(4):
                # declared, updated in the loop, folded into the result
                self.assertIn('syn%d_s%d = 0x' % (f, j), text)
                self.assertIn('syn%d_s%d += ' % (f, j), text)
                self.assertIn('(syn%d_s%d * 0x' % (f, j), text)

    def test_synthetic_vector_forms(self):
        # every synthetic pipeline in every instruction set; the vector
        # forms keep one register per state word, reduced into the scalar
        # word the remainder continues from, and their s = 0 steps need no
        # constant register (AVX-512 rotates, AVX2 permutes 32-bit halves)
        em = ilpgen.Emitter()
        p = ilpgen.Pipeline('syn:n=2,s=0/3,a=3/10,out=01')
        self.assertEqual(p.isas, ('scalar', 'avx2', 'avx512'))
        for isa, typ, imm in (('avx2', '__m256i', '_mm256_shuffle_epi32'),
                              ('avx512', '__m512i', '_mm512_ror_epi64')):
            text = em.function(p, 'int', isa)
            # the loop's steps (AVX-512: and its masked tail's)
            self.assertEqual(text.count(imm + '(syn0_t'), {'avx2': 3, 'avx512': 6}[isa], isa)
            for j in range(3):
                self.assertIn('%s syn1_s%dv = ' % (typ, j), text)
                self.assertIn('syn1_s%d = cn_ilp_hsum%d(syn1_s%dv);' % (j, 256 if isa == 'avx2'
                                                                         else 512, j), text)
            f = p.fns[1].forms
            self.assertEqual((f[isa]['ops'], f[isa]['chain']), (f['scalar']['ops'],
                                                                f['scalar']['chain']))
        # AVX2 has no masked tail: the scalar steps take the last words
        self.assertIn('remainder: 8-byte granules, scalar steps',
                      em.function(p, 'int', 'avx2'))
        # the sweep is generated for AVX2 too
        files = self.gen()
        self.assertIn('cn_ilp_syn_n1_s1_a10_int_avx2(', files['cn_ilp_avx2.c'])
        self.assertIn('"syn.n1.s1.a10", "int", "avx2"', files['cn_ilp_table.c'])

    def test_synthetic_per_function_params(self):
        p = ilpgen.Pipeline('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1')
        self.assertEqual([f.state for f in p.fns], [0, 1, 1])
        self.assertEqual([f.forms['scalar']['ops'] for f in p.fns], [2, 3, 2])
        self.assertEqual([f.writes for f in p.fns], [True, True, False])
        self.assertTrue(p.copy)


def _cpu_flags():
    try:
        with open('/proc/cpuinfo') as fh:
            for line in fh:
                if line.startswith('flags'):
                    return set(line.split(':', 1)[1].split())
    except OSError:
        pass
    return set()


AVX2_FLAGS = ['-mavx2', '-mbmi', '-mbmi2']
AVX512_FLAGS = ['-mavx512f', '-mavx512bw', '-mavx512vl', '-mavx512dq', '-mavx2', '-mbmi',
                '-mbmi2', '-maes', '-mvaes']

# A harness around one generated intpf kernel: CN_ILP_PF_TRACE records every
# prefetch address; main() runs every length 0..LEN_MAX at four source
# alignments and prints each prefetch outside the source (or into a line
# prefetched before in the same call), and the lines it should have reached
# but did not; exit status 1 if any.
TRACE_MAIN = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const unsigned char *tr_addr[4096];
static int tr_n;
#define CN_ILP_PF_TRACE(p, write) \
	((void)(write), tr_n < 4096 ? (void)(tr_addr[tr_n++] = (p)) : (void)0)
%(code)s
int main(void)
{
	enum { LEN_MAX = %(len_max)d, PFD = CN_ILP_PF_DIST };
	unsigned char *src = aligned_alloc(64, LEN_MAX + 256);
	unsigned char *dst = aligned_alloc(64, LEN_MAX + 256);
	int bad = 0;
	memset(src, 0x5a, LEN_MAX + 256);
	for (size_t al = 0; al < 64; al += 21) {
		for (size_t len = 0; len <= LEN_MAX; len++) {
			const unsigned char *s = src + al;
			static unsigned char seen[LEN_MAX / 64 + 4];
			memset(seen, 0, sizeof(seen));
			tr_n = 0;
			(void)%(fn)s(%(args)s, len);
			for (int k = 0; k < tr_n; k++) {
				const unsigned char *p = tr_addr[k];
				size_t line = ((size_t)(uintptr_t)p >> 6) - ((size_t)(uintptr_t)s >> 6);
				if (p < s || p >= s + len) {
					printf("len %%zu al %%zu: prefetch at offset %%td, outside\n",
					       len, al, p - s);
					bad = 1;
				} else if (seen[line]++) {
					printf("len %%zu al %%zu: line %%zu prefetched twice\n", len, al, line);
					bad = 1;
				}
			}
			/* every line holding a byte of the first len - 2 blocks - 64 */
			size_t want = len > 3 * 64 ? len - 3 * 64 : 0;
			for (size_t o = 0; o < want; o += 64) {
				size_t line = ((size_t)(uintptr_t)(s + o) >> 6) - ((size_t)(uintptr_t)s >> 6);
				if (!seen[line]) {
					printf("len %%zu al %%zu: line %%zu never prefetched\n", len, al, line);
					bad = 1;
				}
			}
			if (bad)
				return 1;
		}
	}
	return 0;
}
"""


@unittest.skipUnless(shutil.which(os.environ.get('CC', 'cc')), 'no C compiler')
class TestPrefetchBounds(unittest.TestCase):
    """intpf prefetches stay inside the source buffer, one per line: the
    generated kernel, compiled with CN_ILP_PF_TRACE, at every length and
    four alignments (a prefetch never faults, so a guard page or ASan
    could not see one that strays)."""

    def run_kernel(self, text, isa, pf_dist, len_max=1500):
        em = ilpgen.Emitter(pf_dist=pf_dist)
        p = ilpgen.Pipeline(text)
        fn = ilpgen.fn_symbol(p, 'intpf', isa)
        code = em.prelude(isa) + '\n' + em.function(p, 'intpf', isa)
        # in place, the kernel works on (and prefetches) the traced buffer
        args = 'dst + 3, s' if p.copy else '(void *)s, NULL'
        with tempfile.TemporaryDirectory() as tmp:
            with open(os.path.join(tmp, 'cn_ilp.h'), 'w') as fh:
                fh.write(em.header([p]))
            src = os.path.join(tmp, 't.c')
            with open(src, 'w') as fh:
                fh.write(TRACE_MAIN % dict(code=code, fn=fn, args=args, len_max=len_max))
            exe = os.path.join(tmp, 't')
            cc = os.environ.get('CC', 'cc')
            cmd = [cc, '-O2', '-std=gnu11', '-I', tmp, '-I', os.path.join(HERE, '..', 'include'),
                   src, '-o', exe] + {'avx512': AVX512_FLAGS, 'avx2': AVX2_FLAGS}.get(isa, [])
            subprocess.run(cmd, check=True)
            r = subprocess.run([exe], capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, '%s %s: %s' % (text, isa, r.stdout[:2000]))

    def test_copy_pipeline_scalar(self):
        for d in (256, 1024):
            self.run_kernel('copy,bswap32,pes,csum', 'scalar', d)

    def test_synthetic_scalar(self):
        # an 8-byte block: one prefetch per line all the same
        self.run_kernel('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1', 'scalar', 256)

    def test_in_place_scalar(self):
        self.run_kernel('bswap32,pes,csum', 'scalar', 256)

    @unittest.skipUnless({'avx512f', 'avx512bw'} <= _cpu_flags(), 'no AVX-512')
    def test_copy_pipeline_avx512(self):
        for d in (64, 256, 1024):
            self.run_kernel('copy,bswap32,pes,csum', 'avx512', d)

    @unittest.skipUnless({'avx2', 'bmi1', 'bmi2'} <= _cpu_flags(), 'no AVX2')
    def test_copy_pipeline_avx2(self):
        for d in (64, 256, 1024):
            self.run_kernel('copy,bswap32,pes,csum', 'avx2', d)

    @unittest.skipUnless({'avx2', 'bmi1', 'bmi2'} <= _cpu_flags(), 'no AVX2')
    def test_synthetic_avx2(self):
        self.run_kernel('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1', 'avx2', 256)

    @unittest.skipUnless({'avx512f', 'avx512bw'} <= _cpu_flags(), 'no AVX-512')
    def test_synthetic_avx512(self):
        self.run_kernel('syn:n=3,s=0/1/1,a=2/3/2,out=110,copy=1', 'avx512', 256)


if __name__ == '__main__':
    unittest.main()
