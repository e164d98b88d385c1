/* SPDX-License-Identifier: BSD-2-Clause */
/* A cachenet host on one DPDK port, for the DPDK tests and benchmarks:
 * small-mbuf pool, a cluster pool in a DPDK memzone, the adapter, the
 * stack and its connection manager; taken down with every pool checked
 * back to 0 in use. Each function prints why it failed (stderr) and
 * returns -1, so a cmocka test and a plain program can both use it. */
#ifndef CN_TEST_DPDK_HOST_H
#define CN_TEST_DPDK_HOST_H

#include <stdint.h>

#include <cachenet/conn.h>
#include <cachenet/dpdk.h>

struct dh_host {
	struct cn_mbuf_pool *small, *clusters;
	struct cn_dpdk *dev;
	struct cn_net *net;
	struct cn_conn *conn;
	unsigned batch;             /* the adapter's frames per burst */
};

/* Bring a host up on @port with address @ip (host order) and the MAC
 * 02:00:00:00:00:@last; @dp (may be NULL) gives the adapter's parameters
 * other than port_id and mpool, @cp (may be NULL) the connections'. */
int dh_host_up(struct dh_host *h, uint16_t port, uint32_t ip, uint8_t last,
	       const struct cn_dpdk_params *dp, const struct cn_conn_params *cp);

/* Tear it down: flush, destroy the conn and stack, close the port (0:
 * no rte_mbuf of the adapter's in use), then every cachenet pool back to
 * 0 in use and destroyed. -1 on the first leak, named on stderr. */
int dh_host_down(struct dh_host *h);

/* Wait up to @seconds for the port's link to be up (1) or down (0);
 * -1 (named on stderr) when it is not by then. After a link went down,
 * 200 ms more: memif's control channel is torn down on the EAL's
 * interrupt thread after the status changed. */
int dh_wait_link(uint16_t port, int up, unsigned seconds);

/* One poll of the port into the stack, repeated while bursts come full.
 * Returns the frames handed to the stack. */
unsigned dh_poll(struct dh_host *h, uint64_t now);

/* rte_eal_cleanup, then remove the EAL's runtime directory
 * (/var/run/dpdk/PREFIX: its config and fbarray files, which the EAL
 * leaves behind). */
void dh_eal_cleanup(void);

uint64_t dh_now_ms(void);
uint64_t dh_now_ns(void);
uint64_t dh_cpu_ns(void);

#endif
