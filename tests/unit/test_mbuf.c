/* SPDX-License-Identifier: BSD-2-Clause */
/* mbuf pool and operations: every operation against a flat-buffer model on
 * random sequences (fixed seeds), sharing and reference counts, external
 * buffers, exhaustion and recovery, per-thread caches from two threads, and
 * the debug checks when the library has them. Every test's teardown checks
 * that the pools hold every object again (no leak passes silently). */
#include "cn_test.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cachenet/mbuf.h"

struct fx {
	struct cn_mbuf_pool *mp, *cp, *sp;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct cn_mbuf_pool_params mp = {.name = "small", .kind = CN_MBUF_POOL_SMALL,
					 .count = 512, .cache_size = 32};
	struct cn_mbuf_pool_params cp = {.name = "clusters", .kind = CN_MBUF_POOL_CLUSTER,
					 .count = 256, .cache_size = 16};
	f->mp = cn_mbuf_pool_create(&mp);
	f->cp = cn_mbuf_pool_create(&cp);
	if (!f->mp || !f->cp)
		return -1;
	struct cn_mbuf_pool_params sp = {.name = "segments", .kind = CN_MBUF_POOL_SEG,
					 .count = 128, .cache_size = 8, .small = f->mp};
	f->sp = cn_mbuf_pool_create(&sp);
	if (!f->sp)
		return -1;
	*state = f;
	return 0;
}

static void expect_empty(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;

	cn_mbuf_pool_stats(p, &st);
	if (st.in_use != 0 || st.gets != st.puts || st.in_use + st.cached + st.avail != st.count)
		fail_msg("pool %s leaks: in_use %u gets %llu puts %llu cached %u avail %u count %u",
			 cn_mbuf_pool_params(p)->name, st.in_use, (unsigned long long)st.gets,
			 (unsigned long long)st.puts, st.cached, st.avail, st.count);
}

static int teardown(void **state)
{
	struct fx *f = *state;

	expect_empty(f->mp);
	expect_empty(f->cp);
	expect_empty(f->sp);
	cn_mbuf_pool_thread_flush(f->mp);
	cn_mbuf_pool_thread_flush(f->cp);
	cn_mbuf_pool_thread_flush(f->sp);
	expect_empty(f->mp);
	expect_empty(f->sp);
	assert_int_equal(cn_mbuf_pool_destroy(f->sp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(f->mp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(f->cp), 0);
	free(f);
	return 0;
}


static void get_free_basic(void **state)
{
	struct fx *f = *state;
	struct cn_mbuf *m = cn_mbuf_get(f->mp);

	assert_non_null(m);
	assert_int_equal(m->len, 0);
	assert_int_equal(m->pkt_len, 0);
	assert_null(m->next);
	assert_null(m->shared);
	assert_int_equal(cn_mbuf_headroom(m), CN_MBUF_SMALL_HEADROOM);
	assert_int_equal(cn_mbuf_tailroom(m), CN_MBUF_SMALL_DATA - CN_MBUF_SMALL_HEADROOM);
	assert_int_equal((uintptr_t)m % 64, 0);
	assert_int_equal(cn_mbuf_refcnt(m), 1);
	assert_true(cn_mbuf_writable(m));
	uint8_t *p = cn_mbuf_append(m, 10);
	assert_non_null(p);
	memset(p, 0xab, 10);
	assert_null(cn_mbuf_append(m, 1000)); /* no room, nothing changed */
	assert_int_equal(m->pkt_len, 10);
	assert_int_equal(cn_mbuf_check(m), 0);

	struct cn_mbuf_pool_stats st;
	cn_mbuf_pool_stats(f->mp, &st);
	assert_int_equal(st.in_use, 1);
	assert_true(st.high_water >= 1);
	assert_null(cn_mbuf_free(m));
	assert_null(cn_mbuf_free(NULL));

	/* A cluster mbuf is cache-line aligned storage of the right size. */
	m = cn_mbuf_get_cluster(f->mp, f->cp);
	assert_non_null(m);
	assert_int_equal(m->buf_len, CN_MBUF_CLUSTER_SIZE);
	assert_int_equal((uintptr_t)m->buf % 64, 0);
	assert_int_equal(cn_mbuf_tailroom(m), CN_MBUF_CLUSTER_SIZE);
	assert_int_equal(cn_mbuf_refcnt(m), 1);
	assert_int_equal(cn_mbuf_attach_cluster(m, f->cp), -EINVAL); /* already has one */
	cn_mbuf_free(m);
	errno = 0;
	assert_null(cn_mbuf_get(f->cp)); /* not a small pool */
	assert_int_equal(errno, EINVAL);
}

static void bulk(void **state)
{
	struct fx *f = *state;
	struct cn_mbuf *m[300];

	assert_int_equal(cn_mbuf_get_bulk(f->mp, m, 300), 0);
	for (int i = 0; i < 300; i++) {
		assert_int_equal(m[i]->len, 0);
		for (int j = 0; j < i; j += 37)
			assert_ptr_not_equal(m[i], m[j]);
	}
	cn_mbuf_free_bulk(m, 300);
	assert_int_equal(cn_mbuf_get_bulk(f->mp, m, 5), 0);
	cn_mbuf_free_bulk(m, 5);
	assert_int_equal(cn_mbuf_get_bulk(f->mp, m, 0), 0);
}

/* An all-zero params struct: a small pool of the default count, no caches,
 * default data size and header room; every mbuf usable. */
static void params_zero(void **state)
{
	(void)state;
	struct cn_mbuf_pool *p = cn_mbuf_pool_create(&(struct cn_mbuf_pool_params){0});
	struct cn_mbuf_pool_stats st;
	struct cn_mbuf *m[CN_MBUF_POOL_COUNT_DEFAULT];

	assert_non_null(p);
	const struct cn_mbuf_pool_params *q = cn_mbuf_pool_params(p);
	assert_int_equal(q->kind, CN_MBUF_POOL_SMALL);
	assert_int_equal(q->count, CN_MBUF_POOL_COUNT_DEFAULT);
	assert_int_equal(q->data_size, CN_MBUF_SMALL_DATA);
	assert_int_equal(q->headroom, CN_MBUF_SMALL_HEADROOM);
	assert_int_equal(q->cache_size, 0);
	assert_string_equal(q->name, "mbuf");
	assert_int_equal(cn_mbuf_get_bulk(p, m, CN_MBUF_POOL_COUNT_DEFAULT), 0);
	assert_null(cn_mbuf_get(p));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(cn_mbuf_headroom(m[0]), CN_MBUF_SMALL_HEADROOM);
	assert_int_equal(cn_mbuf_tailroom(m[0]), CN_MBUF_SMALL_DATA - CN_MBUF_SMALL_HEADROOM);
	cn_mbuf_free_bulk(m, CN_MBUF_POOL_COUNT_DEFAULT);
	cn_mbuf_pool_stats(p, &st);
	assert_int_equal(st.count, CN_MBUF_POOL_COUNT_DEFAULT);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(cn_mbuf_pool_destroy(p), 0);
	/* a zero count with another kind takes the default too */
	p = cn_mbuf_pool_create(&(struct cn_mbuf_pool_params){.kind = CN_MBUF_POOL_CLUSTER});
	assert_non_null(p);
	assert_int_equal(cn_mbuf_pool_params(p)->count, CN_MBUF_POOL_COUNT_DEFAULT);
	assert_int_equal(cn_mbuf_pool_params(p)->data_size, CN_MBUF_CLUSTER_SIZE);
	assert_int_equal(cn_mbuf_pool_destroy(p), 0);
}

static void params_rejected(void **state)
{
	(void)state;
	struct cn_mbuf_pool_params p = {.kind = CN_MBUF_POOL_SMALL, .data_size = (1u << 30) + 1};
	struct cn_mbuf *m;
	errno = 0;
	assert_null(cn_mbuf_pool_create(&p));
	assert_int_equal(errno, EINVAL);
	p.data_size = 0;
	p.count = 10;
	p.cache_size = 11;
	assert_null(cn_mbuf_pool_create(&p));
	p.cache_size = 0;
	p.data_size = 64;
	p.headroom = 64;
	assert_null(cn_mbuf_pool_create(&p));
	p.kind = (enum cn_mbuf_pool_kind)7;
	p.headroom = 0;
	assert_null(cn_mbuf_pool_create(&p));
	assert_null(cn_mbuf_pool_create(NULL));
	/* A segment pool needs a small pool for derived mbufs. */
	struct cn_mbuf_pool_params g = {.kind = CN_MBUF_POOL_SEG, .count = 4};
	errno = 0;
	assert_null(cn_mbuf_pool_create(&g));
	assert_int_equal(errno, EINVAL);
	/* Jumbo clusters: a configurable size. */
	struct cn_mbuf_pool_params j = {.kind = CN_MBUF_POOL_CLUSTER, .count = 4,
					.data_size = CN_MBUF_JUMBO_SIZE};
	struct cn_mbuf_pool *jp = cn_mbuf_pool_create(&j);
	struct cn_mbuf_pool_params s = {.kind = CN_MBUF_POOL_SMALL, .count = 4,
					.headroom = CN_MBUF_NO_HEADROOM};
	struct cn_mbuf_pool *sp = cn_mbuf_pool_create(&s);
	assert_non_null(jp);
	assert_non_null(sp);
	g.small = jp; /* not a small pool */
	assert_null(cn_mbuf_pool_create(&g));
	g.small = sp;
	g.data_size = 100;
	g.headroom = 100;
	assert_null(cn_mbuf_pool_create(&g));
	g.headroom = 0;
	struct cn_mbuf_pool *gp = cn_mbuf_pool_create(&g);
	assert_non_null(gp);
	assert_int_equal(cn_mbuf_pool_params(gp)->headroom, 0); /* 100 bytes: no default room */
	assert_null(cn_mbuf_get_cluster(sp, gp));
	assert_int_equal(errno, EINVAL);
	m = cn_mbuf_get(sp);
	assert_int_equal(cn_mbuf_attach_cluster(m, gp), -EINVAL);
	cn_mbuf_free(m);
	assert_int_equal(cn_mbuf_pool_destroy(gp), 0);
	m = cn_mbuf_get_cluster(sp, jp);
	assert_non_null(m);
	assert_int_equal(cn_mbuf_tailroom(m), CN_MBUF_JUMBO_SIZE);
	cn_mbuf_free(m);
	m = cn_mbuf_get(sp);
	assert_int_equal(cn_mbuf_headroom(m), 0);
	cn_mbuf_free(m);
	assert_int_equal(cn_mbuf_pool_destroy(jp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(sp), 0);
}

/* cn_mbuf_get_cluster takes two objects: when either pool is dry it fails
 * with ENOBUFS and holds on to neither. */
static void get_cluster_exhaustion(void **state)
{
	(void)state;
	for (unsigned cache = 0; cache <= 2; cache += 2) { /* cache_size <= count */
		struct cn_mbuf_pool_params p = {.kind = CN_MBUF_POOL_SMALL, .count = 4,
						.cache_size = cache};
		struct cn_mbuf_pool_params c = {.kind = CN_MBUF_POOL_CLUSTER, .count = 2,
						.cache_size = cache};
		struct cn_mbuf_pool *mp = cn_mbuf_pool_create(&p), *cp = cn_mbuf_pool_create(&c);
		struct cn_mbuf_pool_stats sm, sc;
		struct cn_mbuf *a, *b, *s[3];

		assert_non_null(mp);
		assert_non_null(cp);
		assert_non_null(a = cn_mbuf_get_cluster(mp, cp));
		assert_non_null(b = cn_mbuf_get_cluster(mp, cp));
		errno = 0;
		assert_null(cn_mbuf_get_cluster(mp, cp)); /* clusters dry */
		assert_int_equal(errno, ENOBUFS);
		cn_mbuf_pool_stats(mp, &sm);
		cn_mbuf_pool_stats(cp, &sc);
		assert_int_equal(sm.in_use, 2); /* the small mbuf went back */
		assert_int_equal(sc.in_use, 2);
		cn_mbuf_free(b);
		for (int i = 0; i < 3; i++)
			assert_non_null(s[i] = cn_mbuf_get(mp));
		errno = 0;
		assert_null(cn_mbuf_get_cluster(mp, cp)); /* small mbufs dry */
		assert_int_equal(errno, ENOBUFS);
		cn_mbuf_pool_stats(cp, &sc);
		assert_int_equal(sc.in_use, 1); /* no cluster taken */
		cn_mbuf_free(s[2]);
		assert_non_null(b = cn_mbuf_get_cluster(mp, cp));
		assert_int_equal(cn_mbuf_refcnt(b), 1);
		assert_int_equal(b->len, 0);
		assert_int_equal(cn_mbuf_tailroom(b) + cn_mbuf_headroom(b), CN_MBUF_CLUSTER_SIZE);
		assert_int_equal(cn_mbuf_check(b), 0);
		cn_mbuf_free(a);
		cn_mbuf_free(b);
		cn_mbuf_free(s[0]);
		cn_mbuf_free(s[1]);
		assert_int_equal(cn_mbuf_pool_destroy(cp), 0);
		assert_int_equal(cn_mbuf_pool_destroy(mp), 0);
	}
}

static void exhaustion_and_recovery(void **state)
{
	(void)state;
	for (unsigned cache = 0; cache <= 8; cache += 8) {
		struct cn_mbuf_pool_params p = {.kind = CN_MBUF_POOL_SMALL, .count = 64,
						.cache_size = cache};
		struct cn_mbuf_pool_params c = {.kind = CN_MBUF_POOL_CLUSTER, .count = 3};
		struct cn_mbuf_pool *mp = cn_mbuf_pool_create(&p), *cp = cn_mbuf_pool_create(&c);
		struct cn_mbuf *m[64], *x[4];
		struct cn_mbuf_pool_stats st;
		assert_non_null(mp);
		assert_non_null(cp);
		for (int i = 0; i < 64; i++)
			assert_non_null(m[i] = cn_mbuf_get(mp));
		errno = 0;
		assert_null(cn_mbuf_get(mp));
		assert_int_equal(errno, ENOBUFS);
		cn_mbuf_pool_stats(mp, &st);
		assert_int_equal(st.in_use, 64);
		assert_int_equal(st.high_water, 64);
		assert_true(st.fails >= 1);
		/* Prepend, split, copy_ref fail cleanly when the pool is dry. */
		assert_null(cn_mbuf_prepend(m[0], CN_MBUF_SMALL_HEADROOM + 1));
		assert_int_equal(errno, ENOBUFS);
		assert_int_equal(m[0]->len, 0);
		cn_mbuf_free(m[63]);
		assert_int_equal(cn_mbuf_get_bulk(mp, x, 2), -ENOBUFS); /* all or nothing */
		cn_mbuf_pool_stats(mp, &st);
		assert_int_equal(st.in_use, 63);
		/* Cluster exhaustion inside append_copy leaves the packet as it was. */
		uint8_t big[4 * 2048];
		cn_test_fill_rand(big, sizeof(big));
		assert_int_equal(cn_mbuf_append_copy(m[0], big, sizeof(big), cp), -ENOBUFS);
		assert_int_equal(m[0]->pkt_len, 0);
		assert_null(m[0]->next);
		assert_int_equal(cn_mbuf_check(m[0]), 0);
		cn_mbuf_free_bulk(m, 63);
		/* Recovery: everything usable again. */
		assert_int_equal(cn_mbuf_get_bulk(mp, m, 64), 0);
		cn_mbuf_free_bulk(m, 64);
		assert_non_null(x[0] = cn_mbuf_get(mp));
		assert_int_equal(cn_mbuf_append_copy(x[0], big, 3 * 2048, cp), 0);
		assert_int_equal(x[0]->pkt_len, 3 * 2048);
		x[1] = cn_mbuf_get(mp);
		assert_int_equal(cn_mbuf_attach_cluster(x[1], cp), -ENOBUFS); /* clusters dry */
		assert_null(x[1]->shared);
		cn_mbuf_free_chain(x[0]);
		cn_mbuf_pool_thread_flush(mp);
		cn_mbuf_pool_stats(mp, &st);
		/* x[1] is leaked on purpose: destroy must report it */
		assert_int_equal(st.in_use, 1);
		assert_int_equal(cn_mbuf_pool_destroy(mp), -EBUSY);
		cn_mbuf_pool_stats(cp, &st);
		assert_int_equal(st.in_use, 0);
		assert_int_equal(cn_mbuf_pool_destroy(cp), 0);
	}
}

static int ext_frees;
static void ext_free(void *base, void *opaque)
{
	assert_ptr_equal(opaque, (void *)0x1234);
	free(base);
	ext_frees++;
}

static void refcounts_and_sharing(void **state)
{
	struct fx *f = *state;
	uint8_t data[1500];
	cn_test_fill_rand(data, sizeof(data));

	struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, f->cp);
	memcpy(cn_mbuf_append(m, 1500), data, 1500);
	struct cn_mbuf *r = cn_mbuf_copy_ref(m, 100, 1000);
	assert_non_null(r);
	assert_int_equal(r->pkt_len, 1000);
	assert_ptr_equal(r->shared, m->shared);
	assert_int_equal(cn_mbuf_refcnt(m), 2);
	assert_false(cn_mbuf_writable(m));
	assert_false(cn_mbuf_writable(r));
	assert_int_equal(cn_mbuf_headroom(r), 0);
	assert_int_equal(cn_mbuf_tailroom(m), 0);
	assert_memory_equal(r->data, data + 100, 1000);
	/* Prepend on a shared packet must not write into the cluster. */
	struct cn_mbuf *h = cn_mbuf_prepend(r, 54);
	assert_non_null(h);
	assert_ptr_not_equal(h, r);
	memset(h->data, 0xee, 54);
	assert_memory_equal(m->data, data, 1500);
	cn_mbuf_free(m);
	assert_int_equal(cn_mbuf_refcnt(r), 1);
	assert_true(cn_mbuf_writable(r));
	assert_memory_equal(r->data, data + 100, 1000);
	cn_mbuf_free_chain(h);

	/* External buffer: free_cb once, at the last reference. */
	uint8_t *ext = malloc(4096);
	struct cn_mbuf_shared sh;
	ext_frees = 0;
	cn_mbuf_ext_init(&sh, ext, 4096, ext_free, (void *)0x1234, true);
	struct cn_mbuf *e = cn_mbuf_get(f->mp);
	assert_int_equal(cn_mbuf_attach_ext(e, &sh, ext + 5000, 1), -EINVAL);
	assert_int_equal(cn_mbuf_attach_ext(e, &sh, ext + 100, 3000), 0);
	assert_int_equal(e->pkt_len, 3000);
	assert_false(cn_mbuf_writable(e)); /* read-only */
	struct cn_mbuf *e2 = cn_mbuf_copy_ref(e, 10, 20);
	struct cn_mbuf *e3 = cn_mbuf_split(e, 1500);
	assert_non_null(e2);
	assert_non_null(e3);
	assert_int_equal(sh.refcnt, 3);
	cn_mbuf_free(e);
	cn_mbuf_free(e3);
	assert_int_equal(ext_frees, 0);
	cn_mbuf_free(e2);
	assert_int_equal(ext_frees, 1);
}

static void surgery_edges(void **state)
{
	struct fx *f = *state;
	uint8_t d[5000], out[5000];
	cn_test_fill_rand(d, sizeof(d));

	/* prepend: in place, then a new mbuf when the room runs out. */
	struct cn_mbuf *m = cn_mbuf_get(f->mp);
	m->seq = 77;
	m = cn_mbuf_prepend(m, CN_MBUF_SMALL_HEADROOM);
	assert_int_equal(cn_mbuf_headroom(m), 0);
	memset(m->data, 1, m->len);
	struct cn_mbuf *h = cn_mbuf_prepend(m, 20);
	assert_ptr_not_equal(h, m);
	assert_int_equal(h->seq, 77);
	assert_int_equal(h->pkt_len, CN_MBUF_SMALL_HEADROOM + 20);
	assert_int_equal(cn_mbuf_headroom(h), CN_MBUF_SMALL_DATA - 20);
	assert_null(cn_mbuf_prepend(h, CN_MBUF_SMALL_DATA + 1));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_mbuf_check(h), 0);
	cn_mbuf_free_chain(h);

	/* pullup across clusters into a new inline head, and in place. */
	m = cn_mbuf_get(f->mp);
	assert_int_equal(cn_mbuf_append_copy(m, d, 5000, f->cp), 0);
	assert_int_equal(cn_mbuf_chain_count(m), 4); /* 64 inline + 3 clusters */
	struct cn_mbuf *p = cn_mbuf_pullup(m, 150);
	assert_non_null(p);
	assert_true(p->len >= 150);
	assert_int_equal(cn_mbuf_check(p), 0);
	assert_int_equal(cn_mbuf_copy_out(p, 0, 5000, out), 0);
	assert_memory_equal(out, d, 5000);
	assert_null(cn_mbuf_pullup(p, 5001));
	assert_int_equal(errno, EINVAL);
	assert_null(cn_mbuf_pullup(p, CN_MBUF_SMALL_DATA + 1000)); /* inline head too small */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(cn_mbuf_copy_out(p, 4990, 11, out), -EINVAL);

	/* split at an mbuf boundary, in a cluster, and rejected at the ends. */
	assert_null(cn_mbuf_split(p, 0));
	assert_null(cn_mbuf_split(p, 5000));
	struct cn_mbuf *t = cn_mbuf_split(p, p->len);
	assert_non_null(t);
	assert_int_equal(p->pkt_len + t->pkt_len, 5000);
	struct cn_mbuf *t2 = cn_mbuf_split(t, 1000);
	assert_non_null(t2);
	assert_int_equal(cn_mbuf_check(p), 0);
	assert_int_equal(cn_mbuf_check(t), 0);
	assert_int_equal(cn_mbuf_check(t2), 0);
	uint32_t a = p->pkt_len;
	cn_mbuf_copy_out(p, 0, a, out);
	cn_mbuf_copy_out(t, 0, 1000, out + a);
	cn_mbuf_copy_out(t2, 0, t2->pkt_len, out + a + 1000);
	assert_memory_equal(out, d, 5000);
	cn_mbuf_cat(p, t);
	cn_mbuf_cat(p, t2);
	cn_mbuf_cat(p, NULL);
	assert_int_equal(p->pkt_len, 5000);
	/* adj both ways, beyond the length. */
	cn_mbuf_adj(p, 3000);
	cn_mbuf_adj(p, -1000);
	assert_int_equal(p->pkt_len, 1000);
	assert_int_equal(cn_mbuf_copy_out(p, 0, 1000, out), 0);
	assert_memory_equal(out, d + 3000, 1000);
	cn_mbuf_adj(p, -5000);
	assert_int_equal(p->pkt_len, 0);
	assert_null(p->next);
	assert_int_equal(cn_mbuf_check(p), 0);
	cn_mbuf_free_chain(p);
}

/* ---------------------------------------------------------------- model */

#define NPKT 4
#define MAXLEN 12000
struct model {
	struct cn_mbuf *m;
	uint8_t *b;
	uint32_t n;
};

static void compare(struct model *x)
{
	static uint8_t out[MAXLEN];
	if (x->m == NULL) {
		assert_int_equal(x->n, 0);
		return;
	}
	assert_int_equal(cn_mbuf_check(x->m), 0);
	assert_int_equal(x->m->pkt_len, x->n);
	assert_int_equal(cn_mbuf_copy_out(x->m, 0, x->n, out), 0);
	assert_memory_equal(out, x->b, x->n);
}

/* copy_ref_hdr calls that took no mbuf from the small pool, and that did. */
static unsigned seg_fast, seg_slow;

static void random_ops(struct fx *f, uint64_t seed, int steps)
{
	struct model pk[NPKT];
	uint8_t tmp[MAXLEN];

	cn_test_seed(seed);
	for (int i = 0; i < NPKT; i++) {
		pk[i].m = NULL;
		pk[i].b = malloc(MAXLEN);
		pk[i].n = 0;
	}
	for (int s = 0; s < steps; s++) {
		struct model *x = &pk[cn_test_rndn(NPKT)];
		struct model *y = &pk[cn_test_rndn(NPKT)];
		uint32_t op = cn_test_rndn(12);
		if (x->m == NULL) {
			x->m = cn_mbuf_get(cn_test_rndn(3) ? f->mp : f->sp);
			x->n = 0;
			if (x->m == NULL) {
				assert_int_equal(errno, ENOBUFS);
				continue;
			}
		}
		switch (op) {
		case 0: { /* append_copy, clusters or inline */
			uint32_t k = cn_test_rndn(3000);
			if (x->n + k > MAXLEN)
				break;
			cn_test_fill_rand(tmp, k);
			struct cn_mbuf_pool *cp[3] = {f->cp, NULL, f->sp};
			if (cn_mbuf_append_copy(x->m, tmp, k, cp[cn_test_rndn(3)]) == 0) {
				memcpy(x->b + x->n, tmp, k);
				x->n += k;
			}
			break;
		}
		case 1: { /* prepend and write the new bytes */
			uint32_t k = 1 + cn_test_rndn(CN_MBUF_SMALL_DATA);
			if (x->n + k > MAXLEN)
				break;
			struct cn_mbuf *h = cn_mbuf_prepend(x->m, k);
			if (h == NULL)
				break;
			x->m = h;
			cn_test_fill_rand(h->data, k);
			memmove(x->b + k, x->b, x->n);
			memcpy(x->b, h->data, k);
			x->n += k;
			break;
		}
		case 2: { /* adj front */
			uint32_t k = cn_test_rndn(x->n + 10);
			cn_mbuf_adj(x->m, (int32_t)k);
			k = k < x->n ? k : x->n;
			memmove(x->b, x->b + k, x->n - k);
			x->n -= k;
			break;
		}
		case 3: { /* adj back */
			uint32_t k = cn_test_rndn(x->n + 10);
			cn_mbuf_adj(x->m, -(int32_t)k);
			x->n -= k < x->n ? k : x->n;
			break;
		}
		case 4: { /* pullup, then write through the contiguous head */
			uint32_t k = cn_test_rndn(x->n < 300 ? x->n + 1 : 300);
			struct cn_mbuf *h = cn_mbuf_pullup(x->m, k);
			if (h == NULL) {
				assert_true(errno == EINVAL || errno == ENOBUFS);
				break;
			}
			x->m = h;
			assert_true(h->len >= k);
			assert_true(cn_mbuf_writable(h) || k == 0 || h->len >= k);
			if (k && cn_mbuf_writable(h)) {
				cn_test_fill_rand(h->data, k);
				memcpy(x->b, h->data, k);
			}
			break;
		}
		case 5: { /* split into y (if y is empty) */
			if (y == x || y->n != 0 || x->n < 2)
				break;
			uint32_t off = 1 + cn_test_rndn(x->n - 1);
			struct cn_mbuf *t = cn_mbuf_split(x->m, off);
			if (t == NULL)
				break;
			cn_mbuf_free_chain(y->m);
			y->m = t;
			memcpy(y->b, x->b + off, x->n - off);
			y->n = x->n - off;
			x->n = off;
			break;
		}
		case 6: { /* copy_ref of a range into y */
			if (y == x || x->n == 0)
				break;
			uint32_t off = cn_test_rndn(x->n), len = 1 + cn_test_rndn(x->n - off);
			struct cn_mbuf *r = cn_mbuf_copy_ref(x->m, off, len);
			if (r == NULL)
				break;
			cn_mbuf_free_chain(y->m);
			y->m = r;
			memcpy(y->b, x->b + off, len);
			y->n = len;
			break;
		}
		case 7: { /* cat y onto x */
			if (y == x || y->m == NULL || x->n + y->n > MAXLEN)
				break;
			cn_mbuf_cat(x->m, y->m);
			memcpy(x->b + x->n, y->b, y->n);
			x->n += y->n;
			y->m = NULL;
			y->n = 0;
			break;
		}
		case 8: { /* copy_out of a random range */
			if (x->n == 0)
				break;
			uint32_t off = cn_test_rndn(x->n), len = cn_test_rndn(x->n - off + 1);
			assert_int_equal(cn_mbuf_copy_out(x->m, off, len, tmp), 0);
			assert_memory_equal(tmp, x->b + off, len);
			uint32_t moff;
			struct cn_mbuf *at = cn_mbuf_at(x->m, off, &moff);
			assert_non_null(at);
			assert_int_equal(at->data[moff], x->b[off]);
			assert_null(cn_mbuf_at(x->m, x->n, &moff));
			break;
		}
		case 9: /* append in place when there is tailroom */
		{
			uint32_t k = 1 + cn_test_rndn(40);
			if (x->n + k > MAXLEN)
				break;
			uint8_t *p = cn_mbuf_append(x->m, k);
			if (p) {
				cn_test_fill_rand(p, k);
				memcpy(x->b + x->n, p, k);
				x->n += k;
			}
			break;
		}
		case 11: { /* copy_ref_hdr into y: header room + reference */
			if (y == x || x->n == 0)
				break;
			uint32_t off = cn_test_rndn(2) ? 0 : cn_test_rndn(x->n);
			uint32_t len = 1 + cn_test_rndn(x->n - off), hl = cn_test_rndn(CN_MBUF_SMALL_DATA + 1);
			struct cn_mbuf_pool_stats a, b;
			cn_mbuf_pool_stats(f->mp, &a);
			struct cn_mbuf *r = cn_mbuf_copy_ref_hdr(x->m, off, len, hl);
			if (r == NULL) {
				assert_true(errno == ENOBUFS);
				break;
			}
			cn_mbuf_pool_stats(f->mp, &b);
			seg_fast += b.gets == a.gets;
			seg_slow += b.gets != a.gets;
			assert_int_equal(r->pkt_len, hl + len);
			assert_true(r->len >= hl);
			cn_test_fill_rand(r->data, hl);
			cn_mbuf_free_chain(y->m);
			y->m = r;
			memcpy(y->b, r->data, hl);
			memcpy(y->b + hl, x->b + off, len);
			y->n = hl + len;
			break;
		}
		case 10: /* free and forget */
			cn_mbuf_free_chain(x->m);
			x->m = NULL;
			x->n = 0;
			break;
		}
		for (int i = 0; i < NPKT; i++)
			compare(&pk[i]);
	}
	for (int i = 0; i < NPKT; i++) {
		cn_mbuf_free_chain(pk[i].m);
		free(pk[i].b);
	}
}

static void model_random(void **state)
{
	seg_fast = seg_slow = 0;
	for (uint64_t seed = 1; seed <= 12; seed++)
		random_ops(*state, seed * 0x9e3779b97f4a7c15ull, 3000);
	/* Both paths of copy_ref_hdr were taken. */
	assert_true(seg_fast > 20);
	assert_true(seg_slow > 20);
}

/* A tiny pool so that the random sequences also run into exhaustion. */
static void model_random_tight(void **state)
{
	(void)state;
	struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 24, .cache_size = 4};
	struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 6};
	struct fx f = {cn_mbuf_pool_create(&mp), cn_mbuf_pool_create(&cp), NULL};
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SEG, .count = 5, .small = f.mp};
	struct cn_mbuf_pool_stats st;
	f.sp = cn_mbuf_pool_create(&sp);
	assert_non_null(f.sp);
	for (uint64_t seed = 100; seed < 106; seed++)
		random_ops(&f, seed, 3000);
	cn_mbuf_pool_thread_flush(f.mp);
	cn_mbuf_pool_stats(f.mp, &st);
	assert_true(st.fails > 0); /* the sequences did hit exhaustion */
	assert_int_equal(st.in_use, 0);
	cn_mbuf_pool_stats(f.sp, &st);
	assert_true(st.fails > 0);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(cn_mbuf_pool_destroy(f.sp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(f.mp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(f.cp), 0);
}

/* ---------------------------------------------------------------- segments */

static uint64_t all_gets(struct fx *f)
{
	struct cn_mbuf_pool_stats a, b, c;
	cn_mbuf_pool_stats(f->mp, &a);
	cn_mbuf_pool_stats(f->cp, &b);
	cn_mbuf_pool_stats(f->sp, &c);
	return a.gets + b.gets + c.gets;
}

static uint32_t in_use(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;
	cn_mbuf_pool_stats(p, &st);
	return st.in_use;
}

static struct cn_mbuf *seg_with(struct fx *f, const uint8_t *d, uint32_t n)
{
	struct cn_mbuf *m = cn_mbuf_get(f->sp);
	assert_non_null(m);
	memcpy(cn_mbuf_append(m, n), d, n);
	return m;
}

/* The companion: a transmission without allocation, sharing with the data
 * mbuf in both free orders, reuse, and every reason to fall back. */
static void seg_companion(void **state)
{
	struct fx *f = *state;
	uint8_t d[3000], hdr[64], out[3100];
	uint64_t g;

	cn_test_seed(77);
	cn_test_fill_rand(d, sizeof(d));
	cn_test_fill_rand(hdr, sizeof(hdr));

	struct cn_mbuf *m = cn_mbuf_get(f->sp);
	assert_non_null(m);
	assert_non_null(m->shared);
	assert_int_equal(m->shared->kind, CN_MBUF_STORAGE_SEG);
	assert_int_equal(cn_mbuf_refcnt(m), 1);
	assert_true(cn_mbuf_writable(m));
	assert_int_equal(cn_mbuf_headroom(m), CN_MBUF_SMALL_HEADROOM);
	assert_int_equal(cn_mbuf_tailroom(m), CN_MBUF_SEG_DATA - CN_MBUF_SMALL_HEADROOM);
	assert_int_equal((uintptr_t)m % 64, 0);
	memcpy(cn_mbuf_append(m, 1460), d, 1460);
	assert_int_equal(cn_mbuf_check(m), 0);

	g = all_gets(f);
	struct cn_mbuf *t = cn_mbuf_copy_ref_hdr(m, 0, 1460, 54);
	assert_non_null(t);
	assert_int_equal(all_gets(f), g); /* no pool touched */
	assert_int_equal(t->pkt_len, 1514);
	assert_int_equal(t->len, 1514);
	assert_null(t->next);
	assert_ptr_equal(t->data + 54, m->data);
	assert_int_equal(cn_mbuf_check(t), 0);
	assert_int_equal(cn_mbuf_refcnt(m), 2);
	assert_false(cn_mbuf_writable(m));
	assert_int_equal(cn_mbuf_headroom(t), 0);
	memcpy(t->data, hdr, 54);
	assert_int_equal(cn_mbuf_copy_out(t, 0, 1514, out), 0);
	assert_memory_equal(out, hdr, 54);
	assert_memory_equal(out + 54, d, 1460);
	assert_int_equal(cn_mbuf_copy_out(m, 0, 1460, out), 0);
	assert_memory_equal(out, d, 1460);

	/* Retransmission while the companion is out: header mbuf + reference. */
	g = all_gets(f);
	struct cn_mbuf *t2 = cn_mbuf_copy_ref_hdr(m, 0, 1460, 54);
	assert_non_null(t2);
	assert_int_equal(all_gets(f), g + 2);
	assert_int_equal(cn_mbuf_chain_count(t2), 2);
	assert_int_equal(cn_mbuf_refcnt(m), 3);
	assert_int_equal(t2->pkt_len, 1514);
	assert_int_equal(t2->len, 54);
	assert_int_equal(cn_mbuf_check(t2), 0);
	/* A prepend on the shared data mbuf must not write the storage. */
	struct cn_mbuf *p = cn_mbuf_prepend(m, 20);
	assert_non_null(p);
	assert_ptr_not_equal(p, m);
	assert_int_equal(cn_mbuf_copy_out(t, 0, 54, out), 0);
	assert_memory_equal(out, hdr, 54);
	m = cn_mbuf_free(p); /* drop the new head again */

	/* The ACK before the TX completion: the companion keeps the storage. */
	cn_mbuf_free(m);
	assert_int_equal(cn_mbuf_refcnt(t), 2);
	assert_int_equal(in_use(f->sp), 1);
	assert_int_equal(cn_mbuf_copy_out(t, 0, 1514, out), 0);
	assert_memory_equal(out + 54, d, 1460);
	cn_mbuf_free_chain(t2);
	assert_int_equal(cn_mbuf_refcnt(t), 1);
	assert_int_equal(in_use(f->sp), 1);
	cn_mbuf_free_chain(t);
	assert_int_equal(in_use(f->sp), 0);

	/* The other order, and the companion taken again once it is back. */
	m = seg_with(f, d, 1000);
	t = cn_mbuf_copy_ref_hdr(m, 0, 1000, 40);
	struct cn_mbuf *first = t;
	cn_mbuf_free_chain(t);
	assert_int_equal(cn_mbuf_refcnt(m), 1);
	assert_true(cn_mbuf_writable(m));
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 0, 600, 0);
	assert_ptr_equal(t, first);
	assert_int_equal(all_gets(f), g);
	assert_int_equal(t->pkt_len, 600);
	cn_mbuf_free_chain(t);
	cn_mbuf_free(m);
	assert_int_equal(in_use(f->sp), 0);

	/* A range over two objects: the companion, then one reference. */
	m = seg_with(f, d, 1460);
	struct cn_mbuf *m2 = seg_with(f, d + 1460, 1000);
	cn_mbuf_cat(m, m2);
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 0, 2000, 54);
	assert_non_null(t);
	assert_int_equal(all_gets(f), g + 1);
	assert_int_equal(cn_mbuf_chain_count(t), 2);
	assert_int_equal(cn_mbuf_check(t), 0);
	assert_int_equal(cn_mbuf_copy_out(t, 54, 2000, out), 0);
	assert_memory_equal(out, d, 2000);
	/* m2's storage is referenced by t now: no companion for it. */
	g = all_gets(f);
	t2 = cn_mbuf_copy_ref_hdr(m, 1460, 500, 54);
	assert_non_null(t2);
	assert_int_equal(all_gets(f), g + 2);
	assert_int_equal(cn_mbuf_copy_out(t2, 54, 500, out), 0);
	assert_memory_equal(out, d + 1460, 500);
	cn_mbuf_free_chain(m);
	cn_mbuf_free_chain(t);
	cn_mbuf_free_chain(t2);
	assert_int_equal(in_use(f->sp), 0);

	/* Fallbacks: a range starting inside, too little room in front, a
	 * cluster source; and the errors. */
	m = seg_with(f, d, 100);
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 10, 50, 54);
	assert_int_equal(all_gets(f), g + 2);
	assert_int_equal(cn_mbuf_copy_out(t, 54, 50, out), 0);
	assert_memory_equal(out, d + 10, 50);
	cn_mbuf_free_chain(t);
	assert_non_null(cn_mbuf_prepend(m, CN_MBUF_SMALL_HEADROOM - 8));
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 0, 100, 54);
	assert_int_equal(all_gets(f), g + 2);
	cn_mbuf_free_chain(t);
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 0, 100, 8); /* exactly the room left */
	assert_int_equal(all_gets(f), g);
	cn_mbuf_free_chain(t);
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(m, 0, 0, 54));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(m, 0, m->pkt_len + 1, 54));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(m, 5, 10, CN_MBUF_SMALL_DATA + 1));
	assert_int_equal(errno, EINVAL);
	cn_mbuf_free(m);
	m = cn_mbuf_get_cluster(f->mp, f->cp);
	memcpy(cn_mbuf_append(m, 500), d, 500);
	g = all_gets(f);
	t = cn_mbuf_copy_ref_hdr(m, 0, 500, 54);
	assert_int_equal(all_gets(f), g + 2);
	assert_int_equal(cn_mbuf_copy_out(t, 54, 500, out), 0);
	assert_memory_equal(out, d, 500);
	cn_mbuf_free_chain(t);
	cn_mbuf_free(m);

	/* Bulk get and free of segment objects. */
	struct cn_mbuf *b[8];
	assert_int_equal(cn_mbuf_get_bulk(f->sp, b, 8), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(cn_mbuf_refcnt(b[i]), 1);
		assert_int_equal(b[i]->len, 0);
		assert_int_equal(cn_mbuf_check(b[i]), 0);
	}
	assert_int_equal(in_use(f->sp), 8);
	cn_mbuf_free_bulk(b, 8);
	assert_int_equal(in_use(f->sp), 0);
	assert_int_equal(cn_mbuf_get_bulk(f->cp, b, 2), -EINVAL);
}

/* Exhaustion of the segment pool and of the small pool behind it: NULL or
 * -ENOBUFS, reference counts and pools as they were. */
static void seg_exhaustion(void **state)
{
	(void)state;
	struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 2};
	struct cn_mbuf_pool *small = cn_mbuf_pool_create(&mp);
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SEG, .count = 3, .small = small};
	struct cn_mbuf_pool *seg = cn_mbuf_pool_create(&sp);
	struct cn_mbuf *s[3], *a, *b, *t, *t2;
	uint8_t d[200] = {1, 2, 3};

	assert_non_null(seg);
	for (int i = 0; i < 3; i++) {
		s[i] = cn_mbuf_get(seg);
		assert_non_null(s[i]);
		memcpy(cn_mbuf_append(s[i], 200), d, 200);
	}
	errno = 0;
	assert_null(cn_mbuf_get(seg));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(in_use(seg), 3);
	a = cn_mbuf_get(small);
	b = cn_mbuf_get(small);
	assert_null(cn_mbuf_get(small));
	/* The companion needs no pool at all. */
	t = cn_mbuf_copy_ref_hdr(s[0], 0, 200, 54);
	assert_non_null(t);
	/* The fallback does: nothing is taken or referenced on failure. */
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(s[0], 0, 200, 54));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(cn_mbuf_refcnt(s[0]), 2);
	cn_mbuf_free(b); /* one left: the header mbuf fits, the reference not */
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(s[0], 0, 200, 54));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(cn_mbuf_refcnt(s[0]), 2);
	assert_int_equal(in_use(small), 1);
	/* Over two objects, the companion of the first and no mbuf for the
	 * second: nothing taken either. */
	cn_mbuf_cat(s[1], s[2]);
	b = cn_mbuf_get(small);
	assert_non_null(b);
	errno = 0;
	assert_null(cn_mbuf_copy_ref_hdr(s[1], 0, 300, 54));
	assert_int_equal(errno, ENOBUFS);
	assert_int_equal(cn_mbuf_refcnt(s[1]), 1);
	assert_int_equal(cn_mbuf_refcnt(s[2]), 1);
	cn_mbuf_free(a);
	cn_mbuf_free(b);
	t2 = cn_mbuf_copy_ref_hdr(s[1], 0, 300, 54);
	assert_non_null(t2);
	assert_int_equal(cn_mbuf_refcnt(s[1]), 2);
	assert_int_equal(cn_mbuf_refcnt(s[2]), 2);
	cn_mbuf_free_chain(s[1]);
	cn_mbuf_free(s[0]);
	assert_int_equal(in_use(seg), 3); /* all held by the packets */
	cn_mbuf_free_chain(t);
	cn_mbuf_free_chain(t2);
	assert_int_equal(in_use(seg), 0);
	assert_int_equal(in_use(small), 0);
	/* And recovery. */
	t = cn_mbuf_get(seg);
	assert_non_null(t);
	cn_mbuf_free(t);
	assert_int_equal(cn_mbuf_pool_destroy(seg), 0);
	assert_int_equal(cn_mbuf_pool_destroy(small), 0);
}

/* ---------------------------------------------------------------- threads */

struct targ {
	struct cn_mbuf_pool *mp, *cp;
	uint64_t seed;
	int flush;
};

static void *worker(void *arg)
{
	struct targ *t = arg;
	struct cn_mbuf *held[64];
	unsigned n = 0;
	uint64_t x = t->seed;

	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((x & 1) && n < 64) {
			struct cn_mbuf *m = (x & 6) ? cn_mbuf_get(t->mp) : cn_mbuf_get_cluster(t->mp, t->cp);
			if (m) {
				m->udata64 = t->seed;
				held[n++] = m;
			}
		} else if (n > 0) {
			struct cn_mbuf *m = held[--n];
			if (m->udata64 != t->seed)
				return (void *)1; /* handed to two threads at once */
			cn_mbuf_free(m);
		}
		if ((i & 4095) == 0 && n >= 8) {
			struct cn_mbuf *b[8];
			if (cn_mbuf_get_bulk(t->mp, b, 8) == 0)
				cn_mbuf_free_bulk(b, 8);
		}
	}
	while (n > 0)
		cn_mbuf_free(held[--n]);
	if (t->flush)
		cn_mbuf_pool_thread_flush(t->mp);
	/* else: the thread-exit destructor gives the caches back */
	return NULL;
}

static void two_threads(void **state)
{
	(void)state;
	cn_test_skip_emulated("threads");
	for (unsigned slots = 1; slots <= 2; slots++) {
		/* slots == 1: the second thread finds no cache slot and must
		 * still work, uncached. */
		struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 200,
						 .cache_size = 32, .max_threads = slots};
		struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 100,
						 .cache_size = 8, .max_threads = slots};
		struct cn_mbuf_pool *p = cn_mbuf_pool_create(&mp), *c = cn_mbuf_pool_create(&cp);
		pthread_t th[2];
		struct targ a[2] = {{p, c, 0x1234567, 1}, {p, c, 0xabcdef1, 0}};
		void *rv;
		struct cn_mbuf_pool_stats st;

		for (int i = 0; i < 2; i++)
			assert_int_equal(pthread_create(&th[i], NULL, worker, &a[i]), 0);
		for (int i = 0; i < 2; i++) {
			assert_int_equal(pthread_join(th[i], &rv), 0);
			assert_null(rv);
		}
		cn_mbuf_pool_stats(p, &st);
		assert_int_equal(st.in_use, 0);
		assert_int_equal(st.cached, 0); /* both threads gave their caches back */
		assert_int_equal(st.avail, 200);
		assert_true(st.gets == st.puts && st.gets > 100000);
		cn_mbuf_pool_stats(c, &st);
		assert_int_equal(st.in_use, 0);
		assert_int_equal(st.cached, 0);
		assert_int_equal(cn_mbuf_pool_destroy(p), 0);
		assert_int_equal(cn_mbuf_pool_destroy(c), 0);
	}
}

/* Companions freed on another thread (a TX completion elsewhere) while
 * this one drops the data mbufs: the counts go atomic above 1, and every
 * object returns exactly once whichever side lets go last. */
struct seg_targ {
	struct cn_mbuf **pk;
	unsigned n;
};

static void *seg_completer(void *arg)
{
	struct seg_targ *t = arg;
	for (unsigned i = 0; i < t->n; i++)
		cn_mbuf_free_chain(t->pk[i]);
	return NULL;
}

static void seg_two_threads(void **state)
{
	(void)state;
	cn_test_skip_emulated("threads");
	struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 512, .cache_size = 16};
	struct cn_mbuf_pool *small = cn_mbuf_pool_create(&mp);
	struct cn_mbuf_pool_params sp = {.kind = CN_MBUF_POOL_SEG, .count = 256, .cache_size = 16,
					 .small = small};
	struct cn_mbuf_pool *seg = cn_mbuf_pool_create(&sp);
	struct cn_mbuf *d[64], *pk[64];
	struct cn_mbuf_pool_stats st;

	assert_non_null(seg);
	for (int round = 0; round < 300; round++) {
		struct seg_targ t = {pk, 64};
		pthread_t th;
		for (int i = 0; i < 64; i++) {
			d[i] = cn_mbuf_get(seg);
			assert_non_null(d[i]);
			memset(cn_mbuf_append(d[i], 100), i, 100);
			/* every other one twice: companion + a fallback reference */
			pk[i] = cn_mbuf_copy_ref_hdr(d[i], 0, 100, 54);
			assert_non_null(pk[i]);
			if (i & 1)
				cn_mbuf_cat(pk[i], cn_mbuf_copy_ref_hdr(d[i], 0, 100, 54));
		}
		assert_int_equal(pthread_create(&th, NULL, seg_completer, &t), 0);
		for (int i = 0; i < 64; i++)
			cn_mbuf_free(d[i]);
		assert_int_equal(pthread_join(th, NULL), 0);
	}
	cn_mbuf_pool_thread_flush(seg);
	cn_mbuf_pool_thread_flush(small);
	cn_mbuf_pool_stats(seg, &st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.avail, 256);
	assert_int_equal(st.gets, 300 * 64);
	cn_mbuf_pool_stats(small, &st);
	assert_int_equal(st.in_use, 0);
	assert_int_equal(st.avail, 512);
	assert_int_equal(cn_mbuf_pool_destroy(seg), 0);
	assert_int_equal(cn_mbuf_pool_destroy(small), 0);
}

/* Many pools over a thread's life: stale cache entries must not pile up. */
static void many_pools(void **state)
{
	(void)state;
	for (int i = 0; i < 100; i++) {
		struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 8, .cache_size = 4};
		struct cn_mbuf_pool *p = cn_mbuf_pool_create(&mp);
		struct cn_mbuf *m = cn_mbuf_get(p);
		struct cn_mbuf_pool_stats st;
		cn_mbuf_free(m);
		cn_mbuf_pool_stats(p, &st);
		assert_true(st.cached > 0); /* a cache was claimed */
		assert_int_equal(st.in_use, 0);
		assert_int_equal(cn_mbuf_pool_destroy(p), 0);
	}
}


/* ---------------------------------------------------------------- caller memory */

/* A cluster pool over a caller's region laid out like an AF_XDP UMEM:
 * 2048-byte chunks, clusters of 1984 bytes at each chunk's start, I/O
 * addresses counted from 0. Every cluster lies in the region, the
 * translations go both ways, the region is the only storage written, and
 * the pool leaves the region to the caller at destroy. */
static void ext_memory(void **state)
{
	enum { N = 64, STRIDE = 2048, SIZE = 1984 };
	(void)state;
	uint8_t *region = aligned_alloc(4096, (size_t)N * STRIDE + 4096);
	assert_non_null(region);
	memset(region, 0xee, (size_t)N * STRIDE + 4096);
	struct cn_mbuf_pool_params sp = {.name = "small", .kind = CN_MBUF_POOL_SMALL, .count = 2 * N,
					 .cache_size = 8};
	struct cn_mbuf_pool_params cp = {.name = "umem", .kind = CN_MBUF_POOL_CLUSTER, .count = N,
					 .data_size = SIZE, .cache_size = 8, .ext_mem = region,
					 .ext_stride = STRIDE, .ext_iova = 0};
	struct cn_mbuf_pool *mp = cn_mbuf_pool_create(&sp), *xp = cn_mbuf_pool_create(&cp);
	assert_non_null(mp);
	assert_non_null(xp);
	assert_int_equal(cn_mbuf_pool_params(xp)->ext_stride, STRIDE);

	struct cn_mbuf *m[N];
	bool seen[N] = {false};
	for (unsigned i = 0; i < N; i++) {
		m[i] = cn_mbuf_get_cluster(mp, xp);
		assert_non_null(m[i]);
		uint8_t *b = m[i]->buf;
		assert_true(b >= region && b < region + (size_t)N * STRIDE);
		size_t rel = (size_t)(b - region);
		assert_int_equal(rel % STRIDE, 0);
		assert_false(seen[rel / STRIDE]);
		seen[rel / STRIDE] = true;
		assert_int_equal(m[i]->buf_len, SIZE);
		/* both directions of the translation, at the first, a middle
		 * and the last byte */
		for (uint32_t off = 0; off < SIZE; off += SIZE / 2 - 1) {
			uint32_t got = UINT32_MAX;
			assert_int_equal(cn_mbuf_pool_iova(xp, b + off), rel + off);
			assert_ptr_equal(cn_mbuf_pool_cluster_at(xp, rel + off, &got), m[i]->shared);
			assert_int_equal(got, off);
		}
		assert_int_equal(cn_mbuf_pool_iova(xp, b + SIZE - 1), rel + SIZE - 1);
		m[i]->data = b + 256;
		assert_int_equal(cn_mbuf_iova(m[i]), rel + 256);
		/* the gap between clusters and the headers are not storage */
		assert_true(cn_mbuf_pool_iova(xp, b + SIZE) == UINT64_MAX);
		assert_null(cn_mbuf_pool_cluster_at(xp, rel + SIZE, NULL));
		assert_true(cn_mbuf_pool_iova(xp, m[i]->shared) == UINT64_MAX);
		memset(b, (int)i, SIZE);
	}
	assert_null(cn_mbuf_get_cluster(mp, xp)); /* all N out */
	assert_true(cn_mbuf_pool_iova(xp, region + (size_t)N * STRIDE) == UINT64_MAX);
	assert_null(cn_mbuf_pool_cluster_at(xp, (uint64_t)N * STRIDE, NULL));
	assert_true(cn_mbuf_pool_iova(xp, region - 1) == UINT64_MAX);
	/* sharing works as for any cluster: a reference keeps it */
	m[0]->len = m[0]->pkt_len = 100;
	struct cn_mbuf *r = cn_mbuf_copy_ref(m[0], 0, 1);
	assert_non_null(r);
	assert_ptr_equal(r->shared, m[0]->shared);
	for (unsigned i = 0; i < N; i++)
		cn_mbuf_free(m[i]);
	cn_mbuf_free(r);
	expect_empty(xp);
	expect_empty(mp);
	/* nothing past the clusters was written (the pool's headers live in
	 * its own memory); in release builds the clusters keep their bytes */
	for (unsigned i = 0; i < N; i++)
		for (size_t k = SIZE; k < STRIDE; k++)
			assert_int_equal(region[(size_t)i * STRIDE + k], 0xee);
	for (size_t k = 0; k < 4096; k++)
		assert_int_equal(region[(size_t)N * STRIDE + k], 0xee);
	cn_mbuf_pool_thread_flush(mp);
	cn_mbuf_pool_thread_flush(xp);
	assert_int_equal(cn_mbuf_pool_destroy(xp), 0);
	assert_int_equal(cn_mbuf_pool_destroy(mp), 0);
	region[0] = 1; /* still the caller's */
	free(region);

	/* rejected: not a cluster pool, stride below the cluster, overflow */
	struct cn_mbuf_pool_params bad = cp;
	bad.kind = CN_MBUF_POOL_SMALL;
	errno = 0;
	assert_null(cn_mbuf_pool_create(&bad));
	assert_int_equal(errno, EINVAL);
	bad = cp;
	bad.ext_stride = SIZE - 1;
	errno = 0;
	assert_null(cn_mbuf_pool_create(&bad));
	assert_int_equal(errno, EINVAL);
	bad = cp;
	bad.ext_iova = UINT64_MAX - 1000;
	errno = 0;
	assert_null(cn_mbuf_pool_create(&bad));
	assert_int_equal(errno, EINVAL);
	/* own memory: IOVA is the virtual address */
	struct cn_mbuf_pool_params own = {.kind = CN_MBUF_POOL_CLUSTER, .count = 4};
	struct cn_mbuf_pool *op = cn_mbuf_pool_create(&own);
	struct cn_mbuf_pool *osp = cn_mbuf_pool_create(&sp);
	struct cn_mbuf *om = cn_mbuf_get_cluster(osp, op);
	assert_non_null(om);
	assert_int_equal(cn_mbuf_iova(om), (uint64_t)(uintptr_t)om->data);
	assert_ptr_equal(cn_mbuf_pool_cluster_at(op, (uintptr_t)om->buf + 5, NULL), om->shared);
	assert_null(cn_mbuf_pool_cluster_at(op, (uintptr_t)om->shared, NULL));
	assert_null(cn_mbuf_pool_cluster_at(osp, (uintptr_t)om->buf, NULL));
	cn_mbuf_free(om);
	cn_mbuf_pool_thread_flush(osp);
	cn_mbuf_pool_thread_flush(op);
	assert_int_equal(cn_mbuf_pool_destroy(op), 0);
	assert_int_equal(cn_mbuf_pool_destroy(osp), 0);
}

/* ---------------------------------------------------------------- debug */

static int child_status(void (*fn)(struct cn_mbuf_pool *), struct cn_mbuf_pool *p)
{
	int st;
	fflush(NULL);
	pid_t pid = cn_test_fork();
	if (pid == 0) {
		freopen("/dev/null", "w", stderr);
		fn(p);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static void do_double_free(struct cn_mbuf_pool *p)
{
	struct cn_mbuf *m = cn_mbuf_get(p);
	cn_mbuf_free(m);
	cn_mbuf_free(m);
}

static void do_use_after_free(struct cn_mbuf_pool *p)
{
	struct cn_mbuf *m = cn_mbuf_get(p);
	uint8_t *d = m->data;
	cn_mbuf_free(m);
	d[3] = 1;
	cn_mbuf_get(p); /* LIFO: the same object, found written */
}

static void do_companion_double_free(struct cn_mbuf_pool *sp)
{
	struct cn_mbuf *m = cn_mbuf_get(sp);
	cn_mbuf_append(m, 10);
	struct cn_mbuf *t = cn_mbuf_copy_ref_hdr(m, 0, 10, 20);
	cn_mbuf_free(t);
	cn_mbuf_free(t);
}

static void do_seg_use_after_free(struct cn_mbuf_pool *sp)
{
	struct cn_mbuf *m = cn_mbuf_get(sp);
	uint8_t *d = m->data;
	cn_mbuf_append(m, 10);
	struct cn_mbuf *t = cn_mbuf_copy_ref_hdr(m, 0, 10, 20);
	cn_mbuf_free(m);
	cn_mbuf_free(t); /* the object goes back here */
	d[700] = 1;
	cn_mbuf_get(sp); /* LIFO: the same object, found written */
}

/* The child's stderr into @p msg (NUL-terminated). */
static int child_status_msg(void (*fn)(struct cn_mbuf_pool *), struct cn_mbuf_pool *p,
			    char *msg, size_t cap)
{
	int st, fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = cn_test_fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		fn(p);
		_exit(0);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while (n + 1 < cap && (r = read(fds[0], msg + n, cap - 1 - n)) > 0)
		n += (size_t)r;
	msg[n] = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return st;
}

static struct cn_mbuf *g_freed; /* the mbuf the child frees twice */

static void do_double_free_named(struct cn_mbuf_pool *p)
{
	cn_mbuf_free(g_freed);
	cn_mbuf_free(g_freed);
	(void)p;
}

static void do_double_free_bulk(struct cn_mbuf_pool *p)
{
	struct cn_mbuf *m[2] = {cn_mbuf_get(p), NULL};
	m[1] = m[0];
	cn_mbuf_free_bulk(m, 2);
}

static void do_foreign_free(struct cn_mbuf_pool *p)
{
	static struct cn_mbuf fake __attribute__((aligned(64)));
	fake.pool = p;
	cn_mbuf_free(&fake);
}

/* Misuse caught in every build, release included: a double free (single
 * and bulk, plain and segment mbufs) and the free of a pointer that is not
 * an mbuf of its pool stop the program with a message naming the mbuf. */
static void misuse_detected(void **state)
{
	struct fx *f = *state;
	char msg[512], want[128];

	cn_test_skip_emulated("fork without exec"); /* before the get: no leak */
	g_freed = cn_mbuf_get(f->mp);
	assert_non_null(g_freed);
	int st = child_status_msg(do_double_free_named, f->mp, msg, sizeof(msg));
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	snprintf(want, sizeof(want), "double free of mbuf %p", (void *)g_freed);
	assert_non_null(strstr(msg, want));
	cn_mbuf_free(g_freed);
	st = child_status_msg(do_double_free_bulk, f->mp, msg, sizeof(msg));
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	assert_non_null(strstr(msg, "double free of mbuf"));
	st = child_status_msg(do_foreign_free, f->mp, msg, sizeof(msg));
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	assert_non_null(strstr(msg, "not an mbuf of its pool"));
	st = child_status(do_double_free, f->sp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = child_status(do_companion_double_free, f->sp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

static void debug_checks(void **state)
{
	struct fx *f = *state;
	if (!cn_mbuf_debug_enabled())
		skip();
	int st = child_status(do_double_free, f->mp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = child_status(do_use_after_free, f->mp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = child_status(do_companion_double_free, f->sp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = child_status(do_double_free, f->sp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
	st = child_status(do_seg_use_after_free, f->sp);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		CN_FX(get_free_basic), CN_FX(bulk), CN_T(params_zero), CN_T(params_rejected),
		CN_T(exhaustion_and_recovery), CN_T(get_cluster_exhaustion),
		CN_FX(refcounts_and_sharing), CN_FX(surgery_edges), CN_FX(model_random),
		CN_T(model_random_tight), CN_FX(seg_companion), CN_T(seg_exhaustion),
		CN_T(two_threads), CN_T(seg_two_threads), CN_T(many_pools), CN_T(ext_memory),
		CN_FX(debug_checks), CN_FX(misuse_detected),
	};
	return cmocka_run_group_tests_name("mbuf", tests, NULL, NULL);
}
