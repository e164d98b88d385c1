/* SPDX-License-Identifier: BSD-2-Clause */
/* Compile-only (tests/nonnull/check_nonnull.py). With -DCN_PASS_NULL the
 * calls marked "nonnull:" get a NULL constant where their prototype says
 * CN_NONNULL, and each must draw exactly one -Wnonnull diagnostic on its
 * own line; without it they get real objects and the file must compile
 * with -Werror=nonnull. The calls below the marked ones pass NULL where
 * the contract accepts it (destructors, optional outputs, a data pointer
 * with length 0, constructors that fail with EINVAL) and must never warn:
 * an attribute added there would let the compiler delete the check. */
#include <stddef.h>

#include "cachenet/lab.h"

#ifdef CN_PASS_NULL
#define OBJ(x) NULL
#else
#define OBJ(x) (x)
#endif

int use(struct cn_mbuf_pool *pool, struct cn_mbuf *m, struct cn_net *net, struct cn_tcb *tcb,
	struct cn_sbring *ring, struct cn_netdev *dev, struct cn_aes128_key *key);

int use(struct cn_mbuf_pool *pool, struct cn_mbuf *m, struct cn_net *net, struct cn_tcb *tcb,
	struct cn_sbring *ring, struct cn_netdev *dev, struct cn_aes128_key *key)
{
	uint8_t addr[16] = {0}, block[16] = {0};
	int n = 0;

	(void)pool, (void)ring, (void)dev; /* unused when CN_PASS_NULL */

	n += cn_mbuf_get(OBJ(pool)) != NULL;                       /* nonnull: mbuf.h */
	n += (int)cn_mbuf_headroom(OBJ(m));                        /* nonnull: mbuf.h inline */
	n += cn_net_input(net, OBJ(m), 0);                         /* nonnull: net.h */
	n += cn_tcp_send(OBJ(tcb), block, sizeof(block), 0);       /* nonnull: tcp.h */
	n += (int)cn_sbring_space(OBJ(ring));                      /* nonnull: sockbuf.h */
	n += (int)cn_netdev_poll(OBJ(dev), net, 0);                /* nonnull: lab/netdev.h */
	cn_aes128_encrypt_block(key, addr, OBJ(block));            /* nonnull: crypto.h */
	n += cn_csum_pseudo_ipv6(OBJ(addr), addr, 6, 20);          /* nonnull: csum.h */

	/* NULL accepted by contract: never a diagnostic. */
	cn_mbuf_free(NULL);
	cn_mbuf_free_chain(NULL);
	n += cn_mbuf_pool_destroy(NULL);
	cn_tcp_close(NULL);
	cn_net_destroy(NULL);
	cn_sbring_destroy(NULL);
	cn_pkt_free(NULL);
	cn_netdev_destroy(NULL);
	n += (int)cn_mbuf_chain_count(NULL);
	cn_mbuf_cat(m, NULL);
	n += cn_csum(NULL, 0);
	n += (int)cn_csum_partial(NULL, 0, 0);
	n += cn_tcp_send(tcb, NULL, 0, 0);
	n += cn_mbuf_pool_create(NULL) != NULL;
	n += cn_sbring_create(NULL) != NULL;
	return n;
}
