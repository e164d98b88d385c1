/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file net.h
 * The network layer of the fast path: the packet view passed between the
 * stack and a device, the frame parser with its drop reasons, and the stack
 * context (struct cn_net) that owns the counters, the transmit descriptors
 * and the connection tables of tcp.h and udp.h.
 *
 * Conventions of this module
 *
 *  - Two packet forms, one per direction.
 *    RX: a frame arrives as one contiguous mbuf (struct cn_mbuf, data at the
 *    Ethernet header), as a device's posted receive buffer is, or as the
 *    chain a header-splitting device hands over (netdev.h, params.split):
 *    a first mbuf holding every header (Ethernet, IPv4 with options,
 *    TCP with options or UDP) and a second holding the payload. Such a
 *    chain is received without any copy or pullup: header prediction,
 *    the full TCP path and UDP read the headers from the first mbuf, sum
 *    the payload where it lies (partial sums combined) and keep the
 *    payload mbuf by reference (the header mbuf is freed). Precisely, a
 *    chain takes that path when its first mbuf holds all the headers and
 *    the payload lies in one mbuf: the first (after the headers) or,
 *    when the first ends exactly at the headers, the second; mbufs after
 *    the payload may hold only Ethernet padding. Any other chain is made
 *    contiguous first (its first mbuf copied into the room in front of
 *    the second's data when the second is writable and has that room, as
 *    a split frame's cluster has; else cn_mbuf_pullup into an inline
 *    mbuf), and dropped as CN_DROP_ETH_CHAIN when neither fits. The
 *    stack consumes the frame: it is freed on a drop or after being
 *    copied out, or kept by reference in a receive queue.
 *    TX: a frame leaves as a struct cn_pkt: headers written into the
 *    descriptor's own header room plus up to CN_PKT_PIECES payload
 *    references (scatter/gather, no payload copy), checksum-offload
 *    metadata, and a release step (cn_pkt_free) the device calls once it
 *    no longer reads the payload (its TX completion).
 *
 *  - Drops. Input from the network is never asserted on. Every frame the
 *    stack refuses gets one enum cn_drop reason, counted in
 *    cn_net_stats.drop[reason], like `netstat -s`.
 *
 *  - Byte order. Addresses and ports are in network order everywhere,
 *    typed cn_be32_t and cn_be16_t; every other number is in host order
 *    (common.h).
 *
 *  - Time. Nothing here reads a clock: functions that need time take a
 *    `now` argument in caller-defined ticks, so tests are deterministic.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a struct cn_net and everything created from it belong to
 * one thread at a time.
 */
#ifndef CACHENET_NET_H
#define CACHENET_NET_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cachenet/mbuf.h"
#include "cachenet/sockbuf.h"
#include "cachenet/wire.h"

#ifdef __cplusplus
extern "C" {
#define CN__NET_STATIC_ASSERT static_assert
#else
#define CN__NET_STATIC_ASSERT _Static_assert
#endif

/* ------------------------------------------------------------ drop reasons */

/** Why a received frame was dropped. CN_DROP_NONE (0) means "accepted". */
enum cn_drop {
	CN_DROP_NONE = 0,
	CN_DROP_ETH_TRUNC,      /**< shorter than an Ethernet header */
	CN_DROP_ETH_TYPE,       /**< EtherType other than IPv4 */
	CN_DROP_ETH_CHAIN,      /**< frame not contiguous and too long to pull up */
	CN_DROP_IP_TRUNC,       /**< shorter than the IPv4 header (or its IHL) */
	CN_DROP_IP_VERSION,     /**< version field not 4 */
	CN_DROP_IP_HLEN,        /**< IHL < 5 */
	CN_DROP_IP_LEN,         /**< total length < IHL, or > the frame */
	CN_DROP_IP_CSUM,        /**< bad IPv4 header checksum */
	CN_DROP_IP_FRAG,        /**< a fragment, reassembly off, and no slow-path
				     hook took it */
	CN_DROP_IP_NOT_US,      /**< destination is not our address */
	CN_DROP_IP_PROTO,       /**< neither TCP nor UDP */
	CN_DROP_TCP_TRUNC,      /**< L4 length below 20 bytes */
	CN_DROP_TCP_OFF,        /**< data offset < 5 or past the L4 length */
	CN_DROP_TCP_OPT,        /**< an option overruns the header, or bad length */
	CN_DROP_TCP_CSUM,       /**< bad TCP checksum */
	CN_DROP_TCP_NO_CONN,    /**< no connection for the 4-tuple */
	CN_DROP_TCP_FLAGS,      /**< SYN, RST or no ACK on an established connection */
	CN_DROP_TCP_WINDOW,     /**< no byte inside the receive window */
	CN_DROP_TCP_OOO,        /**< out of order and not queued (queue off or full) */
	CN_DROP_TCP_ACK,        /**< acknowledges data never sent */
	CN_DROP_TCP_PAWS,       /**< timestamp older than ts_recent (RFC 7323 PAWS) */
	CN_DROP_UDP_TRUNC,      /**< L4 length below 8 bytes */
	CN_DROP_UDP_LEN,        /**< UDP length field disagrees with the IP length */
	CN_DROP_UDP_CSUM,       /**< bad UDP checksum */
	CN_DROP_UDP_NO_PORT,    /**< no socket bound to the port */
	CN_DROP_NOBUFS,         /**< no receive space / descriptor to keep it */
	/* IPv4 reassembly (params.reass_mem > 0); a fragment held and later
	 * discarded is counted under the reason its datagram was dropped. */
	CN_DROP_FRAG_OVERLAP,   /**< overlaps another fragment of its datagram:
				     the whole datagram goes (RFC 5722's rule) */
	CN_DROP_FRAG_DUP,       /**< exact duplicate of a fragment held (only it) */
	CN_DROP_FRAG_BAD,       /**< inconsistent: past 65,535 bytes, a non-last
				     fragment not a multiple of 8 or empty, a
				     second last fragment, data past the end
				     (the whole datagram goes) */
	CN_DROP_FRAG_TIMEOUT,   /**< its datagram was not complete in reass_timeout */
	CN_DROP_FRAG_MEM,       /**< over the memory bound, per source or overall
				     (held fragments evicted oldest datagram first,
				     or the new one refused) */
	CN_DROP_MAX
};

/** Short name of a drop reason ("ip_csum", ...); "?" when out of range. */
const char *cn_drop_name(enum cn_drop reason);

/* ------------------------------------------------------------ parsing */

/** Parse flag: the device verified the IPv4 header checksum (skip it). */
#define CN_PARSE_IP_CSUM_GOOD 0x1u
/** Parse flag: the device verified the L4 checksum (cn_net_l4_csum_ok skips). */
#define CN_PARSE_L4_CSUM_GOOD 0x2u

/**
 * What cn_net_parse() found in a frame. Offsets count from the frame's
 * first byte; the frame must stay in place while the info is used.
 */
struct cn_pkt_info {
	const uint8_t *frame;    /**< the frame parsed (its first byte) */
	uint32_t frame_len;      /**< bytes handed in (may include Ethernet padding) */
	uint16_t l3_off;         /**< IPv4 header (14) */
	uint16_t l4_off;         /**< TCP/UDP header */
	uint16_t pay_off;        /**< first payload byte */
	uint16_t l4_len;         /**< L4 header + payload, from the IP total length */
	uint32_t pay_len;        /**< payload bytes (padding excluded) */
	cn_be32_t saddr;         /**< source address */
	cn_be32_t daddr;         /**< destination address */
	cn_be16_t sport;         /**< source port */
	cn_be16_t dport;         /**< destination port */
	uint8_t proto;           /**< CN_IPV4_PROTO_TCP or _UDP */
	uint8_t flags;           /**< CN_PARSE_* the caller passed */
	/* TCP only */
	uint8_t tcp_flags;       /**< CN_TCP_* */
	uint8_t has_ts : 1;      /**< a timestamp option was present */
	uint8_t has_mss : 1;     /**< an MSS option was present */
	uint8_t has_ws : 1;      /**< a window scale option was present */
	uint8_t ws_clamped : 1;  /**< the window scale option said > 14 */
	uint8_t has_sack_perm : 1; /**< SACK-permitted (RFC 2018), in a SYN */
	uint8_t nsack;           /**< SACK blocks (RFC 2018), 0..4, at sack */
	const uint8_t *sack;     /**< the first block's left edge (8 bytes a
				      block, network order); NULL when none */
	uint8_t wscale;          /**< clamped to 14 (RFC 7323 2.3) */
	uint16_t mss;            /**< the MSS option's value */
	uint32_t seq;            /**< sequence number */
	uint32_t ack;            /**< acknowledgment number */
	uint16_t win;            /**< window field, unscaled */
	uint32_t ts_val;         /**< timestamp option: TSval */
	uint32_t ts_ecr;         /**< timestamp option: TSecr */
	/** First payload byte: frame + pay_off for a contiguous frame; for
	 *  a split chain received by cn_net_input, the payload mbuf's. The
	 *  payload is pay_len bytes contiguous from here. */
	const uint8_t *pay;
};

/**
 * Parse and validate an Ethernet/IPv4/TCP-or-UDP frame: lengths, IHL, the
 * IPv4 checksum (unless CN_PARSE_IP_CSUM_GOOD), fragments, data offset and
 * TCP options (MSS, window scale, timestamps; unknown ones skipped by
 * length), UDP length. Does not check the destination address nor the L4
 * checksum (the TCP receive path may verify it fused with the copy).
 * @return CN_DROP_NONE with @p pi filled (pi->pay = frame + pay_off), or
 *         the reason the frame is bad (pi then partly filled). A fragment
 *         returns CN_DROP_IP_FRAG.
 * The library's one parser: cn_net_input, the connection manager, the
 * test bed's NIC (its header split) and peers all use it.
 * Cost: reads the headers only (~1 cache line); the segment of an
 * established TCP stream (IPv4 without options, TCP without options or
 * with just "NOP NOP TS") is recognised with a few word compares first,
 * anything else checked field by field. Thread safety: none needed.
 */
enum cn_drop cn_net_parse(const void *frame, uint32_t len, uint32_t flags,
			  struct cn_pkt_info *pi) CN_NONNULL(4);

/**
 * Partial sum of the TCP/UDP pseudo-header and L4 header of a parsed
 * frame (checksum field included), i.e. everything but the payload.
 */
uint32_t cn_net_l4_hdr_sum(const struct cn_pkt_info *pi) CN_NONNULL_ALL;

/**
 * True when the L4 checksum of a parsed frame is correct (or the device
 * said so with CN_PARSE_L4_CSUM_GOOD, or it is a UDP checksum of 0 = none).
 * The headers are read at pi->frame, the payload at pi->pay (a split
 * chain's payload mbuf: the two partial sums combine).
 * Cost: one pass over the payload (cn_csum_partial).
 */
bool cn_net_l4_csum_ok(const struct cn_pkt_info *pi) CN_NONNULL_ALL;

/* ------------------------------------------------------------ building headers */

/**
 * The Ethernet II and IPv4 header (no IP options) of a frame to send, as
 * cn_net_hdr_build() writes it. Zero-initialised fields mean: DF set, id
 * 0, a template (no length yet).
 */
struct cn_net_hdr_spec {
	const uint8_t *dmac;     /**< destination MAC, CN_ETH_ALEN bytes */
	const uint8_t *smac;     /**< source MAC, CN_ETH_ALEN bytes */
	cn_be32_t saddr;         /**< source address */
	cn_be32_t daddr;         /**< destination address */
	uint8_t proto;           /**< CN_IPV4_PROTO_* */
	uint8_t no_df;           /**< 1: DF clear (ICMP replies); 0: DF set */
	uint16_t id;             /**< host order; with l4_len only */
	/** Host order: L4 header + payload bytes. 0 makes a template: total
	 *  length, id and checksum left 0 for the sender to add per packet. */
	uint16_t l4_len;
};

/**
 * Write the 34 bytes of an Ethernet II (type IPv4) and IPv4 header at
 * @p frame: version 4, IHL 5, TOS 0, TTL 64, DF unless spec->no_df, the
 * protocol and addresses of @p spec; with spec->l4_len, the total length,
 * the id and the header checksum too. The one header builder of the
 * library: TCP and UDP templates, control segments, ICMP replies and the
 * test bed's peers use it.
 * @return frame + CN_ETH_HLEN + CN_IPV4_HLEN, where the L4 header goes.
 * Requires: 34 writable bytes at frame (any alignment).
 * Cost: ~40 instructions (the 20-byte checksum included); not per-packet
 * work on the fast path, which patches a template instead.
 * Thread safety: writes only @p frame.
 */
uint8_t *cn_net_hdr_build(void *frame, const struct cn_net_hdr_spec *spec) CN_NONNULL_ALL;

/* ------------------------------------------------------------ TX packet view */

/** Header room of a TX descriptor: Ethernet + IPv4 + TCP with 40 bytes of
 *  options is 94; 128 keeps the room two whole cache lines. */
#define CN_PKT_HDR_ROOM 128
/** Payload pieces a TX descriptor can reference. */
#define CN_PKT_PIECES CN_SB_SEG_PIECES

/** ol_flags: the device computes the L4 checksum: the field at
 *  l4_off + csum_off holds the folded, uncomplemented pseudo-header sum;
 *  the device sums from l4_off to the end of the frame and stores the
 *  complement (Linux CHECKSUM_PARTIAL, DPDK RTE_MBUF_F_TX_TCP_CKSUM). */
#define CN_PKT_TX_L4_CSUM 0x1u
/** ol_flags: the L4 checksum is UDP's (a computed 0 is stored 0xffff). */
#define CN_PKT_TX_UDP 0x2u

struct cn_net;

/**
 * A frame to transmit. 448 bytes, 7 cache lines, allocated from the
 * stack's descriptor array (never malloc on the fast path).
 *
 * Line 0 is what a device reads to gather the frame and what the stack
 * writes per segment besides the headers; lines 1-2 are the header room,
 * filled from its end (hdr = room + CN_PKT_HDR_ROOM - hdr_len) so that an
 * encapsulating layer could still prepend in front; lines 3-6 are the
 * payload pieces, of which a segment from a sockbuf uses one or two (one
 * line touched).
 *
 * Invariant: pay_len == sum of piece[i].len for i < npieces.
 */
struct cn_pkt {
	/* --- cache line 0: descriptor ------------------------------------ */
	uint8_t *hdr;              /**< first header byte (Ethernet), in room */
	uint16_t hdr_len;          /**< header bytes at hdr */
	uint16_t npieces;          /**< payload pieces, 0..CN_PKT_PIECES */
	uint32_t pay_len;          /**< payload bytes after the headers */
	uint16_t ol_flags;         /**< CN_PKT_TX_* */
	uint16_t l3_off;           /**< from hdr */
	uint16_t l4_off;           /**< from hdr */
	uint16_t csum_off;         /**< L4 checksum field, from l4_off */
	struct cn_mbuf *ref;       /**< references freed at release (payload of a
					chain sockbuf, or the buffer of a copy) */
	struct cn_net *net;        /**< owner: cn_pkt_free returns it there */
	void (*done)(void *arg);   /**< user completion (UDP zero-copy), or NULL */
	void *done_arg;            /**< done's argument */
	struct cn_pkt *next;       /**< free list; free for a device's queues */
	/* --- cache lines 1-2: header room -------------------------------- */
	uint8_t room[CN_PKT_HDR_ROOM] __attribute__((aligned(64))); /**< header room */
	/* --- cache lines 3-6: payload references ------------------------- */
	struct cn_sb_piece piece[CN_PKT_PIECES]; /**< payload references, npieces used */
} __attribute__((aligned(64)));

CN__NET_STATIC_ASSERT(sizeof(struct cn_pkt) == 448, "cn_pkt is 7 cache lines");
CN__NET_STATIC_ASSERT(offsetof(struct cn_pkt, room) == 64, "descriptor fits line 0");

/** Frame length of a TX packet (headers + payload). */
CN_NONNULL_ALL
static inline uint32_t cn_pkt_len(const struct cn_pkt *p)
{
	return p->hdr_len + p->pay_len;
}

/**
 * Gather the frame into @p dst (at least cn_pkt_len bytes), filling the
 * L4 checksum when CN_PKT_TX_L4_CSUM is set (what an offloading NIC does
 * during its DMA read, here one fused copy+sum pass over the payload).
 * @return the frame length. Touches every payload byte once.
 */
uint32_t cn_pkt_gather(const struct cn_pkt *p, void *dst) CN_NONNULL_ALL;

/**
 * Release a TX packet once the device no longer reads it (TX completion):
 * frees its references, calls its done callback, returns it to its stack.
 * NULL is accepted. Cost: O(1) plus the mbufs it references.
 */
void cn_pkt_free(struct cn_pkt *p);

/**
 * Release @p n TX packets at once (a device's completion pass): what
 * cn_pkt_free does for each, in array order, with no call per packet for
 * the common descriptor that holds no references and no callback (a run
 * of those from one stack is linked and put back on its free list in one
 * step). Requires: every p[i] a packet of a live stack, none NULL, none
 * twice.
 * Cost: ~10 instructions per such packet (cn_pkt_free: ~21 plus a call).
 */
void cn_pkt_free_bulk(struct cn_pkt *const *p, unsigned n);

/* ------------------------------------------------------------ stack context */

/**
 * Transmit hook of a stack: queue @p p for the wire.
 * @return 0 (the device owns p and calls cn_pkt_free at completion) or a
 *         negative errno (-ENOBUFS: ring full); on error the stack frees p
 *         and will send the bytes again later (they are still in the
 *         sockbuf).
 */
typedef int (*cn_net_xmit_fn)(void *arg, struct cn_pkt *p);

/**
 * Defines `static inline int name(void *dev, struct cn_pkt *p)`: a
 * device's transmit function `int xmit(type *dev, struct cn_pkt *p)` as a
 * stack's transmit hook (a cn_net_xmit_fn: cn_net_params.xmit, with the
 * device as xmit_arg). It returns what xmit returns, costs what xmit costs
 * (the call is inlined) and is as thread-safe as xmit.
 */
#define CN_NET_XMIT_HOOK(name, type, xmit)                                  \
	CN_NONNULL_ALL static inline int name(void *dev, struct cn_pkt *p) \
	{                                                                  \
		return xmit((type *)dev, p);                               \
	}

/**
 * Slow-path hook: where a host stack (e.g. conn.h's connection management)
 * gets the frames the fast path does not take. It is called, with the
 * reason the fast path would drop the frame for, for:
 *  - CN_DROP_ETH_TYPE   not IPv4 (ARP, ...), before any other check;
 *  - CN_DROP_IP_PROTO   IPv4 to our address, neither TCP nor UDP (ICMP, ...);
 *  - CN_DROP_IP_FRAG    an IPv4 fragment (any destination) when reassembly
 *                       is off; with it on, fragments to us are
 *                       reassembled and the whole datagram comes here
 *                       (or to TCP/UDP) as one frame;
 *  - CN_DROP_TCP_NO_CONN a valid TCP segment to us with no established
 *                       connection (SYNs to listeners, handshake segments,
 *                       segments to closed ports);
 *  - CN_DROP_TCP_FLAGS  a segment with SYN or RST, or without ACK, for an
 *                       established connection (before its checksum is
 *                       checked: the hook must verify it).
 * @p m is the whole frame, one contiguous mbuf, data at the Ethernet header
 * (a chain is made contiguous first, see "RX" above; one that cannot be is
 * not offered and is dropped as CN_DROP_ETH_CHAIN).
 * @return true: the hook took @p m (counted in cn_net_stats.rx_slow);
 *         false: the stack frees it and counts the drop under @p why.
 * The hook may call back into the stack (send, cn_tcp_open, even
 * cn_net_input of the same frame once a connection exists).
 */
typedef bool (*cn_net_slow_fn)(void *arg, struct cn_mbuf *m, enum cn_drop why);

/** A stack's parameters. All zero but mpool and xmit is valid (common.h). */
struct cn_net_params {
	uint32_t size;             /**< sizeof(struct cn_net_params), or 0 (common.h) */
	uint8_t mac[CN_ETH_ALEN];  /**< our Ethernet address */
	cn_be32_t addr;            /**< our IPv4 address */
	struct cn_mbuf_pool *mpool;/**< small mbufs (references, copies); required */
	struct cn_mbuf_pool *cpool;/**< clusters (fused TX copies); may be NULL */
	uint32_t tx_descs;         /**< struct cn_pkt descriptors; 0 = 1024 */
	uint32_t max_conns;        /**< TCP connections; 0 = 64 */
	uint32_t max_udp;          /**< UDP sockets; 0 = 16 */
	cn_net_xmit_fn xmit;       /**< required */
	void *xmit_arg;            /**< xmit's first argument (the device) */
	cn_net_slow_fn slow;       /**< may be NULL: those frames are dropped */
	void *slow_arg;            /**< slow's first argument */
	uint32_t rx_flags;         /**< CN_PARSE_* the device guarantees for
					every frame; a device that knows per
					frame sets CN_MBUF_F_RX_* on the
					frame's head instead (mbuf_core.h) */
	/** IPv4 MTU of the link. 0: frames go out as built (the device
	 *  refuses what it cannot carry). Else a datagram longer than mtu
	 *  that cn_net_xmit (ICMP replies, ...) or a UDP socket sends is
	 *  fragmented (RFC 791), its L4 checksum computed in software first;
	 *  one with DF set is refused with -EMSGSIZE. */
	uint32_t mtu;
	/** IPv4 reassembly (RFC 791, RFC 815's hole bookkeeping by sorted
	 *  fragments): bytes of fragment buffers held at most, overall.
	 *  0 = off (fragments go to the slow-path hook as they are). */
	uint32_t reass_mem;
	uint32_t reass_mem_src;    /**< ... per source address; 0 = reass_mem / 4 */
	uint32_t reass_max;        /**< datagrams in reassembly at once; 0 = 64 */
	uint32_t reass_timeout;    /**< ticks from a datagram's first fragment
					to its discard; 0 = 30000 (30 s) */
};

/** Counters of a stack, all monotonic. */
struct cn_net_stats {
	uint64_t rx_frames;        /**< frames handed to cn_net_input */
	uint64_t rx_tcp; /**< TCP segments accepted by the parser */
	uint64_t rx_udp; /**< UDP datagrams accepted by the parser */
	uint64_t rx_slow;          /**< taken by the slow-path hook */
	uint64_t rx_chain;         /**< chains whose headers were read in place
					(a split frame: no pullup, no copy) */
	uint64_t rx_chain_join;    /**< chains made contiguous (headers not all
					in the first mbuf, payload spread, or
					for the slow-path hook) */
	uint64_t tx_frames; /**< frames handed to the device */
	uint64_t tx_bytes; /**< bytes of those frames */
	uint64_t tx_nodesc;        /**< output stopped: no descriptor */
	uint64_t tx_xmit_fail;     /**< device refused a frame */
	uint64_t reass_ok;         /**< datagrams reassembled and delivered */
	uint64_t reass_evict;      /**< datagrams evicted for memory (their
					fragments counted as drop[CN_DROP_FRAG_MEM]) */
	uint64_t frag_out;         /**< datagrams fragmented on output */
	uint64_t frag_frames;      /**< fragments sent */
	uint64_t drop[CN_DROP_MAX];/**< per reason; drop[0] unused */
};

/**
 * Create a stack.
 * @return it, or NULL with errno EINVAL (no xmit, no mpool, p->size not
 *         accepted: common.h) or ENOMEM.
 * Cost: allocates every descriptor and table here.
 * Thread safety: the stack and all it creates belong to one thread at a time.
 */
struct cn_net *cn_net_create(const struct cn_net_params *p) CN_NONNULL_ALL;

/** Destroy a stack: closes its connections and sockets (freeing what they
 *  hold). Descriptors still held by a device must have been released.
 *  @return 0, or -EBUSY when descriptors are still out (leaked). NULL ok. */
int cn_net_destroy(struct cn_net *net);

/**
 * Receive one frame (consumed in every case): parse, validate, dispatch to
 * the TCP connection or UDP socket, or drop with a counted reason. @p m is
 * one mbuf or a chain (see "RX" above: a split chain is received without
 * pullup, its payload mbuf kept by reference).
 * The head's CN_MBUF_F_RX_* flags (mbuf_core.h) carry the device's
 * checksum status for this frame: a verified checksum is skipped, one the
 * device found bad makes the stack verify everything itself.
 * @param net  the stack
 * @param m    the frame; consumed
 * @param now  current time in the ticks of tcp.h's timers
 * @return CN_DROP_NONE if accepted, else the drop reason.
 */
enum cn_drop cn_net_input(struct cn_net *net, struct cn_mbuf *m, uint64_t now) CN_NONNULL_ALL;

/**
 * Receive a device burst: cn_net_input() of each of @p m[0..n-1] in order,
 * and then, for each connection whose ACK for in-order data was deferred
 * during the burst, one cumulative ACK (stretch ACKs: tcp.h,
 * cn_tcp_params.ack_stretch, bounds how many segments one may cover).
 * Every ACK the burst asks for has been handed to the transmit hook when
 * this returns, so a device's TX flush after it sends them; ACKs that
 * RFC 5681 wants at once (out-of-order data, a hole filled, a duplicate,
 * a FIN) go at once, inside the burst. A device's poll calls this in
 * place of a loop of cn_net_input(); a call from inside a burst (the
 * slow-path hook) is a plain loop of cn_net_input(), the outer burst
 * sends the ACKs.
 * @param net  the stack
 * @param m    the frames; each consumed
 * @param n    how many (0: nothing happens)
 * @param now  current time in the ticks of tcp.h's timers
 * Cost: cn_net_input() per frame, plus one pure ACK per connection that
 * received two or more in-order segments the burst did not ACK yet.
 */
void cn_net_input_burst(struct cn_net *net, struct cn_mbuf **m, unsigned n, uint64_t now)
	CN_NONNULL(1);

/** Install (or with NULL remove) the slow-path hook after creation, e.g.
 *  by a host stack created on top of @p net. */
void cn_net_set_slow(struct cn_net *net, cn_net_slow_fn fn, void *arg) CN_NONNULL(1);

/**
 * A free TX descriptor for a frame the caller builds itself (control
 * frames: ARP, ICMP, handshakes): npieces, pay_len and ol_flags 0, ref and
 * done NULL. The caller writes its headers (<= CN_PKT_HDR_ROOM bytes) into
 * p->room, conventionally at its end (p->hdr = p->room + CN_PKT_HDR_ROOM -
 * len), sets hdr, hdr_len, l3_off and l4_off, and may attach payload pieces
 * (piece[], npieces, pay_len) kept alive by @c ref, an mbuf chain freed at
 * completion (e.g. a received frame echoed without a copy).
 * @return it, or NULL when every descriptor is out (counted in tx_nodesc).
 * Cost: O(1), no allocation. Release with cn_net_xmit or cn_pkt_free.
 */
struct cn_pkt *cn_net_pkt_alloc(struct cn_net *net) CN_NONNULL_ALL;

/**
 * Transmit a frame built on a cn_net_pkt_alloc descriptor through the
 * stack's transmit hook, counting tx_frames and tx_bytes.
 * @return 0 (the device owns p), or the device's negative errno (p freed
 *         without calling its done callback, counted in tx_xmit_fail);
 *         -EINVAL when hdr_len is 0 or the pieces do not add up to
 *         pay_len (p freed, done not called).
 */
int cn_net_xmit(struct cn_net *net, struct cn_pkt *p) CN_NONNULL_ALL;

/** Run every connection's timers (delayed ACK, retransmission) due at
 *  @p now, and discard reassemblies older than reass_timeout.
 *  Cost: O(connections) + O(expired datagrams). */
void cn_net_timer(struct cn_net *net, uint64_t now) CN_NONNULL_ALL;

/** The stack's counters (live). */
const struct cn_net_stats *cn_net_stats(const struct cn_net *net) CN_NONNULL_ALL;

/** Total drops over all reasons. */
uint64_t cn_net_drops(const struct cn_net *net) CN_NONNULL_ALL;

/** Reassembly: datagrams in progress and the bytes of fragment buffers
 *  they hold (both 0 once every one completed, expired or was dropped).
 *  O(1). */
uint32_t cn_net_reass_entries(const struct cn_net *net) CN_NONNULL_ALL;
/** Reassembly: bytes of fragment buffers held (see cn_net_reass_entries). */
uint32_t cn_net_reass_mem(const struct cn_net *net) CN_NONNULL_ALL;

/** TX descriptors currently out (held by devices or queued).
 *  Cost: walks the free list, O(descriptors): for checks, not per packet. */
uint32_t cn_net_pkts_out(const struct cn_net *net) CN_NONNULL_ALL;

/** Our address, as created. */
cn_be32_t cn_net_addr(const struct cn_net *net) CN_NONNULL_ALL;
/** Our MAC address (CN_ETH_ALEN bytes), as created. */
const uint8_t *cn_net_mac(const struct cn_net *net) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_NET_H */
