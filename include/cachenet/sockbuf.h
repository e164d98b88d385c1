/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file sockbuf.h
 * Send socket buffers: the bytes a TCP sender keeps from the application's
 * write until the peer acknowledges them. Two designs behind one view.
 *
 *  - **Chain sockbuf** (struct cn_sbchain): a list of mbufs, as in BSD, but
 *    without the two linear walks Ang found (docs/papers.md): append is O(1) (a tail
 *    pointer; small data is compressed into the tail's free room, like
 *    FreeBSD's sbcompress) and locating the next byte to send is O(1) (a
 *    cached (mbuf, offset) send pointer, like FreeBSD's sbsndptr); only a
 *    retransmission behind the pointer walks from the head.
 *  - **Ring sockbuf** (struct cn_sbring): the contiguous per-socket buffer
 *    Ang recommends (section 3.4). One ring of a power-of-two size with free-
 *    running 32-bit indices (wrap is two copies, never a branch in the
 *    index arithmetic); copy-in plain or fused with the Internet checksum,
 *    keeping one partial sum per MSS-sized chunk so output never reads the
 *    payload again; packets are *anchors*, small descriptors with their own
 *    header room that reference ring bytes; acknowledged bytes are released
 *    by sequence number in O(1), without visiting packets.
 *
 * Offsets. Both count bytes from the first unacknowledged byte (snd_una):
 * offset 0 is the oldest byte still held. cn_sockbuf_drop(n) makes byte n
 * the new offset 0. The ring also maps sequence numbers (seq of offset 0
 * advances with every drop/release).
 *
 * The common view: cn_sockbuf_seg(sb, off, max, &seg) describes up to max
 * bytes at off as a list of (pointer, length) pieces — what tcp_output
 * needs to build a packet by reference — plus, for the chain, the mbuf and
 * offset where the range starts (to take references with
 * cn_mbuf_copy_ref), and, for a ring in checksum mode, the partial sum of
 * the range when the stored chunk sums cover it exactly.
 *
 * The naive BSD behaviours beside them (the effect Ang measured, beside
 * its fix) are the laboratory's (cachenet/lab/sockbuf_naive.h).
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a sockbuf belongs to one thread at a time.
 */
#ifndef CACHENET_SOCKBUF_H
#define CACHENET_SOCKBUF_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachenet/mbuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Which of the two socket buffers. */
enum cn_sockbuf_kind {
	CN_SOCKBUF_CHAIN = 1, /**< struct cn_sbchain */
	CN_SOCKBUF_RING = 2,  /**< struct cn_sbring */
};

/** Common header of both sockbufs (first member of each). */
struct cn_sockbuf {
	enum cn_sockbuf_kind kind; /**< which one */
	uint32_t cc;     /**< bytes held (offsets 0 .. cc-1) */
	uint64_t walks;  /**< mbufs stepped over while locating offsets
			      (chain only; stays flat in steady state) */
};

/** Most pieces one segment view holds. A 9000-byte segment over 2 KB
 *  clusters needs 6; a larger request is shortened to what fits. */
#define CN_SB_SEG_PIECES 16

/** One contiguous piece of a segment. */
struct cn_sb_piece {
	const uint8_t *base; /**< first byte */
	uint32_t len;        /**< bytes */
};

/** "The next segment of up to N bytes at offset X". */
struct cn_sb_seg {
	uint32_t off;         /**< offset asked for */
	uint32_t len;         /**< bytes described (<= max asked; 0 at the end) */
	uint32_t seq;         /**< ring: sequence number of the first byte */
	uint32_t npieces;     /**< pieces used in piece[] */
	bool csum_valid;      /**< ring in CSUM mode: csum covers exactly the range */
	uint32_t csum;        /**< partial sum of the range (csum.h conventions) */
	struct cn_mbuf *m;    /**< chain: mbuf holding the first byte */
	uint32_t moff;        /**< chain: the first byte's offset in m */
	struct cn_sb_piece piece[CN_SB_SEG_PIECES]; /**< the range, in order */
};

/** Bytes held. */
CN_NONNULL_ALL
static inline uint32_t cn_sockbuf_len(const struct cn_sockbuf *sb)
{
	return sb->cc;
}

/**
 * Describe up to @p max bytes at offset @p off (either sockbuf kind).
 * @return 0 (seg->len may be 0 when off == cc); -EINVAL when off > cc.
 * Cost: chain: O(1) when off is at or just past the cached send pointer
 * (the pointer then moves to off + len), else walks from the head; ring:
 * O(1). Never reads payload bytes.
 */
int cn_sockbuf_seg(struct cn_sockbuf *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
	CN_NONNULL_ALL;

/**
 * Drop @p len acknowledged bytes from the front (more than cc drops all).
 * @return bytes dropped. Chain: O(mbufs freed); ring: O(1).
 */
uint32_t cn_sockbuf_drop(struct cn_sockbuf *sb, uint32_t len) CN_NONNULL_ALL;

/* ------------------------------------------------------------ chain */

/** A chain socket buffer (embed it; cn_sbchain_init). */
struct cn_sbchain {
	struct cn_sockbuf sb;        /**< kind CN_SOCKBUF_CHAIN */
	struct cn_mbuf *head;        /**< first mbuf; linked by next; no zero-length mbufs */
	struct cn_mbuf *tail;        /**< last mbuf */
	uint32_t nmbufs;             /**< mbufs in the list */
	struct cn_mbuf *snd_m;       /**< cached send pointer: an mbuf of the list */
	uint32_t snd_m_off;          /**< offset of snd_m's first byte */
	struct cn_mbuf_pool *mpool;  /**< small mbufs for copy-in and references */
	struct cn_mbuf_pool *cpool;  /**< clusters or segment objects for
					  copy-in (may be NULL) */
	uint32_t sent_hi;            /**< end of the furthest range referenced
					  (copy_ref, tx), as an offset */
};

/** Small data up to this many bytes is copied into the tail's free room
 *  instead of linking its mbuf (FreeBSD sbcompress uses MCLBYTES/4). */
#define CN_SBCHAIN_COMPRESS_MAX 512

/** Initialise an empty chain sockbuf. @p cpool may be NULL (copy-in then
 *  uses inline mbufs only), a cluster pool (copy-in takes an mbuf and a
 *  cluster per cluster's worth of bytes), or a segment pool
 *  (CN_MBUF_POOL_SEG, whose small pool should be @p mpool): copy-in then
 *  takes one object per (data_size - headroom) bytes, and cn_sbchain_tx
 *  sends each object's bytes without allocating. Size the segment pool's
 *  storage as headroom + MSS so that one object is one segment. */
void cn_sbchain_init(struct cn_sbchain *sb, struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool)
	CN_NONNULL(1);

/** Free every mbuf held; the sockbuf is empty (and reusable) after. */
void cn_sbchain_flush(struct cn_sbchain *sb) CN_NONNULL_ALL;

/**
 * Append the packet @p m (ownership passes to the sockbuf): per mbuf, a
 * small one whose bytes fit the tail's writable free room is copied there
 * and freed (sbcompress), an empty one is freed, any other is linked.
 * O(mbufs in m), independent of what is queued. Never fails; NULL @p m
 * appends nothing.
 */
void cn_sbchain_append(struct cn_sbchain *sb, struct cn_mbuf *m) CN_NONNULL(1);

/**
 * Copy @p len bytes from @p src in: the tail's free room first (when it is
 * writable: no reference to it is out), then new clusters (or an inline
 * mbuf for a remainder that fits one), or new segment objects when cpool
 * is a segment pool (one get per object, remainders included). With a
 * segment pool, a tail whose bytes were already referenced (copy_ref,
 * tx) is not topped up: the next segment then starts at an
 * object's first byte, where cn_sbchain_tx needs no allocation (Linux
 * likewise never appends to a sent skb).
 * @return 0; -ENOBUFS (nothing appended). Touches each byte once; O(1) in
 * what is queued.
 */
int cn_sbchain_append_copy(struct cn_sbchain *sb, const void *src, uint32_t len) CN_NONNULL(1);

/** Chain form of cn_sockbuf_seg(). */
int cn_sbchain_seg(struct cn_sbchain *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
	CN_NONNULL_ALL;

/**
 * A packet referencing bytes [off, off + len) (clusters shared, no payload
 * read), using and advancing the send pointer like cn_sbchain_seg: the
 * m_copy of a TCP send without BSD's walk from the head.
 * @return the packet; NULL with errno EINVAL (range past cc, len 0) or
 *         ENOBUFS.
 */
struct cn_mbuf *cn_sbchain_copy_ref(struct cn_sbchain *sb, uint32_t off, uint32_t len)
	CN_NONNULL_ALL;

/**
 * The packet to transmit bytes [off, off + len): @p hdr_len bytes of
 * header room (at the head's data, uninitialised) followed by references
 * to the payload, using and advancing the send pointer like
 * cn_sbchain_copy_ref (cn_mbuf_copy_ref_hdr on the located mbuf).
 *
 * Allocations: none when off is the first byte of a segment object that
 * has no reference in flight (the first transmission of data copied in
 * through a segment pool, segments cut at object boundaries), plus one
 * per further mbuf the range spans; else one header mbuf plus one per
 * source mbuf (a retransmission while the first is still out, data
 * appended by cluster or inline mbufs, a range starting inside an mbuf).
 * Copy-in never tops up a segment object already sent from, so segments
 * cut where the previous one ended start on object boundaries.
 * @return the packet (pkt_len = hdr_len + len); NULL with errno EINVAL
 *         (range past cc, len 0, hdr_len too large) or ENOBUFS.
 * Cost: O(1) at the send pointer; no payload byte read.
 */
struct cn_mbuf *cn_sbchain_tx(struct cn_sbchain *sb, uint32_t off, uint32_t len, uint32_t hdr_len)
	CN_NONNULL_ALL;

/** Chain form of cn_sockbuf_drop(). */
uint32_t cn_sbchain_drop(struct cn_sbchain *sb, uint32_t len) CN_NONNULL_ALL;

/* ------------------------------------------------------------ ring */

/** How a ring socket buffer copies bytes in. */
enum cn_sbring_copy {
	CN_SBRING_COPY_PLAIN = 0, /**< memcpy */
	CN_SBRING_COPY_CSUM = 1,  /**< cn_csum_copy: copy and sum in one pass */
};

/** Ring bytes when cn_sbring_params.bytes is 0 (1 MB). */
#define CN_SBRING_BYTES_DEFAULT (1u << 20)
/** Checksum chunk when cn_sbring_params.mss is 0: the Ethernet MSS. */
#define CN_SBRING_MSS_DEFAULT 1460
/** Packet anchors when cn_sbring_params.anchors is 0. */
#define CN_SBRING_ANCHORS_DEFAULT 1024
/** Alignment cn_sbring_params.ext_mem must have (a cache line). */
#define CN_SBRING_EXT_ALIGN 64

/** A ring socket buffer's parameters. Every zero field takes its default
 *  (common.h): an all-zero struct makes a 1 MB ring in its own memory with
 *  MSS-sized plain-copy chunks and 1024 anchors. */
struct cn_sbring_params {
	uint32_t size;        /**< sizeof(struct cn_sbring_params), or 0 (common.h) */
	uint32_t bytes;       /**< ring bytes: a power of two, 4 KB .. 1 GB;
				   0 = CN_SBRING_BYTES_DEFAULT */
	uint32_t mss;         /**< checksum chunk, normally the MSS; 1 .. bytes;
				   0 = CN_SBRING_MSS_DEFAULT (or bytes if smaller) */
	enum cn_sbring_copy copy; /**< copy-in mode; 0 = CN_SBRING_COPY_PLAIN */
	uint32_t anchors;     /**< packet anchors (packets in flight);
				   0 = CN_SBRING_ANCHORS_DEFAULT */
	uint32_t hdr_room;    /**< header bytes per anchor; 0 = 128 */
	uint32_t seq;         /**< sequence number of the first byte written */
	/** The ring's bytes live in this caller memory (an AF_XDP UMEM, a
	 *  DPDK memzone, a hugepage region) instead of the ring's own, so a
	 *  device can DMA segments straight out of it: the ring is the
	 *  first @c bytes bytes at ext_mem. Aligned to CN_SBRING_EXT_ALIGN;
	 *  at least @c bytes long (ext_len); must outlive the ring, which
	 *  never frees it. Anchors and checksum state stay in the ring's own
	 *  memory. NULL = the ring allocates its bytes itself. */
	void *ext_mem;
	/** Bytes the caller's region holds at ext_mem (>= bytes). Ignored
	 *  without ext_mem. */
	uint64_t ext_len;
	/** The I/O address a device uses for ext_mem's first byte (an AF_XDP
	 *  UMEM offset, a DMA address). Ignored without ext_mem. */
	uint64_t ext_iova;
};

/**
 * A packet anchor: one per packet in flight, taken from the sockbuf's own
 * array (no allocator involved). Its first cache line is the descriptor,
 * the header room follows (hdr_room bytes, cache-line aligned).
 */
struct cn_sb_anchor {
	uint32_t seq;              /**< sequence number of the first payload byte */
	uint32_t len;              /**< payload bytes */
	uint16_t hdr_len;          /**< header bytes reserved (at hdr) */
	uint16_t npieces;          /**< 1, or 2 when the payload wraps the ring */
	uint32_t reserved0;        /**< zero */
	uint8_t *hdr;              /**< hdr_len bytes, right before the room's end */
	const uint8_t *piece[2];   /**< payload in the ring */
	uint32_t piece_len[2];     /**< bytes of each piece */
	uint32_t csum;             /**< partial sum of the payload, if csum_valid */
	uint8_t csum_valid;        /**< csum covers exactly the payload */
	uint8_t pad[3];            /**< zero */
	uint64_t user;             /**< free for the caller */
} __attribute__((aligned(64)));

struct cn_sbring; /**< opaque */

/**
 * Create a ring sockbuf. All memory is allocated here (the ring's bytes
 * unless ext_mem, the anchors, the chunk sums).
 * @return it, or NULL with errno
 *         - EINVAL: p NULL, p->size not accepted (common.h), bytes not a
 *           power of two or out of range, mss > bytes, unknown copy mode,
 *           hdr_room above 64 KB, ext_mem not aligned to
 *           CN_SBRING_EXT_ALIGN, ext_iova + bytes overflowing;
 *         - ENOSPC: ext_len below bytes (the caller's region is too small);
 *         - ENOMEM.
 * Cost: O(bytes / mss + anchors) to set up; the ring's bytes are not
 * touched.
 */
struct cn_sbring *cn_sbring_create(const struct cn_sbring_params *p);

/** Free it. Anchors still out become invalid. NULL is accepted. */
void cn_sbring_destroy(struct cn_sbring *sb);

/** The generic sockbuf header of @p sb (for cn_sockbuf_seg/drop). */
struct cn_sockbuf *cn_sbring_sockbuf(struct cn_sbring *sb) CN_NONNULL_ALL;

/**
 * The I/O address of ring byte @p addr (a payload piece of an anchor or a
 * segment): for a ring over caller memory, ext_iova + (addr - ext_mem) (an
 * AF_XDP UMEM offset, a DMA address); for a ring in its own memory, the
 * virtual address itself (IOVA as VA), as cn_mbuf_pool_iova.
 * @return the address, or UINT64_MAX when @p addr is not a byte of the ring.
 * Cost: O(1); reads the ring's layout only. Thread safe.
 */
uint64_t cn_sbring_iova(const struct cn_sbring *sb, const void *addr) CN_NONNULL(1);

/** Free bytes (size - cc). */
uint32_t cn_sbring_space(const struct cn_sbring *sb) CN_NONNULL_ALL;

/** Sequence number of offset 0 (the first unreleased byte). */
uint32_t cn_sbring_seq(const struct cn_sbring *sb) CN_NONNULL_ALL;

/**
 * The ring's layout, fixed for its life: the byte of sequence number s
 * (for s held in the ring) is at @p *base + ((s - *seq0) & (*size - 1)).
 * Lets a caller that tracks sequence numbers itself (tcp_output) map a
 * range to ring bytes without a call per segment; valid only while the
 * caller's idea of offset 0's sequence number is cn_sbring_seq()'s.
 */
void cn_sbring_layout(const struct cn_sbring *sb, uint8_t **base, uint32_t *size, uint32_t *seq0)
	CN_NONNULL_ALL;

/**
 * Copy up to @p len bytes in (fewer if the ring has less space), in the
 * ring's copy mode; in CSUM mode every touched chunk's partial sum is
 * extended with the bytes copied (odd offsets inside a chunk handled).
 * @return bytes copied (0 when full). Touches each byte once.
 */
uint32_t cn_sbring_write(struct cn_sbring *sb, const void *src, uint32_t len) CN_NONNULL(1);

/**
 * Zero-copy copy-in, step 1: the free space as up to two pieces (the
 * second when it wraps). Write into them, then commit.
 * @return free bytes described.
 */
uint32_t cn_sbring_reserve(struct cn_sbring *sb, struct cn_sb_piece piece[2]) CN_NONNULL_ALL;

/**
 * Step 2: the first @p len reserved bytes now hold data. In CSUM mode
 * their chunk sums are computed here (one read pass over them, since the
 * writer did not sum them).
 * @return 0; -EINVAL when len exceeds the free space.
 */
int cn_sbring_commit(struct cn_sbring *sb, uint32_t len, bool sum) CN_NONNULL_ALL;

/** Ring form of cn_sockbuf_seg(): 1 piece, 2 across the ring's end. */
int cn_sbring_seg(struct cn_sbring *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
	CN_NONNULL_ALL;

/**
 * Release bytes acknowledged up to (not including) sequence number
 * @p ack: O(1), no anchor or payload touched. An ack at or before the
 * current first byte is ignored (returns 0).
 * @return bytes released; -EINVAL when ack is past the data written.
 * Anchors referencing released bytes must not be used for new
 * transmissions: the bytes may be overwritten by later writes.
 */
int64_t cn_sbring_release_seq(struct cn_sbring *sb, uint32_t ack) CN_NONNULL_ALL;

/**
 * Take an anchor describing payload [off, off + len) (len shortened to
 * what is held) with @p hdr_len bytes of header room reserved at
 * a->hdr. The stored checksum is passed on when it covers the payload.
 * @return the anchor; NULL with errno ENOBUFS (all anchors out) or
 *         EINVAL (off > cc, hdr_len > hdr_room).
 * Cost: O(1); writes the anchor's descriptor line only.
 */
struct cn_sb_anchor *cn_sbring_anchor_get(struct cn_sbring *sb, uint32_t off, uint32_t len,
					  uint16_t hdr_len) CN_NONNULL_ALL;

/** Return an anchor (e.g. at TX completion). O(1); does not read it. */
void cn_sbring_anchor_put(struct cn_sbring *sb, struct cn_sb_anchor *a) CN_NONNULL_ALL;

/** Anchors currently out. */
uint32_t cn_sbring_anchors_out(const struct cn_sbring *sb) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_SOCKBUF_H */
