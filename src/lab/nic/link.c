/* SPDX-License-Identifier: BSD-2-Clause */
/* A lossy link between two devices. Each direction rolls, per frame, loss,
 * corruption (one byte XORed with a non-zero value, so every corruption
 * changes the frame), duplication and reordering (the frame is held and
 * delivered right after the next one in its direction), from one
 * xorshift64* generator with a fixed start value shared by both
 * directions: a run is reproducible. The decisions are the impairment engine's (impair.h),
 * which the TAP backend uses too. */
#include <errno.h>
#include <stdlib.h>

#include "dev_impl.h"
#include "../../dev/impair.h"

struct dir {
	struct cn_link *l;
	struct cn_netdev *to;
	struct cn__impair_dir im;
};

struct cn_link {
	struct cn__impair im;
	struct cn_link_stats st;
	struct dir d[2];
};

static void deliver(void *arg, const uint8_t *frame, uint32_t len)
{
	struct dir *d = arg;

	cn_netdev_nic_rx(d->to, frame, len);
}

static void frame_in(void *arg, const uint8_t *frame, uint32_t len)
{
	struct dir *d = arg;

	cn__impair_frame(&d->l->im, &d->im, frame, len, deliver, d);
}

struct cn_link *cn_link_create(struct cn_netdev *a, struct cn_netdev *b,
			       const struct cn_link_params *p)
{
	struct cn_link_params q;
	struct cn_link *l;

	if (!a || !b || !p || cn__params_copy(&q, sizeof(q), p) < 0 || q.loss < 0 || q.loss >= 1 ||
	    q.reorder < 0 || q.duplicate < 0 || q.corrupt < 0)
		return cn__fail(EINVAL);
	l = calloc(1, sizeof(*l));
	if (!l)
		return cn__fail(ENOMEM);
	cn__impair_init(&l->im, p, &l->st);
	l->d[0].l = l->d[1].l = l;
	l->d[0].to = b;
	l->d[1].to = a;
	cn_netdev_set_wire(a, frame_in, &l->d[0]);
	cn_netdev_set_wire(b, frame_in, &l->d[1]);
	return l;
}

void cn_link_flush(struct cn_link *l)
{
	for (int i = 0; i < 2; i++)
		cn__impair_flush(&l->d[i].im, deliver, &l->d[i]);
}

void cn_link_destroy(struct cn_link *l)
{
	free(l);
}

const struct cn_link_stats *cn_link_stats(const struct cn_link *l)
{
	return &l->st;
}
