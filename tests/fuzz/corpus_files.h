/* SPDX-License-Identifier: BSD-2-Clause */
/* The files of corpus directories, for the drivers that run a fuzz target
 * without libFuzzer (replay_main.c, determinism_main.c). */
#ifndef CN_FUZZ_CORPUS_FILES_H
#define CN_FUZZ_CORPUS_FILES_H

#include <stddef.h>
#include <stdint.h>

/* The paths of the files (not starting with '.') in the directories
 * dirs[0..n), in directory order, into a malloc'ed array of malloc'ed
 * strings (*paths; free with corpus_free). Returns how many, or -1 after
 * printing why when a directory cannot be read or memory runs out. */
long corpus_list(char *const *dirs, int n, char ***paths);

void corpus_free(char **paths, long n);

/* Reads up to cap bytes of path into buf; returns how many, or -1 after
 * printing why when it cannot be opened. */
long corpus_read(const char *path, uint8_t *buf, size_t cap);

#endif
