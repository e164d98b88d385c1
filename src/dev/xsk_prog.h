/* SPDX-License-Identifier: BSD-2-Clause */
/* The XDP program of cachenet's AF_XDP sockets, shared by the backend
 * (afxdp.c) and the bare receive loop (tools/xskbare): built from raw
 * instructions, loaded, attached native or generic, and found again by
 * its name when a killed process left it attached.
 *
 * The program: r2 = ctx->rx_queue_index; r1 = &xskmap; r3 = XDP_PASS;
 * return bpf_redirect_map(r1, r2, r3): the socket of this queue, or the
 * kernel when the queue has none (the flags argument is the action taken
 * on a miss). Five instructions do not justify a BPF compiler at build
 * time, and a name of our own lets a later open recognise the program a
 * killed process left behind. Internal: static functions, not exported. */
#ifndef CN_DEV_XSK_PROG_H
#define CN_DEV_XSK_PROG_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define CN__XSK_PROG_NAME "cn_xsk"

/* Load the program over XSKMAP @p map_fd. @return its fd or -errno. */
static inline int cn__xsk_prog_load(int map_fd)
{
	struct bpf_insn insn[] = {
		{.code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1,
		 .off = offsetof(struct xdp_md, rx_queue_index)},
		{.code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd},
		{.code = 0, .imm = 0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_redirect_map},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, CN__XSK_PROG_NAME, "Dual BSD/GPL", insn,
			       sizeof(insn) / sizeof(insn[0]), &o);

	return fd < 0 ? -errno : fd;
}

/* The name of the program with kernel id @p id, into @p name (16 bytes).
 * @return 0 or -errno. */
static inline int cn__xsk_prog_name(uint32_t id, char *name)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), rc;

	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	rc = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	if (rc < 0)
		return -errno;
	memcpy(name, info.name, BPF_OBJ_NAME_LEN);
	name[BPF_OBJ_NAME_LEN - 1] = '\0';
	return 0;
}

/* Remove a "cn_xsk" program left on the interface (native or generic);
 * refuse to touch anyone else's. @return stale programs removed, or
 * -EBUSY / -errno. */
static inline int cn__xsk_detach_stale(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct {
		uint32_t id, flags;
	} m[2];
	int n = 0;

	if (bpf_xdp_query(ifindex, 0, &q) < 0)
		return -errno;
	m[0].id = q.drv_prog_id, m[0].flags = XDP_FLAGS_DRV_MODE;
	m[1].id = q.skb_prog_id, m[1].flags = XDP_FLAGS_SKB_MODE;
	for (unsigned i = 0; i < 2; i++) {
		char name[BPF_OBJ_NAME_LEN];
		if (!m[i].id)
			continue;
		if (cn__xsk_prog_name(m[i].id, name) < 0 || strcmp(name, CN__XSK_PROG_NAME) != 0)
			return -EBUSY;
		if (bpf_xdp_detach(ifindex, m[i].flags, NULL) < 0)
			return -errno;
		n++;
	}
	if (q.hw_prog_id)
		return -EBUSY;
	return n;
}

/* Attach @p prog_fd to @p ifindex: in the driver unless @p attach is 2,
 * in the generic path unless it is 1 (0: native, else generic). Sets
 * @p flags to the mode obtained (XDP_FLAGS_DRV_MODE or _SKB_MODE) and
 * @p prog_id to the attached program's id.
 * @return 0, -EOPNOTSUPP (native asked for and refused), or -errno. */
static inline int cn__xsk_prog_attach(int ifindex, int prog_fd, int attach, uint32_t *flags,
				      uint32_t *prog_id)
{
	uint32_t tries[2], nt = 0;
	int rc = -EOPNOTSUPP;

	if (attach != 2)
		tries[nt++] = XDP_FLAGS_DRV_MODE;
	if (attach != 1)
		tries[nt++] = XDP_FLAGS_SKB_MODE;
	for (uint32_t t = 0; t < nt; t++) {
		if (bpf_xdp_attach(ifindex, prog_fd, tries[t] | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL) == 0) {
			LIBBPF_OPTS(bpf_xdp_query_opts, qo);
			*flags = tries[t];
			*prog_id = 0;
			if (bpf_xdp_query(ifindex, 0, &qo) == 0)
				*prog_id = tries[t] == XDP_FLAGS_DRV_MODE ? qo.drv_prog_id : qo.skb_prog_id;
			return 0;
		}
		rc = -errno;
	}
	return rc == -EINVAL && attach == 1 ? -EOPNOTSUPP : rc;
}

/* Detach the program attached with @p flags (if @p attached) and close
 * the program's and the map's descriptors (those >= 0). */
static inline void cn__xsk_prog_release(int ifindex, int attached, uint32_t flags, int prog_fd,
					int map_fd)
{
	if (attached) {
		LIBBPF_OPTS(bpf_xdp_attach_opts, o, .old_prog_fd = prog_fd);
		bpf_xdp_detach(ifindex, flags, &o);
	}
	if (prog_fd >= 0)
		close(prog_fd);
	if (map_fd >= 0)
		close(map_fd);
}

#endif
