/* SPDX-License-Identifier: BSD-2-Clause */
#include "corpus_files.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long corpus_list(char *const *dirs, int n, char ***paths)
{
	char **p = NULL;
	long np = 0, cap = 0;

	for (int i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		if (!d) {
			perror(dirs[i]);
			corpus_free(p, np);
			return -1;
		}
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] == '.')
				continue;
			size_t l = strlen(dirs[i]) + strlen(e->d_name) + 2;
			if (np == cap) {
				cap = cap ? 2 * cap : 256;
				char **q = realloc(p, (size_t)cap * sizeof(*p));
				if (!q)
					break;
				p = q;
			}
			if (!(p[np] = malloc(l)))
				break;
			snprintf(p[np++], l, "%s/%s", dirs[i], e->d_name);
		}
		closedir(d);
		if (e) {
			fprintf(stderr, "out of memory listing %s\n", dirs[i]);
			corpus_free(p, np);
			return -1;
		}
	}
	*paths = p;
	return np;
}

void corpus_free(char **paths, long n)
{
	for (long i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}

long corpus_read(const char *path, uint8_t *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	size_t len = fread(buf, 1, cap, f);
	fclose(f);
	return (long)len;
}
