// SPDX-License-Identifier: BSD-2-Clause
// The established-connection data path against simulated peers on the
// in-memory NIC (the method of Nahum et al.): the stack under test runs for real,
// the peer is a packet template, the "NIC" is memory. Work a device would
// do (gathering TX frames onto the wire, writing RX frames and the DCA
// flushes) and the peer's work run with the counters paused; everything
// the host CPU does (copy-in, tcp_output, checksum, the driver's poll,
// tcp_input, ACK processing, freeing acknowledged data, delivery to the
// application) is measured.
//
//   tcp_tx/<csum>-<buffer>/<payload>        application writes of <payload>
//       bytes (MSS 1460); csum: offload, stored, fused, separate; buffer:
//       mbuf (chain sockbuf), contig (ring sockbuf). The peer ACKs every
//       other segment; ACK processing is inside the measurement.
//   tcp_tx/offload-<buffer>-proto/<payload>  the same writes with the
//       application's copy-in (cn_tcp_write: the bytes into the send
//       buffer) paused and cn_tcp_output measured: tcp_output's decision,
//       the header from the template, the payload attached by reference,
//       the TX ring enqueue, the driver's RX refill and TX reap, and the
//       ACKs' processing (parse, prediction, release of acknowledged
//       bytes, the frame's free), amortized per segment. This is the
//       protocol + buffering figure Clark et al. (1989) counted (~371
//       instructions, the data copy excluded). Under --cn_sim the
//       copy-in's instructions per segment are
//       instructions_per_packet(tcp_tx/offload-<buffer>/P) minus
//       instructions_per_packet(tcp_tx/offload-<buffer>-proto/P), both from
//       one run, e.g.
//         CACHENET_CPU_DISABLE=avx512 cachenet-bench-tcp --cn_sim
//           --benchmark_filter='^tcp_tx/offload-contig(-proto)?/1460$'
//       The pause and resume themselves execute instructions inside the
//       counted region; tcp_tx/harness/pause-resume counts a pair alone
//       (28 since 2026-11-24) and the counter pauses_per_packet says how
//       many pairs each segment paid (1 per write of <= MSS bytes, plus
//       one per NIC step, every 16th write): protocol + buffering per
//       segment = proto - pauses_per_packet x pause-resume.
//   tcp_tx/offload-<buffer>-out/<payload>  the TX path alone, the figure
//       to hold against Clark's Tx(data) (a bound of 300 instructions):
//       cn_tcp_output (decision, header, payload by reference, ring
//       enqueue) and cn_netdev_tx_reap (the completed frames' release);
//       the copy-in, the NIC and the ACK processing paused. The ACKs are
//       tcp_ack/cachenet/pure (Clark's Rx(ack)). Its counter also holds
//       this loop's own bookkeeping (~28 per segment); the exact split is
//       callgrind's inclusive cost per function, e.g.
//         CACHENET_CPU_DISABLE=avx512 cachenet-bench-tcp --cn_sim
//           --cn_sim_dir=/tmp/s --cn_sim_keep
//           --benchmark_filter='^tcp_tx/offload-contig-out/1460$'
//         callgrind_annotate --inclusive=yes /tmp/s/*.callgrind
//       divided by the segments (instructions / instructions_per_packet).
//   tcp_tx/harness/pause-resume              an empty pause + resume.
//   tcp_rx_pf/<csum>-<buffer>-<dca>-b<batch>[-k<k>-<hint>]/1460  the
//       RX benchmark with the driver's batch (frames per poll) and, for
//       prefetch, the distance k and the payload lines' level varied: the
//       sweep behind CN_NETDEV_PREFETCH_K_DEFAULT. All unpaced.
//   tcp_rx_ra/<offload-cfg>-<dca>-ra<bytes>/1460  the stack's copy-out
//       read-ahead distance (tcp.h rx_readahead; ra0: none) in each DCA
//       mode; prefetch paced as in tcp_rx.
//   tcp_rx_mem/<flush|inject>-d<D>/1460  the frames of a 1460-byte
//       receive loaded alone, a prefetch D lines ahead (bm_tcp_rx_mem).
//   tcp_rx_mem/<flush|inject>-f<F>-sum/1460  the same frames summed whole,
//       frame i + F prefetched before frame i (the driver's pattern).
//   tcp_rx_pf/<csum>-<buffer>-prefetch-b32-k8-l1-p<pace>/1460  paced
//       prefetch (netdev.h, cn_netdev_params.prefetch_pace): <pace>
//       payload lines per frame.
//   tcp_rx/<csum>-<buffer>-<dca>/<payload>  application reads of <payload>
//       bytes from a peer sending MSS segments (or <payload>-byte segments
//       below the MSS); csum: offload (NIC verified), separate (a pass,
//       then by reference), fused (copy+checksum into the posted buffer;
//       the application posts <payload> bytes per read, so in a poll of
//       32 frames only the segments that fit it are fused, the first at
//       1460 B, and the rest are summed and queued as in separate, then
//       copied out by cn_tcp_recv_posted);
//       buffer: mbuf (kept by reference, copied out by cn_tcp_recv),
//       contig (a posted application buffer); dca: inject, flush,
//       prefetch. offload-*-prefetch paces the driver's payload prefetch
//       (RX_OFFLOAD_PACE lines per frame; netdev.h): with the checksum
//       verified by the NIC the stack reads no payload in the poll; the
//       unpaced figure of the same configuration is
//       tcp_rx_pf/offload-*-prefetch-b32-k8-l1/1460 (default read-ahead).
//       offload-*-prefetch also sets the stack's copy-out read-ahead to
//       RX_PREFETCH_READAHEAD bytes (tcp.h rx_readahead), the distance
//       that suits a driver that prefetches; every other row keeps the
//       default (tcp_rx_ra/ has each mode at each distance).
//   tcp_rx/<csum>-<buffer>-<dca>-split/<payload>  the same with the NIC's
//       header/payload split on (netdev.h): each data segment reaches the
//       stack as a chain, headers in a small mbuf, payload in the
//       cluster, received in place; payloads 64, 1460, 65536.
//   tcp_ack/cachenet/pure                   one pure ACK (two segments
//       acknowledged) from cn_net_input on: parse, lookup, header
//       prediction, release of acknowledged data, the frame's free; the
//       driver's status reads and buffer refills run paused
//   udp_tx/<csum|nocsum|offload>/<payload>, udp_rx/<csum|nocsum|offload>/<payload>
//   tcp_tx/lwip/1460, tcp_rx/lwip-<dca>/1460, tcp_ack/lwip/pure  lwIP's
//       TCP (Debian's liblwip, raw API, software checksum) on the same
//       device, pools and peers, paused and counted as the rows above;
//       its peers among the cachenet rows are tcp_tx/fused-*,
//       tcp_rx/separate-mbuf-<dca> and tcp_ack/cachenet/pure (see the
//       lwIP section below). Built only with liblwip-dev.
//
// Counters besides the harness's: tsc_per_packet (TSC ticks per data
// segment or datagram), packets_per_op, and under --cn_sim
// instructions_per_packet.
//
// tcp_rx diagnostics, from the environment (off: one predicted branch
// per loop):
//   CACHENET_BENCH_RX_SPLIT=1  adds poll_tsc_per_packet (cn_netdev_poll:
//       driver + protocol + in-poll payload work) and read_tsc_per_packet
//       (cn_tcp_recv / cn_tcp_recv_posted: the application's copy-out from
//       the receive queue). Each region is bracketed by cn_tsc_begin/end
//       (LFENCE'd, ~20-40 ticks each): the two no longer overlap and
//       tsc_per_packet grows by ~100; compare the parts, not the total.
//       (tcp_rx/*-contig: the copy-out is in cn_tcp_recv_post, outside
//       both regions.)
//   CACHENET_BENCH_RX_DELAY=<ticks>  an idle spin (paused: not counted)
//       after every poll, before the reads: if prefetches issued in the
//       poll were only late, the reads get cheaper with it; if they were
//       dropped, not (netdev.h, CN_NETDEV_PREFETCH_K_DEFAULT).
#include "harness/cn_bench.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern "C" {
#include "cachenet/csum.h"
#include "cachenet/lab/netdev.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"
}

#ifdef CN_HAVE_LWIP
// Debian's liblwip-dev ships the port headers (arch/cc.h, lwipopts.h).
#include <lwip/etharp.h>
#include <lwip/ethip6.h>
#include <lwip/init.h>
#include <lwip/netif.h>
#include <lwip/pbuf.h>
#include <lwip/priv/tcp_priv.h>
#include <lwip/tcp.h>
#include <netif/ethernet.h>
#endif

namespace {

const uint8_t MAC_US[6] = {2, 0, 0, 0, 0, 1}, MAC_PEER[6] = {2, 0, 0, 0, 0, 2};
const uint32_t IP_US = __builtin_bswap32(0x0a000001), IP_PEER = __builtin_bswap32(0x0a000002);
constexpr uint16_t MSS = 1460;

// The driver's knobs the RX sweep varies (the defaults are the device's,
// and batch 32 is every other benchmark's).
struct rx_knobs {
	uint32_t batch = 32;
	uint32_t prefetch_k = 0; // 0: CN_NETDEV_PREFETCH_K_DEFAULT
	enum cn_prefetch_hint hint = CN_PREFETCH_L1;
	bool split = false; // header/payload split (netdev.h)
	uint32_t pace = 0;  // PREFETCH: paced payload lines per frame (netdev.h); 0 = unpaced
	uint32_t readahead = 0; // the stack's copy-out read-ahead (tcp.h rx_readahead); 0 = default
	bool no_readahead = false; // ... or none (tcp.h no_rx_readahead)
};

// tcp_rx/offload-*-prefetch: the driver paces its payload prefetch (the
// stack reads no payload in its input: the NIC verified the checksum);
// the lines per frame from the sweep tcp_rx_pf/...-p<pace>.
constexpr uint32_t RX_OFFLOAD_PACE = 12;
// ... and the stack's copy-out read-ahead reaches further (tcp.h
// rx_readahead): behind the driver's prefetch, the sweep
// tcp_rx_ra/offload-*-prefetch-ra<bytes>/1460 is fastest at 11680-17520
// (mbuf 176 -> 161, contig 180 -> 169 ticks a segment against the default
// 5840), while flush (and inject) are fastest at the default, which they
// keep. Each DCA mode with the stack configured for it.
constexpr uint32_t RX_PREFETCH_READAHEAD = 17520;

struct Env {
	struct cn_mbuf_pool *mp = nullptr, *cp = nullptr;
	struct cn_netdev *dev = nullptr;
	struct cn_net *net = nullptr;
	struct cn_tcb *tcb = nullptr;
	struct cn_udp_sock *udp = nullptr;
	struct cn_peer *peer = nullptr;

	// The pools outlive one run of a benchmark: google-benchmark calls it
	// 3-5 times (iteration estimate, repetitions), and creating 98,304
	// objects each time was half of every simulated run's instructions
	// (valgrind: ~0.3 s a time). A new benchmark gets new pools, so its
	// figures do not depend on which benchmarks ran before it, and so does
	// a run that left buffers in use.
	static struct cn_mbuf_pool *shared_pool(bool cluster, const std::string &who)
	{
		static struct cn_mbuf_pool *pools[2];
		static std::string owner[2];
		struct cn_mbuf_pool *&p = pools[cluster];
		if (p && owner[cluster] != who) {
			cn_mbuf_pool_destroy(p);
			p = nullptr;
		}
		owner[cluster] = who;
		if (p) {
			struct cn_mbuf_pool_stats s;
			cn_mbuf_pool_stats(p, &s);
			if (s.in_use == 0)
				return p;
			std::fprintf(stderr, "bench_tcp: %u %s still in use after a run; new pool\n",
				     s.in_use, cluster ? "clusters" : "mbufs");
			cn_mbuf_pool_destroy(p); // frees the leaked objects with it
		}
		struct cn_mbuf_pool_params m = {};
		m.kind = cluster ? CN_MBUF_POOL_CLUSTER : CN_MBUF_POOL_SMALL;
		m.count = cluster ? 32768 : 65536;
		m.cache_size = 256;
		p = cn_mbuf_pool_create(&m);
		return p;
	}

	bool init(benchmark::State &st, enum cn_dca dca, uint32_t ring, uint32_t rx_flags,
		  const struct rx_knobs &kn = rx_knobs())
	{
		(void)st;
		mp = shared_pool(false, cnbench::current_name());
		cp = shared_pool(true, cnbench::current_name());
		if (!mp || !cp)
			return false;
		struct cn_netdev_params dp = {};
		dp.ring_size = ring;
		dp.batch = kn.batch;
		dp.dca = dca;
		dp.prefetch_k = kn.prefetch_k;
		dp.prefetch_hint = kn.hint;
		dp.prefetch_pace = kn.pace;
		dp.split = kn.split;
		dp.mpool = mp;
		dp.cpool = cp;
		dev = cn_netdev_create(&dp);
		struct cn_net_params np = {};
		memcpy(np.mac, MAC_US, 6);
		np.addr = IP_US;
		np.mpool = mp;
		np.cpool = cp;
		np.tx_descs = 8192;
		np.xmit = cn_netdev_xmit_hook;
		np.xmit_arg = dev;
		np.rx_flags = rx_flags;
		net = dev ? cn_net_create(&np) : nullptr;
		return net != nullptr;
	}

	struct cn_tcp_params tcp(enum cn_tcp_csum csum, bool ring) const
	{
		struct cn_tcp_params p = {};
		p.laddr = IP_US;
		p.raddr = IP_PEER;
		p.lport = CN_BE16(5001);
		p.rport = CN_BE16(80);
		memcpy(p.rmac, MAC_PEER, 6);
		p.iss = 1000;
		p.irs = 900000;
		p.mss = MSS;
		p.snd_wnd = 1u << 22;
		p.snd_wscale = 7;
		p.rcv_wscale = 7;
		p.csum = csum;
		p.sndbuf = ring ? CN_SOCKBUF_RING : CN_SOCKBUF_CHAIN;
		p.ring_copy = csum == CN_TCP_CSUM_STORED ? CN_SBRING_COPY_CSUM : CN_SBRING_COPY_PLAIN;
		p.sndbuf_size = 1u << 22;
		p.rcvbuf_size = 1u << 21;
		p.init_cwnd = 100000; // no congestion in a lossless in-memory link
		p.delack_ticks = 1u << 30;
		return p;
	}

	// init() and a TCP connection to a sink peer (the TX and ACK
	// benchmarks); false, the benchmark skipped, if any part fails.
	bool tcp_to_sink(benchmark::State &st, enum cn_tcp_csum csum, bool ring)
	{
		if (init(st, CN_DCA_INJECT, 4096, 0)) {
			struct cn_tcp_params tp = tcp(csum, ring);
			tcb = cn_tcp_open(net, &tp);
			struct cn_peer_params pp = peer_params(CN_PEER_TCP_SINK);
			peer = cn_peer_create(dev, &pp);
		}
		if (!tcb || !peer)
			st.SkipWithError("setup failed");
		return tcb && peer;
	}

	struct cn_peer_params peer_params(enum cn_peer_kind kind) const
	{
		struct cn_peer_params p = {};
		p.kind = kind;
		p.laddr = IP_PEER;
		p.raddr = IP_US;
		p.lport = CN_BE16(80);
		p.rport = CN_BE16(5001);
		memcpy(p.lmac, MAC_PEER, 6);
		memcpy(p.rmac, MAC_US, 6);
		p.iss = 900000;
		p.irs = 1000;
		p.window = 1u << 22;
		p.wscale = 7;
		p.ack_every = 2;
		return p;
	}

	~Env()
	{
		if (dev) {
			cn_netdev_tx_reap(dev);
			cn_peer_destroy(peer);
			cn_netdev_destroy(dev);
		}
		cn_net_destroy(net);
		if (mp)
			cn_mbuf_pool_thread_flush(mp);
		if (cp)
			cn_mbuf_pool_thread_flush(cp);
	}
};

void per_packet(benchmark::State &st, double packets)
{
	double iters = (double)st.iterations();
	if (iters <= 0 || packets <= 0)
		return;
	st.counters["packets_per_op"] = benchmark::Counter(packets / iters);
	auto it = st.counters.find("tsc_per_op");
	if (it != st.counters.end())
		st.counters["tsc_per_packet"] = benchmark::Counter(it->second.value * iters / packets);
	it = st.counters.find("instructions");
	if (it != st.counters.end())
		st.counters["instructions_per_packet"] = benchmark::Counter(it->second.value * iters / packets);
}

// ---------------------------------------------------------------- TX

// What tcp_tx counts: everything the host does (ALL), all but the copy-in
// (PROTO), or the TX path alone (OUT: tcp_output and the release of the
// frames the device completed; copy-in, NIC and ACK processing paused).
enum tx_count { TX_ALL, TX_PROTO, TX_OUT };

void bm_tcp_tx(benchmark::State &st, enum cn_tcp_csum csum, bool ring, uint32_t payload,
	       enum tx_count count = TX_ALL)
{
	const bool proto = count != TX_ALL;
	Env e;
	if (!e.tcp_to_sink(st, csum, ring))
		return;
	uint8_t *app = (uint8_t *)cnbench::alloc_buffer(payload);
	if (!app) {
		st.SkipWithError("setup failed");
		return;
	}
	uint64_t now = 1, segs0 = cn_tcp_stats(e.tcb)->segs_out;
	unsigned writes = 0;
	// The NIC step: frames onto the wire, the peer ACKs into our RX ring.
	auto nic = [&]() {
		cn_netdev_nic_tx(e.dev);
		cn_peer_flush(e.peer);
	};
	cnbench::Measure m(st, payload);
	// TX_OUT: everything but cn_tcp_output and the reap inside one paused
	// stretch per write (the copy-in, and every 16th write the NIC step,
	// the reap, counted, and the ACKs), so this loop's own bookkeeping is
	// the only other thing counted.
	if (count == TX_OUT)
		for (auto _ : st) {
			uint32_t done = 0;
			while (done < payload) {
				m.pause();
				if (++writes % 16 == 0 || cn_netdev_tx_pending(e.dev) > 1024) {
					nic();
					m.resume();
					cn_netdev_tx_reap(e.dev);
					m.pause();
					while (cn_netdev_rx_pending(e.dev))
						cn_netdev_poll(e.dev, e.net, now);
					cn_netdev_tx_reap(e.dev);
				}
				int n = cn_tcp_write(e.tcb, app + done, payload - done);
				done += n > 0 ? (uint32_t)n : 0;
				m.resume();
				cn_tcp_output(e.tcb, now);
			}
		}
	else
	for (auto _ : st) {
		uint32_t done = 0;
		while (done < payload) {
			int n;
			if (proto) {
				// the application's copy-in paused: what is left is
				// tcp_output and everything after it
				m.pause();
				n = cn_tcp_write(e.tcb, app + done, payload - done);
				m.resume();
				if (n > 0)
					cn_tcp_output(e.tcb, now);
			} else {
				n = cn_tcp_send(e.tcb, app + done, payload - done, now);
			}
			done += n > 0 ? (uint32_t)n : 0;
			if (done < payload || ++writes % 16 == 0 ||
			    cn_netdev_tx_pending(e.dev) > 1024) {
				m.pause();
				nic();
				m.resume();
				// ACK processing; segments it releases go out at
				// the next NIC step
				while (cn_netdev_rx_pending(e.dev))
					cn_netdev_poll(e.dev, e.net, now);
				cn_netdev_tx_reap(e.dev);
			}
		}
	}
	m.finish();
	double segs = (double)(cn_tcp_stats(e.tcb)->segs_out - segs0);
	per_packet(st, segs);
	if (proto && segs > 0)
		st.counters["pauses_per_packet"] = benchmark::Counter((double)m.pauses() / segs);
	for (int k = 0; k < 64 && (cn_netdev_rx_pending(e.dev) || cn_netdev_tx_pending(e.dev)); k++) {
		nic();
		while (cn_netdev_rx_pending(e.dev))
			cn_netdev_poll(e.dev, e.net, now);
		cn_netdev_tx_reap(e.dev);
	}
	cnbench::free_buffer(app);
}

// The harness's pause + resume alone: what tcp_tx/offload-*-proto counts
// besides the protocol (the toggles' own instructions under --cn_sim).
void bm_pause_resume(benchmark::State &st)
{
	cnbench::Measure m(st, 0);
	for (auto _ : st) {
		m.pause();
		m.resume();
	}
	m.finish();
}

// ---------------------------------------------------------------- RX

enum rx_csum { RX_OFFLOAD, RX_SEPARATE, RX_FUSED };

void bm_tcp_rx(benchmark::State &st, enum rx_csum csum, bool contig, enum cn_dca dca,
	       uint32_t payload, const rx_knobs &kn = rx_knobs())
{
	Env e;
	if (!e.init(st, dca, 1024, csum == RX_OFFLOAD ? CN_PARSE_L4_CSUM_GOOD : 0, kn)) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_tcp_params tp = e.tcp(CN_TCP_CSUM_OFFLOAD, true);
	tp.rx_readahead = kn.readahead;
	tp.no_rx_readahead = kn.no_readahead;
	e.tcb = cn_tcp_open(e.net, &tp);
	struct cn_peer_params pp = e.peer_params(CN_PEER_TCP_SOURCE);
	pp.mss = (uint16_t)(payload < MSS ? payload : MSS);
	e.peer = cn_peer_create(e.dev, &pp);
	uint8_t *app = (uint8_t *)cnbench::alloc_buffer(payload);
	if (!e.tcb || !e.peer || !app) {
		st.SkipWithError("setup failed");
		return;
	}
	uint64_t now = 1, segs0 = cn_tcp_stats(e.tcb)->segs_in;
	// Diagnostics (see the file comment): the poll's and the read's ticks
	// apart, and an idle gap after each poll.
	static const bool split_tsc = std::getenv("CACHENET_BENCH_RX_SPLIT") != nullptr;
	static const uint64_t delay_tsc = std::getenv("CACHENET_BENCH_RX_DELAY")
						  ? std::strtoull(std::getenv("CACHENET_BENCH_RX_DELAY"), nullptr, 10)
						  : 0;
	uint64_t t_poll = 0, t_read = 0, t0 = 0;
	auto refill = [&]() {
		cn_netdev_nic_tx(e.dev); // our ACKs reach the peer
		cn_netdev_tx_reap(e.dev);
		cn_peer_send(e.peer, 256);
	};
	cnbench::Measure m(st, payload);
	for (auto _ : st) {
		uint32_t got = 0;
		if (contig)
			cn_tcp_recv_post(e.tcb, app, payload);
		for (;;) {
			if (split_tsc)
				t0 = cn_tsc_begin();
			if (contig) {
				got = cn_tcp_recv_posted(e.tcb, false);
			} else {
				int n = cn_tcp_recv(e.tcb, app + got, payload - got, now);
				got += (uint32_t)n;
			}
			if (split_tsc)
				t_read += cn_tsc_end() - t0;
			if (got >= payload)
				break;
			if (!cn_netdev_rx_pending(e.dev)) {
				m.pause();
				refill();
				m.resume();
			}
			if (split_tsc)
				t0 = cn_tsc_begin();
			cn_netdev_poll(e.dev, e.net, now);
			if (split_tsc)
				t_poll += cn_tsc_end() - t0;
			if (delay_tsc) {
				m.pause();
				uint64_t t1 = cn_tsc_begin();
				while (cn_tsc_begin() - t1 < delay_tsc)
					;
				m.resume();
			}
		}
		if (contig)
			cn_tcp_recv_posted(e.tcb, true);
		benchmark::DoNotOptimize(app[payload - 1]);
	}
	m.finish();
	per_packet(st, (double)(cn_tcp_stats(e.tcb)->segs_in - segs0));
	if (split_tsc && cn_tcp_stats(e.tcb)->segs_in > segs0) {
		double segs = (double)(cn_tcp_stats(e.tcb)->segs_in - segs0);
		st.counters["poll_tsc_per_packet"] = benchmark::Counter((double)t_poll / segs);
		st.counters["read_tsc_per_packet"] = benchmark::Counter((double)t_read / segs);
	}
	if (csum == RX_SEPARATE || csum == RX_FUSED) {
		if (cn_net_drops(e.net))
			st.SkipWithError("drops on a lossless link");
	}
	// Split: the NIC split every data segment (those of at most copybreak
	// bytes are then copied whole, as without split), and no chain
	// needed a join.
	if (kn.split && (cn_netdev_stats(e.dev)->rx_split < cn_tcp_stats(e.tcb)->segs_in - segs0 ||
			 cn_net_stats(e.net)->rx_chain_join != 0))
		st.SkipWithError("segments not split, or chains joined");
	cnbench::free_buffer(app);
}

// ---------------------------------------------------------------- pure ACK

void bm_tcp_ack(benchmark::State &st)
{
	Env e;
	static uint8_t chunk[512 * MSS];
	if (!e.tcp_to_sink(st, CN_TCP_CSUM_OFFLOAD, true))
		return;
	uint64_t now = 1, hp0 = cn_tcp_stats(e.tcb)->hp_ack;
	struct cn_mbuf *mb[64];
	unsigned n = 0, i = 0;
	cnbench::Measure m(st, 0);
	for (auto _ : st) {
		if (i == n) {
			// Driver work (status reads, buffer refill) and the
			// sender's refill run paused, once per 64 ACKs: what is
			// measured is the protocol processing of one ACK.
			m.pause();
			if (!cn_netdev_rx_pending(e.dev)) {
				while (cn_netdev_tx_pending(e.dev))
					cn_netdev_tx_reap(e.dev);
				cn_tcp_send(e.tcb, chunk, sizeof(chunk), now); // window and cwnd are open
				cn_netdev_nic_tx(e.dev); // 256 ACKs into the RX ring
				cn_netdev_tx_reap(e.dev);
			}
			n = cn_netdev_rx_burst(e.dev, mb, 64);
			i = 0;
			m.resume();
		}
		cn_net_input(e.net, mb[i++], now);
	}
	m.finish();
	for (; i < n; i++)
		cn_net_input(e.net, mb[i], now);
	if (cn_tcp_stats(e.tcb)->hp_ack - hp0 < (uint64_t)st.iterations() * 9 / 10)
		st.SkipWithError("pure ACKs missed header prediction");
	per_packet(st, (double)st.iterations());
}

// ---------------------------------------------------------------- UDP

enum udp_mode { U_CSUM, U_NOCSUM, U_OFFLOAD };
const char *udp_name(udp_mode u)
{
	return u == U_CSUM ? "csum" : u == U_NOCSUM ? "nocsum" : "offload";
}

void bm_udp_tx(benchmark::State &st, udp_mode mode, uint32_t payload)
{
	Env e;
	if (!e.init(st, CN_DCA_INJECT, 4096, 0)) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_udp_params up = {};
	up.lport = CN_BE16(5353);
	up.raddr = IP_PEER;
	up.rport = CN_BE16(53);
	memcpy(up.rmac, MAC_PEER, 6);
	up.tx_csum = mode != U_NOCSUM;
	up.tx_offload = mode == U_OFFLOAD;
	e.udp = cn_udp_open(e.net, &up);
	struct cn_peer_params pp = e.peer_params(CN_PEER_UDP_SINK);
	e.peer = cn_peer_create(e.dev, &pp);
	uint8_t *app = (uint8_t *)cnbench::alloc_buffer(payload);
	unsigned k = 0;
	cnbench::Measure m(st, payload);
	for (auto _ : st) {
		if (cn_udp_send(e.udp, app, payload, nullptr, nullptr) < 0 || ++k % 32 == 0) {
			m.pause();
			cn_netdev_nic_tx(e.dev);
			m.resume();
			cn_netdev_tx_reap(e.dev);
		}
	}
	m.finish();
	per_packet(st, (double)st.iterations());
	cn_netdev_nic_tx(e.dev);
	cn_netdev_tx_reap(e.dev);
	cnbench::free_buffer(app);
}

// tcp_rx_mem/<dca>-d<D>/1460: the memory side of tcp_rx/*-<dca>/1460
// alone. The same device, ring (1024), pools and DCA mode; a peer sending
// 1514-byte frames (UDP, 1472-byte datagrams: the frame of a 1460-byte TCP
// segment, and not flow-controlled, so no stack is needed), taken off the
// ring 256 at a time with cn_netdev_rx_burst; then every line of every
// frame is loaded once, in ring order, with a prefetcht0 for the line D
// lines ahead (D 0: no software prefetch, the hardware prefetchers only),
// and the frames are freed. No protocol work. flush-d<D> is how fast one
// core pulls the lines a NIC left in memory into its caches in a tight
// loop with this buffer layout (2 KB clusters in the order the pool hands
// them out): the reference the report sets beside the prefetch rows of
// tcp_rx at 1460 B and the time their 80% goal asks for. It is not a
// bound: a receive that overlaps the loads with protocol work can beat it
// (the batch-4 rows do). inject-d0 is the loop's own cost with the lines
// cached. Building the burst's line list runs paused.
// tcp_rx_mem/<dca>-f<F>-sum/1460: the same frames in the receive path's
// own pattern: each frame summed whole by cn_csum_partial (the AVX-512
// kernel's straight-line path: all of a frame's loads issue at once), and
// every line of frame i + F prefetched (prefetcht0) just before frame i is
// summed, as cn_netdev_poll's PREFETCH mode asks for them; F 0 with inject:
// that loop's own cost. Counters: tsc_per_packet (per frame),
// bytes_per_tsc (frame bytes per tick).
void bm_tcp_rx_mem(benchmark::State &st, enum cn_dca dca, uint32_t dist, uint32_t fdist = 0,
		   bool sum = false)
{
	constexpr unsigned BURST = 256;
	constexpr uint16_t DGRAM = 1472; // 14 + 20 + 8 + 1472 = 1514 bytes
	Env e;
	if (!e.init(st, dca, 1024, 0)) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_peer_params pp = e.peer_params(CN_PEER_UDP_SOURCE);
	pp.mss = DGRAM;
	e.peer = cn_peer_create(e.dev, &pp);
	if (!e.peer) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_mbuf *m[BURST];
	std::vector<const uint8_t *> lines;
	std::vector<size_t> frame_end; // lines[] index past frame i's lines
	lines.reserve(BURST * 32);
	frame_end.reserve(BURST);
	unsigned n = 0, i = 0;
	size_t li = 0;
	uint64_t frames = 0, frame_bytes = 0, acc = 0;
	cnbench::Measure meas(st, 14 + 20 + 8 + DGRAM);
	for (auto _ : st) {
		if (i == n) {
			for (unsigned j = 0; j < n; j++)
				cn_mbuf_free_chain(m[j]);
			if (!cn_netdev_rx_pending(e.dev)) {
				meas.pause();
				cn_peer_send(e.peer, BURST);
				meas.resume();
			}
			n = cn_netdev_rx_burst(e.dev, m, BURST);
			if (n == 0) {
				st.SkipWithError("the peer sent no frames");
				break;
			}
			meas.pause();
			lines.clear();
			frame_end.clear();
			for (unsigned j = 0; j < n; j++) {
				uintptr_t a = (uintptr_t)m[j]->data & ~(uintptr_t)63;
				uintptr_t end = (uintptr_t)m[j]->data + m[j]->len;
				for (; a < end; a += 64)
					lines.push_back((const uint8_t *)a);
				frame_end.push_back(lines.size());
			}
			meas.resume();
			for (size_t q = 0; q < dist && q < lines.size(); q++)
				__builtin_prefetch(lines[q], 0, 3);
			for (size_t q = 0; fdist && q < frame_end[fdist < n ? fdist - 1 : n - 1]; q++)
				__builtin_prefetch(lines[q], 0, 3);
			i = 0;
			li = 0;
		}
		const size_t fe = frame_end[i], nl = lines.size();
		if (fdist) {
			/* frame i + fdist's lines, all at once, as the driver's
			 * interleaved prefetch asks for them */
			if (i + fdist < n)
				for (size_t q = frame_end[i + fdist - 1]; q < frame_end[i + fdist]; q++)
					__builtin_prefetch(lines[q], 0, 3);
		}
		if (sum) {
			acc += cn_csum_partial(m[i]->data, m[i]->len, 0);
			li = fe;
		} else {
			for (; li < fe; li++) {
				if (li + dist < nl)
					__builtin_prefetch(lines[li + dist], 0, 3);
				acc += *(const volatile uint64_t *)lines[li];
			}
		}
		frame_bytes += m[i]->len;
		frames++;
		i++;
	}
	meas.finish();
	benchmark::DoNotOptimize(acc);
	for (unsigned j = 0; j < n; j++) /* read or not, the last burst's frames */
		cn_mbuf_free_chain(m[j]);
	per_packet(st, (double)frames);
	auto it = st.counters.find("tsc_per_packet");
	if (it != st.counters.end() && frames && it->second.value > 0)
		st.counters["bytes_per_tsc"] =
			benchmark::Counter((double)frame_bytes / (double)frames / it->second.value);
}

void rx_free(void *, struct cn_mbuf *m, const struct cn_pkt_info *)
{
	cn_mbuf_free_chain(m);
}

void bm_udp_rx(benchmark::State &st, udp_mode mode, uint32_t payload)
{
	Env e;
	if (!e.init(st, CN_DCA_INJECT, 1024, mode == U_OFFLOAD ? CN_PARSE_L4_CSUM_GOOD : 0)) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_udp_params up = {};
	up.lport = CN_BE16(5001);
	up.rx_csum = true;
	up.rx = rx_free;
	e.udp = cn_udp_open(e.net, &up);
	struct cn_peer_params pp = e.peer_params(CN_PEER_UDP_SOURCE);
	pp.mss = (uint16_t)payload;
	pp.csum = mode != U_NOCSUM;
	e.peer = cn_peer_create(e.dev, &pp);
	cnbench::Measure m(st, payload);
	for (auto _ : st) {
		if (!cn_netdev_rx_pending(e.dev)) {
			m.pause();
			cn_peer_send(e.peer, 512);
			m.resume();
		}
		struct cn_mbuf *mb;
		if (cn_netdev_rx_burst(e.dev, &mb, 1))
			cn_net_input(e.net, mb, 0);
	}
	m.finish();
	per_packet(st, (double)st.iterations());
	if (cn_net_drops(e.net))
		st.SkipWithError("datagrams dropped");
}

// ---------------------------------------------------------------- lwIP

#ifdef CN_HAVE_LWIP
// lwIP's TCP (Debian's liblwip, raw API) on the same in-memory NIC and
// simulated peers: its netif's linkoutput posts each frame (one pbuf, the
// library is built with LWIP_NETIF_TX_SINGLE_PBUF) on the device's TX ring
// as a descriptor pointing at the pbuf, released (pbuf_free) at the TX
// reap; its driver takes received frames with cn_netdev_rx_burst and hands
// each to the netif's input as a PBUF_REF custom pbuf over the cluster
// (no copy), freed back to the pool when lwIP frees the pbuf. lwIP
// computes and verifies every checksum in software (CHECKSUM_GEN_* and
// CHECKSUM_CHECK_* on; with LWIP_CHECKSUM_ON_COPY its tcp_write sums while
// it copies). The library is built with NO_SYS=0 and core locking; the
// raw API runs without its tcpip thread (lwip_init only, one thread:
// sys_check_core_locking checks nothing while no tcpip thread exists), and
// no lwIP timer runs inside a measurement. The connection is put straight
// into ESTABLISHED with the sequence numbers the peers expect, as
// cn_tcp_open does for cachenet.
struct lw_rx_pbuf {
	struct pbuf_custom pc;
	struct cn_mbuf *m;
	struct lw_rx_pbuf *next;
};

struct Lw {
	bool up = false;
	struct netif nif;
	struct cn_netdev *dev = nullptr;
	struct cn_net *net = nullptr; // TX descriptors only
	std::vector<lw_rx_pbuf> rxp = std::vector<lw_rx_pbuf>(8192);
	lw_rx_pbuf *rx_free = nullptr;
	uint64_t tx_frames = 0, tx_fail = 0, rx_frames = 0, rx_nopbuf = 0;
	// the application's receive queue (tcp_recv callback)
	struct pbuf *q[4096];
	unsigned qh = 0, qt = 0;
	uint32_t qoff = 0;
	uint64_t rx_bytes = 0;
} g_lw;

void lw_tx_done(void *arg)
{
	pbuf_free((struct pbuf *)arg);
}

err_t lw_linkoutput(struct netif *, struct pbuf *p)
{
	struct cn_pkt *k = cn_net_pkt_alloc(g_lw.net);
	if (!k) {
		g_lw.tx_fail++;
		return ERR_MEM;
	}
	k->hdr = (uint8_t *)p->payload;
	k->hdr_len = p->len;
	uint32_t n = 0, pay = 0;
	for (struct pbuf *q = p->next; q; q = q->next) {
		if (n == CN_PKT_PIECES) {
			cn_pkt_free(k);
			g_lw.tx_fail++;
			return ERR_IF;
		}
		k->piece[n].base = (const uint8_t *)q->payload;
		k->piece[n++].len = q->len;
		pay += q->len;
	}
	k->npieces = (uint16_t)n;
	k->pay_len = pay;
	pbuf_ref(p);
	k->done = lw_tx_done;
	k->done_arg = p;
	if (cn_netdev_xmit(g_lw.dev, k) != 0) {
		k->done = nullptr;
		cn_pkt_free(k);
		pbuf_free(p);
		g_lw.tx_fail++;
		return ERR_MEM;
	}
	g_lw.tx_frames++;
	return ERR_OK;
}

void lw_rx_free(struct pbuf *p)
{
	lw_rx_pbuf *r = (lw_rx_pbuf *)(void *)p; // pc.pbuf is the first member
	cn_mbuf_free_chain(r->m);
	r->next = g_lw.rx_free;
	g_lw.rx_free = r;
}

// The driver: one received frame to lwIP's netif input.
inline void lw_input(struct cn_mbuf *m)
{
	lw_rx_pbuf *r = g_lw.rx_free;
	if (!r) {
		g_lw.rx_nopbuf++;
		cn_mbuf_free_chain(m);
		return;
	}
	g_lw.rx_free = r->next;
	r->m = m;
	r->pc.custom_free_function = lw_rx_free;
	struct pbuf *p = pbuf_alloced_custom(PBUF_RAW, (u16_t)m->len, PBUF_REF, &r->pc, m->data,
					     (u16_t)m->len);
	g_lw.rx_frames++;
	if (g_lw.nif.input(p, &g_lw.nif) != ERR_OK)
		pbuf_free(p);
}

// Up to @p max frames from the RX ring to lwIP; returns them.
unsigned lw_poll(unsigned max)
{
	struct cn_mbuf *mb[32];
	unsigned n = cn_netdev_rx_burst(g_lw.dev, mb, max < 32 ? max : 32);
	for (unsigned i = 0; i < n; i++)
		lw_input(mb[i]);
	return n;
}

err_t lw_netif_init(struct netif *n)
{
	n->hwaddr_len = 6;
	memcpy(n->hwaddr, MAC_US, 6);
	n->mtu = 1500;
	n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
	n->output = etharp_output;
	n->output_ip6 = ethip6_output;
	n->linkoutput = lw_linkoutput;
	n->name[0] = 'c';
	n->name[1] = 'n';
	return ERR_OK;
}

// Once per process: lwip_init, the netif, and the peer's address in the
// ARP table (learned from an ARP reply fed to the netif, as on a wire).
bool lw_setup(Env &e)
{
	g_lw.dev = e.dev;
	g_lw.net = e.net;
	if (g_lw.up)
		return true;
	lwip_init();
	for (auto &r : g_lw.rxp) {
		r.next = g_lw.rx_free;
		g_lw.rx_free = &r;
	}
	ip4_addr_t ip, mask, gw;
	ip.addr = IP_US;
	mask.addr = __builtin_bswap32(0xffffff00);
	gw.addr = 0;
	if (!netif_add(&g_lw.nif, &ip, &mask, &gw, nullptr, lw_netif_init, ethernet_input))
		return false;
	netif_set_default(&g_lw.nif);
	netif_set_up(&g_lw.nif);
	netif_set_link_up(&g_lw.nif);
	uint8_t f[42] = {};
	memcpy(f, MAC_US, 6);
	memcpy(f + 6, MAC_PEER, 6);
	f[12] = 0x08, f[13] = 0x06;            // ARP
	f[14] = 0, f[15] = 1, f[16] = 8, f[17] = 0; // Ethernet, IPv4
	f[18] = 6, f[19] = 4, f[20] = 0, f[21] = 2; // reply
	memcpy(f + 22, MAC_PEER, 6);
	memcpy(f + 28, &IP_PEER, 4);
	memcpy(f + 32, MAC_US, 6);
	memcpy(f + 38, &IP_US, 4);
	struct pbuf *p = pbuf_alloc(PBUF_RAW, sizeof(f), PBUF_RAM);
	if (!p)
		return false;
	pbuf_take(p, f, sizeof(f));
	if (g_lw.nif.input(p, &g_lw.nif) != ERR_OK)
		pbuf_free(p);
	ip4_addr_t peer;
	peer.addr = IP_PEER;
	struct eth_addr *mac;
	const ip4_addr_t *ipr;
	if (etharp_find_addr(&g_lw.nif, &peer, &mac, &ipr) < 0)
		return false;
	g_lw.up = true;
	return true;
}

err_t lw_recv(void *, struct tcp_pcb *, struct pbuf *p, err_t)
{
	if (!p)
		return ERR_OK;
	if (g_lw.qt - g_lw.qh == sizeof(g_lw.q) / sizeof(g_lw.q[0]))
		return ERR_MEM; // lwIP keeps it (refused_data) and offers it again
	g_lw.q[g_lw.qt++ % (sizeof(g_lw.q) / sizeof(g_lw.q[0]))] = p;
	return ERR_OK;
}

// The application's read: up to @p len bytes from the queued pbufs into
// @p dst, the consumed pbufs freed and the window opened (tcp_recved).
uint32_t lw_read(struct tcp_pcb *pcb, uint8_t *dst, uint32_t len)
{
	const unsigned QN = sizeof(g_lw.q) / sizeof(g_lw.q[0]);
	uint32_t got = 0;
	while (got < len && g_lw.qh != g_lw.qt) {
		struct pbuf *p = g_lw.q[g_lw.qh % QN];
		uint32_t n = p->tot_len - g_lw.qoff;
		if (n > len - got)
			n = len - got;
		pbuf_copy_partial(p, dst + got, (u16_t)n, (u16_t)g_lw.qoff);
		got += n;
		g_lw.qoff += n;
		if (g_lw.qoff == p->tot_len) {
			pbuf_free(p);
			g_lw.qh++;
			g_lw.qoff = 0;
		}
	}
	if (got)
		tcp_recved(pcb, (u16_t)got);
	return got;
}

// A connection in ESTABLISHED: our ISS 1000, the peer's 900000 (as
// Env::tcp and Env::peer_params), the peer's window and scale.
struct tcp_pcb *lw_open(uint32_t snd_wnd, uint8_t snd_scale)
{
	struct tcp_pcb *pcb = tcp_new();
	if (!pcb)
		return nullptr;
	ip_addr_set_ip4_u32(&pcb->local_ip, IP_US);
	ip_addr_set_ip4_u32(&pcb->remote_ip, IP_PEER);
	pcb->local_port = 5001;
	pcb->remote_port = 80;
	pcb->state = ESTABLISHED;
	pcb->snd_nxt = pcb->lastack = pcb->snd_lbb = pcb->snd_wl2 = 1001;
	pcb->rcv_nxt = pcb->rcv_ann_right_edge = 900001;
	pcb->snd_wl1 = 900000;
	pcb->flags |= TF_WND_SCALE;
	pcb->snd_scale = snd_scale;
	pcb->rcv_scale = TCP_RCV_SCALE;
	pcb->snd_wnd = pcb->snd_wnd_max = snd_wnd;
	pcb->mss = MSS;
	pcb->cwnd = 1u << 24; // no congestion in a lossless in-memory link
	pcb->ssthresh = 1u << 24;
	pcb->netif_idx = netif_get_index(&g_lw.nif);
	tcp_nagle_disable(pcb);
	tcp_recv(pcb, lw_recv);
	TCP_REG_ACTIVE(pcb);
	return pcb;
}

void lw_close(struct tcp_pcb *pcb)
{
	const unsigned QN = sizeof(g_lw.q) / sizeof(g_lw.q[0]);
	while (g_lw.qh != g_lw.qt)
		pbuf_free(g_lw.q[g_lw.qh++ % QN]);
	g_lw.qoff = 0;
	tcp_recv(pcb, nullptr);
	tcp_abort(pcb); // sends a RST onto the TX ring, reaped below
	cn_netdev_tx_reap(g_lw.dev);
}

// Env, lwIP and a connection of lwIP's to a sink peer (the lwIP TX and
// ACK benchmarks); nullptr, the benchmark skipped, if any part fails.
struct tcp_pcb *lw_to_sink(benchmark::State &st, Env &e)
{
	struct tcp_pcb *pcb = nullptr;
	if (e.init(st, CN_DCA_INJECT, 4096, 0) && lw_setup(e)) {
		struct cn_peer_params pp = e.peer_params(CN_PEER_TCP_SINK);
		e.peer = cn_peer_create(e.dev, &pp);
		pcb = e.peer ? lw_open(pp.window, pp.wscale) : nullptr;
	}
	if (!pcb)
		st.SkipWithError("setup failed");
	return pcb;
}

// tcp_tx/lwip/<payload>: tcp_write (copy, checksum on copy) + tcp_output
// per application write; the NIC step and the peer's ACK (every other
// segment) paused as in tcp_tx; the driver's receive of the ACKs, lwIP's
// input and the TX reap (pbuf_free) counted.
void bm_tcp_tx_lwip(benchmark::State &st, uint32_t payload)
{
	Env e;
	struct tcp_pcb *pcb = lw_to_sink(st, e);
	if (!pcb)
		return;
	uint8_t *app = (uint8_t *)cnbench::alloc_buffer(payload);
	if (!app) {
		st.SkipWithError("setup failed");
		return;
	}
	const uint64_t f0 = g_lw.tx_frames, ack0 = cn_peer_stats(e.peer)->acks_out;
	const uint64_t b0 = cn_peer_stats(e.peer)->bytes_in;
	unsigned writes = 0;
	auto nic = [&]() {
		cn_netdev_nic_tx(e.dev);
		cn_peer_flush(e.peer);
	};
	cnbench::Measure m(st, payload);
	for (auto _ : st) {
		uint32_t done = 0;
		while (done < payload) {
			uint32_t n = payload - done, room = tcp_sndbuf(pcb);
			if (n > room)
				n = room;
			if (n > 0 && tcp_write(pcb, app + done, (u16_t)n, TCP_WRITE_FLAG_COPY) == ERR_OK) {
				tcp_output(pcb);
				done += n;
			} else {
				n = 0;
			}
			if (done < payload || ++writes % 16 == 0 || cn_netdev_tx_pending(e.dev) > 1024) {
				m.pause();
				nic();
				m.resume();
				while (cn_netdev_rx_pending(e.dev))
					lw_poll(32);
				cn_netdev_tx_reap(e.dev);
			}
		}
	}
	m.finish();
	per_packet(st, (double)(g_lw.tx_frames - f0));
	st.counters["peer_acks_per_packet"] = benchmark::Counter(
		(double)(cn_peer_stats(e.peer)->acks_out - ack0) / (double)(g_lw.tx_frames - f0 + 1));
	for (int k = 0; k < 64 && (cn_netdev_rx_pending(e.dev) || cn_netdev_tx_pending(e.dev)); k++) {
		nic();
		while (cn_netdev_rx_pending(e.dev))
			lw_poll(32);
		cn_netdev_tx_reap(e.dev);
	}
	if (cn_peer_stats(e.peer)->bytes_in - b0 < (uint64_t)st.iterations() * payload)
		st.SkipWithError("the peer received less than was written");
	lw_close(pcb);
	cnbench::free_buffer(app);
}

// tcp_rx/lwip-<dca>/<payload>: application reads of <payload> bytes
// (pbuf_copy_partial out of the queued pbufs, tcp_recved) from the TCP
// SOURCE peer; the driver takes 32 frames a poll and hands them to lwIP
// (checksum verified in software, ACKs sent by lwIP every other segment).
// The peer's sending and the NIC step paused, as in tcp_rx.
void bm_tcp_rx_lwip(benchmark::State &st, enum cn_dca dca, uint32_t payload)
{
	Env e;
	if (!e.init(st, dca, 1024, 0) || !lw_setup(e)) {
		st.SkipWithError("setup failed");
		return;
	}
	struct cn_peer_params pp = e.peer_params(CN_PEER_TCP_SOURCE);
	pp.mss = (uint16_t)(payload < MSS ? payload : MSS);
	pp.wscale = TCP_RCV_SCALE; // lwIP's receive window scale
	e.peer = cn_peer_create(e.dev, &pp);
	struct tcp_pcb *pcb = lw_open(1u << 22, 7);
	uint8_t *app = (uint8_t *)cnbench::alloc_buffer(payload);
	if (!e.peer || !pcb || !app) {
		st.SkipWithError("setup failed");
		return;
	}
	const uint64_t in0 = g_lw.rx_frames, sent0 = cn_peer_stats(e.peer)->frames_out;
	uint64_t stream = 0, bad = 0;
	bool stalled = false;
	auto refill = [&]() {
		cn_netdev_nic_tx(e.dev); // our ACKs reach the peer
		cn_netdev_tx_reap(e.dev);
		if (cn_peer_send(e.peer, 256) == 0) {
			tcp_fasttmr(); // a delayed ACK lwIP's timer would send
			cn_netdev_nic_tx(e.dev);
			cn_netdev_tx_reap(e.dev);
			if (cn_peer_send(e.peer, 256) == 0)
				stalled = true;
		}
	};
	cnbench::Measure m(st, payload);
	for (auto _ : st) {
		uint32_t got = 0;
		for (;;) {
			got += lw_read(pcb, app + got, payload - got);
			if (got >= payload || stalled)
				break;
			if (!cn_netdev_rx_pending(e.dev)) {
				m.pause();
				refill();
				m.resume();
			}
			lw_poll(32);
		}
		m.pause();
		// the stream as the peer sent it (checked, not counted)
		for (uint32_t i = 0; i < payload; i += 97)
			bad += app[i] != cn_peer_stream_byte(e.peer, stream + i);
		stream += payload;
		m.resume();
		benchmark::DoNotOptimize(app[payload - 1]);
	}
	m.finish();
	uint64_t frames = g_lw.rx_frames - in0;
	per_packet(st, (double)frames);
	if (stalled)
		st.SkipWithError("the peer stalled (no window from lwIP)");
	else if (bad)
		st.SkipWithError("lwIP delivered bytes the peer did not send");
	else if (cn_peer_stats(e.peer)->frames_out - sent0 < frames)
		st.SkipWithError("frames counted that the peer did not send");
	lw_close(pcb);
	// what is left in the ring
	while (cn_netdev_rx_pending(e.dev)) {
		struct cn_mbuf *mb[32];
		unsigned n = cn_netdev_rx_burst(e.dev, mb, 32);
		for (unsigned i = 0; i < n; i++)
			cn_mbuf_free_chain(mb[i]);
	}
	cnbench::free_buffer(app);
}

// tcp_ack/lwip/pure: one pure ACK (two segments acknowledged) from the
// netif's input on (ethernet_input, ip4_input, tcp_input, the release of
// acknowledged segments, the frame's pbuf freed); taking the frames off
// the ring, wrapping each in its pbuf and the sender's refill run paused,
// as in tcp_ack/cachenet/pure.
void bm_tcp_ack_lwip(benchmark::State &st)
{
	Env e;
	static uint8_t chunk[64 * 1024];
	struct tcp_pcb *pcb = lw_to_sink(st, e);
	if (!pcb)
		return;
	struct pbuf *pb[64];
	unsigned n = 0, i = 0;
	uint32_t una = pcb->lastack;
	uint64_t acked = 0; // bytes acknowledged by the ACKs measured
	cnbench::Measure m(st, 0);
	for (auto _ : st) {
		if (i == n) {
			m.pause();
			acked += (uint32_t)(pcb->lastack - una);
			una = pcb->lastack;
			if (!cn_netdev_rx_pending(e.dev)) {
				while (cn_netdev_tx_pending(e.dev))
					cn_netdev_tx_reap(e.dev);
				uint32_t room = tcp_sndbuf(pcb);
				if (room > sizeof(chunk))
					room = sizeof(chunk);
				if (room && tcp_write(pcb, chunk, (u16_t)room, TCP_WRITE_FLAG_COPY) == ERR_OK)
					tcp_output(pcb);
				cn_netdev_nic_tx(e.dev); // the peer's ACKs into the RX ring
				cn_netdev_tx_reap(e.dev);
			}
			struct cn_mbuf *mb[64];
			n = cn_netdev_rx_burst(e.dev, mb, 64);
			for (unsigned j = 0; j < n; j++) {
				lw_rx_pbuf *r = g_lw.rx_free;
				g_lw.rx_free = r->next;
				r->m = mb[j];
				r->pc.custom_free_function = lw_rx_free;
				pb[j] = pbuf_alloced_custom(PBUF_RAW, (u16_t)mb[j]->len, PBUF_REF, &r->pc,
							    mb[j]->data, (u16_t)mb[j]->len);
			}
			i = 0;
			if (n == 0) {
				m.resume();
				st.SkipWithError("no ACKs from the peer");
				break;
			}
			m.resume();
		}
		struct pbuf *p = pb[i++];
		if (g_lw.nif.input(p, &g_lw.nif) != ERR_OK)
			pbuf_free(p);
	}
	m.finish();
	for (; i < n; i++)
		if (g_lw.nif.input(pb[i], &g_lw.nif) != ERR_OK)
			pbuf_free(pb[i]);
	// every ACK moved lastack by two segments
	acked += (uint32_t)(pcb->lastack - una);
	if (acked < (uint64_t)st.iterations() * 2 * MSS * 9 / 10)
		st.SkipWithError("ACKs did not acknowledge two segments each");
	per_packet(st, (double)st.iterations());
	lw_close(pcb);
}
#endif

const uint32_t PAYLOADS[] = {64, 128, 256, 512, 1024, 1460, 2048, 4096, 8192, 16384, 32768, 65536};

void register_all()
{
	struct {
		enum cn_tcp_csum csum;
		bool ring;
	} tx[] = {
		{CN_TCP_CSUM_OFFLOAD, false}, {CN_TCP_CSUM_OFFLOAD, true},
		{CN_TCP_CSUM_STORED, true},   {CN_TCP_CSUM_FUSED, false},
		{CN_TCP_CSUM_FUSED, true},    {CN_TCP_CSUM_SEPARATE, false},
		{CN_TCP_CSUM_SEPARATE, true},
	};
	for (auto &t : tx)
		for (uint32_t p : PAYLOADS) {
			std::string n = std::string("tcp_tx/") + cn_tcp_csum_name(t.csum) + "-" +
					(t.ring ? "contig" : "mbuf");
			cnbench::add(n + "/" + std::to_string(p),
				     [=](benchmark::State &st) { bm_tcp_tx(st, t.csum, t.ring, p); });
			// Offloaded checksum: the copy-in is the only pass over
			// the payload, so pausing it leaves protocol + buffering.
			if (t.csum == CN_TCP_CSUM_OFFLOAD) {
				cnbench::add(n + "-proto/" + std::to_string(p), [=](benchmark::State &st) {
					bm_tcp_tx(st, t.csum, t.ring, p, TX_PROTO);
				});
				cnbench::add(n + "-out/" + std::to_string(p), [=](benchmark::State &st) {
					bm_tcp_tx(st, t.csum, t.ring, p, TX_OUT);
				});
			}
		}
	struct {
		rx_csum csum;
		bool contig;
		const char *name;
	} rx[] = {
		{RX_OFFLOAD, false, "offload-mbuf"}, {RX_SEPARATE, false, "separate-mbuf"},
		{RX_OFFLOAD, true, "offload-contig"}, {RX_FUSED, true, "fused-contig"},
	};
	// tcp_rx/<cfg>-<dca>[-split]/<payload>; offload-*-prefetch paced.
	auto add_rx = [](const auto &r, int d, uint32_t p, bool split) {
		rx_knobs kn;
		kn.split = split;
		if (r.csum == RX_OFFLOAD)
			kn.pace = RX_OFFLOAD_PACE;
		if (r.csum == RX_OFFLOAD && d == CN_DCA_PREFETCH)
			kn.readahead = RX_PREFETCH_READAHEAD;
		cnbench::add(std::string("tcp_rx/") + r.name + "-" + cn_dca_name((enum cn_dca)d) +
				     (split ? "-split/" : "/") + std::to_string(p),
			     [=](benchmark::State &st) {
				     bm_tcp_rx(st, r.csum, r.contig, (enum cn_dca)d, p, kn);
			     });
	};
	for (auto &r : rx)
		for (int d = 0; d < 3; d++)
			for (uint32_t p : PAYLOADS)
				add_rx(r, d, p, false);
	// Header/payload split: the same reads, the NIC splitting each frame.
	for (auto &r : rx)
		for (int d = 0; d < 3; d++)
			for (uint32_t p : {64u, 1460u, 65536u})
				add_rx(r, d, p, true);
	// The sweep behind CN_NETDEV_PREFETCH_K_DEFAULT: prefetch distance and
	// level, and the driver's batch (the burst shape) for all three modes.
	for (auto &r : rx)
		for (uint32_t b : {4u, 8u, 32u})
			for (int d = 0; d < 3; d++)
				for (uint32_t k : {1u, 2u, 4u, 8u, 16u, 32u, 64u})
					for (int h = 0; h < 4; h++) {
						if (d != CN_DCA_PREFETCH && (k != 1 || h != 0))
							continue; // one run per batch
						rx_knobs kn;
						kn.batch = b;
						kn.prefetch_k = k;
						kn.hint = (enum cn_prefetch_hint)h;
						std::string n = std::string("tcp_rx_pf/") + r.name + "-" +
								cn_dca_name((enum cn_dca)d) + "-b" + std::to_string(b);
						if (d == CN_DCA_PREFETCH)
							n += "-k" + std::to_string(k) + "-" +
							     cn_prefetch_hint_name((enum cn_prefetch_hint)h);
						cnbench::add(n + "/1460", [=](benchmark::State &st) {
							bm_tcp_rx(st, r.csum, r.contig, (enum cn_dca)d, 1460, kn);
						});
					}
	// Paced PREFETCH (netdev.h): payload lines per frame, batch 32, k 8, l1.
	for (auto &r : rx)
		for (uint32_t pace : {4u, 8u, 12u, 16u, 24u}) {
			rx_knobs kn;
			kn.pace = pace;
			cnbench::add(std::string("tcp_rx_pf/") + r.name + "-prefetch-b32-k8-l1-p" +
					     std::to_string(pace) + "/1460",
				     [=](benchmark::State &st) {
					     bm_tcp_rx(st, r.csum, r.contig, CN_DCA_PREFETCH, 1460, kn);
				     });
		}
	// The stack's copy-out read-ahead distance in each DCA mode (tcp.h,
	// CN_TCP_RX_READAHEAD_DEFAULT); ra0: none. Offload rows: the stack
	// reads no payload in its input, the read-ahead is its only prefetch
	// of the copy-out (prefetch: behind the driver's paced prefetch).
	for (auto &r : rx) {
		if (r.csum != RX_OFFLOAD)
			continue;
		for (int d = 0; d < 3; d++)
			for (uint32_t ra : {0u, 5840u, 8760u, 11680u, 17520u}) {
				rx_knobs kn;
				kn.pace = RX_OFFLOAD_PACE;
				kn.readahead = ra;
				kn.no_readahead = ra == 0;
				cnbench::add(std::string("tcp_rx_ra/") + r.name + "-" + cn_dca_name((enum cn_dca)d) +
						     "-ra" + std::to_string(ra) + "/1460",
					     [=](benchmark::State &st) {
						     bm_tcp_rx(st, r.csum, r.contig, (enum cn_dca)d, 1460, kn);
					     });
			}
	}
	// The memory side of the 1460-byte RX rows alone (bm_tcp_rx_mem).
	for (uint32_t d : {0u, 32u, 64u, 96u, 128u, 192u})
		cnbench::add("tcp_rx_mem/flush-d" + std::to_string(d) + "/1460",
			     [=](benchmark::State &st) { bm_tcp_rx_mem(st, CN_DCA_FLUSH, d); });
	cnbench::add("tcp_rx_mem/inject-d0/1460",
		     [](benchmark::State &st) { bm_tcp_rx_mem(st, CN_DCA_INJECT, 0); });
	// The same frames summed as the receive path sums them, each prefetched
	// whole F frames ahead as the driver's PREFETCH mode does.
	for (uint32_t f : {2u, 4u, 6u, 8u, 12u})
		cnbench::add("tcp_rx_mem/flush-f" + std::to_string(f) + "-sum/1460",
			     [=](benchmark::State &st) { bm_tcp_rx_mem(st, CN_DCA_FLUSH, 0, f, true); });
	cnbench::add("tcp_rx_mem/inject-f0-sum/1460",
		     [](benchmark::State &st) { bm_tcp_rx_mem(st, CN_DCA_INJECT, 0, 0, true); });
	cnbench::add("tcp_ack/cachenet/pure", bm_tcp_ack);
#ifdef CN_HAVE_LWIP
	cnbench::add("tcp_tx/lwip/1460", [](benchmark::State &st) { bm_tcp_tx_lwip(st, 1460); });
	for (int d = 0; d < 3; d++)
		cnbench::add(std::string("tcp_rx/lwip-") + cn_dca_name((enum cn_dca)d) + "/1460",
			     [=](benchmark::State &st) { bm_tcp_rx_lwip(st, (enum cn_dca)d, 1460); });
	cnbench::add("tcp_ack/lwip/pure", bm_tcp_ack_lwip);
#else
	std::fprintf(stderr, "lwip: not found at build time (liblwip-dev); lwIP rows not built\n");
#endif
	cnbench::add("tcp_tx/harness/pause-resume", bm_pause_resume);
	const uint32_t UDP_PAYLOADS[] = {64, 128, 256, 512, 1024, 1472};
	for (int u = 0; u < 3; u++)
		for (uint32_t p : UDP_PAYLOADS) {
			cnbench::add(std::string("udp_tx/") + udp_name((udp_mode)u) + "/" + std::to_string(p),
				     [=](benchmark::State &st) { bm_udp_tx(st, (udp_mode)u, p); });
			cnbench::add(std::string("udp_rx/") + udp_name((udp_mode)u) + "/" + std::to_string(p),
				     [=](benchmark::State &st) { bm_udp_rx(st, (udp_mode)u, p); });
		}
}

} // namespace

CN_BENCH_MAIN(register_all)
