/* SPDX-License-Identifier: BSD-2-Clause */
/* IPv4 reassembly and fragmentation: datagrams cut by a reference
 * fragmenter written here from RFC 791 (not the library's), fed in order,
 * reversed and shuffled, come out exact at a UDP socket; ICMP echoes of up
 * to 65,000 bytes are answered in fragments a reference reassembler puts
 * back together; UDP datagrams up to 65,507 bytes sent by one stack are
 * reassembled by another. Hostile input: overlaps drop the whole datagram,
 * exact duplicates only themselves, inconsistent pieces, timeouts, and
 * floods bounded per source, overall and in count, each counted under its
 * reason, the held bytes never above the bounds, and a legitimate
 * datagram still reassembled during a flood. Every test ends with 0
 * reassemblies, 0 bytes held, every mbuf and descriptor back. */
#include "cn_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/conn.h"
#include "cachenet/csum.h"
#include "cachenet/udp.h"

#define IP_US CN_IPV4(10, 0, 0, 1)
#define IP_PEER CN_IPV4(10, 0, 0, 2)
#define MAXF 256        /* frames a test's wire holds */
#define DGRAM_MAX 65535

struct frame {
	uint32_t len;
	uint8_t b[2048];
};

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_net *net;
	struct cn_udp_sock *us;
	/* what the stack sent, gathered */
	struct frame *out;
	unsigned nout;
	/* the last datagram the UDP socket got */
	uint8_t *got;
	uint32_t got_len;
	unsigned ngot;
	/* a second stack receiving what net sends (fragmentation tests) */
	struct cn_net *peer;
};

static int xmit(void *arg, struct cn_pkt *p)
{
	struct fx *f = arg;
	if (f->nout < MAXF && cn_pkt_len(p) <= sizeof(f->out[0].b)) {
		f->out[f->nout].len = cn_pkt_gather(p, f->out[f->nout].b);
		f->nout++;
	} else {
		f->nout = MAXF + 1; /* overflow or oversize: noticed by the test */
	}
	cn_pkt_free(p);
	return 0;
}

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct fx *f = arg;
	assert_int_equal(m->pkt_len, pi->pay_len);
	assert_true(m->pkt_len <= DGRAM_MAX);
	f->got_len = m->pkt_len;
	assert_int_equal(cn_mbuf_copy_out(m, 0, m->pkt_len, f->got), 0);
	f->ngot++;
	cn_mbuf_free_chain(m);
}

static struct cn_net *mk_net(struct fx *f, cn_be32_t addr, uint32_t mtu, uint32_t mem,
			     uint32_t mem_src, uint32_t qmax)
{
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 1}, .addr = addr, .mpool = f->mp,
				   .cpool = f->cp, .xmit = xmit, .xmit_arg = f, .tx_descs = 512,
				   .mtu = mtu, .reass_mem = mem, .reass_mem_src = mem_src,
				   .reass_max = qmax, .reass_timeout = 1000};
	return cn_net_create(&np);
}

static int setup_with(void **state, uint32_t mem, uint32_t mem_src, uint32_t qmax)
{
	struct fx *f = calloc(1, sizeof(*f));
	cn_test_pools(&f->mp, &f->cp, 2048, 1024, 0, 0);
	f->out = calloc(MAXF + 1, sizeof(*f->out));
	f->got = malloc(DGRAM_MAX);
	f->net = mk_net(f, IP_US, 1500, mem, mem_src, qmax);
	struct cn_udp_params up = {.lport = CN_BE16(7), .rx_csum = true, .tx_csum = true, .rx = udp_rx,
				   .rx_arg = f};
	f->us = f->net ? cn_udp_open(f->net, &up) : NULL;
	*state = f;
	return f->us ? 0 : -1;
}

static int setup(void **state)
{
	return setup_with(state, 1u << 22, 1u << 20, 64);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	cn_net_timer(f->net, UINT64_MAX / 2); /* expire whatever is left */
	assert_int_equal(cn_net_reass_entries(f->net), 0);
	assert_int_equal(cn_net_reass_mem(f->net), 0);
	assert_int_equal(cn_net_destroy(f->net), 0);
	assert_int_equal(cn_net_destroy(f->peer), 0);
	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f->out);
	free(f->got);
	free(f);
	return 0;
}

/* ------------------------------------------------------------ reference */

/* The RFC 1071 sum the hard way. */
static uint16_t ref_csum(const uint8_t *p, uint32_t n, uint32_t s)
{
	for (uint32_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* A UDP datagram (header + payload) from port 5000 of 10.0.0.@p src to
 * our @p dport. */
static uint32_t ref_udp_from(uint8_t *d, const uint8_t *pay, uint32_t plen, uint16_t dport,
			     uint8_t src)
{
	uint32_t l = 8 + plen;
	uint8_t ph[12] = {10, 0, 0, src, 10, 0, 0, 1, 0, 17, (uint8_t)(l >> 8), (uint8_t)l};
	d[0] = 5000 >> 8, d[1] = 5000 & 0xff, d[2] = (uint8_t)(dport >> 8), d[3] = (uint8_t)dport;
	d[4] = (uint8_t)(l >> 8), d[5] = (uint8_t)l, d[6] = d[7] = 0;
	memcpy(d + 8, pay, plen);
	uint16_t c = (uint16_t)~ref_csum(d, l, ref_csum(ph, 12, 0));
	if (!c)
		c = 0xffff;
	d[6] = (uint8_t)(c >> 8), d[7] = (uint8_t)c;
	return l;
}

static uint32_t ref_udp(uint8_t *d, const uint8_t *pay, uint32_t plen, uint16_t dport)
{
	return ref_udp_from(d, pay, plen, dport, 2);
}

/* One fragment: Ethernet + IPv4 (RFC 791 layout) carrying bytes
 * [off, off + len) of the datagram payload @p d, MF as asked. */
static uint32_t ref_frag(uint8_t *b, cn_be32_t saddr, uint16_t id, uint8_t proto,
			 const uint8_t *d, uint32_t off, uint32_t len, bool mf)
{
	uint32_t tot = 20 + len;
	uint16_t fo = (uint16_t)(off / 8 | (mf ? 0x2000 : 0));
	memset(b, 0, 34);
	b[0] = 2, b[5] = 1;
	b[6] = 2, b[11] = 2;
	b[12] = 0x08;
	uint8_t *ip = b + 14;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(tot >> 8), ip[3] = (uint8_t)tot;
	ip[4] = (uint8_t)(id >> 8), ip[5] = (uint8_t)id;
	ip[6] = (uint8_t)(fo >> 8), ip[7] = (uint8_t)fo;
	ip[8] = 64, ip[9] = proto;
	memcpy(ip + 12, &saddr, 4);
	ip[16] = 10, ip[19] = 1;
	uint16_t c = (uint16_t)~ref_csum(ip, 20, 0);
	ip[10] = (uint8_t)(c >> 8), ip[11] = (uint8_t)c;
	memcpy(ip + 20, d + off, len);
	return 14 + tot;
}

static enum cn_drop feed(struct fx *f, struct cn_net *net, const uint8_t *b, uint32_t len,
			 uint64_t now)
{
	struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, f->cp);
	assert_non_null(m);
	assert_true(len <= m->buf_len - 64);
	memcpy(m->data, b, len);
	m->len = m->pkt_len = len;
	return cn_net_input(net, m, now);
}

/* Cut datagram @p d of @p dlen bytes into fragments of @p fsz payload
 * bytes (a multiple of 8) and feed them in @p order: 0 in order, 1
 * reversed, 2 shuffled. Returns the number of fragments. */
static unsigned feed_dgram(struct fx *f, struct cn_net *net, cn_be32_t saddr, uint16_t id,
			   uint8_t proto, const uint8_t *d, uint32_t dlen, uint32_t fsz, int order,
			   uint64_t now)
{
	unsigned n = (dlen + fsz - 1) / fsz, idx[8200];
	uint8_t b[2048];

	assert_true(n <= 8200);
	for (unsigned i = 0; i < n; i++)
		idx[i] = order == 1 ? n - 1 - i : i;
	if (order == 2)
		for (unsigned i = n; i > 1; i--) {
			unsigned j = cn_test_rndn(i), t = idx[i - 1];
			idx[i - 1] = idx[j];
			idx[j] = t;
		}
	for (unsigned i = 0; i < n; i++) {
		uint32_t off = idx[i] * fsz, len = dlen - off < fsz ? dlen - off : fsz;
		uint32_t fl = ref_frag(b, saddr, id, proto, d, off, len, off + len < dlen);
		assert_int_equal(feed(f, net, b, fl, now), CN_DROP_NONE);
	}
	return n;
}

/* ------------------------------------------------------------ tests */

/* UDP datagrams from 1 to 65,507 payload bytes, cut into fragments of
 * several sizes, in order, reversed and shuffled: each delivered once,
 * byte for byte. */
static void test_udp_reassembled(void **state)
{
	struct fx *f = *state;
	static uint8_t pay[65507], d[65535];
	static const uint32_t sizes[] = {1, 7, 8, 9, 1472, 1473, 2960, 3000, 30000, 65000, 65507};
	static const uint32_t fszs[] = {8, 16, 1480, 576};
	unsigned ok = 0, whole = 0;

	cn_test_seed(11);
	cn_test_fill_rand(pay, sizeof(pay));
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (unsigned k = 0; k < 4; k++)
			for (int order = 0; order < 3; order++) {
				uint32_t dl = ref_udp(d, pay, sizes[s], 7), fsz = fszs[k];
				if ((dl + fsz - 1) / fsz > 200)
					continue; /* the pool's clusters bound one datagram */
				unsigned before = f->ngot;
				if (feed_dgram(f, f->net, IP_PEER, (uint16_t)(s * 16 + k * 4 + order),
					       CN_IPV4_PROTO_UDP, d, dl, fsz, order, 1) == 1)
					whole++; /* one piece is no fragment */
				assert_int_equal(f->ngot, before + 1);
				assert_int_equal(f->got_len, sizes[s]);
				assert_memory_equal(f->got, pay, sizes[s]);
				assert_int_equal(cn_net_reass_entries(f->net), 0);
				assert_int_equal(cn_net_reass_mem(f->net), 0);
				ok++;
			}
	assert_true(ok - whole > 60);
	assert_int_equal(cn_net_stats(f->net)->reass_ok, ok - whole);
	assert_int_equal(cn_net_drops(f->net), 0);
}

/* Datagrams interleaved: two IDs of one source, and one ID from two
 * sources; each reassembled on its own. */
static void test_interleaved(void **state)
{
	struct fx *f = *state;
	static uint8_t pa[4000], pb[4000], pc[4000], da[4100], db[4100], dc[4100];
	uint8_t b[2048];
	uint32_t la, lb, lc;
	cn_be32_t peer3 = CN_IPV4(10, 0, 0, 3);

	cn_test_seed(12);
	cn_test_fill_rand(pa, sizeof(pa));
	cn_test_fill_rand(pb, sizeof(pb));
	cn_test_fill_rand(pc, sizeof(pc));
	la = ref_udp(da, pa, sizeof(pa), 7);
	lb = ref_udp(db, pb, sizeof(pb), 7);
	lc = ref_udp_from(dc, pc, sizeof(pc), 7, 3);
	for (uint32_t off = 0; off < la; off += 1480) {
		uint32_t n = la - off < 1480 ? la - off : 1480;
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 1, 17, da, off, n, off + n < la), 1), 0);
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 2, 17, db, off, n, off + n < lb), 1), 0);
		assert_int_equal(feed(f, f->net, b, ref_frag(b, peer3, 1, 17, dc, off, n, off + n < lc), 1), 0);
		if (off == 0)
			assert_int_equal(cn_net_reass_entries(f->net), 3);
	}
	assert_int_equal(f->ngot, 3);
	assert_memory_equal(f->got, pc, sizeof(pc));
	assert_int_equal(cn_net_stats(f->net)->reass_ok, 3);
	assert_int_equal(cn_net_drops(f->net), 0);
}

/* Overlap: the whole datagram goes, every held fragment counted; exact
 * duplicates: only the copy goes and the datagram completes. */
static void test_overlap_dup(void **state)
{
	struct fx *f = *state;
	static uint8_t pay[4000], d[4100];
	uint8_t b[2048];
	uint32_t dl;
	const struct cn_net_stats *st = cn_net_stats(f->net);

	cn_test_seed(13);
	cn_test_fill_rand(pay, sizeof(pay));
	dl = ref_udp(d, pay, sizeof(pay), 7);
	/* 0-1480 and 1480-2960 held, then 1472-2952 overlaps both */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 9, 17, d, 0, 1480, true), 1), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 9, 17, d, 1480, 1480, true), 1), 0);
	assert_int_equal(cn_net_reass_entries(f->net), 1);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 9, 17, d, 1472, 1480, true), 1),
			 CN_DROP_FRAG_OVERLAP);
	assert_int_equal(st->drop[CN_DROP_FRAG_OVERLAP], 3);
	assert_int_equal(cn_net_reass_entries(f->net), 0);
	assert_int_equal(cn_net_reass_mem(f->net), 0);
	/* the rest of that datagram starts a new one that never completes */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 9, 17, d, 2960, dl - 2960, false), 1), 0);
	assert_int_equal(f->ngot, 0);
	cn_net_timer(f->net, 1 + 1000);
	assert_int_equal(st->drop[CN_DROP_FRAG_TIMEOUT], 1);
	/* an overlap with the last fragment (a piece that ends inside it) */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 10, 17, d, 2960, dl - 2960, false), 2000), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 10, 17, d, 2952, 16, true), 2000),
			 CN_DROP_FRAG_OVERLAP);
	assert_int_equal(st->drop[CN_DROP_FRAG_OVERLAP], 5);
	/* the same piece twice, then the rest: delivered, one dup counted */
	for (int rep = 0; rep < 2; rep++)
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 11, 17, d, 1480, 1480, true), 2000),
				 rep ? CN_DROP_FRAG_DUP : CN_DROP_NONE);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 11, 17, d, 0, 1480, true), 2000), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 11, 17, d, 2960, dl - 2960, false), 2000), 0);
	assert_int_equal(st->drop[CN_DROP_FRAG_DUP], 1);
	assert_int_equal(f->ngot, 1);
	assert_int_equal(f->got_len, sizeof(pay));
	assert_memory_equal(f->got, pay, sizeof(pay));
}

/* Pieces wrong on their own, or against what is held. */
static void test_bad(void **state)
{
	struct fx *f = *state;
	static uint8_t d[70000];
	uint8_t b[2048];
	const struct cn_net_stats *st = cn_net_stats(f->net);

	/* a middle piece not a multiple of 8; an empty one */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 1, 17, d, 0, 100, true), 1), CN_DROP_FRAG_BAD);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 1, 17, d, 8, 0, true), 1), CN_DROP_FRAG_BAD);
	/* past 65,515 payload bytes */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 1, 17, d, 65512, 8, false), 1), CN_DROP_FRAG_BAD);
	assert_int_equal(st->drop[CN_DROP_FRAG_BAD], 3);
	assert_int_equal(cn_net_reass_entries(f->net), 0);
	/* two last fragments with different ends: the datagram goes */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 2, 17, d, 0, 8, true), 1), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 2, 17, d, 16, 8, false), 1), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 2, 17, d, 32, 8, false), 1), CN_DROP_FRAG_BAD);
	assert_int_equal(st->drop[CN_DROP_FRAG_BAD], 6);
	/* data past the end a last fragment announced */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 3, 17, d, 16, 8, false), 1), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 3, 17, d, 24, 8, true), 1), CN_DROP_FRAG_BAD);
	assert_int_equal(st->drop[CN_DROP_FRAG_BAD], 8);
	/* a last fragment ending before data already held */
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 4, 17, d, 64, 8, true), 1), 0);
	assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, 4, 17, d, 16, 8, false), 1), CN_DROP_FRAG_BAD);
	assert_int_equal(st->drop[CN_DROP_FRAG_BAD], 10);
	/* to another address: not ours to reassemble */
	uint32_t n = ref_frag(b, IP_PEER, 5, 17, d, 0, 8, true);
	b[14 + 19] = 9;
	b[14 + 10] = b[14 + 11] = 0;
	uint16_t c = (uint16_t)~ref_csum(b + 14, 20, 0);
	b[14 + 10] = (uint8_t)(c >> 8), b[14 + 11] = (uint8_t)c;
	assert_int_equal(feed(f, f->net, b, n, 1), CN_DROP_IP_NOT_US);
	assert_int_equal(cn_net_reass_entries(f->net), 0);
	assert_int_equal(f->ngot, 0);
}

/* Incomplete datagrams expire reass_timeout ticks after their first
 * fragment, each fragment counted. */
static void test_timeout(void **state)
{
	struct fx *f = *state;
	static uint8_t d[8000];
	uint8_t b[2048];
	const struct cn_net_stats *st = cn_net_stats(f->net);

	for (uint16_t id = 0; id < 10; id++) {
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, id, 17, d, 0, 1480, true), 100 + id), 0);
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, id, 17, d, 2960, 100, false), 100 + id), 0);
	}
	assert_int_equal(cn_net_reass_entries(f->net), 10);
	assert_true(cn_net_reass_mem(f->net) >= 20 * 2048);
	cn_net_timer(f->net, 100 + 999);
	assert_int_equal(cn_net_reass_entries(f->net), 10);
	cn_net_timer(f->net, 100 + 1004);
	assert_int_equal(cn_net_reass_entries(f->net), 5);
	assert_int_equal(st->drop[CN_DROP_FRAG_TIMEOUT], 10);
	cn_net_timer(f->net, 100 + 1009);
	assert_int_equal(cn_net_reass_entries(f->net), 0);
	assert_int_equal(cn_net_reass_mem(f->net), 0);
	assert_int_equal(st->drop[CN_DROP_FRAG_TIMEOUT], 20);
}

/* A flood of first fragments that never complete: one source stays
 * within its share, many stay within the whole; the oldest go first; a
 * datagram from a quiet source still completes during the flood. */
static int setup_small(void **state)
{
	/* 64 KB overall, 16 KB a source, 32 datagrams */
	return setup_with(state, 64u << 10, 16u << 10, 32);
}

static void test_flood_bounds(void **state)
{
	struct fx *f = *state;
	static uint8_t pay[3000], d[3100];
	uint8_t b[2048];
	const struct cn_net_stats *st = cn_net_stats(f->net);
	uint32_t dl, maxmem = 0;

	cn_test_seed(14);
	cn_test_fill_rand(pay, sizeof(pay));
	dl = ref_udp(d, pay, sizeof(pay), 7);
	/* one source */
	for (unsigned i = 0; i < 500; i++) {
		assert_int_equal(feed(f, f->net, b, ref_frag(b, IP_PEER, (uint16_t)i, 17, d, 0, 1480, true), 1), 0);
		assert_true(cn_net_reass_mem(f->net) <= 16u << 10);
	}
	assert_true(st->drop[CN_DROP_FRAG_MEM] >= 490);
	assert_int_equal(st->drop[CN_DROP_FRAG_MEM], st->reass_evict);
	/* many sources: the overall bound and the count bound hold */
	for (unsigned i = 0; i < 5000; i++) {
		cn_be32_t src = cn_htobe32(0x0a010000 + i % 1000);
		assert_int_equal(feed(f, f->net, b, ref_frag(b, src, (uint16_t)i, 17, d, 0, 1480, true), 1), 0);
		uint32_t mem = cn_net_reass_mem(f->net);
		maxmem = mem > maxmem ? mem : maxmem;
		assert_true(mem <= 64u << 10);
		assert_true(cn_net_reass_entries(f->net) <= 32);
		if (i % 100 == 50) {
			/* a complete datagram from a quiet source, in the flood */
			unsigned before = f->ngot;
			feed_dgram(f, f->net, IP_PEER, (uint16_t)(60000 + i), 17, d, dl, 1480, 2, 1);
			assert_int_equal(f->ngot, before + 1);
			assert_memory_equal(f->got, pay, sizeof(pay));
		}
	}
	assert_true(maxmem > (64u << 10) - 2 * 2304); /* at its bound */
	assert_int_equal(st->reass_ok, 50);
}

/* ICMP echo through a connection manager: requests of up to 65,000 bytes
 * arrive in fragments, the replies leave in fragments of at most the MTU,
 * put back together here and compared with the request. */
static void test_icmp_echo_fragmented(void **state)
{
	struct fx *f = *state;
	struct cn_conn_params cp = {0};
	struct cn_conn *c = cn_conn_create(f->net, &cp);
	static uint8_t d[65535], back[65535];
	static const uint32_t sizes[] = {1472, 1473, 4000, 30000, 65000, 65507};

	assert_non_null(c);
	cn_test_seed(15);
	for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t plen = sizes[s], il = 8 + plen;
		d[0] = 8, d[1] = 0, d[2] = d[3] = 0, d[4] = 0x12, d[5] = 0x34, d[6] = 0, d[7] = (uint8_t)s;
		cn_test_fill_rand(d + 8, plen);
		uint16_t ck = (uint16_t)~ref_csum(d, il, 0);
		d[2] = (uint8_t)(ck >> 8), d[3] = (uint8_t)ck;
		f->nout = 0;
		feed_dgram(f, f->net, IP_PEER, (uint16_t)(100 + s), CN_IPV4_PROTO_ICMP, d, il, 1480,
			   (int)(s % 3), 1);
		assert_true(f->nout >= 1 && f->nout <= MAXF);
		/* the reference reassembler: offsets and MF from each header */
		uint32_t have = 0, total = 0;
		for (unsigned i = 0; i < f->nout; i++) {
			const uint8_t *fr = f->out[i].b, *ip = fr + 14;
			assert_true(f->out[i].len <= 14 + 1500);
			assert_int_equal(ref_csum(ip, 20, 0), 0xffff);
			uint32_t tot = (uint32_t)ip[2] << 8 | ip[3];
			uint32_t fo = ((uint32_t)ip[6] << 8 | ip[7]);
			uint32_t off = (fo & 0x1fff) * 8, len = tot - 20;
			assert_int_equal(ip[9], 1);
			assert_true(off + len <= sizeof(back));
			memcpy(back + off, ip + 20, len);
			have += len;
			if (!(fo & 0x2000))
				total = off + len;
			else
				assert_int_equal(len % 8, 0);
		}
		assert_int_equal(total, il);
		assert_int_equal(have, il);
		assert_int_equal(back[0], 0); /* echo reply */
		assert_int_equal(ref_csum(back, il, 0), 0xffff);
		assert_memory_equal(back + 4, d + 4, il - 4);
	}
	assert_int_equal(cn_conn_stats(c)->icmp_echo_out, 6);
	assert_int_equal(cn_net_stats(f->net)->frag_out, 5);
	assert_int_equal(cn_net_pkts_out(f->net), 0);
	cn_conn_destroy(c);
}

/* UDP sent by one stack with an MTU, received by another that
 * reassembles: 0 to 65,507 bytes, checksum computed, offloaded, off; the
 * sender's completion callback runs once, after the last fragment. */
static int xmit_loop(void *arg, struct cn_pkt *p)
{
	struct fx *f = arg;
	uint8_t b[2048];
	assert_true(cn_pkt_len(p) <= 14 + 1500);
	uint32_t n = cn_pkt_gather(p, b);
	cn_pkt_free(p);
	f->nout++;
	(void)feed(f, f->net, b, n, 1);
	return 0;
}

static void count_done(void *arg)
{
	(*(unsigned *)arg)++;
}

static void test_udp_send_fragmented(void **state)
{
	struct fx *f = *state;
	static uint8_t pay[65508];
	static const uint32_t sizes[] = {0, 1, 1472, 1473, 2953, 30000, 65507};
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 2}, .addr = IP_PEER, .mpool = f->mp,
				   .cpool = f->cp, .xmit = xmit_loop, .xmit_arg = f, .mtu = 1500};
	unsigned sent = 0, done = 0;

	cn_test_seed(16);
	cn_test_fill_rand(pay, sizeof(pay));
	f->peer = cn_net_create(&np);
	assert_non_null(f->peer);
	for (int mode = 0; mode < 3; mode++) {
		struct cn_udp_params up = {.lport = CN_BE16((uint16_t)(9 + mode)), .raddr = IP_US, .rport = CN_BE16(7),
					   .rmac = {2, 0, 0, 0, 0, 1}, .tx_csum = mode != 0,
					   .tx_offload = mode == 2};
		struct cn_udp_sock *s = cn_udp_open(f->peer, &up);
		assert_non_null(s);
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t len = sizes[i];
			unsigned before = f->ngot, frames0 = f->nout;
			unsigned want = len + 28 <= 1500 ? 1 : (len + 8 + 1479) / 1480;
			assert_int_equal(cn_udp_send(s, pay, len, count_done, &done), 0);
			sent++;
			assert_int_equal(done, sent);
			assert_int_equal(f->nout - frames0, want);
			assert_int_equal(f->ngot, before + 1);
			assert_int_equal(f->got_len, len);
			assert_memory_equal(f->got, pay, len);
		}
		assert_int_equal(cn_udp_send(s, pay, 65508, count_done, &done), -EMSGSIZE);
		assert_int_equal(done, sent);
		cn_udp_close(s);
	}
	assert_int_equal(cn_net_stats(f->peer)->frag_out, 12);
	assert_int_equal(cn_net_stats(f->net)->reass_ok, 12);
	assert_int_equal(cn_net_drops(f->net), 0);
	assert_int_equal(cn_net_pkts_out(f->peer), 0);
}

/* Descriptors run out midway: the first fragments leave, the rest are
 * counted as not sent, and the datagram's buffer is released (done
 * called once) only when the device completes the last one it took.
 * With DF set, or no descriptor at all, nothing leaves and done is not
 * called (the caller keeps the buffer). */
static struct cn_pkt *held[64];
static unsigned nheld;
static int xmit_hold(void *arg, struct cn_pkt *p)
{
	(void)arg;
	assert_true(nheld < 64);
	held[nheld++] = p;
	return 0;
}

static void test_frag_out_of_descs(void **state)
{
	struct fx *f = *state;
	static uint8_t pay[30000];
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 2}, .addr = IP_PEER, .mpool = f->mp,
				   .xmit = xmit_hold, .tx_descs = 8, .mtu = 1500};
	struct cn_udp_params up = {.lport = CN_BE16(9), .raddr = IP_US, .rport = CN_BE16(7), .tx_csum = true};
	unsigned done = 0;

	f->peer = cn_net_create(&np);
	assert_non_null(f->peer);
	struct cn_udp_sock *s = cn_udp_open(f->peer, &up);
	assert_non_null(s);
	nheld = 0;
	assert_int_equal(cn_udp_send(s, pay, sizeof(pay), count_done, &done), 0);
	assert_int_equal(nheld, 7); /* 8 descriptors: the datagram and 7 fragments */
	assert_int_equal(cn_net_stats(f->peer)->tx_nodesc, 1);
	assert_int_equal(cn_net_pkts_out(f->peer), 8);
	/* completions in reverse order: done only at the last */
	for (unsigned i = nheld; i-- > 0;) {
		assert_int_equal(done, 0);
		cn_pkt_free(held[i]);
	}
	assert_int_equal(done, 1);
	assert_int_equal(cn_net_pkts_out(f->peer), 0);
	/* every descriptor out: nothing sent, no callback */
	struct cn_pkt *all[8];
	for (unsigned i = 0; i < 8; i++)
		assert_non_null(all[i] = cn_net_pkt_alloc(f->peer));
	assert_int_equal(cn_udp_send(s, pay, sizeof(pay), count_done, &done), -ENOBUFS);
	cn_pkt_free(all[0]);
	/* one descriptor free: the datagram's, none for a fragment */
	assert_int_equal(cn_udp_send(s, pay, sizeof(pay), count_done, &done), -ENOBUFS);
	assert_int_equal(cn_net_pkts_out(f->peer), 7);
	for (unsigned i = 1; i < 8; i++)
		cn_pkt_free(all[i]);
	assert_int_equal(done, 1);
	/* DF: refused whole */
	struct cn_pkt *p = cn_net_pkt_alloc(f->peer);
	uint8_t *h = p->room + CN_PKT_HDR_ROOM - 34;
	memset(h, 0, 34);
	h[12] = 0x08, h[14] = 0x45, h[20] = 0x40;
	p->hdr = h;
	p->hdr_len = 34;
	p->l3_off = 14;
	p->l4_off = 34;
	p->piece[0].base = pay;
	p->piece[0].len = 2000;
	p->npieces = 1;
	p->pay_len = 2000;
	p->done = count_done;
	p->done_arg = &done;
	assert_int_equal(cn_net_xmit(f->peer, p), -EMSGSIZE);
	assert_int_equal(done, 1);
	assert_int_equal(nheld, 7);
	assert_int_equal(cn_net_pkts_out(f->peer), 0);
	cn_udp_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_FX(test_udp_reassembled), CN_FX(test_interleaved), CN_FX(test_overlap_dup),
		CN_FX(test_bad), CN_FX(test_timeout),
		cmocka_unit_test_setup_teardown(test_flood_bounds, setup_small, teardown),
		CN_FX(test_icmp_echo_fragmented), CN_FX(test_udp_send_fragmented),
		CN_FX(test_frag_out_of_descs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
