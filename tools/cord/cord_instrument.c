/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cord_instrument.c — call-edge counting runtime for -finstrument-functions.
 *
 * Build the program with `-finstrument-functions` and link this file in
 * (compiled WITHOUT that flag; the hooks are also marked
 * no_instrument_function in case it is).  Every instrumented function entry
 * calls __cyg_profile_func_enter(fn, call_site); we count each distinct
 * (call_site, fn) pair.  At exit the counts go to $CORD_PROFILE_OUT
 * (default cord-instrument.out, "%p" becomes the pid) as
 *
 *     module IDX BASE PATH            one per loaded object seen
 *     edge   SITE_MOD SITE_OFF FN_MOD FN_OFF COUNT
 *     lost   N                        calls not counted (table full)
 *
 * with offsets relative to each object's load base, so a PIE or a shared
 * library resolves against its symbol table whatever ASLR did.  `cord
 * profile --instrument FILE --binary PROG` turns call sites into callers.
 *
 * Why a fixed open-addressing table: the hooks run on every call of every
 * instrumented function, on any thread, before main and after exit starts;
 * they must not allocate, lock, or recurse into instrumented code.  Slots
 * are claimed with a compare-and-swap on the call site and counted with
 * relaxed atomic adds; the key pair is published with release order so a
 * reader that sees the site also sees the callee.
 *
 * Limits (XXX): a function inlined into its caller is still "entered"
 * (gcc keeps the hook at the inlined site, with the enclosing function's
 * return address as call_site), so inlined edges appear as edges from the
 * caller's caller; mark functions noinline, or prefer callgrind, when that
 * matters.  Statically linked programs without dladdr() record absolute
 * addresses (module "?", base 0).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* dladdr(), Dl_info */
#endif
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CORD_NOINSTR __attribute__((no_instrument_function))

#ifndef CORD_TABLE_BITS
#define CORD_TABLE_BITS 16	/* 65536 distinct call sites x callees */
#endif
#define CORD_SLOTS (1u << CORD_TABLE_BITS)

struct cord_slot {
	uintptr_t site;		/* 0 = free; written last (release) */
	uintptr_t fn;
	uint64_t count;
};

static struct cord_slot cord_table[CORD_SLOTS];
static uint64_t cord_lost;
static int cord_done;

CORD_NOINSTR static inline uint32_t cord_hash(uintptr_t site, uintptr_t fn)
{
	uint64_t h = (uint64_t)site * 0x9e3779b97f4a7c15ull ^ (uint64_t)fn * 0xc2b2ae3d27d4eb4full;
	return (uint32_t)(h >> (64 - CORD_TABLE_BITS));
}

/* A slot is keyed by (site, fn).  A new key reserves a free slot by
 * swapping its site from 0 to a marker (-1) no real call site has, writes
 * fn, then publishes the site with release order; a thread that meets the
 * marker waits the few instructions until the key is readable. */
CORD_NOINSTR void __cyg_profile_func_enter(void *fn, void *call_site)
{
	uintptr_t f = (uintptr_t)fn, s = (uintptr_t)call_site;
	uint32_t i;

	if (s == 0)
		s = 1;		/* keep 0 as "free" */
	i = cord_hash(s, f);
	for (uint32_t probe = 0; probe < 64; probe++, i = (i + 1) & (CORD_SLOTS - 1)) {
		struct cord_slot *e = &cord_table[i];
		uintptr_t cur = __atomic_load_n(&e->site, __ATOMIC_ACQUIRE);

		if (cur == 0) {
			uintptr_t zero = 0;

			/* Reserve with a marker nobody else can match, fill in the
			 * key, then publish the real site. */
			if (__atomic_compare_exchange_n(&e->site, &zero, (uintptr_t)-1, 0,
							__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				e->fn = f;
				__atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED);
				__atomic_store_n(&e->site, s, __ATOMIC_RELEASE);
				return;
			}
			cur = zero;
		}
		while (cur == (uintptr_t)-1)	/* being filled in: wait for the key */
			cur = __atomic_load_n(&e->site, __ATOMIC_ACQUIRE);
		if (cur == s && e->fn == f) {
			__atomic_fetch_add(&e->count, 1, __ATOMIC_RELAXED);
			return;
		}
	}
	__atomic_fetch_add(&cord_lost, 1, __ATOMIC_RELAXED);
}

CORD_NOINSTR void __cyg_profile_func_exit(void *fn, void *call_site)
{
	(void)fn;
	(void)call_site;
}

/* Modules seen while writing, so each is named once. */
#define CORD_MAX_MODULES 64
static uintptr_t cord_mod_base[CORD_MAX_MODULES];
static int cord_nmod;

CORD_NOINSTR static int cord_module(FILE *out, uintptr_t addr, uintptr_t *off)
{
	Dl_info info;
	uintptr_t base = 0;
	const char *name = "?";

	if (dladdr((void *)addr, &info) && info.dli_fbase) {
		base = (uintptr_t)info.dli_fbase;
		if (info.dli_fname && info.dli_fname[0])
			name = info.dli_fname;
	}
	*off = addr - base;
	for (int i = 0; i < cord_nmod; i++)
		if (cord_mod_base[i] == base)
			return i;
	if (cord_nmod == CORD_MAX_MODULES)
		return -1;
	cord_mod_base[cord_nmod] = base;
	fprintf(out, "module %d %#lx %s\n", cord_nmod, (unsigned long)base, name);
	return cord_nmod++;
}

CORD_NOINSTR static void cord_write(void)
{
	char path[4096];
	const char *tmpl = getenv("CORD_PROFILE_OUT");
	size_t n = 0;
	FILE *out;

	if (__atomic_exchange_n(&cord_done, 1, __ATOMIC_ACQ_REL))
		return;
	if (!tmpl || !*tmpl)
		tmpl = "cord-instrument.out";
	for (const char *p = tmpl; *p && n + 24 < sizeof(path); p++) {
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(path + n, sizeof(path) - n, "%ld", (long)getpid());
			p++;
		} else {
			path[n++] = *p;
		}
	}
	path[n] = '\0';
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return;
	}
	fprintf(out, "# cord-instrument v1\n");
	for (uint32_t i = 0; i < CORD_SLOTS; i++) {
		struct cord_slot *e = &cord_table[i];
		uintptr_t site = __atomic_load_n(&e->site, __ATOMIC_ACQUIRE), so, fo;
		int sm, fm;

		if (site == 0 || site == (uintptr_t)-1)
			continue;
		/* The call site is a return address: step back one byte so that a
		 * call in a function's last instruction resolves to that function. */
		sm = cord_module(out, site - 1, &so);
		fm = cord_module(out, e->fn, &fo);
		if (sm < 0 || fm < 0)
			continue;
		fprintf(out, "edge %d %#lx %d %#lx %llu\n", sm, (unsigned long)so, fm,
			(unsigned long)fo,
			(unsigned long long)__atomic_load_n(&e->count, __ATOMIC_RELAXED));
	}
	fprintf(out, "lost %llu\n", (unsigned long long)cord_lost);
	fclose(out);
}

/* Run after the program's own destructors where possible (lowest priority
 * runs last among destructors); the atexit hook covers exit() paths that
 * bypass .fini_array ordering assumptions. */
__attribute__((destructor(65535), no_instrument_function)) static void cord_fini(void)
{
	cord_write();
}

__attribute__((constructor(101), no_instrument_function)) static void cord_init(void)
{
	atexit(cord_write);
}
