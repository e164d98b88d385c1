/* SPDX-License-Identifier: BSD-2-Clause */
/* The impairment engine: loss, corruption, reordering and duplication
 * decided from a seeded xorshift64* generator (see impair.h for the order
 * of the draws, which fixes what a seed does). */
#include <string.h>

#include "impair.h"

static uint64_t rnd(struct cn__impair *im)
{
	im->rs ^= im->rs >> 12;
	im->rs ^= im->rs << 25;
	im->rs ^= im->rs >> 27;
	return im->rs * 2685821657736338717ull;
}

/* 53 random bits as a double in [0, 1): p = 1 always hits, p = 0 never
 * draws. */
static bool roll(struct cn__impair *im, double p)
{
	return p > 0 && (double)(rnd(im) >> 11) * (1.0 / 9007199254740992.0) < p;
}

void cn__impair_init(struct cn__impair *im, const struct cn_link_params *p,
		     struct cn_link_stats *st)
{
	memset(im, 0, sizeof(*im));
	memset(st, 0, sizeof(*st));
	im->p = *p;
	im->st = st;
	im->rs = p->seed ? p->seed : 0x9e3779b97f4a7c15ull;
}

static bool rate_ok(double r, double max)
{
	return r >= 0 && r <= max; /* false for NaN */
}

bool cn__impair_params_ok(const struct cn_link_params *p, double max_loss)
{
	return p && rate_ok(p->loss, max_loss) && rate_ok(p->reorder, 1) &&
	       rate_ok(p->duplicate, 1) && rate_ok(p->corrupt, 1);
}

void cn__impair_frame(struct cn__impair *im, struct cn__impair_dir *d, const uint8_t *frame,
		      uint32_t len, cn__impair_out_fn out, void *arg)
{
	if (len > sizeof(d->buf))
		return;
	im->st->frames++;
	if (roll(im, im->p.loss)) {
		im->st->lost++;
		return;
	}
	memcpy(d->buf, frame, len);
	if (len && roll(im, im->p.corrupt)) {
		/* value first, then position: the order gcc and clang both
		 * gave the expression this replaced, so seeds keep their runs */
		uint8_t x = (uint8_t)(1 + rnd(im) % 255);
		im->st->corrupted++;
		d->buf[rnd(im) % len] ^= x;
	}
	if (!d->held && roll(im, im->p.reorder)) {
		im->st->reordered++;
		memcpy(d->held_buf, d->buf, len);
		d->held_len = len;
		d->held = true;
		return;
	}
	out(arg, d->buf, len);
	if (roll(im, im->p.duplicate)) {
		im->st->duplicated++;
		out(arg, d->buf, len);
	}
	cn__impair_flush(d, out, arg);
}

bool cn__impair_flush(struct cn__impair_dir *d, cn__impair_out_fn out, void *arg)
{
	if (!d->held)
		return false;
	d->held = false;
	out(arg, d->held_buf, d->held_len);
	return true;
}
