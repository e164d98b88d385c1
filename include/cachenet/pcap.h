/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file pcap.h
 * Packet capture: frames written to a file in the classic pcap format
 * (magic 0xa1b2c3d4, version 2.4, LINKTYPE_ETHERNET), readable by tcpdump
 * and tshark. The TAP backend (tap.h) and the laboratory's in-memory NIC
 * record both directions into one when given it.
 *
 * Pointers marked CN_NONNULL must not be NULL; calls that accept NULL say so.
 *
 * Thread safety: a struct cn_pcap belongs to one thread.
 */
#ifndef CACHENET_PCAP_H
#define CACHENET_PCAP_H

#include "cachenet/common.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** An open capture file (opaque). */
struct cn_pcap;

/**
 * Open (create or truncate) a capture file and write its header.
 * @param path     file to write
 * @param snaplen  bytes kept of each frame (longer frames are cut); 0 = 65535.
 * @return it, or NULL with errno from fopen (or ENOMEM).
 */
struct cn_pcap *cn_pcap_open(const char *path, uint32_t snaplen) CN_NONNULL_ALL;

/** Append one frame with a timestamp in nanoseconds (stored as usec).
 *  @return 0 or -EIO. Cost: one buffered write of the frame. */
int cn_pcap_write(struct cn_pcap *pc, const uint8_t *frame, uint32_t len, uint64_t ts_ns)
	CN_NONNULL(1);

/** Flush and close. @return 0 or -EIO. NULL accepted. */
int cn_pcap_close(struct cn_pcap *pc);

/** Frames written. */
uint64_t cn_pcap_count(const struct cn_pcap *pc) CN_NONNULL_ALL;

#ifdef __cplusplus
}
#endif
#endif /* CACHENET_PCAP_H */
