/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file cachenet.h
 * Umbrella header: every module of the product library, libcachenet
 * (pkg-config cachenet). The laboratory's instruments and test bed are in
 * cachenet/lab.h (libcachenet-lab, pkg-config cachenet-lab).
 *
 * Conventions shared by all modules: public symbols start with cn_; errors
 * are negative errno values or NULL with errno set; no global state besides
 * per-thread caches; context objects are explicit.
 */
#ifndef CACHENET_H
#define CACHENET_H

#include "cachenet/common.h"

#include "cachenet/version.h"
#include "cachenet/cpu.h"
#include "cachenet/tsc.h"
#include "cachenet/wire.h"
#include "cachenet/csum.h"
#include "cachenet/bswap.h"
#include "cachenet/pes.h"
#include "cachenet/mbuf.h"
#include "cachenet/sockbuf.h"
#include "cachenet/net.h"
#include "cachenet/tcp.h"
#include "cachenet/udp.h"
#include "cachenet/conn.h"
#include "cachenet/pcap.h"
#include "cachenet/impair.h"
#include "cachenet/tap.h"
#include "cachenet/crypto.h"

#endif /* CACHENET_H */
