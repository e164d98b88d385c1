/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the stack fuzz targets (tcp_input, conn, reass) share: one stack
 * per process with its mbuf pools, a transmit hook that gathers what the
 * stack sends and drops it, the checksum fix-up that lets mutated frames
 * past the checksum checks, frames copied into cluster mbufs, and the
 * leak check at the end of every input.
 */
#ifndef CN_FUZZ_COMMON_H
#define CN_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachenet/mbuf.h"
#include "cachenet/net.h"

/* The stack of this process, created on the first call from np (its
 * mpool and cpool are filled in from pools of nsmall small mbufs and
 * nclust clusters; a NULL xmit becomes fz_xmit); later calls return it.
 * Aborts when anything cannot be created. */
struct cn_net *fz_net(struct cn_net_params *np, uint32_t nsmall, uint32_t nclust);

/* The pools behind fz_net's stack. */
struct cn_mbuf_pool *fz_mpool(void);
struct cn_mbuf_pool *fz_cpool(void);

/* Transmit hook: gathers the packet (checksum offload included) into a
 * scratch buffer when it fits, frees it, returns 0. */
int fz_xmit(void *arg, struct cn_pkt *p);

/* Rewrites the IPv4 header checksum of the Ethernet frame f[0..len) and,
 * unless it is a fragment, its TCP, UDP or ICMP checksum, so that what
 * the fuzzer mutated reaches the code behind the checksum checks. Frames
 * that are not IPv4 or too short for their headers stay as they are. */
void fz_fix_csums(uint8_t *f, uint32_t len);

/* A cluster mbuf holding min(len, room) bytes of src at headroom bytes
 * from its start; *len becomes the bytes taken. Aborts when the pools are
 * empty (a leak). */
struct cn_mbuf *fz_frame(const uint8_t *src, uint32_t *len, uint32_t headroom);

/* The next frame of a fuzz input: *len bytes at data[*at] (fewer where
 * the input or the cluster ends) through fz_frame, *at moved past them,
 * and their checksums made valid (fz_fix_csums) when fix is true. */
struct cn_mbuf *fz_take(const uint8_t *data, size_t size, size_t *at, uint32_t *len,
			uint32_t headroom, bool fix);

/* Remembers the pools' counts at the start of an input. */
void fz_begin(void);

/* The end of an input: no packet descriptor out and every mbuf back
 * (to the count fz_begin saw, or to none when from_zero); aborts with a
 * message otherwise. */
void fz_end(struct cn_net *net, bool from_zero);

#endif
