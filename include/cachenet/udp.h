/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file udp.h
 * UDP (RFC 768) send and receive on a cachenet stack, checksum on or off.
 *
 * A socket is bound to a local port and, for sending, connected to one
 * remote address/port/MAC. Sending attaches the caller's payload by
 * reference (no copy): the buffer must stay valid until the @p done
 * callback runs (the device's TX completion). Received datagrams are
 * handed to the socket's callback as an mbuf trimmed to the payload.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 */
#ifndef CACHENET_UDP_H
#define CACHENET_UDP_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stdint.h>

#include "cachenet/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Receive callback: @p m (ownership passes) holds the payload only;
 * @p pi describes the frame it came from (valid during the call).
 */
typedef void (*cn_udp_rx_fn)(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi);

/** A socket's parameters. All zero is valid (common.h): an ephemeral port,
 *  no destination (cn_udp_sendto only), no checksums, received datagrams
 *  counted and freed. */
struct cn_udp_params {
	uint32_t size;                 /**< sizeof(struct cn_udp_params), or 0 (common.h) */
	cn_be16_t lport;               /**< our port; 0 = the first free one from 49152 */
	cn_be32_t raddr;               /**< destination of cn_udp_send */
	cn_be16_t rport;               /**< destination port of cn_udp_send */
	uint8_t rmac[CN_ETH_ALEN];     /**< destination's (next hop's) MAC */
	bool tx_csum;                  /**< compute the checksum (else send 0, "none") */
	bool tx_offload;               /**< leave it to the device (with tx_csum) */
	bool rx_csum;                  /**< verify non-zero checksums on receive */
	cn_udp_rx_fn rx;               /**< may be NULL: received datagrams counted and freed */
	void *rx_arg;                  /**< rx's first argument */
};

/** A socket's counters, all monotonic. */
struct cn_udp_stats {
	uint64_t tx_dgrams; /**< datagrams sent */
	uint64_t tx_bytes; /**< payload bytes sent */
	uint64_t rx_dgrams; /**< datagrams delivered */
	uint64_t rx_bytes; /**< payload bytes delivered */
};

struct cn_udp_sock;

/**
 * Bind a socket.
 * @return it, or NULL with errno EINVAL (p->size not accepted: common.h),
 *         EADDRINUSE (lport bound already, or no free ephemeral port),
 *         ENOSPC (cn_net_params.max_udp sockets exist), ENOMEM.
 * Thread safety: the thread that owns @p net.
 */
struct cn_udp_sock *cn_udp_open(struct cn_net *net, const struct cn_udp_params *p) CN_NONNULL_ALL;

/** Unbind and free. NULL accepted. */
void cn_udp_close(struct cn_udp_sock *s);

/**
 * Send one datagram of @p len bytes referencing @p buf.
 * @param s     the socket (connected: cn_udp_params.raddr, rport, rmac)
 * @param buf   the payload, referenced until @p done runs
 * @param len   payload bytes
 * @param arg   done's argument
 * @param done  called with @p arg once the device no longer reads buf
 *              (may run before this function returns); may be NULL if the
 *              caller keeps buf valid otherwise. Never called when the
 *              function returns an error: buf is then the caller's again.
 * @return 0; -EMSGSIZE (len > 65507; without a stack MTU
 *         (cn_net_params.mtu), more than fits one frame of 9000 bytes);
 *         -ENOBUFS (no descriptor); a device error. With an MTU, a
 *         datagram longer than it goes out as IPv4 fragments (net.h),
 *         done called when the last one completes.
 * Cost: header from the socket's template; with tx_csum and no offload,
 * one pass over the payload.
 */
int cn_udp_send(struct cn_udp_sock *s, const void *buf, uint32_t len,
		void (*done)(void *arg), void *arg) CN_NONNULL(1);

/**
 * Send one datagram to another destination than the socket's own (a
 * server answering whoever asked: pass the source of a received datagram,
 * pi->saddr, pi->sport and its MAC at pi->frame + 6). Same buffer rules and
 * costs as cn_udp_send, plus the sums of the patched header words.
 * @param s      the socket
 * @param raddr  destination address
 * @param rport  destination port, non-zero
 * @param rmac   destination's (next hop's) MAC
 * @param buf, len, done, arg  as cn_udp_send
 * @return as cn_udp_send; -EINVAL (rport 0 or rmac NULL).
 */
int cn_udp_sendto(struct cn_udp_sock *s, cn_be32_t raddr, cn_be16_t rport, const uint8_t *rmac,
		  const void *buf, uint32_t len, void (*done)(void *arg), void *arg)
	CN_NONNULL(1);

/** Counters (live). */
const struct cn_udp_stats *cn_udp_stats(const struct cn_udp_sock *s) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_UDP_H */
