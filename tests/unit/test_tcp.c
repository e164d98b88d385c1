/* SPDX-License-Identifier: BSD-2-Clause */
/* TCP data path: the header template against hand-built bytes, header
 * prediction taken exactly when it should be, delayed ACKs, sequence
 * arithmetic across the 32-bit wrap, fast retransmit and timeout, and
 * stream transfers between two stacks joined back to back by a direct
 * frame hand-off (frames gathered into clusters, as a NIC would), for every
 * checksum mode, both send buffers and both receive modes, with the
 * received stream's hash equal to the sent one. Pool counters and the
 * stacks' descriptors are checked back to their start values after every
 * test. */
#include "cn_test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"
#include "cachenet/tcp.h"

#define QMAX 8192

struct fx;
struct side {
	struct fx *f;
	struct cn_net *net;
	struct cn_pkt *q[QMAX];
	unsigned nq;
};

/* Return false to lose the frame on its way. */
typedef bool (*filter_fn)(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len);

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct side a, b;
	struct cn_tcb *ta, *tb;
	uint64_t now;
	filter_fn filter;
	unsigned nframes, ndropped;
	uint32_t drop_seq; /* for drop_one: the sequence number to lose once */
	int drop_left;
	int split; /* pump hands chains: 1 at the headers' end, 2 at a random byte */
	bool burst; /* pump hands the frames as one burst (cn_net_input_burst) */
};

static const uint8_t MAC_A[6] = {0x02, 0, 0, 0, 0, 0xa};
static const uint8_t MAC_B[6] = {0x02, 0, 0, 0, 0, 0xb};
#define IP_A CN_IPV4(10, 0, 0, 1)
#define IP_B CN_IPV4(10, 0, 0, 2)

static int xmit(void *arg, struct cn_pkt *p)
{
	struct side *s = arg;
	if (s->nq == QMAX)
		return -ENOBUFS;
	s->q[s->nq++] = p;
	return 0;
}

static struct cn_net *mk_net(struct fx *f, struct side *s, const uint8_t *mac, cn_be32_t ip)
{
	struct cn_net_params np = {.addr = ip, .mpool = f->mp, .cpool = f->cp,
				   .xmit = xmit, .xmit_arg = s, .tx_descs = 4096};
	memcpy(np.mac, mac, 6);
	s->f = f;
	return cn_net_create(&np);
}

static uint32_t m0, c0; /* mbufs and clusters in use after setup */

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (cn_test_pools(&f->mp, &f->cp, 16384, 8192, 0, 0) != 0)
		return -1;
	f->a.net = mk_net(f, &f->a, MAC_A, IP_A);
	f->b.net = mk_net(f, &f->b, MAC_B, IP_B);
	cn_test_pools_in_use(f->mp, f->cp, &m0, &c0);
	*state = f;
	return f->a.net && f->b.net ? 0 : -1;
}

static void drain_queue(struct side *s)
{
	for (unsigned i = 0; i < s->nq; i++)
		cn_pkt_free(s->q[i]);
	s->nq = 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	drain_queue(&f->a);
	drain_queue(&f->b);
	assert_int_equal(cn_net_pkts_out(f->a.net), 0);
	assert_int_equal(cn_net_pkts_out(f->b.net), 0);
	assert_int_equal(cn_net_destroy(f->a.net), 0);
	assert_int_equal(cn_net_destroy(f->b.net), 0);
	cn_test_pools_free(f->mp, f->cp, m0, c0);
	free(f);
	return 0;
}

static struct cn_tcp_params base_params(bool a_side, uint32_t iss_a, uint32_t iss_b)
{
	struct cn_tcp_params p = {
		.mss = 1460,
		.snd_wnd = 65535,
		.sndbuf = CN_SOCKBUF_CHAIN,
		.rcvbuf_size = 256 * 1024,
		.csum = CN_TCP_CSUM_SEPARATE,
		.rto_init = 200,
		.delack_ticks = 40,
	};
	if (a_side) {
		p.laddr = IP_A, p.raddr = IP_B, p.lport = CN_BE16(40000), p.rport = CN_BE16(80);
		memcpy(p.rmac, MAC_B, 6);
		p.iss = iss_a, p.irs = iss_b;
	} else {
		p.laddr = IP_B, p.raddr = IP_A, p.lport = CN_BE16(80), p.rport = CN_BE16(40000);
		memcpy(p.rmac, MAC_A, 6);
		p.iss = iss_b, p.irs = iss_a;
	}
	return p;
}

static uint32_t rnd(void);

/* The frame as a 2-mbuf chain, the way a splitting NIC hands it (split 1:
 * headers, as cn_net_parse finds them, in a small mbuf, the rest in the
 * cluster at its place; header-only frames stay whole, as the NIC keeps
 * them in its header buffer), or cut at a random byte (split 2: the
 * headers may not all be in the first mbuf; the cluster keeps its room in
 * front, so the stack can join the two). */
static struct cn_mbuf *to_chain(struct fx *f, struct cn_mbuf *m)
{
	struct cn_pkt_info pi;
	struct cn_mbuf *h;
	uint32_t k;

	if (f->split == 1) {
		if (cn_net_parse(m->data, m->len, 0, &pi) != CN_DROP_NONE || pi.pay_off >= m->len)
			return m;
		k = pi.pay_off;
	} else {
		if (m->len < 2)
			return m;
		k = 1 + rnd() % (m->len - 1);
		if (k > 190)
			k = 190;
	}
	h = cn_mbuf_get(f->mp);
	assert_non_null(h);
	h->data = h->buf + 2;
	memcpy(h->data, m->data, k);
	h->len = k;
	m->data += k;
	m->len -= k;
	m->pkt_len = m->len;
	h->next = m;
	h->pkt_len = k + m->len;
	return h;
}

/* Deliver every frame queued by `from` to the other side. */
static unsigned pump(struct fx *f, struct side *from)
{
	struct side *to = from == &f->a ? &f->b : &f->a;
	struct cn_pkt *q[QMAX];
	static struct cn_mbuf *ms[QMAX];
	unsigned n = from->nq, nm = 0;

	memcpy(q, from->q, n * sizeof(q[0]));
	from->nq = 0;
	for (unsigned i = 0; i < n; i++) {
		struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, f->cp);
		assert_non_null(m);
		m->data = m->buf + 2; /* IPv4 header 4-byte aligned */
		m->len = m->pkt_len = cn_pkt_gather(q[i], m->data);
		cn_pkt_free(q[i]);
		f->nframes++;
		if (f->filter && !f->filter(f, from, m->data, m->len)) {
			f->ndropped++;
			cn_mbuf_free(m);
			continue;
		}
		if (f->split)
			m = to_chain(f, m);
		if (f->burst)
			ms[nm++] = m;
		else
			cn_net_input(to->net, m, f->now);
	}
	if (f->burst)
		cn_net_input_burst(to->net, ms, nm, f->now);
	return n;
}

/* Pump both ways; when nothing moves, advance time by 10 ticks and run
 * the timers. Stops after 2000 quiet ticks (longer than any timer the
 * tests arm, backoff aside) or rounds_max rounds. */
static void run(struct fx *f, unsigned rounds_max)
{
	unsigned quiet = 0;

	for (unsigned r = 0; r < rounds_max && quiet < 200; r++) {
		unsigned n = pump(f, &f->a) + pump(f, &f->b);
		if (n == 0) {
			f->now += 10;
			cn_net_timer(f->a.net, f->now);
			cn_net_timer(f->b.net, f->now);
			quiet++;
		} else {
			quiet = 0;
		}
	}
}

static uint64_t fnv(uint64_t h, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)rs;
}

/* ---------------------------------------------------------------- tests */

/* Golden frame: built by hand below from the RFC 791/9293 layouts (every
 * byte written explicitly), checksums by the RFC 1071 reference sum
 * (cn_csum_partial_ref); tcp_output must produce the same bytes. */
static void test_template_golden(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params p = base_params(true, 1000, 5000);
	uint8_t g[66 + 10], out[128];
	const char *payload = "0123456789";

	p.ts = true;
	p.ts_recent = 0x11223344;
	p.nodelay = true;
	f->ta = cn_tcp_open(f->a.net, &p);
	assert_non_null(f->ta);
	assert_int_equal(cn_tcp_send(f->ta, payload, 10, 0x55667788), 10);
	assert_int_equal(f->a.nq, 1);
	assert_int_equal(cn_pkt_gather(f->a.q[0], out), 76);

	memset(g, 0, sizeof(g));
	memcpy(g, MAC_B, 6);
	memcpy(g + 6, MAC_A, 6);
	g[12] = 0x08, g[13] = 0x00;
	uint8_t *ip = g + 14;
	ip[0] = 0x45, ip[1] = 0, ip[2] = 0, ip[3] = 20 + 32 + 10;
	ip[4] = 0, ip[5] = 0;            /* id: first frame of the stack */
	ip[6] = 0x40, ip[7] = 0;         /* DF */
	ip[8] = 64, ip[9] = 6;
	ip[12] = 10, ip[15] = 1;         /* 10.0.0.1 */
	ip[16] = 10, ip[19] = 2;         /* 10.0.0.2 */
	uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	uint8_t *th = ip + 20;
	th[0] = 40000 >> 8, th[1] = 40000 & 0xff, th[2] = 0, th[3] = 80;
	th[4] = 0, th[5] = 0, th[6] = 0x03, th[7] = 0xe9;    /* seq = iss + 1 = 1001 */
	th[8] = 0, th[9] = 0, th[10] = 0x13, th[11] = 0x89;  /* ack = irs + 1 = 5001 */
	th[12] = 8 << 4, th[13] = 0x10;                      /* 32-byte header, ACK */
	th[14] = 0xff, th[15] = 0xff;                        /* 256 KB >> 0, capped 65535 */
	th[20] = 1, th[21] = 1, th[22] = 8, th[23] = 10;
	th[24] = 0x55, th[25] = 0x66, th[26] = 0x77, th[27] = 0x88;
	th[28] = 0x11, th[29] = 0x22, th[30] = 0x33, th[31] = 0x44;
	memcpy(th + 32, payload, 10);
	/* pseudo-header by hand: src, dst, 0, 6, length 42 */
	uint8_t ph[12] = {10, 0, 0, 1, 10, 0, 0, 2, 0, 6, 0, 42};
	uint32_t s = cn_csum_partial_ref(ph, 12, 0);
	s = cn_csum_partial_ref(th, 42, s);
	c = (uint16_t)~cn_csum_fold(s);
	memcpy(th + 16, &c, 2);
	assert_memory_equal(out, g, 76);
	drain_queue(&f->a);
	cn_tcp_close(f->ta);
}

static void open_pair(struct fx *f, struct cn_tcp_params *pa, struct cn_tcp_params *pb)
{
	f->ta = cn_tcp_open(f->a.net, pa);
	f->tb = cn_tcp_open(f->b.net, pb);
	assert_non_null(f->ta);
	assert_non_null(f->tb);
}

static void close_pair(struct fx *f)
{
	drain_queue(&f->a);
	drain_queue(&f->b);
	cn_tcp_close(f->ta);
	cn_tcp_close(f->tb);
	f->ta = f->tb = NULL;
	f->filter = NULL;
	f->burst = false;
}

static void test_open_errors(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params p, bad[7];

	for (size_t i = 0; i < 7; i++)
		bad[i] = base_params(true, 1, 2);
	bad[0].mss = 12; /* 0 is the default (536); 1..12 leave no payload with timestamps */
	bad[1].mss = CN_TCP_MSS_MAX + 1;
	bad[2].snd_wscale = CN_TCP_WSCALE_MAX + 1;
	bad[3].ooo_max = CN_TCP_OOO_MAX + 1;
	bad[4].size = 2;
	bad[5].csum = CN_TCP_CSUM_STORED; /* needs a CSUM ring */
	bad[6].rx_readahead = CN_TCP_RX_READAHEAD_MAX + 1;
	for (size_t i = 0; i < 7; i++) {
		errno = 0;
		assert_null(cn_tcp_open(f->a.net, &bad[i]));
		assert_int_equal(errno, EINVAL);
	}
	/* A newer caller's larger struct: accepted only with zeros past ours. */
	struct {
		struct cn_tcp_params p;
		uint64_t more;
	} big;
	/* zeroed whole: the padding between p and more is past ours too */
	memset(&big, 0, sizeof(big));
	big.p = base_params(true, 1, 2);
	big.more = 1;
	big.p.size = sizeof(big);
	errno = 0;
	assert_null(cn_tcp_open(f->a.net, &big.p));
	assert_int_equal(errno, EINVAL);
	big.more = 0;
	f->ta = cn_tcp_open(f->a.net, &big.p);
	assert_non_null(f->ta);
	cn_tcp_close(f->ta);
	f->ta = NULL;
	p = base_params(true, 1, 2);
	f->ta = cn_tcp_open(f->a.net, &p);
	assert_non_null(f->ta);
	assert_null(cn_tcp_open(f->a.net, &p));
	assert_int_equal(errno, EEXIST);
	cn_tcp_close(f->ta);

	/* All zero but the 4-tuple: every other field takes its default. */
	struct cn_tcp_params z = {.laddr = p.laddr, .raddr = p.raddr, .lport = p.lport,
				  .rport = p.rport};
	struct cn_tcp_info ti;
	f->ta = cn_tcp_open(f->a.net, &z);
	assert_non_null(f->ta);
	cn_tcp_get_info(f->ta, &ti);
	assert_int_equal(ti.snd_wnd, 65535);
	assert_int_equal(cn_tcp_sndbuf(f->ta)->kind, CN_SOCKBUF_CHAIN);
	cn_tcp_close(f->ta);
	z.size = sizeof(z);
	f->ta = cn_tcp_open(f->a.net, &z);
	assert_non_null(f->ta);
	cn_tcp_close(f->ta);
	f->ta = NULL;
}

/* Prediction: in-order data on the receiver and pure ACKs on the sender
 * take the fast path; a window change, out-of-order data or a duplicate
 * ACK do not. */
static void test_header_prediction(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 100, 900), pb = base_params(false, 100, 900);
	static uint8_t buf[8 * 1460];
	const struct cn_tcp_stats *sa, *sb;

	pa.snd_wnd = pb.rcvbuf_size = 65535; /* B's window equals what A believes */
	pb.snd_wnd = pa.rcvbuf_size = 65535;
	pb.delack_ticks = 0;
	pa.no_rack_tlp = true; /* the loss at the end is the RTO's (a probe would take it) */
	open_pair(f, &pa, &pb);
	sa = cn_tcp_stats(f->ta);
	sb = cn_tcp_stats(f->tb);
	memset(buf, 0x5a, sizeof(buf));
	assert_int_equal(cn_tcp_send(f->ta, buf, 2 * 1460, f->now), 2 * 1460);
	assert_int_equal(f->a.nq, 2);
	pump(f, &f->a);
	/* both segments predicted; B's receive window shrank, so B's ACKs
	 * carry a new window: A takes them through the slow path */
	assert_int_equal(sb->hp_data, 2);
	assert_int_equal(sb->slow_path, 0);
	uint8_t rbuf[4 * 1460];
	assert_int_equal(cn_tcp_recv(f->tb, rbuf, sizeof(rbuf), f->now), 2 * 1460);
	pump(f, &f->b);
	assert_int_equal(sa->hp_ack, 0);
	assert_true(sa->slow_path >= 1);

	/* Now the window B advertises stays put as long as B's app reads
	 * everything at once... use B posting a buffer: payload copied out,
	 * queue stays empty, window constant. */
	static uint8_t post[64 * 1460];
	assert_int_equal(cn_tcp_recv_post(f->tb, post, sizeof(post)), 0);
	uint64_t hpa = sa->hp_ack, slowa = sa->slow_path, hpd = sb->hp_data;
	assert_int_equal(cn_tcp_send(f->ta, buf, 4 * 1460, f->now), 4 * 1460);
	pump(f, &f->a);
	assert_int_equal(sb->hp_data, hpd + 4);
	assert_int_equal(sb->rcv_fused, 4);
	pump(f, &f->b);
	assert_true(sa->hp_ack > hpa);
	assert_int_equal(sa->slow_path, slowa);

	/* Out of order: lose the first of three; the next two miss the
	 * prediction (seq != rcv_nxt) and each draws a duplicate ACK. */
	uint64_t slowb = sb->slow_path;
	hpd = sb->hp_data;
	assert_int_equal(cn_tcp_send(f->ta, buf, 3 * 1460, f->now), 3 * 1460);
	assert_int_equal(f->a.nq, 3);
	cn_pkt_free(f->a.q[0]);
	memmove(f->a.q, f->a.q + 1, 2 * sizeof(f->a.q[0]));
	f->a.nq = 2;
	pump(f, &f->a);
	assert_int_equal(sb->hp_data, hpd);
	assert_int_equal(sb->slow_path, slowb + 2);
	assert_int_equal(f->b.nq, 2); /* two duplicate ACKs */
	pump(f, &f->b);
	assert_int_equal(sa->dupacks_in, 2);
	/* the RTO recovers the loss; the stream completes */
	run(f, 1000);
	assert_int_equal(cn_tcp_recv_posted(f->tb, true), 7 * 1460);
	assert_true(cn_tcp_stats(f->ta)->rto_fired >= 1);
	close_pair(f);
}

/* Delayed ACK: one segment waits for the timer, two are ACKed at once. */
static void test_delayed_ack(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 7, 9), pb = base_params(false, 7, 9);
	static uint8_t buf[4 * 1460];
	struct cn_tcp_info ib;

	pb.delack_ticks = 40;
	open_pair(f, &pa, &pb);
	assert_int_equal(cn_tcp_send(f->ta, buf, 1460, f->now), 1460);
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 0);
	cn_tcp_get_info(f->tb, &ib);
	assert_true(ib.delack_pending);
	cn_net_timer(f->b.net, f->now + 39);
	assert_int_equal(f->b.nq, 0);
	cn_net_timer(f->b.net, f->now + 40);
	assert_int_equal(f->b.nq, 1);
	assert_int_equal(cn_tcp_stats(f->tb)->delack_timer, 1);
	pump(f, &f->b);
	assert_int_equal(cn_tcp_send(f->ta, buf, 2 * 1460, f->now), 2 * 1460);
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 1); /* every second segment: ACKed at once */
	pump(f, &f->b);
	cn_tcp_get_info(f->ta, &ib);
	assert_int_equal(ib.snd_una, ib.snd_max);
	close_pair(f);
}

/* Stream transfer A -> B; asserts the received stream's hash and bytes. */
static void transfer(struct fx *f, struct cn_tcp_params *pa, struct cn_tcp_params *pb,
		     uint32_t total, bool post, unsigned wchunk)
{
	uint8_t *src = malloc(total), *dst = malloc(total);
	uint32_t sent = 0, got = 0;
	unsigned idle = 0;

	assert_non_null(src);
	assert_non_null(dst);
	for (uint32_t i = 0; i < total; i++)
		src[i] = (uint8_t)rnd();
	open_pair(f, pa, pb);
	if (post)
		assert_int_equal(cn_tcp_recv_post(f->tb, dst, total), 0);
	while ((post ? cn_tcp_recv_posted(f->tb, false) : got) < total) {
		unsigned moved = 0;
		if (sent < total) {
			uint32_t w = total - sent < wchunk ? total - sent : wchunk;
			int n = cn_tcp_send(f->ta, src + sent, w, f->now);
			assert_true(n >= 0);
			sent += (uint32_t)n;
			moved += (unsigned)n;
		}
		moved += pump(f, &f->a);
		if (!post) {
			int n = cn_tcp_recv(f->tb, dst + got, total - got, f->now);
			got += (uint32_t)n;
			moved += (unsigned)n;
		}
		moved += pump(f, &f->b);
		if (!moved) {
			f->now += 10;
			cn_net_timer(f->a.net, f->now);
			cn_net_timer(f->b.net, f->now);
			assert_true(++idle < 100000);
		} else {
			f->now += 1;
		}
	}
	run(f, 100000);
	if (post)
		assert_int_equal(cn_tcp_recv_posted(f->tb, true), total);
	assert_true(fnv(0xcbf29ce484222325ull, src, total) == fnv(0xcbf29ce484222325ull, dst, total));
	assert_memory_equal(src, dst, total);
	struct cn_tcp_info ia;
	cn_tcp_get_info(f->ta, &ia);
	assert_int_equal(ia.snd_una, ia.snd_max);
	assert_int_equal(ia.snd_queued, 0);
	free(src);
	free(dst);
	close_pair(f);
}

static void test_transfer_modes(void **state)
{
	struct fx *f = *state;
	static const struct {
		enum cn_tcp_csum csum;
		enum cn_sockbuf_kind sb;
		enum cn_sbring_copy copy;
	} modes[] = {
		{CN_TCP_CSUM_OFFLOAD, CN_SOCKBUF_CHAIN, 0},
		{CN_TCP_CSUM_SEPARATE, CN_SOCKBUF_CHAIN, 0},
		{CN_TCP_CSUM_FUSED, CN_SOCKBUF_CHAIN, 0},
		{CN_TCP_CSUM_OFFLOAD, CN_SOCKBUF_RING, CN_SBRING_COPY_PLAIN},
		{CN_TCP_CSUM_SEPARATE, CN_SOCKBUF_RING, CN_SBRING_COPY_PLAIN},
		{CN_TCP_CSUM_FUSED, CN_SOCKBUF_RING, CN_SBRING_COPY_PLAIN},
		{CN_TCP_CSUM_STORED, CN_SOCKBUF_RING, CN_SBRING_COPY_CSUM},
	};
	/* split 0: one buffer per frame; 1: split chains (received in
	 * place: every data segment counted in rx_chain, none joined, no
	 * drop); 2: cut at random bytes (joined when the headers are not
	 * all in the first mbuf) */
	for (int split = 0; split < 3; split++)
		for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			for (int post = 0; post < 2; post++) {
				struct cn_tcp_params pa = base_params(true, rnd(), rnd());
				struct cn_tcp_params pb = base_params(false, pa.iss, pa.irs);
				struct cn_net_stats b0 = *cn_net_stats(f->b.net);
				pa.csum = modes[i].csum;
				pa.sndbuf = modes[i].sb;
				pa.ring_copy = modes[i].copy;
				pa.sndbuf_size = 1 << 18;
				pa.ts = pb.ts = (i & 1) != 0;
				f->split = split;
				transfer(f, &pa, &pb, 1 << 20, post, 8192 + 17 * i);
				f->split = 0;
				const struct cn_net_stats *b1 = cn_net_stats(f->b.net);
				uint64_t chains = b1->rx_chain - b0.rx_chain;
				uint64_t joins = b1->rx_chain_join - b0.rx_chain_join;
				assert_int_equal(cn_net_drops(f->b.net), 0);
				if (split == 0)
					assert_true(chains == 0 && joins == 0);
				if (split == 1) {
					assert_true(chains >= (1u << 20) / 1460);
					assert_int_equal(joins, 0);
				}
				if (split == 2) /* cut exactly at the headers' end: rare */
					assert_true(joins > 0);
			}
		}
}

/* Sequence numbers across 2^32: ISNs a few KB before the wrap. */
static void test_seq_wrap(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 0xffffffffu - 5000, 0xffffffffu - 3000);
	struct cn_tcp_params pb = base_params(false, pa.iss, pa.irs);

	assert_true(cn_seq_lt(0xfffffff0u, 0x10u));
	assert_true(cn_seq_gt(0x10u, 0xfffffff0u));
	assert_true(cn_seq_leq(0x80000000u, 0x80000000u));
	assert_true(cn_seq_geq(5u, 0xffffff00u));
	pa.ts = pb.ts = true;
	transfer(f, &pa, &pb, 300000, false, 3000);
	/* both directions: B sends back across its own wrap */
	pa = base_params(true, 0xfffffff0u, 0xfffff000u);
	pb = base_params(false, pa.iss, pa.irs);
	transfer(f, &pa, &pb, 100000, true, 1000);
}

/* Loss filters on A's data segments. */
static bool lose_some(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	(void)frame;
	if (from != &f->a || len <= 66)
		return true;
	return rnd() % 50 != 0; /* 2% */
}

/* The filters' verdict: drop a frame that is @doomed while f->drop_left
 * says more are to go, counting it; pass every other. */
static bool pass_unless(struct fx *f, bool doomed)
{
	if (doomed && f->drop_left > 0) {
		f->drop_left--;
		return false;
	}
	return true;
}

static bool lose_once(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	struct cn_tcp_hdr th;
	if (from != &f->a || len <= 66)
		return true;
	memcpy(&th, frame + 34, sizeof(th));
	return pass_unless(f, cn_ntoh32(th.seq) == f->drop_seq);
}

static void test_fast_retransmit(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 10, 20), pb = base_params(false, 10, 20);

	pb.ooo_max = 64;
	f->filter = lose_once;
	f->drop_seq = 11 + 5 * 1460; /* the sixth segment */
	f->drop_left = 1;
	transfer(f, &pa, &pb, 200000, false, 65536);
	/* transfer closed the pair; its stats are gone, but the drop happened */
	assert_int_equal(f->drop_left, 0);
}

static void test_fast_retransmit_stats(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 10, 20), pb = base_params(false, 10, 20);
	static uint8_t buf[20 * 1460];

	pb.ooo_max = 64;
	pb.delack_ticks = 0;
	pa.init_cwnd = 20;
	open_pair(f, &pa, &pb);
	f->filter = lose_once;
	f->drop_seq = 11 + 2 * 1460;
	f->drop_left = 1;
	assert_int_equal(cn_tcp_send(f->ta, buf, sizeof(buf), f->now), sizeof(buf));
	pump(f, &f->a);
	struct cn_tcp_info ib;
	cn_tcp_get_info(f->tb, &ib);
	assert_int_equal(ib.ooo_segs, 17);
	pump(f, &f->b); /* 2 ACKs + 17 duplicates */
	assert_int_equal(cn_tcp_stats(f->ta)->fast_rexmit, 1);
	assert_int_equal(cn_tcp_stats(f->ta)->rto_fired, 0);
	run(f, 100);
	cn_tcp_get_info(f->tb, &ib);
	assert_int_equal(ib.rcv_queued, sizeof(buf));
	assert_int_equal(ib.ooo_segs, 0);
	assert_int_equal(cn_tcp_stats(f->ta)->rto_fired, 0);
	close_pair(f);
}

static void test_lossy_transfer(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 1, 2), pb = base_params(false, 1, 2);

	f->filter = lose_some;
	pb.ooo_max = 32;
	transfer(f, &pa, &pb, 1 << 20, false, 16384);
	pa = base_params(true, 5, 6), pb = base_params(false, 5, 6);
	f->filter = lose_some; /* out-of-order segments dropped, not queued */
	transfer(f, &pa, &pb, 1 << 19, true, 16384);
}

/* Zero window: the receiver's application stops reading; the sender
 * probes and resumes when the window opens. */
static void test_zero_window(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 3, 4), pb = base_params(false, 3, 4);
	static uint8_t buf[64 * 1024], out[64 * 1024];

	pb.rcvbuf_size = 8 * 1460;
	pa.snd_wnd = 8 * 1460;
	open_pair(f, &pa, &pb);
	assert_int_equal(cn_tcp_send(f->ta, buf, sizeof(buf), f->now), sizeof(buf));
	run(f, 200);
	struct cn_tcp_info ia, ib;
	cn_tcp_get_info(f->ta, &ia);
	cn_tcp_get_info(f->tb, &ib);
	assert_int_equal(ib.rcv_queued, 8 * 1460);
	assert_int_equal(ia.snd_wnd, 0);
	uint32_t got = 0;
	while (got < sizeof(buf)) {
		int n = cn_tcp_recv(f->tb, out + got, sizeof(out) - got, f->now);
		got += (uint32_t)n;
		run(f, 50);
	}
	assert_int_equal(got, sizeof(buf));
	close_pair(f);
}

/* Read exactly @p want queued bytes into @p dst at B: copied out by
 * cn_tcp_recv, or through a posted buffer. */
static void read_exact(struct fx *f, uint8_t *dst, uint32_t want, bool post)
{
	if (post) {
		assert_int_equal(cn_tcp_recv_post(f->tb, dst, want), 0);
		assert_int_equal(cn_tcp_recv_posted(f->tb, true), want);
	} else {
		assert_int_equal(cn_tcp_recv(f->tb, dst, want, f->now), (int)want);
	}
}

/* Send @p total bytes from A and run the link until B has all of them
 * queued, none read yet. */
static void queue_all(struct fx *f, const uint8_t *src, uint32_t total)
{
	struct cn_tcp_info ib;

	for (uint32_t sent = 0; sent < total;) {
		int n = cn_tcp_send(f->ta, src + sent, total - sent, f->now);
		assert_true(n >= 0);
		sent += (uint32_t)n;
		run(f, 1000);
	}
	run(f, 1000);
	cn_tcp_get_info(f->tb, &ib);
	assert_int_equal(ib.rcv_queued, total);
}

/* The copy-out read-ahead (tcp.c, rcvq_readahead) prefetches queued
 * segments past the ones being copied: a hint, so the stream must come out
 * unchanged however the reads cut the queue: 40 segments queued (more than
 * the read-ahead distance), then read with lengths that end inside a
 * segment, span several, take one byte, and drain the queue; then the same
 * through a posted buffer, and with split chains (payload mbufs kept by
 * reference past their header mbuf). */
static void test_recv_readahead(void **state)
{
	struct fx *f = *state;
	static const uint32_t cuts[] = {1, 1459, 2921, 64, 7000, 1460, 3, 20000};
	enum { SEGS = 40, TOTAL = SEGS * 1460 };
	static uint8_t src[TOTAL], dst[TOTAL];

	for (unsigned i = 0; i < TOTAL; i++)
		src[i] = (uint8_t)rnd();
	for (int mode = 0; mode < 8; mode++) {
		int split = mode >> 2, post = mode & 3;
		struct cn_tcp_params pa = base_params(true, rnd(), rnd());
		struct cn_tcp_params pb = base_params(false, pa.iss, pa.irs);
		/* post 2 and 3: the same reads with the read-ahead off */
		pb.no_rx_readahead = post >= 2;
		uint32_t got = 0;
		f->split = split;
		open_pair(f, &pa, &pb);
		memset(dst, 0, sizeof(dst));
		queue_all(f, src, TOTAL);
		for (unsigned c = 0; got < TOTAL; c++) {
			uint32_t want = cuts[c % (sizeof(cuts) / sizeof(cuts[0]))];
			if (want > TOTAL - got)
				want = TOTAL - got;
			read_exact(f, dst + got, want, post & 1);
			got += want;
		}
		assert_memory_equal(src, dst, TOTAL);
		/* each queued byte read ahead once (no segment here is
		 * small enough for sbcompress), or never */
		assert_int_equal(cn_tcp_stats(f->tb)->rcv_readahead,
				 pb.no_rx_readahead ? 0 : TOTAL);
		run(f, 1000);
		f->split = 0;
		close_pair(f);
	}
}

/* The read-ahead with short queues: 1 to 3 segments arrive between reads
 * that leave part of the queue (or of a segment) behind, or drain it. The
 * stream continues from its cursor across arrivals and reads: each byte
 * read ahead exactly once (a cursor left on a freed mbuf, a restart at the
 * head or a skipped mbuf would count otherwise), and the bytes intact. */
static void test_recv_readahead_short(void **state)
{
	struct fx *f = *state;
	static const uint32_t cuts[] = {1000, 460, 1460, 2921, 1, 4380, 99999};
	enum { SEGS = 60, TOTAL = SEGS * 1460 };
	static uint8_t src[TOTAL], dst[TOTAL];

	for (unsigned i = 0; i < TOTAL; i++)
		src[i] = (uint8_t)rnd();
	for (int split = 0; split < 2; split++)
		for (int post = 0; post < 2; post++) {
			struct cn_tcp_params pa = base_params(true, rnd(), rnd());
			struct cn_tcp_params pb = base_params(false, pa.iss, pa.irs);
			struct cn_tcp_info ib;
			uint32_t sent = 0, got = 0;
			f->split = split;
			open_pair(f, &pa, &pb);
			for (unsigned c = 0; got < TOTAL; c++) {
				uint32_t k = (1 + c % 3) * 1460u;
				if (k > TOTAL - sent)
					k = TOTAL - sent;
				if (k) {
					assert_int_equal(cn_tcp_send(f->ta, src + sent, k, f->now), (int)k);
					sent += k;
				}
				run(f, 1000);
				cn_tcp_get_info(f->tb, &ib);
				assert_int_equal(ib.rcv_queued, sent - got);
				uint32_t want = cuts[c % (sizeof(cuts) / sizeof(cuts[0]))];
				if (want > sent - got)
					want = sent - got;
				if (!want)
					continue;
				read_exact(f, dst + got, want, post);
				got += want;
			}
			assert_memory_equal(src, dst, TOTAL);
			assert_int_equal(cn_tcp_stats(f->tb)->rcv_readahead, TOTAL);
			run(f, 1000);
			f->split = 0;
			close_pair(f);
		}
}

/* The read-ahead distance (cn_tcp_params.rx_readahead): 40 segments
 * queued, a first read of one byte reads ahead whole segments until
 * 1 + distance bytes are asked for (0: CN_TCP_RX_READAHEAD_DEFAULT),
 * the rest of the reads the remainder, each byte once, the stream intact. */
static void test_recv_readahead_distance(void **state)
{
	struct fx *f = *state;
	enum { SEGS = 40, TOTAL = SEGS * 1460 };
	static const uint32_t dist[] = {0, 1460, 11680, 40000, CN_TCP_RX_READAHEAD_MAX};
	static uint8_t src[TOTAL], dst[TOTAL];

	for (unsigned i = 0; i < TOTAL; i++)
		src[i] = (uint8_t)rnd();
	for (unsigned d = 0; d < sizeof(dist) / sizeof(dist[0]); d++) {
		struct cn_tcp_params pa = base_params(true, rnd(), rnd());
		struct cn_tcp_params pb = base_params(false, pa.iss, pa.irs);
		pb.rx_readahead = dist[d];
		open_pair(f, &pa, &pb);
		memset(dst, 0, sizeof(dst));
		queue_all(f, src, TOTAL);
		read_exact(f, dst, 1, false);
		uint32_t want = 1 + (dist[d] ? dist[d] : CN_TCP_RX_READAHEAD_DEFAULT);
		uint32_t segs = (want + 1459) / 1460;
		if (segs > SEGS)
			segs = SEGS;
		assert_int_equal(cn_tcp_stats(f->tb)->rcv_readahead, segs * 1460);
		read_exact(f, dst + 1, TOTAL - 1, false);
		assert_memory_equal(src, dst, TOTAL);
		assert_int_equal(cn_tcp_stats(f->tb)->rcv_readahead, TOTAL);
		run(f, 1000);
		close_pair(f);
	}
}

/* A posted buffer smaller than a segment: filled exactly (copy and
 * checksum fused over the part that fits), the rest kept by reference. */
static void test_post_partial(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 50, 60), pb = base_params(false, 50, 60);
	static uint8_t src[3 * 1460], post[1001], rest[4 * 1460];

	for (unsigned i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 31 + 1);
	open_pair(f, &pa, &pb);
	assert_int_equal(cn_tcp_recv_post(f->tb, post, sizeof(post)), 0);
	assert_int_equal(cn_tcp_send(f->ta, src, sizeof(src), f->now), sizeof(src));
	run(f, 100);
	assert_int_equal(cn_tcp_recv_posted(f->tb, true), sizeof(post));
	assert_memory_equal(post, src, sizeof(post));
	assert_int_equal(cn_tcp_recv(f->tb, rest, sizeof(rest), f->now), sizeof(src) - sizeof(post));
	assert_memory_equal(rest, src + sizeof(post), sizeof(src) - sizeof(post));
	assert_int_equal(cn_tcp_stats(f->tb)->rcv_fused, 1);
	close_pair(f);
}

/* ---------------------------------------------------------------- FIN */

static unsigned fin_frames, fin_data_frames;

static bool count_fins(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	(void)f, (void)from;
	if (frame[14 + 20 + 13] & CN_TCP_FIN) {
		fin_frames++;
		fin_data_frames += len > 66;
	}
	return true;
}

/* Lose the first FIN A sends. */
static bool lose_first_fin(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	(void)len;
	return pass_unless(f, from == &f->a && (frame[14 + 20 + 13] & CN_TCP_FIN));
}

static void recv_all(struct fx *f, struct cn_tcb *t, uint8_t *buf, uint32_t len)
{
	uint32_t got = 0;
	for (unsigned i = 0; i < 1000 && got < len; i++) {
		int n = cn_tcp_recv(t, buf + got, len - got, f->now);
		assert_true(n >= 0);
		got += (uint32_t)n;
		run(f, 50);
	}
	assert_int_equal(got, len);
}

/* A shuts down after 10,000 bytes, B after 3,000: every byte and both FINs
 * arrive, each FIN takes one sequence number, nothing can be sent after a
 * shutdown, and the send buffers end empty. */
static void test_fin_both_ways(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 1000, 5000), pb = base_params(false, 1000, 5000);
	static uint8_t out[10000], in[10000];
	struct cn_tcp_info ia, ib;

	for (unsigned i = 0; i < sizeof(out); i++)
		out[i] = (uint8_t)rnd();
	open_pair(f, &pa, &pb);
	fin_frames = 0;
	f->filter = count_fins;
	assert_int_equal(cn_tcp_send(f->ta, out, sizeof(out), f->now), sizeof(out));
	assert_int_equal(cn_tcp_shutdown(f->ta, f->now), 0);
	assert_int_equal(cn_tcp_shutdown(f->ta, f->now), 0); /* idempotent */
	assert_int_equal(cn_tcp_send(f->ta, out, 1, f->now), -EPIPE);
	cn_tcp_get_info(f->ta, &ia);
	assert_true(ia.shut_wr);
	run(f, 1000);
	recv_all(f, f->tb, in, sizeof(in));
	assert_memory_equal(in, out, sizeof(out));
	cn_tcp_get_info(f->ta, &ia);
	cn_tcp_get_info(f->tb, &ib);
	assert_true(ib.fin_rcvd);
	assert_false(ia.fin_rcvd);
	assert_true(ia.fin_sent);
	assert_true(ia.fin_acked);
	assert_int_equal(ia.snd_una, 1000 + 1 + 10000 + 1);
	assert_int_equal(ia.snd_max, ia.snd_una);
	assert_int_equal(ib.rcv_nxt, ia.snd_una);
	assert_int_equal(ia.snd_queued, 0);
	assert_int_equal(cn_tcp_stats(f->ta)->fins_out, 1);
	assert_int_equal(fin_frames, 1);

	assert_int_equal(cn_tcp_send(f->tb, out, 3000, f->now), 3000);
	cn_tcp_shutdown(f->tb, f->now);
	run(f, 1000);
	recv_all(f, f->ta, in, 3000);
	assert_memory_equal(in, out, 3000);
	cn_tcp_get_info(f->ta, &ia);
	cn_tcp_get_info(f->tb, &ib);
	assert_true(ia.fin_rcvd);
	assert_true(ib.fin_acked);
	assert_int_equal(ia.rcv_nxt, 5000 + 1 + 3000 + 1);
	assert_int_equal(ib.snd_una, ia.rcv_nxt);
	assert_int_equal(fin_frames, 2);
	/* A FIN retransmitted after both sides closed is ACKed again, nothing
	 * else changes. */
	assert_int_equal(cn_tcp_stats(f->ta)->rexmit_segs, 0);
	close_pair(f);
}

/* The FIN rides on the last data segment when they leave together. */
static void test_fin_piggyback(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 7, 9), pb = base_params(false, 7, 9);
	static uint8_t out[20 * 1460], in[20 * 1460];
	struct cn_tcp_info ia;

	pa.init_cwnd = 2; /* most of the data waits for ACKs, so does the FIN */
	open_pair(f, &pa, &pb);
	fin_frames = fin_data_frames = 0;
	f->filter = count_fins;
	assert_int_equal(cn_tcp_send(f->ta, out, sizeof(out), f->now), sizeof(out));
	cn_tcp_shutdown(f->ta, f->now);
	cn_tcp_get_info(f->ta, &ia);
	assert_false(ia.fin_sent);
	run(f, 2000);
	recv_all(f, f->tb, in, sizeof(in));
	cn_tcp_get_info(f->ta, &ia);
	assert_true(ia.fin_acked);
	assert_int_equal(fin_frames, 1);
	assert_int_equal(fin_data_frames, 1);
	close_pair(f);
}

/* A lost FIN is sent again by the retransmission timer, or with
 * RACK-TLP (the default) first by the tail-loss probe. */
static void fin_lost_run(struct fx *f, bool no_rack_tlp)
{
	struct cn_tcp_params pa = base_params(true, 0xfffffff0u, 3), pb = base_params(false, 0xfffffff0u, 3);
	static uint8_t out[100];
	struct cn_tcp_info ia, ib;

	pa.no_rack_tlp = no_rack_tlp;
	open_pair(f, &pa, &pb);
	f->filter = lose_first_fin;
	f->drop_left = 1;
	assert_int_equal(cn_tcp_send(f->ta, out, sizeof(out), f->now), sizeof(out));
	run(f, 100);
	cn_tcp_shutdown(f->ta, f->now);
	cn_tcp_get_info(f->ta, &ia);
	assert_true(ia.fin_sent);
	run(f, 2000);
	assert_int_equal(f->drop_left, 0);
	cn_tcp_get_info(f->ta, &ia);
	cn_tcp_get_info(f->tb, &ib);
	assert_true(ia.fin_acked);
	assert_true(ib.fin_rcvd);
	assert_int_equal(cn_tcp_stats(f->ta)->fins_out, 2);
	if (no_rack_tlp) {
		assert_true(cn_tcp_stats(f->ta)->rto_fired >= 1);
	} else {
		assert_int_equal(cn_tcp_stats(f->ta)->tlp_probes, 1);
		assert_int_equal(cn_tcp_stats(f->ta)->rto_fired, 0);
	}
	assert_int_equal(ia.snd_una, 0xfffffff0u + 1 + 100 + 1);
	assert_int_equal(ib.rcv_nxt, ia.snd_una);
	assert_int_equal(cn_tcp_lookup(f->a.net, IP_B, CN_BE16(80), CN_BE16(40000)), f->ta);
	assert_null(cn_tcp_lookup(f->a.net, IP_B, CN_BE16(81), CN_BE16(40000)));
	close_pair(f);
}

static void test_fin_lost(void **state)
{
	fin_lost_run(*state, true);
	fin_lost_run(*state, false);
}

/* Lose B's ACKs until told otherwise. */
static bool lose_b(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	(void)frame, (void)len;
	return from != &f->b || f->drop_left <= 0;
}

/* Shut down while a timeout's go-back-N has set snd_nxt back: the FIN is
 * not due then; when one cumulative ACK then covers every byte, nothing
 * but the FIN is left to send, and it must go (no timer would send it:
 * nothing is in flight). */
static void test_fin_after_rto(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 500, 600), pb = base_params(false, 500, 600);
	static uint8_t out[3 * 1460], in[sizeof(out)];
	struct cn_tcp_info ia, ib;

	open_pair(f, &pa, &pb);
	f->filter = lose_b;
	f->drop_left = 1;
	assert_int_equal(cn_tcp_send(f->ta, out, sizeof(out), f->now), sizeof(out));
	pump(f, &f->a);             /* all three segments reach B */
	f->now += 100;
	cn_net_timer(f->b.net, f->now);
	pump(f, &f->b);             /* B's ACKs are lost */
	f->now += 1000;
	cn_net_timer(f->a.net, f->now); /* RTO: the first segment again */
	assert_int_equal(cn_tcp_stats(f->ta)->rto_fired, 1);
	cn_tcp_shutdown(f->ta, f->now);
	cn_tcp_get_info(f->ta, &ia);
	assert_false(ia.fin_sent); /* behind the go-back-N point */
	f->drop_left = 0;
	run(f, 200);
	recv_all(f, f->tb, in, sizeof(in));
	cn_tcp_get_info(f->ta, &ia);
	cn_tcp_get_info(f->tb, &ib);
	assert_true(ib.fin_rcvd);
	assert_true(ia.fin_acked);
	assert_int_equal(ia.snd_una, 500 + 1 + sizeof(out) + 1);
	close_pair(f);
}

/* Lose A's 500-byte tail segment once. */
static bool lose_tail(struct fx *f, struct side *from, const uint8_t *frame, uint32_t len)
{
	(void)frame;
	return pass_unless(f, from == &f->a && len == 66 + 500);
}

/* Nagle holds back a new runt while data is in flight, never the
 * retransmission of one: after a timeout the lost tail goes again. */
static void test_nagle_retransmit(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 70, 80), pb = base_params(false, 70, 80);
	static uint8_t out[1460 + 500], in[sizeof(out)];
	struct cn_tcp_info ia;

	pa.ts = pb.ts = true; /* 66-byte headers: what lose_tail counts on */
	pa.mss = pb.mss = 1460 + 12;
	pa.no_rack_tlp = true; /* the timeout's retransmission, not a probe */
	open_pair(f, &pa, &pb);
	f->filter = lose_tail;
	f->drop_left = 1;
	assert_int_equal(cn_tcp_send(f->ta, out, sizeof(out), f->now), sizeof(out));
	run(f, 2000);
	recv_all(f, f->tb, in, sizeof(in));
	cn_tcp_get_info(f->ta, &ia);
	assert_int_equal(f->drop_left, 0);
	assert_true(cn_tcp_stats(f->ta)->rto_fired >= 1);
	assert_int_equal(ia.snd_una, 70 + 1 + sizeof(out));
	close_pair(f);
}

/* The ACK field of frame @p i of @p from's queue, a pure ACK. */
static int recv_some(struct fx *f, uint8_t *buf, uint32_t len)
{
	return cn_tcp_recv(f->tb, buf, len, f->now);
}

static uint32_t acked_by(struct fx *f, struct side *from, unsigned i)
{
	uint8_t fr[2048];
	struct cn_pkt_info pi;
	uint32_t len = cn_pkt_gather(from->q[i], fr);

	(void)f;
	assert_int_equal(cn_net_parse(fr, len, 0, &pi), CN_DROP_NONE);
	assert_true(pi.tcp_flags & CN_TCP_ACK);
	assert_int_equal(pi.pay_len, 0);
	return pi.ack;
}

/* Stretch ACKs: a burst of in-order segments draws one cumulative ACK at
 * the burst's end (after the quick-ACK start, which ACKs every second
 * one); the stretch bound sends one inside a longer burst; out-of-order
 * data inside a burst draws a duplicate ACK at once, and the segment
 * that fills the hole an ACK at once. */
static void test_stretch_ack(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 1000, 5000), pb = base_params(false, 1000, 5000);
	static uint8_t buf[64 * 1460], sink[256 * 1460];
	struct cn_tcp_info ia, ib;
	const struct cn_tcp_stats *sb;
	unsigned k;

	pa.snd_wnd = pb.rcvbuf_size = 128 * 1460; /* stretch bound 32 segments */
	pa.init_cwnd = 64;
	pb.delack_ticks = 0; /* in a burst, even "ACK at once" waits for its end */
	pb.ooo_max = 16;
	open_pair(f, &pa, &pb);
	sb = cn_tcp_stats(f->tb);
	f->burst = true;
	/* the quick-ACK start: 32 segments in one burst, 16 ACKs */
	assert_int_equal(cn_tcp_send(f->ta, buf, 32 * 1460, f->now), 32 * 1460);
	assert_int_equal(f->a.nq, 32);
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 32); /* delack 0: every segment, as before */
	assert_int_equal(sb->burst_acks, 0);
	pump(f, &f->b);
	assert_int_equal(recv_some(f, sink, sizeof(sink)), 32 * 1460);
	pump(f, &f->b); /* the window update, if any */

	/* 20 in order in one burst: one ACK, at the end, for all of them */
	assert_int_equal(cn_tcp_send(f->ta, buf, 20 * 1460, f->now), 20 * 1460);
	assert_int_equal(f->a.nq, 20);
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 1);
	assert_int_equal(sb->burst_acks, 1);
	cn_tcp_get_info(f->ta, &ia);
	assert_int_equal(acked_by(f, &f->b, 0), ia.snd_max);
	pump(f, &f->b);
	cn_tcp_get_info(f->ta, &ia);
	assert_int_equal(ia.snd_una, ia.snd_max);
	assert_int_equal(recv_some(f, sink, sizeof(sink)), 20 * 1460);
	pump(f, &f->b);

	/* 40 in one burst: the bound (32) sends one inside it, the end the
	 * other */
	cn_tcp_get_info(f->ta, &ia);
	uint32_t base = ia.snd_max;
	assert_int_equal(cn_tcp_send(f->ta, buf, 40 * 1460, f->now), 40 * 1460);
	assert_int_equal(f->a.nq, 40);
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 2);
	assert_int_equal(acked_by(f, &f->b, 0), base + 32 * 1460);
	assert_int_equal(acked_by(f, &f->b, 1), base + 40 * 1460);
	assert_int_equal(sb->burst_acks, 2);
	pump(f, &f->b);
	assert_int_equal(recv_some(f, sink, sizeof(sink)), 40 * 1460);
	pump(f, &f->b);

	/* out of order: the first of 8 lost, the other 7 each draw a
	 * duplicate ACK at once (no SACK: plain duplicates), nothing is
	 * deferred to the end */
	cn_tcp_get_info(f->ta, &ia);
	base = ia.snd_max;
	assert_int_equal(cn_tcp_send(f->ta, buf, 8 * 1460, f->now), 8 * 1460);
	assert_int_equal(f->a.nq, 8);
	struct cn_pkt *lost = f->a.q[0];
	memmove(f->a.q, f->a.q + 1, 7 * sizeof(f->a.q[0]));
	f->a.nq = 7;
	pump(f, &f->a);
	assert_int_equal(f->b.nq, 7);
	for (k = 0; k < 7; k++)
		assert_int_equal(acked_by(f, &f->b, k), base);
	assert_int_equal(sb->burst_acks, 2);
	drain_queue(&f->b);
	/* the hole filled, inside a burst with two more in-order segments
	 * behind it: the filling segment is ACKed at once, for everything */
	f->a.q[0] = lost;
	f->a.nq = 1;
	assert_int_equal(cn_tcp_send(f->ta, buf, 2 * 1460, f->now), 2 * 1460);
	/* (A's send is window-limited by nothing: both new ones queued) */
	assert_int_equal(f->a.nq, 3);
	pump(f, &f->a);
	cn_tcp_get_info(f->tb, &ib);
	assert_int_equal(ib.rcv_nxt, base + 10 * 1460);
	assert_true(f->b.nq >= 1);
	assert_int_equal(acked_by(f, &f->b, 0), base + 8 * 1460);
	assert_int_equal(acked_by(f, &f->b, f->b.nq - 1), base + 10 * 1460);
	run(f, 1000);
	assert_int_equal(recv_some(f, sink, sizeof(sink)), 10 * 1460);
	cn_tcp_get_info(f->ta, &ia);
	assert_int_equal(ia.snd_una, ia.snd_max);
	close_pair(f);
}

/* Stream transfers with every frame handed in bursts (stretch ACKs), the
 * sender cachenet's own (cwnd grows by one segment per ACK in slow
 * start), with and without loss: the stream arrives whole. */
static void test_stretch_transfer(void **state)
{
	struct fx *f = *state;
	struct cn_tcp_params pa = base_params(true, 11, 12), pb = base_params(false, 11, 12);

	f->burst = true;
	transfer(f, &pa, &pb, 1 << 20, false, 65536);
	assert_int_equal(cn_net_drops(f->b.net), 0);
	pa = base_params(true, 13, 14), pb = base_params(false, 13, 14);
	pb.ooo_max = 32;
	pa.sack = pb.sack = true;
	f->burst = true;
	f->filter = lose_some;
	transfer(f, &pa, &pb, 1 << 20, false, 65536);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_FX(test_template_golden), CN_FX(test_open_errors), CN_FX(test_header_prediction),
		CN_FX(test_delayed_ack), CN_FX(test_transfer_modes), CN_FX(test_seq_wrap),
		CN_FX(test_fast_retransmit), CN_FX(test_fast_retransmit_stats),
		CN_FX(test_lossy_transfer), CN_FX(test_zero_window), CN_FX(test_post_partial),
		CN_FX(test_recv_readahead), CN_FX(test_recv_readahead_short),
		CN_FX(test_recv_readahead_distance), CN_FX(test_fin_both_ways),
		CN_FX(test_fin_piggyback), CN_FX(test_fin_lost), CN_FX(test_fin_after_rto),
		CN_FX(test_nagle_retransmit), CN_FX(test_stretch_ack), CN_FX(test_stretch_transfer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
