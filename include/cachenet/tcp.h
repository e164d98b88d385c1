/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file tcp.h
 * The data path of an established TCP connection (RFC 9293), as a
 * user-space stack links it in: the TCB built from what a handshake
 * produced, tcp_output, tcp_input with Van Jacobson's header prediction,
 * ACK processing, delayed ACKs, Reno congestion control and retransmission,
 * loss recovery by SACK (RFC 6675) and RACK-TLP (RFC 8985; see
 * cn_tcp_params.no_rack_tlp).
 *
 * Conventions of this module
 *
 *  - Connection management (SYN/FIN/RST exchanges) is the host stack's
 *    job (conn.h is one, replaceable). cn_tcp_open() takes the result of a
 *    handshake (addresses, ports, ISNs, MSS, windows, window scales,
 *    timestamps) and returns an ESTABLISHED connection. Segments with SYN
 *    or RST (or no ACK) go to the stack's slow-path hook (net.h), else are
 *    dropped as CN_DROP_TCP_FLAGS. A received FIN is acknowledged and
 *    recorded (cn_tcp_info.fin_rcvd); cn_tcp_shutdown() sends ours after
 *    the buffered data and retransmits it like data until it is
 *    acknowledged (cn_tcp_info.fin_acked). Which state that makes (FIN-WAIT,
 *    CLOSE-WAIT, TIME-WAIT...) is the host stack's to track.
 *
 *  - Header template (BSD t_template). At open the Ethernet, IPv4 and TCP
 *    headers (with the timestamp option when negotiated) are built once,
 *    with the partial sums of their constant words; tcp_output copies the
 *    template and patches length, id, sequence, ack, flags, window and
 *    timestamps, completing both checksums from the stored partial sums.
 *
 *  - Send buffer. Either sockbuf of sockbuf.h: a chain (payload attached
 *    to packets as mbuf references, cn_sbchain_copy_ref) or a ring
 *    (payload attached as pointers into the ring; the in-memory NIC
 *    completes a frame before any ACK for it can be processed, which is
 *    the contract a device must keep for ring sockbufs: a frame's
 *    completion precedes the application's rewrite of released bytes).
 *
 *  - TX checksum modes (enum cn_tcp_csum), chosen per connection.
 *
 *  - Receive. In-order payload is kept by reference: the received mbuf is
 *    trimmed to the payload and appended to the receive queue (a chain
 *    sockbuf), and cn_tcp_recv() copies it out. Or, with a buffer posted
 *    by cn_tcp_recv_post(), payload is copied into the application's
 *    buffer with the checksum verified in the same pass (cn_csum_copy):
 *    the received frame is read once.
 *
 *  - Time. `now` arguments are ticks of any clock the caller picks; the
 *    timer parameters (delayed ACK, RTO) are in the same ticks.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 */
#ifndef CACHENET_TCP_H
#define CACHENET_TCP_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stdint.h>

#include "cachenet/net.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Checksum work of tcp_output. */
enum cn_tcp_csum {
	/** The NIC computes it: the field holds the pseudo-header sum and the
	 *  packet carries CN_PKT_TX_L4_CSUM. Payload never read by the CPU. */
	CN_TCP_CSUM_OFFLOAD = 0,
	/** Partial sums stored at copy-in (ring sockbuf in CSUM copy mode)
	 *  complete the checksum without reading the payload; where a segment
	 *  does not match the stored chunks, falls back to SEPARATE (counted
	 *  in cn_tcp_stats.csum_fallback). */
	CN_TCP_CSUM_STORED = 1,
	/** The payload is copied into a fresh cluster with cn_csum_copy (one
	 *  pass: copy and sum), the packet references the copy. */
	CN_TCP_CSUM_FUSED = 2,
	/** A separate pass of cn_csum_partial over the referenced payload. */
	CN_TCP_CSUM_SEPARATE = 3,
};

/** Largest cn_tcp_params.mss: a 9000-byte jumbo frame's payload. */
#define CN_TCP_MSS_MAX 8960u
/** Default cn_tcp_params.mss (0): RFC 9293's when the peer sent none. */
#define CN_TCP_MSS_DEFAULT 536u
/** Largest window scale shift (RFC 7323). */
#define CN_TCP_WSCALE_MAX 14u
/** Largest cn_tcp_params.ooo_max. */
#define CN_TCP_OOO_MAX 256u

/**
 * What a handshake produced, and the connection's choices. All zero is
 * valid: every zero field takes the default written beside it; a caller
 * sets the addresses, ports, next hop's MAC and sequence numbers.
 */
struct cn_tcp_params {
	uint32_t size;                /**< sizeof(struct cn_tcp_params), or 0 (common.h) */
	cn_be32_t laddr;              /**< our address */
	cn_be32_t raddr;              /**< the peer's address */
	cn_be16_t lport;              /**< our port */
	cn_be16_t rport;              /**< the peer's port */
	uint8_t rmac[CN_ETH_ALEN];    /**< next hop's Ethernet address */
	uint32_t iss;                 /**< our initial sequence number */
	uint32_t irs;                 /**< the peer's initial sequence number */
	uint16_t mss;                 /**< the peer's MSS (RFC 6691: payload without
					   options; segments with timestamps carry 12
					   bytes less); 13..CN_TCP_MSS_MAX, 0 =
					   CN_TCP_MSS_DEFAULT */
	uint16_t rcv_mss;             /**< largest payload we expect; 0 = mss */
	uint32_t snd_wnd;             /**< peer's window from the SYN-ACK, bytes;
					   0 = 65535 (the peer's first ACK sets it) */
	uint8_t snd_wscale;           /**< shift applied to windows we receive, <= 14 */
	uint8_t rcv_wscale;           /**< shift we apply to windows we send, <= 14 */
	bool ts;                      /**< timestamps negotiated (RFC 7323) */
	uint32_t ts_recent;           /**< the peer's last TSval */
	bool nodelay;                 /**< disable Nagle */
	enum cn_tcp_csum csum;        /**< 0 = CN_TCP_CSUM_OFFLOAD */
	enum cn_sockbuf_kind sndbuf;  /**< CN_SOCKBUF_CHAIN or CN_SOCKBUF_RING;
					   0 = CN_SOCKBUF_CHAIN */
	uint32_t sndbuf_size;         /**< ring bytes (power of two); 0 = 1 MB.
					   Chain: bytes accepted before send
					   returns short; 0 = 1 MB */
	enum cn_sbring_copy ring_copy;/**< ring copy-in mode (CSUM for STORED) */
	uint32_t rcvbuf_size;         /**< receive window, bytes; 0 = 1 MB */
	uint32_t ooo_max;             /**< out-of-order segments queued, at most
					   CN_TCP_OOO_MAX; 0 = drop them */
	uint32_t delack_ticks;        /**< delayed-ACK timer; 0 = ACK at once */
	uint32_t rto_init;            /**< initial RTO in ticks; 0 = 1000 */
	uint32_t rto_min;             /**< lower bound of the RTO; 0 = rto_init/5 */
	uint32_t rto_max;             /**< upper bound after backoff; 0 = 64*rto_init */
	uint32_t init_cwnd;           /**< segments; 0 = 10 (RFC 6928) */
	bool no_ts_clock;             /**< send now as TSval (false) or 0 */
	bool no_rx_readahead;         /**< skip the copy-out read-ahead: while the
					   application copies from the receive queue
					   (cn_tcp_recv, cn_tcp_recv_post), the queued
					   payload up to rx_readahead bytes past the
					   copy's end is prefetched, each queued byte
					   once. It pays when the NIC leaves received
					   data out of the cache and costs instructions
					   when it is cached (DDIO, DCA inject), where
					   setting this saves them (docs/performance.md,
					   TCP/UDP fast path) */
	/** SACK (RFC 2018) negotiated: while out-of-order data is queued,
	 *  the ACKs it triggers carry SACK blocks (the newest first); SACK
	 *  blocks received fill a scoreboard and loss recovery retransmits
	 *  its holes (RFC 6675's NextSeg, in order, at most two segments per
	 *  ACK beside the first). Off the established fast path: a segment
	 *  in order never reads it. */
	bool sack;                    /* (in what was padding: the layout is unchanged) */
	/** Turn off time-based loss recovery (RACK-TLP, RFC 8985), which is on
	 *  by default (false). With it, while data is in flight: (1) a
	 *  tail-loss probe: no ACK advanced for a probe timeout, PTO = 2 x
	 *  SRTT + 2 ticks (+ rto_min, the peer's worst delayed ACK, when one
	 *  segment or less is out), and the PTO falls before the RTO: one
	 *  segment goes out, new data if the peer's window takes it, else the
	 *  last segment again, so a lost tail is reported by the ACK it draws
	 *  instead of waiting for the RTO; one probe until everything sent
	 *  before it is acknowledged (cn_tcp_stats.tlp_probes), and then, if
	 *  it resent data that no D-SACK shows arrived twice, the congestion
	 *  window is cut as for a fast recovery (tlp_repairs). With SACK
	 *  also (2) data SACKed above snd_una for longer than a reordering
	 *  window (SRTT / 4 + 1 tick) starts recovery with fewer than three
	 *  segments SACKed (rack_recoveries); (3) in recovery, holes left an
	 *  SRTT plus that window after the last retransmission were lost
	 *  again and are sent again (rexmit_lost). Nothing before the first
	 *  RTT sample. Driven by cn_tcp_timer: its resolution is the caller's
	 *  timer cadence. Off the established fast path. */
	bool no_rack_tlp;             /* (in what was padding) */
	uint32_t rx_readahead;        /**< bytes the copy-out read-ahead keeps
					   asked for past each copy's end; 0 =
					   CN_TCP_RX_READAHEAD_DEFAULT; at most
					   CN_TCP_RX_READAHEAD_MAX. The default suits a
					   NIC that leaves received data in memory and a
					   driver that does not prefetch it (DCA flush);
					   behind a driver that prefetches the payload
					   during its poll (DCA prefetch, paced) a longer
					   distance pays: see CN_TCP_RX_READAHEAD_DEFAULT */
	/** Stretch ACKs: in-order segments one ACK may cover inside a device
	 *  burst (cn_net_input_burst). Within a burst the ACK that every
	 *  second segment would send is deferred to the burst's end, one
	 *  cumulative ACK per connection (what a Linux receiver sends behind
	 *  GRO), unless this many segments are unacknowledged: then it goes
	 *  at once. 0 = CN_TCP_ACK_STRETCH_DEFAULT's rule: a quarter of the
	 *  receive window (rcvbuf_size / 4 / rcv_mss segments, at least 2),
	 *  so a sender whose window is ours keeps three quarters of it in
	 *  flight while the ACK is deferred; 1 or 2 = no stretching (every
	 *  second segment, as outside a burst). Out-of-order data, a
	 *  segment that fills a hole, a duplicate, a FIN and a window update
	 *  are ACKed at once as always, and so are the connection's first
	 *  CN_TCP_QUICKACK_SEGS in-order segments (a sender in slow start
	 *  that grows its window by at most one segment per ACK, RFC 5681,
	 *  gets its first round trips' ACKs). At most 65535. */
	uint32_t ack_stretch;
};

/** cn_tcp_params.ack_stretch 0: the bound is the receive window / 4 in
 *  rcv_mss segments (at least 2, at most 65535). */
#define CN_TCP_ACK_STRETCH_DEFAULT 0u
/** In-order segments at a connection's start ACKed every second one even
 *  inside a burst (16 ACKs: Linux's quick-ACK count, TCP_MAX_QUICKACKS). */
#define CN_TCP_QUICKACK_SEGS 32u

/**
 * Default copy-out read-ahead distance (cn_tcp_params.rx_readahead): four
 * 1460-byte segments, the best distance when the NIC leaves received data
 * in memory and the driver does not prefetch it; behind a driver that
 * prefetches during its poll a longer one pays (docs/performance.md,
 * TCP/UDP fast path).
 */
#define CN_TCP_RX_READAHEAD_DEFAULT 5840u
/** Largest accepted cn_tcp_params.rx_readahead. */
#define CN_TCP_RX_READAHEAD_MAX (1u << 20)

/** Per-connection counters. */
struct cn_tcp_stats {
	uint64_t segs_out; /**< data segments sent (retransmissions too) */
	uint64_t bytes_out; /**< payload bytes sent (retransmissions too) */
	uint64_t acks_out;                /**< segments without payload */
	uint64_t rexmit_segs; /**< segments retransmitted */
	uint64_t rexmit_bytes; /**< payload bytes retransmitted */
	uint64_t rto_fired; /**< retransmission timeouts */
	uint64_t fast_rexmit; /**< fast retransmissions (three duplicate ACKs) */
	uint64_t segs_in; /**< segments accepted */
	uint64_t bytes_in; /**< new payload bytes accepted */
	uint64_t hp_data; /**< in-order data taken by header prediction */
	uint64_t hp_ack; /**< pure ACKs taken by header prediction */
	uint64_t slow_path;               /**< segments through the full input */
	uint64_t dupacks_in; /**< duplicate ACKs received */
	uint64_t dup_segs_in; /**< segments with only duplicate data */
	uint64_t ooo_queued; /**< out-of-order segments queued */
	uint64_t ooo_dropped; /**< out-of-order segments dropped (queue off or full) */
	uint64_t delack_timer;            /**< ACKs sent by the delayed-ACK timer */
	uint64_t csum_fallback;           /**< STORED mode that summed the payload */
	uint64_t rcv_fused;               /**< segments copied+summed into a posted buffer */
	uint64_t fins_out;                /**< segments carrying our FIN (retransmissions too) */
	uint64_t rcv_readahead;           /**< receive-queue bytes the copy-out read-ahead
					       prefetched (each queued byte once, but see tcp.c) */
	uint64_t sack_acks_out;           /**< ACKs sent with SACK blocks */
	uint64_t sack_blocks_in;          /**< SACK blocks received (scoreboard updates) */
	uint64_t sack_rexmit;             /**< segments retransmitted from the scoreboard */
	uint64_t tlp_probes;              /**< tail-loss probes sent (RFC 8985 7) */
	uint64_t rack_recoveries;         /**< recoveries started by the reordering
					       window, fewer than three segments SACKed */
	uint64_t rexmit_lost;             /**< retransmissions found lost (holes left an
					       SRTT after them) and sent again */
	uint64_t dsack_in;                /**< D-SACK blocks received (RFC 2883): the
					       peer got data twice (a spurious
					       retransmission, or a duplicate) */
	uint64_t rto_spurious;            /**< RTOs the first ACK after showed needless:
					       it echoes a timestamp older than the
					       retransmission (RFC 3522 detection) */
	uint64_t tlp_repairs;             /**< probes that resent data and were the only
					       copy to arrive (no D-SACK): a loss, answered
					       as a fast recovery answers one (RFC 8985 7.4) */
	uint64_t burst_acks;              /**< ACKs deferred to a device burst's end and
					       sent there (cn_net_input_burst,
					       cn_tcp_params.ack_stretch) */
};

/** A snapshot of a connection's state for tests and tools. */
struct cn_tcp_info {
	uint32_t snd_una; /**< oldest unacknowledged sequence number */
	uint32_t snd_nxt; /**< next sequence number to send */
	uint32_t snd_max; /**< highest sequence number sent */
	uint32_t snd_wnd; /**< the peer's window, bytes */
	uint32_t cwnd; /**< congestion window, bytes */
	uint32_t ssthresh; /**< slow-start threshold, bytes */
	uint32_t rcv_nxt; /**< next sequence number expected */
	uint32_t rcv_wnd; /**< our receive window, bytes */
	uint32_t rto; /**< retransmission timeout, ticks */
	uint32_t srtt; /**< smoothed round-trip time, ticks (unscaled) */
	uint32_t snd_queued;                          /**< bytes in the send buffer */
	uint32_t rcv_queued;                          /**< bytes ready for cn_tcp_recv */
	uint32_t ooo_segs; /**< segments in the out-of-order queue */
	uint8_t dupacks; /**< consecutive duplicate ACKs received */
	bool fin_rcvd;                                /**< the peer's FIN arrived (in order) */
	bool delack_pending; /**< an ACK waits for the delayed-ACK timer */
	bool shut_wr;                                 /**< cn_tcp_shutdown was called */
	bool fin_sent;                                /**< our FIN went out at least once */
	bool fin_acked;                               /**< ... and was acknowledged */
	bool sack;                                    /**< SACK negotiated */
	uint8_t sacked_blocks;                        /**< scoreboard ranges held */
};

struct cn_tcb;

/**
 * Create an established connection from a handshake's results.
 * @return the TCB, or NULL with errno
 *   - EINVAL: p->size neither 0 nor a size this library accepts (common.h);
 *     mss in 1..12 or above CN_TCP_MSS_MAX;
 *     snd_wscale or rcv_wscale above CN_TCP_WSCALE_MAX; csum or sndbuf not
 *     one of their enum's values; CN_TCP_CSUM_STORED without a ring send
 *     buffer in CN_SBRING_COPY_CSUM mode; CN_TCP_CSUM_FUSED on a stack
 *     without a cluster pool (cn_net_params.cpool); ooo_max above
 *     CN_TCP_OOO_MAX; rx_readahead above CN_TCP_RX_READAHEAD_MAX; a ring
 *     send buffer whose sndbuf_size is not a power of two in 4 KB .. 1 GB;
 *   - EEXIST: a connection with this 4-tuple exists;
 *   - ENOSPC: the stack's connection table is full (cn_net_params.max_conns);
 *   - ENOMEM.
 * Cost: builds the header template; allocates the sockbufs.
 * Thread safety: the thread that owns @p net.
 */
struct cn_tcb *cn_tcp_open(struct cn_net *net, const struct cn_tcp_params *p) CN_NONNULL_ALL;

/**
 * Forget the connection (no FIN is sent: the host stack closes), freeing
 * its send and receive buffers and out-of-order queue. Packets already
 * handed to a device stay valid for a chain send buffer (they hold mbuf
 * references) but not for a ring (they point into it): with a ring, close
 * only after the device completed the connection's frames. NULL accepted.
 */
void cn_tcp_close(struct cn_tcb *tcb);

/**
 * The established connection of a 4-tuple, or NULL.
 * @param net    the stack
 * @param raddr  the peer's address
 * @param rport  the peer's port
 * @param lport  our port
 * Cost: one hash lookup.
 */
struct cn_tcb *cn_tcp_lookup(struct cn_net *net, cn_be32_t raddr, cn_be16_t rport,
			     cn_be16_t lport) CN_NONNULL(1);

/**
 * Shut the connection down for writing: no more data is accepted
 * (cn_tcp_send returns -EPIPE), and a FIN follows the bytes already in the
 * send buffer: on their last segment when it fits, else alone. The FIN is
 * retransmitted with the data (timeout, fast retransmit) until ACKed.
 * Idempotent. @return 0.
 */
int cn_tcp_shutdown(struct cn_tcb *tcb, uint64_t now) CN_NONNULL(1);

/** Send an ACK now (e.g. the third segment of an active open, right after
 *  cn_tcp_open on the peer's SYN-ACK). */
void cn_tcp_ack_now(struct cn_tcb *tcb, uint64_t now) CN_NONNULL(1);

/**
 * Copy up to @p len bytes into the send buffer and run tcp_output.
 * @return bytes accepted (0 when the buffer is full), -ENOBUFS (no
 *         memory for copy-in, nothing accepted), or -EPIPE after
 *         cn_tcp_shutdown.
 * Cost: one copy-in pass (fused with the checksum for a CSUM ring).
 */
int cn_tcp_send(struct cn_tcb *tcb, const void *buf, uint32_t len, uint64_t now) CN_NONNULL(1);

/**
 * cn_tcp_send without the tcp_output (MSG_MORE): copy up to @p len bytes
 * into the send buffer; they leave at the next cn_tcp_output(),
 * cn_tcp_send() or ACK. cn_tcp_send() is this plus cn_tcp_output().
 * @return as cn_tcp_send().
 * Cost: the copy-in only.
 */
int cn_tcp_write(struct cn_tcb *tcb, const void *buf, uint32_t len) CN_NONNULL(1);

/**
 * Zero-copy send for a chain sockbuf: append the packet @p m (ownership
 * passes), then run tcp_output.
 * @return 0; -EINVAL (ring sockbuf; m untouched); -EPIPE after
 *         cn_tcp_shutdown (m untouched).
 */
int cn_tcp_send_mbuf(struct cn_tcb *tcb, struct cn_mbuf *m, uint64_t now) CN_NONNULL(1, 2);

/**
 * tcp_output: send what the window, the congestion window, Nagle and the
 * MSS allow, and a pending ACK if no data segment carried it.
 * @return segments sent (data and ACK), or a negative errno from the
 *         device or descriptor exhaustion (-ENOBUFS) after sending what it
 *         could (the rest goes at the next call).
 * Cost per segment, offload mode: template copy (1-2 lines), ~10 field
 * patches, a sockbuf segment lookup (O(1)), no payload byte read.
 */
int cn_tcp_output(struct cn_tcb *tcb, uint64_t now) CN_NONNULL(1);

/**
 * Copy up to @p len received in-order bytes out and free them; a window
 * update is sent when the window opened by two segments or half the buffer.
 * @return bytes copied (0 when nothing is queued).
 */
int cn_tcp_recv(struct cn_tcb *tcb, void *buf, uint32_t len, uint64_t now) CN_NONNULL(1);

/**
 * Post an application buffer: subsequent in-order payload is copied into
 * it with the checksum verified in the same pass (segments with a bad
 * checksum are dropped and leave no trace in the count). Bytes already
 * queued by reference are copied first; a segment larger than the room
 * left fills the buffer exactly and its remainder is queued by reference
 * (for cn_tcp_recv or the next post). One buffer at a time.
 * @return 0; -EBUSY (a buffer is already posted); -EINVAL (len 0 or buf
 *         NULL).
 */
int cn_tcp_recv_post(struct cn_tcb *tcb, void *buf, uint32_t len) CN_NONNULL(1);

/**
 * Bytes filled in the posted buffer so far; with @p finish, also take the
 * buffer back (later data is queued by reference again).
 */
uint32_t cn_tcp_recv_posted(struct cn_tcb *tcb, bool finish) CN_NONNULL(1);

/** Run this connection's timers due at @p now (cn_net_timer does all):
 *  delayed ACK, retransmission / persist and, before the RTO, RACK-TLP's
 *  (tail-loss probe, reordering window, lost retransmissions). Call it
 *  every tick or so: its cadence is those timers' resolution. */
void cn_tcp_timer(struct cn_tcb *tcb, uint64_t now) CN_NONNULL(1);

/** Counters (live). */
const struct cn_tcp_stats *cn_tcp_stats(const struct cn_tcb *tcb) CN_NONNULL(1);

/** Fill a state snapshot. */
void cn_tcp_get_info(const struct cn_tcb *tcb, struct cn_tcp_info *info) CN_NONNULL(1, 2);

/** Space left in the send buffer, bytes. */
uint32_t cn_tcp_sndbuf_space(const struct cn_tcb *tcb) CN_NONNULL(1);

/** The connection's send sockbuf (e.g. to fill a ring in place). */
struct cn_sockbuf *cn_tcp_sndbuf(struct cn_tcb *tcb) CN_NONNULL(1);

/** Name of a checksum mode ("offload", "stored", "fused", "separate"). */
const char *cn_tcp_csum_name(enum cn_tcp_csum mode);

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_TCP_H */
