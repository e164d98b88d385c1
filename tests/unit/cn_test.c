/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the cmocka test programs (declared in cn_test.h). */
#include "cn_test.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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
