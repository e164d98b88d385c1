/* SPDX-License-Identifier: BSD-2-Clause */
/* udpblast HOST PORT SECONDS [SIZE]: a Linux UDP sender for the stream
 * measurements (stream.py). One connected socket sends SIZE-byte
 * datagrams (default 1472: 1514-byte frames) with sendmmsg in batches of
 * 64 for SECONDS, and prints {"sent":N,"seconds":S,"pps":R}. A send the
 * socket refuses (full queue) is retried, not counted. Faster than a
 * Python loop by the interpreter's per-datagram cost, so that the
 * kernel's own path is what bounds it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	enum { BATCH = 64 };
	static char buf[65536];
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct mmsghdr mm[BATCH];
	struct iovec iov;
	unsigned long long sent = 0;
	int s, sndbuf = 1 << 22;

	if (argc < 4) {
		fprintf(stderr, "usage: udpblast HOST PORT SECONDS [SIZE]\n");
		return 2;
	}
	size_t size = argc > 4 ? strtoul(argv[4], NULL, 10) : 1472;
	double secs = strtod(argv[3], NULL);
	if (size > sizeof(buf) || inet_pton(AF_INET, argv[1], &a.sin_addr) != 1) {
		fprintf(stderr, "udpblast: bad host or size\n");
		return 2;
	}
	a.sin_port = htons((unsigned short)atoi(argv[2]));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0 || connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("udpblast: socket");
		return 1;
	}
	setsockopt(s, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	iov.iov_base = buf;
	iov.iov_len = size;
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < BATCH; i++) {
		mm[i].msg_hdr.msg_iov = &iov;
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	double t0 = now(), end = t0 + secs, t;
	do {
		int n = sendmmsg(s, mm, BATCH, 0);
		if (n > 0)
			sent += (unsigned)n;
		else if (n < 0 && errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
			 errno != ECONNREFUSED) {
			perror("udpblast: sendmmsg");
			return 1;
		}
	} while ((t = now()) < end);
	printf("{\"sent\":%llu,\"seconds\":%.6f,\"pps\":%.1f}\n", sent, t - t0, sent / (t - t0));
	return 0;
}
