/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz target for IPv4 reassembly and fragmentation: frames into
 * cn_net_input() of a stack with reassembly on (small bounds: 48 KB
 * overall, 24 KB a source, 6 datagrams, 100 ticks), an MTU of 576 (so
 * what it answers leaves in fragments), a UDP echo on port 7 and a
 * connection manager for ICMP echo. Input: one flags byte (bit 0: fix the
 * IPv4 and L4 checksums of raw frames), then records. A record whose
 * first byte is below 0x80 is a raw frame: a 2-byte big-endian length and
 * that many bytes. Otherwise it is a fragment the harness builds from 5
 * more bytes, so that the fuzzer spends its time on offsets, lengths and
 * order rather than on headers: b0 bits 0-1 the source (one of four),
 * bits 2-3 the protocol (UDP, ICMP, TCP, 99), bit 4 MF, bits 5-6 the
 * clock step before it (0, 1, 40, 90 ticks); b1 the IP ID; b2-b3 the
 * offset in 8-byte units (13 bits); b4 the payload length / 4 (0..1020
 * bytes). Payload byte i of a datagram is a function of its ID and i, so
 * duplicates and overlaps agree or not as real ones would. A datagram
 * with ID n is meant to be 16 (n + 1) bytes long: its first fragment
 * starts with a UDP header to port 7 of that length (no checksum), or an
 * ICMP echo request whose checksum is right for that length; fragments
 * that add up to it are delivered and answered (in fragments), others
 * are dropped somewhere on the way, which is the point.
 * The stack is created once; each input has its own UDP socket and
 * connection manager, and ends with every datagram in reassembly expired:
 * no mbuf, descriptor or reassembly byte may be left then, and the held
 * bytes never exceed the bound.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/conn.h"
#include "cachenet/csum.h"
#include "cachenet/udp.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REASS_MEM (48u << 10)

static struct cn_udp_sock *echo;

static int xmit(void *arg, struct cn_pkt *p)
{
	if (cn_pkt_len(p) > 14 + 576)
		abort(); /* the MTU is a promise */
	return fz_xmit(arg, p);
}

static void echo_done(void *arg)
{
	cn_mbuf_free_chain(arg);
}

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	(void)arg;
	if (cn_udp_sendto(echo, pi->saddr, pi->sport, pi->frame + 6, m->data, m->len,
			  echo_done, m) < 0)
		cn_mbuf_free_chain(m);
}

static uint8_t pattern(uint32_t i, uint8_t id)
{
	return (uint8_t)(i * 31u + id);
}

/* Byte i of datagram id's payload is rows[id][i & 255] (the pattern has a
 * period of 256), its ICMP sum icmp_sum[id]: both filled on first use,
 * from id alone, so what one input fills cannot steer another. */
#define ROW_LEN (256u + 1020u)
static uint8_t rows[256][ROW_LEN];
static uint16_t icmp_sum[256];
static bool row_done[256];

static void fill_row(uint8_t id)
{
	uint32_t dlen = (id + 1u) * 16u, s = 0x0800;

	for (uint32_t i = 0; i < ROW_LEN; i++)
		rows[id][i] = pattern(i, id);
	/* the sum of the whole intended datagram */
	for (uint32_t i = 4; i < dlen; i += 2)
		s += (uint32_t)pattern(i, id) << 8 | (i + 1 < dlen ? pattern(i + 1, id) : 0);
	icmp_sum[id] = cn_hton16((uint16_t)~cn_csum_fold(s));
	row_done[id] = true;
}

/* The fragment a 5-byte record describes, at f. Left out of the coverage
 * feedback (not inlined: the caller's coverage would cover it): it is the
 * harness's, and the traced comparisons of its former byte loops were a
 * quarter of the target's time. */
#if defined(__clang__)
__attribute__((no_sanitize("coverage"), noinline))
#endif
static uint32_t build_frag(uint8_t *f, const uint8_t *r)
{
	static const uint8_t protos[4] = {17, 1, 6, 99};
	uint8_t proto = protos[(r[0] >> 2) & 3], id = r[1];
	uint32_t off = ((uint32_t)(r[2] & 0x1f) << 8 | r[3]) * 8u, len = (uint32_t)r[4] * 4u;
	uint16_t fo = (uint16_t)(off / 8u | ((r[0] & 0x10) ? 0x2000 : 0));
	uint8_t *ip = f + 14;

	if (!row_done[id])
		fill_row(id);
	memset(f, 0, 34);
	f[0] = 2, f[5] = 1;           /* to us */
	f[6] = 2, f[11] = 2;
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)((20 + len) >> 8), ip[3] = (uint8_t)(20 + len);
	ip[5] = id;
	ip[6] = (uint8_t)(fo >> 8), ip[7] = (uint8_t)fo;
	ip[8] = 64, ip[9] = proto;
	ip[12] = 192, ip[13] = 168, ip[14] = 1, ip[15] = (uint8_t)(2 + (r[0] & 3));
	ip[16] = 192, ip[17] = 168, ip[18] = 0, ip[19] = 1;
	memcpy(ip + 20, rows[id] + (off & 255u), len);
	if (off == 0 && len >= 8) {
		uint8_t *l4 = ip + 20;
		uint32_t dlen = (id + 1u) * 16u;
		if (proto == 17) {
			l4[0] = 0x13, l4[1] = 0x88, l4[2] = 0, l4[3] = 7;
			l4[4] = (uint8_t)(dlen >> 8), l4[5] = (uint8_t)dlen, l4[6] = l4[7] = 0;
		} else if (proto == 1) {
			l4[0] = 8, l4[1] = 0;
			memcpy(l4 + 2, &icmp_sum[id], 2);
		}
	}
	uint16_t c = cn_csum_ipv4_hdr(ip, 20);
	memcpy(ip + 10, &c, 2);
	return 34 + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 16)
		return 0;
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 1}, .addr = CN_IPV4(192, 168, 0, 1),
				   .xmit = xmit, .tx_descs = 256, .max_conns = 2, .max_udp = 1,
				   .mtu = 576, .reass_mem = REASS_MEM, .reass_mem_src = REASS_MEM / 2,
				   .reass_max = 6, .reass_timeout = 100};
	struct cn_net *net = fz_net(&np, 2048, 512);
	uint8_t fl = data[0];
	struct cn_udp_params up = {.lport = CN_BE16(7), .tx_csum = true, .rx = udp_rx};
	struct cn_conn_params cpar = {.max_socks = 2, .isn_secret = 1};
	if (!(echo = cn_udp_open(net, &up)))
		abort();
	struct cn_conn *c = cn_conn_create(net, &cpar);
	if (!c)
		abort();
	uint64_t now = 1;
	size_t at = 1;
	while (at < size) {
		struct cn_mbuf *m;
		uint32_t len;
		if (data[at] >= 0x80) {
			static const uint8_t steps[4] = {0, 1, 40, 90};
			uint8_t r[5] = {0};
			memcpy(r, data + at, size - at < 5 ? size - at : 5);
			at += 5;
			now += steps[(r[0] >> 5) & 3];
			m = cn_mbuf_get_cluster(fz_mpool(), fz_cpool());
			if (!m)
				abort(); /* a leak exhausted the pool */
			m->data = m->buf;
			len = build_frag(m->data, r);
			m->len = m->pkt_len = len;
		} else {
			if (at + 3 > size)
				break;
			len = (uint32_t)data[at + 1] << 8 | data[at + 2];
			at += 3;
			m = fz_take(data, size, &at, &len, 0, fl & 1);
			now += 3;
		}
		enum cn_drop r = cn_net_input(net, m, now);
		if ((unsigned)r >= CN_DROP_MAX || cn_net_reass_mem(net) > REASS_MEM ||
		    cn_net_reass_entries(net) > 6)
			abort();
		cn_conn_poll(c, now);
	}
	cn_conn_destroy(c);
	cn_udp_close(echo);
	cn_net_timer(net, now + 1000); /* every datagram in reassembly expires */
	if (cn_net_reass_entries(net) || cn_net_reass_mem(net))
		abort();
	fz_end(net, true); /* no descriptor or mbuf out */
	return 0;
}
