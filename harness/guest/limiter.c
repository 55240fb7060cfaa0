// SPDX-License-Identifier: GPL-2.0
/*
 * limiter: give a running process its RLIMIT_RSS with prlimit(2) at a
 * well-defined moment, for the bench's -pid scenarios. Started before the
 * memory pressure and locked in memory, it acts within milliseconds of its
 * trigger; starting the prlimit program under thrashing took 0.2-0.4 s,
 * in which the neighbour it was meant to protect lost up to 43 MiB.
 *
 * It waits until the --watch process has lost --lost percent of the
 * resident memory it had when the limiter started (reclaim has reached
 * it), or --max-wait has passed, then writes --out: what every role in
 * --roles DIR (file name = role, content = pid) had resident just before
 * the prlimit() call and just after it returned. Columns:
 *   when t_ms role pid rss_kb
 * t_ms counts from --t0 (seconds of /proc/uptime when the sampler started).
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

struct limiter {
	pid_t pid, watch;
	uint64_t rss_bytes, max_wait_ns;
	double lost_pct, t0_s;
	const char *roles_dir, *out_path;
	long page_kb;
};

static void usage(const char *what, const char *value)
{
	fprintf(stderr, "limiter: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(2);
}

/* Resident KiB of a process, or -1 if it is gone. */
static long long rss_kb(const struct limiter *l, pid_t pid)
{
	char path[64], text[256];
	uint64_t kb;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return wl_statm_rss_kb(text, l->page_kb, &kb) ? -1 : (long long)kb;
}

static double uptime_s(void)
{
	double up = 0;
	FILE *f = fopen("/proc/uptime", "re");

	if (f) {
		if (fscanf(f, "%lf", &up) != 1)
			up = 0;
		fclose(f);
	}
	return up;
}

/* One row per role: what it has resident now. */
static void snapshot(const struct limiter *l, FILE *out, const char *when)
{
	long long t_ms = (long long)((uptime_s() - l->t0_s) * 1000);
	DIR *d = opendir(l->roles_dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[512];
		FILE *f;
		int pid;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", l->roles_dir, e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fscanf(f, "%d", &pid) == 1)
			fprintf(out, "%s\t%lld\t%s\t%d\t%lld\n", when, t_ms, e->d_name, pid,
				rss_kb(l, pid));
		fclose(f);
	}
	closedir(d);
}

static void parse_args(int argc, char **argv, struct limiter *l)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "rss", required_argument, NULL, 'r' },
		{ "watch", required_argument, NULL, 'w' },
		{ "lost", required_argument, NULL, 'l' },
		{ "max-wait", required_argument, NULL, 'm' },
		{ "roles", required_argument, NULL, 'R' },
		{ "t0", required_argument, NULL, 't' },
		{ "out", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const char *err;
	uint64_t v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
		case 'w':
			if (wl_parse_u64(optarg, 4194304, &v) || v == 0)
				usage("--pid and --watch take a process id", optarg);
			*(c == 'p' ? &l->pid : &l->watch) = (pid_t)v;
			break;
		case 'r':
			if (wl_parse_size(optarg, &l->rss_bytes, &err))
				usage("--rss must be a size such as 4000K", optarg);
			break;
		case 'l':
			if (wl_parse_positive(optarg, &l->lost_pct) || l->lost_pct >= 100)
				usage("--lost must be a percentage above 0 and below 100", optarg);
			break;
		case 'm':
			if (wl_parse_duration_ns(optarg, &l->max_wait_ns))
				usage("--max-wait must be a time such as 5s", optarg);
			break;
		case 'R':
			l->roles_dir = optarg;
			break;
		case 't':
			if (wl_parse_positive(optarg, &l->t0_s))
				usage("--t0 must be seconds of /proc/uptime", optarg);
			break;
		case 'o':
			l->out_path = optarg;
			break;
		default:
			usage("unknown option (see the comment at the top of limiter.c)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage("unexpected argument", argv[optind]);
	if (!l->pid || !l->rss_bytes || !l->roles_dir || !l->out_path)
		usage("--pid, --rss, --roles and --out are required", NULL);
}

int main(int argc, char **argv)
{
	struct limiter l = { .max_wait_ns = 5000000000ull, .lost_pct = 10 };
	struct rlimit rl;
	long long full;
	uint64_t deadline;
	FILE *out;
	int rc = 0;

	parse_args(argc, argv, &l);
	wl_set_name("limiter");
	l.page_kb = sysconf(_SC_PAGESIZE) / 1024;
	/* Under thrashing, a limiter that has to fault its own pages back is late. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "limiter: mlockall: %s (going on unlocked)\n", strerror(errno));
	out = fopen(l.out_path, "we");
	if (!out) {
		fprintf(stderr, "limiter: cannot create %s: %s\n", l.out_path, strerror(errno));
		return 1;
	}
	full = l.watch ? rss_kb(&l, l.watch) : -1;
	deadline = wl_now_ns() + l.max_wait_ns;
	while (wl_now_ns() < deadline) {
		long long now = full > 0 ? rss_kb(&l, l.watch) : -1;

		if (full > 0 && now >= 0 && now * 100 <= full * (100 - l.lost_pct))
			break;
		wl_sleep_until_ns(wl_now_ns() + 10000000ull);
	}
	fprintf(out, "when\tt_ms\trole\tpid\trss_kb\n");
	snapshot(&l, out, "before");
	rl.rlim_cur = l.rss_bytes;
	rl.rlim_max = RLIM_INFINITY;
	if (prlimit(l.pid, RLIMIT_RSS, &rl, NULL)) {
		fprintf(stderr, "limiter: prlimit on %d: %s\n", (int)l.pid, strerror(errno));
		rc = 1;
	}
	snapshot(&l, out, "after");
	if (fclose(out)) {
		fprintf(stderr, "limiter: writing %s: %s\n", l.out_path, strerror(errno));
		rc = 1;
	}
	return rc;
}
