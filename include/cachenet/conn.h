/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file conn.h
 * Minimal connection management beside the established-state fast path:
 * ARP (RFC 826) for the stack's address, ICMP echo reply (RFC 792/1122),
 * and TCP connection setup and teardown (RFC 9293) with option
 * negotiation (MSS, window scale and timestamps of RFC 7323), FIN in both
 * directions, TIME_WAIT, RST handling with RFC 5961's challenge ACK.
 *
 * Conventions of this module
 *
 *  - Separate from the fast path, replaceable. A struct cn_conn installs
 *    itself as the stack's slow-path hook (cn_net_set_slow) and sees only
 *    what the fast path refuses: non-IPv4 frames (ARP), non-TCP/UDP IPv4
 *    (ICMP), TCP segments without an established TCB (SYNs, handshake
 *    segments, segments to closed ports) and SYN/RST/no-ACK segments on an
 *    established TCB. Once a handshake completes it calls cn_tcp_open()
 *    and the fast path owns the connection's data; FINs are exchanged by
 *    the fast path (cn_tcp_shutdown, cn_tcp_info.fin_*), and this module
 *    turns what the TCB reports into the RFC 9293 states. A host stack
 *    that has its own connection management uses tcp.h directly and never
 *    creates a cn_conn.
 *
 *  - Sockets. A struct cn_sock is a listener or a connection. The
 *    application owns it until cn_sock_close() (or _abort); after close
 *    the conn finishes the exchange (FIN_WAIT_*, LAST_ACK, TIME_WAIT) and
 *    frees the socket and its TCB itself. A connection that ends while
 *    the application still holds it (reset, both FINs done) stays as
 *    CN_SOCK_CLOSED, with its error, until closed.
 *
 *  - Time. Like the fast path, nothing reads a clock. Calls that take
 *    `now` record it; frames arriving through the hook (which has no time
 *    argument) are handled at the last recorded `now`. cn_conn_poll()
 *    should run every tick or so: it drives the handshake, ARP, TIME_WAIT
 *    and orphan timers, the state changes after FINs, and cn_net_timer().
 *    Ticks are the caller's; the defaults below assume milliseconds.
 *
 *  - Handshake data. When the ACK that completes a passive open carries
 *    data or a FIN, the frame is handed to cn_net_input() again once the
 *    TCB exists, so cn_net_stats counts it twice in rx_frames.
 *
 *  - Drops. Every frame this module refuses is counted once with an
 *    enum cn_conn_drop reason in cn_conn_stats. Frames it does not handle
 *    at all (IPv6, IPv4 fragments, IP protocols other than ICMP) are left
 *    to the stack, which counts them under its own reason. With the
 *    stack's reassembly on (cn_net_params.reass_mem) fragments never come
 *    here: a reassembled ICMP echo arrives whole, and its reply leaves in
 *    fragments when the stack has an MTU.
 *
 *  - Next hop. Every peer is on the local link: an active open ARPs for
 *    the destination itself (no routes, no gateway); a passive open
 *    answers the Ethernet source of the SYN.
 *
 *  - SACK (RFC 2018): SACK-permitted is offered in every SYN and in a
 *    SYN-ACK answering one that offered it (no_sack refuses); the TCB
 *    then sends and uses SACK blocks (tcp.h, cn_tcp_params.sack).
 *
 *  - Not implemented (by choice): urgent data, TCP Fast Open, ICMP
 *    errors (counted, not acted on), ARP aging.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a cn_conn belongs to the thread of its cn_net.
 */
#ifndef CACHENET_CONN_H
#define CACHENET_CONN_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stdint.h>

#include "cachenet/net.h"
#include "cachenet/tcp.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Parameters of a connection manager. All zero is valid: zero fields
 *  take the defaults (common.h). */
struct cn_conn_params {
	uint32_t size;             /**< sizeof(struct cn_conn_params), or 0 (common.h) */
	/** Template for every connection: checksum mode, send buffer kind and
	 *  size, rcvbuf_size, ooo_max, delack_ticks, rto_*, init_cwnd,
	 *  nodelay, no_ts_clock, ack_stretch. Addresses, ports, ISNs, mss, rcv_mss,
	 *  window scales, ts, ts_recent, snd_wnd and rmac are filled per
	 *  connection. rcvbuf_size also picks the window scale we offer.
	 *  tcp.size is ignored. sndbuf 0 means CN_SOCKBUF_CHAIN, the safe kind here: the conn
	 *  frees a TCB as soon as its connection is reset or aborted, and a
	 *  RING send buffer must outlive the device's reads of the frames
	 *  that point into it (tcp.h, cn_tcp_close). */
	struct cn_tcp_params tcp;
	uint16_t mss;              /**< MSS we advertise (and send at most); 0 = 1460 */
	bool no_ts;                /**< refuse timestamps */
	bool no_wscale;            /**< refuse window scaling */
	uint32_t max_socks;        /**< sockets (listeners, embryonic, TIME_WAIT
					included); 0 = 256 */
	uint32_t syn_rto;          /**< first SYN / SYN-ACK retransmission, ticks,
					doubled per retry; 0 = 1000 */
	uint32_t syn_retries;      /**< SYN / SYN-ACK retransmissions before giving
					up; 0 = 5 */
	uint32_t time_wait;        /**< ticks in TIME_WAIT; 0 = 2000 */
	uint32_t arp_retry;        /**< ticks between ARP requests of an active
					open (syn_retries + 1 requests in all); 0 = 1000 */
	uint32_t orphan_timeout;   /**< ticks a closed socket may take to finish
					its FIN exchange before it is reset (a
					peer that never sends its FIN, or never
					ACKs ours); 0 = 60000 */
	uint64_t isn_secret;       /**< key of the ISN function (RFC 6528: SipHash-2-4
					of the 4-tuple, plus 250 per tick, i.e. the
					4 us clock at millisecond ticks), and of the
					SYN cookies' secrets. Set it to a random
					value: 0 is a valid but public key */
	/* SYN flood defence (RFC 4987): half-open connections (SYN_RCVD
	 * children of listeners, "the syncache") are bounded per listener by
	 * its backlog and overall by syncache_max. A SYN to a listener whose
	 * backlog is full is answered with a SYN cookie and no state: the
	 * ISN carries a keyed hash of the 4-tuple and the peer's ISN, the
	 * secret's generation and the MSS (one of 8 values); with
	 * timestamps, the low 5 bits of our TSval carry the window scale and
	 * SACK-permitted, which the peer echoes in the completing ACK's
	 * TSecr (without timestamps the connection has neither, as on
	 * Linux). The ACK that returns a valid cookie opens the connection.
	 * The secret changes every cookie_rotate ticks; a cookie is valid
	 * for one to two periods. When the whole syncache is full, its
	 * oldest half-open connection is evicted for a new one; with
	 * no_syncookies, so is the listener's oldest when its backlog is. */
	uint32_t syncache_max;     /**< half-open connections overall; 0 = 256 */
	uint32_t synack_retries;   /**< SYN-ACK retransmissions (at syn_rto, doubled
					each) before a half-open connection goes;
					0 = syn_retries */
	uint32_t cookie_rotate;    /**< ticks between SYN cookie secrets; 0 = 60000 */
	bool no_syncookies;        /**< never answer with a cookie: evict instead */
	bool no_sack;              /**< neither offer nor accept SACK-permitted */
};

/** Why the connection manager refused a frame. */
enum cn_conn_drop {
	CN_CONN_DROP_NONE = 0,
	CN_CONN_DROP_ARP_BAD,        /**< truncated, or not Ethernet/IPv4 ARP */
	CN_CONN_DROP_ARP_OP,         /**< operation neither request nor reply */
	CN_CONN_DROP_ARP_NOT_US,     /**< for another address (a known sender's
					  entry is still refreshed) */
	CN_CONN_DROP_IP_NOT_US,      /**< ICMP/TCP to another address */
	CN_CONN_DROP_ICMP_TRUNC,     /**< shorter than an ICMP header */
	CN_CONN_DROP_ICMP_CSUM,      /**< bad ICMP checksum */
	CN_CONN_DROP_ICMP_TYPE,      /**< an ICMP message other than echo request */
	CN_CONN_DROP_TCP_PARSE,      /**< the stack's parser refused it on re-parse */
	CN_CONN_DROP_TCP_CSUM,       /**< bad TCP checksum */
	CN_CONN_DROP_TCP_CLOSED,     /**< no socket: answered with RST */
	CN_CONN_DROP_TCP_RST_CLOSED, /**< RST to no socket (never answered) */
	CN_CONN_DROP_TCP_BAD_ACK,    /**< unacceptable ACK in SYN_SENT/SYN_RCVD/LISTEN
					  (answered with RST) */
	CN_CONN_DROP_TCP_RST_SEQ,    /**< RST outside the window (ignored) */
	CN_CONN_DROP_TCP_RST_CHALLENGE, /**< RST in the window but not at RCV.NXT:
					  challenge ACK (RFC 5961 3.2) */
	CN_CONN_DROP_TCP_SYN_CHALLENGE, /**< SYN on a synchronized connection:
					  challenge ACK (RFC 5961 4.2) */
	CN_CONN_DROP_TCP_SYN_DUP,    /**< retransmitted SYN in SYN_RCVD: SYN-ACK again */
	CN_CONN_DROP_TCP_NO_ACK,     /**< segment without ACK where one is required */
	CN_CONN_DROP_TCP_SEQ,        /**< handshake ACK outside the window */
	CN_CONN_DROP_TCP_UNEXPECTED, /**< nothing to do in this state (e.g. a
					  segment without SYN in SYN_SENT) */
	CN_CONN_DROP_BACKLOG,        /**< SYN to a listener whose backlog is full */
	CN_CONN_DROP_NO_SOCKS,       /**< SYN while max_socks sockets exist */
	CN_CONN_DROP_TCB,            /**< cn_tcp_open failed at handshake end (RST sent) */
	CN_CONN_DROP_ARP_UNSOLICITED,/**< an ARP reply to us for an address we did not
					  ask about and have no entry for (not learned) */
	CN_CONN_DROP_COOKIE,         /**< an ACK to a listener whose SYN cookie did
					  not validate, while cookies were being sent
					  (answered with RST, as any bad ACK there) */
	CN_CONN_DROP_MAX
};

/** Short name of a drop reason ("arp_bad", ...); "?" when out of range. */
const char *cn_conn_drop_name(enum cn_conn_drop why);

/** Counters, all monotonic. */
struct cn_conn_stats {
	uint64_t arp_req_in; /**< ARP requests received */
	uint64_t arp_req_out; /**< ARP requests sent */
	uint64_t arp_rep_in; /**< ARP replies received */
	uint64_t arp_rep_out; /**< ARP replies sent */
	uint64_t icmp_echo_in; /**< ICMP echo requests received */
	uint64_t icmp_echo_out; /**< ICMP echo replies sent */
	uint64_t syn_in; /**< SYNs without ACK received (retransmissions too) */
	uint64_t syn_out; /**< SYNs without ACK sent (retransmissions too) */
	uint64_t synack_in; /**< SYN-ACKs received (retransmissions too) */
	uint64_t synack_out; /**< SYN-ACKs sent (retransmissions too) */
	uint64_t rst_in; /**< RSTs received */
	uint64_t rst_out; /**< RSTs sent */
	uint64_t challenge_acks;           /**< RFC 5961 challenge ACKs sent */
	uint64_t passive_opens; /**< handshakes completed as the listener */
	uint64_t active_opens; /**< handshakes completed as the client */
	uint64_t closes;                   /**< connections ended by FINs (both ways) */
	uint64_t resets;                   /**< connections ended by a RST (in or out) */
	uint64_t refused;                  /**< active opens answered by RST */
	uint64_t syn_timeouts;             /**< handshakes given up (either side) */
	uint64_t arp_timeouts;             /**< active opens without an ARP answer */
	uint64_t orphan_timeouts;          /**< closed sockets reset by orphan_timeout */
	uint64_t tw_expired;               /**< TIME_WAIT ended by its timer */
	uint64_t tw_reused;                /**< TIME_WAIT ended by a new SYN (RFC 9293 3.10.7.4) */
	uint64_t tx_fail;                  /**< control frames not sent (no descriptor, device refused) */
	uint64_t wscale_clamped;           /**< SYNs whose window scale > 14 was taken as 14
					        (RFC 7323 2.3) */
	uint64_t syncookies_sent;          /**< SYN-ACKs carrying a cookie (no state kept) */
	uint64_t syncookies_ok;            /**< connections opened from a returning cookie */
	uint64_t syncookies_failed;        /**< ACKs whose cookie did not validate
					        (also drop[CN_CONN_DROP_COOKIE]) */
	uint64_t syncache_evicted;         /**< half-open connections evicted, oldest first */
	uint64_t drop[CN_CONN_DROP_MAX];   /**< per reason; drop[0] unused */
};

struct cn_conn;
struct cn_sock;

/**
 * Create a connection manager for @p net and install it as the stack's
 * slow-path hook (replacing any other).
 * @return it, or NULL with errno EINVAL (no net/params, mss < 64 or
 *         > CN_TCP_MSS_MAX, p->size not accepted: common.h) or ENOMEM.
 * Cost: allocates the socket hash and the ARP table.
 */
struct cn_conn *cn_conn_create(struct cn_net *net, const struct cn_conn_params *p);

/** Uninstall the hook and free every socket and TCB this conn made (no
 *  frame is sent). Call before cn_net_destroy(). NULL accepted. */
void cn_conn_destroy(struct cn_conn *c);

/**
 * Timers due at @p now: SYN and SYN-ACK retransmission, ARP retries,
 * TIME_WAIT and orphan expiry, the state changes after FINs the fast path
 * exchanged (freeing what is finished), then cn_net_timer(net, now).
 * Cost: O(sockets) plus cn_net_timer's O(connections).
 */
void cn_conn_poll(struct cn_conn *c, uint64_t now) CN_NONNULL_ALL;

/** The stack this conn serves. */
struct cn_net *cn_conn_net(const struct cn_conn *c) CN_NONNULL_ALL;

/* ------------------------------------------------------------ ARP */

/** Size of the ARP table; learned entries replace each other round-robin
 *  when it is full, static ones stay. What the wire may change (RFC 826's
 *  merge, hardened): any valid ARP frame refreshes its sender's existing
 *  entry (a gratuitous ARP included, which never creates one); a new
 *  entry comes only from a request addressed to us (we answer it) or a
 *  reply to a request we sent within the last (syn_retries + 1) x
 *  arp_retry ticks; other replies are dropped as
 *  CN_CONN_DROP_ARP_UNSOLICITED. */
#define CN_CONN_ARP_SIZE 64

/**
 * Add or replace a static entry.
 * @return 0; -EINVAL (ip 0 or broadcast); -ENOSPC (table full of static
 *         entries).
 */
int cn_conn_arp_add(struct cn_conn *c, cn_be32_t ip, const uint8_t mac[6]) CN_NONNULL_ALL;

/** Look @p ip up. @return true with @p mac filled when known. O(table). */
bool cn_conn_arp_lookup(const struct cn_conn *c, cn_be32_t ip, uint8_t mac[6]) CN_NONNULL_ALL;

/**
 * Broadcast an ARP request for @p ip.
 * @return 0 or a negative errno (-ENOBUFS: no TX descriptor; the device's
 *         error).
 */
int cn_conn_arp_request(struct cn_conn *c, cn_be32_t ip, uint64_t now) CN_NONNULL_ALL;

/* ------------------------------------------------------------ sockets */

/** RFC 9293 connection states, as cn_sock_state() reports them. */
enum cn_sock_state {
	CN_SOCK_CLOSED, CN_SOCK_LISTEN, CN_SOCK_SYN_SENT, CN_SOCK_SYN_RCVD,
	CN_SOCK_ESTABLISHED, CN_SOCK_FIN_WAIT_1, CN_SOCK_FIN_WAIT_2, CN_SOCK_CLOSING,
	CN_SOCK_TIME_WAIT, CN_SOCK_CLOSE_WAIT, CN_SOCK_LAST_ACK
};

/**
 * Listen on TCP @p port of the stack's address.
 * @return the listener, or NULL with errno EINVAL (c NULL, port 0, backlog 0),
 *         EADDRINUSE (another listener on the port), ENOSPC (max_socks),
 *         ENOMEM.
 * @p backlog bounds connections in SYN_RCVD plus those waiting for accept;
 * SYNs beyond it are answered with SYN cookies (cn_conn_params), or with
 * no_syncookies evict the listener's oldest half-open connection (or are
 * dropped, counted as backlog, when every child has completed).
 */
struct cn_sock *cn_sock_listen(struct cn_conn *c, cn_be16_t port, uint32_t backlog);

/**
 * Take the oldest connection that completed its handshake on @p listener.
 * It may have moved on since (CLOSE_WAIT, or CLOSED with ECONNRESET).
 * @return it, or NULL with errno EAGAIN (none) or EINVAL (NULL or not a
 *         listener).
 * Cost: O(1).
 */
struct cn_sock *cn_sock_accept(struct cn_sock *listener);

/**
 * Active open to @p raddr : @p rport from an
 * ephemeral port (49152-65535, starting at a keyed offset). Sends the SYN
 * now when the next hop's MAC is known, else an ARP request first.
 * Non-blocking: poll cn_sock_state() for ESTABLISHED, or CLOSED with
 * cn_sock_error() ECONNREFUSED / ETIMEDOUT / EHOSTUNREACH.
 * @return the socket, or NULL with errno EINVAL (c NULL, raddr 0, broadcast or
 *         our own address: no loopback; rport 0),
 *         ENOSPC (max_socks), EADDRNOTAVAIL (no free port), ENOMEM.
 */
struct cn_sock *cn_sock_connect(struct cn_conn *c, cn_be32_t raddr, cn_be16_t rport,
				uint64_t now);

/**
 * Queue bytes for sending (cn_tcp_send: copied into the send buffer).
 * @return bytes accepted (0 = buffer full); -ENOTCONN (handshake not done,
 *         or the connection failed before it); -EPIPE (after shutdown or
 *         the end of the connection); -ECONNRESET; -ENOBUFS (no memory).
 */
int cn_sock_send(struct cn_sock *s, const void *buf, uint32_t len, uint64_t now) CN_NONNULL(1);

/**
 * Copy received bytes out (cn_tcp_recv).
 * @return bytes (> 0); 0 = end of stream (the peer's FIN arrived and
 *         nothing is queued); -EAGAIN (nothing yet, handshake included);
 *         -ECONNRESET, -ECONNREFUSED, -ETIMEDOUT, -EHOSTUNREACH (the
 *         connection failed); -EINVAL (a listener).
 */
int cn_sock_recv(struct cn_sock *s, void *buf, uint32_t len, uint64_t now) CN_NONNULL(1);

/**
 * Send our FIN after the queued data (cn_tcp_shutdown): ESTABLISHED ->
 * FIN_WAIT_1, CLOSE_WAIT -> LAST_ACK.
 * @return 0 (also when already shut); -ENOTCONN (not established yet, or
 *         closed); -EINVAL (a listener).
 */
int cn_sock_shutdown(struct cn_sock *s, uint64_t now) CN_NONNULL_ALL;

/**
 * Shut down and release @p s: the application must not use it again.
 * A listener is freed now, resetting connections it has not handed out.
 * A connection still in its handshake is dropped now. An established one
 * sends its FIN after the queued data and is freed by the conn when the
 * exchange ends (after TIME_WAIT, or LAST_ACK's ACK). If received data
 * was never read, it is reset instead (RFC 2525 2.17, as Linux does).
 */
void cn_sock_close(struct cn_sock *s, uint64_t now) CN_NONNULL_ALL;

/** Send a RST (when synchronized: <SEQ=SND.NXT, ACK=RCV.NXT>) and free
 *  the socket and its TCB now. */
void cn_sock_abort(struct cn_sock *s, uint64_t now) CN_NONNULL_ALL;

/** The state now, including FINs the fast path exchanged since the last
 *  cn_conn_poll() (the transition itself happens there). */
enum cn_sock_state cn_sock_state(const struct cn_sock *s) CN_NONNULL_ALL;

/** "CLOSED", "LISTEN", ..., "LAST_ACK"; "?" when out of range. */
const char *cn_sock_state_name(enum cn_sock_state st);

/** 0, ECONNREFUSED, ECONNRESET, ETIMEDOUT or EHOSTUNREACH (positive). */
int cn_sock_error(const struct cn_sock *s) CN_NONNULL_ALL;

/** The fast-path TCB (for cn_tcp_* calls such as zero-copy send or stats);
 *  NULL before ESTABLISHED and once freed. Do not cn_tcp_close() it. */
struct cn_tcb *cn_sock_tcb(struct cn_sock *s) CN_NONNULL_ALL;

/** cn_sock_events() bits. */
#define CN_SOCK_IN 0x1u  /**< recv would not return -EAGAIN (data, end of
			      stream, error); listener: accept has one */
#define CN_SOCK_OUT 0x2u /**< send would accept bytes now */
#define CN_SOCK_ERR 0x4u /**< the connection failed (cn_sock_error) */
#define CN_SOCK_HUP 0x8u /**< both directions are finished, or it failed */

/** Readiness of @p s, as poll(2) would report it. O(1). */
uint32_t cn_sock_events(const struct cn_sock *s) CN_NONNULL_ALL;

/** Addresses and ports of @p s; a listener has raddr and rport 0. Any
 *  pointer may be NULL. */
void cn_sock_addrs(const struct cn_sock *s, cn_be32_t *laddr, cn_be16_t *lport,
		   cn_be32_t *raddr, cn_be16_t *rport) CN_NONNULL(1);

/** An application pointer kept with the socket (NULL initially). */
void cn_sock_set_udata(struct cn_sock *s, void *udata) CN_NONNULL(1);
/** The pointer cn_sock_set_udata() kept (NULL initially). */
void *cn_sock_udata(const struct cn_sock *s) CN_NONNULL_ALL;

/** Counters (live). */
const struct cn_conn_stats *cn_conn_stats(const struct cn_conn *c) CN_NONNULL_ALL;

/** Live sockets of every kind (listeners, embryonic, TIME_WAIT, closed
 *  but not yet released), for leak checks. */
uint32_t cn_conn_socks(const struct cn_conn *c) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_CONN_H */
