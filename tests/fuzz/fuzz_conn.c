/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz target for connection management (conn.h) behind the fast path:
 * frames into cn_net_input() of a stack whose slow-path hook is a cn_conn
 * with a listener on port 80 (connections accepted, echoed a little,
 * closed after a while) and an active open in progress to 192.168.0.2:5555
 * (its MAC known, so the SYN is out). ARP, ICMP, SYNs, handshake segments,
 * RSTs, FINs: whatever a peer could send. Input: one flags byte, then
 * frames, each a 2-byte big-endian length and that many bytes. Flags: bit
 * 0 fix the IPv4, ICMP and L4 checksums of each frame (so the fuzzer
 * reaches the state machines), bit 1 refuse timestamps, bit 2 refuse
 * window scaling, bit 3 ring send buffers. Between frames the clock
 * advances and cn_conn_poll() runs. The stack is created once; each input
 * has a connection manager of its own, destroyed at its end (with every
 * socket and TCB), after which every pool must be back to its start
 * counts and no descriptor out: a leak aborts. A listener of backlog 8
 * past which SYNs get cookies, and cookie ACKs, are in the corpus.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "cachenet/conn.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cn_sock *acc[MAXS];
	unsigned nacc = 0;

	if (size < 1 || size > 1 << 16)
		return 0;
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 1}, .addr = CN_IPV4(192, 168, 0, 1),
				   .tx_descs = 64, .max_conns = MAXS + 4};
	struct cn_net *net = fz_net(&np, 4096, 1024);
	fz_begin();

	uint8_t fl = data[0];
	struct cn_conn_params cpar = {
		.tcp = {.rcvbuf_size = 32768, .ooo_max = 8, .delack_ticks = 5, .rto_init = 50,
			.sndbuf = (fl & 8) ? CN_SOCKBUF_RING : CN_SOCKBUF_CHAIN,
			.sndbuf_size = 1 << 16},
		.no_ts = (fl & 2) != 0,
		.no_wscale = (fl & 4) != 0,
		.max_socks = MAXS + 4,
		.syn_rto = 40,
		.time_wait = 60,
		.arp_retry = 40,
		.orphan_timeout = 400,
		.isn_secret = 0x0123456789abcdefull,
	};
	struct cn_conn *c = cn_conn_create(net, &cpar);
	if (!c)
		abort();
	static const uint8_t peer_mac[6] = {2, 0, 0, 0, 0, 2};
	uint64_t now = 1;
	cn_conn_poll(c, now);
	if (cn_conn_arp_add(c, CN_IPV4(192, 168, 0, 2), peer_mac) != 0)
		abort();
	struct cn_sock *l = cn_sock_listen(c, CN_BE16(80), 8);
	struct cn_sock *cl = cn_sock_connect(c, CN_IPV4(192, 168, 0, 2), CN_BE16(5555), now);
	if (!l || !cl)
		abort();

	size_t at = 1;
	unsigned nframe = 0;
	while (at + 2 <= size) {
		uint32_t len = (uint32_t)data[at] << 8 | data[at + 1];
		at += 2;
		struct cn_mbuf *m = fz_take(data, size, &at, &len, 2, fl & 1);
		enum cn_drop r = cn_net_input(net, m, now);
		if ((unsigned)r >= CN_DROP_MAX)
			abort();
		now += 7;
		cn_conn_poll(c, now);
		/* The application: accept, echo a little, close some. */
		struct cn_sock *s;
		while (nacc < MAXS && (s = cn_sock_accept(l)))
			acc[nacc++] = s;
		for (unsigned i = 0; i < nacc; i++) {
			uint8_t buf[512];
			int n = cn_sock_recv(acc[i], buf, sizeof(buf), now);
			if (n > 0)
				(void)cn_sock_send(acc[i], buf, (uint32_t)n, now);
			if (n == 0 || (n < 0 && n != -EAGAIN) || (nframe + i) % 5 == 4) {
				cn_sock_close(acc[i], now);
				acc[i--] = acc[--nacc];
			}
		}
		if (cl) {
			uint8_t buf[512];
			(void)cn_sock_send(cl, "hello", 5, now);
			int n = cn_sock_recv(cl, buf, sizeof(buf), now);
			if (n == 0 || (n < 0 && n != -EAGAIN && n != -ENOTCONN)) {
				cn_sock_close(cl, now);
				cl = NULL;
			}
		}
		nframe++;
	}
	/* Every socket the application holds or gave back is freed here,
	 * TCBs and buffers with it. */
	cn_conn_destroy(c);
	fz_end(net, false);
	return 0;
}
