/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/stack: IPv4 reassembly (ip_reass.c) and fragmentation on
 * output (ip_frag.c). Both are off the TCP fast path: a fragment never
 * matches header prediction, and only datagrams longer than the MTU are
 * fragmented. */
#ifndef CN_IP_REASS_H
#define CN_IP_REASS_H

#include <stdint.h>

#include "cachenet/net.h"
#include "cn_internal.h"

struct cn_reass;

/* The reassembly state of a stack with params.reass_mem > 0 (defaults
 * filled in from @p p); NULL with errno ENOMEM. */
CN_INTERNAL struct cn_reass *cn__ip_reass_create(const struct cn_net_params *p);
/* Free every datagram in progress (their fragments are not counted as
 * drops: the stack is going away) and the state. NULL accepted. */
CN_INTERNAL void cn__ip_reass_destroy(struct cn_reass *r);

/* One fragment @p m (a contiguous frame, its IPv4 header already checked
 * by the parser: version, IHL, total length, checksum) received at @p now.
 * Returns CN_DROP_NONE and *done = NULL when the fragment is held;
 * CN_DROP_NONE and *done = the whole datagram as one contiguous frame
 * (the first fragment's Ethernet and IPv4 headers, MF and offset cleared,
 * total length and checksum rewritten) when it completed one; or the
 * reason the fragment was dropped. Every drop, of this fragment and of
 * held ones, is counted in net's drop[] and its mbufs freed. */
CN_INTERNAL enum cn_drop cn__ip_reass_input(struct cn_net *net, struct cn_mbuf *m, uint64_t now,
					    struct cn_mbuf **done);
/* Discard datagrams whose reass_timeout has passed at @p now.
 * O(expired datagrams). */
CN_INTERNAL void cn__ip_reass_timer(struct cn_net *net, uint64_t now);
CN_INTERNAL uint32_t cn__ip_reass_entries(const struct cn_reass *r);
CN_INTERNAL uint32_t cn__ip_reass_mem(const struct cn_reass *r);

/* Send the IPv4 frame @p p, longer than 14 + params.mtu, as fragments
 * (RFC 791 3.2): each a copy of p's Ethernet and IPv4 headers with its
 * offset, MF, length and checksum, and payload pieces referencing p's
 * L4 header (in p's header room) and p's pieces. p itself is not sent:
 * it is released (its ref freed, its done called) once the device has
 * completed the last fragment. An L4 checksum left to the device
 * (CN_PKT_TX_L4_CSUM) is computed first: no device sums across fragments.
 * Returns 0 when the first fragment was handed over (a failure after it
 * loses the rest, counted in tx_nodesc / tx_xmit_fail, as the wire would);
 * else p is freed without its done callback and the error returned:
 * -EMSGSIZE (DF set, not IPv4, longer than 65,535 bytes, or a fragment
 * would need more than CN_PKT_PIECES pieces), -ENOBUFS (no descriptor),
 * or the device's error. */
CN_INTERNAL int cn__ip_frag_xmit(struct cn_net *net, struct cn_pkt *p);

#endif
