#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""End-to-end test of the benchmark harness through a real benchmark program.

Runs cachenet-bench-memory twice on a few benchmarks — timed, then under
--cn_sim — and checks what the report tool and reviewers rely on:
  * names follow <family>/<impl>/<size-or-case>;
  * tsc_per_op / tsc_per_byte are present and consistent with each other;
  * hardware counters appear only if the kernel can count them, and the
    JSON context says why when it cannot (never a 0 standing in for "n/a");
  * simulated counts are exact: a flushed 4 KB load touches 64 lines, so it
    takes 64 D1 and 64 LL misses per op; the hot one takes none.
Usage: check_harness.py BENCH_EXE
"""
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile

HW = ["cycles", "instructions", "branches", "branch_miss", "l1i_miss", "l1d_miss",
      "llc_miss", "dtlb_miss"]
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL: " + msg)


def run(exe, extra):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [exe, "--benchmark_filter=^load-(hot|flushed)/c/4096$",
           "--benchmark_out=" + out, "--benchmark_out_format=json",
           "--benchmark_min_time=0.01"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        print(p.stderr)
        sys.exit("FAIL: %s exited %d" % (" ".join(cmd), p.returncode))
    with open(out) as f:
        d = json.load(f)
    os.unlink(out)
    return d, p.stderr


def pmu_available():
    """Can this process open a hardware instructions counter? Asked of the
    kernel directly with perf_event_open(2) through libc's syscall()."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    attr = (ctypes.c_uint8 * 128)()
    ctypes.memset(attr, 0, 128)
    # struct perf_event_attr: u32 type (0 = HARDWARE), u32 size, u64 config (1 = INSTRUCTIONS)
    ctypes.c_uint32.from_buffer(attr, 0).value = 0
    ctypes.c_uint32.from_buffer(attr, 4).value = 128
    ctypes.c_uint64.from_buffer(attr, 8).value = 1
    # flags word at offset 40: disabled(bit0) | exclude_kernel(bit5) | exclude_hv(bit6)
    ctypes.c_uint64.from_buffer(attr, 40).value = 1 | (1 << 5) | (1 << 6)
    fd = libc.syscall(298, attr, 0, -1, -1, 0)  # __NR_perf_event_open on x86-64
    if fd >= 0:
        os.close(fd)
        return True
    return False


def main():
    exe = sys.argv[1]
    d, err = run(exe, [])
    names = [b["name"] for b in d["benchmarks"]]
    check(sorted(names) == ["load-flushed/c/4096", "load-hot/c/4096"], "names: %s" % names)
    ctx = d["context"]
    check("cn_counters" in ctx and "cn_tsc_hz" in ctx, "context lacks cn_counters/cn_tsc_hz")
    check(float(ctx.get("cn_tsc_hz", 0)) > 5e8, "implausible TSC frequency")
    have_pmu = pmu_available() if os.uname().machine == "x86_64" else None
    for b in d["benchmarks"]:
        check(len(b["name"].split("/")) == 3, "contract: %s" % b["name"])
        check(b.get("bytes_per_op") == 4096, "bytes_per_op in %s" % b["name"])
        check(b.get("tsc_per_op", 0) > 0, "tsc_per_op in %s" % b["name"])
        check(abs(b["tsc_per_byte"] * 4096 - b["tsc_per_op"]) < 1e-6 * b["tsc_per_op"],
              "tsc_per_byte * bytes != tsc_per_op in %s" % b["name"])
        present = [k for k in HW if k in b]
        if have_pmu is False:
            check(not present, "counters %s reported without a PMU" % present)
        elif have_pmu:
            check("instructions" in present and b["instructions"] > 100,
                  "PMU present but instructions missing in %s" % b["name"])
    if have_pmu is False:
        check("unavailable" in ctx["cn_counters"], "context does not say unavailable: %s"
              % ctx["cn_counters"])
        check("unavailable" in err, "stderr does not say unavailable")
    # a flushed load of 4 KB must cost more TSC ticks than a hot one
    t = {b["name"]: b["tsc_per_op"] for b in d["benchmarks"]}
    check(t["load-flushed/c/4096"] > t["load-hot/c/4096"], "flushed not slower than hot: %s" % t)

    if subprocess.run(["valgrind", "--version"], capture_output=True).returncode != 0:
        print("simulation part skipped: valgrind not installed")
    else:
        d, err = run(exe, ["--cn_sim=I1=32768,8,64:D1=32768,8,64:LL=4M,16,64"])
        ctx = d["context"]
        check(ctx["cn_counters"].startswith("simulated by callgrind: I1=32768,8,64:D1=32768,8,64:"
                                             "LL=4194304,16,64"), "sim context: %s" % ctx["cn_counters"])
        s = {b["name"]: b for b in d["benchmarks"]}
        hot, cold = s["load-hot/c/4096"], s["load-flushed/c/4096"]
        for b in (hot, cold):
            check("tsc_per_op" not in b, "a simulated run reports TSC ticks")
            check(b["instructions"] > 512, "simulated instructions %s" % b["instructions"])
            check(abs(b["instructions_per_byte"] * 4096 - b["instructions"]) < 1e-6 * b["instructions"],
                  "per-byte inconsistent")
        check(abs(cold["sim_d1mr"] - 64) < 0.5, "flushed D1 read misses %s != 64" % cold["sim_d1mr"])
        check(abs(cold["sim_llmr"] - 64) < 0.5, "flushed LL read misses %s != 64" % cold["sim_llmr"])
        check(hot["sim_d1mr"] < 0.5 and hot["sim_llmr"] < 0.5, "hot misses: %s %s" %
              (hot["sim_d1mr"], hot["sim_llmr"]))
        check(abs(cold["instructions"] - hot["instructions"]) < 0.05 * hot["instructions"],
              "flushing changed the instruction count: %s vs %s" %
              (cold["instructions"], hot["instructions"]))
        # --cn_sim_keep: each benchmark's last dump stays, named after it,
        # readable by callgrind_annotate, with the benchmark's own region.
        with tempfile.TemporaryDirectory() as keep:
            run(exe, ["--cn_sim", "--cn_sim_keep", "--cn_sim_dir=" + keep])
            for name in ("load-hot_c_4096", "load-flushed_c_4096"):
                path = os.path.join(keep, name + ".callgrind")
                check(os.path.isfile(path), "--cn_sim_keep: no %s" % path)
                if os.path.isfile(path):
                    with open(path) as f:
                        text = f.read()
                    check("Trigger: Client Request: " + name.replace("_", "/") in text,
                          "kept dump %s is not that benchmark's" % path)
                    check("\nfn=" in text, "kept dump %s has no functions" % path)
    if failures:
        sys.exit("%d check(s) failed" % len(failures))
    print("harness checks passed")


if __name__ == "__main__":
    main()
