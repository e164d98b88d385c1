/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to the TCP module (tcp.c: TCB life cycle, the application side,
 * timers; tcp_input.c: the RX entry, header prediction and the full path
 * for ESTABLISHED; tcp_output.c: the send decision and segments;
 * tcp_conn.c: the handshake, control segments and the ISN). Every piece of
 * a connection's TCP state is declared here: the TCB of a synchronized
 * connection and, before it exists, the handshake's (struct cn_tcp_syn,
 * held in the connection manager's socket).
 *
 * Who calls in: every received frame (cn_net_input is tcp_input.c's);
 * net.c through cn__tcp_free_all and the public tcp.h; the connection
 * manager (conn.c) through the handshake functions at the end of this file
 * and the public tcp.h, nothing else. */
#ifndef CN_TCP_IMPL_H
#define CN_TCP_IMPL_H

#include "net_impl.h"

/* Ethernet + IPv4 + TCP + NOP,NOP,TS: the longest header tcp_output writes. */
#define CN_TCP_TMPL_MAX (CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN + CN_TCPOLEN_TSTAMP_APPA)
#define CN_OOO_MAX CN_TCP_OOO_MAX
/* SACKed ranges above snd_una the sender remembers (RFC 6675 scoreboard). */
#define CN_TCP_SACK_MAX 8

/* TCB flags */
#define TF_ACKNOW 0x1u   /* send an ACK at the next output */
#define TF_DELACK 0x2u   /* an ACK is being delayed (delack_at armed) */
#define TF_FORCE 0x4u    /* persist: send one segment ignoring the window */
#define TF_RTT 0x8u      /* rtt_seq is being timed */
#define TF_RECOVER 0x10u /* in fast recovery (NewReno, until snd_una >= recover) */
#define TF_TLP 0x20u     /* a tail-loss probe is out (until snd_una passes tlp_high);
			    in the low byte with TF_RECOVER: prediction tests both
			    with one byte immediate */
#define TF_SNDFIN 0x40u  /* shut down for writing: a FIN follows the data */
#define TF_FINACKED 0x80u/* our FIN was acknowledged */
#define TF_FIN 0x100u    /* FIN received */
#define TF_RTOCHK 0x200u /* an RTO fired: the next advancing ACK checks it (Eifel) */
#define TF_TLPREX 0x400u /* the probe out resent data (not new data) */
#define TF_TLPDUP 0x800u /* a D-SACK came since the probe: it was a duplicate */
#define TF_ACKBURST 0x1000u /* on net->owed: its ACK waits for the burst's end */

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
	uint16_t ack_stretch;      /* in-order segments one ACK covers in a burst */
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
	/* SACK (slow path only): the receiver's newest out-of-order block,
	 * the sender's scoreboard (ranges sorted by sequence, disjoint) and
	 * the next hole byte to retransmit in this recovery */
	uint8_t sack_on, nsacked;
	uint32_t sack_recent;
	uint32_t rexmit_nxt;
	uint64_t rexmit_round_at;  /* when rexmit_nxt last started from snd_una */
	uint32_t sacked_l[CN_TCP_SACK_MAX], sacked_r[CN_TCP_SACK_MAX];
	/* RACK-TLP (slow path only, tcp_input.c): when the scoreboard last
	 * became non-empty and the last hole was retransmitted; snd_max at
	 * the last tail-loss probe; the TSval of the last RTO's
	 * retransmission */
	uint8_t rack_on;
	uint32_t tlp_high;
	uint32_t rto_tsval;
	uint64_t sack_first_at, rexmit_last_at;
	struct cn_tcp_stats st;
	alignas(CN_CACHE_LINE) uint8_t tmpl[CN_TCP_TMPL_MAX];
};

/* Header prediction and the pure-ACK / in-order-data fast paths read only
 * line 0 (plus the send buffer's header and the receive queue). */
_Static_assert(offsetof(struct cn_tcb, net) == CN_CACHE_LINE, "TCB fast-path fields fill line 0");
_Static_assert(offsetof(struct cn_tcb, tmpl) % CN_CACHE_LINE == 0, "template starts a cache line");

/* What TCP knows of a connection before its TCB exists (SYN_SENT,
 * SYN_RCVD): kept in the socket (conn_impl.h), read and written only by
 * tcp_conn.c, handed to cn_tcp_open when the handshake completes. */
struct cn_tcp_syn {
	uint32_t iss, irs;
	uint32_t ts_recent;        /* the peer's last TSval */
	uint16_t peer_mss;         /* 0 = option absent */
	uint8_t peer_ws;
	bool peer_has_ws, peer_ts;
	bool peer_sack;            /* SACK-permitted in the peer's SYN (or cookie) */
};

/* tcp.c */
CN_INTERNAL struct cn_tcb *cn__tcp_lookup_hash(struct cn_net *net, const struct cn_pkt_info *pi);
/* tcp_output.c */
CN_INTERNAL int cn__tcp_output(struct cn_tcb *tcb, uint64_t now);
CN_INTERNAL int cn__tcp_send_one(struct cn_tcb *tcb, uint32_t off, uint32_t len, uint64_t now);
/* A pure ACK carrying SACK blocks for the out-of-order queue (RFC 2018). */
CN_INTERNAL int cn__tcp_send_sack_ack(struct cn_tcb *tcb, uint64_t now);
/* tcp_input.c: RACK-TLP's timers (tcp.h, cn_tcp_params.no_rack_tlp):
 * the reordering window, lost retransmissions, the tail-loss probe. */
CN_INTERNAL void cn__tcp_rack_timer(struct cn_tcb *tcb, uint64_t now);

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

	if (CN_LIKELY(t && t->raddr == CN_BE32_RAW(pi->saddr) &&
			  t->rport_n == CN_BE16_RAW(pi->sport) && t->lport_n == CN_BE16_RAW(pi->dport)))
		return t;
	return cn__tcp_lookup_hash(net, pi);
}

/* Receive-buffer bytes not held by the receive queue: the window the
 * buffer allows (the advertised edge never moves back: rcv_adv). */
static inline uint32_t cn__tcp_rcv_free(const struct cn_tcb *tcb)
{
	uint32_t cc = tcb->rcvq.sb.cc;

	return tcb->rcv_space_max > cc ? tcb->rcv_space_max - cc : 0;
}

/* ssthresh after a loss (RFC 5681 3.1, equation 4): half the data in
 * flight, at least two segments. */
static inline uint32_t cn__tcp_loss_ssthresh(const struct cn_tcb *tcb)
{
	uint32_t half = (tcb->snd_max - tcb->snd_una) / 2;

	return half > 2u * tcb->mss ? half : 2u * tcb->mss;
}

/* ---- the handshake (tcp_conn.c), the connection manager's interface ---- */
struct cn_conn;
struct cn_sock;
/* A segment the established path handed to the connection manager (SYN,
 * RST, ACK-less, or of no connection), in the order of RFC 9293 3.10.7.
 * Consumes m. */
CN_INTERNAL void cn__tcpc_input(struct cn_conn *c, struct cn_mbuf *m, struct cn_pkt_info *pi);
/* An active open: the ISN chosen (RFC 6528), nothing sent yet. */
CN_INTERNAL void cn__tcpc_connect(struct cn_sock *s, uint64_t now);
/* Our SYN, or with @p synack the SYN-ACK. 0 or a negative errno. */
CN_INTERNAL int cn__tcpc_send_syn(struct cn_sock *s, bool synack);
/* A RST for a connection the user aborts: <SEQ=SND.NXT><ACK=RCV.NXT>
 * with a TCB, the handshake's numbers in SYN_RCVD, else nothing. */
CN_INTERNAL void cn__tcpc_send_rst(struct cn_sock *s);
/* The handshake's retransmission and ARP timers of a SYN_SENT or
 * SYN_RCVD socket. */
CN_INTERNAL void cn__tcpc_timers(struct cn_sock *s, uint64_t now);
/* SYN cookie secrets: the first at creation, a new one when due. */
CN_INTERNAL void cn__tcpc_cookie_init(struct cn_conn *c);
CN_INTERNAL void cn__tcpc_cookie_rotate(struct cn_conn *c, uint64_t now);
/* The next hop's MAC is known: the SYNs waiting for it go out. */
CN_INTERNAL void cn__tcpc_arp_resolved(struct cn_conn *c, uint32_t ip, const uint8_t *mac);

#endif
