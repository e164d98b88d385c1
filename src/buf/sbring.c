/* SPDX-License-Identifier: BSD-2-Clause */
/* The contiguous (ring) sockbuf Ang recommends (section 3.4).
 *
 * Stream offsets are free-running uint32_t: byte x of the stream lives at
 * ring[x & mask] and has sequence number seq0 + x. head..tail are the bytes
 * held; subtraction modulo 2^32 gives lengths even across the 4 GB wrap, as
 * long as the ring is at most 2^31 bytes.
 *
 * Checksum chunks are fixed MSS-sized stretches of the stream, aligned to
 * c_start (the start of the chunk holding head, always a multiple of mss
 * away from offset 0 of the stream). Chunk number j keeps the sum of its
 * first nsum bytes in chunks[j & cmask]; a chunk's entry is reset when its
 * first byte is written, which can only happen after the previous user of
 * the same entry (cmask + 1 chunks earlier) was released, because the ring
 * holds fewer chunks than the table has entries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf_impl.h"
#include "cachenet/csum.h"
#include "cachenet/sockbuf.h"

struct chunk {
	uint32_t sum;   /* partial sum of the chunk's first nsum bytes */
	uint32_t nsum;  /* bytes summed; == bytes written when sums are kept */
};

struct cn_sbring {
	struct cn_sockbuf sb;
	uint8_t *ring;
	uint32_t size, mask;
	uint32_t head, tail;
	uint32_t seq0;
	uint32_t mss;
	enum cn_sbring_copy copy;
	struct chunk *chunks;
	uint32_t cmask;
	uint32_t c_first;   /* chunk number of the chunk holding head */
	uint32_t c_start;   /* its first stream offset */
	/* anchors: array + LIFO stack of free indices (the stack, not the
	 * anchors, is touched to take and return one) */
	uint8_t *anchors;
	uint32_t astride, nanch, hdr_room;
	uint32_t *afree;
	uint32_t nfree;
	bool ext;           /* ring is caller memory (params.ext_mem): not freed */
	uint64_t iova;      /* I/O address of ring[0] (its VA without ext_mem) */
};

struct cn_sockbuf *cn_sbring_sockbuf(struct cn_sbring *sb)
{
	return &sb->sb;
}

/* The caller's params with every default filled in, or -EINVAL/-ENOSPC. */
static int sbring_params(struct cn_sbring_params *q, const struct cn_sbring_params *p)
{
	if (p == NULL || cn__params_copy(q, sizeof(*q), p) < 0)
		return -EINVAL;
	if (q->bytes == 0)
		q->bytes = CN_SBRING_BYTES_DEFAULT;
	if (q->mss == 0)
		q->mss = q->bytes < CN_SBRING_MSS_DEFAULT ? q->bytes : CN_SBRING_MSS_DEFAULT;
	if (q->anchors == 0)
		q->anchors = CN_SBRING_ANCHORS_DEFAULT;
	if (q->bytes < 4096 || q->bytes > (1u << 30) || (q->bytes & (q->bytes - 1)) ||
	    q->mss > q->bytes || (q->copy != CN_SBRING_COPY_PLAIN && q->copy != CN_SBRING_COPY_CSUM) ||
	    q->hdr_room > 65536)
		return -EINVAL;
	if (q->ext_mem == NULL) {
		q->ext_len = 0;
		q->ext_iova = 0;
		return 0;
	}
	if ((uintptr_t)q->ext_mem % CN_SBRING_EXT_ALIGN != 0 ||
	    q->ext_iova > UINT64_MAX - q->bytes)
		return -EINVAL;
	return q->ext_len < q->bytes ? -ENOSPC : 0;
}

struct cn_sbring *cn_sbring_create(const struct cn_sbring_params *pp)
{
	struct cn_sbring_params q;
	struct cn_sbring *sb;
	uint32_t nchunks, cap = 4, room;
	int rc = sbring_params(&q, pp);

	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	room = q.hdr_room ? (uint32_t)CN_CACHE_ROUND(q.hdr_room) : 128;
	nchunks = q.bytes / q.mss + 3;
	while (cap < nchunks)
		cap <<= 1;
	sb = calloc(1, sizeof(*sb));
	if (sb == NULL)
		return cn__fail(ENOMEM);
	sb->sb.kind = CN_SOCKBUF_RING;
	sb->size = q.bytes;
	sb->mask = q.bytes - 1;
	sb->seq0 = q.seq;
	sb->mss = q.mss;
	sb->copy = q.copy;
	sb->cmask = cap - 1;
	sb->hdr_room = room;
	sb->astride = (uint32_t)sizeof(struct cn_sb_anchor) + room;
	sb->nanch = q.anchors;
	sb->ext = q.ext_mem != NULL;
	sb->iova = q.ext_iova;
	if (sb->ext)
		sb->ring = q.ext_mem;
	sb->chunks = calloc(cap, sizeof(*sb->chunks));
	sb->afree = malloc((size_t)q.anchors * sizeof(uint32_t));
	if (sb->chunks == NULL || sb->afree == NULL ||
	    (!sb->ext && posix_memalign((void **)&sb->ring, 4096, q.bytes) != 0) ||
	    posix_memalign((void **)&sb->anchors, CN_CACHE_LINE, (size_t)q.anchors * sb->astride) != 0) {
		cn_sbring_destroy(sb);
		errno = ENOMEM;
		return NULL;
	}
	if (!sb->ext)
		sb->iova = (uint64_t)(uintptr_t)sb->ring;
	memset(sb->anchors, 0, (size_t)q.anchors * sb->astride);
	/* Index 0 on top: the first anchors used are adjacent in memory. */
	for (uint32_t i = 0; i < q.anchors; i++)
		sb->afree[i] = q.anchors - 1 - i;
	sb->nfree = q.anchors;
	return sb;
}

void cn_sbring_destroy(struct cn_sbring *sb)
{
	if (sb == NULL)
		return;
	if (!sb->ext)
		free(sb->ring);
	free(sb->anchors);
	free(sb->chunks);
	free(sb->afree);
	free(sb);
}

uint64_t cn_sbring_iova(const struct cn_sbring *sb, const void *addr)
{
	uintptr_t off = (uintptr_t)addr - (uintptr_t)sb->ring;

	return off < sb->size ? sb->iova + off : UINT64_MAX;
}

uint32_t cn_sbring_space(const struct cn_sbring *sb)
{
	return sb->size - (sb->tail - sb->head);
}

uint32_t cn_sbring_seq(const struct cn_sbring *sb)
{
	return sb->seq0 + sb->head;
}

void cn_sbring_layout(const struct cn_sbring *sb, uint8_t **base, uint32_t *size, uint32_t *seq0)
{
	*base = sb->ring;
	*size = sb->size;
	*seq0 = sb->seq0;
}

uint32_t cn_sbring_anchors_out(const struct cn_sbring *sb)
{
	return sb->nanch - sb->nfree;
}

/* Write or sum len bytes at the tail, chunk by chunk, wrap by wrap.
 * src == NULL: the bytes are already in the ring (commit). */
static void fill(struct cn_sbring *sb, const uint8_t *src, uint32_t len, bool sum)
{
	uint32_t x = sb->tail;

	while (len > 0) {
		uint32_t rel = x - sb->c_start;
		uint32_t j = sb->c_first + rel / sb->mss, pos = rel % sb->mss;
		uint32_t k = sb->mss - pos < len ? sb->mss - pos : len;
		struct chunk *c = &sb->chunks[j & sb->cmask];

		if (pos == 0)
			c->sum = c->nsum = 0;
		/* The chunk may cross the ring's end: at most two parts. */
		for (uint32_t done = 0; done < k;) {
			uint32_t idx = (x + done) & sb->mask;
			uint32_t part = sb->size - idx < k - done ? sb->size - idx : k - done;
			uint8_t *dst = sb->ring + idx;
			if (sum && c->nsum == pos + done) {
				uint32_t s = src ? cn_csum_copy(dst, src, part, 0)
						 : cn_csum_partial(dst, part, 0);
				c->sum = cn_csum_combine(c->sum, s, pos + done);
				c->nsum += part;
			} else if (src) {
				memcpy(dst, src, part);
			}
			if (src)
				src += part;
			done += part;
		}
		x += k;
		len -= k;
	}
	sb->sb.cc += x - sb->tail;
	sb->tail = x;
}

/* PLAIN mode keeps no chunk sums, so nothing reads the chunk table or
 * c_first/c_start: the bytes go in with one copy (two across the ring's
 * end) and no per-chunk division. */
static inline void fill_plain(struct cn_sbring *sb, const uint8_t *src, uint32_t len)
{
	uint32_t idx = sb->tail & sb->mask, k = sb->size - idx;

	if (src) {
		if (CN_LIKELY(len <= k)) {
			memcpy(sb->ring + idx, src, len);
		} else {
			memcpy(sb->ring + idx, src, k);
			memcpy(sb->ring, src + k, len - k);
		}
	}
	sb->sb.cc += len;
	sb->tail += len;
}

uint32_t cn_sbring_write(struct cn_sbring *sb, const void *src, uint32_t len)
{
	uint32_t space = sb->size - (sb->tail - sb->head);

	if (len > space)
		len = space;
	if (sb->copy == CN_SBRING_COPY_PLAIN)
		fill_plain(sb, src, len);
	else
		fill(sb, src, len, true);
	return len;
}

uint32_t cn_sbring_reserve(struct cn_sbring *sb, struct cn_sb_piece piece[2])
{
	uint32_t space = cn_sbring_space(sb), idx = sb->tail & sb->mask;
	uint32_t k = sb->size - idx < space ? sb->size - idx : space;

	piece[0].base = sb->ring + idx;
	piece[0].len = k;
	piece[1].base = sb->ring;
	piece[1].len = space - k;
	return space;
}

int cn_sbring_commit(struct cn_sbring *sb, uint32_t len, bool sum)
{
	if (len > cn_sbring_space(sb))
		return -EINVAL;
	if (sb->copy == CN_SBRING_COPY_PLAIN)
		fill_plain(sb, NULL, len);
	else
		fill(sb, NULL, len, sum);
	return 0;
}

/* Sum of [x, x + len) from the chunk table, if it covers it exactly. */
static bool stored_sum(const struct cn_sbring *sb, uint32_t x, uint32_t len, uint32_t *out)
{
	uint32_t rel = x - sb->c_start, acc = 0, done = 0;
	uint32_t j;

	if (sb->copy != CN_SBRING_COPY_CSUM || rel % sb->mss != 0 || len == 0)
		return false;
	j = sb->c_first + rel / sb->mss;
	while (done < len) {
		const struct chunk *c = &sb->chunks[j & sb->cmask];
		uint32_t want = len - done < sb->mss ? len - done : sb->mss;
		if (c->nsum != want)
			return false;
		acc = cn_csum_combine(acc, c->sum, done);
		done += want;
		j++;
	}
	*out = acc;
	return true;
}

int cn_sbring_seg(struct cn_sbring *sb, uint32_t off, uint32_t max, struct cn_sb_seg *seg)
{
	uint32_t cc = sb->tail - sb->head, len, x, idx, k;

	if (off > cc)
		return -EINVAL;
	len = cc - off < max ? cc - off : max;
	x = sb->head + off;
	idx = x & sb->mask;
	k = sb->size - idx < len ? sb->size - idx : len;
	seg->off = off;
	seg->len = len;
	seg->seq = sb->seq0 + x;
	seg->m = NULL;
	seg->moff = 0;
	seg->piece[0].base = sb->ring + idx;
	seg->piece[0].len = k;
	seg->piece[1].base = sb->ring;
	seg->piece[1].len = len - k;
	seg->npieces = len == 0 ? 0 : (len > k ? 2 : 1);
	seg->csum = 0;
	seg->csum_valid = sb->copy == CN_SBRING_COPY_CSUM && stored_sum(sb, x, len, &seg->csum);
	return 0;
}

static void advance_head(struct cn_sbring *sb, uint32_t d)
{
	uint32_t k;

	sb->head += d;
	sb->sb.cc -= d;
	if (sb->copy == CN_SBRING_COPY_PLAIN)
		return; /* no chunk sums to keep aligned */
	k = (sb->head - sb->c_start) / sb->mss;
	sb->c_first += k;
	sb->c_start += k * sb->mss;
}

int64_t cn_sbring_release_seq(struct cn_sbring *sb, uint32_t ack)
{
	uint32_t d = ack - (sb->seq0 + sb->head);

	if ((int32_t)d <= 0)
		return 0;
	if (d > sb->tail - sb->head)
		return -EINVAL;
	advance_head(sb, d);
	return d;
}

uint32_t cn__sbring_drop(struct cn_sbring *sb, uint32_t len)
{
	uint32_t cc = sb->tail - sb->head, d = len < cc ? len : cc;

	advance_head(sb, d);
	return d;
}

struct cn_sb_anchor *cn_sbring_anchor_get(struct cn_sbring *sb, uint32_t off, uint32_t len,
					  uint16_t hdr_len)
{
	uint32_t cc = sb->tail - sb->head, x, idx, k;
	struct cn_sb_anchor *a;

	if (CN_UNLIKELY(off > cc || hdr_len > sb->hdr_room))
		return cn__fail(EINVAL);
	if (CN_UNLIKELY(sb->nfree == 0))
		return cn__fail(ENOBUFS);
	a = (struct cn_sb_anchor *)(sb->anchors + (size_t)sb->afree[--sb->nfree] * sb->astride);
	len = cc - off < len ? cc - off : len;
	x = sb->head + off;
	idx = x & sb->mask;
	k = sb->size - idx < len ? sb->size - idx : len;
	a->seq = sb->seq0 + x;
	a->len = len;
	a->hdr_len = hdr_len;
	a->npieces = len > k ? 2 : 1;
	a->hdr = (uint8_t *)(a + 1) + sb->hdr_room - hdr_len;
	a->piece[0] = sb->ring + idx;
	a->piece_len[0] = k;
	a->piece[1] = sb->ring;
	a->piece_len[1] = len - k;
	a->csum = 0;
	a->csum_valid = stored_sum(sb, x, len, &a->csum);
	return a;
}

void cn_sbring_anchor_put(struct cn_sbring *sb, struct cn_sb_anchor *a)
{
	/* The index comes from the address: returning an anchor reads
	 * nothing from it, so a cold anchor costs no miss here. */
	sb->afree[sb->nfree++] = (uint32_t)(((uint8_t *)a - sb->anchors) / sb->astride);
}
