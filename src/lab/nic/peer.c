/* SPDX-License-Identifier: BSD-2-Clause */
/* Simulated peers built from packet templates (Nahum et al.): each peer keeps
 * one prebuilt frame and the partial sums of its constant words, so
 * producing an ACK or a data segment is a template copy plus a few
 * patched words, cheap enough that the stack under test dominates. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"
#include "dev_impl.h"

#define HMAX (CN_ETH_HLEN + CN_IPV4_HLEN + CN_TCP_HLEN + CN_TCPOLEN_TSTAMP_APPA)
#define PAT_MAX 9000

struct cn_peer {
	struct cn_peer_params p;
	struct cn_netdev *dev;
	struct cn_peer_stats st;
	uint32_t hdr_len;          /* template bytes */
	uint32_t l4_sum0;          /* TCP/UDP constant words incl. pseudo-header */
	uint32_t rcv_nxt;          /* SINK: next expected seq; SOURCE: constant ack */
	uint32_t snd_una, snd_nxt; /* SOURCE */
	uint32_t snd_wnd;          /* SOURCE: the stack's window, bytes */
	uint32_t unacked;          /* SINK: in-order segments since the last ACK */
	uint32_t ts_echo;          /* the stack's last TSval */
	uint32_t pat_sum;          /* SOURCE: sum of pattern bytes [4, mss) */
	uint8_t tmpl[HMAX];
	uint8_t pat[PAT_MAX];      /* SOURCE payload pattern; UDP SOURCE: the whole frame */
	uint32_t udp_len;          /* UDP SOURCE: frame length */
};

static void wire_in(void *arg, const uint8_t *frame, uint32_t len);

static void build_template(struct cn_peer *pe)
{
	const struct cn_peer_params *p = &pe->p;
	bool udp = p->kind == CN_PEER_UDP_SINK || p->kind == CN_PEER_UDP_SOURCE;
	uint8_t *l4;

	memset(pe->tmpl, 0, sizeof(pe->tmpl));
	l4 = cn_net_hdr_build(pe->tmpl, &(const struct cn_net_hdr_spec){
		.dmac = p->rmac,
		.smac = p->lmac,
		.saddr = p->laddr,
		.daddr = p->raddr,
		.proto = udp ? CN_IPV4_PROTO_UDP : CN_IPV4_PROTO_TCP,
	});
	if (udp) {
		struct cn_udp_hdr *uh = (struct cn_udp_hdr *)l4;
		uh->sport = p->lport;
		uh->dport = p->rport;
		pe->hdr_len = CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN;
	} else {
		struct cn_tcp_hdr *th = (struct cn_tcp_hdr *)l4;
		uint32_t thl = CN_TCP_HLEN + (p->ts ? CN_TCPOLEN_TSTAMP_APPA : 0);
		th->sport = p->lport;
		th->dport = p->rport;
		th->off = (uint8_t)((thl / 4) << 4);
		th->flags = CN_TCP_ACK;
		if (p->ts) /* TSval: constant, never goes back */
			cn_tcpopt_tstamp_put((uint8_t *)(th + 1), 1, 0);
		pe->hdr_len = CN_ETH_HLEN + CN_IPV4_HLEN + thl;
		pe->l4_sum0 = cn_csum_partial(th, thl,
					      cn_csum_pseudo_ipv4(p->laddr, p->raddr, CN_IPV4_PROTO_TCP, 0));
	}
}

/* IPv4 total length and checksum for a frame of l4 bytes of L4. */
static inline void ip_finish(uint8_t *h, uint32_t l4)
{
	struct cn_ipv4_hdr *ip = (struct cn_ipv4_hdr *)(h + CN_ETH_HLEN);

	ip->total_len = cn_hton16((uint16_t)(CN_IPV4_HLEN + l4));
	ip->csum = 0;
	ip->csum = cn_csum_ipv4_hdr(ip, CN_IPV4_HLEN);
}

struct cn_peer *cn_peer_create(struct cn_netdev *dev, const struct cn_peer_params *pp)
{
	struct cn_peer_params q;
	const struct cn_peer_params *p = &q;
	struct cn_peer *pe;

	if (!dev || !pp || cn__params_copy(&q, sizeof(q), pp) < 0)
		return cn__fail(EINVAL);
	if (!q.kind)
		q.kind = CN_PEER_TCP_SINK;
	if (!q.mss)
		q.mss = 1460;
	if (p->kind < CN_PEER_TCP_SINK || p->kind > CN_PEER_UDP_SOURCE ||
	    ((p->kind == CN_PEER_TCP_SOURCE || p->kind == CN_PEER_UDP_SOURCE) &&
	     (p->mss < 8 || p->mss > PAT_MAX - 64)) || p->wscale > 14)
		return cn__fail(EINVAL);
	pe = cn__zalloc_lines(sizeof(*pe));
	if (!pe)
		return NULL;
	pe->p = *p;
	if (!pe->p.ack_every)
		pe->p.ack_every = 2;
	pe->dev = dev;
	pe->st.hash = 0xcbf29ce484222325ull;
	pe->rcv_nxt = p->irs + 1;
	pe->snd_una = pe->snd_nxt = p->iss + 1;
	pe->snd_wnd = 65535;
	build_template(pe);
	if (p->kind == CN_PEER_TCP_SOURCE) {
		for (uint32_t i = 0; i < p->mss; i++)
			pe->pat[i] = (uint8_t)(i * 13 + 7);
		pe->pat_sum = cn_csum_partial(pe->pat + 4, p->mss - 4u, 0);
	} else if (p->kind == CN_PEER_UDP_SOURCE) {
		/* The whole datagram is constant: built once. */
		uint32_t l4 = CN_UDP_HLEN + p->mss;
		uint8_t *f = pe->pat;
		struct cn_udp_hdr *uh = (struct cn_udp_hdr *)(f + CN_ETH_HLEN + CN_IPV4_HLEN);
		memcpy(f, pe->tmpl, pe->hdr_len);
		for (uint32_t i = 0; i < p->mss; i++)
			f[pe->hdr_len + i] = (uint8_t)(i * 13 + 7);
		uh->len = cn_hton16((uint16_t)l4);
		ip_finish(f, l4);
		if (p->csum) {
			uint32_t s = cn_csum_pseudo_ipv4(p->laddr, p->raddr, CN_IPV4_PROTO_UDP, (uint16_t)l4);
			uint16_t c = (uint16_t)~cn_csum_fold(cn_csum_partial(uh, l4, s));
			uh->csum = c ? c : 0xffff;
		}
		pe->udp_len = pe->hdr_len + p->mss;
	}
	cn_netdev_set_wire(dev, wire_in, pe);
	return pe;
}

void cn_peer_destroy(struct cn_peer *pe)
{
	if (pe)
		cn_netdev_set_wire(pe->dev, NULL, NULL);
	free(pe);
}

const struct cn_peer_stats *cn_peer_stats(const struct cn_peer *pe)
{
	return &pe->st;
}

/* SINK: an ACK from the template straight into the device's RX buffer. */
static void send_ack(struct cn_peer *pe)
{
	uint32_t room, hl = pe->hdr_len, l4 = hl - CN_ETH_HLEN - CN_IPV4_HLEN;
	uint8_t *f = cn_netdev_nic_rx_reserve(pe->dev, &room);
	struct cn_tcp_hdr *th;
	uint64_t s;
	uint32_t ack_n, seq_n, tse;
	uint16_t win_n;

	if (!f)
		return;
	memcpy(f, pe->tmpl, hl);
	ip_finish(f, l4);
	th = (struct cn_tcp_hdr *)(f + CN_ETH_HLEN + CN_IPV4_HLEN);
	seq_n = cn_hton32(pe->snd_nxt);
	ack_n = cn_hton32(pe->rcv_nxt);
	win_n = cn_hton16((uint16_t)((pe->p.window >> pe->p.wscale) > 0xffff ? 0xffff
									       : pe->p.window >> pe->p.wscale));
	th->seq = seq_n;
	th->ack = ack_n;
	th->win = win_n;
	s = (uint64_t)pe->l4_sum0 + seq_n + ack_n + win_n + cn__csum_be16((uint16_t)l4);
	if (pe->p.ts) {
		tse = cn_hton32(pe->ts_echo);
		memcpy((uint8_t *)(th + 1) + 8, &tse, 4);
		s += tse;
	}
	th->csum = (uint16_t)~cn_csum_fold(s);
	cn_netdev_nic_rx_commit(pe->dev, hl);
	pe->st.acks_out++;
	pe->unacked = 0;
}

void cn_peer_flush(struct cn_peer *pe)
{
	if (pe->p.kind == CN_PEER_TCP_SINK && pe->unacked)
		send_ack(pe);
}

static void wire_in(void *arg, const uint8_t *frame, uint32_t len)
{
	struct cn_peer *pe = arg;
	struct cn_pkt_info pi;

	if (cn_net_parse(frame, len, 0, &pi) != CN_DROP_NONE)
		return;
	pe->st.frames_in++;
	if (pe->p.verify && !cn_net_l4_csum_ok(&pi)) {
		pe->st.bad_csum++;
		return;
	}
	switch (pe->p.kind) {
	case CN_PEER_TCP_SINK:
		if (pi.proto != CN_IPV4_PROTO_TCP)
			return;
		if (pi.has_ts)
			pe->ts_echo = pi.ts_val;
		if (pi.pay_len == 0)
			return;
		if (pi.seq != pe->rcv_nxt) {
			pe->st.out_of_order++;
			send_ack(pe); /* duplicate ACK */
			return;
		}
		pe->rcv_nxt += pi.pay_len;
		pe->st.bytes_in += pi.pay_len;
		if (pe->p.verify) {
			uint64_t h = pe->st.hash;
			for (uint32_t i = 0; i < pi.pay_len; i++)
				h = (h ^ frame[pi.pay_off + i]) * 0x100000001b3ull;
			pe->st.hash = h;
		}
		if (++pe->unacked >= pe->p.ack_every)
			send_ack(pe);
		break;
	case CN_PEER_TCP_SOURCE:
		if (pi.proto != CN_IPV4_PROTO_TCP)
			return;
		if (pi.has_ts)
			pe->ts_echo = pi.ts_val;
		if (cn_seq_gt(pi.ack, pe->snd_una) && cn_seq_leq(pi.ack, pe->snd_nxt))
			pe->snd_una = pi.ack;
		pe->snd_wnd = (uint32_t)pi.win << pe->p.wscale;
		break;
	default:
		pe->st.bytes_in += pi.pay_len;
		break;
	}
}

uint8_t cn_peer_stream_byte(const struct cn_peer *pe, uint64_t off)
{
	uint32_t mss = pe->p.mss, within = (uint32_t)(off % mss);

	if (within < 4) {
		uint32_t seq = pe->p.iss + 1 + (uint32_t)(off - within);
		return (uint8_t)(seq >> (24 - 8 * within));
	}
	return pe->pat[within];
}

unsigned cn_peer_send(struct cn_peer *pe, unsigned max)
{
	unsigned n = 0;
	uint32_t room;
	uint8_t *f;

	if (pe->p.kind == CN_PEER_UDP_SOURCE) {
		while (n < max && (f = cn_netdev_nic_rx_reserve(pe->dev, &room)) && room >= pe->udp_len) {
			memcpy(f, pe->pat, pe->udp_len);
			cn_netdev_nic_rx_commit(pe->dev, pe->udp_len);
			pe->st.frames_out++;
			pe->st.bytes_out += pe->p.mss;
			n++;
		}
		return n;
	}
	if (pe->p.kind != CN_PEER_TCP_SOURCE)
		return 0;
	while (n < max && pe->snd_nxt - pe->snd_una + pe->p.mss <= pe->snd_wnd &&
	       (f = cn_netdev_nic_rx_reserve(pe->dev, &room)) != NULL) {
		uint32_t hl = pe->hdr_len, mss = pe->p.mss;
		uint32_t l4 = hl - CN_ETH_HLEN - CN_IPV4_HLEN + mss;
		struct cn_tcp_hdr *th = (struct cn_tcp_hdr *)(f + CN_ETH_HLEN + CN_IPV4_HLEN);
		uint32_t seq_n = cn_hton32(pe->snd_nxt), ack_n = cn_hton32(pe->rcv_nxt), tse = 0;
		uint16_t win_n = cn_hton16(0xffff);
		uint64_t s;

		if (room < hl + mss)
			break;
		memcpy(f, pe->tmpl, hl);
		memcpy(f + hl, pe->pat, mss);
		memcpy(f + hl, &seq_n, 4); /* payload starts with its own seq */
		ip_finish(f, l4);
		th->seq = seq_n;
		th->ack = ack_n;
		th->win = win_n;
		/* seq_n appears twice: in the header and the payload's first
		 * word (an even offset, since the header length is even). */
		s = (uint64_t)pe->l4_sum0 + 2ull * seq_n + ack_n + win_n + pe->pat_sum +
		    cn__csum_be16((uint16_t)l4);
		if (pe->p.ts) {
			tse = cn_hton32(pe->ts_echo);
			memcpy((uint8_t *)(th + 1) + 8, &tse, 4);
			s += tse;
		}
		th->csum = (uint16_t)~cn_csum_fold(s);
		cn_netdev_nic_rx_commit(pe->dev, hl + mss);
		pe->snd_nxt += mss;
		pe->st.frames_out++;
		pe->st.bytes_out += mss;
		n++;
	}
	return n;
}
