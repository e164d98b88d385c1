/* SPDX-License-Identifier: BSD-2-Clause */
/* The TAP backend against the real Linux stack. The program creates a
 * private network namespace (cntap-<pid>), runs itself inside it (`ip
 * netns exec NAME /proc/self/exe --inside`) and deletes the namespace
 * afterwards, whatever the inside part did. Inside, a persistent TAP cn0
 * is the kernel's end of a link: 10.77.0.1 with MAC 02:00:00:00:00:01;
 * cachenet is 10.77.0.2 with MAC 02:00:00:00:00:02 (a permanent neighbour
 * entry, so the kernel sends to us without ARPing; IPv6 off on cn0, so it
 * sends nothing we did not ask for).
 *
 * Checks: open errors (errno per cause); attach by name, by a kernel-picked
 * name (gone at close), by an adopted fd; an ARP request written by hand
 * is answered by the kernel and both frames are in the pcap byte for byte;
 * an ICMP echo request is answered; a cachenet stack's UDP datagrams (with
 * the checksum offloaded to the backend, and computed by the stack) reach
 * a kernel socket, and a kernel socket's datagrams reach the stack through
 * cn_tap_poll; -EMSGSIZE for an oversize frame (by hand and from the
 * stack); RX frames longer than the MTU dropped, RX with the pool empty
 * dropped, both counted, the queue still draining; impairment: loss 1
 * drops everything both ways, duplicate, reorder (with flush) and corrupt
 * do what they say; the counters add up after every test and pools return
 * to their start.
 *
 * Skips (exit 77, message printed) only when the kernel forbids it: no
 * /dev/net/tun, or not allowed to create a network namespace or attach. */
#include "cn_test.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/if.h>
#include <linux/if_tun.h>

#include "cachenet/csum.h"
#include "cachenet/tap.h"
#include "cachenet/udp.h"

#define IFNAME "cn0"
static const uint8_t KMAC[6] = {2, 0, 0, 0, 0, 1}, OURMAC[6] = {2, 0, 0, 0, 0, 2};
#define KIP_H 0x0a4d0001u   /* 10.77.0.1, the kernel */
#define OURIP_H 0x0a4d0002u /* 10.77.0.2, cachenet */
#define OUR_PORT 7777
#define K_PORT 9000

/* ------------------------------------------------------------ fixture */

/* A failing test jumps out of its body: whatever it opened that would
 * break the next test (cn0 attached, the kernel port bound) is closed by
 * the teardown. */
struct fx {
	struct cn_mbuf_pool *mp, *cp;
	struct cn_tap *t;  /* the tap open_ok opened last */
	int ks;            /* the kernel's UDP socket, or -1 */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	*state = f;
	f->ks = -1; /* no kernel socket yet */
	return cn_test_pools(&f->mp, &f->cp, 512, 256, 0, 0);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	cn_tap_close(f->t);
	if (f->ks >= 0)
		close(f->ks);
	cn_test_pools_free(f->mp, f->cp, 0, 0);
	free(f);
	return 0;
}

static struct cn_tap_params tap_params(struct fx *f)
{
	struct cn_tap_params p = {.ifname = IFNAME, .fd = -1, .mpool = f->mp, .cpool = f->cp};
	return p;
}

static struct cn_tap *open_ok(struct fx *f, const struct cn_tap_params *p)
{
	struct cn_tap *t = cn_tap_open(p);
	if (!t)
		fail_msg("cn_tap_open(%s): %s", p->ifname ? p->ifname : "(null)", strerror(errno));
	f->t = t;
	return t;
}

static void close_tap(struct fx *f)
{
	cn_tap_close(f->t);
	f->t = NULL;
}

static void check_stats(const struct cn_tap *t, bool impaired);

/* The end of a test on the TAP (and the kernel socket): the counters add
 * up, then it is closed (both are). */
static void check_close_tap(struct fx *f, bool impaired)
{
	check_stats(f->t, impaired);
	close_tap(f);
}

static void check_close(struct fx *f, bool impaired)
{
	close(f->ks);
	f->ks = -1;
	check_close_tap(f, impaired);
}

/* Counters add up (tap.h), once nothing is in flight inside the backend. */
static void check_stats(const struct cn_tap *t, bool impaired)
{
	const struct cn_tap_stats *s = cn_tap_stats(t);
	if (!impaired) {
		assert_int_equal(s->rx_reads, s->rx_frames + s->rx_nobufs + s->rx_trunc +
						      s->rx_eagain + s->rx_errors);
		assert_int_equal(s->impair_tx.frames + s->impair_rx.frames, 0);
	} else {
		assert_int_equal(s->rx_reads, s->impair_rx.frames + s->rx_trunc + s->rx_eagain +
						      s->rx_errors);
		assert_int_equal(s->rx_frames + s->rx_nobufs, s->impair_rx.frames - s->impair_rx.lost +
								       s->impair_rx.duplicated);
		assert_int_equal(s->tx_writes, s->impair_tx.frames - s->impair_tx.lost +
						       s->impair_tx.duplicated);
	}
	assert_int_equal(s->tx_writes, s->tx_frames + s->tx_eagain + s->tx_errors);
	assert_int_equal(s->rx_errors, 0);
	assert_int_equal(s->tx_errors, 0);
	/* Time is counted exactly where system calls were made: every call
	 * takes at least one TSC tick. */
	assert_true((s->rx_reads == 0) == (s->rx_tsc == 0));
	assert_true((s->tx_writes == 0) == (s->tx_tsc == 0));
	assert_true(s->rx_tsc >= s->rx_reads && s->tx_tsc >= s->tx_writes);
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Wait up to @ms for a frame @match accepts; other frames are freed.
 * @return the frame (caller frees) or NULL at the deadline. */
typedef bool (*match_fn)(const struct cn_mbuf *m, const void *arg);
static struct cn_mbuf *wait_frame(struct cn_tap *t, match_fn match, const void *arg, int ms)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	struct cn_mbuf *found = NULL;

	/* one frame per burst: a match's successors stay queued */
	while (!found) {
		struct cn_mbuf *m;
		uint64_t now = now_ms();
		if (now >= end)
			break;
		int rc = cn_tap_wait(t, (int)(end - now));
		assert_true(rc >= 0);
		if (cn_tap_rx_burst(t, &m, 1) == 1) {
			if (match(m, arg))
				found = m;
			else
				cn_mbuf_free(m);
		}
	}
	return found;
}

/* Read until the queue is empty (frames freed). @return frames read. */
static unsigned drain(struct cn_tap *t)
{
	struct cn_mbuf *m[8];
	unsigned n, total = 0;
	while ((n = cn_tap_rx_burst(t, m, 8)) > 0) {
		for (unsigned i = 0; i < n; i++)
			cn_mbuf_free(m[i]);
		total += n;
	}
	return total;
}

/* Frames the backend read whole (delivered, dropped for lack of buffers,
 * or taken by the impairment). */
static uint64_t read_whole(const struct cn_tap *t)
{
	const struct cn_tap_stats *s = cn_tap_stats(t);
	return s->impair_rx.frames + (s->impair_rx.frames ? 0 : s->rx_frames + s->rx_nobufs);
}

/*
 * Right after an attach, the kernel switches the interface's transmit
 * queue on asynchronously (linkwatch runs dev_activate from a work item
 * after the carrier change), and a frame it sends in that window is
 * dropped (its tx_dropped counts it): seen about once in 200 attaches of
 * a closed-and-reopened cn0. Settle: the kernel sends a datagram every
 * 50 ms until one arrives, then everything is drained, so each test's
 * counts start from a working path. (Frames we write are not affected.)
 */
static void settle(struct cn_tap *t)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(OUR_PORT + 1),
				 .sin_addr.s_addr = htonl(OURIP_H)};
	uint64_t before = read_whole(t);
	uint8_t b = 0;

	assert_true(s >= 0);
	for (int i = 0; i < 60 && read_whole(t) == before; i++) {
		assert_int_equal(sendto(s, &b, 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
		assert_true(cn_tap_wait(t, 50) >= 0);
		drain(t);
	}
	close(s);
	assert_true(read_whole(t) > before);
	cn_tap_flush(t);
	drain(t);
}

static struct cn_tap *open_ready(struct fx *f, const struct cn_tap_params *p)
{
	struct cn_tap *t = open_ok(f, p);
	settle(t);
	return t;
}

/* A TAP opened with the impairment @lp, ready. */
static struct cn_tap *open_impaired(struct fx *f, const struct cn_link_params *lp)
{
	struct cn_tap_params p = tap_params(f);
	p.impair = lp;
	return open_ready(f, &p);
}

/* ------------------------------------------------------------ frames by hand */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* ARP request "who has 10.77.0.1, tell 10.77.0.2" (RFC 826): 42 bytes. */
static uint32_t arp_request(uint8_t *f)
{
	memset(f, 0xff, 6);
	memcpy(f + 6, OURMAC, 6);
	put16(f + 12, 0x0806);
	put16(f + 14, 1);      /* Ethernet */
	put16(f + 16, 0x0800); /* IPv4 */
	f[18] = 6;
	f[19] = 4;
	put16(f + 20, 1);      /* request */
	memcpy(f + 22, OURMAC, 6);
	put32(f + 28, OURIP_H);
	memset(f + 32, 0, 6);
	put32(f + 38, KIP_H);
	return 42;
}

static bool is_arp_reply(const struct cn_mbuf *m, const void *arg)
{
	const uint8_t *f = m->data;
	(void)arg;
	return m->len >= 42 && get16(f + 12) == 0x0806 && get16(f + 20) == 2 &&
	       memcmp(f, OURMAC, 6) == 0 && memcmp(f + 6, KMAC, 6) == 0 &&
	       memcmp(f + 22, KMAC, 6) == 0 && get32(f + 28) == KIP_H &&
	       memcmp(f + 32, OURMAC, 6) == 0 && get32(f + 38) == OURIP_H;
}

/* Ethernet + IPv4 header from us to the kernel; @return 34. */
static uint32_t ip_header(uint8_t *f, uint8_t proto, uint32_t l4_len, uint16_t id)
{
	memcpy(f, KMAC, 6);
	memcpy(f + 6, OURMAC, 6);
	put16(f + 12, 0x0800);
	uint8_t *ip = f + 14;
	ip[0] = 0x45;
	ip[1] = 0;
	put16(ip + 2, (uint16_t)(20 + l4_len));
	put16(ip + 4, id);
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = 64;
	ip[9] = proto;
	put16(ip + 10, 0);
	put32(ip + 12, OURIP_H);
	put32(ip + 16, KIP_H);
	uint16_t c = cn_csum(ip, 20);
	memcpy(ip + 10, &c, 2);
	return 34;
}

/* ICMP echo request (RFC 792) with @n payload bytes i * 3 + seq. */
static uint32_t echo_request(uint8_t *f, uint16_t id, uint16_t seq, uint32_t n)
{
	uint32_t off = ip_header(f, CN_IPV4_PROTO_ICMP, 8 + n, seq);
	uint8_t *ic = f + off;
	ic[0] = 8;
	ic[1] = 0;
	put16(ic + 2, 0);
	put16(ic + 4, id);
	put16(ic + 6, seq);
	for (uint32_t i = 0; i < n; i++)
		ic[8 + i] = (uint8_t)(i * 3 + seq);
	uint16_t c = cn_csum(ic, 8 + n);
	memcpy(ic + 2, &c, 2);
	return off + 8 + n;
}

struct echo_want {
	uint16_t id, seq;
	uint32_t n;
};

static bool is_echo_reply(const struct cn_mbuf *m, const void *arg)
{
	const struct echo_want *w = arg;
	const uint8_t *f = m->data, *ip = f + 14, *ic = f + 34;
	if (m->len < 34 + 8 + w->n || get16(f + 12) != 0x0800 || memcmp(f, OURMAC, 6) != 0 ||
	    ip[9] != CN_IPV4_PROTO_ICMP || get32(ip + 12) != KIP_H || get32(ip + 16) != OURIP_H)
		return false;
	if (cn_csum(ip, 20) != 0 || cn_csum(ic, 8 + w->n) != 0)
		return false;
	if (ic[0] != 0 || get16(ic + 4) != w->id || get16(ic + 6) != w->seq)
		return false;
	for (uint32_t i = 0; i < w->n; i++)
		if (ic[8 + i] != (uint8_t)(i * 3 + w->seq))
			return false;
	return true;
}

/* A UDP datagram from the kernel's socket to cachenet's port; its first
 * payload byte is its number. */
static bool is_udp_to_us(const struct cn_mbuf *m, const void *arg)
{
	const uint8_t *f = m->data;
	(void)arg;
	return m->len >= 42 && get16(f + 12) == 0x0800 && f[14 + 9] == CN_IPV4_PROTO_UDP &&
	       get16(f + 34 + 2) == OUR_PORT;
}

/* ------------------------------------------------------------ kernel sockets */

static int kernel_udp(struct fx *f)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(K_PORT),
				.sin_addr.s_addr = htonl(KIP_H)};
	struct timeval tv = {.tv_sec = 2};
	assert_true(s >= 0);
	f->ks = s;
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	f->ks = s;
	return s;
}

/* The kernel sends @n datagrams of @len bytes (first byte: 1, 2, ...) to
 * cachenet's port: they leave through cn0 straight away (permanent
 * neighbour entry). */
static void kernel_send(int s, unsigned n, uint32_t len)
{
	static uint8_t buf[2000];
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(OUR_PORT),
				 .sin_addr.s_addr = htonl(OURIP_H)};
	assert_true(len >= 1 && len <= sizeof(buf));
	for (unsigned i = 0; i < n; i++) {
		for (uint32_t k = 0; k < len; k++)
			buf[k] = (uint8_t)(k * 7 + i);
		buf[0] = (uint8_t)(i + 1);
		assert_int_equal(sendto(s, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	}
}

/* ------------------------------------------------------------ tests */

static void test_open_errors(void **state)
{
	struct fx *f = *state;
	struct cn_tap_params p = tap_params(f);
	struct cn_link_params bad = {.loss = 1.5};
	int pfd[2];

	p.cpool = NULL;
	errno = 0;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);

	p = tap_params(f);
	p.ifname = "a-name-too-long0";
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, ENAMETOOLONG);

	p = tap_params(f);
	p.ifname = "lo"; /* exists, not a TAP */
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);

	p = tap_params(f);
	p.mtu = 9000; /* 2048-byte clusters cannot hold it */
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);

	p = tap_params(f);
	p.impair = &bad;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);

	/* clusters big enough for mtu 16000, but the impairment's buffers
	 * hold a jumbo frame at most */
	struct cn_mbuf_pool_params bp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 1, .data_size = 16384};
	struct cn_mbuf_pool *big = cn_mbuf_pool_create(&bp);
	struct cn_link_params none = {.rng_start = 1};
	assert_non_null(big);
	p = tap_params(f);
	p.cpool = big;
	p.mtu = 16000;
	p.impair = &none;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);
	p.mtu = 9000;
	p.ifname = "cnbig"; /* created for the check, gone at close */
	struct cn_tap *t = cn_tap_open(&p);
	assert_non_null(t);
	cn_tap_close(t);
	assert_int_equal(cn_mbuf_pool_destroy(big), 0);

	/* adopting what is not a TAP fd */
	assert_int_equal(pipe(pfd), 0);
	p = tap_params(f);
	p.ifname = NULL;
	p.fd = pfd[0];
	p.adopt_fd = true;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);
	assert_true(fcntl(pfd[0], F_GETFD) >= 0); /* not closed on failure */
	close(pfd[0]);
	close(pfd[1]);
	p.fd = pfd[0]; /* now closed */
	p.adopt_fd = true;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EBADF);

	/* a TUN (not TAP) device of that name */
	assert_int_equal(system("ip tuntap add dev cntun mode tun"), 0);
	p = tap_params(f);
	p.ifname = "cntun";
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(system("ip link del cntun"), 0);
}

static bool if_exists(const char *name)
{
	char path[64];
	snprintf(path, sizeof(path), "/sys/class/net/%s", name);
	return access(path, F_OK) == 0;
}

static void test_attach(void **state)
{
	struct fx *f = *state;
	struct cn_tap_params p = tap_params(f);
	struct cn_tap *t = open_ok(f, &p), *t2;

	assert_string_equal(cn_tap_ifname(t), IFNAME);
	assert_true(fcntl(cn_tap_fd(t), F_GETFL) & O_NONBLOCK);
	drain(t);
	assert_int_equal(cn_tap_wait(t, 0), 0);
	struct cn_mbuf *m[4];
	uint64_t eagain = cn_tap_stats(t)->rx_eagain;
	assert_int_equal(cn_tap_rx_burst(t, m, 4), 0);
	assert_int_equal(cn_tap_stats(t)->rx_eagain, eagain + 1);

	/* one fd per queue: a second attach is refused */
	errno = 0;
	t2 = cn_tap_open(&p);
	assert_null(t2);
	assert_int_equal(errno, EBUSY);
	check_close_tap(f, false);
	assert_true(if_exists(IFNAME)); /* persistent: created by ip tuntap */

	/* the kernel picks a name; the interface goes with the fd */
	p.ifname = NULL;
	t = open_ok(f, &p);
	char name[IFNAMSIZ];
	snprintf(name, sizeof(name), "%s", cn_tap_ifname(t));
	assert_true(strncmp(name, "tap", 3) == 0);
	assert_true(if_exists(name));
	close_tap(f);
	assert_false(if_exists(name));

	/* adopt an fd attached by the caller */
	int fd = open("/dev/net/tun", O_RDWR);
	struct ifreq ifr;
	assert_true(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	strcpy(ifr.ifr_name, "cnad");
	assert_int_equal(ioctl(fd, TUNSETIFF, &ifr), 0);
	p.fd = fd;
	p.adopt_fd = true;
	p.ifname = "other";
	assert_null(cn_tap_open(&p)); /* name disagrees */
	assert_int_equal(errno, EINVAL);
	p.ifname = NULL;
	t = open_ok(f, &p);
	assert_string_equal(cn_tap_ifname(t), "cnad");
	assert_int_equal(cn_tap_fd(t), fd);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close_tap(f);
	assert_true(fcntl(fd, F_GETFD) < 0); /* adopted: closed with the tap */
	assert_false(if_exists("cnad"));

	/* a fd with a packet-information header is refused */
	fd = open("/dev/net/tun", O_RDWR);
	assert_true(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP;
	strcpy(ifr.ifr_name, "cnpi");
	assert_int_equal(ioctl(fd, TUNSETIFF, &ifr), 0);
	p.fd = fd;
	p.adopt_fd = true;
	assert_null(cn_tap_open(&p));
	assert_int_equal(errno, EINVAL);
	close(fd);
}

/* The pcap file: global header, then records; returns the number of
 * records and copies record @want (0-based) into @out. */
static unsigned pcap_read(const char *path, unsigned want, uint8_t *out, uint32_t *out_len)
{
	FILE *fp = fopen(path, "rb");
	uint32_t gh[6], rh[4];
	unsigned n = 0;
	static uint8_t buf[70000];

	assert_non_null(fp);
	assert_int_equal(fread(gh, sizeof(gh), 1, fp), 1);
	assert_int_equal(gh[0], 0xa1b2c3d4u);
	assert_int_equal(gh[5], 1); /* LINKTYPE_ETHERNET */
	while (fread(rh, sizeof(rh), 1, fp) == 1) {
		assert_true(rh[2] <= sizeof(buf));
		assert_int_equal(rh[2], rh[3]);
		assert_int_equal(fread(buf, 1, rh[2], fp), rh[2]);
		assert_true(rh[0] > 1600000000u); /* wall-clock seconds */
		if (n == want) {
			memcpy(out, buf, rh[2]);
			*out_len = rh[2];
		}
		n++;
	}
	fclose(fp);
	return n;
}

static void test_arp_pcap(void **state)
{
	struct fx *f = *state;
	char path[] = "/tmp/cn_tap_XXXXXX";
	struct cn_pcap *pc = cn_test_pcap_open(path);
	struct cn_tap_params p = tap_params(f);
	p.pcap = pc;
	struct cn_tap *t = open_ready(f, &p);
	uint8_t req[64], reply[64], rec[2048];
	uint32_t len = arp_request(req), rlen = 0;

	assert_int_equal(cn_tap_write_frame(t, req, len), 0);
	struct cn_mbuf *m = wait_frame(t, is_arp_reply, NULL, 3000);
	assert_non_null(m);
	assert_true(m->len <= sizeof(reply));
	memcpy(reply, m->data, m->len);
	uint32_t reply_len = m->len;
	/* frame 2 bytes into its buffer: the IP header is 4-byte aligned */
	assert_ptr_equal(m->data, m->buf + 2);
	cn_mbuf_free(m);

	const struct cn_tap_stats *s = cn_tap_stats(t);
	assert_int_equal(s->tx_frames, 1);
	assert_int_equal(s->tx_writes, 1);
	assert_int_equal(s->tx_bytes, 42);
	assert_true(s->rx_frames >= 1);
	assert_true(s->rx_bytes >= reply_len);
	check_stats(t, false);
	uint64_t frames = s->tx_frames + s->rx_frames;
	close_tap(f);
	assert_int_equal(cn_pcap_count(pc), frames);
	assert_int_equal(cn_pcap_close(pc), 0);

	/* both directions, byte for byte: our request (after the settling
	 * frames), then the reply after it */
	assert_int_equal(pcap_read(path, 0, rec, &rlen), frames);
	unsigned at = 0;
	for (at = 0; at < frames; at++) {
		pcap_read(path, at, rec, &rlen);
		if (rlen == len && memcmp(rec, req, len) == 0)
			break;
	}
	assert_true(at < frames);
	bool seen = false;
	for (unsigned i = at + 1; i < frames && !seen; i++) {
		pcap_read(path, i, rec, &rlen);
		seen = rlen == reply_len && memcmp(rec, reply, rlen) == 0;
	}
	assert_true(seen);
	unlink(path);
}

static void test_ping(void **state)
{
	struct fx *f = *state;
	struct cn_tap_params p = tap_params(f);
	struct cn_tap *t = open_ready(f, &p);
	uint8_t fr[1600];

	for (uint16_t seq = 1; seq <= 3; seq++) {
		struct echo_want w = {.id = 0x4321, .seq = seq, .n = 56u * seq};
		uint32_t len = echo_request(fr, w.id, w.seq, w.n);
		assert_int_equal(cn_tap_write_frame(t, fr, len), 0);
		struct cn_mbuf *m = wait_frame(t, is_echo_reply, &w, 3000);
		assert_non_null(m);
		assert_int_equal(m->len, len); /* a reply echoes the whole request */
		cn_mbuf_free(m);
	}
	/* the largest frame the MTU allows goes through too */
	struct echo_want w = {.id = 0x4321, .seq = 9, .n = 1500 - 20 - 8};
	uint32_t len = echo_request(fr, w.id, w.seq, w.n);
	assert_int_equal(len, 1514);
	assert_int_equal(cn_tap_write_frame(t, fr, len), 0);
	struct cn_mbuf *m = wait_frame(t, is_echo_reply, &w, 3000);
	assert_non_null(m);
	cn_mbuf_free(m);
	/* one byte more is refused before any write */
	uint64_t writes = cn_tap_stats(t)->tx_writes;
	assert_int_equal(cn_tap_write_frame(t, fr, 1515), -EMSGSIZE);
	assert_int_equal(cn_tap_stats(t)->tx_too_long, 1);
	assert_int_equal(cn_tap_stats(t)->tx_writes, writes);
	check_close_tap(f, false);
}

/* cachenet's receive callback: copies the datagram's payload. */
struct got {
	unsigned n;
	uint32_t len;
	uint8_t buf[2048];
};

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct got *g = arg;
	assert_true(cn_be32_eq(pi->saddr, cn_htobe32(KIP_H)));
	assert_true(cn_be16_eq(pi->sport, cn_htobe16(K_PORT)));
	g->len = m->pkt_len;
	assert_true(g->len <= sizeof(g->buf));
	assert_int_equal(cn_mbuf_copy_out(m, 0, g->len, g->buf), 0);
	g->n++;
	cn_mbuf_free_chain(m);
}

static void test_udp_stack(void **state)
{
	struct fx *f = *state;
	struct cn_tap_params tp = tap_params(f);
	struct cn_tap *t = open_ready(f, &tp);
	struct cn_net_params np = {.addr = cn_htobe32(OURIP_H), .mpool = f->mp, .cpool = f->cp,
				   .tx_descs = 64, .xmit = cn_tap_xmit_hook, .xmit_arg = t};
	memcpy(np.mac, OURMAC, 6);
	struct cn_net *net = cn_net_create(&np);
	assert_non_null(net);
	struct got g = {0};
	int ks = kernel_udp(f);
	static uint8_t msg[1500], in[1500];
	struct sockaddr_in from;
	socklen_t fl;

	/* both checksum modes: offloaded (filled by the backend's gather)
	 * and computed by the stack; the kernel drops a datagram whose
	 * checksum is wrong, so its arrival proves the sum */
	for (int off = 0; off < 2; off++) {
		struct cn_udp_params up = {.lport = CN_BE16(OUR_PORT), .raddr = cn_htobe32(KIP_H), .rport = CN_BE16(K_PORT),
					   .tx_csum = true, .tx_offload = off == 0, .rx_csum = true,
					   .rx = udp_rx, .rx_arg = &g};
		memcpy(up.rmac, KMAC, 6);
		struct cn_udp_sock *us = cn_udp_open(net, &up);
		assert_non_null(us);
		for (uint32_t len = 1; len <= 1472; len = len * 3 + 1) {
			for (uint32_t i = 0; i < len; i++)
				msg[i] = (uint8_t)(i * 5 + len + (uint32_t)off);
			assert_int_equal(cn_udp_send(us, msg, len, NULL, NULL), 0);
			fl = sizeof(from);
			ssize_t r = recvfrom(ks, in, sizeof(in), 0, (struct sockaddr *)&from, &fl);
			if (r < 0)
				fail_msg("kernel got no datagram of %u bytes (offload %d): %s", len,
					 off == 0, strerror(errno));
			assert_int_equal(r, (ssize_t)len);
			assert_memory_equal(in, msg, len);
			assert_int_equal(from.sin_addr.s_addr, htonl(OURIP_H));
			assert_int_equal(from.sin_port, htons(OUR_PORT));
		}
		assert_int_equal(cn_net_pkts_out(net), 0); /* completed in xmit */
		/* the largest datagram fits; one more byte does not (no
		 * fragmentation on the fast path) */
		assert_int_equal(cn_udp_send(us, msg, 1472, NULL, NULL), 0);
		fl = sizeof(from);
		assert_int_equal(recvfrom(ks, in, sizeof(in), 0, (struct sockaddr *)&from, &fl), 1472);
		assert_int_equal(cn_udp_send(us, msg, 1473, NULL, NULL), -EMSGSIZE);
		assert_int_equal(cn_net_pkts_out(net), 0); /* the stack freed it */
		cn_udp_close(us);
	}
	assert_int_equal(cn_tap_stats(t)->tx_too_long, 2);

	/* kernel -> cachenet through cn_tap_poll */
	struct cn_udp_params up = {.lport = CN_BE16(OUR_PORT), .rx_csum = true, .rx = udp_rx, .rx_arg = &g};
	struct cn_udp_sock *us = cn_udp_open(net, &up);
	assert_non_null(us);
	for (uint32_t len = 1; len <= 1472; len = len * 5 + 3) {
		unsigned before = g.n;
		kernel_send(ks, 1, len);
		uint64_t end = now_ms() + 3000;
		while (g.n == before && now_ms() < end) {
			assert_true(cn_tap_wait(t, 100) >= 0);
			cn_tap_poll(t, net, 1);
		}
		assert_int_equal(g.n, before + 1);
		assert_int_equal(g.len, len);
		for (uint32_t k = 1; k < len; k++)
			assert_int_equal(g.buf[k], (uint8_t)(k * 7));
	}
	assert_int_equal(cn_net_stats(net)->drop[CN_DROP_UDP_CSUM], 0);
	assert_true(cn_tap_stats(t)->polls > 0);
	check_stats(t, false);
	cn_udp_close(us);
	close(ks);
	f->ks = -1;
	assert_int_equal(cn_net_destroy(net), 0);
	close_tap(f);
}

static void test_rx_trunc(void **state)
{
	struct fx *f = *state;
	struct cn_tap_params p = tap_params(f);
	p.mtu = 576;
	struct cn_tap *t = open_ready(f, &p);
	int ks = kernel_udp(f);

	kernel_send(ks, 1, 1000); /* a 1042-byte frame: longer than 576 + 14 */
	kernel_send(ks, 1, 100);  /* the next one still comes through */
	struct cn_mbuf *m = wait_frame(t, is_udp_to_us, NULL, 3000);
	assert_non_null(m);
	assert_int_equal(m->len, 14 + 20 + 8 + 100);
	cn_mbuf_free(m);
	assert_int_equal(cn_tap_stats(t)->rx_trunc, 1);
	check_close(f, false);
}

static void test_rx_nobufs(void **state)
{
	struct fx *f = *state;
	struct cn_mbuf_pool_params cp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 2};
	struct cn_mbuf_pool *few = cn_mbuf_pool_create(&cp);
	assert_non_null(few);
	struct cn_tap_params p = tap_params(f);
	p.cpool = few;
	struct cn_tap *t = open_ready(f, &p);
	int ks = kernel_udp(f);
	struct cn_mbuf *hold[2];

	for (int i = 0; i < 2; i++) {
		hold[i] = cn_mbuf_get_cluster(f->mp, few);
		assert_non_null(hold[i]);
	}
	uint64_t rx0 = cn_tap_stats(t)->rx_frames;
	kernel_send(ks, 3, 200);
	uint64_t end = now_ms() + 3000;
	while (cn_tap_stats(t)->rx_nobufs < 3 && now_ms() < end) {
		struct cn_mbuf *m[4];
		assert_true(cn_tap_wait(t, 100) >= 0);
		assert_int_equal(cn_tap_rx_burst(t, m, 4), 0);
	}
	assert_int_equal(cn_tap_stats(t)->rx_nobufs, 3);
	assert_int_equal(cn_tap_stats(t)->rx_frames, rx0);
	/* the frames were drained, not left queued */
	assert_int_equal(cn_tap_wait(t, 0), 0);
	for (int i = 0; i < 2; i++)
		cn_mbuf_free(hold[i]);
	kernel_send(ks, 1, 200);
	struct cn_mbuf *m = wait_frame(t, is_udp_to_us, NULL, 3000);
	assert_non_null(m);
	cn_mbuf_free(m);
	check_close(f, false);
	assert_int_equal(cn_mbuf_pool_destroy(few), 0);
}

static void test_impair_loss(void **state)
{
	struct fx *f = *state;
	struct cn_link_params lp = {.loss = 1.0, .rng_start = 7};
	struct cn_tap *t = open_impaired(f, &lp);
	int ks = kernel_udp(f);
	uint8_t req[64];
	uint32_t len = arp_request(req);

	for (int i = 0; i < 20; i++)
		assert_int_equal(cn_tap_write_frame(t, req, len), 0);
	const struct cn_tap_stats *s = cn_tap_stats(t);
	uint64_t rx0 = s->impair_rx.frames; /* the settling frames */
	assert_int_equal(s->impair_rx.lost, rx0);
	kernel_send(ks, 20, 64);
	uint64_t end = now_ms() + 3000;
	while (s->impair_rx.frames < rx0 + 20 && now_ms() < end) {
		struct cn_mbuf *m[8];
		assert_true(cn_tap_wait(t, 100) >= 0);
		assert_int_equal(cn_tap_rx_burst(t, m, 8), 0);
	}
	/* let any ARP reply arrive: there must be none */
	struct cn_mbuf *m[8];
	usleep(100 * 1000);
	assert_int_equal(cn_tap_rx_burst(t, m, 8), 0);
	assert_int_equal(s->impair_tx.frames, 20);
	assert_int_equal(s->impair_tx.lost, 20);
	assert_int_equal(s->tx_writes, 0);
	assert_int_equal(s->impair_rx.frames, rx0 + 20);
	assert_int_equal(s->impair_rx.lost, rx0 + 20);
	assert_int_equal(s->rx_frames, 0);
	check_close(f, true);
}

static void test_impair_dup_reorder(void **state)
{
	struct fx *f = *state;
	int ks = kernel_udp(f);

	/* duplicate 1: our request is written twice, the kernel answers
	 * each, and each answer is received twice */
	{
		struct cn_link_params lp = {.duplicate = 1.0, .rng_start = 3};
		struct cn_tap *t = open_impaired(f, &lp);
		uint8_t req[64];
		assert_int_equal(cn_tap_write_frame(t, req, arp_request(req)), 0);
		const struct cn_tap_stats *s = cn_tap_stats(t);
		assert_int_equal(s->tx_writes, 2);
		assert_int_equal(s->impair_tx.duplicated, 1);
		unsigned replies = 0;
		uint64_t end = now_ms() + 3000;
		while (replies < 4 && now_ms() < end) {
			struct cn_mbuf *m = wait_frame(t, is_arp_reply, NULL, (int)(end - now_ms()));
			if (m)
				replies++;
			cn_mbuf_free(m);
		}
		assert_int_equal(replies, 4);
		assert_int_equal(s->impair_rx.duplicated, s->impair_rx.frames);
		check_close_tap(f, true);
	}
	/* reorder 1: pairs swap; the odd one out waits for cn_tap_flush */
	{
		struct cn_link_params lp = {.reorder = 1.0, .rng_start = 4};
		struct cn_tap *t = open_impaired(f, &lp);
		uint8_t order[8];
		unsigned n = 0;
		uint64_t re0 = cn_tap_stats(t)->impair_rx.reordered;
		kernel_send(ks, 5, 100);
		uint64_t end = now_ms() + 3000;
		while (n < 4 && now_ms() < end) {
			struct cn_mbuf *m = wait_frame(t, is_udp_to_us, NULL, (int)(end - now_ms()));
			if (m)
				order[n++] = m->data[42];
			cn_mbuf_free(m);
		}
		assert_int_equal(n, 4);
		/* the fifth is held: nothing more arrives until the flush */
		assert_null(wait_frame(t, is_udp_to_us, NULL, 100));
		cn_tap_flush(t);
		assert_int_equal(cn_tap_wait(t, 0), 1);
		struct cn_mbuf *m = wait_frame(t, is_udp_to_us, NULL, 1000);
		assert_non_null(m);
		order[n++] = m->data[42];
		cn_mbuf_free(m);
		assert_int_equal(order[0], 2);
		assert_int_equal(order[1], 1);
		assert_int_equal(order[2], 4);
		assert_int_equal(order[3], 3);
		assert_int_equal(order[4], 5);
		assert_int_equal(cn_tap_stats(t)->impair_rx.reordered, re0 + 3);
		/* TX: the first frame is held until the second is written */
		uint8_t req[64];
		uint32_t len = arp_request(req);
		assert_int_equal(cn_tap_write_frame(t, req, len), 0);
		assert_int_equal(cn_tap_stats(t)->tx_writes, 0);
		assert_int_equal(cn_tap_write_frame(t, req, len), 0);
		assert_int_equal(cn_tap_stats(t)->tx_writes, 2);
		assert_int_equal(cn_tap_write_frame(t, req, len), 0);
		assert_int_equal(cn_tap_stats(t)->tx_writes, 2);
		cn_tap_flush(t);
		assert_int_equal(cn_tap_stats(t)->tx_writes, 3);
		usleep(100 * 1000);
		drain(t);
		cn_tap_flush(t);
		drain(t);
		check_close_tap(f, true);
	}
	/* corrupt 1: every frame has one byte changed, which one of the
	 * frame's own checks catches: the Ethernet header is not what the
	 * kernel sends, or the IPv4 header sum, or the UDP sum (pseudo-header,
	 * header and payload) is wrong. A one-byte change always moves a
	 * ones'-complement sum: (b - a) << 0 or << 8 is never 0 mod 0xffff. */
	{
		struct cn_link_params lp = {.corrupt = 1.0, .rng_start = 5};
		struct cn_tap *t = open_impaired(f, &lp);
		uint64_t rx0 = cn_tap_stats(t)->impair_rx.frames;
		assert_int_equal(cn_tap_stats(t)->impair_rx.corrupted, rx0);
		kernel_send(ks, 8, 300);
		unsigned got = 0;
		uint64_t end = now_ms() + 3000;
		while (cn_tap_stats(t)->impair_rx.frames < rx0 + 8 && now_ms() < end) {
			struct cn_mbuf *m[8];
			assert_true(cn_tap_wait(t, 100) >= 0);
			unsigned k = cn_tap_rx_burst(t, m, 8);
			for (unsigned i = 0; i < k; i++) {
				const uint8_t *fr = m[i]->data;
				uint8_t ph[12];
				assert_int_equal(m[i]->len, 14 + 20 + 8 + 300);
				bool eth_ok = memcmp(fr, OURMAC, 6) == 0 && memcmp(fr + 6, KMAC, 6) == 0 &&
					      get16(fr + 12) == 0x0800;
				bool ip_ok = cn_csum(fr + 14, 20) == 0;
				memcpy(ph, fr + 26, 8); /* addresses */
				ph[8] = 0;
				ph[9] = CN_IPV4_PROTO_UDP;
				put16(ph + 10, 8 + 300);
				uint32_t sum = cn_csum_add(cn_csum_partial(ph, 12, 0),
							   cn_csum_partial(fr + 34, 8 + 300, 0));
				bool udp_ok = cn_csum_fold(sum) == 0xffff;
				assert_false(eth_ok && ip_ok && udp_ok);
				got++;
				cn_mbuf_free(m[i]);
			}
		}
		assert_int_equal(got, 8);
		assert_int_equal(cn_tap_stats(t)->impair_rx.corrupted, rx0 + 8);
		check_close_tap(f, true);
	}
	close(ks);
	f->ks = -1;
}

/* ------------------------------------------------------------ namespace */

/* Inside the namespace: the kernel's end of the link, then the tests. */
static int run_inside(void)
{
	const char *cmd =
		"ip link set lo up && ip tuntap add dev " IFNAME " mode tap && "
		"ip link set " IFNAME " address 02:00:00:00:00:01 && "
		"(echo 1 > /proc/sys/net/ipv6/conf/" IFNAME "/disable_ipv6 || true) && "
		"ip link set " IFNAME " up && ip addr add 10.77.0.1/24 dev " IFNAME " && "
		"ip neigh replace 10.77.0.2 lladdr 02:00:00:00:00:02 dev " IFNAME " nud permanent";
	if (cn_test_sh(cmd) != 0) {
		fprintf(stderr, "test_tap: setting up %s in the namespace failed\n", IFNAME);
		return 1;
	}
	/* attaching may still be refused (a LSM, a user namespace) */
	int fd = open("/dev/net/tun", O_RDWR);
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
	strcpy(ifr.ifr_name, IFNAME);
	if (fd < 0 || ioctl(fd, TUNSETIFF, &ifr) < 0) {
		int e = errno;
		if (e == EPERM || e == EACCES || e == ENOENT || e == ENODEV || e == ENXIO) {
			printf("SKIP: attaching a TAP is not allowed here: %s\n", strerror(e));
			return 77;
		}
		fprintf(stderr, "test_tap: attaching %s: %s\n", IFNAME, strerror(e));
		return 1;
	}
	close(fd);

	const struct CMUnitTest tests[] = {
		CN_FX(test_open_errors), CN_FX(test_attach), CN_FX(test_arp_pcap), CN_FX(test_ping),
		CN_FX(test_udp_stack), CN_FX(test_rx_trunc), CN_FX(test_rx_nobufs),
		CN_FX(test_impair_loss), CN_FX(test_impair_dup_reorder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}

int main(int argc, char **argv)
{
	if (access("/dev/net/tun", R_OK | W_OK) != 0) {
		printf("SKIP: /dev/net/tun: %s\n", strerror(errno));
		return 77;
	}
	return cn_test_netns_main("test_tap", "cntap", argc, argv, run_inside);
}
