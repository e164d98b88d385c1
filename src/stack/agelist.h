/* SPDX-License-Identifier: BSD-2-Clause */
/* Private to src/stack: age lists, doubly linked, oldest to newest,
 * threaded through their elements (BSD's TAILQ without the head struct):
 * the syncache's half-open sockets (conn.c) and the datagrams in
 * reassembly, overall and per source (ip_reass.c). An element names its
 * two links by field (OLDER, NEWER: one element may be on several lists);
 * a list is its two ends, OLDEST and NEWEST (lvalues, NULL when empty).
 * Constant time; no allocation. */
#ifndef CN_STACK_AGELIST_H
#define CN_STACK_AGELIST_H

#include "cn_internal.h"

/* Append E at the newest end. */
#define CN__AGE_PUSH(OLDEST, NEWEST, E, OLDER, NEWER)                          \
	do {                                                                   \
		(E)->NEWER = NULL;                                             \
		(E)->OLDER = (NEWEST);                                         \
		CN_LIST_APPEND(OLDEST, NEWEST, E, E, NEWER);                   \
	} while (0)

/* Take E, which is on the list, off it (its links are left as they were). */
#define CN__AGE_UNLINK(OLDEST, NEWEST, E, OLDER, NEWER)                        \
	do {                                                                   \
		if ((E)->OLDER)                                                \
			(E)->OLDER->NEWER = (E)->NEWER;                        \
		else                                                           \
			(OLDEST) = (E)->NEWER;                                 \
		if ((E)->NEWER)                                                \
			(E)->NEWER->OLDER = (E)->OLDER;                        \
		else                                                           \
			(NEWEST) = (E)->OLDER;                                 \
	} while (0)

#endif
