/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Reading callgrind's output format (valgrind docs, "Callgrind Format
 * Specification"): header lines "events: Ir Dr ..." name the columns; the
 * file ends with "totals:" (sum of all cost lines; optional) and carries a
 * "summary:" line (the global counters at dump time). Trailing zero columns
 * may be omitted in both.
 */
#include "cachenet/lab/sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { E_IR, E_DR, E_DW, E_I1MR, E_D1MR, E_D1MW, E_ILMR, E_DLMR, E_DLMW, E_N };

static const char *const event_names[E_N] = {
	"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw",
};

/* Split @line (after a "key:" prefix) into values, mapping by column. */
static void take_values(const char *p, const int *col_event, int ncols, uint64_t *v)
{
	for (int col = 0; col < ncols && *p; col++) {
		char *end;
		unsigned long long x = strtoull(p, &end, 10);
		if (end == p)
			break;
		if (col_event[col] >= 0)
			v[col_event[col]] = x;
		p = end;
	}
}

int cn_callgrind_parse(const char *path, struct cn_sim_counts *out,
		       char *trigger, size_t triggerlen)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -errno;
	if (trigger && triggerlen)
		trigger[0] = '\0';

	char line[4096];
	int col_event[64];
	int ncols = 0;
	bool have_events = false, have_totals = false, have_summary = false, magic = false;
	uint64_t totals[E_N] = { 0 }, summary[E_N] = { 0 };
	bool seen[E_N] = { false };

	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "# callgrind format", 18) == 0 ||
		    strncmp(line, "creator: callgrind", 18) == 0) {
			magic = true;
		} else if (strncmp(line, "events:", 7) == 0) {
			char *save = NULL;
			ncols = 0;
			for (char *t = strtok_r(line + 7, " \t\n", &save); t && ncols < 64;
			     t = strtok_r(NULL, " \t\n", &save)) {
				col_event[ncols] = -1;
				for (int e = 0; e < E_N; e++)
					if (strcmp(t, event_names[e]) == 0) {
						col_event[ncols] = e;
						seen[e] = true;
					}
				ncols++;
			}
			have_events = true;
		} else if (strncmp(line, "totals:", 7) == 0 && have_events) {
			take_values(line + 7, col_event, ncols, totals);
			have_totals = true;
		} else if (strncmp(line, "summary:", 8) == 0 && have_events) {
			take_values(line + 8, col_event, ncols, summary);
			have_summary = true;
		} else if (trigger && strncmp(line, "desc: Trigger:", 14) == 0) {
			const char *t = line + 14;
			while (*t == ' ')
				t++;
			snprintf(trigger, triggerlen, "%s", t);
			trigger[strcspn(trigger, "\n")] = '\0';
		}
	}
	int rerr = ferror(f);
	fclose(f);
	if (rerr)
		return -EIO;
	if (!magic || !have_events || !(have_totals || have_summary))
		return -EBADMSG;
	/* Without --cache-sim=yes there are no miss columns: refuse rather
	 * than report zero misses. */
	if (!seen[E_IR] || !seen[E_I1MR] || !seen[E_D1MR] || !seen[E_DLMR])
		return -EBADMSG;

	/* totals: costs attributed to functions, i.e. what a function-level
	 * view (callgrind_annotate, --toggle-collect=FUNC) adds up; summary
	 * also holds the few instructions of the client request itself. */
	const uint64_t *v = have_totals ? totals : summary;
	out->ir = v[E_IR];
	out->dr = v[E_DR];
	out->dw = v[E_DW];
	out->i1mr = v[E_I1MR];
	out->d1mr = v[E_D1MR];
	out->d1mw = v[E_D1MW];
	out->ilmr = v[E_ILMR];
	out->dlmr = v[E_DLMR];
	out->dlmw = v[E_DLMW];
	return 0;
}
