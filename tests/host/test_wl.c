// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for the workloads library (TAP 13). */
#include "wl.h"

#include <stdlib.h>
#include <string.h>

struct tap {
	int n;
	int failed;
};

static void result(struct tap *t, int ok, const char *name)
{
	t->n++;
	if (!ok)
		t->failed++;
	printf("%sok %d %s\n", ok ? "" : "not ", t->n, name);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static void test_sizes(struct tap *t)
{
	static const struct { const char *in; uint64_t want; } good[] = {
		{ "0", 0 }, { "1", 1 }, { "4096", 4096 }, { "4K", 4096 }, { "4k", 4096 },
		{ "300M", 300ull << 20 }, { "1G", 1ull << 30 }, { "2T", 2ull << 40 },
		{ "64MiB", 64ull << 20 }, { "5B", 5 }, { "16777215T", 16777215ull << 40 },
	};
	static const char *const bad[] = {
		"", "12Q", "-5M", "+5M", "99999999999T", "M", "1.5G", "10 M", "5MB ", "1KK",
		"18446744073709551616", "0x10", "1e6",
	};
	int ok = 1;
	const char *err;
	uint64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		if (wl_parse_size(good[i].in, &v, &err) || v != good[i].want) {
			printf("# size '%s' parsed wrongly\n", good[i].in);
			ok = 0;
		}
	}
	result(t, ok, "wl_parse_size accepts valid sizes with binary units");
	ok = 1;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err = NULL;
		if (!wl_parse_size(bad[i], &v, &err) || !err) {
			printf("# size '%s' accepted\n", bad[i]);
			ok = 0;
		}
	}
	result(t, ok, "wl_parse_size rejects signs, unknown units, garbage and overflow");
}

static void test_durations(struct tap *t)
{
	uint64_t ns;
	int ok = !wl_parse_duration_ns("10ms", &ns) && ns == 10000000ull &&
		 !wl_parse_duration_ns("2", &ns) && ns == 2000000000ull &&
		 !wl_parse_duration_ns("1.5s", &ns) && ns == 1500000000ull &&
		 !wl_parse_duration_ns("250us", &ns) && ns == 250000ull &&
		 wl_parse_duration_ns("-1s", &ns) && wl_parse_duration_ns("5m", &ns) &&
		 wl_parse_duration_ns("", &ns) && wl_parse_duration_ns("s", &ns);

	result(t, ok, "wl_parse_duration_ns parses units and rejects bad input");
}

/* Percentiles from the histogram against a sort of the same data. */
static void test_percentiles(struct tap *t)
{
	static const double ps[] = { 1, 50, 90, 99, 99.9, 100 };
	static struct wl_hist h;
	enum { N = 200000 };
	uint64_t *vals = malloc(N * sizeof(*vals)), rng = 42;
	int ok = 1;

	for (int round = 0; round < 4 && vals; round++) {
		wl_hist_init(&h);
		for (size_t i = 0; i < N; i++) {
			/* Mix of tiny, medium and heavy-tailed values. */
			uint64_t r = wl_rand(&rng);
			uint64_t v = round == 0 ? r % 100 :
				     round == 1 ? r % 1000000 :
				     round == 2 ? (r % 1000) << (r % 40) : r;
			vals[i] = v;
			wl_hist_add(&h, v);
		}
		qsort(vals, N, sizeof(*vals), cmp_u64);
		for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
			/* Nearest rank in integers: p has one decimal at most. */
			uint64_t p10 = (uint64_t)(ps[k] * 10 + 0.5);
			size_t rank = (size_t)((p10 * N + 999) / 1000);
			uint64_t want = vals[(rank ? rank : 1) - 1];
			uint64_t got = wl_hist_percentile(&h, ps[k]);
			long double err = want ? ((long double)got - want) / want : got;

			if (got < want || err > 1.0L / WL_HIST_SUB) {
				printf("# round %d p%g: histogram %llu, exact %llu\n", round, ps[k],
				       (unsigned long long)got, (unsigned long long)want);
				ok = 0;
			}
		}
		if (h.max != vals[N - 1] || h.min != vals[0] || h.n != N)
			ok = 0;
	}
	free(vals);
	result(t, ok && vals, "histogram percentiles within 1/64 of a brute-force sort");
	wl_hist_init(&h);
	result(t, wl_hist_percentile(&h, 99) == 0, "empty histogram reports 0");
}

static void test_buckets(struct tap *t)
{
	int ok = 1;
	uint64_t prev_high = 0;

	for (size_t b = 1; b < WL_HIST_BUCKETS; b++) {
		uint64_t high = wl_hist_bucket_high(b);

		/* Buckets tile the number line: each starts after the last ends. */
		if (wl_hist_bucket(prev_high + 1) != b || wl_hist_bucket(high) != b)
			ok = 0;
		prev_high = high;
	}
	ok = ok && prev_high == UINT64_MAX && wl_hist_bucket(UINT64_MAX) == WL_HIST_BUCKETS - 1;
	result(t, ok, "histogram buckets tile 0..UINT64_MAX without gaps");
}

static void test_statm(struct tap *t)
{
	uint64_t kb = 0;
	int ok = !wl_statm_rss_kb("1000 250 30 5 0 100 0\n", 4, &kb) && kb == 1000 &&
		 wl_statm_rss_kb("", 4, &kb) && wl_statm_rss_kb("garbage", 4, &kb) &&
		 wl_statm_rss_kb("12", 4, &kb);

	result(t, ok, "statm parsing: resident pages to KiB, malformed input rejected");
}

int main(void)
{
	struct tap t = { 0 };

	printf("TAP version 13\n1..7\n");
	test_sizes(&t);
	test_durations(&t);
	test_percentiles(&t);
	test_buckets(&t);
	test_statm(&t);
	return t.failed ? 1 : 0;
}
