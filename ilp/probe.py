#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Core throughput and latency probe for ilp/model.py's overlap form.

Compiles a small C program (the C compiler in $CC, else cc) whose loops
time, in instructions per TSC tick (best of 200 samples of 20000
iterations; run it pinned, e.g. `taskset -c 0`), on this core:

  dep_add     a chain of dependent adds (latency 1 on every x86 core since
              the P6): core cycles per TSC tick, the clock
  int_add     independent adds on 8 registers: scalar ALU throughput
  int_load    independent 64-bit loads from L1
  int_store   independent 64-bit stores to L1
  st_fwd      store then reload of the same word, chained: store-to-load
              round trips per tick (a spilled state word on a recurrence)
  mix_issue   8 scalar adds and 8 vector adds, all independent: the issue
              (dispatch) width when no single port class is the limit
  vec_add     independent vpaddq zmm (AVX-512 only)
  vec_shuf    independent vpshufb zmm (AVX-512 only)
  vec_load    independent 64-byte loads from L1 (AVX-512 only)
  vec_store   independent 64-byte stores to L1 (AVX-512 only)

Without AVX-512 (cpuid) the vector probes are left out and mix_issue uses
scalar adds only. Prints JSON {name: per-tick rate, ..., "avx512": 0|1}
to stdout (or --json FILE). Standard library only; x86-64 only.
"""

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

PROBE_C = r"""
#include <stdint.h>
#include <stdio.h>

static inline uint64_t tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

#define R4(x) x x x x
#define R16(x) R4(x) R4(x) R4(x) R4(x)
static unsigned char buf[4096] __attribute__((aligned(64)));

/* ops instructions per iteration of body; prints ops per TSC tick */
#define PROBE(name, ops, body, ...) do { \
	uint64_t best = ~0ull; \
	for (int r = 0; r < 200; r++) { \
		uint64_t t0 = tsc(); \
		for (long i = 0; i < 20000; i++) \
			__asm__ volatile(body __VA_ARGS__); \
		uint64_t t = tsc() - t0; \
		if (t < best) \
			best = t; \
	} \
	printf("\"%s\": %.4f,\n", name, 20000.0 * (ops) / (double)best); \
} while (0)

#define ADD8 "add $1,%0\n\tadd $1,%1\n\tadd $1,%2\n\tadd $1,%3\n\t" \
	     "add $1,%4\n\tadd $1,%5\n\tadd $1,%6\n\tadd $1,%7\n\t"
#define VADD(k) "vpaddq %%zmm16,%%zmm" #k ",%%zmm" #k "\n\t"
#define VSHUF(k) "vpshufb %%zmm16,%%zmm" #k ",%%zmm" #k "\n\t"
#define VADD8 VADD(0) VADD(1) VADD(2) VADD(3) VADD(4) VADD(5) VADD(6) VADD(7)
#define ZCLOB "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7"

int main(void)
{
	uint64_t a = 0, b = 0, c = 0, d = 0, e = 0, f = 0, g = 0, h = 0;
	void *p = buf;

	__builtin_cpu_init();
	int avx512 = !!__builtin_cpu_supports("avx512f");
	printf("{\n");
	PROBE("dep_add", 16, R16("add $1,%0\n\t"), : "+r"(a));
	PROBE("int_add", 32, R4(ADD8),
	      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
	PROBE("int_load", 16, R16("mov 64(%1),%0\n\t"), : "=r"(a) : "r"(p));
	PROBE("int_store", 16, R16("mov %0,64(%1)\n\t"), : "+r"(a) : "r"(p) : "memory");
	PROBE("st_fwd", 4, R4("mov %0,64(%1)\n\tmov 64(%1),%0\n\t"), : "+r"(a) : "r"(p) : "memory");
	if (avx512) {
		PROBE("vec_add", 32, R4(VADD8), ::: ZCLOB);
		PROBE("vec_shuf", 32, R4(VSHUF(0) VSHUF(1) VSHUF(2) VSHUF(3) VSHUF(4) VSHUF(5)
					 VSHUF(6) VSHUF(7)), ::: ZCLOB);
		PROBE("vec_load", 16, R16("vmovdqu64 64(%0),%%zmm0\n\t"), :: "r"(p) : "xmm0");
		PROBE("vec_store", 16, R16("vmovdqu64 %%zmm0,64(%0)\n\t"), :: "r"(p) : "memory");
		PROBE("mix_issue", 64, R4(ADD8 VADD8),
		      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h)
		      :: ZCLOB);
	} else {
		PROBE("mix_issue", 32, R4(ADD8),
		      : "+r"(a), "+r"(b), "+r"(c), "+r"(d), "+r"(e), "+r"(f), "+r"(g), "+r"(h));
	}
	printf("\"avx512\": %d,\n\"sink\": %llu\n}\n", avx512,
	       (unsigned long long)(a + b + c + d + e + f + g + h));
	return 0;
}
"""


def run(cc=None):
    """Build and run the probe; returns the parsed JSON dict."""
    if platform.machine() not in ('x86_64', 'amd64'):
        raise RuntimeError('the probe is x86-64 only')
    cc = (cc or os.environ.get('CC', 'cc')).split()
    if not shutil.which(cc[0]):
        raise RuntimeError('no C compiler (%s)' % cc[0])
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, 'probe.c'), os.path.join(d, 'probe')
        with open(src, 'w') as fh:
            fh.write(PROBE_C)
        subprocess.run(cc + ['-O2', '-o', exe, src], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    r.pop('sink', None)
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--json', help='write the result here (default stdout)')
    a = ap.parse_args(argv)
    try:
        r = run()
    except (RuntimeError, subprocess.CalledProcessError) as e:
        sys.stderr.write('probe: %s\n' % e)
        return 1
    text = json.dumps(r, indent=1, sort_keys=True) + '\n'
    if a.json:
        with open(a.json, 'w') as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
