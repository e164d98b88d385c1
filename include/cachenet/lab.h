/* SPDX-License-Identifier: BSD-2-Clause */
/**
 * @file lab.h
 * Umbrella header of the laboratory library, libcachenet-lab (pkg-config
 * cachenet-lab), which links the product library: the instruments
 * (hardware counters and TSC frequency, callgrind simulation, cache
 * control and placement) and the test bed (the in-memory NIC with its
 * simulated peers and lossy link, the naive socket buffers). Includes
 * cachenet.h. A stack links the product alone; the benchmarks, tools and
 * tests link both.
 */
#ifndef CACHENET_LAB_H
#define CACHENET_LAB_H

#include "cachenet/cachenet.h"
#include "cachenet/lab/perf.h"
#include "cachenet/lab/sim.h"
#include "cachenet/lab/cache.h"
#include "cachenet/lab/netdev.h"
#include "cachenet/lab/sockbuf_naive.h"

#endif /* CACHENET_LAB_H */
