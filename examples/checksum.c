/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Build a UDP/IPv4 frame, fill both checksums with cachenet, then validate
 * it the way a receive path does: parse (lengths, IPv4 checksum, options),
 * verify the UDP checksum, and see a corrupted byte dropped with a reason.
 *
 *   cc checksum.c $(pkg-config --cflags --libs cachenet)
 */
#include <stdio.h>
#include <string.h>

#include <cachenet/csum.h>
#include <cachenet/net.h>

#define PAYLOAD 1200

int main(void)
{
	static uint8_t frame[CN_ETH_HLEN + CN_IPV4_HLEN + CN_UDP_HLEN + PAYLOAD];
	struct cn_eth_hdr *eth = (struct cn_eth_hdr *)frame;
	struct cn_ipv4_hdr *ip = (struct cn_ipv4_hdr *)(frame + CN_ETH_HLEN);
	struct cn_udp_hdr *udp = (struct cn_udp_hdr *)(frame + CN_ETH_HLEN + CN_IPV4_HLEN);
	uint8_t *payload = (uint8_t *)(udp + 1);
	const uint16_t l4_len = CN_UDP_HLEN + PAYLOAD;
	struct cn_pkt_info pi;

	/* Ethernet and IPv4 headers; the IPv4 checksum covers the header. */
	memcpy(eth->dst, (const uint8_t[]){2, 0, 0, 0, 0, 2}, CN_ETH_ALEN);
	memcpy(eth->src, (const uint8_t[]){2, 0, 0, 0, 0, 1}, CN_ETH_ALEN);
	eth->type = cn_hton16(CN_ETH_TYPE_IPV4);
	ip->ver_ihl = 0x45;
	ip->total_len = cn_hton16(CN_IPV4_HLEN + l4_len);
	ip->ttl = 64;
	ip->proto = CN_IPV4_PROTO_UDP;
	ip->src = CN_IPV4(10, 0, 0, 1);
	ip->dst = CN_IPV4(10, 0, 0, 2);
	ip->csum = 0;
	ip->csum = (uint16_t)~cn_csum_fold(cn_csum_partial(ip, CN_IPV4_HLEN, 0));

	/* UDP: the payload is copied in and summed in the same pass; the
	 * pseudo-header and the UDP header are added, then the whole folded
	 * and complemented. A computed 0 is sent as 0xffff (RFC 768). */
	static uint8_t app[PAYLOAD];
	for (unsigned i = 0; i < PAYLOAD; i++)
		app[i] = (uint8_t)(i * 7 + 3);
	uint32_t sum = cn_csum_copy(payload, app, PAYLOAD, 0);
	udp->sport = cn_htobe16(5353);
	udp->dport = cn_htobe16(53);
	udp->len = cn_hton16(l4_len);
	udp->csum = 0;
	sum = cn_csum_combine(cn_csum_partial(udp, CN_UDP_HLEN, 0), sum, CN_UDP_HLEN);
	sum = cn_csum_add(sum, cn_csum_pseudo_ipv4(ip->src, ip->dst, CN_IPV4_PROTO_UDP, l4_len));
	uint16_t c = (uint16_t)~cn_csum_fold(sum);
	udp->csum = c ? c : 0xffff;

	/* Receive side: parse and validate. */
	enum cn_drop why = cn_net_parse(frame, sizeof(frame), 0, &pi);
	if (why != CN_DROP_NONE || !cn_net_l4_csum_ok(&pi)) {
		fprintf(stderr, "good frame refused: %s\n", cn_drop_name(why));
		return 1;
	}
	printf("parsed: UDP %u -> %u, %u payload bytes, checksums good\n",
	       cn_be16toh(pi.sport), cn_be16toh(pi.dport), pi.pay_len);

	/* One payload bit flipped: the parser accepts the headers, the L4
	 * checksum does not match. */
	payload[100] ^= 0x10;
	why = cn_net_parse(frame, sizeof(frame), 0, &pi);
	if (why != CN_DROP_NONE || cn_net_l4_csum_ok(&pi)) {
		fprintf(stderr, "corrupted payload not detected\n");
		return 1;
	}
	printf("payload corrupted: UDP checksum mismatch detected\n");
	payload[100] ^= 0x10;

	/* A corrupted IPv4 header is dropped by the parser, with its reason. */
	ip->ttl = 63;
	why = cn_net_parse(frame, sizeof(frame), 0, &pi);
	if (why != CN_DROP_IP_CSUM) {
		fprintf(stderr, "corrupted header not detected (%s)\n", cn_drop_name(why));
		return 1;
	}
	printf("header corrupted: dropped as %s\n", cn_drop_name(why));
	return 0;
}
