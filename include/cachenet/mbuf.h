/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file mbuf.h
 * BSD-style packet buffers: fixed-size pools of small mbufs and of clusters,
 * chains, buffer surgery (prepend, adj, pullup, split), copy-by-reference,
 * external buffers, per-thread caches.
 *
 * Conventions of this module
 *
 *  - Pools. A pool holds a fixed number of objects, all allocated at
 *    creation, each cache-line aligned. A *small* pool's objects are mbufs
 *    (struct cn_mbuf, mbuf_core.h) with an inline data area of data_size
 *    bytes, of which the first headroom bytes are left free at get so that
 *    headers can be prepended in place. A *cluster* pool's objects are
 *    reference-counted storage (struct cn_mbuf_shared + data_size bytes:
 *    2048 for Ethernet, 9216 for jumbo frames) attached to small mbufs.
 *    A *segment* pool's objects are an mbuf, a companion mbuf and their
 *    own reference-counted storage in one object (mbuf_core.h): one get
 *    yields an mbuf with data_size bytes of storage (headroom kept free),
 *    and cn_mbuf_copy_ref_hdr() can later send its bytes with a header
 *    through the companion without allocating (see that function).
 *    Exhaustion is never fatal: gets return NULL with errno ENOBUFS (or
 *    -ENOBUFS) and leave the pool exactly as it was.
 *
 *  - Per-thread caches. With cache_size > 0, each thread that uses a pool
 *    gets (on first use, up to max_threads of them) a private LIFO cache of
 *    object pointers: a get or free that hits it takes no lock and no atomic
 *    and hands out the most recently freed (cache-hot) object. An empty
 *    cache refills cache_size objects from the shared pool in one locked
 *    bulk step; a cache above 1.5 x cache_size flushes back down to
 *    cache_size. A thread that gets no cache (all slots taken, or
 *    cache_size 0) uses the locked shared pool directly and is just as
 *    correct. A thread's caches are flushed at thread exit, or earlier by
 *    cn_mbuf_pool_thread_flush().
 *
 *  - Chains. Packets are chains linked by next; the first mbuf (the head)
 *    carries pkt_len, the sum of len over the chain, and the user metadata
 *    of line 1. Functions taking "m" as a packet expect a head. Mbufs of a
 *    chain may come from different small pools; new mbufs made by a
 *    function come from the pool of the mbuf they derive from.
 *
 *  - Sharing. Bytes in a cluster or external buffer may be referenced by
 *    many mbufs (cn_mbuf_copy_ref, cn_mbuf_split); such bytes are writable
 *    only while the reference count is 1 (cn_mbuf_writable). Inline bytes
 *    are never shared. Reference counts use no atomic instruction while a
 *    single mbuf references the storage.
 *
 *  - Every build stops the program with a message naming the mbuf when it
 *    is freed twice (cn_mbuf_free, _chain, _bulk) or when the pointer freed
 *    does not lie in its pool's memory (about 7 instructions per free:
 *    docs/performance.md, Buffers).
 *  - Debug builds (the library compiled without NDEBUG) also mark every object
 *    live or free with a cookie, poison freed data, and abort with a
 *    message on a double free, a free of a non-pool pointer, or a write
 *    into a freed object (found when it is handed out again).
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: pools may be used from any number of threads at once.
 * An mbuf chain belongs to one thread at a time; shared storage may be
 * referenced from several threads (its count is atomic above 1).
 */
#ifndef CACHENET_MBUF_H
#define CACHENET_MBUF_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachenet/mbuf_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ pools */

/** What a pool holds. */
enum cn_mbuf_pool_kind {
	CN_MBUF_POOL_DEFAULT = 0, /**< cn_mbuf_pool_params.kind 0: CN_MBUF_POOL_SMALL */
	CN_MBUF_POOL_SMALL = 1,   /**< mbuf descriptors with inline data */
	CN_MBUF_POOL_CLUSTER = 2, /**< reference-counted clusters */
	CN_MBUF_POOL_SEG = 3,     /**< mbuf + companion + own storage per object */
};

/** Default inline data bytes of a small mbuf, and its header room. The
 *  room fits Ethernet + IPv4/IPv6 + TCP with options, plus a tunnel. */
#define CN_MBUF_SMALL_DATA 192
/** Default header room of a small mbuf (see CN_MBUF_SMALL_DATA). */
#define CN_MBUF_SMALL_HEADROOM 128
/** Standard and jumbo cluster sizes. */
#define CN_MBUF_CLUSTER_SIZE 2048
/** Cluster size that holds a 9000-byte jumbo frame. */
#define CN_MBUF_JUMBO_SIZE 9216
/** Default storage bytes of a segment object: its default header room
 *  (CN_MBUF_SMALL_HEADROOM) plus 1536, which holds an Ethernet MSS (1460)
 *  and makes the whole object 1920 bytes, 30 cache lines. */
#define CN_MBUF_SEG_DATA (CN_MBUF_SMALL_HEADROOM + 1536)
/** Per-thread cache slots a pool has by default. */
#define CN_MBUF_MAX_THREADS 64
/** Objects in a pool whose params leave count 0. */
#define CN_MBUF_POOL_COUNT_DEFAULT 1024

/** A pool's parameters. Every zero field takes its default (common.h):
 *  an all-zero struct makes a small pool of CN_MBUF_POOL_COUNT_DEFAULT
 *  mbufs without per-thread caches. */
struct cn_mbuf_pool_params {
	uint32_t size;          /**< sizeof(struct cn_mbuf_pool_params), or 0 (common.h) */
	const char *name;       /**< for messages; copied (31 characters kept);
				     NULL = "mbuf" */
	enum cn_mbuf_pool_kind kind; /**< 0 = CN_MBUF_POOL_SMALL */
	uint32_t count;         /**< objects; 0 = CN_MBUF_POOL_COUNT_DEFAULT */
	uint32_t data_size;     /**< inline bytes (small), cluster bytes or
				     segment storage bytes; 0 = CN_MBUF_SMALL_DATA
				     / CN_MBUF_CLUSTER_SIZE / CN_MBUF_SEG_DATA */
	uint32_t headroom;      /**< bytes kept free in front of data at get
				     (small and segment: 0 =
				     CN_MBUF_SMALL_HEADROOM, use
				     CN_MBUF_NO_HEADROOM for none) or at attach
				     (cluster: default 0); < data_size */
	uint32_t cache_size;    /**< per-thread cache objects, 0 = no caches */
	uint32_t max_threads;   /**< cache slots, 0 = CN_MBUF_MAX_THREADS */
	struct cn_mbuf_pool *small; /**< segment pools only, required: the
				     small pool that mbufs derived from a
				     segment's descriptors come from (prepend
				     without room, split, copy_ref, pullup);
				     must outlive this pool */
	/** Cluster pools only: the clusters' bytes live in this caller
	 *  memory (an AF_XDP UMEM, a DPDK memzone, a hugepage region)
	 *  instead of the pool's own: cluster i is the data_size bytes at
	 *  ext_mem + i * ext_stride. The storage headers (struct
	 *  cn_mbuf_shared) stay in the pool's own memory, so the caller's
	 *  region holds packet bytes only and a device may write anywhere
	 *  in a posted cluster. The region must hold count * ext_stride
	 *  bytes and outlive the pool; the pool never frees it. NULL = the
	 *  pool allocates its clusters itself. */
	void *ext_mem;
	/** Bytes from one cluster to the next in ext_mem; 0 = data_size;
	 *  else >= data_size (e.g. a UMEM's chunk size). */
	uint32_t ext_stride;
	/** The I/O address a device uses for ext_mem's first byte (an AF_XDP
	 *  UMEM offset: 0; a DMA address). Ignored without ext_mem. */
	uint64_t ext_iova;
};
/** cn_mbuf_pool_params.headroom: none (0 would mean the default). */
#define CN_MBUF_NO_HEADROOM UINT32_MAX

/** Pool statistics. Exact when no thread is using the pool concurrently. */
struct cn_mbuf_pool_stats {
	uint32_t count;      /**< objects in the pool */
	uint32_t in_use;     /**< handed out and not freed */
	uint32_t cached;     /**< free, held in per-thread caches */
	uint32_t avail;      /**< free, in the shared pool */
	uint32_t high_water; /**< most objects out of the shared pool at once
				  (in use + cached), sampled at every access to
				  the shared pool; with cache_size 0 it is the
				  exact high water of in_use */
	uint64_t gets;       /**< objects handed out, ever */
	uint64_t puts;       /**< objects returned, ever */
	uint64_t fails;      /**< get requests refused for lack of objects */
};

/**
 * Create a pool. All memory is allocated here (count x object size, cache
 * slots; with ext_mem only the 64-byte storage headers); nothing is
 * allocated later.
 * @return the pool, or NULL with errno EINVAL (p NULL, p->size not
 *         accepted (common.h), data_size above 1 GB, headroom >=
 *         data_size, unknown kind, cache_size > count, a segment pool
 *         without a small pool, ext_mem for a pool that is not a cluster
 *         pool, ext_stride below data_size, count * ext_stride or
 *         ext_iova + count * ext_stride overflowing) or ENOMEM.
 * Cost: touches every object once (O(count)).
 */
struct cn_mbuf_pool *cn_mbuf_pool_create(const struct cn_mbuf_pool_params *p);

/**
 * Destroy a pool and free its memory, including every thread's cache
 * slot. No thread may use the pool during or after the call.
 * @return 0; -EBUSY when objects were still in use (they are gone too:
 *         this reports a leak, it does not prevent it). NULL is accepted.
 */
int cn_mbuf_pool_destroy(struct cn_mbuf_pool *pool);

/** Fill @p st. Cost: O(max_threads); not for the fast path. */
void cn_mbuf_pool_stats(const struct cn_mbuf_pool *pool, struct cn_mbuf_pool_stats *st)
	CN_NONNULL_ALL;

/** Return the calling thread's cached objects to the shared pool and give
 *  up its cache slot (the next use claims one again). Harmless without a
 *  cache. */
void cn_mbuf_pool_thread_flush(struct cn_mbuf_pool *pool) CN_NONNULL_ALL;

/** Pool parameters as created (defaults filled in). */
const struct cn_mbuf_pool_params *cn_mbuf_pool_params(const struct cn_mbuf_pool *pool)
	CN_NONNULL_ALL;

/**
 * The I/O address of byte @p addr of @p pool's storage: for a pool over
 * caller memory, ext_iova + (addr - ext_mem) (an AF_XDP UMEM offset, a
 * DMA address); for a pool with its own memory, the virtual address
 * itself (IOVA as VA).
 * @return the address, or UINT64_MAX when @p addr is not inside the bytes
 *         of one of the pool's clusters or mbufs (headers and the gaps
 *         between clusters excluded).
 * Cost: O(1), one division; reads the pool only. Thread safe.
 */
uint64_t cn_mbuf_pool_iova(const struct cn_mbuf_pool *pool, const void *addr) CN_NONNULL(1);

/**
 * The reverse: the storage header of the cluster whose bytes hold I/O
 * address @p iova (for a device's receive descriptor that names a buffer
 * by its address), and in *off (may be NULL) the byte's offset from the
 * cluster's base. Cluster pools only.
 * @return the header (live or free: the pool does not know who holds it),
 *         or NULL when iova is outside every cluster or the pool is not a
 *         cluster pool.
 * Cost: O(1), one division. Thread safe.
 */
struct cn_mbuf_shared *cn_mbuf_pool_cluster_at(const struct cn_mbuf_pool *pool, uint64_t iova,
					       uint32_t *off) CN_NONNULL(1);

/**
 * The I/O address of @p m's first data byte: cn_mbuf_pool_iova of the
 * cluster pool its storage came from; the virtual address for inline,
 * segment and external storage (whose memory the pools do not map).
 * Cost: O(1).
 */
uint64_t cn_mbuf_iova(const struct cn_mbuf *m) CN_NONNULL_ALL;

/** True when the library was built with the debug checks. */
bool cn_mbuf_debug_enabled(void);

/* ------------------------------------------------------------ get and free */

/**
 * Get one mbuf from a small pool: len 0, pkt_len 0, next NULL, data at
 * the pool's header room. Line 1 (user metadata) is not initialised.
 * From a segment pool: the same, but the mbuf's storage is the segment
 * object's own (shared != NULL, refcnt 1, writable, data_size bytes with
 * the header room in front); one pool get, no cluster to attach.
 * @return the mbuf, or NULL with errno ENOBUFS (pool exhausted) or EINVAL
 *         (a cluster pool).
 * Cost: a cache hit writes the mbuf's first cache line and reads the
 * cache's top entry; no lock, no atomic. A segment get also writes the
 * storage header's line.
 */
struct cn_mbuf *cn_mbuf_get(struct cn_mbuf_pool *pool) CN_NONNULL_ALL;

/**
 * Get @p n mbufs, all or none, from a small or a segment pool.
 * @return 0; -ENOBUFS (none taken); -EINVAL (a cluster pool).
 */
int cn_mbuf_get_bulk(struct cn_mbuf_pool *pool, struct cn_mbuf **m, unsigned n) CN_NONNULL(1);

/**
 * Free one mbuf (not its chain): drop its storage reference (returning a
 * cluster at the last reference, or calling an external buffer's free_cb)
 * and return the descriptor to its pool. A segment object's own
 * descriptor (its data mbuf or companion) only drops its reference: the
 * whole object returns to its pool with the last reference to it.
 * @return m->next as it was. NULL is accepted (returns NULL).
 * Misuse: freeing an mbuf that is free already, or a pointer that is not
 * an mbuf of its pool, prints "cachenet mbuf: double free of mbuf 0x..."
 * (or "... not an mbuf of its pool") and aborts, in every build.
 * Cost: O(1); an atomic only when the storage has other references.
 */
struct cn_mbuf *cn_mbuf_free(struct cn_mbuf *m);

/** Free every mbuf of the chain @p m. NULL is accepted. O(chain length). */
void cn_mbuf_free_chain(struct cn_mbuf *m);

/** Free @p n single mbufs (their next pointers are ignored), returning
 *  runs from the same pool in bulk. */
void cn_mbuf_free_bulk(struct cn_mbuf **m, unsigned n);

/**
 * Attach a cluster from @p cpool to the empty mbuf @p m (len 0, inline
 * storage): data = cluster start + the cluster pool's headroom.
 * @return 0; -ENOBUFS (m unchanged); -EINVAL (m not empty or already has
 *         shared storage, or cpool not a cluster pool).
 */
int cn_mbuf_attach_cluster(struct cn_mbuf *m, struct cn_mbuf_pool *cpool) CN_NONNULL_ALL;

/** cn_mbuf_get + cn_mbuf_attach_cluster; NULL with errno ENOBUFS or
 *  EINVAL, nothing taken on failure. */
struct cn_mbuf *cn_mbuf_get_cluster(struct cn_mbuf_pool *mpool, struct cn_mbuf_pool *cpool)
	CN_NONNULL_ALL;

/**
 * Describe an external buffer for attachment. @p sh must live until
 * @p free_cb runs (it may be inside the buffer itself). refcnt starts at 0;
 * each attach adds one.
 * @param sh       the descriptor to fill
 * @param base     the buffer's first byte
 * @param size     the buffer's bytes
 * @param free_cb  called once, with (base, opaque), when the last mbuf
 *                 referencing the buffer is freed; may be NULL
 * @param opaque   free_cb's second argument
 * @param rdonly   the bytes must never be written through an mbuf
 */
void cn_mbuf_ext_init(struct cn_mbuf_shared *sh, void *base, uint32_t size,
		      void (*free_cb)(void *base, void *opaque), void *opaque, bool rdonly)
	CN_NONNULL(1);

/**
 * Make the empty inline mbuf @p m reference [data, data + len) of the
 * external buffer @p sh (those bytes become valid: len and pkt_len grow by
 * @p len). The first attach of a fresh @p sh must not race with others.
 * @return 0; -EINVAL (m not empty / already shared, or the range is not
 *         inside the buffer).
 */
int cn_mbuf_attach_ext(struct cn_mbuf *m, struct cn_mbuf_shared *sh, void *data, uint32_t len)
	CN_NONNULL(1, 2);

/* ------------------------------------------------------------ views */

/** Pointer to the first data byte of @p m, as type @p t. */
#define cn_mbuf_mtod(m, t) ((t)(void *)(m)->data)

/** References to @p m's storage: 1 for inline storage. */
CN_NONNULL_ALL
static inline uint32_t cn_mbuf_refcnt(const struct cn_mbuf *m)
{
	return m->shared ? __atomic_load_n(&m->shared->refcnt, __ATOMIC_RELAXED) : 1;
}

/** True when m's bytes (and its free room) may be written: inline storage,
 *  or shared storage with one reference that is not read-only. */
CN_NONNULL_ALL
static inline bool cn_mbuf_writable(const struct cn_mbuf *m)
{
	return !m->shared || (!(m->shared->flags & CN_MBUF_SHARED_RDONLY) &&
			      __atomic_load_n(&m->shared->refcnt, __ATOMIC_RELAXED) == 1);
}

/** Free bytes in front of data that may be written (0 if not writable). */
CN_NONNULL_ALL
static inline uint32_t cn_mbuf_headroom(const struct cn_mbuf *m)
{
	return cn_mbuf_writable(m) ? (uint32_t)(m->data - m->buf) : 0;
}

/** Free bytes after the data that may be written (0 if not writable). */
CN_NONNULL_ALL
static inline uint32_t cn_mbuf_tailroom(const struct cn_mbuf *m)
{
	return cn_mbuf_writable(m) ? (uint32_t)(m->buf + m->buf_len - (m->data + m->len)) : 0;
}

/** Mbufs in the chain (0 for NULL). O(chain length). */
unsigned cn_mbuf_chain_count(const struct cn_mbuf *m);

/**
 * The mbuf holding byte @p off of the chain starting at @p m, and the
 * byte's offset in it (*moff). Zero-length mbufs are skipped.
 * @return the mbuf, or NULL when off >= the chain's length (always for a
 *         NULL @p m).
 * Cost: walks the chain from m (O(mbufs before off)).
 */
struct cn_mbuf *cn_mbuf_at(struct cn_mbuf *m, uint32_t off, uint32_t *moff) CN_NONNULL(3);

/* ------------------------------------------------------------ surgery */

/**
 * Append @p len bytes to the last mbuf of the packet without allocating:
 * @return pointer to the new bytes (uninitialised), or NULL when the last
 *         mbuf lacks that much tailroom (nothing changed). Walks to the
 *         last mbuf (O(chain)).
 */
void *cn_mbuf_append(struct cn_mbuf *m, uint32_t len) CN_NONNULL_ALL;

/**
 * Copy @p len bytes from @p src to the end of the packet @p m, filling the
 * last mbuf's tailroom and then new mbufs from m's pool, with clusters
 * from @p cpool when cpool is not NULL (else inline mbufs); when cpool is
 * a segment pool, new segment objects from it instead (one get each).
 * @return 0; -ENOBUFS (the packet is unchanged). Touches each byte once.
 */
int cn_mbuf_append_copy(struct cn_mbuf *m, const void *src, uint32_t len,
			struct cn_mbuf_pool *cpool) CN_NONNULL(1);

/** Link the packet @p tail after the packet @p m (pkt_len adds up).
 *  Walks to m's last mbuf. A NULL @p tail leaves m unchanged. */
void cn_mbuf_cat(struct cn_mbuf *m, struct cn_mbuf *tail) CN_NONNULL(1);

/**
 * Make room for @p len bytes in front of the packet: in m's header room
 * when it is writable and large enough (O(1), no allocation), else in a
 * new mbuf from m's pool whose data sits at the end of its inline area (so
 * later prepends fit in front again); metadata moves to the new head.
 * @return the head (m or the new mbuf), whose first len bytes are the new
 *         (uninitialised) room; NULL with errno ENOBUFS or EINVAL (len larger
 *         than an inline area), m unchanged.
 */
struct cn_mbuf *cn_mbuf_prepend(struct cn_mbuf *m, uint32_t len) CN_NONNULL_ALL;

/**
 * Trim the packet: @p req > 0 removes req bytes from the front, < 0
 * removes -req bytes from the back; more than pkt_len trims everything.
 * Front trimming leaves emptied mbufs in place (the head stays the head);
 * back trimming frees the mbufs past the new end. O(mbufs touched).
 */
void cn_mbuf_adj(struct cn_mbuf *m, int32_t req) CN_NONNULL_ALL;

/**
 * Make the first @p n bytes of the packet contiguous in its head: in place
 * when the head is writable and its storage is large enough, else in a new
 * inline mbuf from the head's pool. Mbufs emptied by the move are freed.
 * @return the head (m or a new one, metadata moved), or NULL with errno
 *         EINVAL (n > pkt_len, or n larger than any mbuf that could hold
 *         it) or ENOBUFS; on NULL the packet is unchanged.
 * Cost: copies at most n bytes.
 */
struct cn_mbuf *cn_mbuf_pullup(struct cn_mbuf *m, uint32_t n) CN_NONNULL_ALL;

/**
 * Split the packet at @p off: m keeps bytes [0, off), the returned packet
 * holds [off, pkt_len). Shared storage cut in the middle is referenced by
 * both halves (no copy); inline bytes after the cut are copied into a new
 * mbuf.
 * @return the second packet's head; NULL with errno EINVAL (off == 0 or
 *         off >= pkt_len) or ENOBUFS (m unchanged).
 */
struct cn_mbuf *cn_mbuf_split(struct cn_mbuf *m, uint32_t off) CN_NONNULL_ALL;

/**
 * A new packet referencing bytes [off, off + len) of the chain starting at
 * @p m (m need not be a head: off counts from m's first byte): one new mbuf
 * per source mbuf touched, sharing clusters and external buffers (their
 * counts grow; no payload byte is read) and copying inline bytes. New mbufs
 * come from the pool of the source mbuf.
 * @return the new head (pkt_len = len); NULL with errno EINVAL (len 0 or
 *         the range passes the end of the chain) or ENOBUFS (nothing
 *         allocated remains).
 * Cost: walks from m to off, then O(mbufs in the range).
 */
struct cn_mbuf *cn_mbuf_copy_ref(struct cn_mbuf *m, uint32_t off, uint32_t len);

/**
 * A packet to transmit: @p hdr_len bytes of writable header room followed
 * by a reference to bytes [off, off + len) of the chain starting at @p m
 * (m need not be a head). The returned head's data points at the
 * (uninitialised) header room; pkt_len = hdr_len + len; no payload byte
 * is read or copied (inline source bytes excepted, as in copy_ref).
 *
 * Fast path, no allocation at all: the source mbuf holding byte off is
 * the data mbuf of a segment object (a get from a CN_MBUF_POOL_SEG pool),
 * off is its first byte, its storage has no other reference (refcnt 1:
 * the companion is idle and no earlier reference is in flight), and it
 * has at least hdr_len bytes of storage in front of its data. The head is
 * then the object's companion descriptor, whose window is that header
 * room plus the source's bytes; the header is written into the storage in
 * front of the payload, which nobody else can see (refcnt was 1). Bytes
 * past the source mbuf's end are referenced with cn_mbuf_copy_ref (one
 * new mbuf per further source mbuf).
 *
 * Otherwise (retransmission while the companion is still out, a range
 * starting inside an mbuf, a cluster or external source): a new mbuf from
 * the source's pool holding the header room at the end of its inline area,
 * chained to cn_mbuf_copy_ref(range): 1 + (source mbufs touched) gets.
 *
 * Freeing the returned packet (cn_mbuf_free_chain, at TX completion)
 * releases the companion again; its storage stays while the data mbuf (or
 * any other reference) holds it.
 * @return the head; NULL with errno EINVAL (len 0, the range passes the
 *         end of the chain, hdr_len larger than a small mbuf's inline
 *         area) or ENOBUFS (nothing allocated or referenced remains).
 * Cost: fast path O(1), writes the companion's first line and the storage
 * header's refcount (plain store: it was 1); freeing it later is one
 * atomic decrement while the data mbuf still holds its reference, a plain
 * store when the ACK freed the data mbuf first.
 */
struct cn_mbuf *cn_mbuf_copy_ref_hdr(struct cn_mbuf *m, uint32_t off, uint32_t len, uint32_t hdr_len);

/**
 * Copy bytes [off, off + len) of the chain starting at @p m to @p dst.
 * @return 0; -EINVAL when the range passes the end of the chain, a NULL
 *         @p m holding no bytes (dst may then hold a prefix).
 */
int cn_mbuf_copy_out(const struct cn_mbuf *m, uint32_t off, uint32_t len, void *dst);

/**
 * Check a packet's invariants (pkt_len, windows inside storage, refcounts
 * > 0). @return 0 or -EBADMSG. O(chain). For tests and debugging.
 */
int cn_mbuf_check(const struct cn_mbuf *m) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_MBUF_H */
