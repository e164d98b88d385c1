/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mbuf_core.h
 * The mbuf and shared-storage structs, their flags and their cache-line
 * layout; nothing else. The API is in mbuf.h.
 *
 * An mbuf is a 128-byte descriptor followed, in its pool object, by an inline
 * data area (header room plus a little data). Its bytes are the window
 * [data, data + len) of some storage:
 *  - its own inline area (shared == NULL): private to the mbuf, always
 *    writable, never referenced by another mbuf (copy-by-reference copies
 *    such bytes, as FreeBSD's m_copym does for non-cluster mbufs);
 *  - a cluster or an external buffer (shared != NULL): reference counted
 *    through struct cn_mbuf_shared, which any number of mbufs may point to.
 *
 * Invariants (for every mbuf m of a chain whose first mbuf is h):
 *   buf <= data && data + len <= buf + buf_len
 *   h->pkt_len == sum of len over h, h->next, ...  (head only)
 *   shared == NULL  <=>  buf is m's own inline area
 */
#ifndef CACHENET_MBUF_CORE_H
#define CACHENET_MBUF_CORE_H

#include "cachenet/common.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define CN__STATIC_ASSERT static_assert
#else
#define CN__STATIC_ASSERT _Static_assert
#endif

struct cn_mbuf_pool;

/** Kinds of reference-counted storage. */
enum cn_mbuf_storage {
	CN_MBUF_STORAGE_CLUSTER = 1, /**< from a cluster pool; returns there */
	CN_MBUF_STORAGE_EXT = 2,     /**< caller's memory; free_cb on last reference */
	CN_MBUF_STORAGE_SEG = 3,     /**< a segment object's own storage (below);
					  the whole object returns to its pool */
};

/** Storage flag: bytes may be read but never written (e.g. application
 *  memory sent zero-copy). */
#define CN_MBUF_SHARED_RDONLY 0x1u

/**
 * Reference-counted storage: the header of every cluster pool object (the
 * cluster's bytes follow it) and the descriptor a caller fills for an
 * external buffer (cn_mbuf_ext_init()).
 *
 * 64 bytes, one cache line: a free of the last reference reads and writes
 * only this line besides the mbuf's own first line.
 *
 * refcnt counts the mbufs pointing here. While it is 1 the single owner
 * updates it with plain loads and stores (nobody else can reach it); only
 * a count above 1 uses atomic read-modify-write (~12 TSC ticks here).
 */
struct cn_mbuf_shared {
	uint32_t refcnt;          /**< mbufs referencing this storage */
	uint16_t kind;            /**< enum cn_mbuf_storage */
	uint16_t flags;           /**< CN_MBUF_SHARED_* */
	uint32_t size;            /**< bytes at base */
	uint32_t cookie;          /**< debug builds: live/free marker */
	uint8_t *base;            /**< first byte of the storage */
	void (*free_cb)(void *base, void *opaque); /**< EXT: called at refcnt 0 */
	void *opaque;             /**< EXT: free_cb's argument */
	struct cn_mbuf_pool *pool;/**< CLUSTER: the pool it returns to */
	uint64_t reserved[2];     /**< zero; for a later version */
} __attribute__((aligned(64)));

CN__STATIC_ASSERT(sizeof(struct cn_mbuf_shared) == 64, "cn_mbuf_shared is one cache line");

/**
 * A segment object (a pool of kind CN_MBUF_POOL_SEG) is one pool object
 * holding everything a TCP sender needs for one MSS of queued data and its
 * transmission, so that both cost one pool get (Linux's fast-clone skbs
 * make the same trade):
 *
 *   bytes 0..127    struct cn_mbuf  the data mbuf (what a get hands out)
 *   bytes 128..255  struct cn_mbuf  the companion: a second descriptor a
 *                                   sender takes, without allocating, to
 *                                   transmit the data mbuf's bytes
 *   bytes 256..319  struct cn_mbuf_shared  storage header, kind SEG
 *   bytes 320..     data_size bytes of storage (header room, then payload)
 *
 * Both descriptors always reference the object's storage (never inline
 * bytes, never other storage); refcnt counts them and any other mbuf that
 * references the storage, and the object returns to its pool when it
 * drops to 0. The companion is free for use exactly when refcnt is 1 and
 * the data mbuf holds that reference. The header comes before the storage
 * so that neither descriptor's "inline area" (m + 1) is its buffer.
 */
#define CN_MBUF_SEG_HDR_BYTES (2 * 128 + 64)

/** mbuf flag: the head's metadata (line 1) was set by the user. Free for
 *  callers; the library never reads flags other than its own below. */
#define CN_MBUF_F_USER0 0x0100u
/** mbuf flag, the library's own: set while the mbuf is free (in its pool).
 *  Every get clears it; a free that finds it set is a double free. Callers
 *  must not set it. */
#define CN_MBUF_F_FREE 0x8000u

/**
 * RX offload status, set by a device on a received frame's head (every get
 * clears flags, so a frame without them is "unknown") and read by
 * cn_net_input (net.h) beside the stack's per-device cn_net_params.rx_flags:
 *  - IP_CSUM_GOOD / L4_CSUM_GOOD: the device verified that checksum; the
 *    stack skips it (the same values as net.h's CN_PARSE_*_CSUM_GOOD);
 *  - CSUM_BAD: the device found a checksum wrong; the stack then verifies
 *    every checksum itself, ignoring rx_flags too, so the frame is dropped
 *    and counted under the stack's own reason (a device's false alarm
 *    costs one check, never a good frame);
 *  - none: unknown, the stack verifies what rx_flags does not cover.
 */
#define CN_MBUF_F_RX_IP_CSUM_GOOD 0x0001u
#define CN_MBUF_F_RX_L4_CSUM_GOOD 0x0002u /**< see CN_MBUF_F_RX_IP_CSUM_GOOD */
#define CN_MBUF_F_RX_CSUM_BAD 0x0004u     /**< see CN_MBUF_F_RX_IP_CSUM_GOOD */
#define CN_MBUF_F_RX_CSUM_MASK 0x0007u    /**< every RX status bit */

/**
 * The mbuf descriptor: 128 bytes, two cache lines.
 *
 * Line 0 holds everything get, free, and the buffer surgery touch (data
 * view, chain link, storage, pool), so the hot path of a packet through the
 * library reads and writes one line per mbuf. Line 1 is per-packet metadata
 * for the user (sequence number, timestamps), touched only by whoever sets
 * it, plus the debug cookie; the library copies it when a head changes.
 */
struct cn_mbuf {
	/* --- cache line 0: data view, chain, storage -------------------- */
	uint8_t *data;              /**< first valid byte */
	struct cn_mbuf *next;       /**< next mbuf of this packet, or NULL */
	uint32_t len;               /**< valid bytes in this mbuf */
	uint32_t pkt_len;           /**< bytes in the whole chain (head only) */
	uint8_t *buf;               /**< start of the storage data points into */
	uint32_t buf_len;           /**< bytes of storage at buf */
	uint16_t flags;             /**< CN_MBUF_F_* (RX status bits, user bits) */
	uint16_t pool_hdroom;       /**< copy of the pool's header room, for get */
	struct cn_mbuf_shared *shared; /**< NULL: inline storage */
	struct cn_mbuf_pool *pool;  /**< pool this descriptor returns to */
	struct cn_mbuf *nextpkt;    /**< free for queues of packets */

	/* --- cache line 1: user metadata (not touched by get/free) ------- */
	uint64_t udata64;           /**< user; copied to a new head */
	uint32_t seq;               /**< user (e.g. TCP sequence); copied */
	uint32_t cookie;            /**< debug builds: live/free marker */
	uint64_t tstamp;            /**< user; copied to a new head */
	uint64_t user[5];           /**< user; not copied */
} __attribute__((aligned(64)));

CN__STATIC_ASSERT(sizeof(struct cn_mbuf) == 128, "cn_mbuf is two cache lines");
CN__STATIC_ASSERT(offsetof(struct cn_mbuf, nextpkt) + sizeof(void *) == 64,
		  "line 0 holds the hot fields");
CN__STATIC_ASSERT(offsetof(struct cn_mbuf, udata64) == 64, "line 1 starts with metadata");

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_MBUF_CORE_H */
