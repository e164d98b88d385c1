/* SPDX-License-Identifier: BSD-2-Clause */
/* The AF_XDP backend against the real Linux stack over a veth pair. The
 * program creates a private network namespace (cnxdp-<pid>), runs itself
 * inside it (`ip netns exec NAME /proc/self/exe --inside`) and deletes the
 * namespace afterwards, whatever the inside part did. Inside: a veth pair
 * cnk <-> cnx (two queues each); the kernel is 10.77.0.1 on cnk (TX
 * checksum offload off, so its frames carry whole checksums; a permanent
 * neighbour entry for cachenet; IPv6 off), cachenet is 10.77.0.2 behind
 * cnx through AF_XDP.
 *
 * Checks: open errors (errno per cause); the mode obtained on veth (copy;
 * zero-copy refused with EOPNOTSUPP; native and generic attach) and the
 * program attached while open and gone after close; a kernel socket's UDP
 * datagrams reach a cachenet stack through cn_afxdp_poll, each received
 * into a UMEM chunk (the mbuf's storage is the backend's pool) and
 * byte-exact, and the stack's datagrams (checksum offloaded to the
 * backend's gather, and computed by the stack) reach the kernel socket;
 * frames longer than the MTU dropped and counted; a program left by a
 * killed process is detached by the next open; another program on the
 * interface makes open fail with EBUSY and is left alone; two queues;
 * the backend's impairment (loss, duplication) both ways; frames whose
 * bytes lie in the UMEM sent from there (a whole frame, a chain, a
 * stack's datagram as copied headers and its payload in place) and held
 * until their completion, others copied, counted per mode, each datagram
 * exact at the kernel's socket; counters add up and pools return to
 * their start after each test.
 *
 * Skips (exit 77, the reason printed) when the backend was not built,
 * or the kernel or the user cannot make namespaces, veth pairs or AF_XDP
 * sockets. */
#include "cn_test.h"

#include <stdio.h>

#ifndef CN_HAVE_AFXDP
int main(void)
{
	printf("SKIP: the AF_XDP backend is not built (libxdp-dev and libbpf-dev not found, "
	       "or -Dafxdp=disabled)\n");
	return 77;
}
#else

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <linux/ethtool.h>
#include <linux/if_link.h>
#include <linux/sockios.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cachenet/afxdp.h"
#include "cachenet/csum.h"
#include "cachenet/tsc.h"
#include "cachenet/udp.h"

#define KIF "cnk"
#define XIF "cnx"
static const uint8_t KMAC[6] = {2, 0, 0, 0, 0, 1}, OURMAC[6] = {2, 0, 0, 0, 0, 2};
#define KIP_H 0x0a4d0001u   /* 10.77.0.1, the kernel */
#define OURIP_H 0x0a4d0002u /* 10.77.0.2, cachenet */
#define KIF2 "cnk2"          /* the two-queue pair: kernel 10.77.1.1 */
#define XIF2 "cnx2"
#define OURIP2_H 0x0a4d0102u /* 10.77.1.2, cachenet behind cnx2 */
#define OUR_PORT 7777
#define K_PORT 9000

/* ------------------------------------------------------------ fixture */

struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_afxdp *x;
	int ks;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	f->ks = -1;
	*state = f;
	return cn_test_pools(&f->mp, &f->cp, 8192, 256, 0, 0);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	int rc = cn_afxdp_close(f->x);
	if (f->ks >= 0)
		close(f->ks);
	assert_int_equal(rc, 0);
	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f);
	return 0;
}

static struct cn_afxdp_params params(struct fx *f)
{
	struct cn_afxdp_params p = {.ifname = XIF, .ring_size = 256, .mpool = f->mp};
	return p;
}

static struct cn_afxdp *open_ok(struct fx *f, const struct cn_afxdp_params *p)
{
	struct cn_afxdp *x = cn_afxdp_open(p);
	if (!x)
		fail_msg("cn_afxdp_open(%s): %s", p->ifname, strerror(errno));
	f->x = x;
	return x;
}

static int close_x(struct fx *f)
{
	int rc = cn_afxdp_close(f->x);
	f->x = NULL;
	return rc;
}

/* The XDP program ids attached to @p ifname (native, generic). */
static void xdp_ids(const char *ifname, uint32_t *drv, uint32_t *skb)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	assert_int_equal(bpf_xdp_query((int)if_nametoindex(ifname), 0, &q), 0);
	*drv = q.drv_prog_id;
	*skb = q.skb_prog_id;
}

static void expect_no_prog(void)
{
	uint32_t d, s;
	xdp_ids(XIF, &d, &s);
	if (d || s)
		fail_msg("an XDP program is still attached to " XIF ": native %u generic %u", d, s);
}

static void check_stats(struct cn_afxdp *x)
{
	for (uint32_t i = 0; i < cn_afxdp_info(x)->queues; i++) {
		struct cn_afxdp_queue *q = cn_afxdp_queue(x, i);
		for (int k = 0; k < 100 && cn_afxdp_stats(q)->tx_completed < cn_afxdp_stats(q)->tx_frames; k++) {
			cn_afxdp_flush(q);
			usleep(1000);
		}
		const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
		assert_int_equal(s->tx_completed, s->tx_frames);
		assert_int_equal(s->tx_kick_errors, 0);
		assert_int_equal(s->k_rx_invalid, 0);
		assert_int_equal(s->k_tx_invalid, 0);
	}
	assert_null(cn_afxdp_queue(x, cn_afxdp_info(x)->queues));
}

/* ------------------------------------------------------------ kernel side */

static int kernel_udp(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(K_PORT),
				.sin_addr.s_addr = htonl(KIP_H)};
	struct timeval tv = {.tv_sec = 2};
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return s;
}

static void kernel_send_to(int s, uint32_t ip_h, const void *buf, size_t len)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(OUR_PORT),
				 .sin_addr.s_addr = htonl(ip_h)};
	assert_int_equal(sendto(s, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
}

static void kernel_send(int s, const void *buf, size_t len)
{
	kernel_send_to(s, OURIP_H, buf, len);
}

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 8));
}

/* ------------------------------------------------------------ tests */

/* A stack at our address whose frames leave through @p q. */
static struct cn_net *our_net(struct fx *f, struct cn_afxdp_queue *q)
{
	struct cn_net_params np = {.addr = cn_htobe32(OURIP_H), .mpool = f->mp, .cpool = f->cp,
				   .xmit = cn_afxdp_xmit_hook, .xmit_arg = q};
	memcpy(np.mac, OURMAC, 6);
	struct cn_net *net = cn_net_create(&np);
	assert_non_null(net);
	return net;
}

/* A UDP socket on OUR_PORT sending checksums (offloaded: by the backend). */
static struct cn_udp_sock *our_udp(struct cn_net *net, bool offload)
{
	struct cn_udp_params up = {.lport = CN_BE16(OUR_PORT), .tx_csum = true, .tx_offload = offload};
	struct cn_udp_sock *us = cn_udp_open(net, &up);
	assert_non_null(us);
	return us;
}


static void open_errors(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);

	errno = 0;
	assert_null(cn_afxdp_open(NULL));
	assert_int_equal(errno, EINVAL);
	p.ifname = "cn-no-such-if";
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, ENODEV);
	p.ifname = "a-name-of-16-chr";
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, ENAMETOOLONG);
	p = params(f);
	p.ring_size = 100; /* not a power of two */
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	p = params(f);
	p.frames = p.ring_size; /* below 2 * ring_size */
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	p = params(f);
	p.mtu = 3000;
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	p = params(f);
	p.mpool = NULL;
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	p = params(f);
	p.mpool = f->cp; /* a cluster pool cannot carry received frames */
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	/* veth has no zero-copy */
	p = params(f);
	p.copy = CN_AFXDP_ZEROCOPY;
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EOPNOTSUPP);
	expect_no_prog();
}

/* Open in @p attach mode and check what was obtained. */
static struct cn_afxdp *open_mode(struct fx *f, enum cn_afxdp_attach attach)
{
	struct cn_afxdp_params p = params(f);
	p.attach = attach;
	struct cn_afxdp *x = open_ok(f, &p);
	const struct cn_afxdp_info *in = cn_afxdp_info(x);
	uint32_t d, s;

	assert_int_equal(in->zerocopy, 0); /* veth: copy */
	assert_int_equal(in->native, attach != CN_AFXDP_ATTACH_GENERIC);
	assert_int_equal(in->queues, 1);
	assert_int_equal(in->chunk_size, 2048);
	assert_int_equal(in->frames, 4 * 256);
	xdp_ids(XIF, &d, &s);
	assert_int_equal(in->native ? d : s, in->prog_id);
	assert_true(in->prog_id != 0);
	assert_int_equal(in->native ? s : d, 0);
	return x;
}

struct rx_log {
	unsigned n;
	size_t bytes;
	bool exact, in_umem;
	struct cn_mbuf_pool *umem;
	uint8_t want[2048];
	size_t want_len;
};

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct rx_log *l = arg;
	(void)pi;
	l->n++;
	l->bytes += m->pkt_len;
	if (m->pkt_len != l->want_len || memcmp(m->data, l->want, m->len) != 0 || m->next)
		l->exact = false;
	/* the datagram's bytes lie in a UMEM chunk, where the kernel put them */
	if (!m->shared || m->shared->pool != l->umem ||
	    cn_mbuf_pool_iova(l->umem, m->data) == UINT64_MAX)
		l->in_umem = false;
	cn_mbuf_free_chain(m);
}

/* UDP both ways between the kernel's socket and a cachenet stack. */
static void udp_both_ways(struct fx *f, struct cn_afxdp *x)
{
	struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
	static struct rx_log log;
	struct cn_net *net = our_net(f, q);
	memset(&log, 0, sizeof(log));
	log.exact = log.in_umem = true;
	log.umem = cn_afxdp_pool(x);
	struct cn_udp_params up = {.lport = CN_BE16(OUR_PORT), .tx_csum = true, .rx_csum = true,
				   .rx = udp_rx, .rx_arg = &log};
	struct cn_udp_sock *us = cn_udp_open(net, &up);
	assert_non_null(us);
	f->ks = kernel_udp();

	/* kernel -> cachenet, sizes up to a full frame */
	static const size_t sizes[] = {1, 18, 100, 1000, 1472};
	for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		log.want_len = sizes[i];
		fill(log.want, sizes[i], i);
		unsigned before = log.n;
		kernel_send(f->ks, log.want, sizes[i]);
		for (int k = 0; k < 2000 && log.n == before; k++) {
			if (cn_afxdp_wait(q, 1) < 0)
				break;
			cn_afxdp_poll(q, net, 0);
		}
		assert_int_equal(log.n, before + 1);
	}
	assert_true(log.exact);
	assert_true(log.in_umem);

	/* cachenet -> kernel: offloaded checksum (gathered by the backend),
	 * then computed by the stack */
	for (int mode = 0; mode < 2; mode++) {
		cn_udp_close(us);
		up.tx_offload = mode == 0;
		us = cn_udp_open(net, &up);
		assert_non_null(us);
		for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint8_t b[2048], r[2048];
			fill(b, sizes[i], 100 + i);
			assert_int_equal(cn_udp_sendto(us, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC, b, (uint32_t)sizes[i],
						       NULL, NULL), 0);
			cn_afxdp_flush(q);
			ssize_t n = recv(f->ks, r, sizeof(r), 0);
			if (n != (ssize_t)sizes[i])
				fail_msg("kernel got %zd bytes, want %zu (%s)", n, sizes[i],
					 n < 0 ? strerror(errno) : "");
			assert_memory_equal(r, b, sizes[i]);
		}
	}
	check_stats(x);
	const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
	assert_true(s->rx_frames >= 5);
	assert_true(s->tx_frames >= 10);
	assert_true(s->tx_kicks > 0);
	assert_true(s->rx_posted >= s->rx_frames);
	cn_udp_close(us);
	assert_int_equal(cn_net_destroy(net), 0);
	close(f->ks);
	f->ks = -1;
}

static void udp_mode(struct fx *f, enum cn_afxdp_attach mode)
{
	udp_both_ways(f, open_mode(f, mode));
	assert_int_equal(close_x(f), 0);
	expect_no_prog();
}

static void udp_native(void **state)
{
	udp_mode(*state, CN_AFXDP_ATTACH_AUTO);
}

static void udp_generic(void **state)
{
	udp_mode(*state, CN_AFXDP_ATTACH_GENERIC);
}

/* A frame longer than our MTU is dropped and counted; the next one of
 * the right size still arrives, and while the caller holds it its chunk
 * counts as in use in the UMEM's pool. */
static void rx_mtu(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);
	p.mtu = 1000;
	struct cn_afxdp *x = open_ok(f, &p);
	struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
	struct cn_mbuf *m[8];
	uint8_t b[1400];
	unsigned got = 0;

	f->ks = kernel_udp();
	fill(b, sizeof(b), 3);
	kernel_send(f->ks, b, 1400); /* IP 1428 > 1000 */
	kernel_send(f->ks, b, 900);  /* IP 928: fits */
	for (int k = 0; k < 2000 && got == 0; k++) {
		cn_afxdp_wait(q, 1);
		got = cn_afxdp_rx_burst(q, m, 8);
	}
	assert_int_equal(got, 1);
	assert_int_equal(m[0]->len, 14 + 20 + 8 + 900);
	assert_memory_equal(m[0]->data + 42, b, 900);
	assert_int_equal(m[0]->flags & CN_MBUF_F_RX_CSUM_MASK, 0); /* status unknown */
	assert_int_equal(cn_afxdp_stats(q)->rx_trunc, 1);
	/* the frame is ours: its chunk is out of the backend's hands */
	struct cn_mbuf_pool_stats ps;
	cn_mbuf_pool_stats(cn_afxdp_pool(x), &ps);
	assert_int_equal(ps.in_use, cn_afxdp_stats(q)->rx_posted - cn_afxdp_stats(q)->rx_frames -
					    cn_afxdp_stats(q)->rx_trunc + 1);
	cn_mbuf_free(m[0]);
	assert_int_equal(close_x(f), 0);
	expect_no_prog();
}

/* A process killed while open leaves its program attached; the next
 * open removes it and works. */
/* The fill ring holds bare chunks; a frame takes its small mbuf when it
 * arrives. With the mbuf pool dry the frame is dropped and counted in
 * rx_nombuf, its chunk goes back to the UMEM's pool (nothing leaks, the
 * held count stays exact), and frames arrive again once mbufs are free. */
static void rx_nombuf(void **state)
{
	struct fx *f = *state;
	struct cn_mbuf_pool_params mpp = {.name = "afxdp-few", .kind = CN_MBUF_POOL_SMALL,
					  .count = 3, .cache_size = 0};
	struct cn_mbuf_pool *few = cn_mbuf_pool_create(&mpp);
	assert_non_null(few);
	struct cn_afxdp_params p = params(f);
	p.mpool = few;
	struct cn_afxdp *x = open_ok(f, &p);
	struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
	const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
	struct cn_mbuf *m[8];
	uint8_t b[600];
	unsigned got = 0;

	/* nothing received yet: no mbuf taken, the posted chunks held */
	assert_int_equal(cn_afxdp_held(x), s->rx_posted);
	f->ks = kernel_udp();
	for (int i = 0; i < 5; i++) {
		fill(b, sizeof(b), (uint8_t)(10 + i));
		kernel_send(f->ks, b, sizeof(b));
	}
	for (int k = 0; k < 2000 && got + s->rx_nombuf < 5; k++) {
		cn_afxdp_wait(q, 1);
		got += cn_afxdp_rx_burst(q, m + got, 8 - got);
	}
	assert_int_equal(got, 3);
	assert_int_equal(s->rx_nombuf, 2);
	for (unsigned i = 0; i < got; i++) {
		fill(b, sizeof(b), (uint8_t)(10 + i));
		assert_memory_equal(m[i]->data + 42, b, sizeof(b));
	}
	assert_int_equal(cn_afxdp_held(x), s->rx_posted - s->rx_frames - s->rx_trunc - s->rx_nombuf);
	struct cn_mbuf_pool_stats ps;
	cn_mbuf_pool_stats(cn_afxdp_pool(x), &ps);
	assert_int_equal(ps.in_use, cn_afxdp_held(x) + got);
	for (unsigned i = 0; i < got; i++)
		cn_mbuf_free(m[i]);
	/* mbufs again: the next frame arrives */
	fill(b, sizeof(b), 20);
	kernel_send(f->ks, b, sizeof(b));
	got = 0;
	for (int k = 0; k < 2000 && got == 0; k++) {
		cn_afxdp_wait(q, 1);
		got = cn_afxdp_rx_burst(q, m, 8);
	}
	assert_int_equal(got, 1);
	assert_memory_equal(m[0]->data + 42, b, sizeof(b));
	cn_mbuf_free(m[0]);
	assert_int_equal(s->rx_nombuf, 2);
	assert_int_equal(close_x(f), 0);
	assert_int_equal(cn_mbuf_pool_destroy(few), 0);
	expect_no_prog();
}

static void stale_program(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);
	uint32_t d, s;
	int st;

	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct cn_afxdp *x = cn_afxdp_open(&p);
		if (!x)
			_exit(2);
		kill(getpid(), SIGKILL);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	xdp_ids(XIF, &d, &s);
	assert_true(d != 0); /* left behind */
	struct cn_afxdp *x = open_ok(f, &p);
	assert_int_equal(cn_afxdp_info(x)->stale_detached, 1);
	assert_true(cn_afxdp_info(x)->prog_id != d);
	udp_both_ways(f, x);
	assert_int_equal(close_x(f), 0);
	expect_no_prog();
}

/* Someone else's XDP program: open refuses with EBUSY and leaves it. */
static void foreign_program(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);
	struct bpf_insn pass[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int ifindex = (int)if_nametoindex(XIF);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "not_ours", "Dual BSD/GPL", pass, 2, NULL);
	uint32_t d, s;

	assert_true(fd >= 0);
	assert_int_equal(bpf_xdp_attach(ifindex, fd, XDP_FLAGS_SKB_MODE, NULL), 0);
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EBUSY);
	xdp_ids(XIF, &d, &s);
	assert_true(s != 0); /* still there */
	assert_int_equal(bpf_xdp_detach(ifindex, XDP_FLAGS_SKB_MODE, NULL), 0);
	close(fd);
	expect_no_prog();
}

/* Two queues, one socket each, on one UMEM (the second veth pair, two
 * queues each way): both post their fill rings, and the kernel's
 * datagrams (a veth frame arrives on the queue its sender transmitted
 * on) all arrive through one of them. */
static void two_queues(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);
	p.ifname = XIF2;
	p.queues = 2;
	struct cn_afxdp *x = open_ok(f, &p);
	struct cn_mbuf *m[64];
	uint8_t b[200];
	unsigned got = 0;

	assert_int_equal(cn_afxdp_info(x)->queues, 2);
	assert_int_equal(cn_afxdp_info(x)->frames, 2 * 4 * 256);
	assert_true(cn_afxdp_stats(cn_afxdp_queue(x, 0))->rx_posted > 0);
	assert_true(cn_afxdp_stats(cn_afxdp_queue(x, 1))->rx_posted > 0);
	assert_true(cn_afxdp_fd(cn_afxdp_queue(x, 0)) != cn_afxdp_fd(cn_afxdp_queue(x, 1)));
	f->ks = kernel_udp();
	fill(b, sizeof(b), 9);
	for (int i = 0; i < 32; i++)
		kernel_send_to(f->ks, OURIP2_H, b, sizeof(b));
	for (int k = 0; k < 3000 && got < 32; k++) {
		for (uint32_t i = 0; i < 2; i++) {
			unsigned n = cn_afxdp_rx_burst(cn_afxdp_queue(x, i), m, 64);
			for (unsigned j = 0; j < n; j++) {
				assert_memory_equal(m[j]->data + 42, b, sizeof(b));
				cn_mbuf_free(m[j]);
			}
			got += n;
		}
		if (got < 32)
			usleep(1000);
	}
	assert_int_equal(got, 32);
	assert_int_equal(cn_afxdp_stats(cn_afxdp_queue(x, 0))->rx_frames +
				 cn_afxdp_stats(cn_afxdp_queue(x, 1))->rx_frames,
			 32);
	check_stats(x);
	assert_int_equal(close_x(f), 0);
	expect_no_prog();
}

/* Receive for up to @p ms, freeing frames; @return frames seen, each
 * checked to carry @p b at the UDP payload. */
static unsigned drain_rx(struct cn_afxdp_queue *q, const uint8_t *b, size_t len, int ms)
{
	struct cn_mbuf *m[16];
	unsigned got = 0;
	for (int k = 0; k < ms; k++) {
		cn_afxdp_wait(q, 1);
		unsigned n = cn_afxdp_rx_burst(q, m, 16);
		for (unsigned j = 0; j < n; j++) {
			assert_int_equal(m[j]->len, 42 + len);
			assert_memory_equal(m[j]->data + 42, b, len);
			cn_mbuf_free(m[j]);
		}
		got += n;
	}
	return got;
}

/* The impairment inside the backend: loss 1 drops every frame both ways
 * (counted), duplicate 1 delivers every frame twice both ways. */
static void impairment(void **state)
{
	struct fx *f = *state;
	struct cn_link_params lp = {.loss = 1, .rng_start = 5};
	struct cn_afxdp_params p = params(f);
	uint8_t b[300], r[2048];
	p.impair = &lp;
	f->ks = kernel_udp();
	fill(b, sizeof(b), 11);

	for (int dup = 0; dup < 2; dup++) {
		if (dup) {
			lp.loss = 0;
			lp.duplicate = 1;
		}
		struct cn_afxdp *x = open_ok(f, &p);
		struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
		struct cn_net *net = our_net(f, q);
		struct cn_udp_sock *us = our_udp(net, true);
		for (int i = 0; i < 4; i++)
			kernel_send(f->ks, b, sizeof(b));
		unsigned got = drain_rx(q, b, sizeof(b), 300);
		for (int i = 0; i < 3; i++)
			assert_int_equal(cn_udp_sendto(us, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC, b, sizeof(b), NULL, NULL), 0);
		cn_afxdp_flush(q);
		usleep(100000);
		unsigned kgot = 0;
		while (recv(f->ks, r, sizeof(r), MSG_DONTWAIT) == (ssize_t)sizeof(b) &&
		       memcmp(r, b, sizeof(b)) == 0)
			kgot++;
		const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
		if (!dup) {
			assert_int_equal(got, 0);
			assert_int_equal(kgot, 0);
			assert_int_equal(s->impair_rx.lost, 4);
			assert_int_equal(s->impair_tx.lost, 3);
			assert_int_equal(s->tx_frames, 0);
		} else {
			assert_int_equal(got, 8);
			assert_int_equal(kgot, 6);
			assert_int_equal(s->impair_rx.duplicated, 4);
			assert_int_equal(s->impair_tx.duplicated, 3);
			assert_int_equal(s->tx_frames, 6);
		}
		assert_int_equal(s->impair_rx.frames, 4);
		assert_int_equal(s->impair_tx.frames, 3);
		check_stats(x);
		cn_udp_close(us);
		assert_int_equal(cn_net_destroy(net), 0);
		assert_int_equal(close_x(f), 0);
	}
	/* rates outside [0, 1] are refused */
	lp.duplicate = 1.5;
	errno = 0;
	assert_null(cn_afxdp_open(&p));
	assert_int_equal(errno, EINVAL);
	expect_no_prog();
}

/* ------------------------------------------------------------ TX in place */

/* A UDP datagram our address:OUR_PORT -> the kernel's socket at @p f:
 * Ethernet + IPv4 + UDP headers (UDP checksum over @p pay, which may lie
 * elsewhere) into @p h (42 bytes). */
static void udp_hdr(uint8_t *h, const uint8_t *pay, uint32_t len)
{
	uint8_t *ip = h + 14, *u = h + 34;
	uint32_t s;
	uint16_t c;

	memcpy(h, KMAC, 6);
	memcpy(h + 6, OURMAC, 6);
	h[12] = 0x08, h[13] = 0;
	memset(ip, 0, 20);
	ip[0] = 0x45, ip[8] = 64, ip[9] = 17;
	ip[2] = (uint8_t)((28 + len) >> 8), ip[3] = (uint8_t)(28 + len);
	ip[12] = 10, ip[13] = 77, ip[14] = 0, ip[15] = 2;
	ip[16] = 10, ip[17] = 77, ip[18] = 0, ip[19] = 1;
	c = (uint16_t)~cn_csum_fold(cn_csum_partial(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	u[0] = OUR_PORT >> 8, u[1] = OUR_PORT & 255, u[2] = K_PORT >> 8, u[3] = K_PORT & 255;
	u[4] = (uint8_t)((8 + len) >> 8), u[5] = (uint8_t)(8 + len), u[6] = u[7] = 0;
	/* pseudo header: addresses, protocol, UDP length */
	uint8_t ph[12] = {10, 77, 0, 2, 10, 77, 0, 1, 0, 17, (uint8_t)((8 + len) >> 8), (uint8_t)(8 + len)};
	s = cn_csum_partial(ph, 12, 0);
	s = cn_csum_combine(s, cn_csum_partial(u, 8, 0), 12);
	s = cn_csum_combine(s, cn_csum_partial(pay, len, 0), 20);
	c = (uint16_t)~cn_csum_fold(s);
	if (c == 0)
		c = 0xffff;
	memcpy(u + 6, &c, 2);
}

/* An mbuf over a fresh cluster of pool @p cp with @p len bytes at
 * offset @p off. */
static struct cn_mbuf *cluster_mbuf(struct fx *f, struct cn_mbuf_pool *cp, uint32_t off, uint32_t len)
{
	struct cn_mbuf *m = cn_mbuf_get_cluster(f->mp, cp);
	assert_non_null(m);
	m->data = m->buf + off;
	m->len = m->pkt_len = len;
	return m;
}

/* The kernel's socket receives exactly @p want (@p len bytes). */
static void kernel_expect(struct fx *f, const uint8_t *want, uint32_t len)
{
	uint8_t r[2048];
	ssize_t n = recv(f->ks, r, sizeof(r), 0);
	if (n != (ssize_t)len)
		fail_msg("kernel got %zd bytes, want %u (%s)", n, len, n < 0 ? strerror(errno) : "");
	assert_memory_equal(r, want, len);
}

/* Flush until every TX frame of @p q completed. */
static void tx_settle(struct cn_afxdp_queue *q)
{
	for (int k = 0; k < 100 && cn_afxdp_stats(q)->tx_completed < cn_afxdp_stats(q)->tx_frames; k++) {
		cn_afxdp_flush(q);
		usleep(1000);
	}
	assert_int_equal(cn_afxdp_stats(q)->tx_completed, cn_afxdp_stats(q)->tx_frames);
}

static unsigned done_calls;
static void count_done(void *arg)
{
	(void)arg;
	done_calls++;
}

static bool kernel_has_sg(void)
{
	struct utsname u;
	unsigned a = 0, b = 0;
	return uname(&u) == 0 && sscanf(u.release, "%u.%u", &a, &b) == 2 && (a > 6 || (a == 6 && b >= 6));
}

/* Frames whose bytes lie in the UMEM leave from there (no copy: counted
 * per mode, the chunk held until its completion, then back in the pool);
 * others are copied; the kernel's socket gets every datagram exactly. */
static void tx_in_place(void **state)
{
	struct fx *f = *state;
	struct cn_afxdp_params p = params(f);
	p.tx_multi = 1; /* several descriptors per frame in copy mode too */
	struct cn_afxdp *x = open_ok(f, &p);
	struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
	struct cn_mbuf_pool *up = cn_afxdp_pool(x);
	const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
	struct cn_mbuf_pool_stats ps;
	uint8_t pay[1400], frame[1500];
	uint32_t in_use0;

	if (kernel_has_sg())
		assert_int_equal(cn_afxdp_info(x)->multi_buffer, 1);
	else
		printf("NOTE: kernel before 6.6, no multi-buffer: chains are copied\n");
	f->ks = kernel_udp();
	fill(pay, sizeof(pay), 21);
	cn_mbuf_pool_stats(up, &ps);
	in_use0 = ps.in_use; /* the chunks posted to the fill ring */
	assert_int_equal(in_use0, cn_afxdp_held(x));

	/* 1. the whole frame in one cluster of the UMEM's pool, headers in
	 * its head room: posted from there and held until completion */
	struct cn_mbuf *m = cluster_mbuf(f, up, 128, 42 + 1400);
	udp_hdr(m->data, pay, 1400);
	memcpy(m->data + 42, pay, 1400);
	memcpy(frame, m->data, 42 + 1400);
	assert_int_equal(cn_afxdp_xmit_mbuf(q, m), 0);
	assert_int_equal(s->tx_zero_copy, 1);
	assert_int_equal(s->tx_copied, 0);
	/* a copy_ref of the same bytes while the first is on the ring: its
	 * chunk is named already, so this one is copied */
	struct cn_mbuf *r = cn_mbuf_copy_ref(m, 0, 42 + 1400);
	assert_non_null(r);
	assert_int_equal(cn_afxdp_xmit_mbuf(q, r), 0);
	assert_int_equal(s->tx_zero_copy, 1);
	assert_int_equal(s->tx_copied, 1);
	cn_mbuf_pool_stats(up, &ps);
	assert_int_equal(ps.in_use, in_use0 + 2); /* m's cluster, r's copy chunk */
	tx_settle(q);
	kernel_expect(f, pay, 1400);
	kernel_expect(f, pay, 1400);
	cn_mbuf_pool_stats(up, &ps);
	assert_int_equal(ps.in_use, in_use0); /* both back at completion */

	/* 2. a chain: headers in one cluster, payload in another */
	struct cn_mbuf *h = cluster_mbuf(f, up, 64, 42), *pl = cluster_mbuf(f, up, 300, 1000);
	memcpy(pl->data, pay + 7, 1000);
	udp_hdr(h->data, pl->data, 1000);
	h->next = pl;
	h->pkt_len = 1042;
	assert_int_equal(cn_afxdp_xmit_mbuf(q, h), 0);
	if (cn_afxdp_info(x)->multi_buffer)
		assert_int_equal(s->tx_zero_copy, 2);
	else
		assert_int_equal(s->tx_copied, 2);
	tx_settle(q);
	kernel_expect(f, pay + 7, 1000);

	/* 3. foreign memory (an inline mbuf of the caller's pool): copied */
	struct cn_mbuf *im = cn_mbuf_get(f->mp);
	assert_non_null(im);
	im->data = im->buf;
	udp_hdr(im->data, pay, 100);
	memcpy(im->data + 42, pay, 100);
	im->len = im->pkt_len = 142;
	uint64_t copied = s->tx_copied;
	assert_int_equal(cn_afxdp_xmit_mbuf(q, im), 0);
	assert_int_equal(s->tx_copied, copied + 1);
	tx_settle(q);
	kernel_expect(f, pay, 100);

	/* 4. a stack's datagram whose payload lies in a UMEM cluster:
	 * headers copied, payload posted in place, the packet (and its done
	 * callback) released only at the completion; the checksum offloaded
	 * to the backend and computed by the stack */
	struct cn_net *net = our_net(f, q);
	struct cn_mbuf *b = cluster_mbuf(f, up, 256, 1400);
	memcpy(b->data, pay, 1400);
	for (int off = 0; off < 2; off++) {
		struct cn_udp_sock *us = our_udp(net, off == 0);
		uint64_t inplace = s->tx_payload_in_place, copied0 = s->tx_copied;
		done_calls = 0;
		assert_int_equal(cn_udp_sendto(us, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC, b->data, 1400,
					       count_done, NULL), 0);
		if (cn_afxdp_info(x)->multi_buffer) {
			assert_int_equal(s->tx_payload_in_place, inplace + 1);
			assert_int_equal(done_calls, 0); /* held until the completion */
		} else {
			assert_int_equal(s->tx_copied, copied0 + 1);
		}
		tx_settle(q);
		assert_int_equal(done_calls, 1);
		kernel_expect(f, pay, 1400);
		/* payload outside the UMEM: copied */
		copied0 = s->tx_copied;
		assert_int_equal(cn_udp_sendto(us, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC, pay, 1000,
					       NULL, NULL), 0);
		assert_int_equal(s->tx_copied, copied0 + 1);
		tx_settle(q);
		kernel_expect(f, pay, 1000);
		cn_udp_close(us);
	}
	cn_mbuf_free(b);
	assert_int_equal(cn_net_destroy(net), 0);
	assert_int_equal(s->tx_frames, s->tx_zero_copy + s->tx_payload_in_place + s->tx_copied);
	check_stats(x);
	cn_mbuf_pool_stats(up, &ps);
	assert_int_equal(ps.in_use, cn_afxdp_held(x));
	assert_int_equal(close_x(f), 0);
	expect_no_prog();

	/* by default copy mode keeps one descriptor per frame: a chain in
	 * the UMEM, and a stack's datagram with its payload there, are
	 * copied; one mbuf in the UMEM still leaves in place */
	p.tx_multi = 0;
	x = open_ok(f, &p);
	q = cn_afxdp_queue(x, 0);
	s = cn_afxdp_stats(q);
	m = cluster_mbuf(f, cn_afxdp_pool(x), 128, 142);
	udp_hdr(m->data, pay, 100);
	memcpy(m->data + 42, pay, 100);
	assert_int_equal(cn_afxdp_xmit_mbuf(q, m), 0);
	assert_int_equal(s->tx_zero_copy, 1);
	tx_settle(q);
	kernel_expect(f, pay, 100);
	h = cluster_mbuf(f, cn_afxdp_pool(x), 64, 42);
	pl = cluster_mbuf(f, cn_afxdp_pool(x), 300, 500);
	memcpy(pl->data, pay, 500);
	udp_hdr(h->data, pl->data, 500);
	h->next = pl;
	h->pkt_len = 542;
	assert_int_equal(cn_afxdp_xmit_mbuf(q, h), 0);
	assert_int_equal(s->tx_copied, 1);
	assert_int_equal(s->tx_zero_copy, 1);
	tx_settle(q);
	kernel_expect(f, pay, 500);
	net = our_net(f, q);
	struct cn_udp_sock *us1 = our_udp(net, true);
	b = cluster_mbuf(f, cn_afxdp_pool(x), 256, 1400);
	memcpy(b->data, pay, 1400);
	assert_int_equal(cn_udp_sendto(us1, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC, b->data, 1400,
				       NULL, NULL), 0);
	assert_int_equal(s->tx_copied, 2);
	assert_int_equal(s->tx_payload_in_place, 0);
	tx_settle(q);
	kernel_expect(f, pay, 1400);
	cn_mbuf_free(b);
	cn_udp_close(us1);
	assert_int_equal(cn_net_destroy(net), 0);
	/* too long: refused, left to the caller */
	m = cluster_mbuf(f, cn_afxdp_pool(x), 0, 1515);
	assert_int_equal(cn_afxdp_xmit_mbuf(q, m), -EMSGSIZE);
	assert_int_equal(s->tx_too_long, 1);
	cn_mbuf_free(m);
	check_stats(x);
	assert_int_equal(close_x(f), 0);
	expect_no_prog();
}

/* ------------------------------------------------------------ TX cost */

#define BN 128 /* frames per round: under the TX ring, no kick in the loop */
#define BROUNDS 31
enum { B_MBUF_COPY, B_MBUF_INPLACE, B_UDP_COPY, B_UDP_INPLACE, B_MODES };
static const char *const bname[B_MODES] = {"mbuf copied", "mbuf in place", "udp copied",
					   "udp payload in place"};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* TSC ticks per TX frame of 1442 bytes (a 1400-byte UDP datagram), each
 * mode in rounds of BN frames, modes interleaved: the transmit calls
 * (gather or posting; for UDP the stack's send too) and the flush (the
 * kernel's copy-mode transmit in sendto, the completions, the
 * releases). Medians over BROUNDS rounds. Run by `meson test
 * --benchmark afxdp-tx` (CN_AFXDP_TX_BENCH=1). */
static int tx_bench(void)
{
	struct fx *f = calloc(1, sizeof(*f));
	void *st = f;
	struct cn_mbuf *src[2][BN], *ms[BN];
	uint64_t call[B_MODES][BROUNDS], fl[B_MODES][BROUNDS];
	uint8_t pay[1400];
	int big = 8 << 20;

	if (!f)
		return 1;
	f->ks = -1;
	if (cn_test_pools(&f->mp, &f->cp, 8192, 1024, 0, 0) != 0)
		return 1;
	struct cn_afxdp_params p = params(f);
	p.ring_size = 512;
	p.batch = 256;
	p.tx_multi = 1; /* stack packets split in copy mode, to measure it */
	struct cn_afxdp *x = open_ok(f, &p);
	struct cn_afxdp_queue *q = cn_afxdp_queue(x, 0);
	struct cn_mbuf_pool *up = cn_afxdp_pool(x);
	f->ks = kernel_udp();
	setsockopt(f->ks, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	fill(pay, sizeof(pay), 5);
	for (int i = 0; i < BN; i++)
		for (int k = 0; k < 2; k++) {
			/* k 0: the caller's own cluster; k 1: a UMEM cluster */
			struct cn_mbuf *m = cluster_mbuf(f, k ? up : f->cp, 128, 1442);
			udp_hdr(m->data, pay, 1400);
			memcpy(m->data + 42, pay, 1400);
			src[k][i] = m;
		}
	struct cn_net *net = our_net(f, q);
	struct cn_udp_sock *us = our_udp(net, true);
	printf("multi_buffer %d, zerocopy %d, native %d; %d frames of 1442 bytes per round\n",
	       cn_afxdp_info(x)->multi_buffer, cn_afxdp_info(x)->zerocopy, cn_afxdp_info(x)->native, BN);
	for (int r = 0; r < BROUNDS; r++)
		for (int mode = 0; mode < B_MODES; mode++) {
			int k = mode == B_MBUF_INPLACE || mode == B_UDP_INPLACE;
			uint64_t t0, t1, t2;
			uint8_t rb[2048];
			unsigned got = 0;
			if (mode <= B_MBUF_INPLACE)
				for (int i = 0; i < BN; i++)
					ms[i] = cn_mbuf_copy_ref(src[k][i], 0, 1442);
			t0 = cn_tsc_begin();
			for (int i = 0; i < BN; i++) {
				int rc = mode <= B_MBUF_INPLACE
						 ? cn_afxdp_xmit_mbuf(q, ms[i])
						 : cn_udp_sendto(us, cn_htobe32(KIP_H), CN_BE16(K_PORT), KMAC,
								 src[k][i]->data + 42, 1400, NULL, NULL);
				if (rc != 0)
					fail_msg("%s: transmit %d: %d", bname[mode], i, rc);
			}
			t1 = cn_tsc_end();
			while (cn_afxdp_stats(q)->tx_completed < cn_afxdp_stats(q)->tx_frames)
				cn_afxdp_flush(q);
			t2 = cn_tsc_end();
			while (recv(f->ks, rb, sizeof(rb), MSG_DONTWAIT) == 1400)
				got++;
			if (got != BN)
				fail_msg("%s: the kernel got %u of %d", bname[mode], got, BN);
			call[mode][r] = (t1 - t0) / BN;
			fl[mode][r] = (t2 - t1) / BN;
		}
	const struct cn_afxdp_stats *s = cn_afxdp_stats(q);
	printf("frames: zero_copy %" PRIu64 " payload_in_place %" PRIu64 " copied %" PRIu64 "\n",
	       s->tx_zero_copy, s->tx_payload_in_place, s->tx_copied);
	printf("%-22s %12s %12s %12s  (TSC ticks per frame, medians of %d)\n", "mode", "transmit",
	       "flush", "total", BROUNDS);
	for (int mode = 0; mode < B_MODES; mode++) {
		uint64_t tot[BROUNDS];
		for (int r = 0; r < BROUNDS; r++)
			tot[r] = call[mode][r] + fl[mode][r];
		qsort(call[mode], BROUNDS, sizeof(uint64_t), cmp_u64);
		qsort(fl[mode], BROUNDS, sizeof(uint64_t), cmp_u64);
		qsort(tot, BROUNDS, sizeof(uint64_t), cmp_u64);
		printf("%-22s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", bname[mode],
		       call[mode][BROUNDS / 2], fl[mode][BROUNDS / 2], tot[BROUNDS / 2]);
	}
	cn_udp_close(us);
	cn_net_destroy(net);
	for (int i = 0; i < BN; i++)
		for (int k = 0; k < 2; k++)
			cn_mbuf_free(src[k][i]);
	return teardown(&st);
}

/* ------------------------------------------------------------ main */

static int run_inside(void)
{
	char cmd[1024];
	int s = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (s < 0) {
		printf("SKIP: no AF_XDP sockets here: %s\n", strerror(errno));
		return 77;
	}
	close(s);
	if (cn_test_sh("ip link add " KIF " type veth peer name " XIF) != 0 ||
	    cn_test_sh("ip link add " KIF2 " numtxqueues 2 numrxqueues 2 type veth peer name " XIF2
	       " numtxqueues 2 numrxqueues 2") != 0) {
		printf("SKIP: cannot create a veth pair\n");
		return 77;
	}
	snprintf(cmd, sizeof(cmd),
		 "ip link set lo up && ip link set " KIF " address 02:00:00:00:00:01 && "
		 "sysctl -qw net.ipv6.conf." KIF ".disable_ipv6=1 net.ipv6.conf." XIF ".disable_ipv6=1 && "
		 "ip link set " KIF " up && ip link set " XIF " up && "
		 "ip addr add 10.77.0.1/24 dev " KIF " && "
		 "ip neigh add 10.77.0.2 lladdr 02:00:00:00:00:02 dev " KIF " nud permanent && "
		 "sysctl -qw net.ipv6.conf." KIF2 ".disable_ipv6=1 net.ipv6.conf." XIF2 ".disable_ipv6=1 && "
		 "ip link set " KIF2 " up && ip link set " XIF2 " up && "
		 "ip addr add 10.77.1.1/24 dev " KIF2 " && "
		 "ip neigh add 10.77.1.2 lladdr 02:00:00:00:01:02 dev " KIF2 " nud permanent");
	if (cn_test_sh(cmd) != 0) {
		fprintf(stderr, "test_afxdp: '%s' failed\n", cmd);
		return 1;
	}
	if (cn_test_tx_csum_off(KIF) != 0 || cn_test_tx_csum_off(KIF2) != 0) {
		fprintf(stderr, "test_afxdp: TX checksum offload off on " KIF ": %s\n", strerror(errno));
		return 1;
	}
	if (getenv("CN_AFXDP_TX_BENCH"))
		return tx_bench();
	const struct CMUnitTest tests[] = {
		CN_FX(open_errors), CN_FX(udp_native), CN_FX(udp_generic), CN_FX(rx_mtu), CN_FX(rx_nombuf),
		CN_FX(stale_program), CN_FX(foreign_program), CN_FX(two_queues), CN_FX(impairment),
		CN_FX(tx_in_place),
	};
	return cmocka_run_group_tests_name("afxdp", tests, NULL, NULL);
}

int main(int argc, char **argv)
{
	return cn_test_netns_main("test_afxdp", "cnxdp", argc, argv, run_inside);
}
#endif
