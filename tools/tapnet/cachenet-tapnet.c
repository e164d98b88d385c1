/* SPDX-License-Identifier: BSD-2-Clause */
/* cachenet-tapnet: a cachenet host on a Linux TAP device, on an
 * interface's queues through AF_XDP (--afxdp, when the library has the
 * backend), or on a DPDK ethdev through libcachenet-dpdk (--dpdk, when
 * the build found libdpdk).
 *
 * The whole stack a user needs to talk to the kernel's TCP through a TAP,
 * AF_XDP or a DPDK port: the device backend (tap.h, afxdp.h, dpdk.h), the
 * fast path (net.h, tcp.h, udp.h) and the connection manager (conn.h:
 * ARP, ping, handshakes, FINs, RST). It runs services (TCP echo, discard,
 * source; UDP echo) and/or TCP clients, and reports every finished
 * connection as one JSON line on stdout with the byte count and SHA-256 of
 * each direction, so a test can check the bytes against what a Linux
 * socket sent or received. At exit it prints a JSON summary with every
 * counter, the pools' buffers still in use, and TSC ticks per frame split
 * into the device's I/O (the TAP's system calls, the AF_XDP rings, the
 * DPDK adapter) and the rest.
 *
 * See README.md ("Talk to Linux through a TAP") and --help. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np, sched_getaffinity */
#endif
#include <arpa/inet.h>
#include <pthread.h>
#include <sched.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cachenet/lab.h"
#ifdef CN_HAVE_AFXDP
#include <poll.h>

#include "cachenet/afxdp.h"
#endif
#ifdef CN_HAVE_DPDK
#include <ftw.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>

#include "cachenet/dpdk.h"
#endif

#define MAX_CLIENT_PORTS 8

enum role { ROLE_ECHO, ROLE_DISCARD, ROLE_SOURCE, ROLE_CLIENT };
static const char *const role_name[] = {"echo", "discard", "source", "client"};

/* One application connection. */
struct app {
	struct app *next;
	struct cn_sock *s;
	enum role role;
	EVP_MD_CTX *rx_md, *tx_md;
	uint64_t rx_bytes, tx_bytes;
	uint64_t tx_target;        /* source/client: bytes to send */
	uint64_t gen;              /* source/client: generator state */
	uint64_t t0_ms;
	bool eof, shut, done;
	/* the TCB's loss-recovery counters, last seen (the TCB may be gone
	 * when the connection is reported) */
	bool sack;
	struct cn_tcp_stats ts;
	uint32_t pend_off, pend_len;
	uint8_t pend[65536];       /* received, not yet echoed / generated, not yet sent */
};

struct opts {
	const char *dev, *pcap, *ready_file;
	const char *afxdp;         /* interface for AF_XDP, or NULL (TAP) */
	char *dpdk;                /* the EAL's arguments (--dpdk), or NULL */
	uint32_t afxdp_queues;
	int afxdp_attach;          /* enum cn_afxdp_attach */
	uint32_t addr;
	uint8_t mac[6];
	bool mac_set;
	struct cn_link_params impair;
	bool impair_on;
	enum cn_tcp_csum csum;
	enum cn_sockbuf_kind sndbuf;
	uint32_t mss, sndbuf_size, rcvbuf_size, time_wait, batch;
	double duration;
	int echo_port, discard_port, source_port, udp_echo_port, udp_sink_port;
	bool bare;                 /* AF_XDP: receive and free, no stack */
	bool busy_poll;            /* never sleep in poll(2) */
	bool tx_multi;             /* cn_afxdp_params.tx_multi */
	uint32_t xdp_ring;         /* cn_afxdp_params.ring_size, 0 = its default */
	bool threads;              /* AF_XDP: one stack per queue, each on a thread */
	bool no_rack_tlp;          /* TCP without RACK-TLP (tcp.h) */
	uint64_t source_bytes;
	uint32_t connect_addr;
	int connect_port;
	uint64_t send_bytes;
	uint32_t count;
	uint32_t parallel;
	uint32_t reass_timeout, connect_after, synack_retries;
	bool quiet;
};

static volatile sig_atomic_t stop_flag;

/* TSC ticks the application spends on its own bytes (SHA-256, the
 * generator), kept apart from the stack's and the TAP's. */
static _Thread_local uint64_t app_tsc;
static bool no_hash; /* --no-hash: count the bytes, hash none */

static void hash_update(EVP_MD_CTX *md, const void *p, size_t n)
{
	if (no_hash)
		return;
	uint64_t t = cn_tsc_begin();
	EVP_DigestUpdate(md, p, n);
	app_tsc += cn_tsc_end() - t;
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* xorshift64*: the byte stream a source or client sends. */
static void gen_fill(uint64_t *st, uint8_t *p, uint32_t n)
{
	uint64_t x = *st;
	uint32_t i = 0;

	for (; i + 8 <= n; i += 8) {
		x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
		uint64_t v = x * 2685821657736338717ull;
		memcpy(p + i, &v, 8);
	}
	if (i < n) {
		x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
		uint64_t v = x * 2685821657736338717ull;
		memcpy(p + i, &v, n - i);
	}
	*st = x;
}

static void hex_digest(EVP_MD_CTX *md, char out[65])
{
	unsigned char d[32];
	unsigned int n = 0;

	EVP_DigestFinal_ex(md, d, &n);
	for (unsigned i = 0; i < 32; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static const char *ip_str(uint32_t a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET_ADDRSTRLEN);
}

static struct app *app_new(struct cn_sock *s, enum role role, uint64_t now)
{
	struct app *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->s = s;
	a->role = role;
	a->rx_md = EVP_MD_CTX_new();
	a->tx_md = EVP_MD_CTX_new();
	if (!a->rx_md || !a->tx_md) {
		EVP_MD_CTX_free(a->rx_md);
		EVP_MD_CTX_free(a->tx_md);
		free(a);
		return NULL;
	}
	EVP_DigestInit_ex(a->rx_md, EVP_sha256(), NULL);
	EVP_DigestInit_ex(a->tx_md, EVP_sha256(), NULL);
	a->t0_ms = now;
	cn_sock_set_udata(s, a);
	return a;
}

/* Report and forget a finished connection (the socket is already closed
 * or aborted by the caller). */
static void app_report(struct app *a, const char *how, int err, uint64_t now, uint32_t raddr,
		       uint16_t rport)
{
	char rx[65], tx[65], ip[INET_ADDRSTRLEN];
	double ms = (double)(now - a->t0_ms);

	hex_digest(a->rx_md, rx);
	hex_digest(a->tx_md, tx);
	printf("{\"event\":\"conn\",\"role\":\"%s\",\"peer\":\"%s:%u\",\"end\":\"%s\",\"error\":\"%s\","
	       "\"rx_bytes\":%" PRIu64 ",\"rx_sha256\":\"%s\",\"tx_bytes\":%" PRIu64
	       ",\"tx_sha256\":\"%s\",\"ms\":%.0f,\"mbit_s\":%.1f,\"sack\":%s,\"rexmit_segs\":%" PRIu64
	       ",\"rto_fired\":%" PRIu64 ",\"fast_rexmit\":%" PRIu64 ",\"sack_acks_out\":%" PRIu64
	       ",\"sack_blocks_in\":%" PRIu64 ",\"sack_rexmit\":%" PRIu64 ",\"ooo_dropped\":%" PRIu64
	       ",\"tlp_probes\":%" PRIu64 ",\"rack_recoveries\":%" PRIu64 ",\"rexmit_lost\":%" PRIu64
	       ",\"dsack_in\":%" PRIu64 ",\"rto_spurious\":%" PRIu64 ",\"tlp_repairs\":%" PRIu64
	       ",\"dup_segs_in\":%" PRIu64 "}\n",
	       role_name[a->role], ip_str(raddr, ip), rport, how, err ? strerror(err) : "", a->rx_bytes,
	       rx, a->tx_bytes, tx, ms,
	       ms > 0 ? (double)(a->rx_bytes + a->tx_bytes) * 8 / (ms * 1000) : 0.0,
	       a->sack ? "true" : "false", a->ts.rexmit_segs, a->ts.rto_fired, a->ts.fast_rexmit,
	       a->ts.sack_acks_out, a->ts.sack_blocks_in, a->ts.sack_rexmit, a->ts.ooo_dropped,
	       a->ts.tlp_probes, a->ts.rack_recoveries, a->ts.rexmit_lost, a->ts.dsack_in,
	       a->ts.rto_spurious, a->ts.tlp_repairs, a->ts.dup_segs_in);
	fflush(stdout);
	EVP_MD_CTX_free(a->rx_md);
	EVP_MD_CTX_free(a->tx_md);
	a->done = true;
}

/* Move bytes for one connection as far as the buffers allow.
 * Returns true when the connection finished (and was closed). */
static bool app_service(struct app *a, uint64_t now)
{
	struct cn_sock *s = a->s;
	uint32_t raddr = 0;
	uint16_t rport = 0;
	int n, err = 0;

	cn_be32_t raddr_be;
	cn_be16_t rport_be;
	cn_sock_addrs(s, NULL, NULL, &raddr_be, &rport_be);
	raddr = CN_BE32_RAW(raddr_be);
	rport = cn_be16toh(rport_be);
	if (a->role == ROLE_CLIENT && cn_sock_state(s) == CN_SOCK_SYN_SENT)
		return false;
	if (cn_sock_tcb(s)) {
		struct cn_tcp_info ti;
		cn_tcp_get_info(cn_sock_tcb(s), &ti);
		a->sack = ti.sack;
		a->ts = *cn_tcp_stats(cn_sock_tcb(s));
	}
	for (int guard = 0; guard < 64; guard++) {
		bool progress = false;
		/* Output: what is pending (echo) or generated (source, client). */
		if (a->pend_off == a->pend_len && !a->shut &&
		    (a->role == ROLE_SOURCE || a->role == ROLE_CLIENT) &&
		    a->tx_bytes + a->pend_len - a->pend_off < a->tx_target) {
			uint64_t left = a->tx_target - a->tx_bytes;
			uint32_t k = left < sizeof(a->pend) ? (uint32_t)left : sizeof(a->pend);
			uint64_t t = cn_tsc_begin();
			gen_fill(&a->gen, a->pend, k);
			app_tsc += cn_tsc_end() - t;
			a->pend_off = 0;
			a->pend_len = k;
		}
		if (a->pend_off < a->pend_len) {
			n = cn_sock_send(s, a->pend + a->pend_off, a->pend_len - a->pend_off, now);
			if (n < 0) {
				err = -n;
				goto failed;
			}
			if (n > 0) {
				hash_update(a->tx_md, a->pend + a->pend_off, (size_t)n);
				a->pend_off += (uint32_t)n;
				a->tx_bytes += (uint64_t)n;
				progress = true;
			}
		}
		if ((a->role == ROLE_SOURCE || a->role == ROLE_CLIENT) && !a->shut &&
		    a->tx_bytes == a->tx_target) {
			cn_sock_shutdown(s, now);
			a->shut = true;
		}
		/* Input: an echo takes more only when the last chunk is out. */
		if (!a->eof && (a->role != ROLE_ECHO || a->pend_off == a->pend_len)) {
			uint8_t sink[65536];
			uint8_t *dst = a->role == ROLE_ECHO ? a->pend : sink;
			n = cn_sock_recv(s, dst, sizeof(sink), now);
			if (n > 0) {
				hash_update(a->rx_md, dst, (size_t)n);
				a->rx_bytes += (uint64_t)n;
				if (a->role == ROLE_ECHO) {
					a->pend_off = 0;
					a->pend_len = (uint32_t)n;
				}
				progress = true;
			} else if (n == 0) {
				a->eof = true;
				progress = true;
			} else if (n != -EAGAIN) {
				err = -n;
				goto failed;
			}
		}
		if (!progress)
			break;
	}
	/* Done: the peer finished, everything owed is handed to the stack. */
	if (a->eof && a->pend_off == a->pend_len &&
	    (a->role == ROLE_ECHO || a->role == ROLE_DISCARD || a->tx_bytes == a->tx_target)) {
		cn_sock_close(s, now); /* our FIN follows the queued bytes */
		app_report(a, "fin", 0, now, raddr, rport);
		return true;
	}
	if (cn_sock_state(s) == CN_SOCK_CLOSED && cn_sock_error(s)) {
		err = cn_sock_error(s);
		goto failed;
	}
	return false;
failed:
	cn_sock_close(s, now);
	app_report(a, "error", err, now, raddr, rport);
	return true;
}

/* ------------------------------------------------------------ UDP echo */

struct udp_echo {
	struct cn_udp_sock *s;
	uint64_t dgrams, bytes, send_fail;
};

static void udp_done(void *arg)
{
	cn_mbuf_free_chain(arg);
}

static void udp_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct udp_echo *u = arg;
	int rc;

	u->dgrams++;
	u->bytes += m->pkt_len;
	/* Zero-copy echo: the reply references the received buffer, freed
	 * at its TX completion. */
	rc = cn_udp_sendto(u->s, pi->saddr, pi->sport, pi->frame + 6, m->data, m->len,
			   udp_done, m);
	if (rc < 0) {
		u->send_fail++; /* done is not called on error: the buffer is ours */
		cn_mbuf_free_chain(m);
	}
}

static void udp_sink_rx(void *arg, struct cn_mbuf *m, const struct cn_pkt_info *pi)
{
	struct udp_echo *u = arg;
	(void)pi;
	u->dgrams++;
	u->bytes += m->pkt_len;
	cn_mbuf_free_chain(m);
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: cachenet-tapnet --dev IF | --afxdp IF[:QUEUES] | --dpdk EAL-ARGS --addr IP [options]\n"
		"                      SERVICES|CLIENT\n"
		"  A cachenet host on a TAP interface, on a Linux interface through\n"
		"  AF_XDP (run it in the interface's network namespace, as root or with\n"
		"  CAP_NET_ADMIN), or on a DPDK port.\n"
		"  --dev IF            TAP interface to attach (created if missing)\n"
		"  --afxdp IF[:QUEUES] AF_XDP sockets on IF's queues 0..QUEUES-1 (default 1),\n"
		"                      polled by the one stack, which transmits on queue 0\n"
		"  --threads           (with --afxdp IF:QUEUES) one stack per queue, each on\n"
		"                      its own thread pinned to the i-th CPU this process may\n"
		"                      use; the device steers each flow to a queue (services\n"
		"                      only: a client's replies could come on another queue)\n"
		"  --xdp-mode M        auto (native, else generic), native, generic\n"
		"  --tx-multi          (with --afxdp) a frame may take several TX descriptors\n"
		"                      in copy mode too (cn_afxdp_params.tx_multi)\n"
		"  --xdp-ring N        (with --afxdp) RX, TX and completion ring entries, a\n"
		"                      power of two in 64..16384 (default 2048); as many\n"
		"                      UMEM chunks are posted to the fill ring\n"
		"  --dpdk EAL-ARGS     a DPDK EAL started with these arguments (one string,\n"
		"                      split at blanks), the stack on the first port it\n"
		"                      probed, polled (a 20 us nap after 64 empty polls\n"
		"                      unless --busy-poll), e.g. \"--no-huge --no-pci -l 1\n"
		"                      -m 512 --file-prefix tn --vdev net_af_xdp0,iface=eth1\"\n"
		"                      (no --pcap, --impair or --threads with it)\n"
		"  --addr IP           the stack's IPv4 address on that link\n"
		"  --mac MAC           its Ethernet address (default 02:00:<IP>)\n"
		"  --pcap FILE         capture both directions\n"
		"  --impair loss=P,reorder=P,duplicate=P,corrupt=P[,seed=N]\n"
		"                      impair frames inside the device backend (both directions)\n"
		"  --csum MODE         TX checksum: offload (default; filled during the TAP\n"
		"                      gather), stored (with --sndbuf ring), fused, separate\n"
		"  --sndbuf chain|ring send buffer kind (default chain)\n"
		"  --sndbuf-size N, --rcvbuf-size N  bytes (default 1 MB each)\n"
		"  --mss N             MSS we advertise (default 1460)\n"
		"  --time-wait MS      TIME_WAIT length (default 2000)\n"
		"  --reass-timeout MS  IPv4 reassembly timeout (default 30000)\n"
		"  --synack-retries N  SYN-ACK retransmissions of a half-open connection\n"
		"                      (default 5; past the backlog: SYN cookies)\n"
		"  --batch N           frames per device poll (default 64, at most 256)\n"
		"  --no-rack-tlp       TCP loss recovery without RACK-TLP (tail-loss probes,\n"
		"                      time-based loss detection): SACK and RTO only\n"
		"  --busy-poll         never sleep in poll(2): spin on the device (one CPU)\n"
		"  --duration S        exit after S seconds (default: at SIGINT/SIGTERM, or\n"
		"                      when every client connection is done)\n"
		"  --ready-file F      create F once the services listen\n"
		"  --quiet             no per-connection lines\n"
		"  --no-hash           no SHA-256 of the streams (the reported digests are\n"
		"                      those of nothing): the application's cost left out\n"
		" services:\n"
		"  --echo PORT         TCP echo (RFC 862)\n"
		"  --discard PORT      TCP sink: hashes what arrives\n"
		"  --source PORT:BYTES TCP source: sends BYTES generated bytes, then FIN\n"
		"  --udp-echo PORT     UDP echo, zero-copy\n"
		"  --udp-sink PORT     UDP sink: counts datagrams and frees them\n"
		"  --bare              (with --afxdp or --dpdk) no stack: every frame received is\n"
		"                      freed at once; the device path's own rate\n"
		" client:\n"
		"  --connect IP:PORT   connect to a server (e.g. the kernel's)\n"
		"  --send BYTES        generated bytes to send, then FIN; reads until the\n"
		"                      peer's FIN and hashes what it read\n"
		"  --count N           N connections in a row (default 1)\n"
		"  --connect-after MS  wait MS before the first connection\n"
		"  --parallel N        N at a time (default 1)\n"
		"Output: a JSON line per finished connection (bytes and SHA-256 each way),\n"
		"and a summary line at exit.\n");
}

/* A count or size: a number with an optional k/K, M or G (10^3, 10^6,
 * 10^9); exits with status 2, saying why, when it is not one or is
 * negative or beyond 2^64 (the cast would be undefined). */
static uint64_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (*end == 'k' || *end == 'K')
		v *= 1e3, end++;
	else if (*end == 'M')
		v *= 1e6, end++;
	else if (*end == 'G')
		v *= 1e9, end++;
	if (end == s || *end || !(v >= 0 && v < 18446744073709551616.0)) {
		fprintf(stderr, "cachenet-tapnet: bad size '%s'\n", s);
		exit(2);
	}
	return (uint64_t)v;
}

/* parse_size() of option @p opt's value @p s, which must be at most
 * @p max; exits with status 2, saying so, when it is larger. */
static uint32_t parse_num(const char *opt, const char *s, uint32_t max)
{
	uint64_t v = parse_size(s);
	if (v > max) {
		fprintf(stderr, "cachenet-tapnet: %s %s: at most %" PRIu32 "\n", opt, s, max);
		exit(2);
	}
	return (uint32_t)v;
}

static uint32_t parse_ip(const char *s)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1) {
		fprintf(stderr, "cachenet-tapnet: bad IPv4 address '%s'\n", s);
		exit(2);
	}
	return a.s_addr;
}

static int parse_port(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == 0 || *end || v < 1 || v > 65535) {
		fprintf(stderr, "cachenet-tapnet: bad port '%s' (1..65535)\n", s);
		exit(2);
	}
	return (int)v;
}

/* "A:B" -> A (NUL-terminated in place) and B; exits with @p usage if no ':'. */
static char *split_last_colon(char *arg, const char *usage_text)
{
	char *colon = strrchr(arg, ':');
	if (!colon) {
		fprintf(stderr, "cachenet-tapnet: expected %s, got '%s'\n", usage_text, arg);
		exit(2);
	}
	*colon = 0;
	return colon + 1;
}

static void parse_impair(const char *s, struct cn_link_params *p)
{
	char *dup = strdup(s), *save = NULL;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq)
			goto bad;
		*eq = 0;
		double v = strtod(eq + 1, NULL);
		if (!strcmp(tok, "loss"))
			p->loss = v;
		else if (!strcmp(tok, "reorder"))
			p->reorder = v;
		else if (!strcmp(tok, "duplicate"))
			p->duplicate = v;
		else if (!strcmp(tok, "corrupt"))
			p->corrupt = v;
		else if (!strcmp(tok, "seed"))
			p->rng_start = strtoull(eq + 1, NULL, 0);
		else
			goto bad;
	}
	free(dup);
	return;
bad:
	fprintf(stderr, "cachenet-tapnet: bad --impair '%s'\n", s);
	exit(2);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"dev", 1, 0, 'd'}, {"addr", 1, 0, 'a'}, {"mac", 1, 0, 'm'}, {"pcap", 1, 0, 'p'},
		{"impair", 1, 0, 'i'}, {"csum", 1, 0, 'c'}, {"sndbuf", 1, 0, 'b'},
		{"sndbuf-size", 1, 0, 'S'}, {"rcvbuf-size", 1, 0, 'R'}, {"mss", 1, 0, 'M'},
		{"time-wait", 1, 0, 'W'}, {"batch", 1, 0, 'B'}, {"duration", 1, 0, 'D'},
		{"ready-file", 1, 0, 'r'}, {"echo", 1, 0, 'e'}, {"discard", 1, 0, 'x'},
		{"source", 1, 0, 's'}, {"udp-echo", 1, 0, 'u'}, {"connect", 1, 0, 'C'},
		{"send", 1, 0, 'n'}, {"count", 1, 0, 'N'}, {"parallel", 1, 0, 'P'},
		{"quiet", 0, 0, 'q'}, {"help", 0, 0, 'h'}, {"afxdp", 1, 0, 'X'},
		{"xdp-mode", 1, 0, 'Y'}, {"udp-sink", 1, 0, 'U'}, {"bare", 0, 0, 'Z'},
		{"busy-poll", 0, 0, 'Q'}, {"no-rack-tlp", 0, 0, 'L'}, {"reass-timeout", 1, 0, 'T'},
		{"connect-after", 1, 0, 'A'}, {"synack-retries", 1, 0, 'K'}, {"no-hash", 0, 0, 'H'},
		{"threads", 0, 0, 'J'}, {"dpdk", 1, 0, 'E'}, {"tx-multi", 0, 0, 'G'},
		{"xdp-ring", 1, 0, 'O'},
		{0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	o->csum = CN_TCP_CSUM_OFFLOAD;
	o->sndbuf = CN_SOCKBUF_CHAIN;
	o->echo_port = o->discard_port = o->source_port = o->udp_echo_port = o->udp_sink_port = -1;
	o->connect_port = -1;
	o->count = 1;
	o->parallel = 1;
	o->batch = 64;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dev = optarg; break;
		case 'a': o->addr = parse_ip(optarg); break;
		case 'm': {
			unsigned v[6];
			if (sscanf(optarg, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) {
				fprintf(stderr, "cachenet-tapnet: bad MAC '%s'\n", optarg);
				exit(2);
			}
			for (int i = 0; i < 6; i++)
				o->mac[i] = (uint8_t)v[i];
			o->mac_set = true;
			break;
		}
		case 'p': o->pcap = optarg; break;
		case 'i': parse_impair(optarg, &o->impair); o->impair_on = true; break;
		case 'c':
			if (!strcmp(optarg, "offload")) o->csum = CN_TCP_CSUM_OFFLOAD;
			else if (!strcmp(optarg, "stored")) o->csum = CN_TCP_CSUM_STORED;
			else if (!strcmp(optarg, "fused")) o->csum = CN_TCP_CSUM_FUSED;
			else if (!strcmp(optarg, "separate")) o->csum = CN_TCP_CSUM_SEPARATE;
			else { fprintf(stderr, "cachenet-tapnet: bad --csum '%s'\n", optarg); exit(2); }
			break;
		case 'b':
			if (!strcmp(optarg, "chain")) o->sndbuf = CN_SOCKBUF_CHAIN;
			else if (!strcmp(optarg, "ring")) o->sndbuf = CN_SOCKBUF_RING;
			else { fprintf(stderr, "cachenet-tapnet: bad --sndbuf '%s'\n", optarg); exit(2); }
			break;
		case 'S': o->sndbuf_size = parse_num("--sndbuf-size", optarg, UINT32_MAX); break;
		case 'R': o->rcvbuf_size = parse_num("--rcvbuf-size", optarg, UINT32_MAX); break;
		case 'M': o->mss = parse_num("--mss", optarg, UINT16_MAX); break;
		case 'W': o->time_wait = parse_num("--time-wait", optarg, UINT32_MAX); break;
		case 'B': o->batch = parse_num("--batch", optarg, 256); break;
		case 'D': o->duration = strtod(optarg, NULL); break;
		case 'r': o->ready_file = optarg; break;
		case 'e': o->echo_port = parse_port(optarg); break;
		case 'x': o->discard_port = parse_port(optarg); break;
		case 's': /* PORT:BYTES */
			o->source_bytes = parse_size(split_last_colon(optarg, "--source PORT:BYTES"));
			o->source_port = parse_port(optarg);
			break;
		case 'u': o->udp_echo_port = parse_port(optarg); break;
		case 'C': /* IP:PORT */
			o->connect_port = parse_port(split_last_colon(optarg, "--connect IP:PORT"));
			o->connect_addr = parse_ip(optarg);
			break;
		case 'n': o->send_bytes = parse_size(optarg); break;
		case 'N': o->count = parse_num("--count", optarg, UINT32_MAX); break;
		case 'P': o->parallel = parse_num("--parallel", optarg, UINT32_MAX); break;
		case 'q': o->quiet = true; break;
		case 'T': o->reass_timeout = parse_num("--reass-timeout", optarg, UINT32_MAX); break;
		case 'A': o->connect_after = parse_num("--connect-after", optarg, UINT32_MAX); break;
		case 'K': o->synack_retries = parse_num("--synack-retries", optarg, UINT32_MAX); break;
		case 'U': o->udp_sink_port = parse_port(optarg); break;
		case 'Z': o->bare = true; break;
		case 'Q': o->busy_poll = true; break;
		case 'L': o->no_rack_tlp = true; break;
		case 'H': no_hash = true; break;
		case 'J': o->threads = true; break;
		case 'G': o->tx_multi = true; break;
		case 'O': o->xdp_ring = parse_num("--xdp-ring", optarg, 16384); break;
		case 'E': o->dpdk = optarg; break;
		case 'X': {
			char *colon = strchr(optarg, ':');
			o->afxdp = optarg;
			o->afxdp_queues = 1;
			if (colon) {
				*colon = 0;
				o->afxdp_queues = parse_num("--afxdp IF:QUEUES", colon + 1, 64);
			}
			break;
		}
		case 'Y':
			if (!strcmp(optarg, "auto")) o->afxdp_attach = 0;
			else if (!strcmp(optarg, "native")) o->afxdp_attach = 1;
			else if (!strcmp(optarg, "generic")) o->afxdp_attach = 2;
			else { fprintf(stderr, "cachenet-tapnet: bad --xdp-mode '%s'\n", optarg); exit(2); }
			break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (!!o->dev + !!o->afxdp + !!o->dpdk != 1 || !o->addr) {
		usage(stderr);
		exit(2);
	}
#ifndef CN_HAVE_AFXDP
	if (o->afxdp) {
		fprintf(stderr, "cachenet-tapnet: --afxdp: this build has no AF_XDP backend "
				"(libxdp-dev/libbpf-dev missing or -Dafxdp=disabled)\n");
		exit(77);
	}
#endif
	if (o->threads && (!o->afxdp || o->connect_port >= 0 || o->pcap)) {
		fprintf(stderr, "cachenet-tapnet: --threads needs --afxdp, and takes no --connect "
				"(replies would reach another queue's stack) and no --pcap\n");
		exit(2);
	}
	if ((o->tx_multi || o->xdp_ring) && !o->afxdp) {
		fprintf(stderr, "cachenet-tapnet: --tx-multi and --xdp-ring need --afxdp\n");
		exit(2);
	}
	if (o->bare && !o->afxdp && !o->dpdk) {
		fprintf(stderr, "cachenet-tapnet: --bare needs --afxdp or --dpdk\n");
		exit(2);
	}
#ifndef CN_HAVE_DPDK
	if (o->dpdk) {
		fprintf(stderr, "cachenet-tapnet: --dpdk: this build has no DPDK adapter "
				"(libdpdk-dev missing or -Ddpdk=disabled)\n");
		exit(77);
	}
#endif
	if (o->dpdk && (o->pcap || o->impair_on)) {
		fprintf(stderr, "cachenet-tapnet: --dpdk takes no --pcap and no --impair (the DPDK "
				"adapter has neither)\n");
		exit(2);
	}
	if (!o->mac_set) {
		o->mac[0] = 0x02;
		o->mac[1] = 0x00;
		memcpy(o->mac + 2, &o->addr, 4);
	}
	if (o->csum == CN_TCP_CSUM_STORED && o->sndbuf != CN_SOCKBUF_RING) {
		fprintf(stderr, "cachenet-tapnet: --csum stored needs --sndbuf ring\n");
		exit(2);
	}
}

/* ------------------------------------------------------------ device */

/* The backend a stack runs on: a TAP, AF_XDP queues q0 .. q0 + nq - 1
 * (polled by this thread's stack; it transmits on queue q0), or a DPDK
 * port's one queue. With --threads each thread's dev is one queue of the
 * same struct cn_afxdp. */
struct dev {
	struct cn_tap *tap;
	uint32_t batch;           /* frames per poll call */
#ifdef CN_HAVE_AFXDP
	struct cn_afxdp *xdp;
	uint32_t q0, nq;
#endif
#ifdef CN_HAVE_DPDK
	struct cn_dpdk *dpdk;
	uint32_t empty;           /* polls in a row that found no frame */
	/* rounds that moved no frame (dev_round_idle): the adapter's
	 * counters at the last round's end, and the device ticks of the idle
	 * rounds, left out of the summary's device ticks */
	uint64_t mark_moved, mark_rx_tsc, mark_tx_tsc, idle_rx_tsc, idle_tx_tsc;
#endif
};

static const char *dev_name(const struct dev *d)
{
#ifdef CN_HAVE_DPDK
	if (d->dpdk)
		return "dpdk";
#endif
	return d->tap ? "tap" : "afxdp";
}

static int dev_wait(struct dev *d, int ms)
{
#ifdef CN_HAVE_DPDK
	/* A poll-mode port has no descriptor to sleep on: poll while frames
	 * come, and once 64 polls in a row found none, nap 20 us before each
	 * poll so that an idle host leaves the CPU to its peers. */
	if (d->dpdk) {
		if (ms > 0 && d->empty >= 64)
			nanosleep(&(struct timespec){.tv_nsec = 20000}, NULL);
		return 1;
	}
#endif
#ifdef CN_HAVE_AFXDP
	if (d->xdp) {
		struct pollfd pfd[64];
		if (d->nq == 1)
			return cn_afxdp_wait(cn_afxdp_queue(d->xdp, d->q0), ms);
		for (uint32_t i = 0; i < d->nq; i++) {
			pfd[i].fd = cn_afxdp_fd(cn_afxdp_queue(d->xdp, d->q0 + i));
			pfd[i].events = POLLIN;
		}
		return poll(pfd, d->nq, ms);
	}
#endif
	return cn_tap_wait(d->tap, ms);
}

static void dev_poll(struct dev *d, struct cn_net *net, uint64_t now, bool bare)
{
	(void)bare; /* AF_XDP and DPDK only */
#ifdef CN_HAVE_DPDK
	if (d->dpdk) {
		struct cn_mbuf *m[256];
		unsigned n, all = 0;
		if (bare) {
			all = cn_dpdk_rx_burst(d->dpdk, m, 256);
			cn_mbuf_free_bulk(m, all);
		} else {
			for (int r = 0; r < 64; r++) {
				all += n = cn_dpdk_poll(d->dpdk, net, now);
				if (n < d->batch)
					break;
			}
		}
		d->empty = all ? 0 : d->empty + 1;
		return;
	}
#endif
#ifdef CN_HAVE_AFXDP
	if (d->xdp && bare) {
		struct cn_mbuf *m[256];
		for (uint32_t i = 0; i < d->nq; i++) {
			unsigned n = cn_afxdp_rx_burst(cn_afxdp_queue(d->xdp, d->q0 + i), m, 256);
			cn_mbuf_free_bulk(m, n);
		}
		return;
	}
	/* A poll that returns the whole batch may leave frames behind: call
	 * again (bounded, so that a flood still lets the timers run). */
	if (d->xdp) {
		for (uint32_t i = 0; i < d->nq; i++)
			for (int r = 0; r < 64 && cn_afxdp_poll(cn_afxdp_queue(d->xdp, d->q0 + i), net, now) ==
							  d->batch;
			     r++)
				;
		return;
	}
#endif
	for (int r = 0; r < 64 && cn_tap_poll(d->tap, net, now) == d->batch; r++)
		;
}

static void dev_flush(struct dev *d)
{
#ifdef CN_HAVE_DPDK
	if (d->dpdk) {
		cn_dpdk_flush(d->dpdk);
		return;
	}
#endif
#ifdef CN_HAVE_AFXDP
	if (d->xdp) {
		for (uint32_t i = 0; i < d->nq; i++)
			cn_afxdp_flush(cn_afxdp_queue(d->xdp, d->q0 + i));
		return;
	}
#endif
	cn_tap_flush(d->tap);
}

/* AF_XDP: flush until the kernel has completed every frame put on the TX
 * rings of @p d: a stack's packet posted in several descriptors
 * (multi-buffer TX, --tx-multi or zero-copy) is held until its completion
 * and then freed into its stack, so the stack must be destroyed after
 * (afxdp.h, cn_afxdp_close). @return true when every frame completed
 * (always for TAP and DPDK), false if some had not after a second. */
static bool dev_settle(struct dev *d)
{
	dev_flush(d);
#ifdef CN_HAVE_AFXDP
	for (uint64_t end = now_ms() + 1000; d->xdp; usleep(1000)) {
		bool done = true;
		for (uint32_t i = 0; i < d->nq; i++) {
			struct cn_afxdp_queue *q = cn_afxdp_queue(d->xdp, d->q0 + i);
			cn_afxdp_flush(q);
			const struct cn_afxdp_stats *st = cn_afxdp_stats(q);
			done &= st->tx_completed == st->tx_frames;
		}
		if (done || now_ms() >= end)
			return done;
	}
#endif
	return true;
}

/* DPDK: a poll-mode port is polled every round, so a round that moved no
 * frame is idle polling; its ticks are kept apart from the busy ones
 * (and its device ticks from the summary's), so that the per-frame
 * figures count work, as with TAP and AF_XDP, where a round follows a
 * wake-up. Returns true when the round that ended now was idle (never
 * for TAP and AF_XDP); call once before the first round to mark. */
static bool dev_round_idle(struct dev *d)
{
#ifdef CN_HAVE_DPDK
	if (d->dpdk) {
		const struct cn_dpdk_stats *s = cn_dpdk_stats(d->dpdk);
		uint64_t moved = s->rx_frames + s->rx_nobufs + s->rx_bad_len + s->tx_frames +
				 s->tx_full + s->tx_nobufs;
		bool idle = moved == d->mark_moved;
		if (idle) {
			d->idle_rx_tsc += s->rx_tsc - d->mark_rx_tsc;
			d->idle_tx_tsc += s->tx_tsc - d->mark_tx_tsc;
		}
		d->mark_moved = moved;
		d->mark_rx_tsc = s->rx_tsc;
		d->mark_tx_tsc = s->tx_tsc;
		return idle;
	}
#endif
	(void)d;
	return false;
}

/* The counters the summary prints, in the TAP's terms: for AF_XDP,
 * "reads" and "writes" are the system calls (fill-ring wake-ups, TX
 * kicks) and the TSC counts cover the whole RX burst / TX path; for DPDK
 * they are the rx_burst calls that found frames and the tx_burst calls,
 * and the TSC counts those of the adapter in the busy rounds. */
struct dev_sum {
	uint64_t rx_frames, tx_frames, rx_bytes, tx_bytes, rx_reads, rx_eagain, rx_nobufs;
	uint64_t tx_writes, tx_eagain, tx_errors, rx_tsc, tx_tsc;
	uint64_t k_drops;          /* AF_XDP: frames the kernel dropped for lack of room;
				      DPDK: the ethdev's imissed + ierrors + rx_nombuf */
	uint32_t umem_in_use;      /* AF_XDP: chunks out with the stack or the app;
				      DPDK: received rte_mbufs the stack holds */
	uint32_t dev_held;         /* AF_XDP: chunks the backend holds (posted to
				      the fill ring, or TX in flight) */
	uint64_t tx_zero_copy, tx_payload_in_place, tx_copied; /* AF_XDP: how frames left */
	struct cn_link_stats itx, irx;
};

static void dev_sum(struct dev *d, struct dev_sum *s)
{
	memset(s, 0, sizeof(*s));
#ifdef CN_HAVE_DPDK
	if (d->dpdk) {
		const struct cn_dpdk_stats *q = cn_dpdk_stats(d->dpdk);
		*s = (struct dev_sum){
			.rx_frames = q->rx_frames, .tx_frames = q->tx_frames,
			.rx_bytes = q->rx_bytes, .tx_bytes = q->tx_bytes,
			.rx_reads = q->rx_bursts, .rx_eagain = q->rx_empty,
			.rx_nobufs = q->rx_nobufs + q->rx_bad_len, .tx_writes = q->tx_bursts,
			.tx_eagain = q->tx_full + q->tx_nobufs, .tx_errors = q->tx_too_long,
			.rx_tsc = q->rx_tsc - d->idle_rx_tsc, .tx_tsc = q->tx_tsc - d->idle_tx_tsc,
			.umem_in_use = (uint32_t)(q->rx_frames - q->rx_freed)};
		/* what the driver itself dropped: frames it found no room or
		 * buffer for on receive, frames it failed to send */
		struct rte_eth_stats es;
		if (rte_eth_stats_get(cn_dpdk_info(d->dpdk)->port_id, &es) == 0) {
			s->k_drops = es.imissed + es.ierrors + es.rx_nombuf;
			s->tx_errors += es.oerrors;
		}
		return;
	}
#endif
#ifdef CN_HAVE_AFXDP
	if (d->xdp) {
		struct cn_mbuf_pool_stats ps;
		uint32_t held = cn_afxdp_held(d->xdp);
		for (uint32_t i = 0; i < cn_afxdp_info(d->xdp)->queues; i++) {
			const struct cn_afxdp_stats *q = cn_afxdp_stats(cn_afxdp_queue(d->xdp, i));
			s->rx_frames += q->rx_frames;
			s->tx_frames += q->tx_frames;
			s->rx_bytes += q->rx_bytes;
			s->tx_bytes += q->tx_bytes;
			s->rx_reads += q->rx_wakeups;
			s->rx_eagain += q->rx_empty;
			s->rx_nobufs += q->rx_nobufs + q->rx_nombuf; /* refills and frames */
			s->tx_writes += q->tx_kicks;
			s->tx_eagain += q->tx_full + q->tx_nobufs;
			s->tx_errors += q->tx_kick_errors;
			s->tx_zero_copy += q->tx_zero_copy;
			s->tx_payload_in_place += q->tx_payload_in_place;
			s->tx_copied += q->tx_copied;
			s->rx_tsc += q->rx_tsc;
			s->tx_tsc += q->tx_tsc;
			s->k_drops += q->k_rx_dropped + q->k_rx_ring_full + q->k_fill_empty;
			s->itx.frames += q->impair_tx.frames;
			s->itx.lost += q->impair_tx.lost;
			s->itx.reordered += q->impair_tx.reordered;
			s->itx.duplicated += q->impair_tx.duplicated;
			s->itx.corrupted += q->impair_tx.corrupted;
			s->irx.frames += q->impair_rx.frames;
			s->irx.lost += q->impair_rx.lost;
			s->irx.reordered += q->impair_rx.reordered;
			s->irx.duplicated += q->impair_rx.duplicated;
			s->irx.corrupted += q->impair_rx.corrupted;
		}
		cn_mbuf_pool_stats(cn_afxdp_pool(d->xdp), &ps);
		s->umem_in_use = ps.in_use - held;
		s->dev_held = held;
		return;
	}
#endif
	const struct cn_tap_stats *t = cn_tap_stats(d->tap);
	s->rx_frames = t->rx_frames;
	s->tx_frames = t->tx_frames;
	s->rx_bytes = t->rx_bytes;
	s->tx_bytes = t->tx_bytes;
	s->rx_reads = t->rx_reads;
	s->rx_eagain = t->rx_eagain;
	s->rx_nobufs = t->rx_nobufs;
	s->tx_writes = t->tx_writes;
	s->tx_eagain = t->tx_eagain;
	s->tx_errors = t->tx_errors;
	s->rx_tsc = t->rx_tsc;
	s->tx_tsc = t->tx_tsc;
	s->itx = t->impair_tx;
	s->irx = t->impair_rx;
}

/* ------------------------------------------------------------ main */

struct listener {
	struct cn_sock *s;
	enum role role;
};

/* One stack and what runs on it: with --threads one per AF_XDP queue,
 * each on its own thread and CPU; else one. A host touches only its own
 * stack, connections and device queue (the pools are shared through
 * their per-thread caches). */
struct host {
	uint32_t id;
	const struct opts *o;
	struct dev dv;
	struct cn_net *net;
	struct cn_conn *conn;
	struct listener ls[3];
	unsigned nls;
	struct app *apps;
	struct udp_echo ue, usink;
	uint32_t started, finished, live, reass_peak;
	uint64_t loops, busy_tsc, app_tsc, wall_tsc;
	uint64_t idle_loops, idle_tsc; /* DPDK: rounds that moved no frame */
	double cpu_s;             /* this thread's CPU time (--threads) */
	int cpu;                  /* the CPU it was pinned to, or -1 */
	bool unsettled;           /* TX frames not completed at the end (dev_settle) */
	struct cn_mbuf_pool *pools[3];
	pthread_t th;
	int rc;
};

/* Create the host's stack, connection manager, listeners and UDP
 * sockets. @return 0 or 1 (printed why). */
static int host_init(struct host *h, struct cn_mbuf_pool *mp, struct cn_mbuf_pool *cp,
		     struct cn_pcap *pcap)
{
	const struct opts *o = h->o;
	/* IPv4 reassembly (4 MB of fragment buffers, 1 MB per source) and
	 * fragmentation at the link's MTU: pings and UDP datagrams up to
	 * 65,507 bytes are answered. */
	struct cn_net_params np = {.addr = CN_BE32_FROM_RAW(o->addr), .mpool = mp, .cpool = cp, .tx_descs = 4096,
				   .max_conns = 1024, .mtu = 1500, .reass_mem = 4u << 20,
				   .reass_max = 2048, .reass_timeout = o->reass_timeout};
#ifdef CN_HAVE_AFXDP
	if (h->dv.xdp) {
		np.xmit = cn_afxdp_xmit_hook;
		np.xmit_arg = cn_afxdp_queue(h->dv.xdp, h->dv.q0);
	}
#endif
#ifdef CN_HAVE_DPDK
	if (h->dv.dpdk) {
		np.xmit = cn_dpdk_xmit_hook;
		np.xmit_arg = h->dv.dpdk;
	}
#endif
	if (!np.xmit) {
		struct cn_tap_params tp = {.ifname = o->dev, .batch = o->batch, .mpool = mp,
					   .cpool = cp, .pcap = pcap,
					   .impair = o->impair_on ? &o->impair : NULL};
		h->dv.tap = cn_tap_open(&tp);
		if (!h->dv.tap) {
			fprintf(stderr, "cachenet-tapnet: cannot open TAP '%s': %s\n", o->dev, strerror(errno));
			return errno == EPERM || errno == EACCES || errno == ENOENT ? 77 : 1;
		}
		np.xmit = cn_tap_xmit_hook;
		np.xmit_arg = h->dv.tap;
	}
	memcpy(np.mac, o->mac, 6);
	h->net = cn_net_create(&np);
	if (!h->net) {
		fprintf(stderr, "cachenet-tapnet: cn_net_create: %s\n", strerror(errno));
		return 1;
	}
	struct cn_conn_params cpar = {
		.tcp = {.csum = o->csum,
			.sndbuf = o->sndbuf,
			.sndbuf_size = o->sndbuf_size,
			.ring_copy = o->csum == CN_TCP_CSUM_STORED ? CN_SBRING_COPY_CSUM : CN_SBRING_COPY_PLAIN,
			.rcvbuf_size = o->rcvbuf_size,
			.ooo_max = 256,
			.delack_ticks = 40,
			.rto_init = 1000,
			.rto_min = 200,
			.rto_max = 60000,
			.no_rack_tlp = o->no_rack_tlp},
		.mss = (uint16_t)o->mss,
		.max_socks = 1024,
		.time_wait = o->time_wait,
		.syncache_max = 512,
		.synack_retries = o->synack_retries,
	};
	{
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		cpar.isn_secret = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ (uint64_t)getpid();
	}
	h->conn = cn_conn_create(h->net, &cpar);
	if (!h->conn) {
		fprintf(stderr, "cachenet-tapnet: cn_conn_create: %s\n", strerror(errno));
		return 1;
	}
	const int ports[3] = {o->echo_port, o->discard_port, o->source_port};
	for (int r = 0; r < 3; r++) {
		if (ports[r] < 0)
			continue;
		h->ls[h->nls].s = cn_sock_listen(h->conn, CN_BE16((uint16_t)ports[r]), 128);
		h->ls[h->nls].role = (enum role)r;
		if (!h->ls[h->nls].s) {
			fprintf(stderr, "cachenet-tapnet: listen %d: %s\n", ports[r], strerror(errno));
			return 1;
		}
		h->nls++;
	}
	if (o->udp_echo_port >= 0) {
		struct cn_udp_params up = {.lport = CN_BE16((uint16_t)o->udp_echo_port), .tx_csum = true,
					   .rx_csum = true, .rx = udp_rx, .rx_arg = &h->ue};
		h->ue.s = cn_udp_open(h->net, &up);
		if (!h->ue.s) {
			fprintf(stderr, "cachenet-tapnet: udp %d: %s\n", o->udp_echo_port, strerror(errno));
			return 1;
		}
	}
	if (o->udp_sink_port >= 0) {
		struct cn_udp_params up = {.lport = CN_BE16((uint16_t)o->udp_sink_port), .rx_csum = true,
					   .rx = udp_sink_rx, .rx_arg = &h->usink};
		h->usink.s = cn_udp_open(h->net, &up);
		if (!h->usink.s) {
			fprintf(stderr, "cachenet-tapnet: udp %d: %s\n", o->udp_sink_port, strerror(errno));
			return 1;
		}
	}
	return 0;
}

/* Accept what the listeners hold and start the clients due. */
static void host_accept(struct host *h, uint64_t now, uint64_t t_start)
{
	const struct opts *o = h->o;

	for (unsigned i = 0; i < h->nls; i++) {
		struct cn_sock *s;
		while ((s = cn_sock_accept(h->ls[i].s))) {
			struct app *a = app_new(s, h->ls[i].role, now);
			if (!a) {
				cn_sock_abort(s, now);
				continue;
			}
			if (a->role == ROLE_SOURCE) {
				a->tx_target = o->source_bytes;
				a->gen = 0x9e3779b97f4a7c15ull ^ ++h->started;
			}
			a->next = h->apps;
			h->apps = a;
			h->live++;
		}
	}
	while (o->connect_port >= 0 && h->started < o->count && h->live < o->parallel &&
	       now - t_start >= o->connect_after) {
		struct cn_sock *s = cn_sock_connect(h->conn, CN_BE32_FROM_RAW(o->connect_addr),
						    CN_BE16((uint16_t)o->connect_port), now);
		struct app *a;
		if (!s) {
			fprintf(stderr, "cachenet-tapnet: connect: %s\n", strerror(errno));
			h->rc = 1;
			stop_flag = 1;
			break;
		}
		a = app_new(s, ROLE_CLIENT, now);
		if (!a) {
			cn_sock_abort(s, now);
			break;
		}
		a->tx_target = o->send_bytes;
		a->gen = 0x9e3779b97f4a7c15ull ^ ++h->started;
		a->next = h->apps;
		h->apps = a;
		h->live++;
	}
}

/* The event loop of one host, then the wind-down of its connections. */
static void *host_run(void *arg)
{
	struct host *h = arg;
	const struct opts *o = h->o;
	uint64_t t_start = now_ms(), tsc0 = cn_tsc_begin();

	if (h->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	dev_round_idle(&h->dv);
	for (;;) {
		uint64_t now = now_ms(), b0;
		if (stop_flag || (o->duration > 0 && now - t_start >= (uint64_t)(o->duration * 1000)))
			break;
		if (o->connect_port >= 0 && h->finished == o->count && h->live == 0)
			break;
		/* Sleep in poll(2) only when nothing is left to do right now. */
		dev_wait(&h->dv, o->busy_poll ? 0 : 2);
		b0 = cn_tsc_begin();
		now = now_ms();
		dev_poll(&h->dv, h->net, now, o->bare);
		cn_conn_poll(h->conn, now);
		host_accept(h, now, t_start);
		if (cn_net_reass_mem(h->net) > h->reass_peak)
			h->reass_peak = cn_net_reass_mem(h->net);
		for (struct app **pp = &h->apps; *pp;) {
			struct app *a = *pp;
			if (app_service(a, now)) {
				*pp = a->next;
				if (a->role == ROLE_CLIENT)
					h->finished++;
				h->live--;
				free(a);
			} else {
				pp = &a->next;
			}
		}
		dev_flush(&h->dv);
		b0 = cn_tsc_end() - b0;
		if (dev_round_idle(&h->dv)) {
			h->idle_tsc += b0;
			h->idle_loops++;
		} else {
			h->busy_tsc += b0;
			h->loops++;
		}
	}
	/* Let the closes we started finish (FIN exchanges, TIME_WAIT is
	 * bounded by --time-wait) before reading the leak counters. */
	{
		uint64_t t_end = now_ms() + (uint64_t)(o->time_wait ? o->time_wait : 2000) + 3000;
		while (cn_conn_socks(h->conn) > h->nls && now_ms() < t_end) {
			uint64_t now;
			dev_wait(&h->dv, 5);
			now = now_ms();
			dev_poll(&h->dv, h->net, now, o->bare);
			cn_conn_poll(h->conn, now);
			dev_flush(&h->dv);
		}
	}
	h->wall_tsc = cn_tsc_end() - tsc0;
	for (struct app *a = h->apps, *n; a; a = n) {
		cn_be32_t ra = CN_BE32(0);
		cn_be16_t rp = CN_BE16(0);
		n = a->next;
		cn_sock_addrs(a->s, NULL, NULL, &ra, &rp);
		cn_sock_abort(a->s, now_ms());
		app_report(a, "aborted at exit", 0, now_ms(), CN_BE32_RAW(ra), cn_be16toh(rp));
		free(a);
	}
	h->apps = NULL;
	h->unsettled = !dev_settle(&h->dv);
	h->app_tsc = app_tsc;
	{
		struct timespec ts;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		h->cpu_s = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	}
	/* buffers this thread's pool caches hold go back to the pools, so
	 * that the in-use counts read after the join are exact */
	for (unsigned i = 0; i < 3; i++)
		if (h->pools[i])
			cn_mbuf_pool_thread_flush(h->pools[i]);
	return NULL;
}

static void add_u64(uint64_t *sum, const uint64_t *v, size_t bytes)
{
	for (size_t i = 0; i < bytes / sizeof(uint64_t); i++)
		sum[i] += v[i];
}

_Static_assert(sizeof(struct cn_net_stats) % sizeof(uint64_t) == 0, "cn_net_stats: all uint64_t");
_Static_assert(sizeof(struct cn_conn_stats) % sizeof(uint64_t) == 0, "cn_conn_stats: all uint64_t");

/* The i-th CPU this process may run on, or -1. */
static int nth_cpu(uint32_t i)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -1;
	for (int c = 0, k = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && (uint32_t)k++ == i)
			return c;
	return -1;
}

#ifdef CN_HAVE_DPDK
/* Start the EAL with @p args split at blanks (the EAL keeps pointers into
 * its argv: static). @return 0; 2 (bad arguments) or 77 (the EAL cannot
 * start here: no memory, a PMD missing), said why on stderr. */
static int eal_start(char *args)
{
	static char *av[64];
	char *save = NULL;
	int ac = 0;

	av[ac++] = "cachenet-tapnet";
	for (char *t = strtok_r(args, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (ac == 63) {
			fprintf(stderr, "cachenet-tapnet: --dpdk: more than 62 EAL arguments\n");
			return 2;
		}
		av[ac++] = t;
	}
	if (rte_eal_init(ac, av) < 0) {
		int e = rte_errno;
		fprintf(stderr, "cachenet-tapnet: the DPDK EAL did not start: %s\n", rte_strerror(e));
		return e == EINVAL ? 2 : 77;
	}
	return 0;
}

/* Open the first port the EAL probed, with the small mbufs @p mp.
 * @return 0, or 1 / 77 (no port: no device given or its PMD missing),
 * said why. */
static int dpdk_open(struct dev *dv, const struct opts *o, struct cn_mbuf_pool *mp)
{
	uint16_t port = 0;
	struct rte_eth_link l;

	while (port < RTE_MAX_ETHPORTS && !rte_eth_dev_is_valid_port(port))
		port++;
	if (port == RTE_MAX_ETHPORTS) {
		fprintf(stderr, "cachenet-tapnet: --dpdk: the EAL probed no port (give one with "
				"--vdev, or a PCI device bound to a DPDK driver)\n");
		return 77;
	}
	struct cn_dpdk_params p = {.port_id = port, .batch = o->batch, .mpool = mp};
	dv->dpdk = cn_dpdk_open(&p);
	if (!dv->dpdk) {
		fprintf(stderr, "cachenet-tapnet: cn_dpdk_open(port %u): %s\n", port, strerror(errno));
		return 1;
	}
	/* a virtual device's link comes up within milliseconds; give it 5 s */
	memset(&l, 0, sizeof(l));
	for (int i = 0; i < 500 && l.link_status != RTE_ETH_LINK_UP; i++) {
		if (i)
			usleep(10000);
		rte_eth_link_get_nowait(port, &l);
	}
	const struct cn_dpdk_info *in = cn_dpdk_info(dv->dpdk);
	printf("{\"event\":\"device\",\"dev\":\"dpdk\",\"port\":%u,\"driver\":\"%s\",\"link_up\":%d,"
	       "\"tx_copy\":%d,\"tx_csum_hw\":%d,\"iova_va\":%d,\"rx_offloads\":%" PRIu64
	       ",\"tx_offloads\":%" PRIu64 "}\n",
	       port, in->driver, l.link_status == RTE_ETH_LINK_UP, in->tx_copy, in->tx_csum_hw,
	       in->iova_va, in->rx_offloads, in->tx_offloads);
	return 0;
}

/* LeakSanitizer (ASan builds): net_af_xdp of DPDK 22.11 leaves the 80
 * bytes libxdp's xsk_umem__create allocated when its port closes; they
 * are not ours, the sanitizer is told so. */
#if defined(__SANITIZE_ADDRESS__)
#define TAPNET_LSAN_SUPPRESS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TAPNET_LSAN_SUPPRESS 1
#endif
#endif
#ifdef TAPNET_LSAN_SUPPRESS
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:xsk_umem__create\n"; }
#endif

/* The port's extended counters that are not 0, as "name":value pairs
 * (what the driver itself counts: its rings, drops, kernel statistics). */
static void print_xstats(uint16_t port)
{
	int n = rte_eth_xstats_get(port, NULL, 0);
	struct rte_eth_xstat_name *names = n > 0 ? calloc((size_t)n, sizeof(*names)) : NULL;
	struct rte_eth_xstat *v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;

	if (names && v && rte_eth_xstats_get_names(port, names, (unsigned)n) == n &&
	    rte_eth_xstats_get(port, v, (unsigned)n) == n)
		for (int i = 0, first = 1; i < n; i++)
			if (v[i].value && v[i].id < (uint64_t)n) {
				printf("%s\"%s\":%" PRIu64, first ? "" : ",", names[v[i].id].name, v[i].value);
				first = 0;
			}
	free(names);
	free(v);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	remove(path);
	return 0;
}

/* rte_eal_cleanup, then remove the runtime directory the EAL leaves
 * behind (its config and fbarray files under /var/run/dpdk/PREFIX). */
static void eal_stop(void)
{
	char dir[4096];

	snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}
#endif

int main(int argc, char **argv)
{
	struct opts o;
	struct cn_mbuf_pool *mp, *cp;
	struct cn_pcap *pcap = NULL;
	struct dev dv = {0};
	struct host *hosts;
	uint32_t nh = 1;
	double wall0;
	int rc = 0;

	parse_opts(argc, argv, &o);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);

	struct cn_mbuf_pool_params mpp = {.kind = CN_MBUF_POOL_SMALL, .count = 65536};
	struct cn_mbuf_pool_params cpp = {.kind = CN_MBUF_POOL_CLUSTER, .count = 32768};
#ifdef CN_HAVE_DPDK
	if (o.dpdk && (rc = eal_start(o.dpdk)) != 0)
		return rc;
#endif
	mp = cn_mbuf_pool_create(&mpp);
#ifdef CN_HAVE_DPDK
	/* with DPDK the clusters the stack sends from live in a memzone: an
	 * I/O address for every piece in either IOVA mode */
	if (o.dpdk)
		cp = cn_dpdk_cluster_pool("tapnet_clusters", 16384, CN_MBUF_CLUSTER_SIZE, 256);
	else
#endif
		cp = cn_mbuf_pool_create(&cpp);
	if (!mp || !cp) {
		fprintf(stderr, "cachenet-tapnet: mbuf pools: %s\n", strerror(errno));
		return 1;
	}
	if (o.pcap && !(pcap = cn_pcap_open(o.pcap, 65535))) {
		fprintf(stderr, "cachenet-tapnet: %s: %s\n", o.pcap, strerror(errno));
		return 1;
	}
#ifdef CN_HAVE_AFXDP
	if (o.afxdp) {
		struct cn_afxdp_params xp = {.ifname = o.afxdp, .queues = o.afxdp_queues,
					     .batch = o.batch, .mpool = mp, .pcap = pcap,
					     .impair = o.impair_on ? &o.impair : NULL,
					     .attach = (enum cn_afxdp_attach)o.afxdp_attach,
					     .tx_multi = o.tx_multi, .ring_size = o.xdp_ring};
		dv.xdp = cn_afxdp_open(&xp);
		if (!dv.xdp) {
			fprintf(stderr, "cachenet-tapnet: cannot open AF_XDP on '%s': %s\n", o.afxdp,
				strerror(errno));
			return errno == EPERM || errno == EAFNOSUPPORT ? 77 : 1;
		}
		dv.nq = cn_afxdp_info(dv.xdp)->queues;
		if (o.threads)
			nh = dv.nq;
		const struct cn_afxdp_info *in = cn_afxdp_info(dv.xdp);
		printf("{\"event\":\"device\",\"dev\":\"afxdp\",\"ifname\":\"%s\",\"queues\":%u,"
		       "\"zerocopy\":%d,\"native\":%d,\"prog_id\":%u,\"stale_detached\":%u,"
		       "\"frames\":%u,\"stacks\":%u,\"multi_buffer\":%d,\"ring_size\":%u}\n",
		       o.afxdp, in->queues, in->zerocopy, in->native, in->prog_id, in->stale_detached,
		       in->frames, nh, in->multi_buffer, in->ring_size);
	}
#endif
#ifdef CN_HAVE_DPDK
	if (o.dpdk && (rc = dpdk_open(&dv, &o, mp)) != 0) {
		eal_stop();
		return rc;
	}
#endif
	dv.batch = o.batch;
	hosts = calloc(nh, sizeof(*hosts));
	if (!hosts)
		return 1;
	for (uint32_t i = 0; i < nh; i++) {
		struct host *h = &hosts[i];
		h->id = i;
		h->o = &o;
		h->dv = dv;
		h->cpu = o.threads ? nth_cpu(i) : -1;
		h->pools[0] = mp;
		h->pools[1] = cp;
#ifdef CN_HAVE_AFXDP
		if (dv.xdp) {
			h->pools[2] = cn_afxdp_pool(dv.xdp);
			if (o.threads)
				h->dv.q0 = i, h->dv.nq = 1;
		}
#endif
		rc = host_init(h, mp, cp, pcap);
		if (rc)
			return rc;
	}
	if (o.ready_file) {
		FILE *f = fopen(o.ready_file, "w");
		if (f)
			fclose(f);
	}
	wall0 = now_s();
	if (o.threads) {
		for (uint32_t i = 0; i < nh; i++)
			if (pthread_create(&hosts[i].th, NULL, host_run, &hosts[i]) != 0) {
				fprintf(stderr, "cachenet-tapnet: pthread_create: %s\n", strerror(errno));
				stop_flag = 1;
				nh = i;
				rc = 1;
				break;
			}
		for (uint32_t i = 0; i < nh; i++)
			pthread_join(hosts[i].th, NULL);
	} else {
		host_run(&hosts[0]);
	}
	/* CPU time of the whole process: unlike TSC spans it leaves out the
	 * time the process was preempted (the Linux peer shares the cores). */
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu_user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6;
	double cpu_sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	double wall = now_s() - wall0;

	/* Every host's counters, summed. */
	struct cn_net_stats nsum;
	struct cn_conn_stats csum;
	struct udp_echo ue = {0}, usink = {0};
	uint64_t loops = 0, busy_tsc = 0, wall_tsc = 0, app_sum = 0, idle_loops = 0, idle_tsc = 0;
	uint32_t reass_peak = 0, socks = 0, pkts_out = 0, reass_entries = 0, reass_mem = 0;
	memset(&nsum, 0, sizeof(nsum));
	memset(&csum, 0, sizeof(csum));
	for (uint32_t i = 0; i < nh; i++) {
		struct host *h = &hosts[i];
		add_u64((uint64_t *)&nsum, (const uint64_t *)cn_net_stats(h->net), sizeof(nsum));
		add_u64((uint64_t *)&csum, (const uint64_t *)cn_conn_stats(h->conn), sizeof(csum));
		ue.dgrams += h->ue.dgrams, ue.bytes += h->ue.bytes, ue.send_fail += h->ue.send_fail;
		usink.dgrams += h->usink.dgrams, usink.bytes += h->usink.bytes;
		loops += h->loops, busy_tsc += h->busy_tsc, app_sum += h->app_tsc;
		idle_loops += h->idle_loops, idle_tsc += h->idle_tsc;
		wall_tsc = h->wall_tsc > wall_tsc ? h->wall_tsc : wall_tsc;
		reass_peak = h->reass_peak > reass_peak ? h->reass_peak : reass_peak;
		socks += cn_conn_socks(h->conn) - h->nls; /* listeners stay until destroy */
		pkts_out += cn_net_pkts_out(h->net);
		reass_entries += cn_net_reass_entries(h->net);
		reass_mem += cn_net_reass_mem(h->net);
		if (rc == 0 && h->rc)
			rc = h->rc;
		if (!o.threads)
			continue;
		uint64_t qrx = 0, qtx = 0;
		uint32_t queue = 0;
#ifdef CN_HAVE_AFXDP
		const struct cn_afxdp_stats *qs = cn_afxdp_stats(cn_afxdp_queue(dv.xdp, h->dv.q0));
		qrx = qs->rx_frames, qtx = qs->tx_frames, queue = h->dv.q0;
#endif
		printf("{\"event\":\"thread\",\"id\":%u,\"queue\":%u,\"cpu\":%d,\"cpu_s\":%.3f,"
		       "\"busy_tsc\":%" PRIu64 ",\"rx_frames\":%" PRIu64 ",\"tx_frames\":%" PRIu64
		       ",\"passive_opens\":%" PRIu64 ",\"rx_bytes_tcp\":%" PRIu64 "}\n",
		       h->id, queue, h->cpu, h->cpu_s, h->busy_tsc, qrx, qtx,
		       cn_conn_stats(h->conn)->passive_opens, cn_net_stats(h->net)->rx_frames);
	}
	const struct cn_net_stats *ns = &nsum;
	const struct cn_conn_stats *cs = &csum;
	struct dev_sum dsum, *ts = &dsum;
	dev_sum(&hosts[0].dv, ts);
	struct cn_mbuf_pool_stats pm, pc;
	uint64_t frames = ts->rx_frames + ts->tx_frames;
	cn_mbuf_pool_thread_flush(mp);
	cn_mbuf_pool_thread_flush(cp);
	cn_mbuf_pool_stats(mp, &pm);
	cn_mbuf_pool_stats(cp, &pc);

	printf("{\"event\":\"summary\",\"wall_s\":%.3f,\"loops\":%" PRIu64 ",\"idle_loops\":%" PRIu64
	       ",\"idle_tsc\":%" PRIu64 ",\"stacks\":%u,"
	       "\"tsc_hz\":%.0f,\"busy_tsc\":%" PRIu64 ",\"wall_tsc\":%" PRIu64 ","
	       "\"dev\":\"%s\",\"cpu_user_s\":%.3f,\"cpu_sys_s\":%.3f,\"app_tsc\":%" PRIu64 ",\"tap_rx_tsc\":%" PRIu64 ",\"tap_tx_tsc\":%" PRIu64 ","
	       "\"busy_tsc_per_frame\":%.0f,\"rx_frames\":%" PRIu64 ",\"tx_frames\":%" PRIu64
	       ",\"rx_bytes\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"rx_reads\":%" PRIu64
	       ",\"rx_eagain\":%" PRIu64 ",\"rx_nobufs\":%" PRIu64 ",\"tx_writes\":%" PRIu64
	       ",\"tx_eagain\":%" PRIu64 ",\"tx_errors\":%" PRIu64 ","
	       "\"impair_tx\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],"
	       "\"impair_rx\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],",
	       wall, loops, idle_loops, idle_tsc, nh, cn_tsc_hz(), busy_tsc, wall_tsc,
	       dev_name(&hosts[0].dv),
	       cpu_user, cpu_sys, app_sum, ts->rx_tsc, ts->tx_tsc,
	       frames ? (double)busy_tsc / (double)frames : 0.0, ts->rx_frames, ts->tx_frames,
	       ts->rx_bytes, ts->tx_bytes, ts->rx_reads, ts->rx_eagain, ts->rx_nobufs, ts->tx_writes,
	       ts->tx_eagain, ts->tx_errors, ts->itx.frames, ts->itx.lost,
	       ts->itx.reordered, ts->itx.duplicated, ts->itx.corrupted,
	       ts->irx.frames, ts->irx.lost, ts->irx.reordered,
	       ts->irx.duplicated, ts->irx.corrupted);
	printf("\"udp_sink\":[%" PRIu64 ",%" PRIu64 "],", usink.dgrams, usink.bytes);
#ifdef CN_HAVE_DPDK
	if (dv.dpdk) {
		printf("\"dpdk_xstats\":{");
		print_xstats(cn_dpdk_info(dv.dpdk)->port_id);
		printf("},");
	}
#endif
	printf("\"dev_kernel_drops\":%" PRIu64 ",\"umem_in_use\":%u,\"dev_held_chunks\":%u,", ts->k_drops,
	       ts->umem_in_use, ts->dev_held);
	printf("\"tx_zero_copy\":%" PRIu64 ",\"tx_payload_in_place\":%" PRIu64 ",\"tx_copied\":%" PRIu64
	       ",", ts->tx_zero_copy, ts->tx_payload_in_place, ts->tx_copied);
	printf("\"net_drops\":{");
	for (unsigned r = 1, first = 1; r < CN_DROP_MAX; r++)
		if (ns->drop[r]) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",", cn_drop_name((enum cn_drop)r), ns->drop[r]);
			first = 0;
		}
	printf("},\"conn_drops\":{");
	for (unsigned r = 1, first = 1; r < CN_CONN_DROP_MAX; r++)
		if (cs->drop[r]) {
			printf("%s\"%s\":%" PRIu64, first ? "" : ",",
			       cn_conn_drop_name((enum cn_conn_drop)r), cs->drop[r]);
			first = 0;
		}
	printf("},\"arp\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],\"icmp_echo\":[%" PRIu64
	       ",%" PRIu64 "],\"passive_opens\":%" PRIu64 ",\"active_opens\":%" PRIu64
	       ",\"closes\":%" PRIu64 ",\"resets\":%" PRIu64 ",\"rst_in\":%" PRIu64 ",\"rst_out\":%" PRIu64
	       ",\"udp_echo\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],"
	       "\"syncookies\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],\"syncache_evicted\":%" PRIu64
	       ",\"syn_timeouts\":%" PRIu64 ",\"wscale_clamped\":%" PRIu64 ",\"reass_ok\":%" PRIu64 ",\"reass_evict\":%" PRIu64
	       ",\"frag_out\":%" PRIu64 ",\"frag_frames\":%" PRIu64 ",\"reass_entries\":%u,\"reass_mem\":%u,\"reass_mem_peak\":%u,"
	       "\"socks_live\":%u,\"pkts_out\":%u,\"mbufs_in_use\":%u,\"clusters_in_use\":%u}\n",
	       cs->arp_req_in, cs->arp_rep_out, cs->arp_req_out, cs->arp_rep_in, cs->icmp_echo_in,
	       cs->icmp_echo_out, cs->passive_opens, cs->active_opens, cs->closes, cs->resets,
	       cs->rst_in, cs->rst_out, ue.dgrams, ue.bytes, ue.send_fail, cs->syncookies_sent,
	       cs->syncookies_ok, cs->syncookies_failed, cs->syncache_evicted, cs->syn_timeouts,
	       cs->wscale_clamped,
	       ns->reass_ok, ns->reass_evict, ns->frag_out, ns->frag_frames, reass_entries,
	       reass_mem, reass_peak, socks, pkts_out, pm.in_use, pc.in_use);
#ifdef CN_HAVE_AFXDP
	/* A stack's packets still held for their TX completion: close the
	 * sockets while the stacks exist (the close frees the packets into
	 * them; the UMEM stays mapped while their frames are out). */
	for (uint32_t i = 0; i < nh && dv.xdp; i++)
		if (hosts[i].unsettled) {
			fprintf(stderr, "cachenet-tapnet: TX frames not completed at exit\n");
			rc = 1;
			cn_afxdp_close(dv.xdp);
			dv.xdp = NULL;
		}
#endif
	for (uint32_t i = 0; i < nh; i++) {
		struct host *h = &hosts[i];
		cn_udp_close(h->ue.s);
		cn_udp_close(h->usink.s);
		cn_conn_destroy(h->conn);
		if (cn_net_destroy(h->net) < 0) {
			fprintf(stderr, "cachenet-tapnet: TX descriptors still out at exit\n");
			rc = 1;
		}
		cn_tap_close(h->dv.tap);
	}
	free(hosts);
#ifdef CN_HAVE_AFXDP
	if (cn_afxdp_close(dv.xdp) < 0) {
		fprintf(stderr, "cachenet-tapnet: UMEM frames still in use at exit\n");
		rc = 1;
	}
#endif
	cn_pcap_close(pcap);
#ifdef CN_HAVE_DPDK
	if (dv.dpdk) {
		if (cn_dpdk_close(dv.dpdk) < 0) {
			fprintf(stderr, "cachenet-tapnet: rte_mbufs still held at exit\n");
			rc = 1;
		}
		if (cn_dpdk_cluster_pool_free(cp) < 0) {
			fprintf(stderr, "cachenet-tapnet: clusters still in use at exit\n");
			rc = 1;
		}
		cp = NULL;
	}
#endif
	if (cn_mbuf_pool_destroy(mp) < 0 || cn_mbuf_pool_destroy(cp) < 0) {
		fprintf(stderr, "cachenet-tapnet: mbufs still in use at exit\n");
		rc = 1;
	}
#ifdef CN_HAVE_DPDK
	if (o.dpdk)
		eal_stop();
#endif
	return rc;
}
