/* SPDX-License-Identifier: BSD-2-Clause */
/* A Linux interface's queues as a cachenet NIC through AF_XDP (afxdp.h).
 *
 * Memory. One UMEM of queues * frames chunks of 2048 bytes (aligned mode:
 * the kernel masks a fill address to its chunk and writes the frame at
 * chunk + XDP_PACKET_HEADROOM), and one cluster pool over it whose
 * cluster i is chunk i (mbuf.h, ext_mem; its storage headers live in the
 * pool's own memory, so the kernel may write anywhere in a chunk). The
 * chunk offset is the cluster's I/O address.
 *
 * Ownership of a chunk: free in the pool; or held by the backend, in
 * held[chunk]: rx_mark while it is posted to a fill ring (a bare
 * cluster: a received frame gets a fresh mbuf from the thread's cache
 * when it arrives, buf_dev.h), or what a TX descriptor holds until its
 * completion; or out with the caller as an mbuf (a received frame; the
 * stack's receive queue). Each queue touches only the chunks it posted,
 * so queues on different threads never share a held[] entry.
 *
 * Transmit. A frame whose bytes already lie in the UMEM is posted where
 * it lies: a chunk's address is a byte offset, and a TX descriptor may
 * name any range inside one chunk. One descriptor per piece, linked with
 * XDP_PKT_CONTD when the socket is bound with XDP_USE_SG (multi-buffer,
 * kernel 6.6 or later; copy mode on any driver, zero-copy where the
 * driver allows more than one segment) and several descriptors per frame
 * are allowed (multi_tx: zero-copy mode, or params.tx_multi). Everything
 * else is gathered into a free chunk. A TX descriptor's chunk is marked in held[] until the
 * completion ring returns it: the first chunk of a frame holds what must
 * live until then (the chunk's own mbuf, the caller's chain, or in
 * held_pkt[] the stack's packet), the others hold tx_mark. A chunk is
 * named by at most one descriptor in flight: a frame touching a marked
 * chunk (a retransmission still on the ring) is copied instead. The
 * kernel completes a frame's descriptors together (copy mode: when its
 * skb is released; zero-copy drivers per packet), so releasing at the
 * first chunk's completion releases the frame.
 *
 * The program (xsk_prog.h) is built from raw instructions, shared with
 * the bare receive loop of tools/xskbare. */
#include <errno.h>
#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "cachenet/afxdp.h"
#include "cachenet/csum.h"
#include "cachenet/pcap.h"
#include "cachenet/tsc.h"
#include "../buf/buf_dev.h"
#include "cn_internal.h"
#include "backend.h"
#include "impair.h"
#include "xsk_prog.h"

#define CHUNK_SHIFT 11
#define CHUNK (1u << CHUNK_SHIFT)
#define ETH_HDR 14
#define MAX_QUEUES 64
#define MAX_BATCH 256
#define RXQ 4 /* impaired RX output queue, power of two, >= 3 */
#define TX_DESCS 8 /* descriptors per frame at most (pieces posted in place) */

/* linux/if_xdp.h before 6.6 lacks the multi-buffer flags */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

/* A queue's impairment: one generator per direction, the frames that
 * left the RX engine and wait for a burst, a scratch frame for TX. */
struct impair_q {
	struct cn__impair im_tx, im_rx;
	struct cn__impair_dir dir_tx, dir_rx;
	uint32_t rxq_head, rxq_tail; /* free-running */
	struct cn_mbuf *rxq[RXQ];
	uint8_t scratch[2048] __attribute__((aligned(64)));
};

struct cn_afxdp_queue {
	/* rings first: every burst reads them */
	struct xsk_ring_cons rx;
	struct xsk_ring_prod fill;
	struct xsk_ring_prod tx;
	struct xsk_ring_cons comp;
	struct cn_afxdp *x;
	struct xsk_socket *xsk;
	int fd;
	uint32_t qid;
	uint32_t posted;      /* chunks on the fill ring or inside the kernel's RX */
	uint32_t tx_out;      /* chunks on the TX ring, not yet completed */
	uint32_t tx_pending;  /* frames queued since the last wake-up */
	bool rx_skip;         /* dropping the rest of a multi-buffer RX frame */
	struct impair_q *imp; /* NULL without impairment */
	struct cn_afxdp_stats st;
} __attribute__((aligned(64)));

struct cn_afxdp {
	struct cn_afxdp_params p;
	struct cn_afxdp_info info;
	char ifname[IF_NAMESIZE];
	uint32_t frame_max;
	uint8_t *umem_area;
	size_t umem_len;
	struct xsk_umem *umem;
	struct cn_mbuf_pool *cpool;
	struct cn_mbuf **held;   /* per chunk: rx_mark, what a TX descriptor holds, or NULL */
	struct cn_pkt **held_pkt;/* per chunk: a TX packet released at its completion */
	uintptr_t umem_lo;       /* umem_area as an integer, for range tests */
	bool multi_tx;           /* frames may take several TX descriptors */
	int prog_fd, map_fd;
	uint32_t xdp_flags;      /* the mode the program was attached with */
	bool attached;
	struct cn_afxdp_queue *q;
};

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ chunks */

/* held[] of a chunk posted to a fill ring, and of one named by a frame's
 * second or later TX descriptor */
static struct cn_mbuf rx_mark, tx_mark;

static inline uint32_t chunk_of(uint64_t addr)
{
	return (uint32_t)(addr >> CHUNK_SHIFT);
}

static inline uint64_t chunk_addr(const struct cn_afxdp *x, const struct cn_mbuf *m)
{
	return (uint64_t)(m->buf - x->umem_area);
}

/* Post up to the queue's share of chunks to its fill ring. */
static void refill(struct cn_afxdp_queue *q)
{
	struct cn_afxdp *x = q->x;
	uint32_t want = x->p.ring_size - q->posted, idx, k;

	if (want < x->p.batch && q->posted > 0)
		return; /* refill in batches: one producer update per batch */
	if (want == 0)
		return;
	k = xsk_ring_prod__reserve(&q->fill, want, &idx);
	if (k == 0)
		return;
	for (uint32_t i = 0; i < k;) {
		uint32_t c[64], n = k - i < 64 ? k - i : 64, got = cn__cluster_take(x->cpool, c, n);
		for (uint32_t j = 0; j < got; j++) {
			x->held[c[j]] = &rx_mark;
			*xsk_ring_prod__fill_addr(&q->fill, idx + i + j) = (uint64_t)c[j] << CHUNK_SHIFT;
		}
		i += got;
		if (got < n) {
			q->st.rx_nobufs++;
			/* cancel the reservation's unused tail */
			q->fill.cached_prod -= k - i;
			k = i;
		}
	}
	if (k) {
		xsk_ring_prod__submit(&q->fill, k);
		q->posted += k;
		q->st.rx_posted += k;
	}
}

/* Take the completion ring's chunks back; release a frame's hold at its
 * first chunk. @return descriptors reaped. */
static unsigned reap(struct cn_afxdp_queue *q)
{
	struct cn_afxdp *x = q->x;
	uint32_t idx, k = xsk_ring_cons__peek(&q->comp, x->p.ring_size, &idx), done = 0;

	for (uint32_t i = 0; i < k; i++) {
		uint32_t c = chunk_of(*xsk_ring_cons__comp_addr(&q->comp, idx + i));
		struct cn_mbuf *m = c < x->info.frames ? x->held[c] : NULL;
		if (!m || m == &rx_mark) /* a chunk no TX descriptor named */
			continue;
		x->held[c] = NULL;
		if (m == &tx_mark)
			continue;
		done++;
		cn_mbuf_free_chain(m);
		if (x->held_pkt[c]) {
			cn_pkt_free(x->held_pkt[c]);
			x->held_pkt[c] = NULL;
		}
	}
	if (k) {
		xsk_ring_cons__release(&q->comp, k);
		q->tx_out -= k;
		q->st.tx_completed += done;
	}
	return k;
}

/* Descriptors on the TX ring the kernel has not taken yet. */
static inline uint32_t tx_unsent(const struct cn_afxdp_queue *q)
{
	return *q->tx.producer - __atomic_load_n(q->tx.consumer, __ATOMIC_ACQUIRE);
}

static void kick(struct cn_afxdp_queue *q)
{
	q->tx_pending = 0;
	if (!xsk_ring_prod__needs_wakeup(&q->tx))
		return;
	q->st.tx_kicks++;
	if (sendto(q->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
	    errno != EBUSY && errno != ENOBUFS && errno != ENETDOWN)
		q->st.tx_kick_errors++;
}

/* ------------------------------------------------------------ open/close */

static void queue_fini(struct cn_afxdp_queue *q)
{
	if (q->xsk)
		xsk_socket__delete(q->xsk);
	q->xsk = NULL;
	if (q->imp) {
		while (q->imp->rxq_head != q->imp->rxq_tail)
			cn_mbuf_free(q->imp->rxq[q->imp->rxq_head++ % RXQ]);
		free(q->imp);
		q->imp = NULL;
	}
}

/* Free what the backend holds and, with no chunk out elsewhere, the UMEM.
 * @return 0 or -EBUSY (UMEM kept). */
static int release_all(struct cn_afxdp *x)
{
	struct cn_mbuf_pool_stats st;
	int rc = 0;

	for (uint32_t q = 0; q < x->info.queues; q++)
		queue_fini(&x->q[q]);
	cn__xsk_prog_release(x->info.ifindex, x->attached, x->xdp_flags, x->prog_fd, x->map_fd);
	if (x->umem)
		xsk_umem__delete(x->umem);
	/* the sockets are gone: nothing the kernel held comes back now */
	for (uint32_t c = 0; x->held && c < x->info.frames; c++) {
		if (x->held[c] == &rx_mark)
			cn__cluster_untake(x->cpool, &c, 1);
		else if (x->held[c] && x->held[c] != &tx_mark)
			cn_mbuf_free_chain(x->held[c]);
		if (x->held_pkt && x->held_pkt[c])
			cn_pkt_free(x->held_pkt[c]);
	}
	free(x->held);
	free(x->held_pkt);
	if (x->cpool) {
		cn_mbuf_pool_thread_flush(x->cpool);
		cn_mbuf_pool_stats(x->cpool, &st);
		if (st.in_use)
			rc = -EBUSY;
	}
	if (rc == 0) {
		cn_mbuf_pool_destroy(x->cpool);
		if (x->umem_area)
			munmap(x->umem_area, x->umem_len);
	}
	free(x->q);
	free(x);
	return rc;
}

static int queue_init(struct cn_afxdp *x, uint32_t i, uint32_t bind_flags)
{
	struct cn_afxdp_queue *q = &x->q[i];
	struct xsk_socket_config sc = {
		.rx_size = x->p.ring_size,
		.tx_size = x->p.ring_size,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = (uint16_t)(bind_flags | XDP_USE_NEED_WAKEUP),
	};
	int rc;

	/* libxdp leaves the rings' cached indices as it found them */
	memset(&q->rx, 0, sizeof(q->rx));
	memset(&q->tx, 0, sizeof(q->tx));
	q->x = x;
	q->qid = x->p.queue_id + i;
	if (x->p.impair && !q->imp) { /* kept over the copy-mode retry */
		struct cn_link_params tx = *x->p.impair, rx;
		q->imp = aligned_alloc(64, sizeof(*q->imp));
		if (!q->imp)
			return -ENOMEM;
		memset(q->imp, 0, sizeof(*q->imp));
		tx.rng_start += i;
		rx = tx;
		rx.rng_start ^= 0x5a5a5a5a5a5a5a5aull;
		cn__impair_init(&q->imp->im_tx, &tx, &q->st.impair_tx);
		cn__impair_init(&q->imp->im_rx, &rx, &q->st.impair_rx);
	}
	/* A socket closed a moment ago still holds its queue: the kernel
	 * releases a socket's buffer pool from a work item, so a bind right
	 * after a close (ours, or a killed process's) can see EBUSY for a
	 * few milliseconds. Retry for up to a second. */
	for (int t = 0;; t++) {
		if (i == 0) {
			rc = xsk_socket__create(&q->xsk, x->ifname, q->qid, x->umem, &q->rx, &q->tx, &sc);
		} else {
			memset(&q->fill, 0, sizeof(q->fill));
			memset(&q->comp, 0, sizeof(q->comp));
			rc = xsk_socket__create_shared(&q->xsk, x->ifname, q->qid, x->umem, &q->rx,
						       &q->tx, &q->fill, &q->comp, &sc);
		}
		if ((rc != -EBUSY && rc != EBUSY) || t == 100)
			break;
		memset(&q->rx, 0, sizeof(q->rx));
		memset(&q->tx, 0, sizeof(q->tx));
		usleep(10000);
	}
	if (rc) {
		q->xsk = NULL;
		return rc < 0 ? rc : -rc;
	}
	q->fd = xsk_socket__fd(q->xsk);
	return 0;
}

/* The UMEM's @p len bytes, populated, on 2 MiB boundaries and advised
 * onto transparent huge pages where the kernel has them: the frames a
 * burst touches span the whole fill ring (4 MiB at 2048 chunks), which in
 * 4 KiB pages is a data-TLB miss per frame, and under a hypervisor's
 * nested paging each walk is dozens of dependent loads. Without huge
 * pages (or with the advice refused) it is the same mapping in small
 * pages. NULL when the memory cannot be mapped. */
static uint8_t *umem_map(size_t len)
{
	const size_t huge = (size_t)2 << 20;
	size_t span = len + huge;
	uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (raw == MAP_FAILED)
		return NULL;
	/* keep [a, a + len), a on a 2 MiB boundary; unmap the rest */
	a = (uint8_t *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
	if (a > raw)
		munmap(raw, (size_t)(a - raw));
	if (raw + span > a + len)
		munmap(a + len, (size_t)(raw + span - (a + len)));
#ifdef MADV_HUGEPAGE
	(void)madvise(a, len, MADV_HUGEPAGE);
#endif
	/* populate now, as MAP_POPULATE would: no fault on the data path */
#ifdef MADV_POPULATE_WRITE
	if (madvise(a, len, MADV_POPULATE_WRITE) == 0)
		return a;
#endif
	memset(a, 0, len);
	return a;
}

static int umem_init(struct cn_afxdp *x)
{
	struct cn_afxdp_queue *q0 = &x->q[0];
	struct xsk_umem_config uc = {
		.fill_size = 2 * x->p.ring_size,
		.comp_size = x->p.ring_size,
		.frame_size = CHUNK,
		.frame_headroom = 0,
		.flags = 0,
	};
	struct cn_mbuf_pool_params pp = {
		.name = "afxdp-umem",
		.kind = CN_MBUF_POOL_CLUSTER,
		.count = x->info.frames,
		.data_size = CHUNK,
		.cache_size = 256 < x->info.frames ? 256 : 0,
		.ext_mem = NULL,
		.ext_stride = CHUNK,
		.ext_iova = 0,
	};
	int rc;

	x->umem_len = (size_t)x->info.frames * CHUNK;
	x->umem_area = umem_map(x->umem_len);
	if (x->umem_area == NULL)
		return -ENOMEM;
	pp.ext_mem = x->umem_area;
	x->cpool = cn_mbuf_pool_create(&pp);
	if (!x->cpool)
		return -errno;
	x->umem_lo = (uintptr_t)x->umem_area;
	x->held = calloc(x->info.frames, sizeof(*x->held));
	x->held_pkt = calloc(x->info.frames, sizeof(*x->held_pkt));
	if (!x->held || !x->held_pkt)
		return -ENOMEM;
	memset(&q0->fill, 0, sizeof(q0->fill));
	memset(&q0->comp, 0, sizeof(q0->comp));
	rc = xsk_umem__create(&x->umem, x->umem_area, x->umem_len, &q0->fill, &q0->comp, &uc);
	if (rc) {
		x->umem = NULL;
		return rc < 0 ? rc : -rc;
	}
	return 0;
}

static int attach_prog(struct cn_afxdp *x)
{
	int rc;

	x->map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "cn_xsks", sizeof(uint32_t), sizeof(uint32_t),
				   x->p.queue_id + x->info.queues, NULL);
	if (x->map_fd < 0)
		return -errno;
	x->prog_fd = cn__xsk_prog_load(x->map_fd);
	if (x->prog_fd < 0)
		return x->prog_fd;
	for (uint32_t i = 0; i < x->info.queues; i++) {
		rc = xsk_socket__update_xskmap(x->q[i].xsk, x->map_fd);
		if (rc)
			return rc < 0 ? rc : -rc;
	}
	rc = cn__xsk_prog_attach(x->info.ifindex, x->prog_fd, (int)x->p.attach, &x->xdp_flags,
				 &x->info.prog_id);
	if (rc < 0)
		return rc;
	x->attached = true;
	x->info.native = x->xdp_flags == XDP_FLAGS_DRV_MODE;
	return 0;
}

struct cn_afxdp *cn_afxdp_open(const struct cn_afxdp_params *pp)
{
	struct cn_afxdp *x;
	struct cn_afxdp_params p;
	uint32_t bind;
	int rc;

	if (!pp || cn__params_copy(&p, sizeof(p), pp) < 0 || !p.ifname || !p.mpool ||
	    cn_mbuf_pool_params(p.mpool)->kind != CN_MBUF_POOL_SMALL)
		return cn__fail(EINVAL);
	if (strlen(p.ifname) >= IF_NAMESIZE)
		return cn__fail(ENAMETOOLONG);
	if (!p.queues)
		p.queues = 1;
	if (!p.ring_size)
		p.ring_size = 2048;
	if (!p.frames)
		p.frames = 4 * p.ring_size;
	if (!p.batch)
		p.batch = 64;
	if (!p.mtu)
		p.mtu = 1500;
	if (p.queues > MAX_QUEUES || p.ring_size < 64 || p.ring_size > 16384 ||
	    (p.ring_size & (p.ring_size - 1)) || p.frames < 2 * p.ring_size ||
	    (uint64_t)p.frames * p.queues > (1u << 20) || p.batch > MAX_BATCH || p.mtu > 1500 ||
	    p.copy > CN_AFXDP_ZEROCOPY || p.attach > CN_AFXDP_ATTACH_GENERIC ||
	    p.queue_id > 1u << 16 || (p.impair && !cn__impair_params_ok(p.impair, 1)))
		return cn__fail(EINVAL);
	x = calloc(1, sizeof(*x));
	if (!x)
		return cn__fail(ENOMEM);
	x->q = aligned_alloc(64, p.queues * sizeof(*x->q));
	if (!x->q) {
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	memset(x->q, 0, p.queues * sizeof(*x->q));
	x->prog_fd = x->map_fd = -1;
	memcpy(x->ifname, p.ifname, strlen(p.ifname) + 1);
	p.ifname = x->ifname;
	x->p = p;
	x->frame_max = p.mtu + ETH_HDR;
	x->info.queues = p.queues;
	x->info.frames = p.frames * p.queues;
	x->info.chunk_size = CHUNK;
	x->info.ring_size = p.ring_size;
	x->info.ifindex = (int)if_nametoindex(x->ifname);
	if (x->info.ifindex == 0) {
		rc = -ENODEV;
		goto fail;
	}
	rc = cn__xsk_detach_stale(x->info.ifindex);
	if (rc < 0)
		goto fail;
	x->info.stale_detached = (uint32_t)rc;
	rc = umem_init(x);
	if (rc < 0)
		goto fail;
	/* zero-copy first where allowed, multi-buffer first unless refused;
	 * the driver's or kernel's refusal shows at bind (EOPNOTSUPP: a
	 * driver without it; EINVAL: a kernel older than 6.6) */
	bind = p.copy == CN_AFXDP_COPY_ALWAYS ? XDP_COPY : XDP_ZEROCOPY;
	for (int sg = 1;; sg--) {
		rc = queue_init(x, 0, bind | (sg > 0 ? XDP_USE_SG : 0));
		if (rc == 0) {
			x->info.multi_buffer = sg > 0;
			break;
		}
		if (sg > 0)
			continue;
		if (bind != XDP_ZEROCOPY || p.copy != CN_AFXDP_COPY_AUTO)
			goto fail;
		bind = XDP_COPY;
		sg = 2;
	}
	x->info.zerocopy = bind == XDP_ZEROCOPY;
	if (x->info.multi_buffer)
		bind |= XDP_USE_SG;
	x->multi_tx = x->info.multi_buffer && (p.tx_multi || x->info.zerocopy);
	for (uint32_t i = 1; i < p.queues; i++) {
		rc = queue_init(x, i, bind);
		if (rc < 0)
			goto fail;
	}
	rc = attach_prog(x);
	if (rc < 0)
		goto fail;
	for (uint32_t i = 0; i < p.queues; i++) {
		refill(&x->q[i]);
		if (x->q[i].posted == 0) {
			rc = -ENOMEM; /* not one small mbuf for the fill ring */
			goto fail;
		}
	}
	return x;
fail:
	release_all(x);
	errno = -rc;
	return NULL;
}

int cn_afxdp_close(struct cn_afxdp *x)
{
	if (!x)
		return 0;
	return release_all(x);
}

const struct cn_afxdp_info *cn_afxdp_info(const struct cn_afxdp *x)
{
	return &x->info;
}

struct cn_afxdp_queue *cn_afxdp_queue(struct cn_afxdp *x, uint32_t i)
{
	return i < x->info.queues ? &x->q[i] : NULL;
}

struct cn_mbuf_pool *cn_afxdp_pool(const struct cn_afxdp *x)
{
	return x->cpool;
}

uint32_t cn_afxdp_held(const struct cn_afxdp *x)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < x->info.queues; i++) {
		const struct cn_afxdp_queue *q = &x->q[i];
		n += q->posted + q->tx_out;
		if (q->imp)
			n += q->imp->rxq_tail - q->imp->rxq_head;
	}
	return n;
}

int cn_afxdp_fd(const struct cn_afxdp_queue *q)
{
	return q->fd;
}

const struct cn_afxdp_stats *cn_afxdp_stats(struct cn_afxdp_queue *q)
{
	struct xdp_statistics ks;
	socklen_t len = sizeof(ks);

	memset(&ks, 0, sizeof(ks));
	if (getsockopt(q->fd, SOL_XDP, XDP_STATISTICS, &ks, &len) == 0) {
		q->st.k_rx_dropped = ks.rx_dropped;
		q->st.k_rx_invalid = ks.rx_invalid_descs;
		q->st.k_tx_invalid = ks.tx_invalid_descs;
		if (len >= offsetof(struct xdp_statistics, tx_ring_empty_descs)) {
			q->st.k_rx_ring_full = ks.rx_ring_full;
			q->st.k_fill_empty = ks.rx_fill_ring_empty_descs;
		}
	}
	return &q->st;
}

/* ------------------------------------------------------------ TX */

/* Reserve @p n TX descriptors, waking the kernel and reaping once if the
 * ring is full. @return 0, or -ENOBUFS (counted in tx_full). */
static int tx_reserve(struct cn_afxdp_queue *q, uint32_t n, uint32_t *idx)
{
	if (xsk_ring_prod__reserve(&q->tx, n, idx) == n)
		return 0;
	kick(q);
	reap(q);
	if (xsk_ring_prod__reserve(&q->tx, n, idx) == n)
		return 0;
	q->st.tx_full++;
	return -ENOBUFS;
}

/* A free chunk with its mbuf, reaping once if the pool is dry. On failure
 * the @p n descriptors just reserved go back (counted in tx_nobufs). */
static struct cn_mbuf *tx_chunk(struct cn_afxdp_queue *q, uint32_t n)
{
	struct cn_afxdp *x = q->x;
	struct cn_mbuf *m = cn_mbuf_get_cluster(x->p.mpool, x->cpool);

	if (!m) {
		reap(q);
		m = cn_mbuf_get_cluster(x->p.mpool, x->cpool);
	}
	if (!m) {
		q->tx.cached_prod -= n;
		q->st.tx_nobufs++;
	}
	return m;
}

static inline void tx_desc(struct cn_afxdp_queue *q, uint32_t idx, uint64_t addr, uint32_t len,
			   uint32_t options)
{
	struct xdp_desc *d = xsk_ring_prod__tx_desc(&q->tx, idx);

	d->addr = addr;
	d->len = len;
	d->options = options;
}

/* Submit the @p n filled descriptors of one frame of @p len bytes; its
 * first chunk @p c0 holds @p hold (and @p p) until its completion. */
static void tx_commit(struct cn_afxdp_queue *q, uint32_t n, uint32_t c0, struct cn_mbuf *hold,
		      struct cn_pkt *p, uint32_t len)
{
	struct cn_afxdp *x = q->x;

	x->held[c0] = hold;
	x->held_pkt[c0] = p;
	xsk_ring_prod__submit(&q->tx, n);
	q->tx_out += n;
	q->st.tx_frames++;
	q->st.tx_bytes += len;
	if (++q->tx_pending >= x->p.batch) {
		kick(q);
		if (p)
			reap(q); /* the stack's descriptors come back */
	}
}

/* The chunk holding the @p len bytes at @p b, marked as named by a TX
 * descriptor; UINT32_MAX when they lie outside the UMEM, cross a chunk's
 * end, or the chunk is held (posted, or named by a descriptor in flight). */
static inline uint32_t tx_mark_chunk(struct cn_afxdp *x, const uint8_t *b, uint32_t len)
{
	uintptr_t u = (uintptr_t)b - x->umem_lo;
	uint32_t c;

	if (u >= x->umem_len || (u & (CHUNK - 1)) + len > CHUNK)
		return UINT32_MAX;
	c = (uint32_t)(u >> CHUNK_SHIFT);
	if (x->held[c])
		return UINT32_MAX;
	x->held[c] = &tx_mark;
	return c;
}

static void tx_unmark(struct cn_afxdp *x, const uint64_t *addr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		x->held[chunk_of(addr[i])] = NULL;
}

/* The pieces of a frame that lie in the UMEM: @p n ranges (base, len) of
 * which the empty ones are skipped, into @p addr/@p len (at most TX_DESCS
 * - @p first entries from index @p first), each chunk marked.
 * @return descriptors used, or 0 when a piece lies elsewhere (nothing
 * left marked). */
static uint32_t tx_pieces(struct cn_afxdp *x, const struct cn_sb_piece *pc, const struct cn_mbuf *m,
			  uint32_t n, uint32_t first, uint64_t *addr, uint32_t *len)
{
	uint32_t k = first;

	for (uint32_t i = 0; pc ? i < n : m != NULL; i++) {
		const uint8_t *b = pc ? pc[i].base : m->data;
		uint32_t l = pc ? pc[i].len : m->len, c;
		if (!pc)
			m = m->next;
		if (l == 0)
			continue;
		if (k == TX_DESCS || (k > 0 && !x->multi_tx) ||
		    (c = tx_mark_chunk(x, b, l)) == UINT32_MAX) {
			tx_unmark(x, addr + first, k - first);
			return 0;
		}
		addr[k] = ((uint64_t)c << CHUNK_SHIFT) | ((uintptr_t)b & (CHUNK - 1));
		len[k++] = l;
	}
	return k - first;
}

/* Post @p n descriptors (flags: all but the last continue the frame) of
 * one frame of @p flen bytes and commit it. */
static void tx_post_descs(struct cn_afxdp_queue *q, uint32_t idx, const uint64_t *addr,
			  const uint32_t *len, uint32_t n, struct cn_mbuf *hold, struct cn_pkt *p,
			  uint32_t flen)
{
	for (uint32_t i = 0; i < n; i++)
		tx_desc(q, idx + i, addr[i], len[i], i + 1 < n ? XDP_PKT_CONTD : 0);
	tx_commit(q, n, chunk_of(addr[0]), hold, p, flen);
}

/* The chain @p m posted where it lies (every mbuf's bytes inside one UMEM
 * chunk; more than one only with multi-buffer), held until completion.
 * @return 1 posted, 0 not possible (copy it), -ENOBUFS. */
static int tx_inplace_mbuf(struct cn_afxdp_queue *q, struct cn_mbuf *m)
{
	struct cn_afxdp *x = q->x;
	uint64_t addr[TX_DESCS];
	uint32_t len[TX_DESCS], idx, n = tx_pieces(x, NULL, m, 0, 0, addr, len);

	if (n == 0)
		return 0;
	if (tx_reserve(q, n, &idx) < 0) {
		tx_unmark(x, addr, n);
		return -ENOBUFS;
	}
	tx_post_descs(q, idx, addr, len, n, m, NULL, m->pkt_len);
	q->st.tx_zero_copy++;
	return 1;
}

/* Multi-buffer: the packet's headers copied into a chunk of their own
 * (the L4 checksum, when offloaded, summed over the payload where it
 * lies), its payload pieces posted where they lie in the UMEM; @p p is
 * released at completion. @return 1 posted, 0 not possible, -ENOBUFS. */
static int tx_inplace_pkt(struct cn_afxdp_queue *q, struct cn_pkt *p)
{
	struct cn_afxdp *x = q->x;
	uint64_t addr[TX_DESCS];
	uint32_t len[TX_DESCS], idx, n;
	struct cn_mbuf *h;

	if (!x->multi_tx || p->npieces == 0 || p->hdr_len == 0)
		return 0;
	n = tx_pieces(x, p->piece, NULL, p->npieces, 1, addr, len);
	if (n == 0)
		return 0;
	if (tx_reserve(q, n + 1, &idx) < 0 || !(h = tx_chunk(q, n + 1))) {
		tx_unmark(x, addr + 1, n);
		return -ENOBUFS;
	}
	memcpy(h->buf, p->hdr, p->hdr_len);
	if (p->ol_flags & CN_PKT_TX_L4_CSUM) {
		/* as cn_pkt_gather, without the copy: the header part is even */
		uint32_t s = cn_csum_partial(h->buf + p->l4_off, p->hdr_len - p->l4_off, 0), at = 0;
		for (uint32_t i = 0; i < p->npieces; i++) {
			s = cn_csum_combine(s, cn_csum_partial(p->piece[i].base, p->piece[i].len, 0), at);
			at += p->piece[i].len;
		}
		uint16_t c = (uint16_t)~cn_csum_fold(s);
		if (c == 0 && (p->ol_flags & CN_PKT_TX_UDP))
			c = 0xffff;
		memcpy(h->buf + p->l4_off + p->csum_off, &c, 2);
	}
	addr[0] = chunk_addr(x, h);
	len[0] = p->hdr_len;
	tx_post_descs(q, idx, addr, len, n + 1, h, p, cn_pkt_len(p));
	q->st.tx_payload_in_place++;
	return 1;
}

/* The frame to send: a stack's packet, a caller's chain, or raw bytes. */
struct tx_src {
	struct cn_pkt *p;
	struct cn_mbuf *m;
	const void *frame;
	uint32_t len;
};

static uint32_t tx_gather(const struct tx_src *s, uint8_t *dst)
{
	if (s->p)
		return cn_pkt_gather(s->p, dst);
	if (s->m)
		cn_mbuf_copy_out(s->m, 0, s->len, dst);
	else
		memcpy(dst, s->frame, s->len);
	return s->len;
}

/* A frame leaving the TX impairment: failures are losses of the wire
 * (counted in tx_full / tx_nobufs), no back pressure. */
static void impaired_tx_out(void *arg, const uint8_t *frame, uint32_t len)
{
	struct cn_afxdp_queue *q = arg;
	struct cn_mbuf *m;
	uint32_t idx;

	if (tx_reserve(q, 1, &idx) < 0 || !(m = tx_chunk(q, 1)))
		return;
	memcpy(m->buf, frame, len);
	if (q->x->p.pcap)
		cn_pcap_write(q->x->p.pcap, m->buf, len, wall_ns());
	tx_desc(q, idx, chunk_addr(q->x, m), len, 0);
	tx_commit(q, 1, chunk_of(chunk_addr(q->x, m)), m, NULL, len);
	q->st.tx_copied++;
}

/* Transmit one frame: in place when its bytes lie in the UMEM, else
 * gathered into a free chunk (and then completed). */
static int tx_one(struct cn_afxdp_queue *q, const struct tx_src *s)
{
	uint64_t t0 = cn_tsc_begin();
	struct cn_afxdp *x = q->x;
	struct cn_mbuf *m;
	uint32_t idx, len = s->len;
	uint8_t pc[CHUNK]; /* a copy for the capture of a frame sent in place */
	int rc = 0;

	if (len > x->frame_max) {
		q->st.tx_too_long++;
		rc = -EMSGSIZE;
		goto out;
	}
	if (q->imp) {
		tx_gather(s, q->imp->scratch);
		cn__impair_frame(&q->imp->im_tx, &q->imp->dir_tx, q->imp->scratch, len, impaired_tx_out, q);
		goto done;
	}
	if (x->p.pcap) /* before the posting: a completion may release it */
		tx_gather(s, pc);
	rc = s->p ? tx_inplace_pkt(q, s->p) : s->m ? tx_inplace_mbuf(q, s->m) : 0;
	if (rc != 0) {
		if (rc > 0 && x->p.pcap)
			cn_pcap_write(x->p.pcap, pc, len, wall_ns());
		rc = rc < 0 ? rc : 0;
		goto out; /* posted in place: released at completion */
	}
	if (tx_reserve(q, 1, &idx) < 0 || !(m = tx_chunk(q, 1))) {
		rc = -ENOBUFS;
		goto out;
	}
	tx_gather(s, m->buf);
	if (x->p.pcap)
		cn_pcap_write(x->p.pcap, m->buf, len, wall_ns());
	tx_desc(q, idx, chunk_addr(x, m), len, 0);
	tx_commit(q, 1, chunk_of(chunk_addr(x, m)), m, NULL, len);
	q->st.tx_copied++;
done:
	if (s->p)
		cn_pkt_free(s->p);
	else if (s->m)
		cn_mbuf_free_chain(s->m);
out:
	q->st.tx_tsc += cn_tsc_end() - t0;
	return rc;
}

int cn_afxdp_xmit(struct cn_afxdp_queue *q, struct cn_pkt *p)
{
	struct tx_src s = {.p = p, .len = cn_pkt_len(p)};

	return tx_one(q, &s);
}

int cn_afxdp_xmit_mbuf(struct cn_afxdp_queue *q, struct cn_mbuf *m)
{
	struct tx_src s = {.m = m, .len = m->pkt_len};

	return tx_one(q, &s);
}

int cn_afxdp_write_frame(struct cn_afxdp_queue *q, const void *frame, uint32_t len)
{
	struct tx_src s = {.frame = frame, .len = len};

	return tx_one(q, &s);
}

static void impaired_rx_out(void *arg, const uint8_t *frame, uint32_t len);

unsigned cn_afxdp_flush(struct cn_afxdp_queue *q)
{
	uint64_t t0 = cn_tsc_begin();
	unsigned k;

	if (q->imp) {
		cn__impair_flush(&q->imp->dir_tx, impaired_tx_out, q);
		if (q->imp->rxq_tail - q->imp->rxq_head < RXQ)
			cn__impair_flush(&q->imp->dir_rx, impaired_rx_out, q);
	}
	if (q->tx_pending || tx_unsent(q)) {
		kick(q);
		/* In copy mode one sendto moves at most the kernel's TX batch
		 * (32 frames, TX_BATCH_SIZE in net/xdp/xsk.c) and returns; the
		 * rest would wait in the ring for the next frame queued, while
		 * the peer waits for them: kick until the ring is empty. */
		for (int i = 0; i < 64 && !q->x->info.zerocopy && tx_unsent(q) &&
				xsk_ring_prod__needs_wakeup(&q->tx);
		     i++)
			kick(q);
	}
	k = q->tx_out ? reap(q) : 0;
	q->st.tx_tsc += cn_tsc_end() - t0;
	return k;
}

/* ------------------------------------------------------------ RX */

/* A frame leaving the RX impairment: copied into a fresh chunk and queued
 * for the next frames returned. Cannot overflow: the queue is drained
 * before each frame enters (see rx_burst), one frame yields at most
 * three, and a flush adds one only when there is room. */
static void impaired_rx_out(void *arg, const uint8_t *frame, uint32_t len)
{
	struct cn_afxdp_queue *q = arg;
	struct impair_q *im = q->imp;

	if (cn__impair_rx_queue(q->x->p.mpool, q->x->cpool, XDP_PACKET_HEADROOM, frame, len, im->rxq,
				RXQ, im->rxq_head, &im->rxq_tail) < 0)
		q->st.rx_nobufs++;
}

/* A received descriptor the caller does not get (counted in rx_trunc):
 * longer than the MTU, outside its chunk, or a piece of a multi-buffer
 * frame (XDP_PKT_CONTD on all but its last piece; the kernel splits only
 * frames longer than a chunk's room, so longer than the MTU). */
static bool rx_bad(struct cn_afxdp_queue *q, const struct xdp_desc *d, uint32_t off)
{
	bool inside = q->rx_skip;

	q->rx_skip = (d->options & XDP_PKT_CONTD) != 0;
	if (inside || q->rx_skip || d->len > q->x->frame_max || off + d->len > CHUNK) {
		q->st.rx_trunc++;
		return true;
	}
	return false;
}

/* Chunk @p c, named by a received descriptor, leaves the fill ring's
 * share: false (counted in rx_trunc) when it was not posted there (a
 * corrupted ring, or the kernel's bug: nothing to free). */
static inline bool rx_posted(struct cn_afxdp_queue *q, uint32_t c)
{
	struct cn_afxdp *x = q->x;

	if (CN_UNLIKELY(c >= x->info.frames || x->held[c] != &rx_mark)) {
		q->st.rx_trunc++;
		return false;
	}
	x->held[c] = NULL;
	q->posted--;
	return true;
}

static void rx_hand(struct cn_afxdp_queue *q, struct cn_mbuf *m)
{
	q->st.rx_frames++;
	q->st.rx_bytes += m->len;
	if (q->x->p.pcap)
		cn_pcap_write(q->x->p.pcap, m->data, m->len, wall_ns());
}

/* With impairment: each received frame goes through the engine, whose
 * output (copies) is returned from the queue; at most one ring entry is
 * consumed per three output slots left, so the queue never overflows. */
static unsigned rx_burst_impaired(struct cn_afxdp_queue *q, struct cn_mbuf **out, unsigned n)
{
	struct impair_q *im = q->imp;
	unsigned got = 0;

	for (;;) {
		uint32_t idx;
		while (got < n && im->rxq_head != im->rxq_tail) {
			struct cn_mbuf *m = im->rxq[im->rxq_head++ % RXQ];
			rx_hand(q, m);
			out[got++] = m;
		}
		if (got == n || xsk_ring_cons__peek(&q->rx, 1, &idx) == 0)
			break;
		const struct xdp_desc d = *xsk_ring_cons__rx_desc(&q->rx, idx);
		uint32_t c = chunk_of(d.addr), off = (uint32_t)(d.addr & (CHUNK - 1));
		xsk_ring_cons__release(&q->rx, 1);
		if (!rx_posted(q, c))
			continue;
		if (!rx_bad(q, &d, off))
			cn__impair_frame(&im->im_rx, &im->dir_rx, q->x->umem_area + d.addr, d.len,
					 impaired_rx_out, q);
		cn__cluster_untake(q->x->cpool, &c, 1);
	}
	return got;
}

/* Ahead of a burst of @p k frames from RX index @p idx: their first two
 * lines (the headers the stack reads next, written by the kernel's copy,
 * often on another CPU) and their entries of held[] (in fill order, not
 * in address order). */
static void rx_prefetch(const struct cn_afxdp_queue *q, uint32_t idx, uint32_t k)
{
	const struct cn_afxdp *x = q->x;

	for (uint32_t i = 0; i < k; i++) {
		uint64_t a = xsk_ring_cons__rx_desc(&q->rx, idx + i)->addr;
		if (a + 2 * CN_CACHE_LINE > x->umem_len)
			continue;
		__builtin_prefetch(x->umem_area + a, 0, 3);
		__builtin_prefetch(x->umem_area + a + CN_CACHE_LINE, 0, 3);
		__builtin_prefetch(&x->held[chunk_of(a)], 0, 3);
	}
}

unsigned cn_afxdp_rx_burst(struct cn_afxdp_queue *q, struct cn_mbuf **out, unsigned n)
{
	struct cn_afxdp *x = q->x;
	uint64_t t0 = cn_tsc_begin();
	uint32_t idx, k, got = 0, c[MAX_BATCH], off[MAX_BATCH], len[MAX_BATCH];

	refill(q);
	if (xsk_ring_prod__needs_wakeup(&q->fill)) {
		q->st.rx_wakeups++;
		recvfrom(q->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
	}
	if (q->imp) {
		got = rx_burst_impaired(q, out, n);
		if (got)
			q->st.rx_bursts++;
		else
			q->st.rx_empty++;
		refill(q);
		q->st.rx_tsc += cn_tsc_end() - t0;
		return got;
	}
	k = xsk_ring_cons__peek(&q->rx, n < MAX_BATCH ? n : MAX_BATCH, &idx);
	if (!cn__rx_burst_counted(k, &q->st.rx_bursts, &q->st.rx_empty, &q->st.rx_tsc, t0))
		return 0;
	rx_prefetch(q, idx, k);
	/* The descriptors' chunks, checked; then one mbuf each, fresh from
	 * the thread's cache (those the last frames freed). */
	for (uint32_t i = 0; i < k; i++) {
		const struct xdp_desc *d = xsk_ring_cons__rx_desc(&q->rx, idx + i);
		uint32_t ci = chunk_of(d->addr), o = (uint32_t)(d->addr & (CHUNK - 1));
		if (!rx_posted(q, ci))
			continue;
		if (rx_bad(q, d, o)) {
			cn__cluster_untake(x->cpool, &ci, 1);
			continue;
		}
		c[got] = ci;
		off[got] = o;
		len[got++] = d->len;
	}
	xsk_ring_cons__release(&q->rx, k);
	k = got;
	got = cn__cluster_mbufs(x->p.mpool, x->cpool, c, out, k);
	if (got < k) {
		q->st.rx_nombuf += k - got;
		cn__cluster_untake(x->cpool, c + got, k - got);
	}
	for (uint32_t i = 0; i < got; i++) {
		struct cn_mbuf *m = out[i];
		m->data = m->buf + off[i];
		m->len = m->pkt_len = len[i];
		rx_hand(q, m);
	}
	refill(q);
	q->st.rx_tsc += cn_tsc_end() - t0;
	return got;
}

unsigned cn_afxdp_poll(struct cn_afxdp_queue *q, struct cn_net *net, uint64_t now)
{
	struct cn_mbuf *m[MAX_BATCH];
	unsigned n;

	q->st.polls++;
	n = cn_afxdp_rx_burst(q, m, q->x->p.batch);
	cn_net_input_burst(net, m, n, now);
	cn_afxdp_flush(q);
	return n;
}

int cn_afxdp_wait(struct cn_afxdp_queue *q, int timeout_ms)
{
	if (xsk_cons_nb_avail(&q->rx, 1) || (q->imp && q->imp->rxq_head != q->imp->rxq_tail))
		return 1;
	return cn__dev_wait_fd(q->fd, timeout_ms);
}
