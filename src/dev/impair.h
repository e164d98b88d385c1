/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to the sources: the impairment engine of the TAP backend
 * (src/dev/tap.c), which the laboratory's lossy link (src/lab/nic/link.c)
 * runs too. Not installed. Its functions are static, one copy in each
 * file that includes this header: the two libraries are separate shared
 * objects and the product exports no internal names, so the link cannot
 * call the product's copy; this way both run one source.
 *
 * Per frame, in this order, each from one xorshift64* generator with a
 * fixed start value (a rate of 0 draws nothing, so turning one impairment
 * off does not shift the others' sequence):
 *  1. loss: the frame is counted and dropped;
 *  2. corruption: one byte XORed with a non-zero value (two draws: the
 *     value 1 + r % 255 first, then the position r % len), so every
 *     corruption changes the frame;
 *  3. reordering, when no frame is held in this direction: the frame is
 *     held and delivered right after the next one in its direction (or at
 *     cn__impair_flush);
 *  4. otherwise delivered; then duplication delivers it a second time;
 *     then a frame held earlier follows it.
 * A frame longer than CN_MBUF_JUMBO_SIZE is dropped before the draws, not
 * counted (nothing that large crosses either device).
 *
 * One struct cn__impair is one generator with its counters; one struct
 * cn__impair_dir is one direction's held frame and work buffer. The link
 * drives its two directions from one generator (as it always did); the
 * TAP gives each direction its own, so each direction's decisions depend
 * only on its own frame sequence and not on how the kernel interleaves
 * them. */
#ifndef CN_DEV_IMPAIR_H
#define CN_DEV_IMPAIR_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cachenet/impair.h"
#include "cachenet/mbuf.h"
#include "cn_internal.h"

struct cn__impair {
	struct cn_link_params p;
	struct cn_link_stats *st;  /* the owner's counters */
	uint64_t rs;
};

struct cn__impair_dir {
	uint32_t held_len;
	bool held;
	uint8_t held_buf[CN_MBUF_JUMBO_SIZE];
	uint8_t buf[CN_MBUF_JUMBO_SIZE];
};

/* Where a frame leaving the engine goes; the bytes are valid during the
 * call only. */
typedef void (*cn__impair_out_fn)(void *arg, const uint8_t *frame, uint32_t len);

static CN__UNUSED uint64_t cn__impair_rnd(struct cn__impair *im)
{
	im->rs ^= im->rs >> 12;
	im->rs ^= im->rs << 25;
	im->rs ^= im->rs >> 27;
	return im->rs * 2685821657736338717ull;
}

/* 53 random bits as a double in [0, 1): p = 1 always hits, p = 0 never
 * draws. */
static CN__UNUSED bool cn__impair_roll(struct cn__impair *im, double p)
{
	return p > 0 && (double)(cn__impair_rnd(im) >> 11) * (1.0 / 9007199254740992.0) < p;
}

/* Rates must be in [0, 1] (checked by the caller, which may be stricter);
 * a zero start value (p->rng_start) picks a fixed non-zero one (a zero state
 * would stay zero).
 * Counts go to @st (zeroed here), which the owner exposes. */
static CN__UNUSED void cn__impair_init(struct cn__impair *im, const struct cn_link_params *p,
				       struct cn_link_stats *st)
{
	memset(im, 0, sizeof(*im));
	memset(st, 0, sizeof(*st));
	if (cn__params_copy(&im->p, sizeof(im->p), p) < 0) /* checked by params_ok */
		memset(&im->p, 0, sizeof(im->p));
	im->st = st;
	im->rs = im->p.rng_start ? im->p.rng_start : 0x9e3779b97f4a7c15ull;
}

static CN__UNUSED bool cn__impair_rate_ok(double r, double max)
{
	return r >= 0 && r <= max; /* false for NaN */
}

/* True when the size is accepted (common.h) and the rates are numbers in
 * [0, max_loss] for loss and [0, 1] for the others (NaN fails). */
static CN__UNUSED bool cn__impair_params_ok(const struct cn_link_params *pp, double max_loss)
{
	struct cn_link_params q, *p = &q;

	return pp && cn__params_copy(&q, sizeof(q), pp) == 0 && cn__impair_rate_ok(p->loss, max_loss) && cn__impair_rate_ok(p->reorder, 1) &&
	       cn__impair_rate_ok(p->duplicate, 1) && cn__impair_rate_ok(p->corrupt, 1);
}

/* Deliver the held frame of @d, if any. @return true if there was one. */
static CN__UNUSED bool cn__impair_flush(struct cn__impair_dir *d, cn__impair_out_fn out,
					void *arg)
{
	if (!d->held)
		return false;
	d->held = false;
	out(arg, d->held_buf, d->held_len);
	return true;
}

/* One frame through the engine: zero, one, two or three calls of @out
 * (this frame, its duplicate, the frame held before it). */
static CN__UNUSED void cn__impair_frame(struct cn__impair *im, struct cn__impair_dir *d,
					const uint8_t *frame, uint32_t len,
					cn__impair_out_fn out, void *arg)
{
	if (len > sizeof(d->buf))
		return;
	im->st->frames++;
	if (cn__impair_roll(im, im->p.loss)) {
		im->st->lost++;
		return;
	}
	memcpy(d->buf, frame, len);
	if (len && cn__impair_roll(im, im->p.corrupt)) {
		/* value first, then position: the order gcc and clang both
		 * gave the expression this replaced, so a start value keeps its run */
		uint8_t x = (uint8_t)(1 + cn__impair_rnd(im) % 255);
		im->st->corrupted++;
		d->buf[cn__impair_rnd(im) % len] ^= x;
	}
	if (!d->held && cn__impair_roll(im, im->p.reorder)) {
		im->st->reordered++;
		memcpy(d->held_buf, d->buf, len);
		d->held_len = len;
		d->held = true;
		return;
	}
	out(arg, d->buf, len);
	if (cn__impair_roll(im, im->p.duplicate)) {
		im->st->duplicated++;
		out(arg, d->buf, len);
	}
	cn__impair_flush(d, out, arg);
}

/* The RX side of a device: a frame leaving the engine is copied into a
 * fresh cluster at @p off and appended to the device's queue @p q of
 * @p qsize (a power of two) with free-running @p head and @p *tail.
 * @return 0, or -1 when the queue is full or no cluster is free (the
 * caller counts the loss; the bytes are dropped). */
static CN__UNUSED int cn__impair_rx_queue(struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp,
					  uint32_t off, const uint8_t *frame, uint32_t len,
					  struct cn_mbuf **q, uint32_t qsize, uint32_t head,
					  uint32_t *tail)
{
	struct cn_mbuf *m;

	if (*tail - head >= qsize)
		return -1;
	m = cn_mbuf_get_cluster(mp, cp);
	if (!m)
		return -1;
	m->data = m->buf + off;
	memcpy(m->data, frame, len);
	m->len = m->pkt_len = len;
	q[(*tail)++ % qsize] = m;
	return 0;
}

#endif
