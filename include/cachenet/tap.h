/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file tap.h
 * A Linux TAP device as a cachenet NIC: the stack's frames go to the
 * kernel's network stack and the kernel's frames come back, one read(2) or
 * write(2) per Ethernet frame, so cachenet can talk to the real Linux TCP
 * stack.
 *
 * The device is opened with IFF_TAP | IFF_NO_PI (no packet-information
 * prefix, no virtio-net header: every read and write is exactly one
 * Ethernet frame, no offloads), and its file descriptor is non-blocking.
 * The backend drives it like a NIC:
 *  - transmit: cn_tap_xmit() is a cn_net_xmit_fn: it gathers the frame
 *    (filling an offloaded L4 checksum, since the TAP does no offload),
 *    writes it and completes the packet (cn_pkt_free) before it returns:
 *    there is no TX ring, the kernel's queue is the ring;
 *  - receive: cn_tap_poll() reads up to `batch` frames, each into an mbuf
 *    with a cluster (frame 2 bytes into the cluster, so the IPv4 header is
 *    4-byte aligned, as cn_netdev does), and hands each to cn_net_input();
 *    cn_tap_rx_burst() does the reads without a stack.
 *
 * Running it by hand. The tests create a private network namespace with a
 * persistent TAP in it; the same by hand (as root):
 *
 *     ip netns add cn
 *     ip netns exec cn ip tuntap add dev cn0 mode tap
 *     ip netns exec cn ip link set cn0 up
 *     ip netns exec cn ip addr add 10.77.0.1/24 dev cn0
 *     ip netns exec cn ./my_program         # opens ifname "cn0"
 *     ...
 *     ip netns del cn                       # removes cn0 with it
 *
 * The kernel end of cn0 is 10.77.0.1 with cn0's MAC; the cachenet stack is
 * another host on that link (say 10.77.0.2, with a MAC of its own such as
 * 02:00:00:00:00:02), so the kernel ARPs for it and cachenet must answer
 * (or the kernel gets a static entry: `ip neigh add 10.77.0.2 lladdr
 * 02:00:00:00:00:02 dev cn0`). `tcpdump -i cn0` inside the namespace shows
 * the kernel's view of the wire. Without `ip tuntap add`, cn_tap_open
 * creates a non-persistent TAP that disappears at cn_tap_close (it still
 * has to be brought up and addressed, by `ip` or by the caller).
 *
 * The first moments after an attach: the kernel turns the interface's
 * transmit queue on asynchronously after the carrier change (linkwatch),
 * and a frame it sends in that window is dropped (counted in cn0's
 * tx_dropped). Measured here: about 1 attach in 200 of a closed and
 * reopened cn0 lost the kernel's first reply. Frames cachenet writes are
 * not affected. A caller that needs the kernel's first frame retries (ARP
 * and TCP do) or first waits for any frame from the kernel
 * (tests/unit/test_tap.c settles that way).
 *
 * Privileges: opening /dev/net/tun needs read/write access to the node;
 * attaching needs CAP_NET_ADMIN in the device's network namespace, unless
 * the persistent device was created for the caller's user or group
 * (`ip tuntap add ... user NAME`). This machine's kernel has no sch_netem,
 * so the backend can impair frames itself (cn_tap_params.impair).
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a struct cn_tap belongs to one thread.
 */
#ifndef CACHENET_TAP_H
#define CACHENET_TAP_H

#include "cachenet/common.h"

#include <stdbool.h>
#include <stdint.h>

#include "cachenet/impair.h"
#include "cachenet/net.h"
#include "cachenet/pcap.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A TAP backend's parameters. All zero but mpool and cpool is valid
 *  (common.h): the kernel names a new interface, 32 frames per poll,
 *  MTU 1500. */
struct cn_tap_params {
	uint32_t size;  /**< sizeof(struct cn_tap_params), or 0 (common.h) */
	/** TAP interface to attach to, or to create if there is none of
	 *  that name (then non-persistent: gone at close); NULL or "" = the
	 *  kernel picks a name (tap%d), see cn_tap_ifname. At most 15
	 *  characters. With fd >= 0, if given, it must be the fd's name. */
	const char *ifname;
	/** An already-open, attached TAP fd (>= 0) to adopt: it must have
	 *  been attached with IFF_TAP | IFF_NO_PI and without IFF_VNET_HDR
	 *  (checked with TUNGETIFF and, since TUNGETIFF reports IFF_NO_PI
	 *  and IFF_NOFILTER in one bit, /sys/class/net/NAME/tun_flags when
	 *  the device is visible there); it is made non-blocking and closed
	 *  by cn_tap_close (not on a failed open). Read only with adopt_fd. */
	int fd;
	/** Adopt @c fd instead of opening /dev/net/tun (false). */
	bool adopt_fd;
	/** Frames per cn_tap_poll (read calls at most); 0 = 32. */
	uint32_t batch;
	/** Largest frame payload (the IP packet) accepted or sent: frames
	 *  longer than mtu + 14 are refused on TX and dropped on RX. Does
	 *  not change the interface's MTU (`ip link set cn0 mtu N`); 0 =
	 *  1500. Clusters must hold mtu + 16 bytes. */
	uint32_t mtu;
	/** RX buffers: one small mbuf per frame (required). */
	struct cn_mbuf_pool *mpool;
	/** RX buffers: one cluster per frame (required). */
	struct cn_mbuf_pool *cpool;
	/** Capture both directions (may be NULL): see cn_tap_xmit and
	 *  cn_tap_rx_burst for which frames; timestamps are CLOCK_REALTIME. */
	struct cn_pcap *pcap;
	/** Optional impairment inside the backend (NULL = off): loss,
	 *  reorder, duplicate, corrupt (impair.h),
	 *  applied in both directions, each direction with its own
	 *  generator (TX starting from rng_start, RX from rng_start ^ 0x5a5a...) so each
	 *  direction's decisions depend only on its own frame sequence.
	 *  Rates in [0, 1]; loss 1 is allowed (drops every frame). For
	 *  kernels without sch_netem. */
	const struct cn_link_params *impair;
};

/**
 * Counters, all monotonic. Invariants (no frame in flight inside the
 * backend, i.e. after cn_tap_flush and a drained rx_burst):
 *  - rx_reads == rx_eagain + rx_errors + rx_trunc + R, where R is frames
 *    read whole: without impairment R == rx_frames + rx_nobufs; with it,
 *    R == impair_rx.frames and rx_frames + rx_nobufs ==
 *    impair_rx.frames - impair_rx.lost + impair_rx.duplicated;
 *  - tx_writes == tx_frames + tx_eagain + tx_errors; with impairment
 *    tx_writes == impair_tx.frames - impair_tx.lost + impair_tx.duplicated.
 */
struct cn_tap_stats {
	uint64_t rx_frames;   /**< frames handed to the caller (or the stack) */
	uint64_t rx_bytes;    /**< their bytes */
	uint64_t rx_reads;    /**< read(2)/readv(2) calls */
	uint64_t rx_eagain;   /**< reads that found nothing (EAGAIN) */
	uint64_t rx_errors;   /**< reads that failed otherwise (e.g. EIO) */
	uint64_t rx_nobufs;   /**< frames dropped: mbuf or cluster pool empty
				   (the frame is read into a scratch buffer
				   so the kernel's queue still drains) */
	uint64_t rx_trunc;    /**< frames dropped: longer than mtu + 14 */
	uint64_t tx_frames;   /**< frames the kernel took */
	uint64_t tx_bytes;    /**< their bytes */
	uint64_t tx_writes;   /**< write(2) calls */
	uint64_t tx_eagain;   /**< writes refused with EAGAIN (queue full) */
	uint64_t tx_errors;   /**< writes failed otherwise (short, EIO, EINVAL) */
	uint64_t tx_too_long; /**< frames refused with -EMSGSIZE (no write) */
	uint64_t polls;       /**< cn_tap_poll calls */
	uint64_t rx_tsc;      /**< TSC ticks inside read(2)/readv(2) (tsc.h's
				   cn_tsc_begin/end around each call, ~40 ticks) */
	uint64_t tx_tsc;      /**< TSC ticks inside write(2) */
	struct cn_link_stats impair_tx, impair_rx; /**< impairment, per direction */
};

struct cn_tap;

/**
 * Open (or adopt) a TAP device.
 * @return it, or NULL with errno:
 *  - EINVAL: p->size not accepted (common.h), no pools, adopt_fd with a
 *    negative fd, batch > 256, mtu > 65535, mtu + 16 larger than
 *    a cluster's room (or cpool not a cluster pool), impairment with
 *    mtu + 14 > CN_MBUF_JUMBO_SIZE, impairment rates outside [0, 1], an adopted fd that is not an
 *    attached TAP with IFF_NO_PI and without IFF_VNET_HDR, an adopted fd
 *    whose name differs from ifname, or (kernel) ifname names an
 *    interface that is not a TAP (a TUN, a veth);
 *  - ENAMETOOLONG: ifname longer than 15 characters;
 *  - ENOENT: no /dev/net/tun (create it: mknod /dev/net/tun c 10 200);
 *  - ENODEV / ENXIO: the tun driver is not in the kernel (modprobe tun);
 *  - EACCES: no read/write permission on /dev/net/tun;
 *  - EPERM: attaching needs CAP_NET_ADMIN (in the interface's network
 *    namespace), or the persistent device belongs to another user/group;
 *  - EBUSY: the interface is already attached to another fd;
 *  - EBADF: an adopted fd that is not open;
 *  - ENOMEM, or another errno from open/ioctl/fcntl.
 * Cost: a few system calls; allocates about 130 KB (two 64 KB frame
 * buffers; 37 KB more with impairment).
 */
struct cn_tap *cn_tap_open(const struct cn_tap_params *p) CN_NONNULL_ALL;

/** Close: frees frames held inside (impairment, RX queue), closes the fd
 *  (a non-persistent interface disappears). Does not close the pcap.
 *  NULL accepted. */
void cn_tap_close(struct cn_tap *t);

/** The device's file descriptor (for poll/epoll; do not read it). */
int cn_tap_fd(const struct cn_tap *t) CN_NONNULL_ALL;

/** The interface name the kernel attached (e.g. "tap0"). */
const char *cn_tap_ifname(const struct cn_tap *t) CN_NONNULL_ALL;

/**
 * Transmit @p p on @p t (cn_tap_xmit_hook is the same as a stack's
 * transmit hook, cn_net_xmit_fn): gather the frame (filling an offloaded L4 checksum),
 * write(2) it, cn_pkt_free(p) — all before returning.
 * @return 0 (p completed); or, p left to the caller (the stack frees it
 *         and sends the bytes again later):
 *  - -EMSGSIZE: frame longer than mtu + 14 (tx_too_long; nothing written);
 *  - -ENOBUFS: the kernel's queue is full (EAGAIN, tx_eagain);
 *  - another -errno of write(2) (tx_errors): -EIO when the interface is
 *    down (`ip link set cn0 up` first) or for a short write, -EINVAL for
 *    a frame shorter than an Ethernet header.
 * With impairment, 0 once the frame entered the impairment (a lost frame
 * was still "sent"); the writes it causes (this frame, a duplicate, a held
 * frame) count their failures in tx_eagain / tx_errors as losses of the
 * wire, without back pressure.
 * pcap: every frame accepted (returned 0), as gathered, before the
 * impairment: the stack's view of what it sent.
 * Cost: one copy of the frame (plus the checksum pass when offloaded) and
 * one system call.
 */
int cn_tap_xmit(struct cn_tap *t, struct cn_pkt *p) CN_NONNULL_ALL;

/** cn_tap_xmit as a stack's transmit hook (cn_net_params.xmit, with the
 *  tap as xmit_arg). */
CN_NET_XMIT_HOOK(cn_tap_xmit_hook, struct cn_tap, cn_tap_xmit)

/**
 * Write one raw Ethernet frame (built by hand: ARP, ICMP), through the
 * same path as cn_tap_xmit (mtu check, impairment, pcap, counters).
 * @return as cn_tap_xmit.
 */
int cn_tap_write_frame(struct cn_tap *t, const void *frame, uint32_t len) CN_NONNULL(1);

/**
 * Receive up to @p n frames without a stack: each read(2) from the
 * non-blocking fd into an mbuf with a cluster (data = the Ethernet header,
 * 2 bytes into the buffer; len == pkt_len == frame length); ownership of
 * the mbufs passes to the caller. Stops at n frames, n reads, or the
 * first read that finds nothing. Frames longer than mtu + 14 are dropped
 * (rx_trunc); with the pool empty a frame is read into a scratch buffer and
 * dropped (rx_nobufs). With impairment, frames are read into a scratch
 * buffer, go through it, and what leaves is copied into clusters; up to
 * three frames may wait for the next call.
 * pcap: every frame returned, after the impairment: what the stack saw.
 * @return frames returned.
 * Cost: one system call per frame plus one for the read that finds the
 * queue empty; no copy without impairment.
 */
unsigned cn_tap_rx_burst(struct cn_tap *t, struct cn_mbuf **m, unsigned n) CN_NONNULL(1);

/**
 * cn_tap_rx_burst of up to `batch` frames, handed to the stack as one
 * burst (cn_net_input_burst: cn_net_input() of each with @p now, then one
 * cumulative ACK per connection that received in-order data).
 * @return frames handed to the stack, at most `batch`. A return equal to
 *         `batch` means more frames may be waiting: a loop calls
 *         cn_tap_poll again until it returns less than `batch` (for
 *         example `while (cn_tap_poll(t, net, now) == batch) ;`) before it
 *         waits (cn_tap_wait) or turns to other work; one call per turn of
 *         a loop lets the kernel's queue grow and drop frames.
 */
unsigned cn_tap_poll(struct cn_tap *t, struct cn_net *net, uint64_t now) CN_NONNULL_ALL;

/**
 * Wait until a frame can be read (or one is already waiting inside the
 * backend), up to @p timeout_ms (-1 = forever, 0 = just check).
 * @return 1 readable; 0 timeout; -errno (-EINTR, -EIO when the fd reports
 *         an error or hang-up).
 */
int cn_tap_wait(struct cn_tap *t, int timeout_ms) CN_NONNULL_ALL;

/**
 * Deliver the frames the impairment holds back for reordering (call when
 * idle, else a held frame waits for the next one in its direction): a
 * held TX frame is written, a held RX frame waits for the next
 * cn_tap_rx_burst. Nothing to do without impairment.
 */
void cn_tap_flush(struct cn_tap *t) CN_NONNULL_ALL;

/** The counters (live). */
const struct cn_tap_stats *cn_tap_stats(const struct cn_tap *t) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_TAP_H */
