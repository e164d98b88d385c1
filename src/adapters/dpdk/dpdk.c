/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libcachenet-dpdk: an ethdev queue as a cachenet NIC (cachenet/dpdk.h).
 *
 * Ownership of the rte_mbufs:
 *  - RX: the RX mempool's objects carry a struct cn_mbuf_shared in their
 *    private area. A received rte_mbuf is described by it (external
 *    storage, refcount 1 after the attach) and the cachenet mbuf over it
 *    goes to the caller; the rte_mbuf returns to its mempool from
 *    rx_release, the storage's free callback, at the last cachenet free.
 *  - TX: every segment of a transmitted chain is an external-buffer
 *    rte_mbuf (an "indirect" mbuf of the TX mempool, no data room of its
 *    own) pointing into the cn_pkt: its header room, then each payload
 *    piece. One struct tx_ctx per packet, from the context mempool,
 *    holds the rte_mbuf_ext_shared_info all segments share (refcount =
 *    segments); the driver's free of the last one calls tx_release, which
 *    releases the cn_pkt and puts the context back. The context lives
 *    outside the rte_mbufs because a driver may return a chain's segments
 *    to their mempool at different times.
 *  - TX, copy mode (asked for, or a port without multi-segment TX): the
 *    frame is copied into one rte_mbuf of the copy mempool and the cn_pkt
 *    released at once.
 */
#include "cachenet/dpdk.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "cachenet/csum.h"
#include "cachenet/tsc.h"

#include "../../cn_internal.h"
#include "../../dev/backend.h"

#define MAX_BATCH 256
#define ETH_HLEN 14
/* RX rte_mbufs: a private area for the storage header, a data room for
 * a whole frame. */
#define RX_PRIV 64
#define RX_ROOM (RTE_PKTMBUF_HEADROOM + 2048)

_Static_assert(sizeof(struct cn_mbuf_shared) <= RX_PRIV,
	       "the RX private area holds the storage header");

struct tx_ctx {
	struct rte_mbuf_ext_shared_info shinfo;
	struct cn_pkt *pkt;
	struct cn_dpdk *d;
};

struct cn_dpdk {
	struct cn_dpdk_params p;
	struct cn_dpdk_info info;
	struct cn_dpdk_stats st;
	struct rte_mempool *rxpool;  /* RX rte_mbufs (data room, private area) */
	struct rte_mempool *txpool;  /* TX segment descriptors (no data room) */
	struct rte_mempool *ctxpool; /* struct tx_ctx, one per packet in flight */
	struct rte_mempool *cpypool; /* whole-frame TX rte_mbufs (copy mode), or NULL;
				      * net_af_xdp: rxpool itself (see cn_dpdk_open) */
	uint32_t frame_max;
	uint16_t txq_n;
	int started;
	struct rte_mbuf *txq[MAX_BATCH];
};

/* The rte_mbuf dynamic field "cn_dpdk_owner": a received rte_mbuf names
 * its adapter there. Registering the same name again returns the same
 * offset, so one process-wide value serves every adapter. */
static int owner_off = -1;

/* ------------------------------------------------------------ memzone cluster pools */

/* The pools cn_dpdk_cluster_pool made, for TX address translation in
 * IOVA-as-PA mode. Creation and destruction happen on the control path;
 * lookups read an immutable slot. */
#define MAX_ZONES 16
static struct zone {
	const struct rte_memzone *mz;
	struct cn_mbuf_pool *pool;
} zones[MAX_ZONES];
static atomic_uint nzones;

struct cn_mbuf_pool *cn_dpdk_cluster_pool(const char *name, uint32_t count, uint32_t data_size,
					   uint32_t cache_size)
{
	unsigned slot;

	if (!name || count == 0 || data_size == 0) {
		errno = EINVAL;
		return NULL;
	}
	for (slot = 0; slot < MAX_ZONES; slot++)
		if (!zones[slot].mz)
			break;
	if (slot == MAX_ZONES) {
		errno = ENOMEM;
		return NULL;
	}
	uint32_t stride = (data_size + 63u) & ~63u;
	const struct rte_memzone *mz = rte_memzone_reserve_aligned(
		name, (size_t)count * stride, SOCKET_ID_ANY, RTE_MEMZONE_IOVA_CONTIG, 4096);
	if (!mz) {
		errno = rte_errno == EEXIST ? EEXIST : ENOMEM;
		return NULL;
	}
	struct cn_mbuf_pool_params pp = {
		.name = name, .kind = CN_MBUF_POOL_CLUSTER, .count = count,
		.data_size = data_size, .cache_size = cache_size,
		.ext_mem = mz->addr, .ext_stride = stride, .ext_iova = mz->iova,
	};
	struct cn_mbuf_pool *pool = cn_mbuf_pool_create(&pp);
	if (!pool) {
		int e = errno;
		rte_memzone_free(mz);
		errno = e;
		return NULL;
	}
	zones[slot].pool = pool;
	zones[slot].mz = mz;
	if (slot >= atomic_load(&nzones))
		atomic_store(&nzones, slot + 1);
	return pool;
}

int cn_dpdk_cluster_pool_free(struct cn_mbuf_pool *pool)
{
	if (!pool)
		return 0;
	for (unsigned i = 0; i < MAX_ZONES; i++) {
		if (zones[i].pool != pool)
			continue;
		int rc = cn_mbuf_pool_destroy(pool);
		if (rc == 0)
			rte_memzone_free(zones[i].mz);
		zones[i].mz = NULL;
		zones[i].pool = NULL;
		return rc;
	}
	return cn_mbuf_pool_destroy(pool);
}

static rte_iova_t piece_iova(struct cn_dpdk *d, const void *addr)
{
	if (d->info.iova_va)
		return (rte_iova_t)(uintptr_t)addr;
	unsigned n = atomic_load_explicit(&nzones, memory_order_acquire);
	for (unsigned i = 0; i < n; i++) {
		const struct rte_memzone *mz = zones[i].mz;
		if (mz && (const uint8_t *)addr >= (const uint8_t *)mz->addr &&
		    (const uint8_t *)addr < (const uint8_t *)mz->addr + mz->len) {
			uint64_t io = cn_mbuf_pool_iova(zones[i].pool, addr);
			if (io != UINT64_MAX)
				return io;
		}
	}
	d->st.tx_iova_slow++;
	return rte_mem_virt2iova(addr);
}

/* ------------------------------------------------------------ open and close */

static void pools_free(struct cn_dpdk *d)
{
	rte_mempool_free(d->rxpool);
	rte_mempool_free(d->txpool);
	rte_mempool_free(d->ctxpool);
	if (d->cpypool != d->rxpool)
		rte_mempool_free(d->cpypool);
}

/* rte_mbufs of the copy pool in use, when it is a pool of its own (taken
 * from the RX pool, they are counted with it) */
static uint32_t cpypool_in_use(const struct cn_dpdk *d)
{
	return d->cpypool && d->cpypool != d->rxpool ? rte_mempool_in_use_count(d->cpypool) : 0;
}

/* net_memif's arguments as its probe reads them (22.11: "role" holds
 * "server"/"master" or else the default client; "zero-copy" holds "yes"
 * or "no", and a server ignores it). */
struct kv_probe {
	const char *word;
	int found;
};

static int kv_has(const char *key, const char *value, void *opaque)
{
	struct kv_probe *pr = opaque;
	(void)key;
	pr->found |= value && strstr(value, pr->word) != NULL;
	return 0;
}

static int kv_word(struct rte_kvargs *kv, const char *key, const char *word)
{
	struct kv_probe pr = {.word = word};
	rte_kvargs_process(kv, key, kv_has, &pr);
	return pr.found;
}

/* 1 when the port (@memif: its driver is net_memif) is a net_memif
 * client in zero-copy mode: its TX hands the ring offsets into the
 * process's DPDK memory to the peer, so a frame must lie in that memory
 * (copy mode), and its devargs are the only place the mode shows (no
 * dev_info capability or flag tells). */
static int memif_zero_copy(const struct rte_eth_dev_info *di, int memif)
{
	if (!memif || !di->device)
		return 0;
	const struct rte_devargs *da = rte_dev_devargs(di->device);
	if (!da || !da->args)
		return 0;
	struct rte_kvargs *kv = rte_kvargs_parse(da->args, NULL);
	if (!kv)
		return 0;
	int zc = kv_word(kv, "zero-copy", "yes") && !kv_word(kv, "role", "server") &&
		 !kv_word(kv, "role", "master");
	rte_kvargs_free(kv);
	return zc;
}

/* ------------------------------------------------------------ the RX pool
 *
 * net_af_xdp (22.11) makes the RX mempool its UMEM: it registers, from
 * the page start of the pool's first memory chunk, populated_size x
 * object size bytes, and gives the kernel each rte_mbuf's address
 * relative to that start (fill ring, and the TX copies it takes from the
 * same pool). That is the whole pool only if the objects lie back to
 * back. rte_pktmbuf_pool_create does not lay them so without hugepages:
 * an object must not cross a 4 KB page there, and an RX object of
 * 2,496 bytes takes a page of its own (8,191 objects span 33.5 MB,
 * the UMEM 20.4 MB). The kernel refuses every descriptor beyond the
 * UMEM (XDP_STATISTICS tx_invalid_descs; fill ring entries likewise)
 * and never completes it: once the stack holds enough received frames
 * that allocations reach the pool's upper part, every ACK the port
 * sends is dropped and a Linux TCP stream into cachenet stalls (the
 * rte_mbufs are lost to the PMD too). For that driver the pool is
 * built without the page rule (AF_XDP gives the kernel virtual
 * addresses within the UMEM, never an IOVA), densely, and the layout
 * is checked. */

static struct rte_mempool *rx_pool_dense(const char *name, uint32_t n, int sock)
{
	struct rte_pktmbuf_pool_private pp = {
		.mbuf_data_room_size = RX_ROOM, .mbuf_priv_size = RX_PRIV};
	struct rte_mempool *mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + pp.mbuf_priv_size + pp.mbuf_data_room_size, 256,
		sizeof(pp), sock, RTE_MEMPOOL_F_NO_IOVA_CONTIG);

	if (!mp)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL) != 0)
		goto fail;
	rte_pktmbuf_pool_init(mp, &pp);
	if (rte_mempool_populate_default(mp) < 0)
		goto fail;
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
fail:
	rte_mempool_free(mp);
	return NULL;
}

struct span {
	uintptr_t base, end;
	size_t obj_size; /* an object with its header and trailer */
	uint32_t outside;
};

static void obj_in_span(struct rte_mempool *mp, void *arg, void *obj, unsigned idx)
{
	struct span *s = arg;
	uintptr_t start = (uintptr_t)obj - mp->header_size;
	(void)idx;
	s->outside += start < s->base || start + s->obj_size > s->end;
}

/* The objects of @mp outside the UMEM net_af_xdp 22.11 registers for it. */
static uint32_t umem_outside(struct rte_mempool *mp)
{
	const struct rte_mempool_memhdr *h = STAILQ_FIRST(&mp->mem_list);
	if (!h)
		return mp->populated_size;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE); /* the PMD's getpagesize() */
	struct span s = {.base = (uintptr_t)h->addr & ~(pg - 1),
			 .obj_size = rte_mempool_calc_obj_size(mp->elt_size, mp->flags, NULL)};
	s.end = (uintptr_t)h->addr + (uintptr_t)mp->populated_size * s.obj_size;
	rte_mempool_obj_iter(mp, obj_in_span, &s);
	return s.outside;
}

struct cn_dpdk *cn_dpdk_open(const struct cn_dpdk_params *p)
{
	struct rte_eth_dev_info di;
	struct rte_eth_conf conf;
	struct cn_dpdk_params q;
	struct cn_dpdk *d = NULL;
	char name[RTE_MEMPOOL_NAMESIZE];
	int rc, err = EINVAL;

	if (!p || cn__params_copy(&q, sizeof(q), p) < 0 || !q.mpool || q.batch > MAX_BATCH ||
	    q.mtu > 1500 || q.tx_copy > 2)
		goto fail;
	q.size = sizeof(q);
	q.rx_desc = q.rx_desc ? q.rx_desc : 1024;
	q.tx_desc = q.tx_desc ? q.tx_desc : 1024;
	q.nb_mbufs = q.nb_mbufs ? q.nb_mbufs : 8191;
	q.batch = q.batch ? q.batch : 32;
	q.mtu = q.mtu ? q.mtu : 1500;
	if (q.nb_mbufs <= q.rx_desc)
		goto fail;
	err = ENODEV;
	if (!rte_eth_dev_is_valid_port(q.port_id))
		goto fail;
	err = ENOMEM;
	if (!(d = calloc(1, sizeof(*d))))
		goto fail;
	d->p = q;
	d->frame_max = d->p.mtu + ETH_HLEN;
	/* A received rte_mbuf names its adapter here, so that the storage's
	 * free callback counts the frames the stack gave back. */
	static const struct rte_mbuf_dynfield owner = {
		.name = "cn_dpdk_owner", .size = sizeof(void *), .align = __alignof__(void *)};
	owner_off = rte_mbuf_dynfield_register(&owner);
	if (owner_off < 0)
		goto fail;
	rc = rte_eth_dev_info_get(d->p.port_id, &di);
	if (rc != 0) {
		err = -rc;
		goto fail;
	}
	d->info.port_id = d->p.port_id;
	d->info.socket_id = rte_eth_dev_socket_id(d->p.port_id);
	const char *drv = di.driver_name ? di.driver_name : "?";
	int memif = strcmp(drv, "net_memif") == 0, af_xdp = strcmp(drv, "net_af_xdp") == 0;
	snprintf(d->info.driver, sizeof(d->info.driver), "%s", drv);
	d->info.iova_va = rte_eal_iova_mode() == RTE_IOVA_VA;
	int sock = d->info.socket_id < 0 ? (int)SOCKET_ID_ANY : d->info.socket_id;

	/* Mempools: names unique per port; RX objects as RX_PRIV and
	 * RX_ROOM say. */
	snprintf(name, sizeof(name), "cn_rx_%u", d->p.port_id);
	if (af_xdp) {
		d->rxpool = rx_pool_dense(name, d->p.nb_mbufs, sock);
		if (d->rxpool && umem_outside(d->rxpool) != 0) {
			rte_mempool_free(d->rxpool);
			d->rxpool = NULL;
		}
	} else {
		d->rxpool = rte_pktmbuf_pool_create(name, d->p.nb_mbufs, 256, RX_PRIV, RX_ROOM,
						    sock);
	}
	snprintf(name, sizeof(name), "cn_tx_%u", d->p.port_id);
	uint32_t ntx = 2u * d->p.tx_desc + 4u * MAX_BATCH * (1 + CN_PKT_PIECES);
	d->txpool = rte_pktmbuf_pool_create(name, ntx, 256, 0, 0, sock);
	snprintf(name, sizeof(name), "cn_txc_%u", d->p.port_id);
	d->ctxpool = rte_mempool_create(name, ntx, sizeof(struct tx_ctx), 256, 0, NULL, NULL, NULL,
					NULL, sock, 0);
	/* Copy mode: asked for (1), a memif zero-copy client (the frame must
	 * lie in DPDK memory), a port that cannot send a chain (net_af_xdp
	 * 22.11 sends only the first segment of one), and, unless chains are
	 * asked for (2), net_memif: its PMD copies every frame into its ring
	 * itself, and one rte_mbuf with a copy costs it fewer instructions
	 * than a chain of external buffers (their attaches, and frees with
	 * the shared info's callback, per segment). */
	d->info.memif_zc = memif_zero_copy(&di, memif);
	d->info.tx_copy = d->p.tx_copy == 1 || d->info.memif_zc ||
			  !(di.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ||
			  (memif && d->p.tx_copy != 2);
	if (d->info.tx_copy && af_xdp) {
		/* net_af_xdp posts an rte_mbuf of its UMEM's pool (the RX
		 * pool) where it lies and copies any other into the UMEM
		 * first: the copy is built there, so the frame is copied
		 * once, not twice. The pool's nb_mbufs cover both. */
		d->cpypool = d->rxpool;
	} else if (d->info.tx_copy) {
		snprintf(name, sizeof(name), "cn_txcp_%u", d->p.port_id);
		d->cpypool = rte_pktmbuf_pool_create(name, ntx, 256, 0,
						     RTE_PKTMBUF_HEADROOM + d->frame_max, sock);
	}
	if (!d->rxpool || !d->txpool || !d->ctxpool || (d->info.tx_copy && !d->cpypool))
		goto fail_pools;

	memset(&conf, 0, sizeof(conf));
	uint64_t rx_want = RTE_ETH_RX_OFFLOAD_IPV4_CKSUM | RTE_ETH_RX_OFFLOAD_TCP_CKSUM |
			   RTE_ETH_RX_OFFLOAD_UDP_CKSUM;
	uint64_t tx_want = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	conf.rxmode.offloads = di.rx_offload_capa & rx_want;
	conf.txmode.offloads = RTE_ETH_TX_OFFLOAD_MULTI_SEGS & di.tx_offload_capa;
	if (!d->p.no_tx_offload && (di.tx_offload_capa & tx_want) == tx_want) {
		conf.txmode.offloads |= tx_want;
		d->info.tx_csum_hw = 1;
	}
	d->info.rx_offloads = conf.rxmode.offloads;
	d->info.tx_offloads = conf.txmode.offloads;
	rc = rte_eth_dev_configure(d->p.port_id, 1, 1, &conf);
	if (rc == 0) {
		uint16_t nrx = d->p.rx_desc, ntxd = d->p.tx_desc;
		rc = rte_eth_dev_adjust_nb_rx_tx_desc(d->p.port_id, &nrx, &ntxd);
		if (rc == 0)
			rc = rte_eth_rx_queue_setup(d->p.port_id, 0, nrx, (unsigned)sock, NULL, d->rxpool);
		if (rc == 0) {
			struct rte_eth_txconf txc = di.default_txconf;
			txc.offloads = conf.txmode.offloads;
			rc = rte_eth_tx_queue_setup(d->p.port_id, 0, ntxd, (unsigned)sock, &txc);
		}
	}
	if (rc == 0)
		rc = rte_eth_dev_start(d->p.port_id);
	if (rc != 0) {
		rte_eth_dev_close(d->p.port_id);
		err = rc < 0 ? -rc : EIO;
		goto fail_pools;
	}
	d->started = 1;
	rte_eth_promiscuous_enable(d->p.port_id); /* best effort: vdevs may refuse */
	return d;
fail_pools:
	pools_free(d);
fail:
	free(d);
	errno = err;
	return NULL;
}

int cn_dpdk_close(struct cn_dpdk *d)
{
	if (!d)
		return 0;
	cn_dpdk_flush(d);
	/* Let the driver free what it still holds (memif and ring copy or
	 * hand over at tx_burst; real NICs free at a later tx_burst or at
	 * stop; memif in zero-copy mode frees what its peer has consumed at
	 * the next tx_burst, an empty one included). */
	rte_eth_tx_done_cleanup(d->p.port_id, 0, 0);
	rte_eth_tx_burst(d->p.port_id, 0, d->txq, 0);
	if (d->started)
		rte_eth_dev_stop(d->p.port_id);
	rte_eth_dev_close(d->p.port_id);
	/* A closed port references none of its buffers; a driver may still
	 * count some RX rte_mbufs as in use (net_af_xdp 22.11 does not give
	 * back those on its fill ring). The RX pool is busy only while the
	 * stack holds frames. */
	uint32_t tx_busy = rte_mempool_in_use_count(d->txpool) +
			   rte_mempool_in_use_count(d->ctxpool) + cpypool_in_use(d);
	if (tx_busy != 0 || d->st.rx_frames != d->st.rx_freed) {
		free(d);
		return -EBUSY;
	}
	pools_free(d);
	free(d);
	return 0;
}

const struct cn_dpdk_info *cn_dpdk_info(const struct cn_dpdk *d)
{
	return &d->info;
}

const struct cn_dpdk_stats *cn_dpdk_stats(const struct cn_dpdk *d)
{
	return &d->st;
}

uint32_t cn_dpdk_mbufs_in_use(const struct cn_dpdk *d)
{
	return rte_mempool_in_use_count(d->rxpool) + rte_mempool_in_use_count(d->txpool) +
	       rte_mempool_in_use_count(d->ctxpool) + cpypool_in_use(d);
}

/* ------------------------------------------------------------ transmit */

static void tx_release(void *addr, void *opaque)
{
	struct tx_ctx *c = opaque;
	(void)addr;
	c->d->st.tx_completed++;
	cn_pkt_free(c->pkt);
	rte_mempool_put(c->d->ctxpool, c);
}

/* The L4 checksum a device would fill: the field holds the pseudo-header
 * sum; the L4 header part is even-length, so pieces combine after it.
 * With @dst, the frame is copied there in the same pass (cn_csum_copy)
 * and the checksum stored in the copy. */
static void l4_csum_sw(struct cn_pkt *p, uint8_t *dst)
{
	uint8_t *l4 = (dst ? dst : p->hdr) + p->l4_off;
	uint32_t at = p->hdr_len - p->l4_off, s;

	if (dst) {
		memcpy(dst, p->hdr, p->l4_off);
		s = cn_csum_copy(l4, p->hdr + p->l4_off, at, 0);
	} else {
		s = cn_csum_partial(l4, at, 0);
	}
	for (uint32_t i = 0; i < p->npieces; i++) {
		const struct cn_sb_piece *pc = &p->piece[i];
		uint32_t ps = dst ? cn_csum_copy(l4 + at, pc->base, pc->len, 0)
				  : cn_csum_partial(pc->base, pc->len, 0);
		s = cn_csum_combine(s, ps, at);
		at += pc->len;
	}
	uint16_t c = (uint16_t)~cn_csum_fold(s);
	if (c == 0 && (p->ol_flags & CN_PKT_TX_UDP))
		c = 0xffff;
	memcpy(l4 + p->csum_off, &c, 2);
}

/* The L4 checksum the stack left to the device: offloaded (flags on the
 * head rte_mbuf @h) when the port offers it, else computed here, into
 * the copy at @dst when there is one. Returns 1 when the frame's bytes
 * were copied to @dst on the way. */
static int tx_csum(struct cn_dpdk *d, struct cn_pkt *p, struct rte_mbuf *h, uint8_t *dst)
{
	if (!(p->ol_flags & CN_PKT_TX_L4_CSUM))
		return 0;
	if (d->info.tx_csum_hw || d->p.trusted_link) {
		if (!d->info.tx_csum_hw) {
			/* a trusted link: the field keeps the pseudo-header
			 * sum, as a checksum-offloading NIC receives it */
			d->st.tx_csum_trusted++;
			return 0;
		}
		h->ol_flags |= RTE_MBUF_F_TX_IPV4 | ((p->ol_flags & CN_PKT_TX_UDP) ?
			       RTE_MBUF_F_TX_UDP_CKSUM : RTE_MBUF_F_TX_TCP_CKSUM);
		h->l2_len = p->l3_off;
		h->l3_len = (uint64_t)(p->l4_off - p->l3_off) & 0x1ff;
		d->st.tx_csum_hw++;
		return 0;
	}
	l4_csum_sw(p, dst);
	d->st.tx_csum_sw++;
	return dst != NULL;
}

static struct rte_mbuf *seg_attach(struct cn_dpdk *d, struct rte_mbuf *m, const uint8_t *addr,
				   uint32_t len, struct tx_ctx *c)
{
	void *va = (void *)(uintptr_t)addr;
	rte_pktmbuf_attach_extbuf(m, va, piece_iova(d, addr), (uint16_t)len, &c->shinfo);
	m->data_off = 0;
	m->data_len = (uint16_t)len;
	return m;
}

/* Copy mode: the whole frame into one rte_mbuf of the copy pool (the
 * checksum, when it is ours to compute, in the same pass); the cn_pkt is
 * released at once. */
static struct rte_mbuf *xmit_copy(struct cn_dpdk *d, struct cn_pkt *p, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->cpypool);

	if (!m)
		return NULL;
	uint8_t *dst = rte_pktmbuf_mtod(m, uint8_t *);
	if (!tx_csum(d, p, m, dst)) {
		memcpy(dst, p->hdr, p->hdr_len);
		uint32_t at = p->hdr_len;
		for (uint32_t i = 0; i < p->npieces; i++) {
			memcpy(dst + at, p->piece[i].base, p->piece[i].len);
			at += p->piece[i].len;
		}
	}
	m->data_len = (uint16_t)len;
	m->pkt_len = len;
	d->st.tx_copied++;
	d->st.tx_completed++;
	cn_pkt_free(p);
	return m;
}

/* Zero-copy mode: a chain of external-buffer rte_mbufs over the header
 * room and each payload piece, one context holding the cn_pkt until the
 * driver frees the last segment. */
static struct rte_mbuf *xmit_ref(struct cn_dpdk *d, struct cn_pkt *p, uint32_t len)
{
	struct rte_mbuf *seg[1 + CN_PKT_PIECES];
	unsigned nseg = 1;
	struct tx_ctx *c;

	for (uint32_t i = 0; i < p->npieces; i++)
		nseg += p->piece[i].len != 0;
	if (rte_mempool_get(d->ctxpool, (void **)&c) != 0)
		return NULL;
	if (rte_pktmbuf_alloc_bulk(d->txpool, seg, nseg) != 0) {
		rte_mempool_put(d->ctxpool, c);
		return NULL;
	}
	tx_csum(d, p, seg[0], NULL);
	c->pkt = p;
	c->d = d;
	c->shinfo.free_cb = tx_release;
	c->shinfo.fcb_opaque = c;
	rte_mbuf_ext_refcnt_set(&c->shinfo, (uint16_t)nseg);

	struct rte_mbuf *head = seg_attach(d, seg[0], p->hdr, p->hdr_len, c);
	unsigned k = 1;
	for (uint32_t i = 0; i < p->npieces; i++) {
		if (p->piece[i].len == 0)
			continue;
		seg_attach(d, seg[k], p->piece[i].base, p->piece[i].len, c);
		seg[k - 1]->next = seg[k];
		k++;
	}
	head->nb_segs = (uint16_t)nseg;
	head->pkt_len = len;
	return head;
}

int cn_dpdk_xmit(struct cn_dpdk *d, struct cn_pkt *p)
{
	uint64_t t0 = cn_tsc_begin();
	uint32_t len = cn_pkt_len(p);
	int rc = 0;

	if (len > d->frame_max) {
		d->st.tx_too_long++;
		rc = -EMSGSIZE;
		goto out;
	}
	struct rte_mbuf *head = d->info.tx_copy ? xmit_copy(d, p, len) : xmit_ref(d, p, len);
	if (!head) {
		d->st.tx_nobufs++;
		rc = -ENOBUFS;
		goto out;
	}
	d->txq[d->txq_n++] = head;
	d->st.tx_bytes += len;
	if (d->txq_n >= d->p.batch) {
		d->st.tx_tsc += cn_tsc_end() - t0;
		cn_dpdk_flush(d);
		return 0;
	}
out:
	d->st.tx_tsc += cn_tsc_end() - t0;
	return rc;
}

unsigned cn_dpdk_flush(struct cn_dpdk *d)
{
	uint64_t t0 = cn_tsc_begin();
	unsigned done = 0;

	for (int tries = 0; done < d->txq_n && tries < 4; tries++) {
		d->st.tx_bursts++;
		done += rte_eth_tx_burst(d->p.port_id, 0, d->txq + done, (uint16_t)(d->txq_n - done));
	}
	d->st.tx_frames += done;
	if (done < d->txq_n) {
		/* The ring stays full: drop, as a NIC's full queue would; the
		 * stack still holds the bytes and retransmits. */
		for (unsigned i = done; i < d->txq_n; i++) {
			d->st.tx_full++;
			d->st.tx_bytes -= d->txq[i]->pkt_len;
			rte_pktmbuf_free(d->txq[i]);
		}
	}
	d->txq_n = 0;
	d->st.tx_tsc += cn_tsc_end() - t0;
	return done;
}

/* ------------------------------------------------------------ receive */

static void rx_release(void *base, void *opaque)
{
	struct rte_mbuf *r = opaque;
	(void)base;
	struct cn_dpdk *d = *RTE_MBUF_DYNFIELD(r, owner_off, struct cn_dpdk **);
	d->st.rx_freed++;
	rte_pktmbuf_free(r);
}

static inline uint16_t rx_csum_flags(uint64_t ol)
{
	uint16_t f = 0;
	uint64_t ip = ol & RTE_MBUF_F_RX_IP_CKSUM_MASK, l4 = ol & RTE_MBUF_F_RX_L4_CKSUM_MASK;

	if (ip == RTE_MBUF_F_RX_IP_CKSUM_BAD || l4 == RTE_MBUF_F_RX_L4_CKSUM_BAD)
		return CN_MBUF_F_RX_CSUM_BAD;
	if (ip == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
		f |= CN_MBUF_F_RX_IP_CSUM_GOOD;
	if (l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
		f |= CN_MBUF_F_RX_L4_CSUM_GOOD;
	return f;
}

unsigned cn_dpdk_rx_burst(struct cn_dpdk *d, struct cn_mbuf **out, unsigned n)
{
	uint64_t t0 = cn_tsc_begin();
	struct rte_mbuf *rm[MAX_BATCH];
	unsigned got = 0;

	if (n > MAX_BATCH)
		n = MAX_BATCH;
	uint16_t k = rte_eth_rx_burst(d->p.port_id, 0, rm, (uint16_t)n);
	if (!cn__rx_burst_counted(k, &d->st.rx_bursts, &d->st.rx_empty, &d->st.rx_tsc, t0))
		return 0;
	for (uint16_t i = 0; i < k; i++) {
		struct rte_mbuf *r = rm[i];
		uint32_t len = r->data_len;
		if (r->nb_segs != 1 || len > d->frame_max ||
		    (r->pool != d->rxpool && rte_pktmbuf_priv_size(r->pool) < RX_PRIV)) {
			/* a chained frame (scatter RX), or one a driver handed
			 * over from a mempool without room for the storage
			 * header (net_ring passes the sender's rte_mbufs) */
			d->st.rx_bad_len++;
			rte_pktmbuf_free(r);
			continue;
		}
		struct cn_mbuf *m = cn_mbuf_get(d->p.mpool);
		if (!m) {
			d->st.rx_nobufs++;
			rte_pktmbuf_free(r);
			continue;
		}
		*RTE_MBUF_DYNFIELD(r, owner_off, struct cn_dpdk **) = d;
		struct cn_mbuf_shared *sh = rte_mbuf_to_priv(r);
		cn_mbuf_ext_init(sh, r->buf_addr, r->buf_len, rx_release, r, false);
		cn_mbuf_attach_ext(m, sh, rte_pktmbuf_mtod(r, uint8_t *), len);
		uint16_t f = rx_csum_flags(r->ol_flags);
		d->st.rx_csum_good += (f & CN_MBUF_F_RX_L4_CSUM_GOOD) != 0;
		d->st.rx_csum_bad += (f & CN_MBUF_F_RX_CSUM_BAD) != 0;
		if (f == 0 && d->p.trusted_link) {
			/* no status from the device, and the link is memory
			 * shared with a peer that left the checksum partial */
			f = CN_MBUF_F_RX_IP_CSUM_GOOD | CN_MBUF_F_RX_L4_CSUM_GOOD;
			d->st.rx_csum_trusted++;
		}
		m->flags |= f;
		d->st.rx_frames++;
		d->st.rx_bytes += len;
		out[got++] = m;
	}
	d->st.rx_tsc += cn_tsc_end() - t0;
	return got;
}

unsigned cn_dpdk_poll(struct cn_dpdk *d, struct cn_net *net, uint64_t now)
{
	struct cn_mbuf *m[MAX_BATCH];
	unsigned n = cn_dpdk_rx_burst(d, m, d->p.batch);

	cn_net_input_burst(net, m, n, now);
	cn_dpdk_flush(d);
	return n;
}
