/* SPDX-License-Identifier: BSD-2-Clause */
/* A lossy link between two devices. Each direction rolls, per frame, loss,
 * corruption (one byte XORed with a non-zero value, so every corruption
 * changes the frame), duplication and reordering (the frame is held and
 * delivered right after the next one in its direction), from one
 * xorshift64* generator with a fixed seed: a run is reproducible. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dev_impl.h"

struct dir {
	struct cn_link *l;
	struct cn_netdev *to;
	uint32_t held_len;
	bool held;
	uint8_t held_buf[CN_MBUF_JUMBO_SIZE];
	uint8_t buf[CN_MBUF_JUMBO_SIZE];
};

struct cn_link {
	struct cn_link_params p;
	struct cn_link_stats st;
	uint64_t rs;
	struct dir d[2];
};

static uint64_t rnd(struct cn_link *l)
{
	l->rs ^= l->rs >> 12;
	l->rs ^= l->rs << 25;
	l->rs ^= l->rs >> 27;
	return l->rs * 2685821657736338717ull;
}

static bool roll(struct cn_link *l, double p)
{
	return p > 0 && (double)(rnd(l) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static void frame_in(void *arg, const uint8_t *frame, uint32_t len)
{
	struct dir *d = arg;
	struct cn_link *l = d->l;

	if (len > sizeof(d->buf))
		return;
	l->st.frames++;
	if (roll(l, l->p.loss)) {
		l->st.lost++;
		return;
	}
	memcpy(d->buf, frame, len);
	if (len && roll(l, l->p.corrupt)) {
		l->st.corrupted++;
		d->buf[rnd(l) % len] ^= (uint8_t)(1 + rnd(l) % 255);
	}
	if (!d->held && roll(l, l->p.reorder)) {
		l->st.reordered++;
		memcpy(d->held_buf, d->buf, len);
		d->held_len = len;
		d->held = true;
		return;
	}
	cn_netdev_nic_rx(d->to, d->buf, len);
	if (roll(l, l->p.duplicate)) {
		l->st.duplicated++;
		cn_netdev_nic_rx(d->to, d->buf, len);
	}
	if (d->held) {
		d->held = false;
		cn_netdev_nic_rx(d->to, d->held_buf, d->held_len);
	}
}

struct cn_link *cn_link_create(struct cn_netdev *a, struct cn_netdev *b,
			       const struct cn_link_params *p)
{
	struct cn_link *l;

	if (!a || !b || !p || p->loss < 0 || p->loss >= 1 || p->reorder < 0 || p->duplicate < 0 ||
	    p->corrupt < 0) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	l->p = *p;
	l->rs = p->seed ? p->seed : 0x9e3779b97f4a7c15ull;
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
		if (l->d[i].held) {
			l->d[i].held = false;
			cn_netdev_nic_rx(l->d[i].to, l->d[i].held_buf, l->d[i].held_len);
		}
}

void cn_link_destroy(struct cn_link *l)
{
	free(l);
}

const struct cn_link_stats *cn_link_stats(const struct cn_link *l)
{
	return &l->st;
}
