// SPDX-License-Identifier: GPL-2.0
/*
 * hog: a memory hog that does real work. It maps --size bytes (anonymous,
 * shmem or a file), touches all of it, then keeps touching it in a pattern
 * (sequential, random, or sorting a big array like the old qsbench) for a
 * duration or a fixed number of passes, and reports progress as TSV.
 *
 * Work has one unit per pattern, so a rate never mixes two: seq and random
 * count pages touched (the first-touch pass included), sort counts array
 * elements visited (written by the fill, scanned by a partition or by the
 * final insertion sorts).
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

enum hog_mode { MODE_ANON, MODE_SHMEM, MODE_FILE };
enum hog_pattern { PAT_SEQ, PAT_RANDOM, PAT_SORT };

struct hog_opts {
	uint64_t size;
	enum hog_mode mode;
	enum hog_pattern pattern;
	const char *path;
	uint64_t duration_ns;
	uint64_t passes;
	double rate_mib_s;
	bool write;
	uint64_t interval_ns;
	const char *name;
	uint64_t seed;
	uint64_t random_pct;
};

struct hog {
	struct hog_opts o;
	unsigned char *mem;
	size_t page;
	int fd;
	bool created_file;
	uint64_t start_ns, deadline_ns, next_report_ns;
	uint64_t work, last_report_work, last_report_ns;
	uint64_t passes_done;
	uint64_t rng;
	unsigned long sink;
};

/* Set from signal handlers: the one place where file-scope state is needed. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: hog [options]\n"
		"  --size SIZE        memory to use, e.g. 300M (default 300M)\n"
		"  --mode MODE        anon (default), shmem, or file\n"
		"  --file PATH        backing file for --mode file (default /scratch/hog.data;\n"
		"                     created, and removed at exit)\n"
		"  --pattern PAT      seq (default), random, or sort (qsbench-like sorting)\n"
		"  --duration SECS    stop after this long (default 30 s unless --passes)\n"
		"  --passes N         stop after N passes over the memory (fixed work)\n"
		"  --rate MIB/S       pace touching to this many MiB/s (seq and random)\n"
		"  --write            write to the pages it touches (default)\n"
		"  --read-only        only read them after the first touch\n"
		"  --interval TIME    report interval, e.g. 1s or 500ms (default 1s)\n"
		"  --name NAME        process name for ps and traces (default hog)\n"
		"  --seed N           random seed (default 1)\n"
		"  --random-pct PCT   first touch fills PCT%% of each page with random bytes,\n"
		"                     the rest zero: compressed swap (zram, zswap) then\n"
		"                     gets about 100/PCT to 1, as with real data, instead\n"
		"                     of the nearly empty pages of the default 0\n"
		"  --help             this text\n"
		"Output: '# work_unit=pages' (seq, random) or '# work_unit=elements'\n"
		"(sort), TSV lines t_s work work_per_s majflt minflt rss_kb, then\n"
		"'# summary key=value ...'. SIGTERM/SIGINT stop it with the summary.\n");
}

static void die_usage(const char *what, const char *value)
{
	fprintf(stderr, "hog: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(WL_EXIT_USAGE);
}

static void parse_args(int argc, char **argv, struct hog_opts *o)
{
	enum { O_SIZE = 256, O_MODE, O_FILE, O_PATTERN, O_DURATION, O_PASSES, O_RATE,
	       O_WRITE, O_READONLY, O_INTERVAL, O_NAME, O_SEED, O_RANDOM_PCT, O_HELP };
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, O_SIZE },
		{ "mode", required_argument, NULL, O_MODE },
		{ "file", required_argument, NULL, O_FILE },
		{ "pattern", required_argument, NULL, O_PATTERN },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "passes", required_argument, NULL, O_PASSES },
		{ "rate", required_argument, NULL, O_RATE },
		{ "write", no_argument, NULL, O_WRITE },
		{ "read-only", no_argument, NULL, O_READONLY },
		{ "interval", required_argument, NULL, O_INTERVAL },
		{ "name", required_argument, NULL, O_NAME },
		{ "seed", required_argument, NULL, O_SEED },
		{ "random-pct", required_argument, NULL, O_RANDOM_PCT },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	const char *err;
	int c;

	*o = (struct hog_opts){
		.size = 300ull << 20, .mode = MODE_ANON, .pattern = PAT_SEQ,
		.path = "/scratch/hog.data", .write = true, .interval_ns = 1000000000ull,
		.name = "hog", .seed = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_SIZE:
			if (wl_parse_size(optarg, &o->size, &err))
				die_usage(err, optarg);
			if (o->size == 0)
				die_usage("--size must be more than 0", optarg);
			if (o->size > (uint64_t)SIZE_MAX / 2)
				die_usage("--size larger than the address space", optarg);
			break;
		case O_MODE:
			if (!strcmp(optarg, "anon"))
				o->mode = MODE_ANON;
			else if (!strcmp(optarg, "shmem"))
				o->mode = MODE_SHMEM;
			else if (!strcmp(optarg, "file"))
				o->mode = MODE_FILE;
			else
				die_usage("--mode must be anon, shmem or file", optarg);
			break;
		case O_FILE:
			o->path = optarg;
			break;
		case O_PATTERN:
			if (!strcmp(optarg, "seq"))
				o->pattern = PAT_SEQ;
			else if (!strcmp(optarg, "random"))
				o->pattern = PAT_RANDOM;
			else if (!strcmp(optarg, "sort"))
				o->pattern = PAT_SORT;
			else
				die_usage("--pattern must be seq, random or sort", optarg);
			break;
		case O_DURATION:
			if (wl_parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns)
				die_usage("--duration must be a positive time", optarg);
			break;
		case O_PASSES:
			if (wl_parse_u64(optarg, UINT32_MAX, &o->passes) || !o->passes)
				die_usage("--passes must be a positive integer", optarg);
			break;
		case O_RATE:
			if (wl_parse_positive(optarg, &o->rate_mib_s))
				die_usage("--rate must be a positive number of MiB/s", optarg);
			break;
		case O_WRITE:
			o->write = true;
			break;
		case O_READONLY:
			o->write = false;
			break;
		case O_INTERVAL:
			if (wl_parse_duration_ns(optarg, &o->interval_ns) ||
			    o->interval_ns < 10000000ull)
				die_usage("--interval must be at least 10ms", optarg);
			break;
		case O_NAME:
			o->name = optarg;
			break;
		case O_SEED:
			if (wl_parse_u64(optarg, UINT64_MAX, &o->seed))
				die_usage("--seed must be a non-negative integer", optarg);
			break;
		case O_RANDOM_PCT:
			if (wl_parse_u64(optarg, 100, &o->random_pct))
				die_usage("--random-pct must be a whole number from 0 to 100", optarg);
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
	if (!o->duration_ns && !o->passes)
		o->duration_ns = 30ull * 1000000000ull;
	if (o->rate_mib_s > 0 && o->pattern == PAT_SORT)
		die_usage("--rate paces page touches; --pattern sort has none", NULL);
	if (o->random_pct && o->pattern == PAT_SORT)
		die_usage("--random-pct fills pages; --pattern sort writes its own random elements", NULL);
}

/*
 * A page's first touch. With --random-pct, the start of the page gets
 * random bytes: what compressed swap stores is then as big as that part,
 * not the few bytes of a page holding one counter.
 */
static void fill_page(struct hog *h, size_t off)
{
	size_t random_bytes = h->page * h->o.random_pct / 100;

	for (size_t i = 0; i + sizeof(uint64_t) <= random_bytes; i += sizeof(uint64_t)) {
		uint64_t r = wl_rand(&h->rng);

		memcpy(h->mem + off + i, &r, sizeof(r));
	}
	/* Byte 0 is the counter later passes write: never left zero. */
	h->mem[off] |= 1;
}

static const char *work_unit(const struct hog *h)
{
	return h->o.pattern == PAT_SORT ? "elements" : "pages";
}

static void map_memory(struct hog *h)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	h->fd = -1;
	if (h->o.mode == MODE_SHMEM)
		flags = MAP_SHARED | MAP_ANONYMOUS;
	if (h->o.mode == MODE_FILE) {
		h->fd = open(h->o.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (h->fd < 0) {
			fprintf(stderr, "hog: cannot create %s: %s\n", h->o.path, strerror(errno));
			exit(WL_EXIT_USAGE);
		}
		h->created_file = true;
		if (ftruncate(h->fd, (off_t)h->o.size)) {
			fprintf(stderr, "hog: cannot size %s: %s\n", h->o.path, strerror(errno));
			unlink(h->o.path);
			exit(WL_EXIT_USAGE);
		}
		flags = MAP_SHARED;
	}
	h->mem = mmap(NULL, h->o.size, PROT_READ | PROT_WRITE, flags, h->fd, 0);
	if (h->mem == MAP_FAILED) {
		fprintf(stderr, "hog: cannot map %llu bytes: %s\n",
			(unsigned long long)h->o.size, strerror(errno));
		if (h->created_file)
			unlink(h->o.path);
		exit(1);
	}
}

static void report(struct hog *h, uint64_t now)
{
	struct wl_self s = { 0 };
	double dt = (double)(now - h->last_report_ns) / 1e9;
	double rate = dt > 0 ? (double)(h->work - h->last_report_work) / dt : 0;

	wl_read_self(&s);
	printf("%.3f\t%llu\t%.0f\t%llu\t%llu\t%llu\n", (double)(now - h->start_ns) / 1e9,
	       (unsigned long long)h->work, rate, (unsigned long long)s.majflt,
	       (unsigned long long)s.minflt, (unsigned long long)s.rss_kb);
	h->last_report_ns = now;
	h->last_report_work = h->work;
	h->next_report_ns = now + h->o.interval_ns;
}

/*
 * Called every few pages' worth of work: reports, paces and decides whether
 * to stop. Returns true when the run is over.
 */
static bool checkpoint(struct hog *h)
{
	uint64_t now = wl_now_ns();

	if (stop_requested || (h->deadline_ns && now >= h->deadline_ns))
		return true;
	if (now >= h->next_report_ns)
		report(h, now);
	if (h->o.rate_mib_s > 0) {
		uint64_t due = h->start_ns +
			(uint64_t)((double)(h->work * h->page) / (h->o.rate_mib_s * 1048576.0) * 1e9);

		if (due > now) {
			if (h->deadline_ns && due > h->deadline_ns)
				due = h->deadline_ns;
			wl_sleep_until_ns(due < h->next_report_ns ? due : h->next_report_ns);
		}
	}
	return false;
}

static inline void touch_page(struct hog *h, size_t off)
{
	if (h->o.write)
		h->mem[off]++;
	else
		h->sink += ((volatile unsigned char *)h->mem)[off];
}

/* One pass over all pages, in order or at random. Returns false if stopped. */
static bool touch_pass(struct hog *h, bool random_order)
{
	size_t pages = h->o.size / h->page;

	for (size_t i = 0; i < pages; i++) {
		size_t p = random_order ? (size_t)(wl_rand(&h->rng) % pages) : i;

		touch_page(h, p * h->page);
		h->work++;
		if ((i & 63) == 63 && checkpoint(h))
			return false;
	}
	return true;
}

static void swap_u32(uint32_t *a, uint32_t *b)
{
	uint32_t t = *a;

	*a = *b;
	*b = t;
}

/*
 * In-place quicksort (median of three, smaller side first, so the explicit
 * stack stays logarithmic). It checks in with checkpoint() as it goes, so
 * reports and stop requests are not delayed by a long partition.
 */
static bool sort_u32(struct hog *h, uint32_t *a, size_t n)
{
	/* Signed indices: Hoare partitioning may step j to lo - 1. */
	struct { long lo, hi; } stack[128];
	long lo = 0, hi = (long)n - 1;
	size_t depth = 0, steps = 0;

	if (n < 2)
		return true;
	for (;;) {
		while (hi > lo + 16) {
			long mid = lo + (hi - lo) / 2, i = lo, j = hi, counted = 0;
			uint32_t pivot;

			if (a[mid] < a[lo])
				swap_u32(&a[mid], &a[lo]);
			if (a[hi] < a[lo])
				swap_u32(&a[hi], &a[lo]);
			if (a[hi] < a[mid])
				swap_u32(&a[hi], &a[mid]);
			pivot = a[mid];
			while (i <= j) {
				while (a[i] < pivot)
					i++;
				while (a[j] > pivot)
					j--;
				if (i <= j) {
					swap_u32(&a[i], &a[j]);
					i++;
					j--;
				}
				if (++steps == 4096) {
					/* i and j have scanned lo..i and j..hi so far. */
					long scanned = (i - lo) + (hi - j);

					steps = 0;
					h->work += (uint64_t)(scanned - counted);
					counted = scanned;
					if (checkpoint(h))
						return false;
				}
			}
			h->work += (uint64_t)((i - lo) + (hi - j) - counted);
			/* Recurse (via the stack) into the larger side later. */
			if (j - lo < hi - i) {
				stack[depth].lo = i;
				stack[depth].hi = hi;
				hi = j;
			} else {
				stack[depth].lo = lo;
				stack[depth].hi = j;
				lo = i;
			}
			depth++;
		}
		h->work += (uint64_t)(hi - lo + 1);
		for (long k = lo + 1; k <= hi; k++) {
			uint32_t v = a[k];
			long m = k;

			for (; m > lo && a[m - 1] > v; m--)
				a[m] = a[m - 1];
			a[m] = v;
		}
		if (!depth)
			return true;
		depth--;
		lo = stack[depth].lo;
		hi = stack[depth].hi;
	}
}

static bool sort_pass(struct hog *h)
{
	uint32_t *a = (uint32_t *)h->mem;
	size_t n = h->o.size / sizeof(uint32_t);

	for (size_t i = 0; i < n; i++) {
		a[i] = (uint32_t)wl_rand(&h->rng);
		if ((i & 16383) == 16383) {
			h->work += 16384;
			if (checkpoint(h))
				return false;
		}
	}
	h->work += n & 16383;
	if (!sort_u32(h, a, n))
		return false;
	for (size_t i = 1; i < n; i++) {
		if (a[i - 1] > a[i]) {
			fprintf(stderr, "hog: internal error: array not sorted at %zu\n", i);
			exit(1);
		}
	}
	return true;
}

int main(int argc, char **argv)
{
	struct hog h = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct wl_self s = { 0 };
	uint64_t end;
	double wall;
	bool done = false;
	const char *why;

	parse_args(argc, argv, &h.o);
	wl_line_buffered();
	wl_set_name(h.o.name);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	h.page = (size_t)sysconf(_SC_PAGESIZE);
	h.rng = h.o.seed * 0x9E3779B97F4A7C15ULL + 1;
	map_memory(&h);

	printf("# work_unit=%s\n", work_unit(&h));
	printf("t_s\twork\twork_per_s\tmajflt\tminflt\trss_kb\n");
	h.start_ns = h.last_report_ns = wl_now_ns();
	h.next_report_ns = h.start_ns + h.o.interval_ns;
	if (h.o.duration_ns)
		h.deadline_ns = h.start_ns + h.o.duration_ns;

	/*
	 * The first touch always writes, so every page is really allocated
	 * (sort's fill writes every element, so it needs none).
	 */
	for (size_t off = 0; h.o.pattern != PAT_SORT && off < h.o.size && !done; off += h.page) {
		fill_page(&h, off);
		h.work++;
		if (((off / h.page) & 63) == 63)
			done = checkpoint(&h);
	}
	while (!done && (!h.o.passes || h.passes_done < h.o.passes)) {
		bool finished;

		switch (h.o.pattern) {
		case PAT_SORT:
			finished = sort_pass(&h);
			break;
		case PAT_RANDOM:
			finished = touch_pass(&h, true);
			break;
		default:
			finished = touch_pass(&h, false);
			break;
		}
		if (!finished)
			break;
		h.passes_done++;
	}

	end = wl_now_ns();
	why = stop_requested ? "signal" : (h.o.passes && h.passes_done >= h.o.passes) ? "passes" : "duration";
	report(&h, end);
	wl_read_self(&s);
	wall = (double)(end - h.start_ns) / 1e9;
	printf("# summary wall_s=%.3f work=%llu work_unit=%s work_per_s=%.0f passes=%llu majflt=%llu "
	       "minflt=%llu rss_kb=%llu utime_ms=%llu stime_ms=%llu stopped=%s\n", wall,
	       (unsigned long long)h.work, work_unit(&h), wall > 0 ? (double)h.work / wall : 0,
	       (unsigned long long)h.passes_done, (unsigned long long)s.majflt,
	       (unsigned long long)s.minflt, (unsigned long long)s.rss_kb,
	       (unsigned long long)s.utime_ms, (unsigned long long)s.stime_ms, why);
	if (h.created_file)
		unlink(h.o.path);
	return (int)(h.sink & 0);
}
