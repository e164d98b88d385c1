/* SPDX-License-Identifier: BSD-2-Clause */
/* The in-memory NIC: TX and RX descriptor rings with status write-back,
 * batching, and the DCA modes of Huggahalli et al.
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

#include "cachenet/lab/cache.h"
#include "cachenet/lab/netdev.h"
#include "dev_impl.h"

#define DD RX_DD

CN_NAME_FN(cn_dca_name, enum cn_dca,
	[CN_DCA_INJECT] = "inject", [CN_DCA_FLUSH] = "flush", [CN_DCA_PREFETCH] = "prefetch",
)

/* refill_one with split on: a buffer the last frame through this
 * descriptor left in place (the cluster of a header-only frame, the
 * header buffer of a frame not split) is posted again. */
static inline __attribute__((always_inline)) int refill_one_split(struct cn_netdev *dev)
{
	uint32_t slot = dev->rx_fill & dev->mask;
	struct rx_desc *d = &dev->rx[slot];

	if (!d->m) {
		d->m = cn_mbuf_get_cluster(dev->p.mpool, dev->p.cpool);
		if (!d->m) {
			dev->st.rx_refill_fail++;
			return -ENOBUFS;
		}
	}
	if (!dev->rx_hdr[slot]) {
		dev->rx_hdr[slot] = cn_mbuf_get(dev->p.mpool);
		if (!dev->rx_hdr[slot]) {
			dev->st.rx_refill_fail++; /* d->m stays for the next try */
			return -ENOBUFS;
		}
	}
	d->len = 0;
	d->status = 0;
	dev->rx_fill++;
	return 0;
}

/* Post a buffer in the descriptor at rx_fill (split off: the descriptor
 * is empty, its last buffer went to the driver). */
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

static inline __attribute__((always_inline)) void refill(struct cn_netdev *dev)
{
	if (CN_UNLIKELY(dev->rx_hdr != NULL)) {
		while (dev->rx_fill - dev->rx_drv < dev->size)
			if (refill_one_split(dev) < 0)
				break;
		return;
	}
	while (dev->rx_fill - dev->rx_drv < dev->size)
		if (refill_one(dev) < 0)
			break;
}

/* The RX pool a device makes itself when its params name none. */
static struct cn_mbuf_pool *own_pool(enum cn_mbuf_pool_kind kind, uint32_t ring_size)
{
	struct cn_mbuf_pool_params mp = {
		.name = kind == CN_MBUF_POOL_SMALL ? "netdev-rx" : "netdev-rx-clusters",
		.kind = kind,
		.count = 2 * ring_size,
	};
	return cn_mbuf_pool_create(&mp);
}

struct cn_netdev *cn_netdev_create(const struct cn_netdev_params *pp)
{
	struct cn_netdev_params q;
	const struct cn_netdev_params *p = &q;
	struct cn_netdev *dev;
	uint32_t size;

	if (!pp || cn__params_copy(&q, sizeof(q), pp) < 0)
		return cn__fail(EINVAL);
	size = p->ring_size ? p->ring_size : 512;
	if (size & (size - 1) || size > (1u << 20) || p->prefetch_k > CN_NETDEV_PREFETCH_K_MAX ||
	    (p->prefetch_k && p->prefetch_k >= size) || (unsigned)p->prefetch_hint > CN_PREFETCH_NTA ||
	    p->prefetch_pace > CN_NETDEV_PREFETCH_PACE_MAX)
		return cn__fail(EINVAL);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return cn__fail(ENOMEM);
	dev->p = *p;
	if (!dev->p.mpool)
		dev->p.mpool = dev->own_mpool = own_pool(CN_MBUF_POOL_SMALL, size);
	if (!dev->p.cpool)
		dev->p.cpool = dev->own_cpool = own_pool(CN_MBUF_POOL_CLUSTER, size);
	if (!dev->p.mpool || !dev->p.cpool) {
		cn_mbuf_pool_destroy(dev->own_mpool);
		cn_mbuf_pool_destroy(dev->own_cpool);
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	CN_DEFAULT(dev->p.batch, 32);
	if (!dev->p.prefetch_k)
		dev->p.prefetch_k = CN_NETDEV_PREFETCH_K_DEFAULT < size ? CN_NETDEV_PREFETCH_K_DEFAULT
									  : size - 1;
	dev->size = size;
	dev->mask = size - 1;
	dev->rx = aligned_alloc(CN_CACHE_LINE, CN_CACHE_ROUND(size * sizeof(struct rx_desc)));
	dev->tx = aligned_alloc(CN_CACHE_LINE, CN_CACHE_ROUND(size * sizeof(struct tx_desc)));
	if (!dev->rx || !dev->tx) {
		cn_netdev_destroy(dev);
		errno = ENOMEM;
		return NULL;
	}
	memset(dev->rx, 0, size * sizeof(struct rx_desc));
	memset(dev->tx, 0, size * sizeof(struct tx_desc));
	if (p->split) {
		/* The header buffer: a small mbuf's inline area past the
		 * 2-byte offset, or less when asked. */
		struct cn_mbuf *s = cn_mbuf_get(dev->p.mpool);
		uint32_t cap = s && !s->shared && s->buf_len > 2 ? s->buf_len - 2u : 0;
		cn_mbuf_free(s);
		dev->split_hdr = p->split_hdr_size && p->split_hdr_size < cap ? p->split_hdr_size : cap;
		dev->rx_hdr = calloc(size, sizeof(*dev->rx_hdr));
		if (dev->split_hdr < CN_NETDEV_SPLIT_HDR_MIN || !dev->rx_hdr) {
			int e = dev->rx_hdr ? EINVAL : ENOMEM;
			cn_netdev_destroy(dev);
			errno = e;
			return NULL;
		}
	}
	refill(dev);
	if (dev->rx_fill == 0) {
		cn_netdev_destroy(dev);
		errno = ENOBUFS;
		return NULL;
	}
	dev->copybreak = p->copybreak ? p->copybreak : CN_NETDEV_COPYBREAK_DEFAULT;
	if (p->copybreak == CN_NETDEV_COPYBREAK_OFF) {
		dev->copybreak = 0;
	} else {
		/* No larger than a small mbuf holds at the 2-byte offset. */
		struct cn_mbuf *s = cn_mbuf_get(dev->p.mpool);
		uint32_t cap = s && s->buf_len > 2 ? s->buf_len - 2u : 0;
		cn_mbuf_free(s);
		if (dev->copybreak > cap)
			dev->copybreak = cap;
	}
	return dev;
}

void cn_netdev_destroy(struct cn_netdev *dev)
{
	if (!dev)
		return;
	/* Every descriptor: one outside [rx_drv, rx_fill) may hold a buffer
	 * left for reuse. */
	for (uint32_t i = 0; dev->rx && i < dev->size; i++) {
		cn_mbuf_free_chain(dev->rx[i].m);
		if (dev->rx_hdr)
			cn_mbuf_free_chain(dev->rx_hdr[i]);
	}
	free(dev->rx_hdr);
	for (uint32_t i = dev->tx_reap; i != dev->tx_drv; i++)
		cn_pkt_free(dev->tx[i & dev->mask].p);
	free(dev->rx);
	free(dev->tx);
	cn_mbuf_pool_destroy(dev->own_mpool);
	cn_mbuf_pool_destroy(dev->own_cpool);
	free(dev);
}

void cn_netdev_set_wire(struct cn_netdev *dev, cn_wire_fn fn, void *arg)
{
	dev->wire = fn;
	dev->wire_arg = arg;
}

int cn_netdev_xmit(struct cn_netdev *dev, struct cn_pkt *p)
{
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

/* Split: the header length of the frame @p f as the NIC's parser finds it
 * (the product's parser, cn_net_parse: Ethernet II, IPv4 with its IHL,
 * not a fragment, TCP with its data offset or UDP; the IPv4 checksum is
 * not the NIC's business here), or 0 when it finds none inside the
 * frame's @p len bytes, or the headers are malformed (the frame then goes
 * whole to the cluster and the stack names what is wrong); *nopay when
 * no payload byte follows them. */
static uint32_t split_parse(const uint8_t *f, uint32_t len, bool *nopay)
{
	struct cn_pkt_info pi;

	if (cn_net_parse(f, len, CN_PARSE_IP_CSUM_GOOD, &pi) != CN_DROP_NONE)
		return 0;
	*nopay = pi.pay_len == 0;
	return pi.pay_off;
}

/* Split: where the NIC puts the frame: RX_SPH (headers of *hl bytes to the
 * header buffer, the rest to the cluster), RX_HBO (all of it to the header
 * buffer) or 0 (all of it to the cluster, as with split off). Counted. */
static uint32_t split_place(struct cn_netdev *dev, const uint8_t *f, uint32_t len, uint32_t *hl)
{
	bool nopay = false;

	*hl = split_parse(f, len, &nopay);
	if (*hl == 0) {
		dev->st.rx_nosplit_parse++;
		return 0;
	}
	if (nopay && len <= dev->split_hdr) {
		dev->st.rx_split_hdr_only++;
		return RX_HBO;
	}
	if (*hl > dev->split_hdr) {
		dev->st.rx_nosplit_hdr_long++;
		return 0;
	}
	if (*hl == len) {
		/* headers and not one byte more, yet the IP total length
		 * claims some (the stack will drop it): the whole frame fits
		 * the header buffer, as a header-only frame */
		dev->st.rx_split_hdr_only++;
		return RX_HBO;
	}
	dev->st.rx_split++;
	return RX_SPH;
}

/* The frame is in its buffers: write the descriptor back, capture the
 * frame (@p frame, contiguous, as it arrived), and apply the DCA mode to
 * the lines written: [hoff, hoff + hlen) of the header buffer and
 * [coff, coff + clen) of the cluster (frame offsets: both buffers hold
 * the frame's bytes at buf + 2 + their offset in the frame). */
static void rx_done(struct cn_netdev *dev, uint32_t kind, uint32_t len, uint32_t hl,
		    const uint8_t *frame, uint32_t hlen, uint32_t coff, uint32_t clen)
{
	struct rx_desc *d = &dev->rx[dev->rx_nic & dev->mask];

	if (kind == RX_SPH) {
		d->len = len - hl;
		d->status = DD | RX_SPH | (hl << RX_HLEN_SHIFT);
	} else {
		d->len = len;
		d->status = DD | kind;
	}
	if (dev->p.pcap)
		cn_pcap_write(dev->p.pcap, frame, len, dev->now_ns);
	if (dev->p.dca != CN_DCA_INJECT) {
		/* A DMA write snoops and invalidates: neither the frame
		 * nor the written-back descriptor is in any cache. */
		if (hlen)
			cn_cache_flush_range(dev->rx_hdr[dev->rx_nic & dev->mask]->buf + 2, hlen);
		if (clen)
			cn_cache_flush_range(d->m->buf + 2 + coff, clen);
		cn_cache_flush_range(d, sizeof(*d));
	}
	dev->rx_nic++;
	dev->st.rx_frames++;
	dev->st.rx_bytes += len;
}

void cn_netdev_nic_rx_commit(struct cn_netdev *dev, uint32_t len)
{
	uint32_t slot = dev->rx_nic & dev->mask, kind = 0, hl = 0, hlen = 0;
	uint8_t *buf = dev->rx[slot].m->buf + 2;

	if (dev->split_hdr) {
		/* The peer built the frame in the cluster: the header write
		 * is a copy of the headers (the frame, header-only) into the
		 * header buffer. */
		kind = split_place(dev, buf, len, &hl);
		hlen = kind == RX_SPH ? hl : kind == RX_HBO ? len : 0;
		if (hlen)
			memcpy(dev->rx_hdr[slot]->buf + 2, buf, hlen);
	}
	rx_done(dev, kind, len, hl, buf, hlen, 0, len);
}

int cn_netdev_nic_rx(struct cn_netdev *dev, const uint8_t *frame, uint32_t len)
{
	uint32_t room, kind, hl;
	uint8_t *b = cn_netdev_nic_rx_reserve(dev, &room);

	if (!b) {
		dev->st.rx_no_desc++;
		return -ENOBUFS;
	}
	if (len > room) {
		dev->st.rx_too_long++;
		return -EMSGSIZE;
	}
	if (!dev->split_hdr) {
		memcpy(b, frame, len);
		rx_done(dev, 0, len, 0, frame, 0, 0, len);
		return 0;
	}
	kind = split_place(dev, frame, len, &hl);
	if (kind == RX_SPH) {
		memcpy(dev->rx_hdr[dev->rx_nic & dev->mask]->buf + 2, frame, hl);
		memcpy(b + hl, frame + hl, len - hl);
		rx_done(dev, kind, len, hl, frame, hl, hl, len - hl);
	} else if (kind == RX_HBO) {
		memcpy(dev->rx_hdr[dev->rx_nic & dev->mask]->buf + 2, frame, len);
		rx_done(dev, kind, len, 0, frame, len, 0, 0);
	} else {
		memcpy(b, frame, len);
		rx_done(dev, 0, len, 0, frame, 0, 0, len);
	}
	return 0;
}

void cn_netdev_wire_rx(void *dev, const uint8_t *frame, uint32_t len)
{
	cn_netdev_nic_rx(dev, frame, len);
}

/* Completed descriptors are collected, then released in bulk: one call per
 * run of up to TX_REAP_RUN packets instead of one per packet. The ring's
 * index moves first, so a done callback that transmits finds the slots
 * free. */
#define TX_REAP_RUN 32u

unsigned cn_netdev_tx_reap(struct cn_netdev *dev)
{
	struct cn_pkt *run[TX_REAP_RUN];
	const uint32_t start = dev->tx_reap, mask = dev->mask;
	uint32_t i = start;

	for (;;) {
		uint32_t want = dev->tx_nic - i, k;
		if (want == 0)
			break;
		if (want > TX_REAP_RUN)
			want = TX_REAP_RUN;
		/* up to the ring's end: a pointer walk, no index masking */
		if (want > dev->size - (i & mask))
			want = dev->size - (i & mask);
		struct tx_desc *d = &dev->tx[i & mask];
		for (k = 0; k < want; k++, d++) {
			if (!(d->status & DD))
				break;
			run[k] = d->p; /* the slot's p is rewritten at its next xmit */
		}
		i += k;
		dev->tx_reap = i;
		if (k)
			cn_pkt_free_bulk(run, k);
		/* a done callback may have transmitted, and a wire looped
		 * back may have completed more: the loop reads tx_nic again */
		if (k < want)
			break;
	}
	return i - start;
}

CN_NAME_FN(cn_prefetch_hint_name, enum cn_prefetch_hint,
	[CN_PREFETCH_L1] = "l1", [CN_PREFETCH_L2] = "l2",
	[CN_PREFETCH_LLC] = "llc", [CN_PREFETCH_NTA] = "nta",
)

/* PREFETCH mode. The first two lines (Ethernet, IP, TCP with options: what
 * the stack reads first) go to L1; the rest of the frame to the hint's
 * level. __builtin_prefetch wants a constant locality, hence one loop per
 * hint. The loops count an integer offset: GCC 12 at -O2/-O3 deletes a
 * loop of prefetches driven by a pointer compare (checked with objdump:
 * keep it that way). */
#define PF_FROM(b, start, len, loc)                                            \
	do {                                                                   \
		for (uint32_t o_ = (start); o_ < (len); o_ += CN_CACHE_LINE)              \
			__builtin_prefetch((b) + o_, 0, (loc));                \
		__builtin_prefetch((b) + (len) - 1, 0, (loc));                 \
	} while (0)

#define PF_LINE(a, loc) __builtin_prefetch((a), 0, (loc))

/* PF(..., loc) with the hint @p h's locality as a constant: 3 for L1, 2
 * for L2, 1 for the LLC, 0 for NTA. */
#define PF_BY_HINT(h, PF, ...)                                                     \
	do {                                                                       \
		switch (h) {                                                       \
		case CN_PREFETCH_L1: PF(__VA_ARGS__, 3); break;                    \
		case CN_PREFETCH_L2: PF(__VA_ARGS__, 2); break;                    \
		case CN_PREFETCH_LLC: PF(__VA_ARGS__, 1); break;                   \
		case CN_PREFETCH_NTA: PF(__VA_ARGS__, 0); break;                   \
		}                                                                  \
	} while (0)

/* Lines from @p start to the end of [b, b + len) at the hint's level
 * (start < len). */
static inline void prefetch_from(const uint8_t *b, uint32_t start, uint32_t len,
				 enum cn_prefetch_hint h)
{
	PF_BY_HINT(h, PF_FROM, b, start, len);
}

/* One line at the hint's level. */
static inline void prefetch_line(const void *a, enum cn_prefetch_hint h)
{
	PF_BY_HINT(h, PF_LINE, a);
}

/* The first two lines of a frame at @p b (Ethernet, IP, TCP with options:
 * what the stack reads first) to L1. */
static inline void prefetch_head(const uint8_t *b)
{
	__builtin_prefetch(b, 0, 3);
	__builtin_prefetch(b + CN_CACHE_LINE, 0, 3);
}

static inline void prefetch_frame(const uint8_t *b, uint32_t len, enum cn_prefetch_hint h)
{
	prefetch_head(b);
	if (len > 128)
		prefetch_from(b, 128, len, h);
}

/* Every line of [b, b + len) at the hint's level (a split frame's payload:
 * the stack reads its header from the other buffer). */
static inline void prefetch_range(const uint8_t *b, uint32_t len, enum cn_prefetch_hint h)
{
	if (len)
		prefetch_from(b, 0, len, h);
}

/* A split frame: its header buffer's lines (hl bytes: 54 or 66 for a
 * stream, two lines at most at the 2-byte offset) to L1, the payload's
 * lines per the hint. */
static inline void prefetch_split(const uint8_t *hb, uint32_t hl, const uint8_t *pay, uint32_t plen,
				  enum cn_prefetch_hint h)
{
	__builtin_prefetch(hb, 0, 3);
	for (uint32_t o = CN_CACHE_LINE; o < hl; o += CN_CACHE_LINE)
		__builtin_prefetch(hb + o, 0, 3);
	__builtin_prefetch(hb + hl - 1, 0, 3);
	prefetch_range(pay, plen, h);
}

/* The driver's paths below take @p split, a constant: whether the device
 * splits (dev->rx_hdr != NULL); each is compiled twice, so a device
 * without split runs exactly its code of before split existed. */

/* The frame in descriptor @p d (status done), wherever the NIC put it. */
static inline __attribute__((always_inline)) void
prefetch_desc(const struct cn_netdev *dev, const struct rx_desc *d, enum cn_prefetch_hint h,
	      const bool split)
{
	if (split && CN_UNLIKELY(d->status & (RX_SPH | RX_HBO))) {
		const uint8_t *hb = dev->rx_hdr[d - dev->rx]->buf + 2;
		if (d->status & RX_HBO) {
			prefetch_frame(hb, d->len, CN_PREFETCH_L1);
		} else {
			uint32_t hl = d->status >> RX_HLEN_SHIFT;
			prefetch_split(hb, hl, d->m->buf + 2 + hl, d->len, h);
		}
		return;
	}
	prefetch_frame(d->m->buf + 2, d->len, h);
}

/* A frame taken off the ring: one mbuf, or a split chain. */
static inline __attribute__((always_inline)) void
prefetch_mbuf(const struct cn_mbuf *m, enum cn_prefetch_hint h, const bool split)
{
	if (split && CN_UNLIKELY(m->next != NULL)) {
		prefetch_split(m->data, m->len, m->next->data, m->next->len, h);
		return;
	}
	prefetch_frame(m->data, m->len, h);
}

/* Paced PREFETCH (params.prefetch_pace): only what the stack reads in
 * its input goes k ahead, the first two lines of an unsplit frame or the
 * header buffer of a split one (at most two lines: prefetch_split's
 * header part). */
static inline __attribute__((always_inline)) void
prefetch_head_desc(const struct cn_netdev *dev, const struct rx_desc *d, const bool split)
{
	const uint8_t *b = d->m->buf + 2;

	if (split && CN_UNLIKELY(d->status & (RX_SPH | RX_HBO)))
		b = dev->rx_hdr[d - dev->rx]->buf + 2;
	prefetch_head(b);
}

/* The payload lines of a frame taken in this poll, as a line-aligned
 * range: what paced PREFETCH streams (the bytes past the two header
 * lines of an unsplit frame; a split frame's cluster part). Empty for a
 * frame of at most 128 bytes or a header-only one. */
static inline __attribute__((always_inline)) void pace_range(const struct cn_mbuf *m, uintptr_t *lo,
							   uintptr_t *hi, const bool split)
{
	const uint8_t *b = m->data;
	uint32_t len = m->len, start = 128;

	if (split && CN_UNLIKELY(m->next != NULL)) {
		b = m->next->data;
		len = m->next->len;
		start = 0;
	}
	*lo = ((uintptr_t)b + start) & ~(uintptr_t)63;
	*hi = len > start ? (uintptr_t)b + len : *lo;
}

/* Frame bytes of a written descriptor. */
static inline __attribute__((always_inline)) uint32_t desc_frame_len(const struct rx_desc *d,
									 const bool split)
{
	return split ? d->len + (d->status >> RX_HLEN_SHIFT) : d->len;
}

/* Prefetch the frames still in the ring, from rx_pf up to (not including)
 * @p limit, as far as their status says the NIC wrote them: the whole
 * frame, or with @p head_only its header lines (paced PREFETCH). Reading
 * the status is the driver's descriptor read, done early. */
static inline __attribute__((always_inline)) void
prefetch_ring(struct cn_netdev *dev, uint32_t limit, const bool split, const bool head_only)
{
	if ((int32_t)(dev->rx_pf - dev->rx_drv) < 0)
		dev->rx_pf = dev->rx_drv;
	while ((int32_t)(limit - dev->rx_pf) > 0 && dev->rx_pf != dev->rx_nic) {
		const struct rx_desc *d = &dev->rx[dev->rx_pf & dev->mask];
		if (!(d->status & DD))
			break;
		if (head_only)
			prefetch_head_desc(dev, d, split);
		else
			prefetch_desc(dev, d, dev->p.prefetch_hint, split);
		dev->rx_pf++;
	}
}

/* Copybreak: a small frame copied into a small mbuf. Only with the ring
 * full: then the descriptor just read is also the next one to refill, so
 * its buffers stay where they are (rx_drv and rx_fill both advance). A
 * split frame is copied from both of its buffers. */
static inline __attribute__((always_inline)) struct cn_mbuf *
copy_small(struct cn_netdev *dev, struct rx_desc *d, const bool split)
{
	struct cn_mbuf *s;
	uint32_t len = desc_frame_len(d, split);

	if (len > dev->copybreak || len == 0 || dev->rx_fill - dev->rx_drv != dev->size)
		return NULL;
	s = cn_mbuf_get(dev->p.mpool);
	if (!s)
		return NULL;
	s->data = s->buf + 2;
	if (split && (d->status & (RX_SPH | RX_HBO))) {
		const uint8_t *hb = dev->rx_hdr[d - dev->rx]->buf + 2;
		uint32_t hl = d->status & RX_HBO ? len : d->status >> RX_HLEN_SHIFT;
		memcpy(s->data, hb, hl);
		memcpy(s->data + hl, d->m->buf + 2 + hl, len - hl);
	} else {
		memcpy(s->data, d->m->buf + 2, len);
	}
	s->len = s->pkt_len = len;
	d->len = 0;
	d->status = 0;
	dev->rx_fill++;
	dev->st.rx_copybreak++;
	return s;
}

/* PREFETCH mode, cn_netdev_poll: a frame copybreak will copy is read here,
 * at take, before the interleaved prefetches; so the frame k ahead of the
 * one taken is prefetched now if it is that small. */
static inline __attribute__((always_inline)) void prefetch_small(struct cn_netdev *dev, uint32_t j,
								  const bool split)
{
	const struct rx_desc *a;

	if ((int32_t)(dev->rx_nic - j) <= 0)
		return;
	a = &dev->rx[j & dev->mask];
	if ((a->status & DD) && desc_frame_len(a, split) <= dev->copybreak)
		prefetch_desc(dev, a, CN_PREFETCH_L1, split);
}

/* Split: the header mbuf, alone (RX_HBO: the cluster stays in the
 * descriptor for its next refill) or followed by the cluster holding the
 * rest of the frame (RX_SPH). */
static struct cn_mbuf *take_split(struct cn_netdev *dev, struct rx_desc *d)
{
	struct cn_mbuf **hp = &dev->rx_hdr[d - dev->rx], *h = *hp;

	*hp = NULL;
	h->data = h->buf + 2;
	if (d->status & RX_HBO) {
		h->len = h->pkt_len = d->len;
	} else {
		uint32_t hl = d->status >> RX_HLEN_SHIFT;
		struct cn_mbuf *m = d->m;
		m->data = m->buf + 2 + hl;
		m->len = m->pkt_len = d->len;
		d->m = NULL;
		h->len = hl;
		h->pkt_len = hl + d->len;
		h->next = m;
	}
	d->status = 0;
	return h;
}

/* The frame at rx_drv (descriptor d, split_desc: a split frame's) as a
 * copybreak copy, NULL when it is not small; with the prefetches taking a
 * frame brings: the ring k + 1 ahead (pf) and, after a small frame, the
 * small frame k ahead (pf_small). */
static inline __attribute__((always_inline)) struct cn_mbuf *
take_small(struct cn_netdev *dev, struct rx_desc *d, bool pf, bool pf_small, const bool split,
	   const bool split_desc)
{
	struct cn_mbuf *m;

	if (pf)
		prefetch_ring(dev, dev->rx_drv + dev->p.prefetch_k + 1, split, false);
	m = copy_small(dev, d, split_desc);
	if (m && pf_small)
		prefetch_small(dev, dev->rx_drv + dev->p.prefetch_k, split);
	return m;
}

/* Take up to n written frames off the ring; with @p pf, prefetch k ahead
 * of each as its status is read; with @p pf_small, only the frames
 * copybreak copies. */
static inline __attribute__((always_inline)) unsigned
rx_take(struct cn_netdev *dev, struct cn_mbuf **out, unsigned n, bool pf, bool pf_small,
	const bool split)
{
	unsigned got = 0;

	/* Small frames come in runs (ACKs, small writes): look ahead only
	 * from a small one, so a stream of full frames pays nothing here. */
	if (pf_small && dev->rx_drv != dev->rx_nic &&
	    desc_frame_len(&dev->rx[dev->rx_drv & dev->mask], split) <= dev->copybreak)
		for (uint32_t j = 0; j < dev->p.prefetch_k; j++)
			prefetch_small(dev, dev->rx_drv + j, split);
	while (got < n && dev->rx_drv != dev->rx_nic) {
		struct rx_desc *d = &dev->rx[dev->rx_drv & dev->mask];
		struct cn_mbuf *m;
		uint32_t st = d->status;
		if (!split && !(st & DD))
			break;
		/* split: one compare for a done frame not split (status DD) */
		if (split && CN_UNLIKELY(st != DD)) {
			if (!(st & DD))
				break;
			m = take_small(dev, d, pf, pf_small, split, true);
			if (!m)
				m = take_split(dev, d);
			out[got++] = m;
			dev->rx_drv++;
			continue;
		}
		m = take_small(dev, d, pf, pf_small, split, false);
		if (m) {
			out[got++] = m;
			dev->rx_drv++;
			continue;
		}
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

unsigned cn_netdev_rx_burst(struct cn_netdev *dev, struct cn_mbuf **out, unsigned n)
{
	bool pf = dev->p.dca == CN_DCA_PREFETCH;

	if (dev->rx_hdr)
		return rx_take(dev, out, n, pf, false, true);
	return rx_take(dev, out, n, pf, false, false);
}

/* Paced PREFETCH (params.prefetch_pace, netdev.h): before frame i goes
 * up, the header lines of frame i + k (as in the unpaced mode, header
 * only) and the next prefetch_pace lines of this poll's payload stream,
 * which runs over the payloads of m[0..n) in order. The payload ranges
 * are read before any frame goes up: the stack may free or trim a frame
 * the stream has not reached yet. Frames the stream does not reach in
 * this poll are left to the reader (the stack's copy-out read-ahead). */
static inline __attribute__((always_inline)) unsigned
poll_paced(struct cn_netdev *dev, struct cn_net *net, uint64_t now, struct cn_mbuf **m, unsigned n,
	   uint32_t base, const bool split, const enum cn_prefetch_hint h)
{
	uintptr_t lo[256], hi[256], a;
	unsigned pj = 0;
	uint64_t lines = 0;
	const uint32_t pace = dev->p.prefetch_pace;

	const uint32_t k = dev->p.prefetch_k;
	/* frames of this poll whose header lines were asked for: [0, pf),
	 * in a local (the loop calls the stack) and stored back at the end */
	uint32_t pf = dev->rx_pf - base;

	for (unsigned j = 0; j < n; j++)
		pace_range(m[j], &lo[j], &hi[j], split);
	a = n ? lo[0] : 0;
	for (unsigned i = 0; i < n; i++) {
		const uint32_t want = i + k + 1;
		for (; pf < want && pf < n; pf++)
			prefetch_head(m[pf]->data);
		if (CN_UNLIKELY(pf < want)) {
			/* the next poll's first frames, still in the ring */
			dev->rx_pf = base + pf;
			prefetch_ring(dev, base + want, split, true);
			pf = dev->rx_pf - base;
		}
		/* pace lines of the stream; an empty range costs none. Per
		 * range, the lines it has left up to what the pace allows,
		 * in loops over an integer offset that end at a bound
		 * computed before them (PF_FROM's shape), four lines a turn:
		 * ~2 instructions a line; a line at a time through the range
		 * test cost ten. */
		uint32_t l = pace;
		while (l && pj < n) {
			const uintptr_t end = hi[pj];
			if (a >= end) {
				if (++pj < n)
					a = lo[pj];
				continue;
			}
			uint32_t c = (uint32_t)((end - a + 63) >> 6);
			if (c > l)
				c = l;
			const uint32_t bytes = c * CN_CACHE_LINE;
			uint32_t o = 0;
			for (; o + 256 <= bytes; o += 256) { /* four a turn */
				prefetch_line((const void *)(a + o), h);
				prefetch_line((const void *)(a + o + CN_CACHE_LINE), h);
				prefetch_line((const void *)(a + o + 128), h);
				prefetch_line((const void *)(a + o + 192), h);
			}
			for (; o < bytes; o += CN_CACHE_LINE)
				prefetch_line((const void *)(a + o), h);
			a += bytes;
			l -= c;
		}
		lines += pace - l;
		cn_net_input(net, m[i], now);
	}
	dev->rx_pf = base + pf;
	dev->st.rx_pace_lines += lines;
	return n;
}

static inline __attribute__((always_inline)) unsigned
poll_rx(struct cn_netdev *dev, struct cn_net *net, uint64_t now, const bool split)
{
	struct cn_mbuf *m[256];
	unsigned n, batch = dev->p.batch < 256 ? dev->p.batch : 256;
	uint32_t base = dev->rx_drv;

	if (dev->p.dca != CN_DCA_PREFETCH) {
		n = rx_take(dev, m, batch, false, false, split);
		for (unsigned i = 0; i < n; i++)
			cn_net_input(net, m[i], now);
		return n;
	}
	/* Interleaved: frame i + k's lines are asked for just before frame
	 * i goes up, so they have k frames of protocol work to arrive in;
	 * frames past this poll's batch are prefetched from the ring for
	 * the next poll. */
	n = rx_take(dev, m, batch, false, dev->copybreak != 0, split);
	if ((int32_t)(dev->rx_pf - base) < 0)
		dev->rx_pf = base;
	if (dev->p.prefetch_pace) {
		/* the hint a constant in each copy: a switch per line cost
		 * ~5 instructions a line (callgrind) */
		switch (dev->p.prefetch_hint) {
		case CN_PREFETCH_L1:
			return poll_paced(dev, net, now, m, n, base, split, CN_PREFETCH_L1);
		case CN_PREFETCH_L2:
			return poll_paced(dev, net, now, m, n, base, split, CN_PREFETCH_L2);
		case CN_PREFETCH_LLC:
			return poll_paced(dev, net, now, m, n, base, split, CN_PREFETCH_LLC);
		case CN_PREFETCH_NTA:
			return poll_paced(dev, net, now, m, n, base, split, CN_PREFETCH_NTA);
		}
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t want = base + i + dev->p.prefetch_k + 1;
		while ((int32_t)(want - dev->rx_pf) > 0) {
			uint32_t j = dev->rx_pf - base;
			if (j >= n) {
				prefetch_ring(dev, want, split, false);
				break;
			}
			prefetch_mbuf(m[j], dev->p.prefetch_hint, split);
			dev->rx_pf++;
		}
		cn_net_input(net, m[i], now);
	}
	return n;
}

unsigned cn_netdev_poll(struct cn_netdev *dev, struct cn_net *net, uint64_t now)
{
	dev->st.polls++;
	dev->now_ns = now;
	cn_netdev_tx_reap(dev);
	if (CN_UNLIKELY(dev->rx_hdr != NULL))
		return poll_rx(dev, net, now, true);
	return poll_rx(dev, net, now, false);
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
