// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the rsslim workloads; see wl.h. */
#include "wl.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static int parse_digits(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return 0;
}

int wl_parse_size(const char *s, uint64_t *bytes, const char **err)
{
	const char *p = s;
	uint64_t v;
	unsigned int shift = 0;
	int rc;

	if (!s || !*s) {
		*err = "empty size";
		return -1;
	}
	rc = parse_digits(&p, &v);
	if (rc == -1) {
		*err = "a size must start with a digit (no sign)";
		return -1;
	}
	if (rc == -2) {
		*err = "size too large";
		return -1;
	}
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	case 't': case 'T': shift = 40; p++; break;
	default: break;
	}
	if (shift && (!strcmp(p, "B") || !strcmp(p, "iB")))
		p += strlen(p);
	else if (!shift && !strcmp(p, "B"))
		p++;
	if (*p) {
		*err = "unknown unit (use K, M, G or T)";
		return -1;
	}
	if (shift && v > (UINT64_MAX >> shift)) {
		*err = "size too large";
		return -1;
	}
	*bytes = v << shift;
	return 0;
}

int wl_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	const char *p = s;
	uint64_t v;

	if (!s || parse_digits(&p, &v) || *p || v > max)
		return -1;
	*out = v;
	return 0;
}

int wl_parse_positive(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v) || v <= 0)
		return -1;
	*out = v;
	return 0;
}

int wl_parse_duration_ns(const char *s, uint64_t *ns)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 },
	};
	char *end;
	double v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			double r = v * units[i].scale;

			if (r >= 1.8e19)
				return -1;
			*ns = (uint64_t)r;
			return 0;
		}
	}
	return -1;
}

uint64_t wl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void wl_sleep_until_ns(uint64_t deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000u),
		.tv_nsec = (long)(deadline_ns % 1000000000u),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void wl_hist_init(struct wl_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

size_t wl_hist_bucket(uint64_t value)
{
	unsigned int shift;

	if (value < 2 * WL_HIST_SUB)
		return (size_t)value;
	shift = (unsigned int)(63 - __builtin_clzll(value)) - WL_HIST_SUB_BITS;
	return (size_t)shift * WL_HIST_SUB + (size_t)(value >> shift);
}

uint64_t wl_hist_bucket_high(size_t bucket)
{
	unsigned int shift;
	uint64_t mant;

	if (bucket < 2 * WL_HIST_SUB)
		return bucket;
	shift = (unsigned int)(bucket / WL_HIST_SUB) - 1;
	mant = bucket - (uint64_t)shift * WL_HIST_SUB;
	/* Wraps to UINT64_MAX for the very last bucket, as it should. */
	return ((mant + 1) << shift) - 1;
}

void wl_print_rounds_summary(FILE *f, uint64_t rounds, uint64_t late, const struct wl_hist *latency,
			     uint64_t majflt, const struct wl_hist *service,
			     const struct wl_hist *refill)
{
	fprintf(f, "rounds\tmissed\tp50_us\tp90_us\tp99_us\tp999_us\tmax_us\tmajflt\tservice_p50_us\t"
		"service_p99_us\tservice_max_us\trefills\trefill_p50_ms\trefill_max_ms\n");
	fprintf(f, "%llu\t%llu\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%llu\t%.1f\t%.1f\t%.1f\t",
		(unsigned long long)rounds, (unsigned long long)late,
		wl_hist_percentile(latency, 50) / 1e3, wl_hist_percentile(latency, 90) / 1e3,
		wl_hist_percentile(latency, 99) / 1e3, wl_hist_percentile(latency, 99.9) / 1e3,
		latency->max / 1e3 * (latency->n > 0), (unsigned long long)majflt,
		wl_hist_percentile(service, 50) / 1e3, wl_hist_percentile(service, 99) / 1e3,
		service->max / 1e3 * (service->n > 0));
	if (refill)
		fprintf(f, "%llu\t%.1f\t%.1f\n", (unsigned long long)refill->n,
			wl_hist_percentile(refill, 50) / 1e6, refill->max / 1e6 * (refill->n > 0));
	else
		fprintf(f, "0\t0\t0\n");
}

void wl_hist_add(struct wl_hist *h, uint64_t value)
{
	h->count[wl_hist_bucket(value)]++;
	h->n++;
	h->sum += value;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
}

uint64_t wl_hist_percentile(const struct wl_hist *h, double p)
{
	uint64_t rank, seen = 0;

	if (!h->n)
		return 0;
	/* The epsilon keeps 99.9% of 200000 at rank 199800, not 199801. */
	rank = (uint64_t)ceill((long double)p * (long double)h->n / 100.0L - 1e-9L);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	for (size_t b = 0; b < WL_HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank) {
			uint64_t high = wl_hist_bucket_high(b);

			return high < h->max ? high : h->max;
		}
	}
	return h->max;
}

int wl_statm_rss_kb(const char *statm, long page_kb, uint64_t *rss_kb)
{
	unsigned long long size, resident;
	int used = 0;

	if (sscanf(statm, "%llu %llu%n", &size, &resident, &used) != 2 || used == 0)
		return -1;
	*rss_kb = resident * (uint64_t)page_kb;
	return 0;
}

int wl_read_self(struct wl_self *s)
{
	struct rusage ru;
	char buf[256];
	FILE *f;
	size_t n;

	if (getrusage(RUSAGE_SELF, &ru))
		return -1;
	s->majflt = (uint64_t)ru.ru_majflt;
	s->minflt = (uint64_t)ru.ru_minflt;
	s->utime_ms = (uint64_t)ru.ru_utime.tv_sec * 1000 + (uint64_t)ru.ru_utime.tv_usec / 1000;
	s->stime_ms = (uint64_t)ru.ru_stime.tv_sec * 1000 + (uint64_t)ru.ru_stime.tv_usec / 1000;
	f = fopen("/proc/self/statm", "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return wl_statm_rss_kb(buf, sysconf(_SC_PAGESIZE) / 1024, &s->rss_kb);
}

double wl_resident_fraction(void *addr, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t pages = (len + page - 1) / page, resident = 0;
	unsigned char *vec = malloc(pages ? pages : 1);

	if (!vec || !pages || mincore(addr, len, vec)) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	free(vec);
	return (double)resident / (double)pages;
}

void wl_set_name(const char *name)
{
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

void wl_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}
