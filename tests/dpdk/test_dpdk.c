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
 *  - af_xdp_linux_echo, af_packet_linux_echo (as root): the same echo
 *    over a veth pair made in that namespace, the net_af_xdp or
 *    net_af_packet PMD hot-plugged on one end; net_af_xdp sends no
 *    chains, so the adapter's copy mode runs. Each ends with the vdev
 *    removed, no XDP program on the veth, the pair deleted and every
 *    buffer back; skipped, saying why, when the PMD does not start.
 *  The two-process memif stream is memif_stream.c.
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
#include <stdarg.h>
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
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include <cachenet/conn.h>
#include <cachenet/csum.h>
#include <cachenet/dpdk.h>
#include <cachenet/tsc.h>
#include <cachenet/udp.h>

#include "dpdk_host.h"

#define TOTAL (10u << 20)
#define PASSES 3
/* seconds a port's link gets to come up or go down */
#define LINK_WAIT_S 5u
#define IP_A 0x0a4d0001u /* 10.77.0.1, client */
#define IP_B 0x0a4d0002u /* 10.77.0.2, server */

static char tmpdir[64];
static uint16_t port_srv, port_cli, port_ring, port_tap;

static void host_up(struct dh_host *h, uint16_t port, uint32_t ip, uint8_t last)
{
	assert_int_equal(dh_host_up(h, port, ip, last, NULL, NULL), 0);
}

static void host_down(struct dh_host *h)
{
	assert_int_equal(dh_host_down(h), 0);
}

static void wait_link(uint16_t port)
{
	assert_int_equal(dh_wait_link(port, 1, LINK_WAIT_S), 0);
}

/* memif's control messages (a peer's disconnect) are handled on the EAL's
 * interrupt thread: close one end, let the other see its link go down,
 * then close that one, so that no message arrives for a freed port. */
static void wait_link_down(uint16_t port)
{
	assert_int_equal(dh_wait_link(port, 0, LINK_WAIT_S), 0);
}

static void poll_both(struct dh_host *a, struct dh_host *b, uint64_t now)
{
	dh_poll(a, now);
	dh_poll(b, now);
}

static void memif_transfer(void **state)
{
	(void)state;
	struct dh_host cli, srv;
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

	/* the server (the ACKs) in the adapter's choice for memif, copy
	 * mode; the client (the data) in chains of external buffers */
	struct cn_dpdk_params chains = {.tx_copy = 2};
	host_up(&srv, port_srv, IP_B, 2);
	assert_int_equal(dh_host_up(&cli, port_cli, IP_A, 1, &chains, NULL), 0);
	assert_int_equal(cn_dpdk_info(srv.dev)->tx_copy, 1);
	assert_int_equal(cn_dpdk_info(cli.dev)->tx_copy, 0);
	wait_link(port_srv);
	wait_link(port_cli);

	struct cn_sock *ls = cn_sock_listen(srv.conn, cn_htobe16(5001), 4);
	assert_non_null(ls);
	uint64_t now = dh_now_ms();
	struct cn_sock *c = cn_sock_connect(cli.conn, cn_htobe32(IP_B), cn_htobe16(5001), now);
	assert_non_null(c);
	struct cn_sock *s = NULL;
	uint64_t deadline = now + 20000;
	while (!s && now < deadline) {
		now = dh_now_ms();
		poll_both(&cli, &srv, now);
		cn_conn_poll(cli.conn, now);
		cn_conn_poll(srv.conn, now);
		s = cn_sock_accept(ls);
	}
	assert_non_null(s);
	while (cn_sock_state(c) != CN_SOCK_ESTABLISHED && now < deadline) {
		now = dh_now_ms();
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
		now = dh_now_ms();
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
			uint64_t h0 = dh_cpu_ns();
			SHA256_Update(&rx, in, (size_t)n);
			if (rcvd >= TOTAL)
				sha_ns += dh_cpu_ns() - h0;
			if (rcvd < TOTAL && rcvd + (uint32_t)n >= TOTAL) {
				cs0 = *cn_dpdk_stats(cli.dev);
				ss0 = *cn_dpdk_stats(srv.dev);
				t0 = dh_now_ns();
				c0 = cn_tsc_begin();
				p0 = dh_cpu_ns();
			}
			rcvd += (uint32_t)n;
		}
		cn_conn_poll(cli.conn, now);
		cn_conn_poll(srv.conn, now);
	}
	uint64_t c1 = cn_tsc_end(), t1 = dh_now_ns(), p1 = dh_cpu_ns();
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
	for (uint64_t end = dh_now_ms() + 300; dh_now_ms() < end;) {
		now = dh_now_ms();
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

/* ------------------------------------------------------------ Linux's TCP, echoed */

static int have_ns, have_tap;

static int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* Linux's TCP client (a kernel socket of this process, in the network
 * namespace the test made for itself) sends 2 MiB to a cachenet echo
 * server, 10.@net.0.2 port 7 on @port, and reads them back: SHA-256
 * equal, then 0 in use. */
static void linux_echo(uint16_t port, unsigned net, uint8_t last, const char *name)
{
	enum { N = 2u << 20 };
	static uint8_t out[N], back[N], ebuf[65536];
	struct dh_host h;
	uint32_t ip = 0x0a000002u | (uint32_t)net << 16;

	host_up(&h, port, ip, last);
	wait_link(port);
	struct cn_sock *ls = cn_sock_listen(h.conn, cn_htobe16(7), 4);
	assert_non_null(ls);
	cn_test_fill_rand(out, N);

	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(7),
				 .sin_addr.s_addr = htonl(ip)};
	int rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	assert_true(rc == 0 || errno == EINPROGRESS);
	struct cn_sock *s = NULL;
	uint32_t lsent = 0, lgot = 0, elen = 0, eoff = 0;
	uint64_t now = dh_now_ms(), t0 = dh_now_ns(), deadline = now + 30000;
	while (lgot < N && now < deadline) {
		now = dh_now_ms();
		dh_poll(&h, now);
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
	double ms = (double)(dh_now_ns() - t0) / 1e6;
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h.dev);
	if (lgot != N)
		printf("%s: %u of %u bytes back after %.0f ms; %llu frames received, %llu sent, "
		       "%llu refused by a full ring\n", name, lgot, (unsigned)N, ms,
		       (unsigned long long)st->rx_frames, (unsigned long long)st->tx_frames,
		       (unsigned long long)st->tx_full);
	assert_int_equal(lgot, N);
	uint8_t a[32], b[32];
	SHA256(out, N, a);
	SHA256(back, N, b);
	assert_memory_equal(a, b, 32);
	printf("%s: %u bytes echoed to Linux's TCP over %s in %.1f ms (%.2f Gbit/s each way, "
	       "machine shared), SHA-256 equal; %llu frames received (%llu with the L4 checksum "
	       "verified by the device); sent as %s, %llu with the TCP checksum offloaded, %llu "
	       "with it in software\n",
	       name, (unsigned)N, cn_dpdk_info(h.dev)->driver, ms, (double)N * 8.0 / ms / 1e6,
	       (unsigned long long)st->rx_frames, (unsigned long long)st->rx_csum_good,
	       cn_dpdk_info(h.dev)->tx_copy ? "copies (copy mode: the port sends no chains)"
					    : "chains over the stack's buffers",
	       (unsigned long long)st->tx_csum_hw, (unsigned long long)st->tx_csum_sw);
	/* copy mode exactly when the port cannot send chains */
	assert_int_equal(st->tx_copied != 0, cn_dpdk_info(h.dev)->tx_copy);
	assert_true(cn_dpdk_info(h.dev)->tx_csum_hw == 0 || st->tx_csum_hw > 0);
	close(fd);
	cn_sock_close(s, now);
	cn_sock_close(ls, now);
	for (uint64_t end = dh_now_ms() + 300; dh_now_ms() < end;) {
		now = dh_now_ms();
		dh_poll(&h, now);
		cn_conn_poll(h.conn, now);
	}
	host_down(&h);
}

/* Over net_tap: the TAP PMD offers TX checksum offload, so this runs the
 * adapter's offload path (Linux accepts the segments only if it is
 * right). */
static void tap_linux_echo(void **state)
{
	(void)state;
	if (!have_tap) {
		printf("SKIP tap_linux_echo: not root (needs a network namespace of its own)\n");
		skip();
	}
	assert_int_equal(sh("ip link set dev cntap0 up && ip addr add 10.78.0.1/24 dev cntap0"), 0);
	linux_echo(port_tap, 78, 3, "tap_linux_echo");
}

/* 1 when `ip link` shows an XDP program on @ifname. */
static int xdp_attached(const char *ifname)
{
	char cmd[128], line[1024];
	int found = 0;

	snprintf(cmd, sizeof(cmd), "ip -d link show dev %s", ifname);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, "xdp") != NULL || strstr(line, "prog/") != NULL;
	pclose(f);
	return found;
}

/* Over a veth pair made here: Linux on @lif (10.@net.0.1), the PMD @drv
 * hot-plugged on the peer end @pif (no address: the kernel ignores what
 * arrives there). The veth's TX checksum offload is turned off on the
 * Linux end: the frames a PMD reads carry complete checksums. Ends with
 * the vdev removed, no XDP program on @pif, and the pair deleted. */
static void veth_linux_echo(const char *drv, const char *lif, const char *pif, unsigned net,
			    uint8_t last, const char *pkg)
{
	char name[32], args[128];
	uint16_t port = 0;

	if (!have_ns) {
		printf("SKIP %s: not root (needs a network namespace of its own)\n", drv);
		skip();
	}
	assert_int_equal(sh("ip link add %s type veth peer name %s && ip link set dev %s up && "
			    "ip link set dev %s up && ip addr add 10.%u.0.1/24 dev %s",
			    lif, pif, lif, pif, net, lif), 0);
	assert_int_equal(cn_test_tx_csum_off(lif), 0);
	snprintf(name, sizeof(name), "%s0", drv);
	snprintf(args, sizeof(args), "iface=%s", pif);
	int rc = rte_eal_hotplug_add("vdev", name, args);
	if (rc != 0 || rte_eth_dev_get_port_by_name(name, &port) != 0) {
		assert_int_equal(sh("ip link del dev %s", lif), 0);
		printf("SKIP %s: the PMD did not start on a veth (%s; is %s installed?)\n", drv,
		       rte_strerror(-rc), pkg);
		skip();
	}
	linux_echo(port, net, last, drv);
	assert_int_equal(rte_eal_hotplug_remove("vdev", name), 0);
	assert_int_equal(xdp_attached(pif), 0);
	assert_int_equal(sh("ip link del dev %s", lif), 0);
}

#ifdef CN_TEST_SANITIZED
/* LeakSanitizer: net_af_xdp (DPDK 22.11) leaves one 80-byte allocation
 * of libxdp's xsk_umem__create behind when its port closes; not ours. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:xsk_umem__create\n";
}
#endif

static void af_xdp_linux_echo(void **state)
{
	(void)state;
	veth_linux_echo("net_af_xdp", "cnx0", "cnx1", 79, 4, "librte-net-af-xdp23");
}

static void af_packet_linux_echo(void **state)
{
	(void)state;
	veth_linux_echo("net_af_packet", "cnp0", "cnp1", 80, 5, "librte-net-af-packet23");
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
	have_ns = have_tap = geteuid() == 0 && unshare(CLONE_NEWNET) == 0;
	if (have_ns)
		sh("ip link set dev lo up");
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
		dh_eal_cleanup();
		rmdir(tmpdir);
		return 77;
	}
	if (have_tap && rte_eth_dev_get_port_by_name("net_tap0", &port_tap) != 0)
		have_tap = 0;
	const char *only = getenv("CN_DPDK_TEST");
	if (only)
		cmocka_set_test_filter(only);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ring_rx_flags),
		cmocka_unit_test(memif_transfer),
		cmocka_unit_test(tap_linux_echo),
		cmocka_unit_test(af_xdp_linux_echo),
		cmocka_unit_test(af_packet_linux_echo),
	};
	int rc = cmocka_run_group_tests_name("dpdk", tests, NULL, NULL);
	dh_eal_cleanup();
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/memif.sock", tmpdir);
	unlink(sock);
	rmdir(tmpdir);
	return rc;
}
#endif
