/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Hardware counters: libpfm4 names → perf_event_attr → perf_event_open, in
 * groups of at most CN_COUNTERS_GROUP_MAX read with one read() each.
 *
 * A counter that cannot be opened is kept in the set, marked unavailable
 * with the errno and a sentence on what it usually means, so every consumer
 * can print "unavailable: ..." instead of a zero it did not count.
 */
#include "cachenet/lab/perf.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef CN_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>
#endif

#define LABEL_MAX 48
#define EVENT_MAX 160
#define REASON_MAX 256

struct counter {
	char label[LABEL_MAX];
	char event[EVENT_MAX];
	int fd;              /* -1 when unavailable */
	int group;           /* index into groups, -1 when unavailable */
	uint64_t id;         /* PERF_FORMAT_ID of this event */
	int err;             /* positive errno when unavailable */
	char reason[REASON_MAX];
	double value;
	double running;
	bool have_value;
};

struct group {
	int leader_fd;
	unsigned n;
	unsigned member[CN_COUNTERS_GROUP_MAX];
};

struct cn_counters {
	unsigned n;
	unsigned ngroups;
	struct counter c[CN_COUNTERS_MAX];
	struct group g[CN_COUNTERS_MAX + 2]; /* + current and fallback slot */
};

/* ------------------------------------------------------------ encoding */

/* The perf generic events of CN_COUNTERS_DEFAULT, for builds without
 * libpfm4. libpfm4 itself knows these names too (its "perf" PMU table). */
#define HWC(c, op, r) ((c) | ((op) << 8) | ((r) << 16))
static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} generic_events[] = {
	{ "PERF_COUNT_HW_CPU_CYCLES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "PERF_COUNT_HW_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "PERF_COUNT_HW_BRANCH_INSTRUCTIONS", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "PERF_COUNT_HW_BRANCH_MISSES", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "PERF_COUNT_HW_CACHE_L1I:READ:MISS", PERF_TYPE_HW_CACHE,
	  HWC(PERF_COUNT_HW_CACHE_L1I, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
	{ "PERF_COUNT_HW_CACHE_L1D:READ:MISS", PERF_TYPE_HW_CACHE,
	  HWC(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
	{ "PERF_COUNT_HW_CACHE_LL:READ:MISS", PERF_TYPE_HW_CACHE,
	  HWC(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
	{ "PERF_COUNT_HW_CACHE_DTLB:READ:MISS", PERF_TYPE_HW_CACHE,
	  HWC(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS) },
	/* Software events count on every kernel, PMU or not. */
	{ "PERF_COUNT_SW_TASK_CLOCK", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "PERF_COUNT_SW_PAGE_FAULTS", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
};

#ifdef CN_HAVE_LIBPFM
static int pfm_init_status = -1;
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;

static void pfm_init(void)
{
	pfm_init_status = pfm_initialize();
}
#endif

/* Fill @attr for @event. 0, or a positive errno with @reason written. */
static int encode_generic(const char *event, struct perf_event_attr *attr)
{
	const char *name = strncmp(event, "perf::", 6) == 0 ? event + 6 : event;

	for (size_t i = 0; i < sizeof(generic_events) / sizeof(generic_events[0]); i++) {
		if (strcmp(name, generic_events[i].name) == 0) {
			attr->type = generic_events[i].type;
			attr->config = generic_events[i].config;
			return 0;
		}
	}
	return ENOENT;
}

/* Fill @attr for @event: libpfm4 first (it knows every PMU's names), then
 * the built-in generic table. 0, or a positive errno with @reason written. */
static int encode(const char *event, struct perf_event_attr *attr, char *reason)
{
	memset(attr, 0, sizeof(*attr));
#ifdef CN_HAVE_LIBPFM
	pthread_once(&pfm_once, pfm_init);
	int ret = pfm_init_status;
	if (ret == PFM_SUCCESS) {
		pfm_perf_encode_arg_t arg;
		memset(&arg, 0, sizeof(arg));
		arg.attr = attr;
		arg.size = sizeof(arg);
		ret = pfm_get_os_event_encoding(event, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
		if (ret == PFM_SUCCESS)
			return 0;
		memset(attr, 0, sizeof(*attr));
	}
	if (encode_generic(event, attr) == 0)
		return 0;
	snprintf(reason, REASON_MAX, "libpfm4 cannot encode the event: %s", pfm_strerror(ret));
	return ENOENT;
#else
	if (encode_generic(event, attr) == 0)
		return 0;
	snprintf(reason, REASON_MAX,
		 "unknown event (built without libpfm4: only the perf generic "
		 "events of the default set are known)");
	return ENOENT;
#endif
}

static void explain(int err, char *reason)
{
	const char *why;
	char buf[96];

	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		why = "the kernel has no PMU driver for this event (common in VMs)";
		break;
	case EACCES:
	case EPERM: {
		FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
		int level = 99;
		if (f) {
			if (fscanf(f, "%d", &level) != 1)
				level = 99;
			fclose(f);
		}
		snprintf(buf, sizeof(buf),
			 "not permitted at perf_event_paranoid=%d; run as root or lower it", level);
		why = buf;
		break;
	}
	case ENOSYS:
		why = "perf_event_open is not available (kernel without perf events, or a seccomp filter)";
		break;
	case EINVAL:
		why = "the kernel rejected the event encoding for this CPU";
		break;
	case EMFILE:
		why = "too many open files";
		break;
	default:
		why = "perf_event_open failed";
	}
	snprintf(reason, REASON_MAX, "perf_event_open: %s — %s", strerror(err), why);
}

static int sys_perf_event_open(struct perf_event_attr *attr, int group_fd)
{
	return (int)syscall(SYS_perf_event_open, attr, 0 /* this thread */,
			    -1 /* any cpu */, group_fd, PERF_FLAG_FD_CLOEXEC);
}

/* Open counter @c, joining group @g if it has a leader. 0 or errno. */
static int open_one(struct counter *c, struct group *g)
{
	struct perf_event_attr attr;
	int err = encode(c->event, &attr, c->reason);

	if (err)
		return err;
	attr.size = sizeof(attr);
	attr.disabled = g->n == 0;   /* the leader gates the whole group */
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			   PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = sys_perf_event_open(&attr, g->n ? g->leader_fd : -1);
	if (fd < 0) {
		err = errno;
		explain(err, c->reason);
		return err;
	}
	if (ioctl(fd, PERF_EVENT_IOC_ID, &c->id) < 0) {
		err = errno;
		close(fd);
		explain(err, c->reason);
		return err;
	}
	c->fd = fd;
	if (g->n == 0)
		g->leader_fd = fd;
	return 0;
}

/* ------------------------------------------------------------ spec */

static int parse_spec(struct cn_counters *s, const char *spec)
{
	const char *p = (spec && *spec) ? spec : CN_COUNTERS_DEFAULT;

	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 0) {
			p++;
			continue;
		}
		if (s->n == CN_COUNTERS_MAX)
			return -EINVAL;
		struct counter *c = &s->c[s->n];
		const char *eq = memchr(p, '=', n);
		size_t ln = eq ? (size_t)(eq - p) : n;
		const char *ev = eq ? eq + 1 : p;
		size_t en = eq ? n - ln - 1 : n;
		while (ln && p[ln - 1] == ' ')
			ln--;
		while (en && *ev == ' ')
			ev++, en--;
		if (ln == 0 || en == 0 || ln >= LABEL_MAX || en >= EVENT_MAX)
			return -EINVAL;
		memcpy(c->label, p, ln);
		c->label[ln] = '\0';
		memcpy(c->event, ev, en);
		c->event[en] = '\0';
		c->fd = -1;
		c->group = -1;
		c->value = NAN;
		s->n++;
		p += n;
	}
	return 0;
}

/* ------------------------------------------------------------ API */

int cn_counters_open(struct cn_counters **out, const char *spec)
{
	struct cn_counters *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	int rc = parse_spec(s, spec);
	if (rc < 0) {
		free(s);
		return rc;
	}
	for (unsigned i = 0; i < s->n; i++) {
		struct counter *c = &s->c[i];
		struct group *g = &s->g[s->ngroups];
		if (g->n == CN_COUNTERS_GROUP_MAX)
			g = &s->g[++s->ngroups];
		int err = open_one(c, g);
		if (err && g->n > 0) {
			/* It may open alone (e.g. another PMU than the leader's):
			 * try it as the leader of a group of its own. */
			struct group *ng = &s->g[s->ngroups + 1];
			if (open_one(c, ng) == 0) {
				s->ngroups++;
				g = ng;
				err = 0;
			}
		}
		if (err) {
			c->err = err;
			continue;
		}
		c->group = (int)(g - s->g);
		g->member[g->n++] = i;
	}
	if (s->g[s->ngroups].n > 0)
		s->ngroups++;
	*out = s;
	return 0;
}

void cn_counters_close(struct cn_counters *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->n; i++)
		if (s->c[i].fd >= 0)
			close(s->c[i].fd);
	free(s);
}

static int group_ioctl(struct cn_counters *s, unsigned long req)
{
	for (unsigned i = 0; i < s->ngroups; i++)
		if (s->g[i].n && ioctl(s->g[i].leader_fd, req, PERF_IOC_FLAG_GROUP) < 0)
			return -errno;
	return 0;
}

int cn_counters_reset(struct cn_counters *s)
{
	return group_ioctl(s, PERF_EVENT_IOC_RESET);
}

int cn_counters_enable(struct cn_counters *s)
{
	return group_ioctl(s, PERF_EVENT_IOC_ENABLE);
}

int cn_counters_disable(struct cn_counters *s)
{
	return group_ioctl(s, PERF_EVENT_IOC_DISABLE);
}

int cn_counters_read(struct cn_counters *s)
{
	int rc = 0;

	for (unsigned gi = 0; gi < s->ngroups; gi++) {
		struct group *g = &s->g[gi];
		uint64_t buf[3 + 2 * CN_COUNTERS_GROUP_MAX];
		ssize_t want = (ssize_t)((3 + 2 * g->n) * sizeof(uint64_t));
		ssize_t got = read(g->leader_fd, buf, sizeof(buf));
		int err = got < 0 ? errno : (got < want ? EIO : 0);
		uint64_t enabled = err ? 0 : buf[1], running = err ? 0 : buf[2];

		for (unsigned k = 0; k < g->n; k++) {
			struct counter *c = &s->c[g->member[k]];
			c->have_value = false;
			c->value = NAN;
			c->running = 0;
			char why[REASON_MAX];
			if (err) {
				c->err = err;
				snprintf(why, sizeof(why), "read: %s", strerror(err));
				memcpy(c->reason, why, sizeof(why));
				continue;
			}
			if (running == 0) {
				/* enabled == 0 too means the region was empty; still no
				 * count was taken, so no value is claimed. */
				c->err = EAGAIN;
				snprintf(why, sizeof(why),
					 "never scheduled on the PMU during the region "
					 "(more events than free counters? open fewer)");
				memcpy(c->reason, why, sizeof(why));
				continue;
			}
			for (uint64_t j = 0; j < buf[0] && j < g->n; j++) {
				if (buf[4 + 2 * j] != c->id)
					continue;
				c->value = (double)buf[3 + 2 * j] * ((double)enabled / (double)running);
				c->running = (double)running / (double)enabled;
				c->have_value = true;
				c->err = 0;
				c->reason[0] = '\0';
			}
		}
		if (err && !rc)
			rc = -err;
	}
	return rc;
}

unsigned cn_counters_count(const struct cn_counters *s)
{
	return s->n;
}

unsigned cn_counters_available(const struct cn_counters *s)
{
	unsigned n = 0;

	for (unsigned i = 0; i < s->n; i++)
		n += s->c[i].fd >= 0 && s->c[i].err == 0;
	return n;
}

int cn_counters_get(const struct cn_counters *s, unsigned i, struct cn_counter_value *out)
{
	if (i >= s->n)
		return -EINVAL;
	const struct counter *c = &s->c[i];
	out->label = c->label;
	out->event = c->event;
	out->available = c->fd >= 0 && c->err == 0 && c->have_value;
	out->value = out->available ? c->value : NAN;
	out->running = out->available ? c->running : 0;
	if (out->available) {
		out->reason = NULL;
		return 0;
	}
	out->reason = c->reason[0] ? c->reason : "not read yet (call cn_counters_read)";
	return c->err ? -c->err : -ENODATA;
}

int cn_counters_find(const struct cn_counters *s, const char *label)
{
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->c[i].label, label) == 0)
			return (int)i;
	return -ENOENT;
}

size_t cn_counters_describe(const struct cn_counters *s, char *buf, size_t len)
{
	unsigned avail = 0, unavail = 0;
	const char *common = NULL;
	bool same = true;

	for (unsigned i = 0; i < s->n; i++) {
		const struct counter *c = &s->c[i];
		if (c->fd >= 0 && c->err == 0) {
			avail++;
			continue;
		}
		unavail++;
		if (!common)
			common = c->reason;
		else if (strcmp(common, c->reason) != 0)
			same = false;
	}
	if (unavail == 0)
		return (size_t)snprintf(buf, len, "%u hardware counters available (%u groups)",
					avail, s->ngroups);
	if (avail == 0 && same)
		return (size_t)snprintf(buf, len, "hardware counters unavailable: %s", common);

	size_t need = (size_t)snprintf(buf, len, "%u of %u hardware counters available; unavailable:",
				       avail, s->n);
	for (unsigned i = 0; i < s->n; i++) {
		const struct counter *c = &s->c[i];
		if (c->fd >= 0 && c->err == 0)
			continue;
		need += (size_t)snprintf(need < len ? buf + need : NULL, need < len ? len - need : 0,
					 " %s (%s);", c->label, c->reason);
	}
	return need;
}
