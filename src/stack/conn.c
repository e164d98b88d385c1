/* SPDX-License-Identifier: BSD-2-Clause */
/* The connection manager: creation, the slow-path hook that sorts what the
 * fast path refused, the socket table, the state changes that follow the
 * FINs the fast path exchanged, timers, and the socket API.
 *
 * Who frees what. A socket the application holds is freed only by
 * cn_sock_close/abort (or cn_conn_destroy). A released socket (closed by
 * the application) and an embryonic or not-yet-accepted child of a
 * listener are the conn's: it frees them when their exchange ends. The
 * TCB of a socket is freed when the connection ends (reset, LAST_ACK's
 * ACK, TIME_WAIT expiry) unless the application still holds the socket
 * with unread bytes: those stay readable until recv drains them. */
#include <errno.h>
#include <stdlib.h>

#include "agelist.h"
#include "conn_impl.h"

CN_NAME_FN(cn_conn_drop_name, enum cn_conn_drop,
	[CN_CONN_DROP_NONE] = "none",
	[CN_CONN_DROP_ARP_BAD] = "arp_bad",
	[CN_CONN_DROP_ARP_OP] = "arp_op",
	[CN_CONN_DROP_ARP_NOT_US] = "arp_not_us",
	[CN_CONN_DROP_IP_NOT_US] = "ip_not_us",
	[CN_CONN_DROP_ICMP_TRUNC] = "icmp_trunc",
	[CN_CONN_DROP_ICMP_CSUM] = "icmp_csum",
	[CN_CONN_DROP_ICMP_TYPE] = "icmp_type",
	[CN_CONN_DROP_TCP_PARSE] = "tcp_parse",
	[CN_CONN_DROP_TCP_CSUM] = "tcp_csum",
	[CN_CONN_DROP_TCP_CLOSED] = "tcp_closed",
	[CN_CONN_DROP_TCP_RST_CLOSED] = "tcp_rst_closed",
	[CN_CONN_DROP_TCP_BAD_ACK] = "tcp_bad_ack",
	[CN_CONN_DROP_TCP_RST_SEQ] = "tcp_rst_seq",
	[CN_CONN_DROP_TCP_RST_CHALLENGE] = "tcp_rst_challenge",
	[CN_CONN_DROP_TCP_SYN_CHALLENGE] = "tcp_syn_challenge",
	[CN_CONN_DROP_TCP_SYN_DUP] = "tcp_syn_dup",
	[CN_CONN_DROP_TCP_NO_ACK] = "tcp_no_ack",
	[CN_CONN_DROP_TCP_SEQ] = "tcp_seq",
	[CN_CONN_DROP_TCP_UNEXPECTED] = "tcp_unexpected",
	[CN_CONN_DROP_BACKLOG] = "backlog",
	[CN_CONN_DROP_NO_SOCKS] = "no_socks",
	[CN_CONN_DROP_TCB] = "tcb",
	[CN_CONN_DROP_ARP_UNSOLICITED] = "arp_unsolicited",
	[CN_CONN_DROP_COOKIE] = "cookie",
)

/* A state's name is its enumerator's, less the prefix. */
#define STATE_NAME(s) [CN_SOCK_##s] = #s
CN_NAME_FN(cn_sock_state_name, enum cn_sock_state,
	STATE_NAME(CLOSED),
	STATE_NAME(LISTEN),
	STATE_NAME(SYN_SENT),
	STATE_NAME(SYN_RCVD),
	STATE_NAME(ESTABLISHED),
	STATE_NAME(FIN_WAIT_1),
	STATE_NAME(FIN_WAIT_2),
	STATE_NAME(CLOSING),
	STATE_NAME(TIME_WAIT),
	STATE_NAME(CLOSE_WAIT),
	STATE_NAME(LAST_ACK),
)
#undef STATE_NAME

/* ------------------------------------------------------------ socket table */

struct cn_sock *cn__sock_new(struct cn_conn *c)
{
	struct cn_sock *s;

	if (c->nsocks >= c->p.max_socks)
		return cn__fail(ENOSPC);
	s = calloc(1, sizeof(*s));
	if (!s)
		return cn__fail(ENOMEM);
	s->c = c;
	s->laddr = c->addr;
	s->next = c->all;
	if (c->all)
		c->all->prev = s;
	c->all = s;
	c->nsocks++;
	return s;
}

void cn__sock_hash_add(struct cn_sock *s)
{
	struct cn_conn *c = s->c;
	unsigned h = cn__hash_4tuple(s->raddr, s->rport, s->lport);

	s->hnext = c->hash[h];
	c->hash[h] = s;
	s->hashed = true;
}

static void sock_unhash(struct cn_sock *s)
{
	struct cn_conn *c = s->c;
	struct cn_sock **pp;

	if (!s->hashed)
		return;
	for (pp = &c->hash[cn__hash_4tuple(s->raddr, s->rport, s->lport)]; *pp; pp = &(*pp)->hnext)
		if (*pp == s) {
			*pp = s->hnext;
			break;
		}
	s->hashed = false;
	s->hnext = NULL;
}

struct cn_sock *cn__sock_find(struct cn_conn *c, uint32_t raddr, uint16_t rport, uint16_t lport)
{
	struct cn_sock *s;

	for (s = c->hash[cn__hash_4tuple(raddr, rport, lport)]; s; s = s->hnext)
		if (s->raddr == raddr && s->rport == rport && s->lport == lport)
			return s;
	return NULL;
}

struct cn_sock *cn__sock_listener(struct cn_conn *c, uint16_t lport)
{
	struct cn_sock *s;

	for (s = c->listeners; s; s = s->hnext)
		if (s->lport == lport)
			return s;
	return NULL;
}

/* Take a child off its listener's accept queue (or embryonic count). */
static void sock_detach(struct cn_sock *s)
{
	struct cn_sock *l = s->parent, **pp;

	if (!l)
		return;
	if (s->queued) {
		for (pp = &l->aq_head; *pp; pp = &(*pp)->aq_next)
			if (*pp == s) {
				*pp = s->aq_next;
				break;
			}
		l->aq_tail = NULL;
		for (struct cn_sock *x = l->aq_head; x; x = x->aq_next)
			l->aq_tail = x;
		s->queued = false;
		l->nqueued--;
	}
	l->nchild--;
	s->parent = NULL;
}

void cn__sock_free(struct cn_sock *s)
{
	struct cn_conn *c = s->c;

	cn__syncache_del(s);
	if (s->listener) {
		struct cn_sock **pp;
		for (pp = &c->listeners; *pp; pp = &(*pp)->hnext)
			if (*pp == s) {
				*pp = s->hnext;
				break;
			}
	} else {
		sock_unhash(s);
	}
	sock_detach(s);
	if (s->tcb)
		cn_tcp_close(s->tcb);
	if (s->prev)
		s->prev->next = s->next;
	else
		c->all = s->next;
	if (s->next)
		s->next->prev = s->prev;
	c->nsocks--;
	free(s);
}

/* The TCB goes unless the application still holds unread bytes. */
static void maybe_drop_tcb(struct cn_sock *s)
{
	struct cn_tcp_info i;

	if (!s->tcb)
		return;
	cn_tcp_get_info(s->tcb, &i);
	if (i.fin_rcvd)
		s->eof = true;
	if (i.rcv_queued && !s->released && !s->err)
		return;
	cn_tcp_close(s->tcb);
	s->tcb = NULL;
}

/* The connection is over (CLOSED): unhash it so that the 4-tuple is free,
 * and free what nobody holds. */
static bool sock_end(struct cn_sock *s)
{
	s->st = CN_SOCK_CLOSED;
	s->rtx_at = s->tw_at = 0;
	sock_unhash(s);
	if (s->released || (s->parent && !s->queued)) {
		cn__sock_free(s);
		return true;
	}
	maybe_drop_tcb(s);
	return false;
}

void cn__sock_fail(struct cn_sock *s, int err)
{
	s->err = err;
	if (s->tcb && err) {
		/* Unread bytes of a reset connection are lost (RFC 9293 3.10.7.4). */
		cn_tcp_close(s->tcb);
		s->tcb = NULL;
	}
	(void)sock_end(s);
}

void cn__syncache_add(struct cn_sock *s)
{
	struct cn_conn *c = s->c;

	s->in_syncache = true;
	CN__AGE_PUSH(c->sc_oldest, c->sc_newest, s, sc_older, sc_newer);
	c->nsyncache++;
}

void cn__syncache_del(struct cn_sock *s)
{
	struct cn_conn *c = s->c;

	if (!s->in_syncache)
		return;
	CN__AGE_UNLINK(c->sc_oldest, c->sc_newest, s, sc_older, sc_newer);
	s->sc_older = s->sc_newer = NULL;
	s->in_syncache = false;
	c->nsyncache--;
}

void cn__sock_established(struct cn_sock *s)
{
	struct cn_sock *l = s->parent;

	cn__syncache_del(s);
	s->st = CN_SOCK_ESTABLISHED;
	s->was_est = true;
	s->rtx_at = 0;
	s->retries = 0;
	if (l && !s->queued) {
		s->queued = true;
		l->nqueued++;
		s->aq_next = NULL;
		CN_LIST_APPEND(l->aq_head, l->aq_tail, s, s, aq_next);
	}
}

/* The state the TCB's FIN flags imply, without acting on it. */
static enum cn_sock_state derive(const struct cn_sock *s)
{
	struct cn_tcp_info i;

	enum cn_sock_state st = s->st;

	if (!s->tcb)
		return st;
	cn_tcp_get_info(s->tcb, &i);
	/* cn_tcp_shutdown called on cn_sock_tcb() directly counts too. */
	if (i.shut_wr && st == CN_SOCK_ESTABLISHED)
		st = CN_SOCK_FIN_WAIT_1;
	else if (i.shut_wr && st == CN_SOCK_CLOSE_WAIT)
		st = CN_SOCK_LAST_ACK;
	switch (st) {
	case CN_SOCK_ESTABLISHED:
		return i.fin_rcvd ? CN_SOCK_CLOSE_WAIT : CN_SOCK_ESTABLISHED;
	case CN_SOCK_FIN_WAIT_1:
		if (i.fin_acked)
			return i.fin_rcvd ? CN_SOCK_TIME_WAIT : CN_SOCK_FIN_WAIT_2;
		return i.fin_rcvd ? CN_SOCK_CLOSING : CN_SOCK_FIN_WAIT_1;
	case CN_SOCK_FIN_WAIT_2:
		return i.fin_rcvd ? CN_SOCK_TIME_WAIT : CN_SOCK_FIN_WAIT_2;
	case CN_SOCK_CLOSING:
		return i.fin_acked ? CN_SOCK_TIME_WAIT : CN_SOCK_CLOSING;
	case CN_SOCK_LAST_ACK:
		return i.fin_acked ? CN_SOCK_CLOSED : CN_SOCK_LAST_ACK;
	default:
		return st;
	}
}

/* Apply what derive() says plus the TIME_WAIT and orphan timers. Returns
 * s, or NULL when it was freed. */
static struct cn_sock *sock_update(struct cn_sock *s, uint64_t now)
{
	struct cn_conn *c = s->c;
	enum cn_sock_state st;

	if (s->tcb) {
		struct cn_tcp_info i;
		cn_tcp_get_info(s->tcb, &i);
		s->shut = i.shut_wr;
	}
	st = derive(s);

	if (st != s->st) {
		if (st == CN_SOCK_CLOSE_WAIT)
			s->eof = true;
		if (st == CN_SOCK_TIME_WAIT) {
			s->eof = true;
			s->tw_at = now + c->p.time_wait;
		}
		if (st == CN_SOCK_CLOSED) {
			c->st.closes++;
			return sock_end(s) ? NULL : s;
		}
		s->st = st;
	}
	if (s->st == CN_SOCK_TIME_WAIT && now >= s->tw_at) {
		c->st.tw_expired++;
		c->st.closes++;
		return sock_end(s) ? NULL : s;
	}
	if (s->released && s->orphan_at && now >= s->orphan_at && s->st != CN_SOCK_TIME_WAIT) {
		c->st.orphan_timeouts++;
		c->st.resets++;
		cn__tcpc_send_rst(s);
		cn__sock_free(s);
		return NULL;
	}
	return s;
}

struct cn_sock *cn__sock_update(struct cn_sock *s, uint64_t now)
{
	return sock_update(s, now);
}

/* ------------------------------------------------------------ the hook */

static bool slow_hook(void *arg, struct cn_mbuf *m, enum cn_drop why)
{
	struct cn_conn *c = arg;
	struct cn_pkt_info pi;
	enum cn_drop r;

	switch (why) {
	case CN_DROP_ETH_TYPE:
		if (m->len >= CN_ETH_HLEN &&
		    cn__ld16(m->data + 12) == cn_hton16(CN_ETH_TYPE_ARP)) {
			cn__arp_input(c, m);
			return true;
		}
		return false;
	case CN_DROP_IP_PROTO:
		r = cn_net_parse(m->data, m->len, 0, &pi);
		if (r == CN_DROP_IP_PROTO && pi.proto == CN_IPV4_PROTO_ICMP) {
			cn__icmp_input(c, m, &pi);
			return true;
		}
		return false;
	case CN_DROP_TCP_NO_CONN:
	case CN_DROP_TCP_FLAGS:
		/* the frame's checksum status from the device, as the fast
		 * path takes it (a verified checksum is not summed again) */
		r = cn_net_parse(m->data, m->len, cn__rx_flags(c->net, m), &pi);
		if (r != CN_DROP_NONE || pi.proto != CN_IPV4_PROTO_TCP) {
			cn__conn_drop(c, CN_CONN_DROP_TCP_PARSE);
			cn_mbuf_free_chain(m);
			return true;
		}
		cn__tcpc_input(c, m, &pi);
		return true;
	default:
		return false;
	}
}

/* ------------------------------------------------------------ the conn */

struct cn_conn *cn_conn_create(struct cn_net *net, const struct cn_conn_params *params)
{
	struct cn_conn_params q;
	struct cn_conn *c;
	uint32_t rb;

	if (!net || !params || cn__params_copy(&q, sizeof(q), params) < 0 ||
	    (q.mss && (q.mss < CN_CONN_MIN_MSS || q.mss > CN_TCP_MSS_MAX)))
		return cn__fail(EINVAL);
	c = calloc(1, sizeof(*c));
	if (!c)
		return cn__fail(ENOMEM);
	c->net = net;
	c->p = q;
	c->p.tcp.size = 0;
	CN_DEFAULT(c->p.tcp.sndbuf, CN_SOCKBUF_CHAIN);
	CN_DEFAULT(c->p.mss, 1460);
	CN_DEFAULT(c->p.max_socks, 256);
	CN_DEFAULT(c->p.syn_rto, 1000);
	CN_DEFAULT(c->p.syn_retries, 5);
	CN_DEFAULT(c->p.time_wait, 2000);
	CN_DEFAULT(c->p.arp_retry, 1000);
	CN_DEFAULT(c->p.orphan_timeout, 60000);
	CN_DEFAULT(c->p.syncache_max, 256);
	CN_DEFAULT(c->p.synack_retries, c->p.syn_retries);
	CN_DEFAULT(c->p.cookie_rotate, 60000);
	c->addr = CN_BE32_RAW(cn_net_addr(net));
	memcpy(c->mac, cn_net_mac(net), CN_ETH_ALEN);
	c->sip_k0 = q.isn_secret;
	c->sip_k1 = q.isn_secret * 0x9e3779b97f4a7c15ull ^ 0x2545f4914f6cdd1dull;
	c->port_next = (uint32_t)cn__siphash24_2w(c->sip_k0, c->sip_k1, c->addr, 0) % CN_EPHEMERAL_N;
	cn__tcpc_cookie_init(c);
	/* The window scale we offer: the least shift that lets the receive
	 * buffer fit the 16-bit field (RFC 7323 2.3). */
	rb = q.tcp.rcvbuf_size ? q.tcp.rcvbuf_size : 1u << 20;
	while (!c->p.no_wscale && c->rcv_wscale < 14 && (rb >> c->rcv_wscale) > 0xffff)
		c->rcv_wscale++;
	c->syn_win = (uint16_t)(rb > 0xffff ? 0xffff : rb);
	cn_net_set_slow(net, slow_hook, c);
	return c;
}

void cn_conn_destroy(struct cn_conn *c)
{
	if (!c)
		return;
	cn_net_set_slow(c->net, NULL, NULL);
	while (c->all) {
		struct cn_sock *s = c->all;
		s->parent = NULL; /* listeners go too: no queue upkeep */
		s->queued = false;
		cn__sock_free(s);
	}
	free(c);
}

void cn_conn_poll(struct cn_conn *c, uint64_t now)
{
	struct cn_sock *s, *n;

	c->now = now;
	cn_net_timer(c->net, now);
	cn__tcpc_cookie_rotate(c, now);
	/* A socket frees only itself here, so the saved next stays valid. */
	for (s = c->all; s; s = n) {
		n = s->next;
		if (s->listener)
			continue;
		if (s->st == CN_SOCK_SYN_SENT || s->st == CN_SOCK_SYN_RCVD)
			cn__tcpc_timers(s, now);
		else
			(void)sock_update(s, now);
	}
}

struct cn_net *cn_conn_net(const struct cn_conn *c)
{
	return c->net;
}

const struct cn_conn_stats *cn_conn_stats(const struct cn_conn *c)
{
	return &c->st;
}

uint32_t cn_conn_socks(const struct cn_conn *c)
{
	return c->nsocks;
}

/* ------------------------------------------------------------ sockets */

struct cn_sock *cn_sock_listen(struct cn_conn *c, cn_be16_t port_be, uint32_t backlog)
{
	uint16_t port = cn_be16toh(port_be);
	struct cn_sock *s;

	if (!c || !port || !backlog)
		return cn__fail(EINVAL);
	if (cn__sock_listener(c, port))
		return cn__fail(EADDRINUSE);
	s = cn__sock_new(c);
	if (!s)
		return NULL;
	s->listener = true;
	s->st = CN_SOCK_LISTEN;
	s->lport = port;
	s->backlog = backlog;
	s->hnext = c->listeners;
	c->listeners = s;
	return s;
}

struct cn_sock *cn_sock_accept(struct cn_sock *l)
{
	struct cn_sock *s;

	if (!l || !l->listener)
		return cn__fail(EINVAL);
	s = l->aq_head;
	if (!s)
		return cn__fail(EAGAIN);
	sock_detach(s);
	return s;
}

static bool port_free(struct cn_conn *c, uint32_t raddr, uint16_t rport, uint16_t lport)
{
	return !cn__sock_listener(c, lport) && !cn__sock_find(c, raddr, rport, lport) &&
	       !cn_tcp_lookup(c->net, CN_BE32_FROM_RAW(raddr), cn_htobe16(rport), cn_htobe16(lport));
}

struct cn_sock *cn_sock_connect(struct cn_conn *c, cn_be32_t raddr_be, cn_be16_t rport_be,
				uint64_t now)
{
	uint32_t raddr = CN_BE32_RAW(raddr_be);
	uint16_t rport = cn_be16toh(rport_be);
	struct cn_sock *s;
	uint32_t i;
	uint16_t lport = 0;

	if (!c || !raddr || !rport || raddr == 0xffffffffu || raddr == c->addr)
		return cn__fail(EINVAL);
	c->now = now;
	for (i = 0; i < CN_EPHEMERAL_N; i++) {
		uint16_t p = (uint16_t)(CN_EPHEMERAL_LO + (c->port_next + i) % CN_EPHEMERAL_N);
		if (port_free(c, raddr, rport, p)) {
			lport = p;
			break;
		}
	}
	if (!lport)
		return cn__fail(EADDRNOTAVAIL);
	s = cn__sock_new(c);
	if (!s)
		return NULL;
	c->port_next = (c->port_next + i + 1) % CN_EPHEMERAL_N;
	s->st = CN_SOCK_SYN_SENT;
	s->raddr = raddr;
	s->rport = rport;
	s->lport = lport;
	cn__tcpc_connect(s, now);
	cn__sock_hash_add(s);
	if (cn_conn_arp_lookup(c, raddr_be, s->rmac)) {
		(void)cn__tcpc_send_syn(s, false);
		s->rtx_at = now + c->p.syn_rto;
	} else {
		s->arp_wait = true;
		(void)cn_conn_arp_request(c, raddr_be, now);
		s->rtx_at = now + c->p.arp_retry;
	}
	return s;
}

int cn_sock_send(struct cn_sock *s, const void *buf, uint32_t len, uint64_t now)
{
	s->c->now = now;
	if (s->listener)
		return -ENOTCONN;
	(void)sock_update(s, now); /* not released: never freed here */
	if (s->err)
		return s->err == ECONNRESET ? -ECONNRESET : -ENOTCONN;
	if (s->st == CN_SOCK_ESTABLISHED || s->st == CN_SOCK_CLOSE_WAIT) {
		if (!s->tcb)
			return -EPIPE;
		return cn_tcp_send(s->tcb, buf, len, now);
	}
	if (s->was_est)
		return -EPIPE;
	return -ENOTCONN;
}

int cn_sock_recv(struct cn_sock *s, void *buf, uint32_t len, uint64_t now)
{
	struct cn_tcp_info i;
	int n;

	s->c->now = now;
	if (s->listener)
		return -EINVAL;
	(void)sock_update(s, now);
	if (s->tcb) {
		n = cn_tcp_recv(s->tcb, buf, len, now);
		cn_tcp_get_info(s->tcb, &i);
		if (i.fin_rcvd)
			s->eof = true;
		if (s->st == CN_SOCK_CLOSED && i.rcv_queued == 0)
			maybe_drop_tcb(s);
		if (n > 0)
			return n;
		return s->eof ? 0 : -EAGAIN;
	}
	if (s->err)
		return -s->err;
	if (s->eof || s->st == CN_SOCK_CLOSED)
		return 0;
	return -EAGAIN;
}

int cn_sock_shutdown(struct cn_sock *s, uint64_t now)
{
	s->c->now = now;
	if (s->listener)
		return -EINVAL;
	(void)sock_update(s, now);
	switch (s->st) {
	case CN_SOCK_ESTABLISHED:
	case CN_SOCK_CLOSE_WAIT: {
		int rc = cn_tcp_shutdown(s->tcb, now);
		if (rc < 0)
			return rc;
		s->shut = true;
		s->st = s->st == CN_SOCK_ESTABLISHED ? CN_SOCK_FIN_WAIT_1 : CN_SOCK_LAST_ACK;
		return 0;
	}
	case CN_SOCK_FIN_WAIT_1:
	case CN_SOCK_FIN_WAIT_2:
	case CN_SOCK_CLOSING:
	case CN_SOCK_TIME_WAIT:
	case CN_SOCK_LAST_ACK:
		return 0;
	default:
		return -ENOTCONN;
	}
}

/* A listener's children it has not handed out are reset with it. */
static void listener_free(struct cn_sock *l, uint64_t now)
{
	struct cn_conn *c = l->c;
	struct cn_sock *s, *n;

	for (s = c->all; s; s = n) {
		n = s->next;
		if (s->parent == l) {
			(void)now;
			cn__tcpc_send_rst(s);
			c->st.resets++;
			cn__sock_free(s);
		}
	}
	cn__sock_free(l);
}

void cn_sock_abort(struct cn_sock *s, uint64_t now)
{
	struct cn_conn *c = s->c;

	c->now = now;
	if (s->listener) {
		listener_free(s, now);
		return;
	}
	/* A CLOSED socket may still hold its TCB for unread bytes: the
	 * connection is over, the peer gets nothing. */
	if (s->st != CN_SOCK_CLOSED && (s->tcb || s->st == CN_SOCK_SYN_RCVD)) {
		cn__tcpc_send_rst(s);
		c->st.resets++;
	}
	cn__sock_free(s);
}

void cn_sock_close(struct cn_sock *s, uint64_t now)
{
	struct cn_conn *c = s->c;
	struct cn_tcp_info i;

	c->now = now;
	if (s->listener) {
		listener_free(s, now);
		return;
	}
	(void)sock_update(s, now);
	switch (s->st) {
	case CN_SOCK_CLOSED:
	case CN_SOCK_SYN_SENT:
		cn__sock_free(s);
		return;
	case CN_SOCK_SYN_RCVD:
		cn_sock_abort(s, now);
		return;
	default:
		break;
	}
	/* Synchronized with a TCB from here on. */
	cn_tcp_get_info(s->tcb, &i);
	if (i.rcv_queued && s->st != CN_SOCK_TIME_WAIT) {
		cn_sock_abort(s, now); /* unread data: RST, not FIN (RFC 2525 2.17) */
		return;
	}
	if (s->st == CN_SOCK_ESTABLISHED || s->st == CN_SOCK_CLOSE_WAIT)
		(void)cn_sock_shutdown(s, now);
	s->released = true;
	s->orphan_at = now + c->p.orphan_timeout;
	(void)sock_update(s, now);
}

enum cn_sock_state cn_sock_state(const struct cn_sock *s)
{
	return derive(s);
}

int cn_sock_error(const struct cn_sock *s)
{
	return s->err;
}

struct cn_tcb *cn_sock_tcb(struct cn_sock *s)
{
	return s->tcb;
}

uint32_t cn_sock_events(const struct cn_sock *s)
{
	struct cn_tcp_info i;
	uint32_t ev = 0;
	enum cn_sock_state st;

	if (s->listener)
		return s->aq_head ? CN_SOCK_IN : 0;
	if (s->err)
		return CN_SOCK_IN | CN_SOCK_ERR | CN_SOCK_HUP;
	st = derive(s);
	if (!s->tcb)
		return st == CN_SOCK_CLOSED ? CN_SOCK_IN | CN_SOCK_HUP : 0;
	cn_tcp_get_info(s->tcb, &i);
	if (i.rcv_queued || i.fin_rcvd)
		ev |= CN_SOCK_IN;
	if ((st == CN_SOCK_ESTABLISHED || st == CN_SOCK_CLOSE_WAIT) && !s->shut &&
	    cn_tcp_sndbuf_space(s->tcb) > 0)
		ev |= CN_SOCK_OUT;
	if (i.fin_rcvd && i.fin_acked)
		ev |= CN_SOCK_HUP;
	return ev;
}

void cn_sock_addrs(const struct cn_sock *s, cn_be32_t *laddr, cn_be16_t *lport, cn_be32_t *raddr,
		   cn_be16_t *rport)
{
	if (laddr)
		*laddr = CN_BE32_FROM_RAW(s->laddr);
	if (lport)
		*lport = cn_htobe16(s->lport);
	if (raddr)
		*raddr = CN_BE32_FROM_RAW(s->raddr);
	if (rport)
		*rport = cn_htobe16(s->rport);
}

void cn_sock_set_udata(struct cn_sock *s, void *udata)
{
	s->udata = udata;
}

void *cn_sock_udata(const struct cn_sock *s)
{
	return s->udata;
}
