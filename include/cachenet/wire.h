/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file wire.h
 * Wire formats: Ethernet II, IPv4, TCP and UDP headers exactly as they are
 * on the wire (network byte order, packed where the layout would otherwise
 * gain padding), with the constants that go with them. Nothing here
 * allocates or validates: parsers live in net.h, builders in net.h/tcp.h.
 *
 * Every struct is static_asserted to its RFC size. Multi-byte fields are
 * big-endian; use the cn_ntoh16/32 and cn_hton16/32 helpers (the compiler's
 * byte-swap builtins) to read and write them.
 *
 * Alignment: a frame starts 2 bytes into a 4-byte aligned buffer in every
 * cachenet buffer (header room is sized so), which puts the IPv4 header on a
 * 4-byte boundary; the structs are still packed so that reading them from
 * any address is defined behaviour.
 */
#ifndef CACHENET_WIRE_H
#define CACHENET_WIRE_H

#include "cachenet/common.h"

#include <assert.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Host to network order, 16 bits (cn_htobe16 without the type). */
static inline uint16_t cn_hton16(uint16_t x) { return __builtin_bswap16(x); }
/** Network to host order, 16 bits. */
static inline uint16_t cn_ntoh16(uint16_t x) { return __builtin_bswap16(x); }
/** Host to network order, 32 bits. */
static inline uint32_t cn_hton32(uint32_t x) { return __builtin_bswap32(x); }
/** Network to host order, 32 bits. */
static inline uint32_t cn_ntoh32(uint32_t x) { return __builtin_bswap32(x); }

/* ------------------------------------------------------------ Ethernet */

/** Bytes of an Ethernet address. */
#define CN_ETH_ALEN 6
/** Bytes of an Ethernet II header (no VLAN tag). */
#define CN_ETH_HLEN 14
/** EtherType of IPv4 (host order). */
#define CN_ETH_TYPE_IPV4 0x0800
/** EtherType of ARP (host order). */
#define CN_ETH_TYPE_ARP 0x0806
/** EtherType of IPv6 (host order). */
#define CN_ETH_TYPE_IPV6 0x86dd
/** Largest Ethernet payload of a standard frame; jumbo frames go to 9000. */
#define CN_ETH_MTU 1500

/** Ethernet II header. */
struct cn_eth_hdr {
	uint8_t dst[CN_ETH_ALEN]; /**< destination address */
	uint8_t src[CN_ETH_ALEN]; /**< source address */
	uint16_t type;            /**< big-endian EtherType */
} __attribute__((packed));
static_assert(sizeof(struct cn_eth_hdr) == CN_ETH_HLEN, "Ethernet header is 14 bytes");

/* ------------------------------------------------------------ IPv4 (RFC 791) */

#define CN_IPV4_HLEN 20          /**< without options */
/** IP protocol number of ICMP. */
#define CN_IPV4_PROTO_ICMP 1
/** IP protocol number of TCP. */
#define CN_IPV4_PROTO_TCP 6
/** IP protocol number of UDP. */
#define CN_IPV4_PROTO_UDP 17
#define CN_IPV4_FLAG_DF 0x4000   /**< in frag_off, host order */
/** More fragments, in frag_off, host order. */
#define CN_IPV4_FLAG_MF 0x2000
/** Fragment offset (in 8-byte units) in frag_off, host order. */
#define CN_IPV4_OFFMASK 0x1fff

/** IPv4 header without options (RFC 791). */
struct cn_ipv4_hdr {
	uint8_t ver_ihl;          /**< version (4) << 4 | header length in 32-bit words */
	uint8_t tos;              /**< DSCP and ECN */
	uint16_t total_len;       /**< big-endian: header + payload bytes */
	uint16_t id;              /**< identification */
	uint16_t frag_off;        /**< big-endian: flags (DF, MF) and 13-bit offset */
	uint8_t ttl;              /**< time to live */
	uint8_t proto;            /**< CN_IPV4_PROTO_* */
	uint16_t csum;            /**< header checksum, as stored */
	cn_be32_t src;            /**< source address */
	cn_be32_t dst;            /**< destination address */
} __attribute__((packed));
static_assert(sizeof(struct cn_ipv4_hdr) == CN_IPV4_HLEN, "IPv4 header is 20 bytes");

/* ------------------------------------------------------------ TCP (RFC 9293) */

#define CN_TCP_HLEN 20           /**< without options */
#define CN_TCP_FIN 0x01 /**< TCP flag: no more data from the sender */
#define CN_TCP_SYN 0x02 /**< TCP flag: synchronize sequence numbers */
#define CN_TCP_RST 0x04 /**< TCP flag: reset the connection */
#define CN_TCP_PSH 0x08 /**< TCP flag: push */
#define CN_TCP_ACK 0x10 /**< TCP flag: the ack field is significant */
#define CN_TCP_URG 0x20 /**< TCP flag: the urgent pointer is significant */
#define CN_TCP_ECE 0x40 /**< TCP flag: ECN echo */
#define CN_TCP_CWR 0x80 /**< TCP flag: congestion window reduced */

#define CN_TCPOPT_EOL 0          /**< end of the option list */
#define CN_TCPOPT_NOP 1          /**< padding */
#define CN_TCPOPT_MSS 2          /**< length 4 */
#define CN_TCPOPT_WSCALE 3       /**< length 3 */
#define CN_TCPOPT_SACK_PERM 4    /**< length 2 */
#define CN_TCPOPT_SACK 5         /**< SACK blocks (RFC 2018) */
#define CN_TCPOPT_TIMESTAMP 8    /**< length 10 */
/** The usual timestamp option as sent: NOP, NOP, TS (12 bytes). */
#define CN_TCPOLEN_TSTAMP_APPA 12
/** That block's first word, host order: NOP, NOP, kind 8, length 10. */
#define CN_TCPOPT_TSTAMP_APPA_HDR 0x0101080au

/** Write the NOP, NOP, TS block at @p o (12 bytes, any alignment) with
 *  @p tsval and @p tsecr (host order). */
static inline void cn_tcpopt_tstamp_put(uint8_t *o, uint32_t tsval, uint32_t tsecr)
{
	uint32_t w[3] = {cn_hton32(CN_TCPOPT_TSTAMP_APPA_HDR), cn_hton32(tsval), cn_hton32(tsecr)};

	__builtin_memcpy(o, w, sizeof(w));
}

/** TCP header without options (RFC 9293). */
struct cn_tcp_hdr {
	cn_be16_t sport;          /**< source port */
	cn_be16_t dport;          /**< destination port */
	uint32_t seq;             /**< big-endian: sequence number */
	uint32_t ack;             /**< big-endian: acknowledgment number */
	uint8_t off;              /**< data offset in 32-bit words << 4 (low 4 bits reserved) */
	uint8_t flags;            /**< CN_TCP_* */
	uint16_t win;             /**< big-endian: window (scaled by the negotiated shift) */
	uint16_t csum;            /**< checksum, as stored */
	uint16_t urp;             /**< big-endian: urgent pointer */
} __attribute__((packed));
static_assert(sizeof(struct cn_tcp_hdr) == CN_TCP_HLEN, "TCP header is 20 bytes");

/* ------------------------------------------------------------ UDP (RFC 768) */

/** Bytes of a UDP header. */
#define CN_UDP_HLEN 8

/** UDP header (RFC 768). */
struct cn_udp_hdr {
	cn_be16_t sport;          /**< source port */
	cn_be16_t dport;          /**< destination port */
	uint16_t len;             /**< big-endian: header + payload */
	uint16_t csum;            /**< 0 = none (IPv4); a computed 0 is sent as 0xffff */
} __attribute__((packed));
static_assert(sizeof(struct cn_udp_hdr) == CN_UDP_HLEN, "UDP header is 8 bytes");

/* ------------------------------------------------------------ sequence space */

/** a < b in sequence space, modulo 2^32 (RFC 9293 section 3.4). */
static inline int cn_seq_lt(uint32_t a, uint32_t b) { return (int32_t)(a - b) < 0; }
/** a <= b in sequence space. */
static inline int cn_seq_leq(uint32_t a, uint32_t b) { return (int32_t)(a - b) <= 0; }
/** a > b in sequence space. */
static inline int cn_seq_gt(uint32_t a, uint32_t b) { return (int32_t)(a - b) > 0; }
/** a >= b in sequence space. */
static inline int cn_seq_geq(uint32_t a, uint32_t b) { return (int32_t)(a - b) >= 0; }

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_WIRE_H */
