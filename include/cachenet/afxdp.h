/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file afxdp.h
 * A Linux interface's queues as a cachenet NIC through AF_XDP sockets:
 * frames move between the driver and user space through shared rings and
 * one shared packet memory (the UMEM), without a system call per frame.
 * Built when libxdp and libbpf are found (meson option `afxdp`); the
 * library then exports these functions and installs this header.
 *
 * One struct cn_afxdp is one interface: `queues` sockets, one per device
 * queue (queue_id .. queue_id + queues - 1), all on one UMEM. Each
 * socket is a struct cn_afxdp_queue with its own four rings (RX, TX, fill,
 * completion) and is driven by one thread, like a stack: one stack per
 * queue, one queue per core. The UMEM's chunks are the clusters of a
 * cluster pool over that memory (mbuf.h, cn_mbuf_pool_params.ext_mem):
 *  - receive: the backend posts free clusters to the fill ring, bare
 *    (no mbuf yet); the kernel writes a frame into one and names it on
 *    the RX ring; cn_afxdp_rx_burst gives that chunk a small mbuf from
 *    the caller's pool, taken then (the one freed last, still in cache),
 *    its data pointing at the frame in the UMEM: no copy in user space.
 *    The stack keeps it by reference or frees it, which returns the
 *    chunk to the pool for the next refill.
 *  - transmit, in place: a frame whose bytes already lie in the UMEM
 *    (built in a cluster of cn_afxdp_pool, or referencing a received
 *    frame's chunk) is posted from there: each TX descriptor names the
 *    bytes inside one chunk, and the backend holds the frame until the
 *    completion ring returns that chunk. cn_afxdp_xmit_mbuf posts a
 *    caller's mbuf this way (tx_zero_copy); with multi-buffer TX (below)
 *    a chain too, one descriptor per mbuf. cn_afxdp_xmit posts a stack's
 *    packet with multi-buffer TX as its headers (copied from the
 *    packet's header room into a chunk of their own) followed by its
 *    payload pieces where they lie (tx_payload_in_place), and completes
 *    the packet (cn_pkt_free) at the TX completion.
 *  - transmit, copied: any other frame (payload outside the UMEM, a piece
 *    crossing a chunk's end, a chunk already named by a TX descriptor in
 *    flight, more than 8 pieces, several pieces without multi-buffer
 *    TX, impairment) is
 *    gathered into a free chunk (filling an offloaded L4 checksum), put
 *    on the TX ring and released at once (tx_copied); the chunk returns
 *    to the pool at its completion.
 *  - multi-buffer: the sockets are bound with XDP_USE_SG (one frame in
 *    several descriptors, XDP_PKT_CONTD on all but the last) when the
 *    kernel accepts it (Linux 6.6 or later; copy mode on any driver,
 *    zero-copy on drivers that take more than one segment), reported in
 *    cn_afxdp_info.multi_buffer; frames take several TX descriptors in
 *    zero-copy mode, or in copy mode when cn_afxdp_params.tx_multi asks.
 *    In copy mode the kernel copies every descriptor into its skb anyway
 *    (the linear part, then a page per further piece): in place saves
 *    the user-space copy, not the kernel's.
 *  - need-wakeup: the sockets are bound with XDP_USE_NEED_WAKEUP; the
 *    backend makes a system call only when the kernel asks (TX: sendto
 *    once per burst, cn_afxdp_flush, and in copy mode once per 32 frames
 *    the burst holds; RX: recvfrom when the fill ring's flag is set).
 *  - modes: zero-copy (the driver DMAs into the UMEM) when the driver
 *    accepts it, else copy (the kernel copies each frame into the UMEM);
 *    the XDP program runs in the driver (native) when it can, else in the
 *    generic skb path. cn_afxdp_info() reports what was obtained.
 *  - RX checksum status: AF_XDP passes none (no hint in the descriptor),
 *    so frames arrive without CN_MBUF_F_RX_* bits ("unknown") and the
 *    stack verifies them.
 *
 * The XDP program. The backend loads a five-instruction program named
 * "cn_xsk" that redirects every frame of a queue with a socket into that
 * socket (XSKMAP keyed by queue index) and passes frames of other queues
 * to the kernel, attaches it to the interface, and detaches it at
 * cn_afxdp_close. A process that dies without closing leaves the program
 * attached (there is no bpffs to tie it to a link object): the next
 * cn_afxdp_open on that interface finds a program named "cn_xsk" and
 * detaches it first (counted in cn_afxdp_info.stale_detached); any other
 * program on the interface is left alone and the open fails with EBUSY.
 * By hand: `ip link set dev IF xdp off` (or `xdpgeneric off`).
 * The program cannot steer flows between queues: the kernel delivers to
 * an AF_XDP socket only frames of the queue it is bound to (a redirect
 * to another queue's socket fails with EINVAL and the frame is dropped),
 * so the device picks a flow's queue (RSS; on a veth, the queue the
 * sender transmitted on).
 * So one process per interface: a second cn_afxdp_open of an interface in
 * use would detach the first one's program.
 *
 * Running it: as root (CAP_NET_ADMIN, CAP_BPF / CAP_SYS_ADMIN, and
 * RLIMIT_MEMLOCK high enough for the UMEM on old kernels). A veth pair
 * across two network namespaces works in both modes (tests/interop:
 * Linux's TCP on one end, cachenet on the other); native XDP on a veth
 * needs the peer's MTU at most about 3500 bytes, and veth refuses
 * zero-copy (EOPNOTSUPP), so veth runs in copy mode. A Linux sender whose
 * interface offloads checksums (veth does by default) leaves partial
 * checksums in the frames AF_XDP delivers: turn its TX checksum offload
 * off (`ethtool -K IF tx off`) so the stack sees complete frames.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: cn_afxdp_open/close from one thread with no queue in
 * use; each struct cn_afxdp_queue belongs to one thread at a time; the
 * mbuf pools are shared safely (their per-thread caches).
 */
#ifndef CACHENET_AFXDP_H
#define CACHENET_AFXDP_H

#include "cachenet/common.h"

#include <stdint.h>

#include "cachenet/impair.h"
#include "cachenet/net.h"
#include "cachenet/pcap.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cn_pcap;

/** Copy or zero-copy (the socket's bind mode). */
enum cn_afxdp_copy {
	CN_AFXDP_COPY_AUTO = 0, /**< zero-copy if the driver accepts it, else copy */
	CN_AFXDP_COPY_ALWAYS,   /**< copy mode */
	CN_AFXDP_ZEROCOPY,      /**< zero-copy or fail (EOPNOTSUPP) */
};

/** Where the XDP program runs. */
enum cn_afxdp_attach {
	CN_AFXDP_ATTACH_AUTO = 0, /**< native if the driver supports XDP, else generic */
	CN_AFXDP_ATTACH_NATIVE,   /**< in the driver, or fail */
	CN_AFXDP_ATTACH_GENERIC,  /**< the generic (skb) path */
};

/** An AF_XDP backend's parameters (common.h: size and zero defaults). */
struct cn_afxdp_params {
	uint32_t size;               /**< sizeof(struct cn_afxdp_params), or 0 (common.h) */
	const char *ifname;          /**< interface, required (at most 15 characters) */
	uint32_t queue_id;           /**< first device queue */
	uint32_t queues;             /**< sockets (consecutive queues); 0 = 1; at most 64 */
	uint32_t frames;             /**< UMEM chunks per queue (2048 bytes each);
					  0 = 4 * ring_size; >= 2 * ring_size */
	uint32_t ring_size;          /**< RX, TX and completion ring entries, a
					  power of two in 64..16384; 0 = 2048. The
					  fill ring has twice as many, and at most
					  ring_size chunks are posted to it. */
	uint32_t batch;              /**< frames per cn_afxdp_poll, and TX frames
					  queued before the backend wakes the kernel
					  by itself; 0 = 64; at most 256 */
	uint32_t mtu;                /**< largest IP packet accepted or sent
					  (frames up to mtu + 14 bytes); 0 = 1500;
					  at most 1500 (a frame fits one chunk) */
	enum cn_afxdp_copy copy;     /**< copy or zero-copy mode (enum cn_afxdp_copy) */
	enum cn_afxdp_attach attach; /**< native or generic XDP (enum cn_afxdp_attach) */
	struct cn_mbuf_pool *mpool;  /**< small mbufs (CN_MBUF_POOL_SMALL), one
					  per frame received and not yet freed or
					  queued for TX (a posted chunk takes its
					  mbuf only when a frame arrives in it);
					  required */
	struct cn_pcap *pcap;        /**< capture both directions, or NULL; the
					  capture is not thread safe: queues > 1
					  with a capture must run on one thread */
	/** Optional impairment inside the backend (NULL = off), as the TAP
	 *  backend's (tap.h): loss, reorder, duplicate, corrupt, each queue
	 *  and direction with its own generator (TX starting from rng_start + queue,
	 *  RX from (rng_start + queue) ^ 0x5a5a...). Impaired frames take one more
	 *  copy each way (through a scratch buffer). For kernels without
	 *  sch_netem. */
	const struct cn_link_params *impair;
	/** Post a frame in several TX descriptors (multi-buffer: a chain,
	 *  or a stack's headers and payload in place): 0 = in zero-copy mode
	 *  only, where it saves every copy (in copy mode the kernel copies
	 *  each further descriptor into a page of its own, slower than the
	 *  one gather: docs/performance.md, "AF_XDP transmit"); 1 = whenever
	 *  the sockets have multi-buffer. */
	uint32_t tx_multi;
};

/** What cn_afxdp_open obtained. */
struct cn_afxdp_info {
	int ifindex;            /**< the interface's index */
	uint32_t queues;        /**< sockets opened (one per queue) */
	int zerocopy;          /**< 1 zero-copy, 0 copy */
	int native;            /**< 1 the program runs in the driver, 0 generic */
	uint32_t prog_id;      /**< the attached program's kernel id */
	uint32_t stale_detached; /**< "cn_xsk" programs a dead process left, removed */
	uint32_t frames;       /**< UMEM chunks in all */
	uint32_t chunk_size;   /**< 2048 */
	uint32_t ring_size;     /**< RX, TX and completion ring entries */
	int multi_buffer;       /**< 1 the sockets take multi-descriptor frames (XDP_USE_SG) */
};

/**
 * Counters of one queue, all monotonic. Invariants: tx_frames ==
 * tx_zero_copy + tx_payload_in_place + tx_copied; when the queue is quiet
 * (after cn_afxdp_flush with every completion reaped), without
 * impairment: tx_frames == tx_completed, and the chunks the queue holds
 * (cn_afxdp_held) are rx_posted - rx_frames - rx_trunc - rx_nombuf
 * (posted, not yet received).
 */
struct cn_afxdp_stats {
	uint64_t rx_frames;     /**< frames handed to the caller (or the stack) */
	uint64_t rx_bytes;      /**< bytes of the frames received */
	uint64_t rx_bursts;     /**< RX ring reads that found frames */
	uint64_t rx_empty;      /**< RX ring reads that found none */
	uint64_t rx_trunc;      /**< descriptors dropped: a frame longer than
				     mtu + 14, not inside a chunk (a bad
				     descriptor), or a piece of a multi-buffer
				     frame (one per piece) */
	uint64_t rx_posted;     /**< chunks posted to the fill ring */
	uint64_t rx_nobufs;     /**< refills cut short: chunk pool empty; frames
				     lost in the RX impairment: no mbuf */
	uint64_t rx_wakeups;    /**< recvfrom calls the fill ring asked for */
	uint64_t tx_frames;     /**< frames put on the TX ring */
	uint64_t tx_bytes;      /**< bytes of the frames sent */
	uint64_t tx_kicks;      /**< sendto calls (wake-ups of the kernel's TX) */
	uint64_t tx_kick_errors;/**< sendto failures other than EAGAIN/EBUSY/ENOBUFS */
	uint64_t tx_full;       /**< frames refused: TX ring full (-ENOBUFS) */
	uint64_t tx_nobufs;     /**< frames refused: no free chunk or mbuf (-ENOBUFS) */
	uint64_t tx_too_long;   /**< frames refused: longer than mtu + 14 (-EMSGSIZE) */
	uint64_t tx_completed;  /**< frames the kernel gave back (all their chunks) */
	uint64_t tx_zero_copy;  /**< frames posted where they lay, no byte copied */
	uint64_t tx_payload_in_place; /**< frames posted as copied headers and
				     payload pieces where they lay (multi-buffer) */
	uint64_t tx_copied;     /**< frames gathered into a chunk */
	uint64_t polls;         /**< cn_afxdp_poll calls */
	uint64_t rx_tsc;        /**< TSC ticks in cn_afxdp_rx_burst (rings, refill,
				     wake-ups): the device's share of RX */
	uint64_t tx_tsc;        /**< TSC ticks in cn_afxdp_xmit, cn_afxdp_flush
				     (gather, rings, sendto) */
	/* the kernel's counters for this socket (XDP_STATISTICS), read by
	 * cn_afxdp_stats: */
	uint64_t k_rx_dropped;  /**< frames the kernel dropped (e.g. no room) */
	uint64_t k_rx_invalid;  /**< invalid RX descriptors */
	uint64_t k_tx_invalid;  /**< invalid TX descriptors */
	uint64_t k_rx_ring_full;/**< frames dropped: RX ring full */
	uint64_t k_fill_empty;  /**< frames dropped: fill ring empty */
	struct cn_link_stats impair_tx, impair_rx; /**< impairment, per direction */
	uint64_t rx_nombuf;     /**< frames received and dropped: no small mbuf
				     left in mpool to carry them */
};

struct cn_afxdp;
struct cn_afxdp_queue;

/**
 * Open @p p->queues AF_XDP sockets on @p p->ifname, load and attach the
 * XDP program (after removing a stale one, see above), post the fill
 * rings.
 * @return it, or NULL with errno:
 *  - EINVAL: p NULL, p->size not accepted (common.h), no ifname or mpool,
 *    mpool not a small-mbuf pool, ring_size not a power of two in range,
 *    frames < 2 * ring_size, queues or batch out of range, mtu > 1500,
 *    impairment rates outside [0, 1];
 *  - ENAMETOOLONG: ifname longer than 15 characters;
 *  - ENODEV: no such interface (in this network namespace);
 *  - EBUSY: another XDP program (not "cn_xsk") is attached to it, or a
 *    queue is bound to another AF_XDP socket (the kernel frees a closed
 *    socket's queue from a work item a few milliseconds later: open
 *    retries for a second before it gives up);
 *  - EOPNOTSUPP: CN_AFXDP_ZEROCOPY or CN_AFXDP_ATTACH_NATIVE refused by
 *    the driver;
 *  - EPERM: not privileged enough (BPF, raw sockets, memory locking);
 *  - ENOMEM: the UMEM, the rings, the pool or the small mbufs for the
 *    fill rings;
 *  - another errno from socket/bind/bpf.
 * Cost: mmaps queues * frames * 2048 bytes and touches all of it; a few
 * dozen system calls; with impairment 37 KB more per queue.
 */
struct cn_afxdp *cn_afxdp_open(const struct cn_afxdp_params *p);

/**
 * Close: delete the sockets, detach and unload the program, return the
 * frames the backend holds, free the UMEM. A stack's packets still held
 * for TX completion (multi-buffer TX, cn_afxdp_xmit) are released here
 * (cn_pkt_free), so their stack must still exist: before destroying a
 * stack, cn_afxdp_flush its queue until tx_completed == tx_frames.
 * @return 0; -EBUSY when received frames are still held elsewhere (a
 *         stack's receive queues: destroy the stacks first): the sockets
 *         and the program are gone, but the UMEM and its pool are kept
 *         (leaked, not freed under live references). NULL accepted.
 */
int cn_afxdp_close(struct cn_afxdp *x);

/** What open obtained (mode, program, sizes). */
const struct cn_afxdp_info *cn_afxdp_info(const struct cn_afxdp *x) CN_NONNULL_ALL;

/** Queue @p i (0 .. queues - 1), or NULL when out of range. */
struct cn_afxdp_queue *cn_afxdp_queue(struct cn_afxdp *x, uint32_t i) CN_NONNULL_ALL;

/** The cluster pool over the UMEM (its stats show the chunks in use). */
struct cn_mbuf_pool *cn_afxdp_pool(const struct cn_afxdp *x) CN_NONNULL_ALL;

/** Chunks the backend holds now over all queues: posted to fill rings
 *  (bare clusters, no mbuf yet), named by TX descriptors until completion,
 *  waiting in the impairment. When no TX is in flight, the pool's in_use
 *  minus this is what callers hold.
 *  Cost: O(queues); read while the queues are quiet. */
uint32_t cn_afxdp_held(const struct cn_afxdp *x) CN_NONNULL_ALL;

/** The queue's socket descriptor (for poll/epoll). */
int cn_afxdp_fd(const struct cn_afxdp_queue *q) CN_NONNULL_ALL;

/**
 * Transmit @p p on queue @p q (cn_afxdp_xmit_hook is the same as a
 * stack's transmit hook, cn_net_xmit_fn). With multi-buffer TX, when every
 * payload piece lies inside one UMEM chunk (up to 7 pieces): the headers
 * are copied into a free chunk and the pieces posted where they lie; p
 * is released (cn_pkt_free) when the completion ring returns the frame,
 * by a later cn_afxdp_xmit, cn_afxdp_flush or cn_afxdp_close (so flush
 * before destroying the stack). Otherwise: gathered into a free chunk,
 * put on the TX ring, cn_pkt_free(p) before returning. The kernel is
 * woken (sendto) once `batch` frames are queued, or by cn_afxdp_flush /
 * cn_afxdp_poll.
 * @return 0 (p taken); or, p left to the caller:
 *  - -EMSGSIZE: longer than mtu + 14 (tx_too_long);
 *  - -ENOBUFS: TX ring full or no free chunk/mbuf even after waking the
 *    kernel and reaping completions (tx_full, tx_nobufs).
 * pcap: every frame accepted. Cost: copied, one pass over the frame
 * (fused with the checksum when offloaded); in place, the headers' copy
 * and, when offloaded, a read pass over the payload; a system call per
 * `batch` frames.
 */
int cn_afxdp_xmit(struct cn_afxdp_queue *q, struct cn_pkt *p) CN_NONNULL_ALL;

/**
 * Transmit the Ethernet frame @p m (a packet: one mbuf, or a chain whose
 * head carries pkt_len), its checksums complete. When each mbuf's bytes
 * lie inside one UMEM chunk (m built in a cluster of cn_afxdp_pool(), or
 * a received frame), no chunk of it is already named by a TX descriptor
 * in flight, and it is one mbuf or multi-buffer TX is on (up to 8
 * mbufs): posted where it lies, one descriptor per mbuf, and held
 * until the completion ring returns it (then cn_mbuf_free_chain). Else
 * gathered into a free chunk and freed before returning. The bytes must
 * not change until then; a chunk's bytes are sent from one queue at a
 * time.
 * @return 0 (m taken); or, m left to the caller: -EMSGSIZE (pkt_len >
 *         mtu + 14), -ENOBUFS (TX ring full, or no free chunk to copy
 *         into, after waking the kernel and reaping).
 * pcap: every frame accepted (a frame posted in place is copied for it).
 * Cost: in place, O(mbufs) and no byte touched; copied, one pass.
 */
int cn_afxdp_xmit_mbuf(struct cn_afxdp_queue *q, struct cn_mbuf *m) CN_NONNULL_ALL;

/** cn_afxdp_xmit as a stack's transmit hook (cn_net_params.xmit, with the
 *  queue as xmit_arg). */
CN_NET_XMIT_HOOK(cn_afxdp_xmit_hook, struct cn_afxdp_queue, cn_afxdp_xmit)

/**
 * Transmit one raw Ethernet frame (ARP, ICMP built by hand) as
 * cn_afxdp_xmit does. @return as cn_afxdp_xmit.
 */
int cn_afxdp_write_frame(struct cn_afxdp_queue *q, const void *frame, uint32_t len) CN_NONNULL(1);

/**
 * Receive up to @p n frames from queue @p q without a stack: each an mbuf
 * whose storage is the UMEM chunk the kernel wrote (data = the Ethernet
 * header, len == pkt_len == frame length, no CN_MBUF_F_RX_* status);
 * ownership passes to the caller. Refills the fill ring first (and wakes
 * the kernel if it asks). Frames longer than mtu + 14 are dropped
 * (rx_trunc); so are frames that find mpool empty (rx_nombuf), their
 * chunks going back to the pool. With impairment, what leaves it is
 * copied into fresh chunks and up to three frames may wait for the next
 * call. pcap: every frame returned, after the impairment.
 * @return frames returned.
 * Cost: no system call unless the fill ring asks for a wake-up; one
 * cluster taken from the pool's cache per refilled chunk, one small-mbuf
 * get per frame (the burst's in one bulk get); four prefetches per frame:
 * its two header lines and its backend entry for the whole burst first,
 * then its cluster's storage header (written, not read).
 */
unsigned cn_afxdp_rx_burst(struct cn_afxdp_queue *q, struct cn_mbuf **m, unsigned n) CN_NONNULL(1);

/**
 * cn_afxdp_rx_burst of up to `batch` frames, handed to the stack as one
 * burst (cn_net_input_burst: cn_net_input() of each with @p now, then one
 * cumulative ACK per connection that received in-order data), then
 * cn_afxdp_flush (so the ACKs the stack queued leave in one wake-up).
 * @return frames handed to the stack, at most `batch`. A return equal to
 *         `batch` means more frames may be waiting: a loop calls
 *         cn_afxdp_poll again until it returns less than `batch` before
 *         it waits or turns to other work.
 */
unsigned cn_afxdp_poll(struct cn_afxdp_queue *q, struct cn_net *net, uint64_t now) CN_NONNULL_ALL;

/**
 * Wake the kernel for the queued TX frames (if it asks for it) and reap
 * the completion ring, returning finished chunks to the pool. In copy
 * mode the kernel sends at most 32 frames per wake-up: the flush wakes
 * it again until the TX ring is empty (at most 64 times). With
 * impairment, first deliver the frames it holds back for reordering (a
 * held TX frame is sent, a held RX frame waits for the next rx_burst).
 * Call when idle, and before reading the counters. @return chunks reaped.
 */
unsigned cn_afxdp_flush(struct cn_afxdp_queue *q) CN_NONNULL_ALL;

/**
 * Wait until queue @p q has a frame to read, up to @p timeout_ms (-1 =
 * forever, 0 = just check): poll(2) on the socket.
 * @return 1 readable; 0 timeout; -errno (-EINTR; -EIO on an error).
 */
int cn_afxdp_wait(struct cn_afxdp_queue *q, int timeout_ms) CN_NONNULL_ALL;

/** Queue @p q's counters, the kernel's ones read now (a getsockopt). */
const struct cn_afxdp_stats *cn_afxdp_stats(struct cn_afxdp_queue *q) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_AFXDP_H */
