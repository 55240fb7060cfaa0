/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the rsslim workloads (hog, victim): size and
 * number parsing, clocks, a log-linear latency histogram, and reading the
 * process's own memory counters.
 */
#ifndef RSSLIM_WL_H
#define RSSLIM_WL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status for bad command-line input, as the harness expects. */
#define WL_EXIT_USAGE 2

/*
 * Parse "300M", "4096K", "1G", "12345" (bytes) with binary units K, M, G, T
 * (an optional trailing "B" or "iB" is accepted). Rejects empty input,
 * signs, unknown units, trailing garbage and values that overflow 64 bits.
 * Returns 0 on success, -1 with *err naming the problem otherwise.
 */
int wl_parse_size(const char *s, uint64_t *bytes, const char **err);

/* Parse a non-negative decimal integer no larger than max. */
int wl_parse_u64(const char *s, uint64_t max, uint64_t *out);

/* Parse a duration "10ms", "2s", "500us", "1.5s"; plain numbers are seconds. */
int wl_parse_duration_ns(const char *s, uint64_t *ns);

/* Parse a positive finite decimal number. */
int wl_parse_positive(const char *s, double *out);

uint64_t wl_now_ns(void);
void wl_sleep_until_ns(uint64_t deadline_ns);

/*
 * Log-linear histogram: values below 2^WL_HIST_SUB_BITS+1 are exact, larger
 * ones fall in one of 2^WL_HIST_SUB_BITS buckets per power of two, so a
 * reported percentile is within 1/2^WL_HIST_SUB_BITS (1.6%) of the truth.
 */
#define WL_HIST_SUB_BITS 6
#define WL_HIST_SUB (1u << WL_HIST_SUB_BITS)
#define WL_HIST_BUCKETS ((64 - WL_HIST_SUB_BITS + 1) * WL_HIST_SUB)

struct wl_hist {
	uint64_t count[WL_HIST_BUCKETS];
	uint64_t n;
	uint64_t min;
	uint64_t max;
	long double sum;
};

void wl_hist_init(struct wl_hist *h);
void wl_hist_add(struct wl_hist *h, uint64_t value);
/*
 * The nearest-rank percentile (0 < p <= 100): the smallest recorded value
 * v such that at least p% of the values are <= v, reported as the upper
 * bound of v's bucket (never above the maximum). 0 when empty.
 */
uint64_t wl_hist_percentile(const struct wl_hist *h, double p);
size_t wl_hist_bucket(uint64_t value);
uint64_t wl_hist_bucket_high(size_t bucket);

/*
 * A server's closing summary (a header line and a value line, as
 * summarize.py reads them): rounds, late rounds, latency and service-time
 * percentiles in microseconds, major faults, and refills in milliseconds
 * (all 0 when refill is NULL: a server that never goes away).
 */
void wl_print_rounds_summary(FILE *f, uint64_t rounds, uint64_t late, const struct wl_hist *latency,
			     uint64_t majflt, const struct wl_hist *service,
			     const struct wl_hist *refill);

/* The process's own counters, from getrusage() and /proc/self/statm. */
struct wl_self {
	uint64_t majflt;
	uint64_t minflt;
	uint64_t rss_kb;
	uint64_t utime_ms;
	uint64_t stime_ms;	/* its faults, and in the kernel's modes 2/3 its own trims */
};
int wl_read_self(struct wl_self *s);

/* RSS in KiB from the text of a /proc/PID/statm file; -1 if malformed. */
int wl_statm_rss_kb(const char *statm, long page_kb, uint64_t *rss_kb);

/* Resident share (0..1) of [addr, addr+len), from mincore(). */
double wl_resident_fraction(void *addr, size_t len);

/* Name the process for ps and traces (PR_SET_NAME). */
void wl_set_name(const char *name);

/* Line-buffered stdout, so TSV lines reach a pipe as they are printed. */
void wl_line_buffered(void);

/* xorshift64* generator: cheap, deterministic per seed, good enough here. */
static inline uint64_t wl_rand(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1DULL;
}

#endif
