/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Simulation mode: re-execute under callgrind with the cache simulator,
 * toggle collection around the measured region, dump and parse.
 */
#include "cachenet/lab/sim.h"
#include "cachenet/lab/cache.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef CN_HAVE_VALGRIND_H
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>
#endif

#define DUMP_BASE "cn.out"

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

static int parse_size(const char *s, const char **end, uint64_t *v)
{
	char *e;
	unsigned long long x = strtoull(s, &e, 10);

	if (e == s)
		return -EINVAL;
	if (*e == 'K' || *e == 'k')
		x <<= 10, e++;
	else if (*e == 'M' || *e == 'm')
		x <<= 20, e++;
	*v = x;
	*end = e;
	return 0;
}

static int check_level(const char *name, const struct cn_sim_cache *c, char *err, size_t errlen)
{
	if (c->size == 0)
		return 0;
	if (c->assoc == 0 || c->line < 16 || !is_pow2(c->line)) {
		snprintf(err, errlen, "%s: line must be a power of two >= 16 and assoc >= 1", name);
		return -EINVAL;
	}
	if (c->size % ((uint64_t)c->assoc * c->line)) {
		snprintf(err, errlen, "%s: size %llu is not a multiple of assoc*line (%u*%u)", name,
			 (unsigned long long)c->size, c->assoc, c->line);
		return -EINVAL;
	}
	if (!is_pow2(c->size / ((uint64_t)c->assoc * c->line))) {
		snprintf(err, errlen, "%s: %llu sets is not a power of two (callgrind requires one)",
			 name, (unsigned long long)(c->size / ((uint64_t)c->assoc * c->line)));
		return -EINVAL;
	}
	return 0;
}

int cn_sim_geometry_parse(const char *spec, struct cn_sim_geometry *g, char *err, size_t errlen)
{
	char dummy[8];

	if (!err || !errlen)
		err = dummy, errlen = sizeof(dummy);
	memset(g, 0, sizeof(*g));
	if (!spec || !*spec || strcmp(spec, "host") == 0)
		return 0;

	const char *p = spec;
	while (*p) {
		struct cn_sim_cache *c;
		const char *name;
		if (strncmp(p, "I1=", 3) == 0)
			c = &g->i1, name = "I1";
		else if (strncmp(p, "D1=", 3) == 0)
			c = &g->d1, name = "D1";
		else if (strncmp(p, "LL=", 3) == 0)
			c = &g->ll, name = "LL";
		else {
			snprintf(err, errlen, "unknown cache level at '%.16s' (expected I1=, D1= or LL=)", p);
			return -EINVAL;
		}
		p += 3;
		uint64_t v[3];
		for (int i = 0; i < 3; i++) {
			if (parse_size(p, &p, &v[i]) < 0 || (i < 2 && *p != ',')) {
				snprintf(err, errlen, "%s: expected SIZE,ASSOC,LINE", name);
				return -EINVAL;
			}
			if (i < 2)
				p++;
		}
		if (*p && *p != ':') {
			snprintf(err, errlen, "%s: unexpected '%c' after SIZE,ASSOC,LINE", name, *p);
			return -EINVAL;
		}
		if (*p == ':')
			p++;
		if (v[0] == 0 || v[1] > 1u << 16 || v[2] > 1u << 16) {
			snprintf(err, errlen, "%s: size must be > 0, assoc and line <= 65536", name);
			return -EINVAL;
		}
		c->size = v[0];
		c->assoc = (unsigned)v[1];
		c->line = (unsigned)v[2];
		int rc = check_level(name, c, err, errlen);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A host cache as callgrind can simulate it: sets rounded down to a power
 * of two (an Intel 30 MB 20-way L3 has 24576 sets). */
static void from_host(struct cn_sim_cache *c, const struct cn_cache_level *l)
{
	uint64_t sets = l->sets ? l->sets : l->size / ((uint64_t)(l->ways ? l->ways : 1) * l->line);
	uint64_t p2 = 1;

	while (p2 * 2 <= sets)
		p2 *= 2;
	c->assoc = l->ways ? l->ways : 1;
	c->line = l->line;
	c->size = p2 * c->assoc * c->line;
}

int cn_sim_geometry_complete(struct cn_sim_geometry *g)
{
	struct cn_cache_info info;

	if (g->i1.size && g->d1.size && g->ll.size)
		return 0;
	if (cn_cache_geometry(&info) < 0)
		return -ENODEV;
	const struct cn_cache_level *i1 = cn_cache_find(&info, 1, CN_CACHE_INSTRUCTION);
	const struct cn_cache_level *d1 = cn_cache_find(&info, 1, CN_CACHE_DATA);
	const struct cn_cache_level *ll = cn_cache_last_level(&info);
	if (!i1 || !d1 || !ll)
		return -ENODEV;
	if (!g->i1.size)
		from_host(&g->i1, i1);
	if (!g->d1.size)
		from_host(&g->d1, d1);
	if (!g->ll.size)
		from_host(&g->ll, ll);
	return 0;
}

size_t cn_sim_geometry_format(const struct cn_sim_geometry *g, char *buf, size_t len)
{
	return (size_t)snprintf(buf, len, "I1=%llu,%u,%u:D1=%llu,%u,%u:LL=%llu,%u,%u",
				(unsigned long long)g->i1.size, g->i1.assoc, g->i1.line,
				(unsigned long long)g->d1.size, g->d1.assoc, g->d1.line,
				(unsigned long long)g->ll.size, g->ll.assoc, g->ll.line);
}

int cn_sim_exec(int argc, char *const argv[], const struct cn_sim_geometry *geom, const char *outdir)
{
	struct cn_sim_geometry g = *geom;
	char err[160];

	if (cn_sim_geometry_complete(&g) < 0)
		return -ENODEV;
	if (check_level("I1", &g.i1, err, sizeof(err)) || check_level("D1", &g.d1, err, sizeof(err)) ||
	    check_level("LL", &g.ll, err, sizeof(err))) {
		fprintf(stderr, "cachenet sim: %s\n", err);
		return -EINVAL;
	}
	if (mkdir(outdir, 0700) < 0 && errno != EEXIST)
		return -errno;

	char i1[64], d1[64], ll[64], out[PATH_MAX + 32], geo[200];
	snprintf(i1, sizeof(i1), "--I1=%llu,%u,%u", (unsigned long long)g.i1.size, g.i1.assoc, g.i1.line);
	snprintf(d1, sizeof(d1), "--D1=%llu,%u,%u", (unsigned long long)g.d1.size, g.d1.assoc, g.d1.line);
	snprintf(ll, sizeof(ll), "--LL=%llu,%u,%u", (unsigned long long)g.ll.size, g.ll.assoc, g.ll.line);
	snprintf(out, sizeof(out), "--callgrind-out-file=%s/" DUMP_BASE, outdir);
	cn_sim_geometry_format(&g, geo, sizeof(geo));

	const char *vg = getenv("CN_VALGRIND");
	if (!vg || !*vg)
		vg = "valgrind";
	char **args = calloc((size_t)argc + 12, sizeof(*args));
	if (!args)
		return -ENOMEM;
	int k = 0;
	args[k++] = (char *)vg;
	args[k++] = "--tool=callgrind";
	args[k++] = "--cache-sim=yes";
	args[k++] = "--collect-atstart=no";
	args[k++] = "--dump-line=no";
	args[k++] = "-q";
	args[k++] = i1;
	args[k++] = d1;
	args[k++] = ll;
	args[k++] = out;
	args[k++] = argv[0];
	for (int i = 1; i < argc; i++)
		args[k++] = argv[i];
	args[k] = NULL;

	fflush(NULL);
	/* A pipe with O_CLOEXEC tells the parent whether exec succeeded. */
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		free(args);
		return -errno;
	}
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		free(args);
		close(pfd[0]);
		close(pfd[1]);
		return -e;
	}
	if (pid == 0) {
		close(pfd[0]);
		setenv("CN_SIM_DIR", outdir, 1);
		setenv("CN_SIM_GEOMETRY", geo, 1);
		/* Valgrind implements no AVX-512: the child must dispatch to AVX2
		 * or lower (its CPUID emulation hides AVX-512 too; this makes it
		 * explicit). */
		const char *dis = getenv("CACHENET_CPU_DISABLE");
		char disbuf[256];
		snprintf(disbuf, sizeof(disbuf), "%s%savx512", dis && *dis ? dis : "",
			 dis && *dis ? "," : "");
		setenv("CACHENET_CPU_DISABLE", disbuf, 1);
		execvp(vg, args);
		int e = errno;
		if (write(pfd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	free(args);
	close(pfd[1]);
	int exec_err = 0;
	ssize_t got = read(pfd[0], &exec_err, sizeof(exec_err));
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (got == (ssize_t)sizeof(exec_err))
		return -exec_err;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

bool cn_sim_active(void)
{
#ifdef CN_HAVE_VALGRIND_H
	return RUNNING_ON_VALGRIND && getenv("CN_SIM_DIR") != NULL;
#else
	return false;
#endif
}

void cn_sim_collect(struct cn_sim_region *r, bool on)
{
	if (r->collecting == on)
		return;
#ifdef CN_HAVE_VALGRIND_H
	CALLGRIND_TOGGLE_COLLECT;
#endif
	r->collecting = on;
}

/* The dump with the highest part number in @dir ("cn.out.<N>"). */
static int newest_dump(const char *dir, char *path, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	long best = -1;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (strncmp(e->d_name, DUMP_BASE ".", sizeof(DUMP_BASE)) != 0)
			continue;
		char *end;
		long part = strtol(e->d_name + sizeof(DUMP_BASE), &end, 10);
		if (*end == '\0' && part > best)
			best = part;
	}
	closedir(d);
	if (best < 0)
		return -EIO;
	snprintf(path, len, "%s/" DUMP_BASE ".%ld", dir, best);
	return 0;
}

int cn_sim_dump(struct cn_sim_region *r, const char *label, struct cn_sim_counts *out)
{
	cn_sim_collect(r, false);
	if (!cn_sim_active())
		return -ENOTSUP;
#ifdef CN_HAVE_VALGRIND_H
	CALLGRIND_DUMP_STATS_AT(label);
#endif
	char path[PATH_MAX];
	char trigger[256];
	int rc = newest_dump(getenv("CN_SIM_DIR"), path, sizeof(path));
	if (rc < 0)
		return rc;
	rc = cn_callgrind_parse(path, out, trigger, sizeof(trigger));
	if (rc < 0)
		return rc;
	/* The newest file must be the one this call asked for. */
	if (!strstr(trigger, label))
		return -EIO;
	/* The file has served its purpose; the directory would otherwise grow
	 * by one dump per benchmark run. With CN_SIM_KEEP set it stays, for
	 * callgrind_annotate, under the region's label: a later dump of the
	 * same label (google-benchmark's final run) replaces an earlier one. */
	if (getenv("CN_SIM_KEEP")) {
		char kept[PATH_MAX], name[128];
		size_t i;
		for (i = 0; label[i] && i + 1 < sizeof(name); i++) {
			char c = label[i];
			bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
				     (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+';
			name[i] = plain ? c : '_';
		}
		name[i] = '\0';
		int w = snprintf(kept, sizeof(kept), "%s/%s.callgrind", getenv("CN_SIM_DIR"), name);
		if (w > 0 && (size_t)w < sizeof(kept) && rename(path, kept) == 0)
			return 0;
	}
	unlink(path);
	return 0;
}
