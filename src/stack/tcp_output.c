/* SPDX-License-Identifier: BSD-2-Clause */
/* tcp_output: the send decision and segment construction.
 *
 * A segment is the header template copied into a descriptor's header room
 * and patched, plus references to the payload in the send buffer. Both
 * checksums are finished from partial sums taken at open over the
 * template's constant words, so per segment only the words that change
 * (lengths, id, seq, ack, window, timestamps) are added; the payload's sum
 * comes from the checksum mode (nothing, stored chunk sums, the fused
 * copy, or a separate pass). */
#include <errno.h>

#include "tcp_impl.h"

static inline uint32_t min32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

/* The window to advertise, as the scaled field. Never shrinks the right
 * edge already advertised (RFC 9293 3.8.6.2.2). It depends only on rcv_nxt
 * and the receive queue's bytes (the buffer size and the scale are fixed
 * at open), so a sender, whose receive side does not move, reuses the
 * field it computed last: the right edge it implies is already in
 * rcv_adv, which only grows. */
static __attribute__((noinline)) uint16_t rcv_window_compute(struct cn_tcb *tcb)
{
	uint32_t cc = tcb->rcvq.sb.cc;
	uint32_t w = cn__tcp_rcv_free(tcb) >> tcb->rcv_wscale;
	uint32_t edge;

	if (w > 0xffff)
		w = 0xffff;
	edge = tcb->rcv_nxt + (w << tcb->rcv_wscale);
	if (cn_seq_gt(edge, tcb->rcv_adv))
		tcb->rcv_adv = edge;
	tcb->win_nxt = tcb->rcv_nxt;
	tcb->win_cc = cc;
	tcb->win_field = (uint16_t)w;
	return (uint16_t)w;
}

static inline uint16_t rcv_window(struct cn_tcb *tcb)
{
	if (CN_LIKELY(tcb->win_nxt == tcb->rcv_nxt && tcb->win_cc == tcb->rcvq.sb.cc))
		return tcb->win_field;
	return rcv_window_compute(tcb);
}

/* Partial sum of p's payload pieces, summed where they lie (SEPARATE, or
 * STORED when the ring's chunk sums do not cover the range). */
static uint32_t sum_pieces(const struct cn_pkt *p)
{
	uint32_t s = 0, at = 0;

	for (uint32_t i = 0; i < p->npieces; i++) {
		s = cn_csum_combine(s, cn_csum_partial(p->piece[i].base, p->piece[i].len, 0), at);
		at += p->piece[i].len;
	}
	return s;
}

/* Ring send buffer, any mode but FUSED: the packet references the ring's
 * bytes (1 piece, 2 across the ring's end). Inlined into send_segment:
 * the common TX case pays no call and no second stack frame. Offset 0 of
 * the send buffer is snd_una (ack_advance drops exactly the acknowledged
 * bytes; after the FIN is acknowledged cc is 0), so the ring's fixed
 * layout maps the range without asking the ring; STORED asks it, for the
 * chunk sums. */
static inline __attribute__((always_inline)) int attach_ring(struct cn_tcb *tcb, struct cn_pkt *p,
							      uint32_t off, uint32_t len,
							      uint32_t *psum)
{
	struct cn_sb_seg seg;
	uint32_t cc = tcb->sb->cc, idx, k;

	if (tcb->csum_mode == CN_TCP_CSUM_STORED) {
		cn_sbring_seg(tcb->ring, off, len, &seg);
		len = seg.len;
		if (len == 0)
			return 0;
		/* Both pieces whatever npieces says (the ring view always
		 * fills two): two 16-byte moves. */
		p->piece[0] = seg.piece[0];
		p->piece[1] = seg.piece[1];
		p->npieces = (uint16_t)seg.npieces;
		p->pay_len = len;
		if (seg.csum_valid) {
			*psum = seg.csum;
		} else {
			tcb->st.csum_fallback++;
			*psum = sum_pieces(p);
		}
		return (int)len;
	}
	if (off >= cc)
		return 0;
	if (len > cc - off)
		len = cc - off;
	idx = (tcb->snd_una + off - tcb->ring_seq0) & tcb->ring_mask;
	k = tcb->ring_mask + 1 - idx;
	p->piece[0].base = tcb->ring_base + idx;
	if (CN_LIKELY(len <= k)) {
		p->piece[0].len = len;
		p->npieces = 1;
	} else {
		p->piece[0].len = k;
		p->piece[1].base = tcb->ring_base;
		p->piece[1].len = len - k;
		p->npieces = 2;
	}
	p->pay_len = len;
	if (tcb->csum_mode != CN_TCP_CSUM_OFFLOAD)
		*psum = sum_pieces(p);
	return (int)len;
}

/* Attach payload [off, off+len) of the send buffer to p. Returns the
 * number of bytes attached (<= len: a chain view holds at most
 * CN_PKT_PIECES pieces) and its partial sum in *psum when the mode needs
 * one, or a negative errno. */
static int attach_payload(struct cn_tcb *tcb, struct cn_pkt *p, uint32_t off, uint32_t len,
			  uint32_t *psum)
{
	struct cn_sb_seg seg;
	unsigned mode = tcb->csum_mode;

	if (tcb->sb_kind == CN_SOCKBUF_RING) {
		if (mode != CN_TCP_CSUM_FUSED)
			return attach_ring(tcb, p, off, len, psum);
		cn_sbring_seg(tcb->ring, off, len, &seg);
	} else {
		cn_sbchain_seg(&tcb->chain, off, len, &seg);
	}
	len = seg.len;
	if (len == 0)
		return 0;

	if (mode == CN_TCP_CSUM_FUSED) {
		struct cn_mbuf *c = cn_mbuf_get_cluster(tcb->net->p.mpool, tcb->net->p.cpool);
		uint32_t s = 0, at = 0;
		if (!c)
			return -ENOBUFS;
		for (uint32_t i = 0; i < seg.npieces; i++) {
			uint32_t ps = cn_csum_copy(c->data + at, seg.piece[i].base, seg.piece[i].len, 0);
			s = cn_csum_combine(s, ps, at);
			at += seg.piece[i].len;
		}
		c->len = c->pkt_len = len;
		p->ref = c;
		p->piece[0].base = c->data;
		p->piece[0].len = len;
		p->npieces = 1;
		p->pay_len = len;
		*psum = s;
		return (int)len;
	}

	{
		/* Chain: references keep the clusters alive after the ACK
		 * frees the sockbuf's own mbufs, until the device completes. */
		struct cn_mbuf *r = cn_mbuf_copy_ref(seg.m, seg.moff, len), *x;
		uint32_t n = 0;
		if (!r)
			return -ENOBUFS;
		for (x = r; x; x = x->next) {
			if (x->len == 0)
				continue;
			p->piece[n].base = x->data;
			p->piece[n].len = x->len;
			n++;
		}
		p->ref = r;
		p->npieces = (uint16_t)n;
	}
	p->pay_len = len;
	if (mode != CN_TCP_CSUM_OFFLOAD)
		*psum = sum_pieces(p);
	return (int)len;
}

/* Build and transmit one segment: payload [off, off+len) of the send
 * buffer (len 0: a pure ACK) with sequence number snd_una + off, and the
 * FIN flag when @p fin and the whole payload asked for fitted (the FIN's
 * sequence number follows the segment's last byte).
 * Returns payload bytes sent (>= 0) or a negative errno. */
static inline __attribute__((always_inline)) int
send_segment_inline(struct cn_tcb *tcb, uint32_t off, uint32_t len, bool fin, uint64_t now)
{
	struct cn_net *net = tcb->net;
	struct cn_pkt *p = cn__pkt_get(net);
	uint32_t hl = tcb->hdr_len, paysum = 0, seq = tcb->snd_una + off;
	uint8_t *h;
	uint64_t s;
	int rc;

	if (!p)
		return -ENOBUFS;
	h = p->room + CN_PKT_HDR_ROOM - hl;
	/* Constant sizes let the compiler copy the template with a few
	 * vector moves instead of a memcpy call. */
	if (hl == CN_TCP_TMPL_MAX)
		memcpy(h, tcb->tmpl, CN_TCP_TMPL_MAX);
	else
		memcpy(h, tcb->tmpl, CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN);
	p->hdr = h;
	p->hdr_len = (uint16_t)hl;

	if (len) {
		if (CN_LIKELY(tcb->sb_kind == CN_SOCKBUF_RING &&
				  tcb->csum_mode != CN_TCP_CSUM_FUSED))
			rc = attach_ring(tcb, p, off, len, &paysum);
		else
			rc = attach_payload(tcb, p, off, len, &paysum);
		if (rc < 0) {
			cn_pkt_free(p);
			return rc;
		}
		if (CN_UNLIKELY(fin) && (uint32_t)rc != len)
			fin = false;
		len = (uint32_t)rc;
	}

	{
		struct cn_ipv4_hdr *ip = (struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);
		struct cn_tcp_hdr *th = (struct cn_tcp_hdr *)(h + CN_ETH_HLEN + CN_IPV4_HLEN);
		uint16_t l4len = (uint16_t)(hl - CN_ETH_HLEN - CN_IPV4_HLEN + len);
		uint16_t tot = cn_hton16((uint16_t)(l4len + CN_IPV4_HLEN));
		uint16_t id = cn_hton16(net->ip_id++);
		uint32_t seq_n = cn_hton32(seq), ack_n = cn_hton32(tcb->rcv_nxt);
		uint16_t win_n = cn_hton16(rcv_window(tcb));

		ip->total_len = tot;
		ip->id = id;
		ip->csum = (uint16_t)~cn__csum_fold16(tcb->ip_sum0 + tot + id);
		uint32_t tsv = 0, tse = 0;

		th->seq = seq_n;
		th->ack = ack_n;
		th->win = win_n;
		if (fin)
			th->flags = CN_TCP_ACK | CN_TCP_FIN;
		if (tcb->ts_on) {
			tsv = cn_hton32(tcb->no_ts_clock ? 0 : (uint32_t)now);
			tse = cn_hton32(tcb->ts_recent);
			memcpy((uint8_t *)th + CN_TCP_HLEN + 4, &tsv, 4);
			memcpy((uint8_t *)th + CN_TCP_HLEN + 8, &tse, 4);
		}
		if (tcb->csum_mode == CN_TCP_CSUM_OFFLOAD) {
			/* The NIC sums header and payload; it wants the
			 * pseudo-header sum, folded, not complemented. */
			th->csum = cn__csum_fold16(tcb->ph_sum0 + cn__csum_be16(l4len));
			cn__pkt_set_offs(p, CN_PKT_TX_L4_CSUM, 16);
		} else {
			cn__pkt_set_offs(p, 0, 0);
			/* The template's constant words are in tcp_sum0; the
			 * words patched above are added here (zero TS words
			 * when off). The FIN bit sits in the flags byte, one
			 * of the summed words: add its memory-order weight. */
			s = (uint64_t)tcb->tcp_sum0 + cn__csum_be16(l4len) + paysum + seq_n + ack_n +
			    win_n + tsv + tse;
			if (fin)
				s += cn_hton16(CN_TCP_FIN);
			th->csum = (uint16_t)~cn_csum_fold(s);
		}
	}

	/* The ACK rides on this segment. */
	tcb->flags &= ~(TF_ACKNOW | TF_DELACK);
	tcb->rcv_segs = 0;
	tcb->delack_at = 0;

	rc = cn__net_xmit(net, p, hl + len);
	if (rc < 0)
		return rc;
	if (fin)
		tcb->st.fins_out++;
	if (len || fin) {
		if (len) {
			tcb->st.segs_out++;
			tcb->st.bytes_out += len;
		}
		if (cn_seq_lt(seq, tcb->snd_max)) {
			tcb->st.rexmit_segs++;
			tcb->st.rexmit_bytes += len;
		} else if (!(tcb->flags & TF_RTT)) {
			tcb->flags |= TF_RTT;
			tcb->rtt_seq = seq;
			tcb->rtt_start = now;
		}
		if (!tcb->rtx_at)
			tcb->rtx_at = now + tcb->rto;
	} else {
		tcb->st.acks_out++;
	}
	return (int)len;
}

/* The same, out of line: the pure ACK, the bare FIN and cn__tcp_send_one
 * (retransmissions). tcp_output's data loop has its own inlined copy,
 * which saves the call and a second stack frame per data segment. */
static __attribute__((noinline)) int send_segment(struct cn_tcb *tcb, uint32_t off, uint32_t len,
						  bool fin, uint64_t now)
{
	return send_segment_inline(tcb, off, len, fin, now);
}

/* Does a segment [off, off+len) carry our FIN? It does when the
 * application shut down writing and the segment ends the data. */
static inline bool fin_here(const struct cn_tcb *tcb, uint32_t off, uint32_t len)
{
	return (tcb->flags & TF_SNDFIN) && !(tcb->flags & TF_FINACKED) && off + len == tcb->sb->cc;
}

/* The SACK blocks of the out-of-order queue (RFC 2018 4): contiguous
 * segments merged, the block holding the newest segment first, then the
 * others from the highest down; at most @p max. */
static unsigned sack_blocks(const struct cn_tcb *tcb, uint32_t *l, uint32_t *r, unsigned max)
{
	uint32_t bl[CN_OOO_MAX > 64 ? 64 : CN_OOO_MAX], br[CN_OOO_MAX > 64 ? 64 : CN_OOO_MAX];
	unsigned nb = 0, n = 0, first = 0;

	for (const struct cn_mbuf *m = tcb->ooo; m; m = m->nextpkt) {
		uint32_t a = m->seq, b = m->seq + m->len;
		if (nb && cn_seq_leq(a, br[nb - 1])) {
			if (cn_seq_gt(b, br[nb - 1]))
				br[nb - 1] = b;
		} else if (nb < sizeof(bl) / sizeof(bl[0])) {
			bl[nb] = a;
			br[nb++] = b;
		}
	}
	for (unsigned i = 0; i < nb; i++)
		if (cn_seq_leq(bl[i], tcb->sack_recent) && cn_seq_lt(tcb->sack_recent, br[i]))
			first = i;
	if (nb) {
		l[n] = bl[first];
		r[n++] = br[first];
	}
	for (unsigned i = nb; i-- > 0 && n < max;)
		if (i != first) {
			l[n] = bl[i];
			r[n++] = br[i];
		}
	return n;
}

int cn__tcp_send_sack_ack(struct cn_tcb *tcb, uint64_t now)
{
	struct cn_net *net = tcb->net;
	uint32_t l[4], r[4], hl0 = tcb->hdr_len, optlen, thl, hl, i;
	unsigned n = sack_blocks(tcb, l, r, tcb->ts_on ? 3 : 4);
	struct cn_pkt *p;
	struct cn_ipv4_hdr *ip;
	struct cn_tcp_hdr *th;
	uint8_t *h, *o;
	uint16_t v;
	int rc;

	if (!n)
		return send_segment(tcb, tcb->snd_nxt - tcb->snd_una, 0, false, now);
	p = cn__pkt_get(net);
	if (!p)
		return -ENOBUFS;
	optlen = 4 + 8 * n; /* NOP NOP SACK len, then the blocks */
	hl = hl0 + optlen;
	thl = hl - CN_ETH_HLEN - CN_IPV4_HLEN;
	h = p->room + CN_PKT_HDR_ROOM - hl;
	memcpy(h, tcb->tmpl, hl0);
	o = h + hl0;
	o[0] = CN_TCPOPT_NOP;
	o[1] = CN_TCPOPT_NOP;
	o[2] = CN_TCPOPT_SACK;
	o[3] = (uint8_t)(2 + 8 * n);
	for (i = 0; i < n; i++) {
		uint32_t a = cn_hton32(l[i]), b = cn_hton32(r[i]);
		memcpy(o + 4 + 8 * i, &a, 4);
		memcpy(o + 8 + 8 * i, &b, 4);
	}
	ip = (struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);
	th = (struct cn_tcp_hdr *)(h + CN_ETH_HLEN + CN_IPV4_HLEN);
	ip->total_len = cn_hton16((uint16_t)(CN_IPV4_HLEN + thl));
	ip->id = cn_hton16(net->ip_id++);
	ip->csum = 0;
	ip->csum = cn_csum_ipv4_hdr(ip, CN_IPV4_HLEN);
	th->seq = cn_hton32(tcb->snd_nxt);
	th->ack = cn_hton32(tcb->rcv_nxt);
	th->win = cn_hton16(rcv_window(tcb));
	th->off = (uint8_t)((thl / 4) << 4);
	if (tcb->ts_on) {
		uint32_t tsv = cn_hton32(tcb->no_ts_clock ? 0 : (uint32_t)now);
		uint32_t tse = cn_hton32(tcb->ts_recent);
		memcpy((uint8_t *)th + CN_TCP_HLEN + 4, &tsv, 4);
		memcpy((uint8_t *)th + CN_TCP_HLEN + 8, &tse, 4);
	}
	th->csum = 0;
	v = (uint16_t)~cn_csum_fold(cn_csum_partial(
		th, thl, cn_csum_pseudo_ipv4(ip->src, ip->dst, CN_IPV4_PROTO_TCP, (uint16_t)thl)));
	th->csum = v;
	p->hdr = h;
	p->hdr_len = (uint16_t)hl;
	p->l3_off = CN_ETH_HLEN;
	p->l4_off = CN_ETH_HLEN + CN_IPV4_HLEN;
	tcb->flags &= ~(TF_ACKNOW | TF_DELACK);
	tcb->rcv_segs = 0;
	tcb->delack_at = 0;
	rc = cn__net_xmit(net, p, hl);
	if (rc < 0)
		return rc;
	tcb->st.acks_out++;
	tcb->st.sack_acks_out++;
	return 0;
}

int cn__tcp_send_one(struct cn_tcb *tcb, uint32_t off, uint32_t len, uint64_t now)
{
	return send_segment(tcb, off, len, fin_here(tcb, off, len), now);
}

int cn__tcp_output(struct cn_tcb *tcb, uint64_t now)
{
	int sent = 0, rc = 0;
	bool fin;

	for (;;) {
		uint32_t off = tcb->snd_nxt - tcb->snd_una;
		uint32_t cc = tcb->sb->cc;
		uint32_t avail = cc > off ? cc - off : 0;
		uint32_t wnd = min32(tcb->snd_wnd, tcb->cwnd);
		uint32_t usable = wnd > off ? wnd - off : 0;
		uint32_t len = min32(min32(avail, usable), tcb->mss);

		if (avail == 0)
			break;
		if (tcb->flags & TF_FORCE) {
			/* Persist / window probe: one segment past the window;
			 * the peer's reply carries the current window. */
			len = min32(avail, tcb->mss);
			tcb->flags &= ~TF_FORCE;
		} else if (len == 0) {
			break;
		} else if (len < tcb->mss) {
			if (len < avail) {
				/* Window-limited runt: silly window avoidance
				 * (RFC 9293 3.8.6.2.1), wait for more window. */
				if (len < tcb->max_sndwnd / 2)
					break;
			} else if (!tcb->nodelay && tcb->snd_max != tcb->snd_una &&
				   off >= tcb->snd_max - tcb->snd_una) {
				/* Nagle: a new runt waits for the ACK. Not a
				 * retransmission (off below snd_max after a
				 * timeout): that one is what the ACK waits for. */
				break;
			}
		}
		fin = CN_UNLIKELY(tcb->flags & TF_SNDFIN) && fin_here(tcb, off, len);
		rc = send_segment_inline(tcb, off, len, fin, now);
		if (rc <= 0)
			break;
		tcb->snd_nxt += (uint32_t)rc;
		if (CN_UNLIKELY(fin) && (uint32_t)rc == len)
			tcb->snd_nxt++; /* the FIN's sequence number */
		if (cn_seq_gt(tcb->snd_nxt, tcb->snd_max))
			tcb->snd_max = tcb->snd_nxt;
		sent++;
		if ((uint32_t)rc == avail)
			break; /* all sent: the next pass would find avail == 0 */
	}
	if (CN_UNLIKELY(tcb->flags & TF_SNDFIN) && rc >= 0 &&
	    fin_here(tcb, tcb->snd_nxt - tcb->snd_una, 0)) {
		/* Every byte is out and the FIN is not: a bare FIN (it may
		 * pass a closed window: it carries no data). */
		rc = send_segment(tcb, tcb->snd_nxt - tcb->snd_una, 0, true, now);
		if (rc >= 0) {
			tcb->snd_nxt++;
			if (cn_seq_gt(tcb->snd_nxt, tcb->snd_max))
				tcb->snd_max = tcb->snd_nxt;
			sent++;
		}
	} else if (rc >= 0 && (tcb->flags & TF_ACKNOW)) {
		rc = send_segment(tcb, tcb->snd_nxt - tcb->snd_una, 0, false, now);
		if (rc >= 0)
			sent++;
	}
	/* Data waits and nothing is in flight to bring an ACK: arm the
	 * persist timer (shared with the retransmission timer). */
	if (!tcb->rtx_at && tcb->sb->cc > tcb->snd_nxt - tcb->snd_una &&
	    tcb->snd_una == tcb->snd_max)
		tcb->rtx_at = now + tcb->rto;
	return rc < 0 && sent == 0 ? rc : sent;
}

/* The exported name is the internal function itself (no call or jump in
 * between); the library's own callers use cn__tcp_output, which is hidden
 * and so is never reached through the PLT. */
int cn_tcp_output(struct cn_tcb *tcb, uint64_t now) __attribute__((alias("cn__tcp_output")));
