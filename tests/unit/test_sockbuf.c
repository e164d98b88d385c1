/* SPDX-License-Identifier: BSD-2-Clause */
/* Socket buffers: the chain and the ring against a flat-buffer model on
 * random operation sequences (fixed seeds), ring wrap-around at every
 * offset, stored chunk checksums against cn_csum_partial, exhaustion of
 * anchors and ring space, the send pointer staying O(1) in steady state,
 * and the common segment view giving the same bytes for both kinds. Pool
 * counters are checked equal before and after every test. */
#include "cn_test.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cachenet/csum.h"
#include "cachenet/lab/sockbuf_naive.h"
#include "cachenet/sockbuf.h"

CN_TEST_POOLS_FIXTURE(4096, 2048, 64)


/* Flat model of a send buffer: bytes [0, n) of b are offsets 0..n-1. */
#define MODEL_MAX (1u << 20)
struct model {
	uint8_t *b;
	uint32_t n;
};

static void seg_matches(const struct cn_sb_seg *s, const struct model *x, uint32_t off)
{
	uint32_t at = off;
	assert_int_equal(s->off, off);
	for (uint32_t i = 0; i < s->npieces; i++) {
		assert_true(s->piece[i].len > 0);
		assert_memory_equal(s->piece[i].base, x->b + at, s->piece[i].len);
		at += s->piece[i].len;
	}
	assert_int_equal(at - off, s->len);
	if (s->csum_valid)
		assert_int_equal(cn_csum_fold(s->csum), cn_csum_fold(cn_csum_partial(x->b + off, s->len, 0)));
}

static void model_drop(struct model *x, uint32_t k);

/* An ACK of a random number of the @snd bytes sent: drops them from the
 * buffer and the model; returns how many. */
static uint32_t ack_some(struct cn_sockbuf *sb, struct model *x, uint32_t snd)
{
	uint32_t k = cn_test_rndn(snd + 1);
	assert_int_equal(cn_sockbuf_drop(sb, k), k);
	model_drop(x, k);
	return k;
}

static void model_drop(struct model *x, uint32_t k)
{
	memmove(x->b, x->b + k, x->n - k);
	x->n -= k;
}

/* ---------------------------------------------------------------- chain */

static struct cn_mbuf *make_packet(struct cn_test_pools_fx *f, const uint8_t *src, uint32_t len)
{
	/* Mixed storage: inline, cluster, and a cluster shared with nobody. */
	struct cn_mbuf *m = cn_mbuf_get(f->mp);
	if (m == NULL)
		return NULL;
	if (cn_mbuf_append_copy(m, src, len, cn_test_rndn(2) ? f->cp : NULL) < 0) {
		cn_mbuf_free_chain(m);
		return NULL;
	}
	return m;
}

static void chain_random(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct model x = {malloc(MODEL_MAX), 0};
	uint8_t *tmp = malloc(65536);

	for (uint64_t seed = 1; seed <= 8; seed++) {
		struct cn_sbchain sb;
		uint32_t snd = 0; /* next byte to send, like snd_nxt - snd_una */
		cn_test_seed(seed * 0x2545f4914f6cdd1dull);
		cn_sbchain_init(&sb, f->mp, f->cp);
		x.n = 0;
		for (int step = 0; step < 4000; step++) {
			uint32_t op = cn_test_rndn(8);
			switch (op) {
			case 0: case 1: { /* copy in */
				uint32_t k = cn_test_rndn(op ? 100 : 6000);
				if (x.n + k > MODEL_MAX)
					break;
				cn_test_fill_rand(tmp, k);
				assert_int_equal(cn_sbchain_append_copy(&sb, tmp, k), 0);
				memcpy(x.b + x.n, tmp, k);
				x.n += k;
				break;
			}
			case 2: { /* append a packet by reference (sbcompress for small ones) */
				uint32_t k = cn_test_rndn(3) ? cn_test_rndn(200) : cn_test_rndn(5000);
				if (x.n + k > MODEL_MAX)
					break;
				cn_test_fill_rand(tmp, k);
				struct cn_mbuf *m = make_packet(f, tmp, k);
				assert_non_null(m);
				cn_sbchain_append(&sb, m);
				memcpy(x.b + x.n, tmp, k);
				x.n += k;
				break;
			}
			case 3: case 4: { /* send the next segment */
				struct cn_sb_seg s;
				uint32_t mss = 1 + cn_test_rndn(3000);
				assert_int_equal(cn_sbchain_seg(&sb, snd, mss, &s), 0);
				seg_matches(&s, &x, snd);
				if (s.len) {
					assert_ptr_equal(s.m->data + s.moff, s.piece[0].base);
					struct cn_mbuf *r = cn_sbchain_copy_ref(&sb, snd, s.len);
					assert_non_null(r);
					assert_int_equal(cn_mbuf_copy_out(r, 0, s.len, tmp), 0);
					assert_memory_equal(tmp, x.b + snd, s.len);
					cn_mbuf_free_chain(r);
				}
				snd += s.len;
				break;
			}
			case 5: { /* retransmission from a random earlier offset */
				struct cn_sb_seg s;
				uint32_t off = cn_test_rndn(x.n + 1);
				assert_int_equal(cn_sbchain_seg(&sb, off, 1 + cn_test_rndn(9000), &s), 0);
				seg_matches(&s, &x, off);
				assert_int_equal(cn_sbchain_naive_seg(&sb, off, s.len, &s), 0);
				seg_matches(&s, &x, off);
				break;
			}
			case 6: { /* ACK */
				snd -= ack_some(&sb.sb, &x, snd);
				break;
			}
			case 7: { /* errors */
				struct cn_sb_seg s;
				assert_int_equal(cn_sbchain_seg(&sb, x.n + 1, 10, &s), -EINVAL);
				errno = 0;
				assert_null(cn_sbchain_copy_ref(&sb, x.n, 1));
				assert_int_equal(errno, EINVAL);
				break;
			}
			}
			assert_int_equal(cn_sockbuf_len(&sb.sb), x.n);
			assert_int_equal(cn_mbuf_chain_count(sb.head), sb.nmbufs);
			for (struct cn_mbuf *m = sb.head; m; m = m->next)
				assert_true(m->len > 0);
		}
		/* Everything matches at the end, through the generic view. */
		for (uint32_t off = 0; off < x.n;) {
			struct cn_sb_seg s;
			assert_int_equal(cn_sockbuf_seg(&sb.sb, off, 1460, &s), 0);
			seg_matches(&s, &x, off);
			off += s.len;
		}
		cn_sbchain_flush(&sb);
	}
	free(x.b);
	free(tmp);
}

/* Steady state (send next, ACK oldest) never walks, however much is queued;
 * the naive versions walk in proportion to it. */
static void chain_send_pointer_is_o1(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_sbchain sb;
	static uint8_t data[1460];
	uint32_t snd = 0;

	cn_sbchain_init(&sb, f->mp, f->cp);
	for (int i = 0; i < 1000; i++)
		assert_int_equal(cn_sbchain_append_copy(&sb, data, sizeof(data)), 0);
	uint64_t w0 = sb.sb.walks;
	for (int i = 0; i < 1000; i++) {
		struct cn_mbuf *r = cn_sbchain_copy_ref(&sb, snd, 1460);
		assert_non_null(r);
		cn_mbuf_free_chain(r);
		snd += 1460;
		if (i % 2) {
			cn_sbchain_drop(&sb, 1460);
			snd -= 1460;
			assert_int_equal(cn_sbchain_append_copy(&sb, data, sizeof(data)), 0);
		}
	}
	/* At most one step per segment: to the next mbuf. */
	assert_true(sb.sb.walks - w0 <= 1000 * 2);
	uint64_t w1 = sb.sb.walks;
	struct cn_mbuf *r = cn_sbchain_naive_copy_ref(&sb, sb.sb.cc - 1460, 1460);
	cn_mbuf_free_chain(r);
	assert_true(sb.sb.walks - w1 >= 500);
	cn_sbchain_flush(&sb);
}

/* ---------------------------------------------------------------- segments */

static uint64_t gets_of(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;
	cn_mbuf_pool_stats(p, &st);
	return st.gets;
}

static uint32_t in_use_of(struct cn_mbuf_pool *p)
{
	struct cn_mbuf_pool_stats st;
	cn_mbuf_pool_stats(p, &st);
	return st.in_use;
}

#define SEG_MSS 1460
#define SEG_HDR 54

/* A bulk write and a window of MSS segments: one get per segment, for the
 * copy-in; the transmissions take none; the storage outlives the ACK
 * while a packet still holds it. */
static void chain_seg_one_get_per_segment(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_mbuf_pool_params spp = {.kind = CN_MBUF_POOL_SEG, .count = 128, .cache_size = 16,
					  .data_size = CN_MBUF_SMALL_HEADROOM + SEG_MSS, .small = f->mp};
	struct cn_mbuf_pool *sp = cn_mbuf_pool_create(&spp);
	static uint8_t data[100 * SEG_MSS], out[SEG_HDR + SEG_MSS];
	struct cn_mbuf *pk[100];
	struct cn_sbchain sb;

	assert_non_null(sp);
	cn_test_seed(4242);
	cn_test_fill_rand(data, sizeof(data));
	cn_sbchain_init(&sb, f->mp, sp);
	uint64_t g0 = gets_of(f->mp) + gets_of(f->cp) + gets_of(sp);
	assert_int_equal(cn_sbchain_append_copy(&sb, data, sizeof(data)), 0);
	assert_int_equal(sb.nmbufs, 100);
	for (uint32_t i = 0; i < 100; i++) {
		pk[i] = cn_sbchain_tx(&sb, i * SEG_MSS, SEG_MSS, SEG_HDR);
		assert_non_null(pk[i]);
		assert_int_equal(pk[i]->pkt_len, SEG_HDR + SEG_MSS);
		assert_null(pk[i]->next);
		memset(pk[i]->data, (int)i, SEG_HDR);
	}
	assert_int_equal(gets_of(f->mp) + gets_of(f->cp) + gets_of(sp) - g0, 100);
	/* All acknowledged before any TX completion. */
	assert_int_equal(cn_sbchain_drop(&sb, sizeof(data)), sizeof(data));
	assert_int_equal(in_use_of(sp), 100);
	for (uint32_t i = 0; i < 100; i++) {
		assert_int_equal(cn_mbuf_copy_out(pk[i], 0, SEG_HDR + SEG_MSS, out), 0);
		for (int k = 0; k < SEG_HDR; k++)
			assert_int_equal(out[k], (uint8_t)i);
		assert_memory_equal(out + SEG_HDR, data + i * SEG_MSS, SEG_MSS);
		cn_mbuf_free_chain(pk[i]);
	}
	assert_int_equal(in_use_of(sp), 0);
	/* Small writes, each sent at once and completed before the next: a
	 * tail already sent from is not topped up, so every segment starts an
	 * object and goes out through its companion. An unsent tail is. */
	uint32_t snd = 0;
	for (uint32_t i = 0; i < 50; i++) {
		uint64_t gs = gets_of(sp), gm = gets_of(f->mp);
		assert_int_equal(cn_sbchain_append_copy(&sb, data + snd, 300), 0);
		struct cn_mbuf *r = cn_sbchain_tx(&sb, snd, 300, SEG_HDR);
		assert_non_null(r);
		assert_int_equal(gets_of(sp) - gs, 1);
		assert_int_equal(gets_of(f->mp) - gm, 0);
		assert_int_equal(cn_mbuf_copy_out(r, SEG_HDR, 300, out), 0);
		assert_memory_equal(out, data + snd, 300);
		cn_mbuf_free_chain(r);
		snd += 300;
	}
	assert_int_equal(sb.nmbufs, 50);
	uint64_t gs = gets_of(sp);
	assert_int_equal(cn_sbchain_append_copy(&sb, data, 100), 0);
	assert_int_equal(cn_sbchain_append_copy(&sb, data + 100, 100), 0); /* topped up */
	assert_int_equal(gets_of(sp) - gs, 1);
	assert_int_equal(sb.nmbufs, 51);
	assert_int_equal(cn_sbchain_drop(&sb, snd + 200), snd + 200);
	assert_int_equal(sb.sent_hi, 0);
	assert_int_equal(in_use_of(sp), 0);
	/* Exhaustion: a copy-in that does not fit appends nothing. */
	assert_int_equal(cn_sbchain_append_copy(&sb, data, 50 * SEG_MSS), 0);
	uint64_t g1 = gets_of(sp);
	for (int i = 0; i < 5; i++)
		assert_int_equal(cn_sbchain_append_copy(&sb, data, sizeof(data)), -ENOBUFS);
	assert_int_equal(cn_sockbuf_len(&sb.sb), 50 * SEG_MSS);
	assert_int_equal(gets_of(sp) - g1, 5 * 78); /* all there were, given back */
	assert_int_equal(in_use_of(sp), 50);
	cn_sbchain_flush(&sb);
	assert_int_equal(in_use_of(sp), 0);
	cn_mbuf_pool_thread_flush(sp);
	assert_int_equal(cn_mbuf_pool_destroy(sp), 0);
}

/* Random writes, transmissions, retransmissions, ACKs and TX completions
 * in any order against the flat model; every packet's bytes are checked
 * when it is built and again when it completes. */
#define FLIGHT 48
struct flight {
	struct cn_mbuf *m;
	uint8_t *want;
	uint32_t n;
};

static void chain_seg_random(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_mbuf_pool_params spp = {.kind = CN_MBUF_POOL_SEG, .count = 1024, .cache_size = 32,
					  .data_size = CN_MBUF_SMALL_HEADROOM + SEG_MSS, .small = f->mp};
	struct cn_mbuf_pool *sp = cn_mbuf_pool_create(&spp);
	struct model x = {malloc(MODEL_MAX), 0};
	uint8_t *tmp = malloc(65536);
	struct flight fl[FLIGHT] = {{0}};
	unsigned fast = 0, slow = 0;

	assert_non_null(sp);
	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct cn_sbchain sb;
		uint32_t snd = 0;
		cn_test_seed(seed * 0x9e3779b97f4a7c15ull);
		cn_sbchain_init(&sb, f->mp, sp);
		x.n = 0;
		for (int step = 0; step < 4000; step++) {
			uint32_t op = cn_test_rndn(7);
			switch (op) {
			case 0: { /* write: whole segments mostly, odd sizes too */
				uint32_t k = cn_test_rndn(3) ? SEG_MSS * (1 + cn_test_rndn(4)) : cn_test_rndn(4000);
				if (x.n + k > MODEL_MAX || x.n - snd > 200 * SEG_MSS)
					break;
				cn_test_fill_rand(tmp, k);
				if (cn_sbchain_append_copy(&sb, tmp, k) < 0)
					break; /* pool held by packets in flight */
				memcpy(x.b + x.n, tmp, k);
				x.n += k;
				break;
			}
			case 1: case 2: case 3: { /* transmit the next segment, or retransmit */
				uint32_t off = op == 3 && snd ? cn_test_rndn(snd) : snd;
				uint32_t len = x.n - off < SEG_MSS ? x.n - off : SEG_MSS;
				uint32_t hl = cn_test_rndn(2) ? SEG_HDR : cn_test_rndn(129);
				struct flight *q = &fl[cn_test_rndn(FLIGHT)];
				if (len == 0)
					break;
				if (q->m) { /* its TX completes first */
					assert_int_equal(cn_mbuf_copy_out(q->m, 0, q->n, tmp), 0);
					assert_memory_equal(tmp, q->want, q->n);
					cn_mbuf_free_chain(q->m);
					q->m = NULL;
				}
				uint64_t g = gets_of(f->mp);
				struct cn_mbuf *r = cn_sbchain_tx(&sb, off, len, hl);
				if (r == NULL) {
					assert_int_equal(errno, ENOBUFS);
					break;
				}
				fast += gets_of(f->mp) == g;
				slow += gets_of(f->mp) != g;
				assert_int_equal(cn_mbuf_check(r), 0);
				assert_int_equal(r->pkt_len, hl + len);
				cn_test_fill_rand(r->data, hl);
				q->m = r;
				q->n = hl + len;
				q->want = realloc(q->want, q->n);
				memcpy(q->want, r->data, hl);
				memcpy(q->want + hl, x.b + off, len);
				assert_int_equal(cn_mbuf_copy_out(r, 0, q->n, tmp), 0);
				assert_memory_equal(tmp, q->want, q->n);
				if (off == snd)
					snd += len;
				break;
			}
			case 4: { /* ACK */
				snd -= ack_some(&sb.sb, &x, snd);
				break;
			}
			case 5: { /* a TX completion */
				struct flight *q = &fl[cn_test_rndn(FLIGHT)];
				if (q->m) {
					assert_int_equal(cn_mbuf_copy_out(q->m, 0, q->n, tmp), 0);
					assert_memory_equal(tmp, q->want, q->n);
					cn_mbuf_free_chain(q->m);
					q->m = NULL;
				}
				break;
			}
			case 6: { /* the view still matches */
				struct cn_sb_seg s;
				uint32_t off = cn_test_rndn(x.n + 1);
				assert_int_equal(cn_sbchain_seg(&sb, off, 1 + cn_test_rndn(5000), &s), 0);
				seg_matches(&s, &x, off);
				break;
			}
			}
			assert_int_equal(cn_sockbuf_len(&sb.sb), x.n);
		}
		cn_sbchain_flush(&sb);
		for (int i = 0; i < FLIGHT; i++) {
			if (fl[i].m) {
				assert_int_equal(cn_mbuf_copy_out(fl[i].m, 0, fl[i].n, tmp), 0);
				assert_memory_equal(tmp, fl[i].want, fl[i].n);
				cn_mbuf_free_chain(fl[i].m);
				fl[i].m = NULL;
			}
		}
		assert_int_equal(in_use_of(sp), 0);
	}
	print_message("chain_seg_random: %u transmissions without allocation, %u with\n", fast, slow);
	assert_true(fast > 1000);
	assert_true(slow > 100);
	for (int i = 0; i < FLIGHT; i++)
		free(fl[i].want);
	free(x.b);
	free(tmp);
	cn_mbuf_pool_thread_flush(sp);
	assert_int_equal(cn_mbuf_pool_destroy(sp), 0);
}

/* ---------------------------------------------------------------- ring */

static void ring_params_rejected(void **state)
{
	(void)state;
	struct cn_sbring_params p = {.bytes = 6000, .mss = 100, .anchors = 4};
	errno = 0;
	assert_null(cn_sbring_create(&p));
	assert_int_equal(errno, EINVAL);
	p.bytes = 2048;
	assert_null(cn_sbring_create(&p));
	p.bytes = 4096;
	p.mss = 4097;
	assert_null(cn_sbring_create(&p));
	p.mss = 100;
	p.copy = (enum cn_sbring_copy)2;
	assert_null(cn_sbring_create(&p));
	p.copy = CN_SBRING_COPY_PLAIN;
	p.hdr_room = 65537;
	errno = 0;
	assert_null(cn_sbring_create(&p));
	assert_int_equal(errno, EINVAL);
	p.hdr_room = 0;
	/* a newer caller's larger struct: only zeros past ours */
	struct {
		struct cn_sbring_params p;
		uint32_t more;
	} big;
	memset(&big, 0, sizeof(big)); /* padding too: only zeros past ours */
	big.p.bytes = 4096;
	big.more = 1;
	big.p.size = sizeof(big);
	errno = 0;
	assert_null(cn_sbring_create(&big.p));
	assert_int_equal(errno, EINVAL);
	big.more = 0;
	struct cn_sbring *sb = cn_sbring_create(&big.p);
	assert_non_null(sb);
	cn_sbring_destroy(sb);
	assert_null(cn_sbring_create(NULL));
	cn_sbring_destroy(NULL);
}

/* An all-zero params struct: a 1 MB ring of default chunks and anchors
 * in its own memory, IOVA as VA. */
static void ring_params_zero(void **state)
{
	(void)state;
	struct cn_sbring *sb = cn_sbring_create(&(struct cn_sbring_params){0});
	uint8_t *base, buf[3000];
	uint32_t size, seq0;
	struct cn_sb_seg s;

	assert_non_null(sb);
	cn_sbring_layout(sb, &base, &size, &seq0);
	assert_int_equal(size, CN_SBRING_BYTES_DEFAULT);
	assert_int_equal(seq0, 0);
	assert_int_equal(cn_sbring_space(sb), CN_SBRING_BYTES_DEFAULT);
	cn_test_seed(5);
	cn_test_fill_rand(buf, sizeof(buf));
	assert_int_equal(cn_sbring_write(sb, buf, sizeof(buf)), sizeof(buf));
	assert_int_equal(cn_sbring_seg(sb, 0, 3000, &s), 0);
	assert_int_equal(s.len, 3000);
	assert_memory_equal(s.piece[0].base, buf, 3000);
	assert_false(s.csum_valid); /* plain copy by default */
	assert_int_equal(cn_sbring_iova(sb, base), (uint64_t)(uintptr_t)base);
	assert_int_equal(cn_sbring_iova(sb, base + size - 1), (uint64_t)(uintptr_t)base + size - 1);
	assert_int_equal(cn_sbring_iova(sb, base + size), UINT64_MAX);
	for (uint32_t i = 0; i < CN_SBRING_ANCHORS_DEFAULT; i++)
		assert_non_null(cn_sbring_anchor_get(sb, 0, 1, 0));
	assert_null(cn_sbring_anchor_get(sb, 0, 1, 0));
	assert_int_equal(cn_sbring_anchors_out(sb), CN_SBRING_ANCHORS_DEFAULT);
	cn_sbring_destroy(sb);
}

/* A ring over caller memory: the bytes written land exactly at ext_mem
 * (wrapping inside its first `bytes` bytes, nothing outside touched),
 * segments point into it, and every ring byte translates to ext_iova +
 * offset. Misaligned and short regions are refused. */
static void ring_ext_memory(void **state)
{
	(void)state;
	const uint32_t bytes = 8192, pad = 256;
	const uint64_t iova = 0x7f0000001000ull;
	/* C11 wants the size a multiple of the alignment (ASan checks it) */
	uint8_t *region = aligned_alloc(4096, (bytes + 2 * pad + 4095) & ~4095u), *mem = region + pad;
	uint8_t *src = malloc(5 * bytes);
	struct cn_sbring_params p = {.bytes = bytes, .mss = 1000, .copy = CN_SBRING_COPY_CSUM,
				     .anchors = 8, .seq = 77, .ext_mem = mem,
				     .ext_len = bytes, .ext_iova = iova};

	memset(region, 0xa5, bytes + 2 * pad);
	cn_test_seed(31);
	cn_test_fill_rand(src, 5 * bytes);
	/* error paths first */
	p.ext_mem = mem + 8; /* not on a cache line */
	errno = 0;
	assert_null(cn_sbring_create(&p));
	assert_int_equal(errno, EINVAL);
	p.ext_mem = mem;
	p.ext_len = bytes - 1;
	errno = 0;
	assert_null(cn_sbring_create(&p));
	assert_int_equal(errno, ENOSPC);
	p.ext_len = bytes;
	p.ext_iova = UINT64_MAX - 100;
	errno = 0;
	assert_null(cn_sbring_create(&p));
	assert_int_equal(errno, EINVAL);
	p.ext_iova = iova;

	struct cn_sbring *sb = cn_sbring_create(&p);
	uint8_t *base;
	uint32_t size, seq0, done = 0, acked = 0;
	assert_non_null(sb);
	cn_sbring_layout(sb, &base, &size, &seq0);
	assert_ptr_equal(base, mem);
	assert_int_equal(size, bytes);
	/* a stream of 5 rings' worth through it, odd write and release sizes */
	while (acked < 5 * bytes) {
		uint32_t k = 1 + cn_test_rndn(3000);
		if (k > 5 * bytes - done)
			k = 5 * bytes - done;
		done += cn_sbring_write(sb, src + done, k);
		for (uint32_t x = acked; x < done; x++)
			if (mem[(x) & (bytes - 1)] != src[x])
				fail_msg("byte %u of the stream not at ext_mem", x);
		struct cn_sb_seg s;
		uint32_t off = 0;
		while (off < done - acked) {
			assert_int_equal(cn_sbring_seg(sb, off, 1000, &s), 0);
			for (uint32_t j = 0; j < s.npieces; j++) {
				const uint8_t *b = s.piece[j].base;
				assert_true(b >= mem && b + s.piece[j].len <= mem + bytes);
				assert_int_equal(cn_sbring_iova(sb, b), iova + (uint64_t)(b - mem));
				assert_int_equal(cn_sbring_iova(sb, b + s.piece[j].len - 1),
						 iova + (uint64_t)(b - mem) + s.piece[j].len - 1);
			}
			off += s.len;
		}
		uint32_t r = cn_test_rndn(done - acked + 1);
		assert_int_equal(cn_sbring_release_seq(sb, 77 + acked + r), r);
		acked += r;
		if (done == 5 * bytes && acked < done) {
			assert_int_equal(cn_sbring_release_seq(sb, 77 + done), done - acked);
			acked = done;
		}
	}
	assert_int_equal(cn_sbring_iova(sb, mem), iova);
	assert_int_equal(cn_sbring_iova(sb, mem + bytes - 1), iova + bytes - 1);
	assert_int_equal(cn_sbring_iova(sb, mem - 1), UINT64_MAX);
	assert_int_equal(cn_sbring_iova(sb, mem + bytes), UINT64_MAX);
	cn_sbring_destroy(sb); /* leaves the caller's memory alone */
	for (uint32_t i = 0; i < pad; i++) {
		assert_int_equal(region[i], 0xa5);
		assert_int_equal(region[pad + bytes + i], 0xa5);
	}
	free(region);
	free(src);
}

/* Segments that start at every offset of the ring, crossing its end,
 * with checksums from the stored chunks compared to a fresh sum. */
static void ring_wrap_every_offset(void **state)
{
	(void)state;
	const uint32_t size = 4096;
	const uint32_t mss_list[] = {1460, 7, 1, 4096, 333};
	uint8_t *src = malloc(3 * size), *out = malloc(size);
	cn_test_seed(42);
	cn_test_fill_rand(src, 3 * size);

	for (unsigned mi = 0; mi < sizeof(mss_list) / sizeof(mss_list[0]); mi++) {
		uint32_t mss = mss_list[mi];
		struct cn_sbring_params p = {.bytes = size, .mss = mss, .copy = CN_SBRING_COPY_CSUM,
					     .anchors = 4, .seq = 0xfffff000u /* wraps too */};
		struct cn_sbring *sb = cn_sbring_create(&p);
		assert_non_null(sb);
		for (uint32_t start = 0; start < size; start++) {
			/* The ring's head is at 'start' (mod size) here. */
			uint32_t len = 1 + (start * 7919u) % size;
			assert_int_equal(cn_sbring_write(sb, src + start % size, len), len);
			struct model x = {src + start % size, len};
			/* One segment over everything, and MSS-sized segments. */
			struct cn_sb_seg s;
			assert_int_equal(cn_sockbuf_seg(cn_sbring_sockbuf(sb), 0, len, &s), 0);
			seg_matches(&s, &x, 0);
			assert_int_equal(s.npieces, start % size + len > size ? 2 : 1);
			assert_int_equal(s.seq, cn_sbring_seq(sb));
			bool all_valid = true;
			for (uint32_t off = 0; off < len; off += mss) {
				assert_int_equal(cn_sbring_seg(sb, off, mss, &s), 0);
				seg_matches(&s, &x, off);
				/* every chunk-aligned MSS segment carries its sum */
				all_valid &= s.csum_valid;
			}
			/* Chunks are fixed on the stream: an MSS segment
			 * carries a stored sum when it starts on a chunk. */
			bool aligned = (cn_sbring_seq(sb) - p.seq) % mss == 0;
			if (aligned)
				assert_true(all_valid);
			struct cn_sb_anchor *a = cn_sbring_anchor_get(sb, 0, len, 54);
			assert_non_null(a);
			assert_int_equal(a->len, len);
			memcpy(out, a->piece[0], a->piece_len[0]);
			memcpy(out + a->piece_len[0], a->piece[1], a->piece_len[1]);
			assert_memory_equal(out, x.b, len);
			if (aligned)
				assert_true(a->csum_valid); /* whole chunks combine */
			memset(a->hdr, 0xaa, 54);
			cn_sbring_anchor_put(sb, a);
			/* Release all but the bytes that move the head to start+1. */
			uint32_t seq = cn_sbring_seq(sb);
			assert_int_equal(cn_sbring_release_seq(sb, seq + len), len);
			assert_int_equal(cn_sockbuf_len(cn_sbring_sockbuf(sb)), 0);
			assert_int_equal(cn_sbring_write(sb, src, (size + 1 - len % size) % size),
					 (size + 1 - len % size) % size);
			cn_sockbuf_drop(cn_sbring_sockbuf(sb), size);
		}
		cn_sbring_destroy(sb);
	}
	free(src);
	free(out);
}

static void ring_random(void **state)
{
	(void)state;
	struct model x = {malloc(MODEL_MAX), 0};
	uint8_t *tmp = malloc(65536);

	for (uint64_t seed = 1; seed <= 8; seed++) {
		cn_test_seed(seed * 0x9e3779b97f4a7c15ull);
		uint32_t size = 4096u << cn_test_rndn(4);
		struct cn_sbring_params p = {.bytes = size, .mss = 1 + cn_test_rndn(2000),
					     .copy = cn_test_rndn(4) ? CN_SBRING_COPY_CSUM : CN_SBRING_COPY_PLAIN,
					     .anchors = 8, .hdr_room = 100, .seq = cn_test_rnd()};
		struct cn_sbring *sb = cn_sbring_create(&p);
		struct cn_sb_anchor *held[8];
		unsigned nheld = 0;
		uint32_t snd = 0;
		assert_non_null(sb);
		x.n = 0;
		for (int step = 0; step < 6000; step++) {
			switch (cn_test_rndn(7)) {
			case 0: { /* write */
				uint32_t k = cn_test_rndn(3000), space = cn_sbring_space(sb);
				cn_test_fill_rand(tmp, k);
				uint32_t w = cn_sbring_write(sb, tmp, k);
				assert_int_equal(w, k < space ? k : space);
				memcpy(x.b + x.n, tmp, w);
				x.n += w;
				break;
			}
			case 1: { /* zero-copy write: reserve, fill, commit */
				struct cn_sb_piece pc[2];
				uint32_t space = cn_sbring_reserve(sb, pc), k = cn_test_rndn(2000);
				k = k < space ? k : space;
				uint32_t k0 = k < pc[0].len ? k : pc[0].len;
				cn_test_fill_rand((uint8_t *)pc[0].base, k0);
				cn_test_fill_rand((uint8_t *)pc[1].base, k - k0);
				memcpy(x.b + x.n, pc[0].base, k0);
				memcpy(x.b + x.n + k0, pc[1].base, k - k0);
				assert_int_equal(cn_sbring_commit(sb, k, cn_test_rndn(3) != 0), 0);
				x.n += k;
				assert_int_equal(cn_sbring_commit(sb, cn_sbring_space(sb) + 1, false), -EINVAL);
				break;
			}
			case 2: { /* send the next MSS segment with an anchor */
				if (nheld == 8) {
					errno = 0;
					assert_null(cn_sbring_anchor_get(sb, snd, p.mss, 40));
					assert_int_equal(errno, ENOBUFS);
					break;
				}
				struct cn_sb_anchor *a = cn_sbring_anchor_get(sb, snd, p.mss, 40);
				assert_non_null(a);
				struct cn_sb_seg s;
				cn_sbring_seg(sb, snd, p.mss, &s);
				seg_matches(&s, &x, snd);
				assert_int_equal(a->len, s.len);
				assert_int_equal(a->seq, s.seq);
				assert_ptr_equal(a->piece[0], s.piece[0].base);
				assert_int_equal(a->csum_valid, s.csum_valid);
				{
					/* the fixed layout maps the segment's sequence
					 * number to its first byte, as tcp_output uses it */
					uint8_t *base;
					uint32_t lsize, seq0;
					cn_sbring_layout(sb, &base, &lsize, &seq0);
					assert_int_equal(lsize, size);
					if (s.len)
						assert_ptr_equal(s.piece[0].base,
								 base + ((s.seq - seq0) & (lsize - 1)));
				}
				memset(a->hdr, 0x45, 40);
				held[nheld++] = a;
				snd += s.len;
				break;
			}
			case 3: /* TX completion */
				if (nheld)
					cn_sbring_anchor_put(sb, held[--nheld]);
				break;
			case 4: { /* ACK by sequence number */
				uint32_t k = cn_test_rndn(snd + 1);
				int64_t r = cn_sbring_release_seq(sb, cn_sbring_seq(sb) + k);
				assert_int_equal(r, k);
				model_drop(&x, k);
				snd -= k;
				/* old and impossible ACKs */
				assert_int_equal(cn_sbring_release_seq(sb, cn_sbring_seq(sb) - 5), 0);
				assert_int_equal(cn_sbring_release_seq(sb, cn_sbring_seq(sb) + x.n + 1), -EINVAL);
				break;
			}
			case 5: { /* random segment anywhere */
				struct cn_sb_seg s;
				uint32_t off = cn_test_rndn(x.n + 1);
				assert_int_equal(cn_sbring_seg(sb, off, cn_test_rndn(70000), &s), 0);
				seg_matches(&s, &x, off);
				assert_int_equal(cn_sbring_seg(sb, x.n + 1, 1, &s), -EINVAL);
				break;
			}
			case 6: /* retransmission restart */
				snd = cn_test_rndn(snd + 1);
				break;
			}
			assert_int_equal(cn_sockbuf_len(cn_sbring_sockbuf(sb)), x.n);
			assert_int_equal(cn_sbring_space(sb), size - x.n);
			assert_int_equal(cn_sbring_anchors_out(sb), nheld);
		}
		while (nheld)
			cn_sbring_anchor_put(sb, held[--nheld]);
		cn_sbring_destroy(sb);
	}
	free(x.b);
	free(tmp);
}

/* Full ring: writes stop, releases make room; the stored sums of a long
 * stream (past the 32-bit offset wrap of the chunk arithmetic's base) hold. */
static void ring_full_and_long_stream(void **state)
{
	(void)state;
	struct cn_sbring_params p = {.bytes = 8192, .mss = 1460, .copy = CN_SBRING_COPY_CSUM,
				     .anchors = 16};
	struct cn_sbring *sb = cn_sbring_create(&p);
	uint8_t buf[8192];
	cn_test_seed(7);
	cn_test_fill_rand(buf, sizeof(buf));
	assert_int_equal(cn_sbring_write(sb, buf, 8192), 8192);
	assert_int_equal(cn_sbring_write(sb, buf, 1), 0);
	assert_int_equal(cn_sbring_space(sb), 0);
	for (int i = 0; i < 20000; i++) {
		struct cn_sb_seg s;
		assert_int_equal(cn_sbring_seg(sb, 0, 1460, &s), 0);
		assert_int_equal(s.len, 1460);
		assert_true(s.csum_valid);
		uint32_t ref = 0, at = 0;
		for (uint32_t k = 0; k < s.npieces; k++) {
			ref = cn_csum_combine(ref, cn_csum_partial(s.piece[k].base, s.piece[k].len, 0), at);
			at += s.piece[k].len;
		}
		assert_int_equal(cn_csum_fold(ref), cn_csum_fold(s.csum));
		assert_int_equal(cn_sbring_release_seq(sb, s.seq + 1460), 1460);
		assert_int_equal(cn_sbring_write(sb, buf + (i % 5000), 1460), 1460);
	}
	cn_sbring_destroy(sb);
}

/* The common view: the same stream through both kinds gives equal bytes. */
static void both_kinds_same_view(void **state)
{
	struct cn_test_pools_fx *f = *state;
	struct cn_sbchain ch;
	struct cn_sbring_params p = {.bytes = 1 << 16, .mss = 1460, .anchors = 4};
	struct cn_sbring *rg = cn_sbring_create(&p);
	uint8_t data[40000];
	cn_test_seed(99);
	cn_test_fill_rand(data, sizeof(data));
	cn_sbchain_init(&ch, f->mp, f->cp);
	for (uint32_t off = 0; off < sizeof(data);) {
		uint32_t k = 1 + cn_test_rndn(3000);
		k = k < sizeof(data) - off ? k : (uint32_t)sizeof(data) - off;
		assert_int_equal(cn_sbchain_append_copy(&ch, data + off, k), 0);
		assert_int_equal(cn_sbring_write(rg, data + off, k), k);
		off += k;
	}
	struct cn_sockbuf *sbs[2] = {&ch.sb, cn_sbring_sockbuf(rg)};
	struct model x = {data, sizeof(data)};
	for (int i = 0; i < 2; i++) {
		for (uint32_t off = 0; off < x.n;) {
			struct cn_sb_seg s;
			assert_int_equal(cn_sockbuf_seg(sbs[i], off, 1460, &s), 0);
			seg_matches(&s, &x, off);
			assert_true(s.len == 1460 || off + s.len == x.n);
			off += s.len;
		}
		assert_int_equal(cn_sockbuf_drop(sbs[i], 100000), sizeof(data));
		assert_int_equal(cn_sockbuf_len(sbs[i]), 0);
	}
	cn_sbchain_flush(&ch);
	cn_sbring_destroy(rg);
}

/* Copy-in into the chain fails cleanly when the cluster pool runs dry. */
static void chain_exhaustion(void **state)
{
	(void)state;
	struct cn_mbuf_pool_params mp = {.kind = CN_MBUF_POOL_SMALL, .count = 16};
	struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 4};
	struct cn_mbuf_pool *m = cn_mbuf_pool_create(&mp), *c = cn_mbuf_pool_create(&cp);
	struct cn_sbchain sb;
	static uint8_t big[20000];
	cn_sbchain_init(&sb, m, c);
	assert_int_equal(cn_sbchain_append_copy(&sb, big, 3 * 2048), 0);
	assert_int_equal(cn_sbchain_append_copy(&sb, big, 3 * 2048), -ENOBUFS);
	assert_int_equal(cn_sockbuf_len(&sb.sb), 3 * 2048);
	assert_int_equal(cn_sbchain_append_copy(&sb, big, 2048), 0);
	cn_sbchain_drop(&sb, 5000);
	assert_int_equal(cn_sbchain_append_copy(&sb, big, 4096), 0);
	assert_int_equal(cn_sockbuf_len(&sb.sb), 4 * 2048 - 5000 + 4096);
	cn_sbchain_flush(&sb);
	assert_int_equal(cn_mbuf_pool_destroy(m), 0);
	assert_int_equal(cn_mbuf_pool_destroy(c), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* the chain */
		CN_FX(chain_random), CN_FX(chain_send_pointer_is_o1), CN_T(chain_exhaustion),
		CN_FX(chain_seg_one_get_per_segment), CN_FX(chain_seg_random),
		/* the ring */
		CN_T(ring_params_rejected), CN_T(ring_params_zero), CN_T(ring_ext_memory),
		CN_T(ring_wrap_every_offset), CN_T(ring_random), CN_T(ring_full_and_long_stream),
		/* both */
		CN_FX(both_kinds_same_view),
	};
	return cmocka_run_group_tests_name("sockbuf", tests, NULL, NULL);
}
