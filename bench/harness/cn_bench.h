/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file cn_bench.h
 * The benchmark harness every cachenet benchmark program uses (C++, on
 * google-benchmark). It attaches cachenet's counters to each benchmark and
 * fixes the naming contract the report tool and reviewers parse.
 *
 * Naming contract
 *  - benchmark name `<family>/<impl>/<size-or-case>`, e.g. `csum/cachenet/1460`,
 *    `csum/dpdk/1460`, `memcpy-flushed/glibc/65536`. Register with
 *    cnbench::add() (it refuses names without exactly three parts).
 *  - user counters, per op unless the name says otherwise:
 *      tsc_per_op, tsc_per_byte          TSC ticks (not core cycles)
 *      bytes_per_op                      payload bytes one op touches
 *      cycles, instructions, branches, branch_miss, l1i_miss, l1d_miss,
 *      llc_miss, dtlb_miss               hardware counters, when available
 *    Unavailable counters are omitted (never reported as 0) and the JSON
 *    context key `cn_counters` says why.
 *  - under simulation (`--cn_sim=...`): instructions, l1i_miss, l1d_miss,
 *    llc_miss and sim_dr, sim_dw, sim_d1mr, sim_d1mw, sim_llmr (instruction +
 *    data read LL misses), sim_llmw, each per op and, with bytes_per_op set,
 *    also as `<name>_per_byte`; no TSC counters (a simulated run is not
 *    timed) and context `cn_counters` = "simulated by callgrind: <geometry>".
 *
 * Command-line flags (stripped before google-benchmark sees argv):
 *   --cn_events=SPEC   counters to open (see cn_counters_open(); default set
 *                      if absent; "none" opens none)
 *   --cn_sim[=GEOM]    re-run this program under callgrind's cache simulator
 *                      with geometry GEOM ("I1=32768,8,64:D1=...:LL=..."; the
 *                      host's when omitted)
 *   --cn_sim_dir=DIR   where the simulator's dump files go (default: a new
 *                      directory under $TMPDIR, removed at exit)
 *   --cn_sim_keep      keep each benchmark's callgrind dump (its last run)
 *                      as DIR/<name with '/' as '_'>.callgrind for
 *                      callgrind_annotate; the directory is then kept too
 *                      and its path printed
 *
 * Typical benchmark:
 *
 *   static void bm(benchmark::State &st, size_t n) {
 *       ... set up buffers ...
 *       cnbench::Measure m(st, n);          // counting starts
 *       for (auto _ : st) {
 *           m.pause(); cn_cache_flush_range(buf, n); m.resume();   // untimed
 *           work(buf, n);
 *       }
 *       m.finish();                          // counters → st.counters
 *   }
 *   CN_BENCH_MAIN(register_all)
 */
#ifndef CN_BENCH_H
#define CN_BENCH_H

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

extern "C" {
#include "cachenet/lab/cache.h"
#include "cachenet/lab/perf.h"
#include "cachenet/lab/sim.h"
}

namespace cnbench {

/**
 * Parse and strip the --cn_* flags, re-execute under callgrind if --cn_sim
 * was given (does not return then), open the counter set, and record the
 * context (TSC frequency and source, counter availability, CPU, caches) in
 * google-benchmark's JSON context. Call before benchmark::Initialize.
 * Exits with status 2 and a message on a bad flag.
 */
void init(int *argc, char **argv);

/** Release the counter set (call after RunSpecifiedBenchmarks). */
void shutdown();

/** True inside a --cn_sim child: timings are meaningless, counts exact. */
bool simulated();

/**
 * Register benchmark @p name (must be `<family>/<impl>/<case>`; aborts the
 * program at registration with a message otherwise) running @p fn.
 */
benchmark::internal::Benchmark *add(const std::string &name,
				    std::function<void(benchmark::State &)> fn);

/**
 * Counting for one run of one benchmark. Construct right before the
 * `for (auto _ : st)` loop: it zeroes and starts the hardware counters,
 * switches simulated collection on, and reads the TSC. finish() (or the
 * destructor) stops them and stores the per-op (and per-byte) counters in
 * st.counters. pause()/resume() exclude untimed work (flushes, refills)
 * from time *and* from every counter.
 */
class Measure {
public:
	Measure(benchmark::State &st, size_t bytes_per_op);
	~Measure();
	void pause();
	void resume();
	/** Flush [@p a, +@p an) and, if @p b, [@p b, +@p bn) from every cache
	 *  level, paused: the cold-cache set-up of an iteration (inline, so
	 *  that the counted region sees only the pause and resume). */
	void flush(const void *a, size_t an, const void *b = nullptr, size_t bn = 0)
	{
		pause();
		cn_cache_flush_range(a, an);
		if (b)
			cn_cache_flush_range(b, bn);
		resume();
	}
	void finish();
	/** pause() calls that stopped a running measurement so far: under
	 *  --cn_sim each pause + resume pair executes instructions inside
	 *  the counted region (tcp_tx/harness/pause-resume counts them) */
	uint64_t pauses() const { return pauses_; }
	Measure(const Measure &) = delete;
	Measure &operator=(const Measure &) = delete;

private:
	benchmark::State &st_;
	size_t bytes_;
	uint64_t tsc_start_ = 0, tsc_paused_ = 0, tsc_pause_at_ = 0, pauses_ = 0;
	bool running_ = false, finished_ = false;
	struct cn_sim_region sim_ = {};
};

/** The name of the benchmark running on this thread (as given to add()),
 *  "" outside one. */
const std::string &current_name();

/** A page-aligned buffer of @p len bytes (+ @p offset misalignment),
 *  filled with a deterministic pattern; freed with free_buffer(). */
void *alloc_buffer(size_t len, size_t offset = 0);
void free_buffer(void *p);

} // namespace cnbench

/** main() for a benchmark program: init, your registration function,
 *  run, shutdown. */
#define CN_BENCH_MAIN(register_fn)                                   \
	int main(int argc, char **argv)                                \
	{                                                              \
		cnbench::init(&argc, argv);                            \
		register_fn();                                         \
		benchmark::Initialize(&argc, argv);                    \
		if (benchmark::ReportUnrecognizedArguments(argc, argv)) \
			return 1;                                      \
		benchmark::RunSpecifiedBenchmarks();                   \
		cnbench::shutdown();                                   \
		benchmark::Shutdown();                                 \
		return 0;                                              \
	}

#endif /* CN_BENCH_H */
