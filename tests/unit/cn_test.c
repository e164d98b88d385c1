/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the cmocka test programs (declared in cn_test.h). */
#include "cn_test.h"

#include <limits.h>
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

int cn_test_rerun(const char *disable, const char *arg, char *out, size_t outlen)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd[2], status;
	size_t got = 0;

	assert_true(n > 0);
	self[n] = '\0';
	assert_true(outlen > 0);
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		setenv("CACHENET_CPU_DISABLE", disable, 1);
		execl(self, self, arg, (char *)NULL);
		_exit(127);
	}
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
