/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/dev. */
#ifndef CN_DEV_IMPL_H
#define CN_DEV_IMPL_H

#include <stdint.h>

#include "cachenet/netdev.h"

/* 16 bytes: four RX descriptors per cache line, as on common NICs. */
struct rx_desc {
	struct cn_mbuf *m;   /* posted buffer (frame at buf + 2) */
	uint32_t len;        /* written back by the NIC */
	uint32_t status;     /* DD written back by the NIC */
};
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
	uint32_t rx_nic __attribute__((aligned(64)));
	uint32_t tx_nic;
	struct rx_desc *rx;
	struct tx_desc *tx;
	cn_wire_fn wire;
	void *wire_arg;
	uint64_t now_ns;
	struct cn_netdev_stats st;
	uint8_t txbuf[CN_MBUF_JUMBO_SIZE] __attribute__((aligned(64)));
};

#endif
