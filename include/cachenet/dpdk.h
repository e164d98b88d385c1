/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file dpdk.h
 * A cachenet stack as a DPDK application: one queue of any ethdev (a PCI
 * NIC, or a virtual device: net_memif, net_af_xdp, net_tap, net_ring, ...)
 * as a cachenet NIC. A library of its own, libcachenet-dpdk
 * (pkg-config cachenet-dpdk), built when libdpdk is found (meson option
 * `dpdk`); libcachenet itself never links DPDK.
 *
 * The application owns the EAL: it calls rte_eal_init (which probes the
 * ports: PCI devices, --vdev arguments) before cn_dpdk_open and
 * rte_eal_cleanup after cn_dpdk_close. The adapter configures, starts,
 * stops and closes the port it is given.
 *
 *  - Receive, no payload copy. The adapter creates the port's RX mempool
 *    (rte_pktmbuf_pool_create) with a 64-byte private area per rte_mbuf
 *    that holds a struct cn_mbuf_shared. A received rte_mbuf becomes a
 *    small cachenet mbuf (from the caller's pool) attached as an external
 *    buffer to the rte_mbuf's data (cn_mbuf_attach_ext); when the stack
 *    frees the last reference, the free callback returns the rte_mbuf to
 *    its mempool (rte_pktmbuf_free). The ethdev's per-frame checksum flags
 *    (RTE_MBUF_F_RX_IP_CKSUM_GOOD/BAD, RTE_MBUF_F_RX_L4_CKSUM_GOOD/BAD)
 *    become the frame's CN_MBUF_F_RX_* status (mbuf_core.h); UNKNOWN and
 *    NONE leave it unknown, so the stack verifies.
 *  - Transmit, no payload copy (when the port sends chains: ports
 *    without RTE_ETH_TX_OFFLOAD_MULTI_SEGS, as net_af_xdp, a net_memif
 *    client with zero-copy=yes in its devargs (its peer reads the frame
 *    from this process's DPDK memory; dev_info does not tell the mode,
 *    the devargs do), net_memif by default (cn_dpdk_params.tx_copy) and
 *    cn_dpdk_params.tx_copy = 1 get copy mode: each
 *    frame copied into one rte_mbuf of the adapter's, its software
 *    checksum computed in the same pass, the cn_pkt released at once;
 *    for net_af_xdp that rte_mbuf comes from the RX pool, the PMD's
 *    UMEM, which the PMD posts where it lies instead of copying it
 *    again, so nb_mbufs covers frames in flight both ways).
 *    A struct cn_pkt becomes a chain of rte_mbufs, each with an external buffer (rte_pktmbuf_attach_extbuf):
 *    the first over the headers in the cn_pkt's own header room, one per
 *    payload piece over the sockbuf bytes where they lie. One
 *    rte_mbuf_ext_shared_info per packet, counting the segments, from a
 *    small mempool of the adapter's; when the driver frees the last
 *    segment its callback releases the cn_pkt (cn_pkt_free), and with it
 *    the stack's references. The I/O address of a piece is its virtual
 *    address when the EAL runs with IOVA as VA; in IOVA-as-PA mode it is
 *    found through the cluster pools made by cn_dpdk_cluster_pool (DPDK
 *    memzones, O(1)) or else rte_mem_virt2iova (slow, counted).
 *  - Checksums. An L4 checksum the stack leaves to the device
 *    (CN_PKT_TX_L4_CSUM) is offloaded (RTE_MBUF_F_TX_TCP_CKSUM /
 *    _UDP_CKSUM with RTE_MBUF_F_TX_IPV4, the pseudo-header sum already in
 *    the field as DPDK expects) when the port offers
 *    RTE_ETH_TX_OFFLOAD_TCP_CKSUM / _UDP_CKSUM, and computed in software
 *    into the header room otherwise (one read pass over the payload),
 *    or, on a link declared trusted (cn_dpdk_params.trusted_link), left
 *    partial and not verified on receipt.
 *  - Batching. cn_dpdk_xmit queues frames and hands them to
 *    rte_eth_tx_burst `batch` at a time (or at cn_dpdk_flush); RX reads
 *    rte_eth_rx_burst in bursts of up to `batch`.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: one struct cn_dpdk (one port queue) belongs to one thread
 * at a time, an lcore of the EAL (the mempool caches are per lcore).
 */
#ifndef CACHENET_DPDK_H
#define CACHENET_DPDK_H

#include "cachenet/common.h"

#include <stdint.h>

#include "cachenet/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A DPDK backend's parameters (common.h: size and zero defaults). */
struct cn_dpdk_params {
	uint32_t size;              /**< sizeof(struct cn_dpdk_params), or 0 (common.h) */
	uint16_t port_id;           /**< an ethdev the EAL probed */
	uint16_t rx_desc;           /**< RX descriptors; 0 = 1024 */
	uint16_t tx_desc;           /**< TX descriptors; 0 = 1024 */
	uint32_t nb_mbufs;          /**< RX mempool's rte_mbufs (descriptors plus
					 frames the stack holds; net_af_xdp:
					 also copied TX frames in flight);
					 0 = 8191; > rx_desc */
	uint32_t batch;             /**< frames per rx_burst / tx_burst; 0 = 32;
					 at most 256 */
	uint32_t mtu;               /**< IPv4 MTU (frames up to mtu + 14); 0 = 1500;
					 at most 1500 (a frame fits one rte_mbuf) */
	struct cn_mbuf_pool *mpool; /**< small cachenet mbufs, one per received
					 frame held; required */
	/** 1: never offload the TX checksum (software always), for tests
	 *  and comparisons. */
	uint32_t no_tx_offload;
	/** Transmit mode. 0: the adapter's choice: copy mode (see above)
	 *  for ports without RTE_ETH_TX_OFFLOAD_MULTI_SEGS, net_memif
	 *  clients with zero-copy=yes (both need it) and net_memif (its
	 *  PMD copies every frame into its ring itself; one copied
	 *  rte_mbuf costs it fewer instructions than a chain), chains of
	 *  external buffers elsewhere. 1: copy mode always (comparisons,
	 *  drivers that must find the bytes in DPDK memory). 2: chains
	 *  wherever the port can send them (comparisons). */
	uint32_t tx_copy;
	/** 1: a trusted link, for a port that is memory shared with a peer
	 *  adapter that sets it too (net_memif, net_ring between two
	 *  cachenet stacks), where a frame changes only through a bug.
	 *  With it, when the port offers no checksum offload: a transmitted
	 *  frame's L4 checksum is left partial (the pseudo-header sum, as a
	 *  checksum-offloading NIC receives it; tx_csum_trusted), and a
	 *  received frame the device gave no checksum status is marked
	 *  verified (IP and L4; rx_csum_trusted), so neither side reads the
	 *  payload for it: what Linux does across a veth pair. A peer
	 *  without it drops every such TCP/UDP frame (bad checksum): both
	 *  ends must set it. Default 0: every checksum computed and
	 *  verified. */
	uint32_t trusted_link;
};

/** What cn_dpdk_open found and enabled. */
struct cn_dpdk_info {
	uint16_t port_id;           /**< the ethdev */
	int socket_id;              /**< its NUMA socket */
	char driver[32];            /**< the ethdev's driver name */
	uint64_t rx_offloads;       /**< RTE_ETH_RX_OFFLOAD_* enabled */
	uint64_t tx_offloads;       /**< RTE_ETH_TX_OFFLOAD_* enabled */
	int tx_csum_hw;             /**< 1: TCP and UDP checksums offloaded */
	int iova_va;                /**< 1: the EAL runs with IOVA as VA */
	int tx_copy;                /**< 1: copy mode (cn_dpdk_params.tx_copy
					 says when) */
	int memif_zc;               /**< 1: a net_memif client with zero-copy=yes
					 (read from the port's devargs) */
};

/** Counters, all monotonic. */
struct cn_dpdk_stats {
	uint64_t rx_frames;    /**< frames handed to the caller (or the stack) */
	uint64_t rx_bytes;     /**< bytes of the frames received */
	uint64_t rx_bursts;    /**< rx_burst calls that found frames */
	uint64_t rx_empty;     /**< rx_burst calls that found none */
	uint64_t rx_nobufs;    /**< frames dropped: no small cachenet mbuf */
	uint64_t rx_bad_len;   /**< frames dropped: chained or longer than mtu + 14 */
	uint64_t rx_csum_good; /**< frames whose L4 checksum the device verified */
	uint64_t rx_csum_bad;  /**< frames the device found a bad checksum in */
	uint64_t tx_frames;    /**< frames the driver accepted */
	uint64_t tx_bytes;     /**< bytes of the frames sent */
	uint64_t tx_bursts;    /**< rte_eth_tx_burst calls */
	uint64_t tx_full;      /**< frames the driver refused (ring full), freed */
	uint64_t tx_nobufs;    /**< frames refused: no rte_mbuf or context (-ENOBUFS) */
	uint64_t tx_too_long;  /**< frames refused: longer than mtu + 14 (-EMSGSIZE) */
	uint64_t tx_csum_hw;   /**< frames with the L4 checksum offloaded */
	uint64_t tx_csum_sw;   /**< frames whose L4 checksum was computed here */
	uint64_t tx_iova_slow; /**< pieces translated by rte_mem_virt2iova */
	uint64_t tx_completed; /**< cn_pkts released: by the driver's frees
				    (chains), once copied (copy mode) */
	uint64_t rx_tsc;       /**< TSC ticks in cn_dpdk_rx_burst */
	uint64_t tx_tsc;       /**< TSC ticks in cn_dpdk_xmit and cn_dpdk_flush */
	uint64_t tx_copied;    /**< frames sent in copy mode */
	uint64_t rx_freed;     /**< received frames the stack has freed
				    (rx_frames - rx_freed are held) */
	uint64_t tx_csum_trusted; /**< frames sent with the L4 checksum left
				       partial (trusted_link) */
	uint64_t rx_csum_trusted; /**< frames taken as verified without a
				       device status (trusted_link) */
};

struct cn_dpdk;

/**
 * Configure port @p p->port_id with one RX and one TX queue, the checksum
 * offloads it offers, its RX mempool and the TX mempools; start it and
 * set it promiscuous.
 * @return it, or NULL with errno:
 *  - EINVAL: p NULL, p->size not accepted (common.h), no mpool, batch > 256,
 *    mtu > 1500, nb_mbufs <= rx_desc, tx_copy > 2;
 *  - ENODEV: no such port;
 *  - ENOMEM: a mempool could not be created, or (net_af_xdp) the RX
 *    pool's objects would not all lie in the UMEM that driver
 *    registers over it;
 *  - another errno from rte_eth_dev_configure / _queue_setup / _start.
 * Cost: creates nb_mbufs + tx mempools (touches their memory); not for
 * the fast path. Call from an EAL thread.
 */
struct cn_dpdk *cn_dpdk_open(const struct cn_dpdk_params *p);

/**
 * Flush what is queued, stop and close the port, free the mempools.
 * @return 0; -EBUSY when rte_mbufs are still held (received frames the
 *         stack keeps, or transmitted ones the driver has not freed):
 *         the port is closed but the mempools are kept (leaked, never
 *         freed under live references). RX rte_mbufs a driver still
 *         counts as in use after its port closed (net_af_xdp's fill
 *         ring) are not references: they do not make it -EBUSY.
 *         NULL accepted.
 */
int cn_dpdk_close(struct cn_dpdk *d);

/** What open found and enabled. */
const struct cn_dpdk_info *cn_dpdk_info(const struct cn_dpdk *d) CN_NONNULL_ALL;

/**
 * Transmit @p p: a chain of external-buffer rte_mbufs over its header room
 * and payload pieces (no payload copy), the checksum offloaded or
 * computed; queued, and handed to the driver when `batch` frames wait.
 * The driver's free of the last segment releases p (cn_pkt_free). In
 * copy mode (cn_dpdk_info.tx_copy) one rte_mbuf with a copy of the
 * frame, p released before the return.
 * @return 0 (p is the adapter's); -EMSGSIZE (longer than mtu + 14) or
 *         -ENOBUFS (no rte_mbuf or context), p left to the caller.
 * Cost: 1 + npieces rte_mbuf gets and attaches, one context get; the
 *       software checksum reads the payload once. Copy mode: one
 *       rte_mbuf get and one pass over the frame (copy, or copy+checksum).
 */
int cn_dpdk_xmit(struct cn_dpdk *d, struct cn_pkt *p) CN_NONNULL_ALL;

/** cn_dpdk_xmit as a stack's transmit hook (cn_net_params.xmit with the
 *  adapter as xmit_arg). */
CN_NET_XMIT_HOOK(cn_dpdk_xmit_hook, struct cn_dpdk, cn_dpdk_xmit)

/**
 * Hand the queued frames to the driver (rte_eth_tx_burst); frames the
 * driver refuses after a few tries are dropped (freed, tx_full: the stack
 * retransmits). Call when idle and before reading counters.
 * @return frames the driver accepted.
 */
unsigned cn_dpdk_flush(struct cn_dpdk *d) CN_NONNULL_ALL;

/**
 * Receive up to @p n frames (one rte_eth_rx_burst): each a small cachenet
 * mbuf over the rte_mbuf's data (data = the Ethernet header, len ==
 * pkt_len), with the device's checksum status in its flags; ownership
 * passes to the caller. Chained or overlong frames are dropped
 * (rx_bad_len), as are frames when the small pool is empty (rx_nobufs).
 * @return frames returned. Cost: one small-mbuf get per frame, no copy.
 */
unsigned cn_dpdk_rx_burst(struct cn_dpdk *d, struct cn_mbuf **m, unsigned n) CN_NONNULL(1);

/**
 * cn_dpdk_rx_burst of up to `batch` frames, handed to the stack as one
 * burst (cn_net_input_burst: cn_net_input() of each with @p now, then one
 * cumulative ACK per connection that received in-order data), then
 * cn_dpdk_flush.
 * @return frames handed to the stack; `batch` means more may wait: a loop
 * calls it again until it returns less than `batch` before it sleeps or
 * runs its timers (one call per loop leaves frames in the device's ring,
 * where they are dropped when it fills).
 */
unsigned cn_dpdk_poll(struct cn_dpdk *d, struct cn_net *net, uint64_t now) CN_NONNULL_ALL;

/** Counters (exact on the adapter's thread). */
const struct cn_dpdk_stats *cn_dpdk_stats(const struct cn_dpdk *d) CN_NONNULL_ALL;

/** rte_mbufs of the adapter's mempools (RX and TX) in use now: received
 *  frames held, and transmitted ones the driver has not freed. */
uint32_t cn_dpdk_mbufs_in_use(const struct cn_dpdk *d) CN_NONNULL_ALL;

/**
 * A cachenet cluster pool (mbuf.h) over a DPDK memzone, for memory a
 * device can reach by DMA in either IOVA mode: the zone is reserved
 * IOVA-contiguous, the pool's ext_iova is the zone's I/O address, and
 * cn_dpdk_xmit translates pieces inside it with cn_mbuf_pool_iova. Give
 * it to a stack as cn_net_params.cpool. Destroy it with
 * cn_dpdk_cluster_pool_free after the stacks that use it.
 * @return the pool, or NULL with errno EINVAL (name NULL, count 0, data_size 0),
 *         ENOMEM (no memzone of that size) or EEXIST (name taken).
 */
struct cn_mbuf_pool *cn_dpdk_cluster_pool(const char *name, uint32_t count, uint32_t data_size,
					   uint32_t cache_size);

/** Destroy a pool made by cn_dpdk_cluster_pool and free its memzone.
 *  @return as cn_mbuf_pool_destroy (the zone is kept on -EBUSY). NULL is
 *  accepted. */
int cn_dpdk_cluster_pool_free(struct cn_mbuf_pool *pool);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_DPDK_H */
