/* SPDX-License-Identifier: BSD-2-Clause */
/* Built by check_pkgconfig.sh as a user would build a DPDK program on
 * cachenet: cc prog_dpdk.c $(pkg-config --cflags --libs cachenet-dpdk).
 * Without an EAL it can only check the adapter's argument checks. */
#include <errno.h>
#include <stdio.h>

#include <cachenet/dpdk.h>

int main(void)
{
	struct cn_dpdk_params p = {.port_id = 0};
	errno = 0;
	if (cn_dpdk_open(&p) != NULL || errno != EINVAL) {
		printf("cn_dpdk_open without a pool: errno %d, want EINVAL\n", errno);
		return 1;
	}
	printf("cachenet-dpdk linked, cn_dpdk_open refuses a missing pool (EINVAL)\n");
	return 0;
}
