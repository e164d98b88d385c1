/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * memsig output: the human-readable table and the JSON document. Latencies
 * are printed in TSC ticks and ns, never in core cycles: the TSC runs at a
 * fixed reference rate and the core clock moves with boost.
 */
#include "memsig.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *ms_fmt_size(char *buf, size_t len, size_t bytes)
{
	static const char *const unit[] = { "B", "KB", "MB", "GB", "TB" };
	double v = (double)bytes;
	unsigned u = 0;

	while (v >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.3g %s", v, unit[u]);
	return buf;
}

static double ns(const struct ms_result *r, double tsc)
{
	return tsc * 1e9 / r->tsc_hz;
}

void ms_print_header(FILE *f, const struct ms_result *r)
{
	fprintf(f, "memsig: dependent-load latency vs working set, %u points/octave, "
		"%u slices/point (median of the fastest half)\n", r->ppo, r->slices);
	fprintf(f, "cpu:    %s\n", r->cpu[0] ? r->cpu : "(unknown)");
	fprintf(f, "tsc:    %.4f GHz (%s); 1 TSC tick is not a core cycle\n",
		r->tsc_hz / 1e9, r->tsc_source);
	fprintf(f, "pages:  %s\n", r->huge ? "transparent huge pages requested (--huge)"
					   : "4 KB (THP disabled with MADV_NOHUGEPAGE)");
	if (r->alloc_note[0])
		fprintf(f, "note:   %s\n", r->alloc_note);
	fprintf(f, "\n%12s", "working set");
	for (unsigned o = 0; o < MS_NORDERS; o++)
		if (r->measured[o])
			fprintf(f, "  %7s tsc/load  ns/load", ms_order_name[o]);
	fputc('\n', f);
	fflush(f);
}

void ms_print_point(FILE *f, const struct ms_result *r, unsigned i)
{
	char s[32];

	fprintf(f, "%12s", ms_fmt_size(s, sizeof(s), r->bytes[i]));
	for (unsigned o = 0; o < MS_NORDERS; o++)
		if (r->measured[o])
			fprintf(f, "  %16.2f %8.2f", r->tsc[o][i], ns(r, r->tsc[o][i]));
	fputc('\n', f);
	fflush(f);
}

/* Which named level's plateau holds @p bytes, for the bandwidth table. */
static const char *level_of(const struct ms_result *r, size_t bytes)
{
	for (unsigned l = 0; l < MS_NLEVELS; l++) {
		const struct ms_level *lv = &r->levels.lv[l];

		if (lv->found && bytes >= r->bytes[lv->p.first] &&
		    bytes <= r->bytes[lv->p.last])
			return ms_level_name[l];
	}
	return "-";
}

void ms_print_summary(FILE *f, const struct ms_result *r)
{
	enum ms_order other = r->levels_order == MS_RANDOM ? MS_PAGEWISE : MS_RANDOM;
	char a[32], b[32];

	fprintf(f, "\nlevels (plateaus of the %s-order curve; latency = median of the plateau)\n",
		ms_order_name[r->levels_order]);
	fprintf(f, "%-5s %-22s %9s %8s", "level", "plateau", "tsc/load", "ns/load");
	if (r->measured[other])
		fprintf(f, "   %s order: tsc/load ns/load", ms_order_name[other]);
	fputc('\n', f);
	for (unsigned l = 0; l < MS_NLEVELS; l++) {
		const struct ms_level *lv = &r->levels.lv[l];
		char range[80];

		if (!lv->found) {
			fprintf(f, "%-5s not found: %s\n", ms_level_name[l], lv->why);
			continue;
		}
		snprintf(range, sizeof(range), "%s..%s",
			 ms_fmt_size(a, sizeof(a), r->bytes[lv->p.first]),
			 ms_fmt_size(b, sizeof(b), r->bytes[lv->p.last]));
		fprintf(f, "%-5s %-22s %9.2f %8.2f", ms_level_name[l], range,
			lv->p.tsc, ns(r, lv->p.tsc));
		if (r->measured[other]) {
			double m = ms_median(r->tsc[other] + lv->p.first,
					     lv->p.last - lv->p.first + 1);
			fprintf(f, "   %21.2f %7.2f", m, ns(r, m));
		}
		fputc('\n', f);
	}
	for (unsigned k = 0; k < r->levels.nother; k++) {
		const struct ms_plateau *p = &r->levels.other[k];

		fprintf(f, "(unnamed plateau %s..%s: %.2f tsc/load, %.2f ns/load)\n",
			ms_fmt_size(a, sizeof(a), r->bytes[p->first]),
			ms_fmt_size(b, sizeof(b), r->bytes[p->last]),
			p->tsc, ns(r, p->tsc));
	}

	if (r->nbw) {
		fprintf(f, "\nbandwidth (%s kernels for read/write, glibc memcpy for copy; "
			"copy moves half the working set into the other half)\n",
			r->bw_kernel);
		fprintf(f, "%12s %-5s %6s %10s %12s\n", "working set", "level", "op",
			"GB/s", "bytes/tick");
		for (unsigned i = 0; i < r->nbw; i++) {
			const struct ms_bw_point *p = &r->bw[i];

			fprintf(f, "%12s %-5s %6s %10.2f %12.2f\n",
				ms_fmt_size(a, sizeof(a), p->bytes), level_of(r, p->bytes),
				ms_bw_op_name[p->op], p->bytes_per_tsc * r->tsc_hz / 1e9,
				p->bytes_per_tsc);
		}
	}
	if (isfinite(r->wait_frac) || isfinite(r->steal_frac)) {
		fprintf(f, "\ncpu share: waited for the CPU %.0f%% of the run (another task on it)",
			100 * r->wait_frac);
		if (isfinite(r->steal_frac))
			fprintf(f, ", host steal %.0f%%", 100 * r->steal_frac);
		fputc('\n', f);
		if (r->wait_frac > 0.10 || r->steal_frac > 0.10)
			fputs("WARNING: this CPU was shared during the run. Each time the other task\n"
			      "ran it evicted our lines, so L2/LLC-sized points read high and the LLC\n"
			      "plateau may be missing. Rerun pinned to an idle CPU (taskset -c N).\n", f);
	}
	if (r->huge || r->anon_huge_kb > 0)
		fprintf(f, "\nAnonHugePages at the end of the sweep: %ld kB\n", r->anon_huge_kb);
}

/* ------------------------------------------------------------------ JSON */

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* JSON has no NaN or infinity. */
static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void json_plateau(FILE *f, const struct ms_result *r, const struct ms_plateau *p)
{
	fputs("{\"tsc\": ", f);
	json_num(f, p->tsc);
	fputs(", \"ns\": ", f);
	json_num(f, ns(r, p->tsc));
	fprintf(f, ", \"from_bytes\": %zu, \"to_bytes\": %zu, \"order\": \"%s\"",
		r->bytes[p->first], r->bytes[p->last], ms_order_name[r->levels_order]);
	fputs(", \"by_order\": {", f);
	for (unsigned o = 0, n = 0; o < MS_NORDERS; o++) {
		if (!r->measured[o])
			continue;
		double m = ms_median(r->tsc[o] + p->first, p->last - p->first + 1);

		fprintf(f, "%s\"%s\": {\"tsc\": ", n++ ? ", " : "", ms_order_name[o]);
		json_num(f, m);
		fputs(", \"ns\": ", f);
		json_num(f, ns(r, m));
		fputc('}', f);
	}
	fputs("}}", f);
}

int ms_write_json(FILE *f, const struct ms_result *r)
{
	fprintf(f, "{\n  \"tool\": \"memsig\",\n  \"tsc_hz\": %.0f", r->tsc_hz);
	fputs(",\n  \"tsc_source\": ", f);
	json_str(f, r->tsc_source);
	fputs(",\n  \"cpu\": ", f);
	json_str(f, r->cpu);
	fprintf(f, ",\n  \"huge_pages\": %s,\n  \"anon_huge_kb\": %ld,"
		"\n  \"points_per_octave\": %u,\n  \"slices\": %u,\n  \"bw_kernel\": ",
		r->huge ? "true" : "false", r->anon_huge_kb, r->ppo, r->slices);
	json_str(f, r->bw_kernel);
	fputs(",\n  \"alloc_note\": ", f);
	json_str(f, r->alloc_note);
	fprintf(f, ",\n  \"seconds\": %.2f,\n  \"cpu_wait_fraction\": ", r->seconds);
	json_num(f, r->wait_frac);
	fputs(",\n  \"steal_fraction\": ", f);
	json_num(f, r->steal_frac);
	fputs(",\n  \"points\": [", f);
	for (unsigned i = 0, n = 0; i < r->npts; i++) {
		for (unsigned o = 0; o < MS_NORDERS; o++) {
			if (!r->measured[o])
				continue;
			fprintf(f, "%s\n    {\"bytes\": %zu, \"order\": \"%s\", \"tsc_per_load\": ",
				n++ ? "," : "", r->bytes[i], ms_order_name[o]);
			json_num(f, r->tsc[o][i]);
			fputs(", \"ns_per_load\": ", f);
			json_num(f, ns(r, r->tsc[o][i]));
			fputc('}', f);
		}
	}
	fputs("\n  ],\n  \"bandwidth\": [", f);
	for (unsigned i = 0; i < r->nbw; i++) {
		const struct ms_bw_point *p = &r->bw[i];

		fprintf(f, "%s\n    {\"bytes\": %zu, \"op\": \"%s\", \"gb_per_s\": ",
			i ? "," : "", p->bytes, ms_bw_op_name[p->op]);
		json_num(f, p->bytes_per_tsc * r->tsc_hz / 1e9);
		fputs(", \"bytes_per_tsc\": ", f);
		json_num(f, p->bytes_per_tsc);
		fputc('}', f);
	}
	fputs("\n  ],\n  \"levels\": {", f);
	for (unsigned l = 0; l < MS_NLEVELS; l++) {
		fprintf(f, "%s\n    \"%s\": ", l ? "," : "", ms_level_name[l]);
		if (r->levels.lv[l].found)
			json_plateau(f, r, &r->levels.lv[l].p);
		else
			fputs("null", f);
	}
	fputs("\n  },\n  \"levels_not_found\": {", f);
	for (unsigned l = 0, n = 0; l < MS_NLEVELS; l++) {
		if (r->levels.lv[l].found)
			continue;
		fprintf(f, "%s\n    \"%s\": ", n++ ? "," : "", ms_level_name[l]);
		json_str(f, r->levels.lv[l].why);
	}
	fputs("\n  },\n  \"other_plateaus\": [", f);
	for (unsigned k = 0; k < r->levels.nother; k++) {
		fprintf(f, "%s\n    ", k ? "," : "");
		json_plateau(f, r, &r->levels.other[k]);
	}
	fputs("\n  ]\n}\n", f);
	if (fflush(f) != 0 || ferror(f))
		return -(errno ? errno : EIO);
	return 0;
}
