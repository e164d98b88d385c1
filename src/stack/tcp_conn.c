/* SPDX-License-Identifier: BSD-2-Clause */
/* TCP connection setup and the segments the fast path hands over, in the
 * order of RFC 9293 3.10.7 ("SEGMENT ARRIVES"): no socket (CLOSED),
 * LISTEN, SYN-SENT, SYN-RECEIVED, then the synchronized states, whose
 * ordinary segments the fast path owns and of which only SYN, RST and
 * ACK-less segments reach this file.
 *
 * Option negotiation (RFC 7323, RFC 9293 3.7.1):
 *  - MSS: we advertise ours; we send at most min(peer's, ours), 536 when
 *    the peer's SYN has none, never below CN_CONN_MIN_MSS.
 *  - Window scale: used only when both SYNs carry it; a SYN-ACK carries it
 *    only when the SYN did. The window field of a SYN is never scaled.
 *  - Timestamps: likewise both or neither; TSval is the tick clock.
 *  - SACK-permitted (RFC 2018): in our SYN, and in a SYN-ACK when the
 *    peer's SYN had it; used when both did (unless no_sack).
 *
 * SYN flood defence (conn.h, RFC 4987): half-open children are kept on
 * the syncache's age list, bounded per listener (backlog) and overall
 * (syncache_max, the oldest evicted); past a listener's backlog, SYNs get
 * a cookie SYN-ACK and no state, and the ACK returning a valid cookie
 * builds the child as if it had been in SYN_RCVD all along.
 *
 * Control segments (SYN, SYN-ACK, RST, the ACK of an unacceptable
 * handshake segment) are built whole in a TX descriptor's header room with
 * both checksums computed in software: no payload, at most 74 bytes. */
#include <errno.h>

#include "conn_impl.h"
#include "tcp_impl.h"

/* ------------------------------------------------------------ ISN */

/* RFC 6528's ISN: a keyed PRF of the 4-tuple (SipHash, net_impl.h) plus
 * a clock. */
static uint32_t isn(const struct cn_conn *c, uint32_t laddr, uint16_t lport, uint32_t raddr,
		    uint16_t rport, uint64_t now)
{
	uint64_t h = cn__siphash24_2w(c->sip_k0, c->sip_k1, (uint64_t)laddr << 32 | raddr,
				  (uint64_t)lport << 16 | rport);

	/* RFC 6528: ISN = M + F(4-tuple, key), M the 4 us clock; 250 per
	 * millisecond tick. */
	return (uint32_t)h + (uint32_t)now * 250u;
}

void cn__tcpc_connect(struct cn_sock *s, uint64_t now)
{
	s->syn.iss = isn(s->c, s->laddr, s->lport, s->raddr, s->rport, now);
}

/* Build and send one TCP segment without payload. Ports host order,
 * addresses network order. Returns 0 or a negative errno. */
static int tcp_xmit(struct cn_conn *c, const uint8_t *dmac, uint32_t raddr, uint16_t lport,
		    uint16_t rport, uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win,
		    const uint8_t *opt, uint32_t optlen)
{
	uint32_t thl = CN_TCP_HLEN + optlen, fl;
	struct cn_tcp_hdr *th;
	uint8_t *h;
	int rc;
	struct cn_pkt *p = cn__conn_pkt(c, CN_ETH_HLEN + CN_IPV4_HLEN + thl, &h, &fl);

	if (!p)
		return -ENOBUFS;
	th = (struct cn_tcp_hdr *)cn_net_hdr_build(h, &(const struct cn_net_hdr_spec){
		.dmac = dmac,
		.smac = c->mac,
		.saddr = CN_BE32_FROM_RAW(c->addr),
		.daddr = CN_BE32_FROM_RAW(raddr),
		.proto = CN_IPV4_PROTO_TCP,
		.id = c->ip_id++,
		.l4_len = (uint16_t)thl,
	});
	th->sport = cn_htobe16(lport);
	th->dport = cn_htobe16(rport);
	th->seq = cn_hton32(seq);
	th->ack = cn_hton32(ack);
	th->off = (uint8_t)((thl / 4) << 4);
	th->flags = flags;
	th->win = cn_hton16(win);
	if (optlen)
		memcpy((uint8_t *)th + CN_TCP_HLEN, opt, optlen);
	th->csum = (uint16_t)~cn_csum_fold(
		cn_csum_partial(th, thl, cn_csum_pseudo_ipv4(CN_BE32_FROM_RAW(c->addr),
								 CN_BE32_FROM_RAW(raddr), CN_IPV4_PROTO_TCP,
								 (uint16_t)thl)));
	rc = cn__conn_xmit(c, p, h, fl, CN_ETH_HLEN + CN_IPV4_HLEN);
	if (rc < 0)
		return rc;
	if (flags & CN_TCP_RST)
		c->st.rst_out++;
	return 0;
}

/* RST in answer to a segment that belongs to nothing (RFC 9293 3.10.7.1):
 * <SEQ=SEG.ACK><CTL=RST> if it has an ACK, else
 * <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. Never for a RST. */
static void rst_reply(struct cn_conn *c, const struct cn_pkt_info *pi)
{
	const uint8_t *smac = pi->frame + 6;
	uint16_t lport = cn_be16toh(pi->dport), rport = cn_be16toh(pi->sport);
	uint8_t fl = pi->tcp_flags;

	if (fl & CN_TCP_RST)
		return;
	if (fl & CN_TCP_ACK) {
		(void)tcp_xmit(c, smac, CN_BE32_RAW(pi->saddr), lport, rport, pi->ack, 0, CN_TCP_RST, 0, NULL, 0);
	} else {
		uint32_t seglen = pi->pay_len + !!(fl & CN_TCP_SYN) + !!(fl & CN_TCP_FIN);
		(void)tcp_xmit(c, smac, CN_BE32_RAW(pi->saddr), lport, rport, 0, pi->seq + seglen,
			       CN_TCP_RST | CN_TCP_ACK, 0, NULL, 0);
	}
}

/* The options of our SYN or SYN-ACK: MSS, NOP+WS, NOP+NOP+SACK-permitted,
 * NOP+NOP+TS (<= 24 bytes, a multiple of 4). What a SYN-ACK carries depends on the peer's SYN. A
 * cookie's SYN-ACK passes its TSval in @p tsv_cookie (else 0). */
static uint32_t syn_opts(struct cn_sock *s, bool synack, uint8_t *o, uint32_t tsv_cookie)
{
	struct cn_conn *c = s->c;
	uint32_t n = 0;
	uint16_t mss = cn_hton16(c->p.mss);

	o[n++] = CN_TCPOPT_MSS;
	o[n++] = 4;
	memcpy(o + n, &mss, 2);
	n += 2;
	if (!c->p.no_wscale && (!synack || s->syn.peer_has_ws)) {
		o[n++] = CN_TCPOPT_NOP;
		o[n++] = CN_TCPOPT_WSCALE;
		o[n++] = 3;
		o[n++] = c->rcv_wscale;
	}
	if (!c->p.no_sack && (!synack || s->syn.peer_sack)) {
		o[n++] = CN_TCPOPT_NOP;
		o[n++] = CN_TCPOPT_NOP;
		o[n++] = CN_TCPOPT_SACK_PERM;
		o[n++] = 2;
	}
	if (!c->p.no_ts && (!synack || s->syn.peer_ts)) {
		uint32_t tsv = tsv_cookie ? tsv_cookie : c->p.tcp.no_ts_clock ? 0 : (uint32_t)c->now;
		cn_tcpopt_tstamp_put(o + n, tsv, synack ? s->syn.ts_recent : 0);
		n += CN_TCPOLEN_TSTAMP_APPA;
	}
	return n;
}

int cn__tcpc_send_syn(struct cn_sock *s, bool synack)
{
	struct cn_conn *c = s->c;
	uint8_t o[24];
	uint32_t n = syn_opts(s, synack, o, 0);
	int rc;

	rc = tcp_xmit(c, s->rmac, s->raddr, s->lport, s->rport, s->syn.iss, synack ? s->syn.irs + 1 : 0,
		      synack ? CN_TCP_SYN | CN_TCP_ACK : CN_TCP_SYN, c->syn_win, o, n);
	if (rc == 0) {
		if (synack)
			c->st.synack_out++;
		else
			c->st.syn_out++;
	}
	return rc;
}

/* An ACK outside the TCB: for an unacceptable segment in SYN_RCVD. */
static void handshake_ack(struct cn_sock *s)
{
	(void)tcp_xmit(s->c, s->rmac, s->raddr, s->lport, s->rport, s->syn.iss + 1, s->syn.irs + 1,
		       CN_TCP_ACK, s->c->syn_win, NULL, 0);
}

void cn__tcpc_send_rst(struct cn_sock *s)
{
	struct cn_conn *c = s->c;
	struct cn_tcp_info i;

	if (s->tcb) {
		/* <SEQ=SND.NXT><ACK=RCV.NXT>: exactly what RFC 5961 makes the
		 * peer accept. */
		cn_tcp_get_info(s->tcb, &i);
		(void)tcp_xmit(c, s->rmac, s->raddr, s->lport, s->rport, i.snd_nxt, i.rcv_nxt,
			       CN_TCP_RST | CN_TCP_ACK, 0, NULL, 0);
	} else if (s->st == CN_SOCK_SYN_RCVD) {
		(void)tcp_xmit(c, s->rmac, s->raddr, s->lport, s->rport, s->syn.iss + 1, s->syn.irs + 1,
			       CN_TCP_RST | CN_TCP_ACK, 0, NULL, 0);
	}
}

/* What the peer's SYN (or SYN-ACK) said. */
static void take_syn_opts(struct cn_sock *s, const struct cn_pkt_info *pi)
{
	s->syn.irs = pi->seq;
	s->syn.peer_mss = pi->has_mss ? pi->mss : 0;
	s->syn.peer_has_ws = pi->has_ws;
	s->syn.peer_ws = pi->has_ws ? pi->wscale : 0; /* the parser caps it at 14 */
	if (pi->has_ws && pi->ws_clamped)
		s->c->st.wscale_clamped++;
	s->syn.peer_sack = pi->has_sack_perm;
	s->syn.peer_ts = pi->has_ts;
	s->syn.ts_recent = pi->has_ts ? pi->ts_val : 0;
}

/* cn_tcp_open with the negotiated values; @p win is the window field of
 * the segment that completes the handshake, @p win_scaled whether that
 * field is subject to scaling (not in a SYN-ACK). */
static struct cn_tcb *open_tcb(struct cn_sock *s, uint16_t win, bool win_scaled)
{
	struct cn_conn *c = s->c;
	struct cn_tcp_params tp = c->p.tcp;
	bool ws = s->syn.peer_has_ws && !c->p.no_wscale;
	uint32_t mss = s->syn.peer_mss ? s->syn.peer_mss : CN_CONN_DEFAULT_MSS;

	if (mss > c->p.mss)
		mss = c->p.mss;
	if (mss < CN_CONN_MIN_MSS)
		mss = CN_CONN_MIN_MSS;
	tp.laddr = CN_BE32_FROM_RAW(s->laddr);
	tp.raddr = CN_BE32_FROM_RAW(s->raddr);
	tp.lport = cn_htobe16(s->lport);
	tp.rport = cn_htobe16(s->rport);
	memcpy(tp.rmac, s->rmac, CN_ETH_ALEN);
	tp.iss = s->syn.iss;
	tp.irs = s->syn.irs;
	tp.mss = (uint16_t)mss;
	tp.rcv_mss = c->p.mss;
	tp.snd_wscale = ws ? s->syn.peer_ws : 0;
	tp.rcv_wscale = ws ? c->rcv_wscale : 0;
	tp.snd_wnd = (uint32_t)win << (win_scaled ? tp.snd_wscale : 0);
	tp.ts = s->syn.peer_ts && !c->p.no_ts;
	tp.ts_recent = s->syn.ts_recent;
	tp.sack = s->syn.peer_sack && !c->p.no_sack;
	return cn_tcp_open(c->net, &tp);
}

/* ------------------------------------------------------------ SYN cookies */

static bool syn_rcvd_input(struct cn_conn *c, struct cn_sock *s, struct cn_mbuf *m,
			   const struct cn_pkt_info *pi);

/* The MSS values a cookie can carry (3 bits): common path MTUs' MSS. */
static const uint16_t cookie_mss[8] = {64, 256, 536, 1024, 1220, 1360, 1440, 1460};

/* Generation g's secret: a keyed PRF of g under keys apart from the ISN's. */
static void cookie_secret(struct cn_conn *c, uint32_t g)
{
	uint64_t k0 = c->sip_k0 ^ 0x636f6f6b69655f30ull, k1 = c->sip_k1 ^ 0x636f6f6b69655f31ull;

	c->ck[g & 1][0] = cn__siphash24_2w(k0, k1, g, 0);
	c->ck[g & 1][1] = cn__siphash24_2w(k0, k1, g, 1);
}

void cn__tcpc_cookie_init(struct cn_conn *c)
{
	c->ck_gen = 0;
	cookie_secret(c, 0);
	cookie_secret(c, 1); /* "previous": never handed out */
	c->ck_gen = 2;
	cookie_secret(c, 2);
	c->ck_next = c->now + c->p.cookie_rotate;
}

void cn__tcpc_cookie_rotate(struct cn_conn *c, uint64_t now)
{
	if (now < c->ck_next)
		return;
	c->ck_gen++;
	cookie_secret(c, c->ck_gen);
	c->ck_next = now + c->p.cookie_rotate;
}

/* The hash bits of a cookie: all but the low 4 (generation parity, MSS). */
static uint32_t cookie_hash(const struct cn_conn *c, unsigned parity, uint32_t raddr,
			    uint16_t lport, uint16_t rport, uint32_t irs)
{
	return (uint32_t)cn__siphash24_2w(c->ck[parity][0], c->ck[parity][1],
					  (uint64_t)c->addr << 32 | raddr,
					  (uint64_t)lport << 48 | (uint64_t)rport << 32 | irs) & ~0xfu;
}

/* The options a cookie carries in our TSval's low 5 bits: window scale
 * (15 = none) and SACK-permitted. TSval stays behind the tick clock so
 * that the TCB's later TSvals never go back (the peer's PAWS). */
#define COOKIE_TS_BITS 5u
#define COOKIE_NO_WS 15u

/* Answer a SYN with a cookie: no state is kept. */
static void cookie_synack(struct cn_conn *c, struct cn_sock *l, const struct cn_pkt_info *pi)
{
	struct cn_sock t;
	uint32_t mss = pi->has_mss ? pi->mss : CN_CONN_DEFAULT_MSS, mi = 0, tsv = 0;
	uint8_t o[24];
	uint32_t n;

	memset(&t, 0, sizeof(t));
	t.c = c;
	t.raddr = CN_BE32_RAW(pi->saddr);
	t.rport = cn_be16toh(pi->sport);
	t.lport = l->lport;
	memcpy(t.rmac, pi->frame + 6, CN_ETH_ALEN);
	take_syn_opts(&t, pi);
	for (unsigned i = 0; i < 8; i++)
		if (cookie_mss[i] <= mss)
			mi = i;
	t.syn.iss = cookie_hash(c, c->ck_gen & 1, t.raddr, t.lport, t.rport, t.syn.irs) |
		    (c->ck_gen & 1) << 3 | mi;
	if (t.syn.peer_ts && !c->p.no_ts && (uint32_t)c->now < 64) {
		/* no TSval both behind the clock and carrying the bits: no
		 * timestamps (nor window scale) for this connection */
		t.syn.peer_ts = false;
	} else if (t.syn.peer_ts && !c->p.no_ts) {
		uint32_t bits = (t.syn.peer_has_ws && !c->p.no_wscale ? t.syn.peer_ws : COOKIE_NO_WS) |
				(t.syn.peer_sack ? 1u << 4 : 0);
		tsv = (((uint32_t)c->now - 32) & ~((1u << COOKIE_TS_BITS) - 1)) | bits;
	}
	n = syn_opts(&t, true, o, tsv);
	if (tcp_xmit(c, t.rmac, t.raddr, t.lport, t.rport, t.syn.iss, t.syn.irs + 1,
		     CN_TCP_SYN | CN_TCP_ACK, c->syn_win, o, n) == 0) {
		c->st.synack_out++;
		c->st.syncookies_sent++;
		c->ck_sent = true;
		c->ck_sent_at = c->now;
	}
}

/* A bare ACK to a listener: the third segment of a cookie handshake?
 * Returns 0 when it is not (the caller treats it as any bad ACK), 1
 * when it was dealt with, 2 when it also consumed @p m. */
static int cookie_ack(struct cn_conn *c, struct cn_sock *l, struct cn_mbuf *m,
		      const struct cn_pkt_info *pi)
{
	uint32_t iss = pi->ack - 1, irs = pi->seq - 1;
	uint16_t lport = l->lport, rport = cn_be16toh(pi->sport);
	unsigned parity = (iss >> 3) & 1;
	struct cn_sock *s;

	/* Only while cookies are out (they live two generations at most). */
	if (!c->ck_sent || c->now > c->ck_sent_at + 2ull * c->p.cookie_rotate)
		return 0;
	if ((iss & ~0xfu) != cookie_hash(c, parity, CN_BE32_RAW(pi->saddr), lport, rport, irs)) {
		c->st.syncookies_failed++;
		cn__conn_drop(c, CN_CONN_DROP_COOKIE);
		return 0;
	}
	if (l->nqueued >= l->backlog) {
		/* the accept queue is full: the peer retransmits its ACK */
		cn__conn_drop(c, CN_CONN_DROP_BACKLOG);
		return 1;
	}
	s = cn__sock_new(c);
	if (!s) {
		cn__conn_drop(c, CN_CONN_DROP_NO_SOCKS);
		return 1;
	}
	s->st = CN_SOCK_SYN_RCVD;
	s->raddr = CN_BE32_RAW(pi->saddr);
	s->rport = rport;
	s->lport = lport;
	memcpy(s->rmac, pi->frame + 6, CN_ETH_ALEN);
	s->parent = l;
	l->nchild++;
	s->syn.iss = iss;
	s->syn.irs = irs;
	s->syn.peer_mss = cookie_mss[iss & 7];
	if (pi->has_ts && !c->p.no_ts) {
		uint32_t ws = pi->ts_ecr & 0xf;
		s->syn.peer_ts = true;
		s->syn.ts_recent = pi->ts_val;
		s->syn.peer_has_ws = ws != COOKIE_NO_WS;
		s->syn.peer_ws = (uint8_t)(ws > 14 ? 0 : ws);
		s->syn.peer_sack = (pi->ts_ecr >> 4) & 1;
	}
	cn__sock_hash_add(s);
	c->st.syncookies_ok++;
	return syn_rcvd_input(c, s, m, pi) ? 2 : 1;
}

/* LISTEN, a SYN without ACK or RST (RFC 9293 3.10.7.2). */
static void passive_syn(struct cn_conn *c, struct cn_sock *l, const struct cn_pkt_info *pi)
{
	struct cn_sock *s;

	if (l->nqueued >= l->backlog) {
		/* the accept queue is full: drop, as Linux does (the peer
		 * retries; a cookie's ACK would find no room either) */
		cn__conn_drop(c, CN_CONN_DROP_BACKLOG);
		return;
	}
	if (l->nchild >= l->backlog) {
		if (!c->p.no_syncookies) {
			cookie_synack(c, l, pi);
			return;
		}
		/* no cookies: the listener's oldest half-open child goes */
		for (s = c->sc_oldest; s && s->parent != l; s = s->sc_newer)
			;
		if (!s) {
			cn__conn_drop(c, CN_CONN_DROP_BACKLOG);
			return;
		}
		c->st.syncache_evicted++;
		cn__sock_free(s);
	}
	if (cn_tcp_lookup(c->net, pi->saddr, pi->sport, cn_htobe16(l->lport))) {
		/* The old connection's TCB is still held for its unread bytes
		 * (CLOSED, not yet released): no new one on the 4-tuple. */
		cn__conn_drop(c, CN_CONN_DROP_TCP_UNEXPECTED);
		return;
	}
	if (c->nsyncache >= c->p.syncache_max) {
		c->st.syncache_evicted++;
		cn__sock_free(c->sc_oldest);
	}
	s = cn__sock_new(c);
	if (!s) {
		cn__conn_drop(c, CN_CONN_DROP_NO_SOCKS);
		return;
	}
	s->st = CN_SOCK_SYN_RCVD;
	s->raddr = CN_BE32_RAW(pi->saddr);
	s->rport = cn_be16toh(pi->sport);
	s->lport = l->lport;
	memcpy(s->rmac, pi->frame + 6, CN_ETH_ALEN);
	s->parent = l;
	l->nchild++;
	take_syn_opts(s, pi);
	s->syn.iss = isn(c, s->laddr, s->lport, s->raddr, s->rport, c->now);
	cn__sock_hash_add(s);
	cn__syncache_add(s);
	(void)cn__tcpc_send_syn(s, true);
	s->rtx_at = c->now + c->p.syn_rto;
}

/* SYN_SENT (RFC 9293 3.10.7.3). */
static void syn_sent_input(struct cn_conn *c, struct cn_sock *s, const struct cn_pkt_info *pi)
{
	uint8_t fl = pi->tcp_flags;

	if ((fl & CN_TCP_ACK) && pi->ack != s->syn.iss + 1) {
		if (!(fl & CN_TCP_RST))
			rst_reply(c, pi);
		cn__conn_drop(c, CN_CONN_DROP_TCP_BAD_ACK);
		return;
	}
	if (fl & CN_TCP_RST) {
		if (!(fl & CN_TCP_ACK)) { /* it cannot be about our SYN */
			cn__conn_drop(c, CN_CONN_DROP_TCP_RST_SEQ);
			return;
		}
		c->st.refused++;
		cn__sock_fail(s, ECONNREFUSED);
		return;
	}
	if (!(fl & CN_TCP_SYN)) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_UNEXPECTED);
		return;
	}
	take_syn_opts(s, pi);
	memcpy(s->rmac, pi->frame + 6, CN_ETH_ALEN);
	if (!(fl & CN_TCP_ACK)) {
		/* Simultaneous open: SYN_RCVD, our SYN again with an ACK. */
		s->st = CN_SOCK_SYN_RCVD;
		s->retries = 0;
		(void)cn__tcpc_send_syn(s, true);
		s->rtx_at = c->now + c->p.syn_rto;
		return;
	}
	s->tcb = open_tcb(s, pi->win, false);
	if (!s->tcb) {
		cn__conn_drop(c, CN_CONN_DROP_TCB);
		(void)tcp_xmit(c, s->rmac, s->raddr, s->lport, s->rport, s->syn.iss + 1, 0, CN_TCP_RST,
			       0, NULL, 0);
		c->st.resets++;
		cn__sock_fail(s, ECONNRESET);
		return;
	}
	cn__sock_established(s);
	c->st.active_opens++;
	cn_tcp_ack_now(s->tcb, c->now);
}

/* SYN_RCVD. Returns true when it consumed @p m (handed it to the fast
 * path). */
static bool syn_rcvd_input(struct cn_conn *c, struct cn_sock *s, struct cn_mbuf *m,
			   const struct cn_pkt_info *pi)
{
	uint8_t fl = pi->tcp_flags;
	uint32_t wnd = c->syn_win;
	bool passive = s->parent != NULL;

	if (fl & CN_TCP_RST) {
		/* RFC 5961 3.2: only RCV.NXT exactly resets. */
		if (pi->seq != s->syn.irs + 1) {
			cn__conn_drop(c, CN_CONN_DROP_TCP_RST_SEQ);
			return false;
		}
		c->st.resets++;
		cn__sock_fail(s, passive ? ECONNRESET : ECONNREFUSED); /* frees an embryonic child */
		return false;
	}
	if (fl & CN_TCP_SYN) {
		if (!(fl & CN_TCP_ACK) && pi->seq == s->syn.irs) {
			/* Our SYN-ACK was lost: send it again now. */
			cn__conn_drop(c, CN_CONN_DROP_TCP_SYN_DUP);
			(void)cn__tcpc_send_syn(s, true);
			return false;
		}
		if (!passive && (fl & CN_TCP_ACK) && pi->seq == s->syn.irs && pi->ack == s->syn.iss + 1) {
			/* Simultaneous open: the peer's SYN-ACK completes it. */
			if (pi->has_ts)
				s->syn.ts_recent = pi->ts_val;
			s->tcb = open_tcb(s, pi->win, false);
			goto opened;
		}
		cn__conn_drop(c, CN_CONN_DROP_TCP_SYN_CHALLENGE);
		c->st.challenge_acks++;
		handshake_ack(s);
		return false;
	}
	if (!(fl & CN_TCP_ACK)) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_NO_ACK);
		return false;
	}
	if (pi->ack != s->syn.iss + 1) {
		rst_reply(c, pi);
		cn__conn_drop(c, CN_CONN_DROP_TCP_BAD_ACK);
		return false;
	}
	if (s->syn.peer_has_ws && !c->p.no_wscale)
		wnd = c->p.tcp.rcvbuf_size ? c->p.tcp.rcvbuf_size : 1u << 20;
	if ((uint32_t)(pi->seq - (s->syn.irs + 1)) >= wnd) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_SEQ);
		handshake_ack(s);
		return false;
	}
	if (pi->has_ts && s->syn.peer_ts && pi->seq == s->syn.irs + 1)
		s->syn.ts_recent = pi->ts_val;
	s->tcb = open_tcb(s, pi->win, true);
opened:
	if (!s->tcb) {
		cn__conn_drop(c, CN_CONN_DROP_TCB);
		cn__tcpc_send_rst(s);
		c->st.resets++;
		cn__sock_fail(s, ECONNRESET);
		return false;
	}
	cn__sock_established(s);
	if (passive)
		c->st.passive_opens++;
	else
		c->st.active_opens++;
	if (fl & CN_TCP_SYN) {
		cn_tcp_ack_now(s->tcb, c->now);
		return false;
	}
	if (pi->pay_len || (fl & CN_TCP_FIN)) {
		/* The ACK brought data or a FIN: the fast path takes it now. */
		cn_net_input(c->net, m, c->now);
		return true;
	}
	return false;
}

/* A synchronized state: the TCB exists, and the fast path handed over a
 * SYN, a RST or a segment without ACK (RFC 9293 3.10.7.4, RFC 5961). */
static void sync_input(struct cn_conn *c, struct cn_sock *s, const struct cn_pkt_info *pi)
{
	struct cn_tcp_info i;
	uint8_t fl = pi->tcp_flags;

	cn_tcp_get_info(s->tcb, &i);
	if (fl & CN_TCP_RST) {
		uint32_t off = pi->seq - i.rcv_nxt, win = i.rcv_wnd ? i.rcv_wnd : 1;
		if (off == 0) {
			/* The user already closed in CLOSING, LAST_ACK and
			 * TIME_WAIT: nothing to report there. */
			bool quiet = s->st == CN_SOCK_CLOSING || s->st == CN_SOCK_LAST_ACK ||
				     s->st == CN_SOCK_TIME_WAIT;
			c->st.resets++;
			cn__sock_fail(s, quiet ? 0 : ECONNRESET);
		} else if (off < win) {
			cn__conn_drop(c, CN_CONN_DROP_TCP_RST_CHALLENGE);
			c->st.challenge_acks++;
			cn_tcp_ack_now(s->tcb, c->now);
		} else {
			cn__conn_drop(c, CN_CONN_DROP_TCP_RST_SEQ);
		}
		return;
	}
	if (fl & CN_TCP_SYN) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_SYN_CHALLENGE);
		c->st.challenge_acks++;
		cn_tcp_ack_now(s->tcb, c->now);
		return;
	}
	if (!(fl & CN_TCP_ACK)) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_NO_ACK);
		return;
	}
	cn__conn_drop(c, CN_CONN_DROP_TCP_UNEXPECTED);
}

void cn__tcpc_input(struct cn_conn *c, struct cn_mbuf *m, struct cn_pkt_info *pi)
{
	uint8_t fl = pi->tcp_flags;
	uint16_t lport = cn_be16toh(pi->dport), rport = cn_be16toh(pi->sport);
	struct cn_sock *s, *l;

	if (CN_BE32_RAW(pi->daddr) != c->addr) {
		cn__conn_drop(c, CN_CONN_DROP_IP_NOT_US);
		goto out;
	}
	if (!cn_net_l4_csum_ok(pi)) {
		cn__conn_drop(c, CN_CONN_DROP_TCP_CSUM);
		goto out;
	}
	if (fl & CN_TCP_RST)
		c->st.rst_in++;
	if (fl & CN_TCP_SYN) {
		if (fl & CN_TCP_ACK)
			c->st.synack_in++;
		else
			c->st.syn_in++;
	}
	s = cn__sock_find(c, CN_BE32_RAW(pi->saddr), rport, lport);
	if (s && s->tcb)
		s = cn__sock_update(s, c->now); /* FINs seen since the last poll */
	if (s && s->st == CN_SOCK_TIME_WAIT && (fl & (CN_TCP_SYN | CN_TCP_ACK | CN_TCP_RST)) ==
	    CN_TCP_SYN && cn__sock_listener(c, lport)) {
		/* A new incarnation (RFC 9293 3.10.7.4, RFC 6191): a SYN above
		 * what the old one used ends TIME_WAIT early. */
		struct cn_tcp_info i;
		cn_tcp_get_info(s->tcb, &i);
		if (cn_seq_gt(pi->seq, i.rcv_nxt)) {
			c->st.tw_reused++;
			c->st.closes++;
			if (s->released) {
				cn__sock_free(s);
			} else {
				cn_tcp_close(s->tcb);
				s->tcb = NULL;
				cn__sock_fail(s, 0);
			}
			s = NULL;
		}
	}
	if (!s || s->st == CN_SOCK_CLOSED) {
		l = cn__sock_listener(c, lport);
		if (fl & CN_TCP_RST) {
			cn__conn_drop(c, CN_CONN_DROP_TCP_RST_CLOSED);
		} else if (!l) {
			rst_reply(c, pi);
			cn__conn_drop(c, CN_CONN_DROP_TCP_CLOSED);
		} else if (fl & CN_TCP_ACK) {
			/* LISTEN: any ACK is bad, but the one returning a
			 * SYN cookie */
			int k = fl & CN_TCP_SYN ? 0 : cookie_ack(c, l, m, pi);
			if (k == 2)
				return;
			if (k == 0) {
				rst_reply(c, pi);
				cn__conn_drop(c, CN_CONN_DROP_TCP_BAD_ACK);
			}
		} else if (fl & CN_TCP_SYN) {
			passive_syn(c, l, pi);
		} else {
			cn__conn_drop(c, CN_CONN_DROP_TCP_NO_ACK);
		}
		goto out;
	}
	switch (s->st) {
	case CN_SOCK_SYN_SENT:
		syn_sent_input(c, s, pi);
		break;
	case CN_SOCK_SYN_RCVD:
		if (syn_rcvd_input(c, s, m, pi))
			return;
		break;
	default:
		if (s->tcb)
			sync_input(c, s, pi);
		else
			cn__conn_drop(c, CN_CONN_DROP_TCP_UNEXPECTED);
		break;
	}
out:
	cn_mbuf_free_chain(m);
}

/* Handshake and ARP timers of a SYN_SENT / SYN_RCVD socket. */
void cn__tcpc_timers(struct cn_sock *s, uint64_t now)
{
	struct cn_conn *c = s->c;
	uint32_t shift;

	if (!s->rtx_at || now < s->rtx_at)
		return;
	if (s->retries >= (s->st == CN_SOCK_SYN_RCVD && s->parent ? c->p.synack_retries
								 : c->p.syn_retries)) {
		if (s->arp_wait) {
			c->st.arp_timeouts++;
			cn__sock_fail(s, EHOSTUNREACH);
		} else {
			c->st.syn_timeouts++;
			cn__sock_fail(s, ETIMEDOUT);
		}
		return;
	}
	s->retries++;
	if (s->arp_wait) {
		(void)cn_conn_arp_request(c, CN_BE32_FROM_RAW(s->raddr), now);
		s->rtx_at = now + c->p.arp_retry;
		return;
	}
	c->now = now;
	(void)cn__tcpc_send_syn(s, s->st == CN_SOCK_SYN_RCVD);
	shift = s->retries < 10 ? s->retries : 10; /* RFC 6298 5.5 backoff */
	s->rtx_at = now + ((uint64_t)c->p.syn_rto << shift);
}

void cn__tcpc_arp_resolved(struct cn_conn *c, uint32_t ip, const uint8_t *mac)
{
	for (struct cn_sock *s = c->all; s; s = s->next) {
		if (s->st != CN_SOCK_SYN_SENT || !s->arp_wait || s->raddr != ip)
			continue;
		memcpy(s->rmac, mac, CN_ETH_ALEN);
		s->arp_wait = false;
		s->retries = 0;
		(void)cn__tcpc_send_syn(s, false);
		s->rtx_at = c->now + c->p.syn_rto;
	}
}
