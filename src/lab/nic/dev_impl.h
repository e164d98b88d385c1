/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/lab/nic. */
#ifndef CN_DEV_IMPL_H
#define CN_DEV_IMPL_H

#include <stdint.h>

#include "cachenet/lab/netdev.h"
#include "cn_internal.h"

/* 16 bytes: four RX descriptors per cache line, as on common NICs. With
 * split on, the descriptor's header buffer is in the parallel array
 * cn_netdev.rx_hdr (a real descriptor holds both addresses; here the
 * pointer array keeps the descriptor's line layout of split off). */
struct rx_desc {
	struct cn_mbuf *m;   /* posted buffer (frame at buf + 2); NULL once
				handed to the driver, until refilled */
	uint32_t len;        /* written back by the NIC: bytes in the
				cluster (SPH: after the headers; HBO: bytes
				in the header buffer) */
	uint32_t status;     /* written back by the NIC: DD, SPH, HBO, and
				the header length in bits 16..31 (SPH) */
};
#define RX_DD 0x1u  /* descriptor done */
#define RX_SPH 0x2u /* split: headers in the header buffer, rest in m */
#define RX_HBO 0x4u /* header buffer only: whole frame in the header buffer */
#define RX_HLEN_SHIFT 16

_Static_assert(sizeof(struct rx_desc) == 16, "RX descriptor is 16 bytes");

struct tx_desc {
	struct cn_pkt *p;
	uint32_t status;
	uint32_t pad;
};
_Static_assert(sizeof(struct tx_desc) == 16, "TX descriptor is 16 bytes");

struct cn_netdev {
	struct cn_netdev_params p;
	uint32_t size, mask;
	/* driver-side indices and NIC-side indices on separate lines: on
	 * real hardware they are written by different agents */
	uint32_t rx_drv, rx_fill, tx_drv, tx_reap;
	/* PREFETCH: frames before rx_pf have had their lines prefetched
	 * (rx_pf may lag rx_drv: those frames are gone, nothing to do) */
	uint32_t rx_pf;
	/* frames of 1..copybreak bytes are copied (0: copybreak off) */
	uint32_t copybreak;
	/* split: header buffer bytes (0: split off) */
	uint32_t split_hdr;
	/* split: the posted header buffer of each descriptor, or NULL
	 * (descriptors outside [rx_drv, rx_fill) may keep one for reuse) */
	struct cn_mbuf **rx_hdr;
	uint32_t rx_nic __attribute__((aligned(CN_CACHE_LINE)));
	uint32_t tx_nic;
	struct rx_desc *rx;
	struct tx_desc *tx;
	cn_wire_fn wire;
	void *wire_arg;
	uint64_t now_ns;
	struct cn_netdev_stats st;
	uint8_t txbuf[CN_MBUF_JUMBO_SIZE] __attribute__((aligned(CN_CACHE_LINE)));
	/* the pools the device made itself (params named none), or NULL */
	struct cn_mbuf_pool *own_mpool, *own_cpool;
};

#endif
