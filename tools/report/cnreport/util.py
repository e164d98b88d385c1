# SPDX-License-Identifier: BSD-2-Clause
"""Running programs, the measurement cache, Markdown tables and figures.

Every measurement goes through Ctx.bench() or Ctx.cached_run(): the result
is stored under OUT/runs/ keyed by the command line and the program's size
and mtime, so a re-run of the report re-uses it unless --fresh (or the
program was rebuilt)."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time


class NotMeasured(Exception):
    """A study (or part) that cannot run here; the message says why."""


class Ctx:
    def __init__(self, args, paths, log):
        self.args = args
        self.paths = paths
        self.log = log
        self.out = args.out
        self.runs = os.path.join(args.out, "runs")
        self.figdir = args.out
        os.makedirs(self.runs, exist_ok=True)
        self.commands = []      # (section, command line, cached?)
        self.figures = []       # figure JSON paths, in order
        self.metrics = {}       # flat "section/what" -> number, for compare
        self.section = None
        self.reused = 0
        self.measured = 0

    # ------------------------------------------------------------ running
    def exe(self, name):
        """Path of a benchmark program, or None if it was not built."""
        p = os.path.join(self.paths["bench"], "cachenet-bench-" + name)
        return p if os.path.isfile(p) and os.access(p, os.X_OK) else None

    def pinned(self, cmd, cpu=None):
        cpu = self.args.cpu if cpu is None else cpu
        if cpu is not None and shutil.which("taskset"):
            return ["taskset", "-c", str(cpu)] + cmd
        return cmd

    def other_cpu(self):
        """A CPU other than the report's own (for a second simulation run
        beside the first), or None on a one-CPU machine."""
        n = os.cpu_count() or 1
        if n < 2 or self.args.cpu is None:
            return None
        return (self.args.cpu - 1) % n

    def run(self, cmd, timeout=1800, cwd=None, env=None):
        """Run cmd, keep its stderr in the log; raise RuntimeError on failure."""
        print("  + " + " ".join(cmd), file=sys.stderr, flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=timeout, cwd=cwd, env=env)
        self.log.write("$ " + " ".join(cmd) + "\n" + p.stderr + "\n")
        self.log.flush()
        if p.returncode != 0:
            raise RuntimeError("%s exited with %d: %s" % (
                os.path.basename(cmd[0]), p.returncode, p.stderr.strip()[-1500:]))
        return p.stdout

    def _key(self, tag, cmd, inputs):
        h = hashlib.sha1()
        h.update(json.dumps(cmd).encode())
        for f in inputs:
            try:
                st = os.stat(f)
                h.update(("%s:%d:%d" % (f, st.st_size, int(st.st_mtime))).encode())
            except OSError:
                h.update(f.encode())
        return os.path.join(self.runs, "%s-%s.json" % (tag, h.hexdigest()[:12]))

    def cached_run(self, tag, cmd, inputs, produce, shown=None):
        """Result of produce(path) for cmd, stored at a path keyed by cmd
        and the inputs' size/mtime; reused unless --fresh."""
        path = self._key(tag, cmd, inputs)
        shown = shown or cmd
        if os.path.exists(path) and not self.args.fresh:
            with open(path) as f:
                d = json.load(f)
            self.commands.append((self.section, " ".join(shown), True))
            self.reused += 1
            print("  = reusing %s (%s)" % (os.path.relpath(path, self.out), tag),
                  file=sys.stderr, flush=True)
            return d
        t0 = time.time()
        d = produce(path)
        self.measured += 1
        self.commands.append((self.section, " ".join(shown), False))
        self.log.write("# %s took %.1f s\n" % (tag, time.time() - t0))
        return d

    @staticmethod
    def save(path, d):
        """Store a measurement at path (for cached_run's produce)."""
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(d, f)
        os.replace(tmp, path)

    def bench(self, name, args, tag, sim=None, timeout=1800, cpu=None):
        """Run cachenet-bench-NAME with args (plus --cn_sim=sim when given),
        pinned to the report's CPU (or cpu); return its JSON. Raises
        NotMeasured when the program is missing."""
        exe = self.exe(name)
        if not exe:
            raise NotMeasured("cachenet-bench-%s was not built" % name)
        extra = []
        if sim is not None:
            extra = ["--cn_sim" + ("=" + sim if sim else "")]
        shown = [exe] + extra + list(args)

        def produce(path):
            tmp = path + ".tmp"
            cmd = self.pinned(shown + ["--benchmark_format=json",
                                       "--benchmark_out=" + tmp,
                                       "--benchmark_out_format=json"], cpu)
            self.run(cmd, timeout=timeout)
            with open(tmp) as f:
                d = json.load(f)
            os.replace(tmp, path)
            return d
        return self.cached_run("%s-%s" % (name, tag), shown, [exe], produce,
                               shown=["taskset -c %s" % (self.args.cpu if cpu is None else cpu)] + shown
                               if self.args.cpu is not None else shown)

    def timed_args(self, quick_min=0.01, full_min=0.03, reps=3):
        if self.args.quick:
            return ["--benchmark_min_time=%g" % quick_min]
        # repetitions interleaved at random: on a shared machine a burst of
        # another tenant's work then lands on one repetition of several
        # rows, not on every repetition of one row (a state-sweep row read
        # 1.60 TSC/B where it reads 1.16 unloaded)
        return ["--benchmark_min_time=%g" % full_min,
                "--benchmark_repetitions=%d" % reps,
                "--benchmark_enable_random_interleaving=true",
                "--benchmark_report_aggregates_only=true"]

    def metric(self, key, value):
        if isinstance(value, (int, float)) and value == value:
            self.metrics["%s/%s" % (self.section, key)] = value

    # ------------------------------------------------------------ figures
    def figure(self, name, title, xlabel, ylabel, series, xlog=True, ylog=False,
               note=None, kind="line", xticks=None):
        """Write OUT/NAME.json (the figure's data, for compare and for other
        tools) and queue it for PNG rendering; return the Markdown link."""
        spec = {"name": name, "title": title, "xlabel": xlabel, "ylabel": ylabel,
                "xlog": xlog, "ylog": ylog, "kind": kind, "series": series,
                "note": note, "xticks": xticks}
        js = os.path.join(self.figdir, name + ".json")
        with open(js, "w") as f:
            json.dump(spec, f, indent=1)
        self.figures.append(js)
        return "![%s](%s.png)\n\n(data: [%s.json](%s.json))" % (title, name, name, name)


# ---------------------------------------------------------------- results

def results(d, key=None):
    """name → benchmark entry; medians where repetitions were run."""
    res = {}
    for b in d.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        # "/iterations:N" and friends are google-benchmark's, not ours
        name = "/".join(p for p in name.split("/") if ":" not in p)
        if b.get("run_type") == "aggregate":
            if b.get("aggregate_name") != "median":
                continue
            res[name] = b
        else:
            res.setdefault(name, b)
    return res


def split(name):
    parts = name.split("/")
    if len(parts) < 3:
        raise ValueError(name)
    return parts[0], parts[1], "/".join(parts[2:])


def case_key(c):
    head = c.split("+")[0].split("-")[0]
    try:
        return (0, int(head), c)
    except ValueError:
        return (1, 0, c)


def fmt(x, digits=3):
    if x is None:
        return "—"
    if isinstance(x, str):
        return x
    if isinstance(x, float) and x != x:
        return "—"
    if x == 0:
        return "0"
    if abs(x) >= 1000:
        return "{:,.0f}".format(x)
    return "{:.{d}g}".format(x, d=digits)


def pct(x):
    return "—" if x is None else "%.2f%%" % (100.0 * x)


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |",
           "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(c) for c in r) + " |")
    return "\n".join(out)


def human_bytes(n):
    n = int(n)
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= div:
            return "%d %s" % (n // div, unit) if n % div == 0 else "%.3g %s" % (n / div, unit)
    return "%d B" % n


def ratio(a, b):
    return a / b if a and b else None


def matplotlib_python():
    """A Python interpreter that can import matplotlib, or None."""
    for py in (sys.executable, "/usr/bin/python3"):
        if py and os.path.exists(py):
            p = subprocess.run([py, "-c", "import matplotlib"], capture_output=True)
            if p.returncode == 0:
                return py
    return None


def render(ctx):
    """Render every queued figure JSON to PNG in one process."""
    if not ctx.figures:
        return None
    py = matplotlib_python()
    if not py:
        return "PNG plots skipped: matplotlib not importable (install python3-matplotlib); the figure JSON is written."
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plot.py")
    try:
        ctx.run([py, script] + ctx.figures, timeout=600)
    except (RuntimeError, subprocess.TimeoutExpired) as e:
        return "PNG plots failed: %s" % e
    return None
