/* SPDX-License-Identifier: BSD-2-Clause */
/* The in-memory NIC: ring mechanics (descriptor status, batch size, a full
 * TX ring, RX without posted buffers), two stacks joined back to back
 * through devices, the same through a lossy link (loss, reorder,
 * duplicate, corrupt with a fixed seed; the stream's hash still equal),
 * every DCA mode, simulated peers (a TCP sink ACKing every other segment,
 * a TCP source flow-controlled by our ACKs, UDP source and sink), and a
 * pcap capture checked byte by byte against the classic format. Pools
 * return to their start counts after every test. */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachenet/csum.h"
#include "cachenet/lab/netdev.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"

CN_TEST_POOLS_FIXTURE(16384, 8192, 0)

static const uint8_t MAC_A[6] = {2, 0, 0, 0, 0, 0xa}, MAC_B[6] = {2, 0, 0, 0, 0, 0xb};
#define IP_A CN_IPV4(10, 0, 0, 1)
#define IP_B CN_IPV4(10, 0, 0, 2)

struct host {
	struct cn_netdev *dev;
	struct cn_net *net;
	struct cn_tcb *tcb;
};

/* Devices host_init creates split headers (test_split_*). */
static bool g_split;
static uint32_t g_pace; /* prefetch_pace of the next host_init */

static void host_init(struct cn_test_pools_fx *f, struct host *h, const uint8_t *mac, cn_be32_t ip,
		      enum cn_dca dca, uint32_t batch, struct cn_pcap *pc)
{
	struct cn_netdev_params dp = {.ring_size = 256, .batch = batch, .dca = dca,
				      .mpool = f->mp, .cpool = f->cp, .pcap = pc,
				      .split = g_split, .prefetch_pace = g_pace};
	h->dev = cn_netdev_create(&dp);
	assert_non_null(h->dev);
	struct cn_net_params np = {.addr = ip, .mpool = f->mp, .cpool = f->cp,
				   .xmit = cn_netdev_xmit_hook, .xmit_arg = h->dev};
	memcpy(np.mac, mac, 6);
	h->net = cn_net_create(&np);
	assert_non_null(h->net);
}

static void host_fini(struct host *h)
{
	cn_netdev_tx_reap(h->dev);
	cn_netdev_destroy(h->dev); /* releases packets still in the ring */
	assert_int_equal(cn_net_destroy(h->net), 0);
}

static struct cn_tcp_params tcp_params(bool a, uint32_t isa, uint32_t isb)
{
	struct cn_tcp_params p = {.mss = 1460, .snd_wnd = 65535, .sndbuf = CN_SOCKBUF_RING,
				  .ring_copy = CN_SBRING_COPY_CSUM, .csum = CN_TCP_CSUM_STORED,
				  .sndbuf_size = 1 << 18, .rcvbuf_size = 1 << 18, .rcv_wscale = 2,
				  .snd_wscale = 2, .ooo_max = 64, .delack_ticks = 20,
				  .rto_init = 100, .ts = true};
	if (a) {
		p.laddr = IP_A, p.raddr = IP_B, p.lport = CN_BE16(1111), p.rport = CN_BE16(2222), p.iss = isa, p.irs = isb;
		memcpy(p.rmac, MAC_B, 6);
	} else {
		p.laddr = IP_B, p.raddr = IP_A, p.lport = CN_BE16(2222), p.rport = CN_BE16(1111), p.iss = isb, p.irs = isa;
		memcpy(p.rmac, MAC_A, 6);
	}
	return p;
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* The stream's byte at offset i: generated, not stored, so streams of
 * hundreds of MB need no buffers of that size. */
static inline uint8_t stream_byte(uint64_t i)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ (i >> 20));
}

/* Stream A -> B through the devices (and the link, if any); every byte
 * received is checked against the generator, and the FNV-1a hashes of
 * what was sent and what arrived must be equal. */
static uint64_t stream(struct host *a, struct host *b, struct cn_link *link, uint64_t total)
{
	enum { CHUNK = 65536 };
	static uint8_t src[CHUNK], dst[CHUNK];
	uint64_t sent = 0, got = 0, hs = 1469598103934665603ull, hr = hs;
	uint64_t now = 1;
	unsigned idle = 0;
	uint32_t pend = 0, pend_off = 0; /* bytes of src not yet accepted */

	while (got < total) {
		unsigned moved = 0;
		if (pend == 0 && sent < total) {
			pend = total - sent < CHUNK ? (uint32_t)(total - sent) : CHUNK;
			for (uint32_t i = 0; i < pend; i++)
				src[i] = stream_byte(sent + i);
			hs = fnv(hs, src, pend);
			pend_off = 0;
		}
		if (pend) {
			int n = cn_tcp_send(a->tcb, src + pend_off, pend, now);
			assert_true(n >= 0);
			pend -= (uint32_t)n;
			pend_off += (uint32_t)n;
			sent += (uint32_t)n;
			moved += (unsigned)n;
		}
		moved += cn_netdev_nic_tx(a->dev);
		moved += cn_netdev_poll(b->dev, b->net, now);
		int n = cn_tcp_recv(b->tcb, dst, CHUNK, now);
		assert_true(n >= 0);
		for (int i = 0; i < n; i++)
			if (dst[i] != stream_byte(got + (uint64_t)i))
				fail_msg("stream byte %llu differs", (unsigned long long)(got + (uint64_t)i));
		hr = fnv(hr, dst, (size_t)n);
		got += (uint64_t)n;
		moved += (unsigned)n;
		moved += cn_netdev_nic_tx(b->dev);
		moved += cn_netdev_poll(a->dev, a->net, now);
		if (!moved) {
			if (link)
				cn_link_flush(link);
			now += 5;
			cn_net_timer(a->net, now);
			cn_net_timer(b->net, now);
			assert_true(++idle < 2000000);
		} else {
			now++;
		}
	}
	assert_true(got == total);
	assert_true(hs == hr);
	/* nothing more arrives: no byte duplicated past the end */
	for (int i = 0; i < 1000; i++) {
		cn_netdev_nic_tx(a->dev);
		cn_netdev_poll(b->dev, b->net, now);
		cn_netdev_nic_tx(b->dev);
		cn_netdev_poll(a->dev, a->net, now);
		if (link)
			cn_link_flush(link);
		now += 5;
		cn_net_timer(a->net, now);
		cn_net_timer(b->net, now);
	}
	assert_int_equal(cn_tcp_recv(b->tcb, dst, CHUNK, now), 0);
	return hr;
}

static void test_back_to_back(void **state)
{
	struct cn_test_pools_fx *f = *state;
	for (int dca = 0; dca < 3; dca++) {
		struct host a, b;
		host_init(f, &a, MAC_A, IP_A, (enum cn_dca)dca, 8, NULL);
		host_init(f, &b, MAC_B, IP_B, (enum cn_dca)dca, 32, NULL);
		cn_netdev_connect(a.dev, b.dev);
		struct cn_tcp_params pa = tcp_params(true, 0xfffff000u, 77), pb = tcp_params(false, 0xfffff000u, 77);
		a.tcb = cn_tcp_open(a.net, &pa);
		b.tcb = cn_tcp_open(b.net, &pb);
		assert_non_null(a.tcb);
		assert_non_null(b.tcb);
		stream(&a, &b, NULL, 2 << 20);
		/* in-order stream without loss: the receiver predicted (nearly)
		 * every segment */
		const struct cn_tcp_stats *sb = cn_tcp_stats(b.tcb);
		assert_true(sb->hp_data * 10 > sb->segs_in * 9);
		assert_int_equal(cn_net_drops(b.net), 0);
		assert_int_equal(cn_tcp_stats(a.tcb)->csum_fallback, 0);
		host_fini(&a);
		host_fini(&b);
	}
}

static void test_lossy_link(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct host a, b;
	/* The figure: 1% loss, 1% reorder, 0.1% duplicate, 0.1%
	 * corrupt, 256 MB delivered intact. */
	struct cn_link_params lp = {.loss = 0.01, .reorder = 0.01, .duplicate = 0.001,
				    .corrupt = 0.001, .rng_start = 42};
	host_init(f, &a, MAC_A, IP_A, CN_DCA_INJECT, 32, NULL);
	host_init(f, &b, MAC_B, IP_B, CN_DCA_INJECT, 32, NULL);
	struct cn_link *l = cn_link_create(a.dev, b.dev, &lp);
	assert_non_null(l);
	struct cn_tcp_params pa = tcp_params(true, 5, 6), pb = tcp_params(false, 5, 6);
	a.tcb = cn_tcp_open(a.net, &pa);
	b.tcb = cn_tcp_open(b.net, &pb);
	stream(&a, &b, l, (uint64_t)256 << 20);
	const struct cn_link_stats *ls = cn_link_stats(l);
	assert_true(ls->lost > 0);
	assert_true(ls->reordered > 0);
	assert_true(ls->duplicated > 0);
	assert_true(ls->corrupted > 0);
	/* corrupted frames were dropped by a checksum or a header check */
	assert_true(cn_net_drops(a.net) + cn_net_drops(b.net) > 0);
	assert_true(cn_tcp_stats(a.tcb)->rexmit_segs > 0);
	cn_link_destroy(l);
	host_fini(&a);
	host_fini(&b);
}

static void test_rings(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_netdev_params dp = {.ring_size = 4, .batch = 2, .mpool = f->mp, .cpool = f->cp};
	struct cn_netdev *d = cn_netdev_create(&dp);
	uint8_t frame[60] = {0};
	struct cn_mbuf *m[8];

	assert_non_null(d);
	dp.ring_size = 6;
	assert_null(cn_netdev_create(&dp));
	assert_int_equal(errno, EINVAL);
	for (int i = 0; i < 4; i++) {
		frame[0] = (uint8_t)i;
		assert_int_equal(cn_netdev_nic_rx(d, frame, 60), 0);
	}
	assert_int_equal(cn_netdev_nic_rx(d, frame, 60), -ENOBUFS); /* no posted buffer */
	assert_int_equal(cn_netdev_stats(d)->rx_no_desc, 1);
	assert_int_equal(cn_netdev_rx_pending(d), 4);
	assert_int_equal(cn_netdev_rx_burst(d, m, 3), 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(m[i]->len, 60);
		assert_int_equal(m[i]->data[0], i);
		assert_int_equal((uintptr_t)(m[i]->data + 14) % 4, 0); /* IPv4 aligned */
		cn_mbuf_free(m[i]);
	}
	assert_int_equal(cn_netdev_nic_rx(d, frame, 60), 0); /* refilled */
	assert_int_equal(cn_netdev_rx_burst(d, m, 8), 2);
	cn_mbuf_free(m[0]);
	cn_mbuf_free(m[1]);
	cn_netdev_destroy(d);
}

/* All-zero params: a 512-descriptor device with its own pools that posts
 * every descriptor and hands frames up; a zero peer (a TCP sink) and a
 * zero link (no impairment) attach to it; a newer caller's larger struct
 * is accepted only with zeros past ours. */
static void test_zero_params(void **state)
{
	(void)state;
	struct cn_netdev *a = cn_netdev_create(&(struct cn_netdev_params){0});
	struct cn_netdev *b = cn_netdev_create(&(struct cn_netdev_params){0});
	uint8_t frame[60] = {0};
	struct cn_mbuf *m[600];

	assert_non_null(a);
	assert_non_null(b);
	for (int i = 0; i < 512; i++) {
		frame[0] = (uint8_t)i;
		assert_int_equal(cn_netdev_nic_rx(a, frame, 60), 0);
	}
	assert_int_equal(cn_netdev_nic_rx(a, frame, 60), -ENOBUFS);
	assert_int_equal(cn_netdev_rx_burst(a, m, 600), 512);
	for (int i = 0; i < 512; i++) {
		assert_int_equal(m[i]->len, 60);
		assert_int_equal(m[i]->data[0], (uint8_t)i);
	}
	cn_mbuf_free_bulk(m, 512);
	struct cn_link *l = cn_link_create(a, b, &(struct cn_link_params){0});
	assert_non_null(l);
	assert_int_equal(cn_link_stats(l)->frames, 0);
	cn_link_destroy(l);
	struct cn_peer *pe = cn_peer_create(b, &(struct cn_peer_params){0});
	assert_non_null(pe);
	assert_int_equal(cn_peer_stats(pe)->frames_in, 0);
	cn_peer_destroy(pe);
	struct {
		struct cn_netdev_params p;
		uint64_t more;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: only zeros past ours */
	big.p.size = sizeof(big);
	for (uint64_t more = 2; more-- > 0;) { /* refused with a non-zero tail only */
		big.more = more;
		errno = 0;
		struct cn_netdev *c = cn_netdev_create(&big.p);
		assert_int_equal(c == NULL, more != 0);
		if (more)
			assert_int_equal(errno, EINVAL);
		cn_netdev_destroy(c);
	}
	assert_null(cn_netdev_create(&(struct cn_netdev_params){.size = 2}));
	assert_null(cn_peer_create(a, &(struct cn_peer_params){.size = 2}));
	assert_null(cn_link_create(a, b, &(struct cn_link_params){.size = 2}));
	cn_netdev_destroy(a);
	cn_netdev_destroy(b);
}

/* Receive @p n bytes from a TCP source peer into @p rbuf (the peer
 * writing up to @p burst frames per round), check every byte against the
 * peer's stream and that nothing was dropped. */
static void receive_source(struct host *h, struct cn_peer *src, uint8_t *rbuf, uint32_t n,
			   unsigned burst)
{
	uint32_t got = 0;

	for (unsigned it = 0; it < 100000 && got < n; it++) {
		cn_peer_send(src, burst);
		cn_netdev_poll(h->dev, h->net, it);
		cn_netdev_nic_tx(h->dev);
		got += (uint32_t)cn_tcp_recv(h->tcb, rbuf + got, n - got, it);
		if (it % 16 == 0)
			cn_net_timer(h->net, it);
	}
	assert_int_equal(got, n);
	for (uint32_t i = 0; i < n; i++)
		if (rbuf[i] != cn_peer_stream_byte(src, i))
			fail_msg("stream byte %u", i);
	assert_int_equal(cn_net_drops(h->net), 0);
}

/* Peers: a TCP sink ACKing every other segment, then a TCP source; the
 * stack's ACK count and the stream contents checked. */
static void test_peers(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct host h;
	host_init(f, &h, MAC_A, IP_A, CN_DCA_INJECT, 64, NULL);
	struct cn_tcp_params tp = tcp_params(true, 1000, 2000);
	tp.csum = CN_TCP_CSUM_OFFLOAD;
	tp.ts = false;
	tp.snd_wscale = 0;
	h.tcb = cn_tcp_open(h.net, &tp);
	struct cn_peer_params pp = {.kind = CN_PEER_TCP_SINK, .laddr = IP_B, .raddr = IP_A,
				    .lport = CN_BE16(2222), .rport = CN_BE16(1111), .iss = 2000, .irs = 1000,
				    .window = 65535, .verify = true};
	memcpy(pp.lmac, MAC_B, 6);
	memcpy(pp.rmac, MAC_A, 6);
	struct cn_peer *sink = cn_peer_create(h.dev, &pp);
	assert_non_null(sink);
	static uint8_t data[1 << 20];
	for (uint32_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i ^ (i >> 9));
	uint32_t sent = 0;
	for (unsigned it = 0; it < 100000 && cn_peer_stats(sink)->bytes_in < sizeof(data); it++) {
		if (sent < sizeof(data))
			sent += (uint32_t)cn_tcp_send(h.tcb, data + sent, sizeof(data) - sent, it);
		cn_netdev_nic_tx(h.dev);
		cn_netdev_poll(h.dev, h.net, it);
		if (it % 64 == 63)
			cn_peer_flush(sink);
	}
	const struct cn_peer_stats *ps = cn_peer_stats(sink);
	assert_int_equal(ps->bytes_in, sizeof(data));
	assert_int_equal(ps->bad_csum, 0);
	assert_true(ps->hash == fnv(0xcbf29ce484222325ull, data, sizeof(data)));
	/* every other segment ACKed (+ flushes) */
	uint64_t segs = cn_tcp_stats(h.tcb)->segs_out;
	assert_true(ps->acks_out >= segs / 2 && ps->acks_out <= segs / 2 + 1 + 100000 / 64);
	assert_true(cn_tcp_stats(h.tcb)->hp_ack > 0);
	cn_peer_destroy(sink);
	cn_tcp_close(h.tcb);

	/* TCP source into the stack, receive by reference. */
	tp = tcp_params(true, 1000, 2000);
	tp.rcv_wscale = 0;
	h.tcb = cn_tcp_open(h.net, &tp);
	pp.kind = CN_PEER_TCP_SOURCE;
	pp.mss = 1460;
	pp.ts = true;
	struct cn_peer *src = cn_peer_create(h.dev, &pp);
	assert_non_null(src);
	static uint8_t rbuf[1 << 20];
	receive_source(&h, src, rbuf, sizeof(rbuf), 32);
	assert_true(cn_tcp_stats(h.tcb)->hp_data * 10 > cn_tcp_stats(h.tcb)->segs_in * 9);
	cn_peer_destroy(src);
	cn_tcp_close(h.tcb);
	h.tcb = NULL;
	host_fini(&h);
}

/* A parameter's bound: @p max + 1 refused with EINVAL, @p max accepted. */
static void check_param_max(struct cn_netdev_params *dp, uint32_t *field, uint32_t max)
{
	struct cn_netdev *d;

	*field = max + 1;
	errno = 0;
	assert_null(cn_netdev_create(dp));
	assert_int_equal(errno, EINVAL);
	*field = max;
	d = cn_netdev_create(dp);
	assert_non_null(d);
	cn_netdev_destroy(d);
}

/* PREFETCH mode: the distance and hint are validated at create, and every
 * distance, hint and batch delivers the same bytes as the stream's
 * generator (the prefetches read nothing the stack sees). */
static void test_prefetch_params(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_netdev_params dp = {.ring_size = 16, .dca = CN_DCA_PREFETCH, .mpool = f->mp,
				      .cpool = f->cp};
	struct cn_netdev *d;

	dp.prefetch_k = 16; /* not below the ring size */
	errno = 0;
	assert_null(cn_netdev_create(&dp));
	assert_int_equal(errno, EINVAL);
	dp.ring_size = 1024;
	check_param_max(&dp, &dp.prefetch_k, CN_NETDEV_PREFETCH_K_MAX);
	check_param_max(&dp, &dp.prefetch_pace, CN_NETDEV_PREFETCH_PACE_MAX);
	dp.prefetch_pace = 0;
	dp.prefetch_k = 1;
	dp.prefetch_hint = (enum cn_prefetch_hint)(CN_PREFETCH_NTA + 1);
	errno = 0;
	assert_null(cn_netdev_create(&dp));
	assert_int_equal(errno, EINVAL);
	/* the default distance shrinks to fit a small ring */
	dp.prefetch_hint = CN_PREFETCH_L2;
	dp.prefetch_k = 0;
	dp.ring_size = 4;
	d = cn_netdev_create(&dp);
	assert_non_null(d);
	uint8_t frame[200];
	struct cn_mbuf *m[4];
	for (int i = 0; i < 4; i++) {
		memset(frame, 0x30 + i, sizeof(frame));
		assert_int_equal(cn_netdev_nic_rx(d, frame, (uint32_t)(60 + 40 * i)), 0);
	}
	/* rx_burst (no stack) in PREFETCH mode: frames whole and in order */
	assert_int_equal(cn_netdev_rx_burst(d, m, 4), 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(m[i]->len, 60 + 40 * i);
		for (uint32_t b = 0; b < m[i]->len; b++)
			assert_int_equal(m[i]->data[b], 0x30 + i);
		cn_mbuf_free(m[i]);
	}
	cn_netdev_destroy(d);
	assert_string_equal(cn_prefetch_hint_name(CN_PREFETCH_L1), "l1");
	assert_string_equal(cn_prefetch_hint_name(CN_PREFETCH_NTA), "nta");
}

/* Copybreak: frames up to the threshold arrive in small mbufs holding the
 * same bytes, their clusters stay posted (no cluster leaves the pool),
 * larger frames and a device with copybreak off hand up the cluster. */
static void test_copybreak(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_netdev_params dp = {.ring_size = 8, .batch = 8, .mpool = f->mp, .cpool = f->cp};
	struct cn_mbuf_pool_stats c0, c1;
	struct cn_mbuf *m[8];
	uint8_t frame[1514];

	for (int off = 0; off < 2; off++) {
		dp.copybreak = off ? CN_NETDEV_COPYBREAK_OFF : 0;
		struct cn_netdev *d = cn_netdev_create(&dp);
		assert_non_null(d);
		cn_mbuf_pool_stats(f->cp, &c0);
		static const uint32_t lens[] = {54, 60, 66, 128, 129, 1514};
		for (unsigned i = 0; i < 6; i++) {
			for (uint32_t b = 0; b < lens[i]; b++)
				frame[b] = (uint8_t)(b * 7 + i);
			assert_int_equal(cn_netdev_nic_rx(d, frame, lens[i]), 0);
		}
		assert_int_equal(cn_netdev_rx_burst(d, m, 8), 6);
		cn_mbuf_pool_stats(f->cp, &c1);
		for (unsigned i = 0; i < 6; i++) {
			bool small = !off && lens[i] <= CN_NETDEV_COPYBREAK_DEFAULT;
			assert_int_equal(m[i]->len, lens[i]);
			if ((m[i]->shared == NULL) != small)
				fail_msg("off %d frame %u (%u bytes): small %d", off, i, lens[i], (int)small);
			assert_int_equal((uintptr_t)(m[i]->data + 14) % 4, 0);
			for (uint32_t b = 0; b < lens[i]; b++)
				assert_int_equal(m[i]->data[b], (uint8_t)(b * 7 + i));
			cn_mbuf_free(m[i]);
		}
		assert_int_equal(cn_netdev_stats(d)->rx_copybreak, off ? 0 : 4);
		/* clusters handed up were replaced; copied ones never left */
		assert_int_equal(c1.in_use, c0.in_use + (off ? 6 : 2));
		cn_netdev_destroy(d);
	}
}

/* Paced PREFETCH: the stream asks for each payload line of the poll's
 * frames once, in order, pace lines per frame handed up: min(pace x
 * frames, payload lines) in all, the payload lines of a frame being those
 * from the line after its first two to its last byte (none for a frame of
 * at most 128 bytes). The frames are no TCP/IP (the stack drops them):
 * only the driver is under test. */
static void test_prefetch_pace_lines(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static const uint32_t lens[] = {1514, 100, 129, 600, 1514, 60, 1000, 1514, 191, 192};
	const unsigned n = sizeof(lens) / sizeof(lens[0]);
	uint8_t frame[1514];
	struct cn_mbuf *m;
	uintptr_t r;
	uint64_t all = 0;

	memset(frame, 0xa5, sizeof(frame));
	for (uint32_t pace = 1; pace <= 64; pace *= 4) {
		struct cn_netdev_params dp = {.ring_size = 64, .batch = 32, .dca = CN_DCA_PREFETCH,
					      .prefetch_pace = pace, .mpool = f->mp, .cpool = f->cp};
		struct cn_netdev *d = cn_netdev_create(&dp);
		assert_non_null(d);
		struct cn_net_params np = {.addr = IP_A, .mpool = f->mp, .cpool = f->cp,
					   .xmit = cn_netdev_xmit_hook, .xmit_arg = d};
		memcpy(np.mac, MAC_A, 6);
		struct cn_net *net = cn_net_create(&np);
		assert_non_null(net);
		/* where a frame starts in its line (every cluster alike) */
		assert_int_equal(cn_netdev_nic_rx(d, frame, 1514), 0);
		assert_int_equal(cn_netdev_rx_burst(d, &m, 1), 1);
		r = (uintptr_t)m->data % 64;
		cn_mbuf_free(m);
		all = 0;
		for (unsigned i = 0; i < n; i++) {
			uintptr_t lo = (r + 128) & ~(uintptr_t)63, hi = r + lens[i];
			all += lens[i] > 128 ? (hi - lo + 63) / 64 : 0;
			assert_int_equal(cn_netdev_nic_rx(d, frame, lens[i]), 0);
		}
		assert_int_equal(cn_netdev_poll(d, net, 0), n);
		assert_int_equal(cn_netdev_stats(d)->rx_pace_lines,
				 (uint64_t)pace * n < all ? (uint64_t)pace * n : all);
		host_fini(&(struct host){.dev = d, .net = net});
	}
	/* 22 lines of each 1514-byte frame at the 2-byte offset, and so on:
	 * the last pace (64) took them all */
	assert_true(all > 64);
}

static void test_prefetch_stream(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static const uint32_t ks[] = {1, 3, 8, 64, 255};
	static const uint32_t batches[] = {1, 5, 32};
	static uint8_t rbuf[256 << 10];

	/* 1460-byte segments, and 48-byte ones (114-byte frames: copybreak
	 * copies them at take, where PREFETCH looks ahead for small frames) */
	for (unsigned ki = 0; ki < 2 * sizeof(ks) / sizeof(ks[0]); ki++)
		for (unsigned bi = 0; bi < sizeof(batches) / sizeof(batches[0]); bi++) {
			uint16_t mss = ki < sizeof(ks) / sizeof(ks[0]) ? 1460 : 48;
			uint32_t want = mss == 1460 ? sizeof(rbuf) : sizeof(rbuf) / 8;
			enum cn_prefetch_hint hint = (enum cn_prefetch_hint)((ki + bi) % 4);
			struct cn_netdev_params dp = {.ring_size = 256, .batch = batches[bi],
						      .dca = CN_DCA_PREFETCH,
						      .prefetch_k = ks[ki % (sizeof(ks) / sizeof(ks[0]))],
						      .prefetch_hint = hint, .mpool = f->mp,
						      .cpool = f->cp,
						      /* unpaced, paced, one line a frame */
						      .prefetch_pace = (ki + bi) % 3 == 0 ? 0
								       : (ki + bi) % 3 == 1 ? 12 : 1};
			struct host h;
			h.dev = cn_netdev_create(&dp);
			assert_non_null(h.dev);
			struct cn_net_params np = {.addr = IP_A, .mpool = f->mp, .cpool = f->cp,
						   .xmit = cn_netdev_xmit_hook, .xmit_arg = h.dev};
			memcpy(np.mac, MAC_A, 6);
			h.net = cn_net_create(&np);
			assert_non_null(h.net);
			struct cn_tcp_params tp = tcp_params(true, 1000, 2000);
			tp.rcv_wscale = 0;
			h.tcb = cn_tcp_open(h.net, &tp);
			assert_non_null(h.tcb);
			struct cn_peer_params pp = {.kind = CN_PEER_TCP_SOURCE, .laddr = IP_B,
						    .raddr = IP_A, .lport = CN_BE16(2222), .rport = CN_BE16(1111),
						    .iss = 2000, .irs = 1000, .mss = mss, .ts = true};
			memcpy(pp.lmac, MAC_B, 6);
			memcpy(pp.rmac, MAC_A, 6);
			struct cn_peer *src = cn_peer_create(h.dev, &pp);
			assert_non_null(src);
			receive_source(&h, src, rbuf, want, 200);
			if (mss == 48)
				assert_true(cn_netdev_stats(h.dev)->rx_copybreak > 0);
			/* the paced stream asked for lines of the 1460-byte
			 * segments' payloads; 114-byte frames have none past
			 * their two header lines; unpaced counts none */
			if (dp.prefetch_pace && mss == 1460)
				assert_true(cn_netdev_stats(h.dev)->rx_pace_lines > 0);
			else
				assert_int_equal(cn_netdev_stats(h.dev)->rx_pace_lines, 0);
			cn_peer_destroy(src);
			cn_tcp_close(h.tcb);
			host_fini(&h);
		}
}

static unsigned udp_got;
static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)arg;
	(void)pi;
	udp_got++;
	cn_mbuf_free_chain(m);
}

/* A UDP source peer on the other side of h (B:53 -> A:5353, 1472-byte
 * datagrams, checksummed) and our socket for it, delivering to @p rx. */
static struct cn_peer *udp_source_pair(struct host *h, cn_udp_rx_fn rx, struct cn_udp_sock **sock,
				       struct cn_peer_params *ppo)
{
	struct cn_peer_params pp = {.kind = CN_PEER_UDP_SOURCE, .laddr = IP_B, .raddr = IP_A,
				    .lport = CN_BE16(53), .rport = CN_BE16(5353), .mss = 1472, .csum = true};
	memcpy(pp.lmac, MAC_B, 6);
	memcpy(pp.rmac, MAC_A, 6);
	struct cn_peer *src = cn_peer_create(h->dev, &pp);
	struct cn_udp_params up = {.lport = CN_BE16(5353), .raddr = IP_B, .rport = CN_BE16(53), .tx_csum = true,
				   .rx_csum = true, .rx = rx};
	memcpy(up.rmac, MAC_B, 6);
	*sock = cn_udp_open(h->net, &up);
	if (ppo)
		*ppo = pp;
	return src;
}

static void test_udp_peers(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct host h;
	host_init(f, &h, MAC_A, IP_A, CN_DCA_FLUSH, 32, NULL);
	struct cn_peer_params pp;
	struct cn_udp_sock *s;
	struct cn_peer *src = udp_source_pair(&h, udp_rx, &s, &pp);
	assert_non_null(s);
	udp_got = 0;
	for (int i = 0; i < 100; i++) {
		cn_peer_send(src, 10);
		cn_netdev_poll(h.dev, h.net, 0);
	}
	assert_int_equal(udp_got, 1000);
	cn_peer_destroy(src);
	pp.kind = CN_PEER_UDP_SINK;
	pp.verify = true;
	struct cn_peer *sink = cn_peer_create(h.dev, &pp);
	static uint8_t d[1000];
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(cn_udp_send(s, d, sizeof(d), NULL, NULL), 0);
		cn_netdev_nic_tx(h.dev);
		cn_netdev_tx_reap(h.dev);
	}
	assert_int_equal(cn_peer_stats(sink)->frames_in, 1000);
	assert_int_equal(cn_peer_stats(sink)->bytes_in, 1000 * 1000);
	assert_int_equal(cn_peer_stats(sink)->bad_csum, 0);
	cn_peer_destroy(sink);
	host_fini(&h);
}

/* pcap: global header and records as the classic format defines them
 * (https://wiki.wireshark.org/Development/LibpcapFileFormat), and the
 * frames as captured in both directions. */
static void test_pcap(void **state)
{
	struct cn_test_pools_fx *f = *state;
	char path[] = "/tmp/cn_test_netdev_XXXXXX";
	struct cn_pcap *pc = cn_test_pcap_open(path);
	struct host a, b;
	host_init(f, &a, MAC_A, IP_A, CN_DCA_INJECT, 32, pc);
	host_init(f, &b, MAC_B, IP_B, CN_DCA_INJECT, 32, NULL);
	cn_netdev_connect(a.dev, b.dev);
	struct cn_tcp_params pa = tcp_params(true, 1, 2), pb = tcp_params(false, 1, 2);
	a.tcb = cn_tcp_open(a.net, &pa);
	b.tcb = cn_tcp_open(b.net, &pb);
	stream(&a, &b, NULL, 100000);
	uint64_t n = cn_pcap_count(pc);
	host_fini(&a);
	host_fini(&b);
	assert_int_equal(cn_pcap_close(pc), 0);
	assert_true(n > 70); /* ~69 data segments out, ACKs in */
	FILE *fp = fopen(path, "rb");
	uint32_t gh[6];
	assert_int_equal(fread(gh, 4, 6, fp), 6);
	assert_int_equal(gh[0], 0xa1b2c3d4u);
	assert_int_equal(gh[1], 2u | 4u << 16);
	assert_int_equal(gh[4], 65535);
	assert_int_equal(gh[5], 1);
	uint64_t recs = 0, bytes = 0;
	uint32_t rh[4];
	static uint8_t fr[65536];
	while (fread(rh, 4, 4, fp) == 4) {
		assert_int_equal(rh[2], rh[3]);
		assert_true(rh[2] >= 54 && rh[2] <= 1514);
		assert_int_equal(fread(fr, 1, rh[2], fp), rh[2]);
		assert_int_equal(fr[12], 0x08);
		recs++;
		bytes += rh[2];
	}
	fclose(fp);
	unlink(path);
	assert_int_equal(recs, n);
	assert_true(bytes > 100000);
}

/* ---------------------------------------------------------------- split */

/* Split on and off carry the same stream (hash of what arrived equal, and
 * equal to the generator's), in every DCA mode and checksum mode; with
 * split on, the data segments arrive as chains read in place (rx_chain,
 * no join, no drop, header prediction on nearly all of them) and the
 * pure ACKs whole in the header buffer. */
static void test_split_back_to_back(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static const enum cn_tcp_csum csums[] = {CN_TCP_CSUM_OFFLOAD, CN_TCP_CSUM_STORED,
						 CN_TCP_CSUM_FUSED, CN_TCP_CSUM_SEPARATE};
	for (unsigned c = 0; c < 4; c++)
		for (int dca = 0; dca < 3; dca++) {
			uint64_t h[2];
			for (int split = 0; split < 2; split++) {
				struct host a, b;
				g_split = split;
				host_init(f, &a, MAC_A, IP_A, (enum cn_dca)dca, 8, NULL);
				host_init(f, &b, MAC_B, IP_B, (enum cn_dca)dca, 32, NULL);
				g_split = false;
				cn_netdev_connect(a.dev, b.dev);
				struct cn_tcp_params pa = tcp_params(true, 0xfffff000u, 77),
						     pb = tcp_params(false, 0xfffff000u, 77);
				pa.csum = csums[c];
				pa.sndbuf = c == 1 ? CN_SOCKBUF_RING : CN_SOCKBUF_CHAIN;
				pa.ts = pb.ts = (c & 1) != 0;
				a.tcb = cn_tcp_open(a.net, &pa);
				b.tcb = cn_tcp_open(b.net, &pb);
				assert_non_null(a.tcb);
				assert_non_null(b.tcb);
				h[split] = stream(&a, &b, NULL, 1 << 20);
				const struct cn_netdev_stats *ds = cn_netdev_stats(b.dev);
				const struct cn_net_stats *ns = cn_net_stats(b.net);
				const struct cn_tcp_stats *sb = cn_tcp_stats(b.tcb);
				assert_int_equal(cn_net_drops(b.net), 0);
				assert_int_equal(cn_net_drops(a.net), 0);
				assert_int_equal(ns->rx_chain_join, 0);
				assert_true(sb->hp_data * 10 > sb->segs_in * 9);
				if (split) {
					assert_true(ds->rx_split >= (1u << 20) / 1460);
					assert_true(ns->rx_chain >= (1u << 20) / 1460);
					assert_int_equal(ds->rx_nosplit_parse + ds->rx_nosplit_hdr_long, 0);
					assert_true(cn_netdev_stats(a.dev)->rx_split_hdr_only > 0);
					assert_int_equal(cn_netdev_stats(a.dev)->rx_split, 0);
				} else {
					assert_int_equal(ds->rx_split + ds->rx_split_hdr_only, 0);
					assert_int_equal(ns->rx_chain, 0);
				}
				host_fini(&a);
				host_fini(&b);
			}
			assert_true(h[0] == h[1]);
		}
}

/* The lossy link, split off and then on at both ends (same seed,
 * so the same losses): 32 MB intact either way, the received streams'
 * hashes equal; split frames corrupted anywhere (headers or payload)
 * dropped by a check, reordered ones queued by the full path. */
static void test_split_lossy_link(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_link_params lp = {.loss = 0.01, .reorder = 0.01, .duplicate = 0.001,
				    .corrupt = 0.002, .rng_start = 7};
	uint64_t h[2];
	for (int split = 0; split < 2; split++) {
		struct host a, b;
		g_split = split;
		host_init(f, &a, MAC_A, IP_A, CN_DCA_INJECT, 32, NULL);
		host_init(f, &b, MAC_B, IP_B, CN_DCA_PREFETCH, 32, NULL);
		g_split = false;
		struct cn_link *l = cn_link_create(a.dev, b.dev, &lp);
		assert_non_null(l);
		struct cn_tcp_params pa = tcp_params(true, 5, 6), pb = tcp_params(false, 5, 6);
		a.tcb = cn_tcp_open(a.net, &pa);
		b.tcb = cn_tcp_open(b.net, &pb);
		h[split] = stream(&a, &b, l, (uint64_t)32 << 20);
		assert_true(cn_link_stats(l)->corrupted > 0);
		assert_true(cn_net_drops(a.net) + cn_net_drops(b.net) > 0);
		assert_true(cn_tcp_stats(b.tcb)->ooo_queued > 0);
		if (split) {
			assert_true(cn_netdev_stats(b.dev)->rx_split > 0);
			assert_true(cn_net_stats(b.net)->rx_chain > 0);
		} else {
			assert_int_equal(cn_net_stats(b.net)->rx_chain, 0);
		}
		cn_link_destroy(l);
		host_fini(&a);
		host_fini(&b);
	}
	assert_true(h[0] == h[1]);
}

/* A frame from B (10.0.0.2:2222) to A (10.0.0.1:1111): TCP with @p topt
 * bytes of options (a multiple of 4: NOP NOP TS first when >= 12, then
 * NOPs), IPv4 with @p iopt bytes of options, @p pay bytes of payload, or
 * UDP (@p udp) with @p pay bytes; checksums right. @return its length. */
static uint32_t mk_frame(uint8_t *fr, bool udp, uint32_t iopt, uint32_t topt, uint32_t pay,
			 uint32_t seq, uint32_t ack)
{
	uint32_t ihl = 20 + iopt, l4h = udp ? 8 : 20 + topt, len = 14 + ihl + l4h + pay;
	uint8_t *ip = fr + 14, *l4 = ip + ihl;
	memcpy(fr, MAC_A, 6);
	memcpy(fr + 6, MAC_B, 6);
	fr[12] = 0x08, fr[13] = 0x00;
	memset(ip, 0, ihl);
	ip[0] = (uint8_t)(0x40 | ihl / 4);
	ip[2] = (uint8_t)((len - 14) >> 8), ip[3] = (uint8_t)(len - 14);
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = udp ? CN_IPV4_PROTO_UDP : CN_IPV4_PROTO_TCP;
	cn_be32_t sa = IP_B, da = IP_A;
	memcpy(ip + 12, &sa, 4);
	memcpy(ip + 16, &da, 4);
	for (uint32_t i = 20; i < ihl; i++)
		ip[i] = 1; /* IP NOP options */
	uint16_t c = cn_csum(ip, ihl);
	memcpy(ip + 10, &c, 2);
	memset(l4, 0, l4h);
	l4[0] = 2222 >> 8, l4[1] = 2222 & 0xff, l4[2] = 1111 >> 8, l4[3] = 1111 & 0xff;
	if (udp) {
		l4[4] = (uint8_t)((8 + pay) >> 8), l4[5] = (uint8_t)(8 + pay);
	} else {
		uint32_t s = cn_hton32(seq), a = cn_hton32(ack);
		memcpy(l4 + 4, &s, 4);
		memcpy(l4 + 8, &a, 4);
		l4[12] = (uint8_t)((l4h / 4) << 4);
		l4[13] = CN_TCP_ACK;
		l4[14] = 0xff, l4[15] = 0xff;
		for (uint32_t i = 20; i < l4h; i++)
			l4[i] = 1; /* NOP */
		if (topt >= 12) {
			l4[22] = 8, l4[23] = 10; /* TS, val/ecr 0 */
		}
	}
	for (uint32_t i = 0; i < pay; i++)
		l4[l4h + i] = (uint8_t)(i * 13 + 5);
	uint32_t sum = cn_csum_partial(l4, l4h + pay,
				       cn_csum_pseudo_ipv4(sa, da, ip[9], (uint16_t)(l4h + pay)));
	c = (uint16_t)~cn_csum_fold(sum);
	if (udp && c == 0)
		c = 0xffff;
	memcpy(l4 + (udp ? 6 : 16), &c, 2);
	return len;
}

/* The NIC's placement, frame by frame: where the headers end for TCP and
 * IPv4 options, UDP, header-only frames (with and without Ethernet
 * padding), frames it cannot parse and headers longer than the header
 * buffer; the bytes handed up are the frame's in every DCA mode, the
 * capture holds the frames as they arrived, and every frame is counted
 * once in the split counters. */
static void test_split_frames(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static uint8_t fr[16][1600];
	uint32_t len[16], hl[16]; /* hl: header mbuf bytes; 0 = not split */
	bool hbo[16] = {0};
	unsigned n = 0;

	len[n] = mk_frame(fr[n], false, 0, 0, 100, 1, 1), hl[n] = 54, n++;
	len[n] = mk_frame(fr[n], false, 0, 12, 1448, 1, 1), hl[n] = 66, n++;
	len[n] = mk_frame(fr[n], false, 0, 40, 1, 1, 1), hl[n] = 94, n++;   /* doff 15 */
	len[n] = mk_frame(fr[n], false, 40, 40, 7, 1, 1), hl[n] = 134, n++; /* IHL 15, doff 15 */
	len[n] = mk_frame(fr[n], false, 4, 12, 1000, 1, 1), hl[n] = 70, n++;
	len[n] = mk_frame(fr[n], true, 0, 0, 1472, 0, 0), hl[n] = 42, n++;
	len[n] = mk_frame(fr[n], true, 0, 0, 1, 0, 0), hl[n] = 42, n++;
	len[n] = mk_frame(fr[n], false, 0, 12, 0, 1, 1), hl[n] = 66, hbo[n] = true, n++;
	len[n] = mk_frame(fr[n], false, 0, 0, 0, 1, 1) + 6, hl[n] = 60, hbo[n] = true, n++; /* padded */
	len[n] = mk_frame(fr[n], true, 0, 0, 0, 0, 0), hl[n] = 42, hbo[n] = true, n++;
	/* not split: ARP, a fragment, TCP cut inside its header, a data
	 * offset past the frame, ICMP */
	len[n] = 42, memset(fr[n], 0xab, 42), fr[n][12] = 0x08, fr[n][13] = 0x06, hl[n] = 0, n++;
	len[n] = mk_frame(fr[n], false, 0, 0, 100, 1, 1), fr[n][14 + 6] |= 0x20, hl[n] = 0, n++;
	len[n] = mk_frame(fr[n], false, 0, 0, 0, 1, 1) - 10, hl[n] = 0, n++;
	len[n] = mk_frame(fr[n], false, 0, 0, 20, 1, 1), fr[n][14 + 20 + 12] = 0xf0, hl[n] = 0, n++;
	len[n] = mk_frame(fr[n], false, 0, 0, 64, 1, 1), fr[n][14 + 9] = 1, hl[n] = 0, n++;
	assert_true(n <= 16);

	/* too small a header buffer is refused */
	struct cn_netdev_params dp = {.ring_size = 16, .batch = 16, .mpool = f->mp, .cpool = f->cp,
				      .split = true, .split_hdr_size = CN_NETDEV_SPLIT_HDR_MIN - 1,
				      .copybreak = CN_NETDEV_COPYBREAK_OFF};
	errno = 0;
	assert_null(cn_netdev_create(&dp));
	assert_int_equal(errno, EINVAL);

	for (int hsz = 0; hsz < 2; hsz++)
		for (int dca = 0; dca < 3; dca++) {
			char path[] = "/tmp/cn_test_split_XXXXXX";
			cn_test_tmpfile(path);
			dp.split_hdr_size = hsz ? 64 : 0; /* 64: 66-byte and longer headers do not fit */
			dp.dca = (enum cn_dca)dca;
			dp.pcap = cn_pcap_open(path, 0);
			struct cn_netdev *d = cn_netdev_create(&dp);
			assert_non_null(d);
			struct cn_mbuf_pool_stats c0, c1;
			cn_mbuf_pool_stats(f->cp, &c0);
			for (unsigned i = 0; i < n; i++)
				assert_int_equal(cn_netdev_nic_rx(d, fr[i], len[i]), 0);
			struct cn_mbuf *m[16];
			assert_int_equal(cn_netdev_rx_burst(d, m, 16), n);
			cn_mbuf_pool_stats(f->cp, &c1);
			uint64_t split = 0, hdr_only = 0, parse = 0, longh = 0, clusters = 0;
			for (unsigned i = 0; i < n; i++) {
				uint32_t want = hl[i];
				bool too_long = want > (hsz ? 64u : 190u);
				uint8_t buf[1600];
				assert_int_equal(m[i]->pkt_len, len[i]);
				assert_int_equal(cn_mbuf_copy_out(m[i], 0, len[i], buf), 0);
				assert_memory_equal(buf, fr[i], len[i]);
				assert_int_equal(cn_mbuf_check(m[i]), 0);
				if (want == 0 || too_long) {
					/* whole, in the cluster */
					assert_null(m[i]->next);
					assert_non_null(m[i]->shared);
					clusters++;
					if (want == 0)
						parse++;
					else
						longh++;
				} else if (hbo[i]) {
					assert_null(m[i]->next);
					assert_null(m[i]->shared); /* the header buffer */
					assert_int_equal(m[i]->len, len[i]);
					hdr_only++;
				} else {
					assert_non_null(m[i]->next);
					assert_null(m[i]->shared);
					assert_int_equal(m[i]->len, want);
					assert_int_equal(m[i]->next->len, len[i] - want);
					assert_non_null(m[i]->next->shared);
					/* the payload at its unsplit place: room for the headers */
					assert_int_equal(m[i]->next->data - m[i]->next->buf, 2 + want);
					assert_int_equal((uintptr_t)(m[i]->data + 14) % 4, 0);
					clusters++;
					split++;
				}
				cn_mbuf_free_chain(m[i]);
			}
			const struct cn_netdev_stats *st = cn_netdev_stats(d);
			assert_int_equal(st->rx_split, split);
			assert_int_equal(st->rx_split_hdr_only, hdr_only);
			assert_int_equal(st->rx_nosplit_parse, parse);
			assert_int_equal(st->rx_nosplit_hdr_long, longh);
			assert_int_equal(st->rx_frames, n);
			assert_true(split > 0 && hdr_only > 0 && parse > 0 && (hsz == 0 || longh > 0));
			/* clusters of header-only frames stayed posted */
			assert_int_equal(c1.in_use, c0.in_use + clusters);
			assert_int_equal(cn_pcap_close(dp.pcap), 0);
			FILE *fp = fopen(path, "rb");
			uint32_t gh[6], rh[4];
			static uint8_t rec[2048];
			assert_int_equal(fread(gh, 4, 6, fp), 6);
			for (unsigned i = 0; i < n; i++) {
				assert_int_equal(fread(rh, 4, 4, fp), 4);
				assert_int_equal(rh[2], len[i]);
				assert_int_equal(fread(rec, 1, rh[2], fp), rh[2]);
				assert_memory_equal(rec, fr[i], len[i]);
			}
			fclose(fp);
			unlink(path);
			dp.pcap = NULL;
			cn_netdev_destroy(d);
		}

	/* copybreak with split: a small split frame is copied from both
	 * buffers into one small mbuf; both stay posted */
	dp.copybreak = 0;
	dp.split_hdr_size = 0;
	dp.dca = CN_DCA_PREFETCH;
	struct cn_netdev *d = cn_netdev_create(&dp);
	assert_non_null(d);
	uint8_t small[200];
	uint32_t sl = mk_frame(small, false, 0, 12, 50, 1, 1); /* 116 bytes */
	struct cn_mbuf_pool_stats c0, c1;
	cn_mbuf_pool_stats(f->cp, &c0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(cn_netdev_nic_rx(d, small, sl), 0);
	struct cn_mbuf *m[4];
	assert_int_equal(cn_netdev_rx_burst(d, m, 4), 3);
	cn_mbuf_pool_stats(f->cp, &c1);
	assert_int_equal(c1.in_use, c0.in_use);
	for (int i = 0; i < 3; i++) {
		assert_null(m[i]->next);
		assert_int_equal(m[i]->len, sl);
		assert_memory_equal(m[i]->data, small, sl);
		cn_mbuf_free(m[i]);
	}
	assert_int_equal(cn_netdev_stats(d)->rx_copybreak, 3);
	assert_int_equal(cn_netdev_stats(d)->rx_split, 3);
	cn_netdev_destroy(d);
}

/* Zero-copy peers with split on (commit copies the headers to the header
 * buffer): a TCP source with and without timestamps in every DCA mode,
 * bytes checked, data frames split; a UDP source, payload by reference. */
static unsigned udp_split_got, udp_split_chained;
static void udp_split_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)arg;
	udp_split_got++;
	if (m->next || m->len != pi->pay_len || pi->frame[12] != 0x08)
		udp_split_chained++;
	cn_mbuf_free_chain(m);
}

static void test_split_peers(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static uint8_t rbuf[1 << 19];

	/* dca 3: PREFETCH, paced */
	for (int dca = 0; dca < 4; dca++)
		for (int ts = 0; ts < 2; ts++) {
			struct host h;
			g_split = true;
			g_pace = dca == 3 ? 12 : 0;
			host_init(f, &h, MAC_A, IP_A, dca == 3 ? CN_DCA_PREFETCH : (enum cn_dca)dca, 16,
				  NULL);
			g_split = false;
			g_pace = 0;
			struct cn_tcp_params tp = tcp_params(true, 1000, 2000);
			tp.rcv_wscale = 0;
			tp.ts = ts;
			h.tcb = cn_tcp_open(h.net, &tp);
			struct cn_peer_params pp = {.kind = CN_PEER_TCP_SOURCE, .laddr = IP_B,
						    .raddr = IP_A, .lport = CN_BE16(2222), .rport = CN_BE16(1111),
						    .iss = 2000, .irs = 1000, .mss = 1460, .ts = ts};
			memcpy(pp.lmac, MAC_B, 6);
			memcpy(pp.rmac, MAC_A, 6);
			struct cn_peer *src = cn_peer_create(h.dev, &pp);
			assert_non_null(src);
			receive_source(&h, src, rbuf, sizeof(rbuf), 32);
			assert_true(cn_netdev_stats(h.dev)->rx_split >= sizeof(rbuf) / 1460);
			assert_true(cn_net_stats(h.net)->rx_chain >= sizeof(rbuf) / 1460);
			assert_int_equal(cn_net_stats(h.net)->rx_chain_join, 0);
			assert_true(cn_tcp_stats(h.tcb)->hp_data * 10 > cn_tcp_stats(h.tcb)->segs_in * 9);
			/* split: the stream runs over the clusters' payloads */
			if (dca == 3)
				assert_true(cn_netdev_stats(h.dev)->rx_pace_lines > 0);
			cn_peer_destroy(src);
			cn_tcp_close(h.tcb);
			h.tcb = NULL;
			host_fini(&h);
		}

	struct host h;
	g_split = true;
	host_init(f, &h, MAC_A, IP_A, CN_DCA_FLUSH, 32, NULL);
	g_split = false;
	struct cn_udp_sock *us;
	struct cn_peer *src = udp_source_pair(&h, udp_split_rx, &us, NULL);
	assert_non_null(us);
	udp_split_got = udp_split_chained = 0;
	for (int i = 0; i < 50; i++) {
		cn_peer_send(src, 10);
		cn_netdev_poll(h.dev, h.net, 0);
	}
	assert_int_equal(udp_split_got, 500);
	assert_int_equal(udp_split_chained, 0);
	assert_int_equal(cn_netdev_stats(h.dev)->rx_split, 500);
	assert_int_equal(cn_net_stats(h.net)->rx_chain, 500);
	assert_int_equal(cn_net_drops(h.net), 0);
	cn_peer_destroy(src);
	host_fini(&h);
}

/* Malformed frames with split on: each is fed to a split device and to
 * one without split, and the two stacks (same connection, same state)
 * must give the same verdict, frame by frame, and end with equal drop
 * counters: truncation at every length, every IHL, every data offset,
 * bad total lengths, random corruption; with a header buffer that takes
 * every header and one that is too small for most. */
static void test_split_malformed(void **state)
{
	struct cn_test_pools_fx *f = *state;
	static uint8_t base[1600], fr[1600];

	for (int hsz = 0; hsz < 2; hsz++) {
		struct host hs[2];
		for (int k = 0; k < 2; k++) {
			struct cn_netdev_params dp = {.ring_size = 16, .batch = 16, .mpool = f->mp,
						      .cpool = f->cp, .split = k == 1,
						      .split_hdr_size = hsz ? 64 : 0,
						      .dca = (enum cn_dca)(k ? 2 : 0)};
			hs[k].dev = cn_netdev_create(&dp);
			assert_non_null(hs[k].dev);
			struct cn_net_params np = {.addr = IP_A, .mpool = f->mp, .cpool = f->cp,
						   .xmit = cn_netdev_xmit_hook, .xmit_arg = hs[k].dev};
			memcpy(np.mac, MAC_A, 6);
			hs[k].net = cn_net_create(&np);
			struct cn_tcp_params tp = tcp_params(true, 1000, 2000);
			tp.ts = false;
			hs[k].tcb = cn_tcp_open(hs[k].net, &tp);
			assert_non_null(hs[k].tcb);
		}
		uint32_t seq = 2000, nframes = 0, accepted = 0;
		uint64_t rs = 12345;
		for (int round = 0; round < 6000; round++) {
			uint32_t topt = (uint32_t)(round % 4) * 12, pay = (uint32_t)(round * 37 % 1400);
			uint32_t len = mk_frame(base, round % 7 == 3, (uint32_t)(round % 5 == 1) * 8,
						topt, pay, seq, 1000);
			memcpy(fr, base, len);
			int kind = round % 6;
			if (kind == 0) {
				len = (uint32_t)round % (len + 1); /* truncated at every length */
			} else if (kind == 1) {
				fr[14] = (uint8_t)(0x40 | (round / 6) % 16); /* every IHL */
			} else if (kind == 2 && fr[23] == CN_IPV4_PROTO_TCP) {
				uint32_t ihl = (fr[14] & 15u) * 4;
				fr[14 + ihl + 12] = (uint8_t)(((round / 6) % 16) << 4); /* every doff */
			} else if (kind == 3) {
				static const uint16_t tl[] = {0, 19, 20, 27, 39, 40, 41, 1500, 65535};
				uint16_t t = tl[(round / 6) % 9];
				fr[16] = (uint8_t)(t >> 8), fr[17] = (uint8_t)t;
			} else if (kind == 4) {
				for (int j = 0; j < 3; j++) {
					rs = rs * 6364136223846793005ull + 1442695040888963407ull;
					uint32_t at = (uint32_t)(rs >> 33) % (len < 140 ? len : 140);
					fr[at] ^= (uint8_t)(rs >> 20) | 1;
				}
			} /* kind 5: intact */
			enum cn_drop r[2];
			for (int k = 0; k < 2; k++) {
				struct cn_mbuf *m;
				if (len == 0) {
					/* a zero-length frame through the zero-copy commit */
					uint32_t room;
					assert_non_null(cn_netdev_nic_rx_reserve(hs[k].dev, &room));
					cn_netdev_nic_rx_commit(hs[k].dev, 0);
				} else {
					assert_int_equal(cn_netdev_nic_rx(hs[k].dev, fr, len), 0);
				}
				assert_int_equal(cn_netdev_rx_burst(hs[k].dev, &m, 1), 1);
				r[k] = cn_net_input(hs[k].net, m, (uint64_t)round);
				cn_netdev_nic_tx(hs[k].dev);
				cn_netdev_tx_reap(hs[k].dev);
			}
			if (r[0] != r[1])
				fail_msg("round %d (kind %d, %u bytes): %s without split, %s with",
					 round, kind, len, cn_drop_name(r[0]), cn_drop_name(r[1]));
			nframes++;
			if (r[0] == CN_DROP_NONE && kind == 5)
				seq += pay;
			accepted += r[0] == CN_DROP_NONE;
			/* keep the receive queue short */
			static uint8_t sink[1 << 16];
			for (int k = 0; k < 2; k++)
				while (cn_tcp_recv(hs[k].tcb, sink, sizeof(sink), (uint64_t)round) > 0)
					;
		}
		const struct cn_net_stats *s0 = cn_net_stats(hs[0].net), *s1 = cn_net_stats(hs[1].net);
		assert_memory_equal(s0->drop, s1->drop, sizeof(s0->drop));
		assert_true(accepted > 500 && cn_net_drops(hs[1].net) > 1000);
		const struct cn_netdev_stats *ds = cn_netdev_stats(hs[1].dev);
		assert_int_equal(ds->rx_frames, nframes);
		assert_int_equal(ds->rx_split + ds->rx_split_hdr_only + ds->rx_nosplit_parse +
				 ds->rx_nosplit_hdr_long, nframes);
		assert_true(ds->rx_split > 0 && ds->rx_nosplit_parse > 0);
		if (hsz)
			assert_true(ds->rx_nosplit_hdr_long > 0);
		for (int k = 0; k < 2; k++) {
			cn_tcp_close(hs[k].tcb);
			hs[k].tcb = NULL;
			host_fini(&hs[k]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_FX(test_rings), CN_T(test_zero_params), CN_FX(test_back_to_back),
		CN_FX(test_lossy_link), CN_FX(test_peers), CN_FX(test_udp_peers), CN_FX(test_pcap),
		CN_FX(test_prefetch_params), CN_FX(test_prefetch_stream),
		CN_FX(test_prefetch_pace_lines), CN_FX(test_copybreak), CN_FX(test_split_frames),
		CN_FX(test_split_back_to_back), CN_FX(test_split_lossy_link),
		CN_FX(test_split_peers), CN_FX(test_split_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
