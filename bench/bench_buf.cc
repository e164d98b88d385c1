// SPDX-License-Identifier: BSD-2-Clause
// Buffer management, Ang's question (the i960RN iNIC study): what does the buffer work of one
// transmitted packet cost, and does it stay flat as more data is queued?
//
//   mbuf/<impl>/<op>          single operations: get-free, bulk32 (32 gets +
//                             32 frees per op), get-cluster-free,
//                             prepend (get, prepend a 54 B header, free),
//                             copyref-free (reference a 1460 B payload, free)
//   txbuf/<impl>/window<N>    one TX packet's buffer work with N packets in
//                             flight: get a descriptor, write a 54 B header
//                             into header room, reference 1460 B of queued
//                             payload, and, N packets later, release it on
//                             the ACK (mbufs freed cold when N is large)
//   sockbuf/<impl>/<op>-<Q>   with Q MSS segments queued: append (append one
//                             segment, drop one ACKed), seg (locate the
//                             newest segment), mcopy (reference it, free)
//
// impl: cachenet (mbuf pool), contig (ring sockbuf), mbuf (chain sockbuf
// over segment objects, cn_sbchain_tx), mbuf4 (chain sockbuf over mbuf +
// cluster, header mbuf + cn_sbchain_copy_ref: four gets per segment),
// chain / naive (chain sockbuf with and without the tail and send pointers),
// ring, dpdk (22.11 rte_mbuf), lwip (pbufs), glibc (malloc). Peers run when
// found at build time and initialised at run time; otherwise the program
// says so and registers nothing for them. Counter allocs_per_seg: pool gets
// (mbufs + clusters, copy-in included) per transmitted segment.
#include "harness/cn_bench.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <sched.h>
#include <string>
#include <unistd.h>
#include <vector>

extern "C" {
#include "cachenet/mbuf.h"
#include "cachenet/lab/sockbuf_naive.h"
#include "cachenet/sockbuf.h"
}

#ifdef CN_HAVE_DPDK
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_version.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#endif
#ifdef CN_HAVE_LWIP
extern "C" {
#include <lwip/init.h>
#include <lwip/pbuf.h>
}
#endif

namespace {

constexpr uint32_t MSS = 1460;
constexpr uint32_t HDR = 54;
constexpr uint32_t REFILL = 64; // segments queued per (untimed) refill
uint8_t g_hdr[128];
uint8_t g_payload[MSS * REFILL];

struct cn_mbuf_pool *g_mp, *g_cp, *g_sp;

uint64_t pool_gets()
{
	struct cn_mbuf_pool_stats a, b, c;
	cn_mbuf_pool_stats(g_mp, &a);
	cn_mbuf_pool_stats(g_cp, &b);
	cn_mbuf_pool_stats(g_sp, &c);
	return a.gets + b.gets + c.gets;
}

// A benchmark of one operation per iteration: @p op, inlined into the
// timed loop (the peers' get/free, prepend and copy-by-reference).
template <class Op> void per_op(benchmark::State &st, Op op)
{
	cnbench::Measure m(st, 0);
	for (auto _ : st)
		op();
	m.finish();
}

// The packets in flight, oldest first, at most @p window of them: send()
// adds one and, once more than the window are out, hands the oldest to
// @p acked with the sequence its ACK acknowledges (what the ACK releases).
template <class P> class InFlight {
public:
	explicit InFlight(uint32_t window) : fl_(window + 1) {}

	template <class Acked> void send(P pkt, uint32_t ack, Acked acked)
	{
		fl_[(head_ + n_) % fl_.size()] = {pkt, ack};
		if (++n_ < fl_.size())
			return;
		Flight &o = fl_[head_];
		head_ = (head_ + 1) % fl_.size();
		n_--;
		acked(o.pkt, o.ack);
	}

	// Each packet still out, oldest first, to @p f; then none are.
	template <class F> void drain(F f)
	{
		for (uint32_t i = 0; i < n_; i++)
			f(fl_[(head_ + i) % fl_.size()].pkt);
		n_ = 0;
	}

private:
	struct Flight {
		P pkt;
		uint32_t ack;
	};
	std::vector<Flight> fl_;
	uint32_t head_ = 0, n_ = 0;
};

// ---------------------------------------------------------------- mbuf/

// The same operation timed on every peer: @p get one buffer and @p put
// it back (both inlined).
template <class B, B (*get)(), void (*put)(B)> void bm_get_free(benchmark::State &st)
{
	per_op(st, [] {
		B b = get();
		benchmark::DoNotOptimize(b);
		put(b);
	});
}

// 32 buffers at a time from the pool *@p pool: @p get_bulk (0 or an
// error) and @p put_bulk.
template <class Pool, class B, Pool **pool, int (*get_bulk)(Pool *, B **, unsigned),
	  void (*put_bulk)(B **, unsigned)>
void bm_bulk(benchmark::State &st)
{
	B *b[32];
	per_op(st, [&] {
		if (get_bulk(*pool, b, 32) != 0)
			st.SkipWithError("bulk get failed");
		benchmark::DoNotOptimize(b[0]);
		put_bulk(b, 32);
	});
}

struct cn_mbuf *cn_small_get() { return cn_mbuf_get(g_mp); }
struct cn_mbuf *cn_cluster_get() { return cn_mbuf_get_cluster(g_mp, g_cp); }
void cn_put(struct cn_mbuf *m) { cn_mbuf_free(m); }
// malloc of an mbuf's size: the allocator the pools replace
void *glibc_get() { return malloc(sizeof(struct cn_mbuf) + CN_MBUF_SMALL_DATA); }

void bm_cn_prepend(benchmark::State &st)
{
	per_op(st, [] {
		struct cn_mbuf *b = cn_mbuf_get(g_mp);
		b = cn_mbuf_prepend(b, HDR);
		memcpy(b->data, g_hdr, HDR);
		benchmark::DoNotOptimize(b->data);
		cn_mbuf_free(b);
	});
}

void bm_cn_copyref(benchmark::State &st)
{
	struct cn_mbuf *p = cn_mbuf_get_cluster(g_mp, g_cp);
	memcpy(cn_mbuf_append(p, MSS), g_payload, MSS);
	per_op(st, [&] {
		struct cn_mbuf *r = cn_mbuf_copy_ref(p, 0, MSS);
		benchmark::DoNotOptimize(r);
		cn_mbuf_free(r);
	});
	cn_mbuf_free(p);
}

// ---------------------------------------------------------------- txbuf/

void bm_tx_contig(benchmark::State &st, uint32_t window)
{
	uint32_t size = 1u << 12;
	while (size < (window + 2 * REFILL) * MSS)
		size <<= 1;
	struct cn_sbring_params p = {0, size, MSS, CN_SBRING_COPY_PLAIN, window + 1, 128, 1000, nullptr, 0, 0};
	struct cn_sbring *sb = cn_sbring_create(&p);
	InFlight<struct cn_sb_anchor *> fl(window);
	uint32_t snd = 0;
	uint64_t pkts = 0, gets0 = pool_gets();
	struct cn_sb_piece pc[2];
	{
		cnbench::Measure m(st, 0);
		for (auto _ : st) {
			if (cn_sockbuf_len(cn_sbring_sockbuf(sb)) - snd < MSS) {
				m.pause();
				// The application's bytes are in the ring already
				// (zero-copy write): only the indices move.
				cn_sbring_reserve(sb, pc);
				cn_sbring_commit(sb, REFILL * MSS, false);
				m.resume();
			}
			struct cn_sb_anchor *a = cn_sbring_anchor_get(sb, snd, MSS, HDR);
			memcpy(a->hdr, g_hdr, HDR);
			benchmark::DoNotOptimize(a->piece[0]);
			snd += a->len;
			pkts++;
			fl.send(a, a->seq + a->len, [&](struct cn_sb_anchor *o, uint32_t ack) {
				cn_sbring_anchor_put(sb, o);
				snd -= (uint32_t)cn_sbring_release_seq(sb, ack);
			});
		}
		m.finish();
	}
	st.counters["allocs_per_seg"] = (double)(pool_gets() - gets0) / (double)pkts;
	cn_sbring_destroy(sb);
}

// One TX packet's buffer work over a chain sockbuf with N packets in
// flight: data() queues one MSS of the application's data (not timed, but
// its gets count in allocs_per_seg, as a zero-copy write would queue it),
// pkt(sb, off) builds the packet for [off, off+MSS) with its header.
template <class Data, class Pkt>
void tx_chain(benchmark::State &st, uint32_t window, struct cn_mbuf_pool *cpool, Data data, Pkt pkt)
{
	struct cn_sbchain sb;
	InFlight<struct cn_mbuf *> fl(window);
	uint32_t snd = 0;
	uint64_t pkts = 0, gets0 = pool_gets();
	cn_sbchain_init(&sb, g_mp, cpool);
	{
		cnbench::Measure m(st, 0);
		for (auto _ : st) {
			if (cn_sockbuf_len(&sb.sb) - snd < MSS) {
				m.pause();
				for (uint32_t i = 0; i < REFILL; i++) {
					struct cn_mbuf *d = data();
					d->len = d->pkt_len = MSS;
					cn_sbchain_append(&sb, d);
				}
				m.resume();
			}
			struct cn_mbuf *h = pkt(&sb, snd);
			snd += MSS;
			pkts++;
			fl.send(h, 0, [&](struct cn_mbuf *o, uint32_t) {
				cn_mbuf_free_chain(o);
				cn_sbchain_drop(&sb, MSS);
				snd -= MSS;
			});
		}
		m.finish();
	}
	fl.drain(cn_mbuf_free_chain);
	cn_sbchain_flush(&sb);
	st.counters["allocs_per_seg"] = (double)(pool_gets() - gets0) / (double)pkts;
}

// The chain sockbuf over segment objects: the application's data is one
// segment object per MSS (one get: mbuf, companion and storage), and each
// packet is cn_sbchain_tx's companion descriptor with the header written
// into the storage in front of the payload: no get per packet.
void bm_tx_mbuf(benchmark::State &st, uint32_t window)
{
	tx_chain(st, window, g_sp, [] { return cn_mbuf_get(g_sp); },
		 [](struct cn_sbchain *sb, uint32_t off) {
			 struct cn_mbuf *h = cn_sbchain_tx(sb, off, MSS, HDR);
			 memcpy(h->data, g_hdr, HDR);
			 return h;
		 });
}

// The four-get TX of a BSD stack: data in an mbuf + cluster per MSS, a
// header mbuf with the header prepended, a reference mbuf for the payload.
void bm_tx_mbuf4(benchmark::State &st, uint32_t window)
{
	tx_chain(st, window, g_cp, [] { return cn_mbuf_get_cluster(g_mp, g_cp); },
		 [](struct cn_sbchain *sb, uint32_t off) {
			 struct cn_mbuf *h = cn_mbuf_prepend(cn_mbuf_get(g_mp), HDR);
			 memcpy(h->data, g_hdr, HDR);
			 h->next = cn_sbchain_copy_ref(sb, off, MSS);
			 h->pkt_len += MSS;
			 return h;
		 });
}

// ---------------------------------------------------------------- sockbuf/

enum class SbOp { append, seg, mcopy };

void bm_sb_chain(benchmark::State &st, uint32_t q, SbOp op, bool naive)
{
	struct cn_sbchain sb;
	cn_sbchain_init(&sb, g_mp, g_cp);
	auto seg_mbuf = [] {
		struct cn_mbuf *d = cn_mbuf_get_cluster(g_mp, g_cp);
		d->len = d->pkt_len = MSS;
		return d;
	};
	for (uint32_t i = 0; i < q; i++)
		cn_sbchain_append(&sb, seg_mbuf());
	struct cn_sb_seg s;
	std::vector<struct cn_mbuf *> spare;
	{
		cnbench::Measure m(st, 0);
		for (auto _ : st) {
			switch (op) {
			case SbOp::append: {
				if (spare.empty()) {
					m.pause();
					for (int i = 0; i < 256; i++)
						spare.push_back(seg_mbuf());
					m.resume();
				}
				struct cn_mbuf *d = spare.back();
				spare.pop_back();
				if (naive)
					cn_sbchain_naive_append(&sb, d);
				else
					cn_sbchain_append(&sb, d);
				cn_sbchain_drop(&sb, MSS);
				break;
			}
			case SbOp::seg:
				if (naive)
					cn_sbchain_naive_seg(&sb, (q - 1) * MSS, MSS, &s);
				else
					cn_sbchain_seg(&sb, (q - 1) * MSS, MSS, &s);
				benchmark::DoNotOptimize(s.piece[0].base);
				break;
			case SbOp::mcopy: {
				struct cn_mbuf *r = naive ? cn_sbchain_naive_copy_ref(&sb, (q - 1) * MSS, MSS)
							  : cn_sbchain_copy_ref(&sb, (q - 1) * MSS, MSS);
				benchmark::DoNotOptimize(r);
				cn_mbuf_free_chain(r);
				break;
			}
			}
		}
		m.finish();
	}
	for (auto *d : spare)
		cn_mbuf_free(d);
	cn_sbchain_flush(&sb);
}

void bm_sb_ring(benchmark::State &st, uint32_t q, SbOp op)
{
	uint32_t size = 1u << 12;
	while (size < (q + 1) * MSS)
		size <<= 1;
	struct cn_sbring_params p = {0, size, MSS, CN_SBRING_COPY_PLAIN, 4, 128, 0, nullptr, 0, 0};
	struct cn_sbring *sb = cn_sbring_create(&p);
	struct cn_sb_piece pc[2];
	struct cn_sb_seg s;
	cn_sbring_reserve(sb, pc);
	cn_sbring_commit(sb, q * MSS, false);
	per_op(st, [&] {
		switch (op) {
		case SbOp::append: // zero-copy append of one segment, drop one
			cn_sbring_reserve(sb, pc);
			cn_sbring_commit(sb, MSS, false);
			cn_sockbuf_drop(cn_sbring_sockbuf(sb), MSS);
			break;
		case SbOp::seg:
			cn_sbring_seg(sb, (q - 1) * MSS, MSS, &s);
			benchmark::DoNotOptimize(s.piece[0].base);
			break;
		case SbOp::mcopy: {
			struct cn_sb_anchor *a = cn_sbring_anchor_get(sb, (q - 1) * MSS, MSS, HDR);
			benchmark::DoNotOptimize(a);
			cn_sbring_anchor_put(sb, a);
			break;
		}
		}
	});
	cn_sbring_destroy(sb);
}

// ---------------------------------------------------------------- DPDK

#ifdef CN_HAVE_DPDK
struct rte_mempool *g_dmp;

struct rte_mbuf *dpdk_get() { return rte_pktmbuf_alloc(g_dmp); }

bool dpdk_init()
{
	cpu_set_t set;
	int core = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				core = c;
				break;
			}
	std::string l = std::to_string(core), prefix = "cnbench" + std::to_string(getpid());
	std::vector<std::string> args = {"cachenet-bench-buf", "--no-huge", "--no-pci", "-l", l, "-m", "256",
					 "--file-prefix=" + prefix, "--log-level=lib.eal:error", "--no-telemetry"};
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(a.data());
	if (rte_eal_init((int)argv.size(), argv.data()) < 0) {
		fprintf(stderr, "dpdk: rte_eal_init failed: %s; DPDK benchmarks skipped\n", rte_strerror(rte_errno));
		return false;
	}
	g_dmp = rte_pktmbuf_pool_create("cnbench", 32767, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	if (g_dmp == NULL) {
		fprintf(stderr, "dpdk: rte_pktmbuf_pool_create failed: %s; DPDK benchmarks skipped\n",
			rte_strerror(rte_errno));
		return false;
	}
	fprintf(stderr, "dpdk %s: EAL on lcore %d (-l %d), pool of 32767 mbufs, cache 256\n", rte_version(),
		rte_lcore_id(), core);
	return true;
}

void bm_d_prepend(benchmark::State &st)
{
	per_op(st, [] {
		struct rte_mbuf *b = rte_pktmbuf_alloc(g_dmp);
		char *h = rte_pktmbuf_prepend(b, HDR);
		memcpy(h, g_hdr, HDR);
		benchmark::DoNotOptimize(h);
		rte_pktmbuf_free(b);
	});
}

void bm_d_clone(benchmark::State &st)
{
	struct rte_mbuf *p = rte_pktmbuf_alloc(g_dmp);
	memcpy(rte_pktmbuf_append(p, MSS), g_payload, MSS);
	per_op(st, [&] {
		struct rte_mbuf *c = rte_pktmbuf_clone(p, g_dmp);
		benchmark::DoNotOptimize(c);
		rte_pktmbuf_free(c);
	});
	rte_pktmbuf_free(p);
}

// The same TX structure as bm_tx_mbuf: payload held in mbufs (the socket
// buffer), each packet a header mbuf + a clone of the payload, freed on ACK
// together with the payload's own reference.
void bm_tx_dpdk(benchmark::State &st, uint32_t window)
{
	std::deque<struct rte_mbuf *> sockbuf;
	InFlight<struct rte_mbuf *> fl(window);
	size_t snd = 0;
	{
		cnbench::Measure m(st, 0);
		for (auto _ : st) {
			if (snd == sockbuf.size()) {
				m.pause();
				for (uint32_t i = 0; i < REFILL; i++) {
					struct rte_mbuf *d = rte_pktmbuf_alloc(g_dmp);
					rte_pktmbuf_append(d, MSS);
					sockbuf.push_back(d);
				}
				m.resume();
			}
			struct rte_mbuf *h = rte_pktmbuf_alloc(g_dmp);
			char *hp = rte_pktmbuf_prepend(h, HDR);
			memcpy(hp, g_hdr, HDR);
			struct rte_mbuf *c = rte_pktmbuf_clone(sockbuf[snd++], g_dmp);
			rte_pktmbuf_chain(h, c);
			fl.send(h, 0, [&](struct rte_mbuf *o, uint32_t) {
				rte_pktmbuf_free(o);
				rte_pktmbuf_free(sockbuf.front());
				sockbuf.pop_front();
				snd--;
			});
		}
		m.finish();
	}
	fl.drain(rte_pktmbuf_free);
	for (auto *d : sockbuf)
		rte_pktmbuf_free(d);
}
#endif

// ---------------------------------------------------------------- lwIP

#ifdef CN_HAVE_LWIP
struct pbuf *lwip_get() { return pbuf_alloc(PBUF_RAW, HDR, PBUF_RAM); }
void lwip_put(struct pbuf *p) { pbuf_free(p); }

void bm_l_copyref(benchmark::State &st)
{
	per_op(st, [] {
		struct pbuf *p = pbuf_alloc(PBUF_RAW, MSS, PBUF_REF);
		p->payload = g_payload;
		benchmark::DoNotOptimize(p);
		pbuf_free(p);
	});
}

// lwIP's own TCP keeps unacked data in pbufs; the TX buffer work is a
// header pbuf (PBUF_RAM) chained to a PBUF_REF pointing at the payload.
void bm_tx_lwip(benchmark::State &st, uint32_t window)
{
	InFlight<struct pbuf *> fl(window);
	uint32_t off = 0;
	per_op(st, [&] {
		struct pbuf *h = pbuf_alloc(PBUF_RAW, HDR, PBUF_RAM);
		memcpy(h->payload, g_hdr, HDR);
		struct pbuf *r = pbuf_alloc(PBUF_RAW, MSS, PBUF_REF);
		r->payload = g_payload + (off % REFILL) * MSS;
		off++;
		pbuf_cat(h, r);
		fl.send(h, 0, [](struct pbuf *o, uint32_t) { pbuf_free(o); });
	});
	fl.drain(pbuf_free);
}
#endif

// The TX benchmarks' windows: packets in flight.
const uint32_t WINDOWS[] = {1, 64, 1024};

// A peer's mbuf/<peer>/<op> benchmarks, then its txbuf/<peer>/window<w>.
[[maybe_unused]] void add_peer(const std::string &peer,
			       std::initializer_list<std::pair<const char *, void (*)(benchmark::State &)>> ops,
			       void (*tx)(benchmark::State &, uint32_t))
{
	for (auto &o : ops)
		cnbench::add("mbuf/" + peer + "/" + o.first, o.second);
	for (uint32_t w : WINDOWS)
		cnbench::add("txbuf/" + peer + "/window" + std::to_string(w),
			     [tx, w](benchmark::State &st) { tx(st, w); });
}

void register_all()
{
	struct cn_mbuf_pool_params mp = {}, cp = {}, sp = {};
	mp.name = "bench-small";
	mp.kind = CN_MBUF_POOL_SMALL;
	mp.count = 65536;
	mp.cache_size = 256;
	cp.name = "bench-clusters";
	cp.kind = CN_MBUF_POOL_CLUSTER;
	cp.count = 32768;
	cp.cache_size = 256;
	g_mp = cn_mbuf_pool_create(&mp);
	g_cp = cn_mbuf_pool_create(&cp);
	// Segment objects sized for one MSS behind the default header room.
	sp.name = "bench-segments";
	sp.kind = CN_MBUF_POOL_SEG;
	sp.count = 8192;
	sp.data_size = CN_MBUF_SMALL_HEADROOM + MSS;
	sp.cache_size = 256;
	sp.small = g_mp;
	g_sp = g_mp ? cn_mbuf_pool_create(&sp) : nullptr;
	if (!g_mp || !g_cp || !g_sp) {
		fprintf(stderr, "cannot create the mbuf pools: %s\n", strerror(errno));
		exit(1);
	}
	for (size_t i = 0; i < sizeof(g_hdr); i++)
		g_hdr[i] = (uint8_t)(i * 7);
	for (size_t i = 0; i < sizeof(g_payload); i++)
		g_payload[i] = (uint8_t)(i * 13);

	using S = benchmark::State;
	cnbench::add("mbuf/cachenet/get-free", bm_get_free<struct cn_mbuf *, cn_small_get, cn_put>);
	cnbench::add("mbuf/cachenet/bulk32",
		     bm_bulk<struct cn_mbuf_pool, struct cn_mbuf, &g_mp, cn_mbuf_get_bulk, cn_mbuf_free_bulk>);
	cnbench::add("mbuf/cachenet/get-cluster-free",
		     bm_get_free<struct cn_mbuf *, cn_cluster_get, cn_put>);
	cnbench::add("mbuf/cachenet/prepend", bm_cn_prepend);
	cnbench::add("mbuf/cachenet/copyref-free", bm_cn_copyref);
	cnbench::add("mbuf/glibc/get-free", bm_get_free<void *, glibc_get, free>);

	for (uint32_t w : WINDOWS) {
		std::string ws = "window" + std::to_string(w);
		cnbench::add("txbuf/contig/" + ws, [w](S &st) { bm_tx_contig(st, w); });
		cnbench::add("txbuf/mbuf/" + ws, [w](S &st) { bm_tx_mbuf(st, w); });
		cnbench::add("txbuf/mbuf4/" + ws, [w](S &st) { bm_tx_mbuf4(st, w); });
	}
	const uint32_t queued[] = {1, 10, 100, 1000, 10000};
	const std::pair<const char *, SbOp> ops[] = {{"append", SbOp::append}, {"seg", SbOp::seg},
						      {"mcopy", SbOp::mcopy}};
	for (auto &o : ops)
		for (uint32_t q : queued) {
			std::string c = std::string(o.first) + "-" + std::to_string(q);
			SbOp op = o.second;
			cnbench::add("sockbuf/chain/" + c, [q, op](S &st) { bm_sb_chain(st, q, op, false); });
			cnbench::add("sockbuf/naive/" + c, [q, op](S &st) { bm_sb_chain(st, q, op, true); });
			cnbench::add("sockbuf/ring/" + c, [q, op](S &st) { bm_sb_ring(st, q, op); });
		}

#ifdef CN_HAVE_DPDK
	if (dpdk_init()) {
		add_peer("dpdk", {{"get-free", bm_get_free<struct rte_mbuf *, dpdk_get, rte_pktmbuf_free>},
				  {"bulk32", bm_bulk<struct rte_mempool, struct rte_mbuf, &g_dmp,
						     rte_pktmbuf_alloc_bulk, rte_pktmbuf_free_bulk>},
				  {"prepend", bm_d_prepend}, {"copyref-free", bm_d_clone}}, bm_tx_dpdk);
	}
#else
	fprintf(stderr, "dpdk: not found at build time (libdpdk-dev); DPDK benchmarks not built\n");
#endif
#ifdef CN_HAVE_LWIP
	lwip_init();
	fprintf(stderr, "lwip %s: Debian's liblwip allocates pbufs with malloc (MEMP_MEM_MALLOC) "
			"under a mutex (SYS_LIGHTWEIGHT_PROT): expect malloc-like costs\n", LWIP_VERSION_STRING);
	add_peer("lwip", {{"get-free", bm_get_free<struct pbuf *, lwip_get, lwip_put>}, {"copyref-free", bm_l_copyref}}, bm_tx_lwip);
#else
	fprintf(stderr, "lwip: not found at build time (liblwip-dev); lwIP benchmarks not built\n");
#endif
}

} // namespace

CN_BENCH_MAIN(register_all)
