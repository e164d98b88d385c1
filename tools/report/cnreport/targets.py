# SPDX-License-Identifier: BSD-2-Clause
"""Every target the report judges, in one table: what is measured (the
row's name in the report), how it compares and the bound. The sections
compute the measured values and judge them here; a target changes here
and nowhere else."""
import collections
import operator

Target = collections.namedtuple("Target", "key section ratio op bound fmt params")

_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_SHOWN = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}


def _t(key, section, ratio, op, bound, fmt="%g", **params):
    return Target(key, section, ratio, op, bound, fmt, params)


_PF_PIPE = "copy+bswap32+pes+csum"
# The ILP benchmark's name suffix of each vector form (bench/bench_ilp.cc:
# none for AVX-512).
_FORM_SUFFIX = {"avx512": "", "avx2": "-avx2"}

TARGETS = [
    # section 2, kernels: the checksum alone, hot, in TSC ticks per byte and
    # against DPDK's; per call at 20 B (a header); flushed against a loop
    # that only loads the buffer 64 bytes at a time
    _t("csum hot 1460 B, TSC/B", "kernels", "TSC/B", "<=", 0.020, "%.3f"),
    _t("csum hot 1460 B, DPDK / cachenet", "kernels", "DPDK ÷ cachenet", ">=", 3.4, "%.1f"),
    _t("csum hot 9000 B, TSC/B", "kernels", "TSC/B", "<=", 0.016, "%.3f"),
    _t("csum hot 9000 B, DPDK / cachenet", "kernels", "DPDK ÷ cachenet", ">=", 3.4, "%.1f"),
    _t("csum 20 B per call, cachenet / DPDK (inlined)", "kernels", "cachenet ÷ DPDK", "<=", 1),
] + [
    _t("csum cold %d B, cachenet / 512-bit load loop" % n, "kernels",
       "cachenet ÷ load loop", "<=", 1.15, "%.2f", size=n) for n in (4096, 9000, 65536)
] + [
    # copy+checksum against glibc's memcpy alone, and the fused kernel
    # against memcpy followed by the checksum
    t for n in (576, 1460, 4096, 9000, 65536) for t in (
        _t("copy+csum hot %d B, cachenet / memcpy" % n, "kernels", "cachenet ÷ memcpy", "<=",
           1.4, "%.1f", size=n),
        _t("copy+csum hot %d B, fused / memcpy then csum" % n, "kernels",
           "fused ÷ memcpy then csum", "<", 1, size=n))
] + [
    _t("aes128ctr 16 KB, TSC/B", "kernels", "TSC/B", "<=", 0.15, "%.2f", alg="aes128ctr"),
    _t("chacha20 16 KB, TSC/B", "kernels", "TSC/B", "<=", 0.45, "%.2f", alg="chacha20"),
] + [
    _t("bswap32 %d B, cachenet / memcpy" % n, "kernels", "cachenet ÷ memcpy", "<=", 1.2, "%.1f",
       size=n) for n in (64, 1460, 65536)
] + [
    # section 4: the TX fast path's instructions per 1460-byte segment
    # (simulated, checksum offloaded)
    _t("TX fast path, instructions per 1460-byte segment", "payload", "instructions", "<=", 300),
    # section 7: the share of the flush - inject gap the prefetch DCA mode
    # wins back at 1460 B, every RX configuration
    _t("prefetch recovery at 1460 B", "dca", "(flush - prefetch) ÷ (flush - inject)", ">=",
       0.80, "%.0f%%"),
] + [
    # section 8, ILP: the prefetching integrated loop against the sequential
    # loops, per vector form (the report uses the best one the CPU has:
    # AVX-512, else AVX2; the AVX-512 rows carry no suffix, the others
    # "-avx2")
    _t("%s-intpf%s, %s %s" % (_PF_PIPE, _FORM_SUFFIX[form], size, st), "ilp", "seq ÷ intpf",
       ">=", bound, "%.1f", pipe=_PF_PIPE, size=size, state=st, form=form)
    for form, size, st, bound in (("avx512", "1460", "hot", 1.5), ("avx512", "65536", "l2", 2.5),
                                  ("avx512", "1460", "cold", 1.2),
                                  ("avx512", "65536", "cold", 1.2),
                                  ("avx2", "1460", "hot", 1.8), ("avx2", "65536", "l2", 2.5),
                                  ("avx2", "1460", "cold", 1.2))
] + [
    # the cipher pipelines' integrated loop against the cipher alone (the
    # library's whole-buffer kernel), in either vector form
    _t("copy+%s+csum-int%s, %s %s" % (c, _FORM_SUFFIX[form], size, st), "ilp",
       "int ÷ %s alone" % c, "<=", 1.1, "%.1f", cipher=c, size=size, state=st, form=form)
    for form in ("avx512", "avx2")
    for c in ("aes128ctr", "chacha20")
    for size, st in (("1460", "hot"), ("65536", "hot"), ("65536", "l2"))
] + [
    # section 9, code layout: where a path's hot code exceeds a 16 KB
    # direct-mapped I-cache, the cut in its I1 misses per packet
    _t("I1 misses cut where the hot code exceeds 16 KB", "layout", "misses cut", ">=", 0.30,
       "%.0f%%"),
]

BY_KEY = {t.key: t for t in TARGETS}
assert len(BY_KEY) == len(TARGETS), "two targets of one name"


def get(key):
    return BY_KEY[key]


def of(section):
    """The section's targets, in the table's order."""
    return [t for t in TARGETS if t.section == section]


def bound(t):
    """The bound as printed, e.g. '≤ 1.4', '≥ 80%'."""
    b = t.bound * 100 if t.fmt.endswith("%%") else t.bound
    return "%s %s" % (_SHOWN[t.op], t.fmt % b)


def shown(t):
    """What is compared and the bound, e.g. 'seq ÷ intpf ≥ 1.5'."""
    return "%s %s" % (t.ratio, bound(t))


def met(t, value):
    """True, False, or None when there is no value to judge."""
    if value is None:
        return None
    return _OPS[t.op](value, t.bound)


def verdict(t, value, missing="not run"):
    m = met(t, value)
    return missing if m is None else "met" if m else "NOT met"
