/* SPDX-License-Identifier: BSD-2-Clause */
/* A Linux TAP device as a cachenet NIC (tap.h). One Ethernet frame per
 * read(2)/write(2) on a non-blocking fd opened IFF_TAP | IFF_NO_PI.
 *
 * RX without impairment reads straight into the cluster that goes up the
 * stack, with a second iovec behind it so a frame longer than the room is
 * seen as longer (the read returns more than the room) instead of
 * silently cut. With impairment, and for frames that find the pool empty,
 * the read goes to a scratch buffer first. Frames that leave the RX
 * impairment wait in a queue of at most three (this frame, its duplicate,
 * the frame held before it) until a burst has room for them. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>

#include "cachenet/tsc.h"
#include "cachenet/tap.h"
#include "cn_internal.h"
#include "backend.h"
#include "impair.h"

#define ETH_HDR 14
#define RX_OFF 2           /* frame offset in a cluster: IPv4 header 4-byte aligned */
#define RXQ 4              /* impairment output queue, power of two, >= 3 */
#define SCRATCH (65536 + 64) /* above any TAP frame (MTU <= 65535) */
#define MAX_BATCH 256

struct cn_tap {
	int fd;
	uint32_t frame_max;        /* mtu + 14 */
	struct cn_tap_params p;
	struct cn_tap_stats st;
	char ifname[IFNAMSIZ];
	bool impair;
	/* impairment: one generator per direction */
	struct cn__impair im_tx, im_rx;
	struct cn__impair_dir *dir_tx, *dir_rx;
	uint32_t rxq_head, rxq_tail; /* free-running */
	struct cn_mbuf *rxq[RXQ];
	uint8_t txbuf[SCRATCH] __attribute__((aligned(CN_CACHE_LINE)));
	uint8_t scratch[SCRATCH] __attribute__((aligned(CN_CACHE_LINE)));
};

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The device's own flags from sysfs (tun_flags, "0x1002\n"), for the
 * current network namespace's view. @return them, or -1 if unreadable. */
static long sysfs_tun_flags(const char *name)
{
	char path[64], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/net/%s/tun_flags", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 16);
}

/* Adopted fd: must be an attached TAP without PI or vnet header.
 * TUNGETIFF cannot tell IFF_NO_PI by itself: it ORs in IFF_NOFILTER, the
 * same bit, when no socket filter is attached. A clear bit means PI for
 * sure; a set bit is checked against sysfs, when sysfs shows the device
 * (not when the fd's device lives in another network namespace). */
static int check_adopted(int fd, const char *want, char *name)
{
	struct ifreq ifr;
	long dev_flags;

	memset(&ifr, 0, sizeof(ifr));
	if (fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (ioctl(fd, TUNGETIFF, &ifr) < 0)
		return -EINVAL; /* ENOTTY: not a tun fd; EBADFD: not attached */
	if ((ifr.ifr_flags & (IFF_TUN | IFF_TAP)) != IFF_TAP || !(ifr.ifr_flags & IFF_NO_PI) ||
	    (ifr.ifr_flags & IFF_VNET_HDR))
		return -EINVAL;
	memcpy(name, ifr.ifr_name, IFNAMSIZ);
	name[IFNAMSIZ - 1] = '\0';
	if (want && want[0] && strncmp(want, name, IFNAMSIZ) != 0)
		return -EINVAL;
	dev_flags = sysfs_tun_flags(name);
	if (dev_flags >= 0 && (!(dev_flags & IFF_NO_PI) || (dev_flags & IFF_VNET_HDR)))
		return -EINVAL;
	return 0;
}

static int attach(const char *want, char *name, int *fdp)
{
	struct ifreq ifr;
	int fd, e;

	fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno; /* ENOENT, ENODEV/ENXIO, EACCES */
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (want)
		memcpy(ifr.ifr_name, want, strlen(want)); /* length checked */
	if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
		e = errno;
		close(fd);
		return -e; /* EPERM, EBUSY, EINVAL (not a TAP) */
	}
	memcpy(name, ifr.ifr_name, IFNAMSIZ);
	name[IFNAMSIZ - 1] = '\0';
	*fdp = fd;
	return 0;
}

static size_t cluster_room(struct cn_mbuf_pool *cpool)
{
	const struct cn_mbuf_pool_params *cp = cn_mbuf_pool_params(cpool);

	if (!cp || cp->kind != CN_MBUF_POOL_CLUSTER || cp->headroom >= cp->data_size)
		return 0;
	return cp->data_size - cp->headroom;
}

static void free_tap(struct cn_tap *t)
{
	free(t->dir_tx);
	free(t->dir_rx);
	free(t);
}

struct cn_tap *cn_tap_open(const struct cn_tap_params *params)
{
	struct cn_tap_params q;
	const struct cn_tap_params *p = &q;
	struct cn_tap *t;
	int rc, fd = -1, flags;

	if (cn__params_copy(&q, sizeof(q), params) < 0)
		return cn__fail(EINVAL);
	if (!q.adopt_fd)
		q.fd = -1;
	if (!p->mpool || !p->cpool || p->batch > MAX_BATCH || (q.adopt_fd && p->fd < 0) ||
	    (p->impair && !cn__impair_params_ok(p->impair, 1)))
		return cn__fail(EINVAL);
	if (p->ifname && strlen(p->ifname) >= IFNAMSIZ)
		return cn__fail(ENAMETOOLONG);
	t = aligned_alloc(CN_CACHE_LINE, CN_CACHE_ROUND(sizeof(*t)));
	if (!t)
		return cn__fail(ENOMEM);
	memset(t, 0, offsetof(struct cn_tap, txbuf));
	t->p = *p;
	t->fd = -1;
	if (!t->p.batch)
		t->p.batch = 32;
	if (!t->p.mtu)
		t->p.mtu = 1500;
	t->frame_max = t->p.mtu + ETH_HDR;
	/* the cluster holds RX_OFF + the largest frame; the impairment
	 * engine's buffers hold a jumbo frame, not more */
	if (t->p.mtu > 65535 || cluster_room(p->cpool) < (size_t)t->frame_max + RX_OFF ||
	    (p->impair && t->frame_max > CN_MBUF_JUMBO_SIZE)) {
		free_tap(t);
		errno = EINVAL;
		return NULL;
	}
	if (p->impair) {
		struct cn_link_params rx = *p->impair;
		t->dir_tx = calloc(1, sizeof(*t->dir_tx));
		t->dir_rx = calloc(1, sizeof(*t->dir_rx));
		if (!t->dir_tx || !t->dir_rx) {
			free_tap(t);
			errno = ENOMEM;
			return NULL;
		}
		rx.rng_start ^= 0x5a5a5a5a5a5a5a5aull;
		cn__impair_init(&t->im_tx, p->impair, &t->st.impair_tx);
		cn__impair_init(&t->im_rx, &rx, &t->st.impair_rx);
		t->impair = true;
	}
	if (p->fd >= 0) {
		rc = check_adopted(p->fd, p->ifname, t->ifname);
		fd = p->fd;
	} else {
		rc = attach(p->ifname, t->ifname, &fd);
	}
	if (rc < 0) {
		free_tap(t);
		errno = -rc;
		return NULL;
	}
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int e = errno;
		if (p->fd < 0)
			close(fd);
		free_tap(t);
		errno = e;
		return NULL;
	}
	t->fd = fd;
	t->p.ifname = t->ifname; /* the caller's string need not outlive the call */
	t->p.fd = fd;
	return t;
}

void cn_tap_close(struct cn_tap *t)
{
	if (!t)
		return;
	while (t->rxq_head != t->rxq_tail)
		cn_mbuf_free(t->rxq[t->rxq_head++ % RXQ]);
	if (t->fd >= 0)
		close(t->fd);
	free_tap(t);
}

int cn_tap_fd(const struct cn_tap *t)
{
	return t->fd;
}

const char *cn_tap_ifname(const struct cn_tap *t)
{
	return t->ifname;
}

const struct cn_tap_stats *cn_tap_stats(const struct cn_tap *t)
{
	return &t->st;
}

/* ------------------------------------------------------------ TX */

/* One write(2) of a whole frame. @return 0 or -errno (-ENOBUFS for a
 * full queue, -EIO for a short write). */
static int write_frame(struct cn_tap *t, const uint8_t *frame, uint32_t len)
{
	ssize_t n;

	uint64_t t0 = cn_tsc_begin();

	t->st.tx_writes++;
	do
		n = write(t->fd, frame, len);
	while (n < 0 && errno == EINTR);
	t->st.tx_tsc += cn_tsc_end() - t0;
	if (n == (ssize_t)len) {
		t->st.tx_frames++;
		t->st.tx_bytes += len;
		return 0;
	}
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		t->st.tx_eagain++;
		return -ENOBUFS;
	}
	t->st.tx_errors++;
	return n < 0 ? -errno : -EIO;
}

static void impaired_tx_out(void *arg, const uint8_t *frame, uint32_t len)
{
	/* failures are counted: losses of the wire, no back pressure */
	(void)write_frame(arg, frame, len);
}

/* The gathered frame in @frame: impairment or a direct write, pcap. */
static int send_frame(struct cn_tap *t, const uint8_t *frame, uint32_t len)
{
	int rc = 0;

	if (t->impair)
		cn__impair_frame(&t->im_tx, t->dir_tx, frame, len, impaired_tx_out, t);
	else
		rc = write_frame(t, frame, len);
	if (rc == 0 && t->p.pcap)
		cn_pcap_write(t->p.pcap, frame, len, wall_ns());
	return rc;
}

int cn_tap_xmit(struct cn_tap *t, struct cn_pkt *p)
{
	uint32_t len = cn_pkt_len(p);
	int rc;

	if (len > t->frame_max) {
		t->st.tx_too_long++;
		return -EMSGSIZE;
	}
	len = cn_pkt_gather(p, t->txbuf);
	rc = send_frame(t, t->txbuf, len);
	if (rc == 0)
		cn_pkt_free(p);
	return rc;
}

int cn_tap_write_frame(struct cn_tap *t, const void *frame, uint32_t len)
{
	if (len > t->frame_max) {
		t->st.tx_too_long++;
		return -EMSGSIZE;
	}
	return send_frame(t, frame, len);
}

/* ------------------------------------------------------------ RX */

/* A frame leaving the RX impairment: copied into a cluster and queued. */
static void impaired_rx_out(void *arg, const uint8_t *frame, uint32_t len)
{
	struct cn_tap *t = arg;

	/* cannot overflow: the queue is drained before each read, and one
	 * read yields at most three frames; a flush adds one more only
	 * when there is room (cn_tap_flush) */
	if (cn__impair_rx_queue(t->p.mpool, t->p.cpool, RX_OFF, frame, len, t->rxq, RXQ,
				t->rxq_head, &t->rxq_tail) < 0)
		t->st.rx_nobufs++;
}

/* Read one frame into the scratch buffer. @return its length, 0 when
 * there is nothing to read (or the read failed, counted), -1 when it was
 * too long (counted). */
/* One timed, counted readv(2) (EINTR retried); a failure is counted as
 * EAGAIN or an error and returned as -1. */
static ssize_t tap_readv(struct cn_tap *t, const struct iovec *iov, int niov)
{
	uint64_t t0 = cn_tsc_begin();
	ssize_t n;

	t->st.rx_reads++;
	do
		n = readv(t->fd, iov, niov);
	while (n < 0 && errno == EINTR);
	t->st.rx_tsc += cn_tsc_end() - t0;
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			t->st.rx_eagain++;
		else
			t->st.rx_errors++;
	}
	return n;
}

static ssize_t read_scratch(struct cn_tap *t)
{
	struct iovec iov = {.iov_base = t->scratch, .iov_len = sizeof(t->scratch)};
	ssize_t n = tap_readv(t, &iov, 1);

	if (n < 0)
		return 0;
	if ((size_t)n > t->frame_max) {
		t->st.rx_trunc++;
		return -1;
	}
	return n;
}

/* Without impairment: read one frame into a fresh cluster.
 * @return 1 with *out set, 0 when the queue is empty or a read failed,
 * -1 when a frame was read and dropped (counted). */
static int read_direct(struct cn_tap *t, struct cn_mbuf **out)
{
	struct cn_mbuf *m = cn_mbuf_get_cluster(t->p.mpool, t->p.cpool);
	struct iovec iov[2];
	ssize_t n;

	if (!m) {
		/* drain the frame anyway: a full kernel queue would also
		 * stop the frames that could have had buffers */
		n = read_scratch(t);
		if (n > 0)
			t->st.rx_nobufs++;
		return n == 0 ? 0 : -1;
	}
	m->data = m->buf + RX_OFF;
	iov[0].iov_base = m->data;
	iov[0].iov_len = t->frame_max;
	iov[1].iov_base = t->scratch; /* catches the excess of a longer frame */
	iov[1].iov_len = 64;
	n = tap_readv(t, iov, 2);
	if (n < 0) {
		cn_mbuf_free(m);
		return 0;
	}
	if ((size_t)n > t->frame_max) {
		t->st.rx_trunc++;
		cn_mbuf_free(m);
		return -1;
	}
	m->len = m->pkt_len = (uint32_t)n;
	*out = m;
	return 1;
}

static void rx_hand(struct cn_tap *t, struct cn_mbuf *m)
{
	t->st.rx_frames++;
	t->st.rx_bytes += m->len;
	if (t->p.pcap)
		cn_pcap_write(t->p.pcap, m->data, m->len, wall_ns());
}

unsigned cn_tap_rx_burst(struct cn_tap *t, struct cn_mbuf **out, unsigned n)
{
	unsigned got = 0, reads = 0;

	while (got < n) {
		if (t->rxq_head != t->rxq_tail) {
			struct cn_mbuf *m = t->rxq[t->rxq_head++ % RXQ];
			rx_hand(t, m);
			out[got++] = m;
			continue;
		}
		if (reads++ == n)
			break;
		if (t->impair) {
			ssize_t len = read_scratch(t);
			if (len == 0)
				break;
			if (len > 0)
				cn__impair_frame(&t->im_rx, t->dir_rx, t->scratch, (uint32_t)len,
						 impaired_rx_out, t);
		} else {
			struct cn_mbuf *m;
			int rc = read_direct(t, &m);
			if (rc == 0)
				break;
			if (rc > 0) {
				rx_hand(t, m);
				out[got++] = m;
			}
		}
	}
	return got;
}

unsigned cn_tap_poll(struct cn_tap *t, struct cn_net *net, uint64_t now)
{
	struct cn_mbuf *m[MAX_BATCH];
	unsigned n;

	t->st.polls++;
	n = cn_tap_rx_burst(t, m, t->p.batch);
	cn_net_input_burst(net, m, n, now);
	return n;
}

int cn_tap_wait(struct cn_tap *t, int timeout_ms)
{
	if (t->rxq_head != t->rxq_tail)
		return 1;
	return cn__dev_wait_fd(t->fd, timeout_ms);
}

void cn_tap_flush(struct cn_tap *t)
{
	if (!t->impair)
		return;
	cn__impair_flush(t->dir_tx, impaired_tx_out, t);
	if (t->rxq_tail - t->rxq_head < RXQ)
		cn__impair_flush(t->dir_rx, impaired_rx_out, t);
}
