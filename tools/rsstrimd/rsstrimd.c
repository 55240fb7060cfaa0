// SPDX-License-Identifier: GPL-2.0
/*
 * rsstrimd: enforce RLIMIT_RSS (prlimit --rss, ulimit -m) from user space,
 * on kernels that ignore it, the way illumos' rcapd caps resident memory.
 *
 * About once a second it finds the processes with a finite RLIMIT_RSS soft
 * limit; every interval it checks their resident size and, while memory is
 * short (--mode active) or always (--mode hard), pages out the private
 * writable memory of those over their limit with
 * process_madvise(MADV_PAGEOUT), in bounded batches, until they are a
 * little below it.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#define EXIT_USAGE 2
#define MAX_RANGES 4096

struct opts {
	uint64_t interval_ns;
	uint64_t rescan_ns;
	bool hard;
	uint64_t min_available_kib;
	double psi_threshold;	/* 0: not used */
	uint64_t batch_bytes;
	bool once;
	bool dry_run;
	bool stop_while_trimming;
};

struct target {
	int pid;
	int pidfd;
	uint64_t limit_bytes;
	uint64_t cursor;	/* where the next trim starts: a clock hand */
	char comm[32];
	bool seen;
	bool denied;	/* its maps are unreadable to us: left alone, said once */
};

struct trimd {
	struct opts o;
	struct target *t;
	size_t n, cap;
	uint64_t page;
	uint64_t start_ns;
	bool can_trim;
	unsigned long long trims, pages_asked, pages_freed;
	struct map_range ranges[MAX_RANGES];
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: rsstrimd [options]\n"
		"  --mode active|hard    trim only while memory is short (default) or always\n"
		"  --min-available SIZE  memory is short below this MemAvailable (default 64M)\n"
		"  --psi PCT             ... or above this PSI memory 'some avg10' (default: unused)\n"
		"  --interval TIME       how often resident sizes are checked (default 100ms; five\n"
		"                        times as often while MemAvailable is under twice the threshold)\n"
		"  --rescan TIME         how often processes are rescanned (default 1s)\n"
		"  --batch SIZE          address range per process_madvise call (default 8M)\n"
		"  --stop                stop a process (SIGSTOP) while it is trimmed, so it cannot\n"
		"                        fault pages back in meanwhile; SIGCONT after. Off by default:\n"
		"                        its parent and shell can see the stop. Another user's\n"
		"                        process is stopped only with root or CAP_KILL\n"
		"  --once                one scan and one check, then exit\n"
		"  --dry-run             log what would be trimmed, trim nothing\n"
		"  --help                this text\n"
		"Log (stdout, TSV): t_ms pid comm rss_before_kb rss_after_kb limit_kb pages_asked.\n"
		"Needs root, or CAP_SYS_NICE plus ptrace access to the processes it trims.\n");
}

static void die_usage(const char *what, const char *value)
{
	fprintf(stderr, "rsstrimd: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(EXIT_USAGE);
}

/* The longest --interval or --rescan: an hour (and no inf, nan or 1e300). */
#define MAX_DURATION_NS 3600e9

static int parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v > 0))
		return -1;
	if (!strcmp(end, "ms"))
		v *= 1e6;
	else if (!strcmp(end, "s") || !*end)
		v *= 1e9;
	else
		return -1;
	/* Also false for nan: the conversion below is defined only in range. */
	if (!(v <= MAX_DURATION_NS))
		return -1;
	*ns = (uint64_t)v;
	return 0;
}

#define MAX_SIZE (1ULL << 50)

static int parse_size(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K': shift = 10; end++; break;
	case 'M': shift = 20; end++; break;
	case 'G': shift = 30; end++; break;
	default: break;
	}
	/* Checked before the shift, which would otherwise wrap. */
	if (*end || v == 0 || v > (MAX_SIZE >> shift))
		return -1;
	*bytes = v << shift;
	return 0;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "min-available", required_argument, NULL, 'a' },
		{ "psi", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "rescan", required_argument, NULL, 'r' },
		{ "batch", required_argument, NULL, 'b' },
		{ "once", no_argument, NULL, 'o' },
		{ "stop", no_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t bytes;
	char *end;
	int c;

	*o = (struct opts){
		.interval_ns = 100000000ull, .rescan_ns = 1000000000ull,
		.min_available_kib = 64 * 1024, .batch_bytes = 8 << 20,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "hard"))
				o->hard = true;
			else if (strcmp(optarg, "active"))
				die_usage("--mode must be active or hard", optarg);
			break;
		case 'a':
			if (parse_size(optarg, &bytes))
				die_usage("--min-available must be a size such as 64M", optarg);
			o->min_available_kib = bytes >> 10;
			break;
		case 'p':
			o->psi_threshold = strtod(optarg, &end);
			/* (written so that nan is refused too) */
			if (*end || end == optarg || !(o->psi_threshold > 0 && o->psi_threshold <= 100))
				die_usage("--psi must be a percentage above 0", optarg);
			break;
		case 'i':
			if (parse_duration(optarg, &o->interval_ns) || o->interval_ns < 10000000ull)
				die_usage("--interval must be a time of at least 10ms", optarg);
			break;
		case 'r':
			if (parse_duration(optarg, &o->rescan_ns))
				die_usage("--rescan must be a time such as 1s", optarg);
			break;
		case 'b':
			if (parse_size(optarg, &o->batch_bytes) || o->batch_bytes < 4096)
				die_usage("--batch must be a size of at least 4K", optarg);
			break;
		case 'o':
			o->once = true;
			break;
		case 's':
			o->stop_while_trimming = true;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			die_usage("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument", argv[optind]);
}

static bool has_cap_sys_nice(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	if (geteuid() == 0)
		return true;
	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[CAP_TO_INDEX(CAP_SYS_NICE)].effective & CAP_TO_MASK(CAP_SYS_NICE);
}

static struct target *find_target(struct trimd *d, int pid)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->t[i].pid == pid)
			return &d->t[i];
	return NULL;
}

static void drop_target(struct trimd *d, size_t i)
{
	if (d->t[i].pidfd >= 0)
		close(d->t[i].pidfd);
	d->t[i] = d->t[--d->n];
}

/*
 * Is the process behind the pidfd still the one we found? EPERM says it is:
 * without CAP_KILL another user's process may not be signalled, but only
 * a live one gets that far.
 */
static bool target_alive(const struct target *t)
{
	return syscall(SYS_pidfd_send_signal, t->pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

/*
 * A process's RLIMIT_RSS soft limit. prlimit() reads it in one system
 * call, about a quarter of the CPU time of formatting and parsing
 * /proc/PID/limits, which is still needed for other users' processes
 * by a caller with CAP_SYS_NICE but not CAP_SYS_RESOURCE.
 */
static int rss_soft_limit(pid_t pid, uint64_t *limit)
{
	struct rlimit rl;
	char path[64], buf[4096];

	if (!prlimit(pid, RLIMIT_RSS, NULL, &rl)) {
		*limit = rl.rlim_cur == RLIM_INFINITY ? RLIM_NONE : (uint64_t)rl.rlim_cur;
		return 0;
	}
	if (errno != EPERM)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/limits", (int)pid);
	if (read_text(path, buf, sizeof(buf)))
		return -1;
	return parse_limits_rss(buf, limit);
}

/* Find processes with a finite RLIMIT_RSS; forget those that went away. */
static void rescan(struct trimd *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	char path[64];

	for (size_t i = 0; i < d->n; i++)
		d->t[i].seen = false;
	while (dir && (e = readdir(dir))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		uint64_t limit;
		struct target *t;

		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (rss_soft_limit((pid_t)pid, &limit) || limit == RLIM_NONE)
			continue;
		t = find_target(d, (int)pid);
		if (!t) {
			int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

			if (fd < 0)
				continue;
			if (d->n == d->cap) {
				size_t cap = d->cap ? d->cap * 2 : 16;
				struct target *nt = realloc(d->t, cap * sizeof(*nt));

				if (!nt) {
					close(fd);
					break;
				}
				d->t = nt;
				d->cap = cap;
			}
			t = &d->t[d->n++];
			*t = (struct target){ .pid = (int)pid, .pidfd = fd };
			snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
			if (read_text(path, t->comm, sizeof(t->comm)))
				strcpy(t->comm, "?");
			t->comm[strcspn(t->comm, "\n")] = '\0';
		}
		t->limit_bytes = limit;
		t->seen = true;
	}
	if (dir)
		closedir(dir);
	for (size_t i = d->n; i-- > 0;)
		if (!d->t[i].seen || !target_alive(&d->t[i]))
			drop_target(d, i);
}

/* Is memory short? *near: will it be soon (MemAvailable under twice the threshold)? */
static bool memory_short(const struct trimd *d, bool *near)
{
	char buf[8192];
	uint64_t avail;
	double psi;

	*near = false;
	if (!read_text("/proc/meminfo", buf, sizeof(buf)) &&
	    !parse_meminfo_available(buf, &avail)) {
		*near = avail < 2 * d->o.min_available_kib;
		if (avail < d->o.min_available_kib)
			return true;
	}
	if (d->o.psi_threshold > 0 && !read_text("/proc/pressure/memory", buf, sizeof(buf)) &&
	    !parse_psi_some_avg10(buf, &psi) && psi > d->o.psi_threshold)
		return true;
	return false;
}

static int resident_pages(const struct target *t, uint64_t *pages)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/statm", t->pid);
	if (read_text(path, buf, sizeof(buf)) || !target_alive(t))
		return -1;
	return parse_statm_resident(buf, pages);
}

/* Its private writable ranges into d->ranges; -1 (errno set) if unreadable. */
static int read_ranges(struct trimd *d, const struct target *t, size_t *count)
{
	char path[64], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (n < MAX_RANGES && fgets(line, sizeof(line), f)) {
		struct map_range r;

		if (!parse_maps_line(line, &r) && r.private_writable)
			d->ranges[n++] = r;
	}
	fclose(f);
	*count = n;
	return 0;
}

/* Is the process stopped already (by its shell or a debugger)? */
static bool already_stopped(const struct target *t)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", t->pid);
	if (read_text(path, buf, sizeof(buf)))
		return false;
	p = strrchr(buf, ')');
	return p && (p[2] == 'T' || p[2] == 't');
}

/*
 * Page out one process's private writable memory, batch by batch, from
 * its clock hand on, until it is a little below its limit or the hand has
 * gone once around. Returns -1 if the process is gone.
 */
static int trim_ranges(struct trimd *d, struct target *t, uint64_t rss)
{
	uint64_t limit = t->limit_bytes / d->page, slack, target, asked = 0, after = rss;
	size_t n = 0, i = 0;

	slack = limit / 16 > 256 ? limit / 16 : 256;
	target = limit > slack ? limit - slack : 0;
	if (read_ranges(d, t, &n)) {
		if (errno != EACCES)
			return -1;
		fprintf(stderr, "rsstrimd: cannot read the memory map of %d (%s), leaving it alone: "
			"trimming another user's process needs ptrace access (CAP_SYS_PTRACE)\n",
			t->pid, t->comm);
		t->denied = true;
		return 0;
	}
	if (!n)
		return -1;
	/* Start at the range holding the hand (or the first one past it). */
	while (i < n && d->ranges[i].end <= t->cursor)
		i++;
	if (i == n) {
		i = 0;
		t->cursor = d->ranges[0].start;
	}
	for (size_t k = 0; k <= n && after > target && !stop_requested; k++) {
		struct map_range *r = &d->ranges[(i + k) % n];
		uint64_t start = r->start > t->cursor || k > 0 ? r->start : t->cursor;

		while (start < r->end && after > target) {
			uint64_t len = r->end - start;
			struct iovec iov;

			if (len > d->o.batch_bytes)
				len = d->o.batch_bytes;
			iov.iov_base = (void *)(uintptr_t)start;
			iov.iov_len = len;
			if (!d->o.dry_run && d->can_trim &&
			    syscall(SYS_process_madvise, t->pidfd, &iov, 1, MADV_PAGEOUT, 0) < 0) {
				if (errno == ESRCH)
					return -1;
				if (errno == ENOSYS || errno == EINVAL) {
					fprintf(stderr, "rsstrimd: this kernel lacks process_madvise(MADV_PAGEOUT) "
						"(%s); only logging from now on\n", strerror(errno));
					d->can_trim = false;
				}
				/* EPERM/EFAULT for one range: move on. */
			}
			asked += len / d->page;
			start += len;
			t->cursor = start;
			if (d->o.dry_run) {
				after = rss - (asked < rss - target ? asked : rss - target);
				continue;
			}
			if (resident_pages(t, &after))
				return -1;
		}
	}
	d->trims++;
	d->pages_asked += asked;
	if (after < rss)
		d->pages_freed += rss - after;
	printf("%llu\t%d\t%s\t%llu\t%llu\t%llu\t%llu\n",
	       (unsigned long long)((now_ns() - d->start_ns) / 1000000u), t->pid, t->comm,
	       (unsigned long long)(rss * d->page / 1024), (unsigned long long)(after * d->page / 1024),
	       (unsigned long long)(t->limit_bytes / 1024), (unsigned long long)asked);
	return 0;
}

/*
 * With --stop, the process does not run while it is trimmed: otherwise a
 * fast one faults its pages back in as fast as they are paged out, and
 * the memory comes from its neighbours. One that was already stopped is
 * left as it was.
 */
static int trim(struct trimd *d, struct target *t, uint64_t rss)
{
	bool stop = d->o.stop_while_trimming && !d->o.dry_run && !already_stopped(t);
	int ret;

	if (stop && syscall(SYS_pidfd_send_signal, t->pidfd, SIGSTOP, NULL, 0))
		stop = false;
	ret = trim_ranges(d, t, rss);
	if (stop)
		syscall(SYS_pidfd_send_signal, t->pidfd, SIGCONT, NULL, 0);
	return ret;
}

/* Returns true when some process was trimmed (and may need more soon). */
static bool check(struct trimd *d)
{
	bool trimmed = false;

	for (size_t i = d->n; i-- > 0;) {
		struct target *t = &d->t[i];
		uint64_t rss;

		if (t->denied)
			continue;
		if (resident_pages(t, &rss)) {
			drop_target(d, i);
			continue;
		}
		if (rss * d->page <= t->limit_bytes)
			continue;
		if (trim(d, t, rss))
			drop_target(d, i);
		else
			trimmed = true;
	}
	return trimmed;
}

int main(int argc, char **argv)
{
	static struct trimd d;
	struct sigaction sa = { .sa_handler = on_stop };
	struct rusage ru;
	uint64_t next_rescan, next, last_rescan = 0;
	long user_ms, sys_ms;
	bool busy;

	parse_args(argc, argv, &d.o);
	if (!has_cap_sys_nice()) {
		fprintf(stderr, "rsstrimd: needs root, or CAP_SYS_NICE and ptrace access to the "
			"processes it trims\n");
		return EXIT_USAGE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	d.page = (uint64_t)sysconf(_SC_PAGESIZE);
	d.can_trim = true;
	d.start_ns = next_rescan = next = now_ns();
	printf("t_ms\tpid\tcomm\trss_before_kb\trss_after_kb\tlimit_kb\tpages_asked\n");
	while (!stop_requested) {
		uint64_t now = now_ns();
		bool near, short_now = memory_short(&d, &near);

		/*
		 * While memory is short or nearly so, a hog that started since
		 * the last scan must not wait for the next one: its first burst
		 * is what pushes the neighbours out. Rescan every interval then.
		 * Hard mode trims without pressure but polls like active mode:
		 * the extra vigilance is for when memory is short, not for the mode.
		 */
		if (now >= next_rescan || ((short_now || near) && now >= last_rescan + d.o.interval_ns)) {
			rescan(&d);
			last_rescan = now;
			next_rescan = now + d.o.rescan_ns;
		}
		busy = (short_now || d.o.hard) && check(&d);
		if (d.o.once)
			break;
		/*
		 * A process that was just trimmed is faulting its pages back in
		 * while memory is short: look again at once rather than let it
		 * grow for a whole interval. While memory is short or about to
		 * be, look five times as often: a hog's first burst can fill the
		 * remaining memory within one interval.
		 */
		if (busy)
			next = now_ns();
		else
			next += short_now || near ? d.o.interval_ns / 5 : d.o.interval_ns;
		if (next < now_ns())
			next = now_ns();
		{
			struct timespec ts = { (time_t)(next / 1000000000u), (long)(next % 1000000000u) };

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		}
	}
	/*
	 * user_ms is rsstrimd's own work (reading /proc); sys_ms is mostly the
	 * page-out it asks for, reclaim that kswapd or the hog itself would
	 * otherwise do.
	 */
	getrusage(RUSAGE_SELF, &ru);
	user_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
	sys_ms = ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
	printf("# summary trims=%llu pages_asked=%llu pages_freed=%llu tracked=%zu cpu_ms=%ld "
	       "user_ms=%ld sys_ms=%ld wall_ms=%llu\n", d.trims, d.pages_asked, d.pages_freed, d.n,
	       user_ms + sys_ms, user_ms, sys_ms,
	       (unsigned long long)((now_ns() - d.start_ns) / 1000000u));
	for (size_t i = 0; i < d.n; i++)
		close(d.t[i].pidfd);
	free(d.t);
	return 0;
}
