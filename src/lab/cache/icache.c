/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Instruction-cache eviction: a block of generated code, one 2-byte jump at
 * the start of every 64-byte line to the start of the next, ending in RET.
 * Running it fetches each line once, which pushes the previous contents out
 * of the L1I, the uop cache and — with a block twice the L2 — the L2 too,
 * while reading almost no data. Built once, kept for the life of the
 * process (read-only and executable; nothing else is global).
 */
#include "cachenet/lab/cache.h"
#include "cn_internal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#ifdef CN_HAVE_VALGRIND_H
#include <valgrind/valgrind.h>
#endif

#define ICACHE_LINE CN_CACHE_LINE
#define MIN_BLOCK ((size_t)4 << 20)

static void (*block_fn)(void);
static size_t block_size;
static int block_rc;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void build(void)
{
#if defined(__x86_64__) || defined(__i386__)
	struct cn_cache_info info;
	size_t size = MIN_BLOCK;

	if (cn_cache_geometry(&info) == 0) {
		const struct cn_cache_level *l2 = cn_cache_find(&info, 2, CN_CACHE_INSTRUCTION);
		if (l2 && 2 * l2->size > size)
			size = (size_t)(2 * l2->size);
	}
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		block_rc = -ENOMEM;
		return;
	}
	for (size_t off = 0; off + ICACHE_LINE < size; off += ICACHE_LINE) {
		p[off] = 0xeb;                     /* jmp rel8 */
		p[off + 1] = ICACHE_LINE - 2;      /* to the next line's first byte */
		memset(p + off + 2, 0xcc, ICACHE_LINE - 2); /* int3: never reached */
	}
	p[size - ICACHE_LINE] = 0xc3;              /* ret */
	if (mprotect(p, size, PROT_READ | PROT_EXEC) < 0) {
		munmap(p, size);
		block_rc = -ENOMEM;
		return;
	}
	block_fn = (void (*)(void))(uintptr_t)p;
	block_size = size;
	block_rc = 0;
#else
	block_rc = -ENOTSUP;
#endif
}

/* Under valgrind only the simulated I1 is there to empty (callgrind has
 * no L2 or uop cache, and its LL is evicted by data too): the last
 * SIM_BLOCK bytes of the block, 4x the largest I1 simulated, are enough.
 * Running all 4 MB there costs ~0.5 s a call — 65,536 one-jump blocks
 * overflow valgrind's translation table and are translated anew each
 * time. */
#define SIM_BLOCK ((size_t)256 << 10)

int cn_cache_evict_icache(void)
{
	pthread_once(&once, build);
	if (block_rc < 0)
		return block_rc;
#ifdef CN_HAVE_VALGRIND_H
	if (RUNNING_ON_VALGRIND && block_size > SIM_BLOCK) {
		void (*tail)(void) = (void (*)(void))((uintptr_t)block_fn + block_size - SIM_BLOCK);
		tail();
		return 0;
	}
#endif
	block_fn();
	return 0;
}
