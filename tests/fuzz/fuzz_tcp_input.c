/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Fuzz target for the receive path: frames into cn_net_input() of a stack
 * with one established TCP connection (and a UDP socket), as a peer could
 * send them. Input: one flags byte, then frames, each a 2-byte big-endian
 * length and that many bytes. Flags: bit 0 fix the IPv4 and L4 checksums
 * of each frame before feeding it (so the fuzzer reaches the TCP state
 * machine), bit 1 timestamps on, bit 2 out-of-order queue and SACK on
 * (SACK blocks sent for the queue, received ones on the scoreboard), bit 3 post a
 * receive buffer (fused copy path), bit 4 ring send buffer, bits 5-7 the
 * number of bytes the connection has in flight (x 1000) so ACKs matter.
 * A frame's length field uses its low 14 bits; bit 15 hands the frame
 * over as a 2-mbuf chain, as a header-splitting NIC does, and is followed
 * by one byte, the cut: 0 where the headers end (as cn_net_parse finds
 * them; the frame stays whole when it has no byte after them or does not
 * parse), else that byte offset (at most the frame's length - 1); the
 * first part goes to a small mbuf, the rest to a cluster, at the place it
 * would have in an unsplit frame when bit 14 is set (room to join them
 * back), else at the cluster's first byte (only a pullup can).
 * Between frames the clock advances and timers run. The stack is created
 * once (what it keeps between inputs is the descriptor pool and counters,
 * none of which steers the input path); each input opens its connection
 * and socket and closes them at the end, after which every pool must be
 * back to its start counts and no descriptor out: a leak aborts. Frames
 * our stack sends are gathered (checksum offload included) and discarded.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/tcp.h"
#include "cachenet/udp.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t post[1 << 16], payload[8000];

	if (size < 1 || size > 1 << 16)
		return 0;
	struct cn_net_params np = {.mac = {2, 0, 0, 0, 0, 1}, .addr = CN_IPV4(192, 168, 0, 1),
				   .tx_descs = 64};
	struct cn_net *net = fz_net(&np, 4096, 1024);
	fz_begin();

	uint8_t fl = data[0];
	struct cn_tcp_params tp = {.laddr = CN_IPV4(192, 168, 0, 1), .raddr = CN_IPV4(192, 168, 0, 2), .lport = CN_BE16(80),
				   .rport = CN_BE16(5555), .iss = 1000, .irs = 2000, .mss = 1460,
				   .snd_wnd = 65535, .rcvbuf_size = 32768, .ts = (fl & 2) != 0,
				   .ooo_max = (fl & 4) ? 8 : 0, .sack = (fl & 4) != 0,
				   .delack_ticks = 5, .rto_init = 50,
				   .sndbuf = (fl & 16) ? CN_SOCKBUF_RING : CN_SOCKBUF_CHAIN,
				   .sndbuf_size = 1 << 16};
	struct cn_tcb *tcb = cn_tcp_open(net, &tp);
	struct cn_udp_params up = {.lport = CN_BE16(53), .rx_csum = true};
	struct cn_udp_sock *us = cn_udp_open(net, &up);
	if (!tcb || !us)
		abort();
	if (fl & 8)
		cn_tcp_recv_post(tcb, post, sizeof(post));
	uint64_t now = 1;
	if (fl >> 5)
		cn_tcp_send(tcb, payload, (fl >> 5) * 1000u, now);

	size_t at = 1;
	while (at + 2 <= size) {
		uint32_t len = (uint32_t)data[at] << 8 | data[at + 1], cut = 0;
		bool split = (len & 0x8000u) != 0, room = (len & 0x4000u) != 0;
		at += 2;
		len &= 0x3fffu;
		if (split) {
			if (at >= size)
				break;
			cut = data[at++];
		}
		struct cn_mbuf *m = fz_take(data, size, &at, &len, 2, fl & 1);
		if (split) {
			struct cn_pkt_info pi;
			if (cut == 0 && cn_net_parse(m->data, len, 0, &pi) == CN_DROP_NONE)
				cut = pi.pay_off;
			if (cut >= len)
				cut = 0; /* nothing after it: whole */
		}
		if (split && cut) {
			/* head: a small mbuf; tail: the cluster's bytes moved to
			 * where they are (room) or to its first byte */
			struct cn_mbuf *h = cn_mbuf_get(fz_mpool());
			if (!h)
				abort();
			h->data = h->buf + 2;
			if (cut > h->buf_len - 2)
				cut = h->buf_len - 2;
			memcpy(h->data, m->data, cut);
			h->len = cut;
			if (room) {
				m->data += cut;
			} else {
				memmove(m->buf, m->data + cut, len - cut);
				m->data = m->buf;
			}
			m->len = m->pkt_len = len - cut;
			h->next = m;
			h->pkt_len = len;
			m = h;
		}
		enum cn_drop r = cn_net_input(net, m, now);
		if ((unsigned)r >= CN_DROP_MAX)
			abort();
		now += 3;
		cn_net_timer(net, now);
		uint8_t sink[256];
		if (!(fl & 8))
			cn_tcp_recv(tcb, sink, sizeof(sink), now);
	}
	/* Invariants the peer must never break. */
	struct cn_tcp_info ti;
	cn_tcp_get_info(tcb, &ti);
	if (cn_seq_gt(ti.snd_una, ti.snd_max) || cn_seq_gt(ti.snd_nxt, ti.snd_max) ||
	    ti.rcv_queued > 32768 + 1460 || ti.ooo_segs > 8)
		abort();
	cn_tcp_close(tcb);
	cn_udp_close(us);
	fz_end(net, false);
	return 0;
}
