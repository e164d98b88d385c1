/* SPDX-License-Identifier: BSD-2-Clause */
/* TCB life cycle, the application side (send, receive, post), timers and
 * the connection table. */
#include <errno.h>
#include <stdlib.h>

#include "tcp_impl.h"

struct cn_tcb *cn__tcp_lookup_hash(struct cn_net *net, const struct cn_pkt_info *pi)
{
	struct cn_tcb *t;

	uint32_t raddr = CN_BE32_RAW(pi->saddr);
	uint16_t rport = CN_BE16_RAW(pi->sport), lport = CN_BE16_RAW(pi->dport);

	for (t = net->hash[cn__hash_4tuple(raddr, rport, lport)]; t; t = t->hnext)
		if (t->raddr == raddr && t->rport_n == rport && t->lport_n == lport) {
			net->last = t;
			return t;
		}
	return NULL;
}

static void build_template(struct cn_tcb *tcb, const struct cn_tcp_params *p)
{
	uint8_t *h = tcb->tmpl;
	struct cn_ipv4_hdr *ip = (struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);
	struct cn_tcp_hdr *th;
	uint32_t thl = CN_TCP_HLEN + (tcb->ts_on ? CN_TCPOLEN_TSTAMP_APPA : 0);
	const struct cn_net_hdr_spec hs = {
		.dmac = p->rmac,
		.smac = tcb->net->p.mac,
		.saddr = p->laddr,
		.daddr = p->raddr,
		.proto = CN_IPV4_PROTO_TCP,
	};

	memset(h, 0, sizeof(tcb->tmpl));
	th = (struct cn_tcp_hdr *)cn_net_hdr_build(h, &hs);
	th->sport = p->lport;
	th->dport = p->rport;
	th->off = (uint8_t)((thl / 4) << 4);
	th->flags = CN_TCP_ACK;
	if (tcb->ts_on) /* TSval and TSecr: per segment */
		cn_tcpopt_tstamp_put((uint8_t *)th + CN_TCP_HLEN, 0, 0);
	tcb->hdr_len = (uint16_t)(CN_ETH_HLEN + CN_IPV4_HLEN + thl);
	/* Sums of the constant words; the variable ones are zero here and
	 * get added per segment. */
	/* Folded to 16 bits: per segment two or three of them are added and
	 * the sum stays under 2^32, so a 32-bit fold finishes it. */
	tcb->ip_sum0 = cn_csum_fold(cn_csum_partial(ip, CN_IPV4_HLEN, 0));
	tcb->ph_sum0 = cn_csum_fold(cn_csum_pseudo_ipv4(p->laddr, p->raddr, CN_IPV4_PROTO_TCP, 0));
	tcb->tcp_sum0 = cn_csum_partial(th, thl, tcb->ph_sum0);
}

struct cn_tcb *cn_tcp_open(struct cn_net *net, const struct cn_tcp_params *params)
{
	struct cn_tcp_params q;
	const struct cn_tcp_params *p = &q;
	struct cn_tcb *tcb;
	struct cn_pkt_info key;
	unsigned h;

	if (cn__params_copy(&q, sizeof(q), params) < 0)
		return cn__fail(EINVAL);
	/* The defaults of zero fields (tcp.h). */
	if (q.mss == 0)
		q.mss = CN_TCP_MSS_DEFAULT;
	if (q.snd_wnd == 0)
		q.snd_wnd = 65535;
	if (q.sndbuf == 0)
		q.sndbuf = CN_SOCKBUF_CHAIN;
	if (p->mss <= CN_TCPOLEN_TSTAMP_APPA || p->mss > CN_TCP_MSS_MAX ||
	    (p->sndbuf != CN_SOCKBUF_CHAIN && p->sndbuf != CN_SOCKBUF_RING) ||
	    (unsigned)p->csum > CN_TCP_CSUM_SEPARATE || p->snd_wscale > CN_TCP_WSCALE_MAX ||
	    p->rcv_wscale > CN_TCP_WSCALE_MAX ||
	    (p->csum == CN_TCP_CSUM_STORED &&
	     (p->sndbuf != CN_SOCKBUF_RING || p->ring_copy != CN_SBRING_COPY_CSUM)) ||
	    (p->csum == CN_TCP_CSUM_FUSED && !net->p.cpool) || p->ooo_max > CN_TCP_OOO_MAX ||
	    p->rx_readahead > CN_TCP_RX_READAHEAD_MAX || p->ack_stretch > 0xffff)
		return cn__fail(EINVAL);
	key.saddr = p->raddr;
	key.sport = p->rport;
	key.dport = p->lport;
	if (cn__tcp_find(net, &key))
		return cn__fail(EEXIST);
	if (net->nconns == net->p.max_conns)
		return cn__fail(ENOSPC);
	tcb = cn__zalloc_lines(sizeof(*tcb));
	if (!tcb)
		return NULL;
	tcb->net = net;
	tcb->raddr = CN_BE32_RAW(p->raddr);
	tcb->laddr = CN_BE32_RAW(p->laddr);
	tcb->rport_n = CN_BE16_RAW(p->rport);
	tcb->lport_n = CN_BE16_RAW(p->lport);
	tcb->snd_una = tcb->snd_nxt = tcb->snd_max = p->iss + 1; /* SYN consumed one */
	tcb->rcv_nxt = p->irs + 1;
	tcb->snd_wl1 = p->irs;
	tcb->snd_wl2 = p->iss;
	tcb->snd_wnd = p->snd_wnd;
	tcb->max_sndwnd = p->snd_wnd;
	tcb->snd_wscale = p->snd_wscale;
	tcb->rcv_wscale = p->rcv_wscale;
	/* RFC 6691: the MSS counts payload without TCP options, so the
	 * segment shrinks by the timestamp option's 12 bytes. */
	tcb->mss = (uint16_t)(p->mss - (p->ts ? CN_TCPOLEN_TSTAMP_APPA : 0));
	tcb->rcv_mss = p->rcv_mss ? p->rcv_mss : p->mss;
	tcb->cwnd = (p->init_cwnd ? p->init_cwnd : 10) * (uint32_t)tcb->mss;
	tcb->ssthresh = UINT32_MAX / 2;
	tcb->ts_on = p->ts;
	tcb->ts_recent = p->ts_recent;
	tcb->sack_on = p->sack;
	tcb->rack_on = !p->no_rack_tlp;
	tcb->no_ts_clock = p->no_ts_clock;
	tcb->nodelay = p->nodelay;
	tcb->no_readahead = p->no_rx_readahead;
	tcb->ra_dist = p->rx_readahead ? p->rx_readahead : CN_TCP_RX_READAHEAD_DEFAULT;
	tcb->csum_mode = (uint8_t)p->csum;
	tcb->sb_kind = (uint8_t)p->sndbuf;
	tcb->rcv_space_max = p->rcvbuf_size ? p->rcvbuf_size : 1u << 20;
	tcb->ooo_max = p->ooo_max;
	tcb->delack_ticks = p->delack_ticks;
	if (p->ack_stretch) {
		tcb->ack_stretch = (uint16_t)p->ack_stretch;
	} else {
		/* A quarter of the receive window: a sender whose window is
		 * ours keeps three quarters in flight while the ACK waits. */
		uint32_t k = tcb->rcv_space_max / 4 / tcb->rcv_mss;
		tcb->ack_stretch = (uint16_t)(k < 2 ? 2 : k > 0xffff ? 0xffff : k);
	}
	tcb->rto_base = tcb->rto = p->rto_init ? p->rto_init : 1000;
	tcb->rto_min = p->rto_min ? p->rto_min : (tcb->rto_base / 5 ? tcb->rto_base / 5 : 1);
	tcb->rto_max = p->rto_max ? p->rto_max : tcb->rto_base * 64;
	tcb->sndbuf_max = p->sndbuf_size ? p->sndbuf_size : 1u << 20;
	tcb->rcv_adv = tcb->rcv_nxt;
	tcb->win_nxt = tcb->rcv_nxt + 1; /* no window field cached yet */
	cn_sbchain_init(&tcb->rcvq, net->p.mpool, net->p.cpool);
	if (p->sndbuf == CN_SOCKBUF_RING) {
		struct cn_sbring_params rp = {
			.bytes = tcb->sndbuf_max,
			.mss = tcb->mss, /* chunk sums line up with segments */
			.copy = p->ring_copy,
			.anchors = 1, /* packets reference the ring directly */
			.seq = tcb->snd_una,
		};
		tcb->ring = cn_sbring_create(&rp);
		if (!tcb->ring) {
			int e = errno;
			free(tcb);
			errno = e;
			return NULL;
		}
		tcb->sb = cn_sbring_sockbuf(tcb->ring);
		{
			uint32_t size;
			cn_sbring_layout(tcb->ring, &tcb->ring_base, &size, &tcb->ring_seq0);
			tcb->ring_mask = size - 1;
		}
	} else {
		cn_sbchain_init(&tcb->chain, net->p.mpool, net->p.cpool);
		tcb->sb = &tcb->chain.sb;
	}
	build_template(tcb, p);
	h = cn__hash_4tuple(tcb->raddr, tcb->rport_n, tcb->lport_n);
	tcb->hnext = net->hash[h];
	net->hash[h] = tcb;
	net->conns[net->nconns++] = tcb;
	return tcb;
}

static void tcb_free(struct cn_tcb *tcb)
{
	struct cn_mbuf *m = tcb->ooo, *n;

	for (; m; m = n) {
		n = m->nextpkt;
		cn_mbuf_free_chain(m);
	}
	cn_sbchain_flush(&tcb->rcvq);
	tcb->ra_last = NULL;
	tcb->ra_ahead = 0;
	if (tcb->ring)
		cn_sbring_destroy(tcb->ring);
	else
		cn_sbchain_flush(&tcb->chain);
	free(tcb);
}

void cn_tcp_close(struct cn_tcb *tcb)
{
	struct cn_net *net;
	struct cn_tcb **pp;

	if (!tcb)
		return;
	net = tcb->net;
	for (pp = &net->hash[cn__hash_4tuple(tcb->raddr, tcb->rport_n, tcb->lport_n)]; *pp;
	     pp = &(*pp)->hnext)
		if (*pp == tcb) {
			*pp = tcb->hnext;
			break;
		}
	CN_SWAP_REMOVE(net->conns, net->nconns, tcb);
	if (net->last == tcb)
		net->last = NULL;
	if (tcb->flags & TF_ACKBURST) /* closed inside a burst that owes it an ACK */
		CN_SWAP_REMOVE(net->owed, net->nowed, tcb);
	tcb_free(tcb);
}

void cn__tcp_free_all(struct cn_net *net)
{
	while (net->nconns)
		cn_tcp_close(net->conns[0]);
}

uint32_t cn_tcp_sndbuf_space(const struct cn_tcb *tcb)
{
	if (tcb->ring)
		return cn_sbring_space(tcb->ring);
	return tcb->sndbuf_max > tcb->sb->cc ? tcb->sndbuf_max - tcb->sb->cc : 0;
}

struct cn_sockbuf *cn_tcp_sndbuf(struct cn_tcb *tcb)
{
	return tcb->sb;
}

struct cn_tcb *cn_tcp_lookup(struct cn_net *net, cn_be32_t raddr, cn_be16_t rport,
			     cn_be16_t lport)
{
	struct cn_pkt_info key;

	key.saddr = raddr;
	key.sport = rport;
	key.dport = lport;
	return cn__tcp_find(net, &key);
}

int cn_tcp_shutdown(struct cn_tcb *tcb, uint64_t now)
{
	if (!(tcb->flags & TF_SNDFIN)) {
		tcb->flags |= TF_SNDFIN;
		cn__tcp_output(tcb, now);
	}
	return 0;
}

void cn_tcp_ack_now(struct cn_tcb *tcb, uint64_t now)
{
	tcb->flags |= TF_ACKNOW;
	cn__tcp_output(tcb, now);
}

/* The copy-in of cn_tcp_write and cn_tcp_send, inlined into both. */
static inline int sndbuf_write(struct cn_tcb *tcb, const void *buf, uint32_t len)
{
	uint32_t n;

	if (tcb->flags & TF_SNDFIN)
		return -EPIPE;
	if (tcb->ring) {
		n = cn_sbring_write(tcb->ring, buf, len);
	} else {
		uint32_t space = cn_tcp_sndbuf_space(tcb);
		n = len < space ? len : space;
		if (n && cn_sbchain_append_copy(&tcb->chain, buf, n) < 0)
			return -ENOBUFS;
	}
	return (int)n;
}

int cn_tcp_write(struct cn_tcb *tcb, const void *buf, uint32_t len)
{
	return sndbuf_write(tcb, buf, len);
}

int cn_tcp_send(struct cn_tcb *tcb, const void *buf, uint32_t len, uint64_t now)
{
	int n = sndbuf_write(tcb, buf, len);

	if (n > 0)
		cn__tcp_output(tcb, now);
	return n;
}

int cn_tcp_send_mbuf(struct cn_tcb *tcb, struct cn_mbuf *m, uint64_t now)
{
	if (tcb->ring)
		return -EINVAL;
	if (tcb->flags & TF_SNDFIN)
		return -EPIPE;
	cn_sbchain_append(&tcb->chain, m);
	cn__tcp_output(tcb, now);
	return 0;
}

/* Window update after the application consumed data: worth a segment when
 * the right edge moves by two segments or half the buffer (RFC 9293
 * 3.8.6.2.2, receiver-side SWS avoidance). */
static void maybe_window_update(struct cn_tcb *tcb, uint64_t now)
{
	uint32_t edge = tcb->rcv_nxt + cn__tcp_rcv_free(tcb);
	uint32_t grow = edge - tcb->rcv_adv;

	if ((int32_t)grow > 0 && (grow >= 2u * tcb->rcv_mss || grow >= tcb->rcv_space_max / 2)) {
		tcb->flags |= TF_ACKNOW;
		cn__tcp_output(tcb, now);
	}
}

/* Copy-out read-ahead. The receive queue holds payload by reference in
 * the buffers the NIC wrote; when the device left them out of the cache
 * (a DMA write that snoops and invalidates: DCA flush or prefetch mode),
 * the application's copy is a run of demand misses, and a driver's
 * prefetch issued in its poll does not cover it: a 32-frame burst's
 * prefetches are not in the cache when the reads come, however late they
 * come (measured, netdev.h at CN_NETDEV_PREFETCH_K_DEFAULT). So each copy
 * step first prefetches the queued payload up to ra_dist bytes
 * (cn_tcp_params.rx_readahead, CN_TCP_RX_READAHEAD_DEFAULT 5840) past
 * the bytes it copies: one stream over the queue, continued across reads
 * and segment boundaries from a cursor in the TCB (ra_last, the last mbuf
 * read ahead, and ra_ahead, the queue bytes from the head to its end), so
 * each queued mbuf is read ahead once, whole, a steady distance of
 * payload is in flight, and a queue of a few segments gets it too. The
 * first copy after a burst arrived reads its own segment ahead with the
 * next four (the lines come in parallel instead of one demand miss after
 * another). Invariant: ra_last, when set, is queued (ra_ahead > 0 bytes
 * of the queue end with it); a drop that reaches its end clears the
 * cursor, the stream then restarts at the head. Only the queued bytes
 * [data, data + len) of queued mbufs are prefetched. Where sbcompress
 * grew the queue's last mbuf after it was read ahead (segments of at most
 * CN_SBCHAIN_COMPRESS_MAX bytes, copied into its room: cached, written by
 * the CPU), ra_ahead undercounts: the stream then asks for some lines
 * twice, never skips one. Cost: the prefetches (len / 64 + 1 per queued
 * mbuf, 4 a turn) and, per copy step, a compare and the walk of the mbufs
 * read ahead; figures in docs/performance.md, TCP/UDP fast path, "The
 * copy-out read-ahead stream".
 * cn_tcp_params.no_rx_readahead turns it off (a stack on a DDIO NIC). */
/* Every line of [p, p + len), four a turn (the loop's own instructions
 * were as many as the prefetches). An integer offset: GCC 12 deletes a
 * prefetch loop driven by a pointer compare (src/lab/nic/netdev.c). */
static inline __attribute__((always_inline)) void ra_lines(const uint8_t *p, uint32_t len)
{
	uint32_t o = 0;

	for (; o + 4 * CN_CACHE_LINE <= len; o += 4 * CN_CACHE_LINE) {
		__builtin_prefetch(p + o, 0, 3);
		__builtin_prefetch(p + o + CN_CACHE_LINE, 0, 3);
		__builtin_prefetch(p + o + 2 * CN_CACHE_LINE, 0, 3);
		__builtin_prefetch(p + o + 3 * CN_CACHE_LINE, 0, 3);
	}
	for (; o < len; o += CN_CACHE_LINE)
		__builtin_prefetch(p + o, 0, 3);
	if (len)
		__builtin_prefetch(p + len - 1, 0, 3);
}

/* Before a copy of @p len bytes from the queue's head: the stream up to
 * len + ra_dist (or the queue's end). */
static inline __attribute__((always_inline)) void rcvq_readahead(struct cn_tcb *tcb, uint32_t len)
{
	const struct cn_mbuf *m, *last = tcb->ra_last;
	uint32_t ahead = tcb->ra_ahead, target = len + tcb->ra_dist, from = ahead;

	if (ahead >= target)
		return;
	m = last ? last->next : tcb->rcvq.head;
	for (; m && ahead < target; m = m->next) {
		ra_lines(m->data, m->len);
		/* the storage header the free after the copy reads (a
		 * device cluster's, last touched a whole ring ago) */
		if (m->shared != NULL)
			__builtin_prefetch(m->shared, 1, 3);
		ahead += m->len;
		last = m;
	}
	tcb->ra_last = last;
	tcb->ra_ahead = ahead;
	tcb->st.rcv_readahead += ahead - from;
}

/* The copy took @p n bytes off the queue's head: the cursor follows. */
static inline __attribute__((always_inline)) void rcvq_drop(struct cn_tcb *tcb, uint32_t n)
{
	cn_sbchain_drop(&tcb->rcvq, n);
	if (tcb->ra_ahead > n) {
		tcb->ra_ahead -= n;
	} else {
		tcb->ra_ahead = 0;
		tcb->ra_last = NULL;
	}
}

/* Copy up to @p len bytes off the receive queue's head into @p d, the
 * read-ahead running in front of the copy; the bytes copied. */
static inline __attribute__((always_inline)) uint32_t rcvq_copy_out(struct cn_tcb *tcb, uint8_t *d,
									 uint32_t len)
{
	uint32_t done = 0;

	while (done < len && tcb->rcvq.sb.cc) {
		struct cn_sb_seg seg;
		cn_sbchain_seg(&tcb->rcvq, 0, len - done, &seg);
		if (!tcb->no_readahead)
			rcvq_readahead(tcb, seg.len);
		for (uint32_t i = 0; i < seg.npieces; i++) {
			memcpy(d + done, seg.piece[i].base, seg.piece[i].len);
			done += seg.piece[i].len;
		}
		rcvq_drop(tcb, seg.len);
	}
	return done;
}

int cn_tcp_recv(struct cn_tcb *tcb, void *buf, uint32_t len, uint64_t now)
{
	uint32_t done = rcvq_copy_out(tcb, buf, len);

	if (done)
		maybe_window_update(tcb, now);
	return (int)done;
}

int cn_tcp_recv_post(struct cn_tcb *tcb, void *buf, uint32_t len)
{
	if (tcb->post_buf)
		return -EBUSY;
	if (!len || !buf)
		return -EINVAL;
	tcb->post_buf = buf;
	tcb->post_len = len;
	/* Bytes that arrived before the post come first. */
	tcb->post_done = rcvq_copy_out(tcb, tcb->post_buf, len);
	return 0;
}

uint32_t cn_tcp_recv_posted(struct cn_tcb *tcb, bool finish)
{
	uint32_t n = tcb->post_done;

	if (finish) {
		tcb->post_buf = NULL;
		tcb->post_len = tcb->post_done = 0;
	}
	return n;
}

/* RACK-TLP's timers first (tcp_input.c), while the RTO is not due; then
 * RFC 6298 5.5-5.7 with go-back-N: on a timeout everything unacknowledged
 * is sent again from snd_una, with one segment of congestion window. */
void cn_tcp_timer(struct cn_tcb *tcb, uint64_t now)
{
	if (tcb->rtx_at && tcb->rack_on && now < tcb->rtx_at)
		cn__tcp_rack_timer(tcb, now);
	if (tcb->delack_at && now >= tcb->delack_at) {
		tcb->delack_at = 0;
		tcb->flags |= TF_ACKNOW;
		tcb->st.delack_timer++;
		cn__tcp_output(tcb, now);
	}
	if (tcb->rtx_at && now >= tcb->rtx_at) {
		tcb->rtx_at = 0;
		if (tcb->snd_una != tcb->snd_max) {
			tcb->st.rto_fired++;
			tcb->ssthresh = cn__tcp_loss_ssthresh(tcb);
			tcb->cwnd = tcb->mss;
			tcb->snd_nxt = tcb->snd_una;
			tcb->dupacks = 0;
			tcb->nsacked = 0; /* RFC 2018 8: the receiver may renege */
			tcb->flags &= ~(TF_RTT | TF_RECOVER | TF_TLP);
			if (tcb->ts_on && !tcb->no_ts_clock) {
				tcb->rto_tsval = (uint32_t)now; /* the retransmission's */
				tcb->flags |= TF_RTOCHK;
			}
		} else if (tcb->sb->cc) {
			tcb->flags |= TF_FORCE; /* persist probe */
		}
		if (tcb->snd_una != tcb->snd_max || tcb->sb->cc) /* back off */
			tcb->rto = tcb->rto * 2 > tcb->rto_max ? tcb->rto_max : tcb->rto * 2;
		cn__tcp_output(tcb, now);
		if (!tcb->rtx_at && (tcb->snd_una != tcb->snd_max || tcb->sb->cc))
			tcb->rtx_at = now + tcb->rto;
	}
}

const struct cn_tcp_stats *cn_tcp_stats(const struct cn_tcb *tcb)
{
	return &tcb->st;
}

void cn_tcp_get_info(const struct cn_tcb *tcb, struct cn_tcp_info *i)
{
	uint32_t cc = tcb->rcvq.sb.cc;

	memset(i, 0, sizeof(*i));
	i->snd_una = tcb->snd_una;
	i->snd_nxt = tcb->snd_nxt;
	i->snd_max = tcb->snd_max;
	i->snd_wnd = tcb->snd_wnd;
	i->cwnd = tcb->cwnd;
	i->ssthresh = tcb->ssthresh;
	i->rcv_nxt = tcb->rcv_nxt;
	i->rcv_wnd = cn__tcp_rcv_free(tcb);
	i->rto = tcb->rto;
	i->srtt = tcb->srtt8 / 8;
	i->snd_queued = tcb->sb->cc;
	i->rcv_queued = cc;
	i->ooo_segs = tcb->ooo_n;
	i->dupacks = tcb->dupacks;
	i->sack = tcb->sack_on;
	i->sacked_blocks = tcb->nsacked;
	i->fin_rcvd = (tcb->flags & TF_FIN) != 0;
	i->delack_pending = tcb->delack_at != 0;
	i->shut_wr = (tcb->flags & TF_SNDFIN) != 0;
	/* Before its ACK the FIN is out iff snd_max passed the data's end. */
	i->fin_acked = (tcb->flags & TF_FINACKED) != 0;
	i->fin_sent = i->fin_acked || (i->shut_wr && tcb->snd_max - tcb->snd_una > tcb->sb->cc);
}

CN_NAME_FN(cn_tcp_csum_name, enum cn_tcp_csum,
	[CN_TCP_CSUM_OFFLOAD] = "offload", [CN_TCP_CSUM_STORED] = "stored",
	[CN_TCP_CSUM_FUSED] = "fused", [CN_TCP_CSUM_SEPARATE] = "separate",
)
