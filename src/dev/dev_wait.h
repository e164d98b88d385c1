/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/dev: the wait both device backends (tap.c, afxdp.c)
 * offer their callers, on the descriptor that signals received frames. */
#ifndef CN_DEV_WAIT_H
#define CN_DEV_WAIT_H

#include <errno.h>
#include <poll.h>

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
