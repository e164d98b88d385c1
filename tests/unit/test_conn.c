/* SPDX-License-Identifier: BSD-2-Clause */
/* Connection management (conn.h): two cachenet stacks back to back on the
 * in-memory NIC, each with its own cn_conn, joined by a test wire that can
 * lose chosen frames and records what crosses it. ARP resolution, ping,
 * passive and active opens under every combination of timestamps and
 * window scaling (checked on the wire), data both ways, FIN from either
 * side and both at once, RST (refused, reset, challenge ACK, never an RST
 * for an RST), lost SYN / SYN-ACK / ACK, handshake and ARP timeouts,
 * backlog, 1,000 open/transfer/close cycles, and hand-built frames for the
 * edge cases (bad ARP, bad ICMP checksum, SYN with odd options). Every
 * test ends with no socket left and the mbuf pools at their start counts. */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/conn.h"
#include "cachenet/csum.h"
#include "cachenet/lab/netdev.h"
#include "cachenet/tcp.h"

#define NCAP 512

struct fx;

struct host {
	struct fx *f;
	struct cn_netdev *dev;
	struct cn_net *net;
	struct cn_conn *conn;
	const uint8_t *mac;
	cn_be32_t ip;
	int id; /* 0 = A, 1 = B */
};

struct cap {
	uint8_t buf[1600];
	uint32_t len;
	int from;
};

/* Return false to lose the frame. n is the frame's index from its side. */
typedef bool (*filter_fn)(struct fx *f, int from, const uint8_t *frame, uint32_t len);

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	uint32_t m0, c0; /* mbufs and clusters in use after setup */
	struct host a, b;
	uint64_t now;
	filter_fn filter;
	int drop_left;      /* for the filters: how many more to lose */
	unsigned lost;
	struct cap cap[NCAP];
	unsigned ncap;      /* total captured (ring of NCAP) */
};

/* The hosts' addresses as initialiser bytes, for the golden frames below. */
#define BYTES_MAC_A 2, 0, 0, 0, 0, 0xa
#define BYTES_MAC_B 2, 0, 0, 0, 0, 0xb
#define BYTES_MAC_X 2, 0, 0, 0, 0, 0xc
#define BYTES_IP_A 10, 0, 0, 1
#define BYTES_IP_B 10, 0, 0, 2
#define BYTES_IP_X 10, 0, 0, 3
#define BYTES_BROADCAST 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
#define BYTES_UNKNOWN 0, 0, 0, 0, 0, 0 /* a request's target hardware address */

static const uint8_t MAC_A[6] = {BYTES_MAC_A}, MAC_B[6] = {BYTES_MAC_B};
static const uint8_t MAC_X[6] = {BYTES_MAC_X}; /* a hand-built third host */
#define IP_A CN_IPV4(10, 0, 0, 1)
#define IP_B CN_IPV4(10, 0, 0, 2)
#define IP_X CN_IPV4(10, 0, 0, 3)
#define IP_NOBODY CN_IPV4(10, 0, 0, 99)

/* A golden ARP frame, 42 bytes written out here, not by the library (RFC
 * 826 over Ethernet): destination, source, EtherType 0x0806; hardware type
 * 1, protocol 0x0800, lengths 6 and 4, the op (1 request, 2 reply), then
 * sender MAC and IPv4 address, target MAC and IPv4 address. */
#define ARP_FRAME(dst, src, op, sha, spa, tha, tpa) \
	{dst, src, 0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, op, sha, spa, tha, tpa}

/* The third host X asks who has B's address. */
static const uint8_t ARP_REQ_X[42] = ARP_FRAME(BYTES_BROADCAST, BYTES_MAC_X, 1, BYTES_MAC_X,
					       BYTES_IP_X, BYTES_UNKNOWN, BYTES_IP_B);

static struct cn_conn_params conn_params(void)
{
	struct cn_conn_params p = {
		.tcp = {.csum = CN_TCP_CSUM_OFFLOAD, .sndbuf = CN_SOCKBUF_CHAIN,
			.sndbuf_size = 256 * 1024, .rcvbuf_size = 256 * 1024, .ooo_max = 16,
			.delack_ticks = 2, .rto_init = 20},
		.syn_rto = 10,
		.syn_retries = 3,
		.time_wait = 30,
		.arp_retry = 10,
		.orphan_timeout = 2000,
		.isn_secret = 0x0123456789abcdefull,
	};
	return p;
}

static void wire(struct fx *f, int from, const uint8_t *frame, uint32_t len)
{
	struct host *to = from == 0 ? &f->b : &f->a;
	struct cap *c = &f->cap[f->ncap++ % NCAP];

	assert_true(len <= sizeof(c->buf));
	memcpy(c->buf, frame, len);
	c->len = len;
	c->from = from;
	if (f->filter && !f->filter(f, from, frame, len)) {
		f->lost++;
		return;
	}
	cn_netdev_nic_rx(to->dev, frame, len);
}

static void wire_a(void *arg, const uint8_t *frame, uint32_t len)
{
	wire(arg, 0, frame, len);
}

static void wire_b(void *arg, const uint8_t *frame, uint32_t len)
{
	wire(arg, 1, frame, len);
}

static void host_init(struct fx *f, struct host *h, int id, const struct cn_conn_params *cp)
{
	struct cn_netdev_params dp = {.ring_size = 512, .batch = 64, .mpool = f->mp, .cpool = f->cp};
	struct cn_net_params np = {.mpool = f->mp, .cpool = f->cp, .xmit = cn_netdev_xmit_hook,
				   .max_conns = 64};

	h->f = f;
	h->id = id;
	h->mac = id ? MAC_B : MAC_A;
	h->ip = id ? IP_B : IP_A;
	h->dev = cn_netdev_create(&dp);
	assert_non_null(h->dev);
	np.addr = h->ip;
	memcpy(np.mac, h->mac, 6);
	np.xmit_arg = h->dev;
	h->net = cn_net_create(&np);
	assert_non_null(h->net);
	h->conn = cn_conn_create(h->net, cp);
	assert_non_null(h->conn);
	cn_netdev_set_wire(h->dev, id ? wire_b : wire_a, f);
}

static void host_fini(struct host *h)
{
	assert_int_equal(cn_conn_socks(h->conn), 0);
	cn_conn_destroy(h->conn);
	cn_netdev_tx_reap(h->dev);
	cn_netdev_destroy(h->dev);
	assert_int_equal(cn_net_destroy(h->net), 0);
}

static void hosts_up(struct fx *f, const struct cn_conn_params *pa, const struct cn_conn_params *pb)
{
	struct cn_conn_params d = conn_params();

	host_init(f, &f->a, 0, pa ? pa : &d);
	host_init(f, &f->b, 1, pb ? pb : &d);
	f->now = 1;
	f->filter = NULL;
	f->lost = 0;
	f->ncap = 0;
}

static void hosts_down(struct fx *f)
{
	host_fini(&f->a);
	host_fini(&f->b);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f || cn_test_pools(&f->mp, &f->cp, 8192, 4096, 0, 0) != 0)
		return -1;
	cn_test_pools_in_use(f->mp, f->cp, &f->m0, &f->c0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	cn_test_pools_free(f->mp, f->cp, f->m0, f->c0);
	free(f);
	return 0;
}

/* Move every frame until the wire is quiet. */
static unsigned pump(struct fx *f)
{
	unsigned total = 0, n;

	do {
		n = cn_netdev_nic_tx(f->a.dev) + cn_netdev_nic_tx(f->b.dev);
		n += cn_netdev_poll(f->a.dev, f->a.net, f->now);
		n += cn_netdev_poll(f->b.dev, f->b.net, f->now);
		total += n;
	} while (n);
	return total;
}

/* @p ticks ticks: pump, advance the clock, run both conns' timers. */
static void run(struct fx *f, unsigned ticks)
{
	for (unsigned t = 0; t < ticks; t++) {
		pump(f);
		f->now++;
		cn_conn_poll(f->a.conn, f->now);
		cn_conn_poll(f->b.conn, f->now);
	}
	pump(f);
}

/* Close the sockets in @ap (NULL-ended) at f->now, run the pair @ticks
 * (if not 0), require (@b_empty) that B holds no socket then, and take
 * both hosts down. */
static void close_down_ap(struct fx *f, unsigned ticks, bool b_empty, va_list ap)
{
	struct cn_sock *s;

	while ((s = va_arg(ap, struct cn_sock *)) != NULL)
		cn_sock_close(s, f->now);
	if (ticks)
		run(f, ticks);
	if (b_empty)
		assert_int_equal(cn_conn_socks(f->b.conn), 0);
	hosts_down(f);
}

static void close_down(struct fx *f, unsigned ticks, ...)
{
	va_list ap;

	va_start(ap, ticks);
	close_down_ap(f, ticks, false, ap);
	va_end(ap);
}

/* close_down(), and B's sockets all gone once the pair has run. */
static void close_down_empty(struct fx *f, unsigned ticks, ...)
{
	va_list ap;

	va_start(ap, ticks);
	close_down_ap(f, ticks, true, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- frames */

static uint32_t mk_ipv4(uint8_t *fr, const uint8_t *smac, const uint8_t *dmac, cn_be32_t saddr,
			cn_be32_t daddr, uint8_t proto, uint32_t l4len)
{
	struct cn_ipv4_hdr *ip = (struct cn_ipv4_hdr *)(fr + 14);

	memcpy(fr, dmac, 6);
	memcpy(fr + 6, smac, 6);
	fr[12] = 0x08, fr[13] = 0x00;
	memset(ip, 0, 20);
	ip->ver_ihl = 0x45;
	ip->total_len = cn_hton16((uint16_t)(20 + l4len));
	ip->ttl = 64;
	ip->proto = proto;
	ip->src = saddr;
	ip->dst = daddr;
	ip->csum = cn_csum_ipv4_hdr(ip, 20);
	return 34 + l4len;
}

/* A TCP segment from X (or anyone) to a host, checksums right. */
static uint32_t mk_tcp(uint8_t *fr, const uint8_t *smac, const uint8_t *dmac, cn_be32_t saddr,
		       cn_be32_t daddr, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack,
		       uint8_t flags, uint16_t win, const uint8_t *opt, uint32_t optlen,
		       const void *pay, uint32_t plen)
{
	uint32_t thl = 20 + optlen, len = mk_ipv4(fr, smac, dmac, saddr, daddr, 6, thl + plen);
	uint8_t *th = fr + 34;
	uint16_t c;

	assert_true(optlen % 4 == 0);
	memset(th, 0, 20);
	th[0] = (uint8_t)(sport >> 8), th[1] = (uint8_t)sport;
	th[2] = (uint8_t)(dport >> 8), th[3] = (uint8_t)dport;
	seq = cn_hton32(seq), ack = cn_hton32(ack);
	memcpy(th + 4, &seq, 4);
	memcpy(th + 8, &ack, 4);
	th[12] = (uint8_t)((thl / 4) << 4);
	th[13] = flags;
	th[14] = (uint8_t)(win >> 8), th[15] = (uint8_t)win;
	if (optlen)
		memcpy(th + 20, opt, optlen);
	if (plen)
		memcpy(th + thl, pay, plen);
	c = (uint16_t)~cn_csum_fold(cn_csum_partial(th, thl + plen,
			cn_csum_pseudo_ipv4(saddr, daddr, 6, (uint16_t)(thl + plen))));
	memcpy(th + 16, &c, 2);
	return len;
}

static void inject(struct host *h, const uint8_t *fr, uint32_t len)
{
	assert_int_equal(cn_netdev_nic_rx(h->dev, fr, len), 0);
}

/* The 42-byte ARP frame @arp into @fr, zero-padded to Ethernet's minimum
 * of 60 bytes. */
static void arp_frame(uint8_t *fr, const uint8_t *arp)
{
	memcpy(fr, arp, 42);
	memset(fr + 42, 0, 18);
}

/* The i-th most recent captured frame (0 = newest) sent by @p from that
 * parses as TCP; NULL when none. */
static const struct cap *last_tcp(struct fx *f, int from, unsigned i, struct cn_pkt_info *pi)
{
	unsigned n = f->ncap < NCAP ? f->ncap : NCAP;

	for (unsigned k = 0; k < n; k++) {
		const struct cap *c = &f->cap[(f->ncap - 1 - k) % NCAP];
		if (c->from != from || cn_net_parse(c->buf, c->len, 0, pi) != CN_DROP_NONE ||
		    pi->proto != CN_IPV4_PROTO_TCP)
			continue;
		if (i-- == 0)
			return c;
	}
	return NULL;
}

static unsigned count_frames(struct fx *f, int from)
{
	unsigned n = 0, m = f->ncap < NCAP ? f->ncap : NCAP;

	for (unsigned k = 0; k < m; k++)
		if (f->cap[k].from == from)
			n++;
	return n;
}

/* Does the TCP header of a captured frame carry option @p kind? */
static bool has_opt(const struct cap *c, uint8_t kind)
{
	const uint8_t *th = c->buf + 34, *o = th + 20, *end = th + (th[12] >> 4) * 4;

	while (o < end) {
		if (*o == CN_TCPOPT_EOL)
			break;
		if (*o == CN_TCPOPT_NOP) {
			o++;
			continue;
		}
		if (*o == kind)
			return true;
		if (o + 1 >= end || o[1] < 2)
			break;
		o += o[1];
	}
	return false;
}

/* ---------------------------------------------------------------- helpers */

/* A (client) connects to B (listening on @p port); both ends established.
 * Returns the client socket and the accepted one in *srv. */
static struct cn_sock *connect_pair(struct fx *f, struct cn_sock *l, uint16_t port,
				    struct cn_sock **srv)
{
	struct cn_sock *c = cn_sock_connect(f->a.conn, IP_B, CN_BE16(port), f->now);

	assert_non_null(c);
	for (int i = 0; i < 200 && cn_sock_state(c) != CN_SOCK_ESTABLISHED; i++)
		run(f, 1);
	assert_int_equal(cn_sock_state(c), CN_SOCK_ESTABLISHED);
	run(f, 1);
	*srv = cn_sock_accept(l);
	assert_non_null(*srv);
	assert_int_equal(cn_sock_state(*srv), CN_SOCK_ESTABLISHED);
	assert_non_null(cn_sock_tcb(c));
	assert_non_null(cn_sock_tcb(*srv));
	return c;
}

/* Send @p n pattern bytes from s to r and check them on arrival. */
static void transfer(struct fx *f, struct cn_sock *s, struct cn_sock *r, uint32_t n, uint8_t seed)
{
	static uint8_t buf[65536], got[65536];
	uint32_t sent = 0, rcvd = 0;

	assert_true(n <= sizeof(buf));
	for (uint32_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(seed + i * 7 + (i >> 8));
	for (int it = 0; it < 5000 && rcvd < n; it++) {
		if (sent < n) {
			int k = cn_sock_send(s, buf + sent, n - sent, f->now);
			assert_true(k >= 0);
			sent += (uint32_t)k;
		}
		run(f, 1);
		int k = cn_sock_recv(r, got + rcvd, n - rcvd, f->now);
		if (k == -EAGAIN)
			continue;
		assert_true(k > 0);
		rcvd += (uint32_t)k;
	}
	assert_int_equal(rcvd, n);
	assert_memory_equal(buf, got, n);
}

static void drain_to_eof(struct fx *f, struct cn_sock *s)
{
	uint8_t b[4096];
	int k;

	for (int i = 0; i < 500; i++) {
		k = cn_sock_recv(s, b, sizeof(b), f->now);
		if (k == 0)
			return;
		assert_true(k == -EAGAIN || k > 0);
		run(f, 1);
	}
	fail_msg("no end of stream");
}

/* ---------------------------------------------------------------- tests */

/* An active open to an address not in the table ARPs first; the reply is
 * learned, the SYN follows; the target learned the requester too. */
static void test_arp_resolution(void **state)
{
	struct fx *f = *state;
	uint8_t mac[6];

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 8), *srv;
	assert_false(cn_conn_arp_lookup(f->a.conn, IP_B, mac));
	struct cn_sock *c = connect_pair(f, l, 80, &srv);
	const struct cn_conn_stats *sa = cn_conn_stats(f->a.conn), *sb = cn_conn_stats(f->b.conn);
	assert_int_equal(sa->arp_req_out, 1);
	assert_int_equal(sb->arp_req_in, 1);
	assert_int_equal(sb->arp_rep_out, 1);
	assert_int_equal(sa->arp_rep_in, 1);
	assert_true(cn_conn_arp_lookup(f->a.conn, IP_B, mac));
	assert_memory_equal(mac, MAC_B, 6);
	assert_true(cn_conn_arp_lookup(f->b.conn, IP_A, mac));
	assert_memory_equal(mac, MAC_A, 6);
	/* the request on the wire, byte by byte (RFC 826 layout) */
	const struct cap *rq = &f->cap[0];
	assert_int_equal(rq->from, 0);
	assert_int_equal(rq->len, 60);
	static const uint8_t want[42] = ARP_FRAME(BYTES_BROADCAST, BYTES_MAC_A, 1, BYTES_MAC_A,
						 BYTES_IP_A, BYTES_UNKNOWN, BYTES_IP_B);
	assert_memory_equal(rq->buf, want, 42);
	/* a static entry is not overwritten by the wire */
	assert_int_equal(cn_conn_arp_add(f->a.conn, IP_X, MAC_X), 0);
	assert_int_equal(cn_conn_arp_add(f->a.conn, CN_BE32(0), MAC_X), -EINVAL);
	cn_sock_abort(c, f->now);
	close_down(f, 5, srv, l, NULL);
}

/* Hand-built ARP frames: a request for us (reply checked), a request for
 * someone else, truncated, wrong hardware type, unknown op, a reply. */
static void test_arp_edge(void **state)
{
	struct fx *f = *state;
	uint8_t fr[64], mac[6];
	const struct cn_conn_stats *sb;

	hosts_up(f, NULL, NULL);
	sb = cn_conn_stats(f->b.conn);
	arp_frame(fr, ARP_REQ_X);
	inject(&f->b, fr, 60);
	pump(f);
	assert_int_equal(sb->arp_req_in, 1);
	assert_int_equal(sb->arp_rep_out, 1);
	const struct cap *rp = &f->cap[(f->ncap - 1) % NCAP];
	assert_int_equal(rp->from, 1);
	static const uint8_t want[42] = ARP_FRAME(BYTES_MAC_X, BYTES_MAC_B, 2, BYTES_MAC_B,
						 BYTES_IP_B, BYTES_MAC_X, BYTES_IP_X);
	assert_memory_equal(rp->buf, want, 42);
	assert_true(cn_conn_arp_lookup(f->b.conn, IP_X, mac));
	assert_memory_equal(mac, MAC_X, 6);

	unsigned before = f->ncap;
	/* The request with one byte changed: for another address, hardware
	 * type 6 (IEEE 802), a broadcast sender address, op 3 (RARP
	 * request), a reply to us; then cut short. */
	static const struct {
		uint8_t off, v;
	} bad[] = {{41, 9}, {15, 6}, {22, 0xff}, {21, 3}, {21, 2}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memcpy(fr, ARP_REQ_X, 42);
		fr[bad[i].off] = bad[i].v;
		inject(&f->b, fr, 60);
	}
	memcpy(fr, ARP_REQ_X, 42);
	inject(&f->b, fr, 30);
	pump(f);
	assert_int_equal(f->ncap, before); /* nothing answered */
	assert_int_equal(sb->drop[CN_CONN_DROP_ARP_NOT_US], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_ARP_BAD], 3);
	assert_int_equal(sb->drop[CN_CONN_DROP_ARP_OP], 1);
	assert_int_equal(sb->arp_rep_in, 1);
	assert_int_equal(sb->arp_req_in, 1);
	/* a non-IP, non-ARP EtherType is the stack's to count */
	memcpy(fr, ARP_REQ_X, 42);
	fr[12] = 0x86, fr[13] = 0xdd;
	inject(&f->b, fr, 60);
	pump(f);
	assert_int_equal(cn_net_stats(f->b.net)->drop[CN_DROP_ETH_TYPE], 1);
	hosts_down(f);
}

static uint32_t mk_echo(uint8_t *fr, uint8_t type, uint32_t plen, cn_be32_t daddr)
{
	uint8_t *ic = fr + 34;
	uint16_t c;

	ic[0] = type, ic[1] = 0, ic[2] = ic[3] = 0;
	ic[4] = 0x12, ic[5] = 0x34, ic[6] = 0, ic[7] = 7;
	for (uint32_t i = 0; i < plen; i++)
		ic[8 + i] = (uint8_t)(i * 3 + 1);
	c = cn_csum(ic, 8 + plen);
	memcpy(ic + 2, &c, 2);
	return mk_ipv4(fr, MAC_X, MAC_B, IP_X, daddr, 1, 8 + plen);
}

/* Echo requests (copied and referenced payloads) get checked replies; a
 * bad checksum, other types and other addresses get nothing. */
static void test_ping(void **state)
{
	struct fx *f = *state;
	static uint8_t fr[1600];
	const struct cn_conn_stats *sb;
	static const uint32_t lens[] = {0, 10, 56, 64, 65, 1000, 1472};

	hosts_up(f, NULL, NULL);
	sb = cn_conn_stats(f->b.conn);
	for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		uint32_t plen = lens[k], len = mk_echo(fr, 8, plen, IP_B);
		inject(&f->b, fr, len);
		pump(f);
		assert_int_equal(sb->icmp_echo_out, k + 1);
		const struct cap *r = &f->cap[(f->ncap - 1) % NCAP];
		assert_int_equal(r->from, 1);
		assert_true(r->len == (len < 60 ? 60 : len));
		assert_memory_equal(r->buf, MAC_X, 6);
		assert_memory_equal(r->buf + 6, MAC_B, 6);
		assert_int_equal(cn_csum_ipv4_hdr(r->buf + 14, 20), 0);
		assert_int_equal(r->buf[14 + 9], 1);
		assert_memory_equal(r->buf + 26, fr + 30, 4); /* src = request's dst */
		assert_memory_equal(r->buf + 30, fr + 26, 4);
		assert_int_equal(r->buf[34], 0);                       /* echo reply */
		assert_int_equal(cn_csum(r->buf + 34, 8 + plen), 0);   /* checksum good */
		assert_memory_equal(r->buf + 38, fr + 38, 4 + plen);   /* id, seq, data */
	}
	unsigned out = sb->icmp_echo_out;
	uint32_t len = mk_echo(fr, 8, 100, IP_B);
	fr[34 + 20] ^= 1; /* a data bit: the checksum no longer matches */
	inject(&f->b, fr, len);
	len = mk_echo(fr, 13, 12, IP_B); /* timestamp request */
	inject(&f->b, fr, len);
	len = mk_echo(fr, 8, 4, IP_B);
	fr[14 + 2] = 0, fr[14 + 3] = 20 + 4; /* IP length cuts the ICMP header */
	memset(fr + 24, 0, 2);
	{
		uint16_t c = cn_csum_ipv4_hdr(fr + 14, 20);
		memcpy(fr + 24, &c, 2);
	}
	inject(&f->b, fr, len);
	len = mk_echo(fr, 8, 8, IP_X); /* to someone else: the stack drops it */
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->icmp_echo_out, out);
	assert_int_equal(sb->drop[CN_CONN_DROP_ICMP_CSUM], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_ICMP_TYPE], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_ICMP_TRUNC], 1);
	assert_int_equal(cn_net_stats(f->b.net)->drop[CN_DROP_IP_NOT_US], 1);
	hosts_down(f);
}

/* Every combination of timestamps, window scaling and SACK refused on
 * either side: what the SYN, the SYN-ACK and the data segments carry, and
 * data both ways. rcvbuf 256 KB: we offer window scale 3. */
static void test_open_negotiation(void **state)
{
	struct fx *f = *state;

	for (unsigned combo = 0; combo < 64; combo++) {
		struct cn_conn_params pa = conn_params(), pb = conn_params();
		struct cn_pkt_info pi;
		const struct cap *c;
		pa.no_ts = combo & 1, pa.no_wscale = (combo >> 1) & 1;
		pb.no_ts = (combo >> 2) & 1, pb.no_wscale = (combo >> 3) & 1;
		pa.no_sack = (combo >> 4) & 1, pb.no_sack = (combo >> 5) & 1;
		pa.mss = 1400; /* B sends at most 1400 (A's MSS), A at most 1460 */
		bool ts = !pa.no_ts && !pb.no_ts, ws = !pa.no_wscale && !pb.no_wscale;
		bool sack = !pa.no_sack && !pb.no_sack;
		struct cn_tcp_info ti;
		hosts_up(f, &pa, &pb);
		assert_int_equal(cn_conn_arp_add(f->a.conn, IP_B, MAC_B), 0);
		struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(7), 4), *srv;
		struct cn_sock *cl = connect_pair(f, l, 7, &srv);
		/* frames: SYN (A), SYN-ACK (B), ACK (A) */
		c = &f->cap[0];
		assert_int_equal(cn_net_parse(c->buf, c->len, 0, &pi), CN_DROP_NONE);
		assert_int_equal(pi.tcp_flags, CN_TCP_SYN);
		assert_true(pi.has_mss && pi.mss == 1400);
		assert_int_equal(pi.has_ts, !pa.no_ts);
		assert_int_equal(pi.has_ws, !pa.no_wscale);
		assert_int_equal(has_opt(c, CN_TCPOPT_SACK_PERM), !pa.no_sack);
		c = &f->cap[1];
		assert_int_equal(cn_net_parse(c->buf, c->len, 0, &pi), CN_DROP_NONE);
		assert_int_equal(pi.tcp_flags, CN_TCP_SYN | CN_TCP_ACK);
		assert_true(pi.has_mss && pi.mss == 1460);
		assert_int_equal(pi.has_ts, ts);
		assert_int_equal(pi.has_ws, ws);
		if (ws)
			assert_int_equal(pi.wscale, 3);
		assert_int_equal(pi.win, 65535); /* never scaled in a SYN */
		assert_int_equal(has_opt(c, CN_TCPOPT_SACK_PERM), sack);
		cn_tcp_get_info(cn_sock_tcb(cl), &ti);
		assert_int_equal(ti.sack, sack);
		cn_tcp_get_info(cn_sock_tcb(srv), &ti);
		assert_int_equal(ti.sack, sack);
		c = &f->cap[2];
		assert_int_equal(cn_net_parse(c->buf, c->len, 0, &pi), CN_DROP_NONE);
		assert_int_equal(pi.tcp_flags, CN_TCP_ACK);
		assert_int_equal(pi.has_ts, ts);
		assert_int_equal(pi.win, ws ? (256 * 1024) >> 3 : 65535);
		/* data both ways; a full-size segment from B is A's MSS */
		transfer(f, cl, srv, 20000, (uint8_t)combo);
		transfer(f, srv, cl, 20000, (uint8_t)(combo + 1));
		c = last_tcp(f, 1, 0, &pi);
		unsigned biggest = 0;
		for (unsigned i = 0; (c = last_tcp(f, 1, i, &pi)); i++)
			if (pi.pay_len > biggest)
				biggest = pi.pay_len;
		assert_int_equal(biggest, ts ? 1400 - 12 : 1400);
		for (unsigned i = 0; (c = last_tcp(f, 0, i, &pi)); i++)
			if (!(pi.tcp_flags & CN_TCP_SYN))
				assert_int_equal(pi.has_ts, ts);
		assert_int_equal(cn_conn_stats(f->a.conn)->active_opens, 1);
		assert_int_equal(cn_conn_stats(f->b.conn)->passive_opens, 1);
		close_down(f, 100, cl, srv, l, NULL);
	}
}

/* Client closes first: FIN_WAIT_1/2 and TIME_WAIT on A, CLOSE_WAIT and
 * LAST_ACK on B; then the server closes first; all freed at the end. */
static void test_close_either_side(void **state)
{
	struct fx *f = *state;

	for (int server_first = 0; server_first < 2; server_first++) {
		hosts_up(f, NULL, NULL);
		struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
		struct cn_sock *cl = connect_pair(f, l, 80, &srv);
		struct cn_sock *first = server_first ? srv : cl, *second = server_first ? cl : srv;
		struct host *hf = server_first ? &f->b : &f->a, *hs = server_first ? &f->a : &f->b;
		transfer(f, cl, srv, 3000, 1);
		transfer(f, srv, cl, 3000, 2);
		assert_int_equal(cn_sock_shutdown(first, f->now), 0);
		assert_int_equal(cn_sock_state(first), CN_SOCK_FIN_WAIT_1);
		assert_int_equal(cn_sock_send(first, "x", 1, f->now), -EPIPE);
		run(f, 1);
		assert_int_equal(cn_sock_state(first), CN_SOCK_FIN_WAIT_2);
		assert_int_equal(cn_sock_state(second), CN_SOCK_CLOSE_WAIT);
		drain_to_eof(f, second);
		assert_true(cn_sock_events(second) & CN_SOCK_IN);
		/* half-closed: the second side still sends */
		transfer(f, second, first, 5000, 3);
		cn_sock_close(second, f->now); /* LAST_ACK, freed once ACKed */
		run(f, 2);
		assert_int_equal(cn_conn_socks(hs->conn), server_first ? 0 : 1);
		assert_int_equal(cn_sock_state(first), CN_SOCK_TIME_WAIT);
		drain_to_eof(f, first);
		cn_sock_close(first, f->now); /* released in TIME_WAIT */
		run(f, 40); /* time_wait 30 */
		assert_int_equal(cn_conn_stats(hf->conn)->tw_expired, 1);
		assert_int_equal(cn_conn_stats(hf->conn)->closes, 1);
		assert_int_equal(cn_conn_stats(hs->conn)->closes, 1);
		cn_sock_close(l, f->now);
		assert_int_equal(cn_net_drops(f->a.net) + cn_net_drops(f->b.net), 0);
		hosts_down(f);
	}
}

/* Both shut down at the same time: FIN_WAIT_1 -> CLOSING -> TIME_WAIT on
 * both sides. */
static void test_simultaneous_close(void **state)
{
	struct fx *f = *state;

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	transfer(f, cl, srv, 1000, 5);
	assert_int_equal(cn_sock_shutdown(cl, f->now), 0);
	assert_int_equal(cn_sock_shutdown(srv, f->now), 0);
	/* both FINs cross: each side gets the other's FIN before its ACK */
	cn_netdev_nic_tx(f->a.dev);
	cn_netdev_nic_tx(f->b.dev);
	cn_netdev_poll(f->a.dev, f->a.net, f->now);
	cn_netdev_poll(f->b.dev, f->b.net, f->now);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSING);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_CLOSING);
	run(f, 1);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_TIME_WAIT);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_TIME_WAIT);
	drain_to_eof(f, cl);
	drain_to_eof(f, srv);
	run(f, 40);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(cl), 0);
	assert_null(cn_sock_tcb(cl));
	assert_int_equal(cn_sock_recv(cl, (uint8_t[1]){0}, 1, f->now), 0);
	assert_int_equal(cn_sock_send(cl, "x", 1, f->now), -EPIPE);
	close_down(f, 0, cl, srv, l, NULL);
}

/* A connect to a port nobody listens on is refused by a RST (RFC 9293
 * 3.10.7.1: <SEQ=0><ACK=SEG.SEQ+1><CTL=RST,ACK> for the SYN). */
static void test_refused(void **state)
{
	struct fx *f = *state;
	struct cn_pkt_info pi;

	hosts_up(f, NULL, NULL);
	struct cn_sock *c = cn_sock_connect(f->a.conn, IP_B, CN_BE16(9), f->now);
	assert_non_null(c);
	assert_int_equal(cn_sock_send(c, "x", 1, f->now), -ENOTCONN);
	assert_int_equal(cn_sock_recv(c, (uint8_t[4]){0}, 4, f->now), -EAGAIN);
	run(f, 5);
	assert_int_equal(cn_sock_state(c), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(c), ECONNREFUSED);
	assert_int_equal(cn_sock_recv(c, (uint8_t[4]){0}, 4, f->now), -ECONNREFUSED);
	assert_int_equal(cn_sock_send(c, "x", 1, f->now), -ENOTCONN);
	assert_true(cn_sock_events(c) & CN_SOCK_ERR);
	const struct cap *syn = last_tcp(f, 0, 0, &pi);
	assert_non_null(syn);
	uint32_t iss = pi.seq;
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST | CN_TCP_ACK);
	assert_int_equal(pi.seq, 0);
	assert_int_equal(pi.ack, iss + 1);
	assert_int_equal(cn_conn_stats(f->a.conn)->refused, 1);
	assert_int_equal(cn_conn_stats(f->b.conn)->drop[CN_CONN_DROP_TCP_CLOSED], 1);
	assert_int_equal(cn_conn_stats(f->b.conn)->rst_out, 1);
	close_down(f, 0, c, NULL);
}

/* Reset of an established connection: abort on one side, ECONNRESET on
 * the other; a RST in the window but not at RCV.NXT draws a challenge ACK
 * and changes nothing (RFC 5961 3.2), one outside it is ignored; a RST to
 * a closed port is never answered; a SYN on an established connection
 * draws a challenge ACK (RFC 5961 4.2). */
static void test_reset(void **state)
{
	struct fx *f = *state;
	struct cn_pkt_info pi;
	struct cn_tcp_info ti;
	uint8_t fr[128];
	uint32_t len;

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	transfer(f, cl, srv, 2000, 9);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	uint16_t cport;
	cn_be16_t cport_be;
	cn_sock_addrs(cl, NULL, &cport_be, NULL, NULL);
	cport = cn_be16toh(cport_be);
	cn_tcp_get_info(cn_sock_tcb(srv), &ti);

	/* in-window RST, 100 past RCV.NXT: challenge ACK */
	unsigned nb = count_frames(f, 1);
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, ti.rcv_nxt + 100, 0, CN_TCP_RST, 0,
		     NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_RST_CHALLENGE], 1);
	assert_int_equal(sb->challenge_acks, 1);
	assert_int_equal(count_frames(f, 1), nb + 1);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_ACK);
	assert_int_equal(pi.ack, ti.rcv_nxt);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_ESTABLISHED);
	/* outside the window: ignored */
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, ti.rcv_nxt - 5000, 0, CN_TCP_RST, 0,
		     NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	/* a SYN on the established connection: challenge ACK */
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, 12345, 0, CN_TCP_SYN, 1000, NULL, 0,
		     NULL, 0);
	inject(&f->b, fr, len);
	/* a RST with a bad checksum */
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, ti.rcv_nxt, 0, CN_TCP_RST, 0, NULL, 0,
		     NULL, 0);
	fr[34 + 16] ^= 0x40;
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_RST_SEQ], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_SYN_CHALLENGE], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_CSUM], 1);
	assert_int_equal(sb->challenge_acks, 2);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_ESTABLISHED);
	transfer(f, srv, cl, 1000, 4); /* still works */

	/* RST to a closed port: not answered */
	nb = count_frames(f, 1);
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 5555, 81, 1, 2, CN_TCP_RST | CN_TCP_ACK, 0, NULL,
		     0, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(count_frames(f, 1), nb);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_RST_CLOSED], 1);
	/* an ACK to a closed port: <SEQ=SEG.ACK><CTL=RST> */
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 5555, 81, 1, 777, CN_TCP_ACK, 0, NULL, 0,
		     "abc", 3);
	inject(&f->b, fr, len);
	pump(f);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST);
	assert_int_equal(pi.seq, 777);
	assert_int_equal(cn_be16toh(pi.dport), 5555);

	/* abort: A sends <SEQ=SND.NXT><ACK=RCV.NXT><RST,ACK>, B resets */
	transfer(f, cl, srv, 500, 7);
	nb = count_frames(f, 1);
	cn_sock_abort(cl, f->now);
	assert_int_equal(cn_conn_socks(f->a.conn), 0);
	run(f, 1);
	assert_int_equal(cn_sock_state(srv), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(srv), ECONNRESET);
	assert_null(cn_sock_tcb(srv));
	assert_int_equal(cn_sock_recv(srv, fr, 10, f->now), -ECONNRESET);
	assert_int_equal(cn_sock_send(srv, fr, 10, f->now), -ECONNRESET);
	assert_int_equal(cn_sock_events(srv), CN_SOCK_IN | CN_SOCK_ERR | CN_SOCK_HUP);
	assert_int_equal(sb->resets, 1);
	assert_int_equal(sb->rst_in, 4); /* the bad-checksum one is not counted */
	assert_int_equal(cn_conn_stats(f->a.conn)->rst_out, 1);
	/* the RST went out and was not answered */
	assert_non_null(last_tcp(f, 0, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST | CN_TCP_ACK);
	assert_int_equal(count_frames(f, 1), nb);
	close_down(f, 0, srv, l, NULL);
}

static bool drop_first_syn(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	struct cn_pkt_info pi;

	(void)from;
	if (f->drop_left > 0 && cn_net_parse(fr, len, 0, &pi) == CN_DROP_NONE &&
	    pi.proto == CN_IPV4_PROTO_TCP && pi.tcp_flags == CN_TCP_SYN) {
		f->drop_left--;
		return false;
	}
	return true;
}

static bool drop_first_synack(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	struct cn_pkt_info pi;

	(void)from;
	if (f->drop_left > 0 && cn_net_parse(fr, len, 0, &pi) == CN_DROP_NONE &&
	    pi.proto == CN_IPV4_PROTO_TCP && pi.tcp_flags == (CN_TCP_SYN | CN_TCP_ACK)) {
		f->drop_left--;
		return false;
	}
	return true;
}

/* The ACK that completes the handshake (A's first segment without SYN). */
static bool drop_third(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	struct cn_pkt_info pi;

	if (from == 0 && f->drop_left > 0 && cn_net_parse(fr, len, 0, &pi) == CN_DROP_NONE &&
	    pi.proto == CN_IPV4_PROTO_TCP && pi.tcp_flags == CN_TCP_ACK && pi.pay_len == 0) {
		f->drop_left--;
		return false;
	}
	return true;
}

/* Lost SYN: retransmitted after syn_rto. Lost SYN-ACK: the SYN comes again
 * and is answered at once (and the SYN-ACK timer would too). Lost third
 * ACK with data right behind it: the data segment completes B's handshake
 * and its bytes are not lost. Lost third ACK and nothing sent: B's SYN-ACK
 * retransmission draws A's ACK. */
static void test_handshake_loss(void **state)
{
	struct fx *f = *state;
	static const filter_fn filt[] = {drop_first_syn, drop_first_synack, drop_third, drop_third};

	for (unsigned k = 0; k < 4; k++) {
		struct cn_conn_params pb = conn_params();
		pb.syn_rto = 25; /* A's SYN timer (10) fires first */
		hosts_up(f, NULL, &pb);
		assert_int_equal(cn_conn_arp_add(f->a.conn, IP_B, MAC_B), 0);
		assert_int_equal(cn_conn_arp_add(f->b.conn, IP_A, MAC_A), 0);
		struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv = NULL;
		f->filter = filt[k];
		f->drop_left = 1;
		struct cn_sock *cl = cn_sock_connect(f->a.conn, IP_B, CN_BE16(80), f->now);
		for (int i = 0; i < 100 && cn_sock_state(cl) != CN_SOCK_ESTABLISHED; i++)
			run(f, 1);
		assert_int_equal(cn_sock_state(cl), CN_SOCK_ESTABLISHED);
		assert_int_equal(f->lost, 1);
		if (k == 2) {
			/* data at once: it is what B sees first */
			assert_int_equal(cn_sock_send(cl, "hello", 5, f->now), 5);
		}
		for (int i = 0; i < 100 && !(srv = cn_sock_accept(l)); i++)
			run(f, 1);
		assert_non_null(srv);
		if (k == 2) {
			uint8_t b[8];
			run(f, 1);
			assert_int_equal(cn_sock_recv(srv, b, 8, f->now), 5);
			assert_memory_equal(b, "hello", 5);
		}
		const struct cn_conn_stats *sa = cn_conn_stats(f->a.conn), *sb = cn_conn_stats(f->b.conn);
		if (k == 0)
			assert_int_equal(sa->syn_out, 2);
		if (k == 1) {
			assert_int_equal(sb->synack_out, 2);
			assert_int_equal(sb->drop[CN_CONN_DROP_TCP_SYN_DUP], 1);
		}
		if (k == 3) {
			assert_int_equal(sb->synack_out, 2);
			assert_int_equal(sa->drop[CN_CONN_DROP_TCP_SYN_CHALLENGE], 1);
		}
		f->filter = NULL;
		transfer(f, cl, srv, 4000, (uint8_t)k);
		transfer(f, srv, cl, 4000, (uint8_t)k);
		cn_sock_close(cl, f->now);
		cn_sock_close(srv, f->now);
		run(f, 50);
		close_down(f, 0, l, NULL);
	}
}

static bool drop_all(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	(void)f, (void)from, (void)fr, (void)len;
	return false;
}

/* Nobody answers: syn_retries retransmissions with doubling intervals,
 * then ETIMEDOUT; an address nobody has: EHOSTUNREACH after the ARP
 * retries; B's embryonic connection times out too. */
static void test_timeouts(void **state)
{
	struct fx *f = *state;

	hosts_up(f, NULL, NULL);
	assert_int_equal(cn_conn_arp_add(f->a.conn, IP_B, MAC_B), 0);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4);
	f->filter = drop_all;
	struct cn_sock *c = cn_sock_connect(f->a.conn, IP_B, CN_BE16(80), f->now);
	struct cn_sock *u = cn_sock_connect(f->a.conn, IP_NOBODY, CN_BE16(80), f->now);
	run(f, 10 + 20 + 40 + 80 + 5);
	assert_int_equal(cn_sock_state(c), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(c), ETIMEDOUT);
	assert_int_equal(cn_conn_stats(f->a.conn)->syn_out, 4);
	assert_int_equal(cn_sock_state(u), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(u), EHOSTUNREACH);
	assert_int_equal(cn_conn_stats(f->a.conn)->arp_req_out, 4);
	assert_int_equal(cn_conn_stats(f->a.conn)->arp_timeouts, 1);
	assert_int_equal(cn_sock_recv(u, (uint8_t[1]){0}, 1, f->now), -EHOSTUNREACH);
	cn_sock_close(c, f->now);
	cn_sock_close(u, f->now);
	/* B's side: the SYN gets in, no SYN-ACK gets out */
	f->filter = NULL;
	f->drop_left = 0;
	uint8_t fr[128];
	uint32_t len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 4000, 80, 1000, 0, CN_TCP_SYN, 8192,
			      (const uint8_t[]){2, 4, 5, 180}, 4, NULL, 0);
	inject(&f->b, fr, len);
	run(f, 1);
	assert_int_equal(cn_conn_socks(f->b.conn), 2);
	run(f, 200);
	assert_int_equal(cn_conn_socks(f->b.conn), 1);
	assert_int_equal(cn_conn_stats(f->b.conn)->synack_out, 4);
	assert_int_equal(cn_conn_stats(f->b.conn)->syn_timeouts, 1);
	assert_null(cn_sock_accept(l));
	assert_int_equal(errno, EAGAIN);
	close_down(f, 0, l, NULL);
}

/* Backlog 1: a second SYN is dropped while the first connection waits
 * for accept, and gets in by retransmission after it. Closing a listener
 * resets the connections it has not handed out. */
static void test_backlog_and_listener_close(void **state)
{
	struct fx *f = *state;

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 1);
	assert_null(cn_sock_listen(f->b.conn, CN_BE16(80), 1));
	assert_int_equal(errno, EADDRINUSE);
	struct cn_sock *c1 = cn_sock_connect(f->a.conn, IP_B, CN_BE16(80), f->now);
	run(f, 3);
	struct cn_sock *c2 = cn_sock_connect(f->a.conn, IP_B, CN_BE16(80), f->now);
	run(f, 3);
	assert_int_equal(cn_sock_state(c1), CN_SOCK_ESTABLISHED);
	assert_int_equal(cn_sock_state(c2), CN_SOCK_SYN_SENT);
	assert_int_equal(cn_conn_stats(f->b.conn)->drop[CN_CONN_DROP_BACKLOG], 1);
	assert_true(cn_sock_events(l) & CN_SOCK_IN);
	struct cn_sock *s1 = cn_sock_accept(l);
	assert_non_null(s1);
	run(f, 15); /* c2's SYN again */
	assert_int_equal(cn_sock_state(c2), CN_SOCK_ESTABLISHED);
	/* c2 is queued, not accepted: closing the listener resets it */
	cn_sock_close(l, f->now);
	run(f, 1);
	assert_int_equal(cn_sock_state(c2), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(c2), ECONNRESET);
	assert_int_equal(cn_sock_state(c1), CN_SOCK_ESTABLISHED); /* accepted: unaffected */
	transfer(f, c1, s1, 100, 0);
	/* close with unread data: RST instead of FIN */
	assert_int_equal(cn_sock_send(c1, "unread", 6, f->now), 6);
	run(f, 1);
	cn_sock_close(s1, f->now);
	run(f, 1);
	assert_int_equal(cn_sock_error(c1), ECONNRESET);
	close_down(f, 0, c1, c2, NULL);
}

/* SYNs with odd options, hand-built: SACK-permitted, an unknown kind, a
 * tiny MSS, window scale 20 (RFC 7323: use 14), EOL padding. The SYN-ACK
 * carries MSS, WS, TS and never SACK-permitted. A malformed option makes
 * the stack's parser drop the SYN; a SYN with ACK to a listener gets a
 * RST. Then the peer completes the handshake and sends data and FIN in
 * the completing segment. */
static void test_syn_options(void **state)
{
	struct fx *f = *state;
	uint8_t fr[256], b[64];
	struct cn_pkt_info pi;
	uint32_t len;

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	static const uint8_t opt[] = {
		2, 4, 0, 1,                   /* MSS 1 */
		4, 2,                         /* SACK permitted */
		99, 4, 0xde, 0xad,            /* unknown kind 99 */
		1, 3, 3, 20,                  /* NOP, WS 20 */
		8, 10, 0, 0, 0, 5, 0, 0, 0, 0, /* TS 5, 0 */
		0, 0, 0, 0};                  /* EOL, padding */
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3333, 80, 0xfffffff0u, 0, CN_TCP_SYN, 1000, opt,
		     sizeof(opt), NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->syn_in, 1);
	const struct cap *c = last_tcp(f, 1, 0, &pi);
	assert_non_null(c);
	assert_int_equal(pi.tcp_flags, CN_TCP_SYN | CN_TCP_ACK);
	assert_int_equal(pi.ack, 0xfffffff1u);
	assert_true(pi.has_mss && pi.mss == 1460);
	assert_true(pi.has_ws && pi.wscale == 3);
	assert_true(pi.has_ts && pi.ts_ecr == 5);
	assert_true(has_opt(c, CN_TCPOPT_SACK_PERM)); /* the SYN offered it */
	assert_memory_equal(c->buf, MAC_X, 6);
	assert_int_equal(sb->wscale_clamped, 1); /* WS 20 */
	uint32_t iss = pi.seq;

	/* malformed option (length 0): the stack's parser drops it */
	static const uint8_t bad[] = {2, 4, 5, 180, 3, 0, 0, 0};
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3334, 80, 1, 0, CN_TCP_SYN, 1000, bad,
		     sizeof(bad), NULL, 0);
	inject(&f->b, fr, len);
	/* SYN+ACK to a listener: RST <SEQ=SEG.ACK> */
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3335, 80, 1, 4242, CN_TCP_SYN | CN_TCP_ACK, 1000,
		     NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	/* no flags at all, to a listener */
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3336, 80, 1, 0, 0, 1000, NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(cn_net_stats(f->b.net)->drop[CN_DROP_TCP_OPT], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_BAD_ACK], 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_NO_ACK], 1);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST);
	assert_int_equal(pi.seq, 4242);
	assert_int_equal(cn_conn_socks(f->b.conn), 2);

	/* the handshake's ACK with a wrong ack number: RST, still SYN_RCVD */
	static const uint8_t ts[] = {1, 1, 8, 10, 0, 0, 0, 6, 0, 0, 0, 0};
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3333, 80, 0xfffffff1u, iss + 7, CN_TCP_ACK, 1000,
		     ts, sizeof(ts), NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_BAD_ACK], 2);
	assert_null(cn_sock_accept(l));
	/* the right ACK, with 7 bytes and a FIN, across the sequence wrap */
	uint8_t ts2[12];
	memcpy(ts2, ts, 12);
	uint32_t ecr = cn_hton32(f->now);
	memcpy(ts2 + 8, &ecr, 4);
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, 3333, 80, 0xfffffff1u, iss + 1,
		     CN_TCP_ACK | CN_TCP_FIN | CN_TCP_PSH, 1000, ts2, sizeof(ts2), "payload", 7);
	inject(&f->b, fr, len);
	pump(f);
	struct cn_sock *s = cn_sock_accept(l);
	assert_non_null(s);
	assert_int_equal(sb->passive_opens, 1);
	assert_int_equal(cn_sock_state(s), CN_SOCK_CLOSE_WAIT);
	assert_int_equal(cn_sock_recv(s, b, sizeof(b), f->now), 7);
	assert_memory_equal(b, "payload", 7);
	assert_int_equal(cn_sock_recv(s, b, sizeof(b), f->now), 0);
	/* B's ACK covers the data and the FIN; segments are MSS-limited to
	 * the 64-byte floor (the peer said 1): 64 - 12 of data each */
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.ack, 0xfffffff1u + 8);
	assert_int_equal(pi.win, (256 * 1024 - 7) >> 3); /* sent while the 7 bytes were queued */
	static uint8_t big[200];
	assert_int_equal(cn_sock_send(s, big, 200, f->now), 200);
	pump(f);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.pay_len, 64 - 12);
	cn_sock_abort(s, f->now);
	close_down(f, 0, l, NULL);
}

/* A window scale above 14 (RFC 7323 2.3: "use 14") from a hand-built
 * peer: 15 and 255 complete the handshake, are counted, and the window
 * field of the ACK is shifted by 14. */
static void test_wscale_clamp(void **state)
{
	struct fx *f = *state;
	uint8_t fr[128];
	struct cn_pkt_info pi;
	struct cn_tcp_info ti;
	uint32_t len;
	static const uint8_t ws_vals[] = {14, 15, 255};

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	for (unsigned i = 0; i < 3; i++) {
		uint16_t port = (uint16_t)(4000 + i);
		uint8_t opt[8] = {2, 4, 5, 180, 1, 3, 3, ws_vals[i]};
		len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, port, 80, 1000, 0, CN_TCP_SYN, 1000, opt,
			     sizeof(opt), NULL, 0);
		inject(&f->b, fr, len);
		pump(f);
		assert_non_null(last_tcp(f, 1, 0, &pi));
		assert_int_equal(pi.tcp_flags, CN_TCP_SYN | CN_TCP_ACK);
		assert_true(pi.has_ws);
		assert_int_equal(sb->wscale_clamped, i); /* 14 is not clamped */
		len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, port, 80, 1001, pi.seq + 1, CN_TCP_ACK, 1,
			     NULL, 0, NULL, 0);
		inject(&f->b, fr, len);
		pump(f);
		struct cn_sock *s = cn_sock_accept(l);
		assert_non_null(s);
		cn_tcp_get_info(cn_sock_tcb(s), &ti);
		assert_int_equal(ti.snd_wnd, 1u << 14);
		cn_sock_abort(s, f->now);
	}
	assert_int_equal(sb->wscale_clamped, 2);
	close_down(f, 0, l, NULL);
}

/* A SYN from X to B's port 80 (MSS, and optionally WS 7, SACK-permitted,
 * TS); the SYN-ACK B sends back is returned in *pi. */
static void syn_from_x(struct fx *f, uint16_t port, bool ts, bool ws, struct cn_pkt_info *pi)
{
	uint8_t fr[128], opt[24]; /* MSS, NOP WS, SACK-permitted, NOP NOP TS */
	uint32_t n = 0, len;

	opt[n++] = 2, opt[n++] = 4, opt[n++] = 1400 >> 8, opt[n++] = 1400 & 0xff;
	if (ws)
		opt[n++] = 1, opt[n++] = 3, opt[n++] = 3, opt[n++] = 7;
	opt[n++] = 1, opt[n++] = 1, opt[n++] = 4, opt[n++] = 2; /* SACK-permitted */
	if (ts) {
		uint8_t t[12] = {1, 1, 8, 10, 0, 0, 0x12, 0x34, 0, 0, 0, 0};
		memcpy(opt + n, t, 12);
		n += 12;
	}
	len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, port, 80, 1000u * port, 0, CN_TCP_SYN, 1000, opt,
		     n, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_non_null(last_tcp(f, 1, 0, pi));
	assert_int_equal(pi->tcp_flags, CN_TCP_SYN | CN_TCP_ACK);
	assert_int_equal(pi->ack, 1000u * port + 1);
}

/* The ACK completing X's handshake on @p port, with 5 bytes, echoing @p tsecr. */
static void ack_from_x(struct fx *f, uint16_t port, uint32_t ack, bool ts, uint32_t tsecr)
{
	uint8_t fr[128], t[12] = {1, 1, 8, 10, 0, 0, 0x12, 0x40};
	uint32_t e = cn_hton32(tsecr);

	memcpy(t + 8, &e, 4);
	uint32_t len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, port, 80, 1000u * port + 1, ack,
			      CN_TCP_ACK | CN_TCP_PSH, 1000, t, ts ? 12 : 0, "hello", 5);
	inject(&f->b, fr, len);
	pump(f);
}

/* SYN cookies (RFC 4987): past the backlog a SYN gets a SYN-ACK and no
 * state; the ISN carries the MSS, the TSval the window scale and
 * SACK-permitted; the returning ACK opens the connection (its data
 * delivered); a forged or stale cookie is refused with a RST; the secret
 * rotates. */
static void test_syn_cookies(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params pb = conn_params();
	struct cn_pkt_info pi;
	struct cn_tcp_info ti;
	uint8_t b[16];

	pb.cookie_rotate = 100;
	pb.synack_retries = 1;
	hosts_up(f, NULL, &pb);
	run(f, 70); /* a clock a cookie's TSval can stay behind */
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 2);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	/* two half-open children fill the backlog */
	syn_from_x(f, 5000, true, true, &pi);
	syn_from_x(f, 5001, true, true, &pi);
	assert_int_equal(sb->syncookies_sent, 0);
	unsigned socks = cn_conn_socks(f->b.conn);
	/* the third: a cookie, no socket */
	syn_from_x(f, 5002, true, true, &pi);
	assert_int_equal(sb->syncookies_sent, 1);
	assert_int_equal(cn_conn_socks(f->b.conn), socks);
	assert_int_equal(pi.seq & 7, 5); /* MSS 1360: the largest <= 1400 */
	assert_true(pi.has_ts && pi.has_ws && pi.wscale == 3);
	assert_int_equal(pi.ts_val & 0x1f, 7 | 16); /* WS 7, SACK-permitted */
	assert_int_equal(pi.ts_ecr, 0x1234);
	uint32_t iss = pi.seq, tsv = pi.ts_val;
	/* a forged cookie: RST, counted */
	ack_from_x(f, 5002, iss + 1 + 16, true, tsv);
	assert_int_equal(sb->syncookies_failed, 1);
	assert_int_equal(sb->drop[CN_CONN_DROP_COOKIE], 1);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST);
	/* the real one: established, its 5 bytes delivered */
	ack_from_x(f, 5002, iss + 1, true, tsv);
	assert_int_equal(sb->syncookies_ok, 1);
	struct cn_sock *s = cn_sock_accept(l);
	assert_non_null(s);
	assert_int_equal(cn_sock_state(s), CN_SOCK_ESTABLISHED);
	assert_int_equal(cn_sock_recv(s, b, sizeof(b), f->now), 5);
	assert_memory_equal(b, "hello", 5);
	cn_tcp_get_info(cn_sock_tcb(s), &ti);
	assert_int_equal(ti.snd_wnd, 1000u << 7); /* the cookie's window scale */
	assert_int_equal(ti.snd_una, iss + 1);
	/* B's segments carry timestamps, never behind the cookie's TSval,
	 * and the cookie's MSS */
	static uint8_t big[3000];
	assert_int_equal(cn_sock_send(s, big, sizeof(big), f->now), (int)sizeof(big));
	pump(f);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_true(pi.has_ts);
	assert_true(pi.ts_val >= tsv);
	assert_true(pi.pay_len > 0 && pi.pay_len <= 1360 - 12);
	cn_sock_abort(s, f->now);
	/* without timestamps: no window scale */
	syn_from_x(f, 5003, false, true, &pi);
	assert_int_equal(sb->syncookies_sent, 2);
	assert_false(pi.has_ts);
	ack_from_x(f, 5003, pi.seq + 1, false, 0);
	s = cn_sock_accept(l);
	assert_non_null(s);
	cn_tcp_get_info(cn_sock_tcb(s), &ti);
	assert_int_equal(ti.snd_wnd, 1000u);
	cn_sock_abort(s, f->now);
	/* rotation: a cookie lives through one more secret, not two */
	syn_from_x(f, 5004, true, false, &pi);
	uint32_t iss4 = pi.seq, tsv4 = pi.ts_val;
	syn_from_x(f, 5005, true, false, &pi);
	uint32_t iss5 = pi.seq, tsv5 = pi.ts_val;
	assert_int_equal(sb->syncookies_sent, 4);
	run(f, 101);
	ack_from_x(f, 5004, iss4 + 1, true, tsv4);
	assert_int_equal(sb->syncookies_ok, 3);
	run(f, 101);
	/* two secrets later (and no cookie sent since): a bad ACK, RST */
	unsigned bad = (unsigned)sb->drop[CN_CONN_DROP_TCP_BAD_ACK];
	ack_from_x(f, 5005, iss5 + 1, true, tsv5);
	assert_int_equal(sb->syncookies_ok, 3);
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_BAD_ACK], bad + 1);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST);
	while ((s = cn_sock_accept(l)))
		cn_sock_abort(s, f->now);
	/* the half-open children gave up after synack_retries (1) */
	assert_int_equal(sb->syn_timeouts, 2);
	close_down_empty(f, 5, l, NULL);
}

/* The syncache's bounds: overall (the oldest half-open connection of any
 * listener evicted) and, without cookies, per listener. */
static void test_syncache_bounds(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params pb = conn_params();
	struct cn_pkt_info pi;

	pb.syncache_max = 3;
	pb.no_syncookies = true;
	hosts_up(f, NULL, &pb);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 2);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	syn_from_x(f, 6000, true, true, &pi);
	syn_from_x(f, 6001, true, true, &pi);
	assert_int_equal(cn_conn_socks(f->b.conn), 3);
	/* backlog full, no cookies: 6000 goes for 6002 */
	syn_from_x(f, 6002, true, true, &pi);
	assert_int_equal(sb->syncache_evicted, 1);
	assert_int_equal(sb->syncookies_sent, 0);
	assert_int_equal(cn_conn_socks(f->b.conn), 3);
	uint32_t iss2 = pi.seq, tsv2 = pi.ts_val;
	/* 6000's ACK now finds no socket: RST; 6002's completes */
	ack_from_x(f, 6002, iss2 + 1, true, tsv2);
	struct cn_sock *s = cn_sock_accept(l);
	assert_non_null(s);
	cn_sock_abort(s, f->now);
	/* another listener: the overall bound (3) evicts the oldest, 6001 */
	struct cn_sock *l2 = cn_sock_listen(f->b.conn, CN_BE16(81), 8);
	uint8_t fr[128];
	for (uint16_t port = 7000; port < 7003; port++) {
		static const uint8_t mss[4] = {2, 4, 5, 180};
		uint32_t len = mk_tcp(fr, MAC_X, MAC_B, IP_X, IP_B, port, 81, 1, 0, CN_TCP_SYN, 1000,
				      mss, 4, NULL, 0);
		inject(&f->b, fr, len);
		pump(f);
	}
	assert_int_equal(sb->syncache_evicted, 2);
	assert_int_equal(cn_conn_socks(f->b.conn), 2 + 3);
	close_down_empty(f, 2, l, l2, NULL);
}

/* ARP replies nobody asked for are not learned (counted); replies to our
 * own request are, within the request's span; a gratuitous ARP moves an
 * existing entry and never makes one. */
static void test_arp_unsolicited(void **state)
{
	struct fx *f = *state;
	uint8_t fr[64], mac[6];
	const uint8_t MAC_Y[6] = {2, 0, 0, 0, 0, 0xd}, MAC_Y2[6] = {2, 0, 0, 0, 0, 0xe};
	const cn_be32_t IP_Y = CN_IPV4(10, 0, 0, 4);

	hosts_up(f, NULL, NULL);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	/* op, sender MAC/IP, target IP */
	const uint8_t arp[42] = {
		2, 0, 0, 0, 0, 0xb, 2, 0, 0, 0, 0, 0xd, 0x08, 0x06,
		0, 1, 0x08, 0, 6, 4, 0, 2, 2, 0, 0, 0, 0, 0xd, 10, 0, 0, 4,
		2, 0, 0, 0, 0, 0xb, 10, 0, 0, 2};
	arp_frame(fr, arp);
	/* a reply to us, never asked: dropped, not learned */
	inject(&f->b, fr, 60);
	pump(f);
	assert_int_equal(sb->drop[CN_CONN_DROP_ARP_UNSOLICITED], 1);
	assert_false(cn_conn_arp_lookup(f->b.conn, IP_Y, mac));
	assert_int_equal(sb->arp_rep_in, 0);
	/* a gratuitous ARP (sender = target) from Y: nothing to update */
	memcpy(fr, arp, 42);
	memset(fr, 0xff, 6);
	memcpy(fr + 38, fr + 28, 4);
	memset(fr + 32, 0xff, 6);
	inject(&f->b, fr, 60);
	fr[21] = 1; /* as a request too */
	inject(&f->b, fr, 60);
	pump(f);
	assert_false(cn_conn_arp_lookup(f->b.conn, IP_Y, mac));
	/* B asks for Y: Y's reply is taken */
	assert_int_equal(cn_conn_arp_request(f->b.conn, IP_Y, f->now), 0);
	memcpy(fr, arp, 42);
	inject(&f->b, fr, 60);
	pump(f);
	assert_true(cn_conn_arp_lookup(f->b.conn, IP_Y, mac));
	assert_memory_equal(mac, MAC_Y, 6);
	assert_int_equal(sb->arp_rep_in, 1);
	/* now cached: a later reply refreshes it, as does a gratuitous ARP */
	memcpy(fr, arp, 42);
	memcpy(fr + 6, MAC_Y2, 6);
	memcpy(fr + 22, MAC_Y2, 6);
	inject(&f->b, fr, 60);
	pump(f);
	assert_true(cn_conn_arp_lookup(f->b.conn, IP_Y, mac));
	assert_memory_equal(mac, MAC_Y2, 6);
	memcpy(fr, arp, 42);
	memset(fr, 0xff, 6);
	memcpy(fr + 38, fr + 28, 4);
	memset(fr + 32, 0xff, 6);
	inject(&f->b, fr, 60);
	pump(f);
	assert_true(cn_conn_arp_lookup(f->b.conn, IP_Y, mac));
	assert_memory_equal(mac, MAC_Y, 6);
	/* a request for an address whose reply comes after the span (4 x 10
	 * ticks here): unsolicited by then */
	const cn_be32_t IP_Z = CN_IPV4(10, 0, 0, 0x05);
	assert_int_equal(cn_conn_arp_request(f->b.conn, IP_Z, f->now), 0);
	run(f, 41);
	memcpy(fr, arp, 42);
	fr[31] = 5;
	inject(&f->b, fr, 60);
	pump(f);
	assert_false(cn_conn_arp_lookup(f->b.conn, IP_Z, mac));
	assert_int_equal(sb->drop[CN_CONN_DROP_ARP_UNSOLICITED], 2);
	assert_int_equal(sb->arp_rep_in, 2);
	hosts_down(f);
}

/* Loses A's data segments at random (5%), first copies and
 * retransmissions alike; everything else crosses. */
static bool lose_a_data(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	struct cn_pkt_info pi;

	(void)f;
	if (from != 0 || cn_net_parse(fr, len, 0, &pi) != CN_DROP_NONE || pi.proto != 6 ||
	    pi.pay_len == 0)
		return true;
	return cn_test_rndn(100) >= 5;
}

/* Send @p n bytes from cl to srv a tick at a time (what the send buffer
 * takes each tick) until srv has read them all, or @p max ticks; the
 * filter is then taken off and the bytes checked. Returns the ticks. */
static unsigned stream(struct fx *f, struct cn_sock *cl, struct cn_sock *srv, const uint8_t *buf,
		       uint8_t *got, uint32_t n, unsigned max)
{
	uint32_t sent = 0, rcvd = 0;
	unsigned ticks = 0;

	while (rcvd < n && ticks < max) {
		if (sent < n) {
			int k = cn_sock_send(cl, buf + sent, n - sent, f->now);
			assert_true(k >= 0);
			sent += (uint32_t)k;
		}
		run(f, 1);
		ticks++;
		int k = cn_sock_recv(srv, got + rcvd, n - rcvd, f->now);
		if (k > 0)
			rcvd += (uint32_t)k;
	}
	f->filter = NULL;
	assert_int_equal(rcvd, n);
	assert_memory_equal(buf, got, n);
	return ticks;
}

/* Abort a connected pair, close the listener, take the hosts down. */
static void pair_down(struct fx *f, struct cn_sock *cl, struct cn_sock *srv, struct cn_sock *l)
{
	cn_sock_abort(cl, f->now);
	cn_sock_abort(srv, f->now);
	cn_sock_close(l, f->now);
	run(f, 5);
	hosts_down(f);
}

/* SACK both ways (RFC 2018, RFC 6675): 256 KB from A to B losing 5% of A's
 * data segments. B's ACKs carry SACK blocks, A's scoreboard sends the
 * holes; the bytes arrive exact, in fewer ticks than without SACK (same
 * losses: the same random sequence). */
static unsigned sack_run(struct fx *f, bool no_sack, struct cn_tcp_stats *sa,
			 struct cn_tcp_stats *sb)
{
	static uint8_t buf[262144], got[262144];
	struct cn_conn_params pa = conn_params(), pb = conn_params();
	unsigned ticks;

	pa.no_sack = pb.no_sack = no_sack;
	hosts_up(f, &pa, &pb);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	cn_test_seed(77);
	cn_test_fill_rand(buf, sizeof(buf));
	f->filter = lose_a_data;
	ticks = stream(f, cl, srv, buf, got, sizeof(buf), 200000);
	*sa = *cn_tcp_stats(cn_sock_tcb(cl));
	*sb = *cn_tcp_stats(cn_sock_tcb(srv));
	pair_down(f, cl, srv, l);
	return ticks;
}

static void test_sack_recovery(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_stats a1, b1, a0, b0;
	unsigned t_sack = sack_run(f, false, &a1, &b1);
	unsigned t_none = sack_run(f, true, &a0, &b0);

	assert_true(b1.sack_acks_out > 0);
	assert_true(a1.sack_blocks_in > 0);
	assert_true(a1.sack_rexmit > 0);
	assert_int_equal(b0.sack_acks_out, 0);
	assert_int_equal(a0.sack_rexmit, 0);
	print_message("SACK: %u ticks, %lu retransmitted (%lu from the scoreboard), %lu RTOs; "
		      "without: %u ticks, %lu retransmitted, %lu RTOs\n", t_sack,
		      (unsigned long)a1.rexmit_segs, (unsigned long)a1.sack_rexmit,
		      (unsigned long)a1.rto_fired, t_none, (unsigned long)a0.rexmit_segs,
		      (unsigned long)a0.rto_fired);
	assert_true(t_sack < t_none);
	assert_true(a1.rexmit_segs < a0.rexmit_segs);
	assert_true(a1.rto_fired <= a0.rto_fired);
}

/* RACK-TLP (RFC 8985): a lost tail. A sends six segments; the last two
 * are lost once. Nothing follows them to be SACKed, so without RACK-TLP
 * only the RTO (40 ticks here) recovers; with it, the tail-loss probe
 * (2 SRTT + 2 ticks after the last ACK) resends the last segment, B's
 * ACK SACKs it, and the reordering window marks the other lost: no RTO. */
static uint32_t tail_from; /* A's data from this sequence number is lost */

static bool lose_tail(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	struct cn_pkt_info pi;

	if (from != 0 || f->drop_left <= 0 || cn_net_parse(fr, len, 0, &pi) != CN_DROP_NONE ||
	    pi.proto != 6 || pi.pay_len == 0 || cn_seq_lt(pi.seq, tail_from))
		return true;
	f->drop_left--;
	return false;
}

static unsigned tail_run(struct fx *f, bool no_rack_tlp, struct cn_tcp_stats *sa)
{
	static uint8_t buf[6 * 1448], got[sizeof(buf)];
	struct cn_conn_params pa = conn_params(), pb = conn_params();
	struct cn_tcp_info ti;
	unsigned ticks;

	pa.tcp.rto_init = pb.tcp.rto_init = 200; /* rto_min 40 */
	pa.tcp.no_rack_tlp = pb.tcp.no_rack_tlp = no_rack_tlp;
	hosts_up(f, &pa, &pb);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	/* a first exchange: the RTT sample TLP needs */
	assert_int_equal(cn_sock_send(cl, "hello", 5, f->now), 5);
	run(f, 2);
	assert_int_equal(cn_sock_recv(srv, got, sizeof(got), f->now), 5);
	cn_test_fill_rand(buf, sizeof(buf));
	cn_tcp_get_info(cn_sock_tcb(cl), &ti);
	tail_from = ti.snd_nxt + 4 * 1448;
	f->drop_left = 2;
	f->lost = 0;
	f->filter = lose_tail;
	ticks = stream(f, cl, srv, buf, got, sizeof(buf), 1000);
	assert_int_equal(f->lost, 2);
	*sa = *cn_tcp_stats(cn_sock_tcb(cl));
	pair_down(f, cl, srv, l);
	return ticks;
}

static void test_tail_loss_probe(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_stats a1, a0;
	unsigned t_rack = tail_run(f, false, &a1);
	unsigned t_none = tail_run(f, true, &a0);

	print_message("tail of 2 lost: RACK-TLP %u ticks (%lu probes, %lu RACK recoveries, %lu RTOs); "
		      "without %u ticks (%lu RTOs)\n", t_rack, (unsigned long)a1.tlp_probes,
		      (unsigned long)a1.rack_recoveries, (unsigned long)a1.rto_fired, t_none,
		      (unsigned long)a0.rto_fired);
	assert_int_equal(a1.rto_fired, 0);
	assert_int_equal(a1.tlp_probes, 1);
	assert_int_equal(a1.tlp_repairs, 1); /* the probe's copy was the only one */
	assert_int_equal(a1.rack_recoveries, 1);
	assert_true(t_rack < 20);
	assert_int_equal(a0.tlp_probes, 0);
	assert_int_equal(a0.rack_recoveries, 0);
	assert_true(a0.rto_fired >= 1);
	assert_true(t_none >= 40);
}

/* 1,000 connections in a row: connect, request, echo, close from the
 * client (TIME_WAIT on A, 30 ticks) or the server on alternate rounds;
 * nothing left at the end and the pools back to their start counts. */
static void test_thousand_cycles(void **state)
{
	struct fx *f = *state;
	uint8_t buf[1024], got[1024];

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(7), 16);
	for (int i = 0; i < 1000; i++) {
		struct cn_sock *srv, *cl = connect_pair(f, l, 7, &srv);
		uint32_t n = 1 + (uint32_t)(i * 37) % 1000;
		for (uint32_t k = 0; k < n; k++)
			buf[k] = (uint8_t)(i + k);
		assert_int_equal(cn_sock_send(cl, buf, n, f->now), (int)n);
		run(f, 1);
		assert_int_equal(cn_sock_recv(srv, got, sizeof(got), f->now), (int)n);
		assert_int_equal(cn_sock_send(srv, got, n, f->now), (int)n);
		run(f, 1);
		memset(got, 0, n);
		assert_int_equal(cn_sock_recv(cl, got, sizeof(got), f->now), (int)n);
		assert_memory_equal(buf, got, n);
		if (i & 1) {
			cn_sock_close(srv, f->now);
			run(f, 1);
			assert_int_equal(cn_sock_recv(cl, got, 1, f->now), 0);
			cn_sock_close(cl, f->now);
		} else {
			cn_sock_close(cl, f->now);
			run(f, 1);
			assert_int_equal(cn_sock_recv(srv, got, 1, f->now), 0);
			cn_sock_close(srv, f->now);
		}
		run(f, 2);
	}
	run(f, 40);
	assert_int_equal(cn_conn_socks(f->a.conn), 0);
	assert_int_equal(cn_conn_socks(f->b.conn), 1);
	const struct cn_conn_stats *sa = cn_conn_stats(f->a.conn), *sb = cn_conn_stats(f->b.conn);
	assert_int_equal(sa->active_opens, 1000);
	assert_int_equal(sb->passive_opens, 1000);
	assert_int_equal(sa->closes, 1000);
	assert_int_equal(sb->closes, 1000);
	assert_int_equal(sa->tw_expired + sb->tw_expired, 1000);
	assert_int_equal(sa->resets + sb->resets, 0);
	assert_int_equal(cn_net_drops(f->a.net) + cn_net_drops(f->b.net), 0);
	close_down(f, 0, l, NULL);
}

/* Simultaneous open (RFC 9293 figure 7): both sides connect to each other
 * with SYNs crossing; both reach ESTABLISHED through SYN_RCVD. Driven by
 * hand: B "connects" with a hand-built SYN to A's SYN_SENT socket. */
static void test_simultaneous_open(void **state)
{
	struct fx *f = *state;
	struct cn_pkt_info pi;
	uint8_t fr[128];
	uint32_t len;

	hosts_up(f, NULL, NULL);
	assert_int_equal(cn_conn_arp_add(f->a.conn, IP_X, MAC_X), 0);
	f->filter = drop_all; /* X does not exist: catch what A sends */
	struct cn_sock *c = cn_sock_connect(f->a.conn, IP_X, CN_BE16(5000), f->now);
	pump(f);
	assert_non_null(last_tcp(f, 0, 0, &pi));
	uint32_t iss = pi.seq;
	uint16_t lport = cn_be16toh(pi.sport);
	len = mk_tcp(fr, MAC_X, MAC_A, IP_X, IP_A, 5000, lport, 900, 0, CN_TCP_SYN, 4000,
		     (const uint8_t[]){2, 4, 5, 180}, 4, NULL, 0);
	inject(&f->a, fr, len);
	pump(f);
	assert_int_equal(cn_sock_state(c), CN_SOCK_SYN_RCVD);
	assert_non_null(last_tcp(f, 0, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_SYN | CN_TCP_ACK);
	assert_int_equal(pi.seq, iss);
	assert_int_equal(pi.ack, 901);
	assert_false(pi.has_ts); /* X offered none */
	len = mk_tcp(fr, MAC_X, MAC_A, IP_X, IP_A, 5000, lport, 900, iss + 1,
		     CN_TCP_SYN | CN_TCP_ACK, 4000, (const uint8_t[]){2, 4, 5, 180}, 4, NULL, 0);
	inject(&f->a, fr, len);
	pump(f);
	assert_int_equal(cn_sock_state(c), CN_SOCK_ESTABLISHED);
	assert_int_equal(cn_conn_stats(f->a.conn)->active_opens, 1);
	cn_sock_abort(c, f->now);
	pump(f);
	assert_non_null(last_tcp(f, 0, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST | CN_TCP_ACK);
	assert_int_equal(pi.seq, iss + 1);
	assert_int_equal(pi.ack, 901);
	hosts_down(f);
}

/* Parameters and API misuse. */
static void test_api(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params p = conn_params();

	hosts_up(f, NULL, NULL);
	p.mss = 10;
	assert_null(cn_conn_create(f->a.net, &p));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_sock_listen(f->a.conn, CN_BE16(0), 1));
	assert_null(cn_sock_connect(f->a.conn, CN_BE32(0), CN_BE16(80), f->now));
	assert_null(cn_sock_connect(f->a.conn, IP_A, CN_BE16(80), f->now)); /* no loopback */
	assert_int_equal(errno, EINVAL);
	struct cn_sock *l = cn_sock_listen(f->a.conn, CN_BE16(1), 1);
	assert_int_equal(cn_sock_state(l), CN_SOCK_LISTEN);
	assert_int_equal(cn_sock_recv(l, (uint8_t[1]){0}, 1, f->now), -EINVAL);
	assert_int_equal(cn_sock_shutdown(l, f->now), -EINVAL);
	assert_null(cn_sock_accept(l));
	assert_int_equal(errno, EAGAIN);
	assert_string_equal(cn_sock_state_name(CN_SOCK_TIME_WAIT), "TIME_WAIT");
	assert_string_equal(cn_sock_state_name((enum cn_sock_state)99), "?");
	assert_string_equal(cn_conn_drop_name(CN_CONN_DROP_BACKLOG), "backlog");
	for (int i = 1; i < CN_CONN_DROP_MAX; i++)
		assert_non_null(cn_conn_drop_name((enum cn_conn_drop)i));
	int x;
	cn_sock_set_udata(l, &x);
	assert_ptr_equal(cn_sock_udata(l), &x);
	assert_ptr_equal(cn_conn_net(f->a.conn), f->a.net);
	cn_sock_close(l, f->now);
	/* a conn destroyed with live sockets frees them */
	struct cn_conn_params z = {0};
	struct cn_conn *c2 = cn_conn_create(f->a.net, &z);
	assert_non_null(c2);
	assert_non_null(cn_sock_listen(c2, CN_BE16(5), 5));
	assert_non_null(cn_sock_connect(c2, IP_B, CN_BE16(80), f->now));
	assert_int_equal(cn_conn_socks(c2), 2);
	cn_conn_destroy(c2);
	/* c2 replaced A's hook and took it away with it: put A's back */
	cn_conn_destroy(f->a.conn);
	f->a.conn = cn_conn_create(f->a.net, &z);
	assert_non_null(f->a.conn);
	/* all defaults (sndbuf 0 = chain): a connection opens and works */
	struct cn_sock *lb = cn_sock_listen(f->b.conn, CN_BE16(80), 1), *srv;
	struct cn_sock *cl = connect_pair(f, lb, 80, &srv);
	transfer(f, cl, srv, 3000, 3);
	cn_sock_abort(cl, f->now);
	cn_sock_abort(srv, f->now);
	close_down(f, 3, lb, NULL);
}

/* The server closes first and sits in TIME_WAIT; a new SYN from the same
 * client port with a higher sequence number ends it early (RFC 9293
 * 3.10.7.4) and gets a SYN-ACK; one with an old sequence number only
 * draws an ACK. */
static void test_time_wait_reuse(void **state)
{
	struct fx *f = *state;
	struct cn_pkt_info pi;
	uint8_t fr[128];
	struct cn_tcp_info ti;
	struct cn_conn_params pb = conn_params();
	uint32_t len;
	uint16_t cport;

	pb.time_wait = 100000;
	hosts_up(f, NULL, &pb);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	cn_be16_t cport_be;
	cn_sock_addrs(cl, NULL, &cport_be, NULL, NULL);
	cport = cn_be16toh(cport_be);
	cn_sock_close(srv, f->now);
	run(f, 1);
	drain_to_eof(f, cl);
	cn_sock_close(cl, f->now);
	run(f, 5);
	assert_int_equal(cn_conn_socks(f->a.conn), 0);
	assert_int_equal(cn_conn_socks(f->b.conn), 2); /* listener + TIME_WAIT */
	struct cn_tcb *tw = cn_tcp_lookup(f->b.net, IP_A, CN_BE16(cport), CN_BE16(80));
	assert_non_null(tw);
	cn_tcp_get_info(tw, &ti);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	/* an old SYN: challenge ACK, TIME_WAIT stays (the ACK is kept from
	 * A, whose RST to it would end TIME_WAIT as RFC 9293 says) */
	f->filter = drop_all;
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, ti.rcv_nxt - 10, 0, CN_TCP_SYN, 1000,
		     NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	f->filter = NULL;
	assert_int_equal(sb->drop[CN_CONN_DROP_TCP_SYN_CHALLENGE], 1);
	assert_non_null(last_tcp(f, 1, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_ACK);
	assert_int_equal(pi.ack, ti.rcv_nxt);
	assert_int_equal(cn_conn_socks(f->b.conn), 2);
	/* a new one: SYN-ACK; A has no such socket and resets it, which
	 * frees B's embryonic child */
	len = mk_tcp(fr, MAC_A, MAC_B, IP_A, IP_B, cport, 80, ti.rcv_nxt + 100000, 0, CN_TCP_SYN,
		     1000, NULL, 0, NULL, 0);
	inject(&f->b, fr, len);
	pump(f);
	assert_int_equal(sb->tw_reused, 1);
	assert_int_equal(sb->synack_out, 2);
	assert_null(cn_tcp_lookup(f->b.net, IP_A, CN_BE16(cport), CN_BE16(80)));
	assert_non_null(last_tcp(f, 0, 0, &pi));
	assert_int_equal(pi.tcp_flags, CN_TCP_RST);
	assert_int_equal(pi.seq, ti.rcv_nxt + 100001);
	assert_int_equal(cn_conn_socks(f->b.conn), 1);
	close_down(f, 0, l, NULL);
}

/* A closed socket whose peer never sends its FIN is reset after
 * orphan_timeout; the peer sees ECONNRESET. */
static void test_orphan_timeout(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params pb = conn_params();

	pb.orphan_timeout = 100;
	hosts_up(f, NULL, &pb);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	cn_sock_close(srv, f->now);
	run(f, 10);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSE_WAIT);
	assert_int_equal(cn_conn_socks(f->b.conn), 2); /* FIN_WAIT_2, released */
	run(f, 100);
	assert_int_equal(cn_conn_socks(f->b.conn), 1);
	assert_int_equal(cn_conn_stats(f->b.conn)->orphan_timeouts, 1);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSED);
	assert_int_equal(cn_sock_error(cl), ECONNRESET);
	close_down(f, 0, cl, l, NULL);
}

/* Readiness as poll(2) would say it, through a connection's life. */
static void test_events(void **state)
{
	struct fx *f = *state;
	uint8_t b[16];

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	assert_int_equal(cn_sock_events(l), 0);
	struct cn_sock *cl = cn_sock_connect(f->a.conn, IP_B, CN_BE16(80), f->now);
	assert_int_equal(cn_sock_events(cl), 0); /* connecting */
	run(f, 3);
	assert_int_equal(cn_sock_events(l), CN_SOCK_IN);
	srv = cn_sock_accept(l);
	assert_int_equal(cn_sock_events(cl), CN_SOCK_OUT);
	assert_int_equal(cn_sock_send(cl, "abc", 3, f->now), 3);
	run(f, 1);
	assert_int_equal(cn_sock_events(srv), CN_SOCK_IN | CN_SOCK_OUT);
	assert_int_equal(cn_sock_recv(srv, b, sizeof(b), f->now), 3);
	assert_int_equal(cn_sock_events(srv), CN_SOCK_OUT);
	assert_int_equal(cn_sock_recv(srv, b, sizeof(b), f->now), -EAGAIN);
	/* shut down through the TCB itself: the socket follows */
	assert_int_equal(cn_tcp_shutdown(cn_sock_tcb(cl), f->now), 0);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_FIN_WAIT_1);
	assert_int_equal(cn_sock_send(cl, "x", 1, f->now), -EPIPE);
	assert_int_equal(cn_sock_events(cl), 0); /* shut for writing, nothing to read */
	run(f, 1);
	assert_int_equal(cn_sock_events(srv), CN_SOCK_IN | CN_SOCK_OUT); /* end of stream */
	assert_int_equal(cn_sock_shutdown(srv, f->now), 0);
	run(f, 1);
	assert_int_equal(cn_sock_events(cl), CN_SOCK_IN | CN_SOCK_HUP);
	cn_be32_t la, ra;
	cn_be16_t lp_be, rp_be;
	cn_sock_addrs(srv, &la, &lp_be, &ra, &rp_be);
	uint16_t lp = cn_be16toh(lp_be), rp = cn_be16toh(rp_be);
	assert_true(cn_be32_eq(la, IP_B));
	assert_int_equal(lp, 80);
	assert_true(cn_be32_eq(ra, IP_A));
	assert_true(rp >= 49152);
	close_down(f, 40, cl, srv, l, NULL);
}

/* Random loss (4%) and duplication (2%) of every kind of frame, fixed
 * seed: 200 connections opened, used and closed; handshakes may time out
 * (then retried), but nothing may hang, leak or corrupt the streams. */
static bool lossy(struct fx *f, int from, const uint8_t *fr, uint32_t len)
{
	uint32_t r = cn_test_rndn(100);

	if (r < 4)
		return false;
	if (r < 6)
		cn_netdev_nic_rx(from == 0 ? f->b.dev : f->a.dev, fr, len);
	return true;
}

static int recv_all(struct fx *f, struct cn_sock *s, uint8_t *buf, uint32_t n)
{
	uint32_t got = 0;

	for (int t = 0; t < 3000 && got < n; t++) {
		int k = cn_sock_recv(s, buf + got, n - got, f->now);
		if (k > 0)
			got += (uint32_t)k;
		else if (k != -EAGAIN)
			return k;
		else
			run(f, 1);
	}
	return (int)got;
}

static void test_lossy_cycles(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params p = conn_params();
	static uint8_t buf[8000], got[8000];
	unsigned done = 0, failed = 0;

	p.syn_retries = 6;
	p.time_wait = 100;
	/* Nagle on (the default): a lost sub-MSS tail segment must still be
	 * retransmitted after a timeout. */
	hosts_up(f, &p, &p);
	cn_test_seed(20261122);
	f->filter = lossy;
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(7), 64);
	for (int i = 0; i < 200; i++) {
		struct cn_sock *cl = cn_sock_connect(f->a.conn, IP_B, CN_BE16(7), f->now), *srv = NULL;
		assert_non_null(cl);
		for (int t = 0; t < 3000 && cn_sock_state(cl) == CN_SOCK_SYN_SENT; t++)
			run(f, 1);
		if (cn_sock_state(cl) != CN_SOCK_ESTABLISHED) {
			assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSED);
			assert_int_equal(cn_sock_error(cl), ETIMEDOUT);
			cn_sock_close(cl, f->now);
			failed++;
			continue;
		}
		uint32_t n = 1 + (uint32_t)(i * 997) % sizeof(buf);
		for (uint32_t k = 0; k < n; k++)
			buf[k] = (uint8_t)(i * 13 + k);
		assert_int_equal(cn_sock_send(cl, buf, n, f->now), (int)n);
		for (int t = 0; t < 3000 && !srv; t++) {
			run(f, 1);
			srv = cn_sock_accept(l);
		}
		assert_non_null(srv);
		assert_int_equal(recv_all(f, srv, got, n), (int)n);
		assert_memory_equal(buf, got, n);
		assert_int_equal(cn_sock_send(srv, got, n, f->now), (int)n);
		memset(got, 0, n);
		assert_int_equal(recv_all(f, cl, got, n), (int)n);
		assert_memory_equal(buf, got, n);
		struct cn_sock *first = (i & 1) ? srv : cl, *second = (i & 1) ? cl : srv;
		cn_sock_close(first, f->now);
		assert_int_equal(recv_all(f, second, got, 1), 0); /* end of stream */
		cn_sock_close(second, f->now);
		done++;
	}
	f->filter = NULL;
	run(f, 3000);
	assert_true(done >= 190);
	assert_int_equal(done + failed, 200);
	assert_int_equal(cn_conn_socks(f->a.conn), 0);
	assert_int_equal(cn_conn_socks(f->b.conn), 1);
	assert_true(f->lost > 0);
	close_down(f, 0, l, NULL);
}

/* Bytes that arrived before the end of a connection stay readable while
 * the application holds the socket: here A is shut down after B's data
 * and FIN, its FIN is ACKed (CLOSED), and only then reads. The TCB goes
 * once they are read. */
static void test_unread_after_close(void **state)
{
	struct fx *f = *state;
	uint8_t b[64];

	hosts_up(f, NULL, NULL);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 4), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	assert_int_equal(cn_sock_send(srv, "last words", 10, f->now), 10);
	cn_sock_close(srv, f->now);
	run(f, 1);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSE_WAIT);
	assert_int_equal(cn_sock_shutdown(cl, f->now), 0);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_LAST_ACK);
	run(f, 2);
	assert_int_equal(cn_sock_state(cl), CN_SOCK_CLOSED);
	assert_non_null(cn_sock_tcb(cl)); /* kept for the unread bytes */
	assert_int_equal(cn_sock_error(cl), 0);
	assert_int_equal(cn_sock_recv(cl, b, sizeof(b), f->now), 10);
	assert_memory_equal(b, "last words", 10);
	assert_null(cn_sock_tcb(cl));
	assert_int_equal(cn_sock_recv(cl, b, sizeof(b), f->now), 0);
	assert_int_equal(cn_sock_shutdown(cl, f->now), -ENOTCONN);
	cn_sock_close(cl, f->now);
	run(f, 40);
	close_down(f, 0, l, NULL);
}

/* Random segments (any flags, sequence numbers near and far from the live
 * ones, options good and bad, payloads), ARP and ICMP frames, some with a
 * byte flipped, thrown at a stack with a listener, an established
 * connection and embryonic ones: nothing crashes (run it under ASan), the
 * established connection either survives or ends by a reset, and
 * everything is freed at the end. */
static void test_random_frames(void **state)
{
	struct fx *f = *state;
	static uint8_t fr[1600], pay[1200];
	struct cn_tcp_info ti;

	hosts_up(f, NULL, NULL);
	cn_test_seed(77);
	struct cn_sock *l = cn_sock_listen(f->b.conn, CN_BE16(80), 8), *srv;
	struct cn_sock *cl = connect_pair(f, l, 80, &srv);
	uint16_t cport;
	cn_be16_t cport_be;
	cn_sock_addrs(cl, NULL, &cport_be, NULL, NULL);
	cport = cn_be16toh(cport_be);
	cn_test_fill_rand(pay, sizeof(pay));
	for (int i = 0; i < 20000; i++) {
		uint32_t kind = cn_test_rndn(10), len;
		if (kind < 7) {
			uint8_t opt[40];
			uint32_t optlen = 4 * cn_test_rndn(11), seq, ack;
			uint16_t sport, dport;
			cn_be32_t saddr = cn_test_rndn(4) ? IP_X : IP_A;
			cn_test_fill_rand(opt, optlen);
			if (cn_test_rndn(2) && optlen >= 4) { /* a well-formed start */
				opt[0] = 2, opt[1] = 4;
			}
			sport = (uint16_t)(cn_be32_eq(saddr, IP_A) ? cport : 1000 + cn_test_rndn(4));
			dport = (uint16_t)(cn_test_rndn(4) ? 80 : 81);
			seq = cn_test_rnd(), ack = cn_test_rnd();
			if (cn_sock_tcb(srv) && cn_be32_eq(saddr, IP_A) && cn_test_rndn(2)) {
				cn_tcp_get_info(cn_sock_tcb(srv), &ti);
				seq = ti.rcv_nxt + cn_test_rndn(3) - 1;
				ack = ti.snd_una + cn_test_rndn(3) - 1;
			}
			len = mk_tcp(fr, cn_be32_eq(saddr, IP_A) ? MAC_A : MAC_X, MAC_B, saddr, IP_B, sport, dport,
				     seq, ack, (uint8_t)cn_test_rnd(), (uint16_t)cn_test_rnd(), opt,
				     optlen, pay, cn_test_rndn(4) ? 0 : cn_test_rndn(1200));
		} else if (kind < 8) {
			len = mk_echo(fr, (uint8_t)(cn_test_rndn(3) ? 8 : cn_test_rnd()), cn_test_rndn(1400),
				      IP_B);
		} else {
			arp_frame(fr, ARP_REQ_X);
			fr[14 + cn_test_rndn(28)] = (uint8_t)cn_test_rnd();
			len = 14 + cn_test_rndn(47);
		}
		if (cn_test_rndn(8) == 0) /* corrupt a byte anywhere */
			fr[cn_test_rndn(len)] ^= (uint8_t)(1 + cn_test_rndn(255));
		inject(&f->b, fr, len);
		if (i % 16 == 0)
			run(f, 1);
	}
	run(f, 300);
	const struct cn_conn_stats *sb = cn_conn_stats(f->b.conn);
	uint64_t drops = 0;
	for (int r = 1; r < CN_CONN_DROP_MAX; r++)
		drops += sb->drop[r];
	assert_true(drops > 1000);
	assert_true(sb->icmp_echo_out > 0);
	assert_true(sb->rst_out > 0);
	assert_true(sb->synack_out > 0);
	enum cn_sock_state st = cn_sock_state(srv);
	assert_true(st == CN_SOCK_ESTABLISHED || (st == CN_SOCK_CLOSED && cn_sock_error(srv) == ECONNRESET));
	cn_sock_abort(cl, f->now);
	cn_sock_close(srv, f->now);
	struct cn_sock *x;
	while ((x = cn_sock_accept(l)))
		cn_sock_abort(x, f->now);
	close_down(f, 300, l, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* ARP and ICMP */
		CN_FX(test_arp_resolution), CN_FX(test_arp_edge), CN_FX(test_ping),
		/* opening and closing */
		CN_FX(test_open_negotiation), CN_FX(test_close_either_side), CN_FX(test_simultaneous_close),
		CN_FX(test_refused), CN_FX(test_reset), CN_FX(test_handshake_loss), CN_FX(test_timeouts),
		CN_FX(test_backlog_and_listener_close), CN_FX(test_syn_options), CN_FX(test_wscale_clamp),
		CN_FX(test_arp_unsolicited), CN_FX(test_syn_cookies), CN_FX(test_syncache_bounds),
		/* loss recovery */
		CN_FX(test_sack_recovery), CN_FX(test_tail_loss_probe),
		/* connection lifetimes */
		CN_FX(test_simultaneous_open), CN_FX(test_thousand_cycles), CN_FX(test_time_wait_reuse),
		CN_FX(test_orphan_timeout), CN_FX(test_events), CN_FX(test_unread_after_close),
		CN_FX(test_lossy_cycles), CN_FX(test_random_frames), CN_FX(test_api),
	};
	if (getenv("CN_TEST_FILTER")) /* e.g. CN_TEST_FILTER='*thousand*' */
		cmocka_set_test_filter(getenv("CN_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
