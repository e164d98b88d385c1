/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/stack: the connection manager (conn.c: the socket table
 * and the sockets' life; arp.c; icmp.c) and the functions that cross its
 * files. It reaches TCP only through the public tcp.h and the handshake's
 * interface at the end of tcp_impl.h; its sockets hold the handshake's
 * state (struct cn_tcp_syn) for the TCP module, which alone reads it. */
#ifndef CN_CONN_IMPL_H
#define CN_CONN_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cachenet/conn.h"
#include "cachenet/csum.h"
#include "cachenet/net.h"
#include "cachenet/tcp.h"
#include "cn_internal.h"
#include "tcp_impl.h"

#define CN_CONN_HASH 256u /* cn__hash_4tuple's buckets */
#define CN_EPHEMERAL_LO 49152u
#define CN_EPHEMERAL_N 16384u
/* Smallest send MSS we accept from a peer (Linux's tcp_min_snd_mss is 48). */
#define CN_CONN_MIN_MSS 64u
/* RFC 9293 3.7.1: the MSS to assume when the SYN carries none. */
#define CN_CONN_DEFAULT_MSS 536u
/* Shortest Ethernet frame without FCS: control frames are padded to it. */
#define CN_ETH_MIN_FRAME 60u

/* ARP requests we sent and whose reply we would take (arp.c). */
#define CN_CONN_ARP_ASKED 16

struct cn_arp_entry {
	uint32_t ip;               /* network order; 0 = free slot */
	uint8_t mac[CN_ETH_ALEN];
	bool is_static;
};

struct cn_sock {
	struct cn_conn *c;
	enum cn_sock_state st;
	bool listener;
	bool released;             /* cn_sock_close called: the conn frees it */
	bool shut;                 /* our FIN queued (cn_tcp_shutdown called) */
	bool arp_wait;             /* SYN_SENT waiting for the next hop's MAC */
	bool was_est;              /* reached ESTABLISHED once */
	bool eof;                  /* the peer's FIN was received (kept after the TCB) */
	bool hashed;               /* in the 4-tuple hash */
	bool queued;               /* child on its listener's accept queue */
	int err;                   /* positive errno once failed */
	uint32_t laddr, raddr;     /* network order */
	uint16_t lport, rport;     /* host order */
	uint8_t rmac[CN_ETH_ALEN];
	struct cn_tcb *tcb;        /* ESTABLISHED and after, until freed */
	void *udata;
	/* handshake (SYN_SENT, SYN_RCVD) */
	struct cn_tcp_syn syn;     /* TCP's (tcp_impl.h) */
	bool in_syncache;          /* a listener's half-open child, on the age list */
	struct cn_sock *sc_older, *sc_newer; /* the syncache's age list */
	uint32_t retries;          /* retransmissions (or ARP requests) so far */
	uint64_t rtx_at;           /* handshake / ARP timer; 0 = off */
	uint64_t tw_at;            /* TIME_WAIT end; 0 = off */
	uint64_t orphan_at;        /* released: reset if not finished by then */
	/* listener: children in SYN_RCVD (counted) and ready for accept (queue) */
	struct cn_sock *parent;    /* child not yet accepted: its listener */
	uint32_t backlog, nchild;  /* nchild: embryonic + queued */
	uint32_t nqueued;          /* on the accept queue */
	struct cn_sock *aq_head, *aq_tail, *aq_next;
	/* tables */
	struct cn_sock *hnext;     /* 4-tuple hash chain (connections only) */
	struct cn_sock *next, *prev; /* every socket */
};

struct cn_conn {
	struct cn_net *net;
	struct cn_conn_params p;
	struct cn_conn_stats st;
	uint64_t now;              /* last time seen by any call */
	uint64_t sip_k0, sip_k1;   /* ISN key */
	uint32_t addr;             /* network order */
	uint8_t mac[CN_ETH_ALEN];
	uint16_t ip_id;
	uint8_t rcv_wscale;        /* what we offer */
	uint16_t syn_win;          /* window in our SYN / SYN-ACK (never scaled) */
	uint32_t nsocks;
	uint32_t port_next;        /* ephemeral port search start, 0..16383 */
	struct cn_sock *all;       /* every socket, newest first */
	struct cn_sock *listeners; /* via hnext */
	struct cn_sock *hash[CN_CONN_HASH];
	struct cn_arp_entry arp[CN_CONN_ARP_SIZE];
	uint32_t arp_victim;       /* round-robin replacement */
	struct {
		uint32_t ip;       /* network order; 0 = free */
		uint64_t at;       /* when last asked */
	} arp_asked[CN_CONN_ARP_ASKED];
	uint32_t arp_asked_next;   /* round-robin replacement */
	/* the syncache: half-open children of listeners, oldest first */
	struct cn_sock *sc_oldest, *sc_newest;
	uint32_t nsyncache;
	/* SYN cookies: the secret of generation g is ck[g & 1] (the current
	 * and the previous one are valid) */
	uint64_t ck[2][2];
	uint32_t ck_gen;
	uint64_t ck_next;          /* when the next generation starts */
	uint64_t ck_sent_at;       /* last cookie sent, when ck_sent */
	bool ck_sent;
};

static inline void cn__conn_drop(struct cn_conn *c, enum cn_conn_drop why)
{
	c->st.drop[why]++;
}

/* A control frame (ARP, a handshake segment, an ICMP reply) of @p len
 * bytes, padded to the Ethernet minimum and zeroed, at the end of a fresh
 * descriptor's header room: *h is its first byte, *fl its padded length.
 * NULL (counted in tx_fail) when every descriptor is out. */
static inline struct cn_pkt *cn__conn_pkt(struct cn_conn *c, uint32_t len, uint8_t **h,
					  uint32_t *fl)
{
	struct cn_pkt *p = cn_net_pkt_alloc(c->net);

	if (!p) {
		c->st.tx_fail++;
		return NULL;
	}
	*fl = len < CN_ETH_MIN_FRAME ? CN_ETH_MIN_FRAME : len;
	*h = p->room + CN_PKT_HDR_ROOM - *fl;
	memset(*h, 0, *fl);
	return p;
}

/* Send a control frame whose @p hdr_len header bytes start at @p h (its
 * L4 header, or the ARP body, at @p l4_off): 0, or the device's negative
 * errno (counted in tx_fail; p and what it references freed). */
static inline int cn__conn_xmit(struct cn_conn *c, struct cn_pkt *p, uint8_t *h, uint32_t hdr_len,
				uint32_t l4_off)
{
	int rc;

	p->hdr = h;
	p->hdr_len = (uint16_t)hdr_len;
	p->l3_off = CN_ETH_HLEN;
	p->l4_off = (uint16_t)l4_off;
	rc = cn_net_xmit(c->net, p);
	if (rc < 0)
		c->st.tx_fail++;
	return rc;
}


/* arp.c */
CN_INTERNAL void cn__arp_input(struct cn_conn *c, struct cn_mbuf *m);
CN_INTERNAL void cn__arp_learn(struct cn_conn *c, uint32_t ip, const uint8_t *mac, bool create);
/* icmp.c */
CN_INTERNAL void cn__icmp_input(struct cn_conn *c, struct cn_mbuf *m, const struct cn_pkt_info *pi);
/* conn.c: the socket table */
CN_INTERNAL struct cn_sock *cn__sock_new(struct cn_conn *c);
CN_INTERNAL void cn__sock_hash_add(struct cn_sock *s);
CN_INTERNAL struct cn_sock *cn__sock_find(struct cn_conn *c, uint32_t raddr, uint16_t rport,
					  uint16_t lport);
CN_INTERNAL struct cn_sock *cn__sock_listener(struct cn_conn *c, uint16_t lport);
CN_INTERNAL void cn__sock_free(struct cn_sock *s);
CN_INTERNAL void cn__sock_fail(struct cn_sock *s, int err);
/* Apply the state the TCB implies and the TIME_WAIT/orphan timers;
 * returns s, or NULL when it was freed (released sockets only). */
CN_INTERNAL struct cn_sock *cn__sock_update(struct cn_sock *s, uint64_t now);
CN_INTERNAL void cn__sock_established(struct cn_sock *s);
/* The syncache's age list (a half-open child of a listener). */
CN_INTERNAL void cn__syncache_add(struct cn_sock *s);
CN_INTERNAL void cn__syncache_del(struct cn_sock *s);

#endif
