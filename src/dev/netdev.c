/* SPDX-License-Identifier: BSD-2-Clause */
/* The in-memory NIC: TX and RX descriptor rings with status write-back,
 * batching, and the DCA modes of seed 002.
 *
 * Rings use free-running 32-bit indices masked by size - 1.
 *  RX: [rx_drv, rx_nic) hold frames the NIC wrote and the driver has not
 *      read; [rx_nic, rx_fill) hold posted empty buffers; the driver keeps
 *      rx_fill - rx_drv == size unless the buffer pool ran dry.
 *  TX: [tx_reap, tx_nic) sent by the NIC, status written, not yet reaped;
 *      [tx_nic, tx_drv) posted by the driver, not yet sent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/cache.h"
#include "cachenet/netdev.h"
#include "dev_impl.h"

#define DD 1u /* descriptor done */

const char *cn_dca_name(enum cn_dca mode)
{
	switch (mode) {
	case CN_DCA_INJECT:
		return "inject";
	case CN_DCA_FLUSH:
		return "flush";
	case CN_DCA_PREFETCH:
		return "prefetch";
	}
	return "?";
}

static int refill_one(struct cn_netdev *dev)
{
	struct rx_desc *d = &dev->rx[dev->rx_fill & dev->mask];
	struct cn_mbuf *m = cn_mbuf_get_cluster(dev->p.mpool, dev->p.cpool);

	if (!m) {
		dev->st.rx_refill_fail++;
		return -ENOBUFS;
	}
	d->m = m;
	d->len = 0;
	d->status = 0;
	dev->rx_fill++;
	return 0;
}

static void refill(struct cn_netdev *dev)
{
	while (dev->rx_fill - dev->rx_drv < dev->size)
		if (refill_one(dev) < 0)
			break;
}

struct cn_netdev *cn_netdev_create(const struct cn_netdev_params *p)
{
	struct cn_netdev *dev;
	uint32_t size;

	if (!p || !p->mpool || !p->cpool) {
		errno = EINVAL;
		return NULL;
	}
	size = p->ring_size ? p->ring_size : 512;
	if (size & (size - 1) || size > (1u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		errno = ENOMEM;
		return NULL;
	}
	dev->p = *p;
	if (!dev->p.batch)
		dev->p.batch = 32;
	if (!dev->p.prefetch_k)
		dev->p.prefetch_k = 4;
	dev->size = size;
	dev->mask = size - 1;
	dev->rx = aligned_alloc(64, ((size * sizeof(struct rx_desc)) + 63) & ~(size_t)63);
	dev->tx = aligned_alloc(64, ((size * sizeof(struct tx_desc)) + 63) & ~(size_t)63);
	if (!dev->rx || !dev->tx) {
		free(dev->rx);
		free(dev->tx);
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	memset(dev->rx, 0, size * sizeof(struct rx_desc));
	memset(dev->tx, 0, size * sizeof(struct tx_desc));
	refill(dev);
	if (dev->rx_fill == 0) {
		cn_netdev_destroy(dev);
		errno = ENOBUFS;
		return NULL;
	}
	return dev;
}

void cn_netdev_destroy(struct cn_netdev *dev)
{
	if (!dev)
		return;
	for (uint32_t i = dev->rx_drv; i != dev->rx_fill; i++)
		cn_mbuf_free_chain(dev->rx[i & dev->mask].m);
	for (uint32_t i = dev->tx_reap; i != dev->tx_drv; i++)
		cn_pkt_free(dev->tx[i & dev->mask].p);
	free(dev->rx);
	free(dev->tx);
	free(dev);
}

void cn_netdev_set_wire(struct cn_netdev *dev, cn_wire_fn fn, void *arg)
{
	dev->wire = fn;
	dev->wire_arg = arg;
}

int cn_netdev_xmit(void *arg, struct cn_pkt *p)
{
	struct cn_netdev *dev = arg;
	struct tx_desc *d;

	if (dev->tx_drv - dev->tx_reap == dev->size) {
		dev->st.tx_ring_full++;
		return -ENOBUFS;
	}
	d = &dev->tx[dev->tx_drv & dev->mask];
	d->p = p;
	d->status = 0;
	dev->tx_drv++;
	return 0;
}

unsigned cn_netdev_nic_tx(struct cn_netdev *dev)
{
	unsigned n = 0;

	while (dev->tx_nic != dev->tx_drv) {
		struct tx_desc *d = &dev->tx[dev->tx_nic & dev->mask];
		uint32_t len = cn_pkt_len(d->p);
		if (len <= sizeof(dev->txbuf)) {
			len = cn_pkt_gather(d->p, dev->txbuf);
			if (dev->p.pcap)
				cn_pcap_write(dev->p.pcap, dev->txbuf, len, dev->now_ns);
			dev->st.tx_frames++;
			dev->st.tx_bytes += len;
			/* Status first: the wire may loop back into this
			 * device and poll it. */
			d->status = DD;
			dev->tx_nic++;
			if (dev->wire)
				dev->wire(dev->wire_arg, dev->txbuf, len);
		} else {
			d->status = DD; /* larger than any frame: discarded */
			dev->tx_nic++;
		}
		n++;
	}
	return n;
}

uint8_t *cn_netdev_nic_rx_reserve(struct cn_netdev *dev, uint32_t *room)
{
	struct cn_mbuf *m;

	if (dev->rx_nic == dev->rx_fill)
		return NULL;
	m = dev->rx[dev->rx_nic & dev->mask].m;
	*room = m->buf_len - 2;
	return m->buf + 2;
}

void cn_netdev_nic_rx_commit(struct cn_netdev *dev, uint32_t len)
{
	struct rx_desc *d = &dev->rx[dev->rx_nic & dev->mask];
	uint8_t *buf = d->m->buf + 2;

	d->len = len;
	d->status = DD;
	dev->rx_nic++;
	dev->st.rx_frames++;
	dev->st.rx_bytes += len;
	if (dev->p.pcap)
		cn_pcap_write(dev->p.pcap, buf, len, dev->now_ns);
	if (dev->p.dca != CN_DCA_INJECT) {
		/* A DMA write snoops and invalidates: neither the frame
		 * nor the written-back descriptor is in any cache. */
		cn_cache_flush_range(buf, len);
		cn_cache_flush_range(d, sizeof(*d));
	}
}

int cn_netdev_nic_rx(struct cn_netdev *dev, const uint8_t *frame, uint32_t len)
{
	uint32_t room;
	uint8_t *b = cn_netdev_nic_rx_reserve(dev, &room);

	if (!b) {
		dev->st.rx_no_desc++;
		return -ENOBUFS;
	}
	if (len > room) {
		dev->st.rx_too_long++;
		return -EMSGSIZE;
	}
	memcpy(b, frame, len);
	cn_netdev_nic_rx_commit(dev, len);
	return 0;
}

void cn_netdev_wire_rx(void *dev, const uint8_t *frame, uint32_t len)
{
	cn_netdev_nic_rx(dev, frame, len);
}

unsigned cn_netdev_tx_reap(struct cn_netdev *dev)
{
	unsigned n = 0;

	while (dev->tx_reap != dev->tx_nic) {
		struct tx_desc *d = &dev->tx[dev->tx_reap & dev->mask];
		if (!(d->status & DD))
			break;
		cn_pkt_free(d->p);
		d->p = NULL;
		dev->tx_reap++;
		n++;
	}
	return n;
}

/* PREFETCH mode: when the driver reads frame i's status, it prefetches
 * the descriptor, header and payload lines of frame i + k, which the NIC
 * has written but the driver will not touch for k more frames. */
static inline void prefetch_ahead(struct cn_netdev *dev, uint32_t i)
{
	uint32_t j = i + dev->p.prefetch_k;
	const struct rx_desc *d;

	if ((int32_t)(dev->rx_nic - j) <= 0)
		return;
	d = &dev->rx[j & dev->mask];
	__builtin_prefetch(d, 0, 3);
	if (d->status & DD) {
		const uint8_t *b = d->m->buf + 2;
		for (uint32_t o = 0; o < d->len + 2; o += 64)
			__builtin_prefetch(b + o, 0, 3);
	}
}

unsigned cn_netdev_rx_burst(struct cn_netdev *dev, struct cn_mbuf **out, unsigned n)
{
	unsigned got = 0;

	if (dev->p.dca == CN_DCA_PREFETCH && dev->rx_drv != dev->rx_nic) {
		/* Entering the driver: the first k frames have no earlier
		 * frame to prefetch them, so issue theirs now. */
		for (uint32_t k = 0; k < dev->p.prefetch_k; k++)
			prefetch_ahead(dev, dev->rx_drv + k - dev->p.prefetch_k);
	}
	while (got < n && dev->rx_drv != dev->rx_nic) {
		struct rx_desc *d = &dev->rx[dev->rx_drv & dev->mask];
		struct cn_mbuf *m;
		if (!(d->status & DD))
			break;
		if (dev->p.dca == CN_DCA_PREFETCH)
			prefetch_ahead(dev, dev->rx_drv);
		m = d->m;
		m->data = m->buf + 2;
		m->len = m->pkt_len = d->len;
		d->m = NULL;
		d->status = 0;
		out[got++] = m;
		dev->rx_drv++;
	}
	refill(dev);
	return got;
}

unsigned cn_netdev_poll(struct cn_netdev *dev, struct cn_net *net, uint64_t now)
{
	struct cn_mbuf *m[256];
	unsigned n, batch = dev->p.batch < 256 ? dev->p.batch : 256;

	dev->st.polls++;
	dev->now_ns = now;
	cn_netdev_tx_reap(dev);
	n = cn_netdev_rx_burst(dev, m, batch);
	for (unsigned i = 0; i < n; i++)
		cn_net_input(net, m[i], now);
	return n;
}

unsigned cn_netdev_rx_pending(const struct cn_netdev *dev)
{
	return dev->rx_nic - dev->rx_drv;
}

unsigned cn_netdev_tx_pending(const struct cn_netdev *dev)
{
	return dev->tx_drv - dev->tx_reap;
}

const struct cn_netdev_stats *cn_netdev_stats(const struct cn_netdev *dev)
{
	return &dev->st;
}

void cn_netdev_connect(struct cn_netdev *a, struct cn_netdev *b)
{
	cn_netdev_set_wire(a, cn_netdev_wire_rx, b);
	cn_netdev_set_wire(b, cn_netdev_wire_rx, a);
}
