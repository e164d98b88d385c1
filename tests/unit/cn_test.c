/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the cmocka test programs (declared in cn_test.h). */
#include "cn_test.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <sched.h>
#include <signal.h>
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

void cn_test_rerun_expect(const char *disable, const char *arg, const char *want)
{
	char out[256];
	int status = cn_test_rerun(disable, arg, out, sizeof(out));

	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (want && strcmp(out, want) != 0)
		fail_msg("CACHENET_CPU_DISABLE=%s: got \"%s\", want \"%s\"", disable, out, want);
}

int cn_test_rerun_common(const char *arg, int neon_cpu, const char *generic, const char *neon)
{
	cn_test_rerun_expect("all", arg, generic);
	if (neon_cpu) {
		cn_test_rerun_expect("avx2", arg, neon);
		cn_test_rerun_expect("neon", arg, generic);
	}
	return neon_cpu;
}

unsigned char *cn_test_sweep_buf(size_t max_len, int byte, uint64_t seed)
{
	size_t n = max_len + 64 + 64;
	void *p = NULL;

	assert_int_equal(posix_memalign(&p, 64, n), 0);
	if (byte < 0) {
		cn_test_seed(seed);
		cn_test_fill_rand(p, n);
	} else {
		memset(p, byte, n);
	}
	return p;
}

void cn_test_sweep_run(void **state)
{
	const struct cn_test_sweep *sw = *state;
	unsigned char *buf = cn_test_sweep_buf(sw->max_len, sw->byte, sw->seed);

	sw->check(buf, sw->max_len);
	free(buf);
}

const char *cn_test_choice(uint64_t f, const struct cn_test_rung *ladder)
{
	for (; ladder->need; ladder++)
		if ((f & ladder->need) == ladder->need)
			return ladder->name;
	return "generic";
}

void cn_test_tmpfile(char *path)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
}

int cn_test_sh(const char *cmd)
{
	int rc = system(cmd);
	return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : 128;
}

static volatile sig_atomic_t netns_child;

static void netns_on_signal(int sig)
{
	(void)sig;
	if (netns_child > 0)
		kill((pid_t)netns_child, SIGKILL); /* then the parent deletes the namespace */
}

int cn_test_netns_main(const char *prog, const char *ns_prefix, int argc, char **argv,
		       int (*inside)(void))
{
	char ns[32], cmd[128], self[PATH_MAX];
	int status, rc;

	if (argc > 1 && strcmp(argv[1], "--inside") == 0)
		return inside();

	/* may we make a network namespace at all? */
	pid_t pid = fork();
	if (pid == 0)
		_exit(unshare(CLONE_NEWNET) == 0 ? 0 : errno == EPERM ? 77 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid) {
		fprintf(stderr, "%s: fork: %s\n", prog, strerror(errno));
		return 1;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		printf("SKIP: creating a network namespace is not allowed (needs CAP_SYS_ADMIN)\n");
		return 77;
	}
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		fprintf(stderr, "%s: /proc/self/exe: %s\n", prog, strerror(errno));
		return 1;
	}
	self[n] = '\0';

	snprintf(ns, sizeof(ns), "%s-%d", ns_prefix, (int)getpid());
	snprintf(cmd, sizeof(cmd), "ip netns add %s", ns);
	if (cn_test_sh(cmd) != 0) {
		fprintf(stderr, "%s: '%s' failed (is iproute2 installed?)\n", prog, cmd);
		return 1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = netns_on_signal; /* no SA_RESTART: waitpid returns */
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);

	pid = fork();
	if (pid == 0) {
		execlp("ip", "ip", "netns", "exec", ns, self, "--inside", (char *)NULL);
		_exit(127);
	}
	netns_child = pid;
	alarm(120); /* a hung inside part still gets its namespace deleted */
	rc = 1;
	if (pid > 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(status))
			rc = WEXITSTATUS(status);
		else
			fprintf(stderr, "%s: the inside part died of signal %d\n", prog, WTERMSIG(status));
	}
	alarm(0);
	/* deleting the namespace deletes its interfaces and any program on them */
	snprintf(cmd, sizeof(cmd), "ip netns del %s", ns);
	if (cn_test_sh(cmd) != 0) {
		fprintf(stderr, "%s: '%s' failed\n", prog, cmd);
		rc = rc ? rc : 1;
	}
	return rc;
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
