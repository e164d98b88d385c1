/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/stack: the stack, TCB and UDP socket structs. */
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

/* Debug checks on our own invariants (never on input), compiled out with
 * NDEBUG. */
#ifdef NDEBUG
#define CN_NET_ASSERT(c) ((void)0)
#else
#include <stdio.h>
#include <stdlib.h>
#define CN_NET_ASSERT(c)                                                              \
	do {                                                                          \
		if (!(c)) {                                                           \
			fprintf(stderr, "%s:%d: %s: assertion %s failed\n", __FILE__, \
				__LINE__, __func__, #c);                              \
			abort();                                                      \
		}                                                                     \
	} while (0)
#endif

#define CN_TCP_HASH 256u

/* Ethernet + IPv4 + TCP + NOP,NOP,TS: the longest header tcp_output writes. */
#define CN_TCP_TMPL_MAX (CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN + CN_TCPOLEN_TSTAMP_APPA)
#define CN_OOO_MAX CN_TCP_OOO_MAX

/* TCB flags */
#define TF_ACKNOW 0x1u   /* send an ACK at the next output */
#define TF_DELACK 0x2u   /* an ACK is being delayed (delack_at armed) */
#define TF_FORCE 0x4u    /* persist: send one segment ignoring the window */
#define TF_RTT 0x8u      /* rtt_seq is being timed */
#define TF_RECOVER 0x10u /* in fast recovery (NewReno, until snd_una >= recover) */
#define TF_FIN 0x20u     /* FIN received */
#define TF_SNDFIN 0x40u  /* shut down for writing: a FIN follows the data */
#define TF_FINACKED 0x80u/* our FIN was acknowledged */

struct cn_tcb {
	/* --- cache line 0: everything header prediction reads ------------ */
	uint32_t raddr;            /* network order: lookup key */
	uint16_t rport_n, lport_n; /* network order: lookup key */
	uint32_t rcv_nxt;
	uint32_t snd_una, snd_nxt, snd_max;
	uint32_t snd_wnd;          /* bytes (scaled) */
	uint32_t cwnd;
	uint32_t ts_recent;
	uint32_t rcv_space_max;    /* receive buffer (window) bytes */
	uint32_t flags;            /* TF_* */
	uint8_t ts_on, snd_wscale, rcv_wscale, dupacks;
	uint16_t mss, rcv_mss;
	uint16_t rcv_segs;         /* in-order segments not yet ACKed */
	uint8_t csum_mode, sb_kind;
	struct cn_sockbuf *sb;     /* send buffer (chain or ring header) */
	/* --- cache line 1: receive side ---------------------------------- */
	struct cn_net *net;
	struct cn_sbchain rcvq;    /* in-order payload kept by reference */
	uint8_t *post_buf;         /* posted application buffer */
	uint32_t post_len, post_done;
	uint32_t rcv_adv;          /* right edge of the window we advertised */
	uint32_t ooo_n, ooo_max;
	uint32_t ra_ahead;         /* copy-out read-ahead (tcp.c): rcvq bytes from the
				      head to the end of ra_last */
	struct cn_mbuf *ooo;       /* out-of-order segments by seq (m->seq), via nextpkt */
	const struct cn_mbuf *ra_last; /* last rcvq mbuf read ahead; NULL: none */
	/* --- cache line 2+: sender slow path, timers -------------------- */
	uint32_t ssthresh, recover;
	uint32_t snd_wl1, snd_wl2;
	uint32_t max_sndwnd;
	uint32_t rtt_seq;
	uint64_t rtt_start;
	uint32_t srtt8, rttvar4;   /* scaled by 8 and 4 as in RFC 6298 / BSD */
	uint32_t rto, rto_min, rto_max, rto_base;
	uint64_t rtx_at, delack_at;/* 0 = not armed */
	uint32_t delack_ticks;
	uint32_t sndbuf_max;
	uint32_t win_nxt, win_cc;  /* rcv_nxt and receive-queue bytes when */
	uint16_t win_field;        /* this window field (scaled) was computed */
	uint32_t ip_sum0;          /* template IPv4 header sum, folded (<= 0xffff) */
	uint32_t tcp_sum0;         /* pseudo-header w/o length + ports + options kind */
	uint32_t ph_sum0;          /* pseudo-header w/o length, folded (offload: + l4len, fold) */
	uint16_t hdr_len;          /* 54 or 66 */
	uint8_t no_ts_clock, nodelay, no_readahead;
	uint32_t ra_dist;          /* copy-out read-ahead distance, bytes (tcp.c) */
	uint32_t laddr;
	struct cn_tcb *hnext;      /* hash chain */
	struct cn_sbring *ring;    /* when sb_kind == RING */
	uint8_t *ring_base;        /* its layout (cn_sbring_layout): the byte of */
	uint32_t ring_mask;        /* sequence s is at ring_base[(s - ring_seq0) & */
	uint32_t ring_seq0;        /* ring_mask] while s is held */
	struct cn_sbchain chain;   /* when sb_kind == CHAIN */
	struct cn_tcp_stats st;
	alignas(64) uint8_t tmpl[CN_TCP_TMPL_MAX];
};

/* Header prediction and the pure-ACK / in-order-data fast paths read only
 * line 0 (plus the send buffer's header and the receive queue). */
_Static_assert(offsetof(struct cn_tcb, net) == 64, "TCB fast-path fields fill line 0");
_Static_assert(offsetof(struct cn_tcb, tmpl) % 64 == 0, "template starts a cache line");

struct cn_udp_sock {
	struct cn_net *net;
	struct cn_udp_params p;
	uint16_t lport_n;
	uint32_t ip_sum0, udp_sum0;
	struct cn_udp_stats st;
	uint8_t tmpl[CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN];
};

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
};

#define CN_NET_LIKELY(c) __builtin_expect(!!(c), 1)
#define CN_NET_UNLIKELY(c) __builtin_expect(!!(c), 0)

/* Offer a frame to the slow-path hook; true if it took it (counted). A
 * chain is made contiguous first (*m may change); when it cannot be, the
 * hook is not called and *why becomes CN_DROP_ETH_CHAIN. On false the
 * caller still owns *m. */
CN_INTERNAL bool cn__net_slow(struct cn_net *net, struct cn_mbuf **m, enum cn_drop *why);
/* Make a chain contiguous: the first mbuf copied into the room in front
 * of the second's data (a split frame: O(header bytes)), else
 * cn_mbuf_pullup. @return the new head, or NULL (chain unchanged). */
CN_INTERNAL struct cn_mbuf *cn__net_join(struct cn_net *net, struct cn_mbuf *m);
/* cn_net_input for a chain: the fast path of a split frame, or
 * cn__net_input_general(). */
CN_INTERNAL enum cn_drop cn__tcp_input_chain(struct cn_net *net, struct cn_mbuf *m, uint64_t now);
CN_INTERNAL enum cn_drop cn__tcp_input(struct cn_net *net, struct cn_tcb *tcb, struct cn_mbuf *m,
			       struct cn_pkt_info *pi, uint64_t now);
/* cn_net_input for a frame of one mbuf: the TCP fast path, or
 * cn__net_input_general() for anything it does not recognise. */
CN_INTERNAL enum cn_drop cn__tcp_input_frame(struct cn_net *net, struct cn_mbuf *m, uint64_t now);
CN_INTERNAL enum cn_drop cn__net_input_general(struct cn_net *net, struct cn_mbuf *m, uint64_t now);
CN_INTERNAL struct cn_tcb *cn__tcp_lookup(struct cn_net *net, const struct cn_pkt_info *pi);
CN_INTERNAL struct cn_tcb *cn__tcp_lookup_hash(struct cn_net *net, const struct cn_pkt_info *pi);
CN_INTERNAL enum cn_drop cn__udp_input(struct cn_net *net, struct cn_mbuf *m, struct cn_pkt_info *pi);
CN_INTERNAL int cn__tcp_output(struct cn_tcb *tcb, uint64_t now);
CN_INTERNAL int cn__tcp_send_one(struct cn_tcb *tcb, uint32_t off, uint32_t len, uint64_t now);
CN_INTERNAL void cn__tcp_free_all(struct cn_net *net);
CN_INTERNAL void cn__udp_free_all(struct cn_net *net);

/* A TX descriptor from the stack's LIFO free list (the most recently
 * freed is cache-hot), its per-packet fields reset (no payload, no
 * offload); ref and done are NULL on every free descriptor (cn_pkt_free
 * clears them). NULL (counted) when every descriptor is out. */
static inline struct cn_pkt *cn__pkt_get(struct cn_net *net)
{
	struct cn_pkt *p = net->pkt_free;

	if (CN_NET_UNLIKELY(!p)) {
		net->st.tx_nodesc++;
		return NULL;
	}
	net->pkt_free = p->next;
	p->npieces = 0;
	p->pay_len = 0;
	p->ol_flags = 0;
	return p;
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

/* Something for tcp_output: unsent bytes, or a FIN that is due (every byte
 * sent, shut down, the FIN not sent since snd_nxt was last set back). */
static inline bool cn__tcp_has_output(const struct cn_tcb *tcb)
{
	uint32_t off = tcb->snd_nxt - tcb->snd_una;

	return tcb->sb->cc > off ||
	       ((tcb->flags & (TF_SNDFIN | TF_FINACKED)) == TF_SNDFIN && off == tcb->sb->cc);
}

/* The connection of a parsed segment: the last one found first (one
 * compare of the three keys on a stream), then the hash table. */
static inline struct cn_tcb *cn__tcp_find(struct cn_net *net, const struct cn_pkt_info *pi)
{
	struct cn_tcb *t = net->last;

	if (CN_NET_LIKELY(t && t->raddr == pi->saddr && t->rport_n == pi->sport &&
			  t->lport_n == pi->dport))
		return t;
	return cn__tcp_lookup_hash(net, pi);
}

/* cn_net_l4_hdr_sum, inline: pseudo-header plus L4 header (checksum field
 * included) in 32-bit loads added in 64 bits. The two TCP header lengths
 * of the fast path (20; 32 = NOP NOP TS) are unrolled; every L4 header
 * length is a multiple of 4 (TCP: 4 * data offset, UDP: 8). */
static inline __attribute__((always_inline)) uint32_t cn__l4_hdr_sum(const struct cn_pkt_info *pi)
{
	const uint8_t *h = pi->frame + pi->l4_off;
	uint32_t hl = (uint32_t)(pi->pay_off - pi->l4_off);
	uint64_t s = (uint64_t)pi->saddr + pi->daddr + cn__csum_be16(pi->proto) +
		     cn__csum_be16(pi->l4_len);

	if (CN_NET_LIKELY(hl == 20 || hl == 32)) {
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

/* The frames of an established TCP stream, recognised with a few word
 * compares: Ethernet II, IPv4 without options and not a fragment, to our
 * address, its checksum right (or verified by the NIC), TCP with no
 * options or exactly the NOP NOP TS block of RFC 7323 appendix A. For
 * those it fills *pi as cn_net_parse() would (pi->pay excepted) and
 * returns true;
 * anything else returns false and goes through cn_net_parse(), which finds
 * and counts what differs, so every drop keeps its reason. */
/* With @p chain (a constant): only the first @p avail of the frame's @p len
 * bytes are at f (a chain's first mbuf): false when the headers are not
 * all there. pi->pay is left unset, for the caller (cn__chain_pay, or
 * frame + pay_off before anything that reads it). */
static inline __attribute__((always_inline)) bool
cn__parse_fast_at(const struct cn_net *net, const uint8_t *f, uint32_t len, uint32_t avail,
		  uint32_t flags, struct cn_pkt_info *pi, const bool chain)
{
	const uint8_t *ip = f + CN_ETH_HLEN, *th = ip + CN_IPV4_HLEN;
	uint32_t w0, w1, w2, src, dst, tot, doff;

	if (CN_NET_UNLIKELY(len < CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN))
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
	    ip[9] != CN_IPV4_PROTO_TCP || dst != net->p.addr)
		return false;
	tot = cn_ntoh32(w0) & 0xffffu; /* bytes 2-3 */
	if (CN_NET_UNLIKELY(tot < CN_IPV4_HLEN + CN_TCP_HLEN || tot > len - CN_ETH_HLEN))
		return false;
	if (!(flags & CN_PARSE_IP_CSUM_GOOD) &&
	    CN_NET_UNLIKELY(cn_csum_fold((uint64_t)w0 + w1 + w2 + src + dst) != 0xffff))
		return false;
	doff = (uint32_t)(th[12] >> 4) * 4u;
	if (chain && CN_ETH_HLEN + CN_IPV4_HLEN + doff > avail)
		return false;
	if (doff == CN_TCP_HLEN) {
		pi->has_ts = 0;
	} else if (doff == CN_TCP_HLEN + CN_TCPOLEN_TSTAMP_APPA &&
		   cn__ld32(th + CN_TCP_HLEN) == cn_hton32(0x0101080a)) {
		pi->has_ts = 1;
		pi->ts_val = cn_ntoh32(cn__ld32(th + CN_TCP_HLEN + 4));
		pi->ts_ecr = cn_ntoh32(cn__ld32(th + CN_TCP_HLEN + 8));
	} else {
		return false;
	}
	if (CN_NET_UNLIKELY(doff > tot - CN_IPV4_HLEN))
		return false;
	pi->frame = f;
	pi->frame_len = len;
	pi->flags = (uint8_t)flags;
	pi->has_mss = pi->has_ws = 0;
	pi->l3_off = CN_ETH_HLEN;
	pi->l4_off = CN_ETH_HLEN + CN_IPV4_HLEN;
	pi->l4_len = (uint16_t)(tot - CN_IPV4_HLEN);
	pi->pay_off = (uint16_t)(CN_ETH_HLEN + CN_IPV4_HLEN + doff);
	pi->pay_len = tot - CN_IPV4_HLEN - doff;
	pi->saddr = src;
	pi->daddr = dst;
	pi->proto = CN_IPV4_PROTO_TCP;
	pi->sport = cn__ld16(th);
	pi->dport = cn__ld16(th + 2);
	pi->seq = cn_ntoh32(cn__ld32(th + 4));
	pi->ack = cn_ntoh32(cn__ld32(th + 8));
	pi->tcp_flags = th[13];
	pi->win = cn_ntoh16(cn__ld16(th + 14));
	return true;
}

/* The checksum work a received frame still needs: the stack's per-device
 * guarantee and the frame's own status (mbuf_core.h, CN_MBUF_F_RX_*),
 * whose "bad" cancels both. Reads the head's first line, already hot. */
static inline uint32_t cn__rx_flags(const struct cn_net *net, const struct cn_mbuf *m)
{
	uint32_t f = m->flags;

	if (CN_NET_UNLIKELY(f & CN_MBUF_F_RX_CSUM_BAD))
		return 0;
	return net->p.rx_flags | (f & (CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD));
}

static inline bool cn__parse_fast(const struct cn_net *net, const uint8_t *f, uint32_t len,
				  uint32_t flags, struct cn_pkt_info *pi)
{
	return cn__parse_fast_at(net, f, len, len, flags, pi, false);
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
	if (CN_NET_UNLIKELY(p->next != NULL)) { /* padding */
		cn_mbuf_free_chain(p->next);
		p->next = NULL;
	}
	p->pkt_len = p->len;
	return p;
}

static inline void cn__drop(struct cn_net *net, enum cn_drop why)
{
	net->st.drop[why]++;
}


#endif
