// SPDX-License-Identifier: GPL-2.0
/*
 * damon-feed: feed a DAMOS quota goal from a process's resident size, for
 * the bench's DAMON scenarios (harness/guest/damon-pageout.sh sets the
 * kdamond up, then runs this). DAMOS tunes a scheme's quota from a
 * "user_input" goal: below its target DAMOS raises the quota, above it
 * lowers it. Every --interval this writes the goal's current value as
 * the limit over the process's RSS in basis points (10000 = at the limit,
 * at most 20000), commits it, and logs one line to --out:
 *   t_ms rss_kb goal_bp quota_bytes paged_out_kb
 * (quota_bytes: the effective quota DAMOS uses per reset interval;
 * paged_out_kb: what the scheme has applied pageout to so far; both are
 * read once a second.)
 * It exits when the process is gone or the kdamond has stopped.
 *
 * A program locked in memory: a shell loop did the same every 450 ms
 * instead of 100 under the bench's memory pressure, each fork faulting.
 */
#include "wl.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct feed {
	pid_t pid;
	uint64_t limit_kb, interval_ns;
	const char *kdamond, *out_path;
	long page_kb;
};

static void usage(const char *what, const char *value)
{
	fprintf(stderr, "damon-feed: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(2);
}

/* Read the first line of kdamond-relative FILE into buf; 0 on success. */
static int kd_read(const struct feed *f, const char *file, char *buf, size_t len)
{
	char path[512];
	FILE *in;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", f->kdamond, file);
	in = fopen(path, "re");
	if (!in)
		return -1;
	ok = fgets(buf, (int)len, in) != NULL;
	fclose(in);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static int kd_write(const struct feed *f, const char *file, const char *value)
{
	char path[512];
	FILE *out;
	int bad;

	snprintf(path, sizeof(path), "%s/%s", f->kdamond, file);
	out = fopen(path, "we");
	if (!out)
		return -1;
	bad = fputs(value, out) < 0;
	return fclose(out) || bad ? -1 : 0;
}

static long long kd_number(const struct feed *f, const char *file)
{
	char text[64];

	return kd_read(f, file, text, sizeof(text)) ? -1 : atoll(text);
}

/* Resident KiB of the process, or -1 if it is gone. */
static long long rss_kb(const struct feed *f)
{
	char path[64], text[256];
	uint64_t kb;
	FILE *in;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)f->pid);
	in = fopen(path, "re");
	if (!in)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, in);
	fclose(in);
	text[n] = '\0';
	return wl_statm_rss_kb(text, f->page_kb, &kb) ? -1 : (long long)kb;
}

#define SCHEME "contexts/0/schemes/0/"

static int run(const struct feed *f)
{
	uint64_t start = wl_now_ns(), next = start, feeds = 0;
	long long rss, quota = -1, applied_kb = -1;
	char state[16], value[32];
	FILE *out;

	out = fopen(f->out_path, "we");
	if (!out) {
		fprintf(stderr, "damon-feed: %s: %s\n", f->out_path, strerror(errno));
		return 1;
	}
	fprintf(out, "t_ms\trss_kb\tgoal_bp\tquota_bytes\tpaged_out_kb\n");
	while ((rss = rss_kb(f)) >= 0) {
		uint64_t goal = 20000;

		if (kd_read(f, "state", state, sizeof(state)) || strcmp(state, "on"))
			break;
		if (rss > 0 && f->limit_kb * 10000 / (uint64_t)rss < goal)
			goal = f->limit_kb * 10000 / (uint64_t)rss;
		snprintf(value, sizeof(value), "%llu", (unsigned long long)goal);
		/*
		 * The kdamond may stop between the check and these writes. Each
		 * command waits for the kdamond's next aggregation (100 ms), so
		 * the figures for the log are refreshed once a second only.
		 */
		kd_write(f, SCHEME "quotas/goals/0/current_value", value);
		kd_write(f, "state", "commit_schemes_quota_goals");
		if (feeds++ % 10 == 0) {
			kd_write(f, "state", "update_schemes_effective_quotas");
			kd_write(f, "state", "update_schemes_stats");
			quota = kd_number(f, SCHEME "quotas/effective_bytes");
			applied_kb = kd_number(f, SCHEME "stats/sz_applied") / 1024;
		}
		fprintf(out, "%llu\t%lld\t%llu\t%lld\t%lld\n",
			(unsigned long long)((wl_now_ns() - start) / 1000000), rss,
			(unsigned long long)goal, quota, applied_kb);
		fflush(out);
		next += f->interval_ns;
		wl_sleep_until_ns(next);
	}
	return fclose(out) ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "limit", required_argument, NULL, 'l' },
		{ "kdamond", required_argument, NULL, 'k' },
		{ "interval", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct feed f = { .interval_ns = 100000000ULL };
	uint64_t n, limit = 0;
	const char *err;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (wl_parse_u64(optarg, 1U << 30, &n) || !n)
				usage("--pid must be a process id", optarg);
			f.pid = (pid_t)n;
			break;
		case 'l':
			if (wl_parse_size(optarg, &limit, &err) || limit < 4096)
				usage("--limit must be a size of at least 4K", optarg);
			break;
		case 'k':
			if (access(optarg, W_OK))
				usage("--kdamond must be a writable DAMON kdamond folder", optarg);
			f.kdamond = optarg;
			break;
		case 'i':
			if (wl_parse_duration_ns(optarg, &f.interval_ns) || !f.interval_ns)
				usage("--interval must be a positive duration", optarg);
			break;
		case 'o':
			f.out_path = optarg;
			break;
		default:
			usage("usage: damon-feed --pid PID --limit SIZE --kdamond DIR --out FILE [--interval 100ms]",
			      NULL);
		}
	}
	if (!f.pid || !limit || !f.kdamond || !f.out_path || optind != argc)
		usage("usage: damon-feed --pid PID --limit SIZE --kdamond DIR --out FILE [--interval 100ms]",
		      NULL);
	f.limit_kb = limit / 1024;
	f.page_kb = sysconf(_SC_PAGESIZE) / 1024;
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "damon-feed: mlockall: %s (going on unlocked)\n", strerror(errno));
	return run(&f);
}
