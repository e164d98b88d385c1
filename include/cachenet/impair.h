/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file impair.h
 * Frame impairment parameters and counters: loss, reordering, duplication
 * and corruption at fixed rates, drawn from a generator with a fixed start
 * value so a run repeats exactly. The TAP backend applies them inside the
 * device (cn_tap_params.impair); the laboratory's lossy link between two
 * in-memory NICs (cachenet/lab/netdev.h) uses the same engine.
 *
 * Per frame, in this order: loss (dropped, counted); corruption (one byte
 * XORed with a non-zero value, so the frame always changes); reordering
 * (held and delivered right after the next frame in its direction);
 * otherwise delivered, then duplication delivers it a second time.
 */
#ifndef CACHENET_IMPAIR_H
#define CACHENET_IMPAIR_H

#include "cachenet/common.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Impairment rates, each a probability in [0, 1] per frame. Every zero
 *  field takes its default (common.h): an all-zero struct impairs
 *  nothing. */
struct cn_link_params {
	uint32_t size;      /**< sizeof(struct cn_link_params), or 0 (common.h) */
	double loss;        /**< probability a frame is lost */
	double reorder;     /**< probability a frame is held back behind the next */
	double duplicate;   /**< probability a frame is delivered twice */
	double corrupt;     /**< probability one byte of the frame is flipped */
	uint64_t rng_start; /**< generator start value: the same run every time
	                         (0 = a fixed non-zero value) */
};

/** Impairment counters (frames seen, and what was done to them). */
struct cn_link_stats {
	uint64_t frames; /**< frames offered */
	uint64_t lost; /**< frames dropped */
	uint64_t reordered; /**< frames held back and sent after the next */
	uint64_t duplicated; /**< frames sent twice */
	uint64_t corrupted; /**< frames with a byte changed */
};

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_IMPAIR_H */
