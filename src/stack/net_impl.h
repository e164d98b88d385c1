/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/stack: the stack context (struct cn_net), its TX
 * descriptors, the UDP socket, and the inline parts of the parser shared
 * by the stack's files. The TCP module's own header is tcp_impl.h. */
#ifndef CN_NET_IMPL_H
#define CN_NET_IMPL_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cachenet/csum.h"
#include "cachenet/net.h"
#include "cachenet/sockbuf.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"
#include "cn_internal.h"

struct cn_udp_sock {
	struct cn_net *net;
	struct cn_udp_params p;
	uint16_t lport_n;
	uint32_t ip_sum0, udp_sum0;
	struct cn_udp_stats st;
	uint8_t tmpl[CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN];
};

/* Buckets of the TCB hash table (tcp.c), allocated with the stack. */
#define CN_TCP_HASH 256u

/* Connections one burst may owe a deferred ACK (cn_net_input_burst); a
 * burst of more streams ACKs the rest as outside a burst. */
#define CN_NET_ACK_OWED 8

struct cn_net {
	struct cn_net_params p;
	struct cn_net_stats st;
	struct cn_pkt *pkt_free;   /* LIFO: the most recently freed is cache-hot */
	uint32_t npkts;            /* descriptors in all (out = npkts - free) */
	struct cn_pkt *pkts;       /* the descriptor array */
	uint16_t ip_id;
	struct cn_tcb *last;       /* last TCB found: one compare on a stream */
	struct cn_tcb **hash;
	struct cn_tcb **conns;     /* every TCB, for timers */
	uint32_t nconns;
	struct cn_udp_sock **udp;
	uint32_t nudp;
	struct cn_reass *reass;    /* IPv4 reassembly; NULL: off (ip_reass.c) */
	/* cn_net_input_burst (tcp_input.c): inside a burst, the connections
	 * whose ACK for in-order data waits for the burst's end (TF_ACKBURST
	 * set on each; a full list ACKs at once) */
	uint8_t in_burst;
	uint8_t nowed;
	struct cn_tcb *owed[CN_NET_ACK_OWED];
};

/* ---- RX: cn_net_input is TCP's input (tcp_input.c). Its fast branch
 * recognises an established stream's segment with the parser's fast
 * branch (cn__parse_fast below); its general branch parses with
 * cn__net_rx_parse, and what is not TCP for us stays in net.c from there
 * (UDP, the slow-path hook, a drop), never entering TCP again. */

/* The general branch's parse of a frame (one mbuf or a chain; a chain is
 * made contiguous when its headers or payload are not where net.h "RX"
 * allows, *m then changes). CN_DROP_MAX, with *pi filled, for a TCP
 * segment to our address; otherwise the frame has been dealt with here
 * (UDP delivered, taken by the slow-path hook, held for reassembly, or
 * dropped and counted) and the result is returned. With reassembly on,
 * a fragment that completes a datagram yields the datagram (*m, one
 * buffer) as if it had arrived whole; @p now times the reassembly. */
CN_INTERNAL enum cn_drop cn__net_rx_parse(struct cn_net *net, struct cn_mbuf **m,
					  struct cn_pkt_info *pi, uint64_t now);
/* Offer a frame to the slow-path hook; true if it took it (counted). A
 * chain is made contiguous first (*m may change); when it cannot be, the
 * hook is not called and *why becomes CN_DROP_ETH_CHAIN. On false the
 * caller still owns *m. */
CN_INTERNAL bool cn__net_slow(struct cn_net *net, struct cn_mbuf **m, enum cn_drop *why);
/* Make a chain contiguous: the first mbuf copied into the room in front
 * of the second's data (a split frame: O(header bytes)), else
 * cn_mbuf_pullup. @return the new head, or NULL (chain unchanged). */
CN_INTERNAL struct cn_mbuf *cn__net_join(struct cn_net *net, struct cn_mbuf *m);
CN_INTERNAL enum cn_drop cn__udp_input(struct cn_net *net, struct cn_mbuf *m, struct cn_pkt_info *pi);
/* Close every connection and socket (cn_net_destroy). */
CN_INTERNAL void cn__tcp_free_all(struct cn_net *net);
CN_INTERNAL void cn__udp_free_all(struct cn_net *net);

/* A TX descriptor from the stack's LIFO free list (the most recently
 * freed is cache-hot), its per-packet fields reset (no payload, no
 * offload); ref and done are NULL on every free descriptor (cn_pkt_free
 * clears them). NULL (counted) when every descriptor is out. */
static inline struct cn_pkt *cn__pkt_get(struct cn_net *net)
{
	struct cn_pkt *p = net->pkt_free;

	if (CN_UNLIKELY(!p)) {
		net->st.tx_nodesc++;
		return NULL;
	}
	net->pkt_free = p->next;
	p->npieces = 0;
	p->pay_len = 0;
	p->ol_flags = 0;
	return p;
}

/* An Ethernet + IPv4 (no options) frame's offsets and its offload
 * request: ol_flags, l3_off, l4_off and csum_off, adjacent, in one
 * store. */
static inline void cn__pkt_set_offs(struct cn_pkt *p, uint16_t ol_flags, uint16_t csum_off)
{
	const uint16_t v[4] = {ol_flags, CN_ETH_HLEN, CN_ETH_HLEN + CN_IPV4_HLEN, csum_off};

	_Static_assert(offsetof(struct cn_pkt, l3_off) == offsetof(struct cn_pkt, ol_flags) + 2 &&
			       offsetof(struct cn_pkt, l4_off) == offsetof(struct cn_pkt, ol_flags) + 4 &&
			       offsetof(struct cn_pkt, csum_off) == offsetof(struct cn_pkt, ol_flags) + 6,
		       "ol_flags, l3_off, l4_off, csum_off adjacent");
	memcpy((uint8_t *)p + offsetof(struct cn_pkt, ol_flags), v, sizeof(v));
}

/* Hand a built frame of @p frame_len bytes to the device, counting it.
 * On the device's error the packet is released without its completion
 * callback (the payload is the caller's again) and the error returned. */
static inline int cn__net_xmit(struct cn_net *net, struct cn_pkt *p, uint32_t frame_len)
{
	int rc = net->p.xmit(net->p.xmit_arg, p);

	if (rc < 0) {
		net->st.tx_xmit_fail++;
		p->done = NULL;
		cn_pkt_free(p);
		return rc;
	}
	net->st.tx_frames++;
	net->st.tx_bytes += frame_len;
	return 0;
}

/* cn_net_l4_hdr_sum, inline: pseudo-header plus L4 header (checksum field
 * included) in 32-bit loads added in 64 bits. The two TCP header lengths
 * of the fast path (20; 32 = NOP NOP TS) are unrolled; every L4 header
 * length is a multiple of 4 (TCP: 4 * data offset, UDP: 8). */
static inline __attribute__((always_inline)) uint32_t cn__l4_hdr_sum(const struct cn_pkt_info *pi)
{
	const uint8_t *h = pi->frame + pi->l4_off;
	uint32_t hl = (uint32_t)(pi->pay_off - pi->l4_off);
	uint64_t s = (uint64_t)CN_BE32_RAW(pi->saddr) + CN_BE32_RAW(pi->daddr) + cn__csum_be16(pi->proto) +
		     cn__csum_be16(pi->l4_len);

	if (CN_LIKELY(hl == 20 || hl == 32)) {
		s += (uint64_t)cn__ld32(h) + cn__ld32(h + 4) + cn__ld32(h + 8) + cn__ld32(h + 12) +
		     cn__ld32(h + 16);
		if (hl == 32)
			s += (uint64_t)cn__ld32(h + 20) + cn__ld32(h + 24) + cn__ld32(h + 28);
	} else {
		for (uint32_t i = 0; i < hl; i += 4)
			s += cn__ld32(h + i);
	}
	return cn__csum_fold32(s);
}

/* ---- the parser ----
 * One parser of Ethernet II + IPv4 + TCP/UDP frames, in two branches:
 *  - the fast branch (cn__parse_fast_at, here, inline) recognises the
 *    frames of an established TCP stream with a few word compares:
 *    Ethernet II, IPv4 without options and not a fragment, its checksum
 *    right (or verified by the NIC), TCP with no options or exactly the
 *    NOP NOP TS block of RFC 7323 appendix A; for those it fills *pi as
 *    the full branch would (pi->pay excepted) and returns true;
 *  - the full branch (net.c) checks everything else in order and names
 *    the first thing wrong, so every drop keeps its reason.
 * cn_net_parse tries them in that order. The RX path inlines the fast
 * branch into TCP's input, whose parsed fields then stay in registers,
 * and on a miss calls the full one (cn__net_rx_parse). */

/* The timestamp option's values at @p v (TSval, then TSecr: RFC 7323
 * 3.2) into @p pi, in host order. */
static inline __attribute__((always_inline)) void cn__parse_ts(struct cn_pkt_info *pi,
							       const uint8_t *v)
{
	pi->has_ts = 1;
	pi->ts_val = cn_ntoh32(cn__ld32(v));
	pi->ts_ecr = cn_ntoh32(cn__ld32(v + 4));
}

/* With @p chain (a constant): only the first @p avail of the frame's @p len
 * bytes are at f (a chain's first mbuf): false when the headers are not
 * all there. pi->pay is left unset, for the caller (cn__chain_pay, or
 * frame + pay_off before anything that reads it), and so are the fields
 * of options such a frame cannot carry (cn__parse_fast_rest). */
static inline __attribute__((always_inline)) bool
cn__parse_fast_at(const uint8_t *f, uint32_t len, uint32_t avail, uint32_t flags,
		  struct cn_pkt_info *pi, const bool chain)
{
	const uint8_t *ip = f + CN_ETH_HLEN, *th = ip + CN_IPV4_HLEN;
	uint32_t w0, w1, w2, src, dst, tot, doff;

	if (CN_UNLIKELY(len < CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN))
		return false;
	if (chain && avail < CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN)
		return false;
	w0 = cn__ld32(ip);      /* version, IHL, TOS, total length */
	w1 = cn__ld32(ip + 4);  /* id, flags, fragment offset */
	w2 = cn__ld32(ip + 8);  /* TTL, protocol, checksum */
	src = cn__ld32(ip + 12);
	dst = cn__ld32(ip + 16);
	/* Type 0x0800 and version 4, IHL 5 (bytes 12-14: 08 00 45). */
	if ((cn__ld32(f + 12) & cn_hton32(0xffffff00u)) != cn_hton32(0x08004500u) ||
	    (cn_ntoh32(w1) & (CN_IPV4_FLAG_MF | CN_IPV4_OFFMASK)) != 0 ||
	    ip[9] != CN_IPV4_PROTO_TCP)
		return false;
	tot = cn_ntoh32(w0) & 0xffffu; /* bytes 2-3 */
	if (CN_UNLIKELY(tot < CN_IPV4_HLEN + CN_TCP_HLEN || tot > len - CN_ETH_HLEN))
		return false;
	if (!(flags & CN_PARSE_IP_CSUM_GOOD) &&
	    CN_UNLIKELY(cn_csum_fold((uint64_t)w0 + w1 + w2 + src + dst) != 0xffff))
		return false;
	doff = (uint32_t)(th[12] >> 4) * 4u;
	if (chain && CN_ETH_HLEN + CN_IPV4_HLEN + doff > avail)
		return false;
	if (doff == CN_TCP_HLEN) {
		pi->has_ts = 0;
	} else if (doff == CN_TCP_HLEN + CN_TCPOLEN_TSTAMP_APPA &&
		   cn__ld32(th + CN_TCP_HLEN) == cn_hton32(CN_TCPOPT_TSTAMP_APPA_HDR)) {
		cn__parse_ts(pi, th + CN_TCP_HLEN + 4);
	} else {
		return false;
	}
	if (CN_UNLIKELY(doff > tot - CN_IPV4_HLEN))
		return false;
	pi->frame = f;
	pi->flags = (uint8_t)flags;
	/* NOP NOP TS or nothing: no other option, no SACK blocks (set, with
	 * the frame's length and the IPv4 header's offset, by
	 * cn__parse_fast_rest: the prediction reads none of them) */
	pi->l4_off = CN_ETH_HLEN + CN_IPV4_HLEN;
	pi->l4_len = (uint16_t)(tot - CN_IPV4_HLEN);
	pi->pay_off = (uint16_t)(CN_ETH_HLEN + CN_IPV4_HLEN + doff);
	pi->pay_len = tot - CN_IPV4_HLEN - doff;
	pi->saddr = CN_BE32_FROM_RAW(src);
	pi->daddr = CN_BE32_FROM_RAW(dst);
	pi->proto = CN_IPV4_PROTO_TCP;
	pi->sport = CN_BE16_FROM_RAW(cn__ld16(th));
	pi->dport = CN_BE16_FROM_RAW(cn__ld16(th + 2));
	pi->seq = cn_ntoh32(cn__ld32(th + 4));
	pi->ack = cn_ntoh32(cn__ld32(th + 8));
	pi->tcp_flags = th[13];
	pi->win = cn_ntoh16(cn__ld16(th + 14));
	return true;
}

/* What the fast branch leaves unset of the fields a frame it accepts has
 * (pi->pay excepted), @p len the frame's length: set by cn_net_parse, and
 * by TCP's input before its full path; its own header prediction reads
 * none of them, so they cost the predicted segment nothing. */
static inline void cn__parse_fast_rest(struct cn_pkt_info *pi, uint32_t len)
{
	pi->frame_len = len;
	pi->l3_off = CN_ETH_HLEN;
	pi->has_mss = pi->has_ws = 0;
	pi->ws_clamped = pi->has_sack_perm = 0;
	pi->nsack = 0;
	pi->sack = NULL;
}

/* The checksum work a received frame still needs: the stack's per-device
 * guarantee and the frame's own status (mbuf_core.h, CN_MBUF_F_RX_*),
 * whose "bad" cancels both. Reads the head's first line, already hot. */
static inline uint32_t cn__rx_flags(const struct cn_net *net, const struct cn_mbuf *m)
{
	uint32_t f = m->flags;

	if (CN_UNLIKELY(f & CN_MBUF_F_RX_CSUM_BAD))
		return 0;
	return net->p.rx_flags | (f & (CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD));
}

static inline __attribute__((always_inline)) bool
cn__parse_fast(const uint8_t *f, uint32_t len, uint32_t flags, struct cn_pkt_info *pi)
{
	return cn__parse_fast_at(f, len, len, flags, pi, false);
}

/* A chain parsed from its first mbuf (m->len >= pi->pay_off): true, with
 * pi->pay set, when its payload lies in one mbuf: the first (after the
 * headers; what follows is padding) or, when the first ends exactly at
 * the headers, the second (net.h, "RX"); false for any other shape. */
static inline bool cn__chain_pay(const struct cn_mbuf *m, struct cn_pkt_info *pi)
{
	if (m->len - pi->pay_off >= pi->pay_len) {
		pi->pay = m->data + pi->pay_off;
		return true;
	}
	if (m->len == pi->pay_off && m->next->len >= pi->pay_len) {
		pi->pay = m->next->data;
		return true;
	}
	return false;
}

/* Once a chain's headers are read and its payload summed (the header
 * mbuf is not read after this): the mbuf that holds the payload (as
 * cn__chain_pay found it), alone, and the payload's offset in it (*off).
 * The header mbuf, when it is not that one, is freed, or handed back in
 * *hdr when hdr is not NULL (a callback still reads pi->frame); padding
 * mbufs after the payload are freed. */
static inline __attribute__((always_inline)) struct cn_mbuf *
cn__pay_mbuf(struct cn_mbuf *m, const struct cn_pkt_info *pi,
					   uint32_t *off, struct cn_mbuf **hdr)
{
	struct cn_mbuf *p = m;

	if (m->len - pi->pay_off >= pi->pay_len) {
		*off = pi->pay_off;
	} else {
		p = m->next;
		m->next = NULL;
		m->pkt_len = m->len;
		*off = (uint32_t)(pi->pay - p->data);
		if (hdr)
			*hdr = m;
		else
			cn_mbuf_free(m);
	}
	if (CN_UNLIKELY(p->next != NULL)) { /* padding */
		cn_mbuf_free_chain(p->next);
		p->next = NULL;
	}
	p->pkt_len = p->len;
	return p;
}

/* SipHash-2-4 (Aumasson and Bernstein) of two 64-bit words: the keyed PRF
 * RFC 6528 asks for, so that ISNs of one 4-tuple cannot be predicted from
 * another's without the key (tcp_conn.c); also the ephemeral ports' start
 * (conn.c). */
#define SIP_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIP_ROUND                                                              \
	do {                                                                   \
		v0 += v1, v1 = SIP_ROTL(v1, 13), v1 ^= v0, v0 = SIP_ROTL(v0, 32); \
		v2 += v3, v3 = SIP_ROTL(v3, 16), v3 ^= v2;                     \
		v0 += v3, v3 = SIP_ROTL(v3, 21), v3 ^= v0;                     \
		v2 += v1, v1 = SIP_ROTL(v1, 17), v1 ^= v2, v2 = SIP_ROTL(v2, 32); \
	} while (0)

static inline uint64_t cn__siphash24_2w(uint64_t k0, uint64_t k1, uint64_t m0, uint64_t m1)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	const uint64_t m[3] = {m0, m1, (uint64_t)16 << 56}; /* last block: length 16 */

	for (int i = 0; i < 3; i++) {
		v3 ^= m[i];
		SIP_ROUND;
		SIP_ROUND;
		v0 ^= m[i];
	}
	v2 ^= 0xff;
	SIP_ROUND;
	SIP_ROUND;
	SIP_ROUND;
	SIP_ROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The bucket of a connection's 4-tuple (our address implied; ports in
 * either byte order, as long as a table uses one) in a table of 256:
 * Fibonacci hashing, whose high bits mix every input bit. The TCB table
 * (tcp.c) and the socket table (conn.c) both use it. */
static inline unsigned cn__hash_4tuple(uint32_t raddr, uint16_t rport, uint16_t lport)
{
	uint32_t h = raddr ^ ((uint32_t)rport << 16 | lport);

	h *= 0x9e3779b1u;
	return h >> 24;
}
_Static_assert(CN_TCP_HASH == 256u, "cn__hash_4tuple makes 8-bit buckets");

static inline void cn__drop(struct cn_net *net, enum cn_drop why)
{
	net->st.drop[why]++;
}


#endif
