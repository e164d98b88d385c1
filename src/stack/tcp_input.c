/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp_input for an established connection.
 *
 * Van Jacobson's header prediction (as in 4.3BSD-Reno and every BSD since)
 * takes the two cases that make up nearly all segments of a bulk transfer
 * with a handful of compares on the TCB's first cache line:
 *  - a pure ACK for new data, from the sender's side: free the acknowledged
 *    bytes, grow the window, maybe send more;
 *  - the next in-order data segment, from the receiver's side, acknowledging
 *    nothing new: deliver it, schedule the ACK.
 * Everything else (duplicate ACKs, retransmissions, out-of-order data,
 * window changes, recovery) goes through the full path below, written in
 * the order of RFC 9293 3.10.7.4 for ESTABLISHED.
 *
 * Every received frame enters the stack here, once (cn_net_input, after
 * the branches below), and takes one of two branches: the fast one parses
 * with the parser's fast branch, finds the connection and predicts, all
 * inlined into one function so the parsed fields stay in registers; the
 * general one (any other shape, a chain that is not a plain split frame,
 * a segment of no connection, UDP and everything else) parses with the
 * parser's full branch (net.c), which keeps what is not TCP, and goes on
 * to the same prediction and the full path. */
#include <errno.h>

#include "tcp_impl.h"

static inline uint32_t rcv_space(const struct cn_tcb *tcb)
{
	uint32_t space = cn__tcp_rcv_free(tcb);
	uint32_t adv = tcb->rcv_adv - tcb->rcv_nxt;

	/* A window once advertised is honoured even if space shrank since. */
	return (int32_t)adv > (int32_t)space ? adv : space;
}

/* Payload already verified: as much as fits into the posted buffer, the
 * rest kept by reference in the receive queue. Consumes m (one mbuf). */
static void deliver(struct cn_tcb *tcb, struct cn_mbuf *m, uint32_t off, uint32_t len)
{
	if (tcb->post_buf && tcb->post_done < tcb->post_len) {
		uint32_t k = tcb->post_len - tcb->post_done;
		if (k > len)
			k = len;
		memcpy(tcb->post_buf + tcb->post_done, m->data + off, k);
		tcb->post_done += k;
		off += k;
		len -= k;
		if (len == 0) {
			cn_mbuf_free_chain(m);
			return;
		}
	}
	m->data += off;
	m->len = m->pkt_len = len;
	cn_sbchain_append(&tcb->rcvq, m);
}

/* Verify the checksum while copying into the posted buffer (one pass over
 * the payload; a part that does not fit is summed where it lies and kept
 * by reference), or with a separate pass and then deliver. Returns false
 * (m freed, drop counted) on a bad checksum: the bytes copied past
 * post_done are then never seen. */
/* The TCP checksum of a parsed segment, inline (cn_net_l4_csum_ok less
 * the UDP case): a pointer to the parsed fields that never leaves this
 * file's inlined fast path lets the compiler keep them in registers. */
/* The first payload byte of a parsed segment: with @p chain (a constant:
 * the frame may be a chain) where pi->pay says, else right after the
 * headers (the single-buffer fast path never sets pi->pay: one field
 * fewer to keep in registers). */
static inline __attribute__((always_inline)) const uint8_t *
pay_ptr(const struct cn_pkt_info *pi, const bool chain)
{
	return chain ? pi->pay : pi->frame + pi->pay_off;
}

static inline __attribute__((always_inline)) bool tcp_csum_ok(const struct cn_pkt_info *pi,
							  const bool chain)
{
	uint32_t s = cn__l4_hdr_sum(pi); /* even length: no swap below */

	if (pi->pay_len)
		s = cn_csum_partial(pay_ptr(pi, chain), pi->pay_len, s);
	return cn_csum_fold(s) == 0xffff;
}

/* A split chain (m->next): the header sum is read from the first mbuf,
 * the payload summed (and copied) where pi->pay says, the sums combined
 * (the header part is even-length: the payload's sum adds unswapped);
 * then the payload mbuf alone is kept (cn__pay_mbuf). */
static inline __attribute__((always_inline)) bool
deliver_check(struct cn_tcb *tcb, struct cn_mbuf *m, const struct cn_pkt_info *pi, const bool chain)
{
	uint32_t len = pi->pay_len, off = pi->pay_off;

	if (tcb->post_buf && tcb->post_done < tcb->post_len &&
	    !(pi->flags & CN_PARSE_L4_CSUM_GOOD)) {
		const uint8_t *pay = pay_ptr(pi, chain);
		uint32_t k = tcb->post_len - tcb->post_done;
		uint32_t s = cn__l4_hdr_sum(pi); /* even length: no swap below */
		if (k > len)
			k = len;
		s = cn_csum_copy(tcb->post_buf + tcb->post_done, pay, k, s);
		if (k < len)
			s = cn_csum_combine(s, cn_csum_partial(pay + k, len - k, 0), k);
		if (cn_csum_fold(s) != 0xffff) {
			cn__drop(tcb->net, CN_DROP_TCP_CSUM);
			cn_mbuf_free_chain(m);
			return false;
		}
		tcb->post_done += k;
		tcb->st.rcv_fused++;
		if (k == len) {
			cn_mbuf_free_chain(m);
		} else {
			if (chain && CN_UNLIKELY(m->next != NULL))
				m = cn__pay_mbuf(m, pi, &off, NULL);
			m->data += off + k;
			m->len = m->pkt_len = len - k;
			cn_sbchain_append(&tcb->rcvq, m);
		}
		return true;
	}
	/* Verified by the NIC: no call to find that out. */
	if (!(pi->flags & CN_PARSE_L4_CSUM_GOOD) && !tcp_csum_ok(pi, chain)) {
		cn__drop(tcb->net, CN_DROP_TCP_CSUM);
		cn_mbuf_free_chain(m);
		return false;
	}
	if (chain && CN_UNLIKELY(m->next != NULL))
		m = cn__pay_mbuf(m, pi, &off, NULL);
	deliver(tcb, m, off, len);
	return true;
}

/* Schedule the ACK for in-order data: every second segment at once, else
 * after the delayed-ACK timer (RFC 9293 3.8.6.3, RFC 5681 4.2); inside a
 * device burst, ack_defer may then move it to the burst's end. */
static inline void ack_data(struct cn_tcb *tcb, uint64_t now)
{
	if (++tcb->rcv_segs >= 2 || tcb->delack_ticks == 0) {
		tcb->flags |= TF_ACKNOW;
	} else if (!tcb->delack_at) {
		tcb->delack_at = now + tcb->delack_ticks;
		tcb->flags |= TF_DELACK;
	}
}

/* Inside a device burst (cn_net_input_burst), the ACK ack_data asked for
 * (TF_ACKNOW) waits for the burst's end (TF_ACKNOW cleared), unless
 * ack_stretch segments are unacknowledged, the connection is in its first
 * CN_TCP_QUICKACK_SEGS segments, or the burst owes ACKs to CN_NET_ACK_OWED
 * connections already. True when deferred. */
static bool ack_defer(struct cn_tcb *tcb)
{
	struct cn_net *net = tcb->net;

	if (!net->in_burst || tcb->rcv_segs >= tcb->ack_stretch ||
	    tcb->st.segs_in <= CN_TCP_QUICKACK_SEGS)
		return false;
	if (!(tcb->flags & TF_ACKBURST)) {
		if (net->nowed == CN_NET_ACK_OWED)
			return false;
		net->owed[net->nowed++] = tcb;
	}
	tcb->flags = (tcb->flags | TF_ACKBURST) & ~TF_ACKNOW;
	return true;
}

/* The fast path's ACK for in-order data: deferred in a burst, else sent.
 * Out of line, so the predicted path outside bursts pays only the call it
 * made before (to cn__tcp_output) and a test. */
static __attribute__((noinline)) void ack_data_out(struct cn_tcb *tcb, uint64_t now)
{
	if (!ack_defer(tcb))
		cn__tcp_output(tcb, now);
}

/* RFC 6298 2.2-2.3 in BSD's fixed point (srtt x8, rttvar x4). */
static void rtt_sample(struct cn_tcb *tcb, uint32_t r)
{
	uint32_t rto;

	if (r == 0)
		r = 1;
	if (tcb->srtt8 == 0) {
		tcb->srtt8 = r << 3;
		tcb->rttvar4 = r << 1;
	} else {
		int32_t delta = (int32_t)r - (int32_t)(tcb->srtt8 >> 3);
		tcb->srtt8 = (uint32_t)((int32_t)tcb->srtt8 + delta);
		if (delta < 0)
			delta = -delta;
		tcb->rttvar4 = (uint32_t)((int32_t)tcb->rttvar4 + delta - (int32_t)(tcb->rttvar4 >> 2));
	}
	rto = (tcb->srtt8 >> 3) + (tcb->rttvar4 > 1 ? tcb->rttvar4 : 1);
	if (rto < tcb->rto_min)
		rto = tcb->rto_min;
	if (rto > tcb->rto_max)
		rto = tcb->rto_max;
	tcb->rto = rto;
}

/* The first ACK to move snd_una after an RTO: if it echoes a timestamp
 * older than the retransmission's, the original arrived and the timeout
 * was needless (RFC 3522's detection; counted, not undone). Else its
 * TSecr times the retransmission (RFC 7323 4): a sample that ends the
 * RTO's backoff (RFC 6298 5.7) without waiting for new data to be timed. */
static void rto_check(struct cn_tcb *tcb, const struct cn_pkt_info *pi, uint64_t now)
{
	tcb->flags &= ~TF_RTOCHK;
	if (!pi->has_ts)
		return;
	if (cn_seq_lt(pi->ts_ecr, tcb->rto_tsval))
		tcb->st.rto_spurious++;
	else if ((uint32_t)now - pi->ts_ecr < tcb->rto_max)
		rtt_sample(tcb, (uint32_t)now - pi->ts_ecr);
}

/* New data acknowledged (snd_una < ack <= snd_max): free it, time it,
 * grow the congestion window (RFC 5681 3.1), restart the timer. Inlined
 * into the pure-ACK fast path, where a call's register saves would cost
 * as much as the body. */
static inline __attribute__((always_inline)) void ack_advance(struct cn_tcb *tcb, uint32_t ack, uint64_t now)
{
	uint32_t acked = ack - tcb->snd_una;

	if ((tcb->flags & TF_SNDFIN) && acked > tcb->sb->cc) {
		/* The ACK covers our FIN, one sequence number past the data. */
		tcb->flags |= TF_FINACKED;
		cn_sockbuf_drop(tcb->sb, tcb->sb->cc);
	} else {
		cn_sockbuf_drop(tcb->sb, acked);
	}
	tcb->snd_una = ack;
	if (cn_seq_lt(tcb->snd_nxt, ack))
		tcb->snd_nxt = ack;
	if ((tcb->flags & TF_RTT) && cn_seq_gt(ack, tcb->rtt_seq)) {
		tcb->flags &= ~TF_RTT;
		rtt_sample(tcb, (uint32_t)(now - tcb->rtt_start));
	}
	if (!(tcb->flags & TF_RECOVER)) {
		if (tcb->cwnd < tcb->ssthresh)
			tcb->cwnd += acked < tcb->mss ? acked : tcb->mss;
		else
			tcb->cwnd += ((uint32_t)tcb->mss * tcb->mss) / tcb->cwnd + 1;
	}
	tcb->rtx_at = tcb->snd_una == tcb->snd_max ? 0 : now + tcb->rto;
}

static inline uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* ---------------- SACK, the sender's side (RFC 2018, RFC 6675) -------- */

/* Forget scoreboard ranges at or below snd_una. */
static void sack_prune(struct cn_tcb *tcb)
{
	unsigned i = 0, k = 0;

	for (; i < tcb->nsacked; i++) {
		if (cn_seq_leq(tcb->sacked_r[i], tcb->snd_una))
			continue;
		tcb->sacked_l[k] = cn_seq_lt(tcb->sacked_l[i], tcb->snd_una) ? tcb->snd_una
									    : tcb->sacked_l[i];
		tcb->sacked_r[k++] = tcb->sacked_r[i];
	}
	tcb->nsacked = (uint8_t)k;
}

/* Merge one SACK block [a, b) into the scoreboard (sorted, disjoint).
 * Blocks outside (snd_una, snd_max] are ignored (RFC 2018 and 5961's
 * spirit: a block names only data we sent); when the board is full the
 * highest range is given up. */
static void sack_add(struct cn_tcb *tcb, uint32_t a, uint32_t b)
{
	unsigned n = tcb->nsacked, i, j;

	if (!cn_seq_lt(a, b) || cn_seq_leq(b, tcb->snd_una) || cn_seq_gt(b, tcb->snd_max))
		return;
	if (cn_seq_lt(a, tcb->snd_una))
		a = tcb->snd_una;
	tcb->st.sack_blocks_in++;
	/* ranges wholly before a stay; those touching [a, b) merge into it */
	for (i = 0; i < n && cn_seq_lt(tcb->sacked_r[i], a); i++)
		;
	for (j = i; j < n && cn_seq_leq(tcb->sacked_l[j], b); j++) {
		if (cn_seq_lt(tcb->sacked_l[j], a))
			a = tcb->sacked_l[j];
		if (cn_seq_gt(tcb->sacked_r[j], b))
			b = tcb->sacked_r[j];
	}
	/* [i, j) merged into one at i: shift the rest */
	if (j == i) {
		if (n == CN_TCP_SACK_MAX) {
			if (i == n)
				return; /* above every range on a full board */
			n--;        /* the highest goes */
		}
		memmove(&tcb->sacked_l[i + 1], &tcb->sacked_l[i], (n - i) * sizeof(uint32_t));
		memmove(&tcb->sacked_r[i + 1], &tcb->sacked_r[i], (n - i) * sizeof(uint32_t));
		n++;
	} else if (j > i + 1) {
		memmove(&tcb->sacked_l[i + 1], &tcb->sacked_l[j], (n - j) * sizeof(uint32_t));
		memmove(&tcb->sacked_r[i + 1], &tcb->sacked_r[j], (n - j) * sizeof(uint32_t));
		n -= j - i - 1;
	}
	tcb->sacked_l[i] = a;
	tcb->sacked_r[i] = b;
	tcb->nsacked = (uint8_t)n;
}

/* The SACK blocks of a segment into the scoreboard; the time the board
 * went from empty to holding a range (RACK's reordering window starts);
 * a D-SACK counted (RFC 2883: the first block at or below the cumulative
 * ACK, or inside the second). */
static void sack_update(struct cn_tcb *tcb, const struct cn_pkt_info *pi, uint64_t now)
{
	uint32_t l0 = cn_ntoh32(cn__ld32(pi->sack)), r0 = cn_ntoh32(cn__ld32(pi->sack + 4));
	bool had;

	sack_prune(tcb);
	had = tcb->nsacked != 0;
	if (cn_seq_leq(r0, pi->ack) ||
	    (pi->nsack > 1 && cn_seq_geq(l0, cn_ntoh32(cn__ld32(pi->sack + 8))) &&
	     cn_seq_leq(r0, cn_ntoh32(cn__ld32(pi->sack + 12))))) {
		tcb->st.dsack_in++;
		if (tcb->flags & TF_TLP)
			tcb->flags |= TF_TLPDUP;
	}
	for (unsigned k = 0; k < pi->nsack; k++)
		sack_add(tcb, cn_ntoh32(cn__ld32(pi->sack + 8 * k)),
			 cn_ntoh32(cn__ld32(pi->sack + 8 * k + 4)));
	sack_prune(tcb);
	if (!had && tcb->nsacked)
		tcb->sack_first_at = now;
}

/* In recovery: retransmit up to @p budget segments from the holes below
 * the highest SACKed byte, in order from rexmit_nxt (RFC 6675 NextSeg's
 * rule 1); false when no hole is left to send. */
static bool sack_rexmit(struct cn_tcb *tcb, unsigned budget, uint64_t now)
{
	uint32_t x = cn_seq_lt(tcb->rexmit_nxt, tcb->snd_una) ? tcb->snd_una : tcb->rexmit_nxt;
	unsigned i = 0;

	while (budget) {
		while (i < tcb->nsacked && cn_seq_leq(tcb->sacked_r[i], x))
			i++;
		if (i == tcb->nsacked)
			return false; /* nothing SACKed above x: no known hole */
		if (cn_seq_geq(x, tcb->sacked_l[i])) {
			x = tcb->sacked_r[i]; /* inside a SACKed range: skip it */
			continue;
		}
		uint32_t len = min32(tcb->sacked_l[i] - x, tcb->mss);
		if (cn__tcp_send_one(tcb, x - tcb->snd_una, len, now) <= 0)
			return false;
		tcb->st.sack_rexmit++;
		tcb->rexmit_last_at = now;
		x += len;
		tcb->rexmit_nxt = x;
		budget--;
	}
	return true;
}

static uint32_t sacked_bytes(const struct cn_tcb *tcb)
{
	uint32_t b = 0;

	for (unsigned i = 0; i < tcb->nsacked; i++)
		b += tcb->sacked_r[i] - tcb->sacked_l[i];
	return b;
}

/* RFC 6675 IsLost(snd_una): more than (DupThresh - 1) x SMSS bytes
 * SACKed above it. */
static bool sack_lost(const struct cn_tcb *tcb)
{
	return sacked_bytes(tcb) > 2u * tcb->mss;
}

/* Fast retransmit, fast recovery (RFC 5681 3.2, NewReno's recover point,
 * RFC 6582; with SACK the first hole, RFC 6675 5). */
static void enter_recovery(struct cn_tcb *tcb, uint64_t now)
{
	tcb->ssthresh = cn__tcp_loss_ssthresh(tcb);
	tcb->recover = tcb->snd_max;
	tcb->flags |= TF_RECOVER;
	tcb->flags &= ~TF_RTT; /* Karn */
	tcb->st.fast_rexmit++;
	tcb->rexmit_nxt = tcb->snd_una;
	tcb->rexmit_round_at = tcb->rexmit_last_at = now;
	if (!tcb->nsacked || !sack_rexmit(tcb, 1, now))
		cn__tcp_send_one(tcb, 0, min32(tcb->sb->cc, tcb->mss), now);
	tcb->cwnd = tcb->ssthresh + 3u * tcb->mss;
	tcb->rtx_at = now + tcb->rto;
}

/* ---------------- RACK-TLP (RFC 8985), simplified ------------------------
 * Without a transmission time per segment: data SACKed above a hole was
 * sent after it (the hole's first transmission), so once the SACK is a
 * reordering window old the hole is lost (RACK's rule, with the SACK's
 * arrival standing for the SACKed segment's send time plus its RTT); a
 * retransmitted hole still open an SRTT plus that window after the last
 * retransmission was lost again; a tail with nothing behind it to be
 * SACKed is probed (TLP). Times are in the caller's ticks. */

/* The reordering window: SRTT / 4 (RFC 8985's min_rtt / 4, from the
 * smoothed RTT this TCB keeps), plus a tick for the clock's granularity. */
static inline uint32_t rack_reo_wnd(const struct cn_tcb *tcb)
{
	return (tcb->srtt8 >> 5) + 1;
}

/* Outside recovery, with SACKed data above snd_una: is the hole lost? By
 * RFC 6675's DupThresh, or (RACK) by the reordering window's expiry. */
static bool rack_lost(struct cn_tcb *tcb, uint64_t now)
{
	if (sack_lost(tcb))
		return true;
	if (tcb->rack_on && tcb->srtt8 && now - tcb->sack_first_at > rack_reo_wnd(tcb)) {
		tcb->st.rack_recoveries++;
		return true;
	}
	return false;
}

/* In recovery: holes not sent since the last one are sent; when every
 * hole was, and more than an SRTT plus the reordering window passed since
 * the last retransmission, what is still a hole was lost again: another
 * round from snd_una. @p budget segments at most. */
static void rack_rexmit_round(struct cn_tcb *tcb, unsigned budget, uint64_t now)
{
	uint64_t sent;

	if (sack_rexmit(tcb, budget, now) ||
	    now - tcb->rexmit_last_at <= (tcb->srtt8 >> 3) + rack_reo_wnd(tcb))
		return;
	sent = tcb->st.sack_rexmit;
	tcb->rexmit_nxt = tcb->snd_una;
	tcb->rexmit_round_at = now;
	(void)sack_rexmit(tcb, budget, now);
	tcb->st.rexmit_lost += tcb->st.sack_rexmit - sent;
}

/* The probe timeout (RFC 8985 7.2): 2 SRTT plus two ticks (Linux's
 * minimum), plus the peer's delayed ACK when at most one segment is out:
 * rto_min / 4 (RFC 8985's WCDelAckT is 200 ms; a quarter of Linux's 200 ms
 * minimum RTO covers Linux's 40 ms delayed-ACK timer, and a probe that
 * comes too early costs one duplicate segment, an RTO 200 ms). */
static inline uint32_t tlp_pto(const struct cn_tcb *tcb)
{
	uint32_t pto = (tcb->srtt8 >> 2) + 2;

	if (tcb->snd_max - tcb->snd_una <= tcb->mss)
		pto += tcb->rto_min / 4;
	return pto;
}

/* The tail-loss probe (RFC 8985 7.3): one new segment if the peer's
 * window takes it (the congestion window lifted by one segment for it),
 * else the last segment sent again; then the RTO is armed anew. */
static void tlp_send(struct cn_tcb *tcb, uint64_t now)
{
	uint32_t nxt = tcb->snd_nxt, cw = tcb->cwnd, flight, dend, len;

	tcb->flags &= ~(TF_TLPREX | TF_TLPDUP);
	tcb->cwnd = tcb->snd_nxt - tcb->snd_una + tcb->mss;
	(void)cn__tcp_output(tcb, now);
	tcb->cwnd = cw;
	if (tcb->snd_nxt == nxt) {
		flight = tcb->snd_max - tcb->snd_una;
		dend = min32(flight, tcb->sb->cc); /* the data's end (a FIN after it) */
		len = min32(dend, tcb->mss);
		if (cn__tcp_send_one(tcb, dend - len, len, now) < 0)
			return;
		tcb->flags |= TF_TLPREX;
	}
	tcb->st.tlp_probes++;
	tcb->flags |= TF_TLP;
	tcb->tlp_high = tcb->snd_max;
	tcb->rtx_at = now + tcb->rto;
}

/* Everything sent before the probe is acknowledged (RFC 8985 7.4): a
 * probe that resent data and drew no D-SACK was the only copy to arrive,
 * so it repaired a loss the congestion control has not seen: the
 * response of a fast recovery (RFC 5681 3.2's ssthresh, cwnd to it). */
static void tlp_end(struct cn_tcb *tcb)
{
	if ((tcb->flags & (TF_TLPREX | TF_TLPDUP | TF_RECOVER)) == TF_TLPREX) {
		tcb->ssthresh = cn__tcp_loss_ssthresh(tcb);
		if (tcb->cwnd > tcb->ssthresh)
			tcb->cwnd = tcb->ssthresh;
		tcb->st.tlp_repairs++;
	}
	tcb->flags &= ~(TF_TLP | TF_TLPREX | TF_TLPDUP);
}

void cn__tcp_rack_timer(struct cn_tcb *tcb, uint64_t now)
{
	if (!tcb->srtt8 || tcb->snd_una == tcb->snd_max)
		return;
	if (tcb->nsacked)
		sack_prune(tcb);
	if (tcb->nsacked && tcb->sack_on) {
		if (!(tcb->flags & TF_RECOVER)) {
			if (rack_lost(tcb, now))
				enter_recovery(tcb, now);
			return;
		}
		rack_rexmit_round(tcb, 2, now);
	}
	/* The RTO timer was armed at rtx_at - rto (the last ACK that moved
	 * snd_una, or the first transmission): the PTO counts from there. */
	if ((tcb->flags & TF_TLP) && cn_seq_lt(tcb->snd_una, tcb->tlp_high))
		return;
	{
		uint32_t pto = tlp_pto(tcb);
		if (pto < tcb->rto && now - (tcb->rtx_at - tcb->rto) >= pto)
			tlp_send(tcb, now);
	}
}

/* Out-of-order segment [seq, seq+len) kept by reference, sorted by seq.
 * Returns false when it was not kept (queue off/full, or a duplicate). */
static bool ooo_insert(struct cn_tcb *tcb, struct cn_mbuf *m, uint32_t off, uint32_t seq,
		       uint32_t len)
{
	struct cn_mbuf **pp = &tcb->ooo;

	if (tcb->ooo_n >= tcb->ooo_max)
		return false;
	while (*pp && cn_seq_lt((*pp)->seq, seq))
		pp = &(*pp)->nextpkt;
	if (*pp && (*pp)->seq == seq && (*pp)->len >= len)
		return false;
	m->data += off;
	m->len = m->pkt_len = len;
	m->seq = seq;
	m->nextpkt = *pp;
	*pp = m;
	tcb->ooo_n++;
	tcb->st.ooo_queued++;
	return true;
}

/* After rcv_nxt advanced: deliver queued segments that now fit. */
static void ooo_drain(struct cn_tcb *tcb)
{
	struct cn_mbuf *m;

	while ((m = tcb->ooo) && cn_seq_leq(m->seq, tcb->rcv_nxt)) {
		uint32_t skip = tcb->rcv_nxt - m->seq;
		tcb->ooo = m->nextpkt;
		tcb->ooo_n--;
		m->nextpkt = NULL;
		if (skip >= m->len) {
			cn_mbuf_free_chain(m); /* wholly duplicate */
			continue;
		}
		tcb->rcv_nxt += m->len - skip;
		tcb->st.bytes_in += m->len - skip;
		deliver(tcb, m, skip, m->len - skip);
	}
}

/* The frame of a segment consumed whole: it is one mbuf unless a chain
 * was pulled up, so the common case skips the chain walk's call. Without
 * @p chain (a constant) it is one mbuf: cn_net_input sends a frame with
 * m->next to the chain branch, and the fast branch keeps the frame as it
 * came. */
static inline __attribute__((always_inline)) void free_frame(struct cn_mbuf *m, const bool chain)
{
	struct cn_mbuf *n = cn_mbuf_free(m);

	if (chain && CN_UNLIKELY(n != NULL))
		cn_mbuf_free_chain(n);
}

static enum cn_drop tcp_input_slow(struct cn_net *net, struct cn_tcb *tcb, struct cn_mbuf *m,
				   struct cn_pkt_info *pi, uint64_t now);

/* Header prediction here, the rest in tcp_input_slow(): kept apart so the
 * predicted cases pay for few registers saved and no stack frame of the
 * full path. Inlined into both branches of cn_net_input below. */
static inline __attribute__((always_inline)) enum cn_drop
tcp_input_predict(struct cn_net *net, struct cn_tcb *tcb, struct cn_mbuf *m, struct cn_pkt_info *pi,
		  uint64_t now, const bool chain)
{
	uint32_t seq = pi->seq, ack = pi->ack, len = pi->pay_len;
	uint32_t wnd = (uint32_t)pi->win << tcb->snd_wscale;
	uint8_t fl = pi->tcp_flags;

	/* ---------------- header prediction ---------------- */
	if ((fl & (CN_TCP_SYN | CN_TCP_FIN | CN_TCP_RST | CN_TCP_URG | CN_TCP_ACK)) == CN_TCP_ACK &&
	    seq == tcb->rcv_nxt && wnd == tcb->snd_wnd && tcb->snd_nxt == tcb->snd_max &&
	    !(tcb->flags & (TF_RECOVER | TF_TLP)) &&
	    (!tcb->ts_on || (pi->has_ts && cn_seq_geq(pi->ts_val, tcb->ts_recent)))) {
		if (len == 0) {
			if (cn_seq_gt(ack, tcb->snd_una) && cn_seq_leq(ack, tcb->snd_max)) {
				/* Header only (20 or 32 bytes): summed inline. */
				if (!(pi->flags & CN_PARSE_L4_CSUM_GOOD) &&
				    CN_UNLIKELY(cn_csum_fold(cn__l4_hdr_sum(pi)) != 0xffff)) {
					cn__drop(net, CN_DROP_TCP_CSUM);
					free_frame(m, chain);
					return CN_DROP_TCP_CSUM;
				}
				if (pi->has_ts)
					tcb->ts_recent = pi->ts_val;
				tcb->st.hp_ack++;
				tcb->st.segs_in++;
				tcb->dupacks = 0;
				ack_advance(tcb, ack, now);
				free_frame(m, chain);
				if (cn__tcp_has_output(tcb))
					cn__tcp_output(tcb, now);
				return CN_DROP_NONE;
			}
		} else if (ack == tcb->snd_una && tcb->ooo_n == 0 && len <= rcv_space(tcb)) {
			if (!deliver_check(tcb, m, pi, chain))
				return CN_DROP_TCP_CSUM;
			if (pi->has_ts)
				tcb->ts_recent = pi->ts_val;
			tcb->rcv_nxt += len;
			tcb->st.hp_data++;
			tcb->st.segs_in++;
			tcb->st.bytes_in += len;
			ack_data(tcb, now);
			if (tcb->flags & TF_ACKNOW)
				ack_data_out(tcb, now);
			return CN_DROP_NONE;
		}
	}
	return CN_DROP_MAX; /* not predicted */
}

/* The general branch: a frame the fast branch did not take. Its own
 * parsed-fields struct, whose address escapes (the full parser, the slow
 * hook), so the fast branch's stays in registers. */
static __attribute__((noinline)) enum cn_drop tcp_input_general(struct cn_net *net,
								struct cn_mbuf *m, uint64_t now)
{
	struct cn_pkt_info pi;
	struct cn_tcb *tcb;
	enum cn_drop r = cn__net_rx_parse(net, &m, &pi, now);

	if (r != CN_DROP_MAX)
		return r; /* not TCP for us: dealt with in net.c */
	tcb = cn__tcp_find(net, &pi);
	if (!tcb) {
		/* Connection management is the slow-path hook's. */
		r = CN_DROP_TCP_NO_CONN;
		if (cn__net_slow(net, &m, &r))
			return CN_DROP_NONE;
		cn__drop(net, r);
		cn_mbuf_free_chain(m);
		return r;
	}
	r = tcp_input_predict(net, tcb, m, &pi, now, true);
	return r != CN_DROP_MAX ? r : tcp_input_slow(net, tcb, m, &pi, now);
}

/* The fast branch, for a frame of one mbuf or (@p chain, a constant) a
 * split chain, headers in the first mbuf and the payload in the second
 * (net.h, "RX"), its payload read where it lies. Parse, lookup and
 * prediction in one frame, so the parsed fields reach the prediction in
 * registers; anything else goes to the general branch, which parses it
 * again and counts it there (rx_tcp included) exactly once. */
static inline __attribute__((always_inline)) enum cn_drop
tcp_input_fast(struct cn_net *net, struct cn_mbuf *m, uint64_t now, const bool chain)
{
	struct cn_pkt_info pi, slow;
	struct cn_tcb *tcb;
	enum cn_drop r;
	bool ok;

	if (chain)
		ok = cn__parse_fast_at(m->data, m->pkt_len, m->len, cn__rx_flags(net, m), &pi,
				       true) &&
		     cn__chain_pay(m, &pi);
	else
		ok = cn__parse_fast(m->data, m->len, cn__rx_flags(net, m), &pi);
	if (CN_UNLIKELY(!ok || !cn_be32_eq(pi.daddr, net->p.addr)))
		return tcp_input_general(net, m, now);
	tcb = cn__tcp_find(net, &pi);
	if (CN_UNLIKELY(tcb == NULL))
		return tcp_input_general(net, m, now);
	net->st.rx_tcp++;
	if (chain)
		net->st.rx_chain++;
	r = tcp_input_predict(net, tcb, m, &pi, now, chain);
	if (CN_LIKELY(r != CN_DROP_MAX))
		return r;
	/* The full path gets a copy: pi's address never escapes, so the
	 * fast branch may keep its fields in registers. */
	slow = pi;
	cn__parse_fast_rest(&slow, chain ? m->pkt_len : m->len);
	if (!chain)
		slow.pay = slow.frame + slow.pay_off;
	return tcp_input_slow(net, tcb, m, &slow, now);
}

/* The fast branch's two instances, out of line: a frame of one mbuf runs
 * exactly the code it would without chains, and the entry below stays
 * three instructions and a jump (no stack frame to set up first). */
static __attribute__((noinline)) enum cn_drop tcp_input_one(struct cn_net *net, struct cn_mbuf *m,
							    uint64_t now)
{
	return tcp_input_fast(net, m, now, false);
}

static __attribute__((noinline)) enum cn_drop tcp_input_chain(struct cn_net *net,
							      struct cn_mbuf *m, uint64_t now)
{
	return tcp_input_fast(net, m, now, true);
}

/* cn_net_input (net.h) is TCP's input: every received frame enters the
 * stack here, once, and takes the fast branch or the general one (see the
 * top of this file); what is not TCP leaves for net.c from the general
 * branch and never comes back. */
enum cn_drop cn_net_input(struct cn_net *net, struct cn_mbuf *m, uint64_t now)
{
	net->st.rx_frames++;
	if (CN_LIKELY(!m->next))
		return tcp_input_one(net, m, now);
	return tcp_input_chain(net, m, now);
}

#define BURST_PF 2 /* frames ahead whose headers cn_net_input_burst prefetches */

/* A device burst: the frames, then the ACKs deferred during it (ack_data,
 * ack_defer). A connection whose ACK went out meanwhile (out-of-order
 * data, the stretch bound, data it sent) has rcv_segs 0 and needs none;
 * one left with a single segment keeps its delayed-ACK timer as outside
 * a burst. */
void cn_net_input_burst(struct cn_net *net, struct cn_mbuf **m, unsigned n, uint64_t now)
{
	/* A nested call (a frame's handling fed the stack another burst)
	 * leaves the flush to the outer one. */
	bool outer = !net->in_burst;

	net->in_burst = 1;
	for (unsigned i = 0; i < n; i++) {
		/* The headers BURST_PF frames ahead: a device's prefetch of a
		 * whole burst at its start leaves these lines to be fetched
		 * again once the checksums of the frames before have streamed
		 * through L1. */
		if (i + BURST_PF < n) {
			const uint8_t *h = m[i + BURST_PF]->data;
			__builtin_prefetch(h, 0, 3);
			__builtin_prefetch(h + CN_CACHE_LINE, 0, 3);
		}
		cn_net_input(net, m[i], now);
	}
	if (!outer)
		return;
	net->in_burst = 0;
	while (net->nowed) {
		struct cn_tcb *tcb = net->owed[--net->nowed];
		tcb->flags &= ~TF_ACKBURST;
		if (tcb->rcv_segs >= 2 || (tcb->rcv_segs && !tcb->delack_ticks)) {
			tcb->flags |= TF_ACKNOW;
			tcb->st.burst_acks++;
			cn__tcp_output(tcb, now);
		}
	}
}

/* The full path, in the order of RFC 9293 3.10.7.4 for ESTABLISHED. */
static __attribute__((noinline)) enum cn_drop
tcp_input_slow(struct cn_net *net, struct cn_tcb *tcb, struct cn_mbuf *m, struct cn_pkt_info *pi,
	       uint64_t now)
{
	uint32_t seq = pi->seq, ack = pi->ack, len = pi->pay_len, off = pi->pay_off;
	uint32_t wnd = (uint32_t)pi->win << tcb->snd_wscale;
	uint8_t fl = pi->tcp_flags;
	enum cn_drop ret = CN_DROP_NONE;
	bool fin, sack_done = false;

	tcb->st.slow_path++;
	if ((fl & (CN_TCP_SYN | CN_TCP_RST)) || !(fl & CN_TCP_ACK)) {
		/* Connection management is the host stack's (the slow-path
		 * hook: RST, SYN); a segment without ACK is invalid in
		 * ESTABLISHED (RFC 9293 3.10.7.4). */
		enum cn_drop why = CN_DROP_TCP_FLAGS;
		if (cn__net_slow(net, &m, &why))
			return CN_DROP_NONE;
		cn__drop(net, why);
		cn_mbuf_free_chain(m);
		return why;
	}
	if (!cn_net_l4_csum_ok(pi))
		goto bad_csum;
	if (tcb->ts_on && pi->has_ts && cn_seq_lt(pi->ts_val, tcb->ts_recent)) {
		/* PAWS (RFC 7323 5.3): an old duplicate; ACK and drop. */
		cn__drop(net, CN_DROP_TCP_PAWS);
		cn_mbuf_free_chain(m);
		tcb->flags |= TF_ACKNOW;
		cn__tcp_output(tcb, now);
		return CN_DROP_TCP_PAWS;
	}
	if (cn_seq_gt(ack, tcb->snd_max)) {
		/* Acknowledges something never sent. */
		cn__drop(net, CN_DROP_TCP_ACK);
		cn_mbuf_free_chain(m);
		tcb->flags |= TF_ACKNOW;
		cn__tcp_output(tcb, now);
		return CN_DROP_TCP_ACK;
	}
	fin = (fl & CN_TCP_FIN) != 0;

	/* Trim to the receive window (BSD's todrop logic: old bytes cut from
	 * the front, bytes past the window from the back; the ACK field of
	 * the segment is processed even if no byte is kept). */
	if (len > 0 || fin) {
		uint32_t win = rcv_space(tcb);
		if (cn_seq_lt(seq, tcb->rcv_nxt)) {
			uint32_t todrop = tcb->rcv_nxt - seq;
			if (todrop >= len) {
				if (len)
					tcb->st.dup_segs_in++;
				if (fin && todrop > len)
					fin = false; /* FIN already received */
				todrop = len;
				tcb->flags |= TF_ACKNOW;
			}
			off += todrop;
			len -= todrop;
			seq += todrop;
		}
		if (len > 0 && cn_seq_geq(seq, tcb->rcv_nxt + win)) {
			ret = CN_DROP_TCP_WINDOW;
			cn__drop(net, ret);
			len = 0;
			fin = false;
			tcb->flags |= TF_ACKNOW;
		} else if (len > 0 && cn_seq_gt(seq + len, tcb->rcv_nxt + win)) {
			len = tcb->rcv_nxt + win - seq;
			fin = false;
		}
	}

	/* RFC 7323 4.3: remember the TSval of a segment covering rcv_nxt. */
	if (tcb->ts_on && pi->has_ts && cn_seq_leq(seq, tcb->rcv_nxt))
		tcb->ts_recent = pi->ts_val;

	/* ---------------- ACK ---------------- */
	if (CN_UNLIKELY(pi->nsack) && tcb->sack_on)
		sack_update(tcb, pi, now);
	if (cn_seq_leq(ack, tcb->snd_una)) {
		if (ack == tcb->snd_una && pi->pay_len == 0 && !fin && wnd == tcb->snd_wnd &&
		    tcb->snd_una != tcb->snd_max) {
			tcb->st.dupacks_in++;
			if (tcb->dupacks < 255)
				tcb->dupacks++;
			if (tcb->dupacks == 3 && !(tcb->flags & TF_RECOVER)) {
				enter_recovery(tcb, now);
				sack_done = true;
			} else if (tcb->dupacks > 3 && (tcb->flags & TF_RECOVER)) {
				tcb->cwnd += tcb->mss; /* a segment left the network */
			}
		} else if (ack == tcb->snd_una && tcb->snd_una == tcb->snd_max) {
			tcb->dupacks = 0;
		}
	} else {
		uint32_t acked = ack - tcb->snd_una;
		if (CN_UNLIKELY(tcb->flags & TF_RTOCHK))
			rto_check(tcb, pi, now);
		if (tcb->flags & TF_RECOVER) {
			if (cn_seq_geq(ack, tcb->recover)) {
				tcb->flags &= ~TF_RECOVER;
				tcb->cwnd = tcb->ssthresh;
				tcb->dupacks = 0;
				ack_advance(tcb, ack, now);
			} else {
				/* Partial ACK: the next hole was lost too. */
				ack_advance(tcb, ack, now);
				sack_prune(tcb);
				if (!tcb->nsacked || !sack_rexmit(tcb, 2, now))
					cn__tcp_send_one(tcb, 0, min32(tcb->sb->cc, tcb->mss), now);
				sack_done = true;
				tcb->cwnd = tcb->cwnd > acked ? tcb->cwnd - acked + tcb->mss : tcb->mss;
			}
		} else {
			tcb->dupacks = 0;
			ack_advance(tcb, ack, now);
		}
	}
	if (CN_UNLIKELY(tcb->flags & TF_TLP) && cn_seq_geq(tcb->snd_una, tcb->tlp_high))
		tlp_end(tcb);
	/* SACK-based loss detection (RFC 6675 IsLost, 5): three segments'
	 * worth SACKed above snd_una starts recovery whatever the ACK is
	 * (with data, a window change: no duplicate ACK by RFC 5681's
	 * rule); in recovery, each ACK with SACK blocks sends a hole. */
	if (CN_UNLIKELY(pi->nsack) && tcb->nsacked && (tcb->flags & TF_RECOVER)) {
		/* What the receiver holds has left the network: the window
		 * in recovery is ssthresh plus the SACKed bytes (RFC 6675's
		 * pipe, as NewReno inflates by a segment per duplicate ACK),
		 * so that new data keeps ACKs, and SACK blocks, coming. */
		uint32_t w = tcb->ssthresh + sacked_bytes(tcb);
		if (w > tcb->cwnd)
			tcb->cwnd = w;
	}
	if (CN_UNLIKELY(pi->nsack) && tcb->nsacked && !sack_done) {
		if (!(tcb->flags & TF_RECOVER)) {
			if (rack_lost(tcb, now))
				enter_recovery(tcb, now);
		} else if (tcb->rack_on) {
			rack_rexmit_round(tcb, 2, now);
		} else if (!sack_rexmit(tcb, 2, now) &&
			   now - tcb->rexmit_round_at > 2u * (tcb->srtt8 >> 3) + 1) {
			/* Every hole was sent once, and more than two round
			 * trips ago: what still is a hole was lost again.
			 * Another round, rather than waiting for the RTO. */
			tcb->rexmit_nxt = tcb->snd_una;
			tcb->rexmit_round_at = now;
			(void)sack_rexmit(tcb, 2, now);
		}
	}
	/* Window update (RFC 9293 3.10.7.4, SND.WL1/WL2 rule). */
	if (cn_seq_lt(tcb->snd_wl1, seq) ||
	    (tcb->snd_wl1 == seq && cn_seq_leq(tcb->snd_wl2, ack))) {
		tcb->snd_wnd = wnd;
		tcb->snd_wl1 = seq;
		tcb->snd_wl2 = ack;
		if (wnd > tcb->max_sndwnd)
			tcb->max_sndwnd = wnd;
	}

	/* ---------------- data ---------------- */
	if (len > 0 && m->next) {
		/* A split chain: keep its payload mbuf alone (off moves from
		 * the frame's offsets to that mbuf's). */
		uint32_t base;
		m = cn__pay_mbuf(m, pi, &base, NULL);
		off = off - pi->pay_off + base;
	}
	if (len > 0) {
		if (seq == tcb->rcv_nxt) {
			bool had_ooo = tcb->ooo_n != 0;
			tcb->rcv_nxt += len;
			tcb->st.segs_in++;
			tcb->st.bytes_in += len;
			deliver(tcb, m, off, len);
			m = NULL;
			ooo_drain(tcb);
			if (had_ooo) {
				tcb->flags |= TF_ACKNOW; /* RFC 5681 4.2: fill a hole at once */
			} else {
				ack_data(tcb, now);
				if (tcb->flags & TF_ACKNOW)
					(void)ack_defer(tcb);
			}
		} else {
			/* A hole before it: keep it or not, and say with a
			 * duplicate ACK what we miss (RFC 5681 4.2). */
			tcb->flags |= TF_ACKNOW;
			fin = false;
			tcb->sack_recent = seq;
			if (ooo_insert(tcb, m, off, seq, len)) {
				m = NULL;
			} else {
				tcb->st.ooo_dropped++;
				ret = CN_DROP_TCP_OOO;
				cn__drop(net, ret);
			}
		}
	}
	if (fin && seq + len == tcb->rcv_nxt && !(tcb->flags & TF_FIN)) {
		tcb->rcv_nxt++;
		tcb->flags |= TF_FIN | TF_ACKNOW;
	}
	if (m)
		cn_mbuf_free_chain(m);
	if (tcb->sack_on && tcb->ooo && (tcb->flags & TF_ACKNOW))
		(void)cn__tcp_send_sack_ack(tcb, now); /* what we hold, past the hole */
	if ((tcb->flags & TF_ACKNOW) || cn__tcp_has_output(tcb))
		cn__tcp_output(tcb, now);
	return ret;

bad_csum:
	cn__drop(net, CN_DROP_TCP_CSUM);
	cn_mbuf_free_chain(m);
	return CN_DROP_TCP_CSUM;
}
