/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file netdev.h
 * The in-memory NIC: a device with TX and RX
 * descriptor rings and status write-back that a cachenet stack transmits
 * into and receives from, with no wire behind it. What sits on the other
 * side of the "wire" is one of:
 *  - another device (two stacks back to back, cn_netdev_connect),
 *  - a lossy link to another device (loss, reorder, duplicate, corrupt at
 *    fixed rates, repeatable, struct cn_link),
 *  - a simulated peer built from packet templates (struct cn_peer): a TCP
 *    receiver that ACKs every other segment with a window, a TCP sender
 *    flow-controlled by our ACKs, a UDP source or sink (the in-memory
 *    drivers "playing the peer" of Nahum et al., "Cache Behavior of
 *    Network Protocols").
 *
 * Two sides of one device, as in hardware:
 *  - the driver side (what the stack's CPU runs): cn_netdev_xmit() posts a
 *    TX descriptor; cn_netdev_poll() reaps TX completions and hands
 *    received frames to the stack, at most `batch` per call (interrupt
 *    moderation: the driver is entered once per batch);
 *  - the "NIC" side (what a device would do by DMA): cn_netdev_nic_tx()
 *    gathers posted TX frames (filling an offloaded L4 checksum, as the
 *    NIC's DMA read would), puts them on the wire and writes their status;
 *    cn_netdev_nic_rx() writes an arriving frame into the next posted RX
 *    buffer (with header/payload split on: its headers into the
 *    descriptor's header buffer, the rest into the cluster), writes the
 *    descriptor's length and status, and leaves the written lines in the
 *    cache state the DCA mode says (the variants of Huggahalli et al.,
 *    "Direct Cache Access for High Bandwidth Network I/O").
 *
 * Benchmarks pause their counters around the NIC side: it stands for work
 * a device does, not the host CPU.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a device, link or peer belongs to one thread.
 */
#ifndef CACHENET_LAB_NETDEV_H
#define CACHENET_LAB_NETDEV_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stdint.h>

#include "cachenet/impair.h"
#include "cachenet/net.h"
#include "cachenet/pcap.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where the bytes a device writes for a received frame end up (the DCA
 *  variants of Huggahalli et al.). */
enum cn_dca {
	/** Left in the cache, as Direct Cache Access / DDIO does. */
	CN_DCA_INJECT = 0,
	/** Every line written (buffer and descriptor) flushed with
	 *  clflushopt, as a DMA write snooping the caches leaves them. */
	CN_DCA_FLUSH = 1,
	/** Flushed as FLUSH, then the driver prefetches the header and
	 *  payload lines of the frame prefetch_k ahead of the one it hands
	 *  to the stack (the prefetch-hint variant): cn_netdev_poll
	 *  interleaves the prefetches with the stack's processing, so each
	 *  frame's lines have k frames of protocol work to arrive in. */
	CN_DCA_PREFETCH = 2,
};

/** Where PREFETCH mode asks for a frame's payload lines (the header line
 *  always goes to L1: the stack reads it first). */
enum cn_prefetch_hint {
	CN_PREFETCH_L1 = 0,  /**< prefetcht0 */
	CN_PREFETCH_L2 = 1,  /**< prefetcht1 */
	CN_PREFETCH_LLC = 2, /**< prefetcht2 */
	CN_PREFETCH_NTA = 3, /**< prefetchnta */
};

/** Name of a prefetch hint ("l1", "l2", "llc", "nta"). */
const char *cn_prefetch_hint_name(enum cn_prefetch_hint h);

/** PREFETCH mode's default distance in frames (the measurements behind
 *  it: docs/performance.md, "In-memory NIC"). */
#define CN_NETDEV_PREFETCH_K_DEFAULT 8
/** Largest accepted prefetch distance. */
#define CN_NETDEV_PREFETCH_K_MAX 256

/**
 * Paced prefetch (params.prefetch_pace), for a stack that does not read a
 * frame's payload in its input (the NIC verified the L4 checksum, and the
 * bytes stay queued by reference until the application copies them out).
 * Unpaced, PREFETCH asks for all of a batch's lines during the poll, more
 * than the memory delivers to one core meanwhile. Paced, the driver asks,
 * before each frame goes up, for the header lines of the frame k ahead
 * (what the input reads) and for the next prefetch_pace lines of one
 * stream over the poll's payloads, in order, so the first part of a batch
 * is in the cache when the application starts on it, and the stack's
 * copy-out read-ahead (cn_tcp_params.rx_readahead) covers the rest.
 * The stream reads the payload ranges (mbuf data and length) before any
 * frame goes up; a frame the stack consumed in its input (copied into a
 * posted buffer, a pure ACK) is then free when the stream reaches its
 * lines: those prefetches touch a buffer back in its pool (no fault, no
 * byte read, a wasted line). The payload lines use prefetch_hint; the
 * frames of the next poll still in the ring get their header lines only.
 * cn_netdev_rx_burst (no stack to interleave with) ignores the pace.
 * Cost: one pass over the batch's mbufs for the ranges (just taken:
 * cached) and prefetch_pace prefetches per frame, against len / 64 + 1
 * unpaced. Measurements and the choice of 12 in the benchmarks:
 * docs/performance.md, "In-memory NIC".
 */
/** Largest accepted prefetch_pace. */
#define CN_NETDEV_PREFETCH_PACE_MAX 1024

/** Default copybreak: pure ACKs and other frames of up to 128 bytes. */
#define CN_NETDEV_COPYBREAK_DEFAULT 128
/** copybreak value that turns copying off. */
#define CN_NETDEV_COPYBREAK_OFF 0xffffffffu

/** Name of a DCA mode ("inject", "flush", "prefetch"). */
const char *cn_dca_name(enum cn_dca mode);

/** A frame leaving a device: where the wire takes it. The bytes are valid
 *  during the call only. */
typedef void (*cn_wire_fn)(void *arg, const uint8_t *frame, uint32_t len);

/** A device's parameters. Every zero field takes its default (common.h):
 *  an all-zero struct makes a 512-descriptor device with its own buffer
 *  pools, DCA inject, no split. */
struct cn_netdev_params {
	uint32_t size;               /**< sizeof(struct cn_netdev_params), or 0 (common.h) */
	uint32_t ring_size;          /**< descriptors per ring, power of two; 0 = 512 */
	uint32_t batch;              /**< frames per driver poll; 0 = 32 (with
	                                  PREFETCH, small batches overlap the
	                                  prefetches with the reads between polls:
	                                  docs/performance.md, "In-memory NIC") */
	enum cn_dca dca;
	uint32_t prefetch_k;         /**< PREFETCH: frames ahead; 0 = CN_NETDEV_PREFETCH_K_DEFAULT;
	                                  at most CN_NETDEV_PREFETCH_K_MAX and below ring_size */
	enum cn_prefetch_hint prefetch_hint; /**< PREFETCH: level for payload lines */
	uint32_t prefetch_pace;      /**< PREFETCH: 0 = each frame's header and
	                                  payload lines k ahead; else paced: the
	                                  header lines k ahead and this many
	                                  payload lines per frame handed up, in
	                                  one stream over the poll's frames (see
	                                  "Paced prefetch"); at most
	                                  CN_NETDEV_PREFETCH_PACE_MAX */
	uint32_t copybreak;          /**< frames of at most this many bytes are copied
	                                  into a small mbuf from mpool and their posted
	                                  buffer stays posted (Linux's rx_copybreak):
	                                  a pure ACK costs no cluster free and refill;
	                                  0 = CN_NETDEV_COPYBREAK_DEFAULT,
	                                  CN_NETDEV_COPYBREAK_OFF = never; capped to
	                                  what a small mbuf holds */
	struct cn_mbuf_pool *mpool;  /**< RX buffers: an mbuf ... */
	struct cn_mbuf_pool *cpool;  /**< ... with a cluster of >= 1516 bytes.
	                                  Either NULL: the device creates that
	                                  pool itself (2 * ring_size objects,
	                                  default sizes, no thread caches) and
	                                  destroys it with the device, so every
	                                  frame received from it must be freed
	                                  before cn_netdev_destroy */
	struct cn_pcap *pcap;        /**< capture both directions; may be NULL */
	bool split;                  /**< header/payload split (below) */
	uint32_t split_hdr_size;     /**< split: header buffer bytes; 0 = what a
	                                  small mbuf from mpool holds at the 2-byte
	                                  offset (190 by default); capped to that;
	                                  at least CN_NETDEV_SPLIT_HDR_MIN */
};

/**
 * Header/payload split (params.split), as a splitting NIC such as Intel's
 * 82599 does it: every RX descriptor holds two posted buffers, a header
 * buffer (the inline data of a small mbuf from mpool, split_hdr_size bytes
 * at offset 2) and the cluster. For each arriving frame the NIC parses
 * Ethernet II / IPv4 (IHL, any options) / TCP (data offset, any options) or
 * UDP, and:
 *  - split: the headers (14 + IHL + TCP data offset, or + 8 for UDP) go to
 *    the header buffer, the bytes after them (payload and any Ethernet
 *    padding) to the cluster, at the place they would have had in an
 *    unsplit frame (buf + 2 + header length), so the cluster keeps room
 *    for the headers in front and a consumer that needs the frame
 *    contiguous can copy them back (cn_net does for its slow-path hook).
 *    The driver hands a 2-mbuf chain: header mbuf (len = header length),
 *    then the cluster mbuf (len = the rest). Counted in rx_split.
 *  - header only: the IP total length says there is no payload and the
 *    whole frame fits the header buffer (pure ACKs): the whole frame goes
 *    to the header buffer and the driver hands the header mbuf alone; the
 *    cluster stays posted. Counted in rx_split_hdr_only.
 *  - not split: the frame is not Ethernet/IPv4/TCP-or-UDP, is an IPv4
 *    fragment, is shorter than the headers its fields announce (counted
 *    rx_nosplit_parse), or its headers are longer than the header buffer
 *    (rx_nosplit_hdr_long): the whole frame goes to the cluster exactly as
 *    without split (one mbuf), the header buffer stays posted. A frame is
 *    never lost or altered for want of a parse: the stack sees the same
 *    bytes and finds what is wrong with them.
 * The NIC does not validate anything else (checksums, total length against
 * the frame): that is the stack's job, as with split off.
 * Copybreak applies first, to the frame's length: a small split frame is
 * copied (header buffer, then payload) into a new small mbuf and both
 * buffers stay posted. DCA FLUSH flushes the lines written in both
 * buffers and the descriptor; PREFETCH prefetches the header buffer's
 * lines to L1 and the payload's lines with the hint. pcap records the
 * frame as it arrived.
 * Zero-copy peers (cn_netdev_nic_rx_reserve/commit) build the frame
 * contiguous in the cluster; with split on, commit parses it and copies
 * the headers into the header buffer (the NIC's header write; the bytes
 * in the cluster in front of the payload are then stale room): a copy of
 * 42..134 bytes and one or two more lines written per frame.
 * Cost per split frame: a second mbuf to refill (one small get) and to
 * free once the stack has read the headers (one small free), one more
 * mbuf line touched (the header mbuf's), the chain's entry into the stack.
 * Measured costs: docs/performance.md, "In-memory NIC".
 */
#define CN_NETDEV_SPLIT_HDR_MIN (CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN)

/** Device counters. */
struct cn_netdev_stats {
	uint64_t tx_frames, tx_bytes, tx_ring_full;
	uint64_t rx_frames, rx_bytes;
	uint64_t rx_no_desc;         /**< frame lost: no posted RX buffer */
	uint64_t rx_too_long;        /**< frame lost: longer than the buffer */
	uint64_t rx_refill_fail;     /**< buffer pool empty at refill */
	uint64_t polls;
	uint64_t rx_copybreak;       /**< frames copied into a small mbuf */
	/* header/payload split (params.split) */
	uint64_t rx_split;           /**< frames split: headers, payload */
	uint64_t rx_split_hdr_only;  /**< whole frame in the header buffer */
	uint64_t rx_nosplit_parse;   /**< not split: no IPv4 TCP/UDP header found */
	uint64_t rx_nosplit_hdr_long;/**< not split: headers > header buffer */
	uint64_t rx_pace_lines;      /**< paced PREFETCH: payload lines the
	                                  stream asked for */
};

struct cn_netdev;

/**
 * Create a device and post a buffer (with split: and a header buffer) in
 * every RX descriptor.
 * @return it, or NULL with errno EINVAL (p NULL, p->size not accepted
 *         (common.h), ring size not a power of two, prefetch_k above CN_NETDEV_PREFETCH_K_MAX or not below
 *         the ring size, prefetch_hint unknown, split with a header buffer
 *         below CN_NETDEV_SPLIT_HDR_MIN) or ENOMEM/ENOBUFS.
 */
struct cn_netdev *cn_netdev_create(const struct cn_netdev_params *p);

/** Free it, its posted buffers, and (cn_pkt_free) every TX packet still
 *  in its ring. NULL accepted. */
void cn_netdev_destroy(struct cn_netdev *dev);

/** Where frames the device transmits go. */
void cn_netdev_set_wire(struct cn_netdev *dev, cn_wire_fn fn, void *arg) CN_NONNULL(1);

/**
 * Driver: post @p p on the TX ring of @p dev.
 * @return 0; -ENOBUFS when the ring is full (p not taken).
 * Cost: one descriptor write.
 */
int cn_netdev_xmit(struct cn_netdev *dev, struct cn_pkt *p) CN_NONNULL_ALL;

/** cn_netdev_xmit as a stack's transmit hook (cn_net_params.xmit, with
 *  the device as xmit_arg). */
CN_NET_XMIT_HOOK(cn_netdev_xmit_hook, struct cn_netdev, cn_netdev_xmit)

/**
 * NIC: transmit every posted TX frame onto the wire and write its
 * completion status. @return frames sent.
 * Cost: one gather copy per frame (plus the checksum, offloaded frames).
 */
unsigned cn_netdev_nic_tx(struct cn_netdev *dev) CN_NONNULL_ALL;

/**
 * NIC: a frame arrives from the wire: written into the next posted RX
 * buffer (2 bytes in, so the IPv4 header is 4-byte aligned), length and
 * status written back, lines flushed per the DCA mode. With split on, the
 * headers go to the header buffer and the rest to the cluster (see
 * "Header/payload split" above); the frame is never lost for it.
 * @return 0; -ENOBUFS (no posted buffer: counted, frame lost); -EMSGSIZE
 *         (longer than the cluster's room, split or not: counted).
 * Also usable as a cn_wire_fn (cn_netdev_wire_rx).
 */
int cn_netdev_nic_rx(struct cn_netdev *dev, const uint8_t *frame, uint32_t len) CN_NONNULL(1);

/** cn_netdev_nic_rx as a cn_wire_fn (arg is the device). */
void cn_netdev_wire_rx(void *dev, const uint8_t *frame, uint32_t len) CN_NONNULL(1);

/**
 * NIC, zero-copy form for simulated peers: the next posted RX buffer
 * (*room bytes) to build a frame in, followed by cn_netdev_nic_rx_commit.
 * Reserving twice without a commit returns the same buffer.
 * @return the buffer, or NULL when no buffer is posted (nothing counted:
 *         the caller decides whether that is a loss).
 */
uint8_t *cn_netdev_nic_rx_reserve(struct cn_netdev *dev, uint32_t *room) CN_NONNULL_ALL;
/** The reserved buffer holds a frame of @p len bytes (<= *room). With
 *  split on, the NIC's split happens here: the headers are copied into
 *  the header buffer (42..134 bytes; the whole frame when it is
 *  header-only), the payload stays where the peer wrote it.
 *  Cost with split: that copy and the header buffer's lines. */
void cn_netdev_nic_rx_commit(struct cn_netdev *dev, uint32_t len) CN_NONNULL_ALL;

/**
 * Driver: reap TX completions and hand up to `batch` received frames to
 * @p net (cn_net_input), refilling their descriptors.
 * @return frames received, at most `batch`. A return equal to `batch`
 *         means more frames may be waiting (cn_netdev_rx_pending() says
 *         how many): a loop calls cn_netdev_poll again until it returns
 *         less than `batch`, e.g. `while (cn_netdev_poll(dev, net, now) ==
 *         batch) ;`, before the other side transmits again. One call per
 *         turn of a loop whose peer sends more than `batch` frames a turn
 *         overruns the RX ring (counted in rx_no_desc).
 * Cost: per frame, a status read, a buffer swap (or, at most copybreak
 * bytes, a small mbuf and a copy of the frame), the stack's input; with
 * split, a split frame also swaps its header buffer (one more small mbuf
 * get at refill, and its free in the stack; see "Header/payload split"); in
 * PREFETCH mode, before frame i goes to the stack, the lines of frame
 * i + k (taken in this poll, or still in the ring with its status done)
 * are prefetched, each frame once: about len / 64 + 1 prefetch
 * instructions per frame; paced (prefetch_pace), the header lines of
 * frame i + k and prefetch_pace lines of the poll's payload stream
 * (see "Paced prefetch").
 */
unsigned cn_netdev_poll(struct cn_netdev *dev, struct cn_net *net, uint64_t now) CN_NONNULL_ALL;

/** Driver: receive up to @p n frames without a stack (ownership passes).
 *  In PREFETCH mode the frames up to k past each one taken are prefetched
 *  as their status is read (the caller's processing comes after the
 *  burst, so only the first frames gain; cn_netdev_poll interleaves).
 *  @return frames returned. */
unsigned cn_netdev_rx_burst(struct cn_netdev *dev, struct cn_mbuf **m, unsigned n) CN_NONNULL(1);

/** Driver: reap TX completions only. @return packets released. */
unsigned cn_netdev_tx_reap(struct cn_netdev *dev) CN_NONNULL_ALL;

/** Frames waiting in the RX ring (status written, not yet polled). */
unsigned cn_netdev_rx_pending(const struct cn_netdev *dev) CN_NONNULL_ALL;

/** Packets posted on the TX ring and not yet reaped. */
unsigned cn_netdev_tx_pending(const struct cn_netdev *dev) CN_NONNULL_ALL;

const struct cn_netdev_stats *cn_netdev_stats(const struct cn_netdev *dev) CN_NONNULL_ALL;

/** Join two devices back to back: each one's wire is the other's RX. */
void cn_netdev_connect(struct cn_netdev *a, struct cn_netdev *b) CN_NONNULL_ALL;

/* ------------------------------------------------------------ lossy link */

struct cn_link;

/** Create a link joining @p a and @p b (sets both devices' wires).
 *  @return it, or NULL with errno EINVAL (a, b or p NULL, p->size not
 *  accepted (common.h), a negative rate, loss >= 1) or ENOMEM. */
struct cn_link *cn_link_create(struct cn_netdev *a, struct cn_netdev *b,
			       const struct cn_link_params *p);

/** Deliver frames held back for reordering (call when the link is idle,
 *  else a held frame waits for the next one in its direction). */
void cn_link_flush(struct cn_link *l) CN_NONNULL_ALL;

/** Free the link. NULL is accepted. */
void cn_link_destroy(struct cn_link *l);
const struct cn_link_stats *cn_link_stats(const struct cn_link *l) CN_NONNULL_ALL;

/* ------------------------------------------------------------ simulated peers */

enum cn_peer_kind {
	CN_PEER_TCP_SINK = 1,   /**< receives our segments, ACKs every ack_every-th */
	CN_PEER_TCP_SOURCE = 2, /**< sends segments, flow-controlled by our ACKs */
	CN_PEER_UDP_SINK = 3,   /**< counts our datagrams */
	CN_PEER_UDP_SOURCE = 4, /**< sends datagrams */
};

/**
 * A simulated peer. Addresses are the peer's view: l* is the peer, r* is
 * the cachenet stack under test. It is attached to a device: it receives
 * what the device transmits (it becomes the device's wire) and writes its
 * own frames straight into the device's posted RX buffers. The peers
 * assume a lossless wire (no retransmission of their own). Every zero
 * field takes its default (common.h): an all-zero struct is a TCP sink
 * between 0.0.0.0 ports 0 that ACKs every second segment.
 */
struct cn_peer_params {
	uint32_t size;                 /**< sizeof(struct cn_peer_params), or 0 (common.h) */
	enum cn_peer_kind kind;        /**< 0 = CN_PEER_TCP_SINK */
	cn_be32_t laddr, raddr;        /**< the peer's and the stack's address */
	cn_be16_t lport, rport;        /**< the peer's and the stack's port */
	uint8_t lmac[CN_ETH_ALEN], rmac[CN_ETH_ALEN];
	uint32_t iss;                  /**< the peer's initial sequence number */
	uint32_t irs;                  /**< the stack's initial sequence number */
	uint16_t mss;                  /**< SOURCE: payload per segment; UDP: per
	                                    datagram; 8 .. 8936; 0 = 1460 */
	uint32_t window;               /**< SINK: window advertised (bytes, <= 65535 << wscale) */
	uint8_t wscale;                /**< SINK: shift of the advertised window */
	uint32_t ack_every;            /**< SINK: ACK every n-th segment; 0 = 2 */
	bool verify;                   /**< SINK: check checksums and hash payload */
	bool ts;                       /**< TCP timestamps on the peer's segments */
	bool csum;                     /**< UDP SOURCE: send a checksum */
};

struct cn_peer_stats {
	uint64_t frames_in, bytes_in;  /**< payload bytes received in order */
	uint64_t frames_out, bytes_out;/**< payload bytes sent */
	uint64_t acks_out, bad_csum, out_of_order;
	uint64_t hash;                 /**< FNV-1a 64 of in-order payload (verify) */
};

struct cn_peer;

/** Create a peer and attach it to @p dev (its wire).
 *  @return it, or NULL with errno EINVAL (dev or p NULL, p->size not
 *  accepted (common.h), unknown kind, mss out of range, wscale > 14) or
 *  ENOMEM. */
struct cn_peer *cn_peer_create(struct cn_netdev *dev, const struct cn_peer_params *p);
/** Detach the peer from its device's wire and free it. NULL is accepted. */
void cn_peer_destroy(struct cn_peer *peer);

/**
 * SOURCE: write up to @p max frames into the device, as many as the
 * stack's advertised window (TCP) and the posted RX buffers allow.
 * TCP payload is deterministic: each segment's first 4 bytes are its
 * sequence number (big-endian), the rest a fixed pattern, so the stream
 * is checkable and the checksum is a stored sum plus one word.
 * @return frames written.
 */
unsigned cn_peer_send(struct cn_peer *peer, unsigned max) CN_NONNULL_ALL;

/** The byte at stream offset @p off that a TCP SOURCE sends (for checks). */
uint8_t cn_peer_stream_byte(const struct cn_peer *peer, uint64_t off) CN_NONNULL_ALL;

/** SINK: ACK what has not been ACKed yet (the end of a burst). */
void cn_peer_flush(struct cn_peer *peer) CN_NONNULL_ALL;

const struct cn_peer_stats *cn_peer_stats(const struct cn_peer *peer) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_LAB_NETDEV_H */
