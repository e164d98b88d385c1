/* SPDX-License-Identifier: BSD-2-Clause */
/* The frame parser and the stack's drop accounting: hand-built frames
 * parsed field by field, and a malformed-frame corpus (every truncation
 * length, bad IHL, bad data offset, total length past the frame, bad
 * checksums, options overrunning the header, fragments, not for us, no
 * connection), each dropped with the right reason and counted once under
 * it. Pool counters are checked back to their start values. */
#include "cn_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_net *net;
	struct cn_tcb *tcb;
	unsigned nx;
	unsigned slow_taken;
};

static int xmit(void *arg, struct cn_pkt *p)
{
	struct fx *f = arg;
	f->nx++;
	cn_pkt_free(p); /* the wire eats everything */
	return 0;
}

static bool slow(void *arg, struct cn_mbuf *m, enum cn_drop why)
{
	struct fx *f = arg;
	(void)why;
	f->slow_taken++;
	cn_mbuf_free_chain(m);
	return true;
}

#define IP_US CN_IPV4(192, 168, 0, 1)   /* 192.168.0.1 */
#define IP_PEER CN_IPV4(192, 168, 0, 2) /* 192.168.0.2 */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	cn_test_pools(&f->mp, &f->cp, 1024, 512, 0, 0);
	struct cn_net_params np = {.addr = IP_US, .mpool = f->mp, .cpool = f->cp,
				   .xmit = xmit, .xmit_arg = f};
	f->net = cn_net_create(&np);
	struct cn_tcp_params tp = {.laddr = IP_US, .raddr = IP_PEER, .lport = CN_BE16(80), .rport = CN_BE16(5555),
				   .iss = 1000, .irs = 2000, .mss = 1460, .snd_wnd = 65535,
				   .sndbuf = CN_SOCKBUF_CHAIN, .rcvbuf_size = 65535, .ts = true};
	f->tcb = cn_tcp_open(f->net, &tp);
	*state = f;
	return f->net && f->tcb ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	assert_int_equal(cn_net_destroy(f->net), 0);
	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f);
	return 0;
}

/* A valid TCP frame from the peer to us, built byte by byte from the RFC
 * 791 / RFC 9293 layouts; checksums from the RFC 1071 reference. Options:
 * NOP NOP TS (12 bytes) when ts, else none. Returns the frame length. */
static uint32_t build_tcp(uint8_t *g, uint32_t seq, uint32_t ack, uint8_t flags, bool ts,
			  const void *pay, uint32_t plen)
{
	uint32_t thl = ts ? 32 : 20, tot = 20 + thl + plen;
	memset(g, 0, 14 + tot);
	g[0] = 0x02, g[5] = 0x01;        /* dst MAC (ours; not checked) */
	g[6] = 0x02, g[11] = 0x02;
	g[12] = 0x08, g[13] = 0x00;
	uint8_t *ip = g + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	ip[4] = 0x12, ip[5] = 0x34;
	ip[6] = 0x40;                    /* DF */
	ip[8] = 64, ip[9] = 6;
	ip[12] = 192, ip[13] = 168, ip[14] = 0, ip[15] = 2;
	ip[16] = 192, ip[17] = 168, ip[18] = 0, ip[19] = 1;
	uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	uint8_t *th = ip + 20;
	th[0] = 5555 >> 8, th[1] = 5555 & 0xff, th[2] = 0, th[3] = 80;
	th[4] = (uint8_t)(seq >> 24), th[5] = (uint8_t)(seq >> 16), th[6] = (uint8_t)(seq >> 8), th[7] = (uint8_t)seq;
	th[8] = (uint8_t)(ack >> 24), th[9] = (uint8_t)(ack >> 16), th[10] = (uint8_t)(ack >> 8), th[11] = (uint8_t)ack;
	th[12] = (uint8_t)((thl / 4) << 4);
	th[13] = flags;
	th[14] = 0xff, th[15] = 0xff;
	if (ts) {
		th[20] = 1, th[21] = 1, th[22] = 8, th[23] = 10;
		th[27] = 7;              /* TSval 7 */
	}
	memcpy(th + thl, pay, plen);
	uint8_t ph[12] = {192, 168, 0, 2, 192, 168, 0, 1, 0, 6, (uint8_t)((thl + plen) >> 8), (uint8_t)(thl + plen)};
	uint32_t s = cn_csum_partial_ref(ph, 12, 0);
	s = cn_csum_partial_ref(th, thl + plen, s);
	c = (uint16_t)~cn_csum_fold(s);
	memcpy(th + 16, &c, 2);
	return 14 + tot;
}

static uint32_t cn__ld32_test(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static void fix_ip_csum(uint8_t *g)
{
	uint8_t *ip = g + 14;
	uint32_t ihl = (ip[0] & 0xf) * 4u;
	ip[10] = ip[11] = 0;
	uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(ip, ihl, 0));
	memcpy(ip + 10, &c, 2);
}

static void fix_tcp_csum(uint8_t *g, uint32_t len)
{
	uint8_t *ip = g + 14;
	uint32_t ihl = (ip[0] & 0xf) * 4u, tot = (uint32_t)ip[2] << 8 | ip[3];
	uint8_t *th = ip + ihl;
	uint32_t l4 = tot - ihl;
	(void)len;
	th[16] = th[17] = 0;
	uint32_t s = cn_csum_pseudo_ipv4(CN_BE32_FROM_RAW(cn__ld32_test(ip + 12)),
					 CN_BE32_FROM_RAW(cn__ld32_test(ip + 16)), 6, (uint16_t)l4);
	s = cn_csum_partial_ref(th, l4, s);
	uint16_t c = (uint16_t)~cn_csum_fold(s);
	memcpy(th + 16, &c, 2);
}

/* The frame as a chain cut at byte @p k (0 < k < len, k <= 190): a small
 * mbuf with bytes [0, k), then a cluster with the rest, at buf + 2 + k
 * (room for the first part in front, as a splitting NIC leaves it) when
 * @p room, else at the cluster's first byte (no room: only a pullup can
 * join them). */
static struct cn_mbuf *mk_chain(struct fx *f, const uint8_t *frame, uint32_t len, uint32_t k,
				bool room)
{
	struct cn_mbuf *h = cn_mbuf_get(f->mp), *m = cn_mbuf_get_cluster(f->mp, f->cp);
	assert_non_null(h);
	assert_non_null(m);
	assert_true(k > 0 && k < len && k <= 190);
	h->data = h->buf + 2;
	memcpy(h->data, frame, k);
	h->len = k;
	m->data = m->buf + (room ? 2 + k : 0);
	memcpy(m->data, frame + k, len - k);
	m->len = m->pkt_len = len - k;
	h->next = m;
	h->pkt_len = len;
	return h;
}

/* How feed() hands frames over: 0 one cluster; 1 a chain cut where the
 * headers end, as a splitting NIC does (frames without payload bytes, or
 * that cn_net_parse refuses, stay whole); 2 a chain cut at a byte that
 * walks through the frame, room in front of the tail; 3 the same without
 * room. Every expectation of the tests below holds in every mode. */
static int g_feed;
static uint32_t g_cut;
static uint16_t g_rxflags; /* CN_MBUF_F_RX_* set on every fed head */

static enum cn_drop feed(struct fx *f, const uint8_t *frame, uint32_t len)
{
	struct cn_pkt_info pi;
	uint32_t k = 0;

	if (g_feed == 1 && cn_net_parse(frame, len, 0, &pi) == CN_DROP_NONE && pi.pay_off < len)
		k = pi.pay_off;
	if (g_feed >= 2 && len > 1) {
		g_cut = g_cut * 7 + 3;
		k = 1 + g_cut % (len - 1 < 190 ? len - 1 : 190);
	}
	if (k) {
		struct cn_mbuf *h = mk_chain(f, frame, len, k, g_feed != 3);
		h->flags |= g_rxflags;
		return cn_net_input(f->net, h, 0);
	}
	struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, f->cp);
	assert_non_null(m);
	m->data = m->buf + 2;
	memcpy(m->data, frame, len);
	m->len = m->pkt_len = len;
	m->flags |= g_rxflags;
	return cn_net_input(f->net, m, 0);
}

/* Feed and check: the returned reason, and that exactly that counter grew. */
static void expect(struct fx *f, const uint8_t *frame, uint32_t len, enum cn_drop want)
{
	struct cn_net_stats before = *cn_net_stats(f->net);
	enum cn_drop got = feed(f, frame, len);
	const struct cn_net_stats *after = cn_net_stats(f->net);
	if (got != want)
		fail_msg("len %u: got %s, want %s", len, cn_drop_name(got), cn_drop_name(want));
	for (unsigned r = 1; r < CN_DROP_MAX; r++) {
		uint64_t d = after->drop[r] - before.drop[r];
		if (d != (r == (unsigned)want ? 1u : 0u))
			fail_msg("len %u: counter %s moved by %llu (want %s)", len, cn_drop_name(r),
				 (unsigned long long)d, cn_drop_name(want));
	}
}

static void test_parse_fields(void **state)
{
	(void)state;
	uint8_t g[128];
	struct cn_pkt_info pi;
	uint32_t n = build_tcp(g, 0x01020304, 0xa0b0c0d0, CN_TCP_ACK | CN_TCP_PSH, true, "hello", 5);

	assert_int_equal(cn_net_parse(g, n, 0, &pi), CN_DROP_NONE);
	assert_int_equal(pi.l3_off, 14);
	assert_int_equal(pi.l4_off, 34);
	assert_int_equal(pi.pay_off, 66);
	assert_int_equal(pi.pay_len, 5);
	assert_int_equal(pi.l4_len, 37);
	assert_int_equal(pi.proto, 6);
	assert_true(cn_be32_eq(pi.saddr, IP_PEER));
	assert_true(cn_be32_eq(pi.daddr, IP_US));
	assert_int_equal(cn_be16toh(pi.sport), 5555);
	assert_int_equal(cn_be16toh(pi.dport), 80);
	assert_int_equal(pi.seq, 0x01020304);
	assert_int_equal(pi.ack, 0xa0b0c0d0);
	assert_int_equal(pi.tcp_flags, CN_TCP_ACK | CN_TCP_PSH);
	assert_int_equal(pi.win, 0xffff);
	assert_true(pi.has_ts);
	assert_int_equal(pi.ts_val, 7);
	assert_int_equal(pi.ts_ecr, 0);
	assert_true(cn_net_l4_csum_ok(&pi));
	/* Ethernet padding after the IP datagram is not payload. */
	memset(g + n, 0xee, 10);
	assert_int_equal(cn_net_parse(g, n + 10, 0, &pi), CN_DROP_NONE);
	assert_int_equal(pi.pay_len, 5);
	assert_true(cn_net_l4_csum_ok(&pi));

	/* Generic options: MSS, WS, SACK-permitted, an unknown kind 30 of
	 * length 4, EOL. */
	uint8_t opts[20] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 30, 4, 9, 9, 0, 0, 0, 0, 0, 0};
	n = build_tcp(g, 1, 2, CN_TCP_ACK, false, "", 0);
	memcpy(g + 54, opts, 20);
	g[14 + 3] = 20 + 40;
	g[34 + 12] = 10 << 4;
	fix_ip_csum(g);
	n += 20;
	fix_tcp_csum(g, n);
	assert_int_equal(cn_net_parse(g, n, 0, &pi), CN_DROP_NONE);
	assert_true(pi.has_mss);
	assert_int_equal(pi.mss, 1460);
	assert_true(pi.has_ws);
	assert_int_equal(pi.wscale, 7);
	assert_false(pi.has_ts);
	assert_true(cn_net_l4_csum_ok(&pi));
	assert_string_equal(cn_drop_name(CN_DROP_IP_CSUM), "ip_csum");
	assert_string_equal(cn_drop_name(CN_DROP_MAX), "?");
}

/* The header builder: a whole header parses back with its fields and a
 * right checksum; DF clear on request; a template leaves length, id and
 * checksum 0 for the sender to add; every byte of the 34 is written. */
static void test_hdr_build(void **state)
{
	static const uint8_t dmac[6] = {2, 0, 0, 0, 0, 2}, smac[6] = {2, 0, 0, 0, 0, 1};
	uint8_t f[64], *l4;
	struct cn_pkt_info pi;
	struct cn_net_hdr_spec hs = {.dmac = dmac, .smac = smac, .saddr = IP_US, .daddr = IP_PEER,
				     .proto = CN_IPV4_PROTO_UDP, .id = 0x1234, .l4_len = 12};
	(void)state;

	memset(f, 0xa5, sizeof(f));
	l4 = cn_net_hdr_build(f, &hs);
	assert_ptr_equal(l4, f + CN_ETH_HLEN + CN_IPV4_HLEN);
	memset(l4, 0, 12);
	l4[0] = 0x13, l4[1] = 0x88, l4[2] = 0x00, l4[3] = 0x50, l4[5] = 12; /* 5000 -> 80, len 12 */
	assert_memory_equal(f, dmac, 6);
	assert_memory_equal(f + 6, smac, 6);
	static const uint8_t ip[12] = {0x08, 0x00, 0x45, 0x00, 0x00, 32, 0x12, 0x34, 0x40, 0x00, 64,
				       CN_IPV4_PROTO_UDP};
	assert_memory_equal(f + 12, ip, sizeof(ip));
	assert_int_equal(cn_csum_ipv4_hdr(f + CN_ETH_HLEN, CN_IPV4_HLEN), 0);
	assert_int_equal(cn_net_parse(f, 46, 0, &pi), CN_DROP_NONE);
	assert_true(cn_be32_eq(pi.saddr, IP_US));
	assert_true(cn_be32_eq(pi.daddr, IP_PEER));
	assert_int_equal(pi.proto, CN_IPV4_PROTO_UDP);
	assert_int_equal(pi.l4_len, 12);
	assert_int_equal(pi.pay_len, 4);

	hs.no_df = 1; /* what an ICMP reply carries */
	cn_net_hdr_build(f, &hs);
	assert_int_equal(f[20], 0);
	assert_int_equal(f[21], 0);
	assert_int_equal(cn_csum_ipv4_hdr(f + CN_ETH_HLEN, CN_IPV4_HLEN), 0);

	memset(f, 0xa5, sizeof(f));
	hs.no_df = 0;
	hs.l4_len = 0; /* a template */
	hs.proto = CN_IPV4_PROTO_TCP;
	cn_net_hdr_build(f, &hs);
	static const uint8_t tmpl[22] = {0x08, 0x00, 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64,
					 CN_IPV4_PROTO_TCP, 0, 0, 192, 168, 0, 1, 192, 168, 0, 2};
	assert_memory_equal(f + 12, tmpl, sizeof(tmpl));
	assert_int_equal(f[CN_ETH_HLEN + CN_IPV4_HLEN], 0xa5); /* nothing past the 34 */
}

static void test_malformed_corpus(void **state)
{
	struct fx *f = *state;
	uint8_t g[256], b[256];
	uint32_t n = build_tcp(g, 2001, 1001, CN_TCP_ACK, true, "0123456789abcdef", 16);

	/* The good frame is accepted (in-order data). */
	expect(f, g, n, CN_DROP_NONE);
	/* Truncated at every length: the first layer that no longer fits. */
	n = build_tcp(g, 2017, 1001, CN_TCP_ACK, true, "0123456789abcdef", 16);
	for (uint32_t len = 0; len < n; len++) {
		enum cn_drop want = len < 14 ? CN_DROP_ETH_TRUNC
				    : len < 34 ? CN_DROP_IP_TRUNC
						: CN_DROP_IP_LEN; /* total length > frame */
		expect(f, g, len, want);
	}
	/* Bad version, bad IHL (0..4), IHL past the frame. */
	memcpy(b, g, n);
	b[14] = 0x65;
	expect(f, b, n, CN_DROP_IP_VERSION);
	for (uint8_t ihl = 0; ihl < 5; ihl++) {
		memcpy(b, g, n);
		b[14] = (uint8_t)(0x40 | ihl);
		expect(f, b, n, CN_DROP_IP_HLEN);
	}
	memcpy(b, g, n);
	b[14] = 0x4f; /* 60 bytes: the frame has them, total length does not */
	expect(f, b, 14 + 40, CN_DROP_IP_TRUNC);
	/* Bad IPv4 checksum: every single-bit flip of the header. */
	for (unsigned bit = 0; bit < 160; bit++) {
		memcpy(b, g, n);
		if (bit / 8 == 0 || bit / 8 == 2 || bit / 8 == 3)
			continue; /* version/IHL and length: caught earlier */
		b[14 + bit / 8] ^= (uint8_t)(1u << (bit % 8));
		expect(f, b, n, CN_DROP_IP_CSUM);
	}
	/* One or two bytes of the good frame changed (a valid IPv4 checksum
	 * again), fed whole or cut to @len. */
	static const struct {
		uint8_t off, v[2], nv;
		uint32_t len; /* 0: the whole frame */
		enum cn_drop want;
	} patch[] = {
		{16, {0, 19}, 2, 0, CN_DROP_IP_LEN},             /* total length below IHL */
		{33, {9}, 1, 0, CN_DROP_IP_NOT_US},              /* not for us */
		{12, {0x86, 0xdd}, 2, 0, CN_DROP_ETH_TYPE},      /* IPv6 EtherType */
		{23, {47}, 1, 0, CN_DROP_IP_PROTO},              /* unknown protocol */
		{20, {0x20}, 1, 0, CN_DROP_IP_FRAG},             /* MF; no hook: dropped */
		{20, {0x00, 0x10}, 2, 0, CN_DROP_IP_FRAG},       /* an offset */
		{16, {0, 20 + 19}, 2, 14 + 39, CN_DROP_TCP_TRUNC}, /* L4 shorter than 20 */
	};
	for (size_t i = 0; i < sizeof(patch) / sizeof(patch[0]); i++) {
		memcpy(b, g, n);
		memcpy(b + patch[i].off, patch[i].v, patch[i].nv);
		fix_ip_csum(b);
		expect(f, b, patch[i].len ? patch[i].len : n, patch[i].want);
	}
	/* TCP: data offset < 5 or past the datagram. */
	for (uint8_t doff = 0; doff < 16; doff++) {
		if (doff >= 5 && doff <= 12)
			continue; /* 12 words = 48 bytes fits the 48-byte L4 */
		memcpy(b, g, n);
		b[46] = (uint8_t)(doff << 4);
		expect(f, b, n, CN_DROP_TCP_OFF);
	}
	/* Options overrunning the header: a TS option cut by the offset, a
	 * length byte of 0, 1 and past the end. */
	static const uint8_t bad_opts[][12] = {
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 8, 10},  /* TS starting 2 bytes before the end */
		{2, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* length 0 */
		{30, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},  /* length 1 */
		{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3},   /* kind at the last byte */
		{2, 3, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* MSS of length 3 */
		{3, 4, 5, 1, 1, 1, 1, 1, 1, 1, 1, 1},   /* WS of length 4 */
		{8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  /* TS of length 12 */
	};
	for (unsigned i = 0; i < sizeof(bad_opts) / sizeof(bad_opts[0]); i++) {
		memcpy(b, g, n);
		memcpy(b + 54, bad_opts[i], 12);
		fix_tcp_csum(b, n);
		expect(f, b, n, CN_DROP_TCP_OPT);
	}
	/* Bad TCP checksum: a payload bit, a header bit. */
	memcpy(b, g, n);
	b[n - 1] ^= 0x40;
	expect(f, b, n, CN_DROP_TCP_CSUM);
	memcpy(b, g, n);
	b[34 + 14] ^= 1;
	expect(f, b, n, CN_DROP_TCP_CSUM);
	/* No connection. */
	memcpy(b, g, n);
	b[35] = 0xb4;
	fix_tcp_csum(b, n);
	expect(f, b, n, CN_DROP_TCP_NO_CONN);
	/* SYN, RST, no ACK on an established connection. */
	static const uint8_t badflags[] = {CN_TCP_SYN | CN_TCP_ACK, CN_TCP_RST, CN_TCP_PSH};
	for (unsigned i = 0; i < sizeof(badflags); i++) {
		memcpy(b, g, n);
		b[34 + 13] = badflags[i];
		fix_tcp_csum(b, n);
		expect(f, b, n, CN_DROP_TCP_FLAGS);
	}
	/* Outside the window (far ahead), acks unsent data, PAWS. */
	n = build_tcp(b, 2017 + 1000000, 1001, CN_TCP_ACK, true, "x", 1);
	expect(f, b, n, CN_DROP_TCP_WINDOW);
	n = build_tcp(b, 2017, 1001 + 5, CN_TCP_ACK, true, "x", 1);
	expect(f, b, n, CN_DROP_TCP_ACK);
	n = build_tcp(b, 2017, 1001, CN_TCP_ACK, true, "x", 1);
	b[34 + 27] = 6; /* TSval 6 < ts_recent 7 */
	fix_tcp_csum(b, n);
	expect(f, b, n, CN_DROP_TCP_PAWS);
	/* Out of order with queueing off. */
	n = build_tcp(b, 2017 + 100, 1001, CN_TCP_ACK, true, "x", 1);
	expect(f, b, n, CN_DROP_TCP_OOO);
	/* The good in-order segment still goes through. */
	n = build_tcp(g, 2017, 1001, CN_TCP_ACK, true, "0123456789abcdef", 16);
	expect(f, g, n, CN_DROP_NONE);
	struct cn_tcp_info ti;
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.rcv_nxt, 2033);
	assert_int_equal(ti.rcv_queued, 32);
	/* UDP: to no port, bad length, truncated. */
	uint8_t u[64];
	memcpy(u, g, 34);
	u[14 + 9] = 17;
	u[16] = 0, u[17] = 20 + 8 + 4;
	fix_ip_csum(u);
	memset(u + 34, 0, 12);
	u[34] = 0x12, u[36] = 0, u[37] = 9, u[39] = 12; /* dport 9, len 12 */
	expect(f, u, 46, CN_DROP_UDP_NO_PORT);
	u[39] = 13;
	expect(f, u, 46, CN_DROP_UDP_LEN);
	u[17] = 20 + 7;
	fix_ip_csum(u);
	expect(f, u, 46, CN_DROP_UDP_TRUNC);
}


/* A pure ACK for [1001, ack) built by build_tcp, with TS (TSval 7). */
static uint32_t pure_ack(uint8_t *g, uint32_t ack, bool ts)
{
	return build_tcp(g, 2001, ack, CN_TCP_ACK, ts, "", 0);
}

/* The same frame with 4 bytes of IPv4 options (NOP x4): IHL 6. */
static uint32_t add_ip_opts(uint8_t *g, uint32_t n)
{
	uint8_t *ip = g + 14;
	uint32_t tot = ((uint32_t)ip[2] << 8 | ip[3]) + 4;
	memmove(ip + 24, ip + 20, n - 34);
	memset(ip + 20, 1, 4);
	ip[0] = 0x46;
	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	fix_ip_csum(g);
	fix_tcp_csum(g, n + 4);
	return n + 4;
}

/* The receive fast path (a frame parser for the common shape, the pure-ACK
 * prediction with its inline header checksum): taken exactly when it
 * should be, and every other frame still processed the same way by the
 * general parser -- IP options, other TCP option layouts, Ethernet
 * padding -- or dropped under its own reason. */
static void test_fast_path(void **state)
{
	struct fx *f = *state;
	const struct cn_tcp_stats *st = cn_tcp_stats(f->tcb);
	static uint8_t data[8192];
	uint8_t g[256];
	uint32_t n, ack = 1001;
	uint64_t hp, slow0;
	struct cn_tcp_info ti;

	/* Data in flight: snd_una 1001, snd_max well above. */
	assert_int_equal(cn_tcp_send(f->tcb, data, sizeof(data), 0), (int)sizeof(data));
	cn_tcp_get_info(f->tcb, &ti);
	assert_true(ti.snd_max - ti.snd_una >= 4000);

	/* The common shape: predicted. */
	hp = st->hp_ack, slow0 = st->slow_path;
	n = pure_ack(g, ack += 100, true);
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(st->hp_ack, hp + 1);
	assert_int_equal(st->slow_path, slow0);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);

	/* A bad checksum on a predicted pure ACK: every bit of the TCP
	 * header but the ones prediction reads first (flags, offset) and
	 * the window (a different window is not predicted) -- dropped as
	 * tcp_csum, snd_una unmoved. */
	for (unsigned bit = 0; bit < 32 * 8; bit++) {
		unsigned byte = bit / 8;
		if (byte == 12 || byte == 13 || byte == 14 || byte == 15 || (byte >= 4 && byte < 12) ||
		    byte == 0 || byte == 1 || byte == 2 || byte == 3 || (byte >= 20 && byte < 24))
			continue; /* ports, seq/ack, offset, flags, window, option kinds */
		n = pure_ack(g, ack + 100, true);
		g[34 + byte] ^= (uint8_t)(1u << (bit % 8));
		hp = st->hp_ack;
		expect(f, g, n, CN_DROP_TCP_CSUM);
		assert_int_equal(st->hp_ack, hp);
		cn_tcp_get_info(f->tcb, &ti);
		assert_int_equal(ti.snd_una, ack);
	}

	/* Shapes the frame parser's fast path leaves to the general one, all
	 * still predicted by tcp_input: IP options; TS not in the NOP NOP TS
	 * layout; Ethernet padding after the datagram. */
	hp = st->hp_ack, slow0 = st->slow_path;
	n = add_ip_opts(g, pure_ack(g, ack += 100, true));
	expect(f, g, n, CN_DROP_NONE);
	n = pure_ack(g, ack += 100, true);
	memcpy(g + 54, (const uint8_t[]){8, 10, 0, 0, 0, 7, 0, 0, 0, 0, 1, 1}, 12);
	fix_tcp_csum(g, n);
	expect(f, g, n, CN_DROP_NONE);
	n = pure_ack(g, ack += 100, true);
	memset(g + n, 0, 6);
	expect(f, g, n + 6, CN_DROP_NONE);
	assert_int_equal(st->hp_ack, hp + 3);
	assert_int_equal(st->slow_path, slow0);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);
	/* The bad-checksum drop in the general parser's shapes too. */
	n = add_ip_opts(g, pure_ack(g, ack + 100, true));
	g[n - 3] ^= 0x10; /* TSecr */
	expect(f, g, n, CN_DROP_TCP_CSUM);
	assert_int_equal(st->hp_ack, hp + 3);

	/* Not predicted: no timestamp on a timestamp connection, a new
	 * window, a duplicate ACK, an ACK beyond snd_max (dropped as
	 * tcp_ack). */
	hp = st->hp_ack, slow0 = st->slow_path;
	n = pure_ack(g, ack += 100, false);
	expect(f, g, n, CN_DROP_NONE);
	n = pure_ack(g, ack += 100, true);
	g[34 + 14] = 0x7f; /* window 0x7fff */
	fix_tcp_csum(g, n);
	expect(f, g, n, CN_DROP_NONE);
	n = pure_ack(g, ack, true);
	g[34 + 14] = 0x7f;
	fix_tcp_csum(g, n);
	expect(f, g, n, CN_DROP_NONE); /* duplicate */
	assert_int_equal(st->hp_ack, hp);
	assert_int_equal(st->slow_path, slow0 + 3);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);
	n = pure_ack(g, ack + 100000, true);
	g[34 + 14] = 0x7f;
	fix_tcp_csum(g, n);
	expect(f, g, n, CN_DROP_TCP_ACK);
	assert_int_equal(st->hp_ack, hp);
	/* The window is 0x7fff since the update above, so 0xffff is a
	 * change again (slow path, window updated); the next 0xffff ACK is
	 * predicted. */
	n = pure_ack(g, ack += 100, true);
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(st->hp_ack, hp);
	n = pure_ack(g, ack += 100, true);
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(st->hp_ack, hp + 1);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);
}

/* Per-frame RX checksum status (mbuf_core.h, CN_MBUF_F_RX_*): a checksum
 * the frame's device verified is skipped (a frame whose bytes would fail
 * it is accepted: the device's word is taken), a frame marked bad is
 * verified by the stack whatever the good bits say (dropped under the
 * stack's own reason when bad, accepted when the alarm was false), and a
 * frame without status is verified. In every feed shape. */
static void rx_flags_case(struct fx *f)
{
	const struct cn_tcp_stats *st = cn_tcp_stats(f->tcb);
	static uint8_t data[8192];
	uint8_t g[256];
	uint32_t n, ack = 1001;
	struct cn_tcp_info ti;

	assert_int_equal(cn_tcp_send(f->tcb, data, sizeof(data), 0), (int)sizeof(data));
	/* bad TCP checksum, status unknown: dropped */
	n = pure_ack(g, ack + 100, true);
	g[34 + 16] ^= 0x01;
	g_rxflags = 0;
	expect(f, g, n, CN_DROP_TCP_CSUM);
	/* the same bytes, the device says L4 good: accepted, ACK taken */
	g_rxflags = CN_MBUF_F_RX_L4_CSUM_GOOD;
	expect(f, g, n, CN_DROP_NONE);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack += 100);
	/* bad IP header checksum too: dropped unless IP is marked good */
	n = pure_ack(g, ack + 100, true);
	g[34 + 16] ^= 0x01;
	g[14 + 10] ^= 0x01;
	expect(f, g, n, CN_DROP_IP_CSUM);
	g_rxflags = CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD;
	expect(f, g, n, CN_DROP_NONE);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack += 100);
	/* marked bad: the good bits are ignored, the stack checks */
	n = pure_ack(g, ack + 100, true);
	g[34 + 16] ^= 0x01;
	g_rxflags = CN_MBUF_F_RX_CSUM_BAD | CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD;
	expect(f, g, n, CN_DROP_TCP_CSUM);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);
	/* marked bad but correct (a false alarm): accepted after the check */
	n = pure_ack(g, ack += 100, true);
	expect(f, g, n, CN_DROP_NONE);
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.snd_una, ack);
	(void)st;
	g_rxflags = 0;
}

static void test_rx_flags(void **state)
{
	struct fx *f = *state;
	for (g_feed = 0; g_feed < 4; g_feed++) {
		if (g_feed) { /* a fresh connection per shape */
			teardown(state);
			assert_int_equal(setup(state), 0);
			f = *state;
		}
		rx_flags_case(f);
	}
	g_feed = 0;
}

static void test_fragment_hook(void **state)
{
	struct fx *f = *state;
	uint8_t g[128];
	uint32_t n = build_tcp(g, 1, 2, CN_TCP_ACK, false, "abc", 3);
	struct cn_net_params np = {.addr = IP_US, .mpool = f->mp, .xmit = xmit, .xmit_arg = f,
				   .slow = slow, .slow_arg = f};
	struct cn_net *net2 = cn_net_create(&np);
	struct cn_mbuf *m;

	assert_non_null(net2);
	g[20] = 0x20; /* MF */
	fix_ip_csum(g);
	m = cn_mbuf_get_cluster(f->mp, f->cp);
	memcpy(m->data, g, n);
	m->len = m->pkt_len = n;
	assert_int_equal(cn_net_input(net2, m, 0), CN_DROP_NONE);
	assert_int_equal(f->slow_taken, 1);
	assert_int_equal(cn_net_stats(net2)->rx_slow, 1);
	assert_int_equal(cn_net_drops(net2), 0);
	assert_int_equal(cn_net_destroy(net2), 0);
	errno = 0;
	np.xmit = NULL;
	assert_null(cn_net_create(&np));
	assert_int_equal(errno, EINVAL);
}

/* The slow-path hook gets what the fast path does not take, with the
 * reason; frames it refuses are counted under that reason; frames for
 * another host or a bad checksum never reach it. */
struct hookrec {
	unsigned n[CN_DROP_MAX];
	bool take;
};

static bool hook(void *arg, struct cn_mbuf *m, enum cn_drop why)
{
	struct hookrec *h = arg;
	h->n[why]++;
	if (h->take)
		cn_mbuf_free_chain(m);
	return h->take;
}

static void test_slow_hook_reasons(void **state)
{
	struct fx *f = *state;
	struct hookrec h = {.take = true};
	uint8_t g[128];
	uint32_t n;

	cn_net_set_slow(f->net, hook, &h);
	/* ARP (EtherType 0x0806) */
	n = build_tcp(g, 1, 2, CN_TCP_ACK, false, "", 0);
	g[12] = 0x08, g[13] = 0x06;
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(h.n[CN_DROP_ETH_TYPE], 1);
	/* ICMP to us; ICMP to another host is not offered */
	n = build_tcp(g, 1, 2, CN_TCP_ACK, false, "", 0);
	g[14 + 9] = 1;
	fix_ip_csum(g);
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(h.n[CN_DROP_IP_PROTO], 1);
	g[14 + 19] = 9;
	fix_ip_csum(g);
	expect(f, g, n, CN_DROP_IP_NOT_US);
	assert_int_equal(h.n[CN_DROP_IP_PROTO], 1);
	/* A SYN to a port with no connection */
	n = build_tcp(g, 1, 0, CN_TCP_SYN, false, "", 0);
	g[14 + 20 + 3] = 81;
	expect(f, g, n, CN_DROP_NONE); /* (checksum now wrong: the hook checks) */
	assert_int_equal(h.n[CN_DROP_TCP_NO_CONN], 1);
	/* RST and SYN on the established connection */
	n = build_tcp(g, 2001, 1001, CN_TCP_RST | CN_TCP_ACK, false, "", 0);
	expect(f, g, n, CN_DROP_NONE);
	n = build_tcp(g, 2001, 0, CN_TCP_SYN, false, "", 0);
	expect(f, g, n, CN_DROP_NONE);
	assert_int_equal(h.n[CN_DROP_TCP_FLAGS], 2);
	assert_int_equal(cn_net_stats(f->net)->rx_slow, 5);
	/* Refused: counted under the reason. */
	h.take = false;
	n = build_tcp(g, 2001, 1001, CN_TCP_RST, false, "", 0);
	expect(f, g, n, CN_DROP_TCP_FLAGS);
	assert_int_equal(h.n[CN_DROP_TCP_FLAGS], 3);
	assert_int_equal(cn_net_stats(f->net)->rx_slow, 5);
	cn_net_set_slow(f->net, NULL, NULL);
	n = build_tcp(g, 2001, 1001, CN_TCP_RST, false, "", 0);
	expect(f, g, n, CN_DROP_TCP_FLAGS);
	assert_int_equal(h.n[CN_DROP_TCP_FLAGS], 3);
}

/* A frame built by the caller on a descriptor of the stack. */
static void test_pkt_alloc_xmit(void **state)
{
	struct fx *f = *state;
	struct cn_pkt *p = cn_net_pkt_alloc(f->net);
	const struct cn_net_stats *st = cn_net_stats(f->net);
	uint64_t frames = st->tx_frames, bytes = st->tx_bytes;
	unsigned nx = f->nx;
	static const uint8_t pay[100];

	assert_non_null(p);
	assert_int_equal(cn_net_pkts_out(f->net), 1);
	p->hdr = p->room + CN_PKT_HDR_ROOM - 42;
	p->hdr_len = 42;
	memset(p->hdr, 0xab, 42);
	p->piece[0].base = pay;
	p->piece[0].len = sizeof(pay);
	p->npieces = 1;
	p->pay_len = sizeof(pay);
	assert_int_equal(cn_net_xmit(f->net, p), 0);
	assert_int_equal(f->nx, nx + 1);
	assert_int_equal(st->tx_frames, frames + 1);
	assert_int_equal(st->tx_bytes, bytes + 142);
	assert_int_equal(cn_net_pkts_out(f->net), 0); /* the test wire completed it */
	/* Pieces that do not add up, or no header: refused and released. */
	p = cn_net_pkt_alloc(f->net);
	p->hdr = p->room;
	p->hdr_len = 14;
	p->npieces = 1;
	p->piece[0].base = pay;
	p->piece[0].len = 10;
	p->pay_len = 11;
	assert_int_equal(cn_net_xmit(f->net, p), -EINVAL);
	p = cn_net_pkt_alloc(f->net);
	assert_int_equal(cn_net_xmit(f->net, p), -EINVAL);
	assert_int_equal(cn_net_pkts_out(f->net), 0);
	assert_int_equal(f->nx, nx + 1);
}

static void count_done(void *arg)
{
	(*(unsigned *)arg)++;
}

/* cn_pkt_free_bulk: runs of plain descriptors, one holding an mbuf
 * reference, one with a completion callback, and descriptors of a second
 * stack in between, all released exactly once to their own stacks. */
static void test_pkt_free_bulk(void **state)
{
	struct fx *f = *state;
	struct cn_net_params np = {.addr = IP_PEER, .mpool = f->mp, .cpool = f->cp,
				   .xmit = xmit, .xmit_arg = f};
	struct cn_net *net2 = cn_net_create(&np);
	struct cn_mbuf_pool_stats ps0, ps1;
	struct cn_pkt *p[12], *again[12];
	unsigned done = 0;

	assert_non_null(net2);
	cn_mbuf_pool_stats(f->mp, &ps0);
	for (int i = 0; i < 12; i++) {
		p[i] = cn_net_pkt_alloc(i >= 5 && i < 8 ? net2 : f->net);
		assert_non_null(p[i]);
	}
	p[2]->ref = cn_mbuf_get(f->mp); /* freed with its descriptor */
	assert_non_null(p[2]->ref);
	p[9]->done = count_done;
	p[9]->done_arg = &done;
	assert_int_equal(cn_net_pkts_out(f->net), 9);
	assert_int_equal(cn_net_pkts_out(net2), 3);
	cn_pkt_free_bulk(p, 12);
	assert_int_equal(cn_net_pkts_out(f->net), 0);
	assert_int_equal(cn_net_pkts_out(net2), 0);
	assert_int_equal(done, 1);
	cn_mbuf_pool_stats(f->mp, &ps1);
	assert_int_equal(ps1.in_use, ps0.in_use);
	/* Each free list holds each descriptor once: taking as many again
	 * gives distinct descriptors of the right stack. */
	for (int i = 0; i < 12; i++) {
		again[i] = cn_net_pkt_alloc(i >= 5 && i < 8 ? net2 : f->net);
		assert_non_null(again[i]);
		assert_null(again[i]->ref);
		assert_null(again[i]->done);
		for (int j = 0; j < i; j++)
			assert_ptr_not_equal(again[i], again[j]);
	}
	cn_pkt_free_bulk(again, 12);
	cn_pkt_free_bulk(again, 0);
	assert_int_equal(cn_net_pkts_out(f->net), 0);
	assert_int_equal(cn_net_destroy(net2), 0);
}

/* A chained frame is pulled up when it fits an inline mbuf. */
static void test_chained_frame(void **state)
{
	struct fx *f = *state;
	uint8_t g[128];
	uint32_t n = build_tcp(g, 2001, 1001, CN_TCP_ACK, false, "abcdefgh", 8);
	struct cn_mbuf *a = cn_mbuf_get(f->mp), *b = cn_mbuf_get(f->mp);

	memcpy(cn_mbuf_append(a, 30), g, 30);
	memcpy(cn_mbuf_append(b, n - 30), g + 30, n - 30);
	cn_mbuf_cat(a, b);
	assert_int_equal(cn_net_input(f->net, a, 0), CN_DROP_NONE);
	struct cn_tcp_info ti;
	cn_tcp_get_info(f->tcb, &ti);
	assert_int_equal(ti.rcv_nxt, 2009);
	uint8_t out[8];
	assert_int_equal(cn_tcp_recv(f->tcb, out, 8, 0), 8);
	assert_memory_equal(out, "abcdefgh", 8);
}

/* The tests above again with frames handed over as chains (g_feed). */
#define CHAINED(test, mode)                                                    \
	static void test##_chain##mode(void **state)                          \
	{                                                                      \
		g_feed = mode;                                                 \
		test(state);                                                   \
		g_feed = 0;                                                    \
	}
CHAINED(test_malformed_corpus, 1)
CHAINED(test_malformed_corpus, 2)
CHAINED(test_malformed_corpus, 3)
CHAINED(test_fast_path, 1)
CHAINED(test_fast_path, 2)
CHAINED(test_fast_path, 3)
CHAINED(test_slow_hook_reasons, 1)
CHAINED(test_slow_hook_reasons, 2)
CHAINED(test_slow_hook_reasons, 3)

static struct cn_mbuf *udp_kept;
static void udp_keep(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)arg;
	assert_int_equal(pi->frame[12], 0x08); /* the header mbuf is still there */
	udp_kept = m;
}

static bool hook_contig(void *arg, struct cn_mbuf *m, enum cn_drop why)
{
	const uint8_t *want = arg;
	(void)why;
	assert_null(m->next);
	assert_memory_equal(m->data, want, m->len);
	cn_mbuf_free(m);
	return true;
}

/* Split chains received in place: the payload mbuf (a cluster) is kept by
 * reference (no pullup: a 1400-byte payload could not be), the header
 * mbuf freed; the checksum covers both (a flipped payload bit is a drop,
 * predicted and fused paths); the fused copy into a posted buffer works
 * across the chain; other shapes joined or dropped as eth_chain; UDP
 * hands up the payload mbuf; the slow-path hook gets a contiguous frame. */
static void test_split_chain(void **state)
{
	struct fx *f = *state;
	const struct cn_net_stats *st = cn_net_stats(f->net);
	const struct cn_tcp_stats *ts = cn_tcp_stats(f->tcb);
	static uint8_t pay[1400], g[1600], out[1400];
	struct cn_mbuf_pool_stats m0, c0, m1, c1;
	uint32_t seq = 2001, n;
	uint64_t chain0 = st->rx_chain, join0 = st->rx_chain_join;

	for (uint32_t i = 0; i < sizeof(pay); i++)
		pay[i] = (uint8_t)(i * 31 + 7);
	for (int tsopt = 0; tsopt < 2; tsopt++) {
		n = build_tcp(g, seq, 1001, CN_TCP_ACK, tsopt, pay, 1400);
		cn_mbuf_pool_stats(f->mp, &m0);
		cn_mbuf_pool_stats(f->cp, &c0);
		uint64_t hp = ts->hp_data;
		assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, tsopt ? 66 : 54, true), 0),
				 CN_DROP_NONE);
		cn_mbuf_pool_stats(f->mp, &m1);
		cn_mbuf_pool_stats(f->cp, &c1);
		assert_int_equal(c1.in_use, c0.in_use + 1); /* the payload's cluster, kept */
		assert_int_equal(m1.in_use, m0.in_use + 1); /* its mbuf; the header mbuf freed */
		/* the connection has timestamps: without, the full path */
		assert_int_equal(ts->hp_data, hp + (tsopt ? 1 : 0));
		seq += 1400;
		assert_int_equal(cn_tcp_recv(f->tcb, out, sizeof(out), 0), 1400);
		assert_memory_equal(out, pay, 1400);
	}
	assert_int_equal(st->rx_chain, chain0 + 2);
	assert_int_equal(st->rx_chain_join, join0);

	/* payload bit flipped in the second mbuf: tcp_csum (predicted path) */
	n = build_tcp(g, seq, 1001, CN_TCP_ACK, true, pay, 1400);
	struct cn_mbuf *c = mk_chain(f, g, n, 66, true);
	c->next->data[700] ^= 4;
	assert_int_equal(cn_net_input(f->net, c, 0), CN_DROP_TCP_CSUM);
	/* fused copy into a posted buffer smaller than the payload: the rest
	 * kept by reference; then a corrupted one through the fused path */
	static uint8_t post[1000];
	assert_int_equal(cn_tcp_recv_post(f->tcb, post, sizeof(post)), 0);
	uint64_t fused = ts->rcv_fused;
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 66, true), 0), CN_DROP_NONE);
	assert_int_equal(ts->rcv_fused, fused + 1);
	assert_int_equal(cn_tcp_recv_posted(f->tcb, true), 1000);
	assert_memory_equal(post, pay, 1000);
	assert_int_equal(cn_tcp_recv(f->tcb, out, sizeof(out), 0), 400);
	assert_memory_equal(out, pay + 1000, 400);
	seq += 1400;
	n = build_tcp(g, seq, 1001, CN_TCP_ACK, true, pay, 1400);
	assert_int_equal(cn_tcp_recv_post(f->tcb, post, sizeof(post)), 0);
	c = mk_chain(f, g, n, 66, true);
	c->next->data[1399] ^= 1;
	assert_int_equal(cn_net_input(f->net, c, 0), CN_DROP_TCP_CSUM);
	assert_int_equal(cn_tcp_recv_posted(f->tcb, true), 0);

	/* out of order: the full path, which drops it here (this fixture's
	 * connection has no out-of-order queue; test_netdev's lossy link
	 * queues split chains), then the in-order one */
	uint32_t n2 = build_tcp(g, seq + 1400, 1001, CN_TCP_ACK, true, pay, 1400);
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n2, 66, true), 0), CN_DROP_TCP_OOO);
	n = build_tcp(g, seq, 1001, CN_TCP_ACK, true, pay, 1400);
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 66, true), 0), CN_DROP_NONE);
	seq += 1400;
	assert_int_equal(cn_tcp_recv(f->tcb, out, 1400, 0), 1400);
	assert_memory_equal(out, pay, 1400);

	/* headers cut inside the TCP options, or payload spread over both
	 * mbufs: joined when the second has room, else eth_chain */
	static const uint32_t cuts[] = {40, 60, 100};
	for (unsigned i = 0; i < 3; i++) {
		n = build_tcp(g, seq, 1001, CN_TCP_ACK, true, pay, 1400);
		join0 = st->rx_chain_join;
		assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, cuts[i], false), 0),
				 CN_DROP_ETH_CHAIN);
		assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, cuts[i], true), 0),
				 CN_DROP_NONE);
		assert_int_equal(st->rx_chain_join, join0 + 1);
		seq += 1400;
		assert_int_equal(cn_tcp_recv(f->tcb, out, sizeof(out), 0), 1400);
		assert_memory_equal(out, pay, 1400);
	}

	/* UDP: the payload mbuf handed up, checksum over both */
	struct cn_udp_params up = {.lport = CN_BE16(7), .rx_csum = true, .rx = udp_keep};
	assert_non_null(cn_udp_open(f->net, &up));
	uint8_t *ip = g + 14;
	n = build_tcp(g, 0, 0, 0, false, pay, 1000) - 12; /* reshaped to UDP below */
	ip[2] = (uint8_t)((20 + 8 + 1000) >> 8), ip[3] = (uint8_t)(20 + 8 + 1000);
	ip[9] = 17;
	fix_ip_csum(g);
	uint8_t *uh = ip + 20;
	uh[0] = 0, uh[1] = 9, uh[2] = 0, uh[3] = 7, uh[4] = (1008 >> 8), uh[5] = 1008 & 0xff;
	uh[6] = uh[7] = 0;
	memcpy(uh + 8, pay, 1000);
	uint8_t ph[12] = {192, 168, 0, 2, 192, 168, 0, 1, 0, 17, 1008 >> 8, 1008 & 0xff};
	uint16_t uc = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(uh, 1008, cn_csum_partial_ref(ph, 12, 0)));
	memcpy(uh + 6, &uc, 2);
	n = 14 + 20 + 1008;
	udp_kept = NULL;
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 42, true), 0), CN_DROP_NONE);
	assert_non_null(udp_kept);
	assert_null(udp_kept->next);
	assert_non_null(udp_kept->shared);
	assert_int_equal(udp_kept->len, 1000);
	assert_memory_equal(udp_kept->data, pay, 1000);
	cn_mbuf_free(udp_kept);
	c = mk_chain(f, g, n, 42, true);
	c->next->data[5] ^= 0x80;
	assert_int_equal(cn_net_input(f->net, c, 0), CN_DROP_UDP_CSUM);

	/* the slow-path hook: a contiguous frame, joined from the chain */
	n = build_tcp(g, seq, 1001, CN_TCP_ACK | CN_TCP_RST, true, pay, 100);
	cn_net_set_slow(f->net, hook_contig, g);
	uint64_t slow0 = st->rx_slow;
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 66, true), 0), CN_DROP_NONE);
	assert_int_equal(st->rx_slow, slow0 + 1);
	/* no room in front of the tail: a 166-byte frame is pulled up into
	 * an inline mbuf and offered; a 1466-byte one cannot be made
	 * contiguous, is not offered, and is dropped as eth_chain */
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 66, false), 0), CN_DROP_NONE);
	n = build_tcp(g, seq, 1001, CN_TCP_ACK | CN_TCP_RST, true, pay, 1400);
	assert_int_equal(cn_net_input(f->net, mk_chain(f, g, n, 66, false), 0), CN_DROP_ETH_CHAIN);
	assert_int_equal(st->rx_slow, slow0 + 2);
	cn_net_set_slow(f->net, NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_T(test_parse_fields), CN_T(test_hdr_build), CN_FX(test_malformed_corpus),
		CN_FX(test_fast_path), CN_FX(test_rx_flags), CN_FX(test_fragment_hook),
		CN_FX(test_chained_frame), CN_FX(test_slow_hook_reasons),
		CN_FX(test_pkt_alloc_xmit), CN_FX(test_pkt_free_bulk),
		CN_FX(test_malformed_corpus_chain1), CN_FX(test_malformed_corpus_chain2),
		CN_FX(test_malformed_corpus_chain3), CN_FX(test_fast_path_chain1),
		CN_FX(test_fast_path_chain2), CN_FX(test_fast_path_chain3),
		CN_FX(test_slow_hook_reasons_chain1), CN_FX(test_slow_hook_reasons_chain2),
		CN_FX(test_slow_hook_reasons_chain3), CN_FX(test_split_chain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
