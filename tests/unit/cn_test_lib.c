/* SPDX-License-Identifier: BSD-2-Clause */
/* The mbuf and cluster pools of the unit tests' fixtures (cn_test.h);
 * linked only into programs that link libcachenet. */
#include "cn_test.h"

#include "cachenet/mbuf.h"
#include "cachenet/pcap.h"

#include <stdlib.h>

int cn_test_pools(struct cn_mbuf_pool **mp, struct cn_mbuf_pool **cp, uint32_t nsmall,
		  uint32_t nclusters, uint32_t cache, uint32_t cluster_size)
{
	struct cn_mbuf_pool_params m = {.kind = CN_MBUF_POOL_SMALL, .count = nsmall,
					.cache_size = cache};
	struct cn_mbuf_pool_params c = {.kind = CN_MBUF_POOL_CLUSTER, .count = nclusters,
					.cache_size = cache / 2, .data_size = cluster_size};

	*mp = cn_mbuf_pool_create(&m);
	*cp = cn_mbuf_pool_create(&c);
	return *mp && *cp ? 0 : -1;
}

void cn_test_pools_in_use(struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp, uint32_t *m,
			  uint32_t *c)
{
	struct cn_mbuf_pool_stats a, b;

	cn_mbuf_pool_stats(mp, &a);
	cn_mbuf_pool_stats(cp, &b);
	*m = a.in_use;
	*c = b.in_use;
}

void cn_test_pools_free(struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp, uint32_t m0,
			uint32_t c0)
{
	struct cn_mbuf_pool_stats a, b;

	cn_mbuf_pool_stats(mp, &a);
	cn_mbuf_pool_stats(cp, &b);
	if (a.in_use != m0 || b.in_use != c0)
		fail_msg("leak: mbufs in use %u (%u before), clusters in use %u (%u before)",
			 a.in_use, m0, b.in_use, c0);
	if (!m0 && !c0 && (a.gets != a.puts || b.gets != b.puts))
		fail_msg("leak: mbufs %llu got, %llu put; clusters %llu got, %llu put",
			 (unsigned long long)a.gets, (unsigned long long)a.puts,
			 (unsigned long long)b.gets, (unsigned long long)b.puts);
	assert_int_equal(cn_mbuf_pool_destroy(mp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(cp), 0);
}

int cn_test_pools_fx_setup(void **state, uint32_t nsmall, uint32_t nclusters, uint32_t cache)
{
	struct cn_test_pools_fx *f = calloc(1, sizeof(*f));

	*state = f;
	return f ? cn_test_pools(&f->mp, &f->cp, nsmall, nclusters, cache, 0) : -1;
}

int cn_test_pools_fx_teardown(void **state)
{
	struct cn_test_pools_fx *f = *state;

	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f);
	return 0;
}

struct cn_pcap *cn_test_pcap_open(char *path)
{
	cn_test_tmpfile(path);
	struct cn_pcap *pc = cn_pcap_open(path, 0);
	assert_non_null(pc);
	return pc;
}
