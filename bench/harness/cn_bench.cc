// SPDX-License-Identifier: BSD-2-Clause
// The benchmark harness: counters around each benchmark's loop, the naming
// contract, and the --cn_* flags. See cn_bench.h.
#include "cn_bench.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <dirent.h>
#include <unistd.h>

extern "C" {
#include "cachenet/bswap.h"
#include "cachenet/cpu.h"
#include "cachenet/crypto.h"
#include "cachenet/csum.h"
#include "cachenet/pes.h"
}

namespace cnbench {

namespace {

struct cn_counters *g_counters = nullptr;
bool g_sim = false;
std::string g_sim_dir_to_remove;
// Name of the benchmark whose function is running (State has no name()
// accessor in google-benchmark 1.7); labels the simulator's dumps.
thread_local std::string t_current;
std::map<void *, void *> g_buffers;

[[noreturn]] void usage_error(const char *msg)
{
	std::fprintf(stderr, "cachenet bench: %s\n", msg);
	std::exit(2);
}

std::string caches_string()
{
	struct cn_cache_info info;
	if (cn_cache_geometry(&info) < 0)
		return "unknown";
	std::string s;
	for (unsigned i = 0; i < info.n; i++) {
		const auto &l = info.level[i];
		char buf[96];
		const char *t = l.type == CN_CACHE_DATA ? "D" : l.type == CN_CACHE_INSTRUCTION ? "I" : "";
		std::snprintf(buf, sizeof(buf), "%sL%u%s %lluK %u-way %uB", s.empty() ? "" : ", ", l.level,
			      t, (unsigned long long)(l.size >> 10), l.ways, l.line);
		s += buf;
	}
	return s + " (" + info.source + ")";
}

void remove_sim_dir()
{
	if (g_sim_dir_to_remove.empty())
		return;
	if (DIR *d = opendir(g_sim_dir_to_remove.c_str())) {
		while (struct dirent *e = readdir(d)) {
			if (e->d_name[0] == '.')
				continue;
			unlink((g_sim_dir_to_remove + "/" + e->d_name).c_str());
		}
		closedir(d);
	}
	rmdir(g_sim_dir_to_remove.c_str());
}

// The variant each dispatched kernel runs in this process (after
// CACHENET_CPU_DISABLE), so that every JSON result names the code it timed:
// cn_impl_<kernel> = the variant's name; the checksum's entry adds the
// sizes it sends to the generic variant instead.
void add_dispatch_context()
{
	const struct cn_csum_impl *c = cn_csum_impl_find(cn_csum_impl_name());
	std::string csum = cn_csum_impl_name();
	if (c && (c->partial_small_max || c->copy_small_max))
		csum += " (generic: partial <= " + std::to_string(c->partial_small_max) +
			" B, copy <= " + std::to_string(c->copy_small_max) + " B)";
	benchmark::AddCustomContext("cn_impl_csum", csum);
	benchmark::AddCustomContext("cn_impl_bswap", cn_bswap_impl_name());
	benchmark::AddCustomContext("cn_impl_pes", cn_pes_impl_name());
	benchmark::AddCustomContext("cn_impl_chacha20", cn_chacha20_impl_name());
	benchmark::AddCustomContext("cn_impl_aes128ctr", cn_aes128ctr_impl_name());
	const char *dis = std::getenv("CACHENET_CPU_DISABLE");
	benchmark::AddCustomContext("cn_cpu_disable", dis ? dis : "");
}

} // namespace

void init(int *argc, char **argv)
{
	std::string events;
	bool events_given = false, sim = false, sim_keep = false;
	std::string sim_geom, sim_dir;
	std::vector<char *> keep;
	std::vector<char *> orig(argv, argv + *argc);

	for (int i = 0; i < *argc; i++) {
		const char *a = argv[i];
		if (i > 0 && std::strncmp(a, "--cn_events=", 12) == 0) {
			events = a + 12;
			events_given = true;
		} else if (i > 0 && std::strcmp(a, "--cn_sim") == 0) {
			sim = true;
		} else if (i > 0 && std::strncmp(a, "--cn_sim=", 9) == 0) {
			sim = true;
			sim_geom = a + 9;
		} else if (i > 0 && std::strncmp(a, "--cn_sim_dir=", 13) == 0) {
			sim_dir = a + 13;
		} else if (i > 0 && std::strcmp(a, "--cn_sim_keep") == 0) {
			sim_keep = true;

		} else if (i > 0 && std::strncmp(a, "--cn_", 5) == 0) {
			std::string m = std::string("unknown flag ") + a +
					" (known: --cn_events=SPEC, --cn_sim[=GEOM], --cn_sim_dir=DIR, --cn_sim_keep)";
			usage_error(m.c_str());
		} else {
			keep.push_back(argv[i]);
		}
	}
	for (size_t i = 0; i < keep.size(); i++)
		argv[i] = keep[i];
	*argc = (int)keep.size();
	argv[*argc] = nullptr;

	g_sim = cn_sim_active();
	if (sim_keep && !sim && !g_sim)
		usage_error("--cn_sim_keep needs --cn_sim");
	if (sim && !g_sim) {
		struct cn_sim_geometry g;
		char err[160];
		if (cn_sim_geometry_parse(sim_geom.c_str(), &g, err, sizeof(err)) < 0)
			usage_error((std::string("--cn_sim: ") + err).c_str());
		bool made_dir = sim_dir.empty();
		if (made_dir) {
			const char *tmp = std::getenv("TMPDIR");
			std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/cn_sim.XXXXXX";
			std::vector<char> t(templ.begin(), templ.end());
			t.push_back('\0');
			if (!mkdtemp(t.data()))
				usage_error("--cn_sim: cannot create a directory for the dumps");
			sim_dir = t.data();
		}
		if (sim_keep)
			setenv("CN_SIM_KEEP", "1", 1);
		orig.push_back(nullptr);
		int rc = cn_sim_exec((int)orig.size() - 1, orig.data(), &g, sim_dir.c_str());
		if (sim_keep)
			std::fprintf(stderr, "cachenet bench: callgrind dumps kept in %s\n",
				     sim_dir.c_str());
		else if (made_dir) {
			g_sim_dir_to_remove = sim_dir;
			remove_sim_dir();
		}
		if (rc < 0) {
			std::fprintf(stderr, "cachenet bench: --cn_sim: cannot run valgrind: %s%s\n",
				     std::strerror(-rc),
				     rc == -ENOENT ? " (install valgrind, or set CN_VALGRIND)" : "");
			std::exit(2);
		}
		std::exit(rc);
	}

	char buf[1024];
	benchmark::AddCustomContext("cn_tsc_hz", std::to_string(cn_tsc_hz()));
	benchmark::AddCustomContext("cn_tsc_source", cn_tsc_source());
	benchmark::AddCustomContext("cn_cpu", cn_cpu_brand());
	cn_cpu_features_format(cn_cpu_features(), buf, sizeof(buf));
	benchmark::AddCustomContext("cn_cpu_features", buf);
	benchmark::AddCustomContext("cn_caches", caches_string());
	add_dispatch_context();

	if (g_sim) {
		const char *geo = std::getenv("CN_SIM_GEOMETRY");
		std::string ctx = std::string("simulated by callgrind: ") + (geo ? geo : "?") +
				  "; hardware counters and TSC ticks not reported (valgrind "
				  "executes ~50x slower; counts are exact, times are not)";
		benchmark::AddCustomContext("cn_counters", ctx);
		std::fprintf(stderr, "cachenet: %s\n", ctx.c_str());
		return;
	}
	if (events_given && events == "none") {
		benchmark::AddCustomContext("cn_counters", "none requested (--cn_events=none)");
		return;
	}
	int rc = cn_counters_open(&g_counters, events_given ? events.c_str() : nullptr);
	if (rc < 0)
		usage_error((std::string("--cn_events: ") + std::strerror(-rc) +
			     " (expected label=event,... with libpfm4 event names)").c_str());
	cn_counters_describe(g_counters, buf, sizeof(buf));
	benchmark::AddCustomContext("cn_counters", buf);
	std::fprintf(stderr, "cachenet: TSC %.3f GHz (%s); %s\n", cn_tsc_hz() / 1e9, cn_tsc_source(),
		     buf);
}

void shutdown()
{
	cn_counters_close(g_counters);
	g_counters = nullptr;
	remove_sim_dir();
}

bool simulated()
{
	return g_sim;
}

benchmark::internal::Benchmark *add(const std::string &name,
				    std::function<void(benchmark::State &)> fn)
{
	size_t a = name.find('/'), b = a == std::string::npos ? a : name.find('/', a + 1);
	if (a == 0 || a == std::string::npos || b == std::string::npos || b == a + 1 ||
	    b + 1 >= name.size() || name.find('/', b + 1) != std::string::npos) {
		std::fprintf(stderr,
			     "cachenet bench: benchmark name '%s' breaks the naming contract "
			     "<family>/<impl>/<size-or-case>\n",
			     name.c_str());
		std::abort();
	}
	return benchmark::RegisterBenchmark(name.c_str(), [name, fn](benchmark::State &st) {
		t_current = name;
		fn(st);
	});
}

const std::string &current_name()
{
	return t_current;
}

Measure::Measure(benchmark::State &st, size_t bytes_per_op) : st_(st), bytes_(bytes_per_op)
{
	if (g_sim) {
		cn_sim_collect(&sim_, true);
	} else if (g_counters) {
		cn_counters_reset(g_counters);
		cn_counters_enable(g_counters);
	}
	running_ = true;
	tsc_start_ = cn_tsc_begin();
}

Measure::~Measure()
{
	finish();
}

void Measure::pause()
{
	if (!running_)
		return;
	/* Simulated counts stop first and restart last (resume): the TSC
	 * reads and the counter toggles between are then not counted as the
	 * region's instructions (a pair costs ~20, not ~50). Under the
	 * simulator no time is reported, so their order does not matter to
	 * the TSC; without it the TSC is read first, as before. */
	if (g_sim)
		cn_sim_collect(&sim_, false);
	tsc_pause_at_ = cn_tsc_end();
	if (g_counters)
		cn_counters_disable(g_counters);
	running_ = false;
	pauses_++;
	st_.PauseTiming();
}

void Measure::resume()
{
	if (running_ || finished_)
		return;
	st_.ResumeTiming();
	if (g_counters)
		cn_counters_enable(g_counters);
	running_ = true;
	tsc_paused_ += cn_tsc_begin() - tsc_pause_at_;
	if (g_sim)
		cn_sim_collect(&sim_, true);
}

void Measure::finish()
{
	if (finished_)
		return;
	uint64_t end = running_ ? cn_tsc_end() : tsc_pause_at_;
	finished_ = true;
	running_ = false;
	if (g_counters)
		cn_counters_disable(g_counters);

	double iters = (double)st_.iterations();
	if (iters <= 0)
		return;
	auto put = [&](const char *name, double per_op) {
		st_.counters[name] = benchmark::Counter(per_op);
		if (bytes_ > 0 && g_sim)
			st_.counters[std::string(name) + "_per_byte"] = benchmark::Counter(per_op / (double)bytes_);
	};
	if (bytes_ > 0)
		st_.counters["bytes_per_op"] = benchmark::Counter((double)bytes_);

	if (g_sim) {
		struct cn_sim_counts c;
		int rc = cn_sim_dump(&sim_, t_current.c_str(), &c);
		if (rc < 0) {
			st_.SkipWithError(("simulation dump failed: " + std::string(std::strerror(-rc))).c_str());
			return;
		}
		put("instructions", (double)c.ir / iters);
		put("l1i_miss", (double)c.i1mr / iters);
		put("l1d_miss", (double)(c.d1mr + c.d1mw) / iters);
		put("llc_miss", (double)(c.ilmr + c.dlmr + c.dlmw) / iters);
		put("sim_dr", (double)c.dr / iters);
		put("sim_dw", (double)c.dw / iters);
		put("sim_d1mr", (double)c.d1mr / iters);
		put("sim_d1mw", (double)c.d1mw / iters);
		put("sim_llmr", (double)(c.ilmr + c.dlmr) / iters);
		put("sim_llmw", (double)c.dlmw / iters);
		return;
	}

	double tsc = (double)(end - tsc_start_ - tsc_paused_) / iters;
	st_.counters["tsc_per_op"] = benchmark::Counter(tsc);
	if (bytes_ > 0)
		st_.counters["tsc_per_byte"] = benchmark::Counter(tsc / (double)bytes_);
	if (!g_counters)
		return;
	cn_counters_read(g_counters);
	// Every available counter under its label (the default set's labels
	// are the contract's); unavailable ones are left out, never zero.
	for (unsigned i = 0; i < cn_counters_count(g_counters); i++) {
		struct cn_counter_value v;
		if (cn_counters_get(g_counters, i, &v) == 0)
			st_.counters[v.label] = benchmark::Counter(v.value / iters);
	}
}

void *alloc_buffer(size_t len, size_t offset)
{
	size_t total = (len + offset + 4095) & ~(size_t)4095;
	void *base = std::aligned_alloc(4096, total ? total : 4096);
	if (!base)
		return nullptr;
	auto *p = static_cast<uint8_t *>(base);
	for (size_t i = 0; i < total; i++)
		p[i] = (uint8_t)(i * 131 + 7);
	g_buffers[p + offset] = base;
	return p + offset;
}

void free_buffer(void *p)
{
	auto it = g_buffers.find(p);
	if (it == g_buffers.end())
		return;
	std::free(it->second);
	g_buffers.erase(it);
}

} // namespace cnbench
