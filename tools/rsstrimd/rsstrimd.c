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
 *
 * With --stop it holds a process stopped while it trims it. It must never
 * leave one stopped: every catchable signal resumes the process, a stop
 * lasts at most --max-stop, and the process held is recorded in a state
 * file, so that after a SIGKILL or a crash the next start resumes it.
 */
#include "proc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdarg.h>
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
#define EXIT_UNSUPPORTED 3

/* syslog priorities, for the "<N>" prefixes journald reads on stderr. */
enum { LOG_PRIO_ERR = 3, LOG_PRIO_WARNING = 4, LOG_PRIO_INFO = 6 };

/* A trim that could not help is not retried for this long, doubling up to 16 s. */
#define BACKOFF_FIRST_NS 500000000ull
#define BACKOFF_MAX_NS 16000000000ull

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
	uint64_t max_stop_ns;
	const char *state_path;
	const char **exclude;	/* command names left alone (pointers into argv) */
	size_t n_exclude;
};

struct target {
	int pid;
	int pidfd;
	uint64_t limit_bytes;
	uint64_t cursor;	/* where the next trim starts: a clock hand */
	uint64_t retry_at_ns;	/* after a futile trim: not before this */
	uint64_t backoff_ns;
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
	bool state_file_broken;	/* said once; --stop then trims without stopping */
	unsigned long long trims, futile, pages_asked, pages_freed, ranges_skipped;
	unsigned long long stops, stops_cut;
	struct range_list ranges;
};

/*
 * What signal handlers need, and so the only file-scope state: whether to
 * finish, and the pidfd of the process held stopped now (-1: none), which a
 * fatal signal resumes before rsstrimd dies.
 */
static volatile sig_atomic_t finish_requested;
static volatile sig_atomic_t held_pidfd = -1;

static void on_finish(int sig)
{
	(void)sig;
	finish_requested = 1;
}

/* SA_RESETHAND: once the process is resumed, the signal does what it would have. */
static void on_fatal(int sig)
{
	int fd = held_pidfd;

	if (fd >= 0)
		syscall(SYS_pidfd_send_signal, fd, SIGCONT, NULL, 0);
	raise(sig);
}

static void handle_signals(void)
{
	static const int finish[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
				      SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGPOLL };
	static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS, SIGTRAP };
	/* A daemon stopped from a terminal would hold its target stopped too. */
	static const int ignore[] = { SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU };
	struct sigaction sa = { .sa_handler = on_finish };
	size_t i;
	int sig;

	sigfillset(&sa.sa_mask);
	for (i = 0; i < sizeof(finish) / sizeof(finish[0]); i++)
		sigaction(finish[i], &sa, NULL);
	for (sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaction(sig, &sa, NULL);
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sa.sa_flags = 0;
	for (i = 0; i < sizeof(ignore) / sizeof(ignore[0]); i++)
		sigaction(ignore[i], &sa, NULL);
}

/* One line on stderr; under systemd (JOURNAL_STREAM set) with its priority. */
static void say(int prio, const char *fmt, ...)
{
	va_list ap;

	if (getenv("JOURNAL_STREAM"))
		fprintf(stderr, "<%d>", prio);
	fputs("rsstrimd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
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
		"Enforces the RLIMIT_RSS soft limit (prlimit --rss, ulimit -m) that Linux ignores:\n"
		"pages out the private memory of processes over it with process_madvise(MADV_PAGEOUT).\n"
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
		"  --max-stop TIME       the longest a process is held stopped (default 1s)\n"
		"  --state-file PATH     where the process held stopped is recorded, so that a\n"
		"                        restart after a crash or SIGKILL resumes it\n"
		"                        (default /run/rsstrimd.stopped)\n"
		"  --exclude COMM        never trim processes with this command name (repeatable)\n"
		"  --once                one scan and one check, then exit\n"
		"  --dry-run             log what would be trimmed, trim nothing\n"
		"  --help                this text\n"
		"A trim that leaves a process over its limit having freed less than a quarter of\n"
		"what it had to is not retried for 0.5 s, doubling up to 16 s.\n"
		"Output (stdout, TSV): t_ms pid comm rss_before_kb rss_after_kb limit_kb pages_asked\n"
		"ranges_skipped, and on exit a '# summary' line. Messages go to stderr, with syslog\n"
		"priority prefixes under systemd. Exit status: 0, 2 for bad usage or privileges,\n"
		"3 when the kernel lacks pidfd_open() or process_madvise(MADV_PAGEOUT) (Linux 5.10).\n"
		"Needs root, or CAP_SYS_NICE plus ptrace access to the processes it trims.\n");
}

static void die_usage(const char *what, const char *value)
{
	if (value)
		say(LOG_PRIO_ERR, "%s: %s", what, value);
	else
		say(LOG_PRIO_ERR, "%s", what);
	exit(EXIT_USAGE);
}

/* The longest --interval, --rescan or --max-stop: an hour (and no inf, nan or 1e300). */
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
		{ "max-stop", required_argument, NULL, 'S' },
		{ "state-file", required_argument, NULL, 'f' },
		{ "exclude", required_argument, NULL, 'x' },
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
		.max_stop_ns = 1000000000ull, .state_path = "/run/rsstrimd.stopped",
	};
	/* At most one --exclude per argument: argc entries always suffice. */
	o->exclude = calloc((size_t)argc, sizeof(*o->exclude));
	if (!o->exclude)
		die_usage("out of memory", NULL);
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
		case 'S':
			if (parse_duration(optarg, &o->max_stop_ns) || o->max_stop_ns < 10000000ull)
				die_usage("--max-stop must be a time of at least 10ms", optarg);
			break;
		case 'f':
			if (!*optarg)
				die_usage("--state-file must be a path", optarg);
			o->state_path = optarg;
			break;
		case 'x':
			/* /proc/PID/comm holds at most 15 bytes. */
			if (!*optarg || strlen(optarg) > 15 || strchr(optarg, '/'))
				die_usage("--exclude must be a command name of 1-15 bytes, as in /proc/PID/comm",
					  optarg);
			o->exclude[o->n_exclude++] = optarg;
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

/*
 * Can this kernel do what rsstrimd needs? Asked once, on a page of our
 * own, so that an error later is about the range it came from and never
 * switches trimming off for everyone. Returns 0, or the errno.
 */
static int probe_pageout(bool dry_run, const char **what)
{
	long page = sysconf(_SC_PAGESIZE);
	int fd = (int)syscall(SYS_pidfd_open, getpid(), 0), err = 0;
	struct iovec iov;
	char *p;

	*what = "pidfd_open() (Linux 5.3)";
	if (fd < 0)
		return errno;
	if (dry_run) {
		close(fd);
		return 0;
	}
	*what = "process_madvise(MADV_PAGEOUT) (Linux 5.10)";
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		err = errno;
		*what = "mmap() of one page";
	} else {
		p[0] = 1;
		iov = (struct iovec){ .iov_base = p, .iov_len = (size_t)page };
		if (syscall(SYS_process_madvise, fd, &iov, 1, MADV_PAGEOUT, 0) < 0)
			err = errno;
		munmap(p, (size_t)page);
	}
	close(fd);
	return err;
}

static bool excluded(const struct opts *o, const char *comm)
{
	for (size_t i = 0; i < o->n_exclude; i++)
		if (!strcmp(o->exclude[i], comm))
			return true;
	return false;
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

static int read_comm(long pid, char *comm, size_t len)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	if (read_text(path, comm, len))
		return -1;
	comm[strcspn(comm, "\n")] = '\0';
	return 0;
}

static struct target *add_target(struct trimd *d, long pid, const char *comm)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	struct target *t;

	if (fd < 0)
		return NULL;
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct target *nt = realloc(d->t, cap * sizeof(*nt));

		if (!nt) {
			close(fd);
			return NULL;
		}
		d->t = nt;
		d->cap = cap;
	}
	t = &d->t[d->n++];
	*t = (struct target){ .pid = (int)pid, .pidfd = fd };
	snprintf(t->comm, sizeof(t->comm), "%s", comm);
	return t;
}

/* Find processes with a finite RLIMIT_RSS; forget those that went away. */
static void rescan(struct trimd *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;

	for (size_t i = 0; i < d->n; i++)
		d->t[i].seen = false;
	while (dir && (e = readdir(dir))) {
		char *end, comm[32];
		long pid = strtol(e->d_name, &end, 10);
		uint64_t limit;
		struct target *t;

		if (*end || pid <= 0 || pid == getpid())
			continue;
		if (rss_soft_limit((pid_t)pid, &limit) || limit == RLIM_NONE)
			continue;
		t = find_target(d, (int)pid);
		if (!t) {
			if (read_comm(pid, comm, sizeof(comm)))
				continue;
			if (excluded(&d->o, comm))
				continue;
			t = add_target(d, pid, comm);
			if (!t)
				continue;
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
static int read_ranges(struct trimd *d, const struct target *t)
{
	char path[64];
	size_t malformed;
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/maps", t->pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ret = read_private_writable_ranges(f, &d->ranges, &malformed);
	fclose(f);
	if (malformed)
		say(LOG_PRIO_WARNING, "%zu unreadable lines in %s, skipped", malformed, path);
	return ret;
}

static int stat_of(int pid, char *state, uint64_t *start_ticks)
{
	char path[64], buf[1024];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (read_text(path, buf, sizeof(buf)))
		return -1;
	return parse_stat_state_start(buf, state, start_ticks);
}

/*
 * Record the process about to be held stopped: written whole and renamed
 * into place, so a reader never sees half a record.
 */
static int record_held(const struct trimd *d, const struct target *t, uint64_t start)
{
	char tmp[4096];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.new", d->o.state_path) >= (int)sizeof(tmp))
		return -1;
	f = fopen(tmp, "we");
	if (!f)
		return -1;
	fprintf(f, "%d %llu %s\n", t->pid, (unsigned long long)start, t->comm);
	if (fclose(f) || rename(tmp, d->o.state_path)) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * A previous rsstrimd that was killed (SIGKILL, the OOM killer, a crash)
 * while it held a process stopped left it in the state file: resume it, if
 * it is the same process (same start time) and still stopped.
 */
static void resume_left_stopped(const char *path)
{
	unsigned long long start;
	char buf[256], comm[32] = "?", state;
	uint64_t now_start;
	int pid;

	if (read_text(path, buf, sizeof(buf))) {
		if (errno != ENOENT)
			say(LOG_PRIO_WARNING, "cannot read %s: %s", path, strerror(errno));
		return;
	}
	if (sscanf(buf, "%d %llu %31s", &pid, &start, comm) < 2 || pid <= 0) {
		say(LOG_PRIO_WARNING, "%s is not a record of a stopped process, ignored", path);
	} else if (stat_of(pid, &state, &now_start) || now_start != start) {
		say(LOG_PRIO_INFO, "process %d (%s), left stopped by an earlier rsstrimd, is gone",
		    pid, comm);
	} else if (state != 'T') {
		say(LOG_PRIO_INFO, "process %d (%s), left stopped by an earlier rsstrimd, runs",
		    pid, comm);
	} else if (kill(pid, SIGCONT)) {
		say(LOG_PRIO_ERR, "cannot resume process %d (%s), left stopped by an earlier rsstrimd: %s",
		    pid, comm, strerror(errno));
		return;	/* kept: a later start with more privilege may resume it */
	} else {
		say(LOG_PRIO_WARNING, "resumed process %d (%s), left stopped by an earlier rsstrimd",
		    pid, comm);
	}
	unlink(path);
}

/*
 * With --stop, a trim must not be slowed by page-ins of rsstrimd's own
 * memory, and rsstrimd must not be the OOM killer's choice while it holds
 * a process stopped. Both need privilege; without it rsstrimd still works.
 */
static void protect_self(bool stopping)
{
	int fd;
	bool adj_ok;

	if (!stopping)
		return;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	adj_ok = fd >= 0 && write(fd, "-1000", 5) == 5;
	if (fd >= 0)
		close(fd);
	if (!adj_ok)
		say(LOG_PRIO_WARNING, "cannot set oom_score_adj (%s): the OOM killer may pick "
		    "rsstrimd; a restart resumes what it held stopped", strerror(errno));
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		say(LOG_PRIO_WARNING, "cannot lock rsstrimd in memory (%s): a stop may last "
		    "longer under pressure", strerror(errno));
}

/*
 * Was the trim futile (see usage())? Sets when the process may be trimmed
 * again. One cut short by --max-stop was not futile, but the process runs
 * for an interval before the next.
 */
static bool note_progress(const struct trimd *d, struct target *t, uint64_t rss, uint64_t after,
			  uint64_t target, bool cut)
{
	uint64_t limit = t->limit_bytes / d->page;

	if (cut) {
		t->backoff_ns = 0;
		t->retry_at_ns = now_ns() + d->o.interval_ns;
		return false;
	}
	if (after > limit && (rss - (after < rss ? after : rss)) * 4 < rss - target) {
		t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 : BACKOFF_FIRST_NS;
		if (t->backoff_ns > BACKOFF_MAX_NS)
			t->backoff_ns = BACKOFF_MAX_NS;
		t->retry_at_ns = now_ns() + t->backoff_ns;
		return true;
	}
	t->backoff_ns = 0;
	t->retry_at_ns = 0;
	return false;
}

/*
 * Page out one process's private writable memory, batch by batch, from
 * its clock hand on, until it is a little below its limit, the hand has
 * gone once around, or @deadline (0: none) passes. A range the kernel
 * refuses (mlocked, hugetlb, unmapped since) is skipped and counted.
 * Returns -1 if the process is gone, 1 if the trim could not help.
 */
static int trim_ranges(struct trimd *d, struct target *t, uint64_t rss, uint64_t deadline)
{
	uint64_t limit = t->limit_bytes / d->page, slack, target, asked = 0, after = rss;
	unsigned long long skipped = 0;
	struct map_range *ranges;
	size_t n, i = 0;
	bool cut = false, futile;

	slack = limit / 16 > 256 ? limit / 16 : 256;
	target = limit > slack ? limit - slack : 0;
	if (read_ranges(d, t)) {
		if (errno != EACCES)
			return -1;
		say(LOG_PRIO_WARNING, "cannot read the memory map of %d (%s), leaving it alone: "
		    "trimming another user's process needs ptrace access (CAP_SYS_PTRACE)",
		    t->pid, t->comm);
		t->denied = true;
		return 0;
	}
	ranges = d->ranges.r;
	n = d->ranges.n;
	/* Start at the range holding the hand (or the first one past it). */
	while (i < n && ranges[i].end <= t->cursor)
		i++;
	if (i == n && n) {
		i = 0;
		t->cursor = ranges[0].start;
	}
	for (size_t k = 0; n && k <= n && after > target && !finish_requested && !cut; k++) {
		struct map_range *r = &ranges[(i + k) % n];
		uint64_t start = r->start > t->cursor || k > 0 ? r->start : t->cursor;

		while (start < r->end && after > target) {
			uint64_t len = r->end - start;
			struct iovec iov;

			if (deadline && now_ns() >= deadline) {
				cut = true;
				break;
			}
			if (len > d->o.batch_bytes)
				len = d->o.batch_bytes;
			iov.iov_base = (void *)(uintptr_t)start;
			iov.iov_len = len;
			if (!d->o.dry_run &&
			    syscall(SYS_process_madvise, t->pidfd, &iov, 1, MADV_PAGEOUT, 0) < 0) {
				if (errno == ESRCH)
					return -1;
				/* The kernel can page out: this range cannot be. */
				skipped++;
				t->cursor = r->end;
				break;
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
	d->stops_cut += cut;
	d->pages_asked += asked;
	d->ranges_skipped += skipped;
	if (after < rss)
		d->pages_freed += rss - after;
	futile = !d->o.dry_run && note_progress(d, t, rss, after, target, cut);
	d->futile += futile;
	printf("%llu\t%d\t%s\t%llu\t%llu\t%llu\t%llu\t%llu\n",
	       (unsigned long long)((now_ns() - d->start_ns) / 1000000u), t->pid, t->comm,
	       (unsigned long long)(rss * d->page / 1024), (unsigned long long)(after * d->page / 1024),
	       (unsigned long long)(t->limit_bytes / 1024), (unsigned long long)asked, skipped);
	return futile;
}

/*
 * With --stop, the process does not run while it is trimmed: otherwise a
 * fast one faults its pages back in as fast as they are paged out, and
 * the memory comes from its neighbours. One that was already stopped is
 * left as it was. The stop is recorded first and bounded.
 */
static int trim(struct trimd *d, struct target *t, uint64_t rss)
{
	bool stop = d->o.stop_while_trimming && !d->o.dry_run && !d->state_file_broken;
	char state;
	uint64_t start;
	int ret;

	if (stop && (stat_of(t->pid, &state, &start) || state == 'T' || state == 't'))
		stop = false;
	if (stop && record_held(d, t, start)) {
		say(LOG_PRIO_ERR, "cannot write %s (%s): trimming without --stop from now on",
		    d->o.state_path, strerror(errno));
		d->state_file_broken = true;
		stop = false;
	}
	if (stop) {
		held_pidfd = t->pidfd;
		if (syscall(SYS_pidfd_send_signal, t->pidfd, SIGSTOP, NULL, 0)) {
			held_pidfd = -1;
			unlink(d->o.state_path);
			stop = false;
		}
	}
	ret = trim_ranges(d, t, rss, stop ? now_ns() + d->o.max_stop_ns : 0);
	if (stop) {
		syscall(SYS_pidfd_send_signal, t->pidfd, SIGCONT, NULL, 0);
		held_pidfd = -1;
		unlink(d->o.state_path);
		d->stops++;
	}
	return ret;
}

/* Returns true when some process was trimmed and may need more soon. */
static bool check(struct trimd *d)
{
	uint64_t now = now_ns();
	bool trimmed = false;

	for (size_t i = d->n; i-- > 0;) {
		struct target *t = &d->t[i];
		uint64_t rss;
		int ret;

		if (t->denied || now < t->retry_at_ns)
			continue;
		if (resident_pages(t, &rss)) {
			drop_target(d, i);
			continue;
		}
		if (rss * d->page <= t->limit_bytes)
			continue;
		ret = trim(d, t, rss);
		if (ret < 0)
			drop_target(d, i);
		else if (ret == 0)
			trimmed = true;
	}
	return trimmed;
}

static void run(struct trimd *d)
{
	uint64_t next_rescan, next, last_rescan = 0;

	next_rescan = next = d->start_ns;
	while (!finish_requested) {
		uint64_t now = now_ns();
		bool near, short_now = memory_short(d, &near), busy;
		struct timespec ts;

		/*
		 * While memory is short or nearly so, a hog that started since
		 * the last scan must not wait for the next one: its first burst
		 * is what pushes the neighbours out. Rescan every interval then.
		 * Hard mode trims without pressure but polls like active mode:
		 * the extra vigilance is for when memory is short, not for the mode.
		 */
		if (now >= next_rescan || ((short_now || near) && now >= last_rescan + d->o.interval_ns)) {
			rescan(d);
			last_rescan = now;
			next_rescan = now + d->o.rescan_ns;
		}
		busy = (short_now || d->o.hard) && check(d);
		if (d->o.once)
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
			next += short_now || near ? d->o.interval_ns / 5 : d->o.interval_ns;
		if (next < now_ns())
			next = now_ns();
		ts = (struct timespec){ (time_t)(next / 1000000000u), (long)(next % 1000000000u) };
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

int main(int argc, char **argv)
{
	static struct trimd d;
	const char *what;
	struct rusage ru;
	long user_ms, sys_ms;
	int err;

	parse_args(argc, argv, &d.o);
	if (!has_cap_sys_nice()) {
		say(LOG_PRIO_ERR, "needs root, or CAP_SYS_NICE and ptrace access to the processes it trims");
		return EXIT_USAGE;
	}
	err = probe_pageout(d.o.dry_run, &what);
	if (err) {
		say(LOG_PRIO_ERR, "this kernel cannot do %s: %s", what, strerror(err));
		return EXIT_UNSUPPORTED;
	}
	handle_signals();
	resume_left_stopped(d.o.state_path);
	protect_self(d.o.stop_while_trimming && !d.o.dry_run);
	setvbuf(stdout, NULL, _IOLBF, 0);
	d.page = (uint64_t)sysconf(_SC_PAGESIZE);
	d.start_ns = now_ns();
	printf("t_ms\tpid\tcomm\trss_before_kb\trss_after_kb\tlimit_kb\tpages_asked\tranges_skipped\n");
	run(&d);
	/*
	 * user_ms is rsstrimd's own work (reading /proc); sys_ms is mostly the
	 * page-out it asks for, reclaim that kswapd or the hog itself would
	 * otherwise do.
	 */
	getrusage(RUSAGE_SELF, &ru);
	user_ms = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
	sys_ms = ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
	printf("# summary trims=%llu futile=%llu pages_asked=%llu pages_freed=%llu "
	       "ranges_skipped=%llu stops=%llu stops_cut=%llu tracked=%zu cpu_ms=%ld "
	       "user_ms=%ld sys_ms=%ld wall_ms=%llu\n", d.trims, d.futile, d.pages_asked,
	       d.pages_freed, d.ranges_skipped, d.stops, d.stops_cut, d.n, user_ms + sys_ms,
	       user_ms, sys_ms, (unsigned long long)((now_ns() - d.start_ns) / 1000000u));
	for (size_t i = 0; i < d.n; i++)
		close(d.t[i].pidfd);
	free(d.t);
	free(d.ranges.r);
	free(d.o.exclude);
	return 0;
}
