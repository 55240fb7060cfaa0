/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for the rsslim guest tests: /proc and sysctl access, and child
 * processes that hold and touch memory. Header-only so each test stays one
 * static binary.
 */
#ifndef RSSLIM_GUEST_UTIL_H
#define RSSLIM_GUEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1024LL * 1024LL)

/*
 * Per-test timeouts only guard against hangs. The debug kernel (KASAN,
 * lockdep) under TCG runs the same tests 3-4 times slower, so every limit
 * carries that margin.
 */
#define GUEST_TIMEOUT(seconds) ((seconds) * 4)
#define PAGE_SZ 4096LL

static inline int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n, total = 0;

	if (fd < 0)
		return -1;
	while ((size_t)total < len - 1 && (n = read(fd, buf + total, len - 1 - total)) > 0)
		total += n;
	close(fd);
	buf[total] = '\0';
	return 0;
}

static inline int write_file(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

/* A fresh, empty child cgroup of the root, with @controller ("+memory") on. */
static inline int new_cgroup(const char *path, const char *controller)
{
	if (write_file("/sys/fs/cgroup/cgroup.subtree_control", controller))
		return -1;
	rmdir(path);
	return mkdir(path, 0755);
}

/* Write @value to the file @name of the cgroup at @path. */
static inline int cgroup_write(const char *path, const char *name, const char *value)
{
	char file[128];

	snprintf(file, sizeof(file), "%s/%s", path, name);
	return write_file(file, value);
}

/* A fresh child cgroup of the root with the given memory limits. */
static inline int make_cgroup(const char *path, const char *max, const char *swap_max)
{
	if (new_cgroup(path, "+memory") || cgroup_write(path, "memory.max", max))
		return -1;
	return cgroup_write(path, "memory.swap.max", swap_max);
}

/* Move the calling process into the cgroup at @path. */
static inline int join_cgroup(const char *path)
{
	char file[128], self[16];

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	snprintf(self, sizeof(self), "%d", getpid());
	return write_file(file, self);
}

/*
 * Empty the ftrace buffer. Only an open with O_TRUNC does: writing nothing
 * to "trace" leaves every event in it.
 */
static inline int clear_trace(void)
{
	int fd = open("/sys/kernel/tracing/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* The text after "key:" on its line in a /proc file, or NULL. */
static inline const char *field_text(const char *buf, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (!strncmp(p, key, klen) && p[klen] == ':') {
			const char *v = p + klen + 1;
			size_t n = 0;

			while (*v == ' ' || *v == '\t')
				v++;
			while (v[n] && v[n] != '\n' && n < len - 1)
				n++;
			memcpy(out, v, n);
			out[n] = '\0';
			return out;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

/* A field of /proc/PID/status as text ("" when missing). */
static inline const char *status_text(pid_t pid, const char *key, char *out, size_t len)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	out[0] = '\0';
	if (read_file(path, buf, sizeof(buf)) || !field_text(buf, key, out, len))
		out[0] = '\0';
	return out;
}

/* A numeric field of /proc/PID/status (kB fields in kB), -1 when missing. */
static inline long long status_num(pid_t pid, const char *key)
{
	char text[64];

	status_text(pid, key, text, sizeof(text));
	return text[0] ? atoll(text) : -1;
}

static inline long long vmstat(const char *name)
{
	char buf[16384], key[80];
	const char *p;

	if (read_file("/proc/vmstat", buf, sizeof(buf)))
		return -1;
	snprintf(key, sizeof(key), "\n%s ", name);
	p = strstr(buf, key);
	if (!p && !strncmp(buf, key + 1, strlen(key + 1)))
		p = buf - 1;
	return p ? atoll(p + strlen(key)) : -1;
}

/*
 * The value of the word @key=value on the kernel command line (the
 * harness passes its settings as rsslim.*=...), copied to @out; false
 * if there is no such word.
 */
static inline bool cmdline_value(const char *key, char *out, size_t len)
{
	char buf[1024], *word, *rest;
	size_t key_len = strlen(key);

	if (read_file("/proc/cmdline", buf, sizeof(buf)))
		return false;
	for (word = strtok_r(buf, " \n", &rest); word; word = strtok_r(NULL, " \n", &rest)) {
		if (!strncmp(word, key, key_len) && word[key_len] == '=') {
			snprintf(out, len, "%s", word + key_len + 1);
			return true;
		}
	}
	return false;
}

/*
 * The series comes in three parts a maintainer may take apart: RLIMIT_RSS
 * in reclaim, the active and hard modes, the swap token. A kernel of some
 * of them (make test KCONFIG=parts-1-3) boots with rsslim.parts=1,3, and
 * the tests of a part it lacks are skipped. Without rsslim.parts every part
 * is expected: a part missing by mistake fails its tests.
 */
enum series_part { PART_RECLAIM = 1, PART_ACTIVE_MODES = 2, PART_SWAP_TOKEN = 3 };

static inline bool kernel_has_part(enum series_part part)
{
	char parts[64], *p = parts;

	if (!cmdline_value("rsslim.parts", parts, sizeof(parts)))
		return true;
	for (;; p++) {
		if (strtol(p, &p, 10) == part)
			return true;
		if (*p != ',')
			return false;
	}
}

/* In a kselftest fixture's setup or a test: skip unless the kernel has @part. */
#define REQUIRE_PART(part)						\
	do {								\
		if (!kernel_has_part(part))				\
			SKIP(return, "this kernel lacks part %d of the series", part); \
	} while (0)

static inline int sysctl_write(const char *name, long value)
{
	char path[128], v[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	snprintf(v, sizeof(v), "%ld", value);
	return write_file(path, v);
}

static inline long sysctl_read(const char *name)
{
	char path[128], v[32];

	snprintf(path, sizeof(path), "/proc/sys/vm/%s", name);
	return read_file(path, v, sizeof(v)) ? -1 : atol(v);
}

/*
 * Run every test of a fixture twice: with MGLRU and with the classic
 * active/inactive LRU (variant->mglru says which; FIXTURE_SETUP switches).
 * Use after including kselftest_harness.h.
 */
#define LRU_VARIANTS(fixture)					\
	FIXTURE_VARIANT(fixture) {				\
		bool mglru;					\
	};							\
	FIXTURE_VARIANT_ADD(fixture, mglru) {			\
		.mglru = true,					\
	};							\
	FIXTURE_VARIANT_ADD(fixture, classic) {			\
		.mglru = false,					\
	}

static inline int set_mglru(bool on)
{
	return write_file("/sys/kernel/mm/lru_gen/enabled", on ? "y" : "n");
}

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * How many times slower than the default kernel this guest runs: the debug
 * kernel (KASAN, lockdep) gets rsslim.time_scale=N on its command line. It
 * stretches the windows a test waits for something to happen, never a
 * threshold on what happened (the one exception, a race between rsstrimd
 * and a hog, says why where it is).
 */
static inline double time_scale(void)
{
	char value[32];
	double scale;

	scale = cmdline_value("rsslim.time_scale", value, sizeof(value)) ? atof(value) : 1;
	return scale >= 1 ? scale : 1;
}

/* Free the page cache and reclaimable slab so runs start alike. */
static inline void drop_caches(void)
{
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
}

/* fork() with a pipe from child to parent: the pid, or -1 (pipe closed). */
static inline pid_t fork_with_pipe(int fds[2])
{
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
	}
	return pid;
}

/*
 * The parent's side of a child's pipe: close the write end, then read all
 * the child writes until it closes its end, as a NUL-terminated string.
 */
static inline void read_child_output(int fds[2], char *out, size_t len)
{
	size_t total = 0;
	ssize_t n;

	close(fds[1]);
	while (total < len - 1 && (n = read(fds[0], out + total, len - 1 - total)) > 0)
		total += n;
	out[total] = '\0';
	close(fds[0]);
}

/*
 * The parent's side of a child that writes one byte to fds[1] when it is
 * ready: 0 once it did, or -1 with the child killed and reaped.
 */
static inline int wait_child_ready(int fds[2], pid_t pid)
{
	char c;
	int ok;

	close(fds[1]);
	ok = read(fds[0], &c, 1) == 1;
	close(fds[0]);
	if (!ok) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	return ok ? 0 : -1;
}

/*
 * A child for spawn_ready(): named @name, in @cgroup (unless NULL), it runs
 * @prepare(@arg), which returns 0 once the child is ready for the test (its
 * memory mapped and touched, say) or else an exit code; then, after the
 * parent has gone on, @run(@arg), and sleeps once that returns (or at once,
 * with no @run).
 */
struct child_body {
	const char *name;
	const char *cgroup;
	int (*prepare)(void *arg);
	void (*run)(void *arg);
	void *arg;
};

/* Fork @body's child, which dies with its parent: its pid once it is ready, or -1. */
static inline pid_t spawn_ready(const struct child_body *body)
{
	int fds[2], rc;
	pid_t pid;

	pid = fork_with_pipe(fds);
	if (pid < 0)
		return -1;
	if (pid == 0) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, body->name);
		if (body->cgroup && join_cgroup(body->cgroup))
			_exit(2);
		rc = body->prepare(body->arg);
		if (rc)
			_exit(rc);
		if (write(fds[1], "r", 1) != 1)
			_exit(5);
		close(fds[1]);
		if (body->run)
			body->run(body->arg);
		for (;;)
			pause();
	}
	return wait_child_ready(fds, pid) ? -1 : pid;
}

enum toucher_kind {
	TOUCH_LOOP,	/* keep touching every page, forever */
	TOUCH_ONCE,	/* touch once, then sleep */
	TOUCH_REFAULT,	/* keep dropping its pages and faulting them in again */
};

struct toucher {
	size_t bytes;
	enum toucher_kind kind;
	rlim_t rss_limit_bytes;
	unsigned char *mem;
};

static inline int toucher_prepare(void *arg)
{
	struct toucher *t = arg;
	struct rlimit rl = { t->rss_limit_bytes, RLIM_INFINITY };

	if (t->rss_limit_bytes != RLIM_INFINITY && setrlimit(RLIMIT_RSS, &rl))
		return 3;
	t->mem = mmap(NULL, t->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (t->mem == MAP_FAILED)
		return 4;
	for (size_t off = 0; off < t->bytes; off += PAGE_SZ)
		t->mem[off] = 1;
	return 0;
}

static inline void toucher_run(void *arg)
{
	struct toucher *t = arg;

	if (t->kind == TOUCH_ONCE)
		return;
	for (;;) {
		if (t->kind == TOUCH_REFAULT)
			madvise(t->mem, t->bytes, MADV_DONTNEED);
		for (size_t off = 0; off < t->bytes; off += PAGE_SZ)
			t->mem[off]++;
	}
}

/*
 * Fork a child that maps `bytes` of anonymous memory, writes every page,
 * and once the parent has gone on either keeps touching its pages or
 * sleeps. It joins @cgroup (unless NULL) and sets rss_limit_bytes (or
 * RLIM_INFINITY) before the memory is touched, so the memory is charged
 * there. The child dies with its parent.
 */
static inline pid_t spawn_toucher_in(const char *cgroup, const char *name, size_t bytes,
				     enum toucher_kind kind, rlim_t rss_limit_bytes)
{
	struct toucher t = { bytes, kind, rss_limit_bytes, NULL };
	struct child_body body = { name, cgroup, toucher_prepare, toucher_run, &t };

	return spawn_ready(&body);
}

static inline pid_t spawn_toucher(const char *name, size_t bytes, enum toucher_kind kind,
				  rlim_t rss_limit_bytes)
{
	return spawn_toucher_in(NULL, name, bytes, kind, rss_limit_bytes);
}

/* Run the program at @path with args (stdout discarded) under an RSS limit. */
static inline pid_t spawn_limited(const char *path, rlim_t limit, char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		struct rlimit rl = { limit, RLIM_INFINITY };
		int devnull = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (devnull >= 0)
			dup2(devnull, 1);
		if (limit != RLIM_INFINITY && setrlimit(RLIMIT_RSS, &rl))
			_exit(3);
		execv(path, argv);
		_exit(4);
	}
	return pid;
}

static inline pid_t spawn_hog(rlim_t limit, char *const argv[])
{
	return spawn_limited("/rsslim/bin/hog", limit, argv);
}

/*
 * Wait for a child and return its exit code. A child killed by a signal
 * gives 128 + the signal, as a shell reports it, and a failed wait -1: a
 * killed hog can never pass for one that finished its work.
 */
static inline int wait_exit_code(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline void stop_child(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/* The swap-token holder's pid in our pid namespace: 0 for none, -1 on error. */
static inline pid_t swap_token_holder(void)
{
	char buf[64];

	if (read_file("/proc/sys/vm/swap_token_holder", buf, sizeof(buf)))
		return -1;
	return (pid_t)atoi(buf);
}

static inline long long rss_kb(pid_t pid)
{
	return status_num(pid, "VmRSS");
}

#endif
