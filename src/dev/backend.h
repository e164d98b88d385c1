/* SPDX-License-Identifier: BSD-2-Clause */
/* What the device backends share (src/dev: tap.c, afxdp.c; and the DPDK
 * adapter, src/adapters/dpdk): never installed. */
#ifndef CN_DEV_BACKEND_H
#define CN_DEV_BACKEND_H

#include <errno.h>
#include <poll.h>
#include <stdint.h>

#include "cachenet/tsc.h"

/* A receive burst that found @p k frames, counted: an empty one (its
 * ticks since @p t0 added to @p tsc) returns false, for the caller to
 * return 0 at once; else the burst is counted and true returned. The
 * counters are the device's own statistics fields. */
static inline int cn__rx_burst_counted(uint32_t k, uint64_t *bursts, uint64_t *empty,
				       uint64_t *tsc, uint64_t t0)
{
	if (k == 0) {
		(*empty)++;
		*tsc += cn_tsc_end() - t0;
		return 0;
	}
	(*bursts)++;
	return 1;
}

/* The wait both kernel-descriptor backends (tap.c, afxdp.c) offer their
 * callers, on the descriptor that signals received frames. */
/* Wait up to @p timeout_ms (-1: forever, 0: not at all) for @p fd to be
 * readable. @return 1 readable, 0 timeout, -errno from poll(2), -EIO on
 * POLLERR, POLLHUP or POLLNVAL. */
static inline int cn__dev_wait_fd(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	int rc = poll(&pfd, 1, timeout_ms);

	if (rc < 0)
		return -errno;
	if (rc == 0)
		return 0;
	if (pfd.revents & POLLIN)
		return 1;
	return -EIO;
}

#endif
