/* SPDX-License-Identifier: BSD-2-Clause */
/* ARP for Ethernet and IPv4 (RFC 826): replies for our address, requests
 * for active opens, and a small table.
 *
 * Learning follows RFC 826's merge: a valid frame updates the sender's
 * entry if it exists (a gratuitous ARP too); it creates one only for a
 * request addressed to us (we are about to answer the sender) or a reply
 * to a request we sent recently. A reply nobody asked for is dropped and
 * counted: taken, it would let anyone on the link redirect our traffic
 * for an address by answering first (ARP spoofing), and a flood of them
 * could churn the table. Static entries are never overwritten. */
#include <errno.h>

#include "conn_impl.h"

#define ARP_HTYPE_ETH 1
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2
#define ARP_LEN 28

static struct cn_arp_entry *arp_find(const struct cn_conn *c, uint32_t ip)
{
	for (unsigned i = 0; i < CN_CONN_ARP_SIZE; i++)
		if (c->arp[i].ip == ip)
			return (struct cn_arp_entry *)&c->arp[i];
	return NULL;
}

/* A free slot, else the next learned entry round-robin; NULL when every
 * slot holds a static entry. */
static struct cn_arp_entry *arp_slot(struct cn_conn *c)
{
	struct cn_arp_entry *e = arp_find(c, 0);

	if (e)
		return e;
	for (unsigned n = 0; n < CN_CONN_ARP_SIZE; n++) {
		e = &c->arp[c->arp_victim];
		c->arp_victim = (c->arp_victim + 1) % CN_CONN_ARP_SIZE;
		if (!e->is_static)
			return e;
	}
	return NULL;
}

void cn__arp_learn(struct cn_conn *c, uint32_t ip, const uint8_t *mac, bool create)
{
	struct cn_arp_entry *e = arp_find(c, ip);

	if (e && e->is_static)
		return;
	if (!e) {
		if (!create || !(e = arp_slot(c)))
			return;
		e->ip = ip;
		e->is_static = false;
	}
	memcpy(e->mac, mac, CN_ETH_ALEN);
	cn__tcpc_arp_resolved(c, ip, mac);
}

int cn_conn_arp_add(struct cn_conn *c, cn_be32_t ip_be, const uint8_t mac[6])
{
	uint32_t ip = CN_BE32_RAW(ip_be);
	struct cn_arp_entry *e;

	if (!ip || ip == 0xffffffffu)
		return -EINVAL;
	e = arp_find(c, ip);
	if (!e && !(e = arp_slot(c)))
		return -ENOSPC;
	e->ip = ip;
	e->is_static = true;
	memcpy(e->mac, mac, CN_ETH_ALEN);
	cn__tcpc_arp_resolved(c, ip, mac);
	return 0;
}

bool cn_conn_arp_lookup(const struct cn_conn *c, cn_be32_t ip_be, uint8_t mac[6])
{
	uint32_t ip = CN_BE32_RAW(ip_be);
	const struct cn_arp_entry *e;

	if (!ip)
		return false;
	e = arp_find(c, ip);
	if (!e)
		return false;
	memcpy(mac, e->mac, CN_ETH_ALEN);
	return true;
}

/* One ARP frame (padded to the Ethernet minimum) to @p dmac. */
static int arp_send(struct cn_conn *c, const uint8_t *dmac, uint16_t op, const uint8_t *tha,
		    uint32_t tpa)
{
	uint8_t *h, *a;
	uint32_t fl;
	uint16_t v;
	struct cn_pkt *p = cn__conn_pkt(c, CN_ETH_MIN_FRAME, &h, &fl);

	if (!p)
		return -ENOBUFS;
	memcpy(h, dmac, CN_ETH_ALEN);
	memcpy(h + 6, c->mac, CN_ETH_ALEN);
	v = cn_hton16(CN_ETH_TYPE_ARP);
	memcpy(h + 12, &v, 2);
	a = h + CN_ETH_HLEN;
	v = cn_hton16(ARP_HTYPE_ETH);
	memcpy(a, &v, 2);
	v = cn_hton16(CN_ETH_TYPE_IPV4);
	memcpy(a + 2, &v, 2);
	a[4] = CN_ETH_ALEN;
	a[5] = 4;
	v = cn_hton16(op);
	memcpy(a + 6, &v, 2);
	memcpy(a + 8, c->mac, CN_ETH_ALEN);
	memcpy(a + 14, &c->addr, 4);
	memcpy(a + 18, tha, CN_ETH_ALEN);
	memcpy(a + 24, &tpa, 4);
	return cn__conn_xmit(c, p, h, fl, CN_ETH_HLEN);
}

/* Remember that we asked for @p ip (its slot refreshed, else a new one). */
static void arp_asked_add(struct cn_conn *c, uint32_t ip, uint64_t now)
{
	unsigned i;

	for (i = 0; i < CN_CONN_ARP_ASKED; i++)
		if (c->arp_asked[i].ip == ip)
			break;
	if (i == CN_CONN_ARP_ASKED) {
		i = c->arp_asked_next;
		c->arp_asked_next = (c->arp_asked_next + 1) % CN_CONN_ARP_ASKED;
	}
	c->arp_asked[i].ip = ip;
	c->arp_asked[i].at = now;
}

/* True (and forgotten) when we asked for @p ip recently: the span of an
 * active open's ARP retries. */
static bool arp_asked_take(struct cn_conn *c, uint32_t ip)
{
	uint64_t span = (uint64_t)(c->p.syn_retries + 1) * c->p.arp_retry;

	for (unsigned i = 0; i < CN_CONN_ARP_ASKED; i++)
		if (c->arp_asked[i].ip == ip) {
			c->arp_asked[i].ip = 0;
			return c->now - c->arp_asked[i].at <= span;
		}
	return false;
}

int cn_conn_arp_request(struct cn_conn *c, cn_be32_t ip_be, uint64_t now)
{
	uint32_t ip = CN_BE32_RAW(ip_be);
	static const uint8_t bcast[CN_ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t zero[CN_ETH_ALEN];
	int rc;

	c->now = now;
	rc = arp_send(c, bcast, ARP_OP_REQUEST, zero, ip);
	if (rc == 0) {
		c->st.arp_req_out++;
		arp_asked_add(c, ip, now);
	}
	return rc;
}

void cn__arp_input(struct cn_conn *c, struct cn_mbuf *m)
{
	const uint8_t *a = m->data + CN_ETH_HLEN;
	uint8_t sha[CN_ETH_ALEN];
	uint32_t spa, tpa;
	uint16_t op;
	bool for_us;

	if (m->len < CN_ETH_HLEN + ARP_LEN || cn__ld16(a) != cn_hton16(ARP_HTYPE_ETH) ||
	    cn__ld16(a + 2) != cn_hton16(CN_ETH_TYPE_IPV4) || a[4] != CN_ETH_ALEN || a[5] != 4 ||
	    (a[8] & 1)) { /* a group address cannot be a sender's */
		cn__conn_drop(c, CN_CONN_DROP_ARP_BAD);
		goto out;
	}
	op = cn_ntoh16(cn__ld16(a + 6));
	memcpy(sha, a + 8, CN_ETH_ALEN);
	spa = cn__ld32(a + 14);
	tpa = cn__ld32(a + 24);
	if (op != ARP_OP_REQUEST && op != ARP_OP_REPLY) {
		cn__conn_drop(c, CN_CONN_DROP_ARP_OP);
		goto out;
	}
	for_us = tpa == c->addr;
	/* spa 0 is an RFC 5227 probe: nothing to learn; our own address
	 * from elsewhere is a conflict we do not learn either. */
	if (spa && spa != c->addr && spa != 0xffffffffu) {
		bool create = for_us && (op == ARP_OP_REQUEST || arp_asked_take(c, spa));
		if (for_us && op == ARP_OP_REPLY && !create && !arp_find(c, spa)) {
			cn__conn_drop(c, CN_CONN_DROP_ARP_UNSOLICITED);
			goto out;
		}
		cn__arp_learn(c, spa, sha, create);
	}
	if (!for_us) {
		cn__conn_drop(c, CN_CONN_DROP_ARP_NOT_US);
		goto out;
	}
	if (op == ARP_OP_REPLY) {
		c->st.arp_rep_in++;
		goto out;
	}
	c->st.arp_req_in++;
	if (arp_send(c, sha, ARP_OP_REPLY, sha, spa) == 0)
		c->st.arp_rep_out++;
out:
	cn_mbuf_free_chain(m);
}
