/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libcachenet-dpdk under a real EAL, without hugepages or PCI:
 *
 *  - memif_transfer: two cachenet stacks in this one process, each on its
 *    own ethdev, joined by a net_memif pair (server and client on one
 *    socket file in a temporary directory): ARP, the TCP handshake, a
 *    stream client -> server of 3 x 10 MiB checked by SHA-256, both closes; then
 *    every cachenet pool and every adapter mempool back to 0 in use.
 *    Prints the throughput and the TSC ticks per segment (both stacks and
 *    both memif ends run on this one core).
 *  - ring_rx_flags: frames put on a net_ring loopback port with given
 *    RTE_MBUF_F_RX_* checksum flags come out of cn_dpdk_rx_burst without
 *    a copy (the cachenet mbuf's data is the rte_mbuf's) and with the
 *    matching CN_MBUF_F_RX_* status; the stack then accepts a frame with
 *    a wrong UDP checksum only when the device said "good", and drops a
 *    correct one as a bad checksum never.
 *  - tap_linux_echo (as root): in a network namespace the process makes
 *    for itself (unshare; it goes with the process), Linux's TCP echoes
 *    2 MiB through a cachenet echo server on a net_tap port, SHA-256
 *    equal; the TAP PMD offers TX checksum offload, so the adapter's
 *    offload path runs (Linux accepts the segments only if it is right).
 *
 * Skips (exit 77, with the reason) when the adapter was not built or the
 * EAL does not start here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>

#include "../unit/cn_test.h"

#ifndef CN_HAVE_DPDK
int main(void)
{
	printf("SKIP: libcachenet-dpdk not built (libdpdk not found, or -Ddpdk=disabled)\n");
	return 77;
}
#else

#include <openssl/sha.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cachenet/conn.h>
#include <cachenet/csum.h>
#include <cachenet/dpdk.h>
#include <cachenet/tsc.h>
#include <cachenet/udp.h>

#define TOTAL (10u << 20)
#define PASSES 3
#define IP_A 0x0a4d0001u /* 10.77.0.1, client */
#define IP_B 0x0a4d0002u /* 10.77.0.2, server */

static char tmpdir[64];
static uint16_t port_srv, port_cli, port_ring, port_tap;

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct host {
	struct cn_mbuf_pool *small, *clusters;
	struct cn_dpdk *dev;
	struct cn_net *net;
	struct cn_conn *conn;
};

static void host_up(struct host *h, uint16_t port, uint32_t ip, uint8_t last)
{
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SMALL, .count = 8192, .cache_size = 256};
	h->small = cn_mbuf_pool_create(&sp);
	assert_non_null(h->small);
	/* the clusters the stack copies into live in a DPDK memzone */
	char name[32];
	snprintf(name, sizeof(name), "cn_cl_%u", port);
	h->clusters = cn_dpdk_cluster_pool(name, 4096, CN_MBUF_CLUSTER_SIZE, 256);
	assert_non_null(h->clusters);
	struct cn_dpdk_params dp = {.port_id = port, .mpool = h->small};
	h->dev = cn_dpdk_open(&dp);
	assert_non_null(h->dev);
	struct cn_net_params np = {.addr = cn_htobe32(ip), .mpool = h->small, .cpool = h->clusters,
				   .xmit = cn_dpdk_xmit_hook, .xmit_arg = h->dev};
	np.mac[0] = 0x02;
	np.mac[5] = last;
	h->net = cn_net_create(&np);
	assert_non_null(h->net);
	struct cn_conn_params cp = {.isn_secret = 0x9e3779b97f4a7c15ull * last};
	h->conn = cn_conn_create(h->net, &cp);
	assert_non_null(h->conn);
}

static void host_down(struct host *h)
{
	struct cn_mbuf_pool_stats st;

	cn_dpdk_flush(h->dev);
	cn_conn_destroy(h->conn);
	assert_int_equal(cn_net_destroy(h->net), 0);
	/* 0: after the port's close no rte_mbuf of the adapter's mempools
	 * is in use (a driver that posts RX buffers, as net_tap, holds
	 * some until then) */
	assert_int_equal(cn_dpdk_close(h->dev), 0);
	cn_mbuf_pool_thread_flush(h->small);
	cn_mbuf_pool_thread_flush(h->clusters);
	cn_mbuf_pool_stats(h->small, &st);
	assert_int_equal(st.in_use, 0);
	cn_mbuf_pool_stats(h->clusters, &st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(cn_dpdk_cluster_pool_free(h->clusters), 0);
	assert_int_equal(cn_mbuf_pool_destroy(h->small), 0);
}

static void wait_link(uint16_t port)
{
	struct rte_eth_link l;
	for (int i = 0; i < 500; i++) {
		memset(&l, 0, sizeof(l));
		rte_eth_link_get_nowait(port, &l);
		if (l.link_status == RTE_ETH_LINK_UP)
			return;
		usleep(10000);
	}
	fail_msg("port %u: link not up after 5 s", port);
}

/* memif's control messages (a peer's disconnect) are handled on the EAL's
 * interrupt thread: close one end, let the other see its link go down,
 * then close that one, so that no message arrives for a freed port. */
static void wait_link_down(uint16_t port)
{
	struct rte_eth_link l;
	for (int i = 0; i < 500; i++) {
		memset(&l, 0, sizeof(l));
		rte_eth_link_get_nowait(port, &l);
		if (l.link_status == RTE_ETH_LINK_DOWN) {
			/* the handler that set it may still be tearing the
			 * control channel down */
			usleep(200000);
			return;
		}
		usleep(10000);
	}
	fail_msg("port %u: link still up 5 s after its peer closed", port);
}

static void poll_both(struct host *a, struct host *b, uint64_t now)
{
	while (cn_dpdk_poll(a->dev, a->net, now) == 32)
		;
	while (cn_dpdk_poll(b->dev, b->net, now) == 32)
		;
}

static void memif_transfer(void **state)
{
	(void)state;
	struct host cli, srv;
	static uint8_t out[TOTAL], in[65536];
	uint8_t want[32], got[32];
	SHA256_CTX rx;

	cn_test_seed(26);
	cn_test_fill_rand(out, TOTAL);
	SHA256_Init(&rx);
	for (int i = 0; i < PASSES; i++)
		SHA256_Update(&rx, out, TOTAL);
	SHA256_Final(want, &rx);
	SHA256_Init(&rx);

	host_up(&srv, port_srv, IP_B, 2);
	host_up(&cli, port_cli, IP_A, 1);
	wait_link(port_srv);
	wait_link(port_cli);

	struct cn_sock *ls = cn_sock_listen(srv.conn, cn_htobe16(5001), 4);
	assert_non_null(ls);
	uint64_t now = now_ms();
	struct cn_sock *c = cn_sock_connect(cli.conn, cn_htobe32(IP_B), cn_htobe16(5001), now);
	assert_non_null(c);
	struct cn_sock *s = NULL;
	uint64_t deadline = now + 20000;
	while (!s && now < deadline) {
		now = now_ms();
		poll_both(&cli, &srv, now);
		cn_conn_poll(cli.conn, now);
		cn_conn_poll(srv.conn, now);
		s = cn_sock_accept(ls);
	}
	assert_non_null(s);
	while (cn_sock_state(c) != CN_SOCK_ESTABLISHED && now < deadline) {
		now = now_ms();
		poll_both(&cli, &srv, now);
		cn_conn_poll(cli.conn, now);
	}
	assert_int_equal(cn_sock_state(c), CN_SOCK_ESTABLISHED);

	/* PASSES copies of out: the first warms up (first touch of the
	 * mempools, memzones and memif regions: page faults), the rest are
	 * timed from the moment the receiver has the first copy. */
	uint64_t sent = 0, rcvd = 0, iters = 0, t0 = 0, c0 = 0, p0 = 0, sha_ns = 0;
	struct cn_dpdk_stats cs0 = {0}, ss0 = {0};
	bool shut = false, eof = false;
	while (!eof && now < deadline + 60000) {
		now = now_ms();
		iters++;
		if (sent < (uint64_t)PASSES * TOTAL) {
			uint32_t at = (uint32_t)(sent % TOTAL);
			int n = cn_sock_send(c, out + at, TOTAL - at, now);
			assert_true(n >= 0);
			sent += (uint32_t)n;
		} else if (!shut) {
			assert_int_equal(cn_sock_shutdown(c, now), 0);
			shut = true;
		}
		poll_both(&cli, &srv, now);
		for (;;) {
			int n = cn_sock_recv(s, in, sizeof(in), now);
			if (n == -EAGAIN)
				break;
			assert_true(n >= 0);
			if (n == 0) {
				eof = true;
				break;
			}
			uint64_t h0 = cpu_ns();
			SHA256_Update(&rx, in, (size_t)n);
			if (rcvd >= TOTAL)
				sha_ns += cpu_ns() - h0;
			if (rcvd < TOTAL && rcvd + (uint32_t)n >= TOTAL) {
				cs0 = *cn_dpdk_stats(cli.dev);
				ss0 = *cn_dpdk_stats(srv.dev);
				t0 = now_ns();
				c0 = cn_tsc_begin();
				p0 = cpu_ns();
			}
			rcvd += (uint32_t)n;
		}
		cn_conn_poll(cli.conn, now);
		cn_conn_poll(srv.conn, now);
	}
	uint64_t c1 = cn_tsc_end(), t1 = now_ns(), p1 = cpu_ns();
	assert_true(eof);
	assert_true(rcvd == (uint64_t)PASSES * TOTAL);
	SHA256_Final(got, &rx);
	assert_memory_equal(got, want, 32);

	const struct cn_dpdk_stats *cs = cn_dpdk_stats(cli.dev), *ss = cn_dpdk_stats(srv.dev);
	double secs = (double)(t1 - t0) / 1e9, bytes = (double)(PASSES - 1) * TOTAL;
	uint64_t segs = cs->tx_frames - cs0.tx_frames;
	segs = segs ? segs : 1;
	printf("dpdk memif (one process, one core, %s): %d x %u bytes, SHA-256 equal; timed after "
	       "the first: %.0f bytes in %.1f ms = %.2f Gbit/s; client tx %llu frames (%llu sw "
	       "csum, %llu hw csum), server rx %llu frames, server tx %llu frames; %llu loop "
	       "rounds in all\n",
	       cn_dpdk_info(cli.dev)->driver, PASSES, TOTAL, bytes, secs * 1e3,
	       bytes * 8.0 / secs / 1e9, (unsigned long long)segs,
	       (unsigned long long)(cs->tx_csum_sw - cs0.tx_csum_sw),
	       (unsigned long long)(cs->tx_csum_hw - cs0.tx_csum_hw),
	       (unsigned long long)(ss->rx_frames - ss0.rx_frames),
	       (unsigned long long)(ss->tx_frames - ss0.tx_frames), (unsigned long long)iters);
	printf("dpdk memif: %.0f TSC ticks per data segment in all (both stacks, both memif ends, "
	       "the test's SHA-256 and copies); adapter + PMD share: client tx %.0f, client rx "
	       "%.0f, server rx %.0f, server tx %.0f ticks per segment; IOVA as %s, %llu pieces "
	       "translated by rte_mem_virt2iova\n",
	       (double)(c1 - c0) / (double)segs,
	       (double)(cs->tx_tsc - cs0.tx_tsc) / (double)segs,
	       (double)(cs->rx_tsc - cs0.rx_tsc) / (double)segs,
	       (double)(ss->rx_tsc - ss0.rx_tsc) / (double)segs,
	       (double)(ss->tx_tsc - ss0.tx_tsc) / (double)segs,
	       cn_dpdk_info(cli.dev)->iova_va ? "VA" : "PA", (unsigned long long)cs->tx_iova_slow);
	/* On a busy machine the wall clock (and the TSC) counts time the
	 * process spent preempted; the process CPU time does not. */
	double cpu = (double)(p1 - p0) / 1e9;
	printf("dpdk memif: process CPU time %.1f ms (%.0f%% of the wall time): %.2f Gbit/s per "
	       "CPU-second, %.0f ns of CPU per data segment in all, %.0f without the test's "
	       "SHA-256 (%.1f ms)\n",
	       cpu * 1e3, 100.0 * cpu / secs, bytes * 8.0 / cpu / 1e9, cpu * 1e9 / (double)segs,
	       ((double)(p1 - p0) - (double)sha_ns) / (double)segs, (double)sha_ns / 1e6);

	/* Both closes, then let the FIN exchange finish. */
	cn_sock_close(s, now);
	cn_sock_close(c, now);
	cn_sock_close(ls, now);
	for (uint64_t end = now_ms() + 300; now_ms() < end;) {
		now = now_ms();
		poll_both(&cli, &srv, now);
		cn_conn_poll(cli.conn, now);
		cn_conn_poll(srv.conn, now);
	}
	assert_int_equal(cs->rx_bad_len + cs->rx_nobufs + ss->rx_bad_len + ss->rx_nobufs, 0);
	assert_int_equal(cs->tx_completed, cs->tx_frames);
	assert_int_equal(ss->tx_completed, ss->tx_frames);
	host_down(&cli);
	wait_link_down(port_srv);
	host_down(&srv);
}

/* ------------------------------------------------------------ RX flags over net_ring */

static uint32_t udp_got;

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)arg;
	(void)pi;
	udp_got++;
	cn_mbuf_free_chain(m);
}

/* A UDP datagram 10.77.0.1:7 -> 10.77.0.2:9 with 32 payload bytes, its
 * checksum right or off by one. */
static uint16_t udp_frame(uint8_t *f, bool good)
{
	static const uint8_t dmac[6] = {2, 0, 0, 0, 0, 2}, smac[6] = {2, 0, 0, 0, 0, 1};
	struct cn_net_hdr_spec hs = {.dmac = dmac, .smac = smac, .saddr = cn_htobe32(IP_A),
				     .daddr = cn_htobe32(IP_B), .proto = CN_IPV4_PROTO_UDP,
				     .l4_len = 8 + 32};
	uint8_t *u = cn_net_hdr_build(f, &hs);
	u[0] = 0, u[1] = 7, u[2] = 0, u[3] = 9, u[4] = 0, u[5] = 40, u[6] = 0, u[7] = 0;
	for (int i = 0; i < 32; i++)
		u[8 + i] = (uint8_t)(i * 7 + 1);
	uint32_t s = cn_csum_pseudo_ipv4(hs.saddr, hs.daddr, CN_IPV4_PROTO_UDP, 40);
	uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial(u, 40, s));
	if (c == 0)
		c = 0xffff;
	if (!good)
		c ^= 0x0100;
	memcpy(u + 6, &c, 2);
	return 14 + 20 + 40;
}

static void ring_rx_flags(void **state)
{
	(void)state;
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SMALL, .count = 256};
	struct cn_mbuf_pool *small = cn_mbuf_pool_create(&sp);
	assert_non_null(small);
	struct cn_dpdk_params dp = {.port_id = port_ring, .mpool = small, .rx_desc = 256,
				    .tx_desc = 256, .nb_mbufs = 1023};
	struct cn_dpdk *d = cn_dpdk_open(&dp);
	assert_non_null(d);
	/* net_ring hands the sender's rte_mbufs to the receiver: the test's
	 * pool gives them the 64-byte private area the adapter needs */
	struct rte_mempool *mp = rte_pktmbuf_pool_create("cn_test_inj", 255, 0, 64, 2048 + 128, 0);
	assert_non_null(mp);
	struct cn_net_params np = {.addr = cn_htobe32(IP_B), .mpool = small,
				   .xmit = cn_dpdk_xmit_hook, .xmit_arg = d};
	np.mac[0] = 2, np.mac[5] = 2;
	struct cn_net *net = cn_net_create(&np);
	assert_non_null(net);
	struct cn_udp_params up = {.lport = cn_htobe16(9), .rx_csum = true, .rx = udp_rx};
	struct cn_udp_sock *us = cn_udp_open(net, &up);
	assert_non_null(us);

	static const struct {
		uint64_t ol;
		bool good_csum;
		uint16_t want_flags;
		bool accepted;
	} cases[] = {
		{0, true, 0, true},
		{0, false, 0, false},
		{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD, false,
		 CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD, true},
		{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD, true,
		 CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD, true},
		{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_BAD, true, CN_MBUF_F_RX_CSUM_BAD, true},
		{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_BAD, false, CN_MBUF_F_RX_CSUM_BAD, false},
		{RTE_MBUF_F_RX_IP_CKSUM_BAD, true, CN_MBUF_F_RX_CSUM_BAD, true},
		{RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN | RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN, false, 0, false},
		{RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_NONE, false, CN_MBUF_F_RX_IP_CSUM_GOOD, false},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rte_mbuf *r = rte_pktmbuf_alloc(mp);
		assert_non_null(r);
		uint8_t *f = (uint8_t *)rte_pktmbuf_append(r, 74);
		assert_non_null(f);
		udp_frame(f, cases[i].good_csum);
		r->ol_flags = cases[i].ol;
		assert_int_equal(rte_eth_tx_burst(port_ring, 0, &r, 1), 1);
		struct cn_mbuf *m = NULL;
		assert_int_equal(cn_dpdk_rx_burst(d, &m, 1), 1);
		assert_ptr_equal(m->data, f);   /* the rte_mbuf's bytes: no copy */
		assert_int_equal(m->pkt_len, 74);
		assert_int_equal(m->flags & CN_MBUF_F_RX_CSUM_MASK, cases[i].want_flags);
		assert_int_equal(rte_mempool_in_use_count(mp), 1);
		uint32_t before = udp_got;
		enum cn_drop why = cn_net_input(net, m, 1);
		assert_int_equal(udp_got - before, cases[i].accepted ? 1u : 0u);
		if (!cases[i].accepted)
			assert_int_equal(why, CN_DROP_UDP_CSUM);
		/* the stack freed the frame: the rte_mbuf is back */
		assert_int_equal(rte_mempool_in_use_count(mp), 0);
	}
	const struct cn_dpdk_stats *st = cn_dpdk_stats(d);
	assert_int_equal(st->rx_frames, sizeof(cases) / sizeof(cases[0]));
	assert_int_equal(st->rx_csum_good, 2);
	assert_int_equal(st->rx_csum_bad, 3);
	cn_udp_close(us);
	assert_int_equal(cn_net_destroy(net), 0);
	assert_int_equal(cn_dpdk_close(d), 0);
	rte_mempool_free(mp);
	assert_int_equal(cn_mbuf_pool_destroy(small), 0);
}

/* ------------------------------------------------------------ Linux's TCP over net_tap */

static int have_tap;

/* Linux's TCP client (a kernel socket of this process, in the network
 * namespace the test made for itself: only lo and the TAP exist in it)
 * sends 2 MiB to a cachenet echo server on the net_tap port and reads
 * them back: SHA-256 equal, then 0 in use. The TAP PMD offers TX
 * checksum offload, so this runs the adapter's offload path. */
static void tap_linux_echo(void **state)
{
	(void)state;
	if (!have_tap) {
		printf("SKIP tap_linux_echo: not root (needs a network namespace of its own)\n");
		skip();
	}
	enum { N = 2u << 20 };
	static uint8_t out[N], back[N], ebuf[65536];
	struct host h;

	host_up(&h, port_tap, 0x0a4e0002u, 3);
	assert_int_equal(system("ip link set dev cntap0 up && ip addr add 10.78.0.1/24 dev cntap0"), 0);
	wait_link(port_tap);
	struct cn_sock *ls = cn_sock_listen(h.conn, cn_htobe16(7), 4);
	assert_non_null(ls);
	cn_test_fill_rand(out, N);

	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(7),
				 .sin_addr.s_addr = htonl(0x0a4e0002u)};
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	assert_true(rc == 0 || errno == EINPROGRESS);
	struct cn_sock *s = NULL;
	uint32_t lsent = 0, lgot = 0, elen = 0, eoff = 0;
	uint64_t now = now_ms(), deadline = now + 30000;
	while (lgot < N && now < deadline) {
		now = now_ms();
		while (cn_dpdk_poll(h.dev, h.net, now) == 32)
			;
		cn_conn_poll(h.conn, now);
		if (!s)
			s = cn_sock_accept(ls);
		if (s) {
			/* echo: send what is pending, then read more */
			for (;;) {
				if (eoff < elen) {
					int n = cn_sock_send(s, ebuf + eoff, elen - eoff, now);
					assert_true(n >= 0);
					eoff += (uint32_t)n;
					if (eoff < elen)
						break;
				}
				int n = cn_sock_recv(s, ebuf, sizeof(ebuf), now);
				if (n <= 0)
					break;
				elen = (uint32_t)n;
				eoff = 0;
			}
		}
		if (lsent < N) {
			ssize_t n = send(fd, out + lsent, N - lsent, MSG_DONTWAIT);
			if (n > 0)
				lsent += (uint32_t)n;
		}
		ssize_t n = recv(fd, back + lgot, N - lgot, MSG_DONTWAIT);
		if (n > 0)
			lgot += (uint32_t)n;
		cn_dpdk_flush(h.dev);
	}
	assert_int_equal(lgot, N);
	uint8_t a[32], b[32];
	SHA256(out, N, a);
	SHA256(back, N, b);
	assert_memory_equal(a, b, 32);
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h.dev);
	printf("tap_linux_echo: %u bytes echoed to Linux's TCP over %s, SHA-256 equal; %llu "
	       "frames sent with the TCP checksum offloaded, %llu in software\n",
	       (unsigned)N, cn_dpdk_info(h.dev)->driver, (unsigned long long)st->tx_csum_hw,
	       (unsigned long long)st->tx_csum_sw);
	assert_true(cn_dpdk_info(h.dev)->tx_csum_hw == 0 || st->tx_csum_hw > 0);
	close(fd);
	cn_sock_close(s, now);
	cn_sock_close(ls, now);
	for (uint64_t end = now_ms() + 300; now_ms() < end;) {
		now = now_ms();
		while (cn_dpdk_poll(h.dev, h.net, now) == 32)
			;
		cn_conn_poll(h.conn, now);
	}
	host_down(&h);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cn_dpdk_XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	char prefix[64], v0[200], v1[200];
	snprintf(prefix, sizeof(prefix), "cn_dpdk_%d", (int)getpid());
	snprintf(v0, sizeof(v0), "net_memif0,role=server,id=0,socket=%s/memif.sock,socket-abstract=no",
		 tmpdir);
	snprintf(v1, sizeof(v1), "net_memif1,role=client,id=0,socket=%s/memif.sock,socket-abstract=no",
		 tmpdir);
	/* As root, a network namespace of our own (gone when the process
	 * exits) for the TAP test: nothing it sends can leave it. */
	have_tap = geteuid() == 0 && unshare(CLONE_NEWNET) == 0;
	char *argv[] = {"test_dpdk", "--no-huge", "--no-pci", "-l", "0", "-m", "512",
			"--file-prefix", prefix, "--vdev", v0, "--vdev", v1,
			"--vdev", "net_ring0", "--log-level", "lib.eal:error",
			"--vdev", "net_tap0,iface=cntap0", NULL};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1 - (have_tap ? 0 : 2);
	if (rte_eal_init(argc, argv) < 0) {
		printf("SKIP: rte_eal_init failed (%s)%s: the EAL does not start here\n",
		       rte_strerror(rte_errno), geteuid() != 0 ? " as a user other than root" : "");
		rmdir(tmpdir);
		return 77;
	}
	if (rte_eth_dev_get_port_by_name("net_memif0", &port_srv) != 0 ||
	    rte_eth_dev_get_port_by_name("net_memif1", &port_cli) != 0 ||
	    rte_eth_dev_get_port_by_name("net_ring0", &port_ring) != 0) {
		printf("SKIP: the net_memif or net_ring PMD is missing (librte-net-memif23, librte-net-ring23)\n");
		rte_eal_cleanup();
		rmdir(tmpdir);
		return 77;
	}
	if (have_tap && rte_eth_dev_get_port_by_name("net_tap0", &port_tap) != 0)
		have_tap = 0;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_rx_flags),
		cmocka_unit_test(memif_transfer),
		cmocka_unit_test(tap_linux_echo),
	};
	int rc = cmocka_run_group_tests_name("dpdk", tests, NULL, NULL);
	rte_eal_cleanup();
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/memif.sock", tmpdir);
	unlink(sock);
	rmdir(tmpdir);
	return rc;
}
#endif
