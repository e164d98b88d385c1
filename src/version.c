/* SPDX-License-Identifier: BSD-2-Clause */
#include "cachenet/version.h"

const char *cn_version(void)
{
	return CN_VERSION_STRING;
}
