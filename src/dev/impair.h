/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/dev: the impairment engine shared by the lossy link
 * (link.c) and the TAP backend (tap.c).
 *
 * Per frame, in this order, each from one xorshift64* generator with a
 * fixed seed (a rate of 0 draws nothing, so turning one impairment off
 * does not shift the others' sequence):
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

#include "cachenet/mbuf.h"
#include "cachenet/netdev.h"
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

/* Rates must be in [0, 1] (checked by the caller, which may be stricter);
 * a zero seed picks a fixed non-zero one (a zero state would stay zero).
 * Counts go to @st (zeroed here), which the owner exposes. */
CN_INTERNAL void cn__impair_init(struct cn__impair *im, const struct cn_link_params *p,
				 struct cn_link_stats *st);

/* True when the rates are numbers in [0, max_loss] for loss and [0, 1]
 * for the others (NaN fails). */
CN_INTERNAL bool cn__impair_params_ok(const struct cn_link_params *p, double max_loss);

/* One frame through the engine: zero, one, two or three calls of @out
 * (this frame, its duplicate, the frame held before it). */
CN_INTERNAL void cn__impair_frame(struct cn__impair *im, struct cn__impair_dir *d,
				  const uint8_t *frame, uint32_t len, cn__impair_out_fn out,
				  void *arg);

/* Deliver the held frame of @d, if any. @return true if there was one. */
CN_INTERNAL bool cn__impair_flush(struct cn__impair_dir *d, cn__impair_out_fn out, void *arg);

#endif
