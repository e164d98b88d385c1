/* SPDX-License-Identifier: BSD-2-Clause */
/* cachenet-xsk-bare: a bare AF_XDP receive loop, no stack: the ceiling of
 * the device path that cachenet's AF_XDP backend and stack run on.
 *
 *   cachenet-xsk-bare --dev IF [--queue Q] [--ring N] [--batch N]
 *                     [--xdp-mode auto|native|generic] [--busy-poll]
 *                     [--touch] [--duration S] [--ready-file F]
 *
 * One AF_XDP socket on queue Q of IF (copy or zero-copy, whichever the
 * driver takes; need-wakeup), the same XDP program as the backend's
 * (src/dev/xsk_prog.h). The loop: peek up to --batch descriptors on the
 * RX ring, add their lengths (with --touch also read every byte of each
 * frame, as a consumer of the data would), release them, and post the
 * same chunks straight back to the fill ring; recvfrom only when the
 * fill ring asks for a wake-up; poll(2) for at most 2 ms when the RX ring
 * is empty (spin instead with --busy-poll). No mbuf, no pool, no parse:
 * what is left is the ring protocol and the kernel's copy into the UMEM.
 *
 * At SIGINT/SIGTERM or after --duration seconds it prints one JSON line:
 * frames and bytes received, TSC ticks spent outside poll(2) ("busy"),
 * CPU time (getrusage), the kernel's drop counters (XDP_STATISTICS), and
 * detaches the program. Run as root in the interface's namespace. */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "cachenet/lab/perf.h"
#include "cachenet/tsc.h"
#include "xsk_prog.h"

#define CHUNK 2048u

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

struct opts {
	const char *dev, *ready_file;
	uint32_t queue, ring, batch;
	int attach;
	bool busy_poll, touch;
	double duration;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cachenet-xsk-bare --dev IF [--queue Q] [--ring N] [--batch N]\n"
		   "         [--xdp-mode auto|native|generic] [--busy-poll] [--touch]\n"
		   "         [--duration S] [--ready-file F]\n"
		   "  A bare AF_XDP receive loop: RX ring -> count bytes -> fill ring.\n");
}

/* The value after option @p i, or exit with the usage. */
static const char *optval(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		usage(stderr);
		exit(2);
	}
	return argv[++*i];
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const char *const modes[] = {"auto", "native", "generic"};
	bool bad = false;

	memset(o, 0, sizeof(*o));
	o->ring = 2048;
	o->batch = 64;
	o->attach = -1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--dev"))
			o->dev = optval(argc, argv, &i);
		else if (!strcmp(a, "--queue"))
			o->queue = (uint32_t)strtoul(optval(argc, argv, &i), NULL, 0);
		else if (!strcmp(a, "--ring"))
			o->ring = (uint32_t)strtoul(optval(argc, argv, &i), NULL, 0);
		else if (!strcmp(a, "--batch"))
			o->batch = (uint32_t)strtoul(optval(argc, argv, &i), NULL, 0);
		else if (!strcmp(a, "--xdp-mode")) {
			const char *m = optval(argc, argv, &i);
			for (int k = 0; k < 3; k++)
				if (!strcmp(m, modes[k]))
					o->attach = k;
			bad |= o->attach < 0;
		} else if (!strcmp(a, "--busy-poll"))
			o->busy_poll = true;
		else if (!strcmp(a, "--touch"))
			o->touch = true;
		else if (!strcmp(a, "--duration"))
			o->duration = strtod(optval(argc, argv, &i), NULL);
		else if (!strcmp(a, "--ready-file"))
			o->ready_file = optval(argc, argv, &i);
		else if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		} else
			bad = true;
	}
	if (o->attach < 0)
		o->attach = 0;
	if (bad || !o->dev || o->ring < 64 || o->ring > 16384 || (o->ring & (o->ring - 1)) ||
	    o->batch == 0 || o->batch > o->ring) {
		usage(stderr);
		exit(2);
	}
}

/* The socket, its UMEM (2 * ring chunks, all of them posted to the fill
 * ring of 2 * ring entries: it never runs short) and its program. */
struct bare {
	struct xsk_ring_cons rx, comp;
	struct xsk_ring_prod fill, tx;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	uint8_t *area;
	size_t len;
	int ifindex, map_fd, prog_fd, fd;
	uint32_t xdp_flags, prog_id, frames;
	bool attached, zerocopy;
};

static int bare_open(struct bare *b, const struct opts *o)
{
	struct xsk_umem_config uc = {.fill_size = 2 * o->ring, .comp_size = o->ring,
				     .frame_size = CHUNK};
	struct xsk_socket_config sc = {.rx_size = o->ring, .tx_size = o->ring,
				       .libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD};
	uint32_t idx = 0;
	int rc;

	memset(b, 0, sizeof(*b));
	b->map_fd = b->prog_fd = -1;
	b->ifindex = (int)if_nametoindex(o->dev);
	if (!b->ifindex)
		return -ENODEV;
	rc = cn__xsk_detach_stale(b->ifindex);
	if (rc < 0)
		return rc;
	b->frames = 2 * o->ring;
	b->len = (size_t)b->frames * CHUNK;
	b->area = mmap(NULL, b->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		       -1, 0);
	if (b->area == MAP_FAILED) {
		b->area = NULL;
		return -ENOMEM;
	}
	rc = xsk_umem__create(&b->umem, b->area, b->len, &b->fill, &b->comp, &uc);
	if (rc)
		return rc < 0 ? rc : -rc;
	/* zero-copy where the driver takes it (veth does not), else copy;
	 * a queue a closed socket held may stay busy for a few ms */
	for (int t = 0, zc = 1;; t++) {
		sc.bind_flags = (uint16_t)((zc ? XDP_ZEROCOPY : XDP_COPY) | XDP_USE_NEED_WAKEUP);
		memset(&b->rx, 0, sizeof(b->rx));
		memset(&b->tx, 0, sizeof(b->tx));
		rc = xsk_socket__create(&b->xsk, o->dev, o->queue, b->umem, &b->rx, &b->tx, &sc);
		if (rc == 0) {
			b->zerocopy = zc;
			break;
		}
		b->xsk = NULL;
		if (zc && (rc == -EOPNOTSUPP || rc == EOPNOTSUPP || rc == -EINVAL || rc == EINVAL)) {
			zc = 0;
			continue;
		}
		if ((rc != -EBUSY && rc != EBUSY) || t == 100)
			return rc < 0 ? rc : -rc;
		usleep(10000);
	}
	b->fd = xsk_socket__fd(b->xsk);
	b->map_fd = bpf_map_create(BPF_MAP_TYPE_XSKMAP, "cn_xsks", sizeof(uint32_t), sizeof(uint32_t),
				   o->queue + 1, NULL);
	if (b->map_fd < 0)
		return -errno;
	b->prog_fd = cn__xsk_prog_load(b->map_fd);
	if (b->prog_fd < 0)
		return b->prog_fd;
	rc = xsk_socket__update_xskmap(b->xsk, b->map_fd);
	if (rc)
		return rc < 0 ? rc : -rc;
	rc = cn__xsk_prog_attach(b->ifindex, b->prog_fd, o->attach, &b->xdp_flags, &b->prog_id);
	if (rc < 0)
		return rc;
	b->attached = true;
	if (xsk_ring_prod__reserve(&b->fill, b->frames, &idx) != b->frames)
		return -ENOSPC;
	for (uint32_t i = 0; i < b->frames; i++)
		*xsk_ring_prod__fill_addr(&b->fill, idx + i) = (uint64_t)i * CHUNK;
	xsk_ring_prod__submit(&b->fill, b->frames);
	return 0;
}

static void bare_close(struct bare *b)
{
	if (b->xsk)
		xsk_socket__delete(b->xsk);
	cn__xsk_prog_release(b->ifindex, b->attached, b->xdp_flags, b->prog_fd, b->map_fd);
	if (b->umem)
		xsk_umem__delete(b->umem);
	if (b->area)
		munmap(b->area, b->len);
}

/* Read every byte of a frame (8 bytes at a time): what a consumer of the
 * data would pay for the lines the kernel's copy left in the cache. */
static uint64_t touch(const uint8_t *p, uint32_t n)
{
	uint64_t s = 0, v;
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		memcpy(&v, p + i, 8);
		s += v;
	}
	for (; i < n; i++)
		s += p[i];
	return s;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct bare b;
	uint64_t frames = 0, bytes = 0, bursts = 0, empty = 0, wakeups = 0, busy = 0, sum = 0;
	uint32_t addr[256];
	uint64_t t0, t_end = 0;
	double wall;
	int rc;

	parse_opts(argc, argv, &o);
	if (o.batch > 256)
		o.batch = 256;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rc = bare_open(&b, &o);
	if (rc < 0) {
		fprintf(stderr, "cachenet-xsk-bare: %s: %s\n", o.dev, strerror(-rc));
		bare_close(&b);
		return rc == -EPERM || rc == -EAFNOSUPPORT || rc == -EOPNOTSUPP ? 77 : 1;
	}
	printf("{\"event\":\"device\",\"dev\":\"xsk-bare\",\"ifname\":\"%s\",\"queue\":%u,"
	       "\"zerocopy\":%d,\"native\":%d,\"prog_id\":%u,\"frames\":%u}\n",
	       o.dev, o.queue, b.zerocopy, b.xdp_flags == XDP_FLAGS_DRV_MODE, b.prog_id, b.frames);
	fflush(stdout);
	if (o.ready_file) {
		FILE *f = fopen(o.ready_file, "w");
		if (f)
			fclose(f);
	}
	t0 = cn_tsc_begin();
	if (o.duration > 0)
		t_end = t0 + (uint64_t)(o.duration * cn_tsc_hz());
	while (!stop_flag && !(t_end && cn_tsc_begin() >= t_end)) {
		uint32_t idx, fidx, n;
		uint64_t t;

		n = xsk_ring_cons__peek(&b.rx, o.batch, &idx);
		if (n == 0) {
			empty++;
			if (xsk_ring_prod__needs_wakeup(&b.fill)) {
				wakeups++;
				recvfrom(b.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
			}
			if (!o.busy_poll) {
				struct pollfd pfd = {.fd = b.fd, .events = POLLIN};
				poll(&pfd, 1, 2);
			}
			continue;
		}
		t = cn_tsc_begin();
		for (uint32_t i = 0; i < n; i++) {
			const struct xdp_desc *d = xsk_ring_cons__rx_desc(&b.rx, idx + i);
			bytes += d->len;
			if (o.touch)
				sum += touch(b.area + d->addr, d->len);
			addr[i] = (uint32_t)(d->addr & ~(uint64_t)(CHUNK - 1));
		}
		xsk_ring_cons__release(&b.rx, n);
		/* the fill ring has room for every chunk: this never comes short */
		if (xsk_ring_prod__reserve(&b.fill, n, &fidx) == n) {
			for (uint32_t i = 0; i < n; i++)
				*xsk_ring_prod__fill_addr(&b.fill, fidx + i) = addr[i];
			xsk_ring_prod__submit(&b.fill, n);
		}
		if (xsk_ring_prod__needs_wakeup(&b.fill)) {
			wakeups++;
			recvfrom(b.fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
		}
		frames += n;
		bursts++;
		busy += cn_tsc_end() - t;
	}
	wall = (double)(cn_tsc_end() - t0) / cn_tsc_hz();

	struct xdp_statistics xs;
	socklen_t xl = sizeof(xs);
	memset(&xs, 0, sizeof(xs));
	getsockopt(b.fd, SOL_XDP, XDP_STATISTICS, &xs, &xl);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("{\"event\":\"summary\",\"dev\":\"xsk-bare\",\"wall_s\":%.3f,\"tsc_hz\":%.0f,"
	       "\"busy_tsc\":%" PRIu64 ",\"rx_frames\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
	       ",\"tx_frames\":0,\"bursts\":%" PRIu64 ",\"empty\":%" PRIu64 ",\"rx_wakeups\":%" PRIu64
	       ",\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"dev_kernel_drops\":%llu,"
	       "\"k_rx_dropped\":%llu,\"k_rx_ring_full\":%llu,\"k_fill_empty\":%llu,\"touch_sum\":%" PRIu64
	       "}\n",
	       wall, cn_tsc_hz(), busy, frames, bytes, bursts, empty, wakeups,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6,
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6,
	       (unsigned long long)(xs.rx_dropped + xs.rx_ring_full + xs.rx_fill_ring_empty_descs),
	       (unsigned long long)xs.rx_dropped, (unsigned long long)xs.rx_ring_full,
	       (unsigned long long)xs.rx_fill_ring_empty_descs, sum);
	bare_close(&b);
	return 0;
}
