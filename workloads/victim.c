// SPDX-License-Identifier: GPL-2.0
/*
 * victim: the latency-sensitive neighbour of a memory hog.
 *
 * server mode: every --period a round is due; it touches --touch random
 * pages of its working set (or all of them) and records the round's latency
 * from when it was due, and its service time (the touch alone). With --away,
 * it comes and goes: after every --busy of rounds it gives its working set
 * back (MADV_DONTNEED), sleeps --away, then fills it again and serves on;
 * the refill is timed on its own and the rounds are due from its end.
 * idle mode: Andrew Morton's 2004 test. Touch everything, sleep, then
 * measure how much is still resident and what re-touching it costs.
 */
#include "wl.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum victim_mode { MODE_SERVER, MODE_IDLE };

struct victim_opts {
	uint64_t wss;
	enum victim_mode mode;
	uint64_t period_ns;
	uint64_t touch_pages;	/* 0: all of them */
	uint64_t duration_ns;	/* 0: until SIGTERM */
	uint64_t sleep_ns;
	uint64_t busy_ns, away_ns;	/* away 0: always there */
	const char *log_path;
	const char *name;
	uint64_t seed;
};

struct victim {
	struct victim_opts o;
	unsigned char *mem;
	size_t page, pages;
	uint64_t rng;
	FILE *log;
};

/* Set from signal handlers: the one place where file-scope state is needed. */
static volatile sig_atomic_t stop_requested, wake_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void on_wake(int sig)
{
	(void)sig;
	wake_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: victim [options]\n"
		"  --wss SIZE        working set, touched once at start (default 64M)\n"
		"  --mode MODE       server (default) or idle\n"
		"  --period TIME     server: one round every TIME (default 10ms)\n"
		"  --touch N|all     server: random pages touched per round (default 16)\n"
		"  --duration SECS   server: stop after this long (default: until SIGTERM)\n"
		"  --sleep TIME      idle: sleep this long before the re-touch (default 20s;\n"
		"                    SIGUSR1 ends the sleep early)\n"
		"  --busy TIME       server: with --away, serve this long between absences\n"
		"                    (default 3s)\n"
		"  --away TIME       server: then free the working set for this long, and\n"
		"                    refill it on return (default 0: never away)\n"
		"  --log FILE        server: per-round log with a header\n"
		"                    (due_ms latency_us service_us majflt)\n"
		"  --name NAME       process name for ps and traces (default victim)\n"
		"  --seed N          random seed (default 1)\n"
		"  --help            this text\n"
		"Output (TSV with a header): server: rounds missed p50_us p90_us p99_us\n"
		"p999_us max_us majflt service_p50_us service_p99_us service_max_us\n"
		"refills refill_p50_ms refill_max_ms, where latency runs from when a round\n"
		"was due and missed counts rounds that started a period or more late;\n"
		"idle: wss_kb resident_pct retouch_ms retouch_majflt.\n");
}

static void die_usage(const char *what, const char *value)
{
	fprintf(stderr, "victim: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(WL_EXIT_USAGE);
}

static void parse_args(int argc, char **argv, struct victim_opts *o)
{
	enum { O_WSS = 256, O_MODE, O_PERIOD, O_TOUCH, O_DURATION, O_SLEEP, O_BUSY, O_AWAY,
	       O_LOG, O_NAME, O_SEED, O_HELP };
	static const struct option longopts[] = {
		{ "wss", required_argument, NULL, O_WSS },
		{ "mode", required_argument, NULL, O_MODE },
		{ "period", required_argument, NULL, O_PERIOD },
		{ "touch", required_argument, NULL, O_TOUCH },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "sleep", required_argument, NULL, O_SLEEP },
		{ "busy", required_argument, NULL, O_BUSY },
		{ "away", required_argument, NULL, O_AWAY },
		{ "log", required_argument, NULL, O_LOG },
		{ "name", required_argument, NULL, O_NAME },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *err;
	int c;

	*o = (struct victim_opts){
		.wss = 64ull << 20, .mode = MODE_SERVER, .period_ns = 10000000ull,
		.touch_pages = 16, .sleep_ns = 20000000000ull, .busy_ns = 3000000000ull,
		.name = "victim", .seed = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_WSS:
			if (wl_parse_size(optarg, &o->wss, &err))
				die_usage(err, optarg);
			if (o->wss == 0)
				die_usage("--wss must be more than 0", optarg);
			if (o->wss > (uint64_t)SIZE_MAX / 2)
				die_usage("--wss larger than the address space", optarg);
			break;
		case O_MODE:
			if (!strcmp(optarg, "server"))
				o->mode = MODE_SERVER;
			else if (!strcmp(optarg, "idle"))
				o->mode = MODE_IDLE;
			else
				die_usage("--mode must be server or idle", optarg);
			break;
		case O_PERIOD:
			if (wl_parse_duration_ns(optarg, &o->period_ns) || o->period_ns < 100000)
				die_usage("--period must be at least 100us", optarg);
			break;
		case O_TOUCH:
			if (!strcmp(optarg, "all"))
				o->touch_pages = 0;
			else if (wl_parse_u64(optarg, UINT32_MAX, &o->touch_pages) || !o->touch_pages)
				die_usage("--touch must be a positive number or 'all'", optarg);
			break;
		case O_DURATION:
			if (wl_parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns)
				die_usage("--duration must be a positive time", optarg);
			break;
		case O_SLEEP:
			if (wl_parse_duration_ns(optarg, &o->sleep_ns))
				die_usage("--sleep must be a time such as 20s", optarg);
			break;
		case O_BUSY:
			if (wl_parse_duration_ns(optarg, &o->busy_ns) || o->busy_ns < 10000000ull)
				die_usage("--busy must be at least 10ms", optarg);
			break;
		case O_AWAY:
			if (wl_parse_duration_ns(optarg, &o->away_ns))
				die_usage("--away must be a time such as 3s", optarg);
			break;
		case O_LOG:
			o->log_path = optarg;
			break;
		case O_NAME:
			o->name = optarg;
			break;
		case O_SEED:
			if (wl_parse_u64(optarg, UINT64_MAX, &o->seed))
				die_usage("--seed must be a non-negative integer", optarg);
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			die_usage("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument", argv[optind]);
	if (o->away_ns && o->mode != MODE_SERVER)
		die_usage("--away is for server mode", NULL);
}

static uint64_t majflt_now(void)
{
	struct wl_self s = { 0 };

	wl_read_self(&s);
	return s.majflt;
}

static void touch_all(struct victim *v)
{
	for (size_t p = 0; p < v->pages; p++)
		v->mem[p * v->page]++;
}

/*
 * Away: give the working set back, sleep until back_ns (or a stop), then
 * fill it again. Returns how long the refill took; 0 if stopped while away.
 */
static uint64_t go_away(struct victim *v, uint64_t back_ns)
{
	uint64_t t0;

	if (madvise(v->mem, v->pages * v->page, MADV_DONTNEED)) {
		fprintf(stderr, "victim: madvise(MADV_DONTNEED): %s\n", strerror(errno));
		exit(1);
	}
	while (!stop_requested && wl_now_ns() < back_ns) {
		uint64_t next = wl_now_ns() + 100000000ull;

		wl_sleep_until_ns(next < back_ns ? next : back_ns);
	}
	if (stop_requested)
		return 0;
	t0 = wl_now_ns();
	touch_all(v);
	return wl_now_ns() - t0;
}

/*
 * Open loop: round k is due at start + k * period whatever happened to the
 * rounds before it, and its latency runs from when it was due. A stall of
 * one second at a 10 ms period thus shows as 100 late rounds with latencies
 * from 1 s down, as the requests queued behind it would see them, instead
 * of one slow round (the coordinated omission of a closed loop). Rounds that
 * fell behind run back to back until the schedule is caught up.
 */
static void run_server(struct victim *v)
{
	/* 30 KiB each: keep them off the stack */
	static struct wl_hist latency, service, refill;
	uint64_t start = wl_now_ns(), due = start, rounds = 0, late = 0;
	uint64_t busy_end = start + v->o.busy_ns;
	uint64_t majflt0 = majflt_now();

	wl_hist_init(&latency);
	wl_hist_init(&service);
	wl_hist_init(&refill);
	while (!stop_requested) {
		uint64_t t0, t1, n = v->o.touch_pages ? v->o.touch_pages : v->pages;

		if (v->o.away_ns && due >= busy_end) {
			uint64_t back = busy_end + v->o.away_ns, took;

			if (v->o.duration_ns && back - start >= v->o.duration_ns)
				break;
			took = go_away(v, back);
			if (stop_requested)
				break;
			wl_hist_add(&refill, took);
			due = wl_now_ns();
			busy_end = due + v->o.busy_ns;
		}
		wl_sleep_until_ns(due);
		if (stop_requested)
			break;
		t0 = wl_now_ns();
		for (uint64_t i = 0; i < n; i++) {
			size_t p = v->o.touch_pages ? (size_t)(wl_rand(&v->rng) % v->pages) : (size_t)i;

			v->mem[p * v->page]++;
		}
		t1 = wl_now_ns();
		wl_hist_add(&latency, t1 - due);
		wl_hist_add(&service, t1 - t0);
		rounds++;
		/* Started when the next round was already due. */
		if (t0 >= due + v->o.period_ns)
			late++;
		if (v->log)
			fprintf(v->log, "%.1f\t%.1f\t%.1f\t%llu\n", (double)(due - start) / 1e6,
				(double)(t1 - due) / 1e3, (double)(t1 - t0) / 1e3,
				(unsigned long long)majflt_now());
		due += v->o.period_ns;
		if (v->o.duration_ns && due - start >= v->o.duration_ns)
			break;
	}
	wl_print_rounds_summary(stdout, rounds, late, &latency, majflt_now() - majflt0, &service, &refill);
}

static void run_idle(struct victim *v)
{
	uint64_t deadline = wl_now_ns() + v->o.sleep_ns, t0, t1, majflt0;
	double resident;

	while (!stop_requested && !wake_requested && wl_now_ns() < deadline) {
		uint64_t next = wl_now_ns() + 100000000ull;

		wl_sleep_until_ns(next < deadline ? next : deadline);
	}
	resident = wl_resident_fraction(v->mem, v->o.wss);
	majflt0 = majflt_now();
	t0 = wl_now_ns();
	touch_all(v);
	t1 = wl_now_ns();
	printf("wss_kb\tresident_pct\tretouch_ms\tretouch_majflt\n");
	printf("%llu\t%.1f\t%.1f\t%llu\n", (unsigned long long)(v->o.wss >> 10), resident * 100,
	       (double)(t1 - t0) / 1e6, (unsigned long long)(majflt_now() - majflt0));
}

int main(int argc, char **argv)
{
	struct victim v = { 0 };
	struct sigaction stop = { .sa_handler = on_stop }, wake = { .sa_handler = on_wake };

	parse_args(argc, argv, &v.o);
	wl_line_buffered();
	wl_set_name(v.o.name);
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	sigaction(SIGUSR1, &wake, NULL);
	v.page = (size_t)sysconf(_SC_PAGESIZE);
	v.pages = v.o.wss / v.page ? v.o.wss / v.page : 1;
	v.rng = v.o.seed * 0x9E3779B97F4A7C15ULL + 1;
	if (v.o.log_path) {
		v.log = fopen(v.o.log_path, "we");
		if (!v.log) {
			fprintf(stderr, "victim: cannot create %s: %s\n", v.o.log_path, strerror(errno));
			return WL_EXIT_USAGE;
		}
		fprintf(v.log, "due_ms\tlatency_us\tservice_us\tmajflt\n");
	}
	v.mem = mmap(NULL, v.pages * v.page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (v.mem == MAP_FAILED) {
		fprintf(stderr, "victim: cannot map %llu bytes: %s\n",
			(unsigned long long)v.o.wss, strerror(errno));
		return 1;
	}
	touch_all(&v);
	/* The scenario driver waits for this line before it starts the hog. */
	printf("# ready\n");
	if (v.o.mode == MODE_IDLE)
		run_idle(&v);
	else
		run_server(&v);
	if (v.log)
		fclose(v.log);
	return 0;
}
