/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cachenet -> cachenet over net_memif between two processes, one per core.
 *
 * The program forks before either side starts its EAL: the parent is the
 * receiver (memif server, TCP listener), the child the sender (memif
 * client, TCP client); each runs its own EAL (--no-huge --no-pci, its own
 * --file-prefix, -l CORE: the EAL pins each main thread to its core), one
 * cachenet stack on libcachenet-dpdk over its memif port, and the two
 * share nothing but the memif socket file in a temporary directory and
 * the memif rings. The sender streams --bytes of xorshift64* bytes in
 * 1460-byte segments (SHA-256 computed before the clock starts); the
 * receiver keeps every byte and hashes them after it stops (or hashes
 * as it reads: --inline-hash). The child
 * reports to the parent through a pipe: its SHA-256, counters and leak
 * check. The run passes when both hashes are equal, the byte counts are
 * exact, no frame was dropped for want of a buffer and every pool and
 * mempool of both sides is back to 0 in use.
 *
 * Busy ticks: the TSC ticks of the loop rounds that moved something
 * (frames received, bytes sent or read), split into I/O (the adapter's
 * own counters: rx_burst with the PMD's receive copy, xmit and tx_burst
 * with the PMD's transmit copy and, memif offering no checksum offload,
 * the TCP checksum in software) and stack (everything else: cachenet's
 * TCP, the socket copies). Idle polls are not counted.
 *
 * Options: --bytes N[K|M] (default 16M), --cores R,S (default 0,1),
 *   --zero-copy (zero-copy=yes on the client: the sender's memif end
 *   uses its own mempools' buffers as the shared memory; the sender's
 *   adapter must see it in the devargs and run in copy mode, checked),
 *   --bare (no stack: the same number of 1514-byte frames as the
 *   stream has segments, sent by a loop of rte_eth_tx_burst over frames
 *   made once and received by rte_eth_rx_burst + free: the memif path's
 *   own cost and ceiling), --trusted (both adapters with cn_dpdk_params.trusted_link: the TCP
 *   checksum left partial by the sender and not verified by the
 *   receiver), --tx-copy / --tx-chains (the sender's adapter in copy
 *   mode: each frame copied into one rte_mbuf, as the adapter chooses
 *   for memif by default, or in chains of external buffers over the
 *   stack's own: cn_dpdk_params.tx_copy 1 / 2), --sndbuf N[K|M] (the
 *   sender's send buffer, default 1M: the clusters its unacknowledged
 *   bytes hold), --rsize LOG2
 *   (memif ring: 2^LOG2 descriptors, default 10), --batch N (frames per
 *   burst, default 32), --timeout SECONDS (default 60: both processes
 *   are killed by SIGALRM after it), --json (a last line with the
 *   figures as one JSON object: mbit_s, tsc_hz, and per side busy,
 *   device, stack, app ticks per segment, cpu_s_per_gb), --inline-hash
 *   (the sender makes and hashes the stream 64 KB at a time as it sends,
 *   the receiver reads into one reused 64 KB buffer and hashes each read
 *   at once, both timed apart as the application's, instead of a buffer
 *   of --bytes on each side hashed before / after the stream: the
 *   stack's copy-in and copy-out then touch cache-resident memory, as in
 *   the in-memory NIC benchmark, rather than cold pages), --regen-check
 *   (as --inline-hash, but no SHA-256: the stream's words are a
 *   function of their offset, and the receiver makes them again and
 *   compares every byte it reads with them; a fraction of SHA-256's ~1.7
 *   ticks a byte, so the stack and the device, not the check, bound the
 *   run's wall clock).
 *
 * Exit: 0 pass, 1 fail, 77 skip (the EAL or the memif PMD is missing).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/sha.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include <cachenet/tsc.h>

#include "dpdk_host.h"

#define IP_SND 0x0a4d0101u /* 10.77.1.1 */
#define IP_RCV 0x0a4d0102u /* 10.77.1.2 */
#define PORT 5001

struct opts {
	uint64_t bytes;
	int core_rcv, core_snd;
	bool zero_copy, json, inline_hash, trusted, bare;
	bool regen;             /* --regen-check: compare with the generator's bytes */
	unsigned tx_copy;       /* cn_dpdk_params.tx_copy of the sender */
	uint32_t sndbuf;        /* the sender's send buffer, bytes (0: 1 MB) */
	unsigned rsize, batch, timeout;
	double ghz;             /* TSC ticks per ns */
	char dir[64];
};

/* What each side measured, the child's sent to the parent whole. */
struct side {
	int ok;                 /* 1: this side passed its own checks */
	char why[160];          /* else the first failure */
	uint8_t sha[32];
	uint64_t bytes;         /* payload bytes sent / received */
	uint64_t segs;          /* data segments sent / frames received */
	uint64_t wall_ns;       /* first to last payload byte */
	uint64_t cpu_ns;        /* process CPU time over the same span */
	uint64_t busy_tsc, io_tsc, app_tsc;
	/* busy rounds that kept the CPU throughout: ticks, I/O ticks,
	 * segments; and how many busy rounds lost it */
	uint64_t run_tsc, run_io_tsc, run_segs, rounds, preempted;
	uint64_t tx_frames, rx_frames, tx_full, rx_nobufs, tx_csum_sw, tx_csum_hw;
	uint64_t csum_trusted;  /* frames sent partial + received unverified */
	int tx_copy;            /* the adapter's TX mode (cn_dpdk_info.tx_copy) */
	char driver[32];
};

static void fail(struct side *s, const char *why)
{
	if (s->ok) {
		s->ok = 0;
		snprintf(s->why, sizeof(s->why), "%s", why);
	}
}

static uint64_t parse_size(const char *a)
{
	char *end;
	uint64_t v = strtoull(a, &end, 0);
	if (*end == 'K' || *end == 'k')
		v <<= 10;
	else if (*end == 'M' || *end == 'm')
		v <<= 20;
	else if (*end == 'G' || *end == 'g')
		v <<= 30;
	return v;
}

static int eal_up(const struct opts *o, bool sender)
{
	char core[8], prefix[64], vdev[256];
	snprintf(core, sizeof(core), "%d", sender ? o->core_snd : o->core_rcv);
	snprintf(prefix, sizeof(prefix), "cn_memif_%d_%s", (int)getpid(), sender ? "snd" : "rcv");
	snprintf(vdev, sizeof(vdev),
		 "net_memif0,role=%s,id=0,socket=%s/memif.sock,socket-abstract=no,rsize=%u%s",
		 sender ? "client" : "server", o->dir, o->rsize,
		 sender && o->zero_copy ? ",zero-copy=yes" : "");
	/* memif's zero-copy shares the client's memory as one file */
	char *argv[] = {"memif_stream", "--no-huge", "--no-pci", "-l", core, "-m", "256",
			"--file-prefix", prefix, "--vdev", vdev, "--log-level", "lib.eal:error",
			"--single-file-segments", NULL};
	int argc = (int)(sizeof(argv) / sizeof(argv[0])) - 1 - !(sender && o->zero_copy);
	return rte_eal_init(argc, argv);
}

/* One round of the loop's bookkeeping: the round counts as busy when it
 * moved something. On a shared machine a round may lose the CPU to
 * another process, and the TSC goes on counting: the thread's CPU clock
 * read around the round tells (its TSC time exceeds the CPU time the
 * thread got), and such a round is left out of the per-segment figures
 * (counted in preempted). */
struct round {
	uint64_t cpu0, t0, io0, f0, app0;
};

/* TSC ticks of the receiver's inline SHA-256 so far (--inline-hash) */
static uint64_t s_app_tsc;

static uint64_t thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t io_tsc(const struct dh_host *h)
{
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h->dev);
	return st->rx_tsc + st->tx_tsc;
}

/* the frames a side counts its segments in: sent (sender), received */
static uint64_t seg_frames(const struct dh_host *h, bool sender)
{
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h->dev);
	return sender ? st->tx_frames : st->rx_frames;
}

static void round_begin(struct round *r, const struct dh_host *h, bool sender)
{
	r->cpu0 = thread_ns();
	r->f0 = seg_frames(h, sender);
	r->io0 = io_tsc(h);
	r->app0 = s_app_tsc;
	r->t0 = cn_tsc_begin();
}

/* A busy round's figures: @span ticks (@work of them the stack's and
 * the device's), @io of them the device's, @f segments, @cpu ns of
 * thread CPU time. */
static void round_add(uint64_t span, uint64_t work, uint64_t io, uint64_t f, uint64_t cpu,
		      double ghz, struct side *s)
{
	s->busy_tsc += work;
	s->io_tsc += io;
	/* 1 us of slack: the CPU clock's own reads */
	if ((double)span / ghz > (double)cpu + 1000.0) {
		s->preempted++;
		return;
	}
	s->run_tsc += work;
	s->run_io_tsc += io;
	s->run_segs += f;
	s->rounds++;
}

static void round_end(const struct round *r, const struct dh_host *h, bool sender, bool busy,
		      double ghz, struct side *s)
{
	uint64_t t1 = cn_tsc_end();
	uint64_t io = io_tsc(h) - r->io0, f = seg_frames(h, sender) - r->f0;
	uint64_t cpu = thread_ns() - r->cpu0;
	/* the application's hashing inside the round is not the stack's */
	uint64_t span = t1 - r->t0, work = span - (s_app_tsc - r->app0);

	if (busy)
		round_add(span, work, io, f, cpu, ghz, s);
}

static void side_counters(struct side *s, const struct dh_host *h)
{
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h->dev);
	s->tx_frames = st->tx_frames;
	s->rx_frames = st->rx_frames;
	s->tx_full = st->tx_full;
	s->rx_nobufs = st->rx_nobufs + st->rx_bad_len;
	s->tx_csum_sw = st->tx_csum_sw;
	s->tx_csum_hw = st->tx_csum_hw;
	s->csum_trusted = st->tx_csum_trusted + st->rx_csum_trusted;
	s->tx_copy = cn_dpdk_info(h->dev)->tx_copy;
	snprintf(s->driver, sizeof(s->driver), "%s", cn_dpdk_info(h->dev)->driver);
}

/* Let the FIN exchange and the last ACKs finish. */
static void linger(struct dh_host *h, uint64_t ms)
{
	for (uint64_t end = dh_now_ms() + ms; dh_now_ms() < end;) {
		uint64_t now = dh_now_ms();
		dh_poll(h, now);
		cn_conn_poll(h->conn, now);
	}
}

/* The stream's bytes: xorshift64*, 8 at a time (@n a multiple of 8, but
 * for the stream's last piece). */
static void gen_fill(uint64_t *x, uint8_t *buf, uint64_t n)
{
	for (uint64_t i = 0; i < n; i += 8) {
		*x ^= *x >> 12, *x ^= *x << 25, *x ^= *x >> 27;
		uint64_t v = *x * 0x2545f4914f6cdd1dull;
		memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
	}
}

#define CHUNK 65536u
#define GEN_SEED 0x243f6a8885a308d3ull

/* --regen-check's bytes: the 8-byte word at stream offset 8i is
 * (i + 1) * an odd constant, the bits mixed by a shift; no word depends
 * on the one before, so the loop runs vector-wide, and a word at the
 * wrong place differs from the one wanted there. @p n a multiple of 8,
 * but for the stream's last piece; @p word the first word's index. */
static void gen_fill_pos(uint64_t word, uint8_t *buf, uint64_t n)
{
	uint64_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v = (word + i / 8 + 1) * 0x9e3779b97f4a7c15ull;
		v ^= v >> 29;
		memcpy(buf + i, &v, 8);
	}
	if (i < n) {
		uint64_t v = (word + i / 8 + 1) * 0x9e3779b97f4a7c15ull;
		v ^= v >> 29;
		memcpy(buf + i, &v, n - i);
	}
}

/* --regen-check: the receiver makes the stream again, chunk by chunk as
 * the sender made it, and compares every byte it receives with it; much
 * cheaper than SHA-256, so the stack and the device bound the run. */
struct regen {
	uint64_t made, total;
	uint32_t pos, len;
	uint8_t buf[CHUNK];
};

/* 1 when @p n received bytes are the stream's next ones, else 0. */
static int regen_check(struct regen *g, const uint8_t *p, size_t n)
{
	while (n) {
		if (g->pos == g->len) {
			uint64_t left = g->total - g->made;
			if (!left)
				return 0; /* more bytes than were sent */
			g->len = left < CHUNK ? (uint32_t)left : CHUNK;
			gen_fill_pos(g->made / 8, g->buf, g->len);
			g->made += g->len;
			g->pos = 0;
		}
		size_t k = n < g->len - g->pos ? n : g->len - g->pos;
		if (memcmp(p, g->buf + g->pos, k) != 0)
			return 0;
		g->pos += (uint32_t)k;
		p += k;
		n -= k;
	}
	return 1;
}


static void run_sender(const struct opts *o, uint16_t port, struct side *s)
{
	struct dh_host h;
	bool chunked = o->inline_hash || o->regen; /* made chunk by chunk as sent */
	uint8_t *buf = malloc(chunked ? CHUNK : o->bytes);
	uint64_t x = GEN_SEED, made = 0; /* bytes generated */
	uint32_t cpos = 0, clen = 0;                  /* --inline-hash: the chunk */
	SHA256_CTX md;

	if (!buf) {
		fail(s, "no memory for the data");
		return;
	}
	SHA256_Init(&md);
	if (!chunked) {
		gen_fill(&x, buf, o->bytes);
		SHA256(buf, o->bytes, s->sha);
	}
	/* memif's zero-copy finds a frame's bytes only in DPDK memory: the
	 * adapter sees zero-copy=yes in the port's devargs and puts them
	 * there (copy mode) by itself */
	struct cn_dpdk_params dp = {.batch = o->batch, .tx_copy = o->tx_copy,
				    .trusted_link = o->trusted};
	struct cn_conn_params cp = {.tcp = {.sndbuf_size = o->sndbuf}};
	if (dh_host_up(&h, port, IP_SND, 1, &dp, &cp) != 0) {
		fail(s, "sender: host up");
		free(buf);
		return;
	}
	if (o->zero_copy && !(cn_dpdk_info(h.dev)->memif_zc && cn_dpdk_info(h.dev)->tx_copy)) {
		fail(s, "sender: zero-copy=yes not detected (copy mode not chosen)");
		goto down;
	}
	/* The client's port connects when it starts; should the control
	 * handshake not complete (seen once in CI), restart the port and
	 * so connect again, every timeout/6 s (at least 5: under valgrind
	 * the handshake alone takes several seconds), until the timeout. */
	unsigned every = o->timeout / 6 < 5 ? 5 : o->timeout / 6;
	for (unsigned waited = 0; dh_wait_link(port, 1, every) != 0;) {
		waited += every;
		if (waited >= o->timeout || rte_eth_dev_stop(port) != 0 || rte_eth_dev_start(port) != 0) {
			fail(s, "sender: memif link not up");
			goto down;
		}
		fprintf(stderr, "memif_stream: sender: port restarted to connect again\n");
	}
	uint64_t now = dh_now_ms();
	struct cn_sock *c = cn_sock_connect(h.conn, cn_htobe32(IP_RCV), cn_htobe16(PORT), now);
	if (!c) {
		fail(s, "sender: connect");
		goto down;
	}
	uint64_t deadline = now + 1000ull * o->timeout;
	while (cn_sock_state(c) != CN_SOCK_ESTABLISHED && cn_sock_state(c) != CN_SOCK_CLOSED &&
	       now < deadline) {
		now = dh_now_ms();
		dh_poll(&h, now);
		cn_conn_poll(h.conn, now);
	}
	if (cn_sock_state(c) != CN_SOCK_ESTABLISHED) {
		fail(s, "sender: not established");
		goto down;
	}
	uint64_t sent = 0, t0 = dh_now_ns(), p0 = dh_cpu_ns(), last = 0;
	s->busy_tsc = s->io_tsc = s->run_tsc = s->run_io_tsc = s->run_segs = 0;
	s->rounds = s->preempted = 0;
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h.dev);
	uint64_t f0 = st->tx_frames;
	bool shut = false;
	enum cn_sock_state state;
	uint64_t t1 = 0, p1 = 0;
	while ((state = cn_sock_state(c)) != CN_SOCK_TIME_WAIT && state != CN_SOCK_CLOSED &&
	       now < deadline) {
		if (!t1 && state == CN_SOCK_FIN_WAIT_2) {
			/* every byte and our FIN acknowledged */
			t1 = dh_now_ns();
			p1 = dh_cpu_ns();
		}
		struct round r;
		round_begin(&r, &h, true);
		now = dh_now_ms();
		unsigned got = dh_poll(&h, now);
		int n = 0;
		if (sent < o->bytes && chunked) {
			if (cpos == clen) {
				/* the next chunk, made and hashed apart */
				uint64_t h0 = cn_tsc_begin();
				clen = o->bytes - made < CHUNK ? (uint32_t)(o->bytes - made) : CHUNK;
				if (o->regen)
					gen_fill_pos(made / 8, buf, clen);
				else
					gen_fill(&x, buf, clen);
				if (o->inline_hash)
					SHA256_Update(&md, buf, clen);
				made += clen;
				cpos = 0;
				s_app_tsc += cn_tsc_end() - h0;
			}
			n = cn_sock_send(c, buf + cpos, clen - cpos, now);
			if (n > 0)
				cpos += (uint32_t)n;
		} else if (sent < o->bytes) {
			uint64_t left = o->bytes - sent;
			n = cn_sock_send(c, buf + sent, left > (1u << 30) ? 1u << 30 : (uint32_t)left,
					 now);
		} else if (!shut) {
			cn_sock_shutdown(c, now);
			shut = true;
		}
		if (n < 0) {
			fail(s, "sender: send failed");
			break;
		}
		sent += (uint64_t)n;
		if (now != last) {
			cn_conn_poll(h.conn, now);
			last = now;
		}
		cn_dpdk_flush(h.dev);
		round_end(&r, &h, true, got || n > 0, o->ghz, s);
	}
	if (!t1) {
		t1 = dh_now_ns();
		p1 = dh_cpu_ns();
	}
	s->wall_ns = t1 - t0;
	s->cpu_ns = p1 - p0;
	s->bytes = sent;
	s->app_tsc = s_app_tsc;
	if (o->inline_hash)
		SHA256_Final(s->sha, &md);
	s->segs = st->tx_frames - f0;
	if (state != CN_SOCK_TIME_WAIT && state != CN_SOCK_CLOSED)
		fail(s, "sender: the stream did not finish in time");
	if (cn_sock_error(c))
		fail(s, "sender: connection error");
	cn_sock_close(c, now);
	linger(&h, 200);
	side_counters(s, &h);
down:
	/* the client closes first; the server waits for its link to drop */
	if (dh_host_down(&h) != 0)
		fail(s, "sender: leak at teardown (see stderr)");
	free(buf);
}

static void run_receiver(const struct opts *o, uint16_t port, struct side *s)
{
	struct dh_host h;
	bool chunked = o->inline_hash || o->regen;
	size_t room = chunked ? 65536 : o->bytes + 65536;
	uint8_t *buf = malloc(room);
	struct regen *g = o->regen ? calloc(1, sizeof(*g)) : NULL;
	SHA256_CTX md;

	if (g)
		g->total = o->bytes;
	if (!buf || (o->regen && !g)) {
		free(g);
		fail(s, "no memory for the data");
		return;
	}
	/* every page touched before the clock starts */
	memset(buf, 0, room);
	SHA256_Init(&md);
	struct cn_dpdk_params dp = {.batch = o->batch, .trusted_link = o->trusted};
	if (dh_host_up(&h, port, IP_RCV, 2, &dp, NULL) != 0) {
		fail(s, "receiver: host up");
		free(buf);
		return;
	}
	struct cn_sock *ls = cn_sock_listen(h.conn, cn_htobe16(PORT), 4), *a = NULL;
	if (!ls) {
		fail(s, "receiver: listen");
		goto down;
	}
	uint64_t now = dh_now_ms(), deadline = now + 1000ull * o->timeout, last = 0;
	while (!a && now < deadline) {
		now = dh_now_ms();
		dh_poll(&h, now);
		cn_conn_poll(h.conn, now);
		a = cn_sock_accept(ls);
	}
	if (!a) {
		fail(s, "receiver: no connection");
		goto down;
	}
	uint64_t rcvd = 0, t0 = 0, p0 = 0, t1 = 0, p1 = 0;
	const struct cn_dpdk_stats *st = cn_dpdk_stats(h.dev);
	uint64_t f0 = 0;
	bool eof = false, differs = false;
	while (!eof && !differs && now < deadline) {
		struct round r;
		round_begin(&r, &h, false);
		now = dh_now_ms();
		unsigned got = dh_poll(&h, now);
		int n, moved = 0;
		while ((n = cn_sock_recv(a, chunked ? buf : buf + rcvd, 65536, now)) > 0) {
			if (rcvd == 0) {
				t0 = dh_now_ns();
				p0 = dh_cpu_ns();
				f0 = st->rx_frames - got;
			}
			if (o->inline_hash) {
				uint64_t h0 = cn_tsc_begin();
				SHA256_Update(&md, buf, (size_t)n);
				s_app_tsc += cn_tsc_end() - h0;
			} else if (g) {
				uint64_t h0 = cn_tsc_begin();
				differs = !regen_check(g, buf, (size_t)n);
				s_app_tsc += cn_tsc_end() - h0;
				if (differs) {
					fail(s, "receiver: the stream differs from the generator's bytes");
					break;
				}
			}
			rcvd += (uint64_t)n;
			moved += n;
			if (rcvd > o->bytes)
				break;
		}
		if (differs)
			break;
		if (n == 0) {
			eof = true;
			t1 = dh_now_ns();
			p1 = dh_cpu_ns();
		} else if (n < 0 && n != -EAGAIN) {
			fail(s, "receiver: recv failed");
			break;
		}
		if (rcvd > o->bytes) {
			fail(s, "receiver: more bytes than were sent");
			break;
		}
		if (now != last) {
			cn_conn_poll(h.conn, now);
			last = now;
		}
		cn_dpdk_flush(h.dev);
		round_end(&r, &h, false, got || moved, o->ghz, s);
	}
	s->wall_ns = t1 - t0;
	s->cpu_ns = p1 - p0;
	s->bytes = rcvd;
	s->segs = st->rx_frames - f0;
	if (!eof)
		fail(s, "receiver: no end of stream in time");
	uint64_t h0 = cn_tsc_begin();
	if (o->inline_hash)
		SHA256_Final(s->sha, &md);
	else if (!o->regen)
		SHA256(buf, rcvd, s->sha);
	else if (!differs && g->made != o->bytes)
		fail(s, "receiver: the stream ended early");
	s->app_tsc = s_app_tsc + cn_tsc_end() - h0;
	cn_sock_close(a, now);
	cn_sock_close(ls, now);
	linger(&h, 200);
	side_counters(s, &h);
	if (dh_wait_link(port, 0, o->timeout) != 0)
		fail(s, "receiver: the sender's memif end did not close");
down:
	if (dh_host_down(&h) != 0)
		fail(s, "receiver: leak at teardown (see stderr)");
	free(g);
	free(buf);
}

/* ------------------------------------------------------------ --bare: the device's own path */

/* One round of the bare loop: its ticks count when it moved frames and
 * kept the CPU (as round_end), all of them device I/O. */
static void bare_round(uint64_t t0, uint64_t cpu0, unsigned frames, double ghz, struct side *s)
{
	uint64_t span = cn_tsc_end() - t0, cpu = thread_ns() - cpu0;

	if (frames)
		round_add(span, span, span, frames, cpu, ghz, s);
}

#define BARE_FRAME (14u + 20u + 20u + 12u + 1448u) /* a data segment's frame: 1514 bytes */

/* A bare side's totals: @frames since the clocks read @t0 and @p0. */
static void bare_end(struct side *s, uint64_t t0, uint64_t p0, uint64_t frames)
{
	s->wall_ns = dh_now_ns() - t0;
	s->cpu_ns = dh_cpu_ns() - p0;
	s->segs = frames;
	s->bytes = frames * 1448u;
}

/* The sender's half of --bare: the same number of 1514-byte frames as
 * the stream's segments, made once (2 x batch rte_mbufs holding the
 * bytes) and handed to rte_eth_tx_burst again and again, each holding
 * one more reference while the driver has it: no stack, no adapter, no
 * per-frame write; what is left is memif's own transmit (its copy into
 * the ring, the free). */
static void bare_sender(const struct opts *o, uint16_t port, struct side *s)
{
	struct dh_host h;
	struct cn_dpdk_params dp = {.batch = o->batch};
	uint64_t want = (o->bytes + 1447u) / 1448u, sent = 0;
	unsigned nb = 2u * o->batch;
	struct rte_mbuf *tpl[512];

	if (dh_host_up(&h, port, IP_SND, 1, &dp, NULL) != 0) {
		fail(s, "sender: host up");
		return;
	}
	struct rte_mempool *mp = rte_pktmbuf_pool_create("cn_bare", 1023, 0, 0,
							  RTE_PKTMBUF_HEADROOM + 2048, SOCKET_ID_ANY);
	if (!mp || rte_pktmbuf_alloc_bulk(mp, tpl, nb) != 0) {
		fail(s, "sender: bare mempool");
		goto down;
	}
	uint64_t x = 0x243f6a8885a308d3ull;
	for (unsigned i = 0; i < nb; i++) {
		gen_fill(&x, rte_pktmbuf_mtod(tpl[i], uint8_t *), BARE_FRAME);
		tpl[i]->data_len = (uint16_t)BARE_FRAME;
		tpl[i]->pkt_len = BARE_FRAME;
	}
	for (unsigned waited = 0; dh_wait_link(port, 1, 5) != 0; waited += 5) {
		if (waited >= o->timeout) {
			fail(s, "sender: memif link not up");
			goto down;
		}
	}
	uint64_t t0 = dh_now_ns(), p0 = dh_cpu_ns(), deadline = dh_now_ms() + 1000ull * o->timeout;
	unsigned at = 0;
	while (sent < want && dh_now_ms() < deadline) {
		uint64_t c0 = thread_ns(), r0 = cn_tsc_begin();
		unsigned n = want - sent < o->batch ? (unsigned)(want - sent) : o->batch;
		struct rte_mbuf *b[256];
		for (unsigned i = 0; i < n; i++) {
			b[i] = tpl[(at + i) % nb];
			rte_mbuf_refcnt_update(b[i], 1);
		}
		uint16_t k = rte_eth_tx_burst(port, 0, b, (uint16_t)n);
		for (unsigned i = k; i < n; i++)
			rte_mbuf_refcnt_update(b[i], -1);
		at = (at + k) % nb;
		sent += k;
		bare_round(r0, c0, k, o->ghz, s);
	}
	bare_end(s, t0, p0, sent);
	s->tx_frames = sent;
	if (sent < want)
		fail(s, "sender: bare frames not all sent in time");
	/* the receiver's one frame back says every frame arrived */
	for (uint16_t k = 0; k == 0 && dh_now_ms() < deadline;) {
		struct rte_mbuf *b[32];
		k = rte_eth_rx_burst(port, 0, b, 32);
		rte_pktmbuf_free_bulk(b, k);
	}
	rte_eth_tx_burst(port, 0, tpl, 0); /* memif zero-copy frees what was read */
	rte_pktmbuf_free_bulk(tpl, nb);
down:
	snprintf(s->driver, sizeof(s->driver), "%s", cn_dpdk_info(h.dev)->driver);
	if (dh_host_down(&h) != 0)
		fail(s, "sender: leak at teardown (see stderr)");
	if (mp && rte_mempool_in_use_count(mp) != 0)
		fail(s, "sender: bare rte_mbufs still in use");
	rte_mempool_free(mp);
}

/* The receiver's half of --bare: rte_eth_rx_burst, add the lengths,
 * free the burst; until the sender's count of frames has arrived. */
static void bare_receiver(const struct opts *o, uint16_t port, struct side *s)
{
	struct dh_host h;
	struct cn_dpdk_params dp = {.batch = o->batch};
	uint64_t want = (o->bytes + 1447u) / 1448u, got = 0, bytes = 0, t0 = 0, p0 = 0;

	if (dh_host_up(&h, port, IP_RCV, 2, &dp, NULL) != 0) {
		fail(s, "receiver: host up");
		return;
	}
	uint64_t deadline = dh_now_ms() + 1000ull * o->timeout;
	struct rte_mbuf *done = NULL;
	while (got < want && dh_now_ms() < deadline) {
		struct rte_mbuf *b[256];
		uint64_t c0 = thread_ns(), r0 = cn_tsc_begin();
		uint16_t k = rte_eth_rx_burst(port, 0, b, (uint16_t)o->batch);
		if (k && !got) {
			t0 = dh_now_ns();
			p0 = dh_cpu_ns();
		}
		for (uint16_t i = 0; i < k; i++)
			bytes += b[i]->pkt_len;
		got += k;
		unsigned nfree = k;
		if (k && got >= want && !done)
			done = b[--nfree]; /* the last frame goes back at the end */
		rte_pktmbuf_free_bulk(b, nfree);
		bare_round(r0, c0, k, o->ghz, s);
	}
	bare_end(s, t0, p0, got);
	s->rx_frames = got;
	if (got != want || bytes != got * BARE_FRAME)
		fail(s, "receiver: bare frames missing or of a wrong length");
	/* tell the sender that everything arrived: one frame back (a
	 * client that closed earlier would take the frames still in the
	 * ring with it) */
	if (!done || rte_eth_tx_burst(port, 0, &done, 1) != 1) {
		rte_pktmbuf_free(done);
		fail(s, "receiver: could not send the end frame");
	}
	snprintf(s->driver, sizeof(s->driver), "%s", cn_dpdk_info(h.dev)->driver);
	if (dh_wait_link(port, 0, o->timeout) != 0)
		fail(s, "receiver: the sender's memif end did not close");
	if (dh_host_down(&h) != 0)
		fail(s, "receiver: leak at teardown (see stderr)");
}

/* Run one side in this process; 77 when the EAL or memif is missing. */
static int run_side(const struct opts *o, bool sender, struct side *s)
{
	uint16_t port;

	memset(s, 0, sizeof(*s));
	s->ok = 1;
	alarm(o->timeout + 30);
	/* The client's memif connects once, when its port starts: a client
	 * that starts before the server's EAL has made the socket never
	 * comes up (seen in CI). The sender waits for the socket file. */
	if (sender) {
		char sock[160];
		struct stat st;
		snprintf(sock, sizeof(sock), "%s/memif.sock", o->dir);
		for (unsigned i = 0; stat(sock, &st) != 0; i++) {
			if (i >= 100u * o->timeout) {
				snprintf(s->why, sizeof(s->why), "the receiver made no memif socket in %u s",
					 o->timeout);
				s->ok = 0;
				return 1;
			}
			usleep(10000);
		}
	}
	if (eal_up(o, sender) < 0) {
		snprintf(s->why, sizeof(s->why), "rte_eal_init failed (%s)", rte_strerror(rte_errno));
		s->ok = 0;
		return 77;
	}
	if (rte_eth_dev_get_port_by_name("net_memif0", &port) != 0) {
		/* the PMD is missing, or it refused its arguments (logged
		 * above): a skip only for the default ones */
		snprintf(s->why, sizeof(s->why),
			 "net_memif0 not probed: the net_memif PMD is missing (librte-net-memif23)%s",
			 o->zero_copy ? " or refused zero-copy=yes" : "");
		s->ok = 0;
		dh_eal_cleanup();
		return o->zero_copy ? 1 : 77;
	}
	if (o->bare)
		(sender ? bare_sender : bare_receiver)(o, port, s);
	else if (sender)
		run_sender(o, port, s);
	else
		run_receiver(o, port, s);
	dh_eal_cleanup();
	return s->ok ? 0 : 1;
}

static void print_side(const char *name, const struct side *s, double ghz)
{
	double segs = s->segs ? (double)s->segs : 1.0, rs = s->run_segs ? (double)s->run_segs : 1.0;
	printf("  %s (%s): %" PRIu64 " bytes, %" PRIu64 " %s in %.1f ms wall, %.1f ms CPU (%.0f%%); "
	       "tx %" PRIu64 " frames (%" PRIu64 " sw csum, %" PRIu64 " hw), rx %" PRIu64
	       ", tx_full %" PRIu64 ", rx dropped %" PRIu64 "\n",
	       name, s->driver, s->bytes, s->segs, name[0] == 's' ? "data segments" : "frames",
	       (double)s->wall_ns / 1e6, (double)s->cpu_ns / 1e6,
	       s->wall_ns ? 100.0 * (double)s->cpu_ns / (double)s->wall_ns : 0.0, s->tx_frames,
	       s->tx_csum_sw, s->tx_csum_hw, s->rx_frames, s->tx_full, s->rx_nobufs);
	printf("    busy rounds that kept the CPU (%" PRIu64 " of %" PRIu64 ", %.0f%% of the "
	       "segments): %.0f ticks/segment = I/O %.0f + stack %.0f (%.0f ns/segment: %.1f "
	       "Gbit/s for one core); all busy rounds: %.0f ticks/segment; app (making and "
	       "checking the bytes) %.0f\n",
	       s->rounds, s->rounds + s->preempted, 100.0 * (double)s->run_segs / segs,
	       (double)s->run_tsc / rs, (double)s->run_io_tsc / rs,
	       (double)(s->run_tsc - s->run_io_tsc) / rs, (double)s->run_tsc / rs / ghz,
	       s->run_tsc ? 1460.0 * 8.0 * rs * ghz / (double)s->run_tsc : 0.0,
	       (double)s->busy_tsc / segs, (double)s->app_tsc / segs);
}

/* The report's form: per side, busy ticks per segment (rounds that kept
 * the CPU) split into device I/O, stack and the application, and CPU
 * seconds per GB moved. */
static void json_side(const char *name, const struct side *s)
{
	double rs = s->run_segs ? (double)s->run_segs : 1.0, segs = s->segs ? (double)s->segs : 1.0;
	printf(",\"%s\":{\"segs\":%" PRIu64 ",\"busy\":%.0f,\"device\":%.0f,\"stack\":%.0f,"
	       "\"app\":%.0f,\"kept_cpu\":%.3f,\"wall_s\":%.4f,\"cpu_s\":%.4f,"
	       "\"cpu_s_per_gb\":%.3f,\"ok\":%d}",
	       name, s->segs, (double)s->run_tsc / rs, (double)s->run_io_tsc / rs,
	       (double)(s->run_tsc - s->run_io_tsc) / rs, (double)s->app_tsc / segs,
	       (double)s->run_segs / segs, (double)s->wall_ns / 1e9, (double)s->cpu_ns / 1e9,
	       s->bytes ? (double)s->cpu_ns / (double)s->bytes : 0.0, s->ok);
}

int main(int argc, char **argv)
{
	struct opts o = {.bytes = 16u << 20, .core_rcv = 0, .core_snd = 1, .rsize = 10,
			 .batch = 32, .timeout = 60};
	static const struct option lo[] = {
		{"bytes", 1, 0, 'b'}, {"cores", 1, 0, 'c'}, {"zero-copy", 0, 0, 'z'},
		{"tx-copy", 0, 0, 'C'}, {"tx-chains", 0, 0, 'K'}, {"sndbuf", 1, 0, 'S'}, {"json", 0, 0, 'j'}, {"inline-hash", 0, 0, 'H'},
		{"trusted", 0, 0, 'T'}, {"bare", 0, 0, 'A'}, {"rsize", 1, 0, 'r'}, {"batch", 1, 0, 'B'}, {"timeout", 1, 0, 't'},
		{"regen-check", 0, 0, 'G'}, {0, 0, 0, 0}};
	int ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'b': o.bytes = parse_size(optarg); break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &o.core_rcv, &o.core_snd) != 2) {
				fprintf(stderr, "--cores R,S\n");
				return 1;
			}
			break;
		case 'z': o.zero_copy = true; break;
		case 'C': o.tx_copy = 1; break;
		case 'K': o.tx_copy = 2; break;
		case 'S': o.sndbuf = (uint32_t)parse_size(optarg); break;
		case 'j': o.json = true; break;
		case 'H': o.inline_hash = true; break;
		case 'G': o.regen = true; break;
		case 'T': o.trusted = true; break;
		case 'A': o.bare = true; break;
		case 'r': o.rsize = (unsigned)atoi(optarg); break;
		case 'B': o.batch = (unsigned)atoi(optarg); break;
		case 't': o.timeout = (unsigned)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: memif_stream [--bytes N[K|M|G]] [--cores R,S] "
					"[--zero-copy] [--tx-copy|--tx-chains] [--sndbuf N[K|M]] [--trusted] [--bare] [--rsize LOG2] [--batch N] "
					"[--timeout S] [--json] [--inline-hash|--regen-check]\n");
			return 1;
		}
	}
	if (o.inline_hash && o.regen) {
		fprintf(stderr, "memif_stream: --inline-hash or --regen-check, not both\n");
		return 1;
	}
	if (o.bytes == 0 || o.batch == 0 || o.batch > 256 || o.rsize < 4 || o.rsize > 14) {
		fprintf(stderr, "memif_stream: bad --bytes, --batch or --rsize\n");
		return 1;
	}
	snprintf(o.dir, sizeof(o.dir), "/tmp/cn_memif_XXXXXX");
	if (!mkdtemp(o.dir)) {
		perror("mkdtemp");
		return 1;
	}
	/* the TSC's rate, to read ticks as time */
	uint64_t n0 = dh_now_ns(), c0 = cn_tsc_begin();
	usleep(50000);
	double tsc_ghz = (double)(cn_tsc_end() - c0) / (double)(dh_now_ns() - n0);
	o.ghz = tsc_ghz;
	int pfd[2];
	if (pipe(pfd) != 0) {
		perror("pipe");
		return 1;
	}
	struct side rcv, snd;
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(pfd[0]);
		int rc = run_side(&o, true, &snd);
		ssize_t w = write(pfd[1], &snd, sizeof(snd));
		_exit(w == (ssize_t)sizeof(snd) ? rc : 1);
	}
	close(pfd[1]);
	int rc = run_side(&o, false, &rcv);
	ssize_t r = read(pfd[0], &snd, sizeof(snd));
	int status = 0;
	waitpid(pid, &status, 0);
	char sock[128];
	snprintf(sock, sizeof(sock), "%s/memif.sock", o.dir);
	unlink(sock);
	rmdir(o.dir);
	if (r != (ssize_t)sizeof(snd)) {
		printf("FAIL: the sender reported nothing (wait status 0x%x)\n", status);
		return 1;
	}
	if (rc == 77 || (WIFEXITED(status) && WEXITSTATUS(status) == 77)) {
		printf("SKIP: %s\n", rc == 77 ? rcv.why : snd.why);
		return 77;
	}
	double gbps = rcv.wall_ns ? (double)rcv.bytes * 8.0 / (double)rcv.wall_ns : 0.0;
	/* the bytes' check: SHA-256 of both ends, or (--regen-check) the
	 * receiver's comparison of every byte with the generator's */
	int same = o.regen ? rcv.ok && rcv.bytes == o.bytes : memcmp(rcv.sha, snd.sha, 32) == 0;
	printf("memif_stream: %" PRIu64 " bytes %s over net_memif%s%s, sender "
	       "TX %s, ring 2^%u, burst %u, receiver on core %d, sender on core %d: %.2f Gbit/s "
	       "(first to last byte at the receiver); %s %s\n",
	       o.bytes,
	       o.bare ? "in 1514-byte frames, bare rx_burst/tx_burst loops (no stack)"
		      : "cachenet -> cachenet",
	       o.zero_copy ? " (client zero-copy)" : "",
	       o.trusted ? " (trusted link: checksums partial, not verified)" : "",
	       o.bare ? "of rte_mbufs made once (no adapter)"
		      : snd.tx_copy ? "copied (copy mode)" : "by reference (chains)", o.rsize,
	       o.batch, o.core_rcv,
	       o.core_snd, gbps, o.regen ? "bytes against the generator's" : "SHA-256",
	       o.bare ? "not taken" : same ? "equal" : "DIFFERENT");
	print_side("sender", &snd, tsc_ghz);
	print_side("receiver", &rcv, tsc_ghz);
	if (o.json) {
		printf("{\"bytes\":%" PRIu64 ",\"mbit_s\":%.1f,\"tsc_hz\":%.0f,\"zero_copy\":%d,"
		       "\"tx_copy\":%d,\"trusted\":%d,\"bare\":%d,\"inline_hash\":%d,"
		       "\"regen_check\":%d,\"sha_equal\":%d",
		       o.bytes, gbps * 1e3, tsc_ghz * 1e9, o.zero_copy, snd.tx_copy,
		       o.trusted, o.bare, o.inline_hash, o.regen, same);
		json_side("sender", &snd);
		json_side("receiver", &rcv);
		printf("}\n");
	}
	int ok = rcv.ok && snd.ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!rcv.ok)
		printf("FAIL: %s\n", rcv.why);
	if (!snd.ok)
		printf("FAIL: %s\n", snd.why);
	if (o.bare) {
		/* frames, not a byte stream: the same count at both ends */
		if (rcv.segs != snd.segs || rcv.segs == 0) {
			printf("FAIL: %" PRIu64 " frames sent, %" PRIu64 " received\n", snd.segs,
			       rcv.segs);
			ok = 0;
		}
	} else if (rcv.bytes != o.bytes || snd.bytes != o.bytes) {
		printf("FAIL: %" PRIu64 " bytes sent, %" PRIu64 " received, %" PRIu64 " wanted\n",
		       snd.bytes, rcv.bytes, o.bytes);
		ok = 0;
	}
	if (!o.bare && !same) {
		printf("FAIL: the bytes received differ from the bytes sent (%s)\n",
		       o.regen ? "compared with the generator's" : "SHA-256");
		ok = 0;
	}
	/* --trusted: no TCP checksum computed on either side, every data
	 * frame sent partial and received unverified; else none */
	if (!o.bare && (o.trusted ? snd.tx_csum_sw || rcv.tx_csum_sw ||
					    snd.csum_trusted < snd.segs || rcv.csum_trusted < rcv.segs
				  : snd.csum_trusted || rcv.csum_trusted)) {
		printf("FAIL: checksum counters do not match the link's trust (sw %" PRIu64 "/%" PRIu64
		       ", trusted %" PRIu64 "/%" PRIu64 ")\n",
		       snd.tx_csum_sw, rcv.tx_csum_sw, snd.csum_trusted, rcv.csum_trusted);
		ok = 0;
	}
	if (rcv.rx_nobufs || snd.rx_nobufs) {
		printf("FAIL: frames dropped for want of a buffer or as malformed\n");
		ok = 0;
	}
	return ok ? 0 : 1;
}
