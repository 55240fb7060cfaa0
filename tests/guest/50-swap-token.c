// SPDX-License-Identifier: GPL-2.0
/*
 * The swap token: under thrashing one of the thrashing processes holds it
 * and it moves between them; a process over its RSS limit never holds it
 * and a holder that goes over its limit loses it; an exiting holder frees
 * it; vm.swap_token=0 means nobody holds it; reclaim inside a cgroup at
 * its limit never disables it, and a process thrashing at its cgroup's
 * limit does not take it. Run with MGLRU on and off.
 */
#include "guest_util.h"

#include <sys/stat.h>

#include "kselftest_harness.h"

#define TRACING "/sys/kernel/tracing"
#define THRASH (130 * MIB)	/* two of these need more than the guest's RAM */

/*
 * Did the trace record pid losing the token: released (event),
 * denied, disabled, or replaced by another process (old_pid=pid)?
 */
static bool trace_shows_loss(const char *trace, const char *event, pid_t pid)
{
	char needle[64];

	snprintf(needle, sizeof(needle), "%s: pid=%d ", event, pid);
	if (strstr(trace, needle))
		return true;
	snprintf(needle, sizeof(needle), "swap_token_disable: pid=%d ", pid);
	if (strstr(trace, needle))
		return true;
	snprintf(needle, sizeof(needle), "swap_token_replace: pid=");
	for (const char *p = strstr(trace, needle); p; p = strstr(p + 1, needle)) {
		const char *old = strstr(p, "old_pid=");
		const char *eol = strchr(p, '\n');

		if (old && (!eol || old < eol) && atoi(old + 8) == pid)
			return true;
	}
	return false;
}

static void trace_events(const char *value)
{
	write_file(TRACING "/events/swap_token/enable", value);
}

FIXTURE(token) {
	long saved_token, saved_enforce, saved_timeout, saved_idle;
};

LRU_VARIANTS(token);

FIXTURE_SETUP(token)
{
	REQUIRE_PART(PART_SWAP_TOKEN);
	self->saved_token = sysctl_read("swap_token");
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	self->saved_timeout = sysctl_read("swap_token_timeout_ms");
	self->saved_idle = sysctl_read("swap_token_idle_ms");
	ASSERT_LE(0, self->saved_token);
	ASSERT_EQ(0, set_mglru(variant->mglru));
	ASSERT_EQ(0, sysctl_write("swap_token", 1));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 1));
	ASSERT_EQ(0, sysctl_write("swap_token_timeout_ms", 1000));
	clear_trace();
	trace_events("1");
	drop_caches();
}

FIXTURE_TEARDOWN(token)
{
	trace_events("0");
	sysctl_write("swap_token", self->saved_token);
	sysctl_write("rss_limit_enforce", self->saved_enforce);
	sysctl_write("swap_token_timeout_ms", self->saved_timeout);
	sysctl_write("swap_token_idle_ms", self->saved_idle);
	set_mglru(true);
}

struct holders {
	int samples, held, by_a, by_b, by_other;
};

static void sample_holders(pid_t a, pid_t b, double seconds, struct holders *h)
{
	memset(h, 0, sizeof(*h));
	for (double end = now_s() + seconds; now_s() < end; h->samples++) {
		pid_t p = swap_token_holder();

		h->held += p > 0;
		h->by_a += p == a;
		h->by_b += p == b;
		h->by_other += p > 0 && p != a && p != b;
		sleep_s(0.1);
	}
}

/*
 * Desperate direct reclaim (priority 0) takes the token away and keeps it
 * off for a timeout; when that happened the rotation restarts, so both
 * turns are required only when it did not.
 */
TEST_F_TIMEOUT(token, one_thrashing_process_holds_it_and_it_moves, GUEST_TIMEOUT(120))
{
	long long disabled0 = vmstat("swap_token_disable"), disabled;
	struct holders h;
	pid_t a, b;

	a = spawn_toucher("thrash-a", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	b = spawn_toucher("thrash-b", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(a, 0);
	ASSERT_GT(b, 0);
	sample_holders(a, b, 10, &h);
	stop_child(a);
	stop_child(b);
	disabled = vmstat("swap_token_disable") - disabled0;
	TH_LOG("%d samples: held %d, by a %d, by b %d, by others %d; %lld disables", h.samples,
	       h.held, h.by_a, h.by_b, h.by_other, disabled);
	EXPECT_GT(h.held, 0);
	/* The guest's other processes (the test itself) fault now and then too. */
	EXPECT_LT(h.by_other * 4, h.by_a + h.by_b);
	/* A 1 s timeout over 10 s: both get a turn. */
	if (!disabled) {
		EXPECT_GT(h.by_a, 0);
		EXPECT_GT(h.by_b, 0);
	}
}

TEST_F_TIMEOUT(token, over_limit_never_holds_it, GUEST_TIMEOUT(120))
{
	static char buf[1 << 20];
	char needle[64];
	long long denied0, grabs0;
	struct holders h;
	pid_t limited, free_one;

	denied0 = vmstat("swap_token_rss_limit_deny");
	grabs0 = vmstat("swap_token_grab");
	/* 1 MiB: a process that keeps touching 130 MiB never gets under it. */
	limited = spawn_toucher("limited", THRASH, TOUCH_LOOP, 1 * MIB);
	/* Big enough to thrash on its own once the limited one has shrunk. */
	free_one = spawn_toucher("unlimited", 200 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(limited, 0);
	ASSERT_GT(free_one, 0);
	sample_holders(limited, free_one, 8, &h);
	stop_child(limited);
	stop_child(free_one);
	ASSERT_EQ(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	TH_LOG("%d samples: by limited %d, by unlimited %d; %lld denials", h.samples, h.by_a,
	       h.by_b, vmstat("swap_token_rss_limit_deny") - denied0);
	EXPECT_EQ(0, h.by_a);
	snprintf(needle, sizeof(needle), "swap_token_acquire: pid=%d ", limited);
	EXPECT_EQ(NULL, strstr(buf, needle));
	snprintf(needle, sizeof(needle), "swap_token_replace: pid=%d ", limited);
	EXPECT_EQ(NULL, strstr(buf, needle));
	/*
	 * The token was in play: the limited one asked for it and was refused.
	 * Whether the other one took it depends on whether it faulted at all:
	 * on the classic LRU the rule may spare it every major fault (a CI run:
	 * 6334 denials, no grab), so a grab is only logged.
	 */
	EXPECT_GT(vmstat("swap_token_rss_limit_deny") - denied0, 0);
	TH_LOG("%lld grabs by others", vmstat("swap_token_grab") - grabs0);
}

TEST_F_TIMEOUT(token, holder_over_its_limit_loses_it, GUEST_TIMEOUT(120))
{
	struct rlimit rl = { 4 * MIB, RLIM_INFINITY };
	static char buf[1 << 20];
	pid_t a, b, held = 0;

	/*
	 * Long timeout, and an idle time no thrashing process reaches: only
	 * the limit (or desperate reclaim) can take the token from a or b.
	 */
	ASSERT_EQ(0, sysctl_write("swap_token_timeout_ms", 600000));
	ASSERT_EQ(0, sysctl_write("swap_token_idle_ms", 2000));
	a = spawn_toucher("thrash-a", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	b = spawn_toucher("thrash-b", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(a, 0);
	ASSERT_GT(b, 0);
	for (double end = now_s() + 20; now_s() < end && held != a && held != b; sleep_s(0.1))
		held = swap_token_holder();
	ASSERT_TRUE(held == a || held == b);
	ASSERT_EQ(0, prlimit(held, RLIMIT_RSS, &rl, NULL));
	sleep_s(2);
	EXPECT_NE(held, swap_token_holder());
	stop_child(a);
	stop_child(b);
	ASSERT_EQ(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	/* Lost by the limit (deny) most of the time; by the rule or reclaim first at times. */
	EXPECT_TRUE(trace_shows_loss(buf, "swap_token_deny", held));
}

TEST_F_TIMEOUT(token, exiting_holder_frees_it, GUEST_TIMEOUT(120))
{
	static char buf[1 << 20];
	pid_t pid, held = 0;

	/* Only exit (or desperate reclaim) may take the token from it. */
	ASSERT_EQ(0, sysctl_write("swap_token_timeout_ms", 600000));
	ASSERT_EQ(0, sysctl_write("swap_token_idle_ms", 2000));
	/* Alone and bigger than RAM, it thrashes against itself. */
	pid = spawn_toucher("alone", 260 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(pid, 0);
	for (double end = now_s() + 20; now_s() < end && held != pid; sleep_s(0.1))
		held = swap_token_holder();
	EXPECT_EQ(pid, held);
	stop_child(pid);
	/* Another process may take it at once, but never the dead one. */
	EXPECT_NE(pid, swap_token_holder());
	ASSERT_EQ(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	EXPECT_TRUE(trace_shows_loss(buf, "swap_token_release", pid));
}

/* Many short-lived thrashing processes: the token never points at a dead one. */
TEST_F_TIMEOUT(token, short_lived_holders_leave_no_trace, GUEST_TIMEOUT(240))
{
	pid_t bg = spawn_toucher("background", 90 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	pid_t dead[8];
	int stale = 0;

	ASSERT_GT(bg, 0);
	for (int i = 0; i < 8; i++) {
		dead[i] = spawn_toucher("short", 150 * MIB, TOUCH_LOOP, RLIM_INFINITY);
		ASSERT_GT(dead[i], 0);
		sleep_s(0.5);
		stop_child(dead[i]);
		for (int k = 0; k <= i; k++)
			stale += swap_token_holder() == dead[k];
	}
	stop_child(bg);
	EXPECT_EQ(0, stale);
	EXPECT_NE(bg, swap_token_holder());
}

TEST_F_TIMEOUT(token, knob_off_nobody_holds_it, GUEST_TIMEOUT(120))
{
	long long grabs0 = vmstat("swap_token_grab");
	struct holders h;
	pid_t a, b;

	ASSERT_EQ(0, sysctl_write("swap_token", 0));
	a = spawn_toucher("thrash-a", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	b = spawn_toucher("thrash-b", THRASH, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(a, 0);
	ASSERT_GT(b, 0);
	sample_holders(a, b, 5, &h);
	stop_child(a);
	stop_child(b);
	EXPECT_EQ(0, h.held);
	EXPECT_EQ(0, vmstat("swap_token_grab") - grabs0);
}

#define SHARED_FILE "/scratch/rsslim-token-file"
#define SHARED_FILE_SIZE (48 * MIB)

#define PAGER_CG "/sys/fs/cgroup/rsslim-token-pager"

/*
 * A child that keeps writing 8 MiB and has its cgroup (PAGER_CG, no limit)
 * reclaim it all after each pass (memory.reclaim), so that each pass reads
 * it back from swap: it takes the token with its major faults without any
 * pressure on the guest. Not by thrashing in a small memory cgroup: a
 * process at its cgroup's limit may not take the token. With map_file, it
 * also maps SHARED_FILE, and never touches it.
 */
static pid_t spawn_self_pager(bool map_file)
{
	pid_t pid;

	if (make_cgroup(PAGER_CG, "max", "max"))
		return -1;
	pid = fork();
	if (pid == 0) {
		const size_t size = 8 * MIB;
		unsigned char *mem;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (join_cgroup(PAGER_CG))
			_exit(3);
		if (map_file) {
			fd = open(SHARED_FILE, O_RDONLY);
			if (fd < 0 || mmap(NULL, SHARED_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0) ==
				      MAP_FAILED)
				_exit(4);
		}
		mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (mem == MAP_FAILED)
			_exit(5);
		for (;;) {
			for (size_t off = 0; off < size; off += PAGE_SZ)
				mem[off]++;
			/* Fails (EAGAIN) when it took less: the rest goes next time. */
			write_file(PAGER_CG "/memory.reclaim", "8M");
		}
	}
	return pid;
}

static void stop_self_pager(pid_t pid)
{
	stop_child(pid);
	rmdir(PAGER_CG);
}

/* Wait (up to 5 s) until pid holds the token; the holder seen last. */
static pid_t wait_for_holder(pid_t pid)
{
	pid_t held = 0;

	for (int i = 0; i < 100 && held != pid; i++) {
		sleep_s(0.05);
		held = swap_token_holder();
	}
	return held;
}

static int file_reader_prepare(void *arg)
{
	volatile unsigned char sum = 0;
	unsigned char *file;
	int fd = open(SHARED_FILE, O_RDONLY);

	file = mmap(NULL, SHARED_FILE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (fd < 0 || file == MAP_FAILED)
		return 3;
	for (long long off = 0; off < SHARED_FILE_SIZE; off += PAGE_SZ)
		sum += file[off];
	return 0;
}

/* A child that maps SHARED_FILE, reads every page once and sleeps. */
static pid_t spawn_file_reader(void)
{
	struct child_body body = { "file-reader", NULL, file_reader_prepare, NULL, NULL };

	return spawn_ready(&body);
}

/*
 * The token protects the pages its holder maps, not every page of a file
 * it has mapped: a reader's idle pages of a file that the holder maps, but
 * never touches, are reclaimed like any idle page when a hog needs the
 * memory. (The rmap walk of each of those pages visits the holder's
 * mapping, which was taken for a reference.)
 */
TEST_F_TIMEOUT(token, holder_does_not_protect_file_pages_it_does_not_map,
	       GUEST_TIMEOUT(180))
{
	static char chunk[MIB];
	long long before, after;
	pid_t reader, holder, hog, held, held_after;
	int fd;

	fd = open(SHARED_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	for (long long i = 0; i < SHARED_FILE_SIZE / MIB; i++)
		ASSERT_EQ((ssize_t)sizeof(chunk), write(fd, chunk, sizeof(chunk)));
	ASSERT_EQ(0, fsync(fd));
	close(fd);
	drop_caches();

	/*
	 * The holder maps the file first: the rmap walk visits the mappings
	 * in the order they were made, and stops once it has found every
	 * process that maps the page, so the holder's mapping is visited
	 * only if it comes first.
	 */
	holder = spawn_self_pager(true);
	ASSERT_GT(holder, 0);
	held = wait_for_holder(holder);
	reader = spawn_file_reader();
	ASSERT_GT(reader, 0);
	before = status_num(reader, "RssFile");
	hog = spawn_toucher("hog", 200 * MIB, TOUCH_ONCE, RLIM_INFINITY);
	held_after = swap_token_holder();
	after = status_num(reader, "RssFile");
	stop_child(hog);
	stop_self_pager(holder);
	stop_child(reader);
	unlink(SHARED_FILE);
	TH_LOG("reader's file pages %lld kB -> %lld kB; holder %d before the hog, %d after (pager %d)",
	       before, after, held, held_after, holder);
	ASSERT_GE(before, SHARED_FILE_SIZE / 1024 * 9 / 10);
	ASSERT_GT(hog, 0);
	/* The premise: the pager held the token when the hog started. */
	ASSERT_EQ(holder, held);
	EXPECT_LT(after * 2, before);
}

#define LIMITED_CG "/sys/fs/cgroup/rsslim-token-memcg"

/*
 * A cgroup reclaiming at its memory.max is no emergency for the rest of
 * the system: that reclaim never disables the token. A cgroup spinning at
 * its limit would otherwise keep the token off for everybody. The holder
 * swaps within a cgroup of its own, so there is no global pressure, and
 * nothing else may disable the token.
 */
TEST_F_TIMEOUT(token, cgroup_limit_reclaim_leaves_the_token_alone, GUEST_TIMEOUT(120))
{
	long long disabled0, disabled;
	pid_t pid, pager, held;
	int code;

	pager = spawn_self_pager(false);
	ASSERT_GT(pager, 0);
	held = wait_for_holder(pager);
	if (held != pager)
		stop_self_pager(pager);
	ASSERT_EQ(pager, held);
	ASSERT_EQ(0, make_cgroup(LIMITED_CG, "16M", "0"));
	disabled0 = vmstat("swap_token_disable");
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		unsigned char *mem;

		if (join_cgroup(LIMITED_CG))
			_exit(3);
		mem = mmap(NULL, 64 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (mem == MAP_FAILED)
			_exit(4);
		for (long long off = 0; off < 64 * MIB; off += PAGE_SZ)
			mem[off] = 1;
		_exit(0);
	}
	code = wait_exit_code(pid);
	disabled = vmstat("swap_token_disable") - disabled0;
	held = swap_token_holder();
	stop_self_pager(pager);
	rmdir(LIMITED_CG);
	TH_LOG("64 MiB in a 16 MiB cgroup without swap: exit %d, %lld disables; holder %d (pager %d)",
	       code, disabled, held, pager);
	/* The cgroup's reclaim gave up: its OOM killer ended the child. */
	ASSERT_EQ(128 + SIGKILL, code);
	EXPECT_EQ(0, disabled);
	EXPECT_EQ(pager, held);
}

#define THRASH_CG "/sys/fs/cgroup/rsslim-token-thrash"

/*
 * A process thrashing against its own cgroup's memory.max, with no global
 * shortage: its swap-ins come from its limit, and the token, which would
 * exempt its pages from global reclaim, is not for it. Before, it took the
 * token at its first swap-in and held it while it thrashed. The trace
 * records every acquisition, so none can slip between two samples.
 */
TEST_F_TIMEOUT(token, thrashing_at_its_cgroup_limit_does_not_take_it, GUEST_TIMEOUT(120))
{
	static char buf[1 << 20];
	long long majflt0, majflt;
	char needle[64];
	struct holders h;
	pid_t pid;

	ASSERT_EQ(0, make_cgroup(THRASH_CG, "16M", "max"));
	majflt0 = vmstat("pgmajfault");
	pid = spawn_toucher_in(THRASH_CG, "memcg-thrash", 48 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(pid, 0);
	sample_holders(pid, 0, 3, &h);
	majflt = vmstat("pgmajfault") - majflt0;
	stop_child(pid);
	rmdir(THRASH_CG);
	ASSERT_EQ(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	snprintf(needle, sizeof(needle), "swap_token_acquire: pid=%d ", pid);
	TH_LOG("48 MiB touched in a 16 MiB cgroup: %lld major faults; %d samples, the thrasher held it in %d, others in %d; acquired by it in the trace: %s",
	       majflt, h.samples, h.by_a, h.by_other, strstr(buf, needle) ? "yes" : "no");
	/* The premise: it did thrash, from swap. */
	ASSERT_GT(majflt, 1000);
	EXPECT_EQ(0, h.by_a);
	EXPECT_EQ(NULL, strstr(buf, needle));
}

TEST_HARNESS_MAIN
