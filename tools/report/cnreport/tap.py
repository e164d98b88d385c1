# SPDX-License-Identifier: BSD-2-Clause
"""Study 10: cachenet against the Linux kernel's TCP through a TAP device
throughput and TSC ticks per frame on a path where the TAP's
system calls dominate, measured by the interop test's driver."""
import json
import os
import shutil
import sys

from .util import NotMeasured, fmt, table


def driver_paths(ctx, driver):
    """The test driver ctx.paths[driver] (tests/interop) and cachenet-tapnet,
    or NotMeasured saying why they cannot run here."""
    drv = ctx.paths.get(driver)
    tapnet = ctx.paths.get("tapnet")
    if not drv or not os.path.exists(drv):
        raise NotMeasured("the interop driver (tests/interop) is only in the source tree")
    if not tapnet or not os.path.exists(tapnet):
        raise NotMeasured("cachenet-tapnet was not built (it needs OpenSSL's libcrypto, libssl-dev)")
    if os.geteuid() != 0 or not shutil.which("ip"):
        raise NotMeasured("needs root and iproute2 to create network namespaces and devices")
    return drv, tapnet


def json_producer(ctx, cmd, name):
    """produce(path) for ctx.cached_run: run cmd with --out PATH.d, keep
    the JSON file it writes there (name) at path."""
    def produce(path):
        outdir = path + ".d"
        ctx.run(cmd + ["--out", outdir], timeout=1800)
        with open(os.path.join(outdir, name)) as f:
            d = json.load(f)
        with open(path, "w") as f:
            json.dump(d, f)
        return d
    return produce


def tap(ctx):
    drv, tapnet = driver_paths(ctx, "interop")
    mb = 20 if ctx.args.quick else 100
    short = 100 if ctx.args.quick else 1000
    cmd = [sys.executable, drv, "--tapnet", tapnet, "--mb", str(mb), "--short", str(short),
           "--only", "linux_client,cachenet_client"]
    d = ctx.cached_run("tap", cmd, [tapnet, drv], json_producer(ctx, cmd, "summary.json"))
    res = {r[0]: r for r in d["results"]}
    failed = [r for r in d["results"] if not r[1]]
    rows = []
    hz = None
    for name, s in d["summaries"]:
        frames = s["rx_frames"] + s["tx_frames"]
        if not frames:
            continue
        hz = s["tsc_hz"]
        sysc = s.get("tap_rx_tsc", 0) + s.get("tap_tx_tsc", 0)
        app = s.get("app_tsc", 0)
        stack = s["busy_tsc"] - sysc - app
        mbps = (s["rx_bytes"] + s["tx_bytes"]) * 8 / s["wall_s"] / 1e6 if s["wall_s"] else 0
        rows.append([name, fmt(frames), fmt(s["busy_tsc"] / frames, 4), fmt(sysc / frames, 4),
                     fmt(app / frames, 4), fmt(stack / frames, 4),
                     "%.0f%%" % (100.0 * sysc / s["busy_tsc"]) if s["busy_tsc"] else "—",
                     fmt(s["cpu_user_s"] * 1e6 / frames, 3), fmt(s["cpu_sys_s"] * 1e6 / frames, 3),
                     fmt(mbps, 3)])
        ctx.metric("%s/tsc_per_frame" % name, s["busy_tsc"] / frames)
        ctx.metric("%s/stack_tsc_per_frame" % name, stack / frames)
    md = ["## 10. A real peer: Linux's TCP through a TAP device", "",
          "`tests/interop/interop.py` in a private network namespace: the kernel at 10.77.0.1 "
          "on TAP `cn0`, cachenet (`cachenet-tapnet`: TAP backend, fast path, connection "
          "management) at 10.77.0.2. Linux clients against cachenet's echo, discard and source "
          "(%d MB each, SHA-256 compared), UDP echo, %d short connections; cachenet clients "
          "against Linux echo/sink/source servers. One `read(2)` or `write(2)` per frame "
          "(no vnet header, no offloads): the system calls dominate, as expected on this path." % (
              mb, short), ""]
    md += ["Results: " + "; ".join("%s %s" % (k, "ok" if v[1] else "FAILED: " + v[2])
                                   for k, v in res.items()), ""]
    md += [table(["run", "frames", "TSC/frame (busy)", "TAP syscalls", "app (SHA-256, generator)",
                  "stack + rest", "syscall share", "user CPU µs/frame", "system CPU µs/frame",
                  "Mbit/s (wall, both ways)"], rows), "",
           "*busy* = TSC ticks of the event loop outside `poll(2)`, per frame in either "
           "direction; *TAP syscalls* = ticks inside the TAP's `read`/`readv`/`write` calls; "
           "*app* = the test program's own SHA-256 and data generation; the rest is cachenet "
           "(parse, TCP, connection management, copies) plus loop overhead. TSC spans include "
           "time the process was preempted (the CPUs are shared with the Linux peer); the CPU "
           "columns (getrusage, whole process, start-up included) do not. TSC at %s GHz." % (
               fmt(hz / 1e9, 4) if hz else "?"), ""]
    if failed:
        md += ["**%d interop check(s) failed**: %s" % (len(failed), "; ".join(r[2] for r in failed)), ""]
    return "\n".join(md)
