/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file cachenet.h
 * Umbrella header: every public cachenet module.
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
#include "cachenet/perf.h"
#include "cachenet/sim.h"
#include "cachenet/cache.h"
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
#include "cachenet/netdev.h"
#include "cachenet/tap.h"
#include "cachenet/crypto.h"

#endif /* CACHENET_H */
