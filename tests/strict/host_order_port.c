/* SPDX-License-Identifier: BSD-2-Clause */
/* Must not compile with CN_STRICT_BYTE_ORDER: a host-order port and a
 * host-order address assigned to network-order fields, the mistakes the
 * typed values exist to catch. With -DCN_STRICT_CONTROL the same program
 * converts them with cn_htobe16()/cn_htobe32() and must compile, so the
 * failure is the type error and nothing else
 * (tests/strict/check_strict.sh). */
#include <string.h>

#include "cachenet/cachenet.h"

int main(void)
{
	struct cn_tcp_params p;
	uint16_t port = 80;
	uint32_t addr = 0x0a000001;

	memset(&p, 0, sizeof(p));
#ifdef CN_STRICT_CONTROL
	p.lport = cn_htobe16(port);
	p.laddr = cn_htobe32(addr);
#else
	p.lport = port;
	p.laddr = addr;
#endif
	return cn_be16toh(p.lport) == 80 && cn_be32toh(p.laddr) == addr ? 0 : 1;
}
