/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two cachenet stacks joined back to back by the laboratory's in-memory
 * NIC, one TCP connection from A to B, 10 MiB sent and checked byte for
 * byte. Every parameter struct is zero-initialised but for what names the
 * connection; the loop is the plain one a device driver runs.
 *
 *   cc two_stacks.c $(pkg-config --cflags --libs cachenet-lab)
 */
#include <stdio.h>
#include <string.h>

#include <cachenet/lab/netdev.h>
#include <cachenet/tcp.h>

#define TOTAL (10u << 20)

struct host {
	struct cn_mbuf_pool *small, *clusters;
	struct cn_netdev *dev;
	struct cn_net *net;
	struct cn_tcb *tcb;
	uint8_t mac[CN_ETH_ALEN];
	cn_be32_t addr;
};

static int host_up(struct host *h, uint8_t id)
{
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SMALL, .count = 4096};
	struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 4096};

	memcpy(h->mac, (const uint8_t[]){2, 0, 0, 0, 0, id}, CN_ETH_ALEN);
	h->addr = CN_IPV4(10, 0, 0, id);
	h->small = cn_mbuf_pool_create(&sp);
	h->clusters = cn_mbuf_pool_create(&cp);
	struct cn_netdev_params dp = {.mpool = h->small, .cpool = h->clusters};
	h->dev = h->small && h->clusters ? cn_netdev_create(&dp) : NULL;
	/* The stack transmits through the device. */
	struct cn_net_params np = {.addr = h->addr, .mpool = h->small, .cpool = h->clusters,
				   .xmit = cn_netdev_xmit_hook, .xmit_arg = h->dev};
	memcpy(np.mac, h->mac, CN_ETH_ALEN);
	h->net = h->dev ? cn_net_create(&np) : NULL;
	return h->net ? 0 : -1;
}

/* Tear down in reverse: the device first (it hands back the packets and
 * buffers it still holds), then the stack, then the pools; each reports a
 * leak with -EBUSY. */
static int host_down(struct host *h)
{
	cn_tcp_close(h->tcb);
	cn_netdev_destroy(h->dev);
	int rc = cn_net_destroy(h->net);
	rc |= cn_mbuf_pool_destroy(h->clusters);
	return rc | cn_mbuf_pool_destroy(h->small);
}

/* What a handshake would have produced; every other field zero = default. */
static int tcp_up(struct host *us, const struct host *peer, uint16_t lport, uint16_t rport,
		  uint32_t iss, uint32_t irs)
{
	struct cn_tcp_params p = {.laddr = us->addr, .raddr = peer->addr, .lport = cn_htobe16(lport),
				  .rport = cn_htobe16(rport), .iss = iss, .irs = irs};

	memcpy(p.rmac, peer->mac, CN_ETH_ALEN);
	us->tcb = cn_tcp_open(us->net, &p);
	return us->tcb ? 0 : -1;
}

/* One turn of a driver loop: the NICs put on the wire what the stacks
 * queued, then each driver polls until its RX ring is drained (a full
 * batch, 32 frames by default, says that more may wait). */
static void wire_turn(struct host *a, struct host *b, uint64_t now)
{
	cn_netdev_nic_tx(a->dev);
	cn_netdev_nic_tx(b->dev);
	while (cn_netdev_poll(a->dev, a->net, now) == 32)
		;
	while (cn_netdev_poll(b->dev, b->net, now) == 32)
		;
	cn_net_timer(a->net, now);
	cn_net_timer(b->net, now);
}

int main(void)
{
	static uint8_t out[TOTAL], in[TOTAL];
	struct host a = {0}, b = {0};
	uint32_t sent = 0, got = 0;
	uint64_t now = 0;

	for (uint32_t i = 0; i < TOTAL; i++)
		out[i] = (uint8_t)(i * 2654435761u >> 24);
	if (host_up(&a, 1) || host_up(&b, 2))
		return 1;
	cn_netdev_connect(a.dev, b.dev);
	if (tcp_up(&a, &b, 40000, 80, 1000, 9000) || tcp_up(&b, &a, 80, 40000, 9000, 1000))
		return 1;

	while (got < TOTAL && now < 10000000) {
		now++;
		int n = sent < TOTAL ? cn_tcp_send(a.tcb, out + sent, TOTAL - sent, now) : 0;
		if (n > 0)
			sent += (uint32_t)n;
		wire_turn(&a, &b, now);
		n = cn_tcp_recv(b.tcb, in + got, TOTAL - got, now);
		if (n > 0)
			got += (uint32_t)n;
	}
	const struct cn_tcp_stats *st = cn_tcp_stats(a.tcb);
	printf("%u bytes in %llu turns, %llu segments, %llu retransmitted, %llu RX frames "
	       "lost for want of a buffer\n", got, (unsigned long long)now,
	       (unsigned long long)st->segs_out, (unsigned long long)st->rexmit_segs,
	       (unsigned long long)cn_netdev_stats(b.dev)->rx_no_desc);
	if (got != TOTAL || memcmp(in, out, TOTAL) != 0) {
		fprintf(stderr, "transfer incomplete or corrupted\n");
		return 1;
	}
	if (host_down(&a) || host_down(&b)) {
		fprintf(stderr, "buffers still in use at teardown\n");
		return 1;
	}
	return 0;
}
