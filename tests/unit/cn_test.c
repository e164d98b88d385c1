/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the cmocka test programs (declared in cn_test.h). */
#include "cn_test.h"

#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void cn_test_guarded_map(struct cn_test_guarded *g, unsigned regions, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	assert_true(regions >= 1 && regions <= CN_TEST_GUARDED_MAX);
	assert_true(len > 0 && len % pg == 0);
	/* guard | region 0 | guard | region 1 | ... | guard */
	g->map_len = regions * (len + pg) + pg;
	g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(g->map != MAP_FAILED);
	for (unsigned i = 0; i <= regions; i++)
		assert_int_equal(mprotect(g->map + i * (len + pg), pg, PROT_NONE), 0);
	for (unsigned i = 0; i < regions; i++) {
		g->lo[i] = g->map + i * (len + pg) + pg;
		g->hi[i] = g->lo[i] + len;
	}
}

void cn_test_guarded_free(struct cn_test_guarded *g)
{
	munmap(g->map, g->map_len);
	g->map = NULL;
}

void cn_test_skip_emulated(const char *what)
{
	if (getenv("CN_TEST_WRAPPER")) {
		fprintf(stderr, "skipped under emulation: %s\n", what);
		skip();
	}
}

pid_t cn_test_fork(void)
{
	cn_test_skip_emulated("fork without exec");
	return fork();
}

int cn_test_rerun(const char *disable, const char *arg, char *out, size_t outlen)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd[2], status;
	size_t got = 0;

	assert_true(n > 0);
	self[n] = '\0';
	assert_true(outlen > 0);

	/* argv: the wrapper's words ("qemu-aarch64 -L /usr/aarch64-linux-gnu"),
	 * then self and arg */
	char *argv[16], *sp = NULL;
	char *wrap = getenv("CN_TEST_WRAPPER");
	size_t na = 0;
	wrap = wrap ? strdup(wrap) : NULL;
	for (char *w = wrap ? strtok_r(wrap, " ", &sp) : NULL; w; w = strtok_r(NULL, " ", &sp)) {
		assert_true(na < 13);
		argv[na++] = w;
	}
	argv[na++] = self;
	argv[na++] = (char *)arg;
	argv[na] = NULL;

	/* the environment with CACHENET_CPU_DISABLE replaced */
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **envp = calloc(ne + 2, sizeof(*envp));
	char *var = malloc(strlen(disable) + sizeof("CACHENET_CPU_DISABLE="));
	assert_non_null(envp);
	assert_non_null(var);
	strcpy(var, "CACHENET_CPU_DISABLE=");
	strcat(var, disable);
	ne = 0;
	for (char **e = environ; *e; e++)
		if (strncmp(*e, "CACHENET_CPU_DISABLE=", 21) != 0)
			envp[ne++] = *e;
	envp[ne++] = var;

	/* posix_spawn, not fork + exec: qemu-user (7.2) hung in the child of a
	 * fork, while glibc's posix_spawn (a vfork-style clone) runs there. */
	posix_spawn_file_actions_t fa;
	pid_t pid;
	assert_int_equal(pipe(fd), 0);
	assert_int_equal(posix_spawn_file_actions_init(&fa), 0);
	assert_int_equal(posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO), 0);
	assert_int_equal(posix_spawn_file_actions_addclose(&fa, fd[0]), 0);
	assert_int_equal(posix_spawn_file_actions_addclose(&fa, fd[1]), 0);
	assert_int_equal(posix_spawnp(&pid, argv[0], &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	free(envp);
	free(var);
	free(wrap);
	close(fd[1]);
	for (;;) {
		ssize_t r = read(fd[0], out + got, outlen - 1 - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	out[got] = '\0';
	close(fd[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

int cn_test_tx_csum_off(const char *ifname)
{
	struct ethtool_value ev = {.cmd = ETHTOOL_STXCSUM, .data = 0};
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), rc;

	if (s < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&ev;
	rc = ioctl(s, SIOCETHTOOL, &ifr);
	close(s);
	return rc;
}
