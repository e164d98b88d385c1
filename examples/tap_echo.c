/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A TCP echo server on a Linux TAP device: the TAP backend, the fast path
 * and the connection manager (ARP, ICMP echo, open and close). Run as root
 * in a network namespace of your own:
 *
 *   ip netns add cn
 *   ip netns exec cn ip tuntap add dev cn0 mode tap
 *   ip netns exec cn ip link set cn0 up
 *   ip netns exec cn ip addr add 10.77.0.1/24 dev cn0
 *   ip netns exec cn ./tap_echo cn0 10.77.0.2 7 &
 *   ip netns exec cn sh -c 'echo hello | nc -N 10.77.0.2 7'
 *
 * It serves connections until it has closed argv[4] of them (0: forever).
 *
 *   cc tap_echo.c $(pkg-config --cflags --libs cachenet)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/random.h>

#include <cachenet/conn.h>
#include <cachenet/tap.h>

#define MAX_CONNS 64

struct conn {
	struct cn_sock *s;
	uint8_t buf[16384];
	int len, off; /* bytes received and not yet echoed: buf[off, len) */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Echo what arrived; false once the connection is over. */
static bool serve(struct conn *c, uint64_t now)
{
	for (;;) {
		if (c->off < c->len) {
			int n = cn_sock_send(c->s, c->buf + c->off, (uint32_t)(c->len - c->off), now);
			if (n < 0)
				return false;  /* reset or closed under us */
			c->off += n;
			if (c->off < c->len)
				return true;   /* send buffer full: later */
		}
		c->off = c->len = 0;
		int n = cn_sock_recv(c->s, c->buf, sizeof(c->buf), now);
		if (n <= 0)
			return n == -EAGAIN; /* else end of stream (0) or an error */
		c->len = n;
	}
}

int main(int argc, char **argv)
{
	struct in_addr ip;

	if (argc < 4 || inet_pton(AF_INET, argv[2], &ip) != 1) {
		fprintf(stderr, "usage: %s IFNAME ADDRESS PORT [CONNECTIONS]\n", argv[0]);
		return 2;
	}
	long closes = argc > 4 ? atol(argv[4]) : 0, closed = 0;
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SMALL, .count = 8192};
	struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 8192};
	struct cn_mbuf_pool *small = cn_mbuf_pool_create(&sp), *clusters = cn_mbuf_pool_create(&cp);
	struct cn_tap_params tp = {.ifname = argv[1], .mpool = small, .cpool = clusters};
	struct cn_tap *tap = small && clusters ? cn_tap_open(&tp) : NULL;
	if (!tap) {
		perror("cannot open the TAP device");
		return 1;
	}
	struct cn_net_params np = {.addr = CN_BE32_FROM_RAW(ip.s_addr), .mpool = small, .cpool = clusters,
				   .mac = {0x02, 0, 0, 0, 0, 0x02}, /* locally administered */
				   .xmit = cn_tap_xmit_hook, .xmit_arg = tap};
	struct cn_net *net = cn_net_create(&np);
	struct cn_conn_params cpar = {0}; /* its ISN key, random (RFC 6528) */
	bool keyed = getrandom(&cpar.isn_secret, 8, 0) == 8;
	struct cn_conn *cm = net && keyed ? cn_conn_create(net, &cpar) : NULL;
	struct cn_sock *ls = cm ? cn_sock_listen(cm, cn_htobe16((uint16_t)atoi(argv[3])), 16) : NULL;
	if (!ls) {
		perror("cannot set up the stack");
		return 1;
	}
	static struct conn conns[MAX_CONNS]; /* a free one: s NULL, len = off = 0 */
	while (closes == 0 || closed < closes) {
		cn_tap_wait(tap, 10);
		uint64_t now = now_ms();
		while (cn_tap_poll(tap, net, now) == 32) /* a full batch: more may wait */
			;
		cn_conn_poll(cm, now);
		for (struct conn *c = conns; c < conns + MAX_CONNS; c++) {
			if (!c->s) /* a free slot takes the next waiting connection, if any */
				c->s = cn_sock_accept(ls);
			if (c->s && !serve(c, now)) {
				cn_sock_close(c->s, now); /* FIN after what is queued */
				c->s = NULL;
				c->len = c->off = 0;
				closed++;
			}
		}
	}
	/* Let the last FINs and ACKs go out before leaving. */
	for (uint64_t end = now_ms() + 500; now_ms() < end;) {
		cn_tap_wait(tap, 10);
		while (cn_tap_poll(tap, net, now_ms()) == 32)
			;
		cn_conn_poll(cm, now_ms());
	}
	printf("served %ld connections\n", closed);
	cn_conn_destroy(cm);
	cn_net_destroy(net);
	cn_tap_close(tap);
	return 0;
}
