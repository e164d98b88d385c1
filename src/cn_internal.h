/* SPDX-License-Identifier: BSD-2-Clause */
/* Shared by every src/ module; never installed. */
#ifndef CN_INTERNAL_H
#define CN_INTERNAL_H

/* Functions named cn__* cross files (and ISA libraries) inside the library
 * but are not part of the ABI: hidden, so the shared object does not export
 * them although they match the version script's cn_* pattern. */
#define CN_INTERNAL __attribute__((visibility("hidden")))

#endif
