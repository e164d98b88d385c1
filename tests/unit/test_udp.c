/* SPDX-License-Identifier: BSD-2-Clause */
/* UDP: datagrams between two stacks with the checksum computed, offloaded
 * (filled by cn_pkt_gather as a NIC would) or off; a corrupted datagram
 * dropped as udp_csum only when the receiver verifies; the zero-copy
 * completion callback; a hand-built golden frame. */
#include "cn_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"
#include "cachenet/udp.h"

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_net *a, *b;
	struct cn_pkt *q[64];
	unsigned nq;
	uint8_t got[9000];
	uint32_t got_len;
	unsigned ngot, ndone;
};

#define IP_A CN_IPV4(10, 0, 0, 1)
#define IP_B CN_IPV4(10, 0, 0, 2)

static int xmit(void *arg, struct cn_pkt *p)
{
	struct fx *f = arg;
	if (f->nq == 64)
		return -ENOBUFS;
	f->q[f->nq++] = p;
	return 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	cn_test_pools(&f->mp, &f->cp, 256, 64, 0, CN_MBUF_JUMBO_SIZE);
	struct cn_net_params na = {.mac = {2, 0, 0, 0, 0, 0xa}, .addr = IP_A, .mpool = f->mp,
				   .xmit = xmit, .xmit_arg = f};
	struct cn_net_params nb = na;
	nb.addr = IP_B;
	f->a = cn_net_create(&na);
	f->b = cn_net_create(&nb);
	*state = f;
	return f->a && f->b ? 0 : -1;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	for (unsigned i = 0; i < f->nq; i++)
		cn_pkt_free(f->q[i]);
	assert_int_equal(cn_net_destroy(f->a), 0);
	assert_int_equal(cn_net_destroy(f->b), 0);
	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f);
	return 0;
}

static void rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct fx *f = arg;
	assert_int_equal(m->pkt_len, pi->pay_len);
	f->got_len = m->pkt_len;
	cn_mbuf_copy_out(m, 0, m->pkt_len, f->got);
	f->ngot++;
	cn_mbuf_free_chain(m);
}

static void done(void *arg)
{
	((struct fx *)arg)->ndone++;
}

/* Deliver the queued frames to b, corrupting byte `flip` (0 = none). */
static void deliver(struct fx *f, uint32_t flip, uint8_t *copy)
{
	for (unsigned i = 0; i < f->nq; i++) {
		struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, f->cp);
		assert_non_null(m);
		m->len = m->pkt_len = cn_pkt_gather(f->q[i], m->data);
		if (copy)
			memcpy(copy, m->data, m->len);
		cn_pkt_free(f->q[i]);
		if (flip)
			m->data[flip] ^= 0x01;
		cn_net_input(f->b, m, 0);
	}
	f->nq = 0;
}

/* An all-zero params struct: a socket on the first free port from 49152,
 * no checksum, received datagrams counted and freed; it sends with
 * cn_udp_sendto and receives what is sent to its port. */
static void test_udp_zero_params(void **state)
{
	struct fx *f = *state;
	const uint8_t mac_b[6] = {2, 0, 0, 0, 0, 0xb};
	uint8_t msg[100], frame[200];
	struct cn_udp_params rp = {.lport = CN_BE16(53), .rx = rx, .rx_arg = f};
	struct cn_udp_sock *r = cn_udp_open(f->b, &rp);
	struct cn_udp_sock *z = cn_udp_open(f->a, &(struct cn_udp_params){0});
	struct cn_udp_sock *zb = cn_udp_open(f->b, &(struct cn_udp_params){0});

	assert_non_null(r);
	assert_non_null(z);
	assert_non_null(zb);
	memset(msg, 0x5c, sizeof(msg));
	assert_int_equal(cn_udp_sendto(z, IP_B, CN_BE16(53), mac_b, msg, sizeof(msg), done, f), 0);
	deliver(f, 0, frame);
	assert_int_equal(f->ngot, 1);
	assert_int_equal(f->got_len, sizeof(msg));
	assert_memory_equal(f->got, msg, sizeof(msg));
	cn_be16_t sport;
	memcpy(&sport, frame + 34, 2);
	assert_int_equal(cn_be16toh(sport), 49152); /* source port */
	assert_int_equal(frame[40] | frame[41], 0); /* no checksum by default */
	/* to the zero socket on b (the first free port there too): counted */
	assert_int_equal(cn_udp_sendto(z, IP_B, CN_BE16(49152), mac_b, msg, 10, done, f), 0);
	deliver(f, 0, frame);
	assert_int_equal(f->ngot, 1);
	assert_int_equal(cn_udp_stats(zb)->rx_dgrams, 1);
	cn_udp_close(zb);
	cn_udp_close(z);
	cn_udp_close(r);
}

static void test_udp_modes(void **state)
{
	struct fx *f = *state;
	static uint8_t buf[8000];
	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	struct cn_udp_params rp = {.lport = CN_BE16(53), .rx_csum = true, .rx = rx, .rx_arg = f};
	struct cn_udp_sock *r = cn_udp_open(f->b, &rp);
	assert_non_null(r);
	assert_null(cn_udp_open(f->b, &rp));
	assert_int_equal(errno, EADDRINUSE);
	for (int mode = 0; mode < 3; mode++) {
		struct cn_udp_params sp = {.lport = CN_BE16(1000), .raddr = IP_B, .rport = CN_BE16(53),
					   .rmac = {2, 0, 0, 0, 0, 0xb}, .tx_csum = mode != 0,
					   .tx_offload = mode == 2};
		struct cn_udp_sock *s = cn_udp_open(f->a, &sp);
		assert_non_null(s);
		static const uint32_t lens[] = {0, 1, 2, 3, 17, 64, 1472, 1473, 7999, 8000};
		for (unsigned k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			unsigned ng = f->ngot, nd = f->ndone;
			assert_int_equal(cn_udp_send(s, buf, lens[k], done, f), 0);
			uint8_t frame[9100];
			deliver(f, 0, frame);
			assert_int_equal(f->ndone, nd + 1);
			assert_int_equal(f->ngot, ng + 1);
			assert_int_equal(f->got_len, lens[k]);
			assert_memory_equal(f->got, buf, lens[k]);
			uint16_t c;
			memcpy(&c, frame + 40, 2);
			if (mode == 0)
				assert_int_equal(c, 0);
			else
				assert_int_not_equal(c, 0);
			/* corrupt a payload byte: dropped iff a checksum was sent */
			if (lens[k] > 0) {
				uint64_t d = cn_net_stats(f->b)->drop[CN_DROP_UDP_CSUM];
				assert_int_equal(cn_udp_send(s, buf, lens[k], NULL, NULL), 0);
				deliver(f, 42 + lens[k] / 2, NULL);
				assert_int_equal(cn_net_stats(f->b)->drop[CN_DROP_UDP_CSUM], d + (mode != 0));
			}
		}
		assert_int_equal(cn_udp_send(s, buf, 9000, NULL, NULL), -EMSGSIZE);
		cn_udp_close(s);
	}
	cn_udp_close(r);
}

/* A frame from 10.0.0.1 (MAC ...:0a) port 0x1234 to 10.0.0.<host> (MAC
 * ...:<mac>) port dport, built byte by byte, checksums by the RFC 1071
 * reference. @return its length. */
static uint32_t golden_udp(uint8_t *g, uint8_t host, uint8_t mac, uint16_t dport, uint16_t ip_id,
			   const char *pay, uint32_t plen)
{
	uint32_t l4 = 8 + plen;
	memset(g, 0, 14 + 20 + l4);
	g[0] = 2, g[5] = mac, g[6] = 2, g[11] = 0xa, g[12] = 8;
	uint8_t *ip = g + 14;
	ip[0] = 0x45, ip[3] = (uint8_t)(20 + l4), ip[6] = 0x40, ip[8] = 64, ip[9] = 17;
	ip[4] = (uint8_t)(ip_id >> 8), ip[5] = (uint8_t)ip_id;
	ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = host;
	uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	uint8_t *u = ip + 20;
	u[0] = 0x12, u[1] = 0x34, u[2] = (uint8_t)(dport >> 8), u[3] = (uint8_t)dport;
	u[5] = (uint8_t)l4;
	memcpy(u + 8, pay, plen);
	uint8_t ph[12] = {10, 0, 0, 1, 10, 0, 0, host, 0, 17, 0, (uint8_t)l4};
	c = (uint16_t)~cn_csum_fold(cn_csum_partial_ref(u, l4, cn_csum_partial_ref(ph, 12, 0)));
	memcpy(u + 6, &c, 2);
	return 14 + 20 + l4;
}

/* Golden: RFC 768 layout by hand, checksum by the RFC 1071 reference. */
static void test_udp_golden(void **state)
{
	struct fx *f = *state;
	struct cn_udp_params sp = {.lport = CN_BE16(0x1234), .raddr = IP_B, .rport = CN_BE16(0x5678),
				   .rmac = {2, 0, 0, 0, 0, 0xb}, .tx_csum = true};
	struct cn_udp_sock *s = cn_udp_open(f->a, &sp);
	uint8_t out[64], g[64] = {0};
	assert_int_equal(cn_udp_send(s, "abc", 3, NULL, NULL), 0);
	assert_int_equal(cn_pkt_gather(f->q[0], out), 45);
	cn_pkt_free(f->q[0]);
	f->nq = 0;
	assert_int_equal(golden_udp(g, 2, 0xb, 0x5678, 0, "abc", 3), 45);
	assert_memory_equal(out, g, 45);
	cn_udp_close(s);
}

/* sendto: the same datagram to a destination other than the socket's,
 * in every checksum mode, received intact; and a hand-built golden frame
 * for a third host (patched MAC, address, port and both checksums). */
static void test_udp_sendto(void **state)
{
	struct fx *f = *state;
	static uint8_t buf[1472];
	static const uint8_t mac_b[6] = {2, 0, 0, 0, 0, 0xb}, mac_c[6] = {2, 0, 0, 0, 0, 0xc};
	struct cn_udp_params rp = {.lport = CN_BE16(99), .rx_csum = true, .rx = rx, .rx_arg = f};
	struct cn_udp_sock *r = cn_udp_open(f->b, &rp);

	for (unsigned i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 13 + 1);
	for (int mode = 0; mode < 3; mode++) {
		struct cn_udp_params sp = {.lport = CN_BE16(1000), .raddr = CN_IPV4(10, 0, 0, 9), .rport = CN_BE16(53),
					   .rmac = {2, 0, 0, 0, 0, 9}, .tx_csum = mode != 0,
					   .tx_offload = mode == 2};
		struct cn_udp_sock *s = cn_udp_open(f->a, &sp);
		unsigned ng = f->ngot;
		uint64_t bad = cn_net_stats(f->b)->drop[CN_DROP_UDP_CSUM];
		assert_int_equal(cn_udp_sendto(s, IP_B, CN_BE16(99), mac_b, buf, sizeof(buf), NULL, NULL), 0);
		deliver(f, 0, NULL);
		assert_int_equal(f->ngot, ng + 1);
		assert_int_equal(f->got_len, sizeof(buf));
		assert_memory_equal(f->got, buf, sizeof(buf));
		assert_int_equal(cn_net_stats(f->b)->drop[CN_DROP_UDP_CSUM], bad);
		/* the connected path is unchanged after a sendto */
		assert_int_equal(cn_udp_send(s, buf, 10, NULL, NULL), 0);
		uint8_t frame[128];
		assert_int_equal(cn_pkt_gather(f->q[0], frame), 52);
		cn_pkt_free(f->q[0]);
		f->nq = 0;
		assert_int_equal(frame[5], 9);
		assert_int_equal(frame[14 + 19], 9);
		assert_int_equal(frame[14 + 20 + 3], 53);
		assert_int_equal(cn_udp_sendto(s, IP_B, CN_BE16(0), mac_b, buf, 1, NULL, NULL), -EINVAL);
		assert_int_equal(cn_udp_sendto(s, IP_B, CN_BE16(99), NULL, buf, 1, NULL, NULL), -EINVAL);
		cn_udp_close(s);
	}
	cn_udp_close(r);

	struct cn_udp_params sp = {.lport = CN_BE16(0x1234), .raddr = IP_B, .rport = CN_BE16(0x5678),
				   .rmac = {2, 0, 0, 0, 0, 0xb}, .tx_csum = true};
	struct cn_udp_sock *s = cn_udp_open(f->a, &sp);
	uint8_t out[64], g[64];
	assert_int_equal(cn_udp_sendto(s, CN_IPV4(10, 0, 0, 3), CN_BE16(0x9abc), mac_c, "abcd", 4, NULL, NULL), 0);
	assert_int_equal(cn_pkt_gather(f->q[0], out), 46);
	cn_pkt_free(f->q[0]);
	f->nq = 0;
	/* the stack's IP id, whatever earlier sends made it */
	uint16_t id = (uint16_t)(out[14 + 4] << 8 | out[14 + 5]);
	assert_int_equal(golden_udp(g, 3, 0xc, 0x9abc, id, "abcd", 4), 46);
	assert_memory_equal(out, g, 46);
	cn_udp_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_FX(test_udp_sendto), CN_FX(test_udp_modes), CN_FX(test_udp_zero_params),
		CN_FX(test_udp_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
