/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cachenet-cord-paths: the protocol paths of Nahum et al.'s Tables 11-12 with a
 * fixed packet count, for tools/cord/fastpath.py.
 *
 *   cachenet-cord-paths [--payload=N] [--warmup=N] [--icache=warm|cold]
 *                       [--dcache=warm|l1|cold] [--time] PATH PACKETS
 *
 *   PATH  tcp-send-on|off  cn_tcp_send of one MSS-sized write a segment
 *                          (on: CN_TCP_CSUM_SEPARATE, off: OFFLOAD), the
 *                          peer's ACKs processed every 16 writes
 *         tcp-recv-on|off  a peer sends in-order MSS segments; one frame
 *                          from the RX ring, cn_net_input (tcp_input,
 *                          kept by reference), cn_tcp_recv of the segment
 *                          into the application buffer (on: software
 *                          verification, off: the NIC marked the
 *                          checksum good)
 *         udp-send-on|off  cn_udp_send with / without a UDP checksum
 *         udp-recv-on|off  cn_net_input of one datagram with / without a
 *                          checksum to verify
 *
 * The same loops as cachenet-bench-tcp's tcp_tx/tcp_rx/udp_tx/udp_rx cases,
 * with the difference that matters here: the number of packets is fixed,
 * so two builds of this program execute exactly the same instructions (a
 * google-benchmark program picks its iteration count from the clock).
 *
 * What a device or the simulated peer does runs outside the measured
 * region, as in the benchmark: collection off under callgrind (cn_sim
 * toggles; run with --collect-atstart=no), TSC not counted. `--warmup`
 * packets run first, unmeasured. `--icache=cold` empties the instruction
 * caches (cn_cache_evict_icache) before every packet, outside the region:
 * every packet then fetches its code afresh, as after other work.
 * `--dcache=cold` empties the data caches too (cn_cache_evict_data): with
 * both, the paper's cold cache (Tables 4-5), every line a packet touches
 * comes from memory. `--dcache=l1` empties only the first-level data
 * cache (a read of 4x its size): the path's data then comes from the L2,
 * which is how the report prices an L1 data miss on this core.
 *
 * Output: one line of deterministic counts (packets, bytes, drops) on
 * stdout, the same for every build of the same sources; with --time a
 * second line "ticks T per_packet X" (TSC ticks inside the region).
 * Exit 1 on a setup failure or a drop on the lossless link, 2 on usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/lab/cache.h"
#include "cachenet/mbuf.h"
#include "cachenet/net.h"
#include "cachenet/lab/netdev.h"
#include "cachenet/lab/perf.h"
#include "cachenet/lab/sim.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"

#define MSS 1460

static const uint8_t mac_us[6] = {2, 0, 0, 0, 0, 1}, mac_peer[6] = {2, 0, 0, 0, 0, 2};
#define IP_US CN_IPV4(10, 0, 0, 1)
#define IP_PEER CN_IPV4(10, 0, 0, 2)

struct env {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_netdev *dev;
	struct cn_net *net;
	struct cn_tcb *tcb;
	struct cn_udp_sock *udp;
	struct cn_peer *peer;
	uint8_t *app;
	/* the measured region */
	struct cn_sim_region sim;
	bool cold;      /* empty the I-cache before every measured packet */
	bool dcold;     /* empty the data caches before every measured packet */
	uint8_t *l1buf; /* --dcache=l1: read before every measured packet */
	size_t l1len;
	bool measuring; /* the measured packets (not the warm-up) are running */
	uint64_t ticks, t0;
};

static int env_init(struct env *e, uint32_t ring, uint32_t rx_flags)
{
	struct cn_mbuf_pool_params m = {.kind = CN_MBUF_POOL_SMALL, .count = 65536, .cache_size = 256};
	struct cn_mbuf_pool_params c = {.kind = CN_MBUF_POOL_CLUSTER, .count = 32768, .cache_size = 256};

	e->mp = cn_mbuf_pool_create(&m);
	e->cp = cn_mbuf_pool_create(&c);
	if (!e->mp || !e->cp)
		return -1;
	struct cn_netdev_params dp = {.ring_size = ring, .batch = 32, .dca = CN_DCA_INJECT,
				      .mpool = e->mp, .cpool = e->cp};
	e->dev = cn_netdev_create(&dp);
	if (!e->dev)
		return -1;
	struct cn_net_params np = {.addr = IP_US, .mpool = e->mp, .cpool = e->cp, .tx_descs = 8192,
				   .xmit = cn_netdev_xmit_hook, .xmit_arg = e->dev, .rx_flags = rx_flags};
	memcpy(np.mac, mac_us, 6);
	e->net = cn_net_create(&np);
	return e->net ? 0 : -1;
}

static void env_fini(struct env *e)
{
	if (e->dev) {
		cn_netdev_tx_reap(e->dev);
		cn_peer_destroy(e->peer);
		cn_netdev_destroy(e->dev);
	}
	cn_net_destroy(e->net);
	if (e->mp) {
		cn_mbuf_pool_thread_flush(e->mp);
		cn_mbuf_pool_destroy(e->mp);
	}
	if (e->cp) {
		cn_mbuf_pool_thread_flush(e->cp);
		cn_mbuf_pool_destroy(e->cp);
	}
	free(e->app);
	free(e->l1buf);
}

static struct cn_tcp_params tcp_params(enum cn_tcp_csum csum)
{
	struct cn_tcp_params p = {
		.laddr = IP_US, .raddr = IP_PEER, .lport = CN_BE16(5001), .rport = CN_BE16(80),
		.iss = 1000, .irs = 900000, .mss = MSS, .snd_wnd = 1u << 22,
		.snd_wscale = 7, .rcv_wscale = 7, .csum = csum,
		.sndbuf = CN_SOCKBUF_CHAIN, .ring_copy = CN_SBRING_COPY_PLAIN,
		.sndbuf_size = 1u << 22, .rcvbuf_size = 1u << 21,
		.init_cwnd = 100000,        /* no congestion on a lossless link */
		.delack_ticks = 1u << 30,
	};
	memcpy(p.rmac, mac_peer, 6);
	return p;
}

static struct cn_peer_params peer_params(enum cn_peer_kind kind)
{
	struct cn_peer_params p = {
		.kind = kind, .laddr = IP_PEER, .raddr = IP_US, .lport = CN_BE16(80), .rport = CN_BE16(5001),
		.iss = 900000, .irs = 1000, .window = 1u << 22, .wscale = 7, .ack_every = 2,
	};
	memcpy(p.lmac, mac_peer, 6);
	memcpy(p.rmac, mac_us, 6);
	return p;
}

/* ---------------------------------------------------------- the region */

static void region_on(struct env *e)
{
	cn_sim_collect(&e->sim, true);
	e->t0 = cn_tsc_begin();
}

static void region_off(struct env *e)
{
	e->ticks += cn_tsc_end() - e->t0;
	cn_sim_collect(&e->sim, false);
}

/* Device and peer work: outside the region while packets are measured. */
static void device_begin(struct env *e)
{
	if (e->measuring)
		region_off(e);
}

static void device_end(struct env *e)
{
	if (e->measuring)
		region_on(e);
}

static volatile uint8_t l1_sink;

/* Read every line of the L1-eviction buffer, summing what is read so the
 * loads stay (valgrind drops unused ones). */
static void evict_l1d(struct env *e)
{
	uint8_t acc = 0;
	for (size_t i = 0; i < e->l1len; i += 64)
		acc += ((volatile uint8_t *)e->l1buf)[i];
	l1_sink = acc;
}

/* A buffer of 4x the L1 data cache (32 KB if the geometry is unknown). */
static int l1d_setup(struct env *e)
{
	struct cn_cache_info info;
	const struct cn_cache_level *l1 = NULL;
	if (cn_cache_geometry(&info) == 0)
		l1 = cn_cache_find(&info, 1, CN_CACHE_DATA);
	e->l1len = 4 * (size_t)(l1 ? l1->size : 32768);
	e->l1buf = malloc(e->l1len);
	if (!e->l1buf)
		return -1;
	memset(e->l1buf, 1, e->l1len);
	return 0;
}

/* Before each measured packet: cold instruction and/or data caches if
 * asked for (outside the region; warm-up packets skip it; the I-cache
 * eviction costs ~1 ms natively and ~20 ms under valgrind, the data
 * eviction ~5-15 ms and ~0.1 s). Data last: the I-cache eviction's code
 * block would otherwise stay in the L2/LLC, not the stack's data. */
static void next_packet(struct env *e)
{
	if ((!e->cold && !e->dcold && !e->l1buf) || !e->measuring)
		return;
	region_off(e);
	if (e->cold)
		cn_cache_evict_icache();
	if (e->dcold)
		cn_cache_evict_data();
	if (e->l1buf)
		evict_l1d(e);
	region_on(e);
}

/* The peer's next burst into our RX ring when it is empty (TCP: after our
 * ACKs have reached the peer and opened its window). */
static void refill(struct env *e, bool tcp)
{
	if (cn_netdev_rx_pending(e->dev))
		return;
	device_begin(e);
	if (tcp) {
		cn_netdev_nic_tx(e->dev);
		cn_netdev_tx_reap(e->dev);
	}
	cn_peer_send(e->peer, tcp ? 256 : 512);
	device_end(e);
}

/* One received frame through the stack: the receive paths' packet. */
static int input_one(struct env *e, uint64_t now)
{
	struct cn_mbuf *mb;

	next_packet(e);
	if (cn_netdev_rx_burst(e->dev, &mb, 1) != 1)
		return -1;
	cn_net_input(e->net, mb, now);
	return 0;
}

/* ---------------------------------------------------------- the paths */

/* Each runs `n` packets, measured or not as e->measuring says. */

static int tcp_send(struct env *e, uint32_t payload, unsigned n, unsigned *writes)
{
	uint64_t segs = cn_tcp_stats(e->tcb)->segs_out + n;

	while (cn_tcp_stats(e->tcb)->segs_out < segs) {
		next_packet(e);
		uint32_t done = 0;
		while (done < payload) {
			int k = cn_tcp_send(e->tcb, e->app + done, payload - done, 1);
			done += k > 0 ? (uint32_t)k : 0;
			if (done < payload || ++*writes % 16 == 0 || cn_netdev_tx_pending(e->dev) > 1024) {
				/* the NIC step: frames onto the wire, the peer ACKs */
				device_begin(e);
				cn_netdev_nic_tx(e->dev);
				cn_peer_flush(e->peer);
				device_end(e);
				/* ACK processing (measured) */
				while (cn_netdev_rx_pending(e->dev))
					cn_netdev_poll(e->dev, e->net, 1);
				cn_netdev_tx_reap(e->dev);
			}
		}
	}
	return 0;
}

static int tcp_recv(struct env *e, uint32_t payload, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		refill(e, true);
		if (input_one(e, 1) < 0 || cn_tcp_recv(e->tcb, e->app, payload, 1) != (int)payload)
			return -1;
	}
	return 0;
}

static int udp_send(struct env *e, uint32_t payload, unsigned n, unsigned *k)
{
	for (unsigned i = 0; i < n; i++) {
		next_packet(e);
		if (cn_udp_send(e->udp, e->app, payload, NULL, NULL) < 0)
			return -1;
		if (++*k % 32 == 0) {
			device_begin(e);
			cn_netdev_nic_tx(e->dev);
			device_end(e);
			cn_netdev_tx_reap(e->dev);
		}
	}
	return 0;
}

static void rx_free(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)pi;
	*(uint64_t *)arg += 1;
	cn_mbuf_free_chain(m);
}

static int udp_recv(struct env *e, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		refill(e, false);
		if (input_one(e, 0) < 0)
			return -1;
	}
	return 0;
}

/* ---------------------------------------------------------- main */

_Noreturn static void usage(void)
{
	fprintf(stderr, "usage: cachenet-cord-paths [--payload=N] [--warmup=N] "
			"[--icache=warm|cold] [--dcache=warm|l1|cold] [--time] "
			"tcp-send|tcp-recv|udp-send|udp-recv-on|off PACKETS\n");
	exit(2);
}

static unsigned long number(const char *s, unsigned long max)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v == 0 || v > max)
		usage();
	return v;
}

int main(int argc, char **argv)
{
	unsigned long payload = 0, warmup = 200;
	bool cold = false, dcold = false, l1 = false, timed = false;
	const char *path = NULL;
	unsigned long packets = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--payload=", 10) == 0)
			payload = number(a + 10, 65536);
		else if (strncmp(a, "--warmup=", 9) == 0)
			warmup = strcmp(a + 9, "0") == 0 ? 0 : number(a + 9, 1ul << 24);
		else if (strcmp(a, "--icache=cold") == 0)
			cold = true;
		else if (strcmp(a, "--icache=warm") == 0)
			cold = false;
		else if (strcmp(a, "--dcache=cold") == 0)
			dcold = true, l1 = false;
		else if (strcmp(a, "--dcache=l1") == 0)
			l1 = true, dcold = false;
		else if (strcmp(a, "--dcache=warm") == 0)
			dcold = l1 = false;
		else if (strcmp(a, "--time") == 0)
			timed = true;
		else if (a[0] == '-')
			usage();
		else if (!path)
			path = a;
		else if (!packets)
			packets = number(a, 1ul << 24);
		else
			usage();
	}
	if (!path || !packets || strlen(path) < 11)
		usage();
	const char *on = path + strlen(path) - 3;
	bool csum = strcmp(on, "-on") == 0;
	if (!csum && strcmp(on - 1, "-off") != 0)
		usage();
	enum { TCP_SEND, TCP_RECV, UDP_SEND, UDP_RECV } kind = TCP_SEND;
	if (strncmp(path, "tcp-send-", 9) == 0)
		kind = TCP_SEND;
	else if (strncmp(path, "tcp-recv-", 9) == 0)
		kind = TCP_RECV;
	else if (strncmp(path, "udp-send-", 9) == 0)
		kind = UDP_SEND;
	else if (strncmp(path, "udp-recv-", 9) == 0)
		kind = UDP_RECV;
	else
		usage();
	if (!payload)
		payload = kind == TCP_SEND || kind == TCP_RECV ? MSS : 1472;
	if ((kind == UDP_SEND || kind == UDP_RECV) && payload > 1472)
		usage();
	if (kind == TCP_RECV && payload != MSS)
		usage(); /* a packet is one MSS segment read by one cn_tcp_recv */

	struct env e = {.cold = cold, .dcold = dcold};
	uint64_t delivered = 0;
	unsigned counter = 0;
	int rc = -1;
	bool rx = kind == TCP_RECV || kind == UDP_RECV;
	uint32_t rx_flags = rx && !csum ? CN_PARSE_L4_CSUM_GOOD : 0;
	if (env_init(&e, rx ? 1024 : 4096, rx_flags) < 0 || (l1 && l1d_setup(&e) < 0))
		goto out;
	e.app = malloc(payload);
	if (!e.app)
		goto out;
	for (unsigned long i = 0; i < payload; i++)
		e.app[i] = (uint8_t)(i * 131 + 7);

	if (kind == TCP_SEND || kind == TCP_RECV) {
		struct cn_tcp_params tp = tcp_params(kind == TCP_SEND && csum ? CN_TCP_CSUM_SEPARATE
									: CN_TCP_CSUM_OFFLOAD);
		e.tcb = cn_tcp_open(e.net, &tp);
		struct cn_peer_params pp = peer_params(kind == TCP_SEND ? CN_PEER_TCP_SINK
									: CN_PEER_TCP_SOURCE);
		pp.mss = MSS;
		e.peer = e.tcb ? cn_peer_create(e.dev, &pp) : NULL;
	} else {
		struct cn_udp_params up = {.lport = CN_BE16(kind == UDP_SEND ? 5353 : 5001)};
		if (kind == UDP_SEND) {
			up.raddr = IP_PEER;
			up.rport = CN_BE16(53);
			memcpy(up.rmac, mac_peer, 6);
			up.tx_csum = csum;
		} else {
			up.rx_csum = true;
			up.rx = rx_free;
			up.rx_arg = &delivered;
		}
		e.udp = cn_udp_open(e.net, &up);
		struct cn_peer_params pp = peer_params(kind == UDP_SEND ? CN_PEER_UDP_SINK
									: CN_PEER_UDP_SOURCE);
		pp.mss = (uint16_t)payload;
		pp.csum = csum;
		e.peer = e.udp ? cn_peer_create(e.dev, &pp) : NULL;
	}
	if (!e.peer)
		goto out;

	for (int measured = 0; measured < 2; measured++) {
		unsigned n = measured ? (unsigned)packets : (unsigned)warmup;
		if (!n)
			continue;
		e.measuring = measured;
		if (measured)
			region_on(&e);
		switch (kind) {
		case TCP_SEND: rc = tcp_send(&e, (uint32_t)payload, n, &counter); break;
		case TCP_RECV: rc = tcp_recv(&e, (uint32_t)payload, n); break;
		case UDP_SEND: rc = udp_send(&e, (uint32_t)payload, n, &counter); break;
		case UDP_RECV: rc = udp_recv(&e, n); break;
		}
		if (measured)
			region_off(&e);
		e.measuring = false;
		if (rc < 0)
			goto out;
	}
	rc = -1;
	if (cn_net_drops(e.net)) {
		fprintf(stderr, "cachenet-cord-paths: %llu drops on a lossless link\n",
			(unsigned long long)cn_net_drops(e.net));
		goto out;
	}
	if (kind == TCP_SEND || kind == TCP_RECV) {
		const struct cn_tcp_stats *s = cn_tcp_stats(e.tcb);
		printf("%s packets %lu payload %lu segs_out %llu segs_in %llu\n", path, packets,
		       payload, (unsigned long long)s->segs_out, (unsigned long long)s->segs_in);
	} else {
		const struct cn_udp_stats *s = cn_udp_stats(e.udp);
		printf("%s packets %lu payload %lu tx_dgrams %llu rx_dgrams %llu delivered %llu\n",
		       path, packets, payload, (unsigned long long)s->tx_dgrams,
		       (unsigned long long)s->rx_dgrams, (unsigned long long)delivered);
	}
	if (timed)
		printf("ticks %llu per_packet %.1f tsc_hz %.0f\n", (unsigned long long)e.ticks,
		       (double)e.ticks / (double)packets, cn_tsc_hz());
	rc = 0;
out:
	if (rc < 0 && !e.peer)
		fprintf(stderr, "cachenet-cord-paths: setup failed\n");
	env_fini(&e);
	return rc < 0 ? 1 : 0;
}
