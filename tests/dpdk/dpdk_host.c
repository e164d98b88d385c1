/* SPDX-License-Identifier: BSD-2-Clause */
#include "dpdk_host.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_ethdev.h>

#define FAIL(...) do { fprintf(stderr, "dpdk host: " __VA_ARGS__); fputc('\n', stderr); return -1; } while (0)

int dh_host_up(struct dh_host *h, uint16_t port, uint32_t ip, uint8_t last,
	       const struct cn_dpdk_params *dp, const struct cn_conn_params *cp)
{
	memset(h, 0, sizeof(*h));
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SMALL, .count = 8192, .cache_size = 256};
	h->small = cn_mbuf_pool_create(&sp);
	if (!h->small)
		FAIL("small pool: %s", strerror(errno));
	/* the clusters the stack copies into live in a DPDK memzone */
	char name[32];
	snprintf(name, sizeof(name), "cn_cl_%u", port);
	h->clusters = cn_dpdk_cluster_pool(name, 4096, CN_MBUF_CLUSTER_SIZE, 256);
	if (!h->clusters)
		FAIL("cluster pool: %s", strerror(errno));
	struct cn_dpdk_params p = {0};
	if (dp)
		p = *dp;
	p.port_id = port;
	p.mpool = h->small;
	h->batch = p.batch ? p.batch : 32;
	h->dev = cn_dpdk_open(&p);
	if (!h->dev)
		FAIL("cn_dpdk_open(port %u): %s", port, strerror(errno));
	struct cn_net_params np = {.addr = cn_htobe32(ip), .mpool = h->small, .cpool = h->clusters,
				   .xmit = cn_dpdk_xmit_hook, .xmit_arg = h->dev};
	np.mac[0] = 0x02;
	np.mac[5] = last;
	h->net = cn_net_create(&np);
	if (!h->net)
		FAIL("cn_net_create: %s", strerror(errno));
	struct cn_conn_params c = {0};
	if (cp)
		c = *cp;
	c.isn_secret = 0x9e3779b97f4a7c15ull * last;
	h->conn = cn_conn_create(h->net, &c);
	if (!h->conn)
		FAIL("cn_conn_create: %s", strerror(errno));
	return 0;
}

static int pool_idle(struct cn_mbuf_pool *pool, const char *what)
{
	struct cn_mbuf_pool_stats st;

	cn_mbuf_pool_thread_flush(pool);
	cn_mbuf_pool_stats(pool, &st);
	if (st.in_use != 0)
		FAIL("%s pool: %llu buffers still in use", what, (unsigned long long)st.in_use);
	return 0;
}

int dh_host_down(struct dh_host *h)
{
	int rc;

	cn_dpdk_flush(h->dev);
	cn_conn_destroy(h->conn);
	if ((rc = cn_net_destroy(h->net)) != 0)
		FAIL("cn_net_destroy: %d (descriptors out)", rc);
	/* 0: after the port's close no rte_mbuf of the adapter's mempools
	 * is in use (a driver that posts RX buffers, as net_tap, holds
	 * some until then) */
	if ((rc = cn_dpdk_close(h->dev)) != 0)
		FAIL("cn_dpdk_close: %d (rte_mbufs in use)", rc);
	if (pool_idle(h->small, "small") || pool_idle(h->clusters, "cluster"))
		return -1;
	if ((rc = cn_dpdk_cluster_pool_free(h->clusters)) != 0)
		FAIL("cn_dpdk_cluster_pool_free: %d", rc);
	if ((rc = cn_mbuf_pool_destroy(h->small)) != 0)
		FAIL("cn_mbuf_pool_destroy: %d", rc);
	return 0;
}

int dh_wait_link(uint16_t port, int up, unsigned seconds)
{
	struct rte_eth_link l;
	uint16_t want = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN;

	for (unsigned i = 0; i < 100u * seconds; i++) {
		memset(&l, 0, sizeof(l));
		rte_eth_link_get_nowait(port, &l);
		if (l.link_status == want) {
			if (!up)
				usleep(200000);
			return 0;
		}
		usleep(10000);
	}
	FAIL("port %u: link not %s after %u s", port, up ? "up" : "down", seconds);
}

unsigned dh_poll(struct dh_host *h, uint64_t now)
{
	unsigned n, all = 0;

	do {
		n = cn_dpdk_poll(h->dev, h->net, now);
		all += n;
	} while (n == h->batch);
	return all;
}

void dh_eal_cleanup(void)
{
	char dir[256], f[512];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(f, sizeof(f), "%s/%s", dir, e->d_name);
		unlink(f);
	}
	closedir(d);
	rmdir(dir);
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t dh_now_ms(void)
{
	return clock_ns(CLOCK_MONOTONIC) / 1000000u;
}

uint64_t dh_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t dh_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}
