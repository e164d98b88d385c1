# SPDX-License-Identifier: BSD-2-Clause
"""The ILP generator's kernels: the C of one pipeline's seq, int or intpf
function for one instruction set (LoopEmitter.function()): the main loops,
each function's step, the remainder and byte tails, the prefetches and the
cipher's keystream. ilpgen.py writes the files around them."""

import math
import re

import functions
from functions import FUNCS

FORMS = ('seq', 'int', 'intpf')

# Inline cipher steps (keystream in registers): bytes per main-loop
# iteration, i.e. independent cipher chains in flight.
INLINE_BYTES = 512

ISAS = {
    'scalar': dict(width=8, type='uint64_t',
                   load='cn_ilp_ld64({p})', store='cn_ilp_st64({p}, {x})',
                   features='0'),
    'avx2': dict(width=32, type='__m256i',
                 load='_mm256_loadu_si256((const __m256i *)(const void *)({p}))',
                 store='_mm256_storeu_si256((__m256i *)(void *)({p}), {x})',
                 features='CN_CPU_AVX2'),
    'avx512': dict(width=64, type='__m512i',
                   load='_mm512_loadu_si512((const void *)({p}))',
                   store='_mm512_storeu_si512((void *)({p}), {x})',
                   features='(CN_CPU_AVX512F | CN_CPU_AVX512BW)'),
}


def _indent(code, n):
    pad = '\t' * n
    return '\n'.join((pad + line) if line.strip() else '' for line in code.split('\n'))


def fn_symbol(p, form, isa):
    return 'cn_ilp_%s_%s_%s' % (p.ident, form, isa)


class LoopEmitter:
    """The C of one kernel (function()): its loops, steps, tails and
    cipher keystream, per form and instruction set. ilpgen.Emitter adds
    the files around the kernels."""

    def __init__(self, pf_dist=256, unroll_bytes=64, ks_bytes=2048, pf_dst=False):
        if ks_bytes <= 0 or ks_bytes % 64 or ks_bytes % unroll_bytes:
            raise ValueError('--ks-bytes must be a multiple of 64 and of --unroll-bytes')
        self.pf_dist = pf_dist
        self.pf_dst = pf_dst
        self.unroll_bytes = unroll_bytes
        self.ks_bytes = ks_bytes

    # ---------------------------------------------------------------- loops
    def _step(self, f, isa, x, off='i', r=0):
        """Step of f on register x, whose bytes start at message offset off;
        r: the register's index in its block, which picks the accumulator
        {a} of a form with several (accs)."""
        code = f.forms[isa]['step']
        if not code:
            return ''
        code = code.replace('{x}', x).replace('{off}', off)
        code = code.replace('{a}', str(r % f.forms[isa].get('accs', 1)))
        return '{ /* %s */\n%s\n}' % (f.name, _indent(code, 1))

    def _loop(self, fns, isa, src, store, nreg, pf, lim='len', once=False):
        """One loop over blocks of nreg registers up to lim: load from src,
        the steps of fns, store to dst if store (once: a single block if
        one fits, an if instead of a for). With pf, every iteration
        prefetches, unconditionally, the source line CN_ILP_PF_DIST bytes
        ahead of each of its 64-byte lines (and, with --pf-dst, the
        destination's): the caller bounds lim so that those lines lie
        inside the buffer (_loops: pf_end). A block shorter than a line
        (the synthetic loops: 8 B scalar, 32 B AVX2) runs 64 / block times
        in an inner loop, so one prefetch per line of the message still
        needs no test. Returns C text."""
        I = ISAS[isa]
        w = I['width']
        blk = w * nreg
        step = max(blk, 64) if pf else blk
        inner = step // blk > 1  # the line's blocks step i themselves
        out = ['if (i + %d <= %s) {' % (blk, lim) if once else
               'for (; i + %d <= %s;%s) {' % (step, lim, '' if inner else ' i += %d' % step)]
        if pf:
            out.append('\t/* prefetch: the input line%s CN_ILP_PF_DIST bytes ahead */'
                       % ('s' if blk > 64 else ''))
            for line in range(0, step, 64):
                off = ' + %d' % line if line else ''
                out.append('\tcn_ilp_pf_read(%s + i%s + CN_ILP_PF_DIST);' % (src, off))
                if store and src != 'dst' and self.pf_dst:
                    out.append('\tcn_ilp_pf_write(dst + i%s + CN_ILP_PF_DIST);' % off)
        body = self._block(fns, isa, src, store, nreg)
        if inner:
            # the line's blocks (a constant trip count, unrolled by the compiler)
            body = (['\tfor (unsigned k = 0; k < %d; k++, i += %d) {' % (step // blk, blk)]
                    + ['\t' + ln if ln else ln for ln in '\n'.join(body).split('\n')]
                    + ['\t}'])
        out += body
        if once:
            out.append('\ti += %d;' % blk)
        out.append('}')
        return '\n'.join(out)

    def _block(self, fns, isa, src, store, nreg):
        """The lines of one block of nreg registers at offset i: the
        once-per-iteration code, the loads, every function's step, the
        stores (indented for a loop body)."""
        I = ISAS[isa]
        w = I['width']
        out = []
        out += self._iter(fns, isa, nreg)
        # a step over all the block's registers (functions.py: block_step)
        # computes what needs no data before the loads, applies it after
        multi = {f.name: f.forms[isa]['block_step'](['x%d' % r for r in range(nreg)])
                 for f in fns if f.forms[isa].get('block_step')}
        for f in fns:
            if f.name in multi:
                out.append('\t/* %s, before the loads */' % f.name)
                out.append(_indent(multi[f.name][0], 1))
        for r in range(nreg):
            p = '%s + i + %d' % (src, r * w) if r else '%s + i' % src
            out.append('\t%s x%d = %s;' % (I['type'], r, I['load'].format(p=p)))
        for f in fns:
            if f.name in multi:
                out.append(_indent('{ /* %s */\n%s\n}' % (f.name, _indent('\n'.join(multi[f.name][1]), 1)), 1))
                continue
            for r in range(nreg):
                s = self._step(f, isa, 'x%d' % r, 'i + %d' % (r * w) if r else 'i', r)
                if s:
                    out.append(_indent(s, 1))
        if store:
            for r in range(nreg):
                p = 'dst + i + %d' % (r * w) if r else 'dst + i'
                out.append('\t%s;' % I['store'].format(p=p, x='x%d' % r))
        return out

    @staticmethod
    def _iter(fns, isa, nreg):
        """The functions' once-per-iteration code (forms' iter) for an
        iteration of nreg registers, indented for a loop body."""
        return ['\t/* %s: once per iteration */\n%s' % (
            f.name, _indent(f.forms[isa]['iter'].replace('{nreg}', str(nreg)), 1))
                for f in fns if f.forms[isa].get('iter')]

    def _loops(self, fns, isa, src, store, nreg, pf, lim='len'):
        """The main loop; with pf, the prefetching loop up to pf_end (and
        lim), then the same loop without prefetches for the last
        CN_ILP_PF_DIST bytes: no iteration tests whether its prefetch
        stays inside the buffer."""
        if not pf:
            return self._loop(fns, isa, src, store, nreg, False, lim)
        pf_lim = 'pf_end' if lim == 'len' else '(%s < pf_end ? %s : pf_end)' % (lim, lim)
        out = [self._loop(fns, isa, src, store, nreg, True, pf_lim),
               '/* the last CN_ILP_PF_DIST bytes (and what the prefetching loop\'s',
               ' * steps left): no prefetch */',
               self._loop(fns, isa, src, store, nreg, False, lim)]
        # gcc 12 copies state registers inside both loops (a register
        # move per state word and iteration) to merge the two loops'
        # exits; an empty asm naming them after the loops keeps them in place
        regs = self._state_regs(fns, isa)
        if regs:
            out.append('/* no instruction: the state stays in its registers across both loops */')
            out.append(' '.join('CN_ILP_OPAQUE_%s(%s);' % (k, v) for k, v in regs))
        return '\n'.join(out)

    @staticmethod
    def _state_regs(fns, isa):
        """The state variables the main loop carries in registers, as
        (R or V, name): the non-const declarations of the functions'
        vector forms (of their scalar declarations for the scalar isa)."""
        out = []
        for f in fns:
            decl = f.decl if isa == 'scalar' else f.forms[isa].get('decl')
            for stmt in (decl or '').split(';'):
                m = re.match(r'\s*(uint64_t|__m256i|__m512i)\s+(\w+)\s*=', stmt)
                if m:
                    out.append(('R' if m.group(1) == 'uint64_t' else 'V', m.group(2)))
        return out

    def _finals(self, fns, isa):
        out = []
        for f in fns:
            fin = f.forms[isa].get('final')
            if fin:
                out.append('/* %s: reduce the vector state */\n%s' % (f.name, fin))
        return '\n'.join(out)

    def _tail(self, p, fns, src, store):
        """Fewer than one remainder granule left: copy, then each byte tail."""
        out = ['if (i < len) {', '\tunsigned char *p = dst + i;', '\tsize_t n = len - i;']
        if p.copy:
            out.append('\t/* copy */\n\t__builtin_memcpy(p, %s + i, n);' % src)
        for f in fns:
            if f.tail:
                out.append('\t{ /* %s */\n%s\n\t}' % (f.name, _indent(f.tail, 2)))
        out.append('}')
        return '\n'.join(out)

    def _masked_tail(self, p, fns, src, store):
        """Synthetic AVX-512: the last whole 8-byte words in one masked
        register; lanes past the data are re-zeroed after every function so
        that seq and int agree."""
        out = ['if (i + 8 <= len) {',
               '\tconst __mmask8 k = (__mmask8)((1u << ((len - i) / 8)) - 1);',
               '\t__m512i x0 = _mm512_maskz_loadu_epi64(k, (const void *)(%s + i));' % src]
        for f in fns:
            s = self._step(f, 'avx512', 'x0')
            if s:
                out.append(_indent(s, 1))
            out.append('\tx0 = _mm512_maskz_mov_epi64(k, x0);')
        if store:
            out.append('\t_mm512_mask_storeu_epi64((void *)(dst + i), k, x0);')
        out.append('\ti += 8 * (size_t)__builtin_popcount(k);')
        out.append('}')
        return '\n'.join(out)

    @staticmethod
    def masked_rem(p, fns, isa):
        """True if a loop over fns (copying if p.copy) finishes in byte-
        masked registers (_masked_rem): AVX-512 (AVX512BW masks, BMI2), a
        real pipeline, functions that all allow zero padding (functions.py:
        zero_pad; copy does)."""
        return (isa == 'avx512' and not p.synthetic
                and all(f.zero_pad for f in fns) and (FUNCS['copy'].zero_pad or not p.copy))

    def _masked_rem(self, fns, isa, src, store, nreg=1, cond=None, loop=False):
        """nreg registers of the last bytes (fewer than the main loop's
        block), loaded and stored byte-masked so that nothing past the
        message is read or written: the functions' vector steps run on the
        message bytes and zeros (zero_pad), with no scalar granules and no
        byte tails. Every register holds at least one byte (cond, default
        i < len, guarantees it; loop: while cond), so all but the last are
        full and only the last is masked. A
        block_step (the inline AES-CTR keystream) computes all nreg
        registers' keystream round by round before the first load."""
        multi = {f.name: f.forms[isa]['block_step'](['x%d' % r for r in range(nreg)])
                 for f in fns if f.forms[isa].get('block_step')}
        out = ['%s (%s) {' % ('while' if loop else 'if', cond or 'i < len')]
        out += self._iter(fns, isa, nreg)
        for f in fns:
            if f.name in multi:
                out.append('\t/* %s, before the loads */' % f.name)
                out.append(_indent(multi[f.name][0], 1))
        I = ISAS[isa]
        last = nreg - 1
        for r in range(nreg):
            # every register of a pass but its last is full: plain loads
            # and stores; the last holds 1..64 bytes: byte-masked
            off = 'i + %d' % (64 * r) if r else 'i'
            if r < last:
                reg = ['%s x%d = %s;' % (I['type'], r, I['load'].format(p='%s + %s' % (src, off)))]
            else:
                left = 'len - %s' % ('(%s)' % off if r else 'i')
                reg = ['const size_t n = %s < 64 ? %s : 64;' % (left, left),
                       '/* the first n bytes (BZHI keeps all 64 bits for n = 64) */',
                       'const __mmask64 m = _bzhi_u64(~0ull, (unsigned)n);',
                       '__m512i x%d = _mm512_maskz_loadu_epi8(m, (const void *)(%s + %s));'
                       % (r, src, off)]
            for k, f in enumerate(fns):
                if f.name in multi:
                    reg.append('{ /* %s */\n\t%s\n}' % (f.name, multi[f.name][1][r]))
                else:
                    st = self._step(f, isa, 'x%d' % r, off, r)
                    if st:
                        reg.append(st)
                if r == last and f.zero_pad == 'rezero' and k + 1 < len(fns):
                    reg.append('x%d = _mm512_maskz_mov_epi8(m, x%d); /* zeros past the message '
                               'again, for %s */' % (r, r, ', '.join(g.name for g in fns[k + 1:])))
            if store:
                reg.append('%s;' % I['store'].format(p='dst + %s' % off, x='x%d' % r) if r < last
                           else '_mm512_mask_storeu_epi8((void *)(dst + %s), m, x%d);' % (off, r))
            if r == last:
                reg.append('i += %sn;' % ('%d + ' % (64 * r) if r else ''))
            out.append(_indent('{\n%s\n}' % _indent('\n'.join(reg), 1), 1))
        out.append('}')
        return '\n'.join(out)

    def _masked_passes(self, fns, isa, src, store, most):
        """The last bytes after a loop of `most` registers per iteration
        (fewer than most registers' worth, most a power of two), R =
        ceil(bytes left / 64) <= most registers: one pass of 1, 2, ...,
        most/4 registers for each bit set in R below most/2, smallest
        first, then passes of most/2 while R is at least that (R = most:
        two). Exactly R registers, none computed for nothing; the short
        passes' rounds, chains of latency, start first and overlap the
        last pass's. A 1460-byte buffer after two 512-byte iterations: 1,
        2, 4 registers (64 + 128 + 244 bytes)."""
        R = '((len - i + 63) >> 6)'
        out = []
        b = 1
        while b < most // 2:
            out.append(self._masked_rem(fns, isa, src, store, b, cond='%s & %d' % (R, b)))
            b *= 2
        out.append(self._masked_rem(fns, isa, src, store, most // 2,
                                    cond='%s >= %d' % (R, most // 2), loop=True))
        return '\n'.join(out)

    def _pf_head(self, src, store):
        """intpf: where the prefetching loop ends, and the source lines it
        never reaches (the first CN_ILP_PF_DIST bytes, all of a shorter
        buffer), prefetched before it."""
        # Source only: with the destination's lines too (prefetchw), a
        # flushed 1460-byte run was no faster and a hot one ~10% slower
        # (46 prefetches per call instead of 23; PF_DIST 1024);
        # at PF_DIST 256, prefetchw on the destination in the loop
        # (--pf-dst) was within noise (64 KB: hot -15%, L2 +9%).
        return '\n'.join([
            '/* prefetch: the loop with prefetches stops where the line CN_ILP_PF_DIST',
            ' * ahead would pass the end, so no prefetch leaves the buffer; the',
            ' * input\'s first CN_ILP_PF_DIST bytes (all of a shorter buffer), which',
            ' * it never reaches, are prefetched here */',
            'const size_t pf_end = len > CN_ILP_PF_DIST ? len - CN_ILP_PF_DIST : 0;',
            'cn_ilp_pf_head(%s, len);' % src])

    def _cipher_loop(self, c, fns, isa, src, store, nreg, pf):
        """The main loop in keystream chunks: up to CN_ILP_KS_BYTES of
        keystream into ks (covering the tail when the chunk is the last),
        then the blocks of that chunk."""
        cb = c.cipher['cblock']
        blk = ISAS[isa]['width'] * nreg
        refill = c.cipher['refill'].replace('{nblk}', '(ks_n + %d) / %d' % (cb - 1, cb))
        out = ['while (i + %d <= len) {' % blk,
               '\t/* %s: keystream of the next chunk (through the tail if it is the last) */'
               % c.name,
               '\tsize_t ks_n = len - i < CN_ILP_KS_BYTES ? len - i : CN_ILP_KS_BYTES;',
               '\t' + refill,
               '\tks_base = i;',
               '\tks_end = i + ks_n;',
               _indent(self._loops(fns, isa, src, store, nreg, pf, 'ks_end'), 1),
               '}']
        return '\n'.join(out)

    def _cipher_topup(self, c):
        cb = c.cipher['cblock']
        refill = c.cipher['refill'].replace('{nblk}', '(len - i + %d) / %d' % (cb - 1, cb))
        return '\n'.join([
            'if (i < len && len > ks_end) {',
            '\t/* %s: keystream of the last bytes, which no chunk covered */' % c.name,
            '\t' + refill,
            '\tks_base = i;',
            '}'])

    def _body(self, p, fns, isa, src, store, pf):
        """Main loop, vector finals, scalar remainder, tail for fns."""
        w = ISAS[isa]['width']
        g = p.block()
        base = w * g // math.gcd(w, g)
        unroll = base if p.synthetic else self.unroll_bytes
        blk = base * max(1, unroll // base)
        gran = 8 * g // math.gcd(8, g)
        c = next((f for f in fns if f.cipher), None)
        inline = c is not None and c.forms[isa].get('inline', False)
        masked = self.masked_rem(p, fns, isa)
        if inline and not masked:
            raise ValueError('%s: an inline cipher step needs the masked remainder' % p.name)
        parts = [self._pf_head(src, store)] if pf else []
        if c and not inline:
            parts.append(self._cipher_loop(c, fns, isa, src, store, blk // w, pf))
        elif inline and blk < INLINE_BYTES:
            # keystream in registers: INLINE_BYTES // w independent cipher
            # chains per iteration; the last < INLINE_BYTES bytes in masked
            # passes of 1, 2 and 4 registers (_masked_passes; a 1460-byte
            # buffer: 512, 512, then 64 + 128 + 244 in three passes), every
            # pass one chain of rounds across its registers
            parts.append(self._loops(fns, isa, src, store, INLINE_BYTES // w, pf))
        else:
            parts.append(self._loops(fns, isa, src, store, blk // w, pf))
        if p.synthetic and isa == 'avx512':
            parts.append(self._masked_tail(p, fns, src, store))
            parts.append(self._finals(fns, isa))
        elif masked:
            if c and not inline:
                parts.append(self._cipher_topup(c))
            if inline and blk < INLINE_BYTES:
                parts.append('/* the last bytes: byte-masked registers, in passes of 1, 2, 4 */')
                parts.append(self._masked_passes(fns, isa, src, store, INLINE_BYTES // w))
            else:
                parts.append('/* the last bytes: one byte-masked register */')
                parts.append(self._masked_rem(fns, isa, src, store))
            parts.append(self._finals(fns, isa))
        else:
            parts.append(self._finals(fns, isa))
            if c:
                parts.append(self._cipher_topup(c))
            if blk > gran:
                parts.append('/* remainder: %d-byte granules, scalar steps */' % gran)
                parts.append(self._loop(fns, 'scalar', src, store, gran // 8, False))
        if masked:
            return '\n'.join(x for x in parts if x)
        tail_fns = [] if p.synthetic else fns
        if p.copy or tail_fns:
            parts.append(self._tail(p, tail_fns, src, store))
        return '\n'.join(x for x in parts if x)

    # ------------------------------------------------------------ functions
    def function(self, p, form, isa):
        sym = fn_symbol(p, form, isa)
        fns = p.fns
        lines = []
        what = {'seq': 'sequential: one loop per function over the whole buffer',
                'int': 'integrated: one loop, data in registers between the steps',
                'intpf': 'integrated, software prefetch CN_ILP_PF_DIST bytes ahead'}[form]
        lines.append('/* %s (%s), %s.' % (p.name, isa, what))
        lines.append(' * Functions: %s.' % '; '.join(
            '%s (block %d B%s)' % (f.name, f.block, '' if f.writes else ', no output')
            for f in p.all_fns))
        lines.append(' * b^ILP = %d B. %s */' % (
            p.block(), 'Copies src to dst.' if p.copy else 'In place on dst; src is unused.'))
        lines.append('uint64_t %s(void *restrict dst_, const void *restrict src_, size_t len)'
                     % sym if p.copy else
                     'uint64_t %s(void *dst_, const void *src_, size_t len)' % sym)
        lines.append('{')
        body = ['unsigned char *dst = dst_;']
        if p.copy:
            body.append('const unsigned char *src = src_;')
        else:
            body.append('(void)src_;')
        if not (form == 'seq' and not p.copy and all(f.cipher for f in fns)):
            body.append('size_t i = 0;')  # a cipher-only seq is one library call
        body.append('uint64_t r = 0;')
        if p.cipher and form != 'seq' and p.cipher.forms[isa].get('inline'):
            if p.cipher.name == 'aes128ctr':
                functions.aes_no_wrap_check(functions.STUDY_AES_IV)
            body.append('/* %s: keystream in registers */\n%s'
                        % (p.cipher.name, p.cipher.forms[isa]['decl']))
        elif p.cipher and form != 'seq':
            body.append('/* %s: state, and keystream for up to CN_ILP_KS_BYTES (L1) */\n%s\n'
                        'unsigned char ks[CN_ILP_KS_BYTES] __attribute__((aligned(64)));\n'
                        'size_t ks_base = 0, ks_end = 0;' % (p.cipher.name, p.cipher.cipher['init']))
        for f in fns:
            if f.cipher:
                continue
            decl = (f.decl or '') + ('\n' + f.forms[isa].get('decl', '') if f.forms[isa].get('decl') else '')
            sdecl = f.forms['scalar'].get('decl', '') if isa != 'scalar' else ''
            d = '\n'.join(x for x in (decl.strip(), sdecl) if x)
            if d:
                body.append('/* %s: state and constants */\n%s' % (f.name, d))
        if form == 'seq':
            first = True
            if p.copy:
                body.append('\n/* ---- copy: src -> dst */')
                body.append(self._body(_Only(p, True), [], isa, 'src', True, False))
                first = False
            for f in fns:
                if f.cipher:
                    body.append('\n/* ---- %s: dst in place, the library\'s whole-buffer kernel */'
                                % f.name)
                    body.append(f.cipher['whole'])
                    continue
                body.append('\n/* ---- %s: %s */' % (f.name, 'dst in place' if f.writes else 'reads dst'))
                body.append('i = 0;')
                body.append(self._body(_Only(p, False), [f], isa, 'dst', f.writes, False))
                first = False
        else:
            src = 'src' if p.copy else 'dst'
            body.append(self._body(p, fns, isa, src, p.writes(), form == 'intpf'))
        res = [f.result for f in fns if f.result]
        for rr in res:
            body.append('r = r * 31 + (%s);' % rr)
        body.append('return r;')
        lines.append(_indent('\n'.join(body), 1))
        lines.append('}')
        return '\n'.join(lines) + '\n'


class _Only:
    """View of a pipeline for one sequential pass: copy or not, same LCM
    granule so that every pass covers the same bytes as the others."""

    def __init__(self, p, copy):
        self._p = p
        self.copy = copy
        self.synthetic = p.synthetic
        self.name = p.name

    def block(self):
        return self._p.block()
