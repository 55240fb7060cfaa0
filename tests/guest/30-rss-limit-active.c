// SPDX-License-Identifier: GPL-2.0
/*
 * Active (vm.rss_limit_enforce=2) and hard (3) RLIMIT_RSS enforcement:
 * Andrew Morton's 2004 test scaled to the guest, no trimming without
 * pressure in mode 2, trimming without pressure in mode 3, prlimit on a
 * running process, the trim tracepoint, the pause after a trim that
 * could not help, no cost for a PROT_NONE reservation, no trimming in
 * mode 2 while page cache could go instead, and huge pages paged out
 * whole. Run with MGLRU on and off.
 */
#include "guest_util.h"

#include <sys/stat.h>

#include "kselftest_harness.h"

#define TRACING "/sys/kernel/tracing"
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* The THP mode in force ("always", "madvise", "never"), or "" without THP. */
static void thp_mode(char *mode, size_t len)
{
	char text[64], *open_bracket, *close_bracket;

	mode[0] = '\0';
	if (read_file(THP_ENABLED, text, sizeof(text)))
		return;
	open_bracket = strchr(text, '[');
	close_bracket = open_bracket ? strchr(open_bracket, ']') : NULL;
	if (close_bracket) {
		*close_bracket = '\0';
		snprintf(mode, len, "%s", open_bracket + 1);
	}
}

FIXTURE(active) {
	long saved_enforce;
	char saved_thp[16];	/* the THP mode to restore, "" without THP */
};

LRU_VARIANTS(active);

FIXTURE_SETUP(active)
{
	REQUIRE_PART(PART_ACTIVE_MODES);
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	ASSERT_LE(0, self->saved_enforce);
	ASSERT_EQ(0, set_mglru(variant->mglru));
	thp_mode(self->saved_thp, sizeof(self->saved_thp));
	drop_caches();
}

FIXTURE_TEARDOWN(active)
{
	sysctl_write("rss_limit_enforce", self->saved_enforce);
	set_mglru(true);
	if (self->saved_thp[0])
		write_file(THP_ENABLED, self->saved_thp);
}

/* What the rss_limit_trim trace recorded since trim_trace_start(). */
struct trim_trace {
	long long trims;		/* trims traced */
	long long freed_nothing;	/* of them, trims that freed no page */
	long long taken;		/* pages they took in all */
	long long freed;		/* pages they freed in all */
	long long least_rss;		/* the lowest RSS a trim left, in pages (-1: none) */
};

static int trim_trace_start(void)
{
	if (clear_trace())
		return -1;
	return write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "1");
}

/* What the trace holds so far, the event left on. */
static void trim_trace_read(struct trim_trace *t)
{
	static char trace[1 << 20];
	const char *line;

	memset(t, 0, sizeof(*t));
	t->least_rss = -1;
	if (read_file(TRACING "/trace", trace, sizeof(trace)))
		return;
	for (line = strstr(trace, " rss_limit_trim: "); line;
	     line = strstr(line + 1, " rss_limit_trim: ")) {
		const char *freed = strstr(line, " reclaimed="), *taken = strstr(line, " taken=");
		const char *rss = strstr(line, " rss="), *eol = strchr(line, '\n');

		if (!freed || !taken || !rss || (eol && taken > eol))
			continue;
		t->trims++;
		if (t->least_rss < 0 || atoll(rss + strlen(" rss=")) < t->least_rss)
			t->least_rss = atoll(rss + strlen(" rss="));
		t->freed_nothing += atoll(freed + strlen(" reclaimed=")) == 0;
		t->freed += atoll(freed + strlen(" reclaimed="));
		t->taken += atoll(taken + strlen(" taken="));
	}
}

static void trim_trace_stop(struct trim_trace *t)
{
	write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "0");
	trim_trace_read(t);
}

/*
 * The 2004 test in mode 2: a process of @sleeper_bytes (100 MiB in 2004)
 * touches its memory and sleeps; a sorting hog larger than the rest of RAM
 * (@path with @argv, run under a limit of 4000 KiB, as "ulimit -m 4000")
 * runs for 20 s. The sleeper keeps at least 90%, and the hog's trims were
 * not futile: each took pages and freed them (the trim waits for its
 * writes, so each frees some; one in ten may free nothing, should its
 * writes take longer than the wait).
 */
static void sleeper_holds_in_mode_2(struct __test_metadata *_metadata, size_t sleeper_bytes,
				    const char *path, char *const argv[])
{
	long long refused0 = vmstat("rss_limit_trim_refused");
	long long before, after;
	struct trim_trace t;
	pid_t sleeper, hog;
	int status;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	sleeper = spawn_toucher("sleeper", sleeper_bytes, TOUCH_ONCE, RLIM_INFINITY);
	ASSERT_GT(sleeper, 0);
	before = rss_kb(sleeper);
	ASSERT_EQ(0, trim_trace_start());
	hog = spawn_limited(path, 4000 * 1024, argv);
	status = hog > 0 ? wait_exit_code(hog) : -1;
	after = rss_kb(sleeper);
	trim_trace_stop(&t);
	stop_child(sleeper);
	TH_LOG("sleeper rss %lld kB -> %lld kB (%.0f%%), hog exit %d; %lld trims took %lld pages, %lld of them freed nothing; %lld refused",
	       before, after, 100.0 * (double)after / (double)before, status, t.trims, t.taken,
	       t.freed_nothing, vmstat("rss_limit_trim_refused") - refused0);
	/* A hog that died early made no pressure: the sleeper's 100% would mean nothing. */
	EXPECT_EQ(0, status);
	EXPECT_GE(after * 10, before * 9);
	EXPECT_GT(t.trims, 0);
	EXPECT_LE(t.freed_nothing * 10, t.trims);
}

/*
 * Beside the sorter of 2004, an array of anonymous memory. 100% in 8 of 8
 * classic-LRU runs since a trim frees what it wrote (before that, kswapd
 * took the sleeper's pages while the trim's writes were in flight, in some
 * runs: 58%, 78% and 81% were seen). The unpatched kernel keeps about 20%.
 */
TEST_F_TIMEOUT(active, sleeper_keeps_its_memory_in_mode_2, GUEST_TIMEOUT(240))
{
	char *const argv[] = { "hog", "--size", "200M", "--pattern", "sort",
			       "--duration", "20", NULL };

	sleeper_holds_in_mode_2(_metadata, 100 * MIB, "/rsslim/bin/hog", argv);
}

/*
 * A hog whose array is shared memory that only it maps (as a database's
 * shared buffers, or a memfd): the trim takes its pages as it takes
 * anonymous ones. Before it could, the sleeper kept 17-25%, as with every
 * knob off, and 35-38 trims took 448-960 pages in all.
 */
TEST_F_TIMEOUT(active, sleeper_keeps_its_memory_beside_a_shmem_hog_in_mode_2,
	       GUEST_TIMEOUT(240))
{
	char *const argv[] = { "hog", "--size", "200M", "--mode", "shmem", "--pattern",
			       "sort", "--duration", "20", NULL };

	sleeper_holds_in_mode_2(_metadata, 100 * MIB, "/rsslim/bin/hog", argv);
}

/*
 * A tree of processes, as "make -j4" under "ulimit -m": a shell forks four
 * sorters of 50 MiB, each inheriting the limit. Each is over it on its own
 * and trims itself.
 */
TEST_F_TIMEOUT(active, sleeper_keeps_its_memory_beside_a_forked_tree_in_mode_2,
	       GUEST_TIMEOUT(240))
{
	char *const argv[] = { "sh", "-c",
		"pids=; for seed in 1 2 3 4; do "
		"/rsslim/bin/hog --size 50M --pattern sort --duration 20 --seed $seed & "
		"pids=\"$pids $!\"; done; rc=0; "
		"for p in $pids; do wait $p || rc=1; done; exit $rc", NULL };

	sleeper_holds_in_mode_2(_metadata, 100 * MIB, "/bin/sh", argv);
}

/*
 * The 2004 test in a memory cgroup too small for it (96 MiB: a 48 MiB
 * sleeper, a 100 MiB sorter), on a node with room to spare: the cgroup's
 * own reclaim takes the sleeper's pages unless the hog trims itself when
 * its cgroup, not the node, is short. Before mode 2 judged a cgroup's room
 * the hog never trimmed, and the sleeper kept 1% on either LRU.
 */
TEST_F_TIMEOUT(active, sleeper_keeps_its_memory_in_a_full_cgroup_in_mode_2,
	       GUEST_TIMEOUT(240))
{
	const char *cgroup = "/sys/fs/cgroup/rsslim-2004";
	char *const argv[] = { "hog", "--size", "100M", "--pattern", "sort",
			       "--duration", "20", NULL };

	ASSERT_EQ(0, make_cgroup(cgroup, "96M", "max"));
	ASSERT_EQ(0, join_cgroup(cgroup));
	sleeper_holds_in_mode_2(_metadata, 48 * MIB, "/rsslim/bin/hog", argv);
	EXPECT_EQ(0, join_cgroup("/sys/fs/cgroup"));
	rmdir(cgroup);
}

/*
 * The 2004 test with the limit given late, as a user who sees a hog eating
 * the machine would (issue: prlimit --pid on a running hog): the sorter
 * starts with no limit and gets ulimit -m 4000 once reclaim has started on
 * the sleeper (it has lost 10%). From the moment prlimit() returns, the
 * sleeper keeps at least 60% of what it had then. What it lost before that
 * moment the kernel could not know about: under thrashing, starting the
 * prlimit program alone took 0.2-0.4 s here, in which a sleeper went from
 * 38 to 21 MiB. So the moment is the syscall's return, here and in the
 * bench's -pid scenarios.
 */
TEST_F_TIMEOUT(active, sleeper_keeps_what_it_had_when_a_running_hog_is_limited,
	       GUEST_TIMEOUT(240))
{
	char *const argv[] = { "hog", "--size", "200M", "--pattern", "sort",
			       "--duration", "20", NULL };
	struct rlimit rl = { 4000 * 1024, RLIM_INFINITY };
	long long full, at_limit, hog_at_limit, after, rss;
	double deadline;
	pid_t sleeper, hog;
	int status;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	sleeper = spawn_toucher("sleeper", 100 * MIB, TOUCH_ONCE, RLIM_INFINITY);
	ASSERT_GT(sleeper, 0);
	full = rss_kb(sleeper);
	hog = spawn_hog(RLIM_INFINITY, argv);
	ASSERT_GT(hog, 0);
	deadline = now_s() + 15 * time_scale();
	do {
		sleep_s(0.01);
		rss = rss_kb(sleeper);
	} while (rss * 10 > full * 9 && now_s() < deadline);
	ASSERT_EQ(0, prlimit(hog, RLIMIT_RSS, &rl, NULL));
	at_limit = rss_kb(sleeper);
	hog_at_limit = rss_kb(hog);
	status = wait_exit_code(hog);
	after = rss_kb(sleeper);
	stop_child(sleeper);
	TH_LOG("sleeper %lld kB, %lld kB when the limit took effect (hog %lld kB), %lld kB at the end (%.0f%%), hog exit %d",
	       full, at_limit, hog_at_limit, after, 100.0 * (double)after / (double)at_limit, status);
	EXPECT_EQ(0, status);
	/*
	 * The hog had grown far over its limit and reclaim had started: the
	 * case the issue is about. (4 times the limit: on the debug kernel,
	 * whose KASAN shadow takes an eighth of the guest's memory, reclaim
	 * reached the sleeper when the hog had 46 MiB with MGLRU and 33 MiB on
	 * the classic LRU; on the default kernel about 100 MiB.)
	 */
	EXPECT_GT(hog_at_limit, 4 * 4000);
	EXPECT_GT(at_limit, 20 * 1024);
	/*
	 * 4 runs of this kernel: 88-98% on the classic LRU, 96-100% with
	 * MGLRU (a kswapd that waited for trims in flight gave 93-100% and
	 * 99-100% in 12 runs, before trims freed what they wrote). An ignored
	 * limit leaves a sleeper about 20% (the test above). How much more
	 * than 20% depends on how soon the guest's first trim of a hog that
	 * is already far over its limit gets its writeback done, which is TCG
	 * speed: CI runs failed a 90% bound once and an 80% bound once (76%,
	 * classic LRU). 60% is midway between the two outcomes, so the test
	 * tells enforcement from none; how well it protects is the bench's
	 * number (idle-2004-pid-m2, with its interval).
	 */
	EXPECT_GE(after * 10, at_limit * 6);
}

/* Mode 2 is still a soft limit: without pressure, nothing is trimmed. */
TEST_F_TIMEOUT(active, no_trim_without_pressure_in_mode_2, GUEST_TIMEOUT(60))
{
	long long before, after, trims0;
	pid_t pid;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	pid = spawn_toucher("limited", 48 * MIB, TOUCH_LOOP, 8 * MIB);
	ASSERT_GT(pid, 0);
	trims0 = vmstat("rss_limit_trim");
	before = rss_kb(pid);
	sleep_s(3);
	after = rss_kb(pid);
	stop_child(pid);
	TH_LOG("rss %lld kB -> %lld kB", before, after);
	EXPECT_GE(after * 100, before * 98);
	EXPECT_EQ(0, vmstat("rss_limit_trim") - trims0);
}

/*
 * Mode 3 trims without pressure: the median RSS sampled over 3 s stays
 * within 25% + 1 MiB of the limit (the trim goes a little below the limit,
 * then the process grows again by what it faults in before the next trim),
 * and the process still finishes its work.
 */
TEST_F_TIMEOUT(active, hard_mode_trims_and_work_completes, GUEST_TIMEOUT(120))
{
	char *const argv[] = { "hog", "--size", "48M", "--passes", "20", NULL };
	long long samples[30], limit_kb = 8 * 1024;
	int n = 0, status;
	pid_t hog;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	hog = spawn_hog(8 * MIB, argv);
	ASSERT_GT(hog, 0);
	sleep_s(1);
	for (; n < 30; n++) {
		long long r = rss_kb(hog);

		if (r < 0)
			break;
		samples[n] = r;
		sleep_s(0.1);
	}
	status = wait_exit_code(hog);
	ASSERT_GE(n, 5);
	for (int i = 0; i < n; i++)	/* insertion sort for the median */
		for (int j = i; j > 0 && samples[j - 1] > samples[j]; j--) {
			long long t = samples[j];

			samples[j] = samples[j - 1];
			samples[j - 1] = t;
		}
	TH_LOG("%d samples: median rss %lld kB, max %lld kB, limit %lld kB", n, samples[n / 2],
	       samples[n - 1], limit_kb);
	EXPECT_LE(samples[n / 2], limit_kb * 5 / 4 + 1024);
	EXPECT_EQ(0, status);
}

/* Microseconds some task stalled on memory since boot, or -1 without PSI. */
static long long memory_stall_us(void)
{
	char text[256];
	const char *total;

	if (read_file("/proc/pressure/memory", text, sizeof(text)))
		return -1;
	total = strstr(text, "total=");
	return total ? atoll(total + strlen("total=")) : -1;
}

/*
 * A trim goes in batches of at most 32 MiB, and a signal ends one: a
 * process using 160 MiB that is given a 4 MiB limit stops at SIGSTOP sent
 * once its trim has begun, with most of its memory still resident. Before,
 * one trim took it all the way down (156 MiB) before the process could
 * even see the signal, and a ^C or a debugger waited as long. Judged on
 * pages (the resident set it stopped with), not on time. The trim counts as
 * a memory stall in /proc/pressure/memory, as reclaim does.
 */
TEST_F_TIMEOUT(active, a_stop_signal_ends_a_trim_batch, GUEST_TIMEOUT(120))
{
	struct rlimit rl = { 4 * MIB, RLIM_INFINITY };
	long long full, seen, stopped, stall0, stall;
	double deadline;
	int status = 0;
	pid_t pid;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	pid = spawn_toucher("stopped", 160 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(pid, 0);
	full = rss_kb(pid);
	stall0 = memory_stall_us();
	ASSERT_EQ(0, prlimit(pid, RLIMIT_RSS, &rl, NULL));
	/* The trim has begun once its first page tables' pages are gone. */
	deadline = now_s() + 10 * time_scale();
	do {
		seen = rss_kb(pid);
	} while (seen > full - 1024 && now_s() < deadline);
	kill(pid, SIGSTOP);
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	stopped = rss_kb(pid);
	stall = memory_stall_us() - stall0;
	stop_child(pid);
	TH_LOG("rss %lld kB, %lld kB when SIGSTOP was sent, %lld kB when stopped; memory stall +%lld us",
	       full, seen, stopped, stall);
	ASSERT_TRUE(WIFSTOPPED(status));
	/* The premise: the signal came while the trim ran. */
	ASSERT_LE(seen, full - 1024);
	/* Stopped within a batch or two of the signal, not at its limit. */
	EXPECT_GT(stopped, full / 2);
	EXPECT_GT(stall, 0);
}

/*
 * prlimit --pid on a running process: its trims, in batches, take it to
 * its limit. Judged on the RSS the trims report, not on samples of /proc:
 * a sample lands anywhere between a trim and the refaults after it (the
 * lowest of 20 a second was 13.9 MiB once in a CI rehearsal, 15.6 MiB on
 * the debug kernel). How long that took is logged, not judged: 1.3-1.8 s
 * for the batches of 32 MiB under TCG, and in one run no trim ended within
 * the second this test used to allow.
 */
TEST_F_TIMEOUT(active, prlimit_on_running_process_in_mode_3, GUEST_TIMEOUT(60))
{
	struct rlimit rl = { 8 * MIB, RLIM_INFINITY };
	const long long bound = 8 * MIB * 5 / 4 + MIB;
	double start, deadline;
	struct trim_trace t;
	long long before;
	pid_t pid;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	pid = spawn_toucher("running", 48 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(pid, 0);
	before = rss_kb(pid);
	ASSERT_EQ(0, trim_trace_start());
	ASSERT_EQ(0, prlimit(pid, RLIMIT_RSS, &rl, NULL));
	start = now_s();
	deadline = start + 10 * time_scale();
	do {
		sleep_s(0.1);
		trim_trace_read(&t);
	} while ((t.least_rss < 0 || t.least_rss * PAGE_SZ > bound) && now_s() < deadline);
	TH_LOG("rss %lld kB; %lld trims in %.1f s after prlimit, the lowest left %lld kB",
	       before, t.trims, now_s() - start, t.least_rss * (PAGE_SZ / 1024));
	trim_trace_stop(&t);
	stop_child(pid);
	EXPECT_GT(before, 40 * 1024);
	ASSERT_GT(t.trims, 0);
	EXPECT_LE(t.least_rss * PAGE_SZ, bound);
}

#define PROTECTED_CG "/sys/fs/cgroup/rsslim-protected"

/*
 * A 48 MiB process that keeps touching its memory, beside a 200 MiB one that
 * does the same, gets an 8 MiB limit by prlimit. Its cgroup's memory.min
 * (64 MiB) keeps reclaim away from it, so that only a trim, which pages
 * out the process's own pages whatever its cgroup's protection, can bring
 * it down: without that, the pressure toucher's reclaim took it from 48 to
 * 22 MiB before prlimit() and below the bound after it, with no trim and
 * no reference ignored (a run on the classic LRU). Watch its RSS for up to
 * @window seconds, or until it is at most @enough kB: the smallest RSS seen
 * (-1 if a process could not be started). @trims gets the trims the kernel
 * counted meanwhile (only the limited process can trim).
 */
static long long min_rss_after_prlimit(long long *before, double window,
				       long long enough, long long *trims)
{
	struct rlimit rl = { 8 * MIB, RLIM_INFINITY };
	long long smallest, rss, trims0;
	pid_t pid, pressure;
	double deadline;

	if (make_cgroup(PROTECTED_CG, "max", "max") ||
	    write_file(PROTECTED_CG "/memory.min", "64M"))
		return -1;
	pid = spawn_toucher_in(PROTECTED_CG, "running", 48 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	if (pid < 0)
		return -1;
	pressure = spawn_toucher("pressure", 200 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	if (pressure < 0) {
		stop_child(pid);
		return -1;
	}
	*before = rss_kb(pid);
	trims0 = vmstat("rss_limit_trim");
	if (prlimit(pid, RLIMIT_RSS, &rl, NULL)) {
		stop_child(pressure);
		stop_child(pid);
		return -1;
	}
	smallest = *before;
	deadline = now_s() + window;
	while (smallest > enough && now_s() < deadline) {
		sleep_s(0.05);
		rss = rss_kb(pid);
		if (rss >= 0 && rss < smallest)
			smallest = rss;
	}
	*trims = vmstat("rss_limit_trim") - trims0;
	stop_child(pressure);
	stop_child(pid);
	rmdir(PROTECTED_CG);
	return smallest;
}

/*
 * Same in mode 2, where it needs memory pressure to act. Mode 2 is a soft
 * limit: once a trim has freed memory the process may grow again until
 * memory is short, so what counts is the smallest RSS it reaches. The claim
 * rests on the kernel's own counts: with the knob at 0 nothing trims and the
 * process stays over the bound for a second; in mode 2 it trims and comes
 * under the bound. How long that takes is TCG time, which host load moves
 * (a 1-s window failed twice on a loaded host), so the mode-2 window is
 * only a give-up point.
 */
TEST_F_TIMEOUT(active, prlimit_on_running_process_in_mode_2, GUEST_TIMEOUT(180))
{
	const long long bound = 8 * 1024 * 5 / 4 + 1024;
	long long before_off = 0, smallest_off, before, smallest;
	long long trims_off = -1, trims = -1;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 0));
	smallest_off = min_rss_after_prlimit(&before_off, time_scale(), 0,
					     &trims_off);
	ASSERT_LE(0, smallest_off);
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	smallest = min_rss_after_prlimit(&before, 20 * time_scale(), bound,
					 &trims);
	ASSERT_LE(0, smallest);
	TH_LOG("smallest rss after prlimit: knob 0 %lld -> %lld kB in 1 s, %lld trims; mode 2 %lld -> %lld kB, %lld trims (bound %lld kB)",
	       before_off, smallest_off, trims_off, before, smallest, trims,
	       bound);
	/* The premise: when prlimit() was called the process had all of it. */
	EXPECT_GT(before_off, 44 * 1024);
	EXPECT_EQ(0, trims_off);
	EXPECT_GT(smallest_off, bound);
	EXPECT_GT(before, 44 * 1024);
	EXPECT_GT(trims, 0);
	EXPECT_LE(smallest, bound);
}

/* Each trim is traced with the process's name. */
TEST_F_TIMEOUT(active, trim_tracepoint, GUEST_TIMEOUT(60))
{
	char buf[65536];
	long long trims0, pages0;
	pid_t pid;

	ASSERT_EQ(0, clear_trace());
	ASSERT_EQ(0, write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "1"));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	trims0 = vmstat("rss_limit_trim");
	pages0 = vmstat("rss_limit_trimmed");
	pid = spawn_toucher("traced", 32 * MIB, TOUCH_LOOP, 4 * MIB);
	ASSERT_GT(pid, 0);
	sleep_s(1);
	stop_child(pid);
	write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "0");
	ASSERT_EQ(0, read_file(TRACING "/trace", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "rss_limit_trim: pid="));
	EXPECT_NE(NULL, strstr(buf, "comm=traced asked="));
	EXPECT_GT(vmstat("rss_limit_trim") - trims0, 0);
	EXPECT_GE(vmstat("rss_limit_trimmed") - pages0, (28 * MIB) / PAGE_SZ);
}

/*
 * A trim waits for the pages it wrote, and only for them: it frees them as
 * their writes complete, and never sleeps in reclaim_throttle(), whose
 * waiters and wake-ups belong to reclaim (mm_vmscan_throttled would show
 * the trimming task there, reason writeback). Mode 3, a 48 MiB process
 * touching its memory under an 8 MiB limit for 2 s: at least half of
 * what its trims took is freed by them, not left for kswapd.
 */
TEST_F_TIMEOUT(active, trims_wait_for_their_own_writes, GUEST_TIMEOUT(120))
{
	static char trace[1 << 20];
	struct trim_trace t;
	char needle[64];
	long long throttled = 0;
	pid_t pid;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	ASSERT_EQ(0, trim_trace_start());
	ASSERT_EQ(0, write_file(TRACING "/events/vmscan/mm_vmscan_throttled/enable", "1"));
	pid = spawn_toucher("writer", 48 * MIB, TOUCH_LOOP, 8 * MIB);
	ASSERT_GT(pid, 0);
	sleep_s(2);
	stop_child(pid);
	write_file(TRACING "/events/vmscan/mm_vmscan_throttled/enable", "0");
	ASSERT_EQ(0, read_file(TRACING "/trace", trace, sizeof(trace)));
	/* Lines are "COMM-PID [CPU] ... mm_vmscan_throttled: ... reason=..." */
	snprintf(needle, sizeof(needle), "-%d ", (int)pid);
	for (char *save = NULL, *line = strtok_r(trace, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *event = strstr(line, " mm_vmscan_throttled: "), *task = strstr(line, needle);

		throttled += event && task && task < event &&
			     strstr(event, "VMSCAN_THROTTLE_WRITEBACK");
	}
	trim_trace_stop(&t);
	TH_LOG("%lld trims took %lld pages and freed %lld (%lld freed none); the trimming task waited in reclaim_throttle() for writeback %lld times",
	       t.trims, t.taken, t.freed, t.freed_nothing, throttled);
	EXPECT_GT(t.trims, 0);
	EXPECT_GE(t.freed * 2, t.taken);
	EXPECT_EQ(0, throttled);
}

#define NOSWAP_CG "/sys/fs/cgroup/rsslim-noswap"

/*
 * A process whose memory cannot go anywhere (its cgroup may not swap)
 * stays over its limit: no trim starts (rss_limit_trim_no_swap counts the
 * attempts), and the next attempt waits half a second. Without the pause
 * every fault over the limit sweeps again: thousands of trims for 32 MiB,
 * and minutes of it. With it, at most two a second (four allowed, plus a
 * few).
 */
TEST_F_TIMEOUT(active, futile_trims_pause, GUEST_TIMEOUT(120))
{
	long long trims0, trims, noswap0, noswap;
	double start, took;
	int fds[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, make_cgroup(NOSWAP_CG, "max", "0"));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	ASSERT_EQ(0, pipe(fds));
	trims0 = vmstat("rss_limit_trim") + vmstat("rss_limit_trim_no_swap");
	noswap0 = vmstat("rss_limit_trim_no_swap");
	start = now_s();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 4 * MIB, RLIM_INFINITY };
		unsigned char *mem;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (join_cgroup(NOSWAP_CG) || setrlimit(RLIMIT_RSS, &rl))
			_exit(3);
		mem = mmap(NULL, 32 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (mem == MAP_FAILED)
			_exit(4);
		for (long long off = 0; off < 32 * MIB; off += PAGE_SZ)
			mem[off] = 1;
		if (write(fds[1], "r", 1) != 1)
			_exit(5);
		pause();
		_exit(0);
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &c, 1));
	took = now_s() - start;
	trims = vmstat("rss_limit_trim") + vmstat("rss_limit_trim_no_swap") - trims0;
	noswap = vmstat("rss_limit_trim_no_swap") - noswap0;
	close(fds[0]);
	TH_LOG("32 MiB touched over a 4 MiB limit, unswappable: %.2f s, %lld trims (%lld without swap), rss %lld kB",
	       took, trims, noswap, rss_kb(pid));
	stop_child(pid);
	rmdir(NOSWAP_CG);
	EXPECT_GE(noswap, 1);
	EXPECT_LE(trims, 4 * took + 4);
}

/*
 * No swap for ten limited processes that keep faulting (their cgroup may
 * not swap), beside a 200 MiB toucher that keeps kswapd busy. Every trim
 * they ask for is refused at once: none starts, so none can hold up the
 * process or anybody else. (A series that let kswapd wait for trims in
 * flight made it wait 8 and 19 times in 5 s here, for trims that could
 * never start.) Direct reclaim against the same load with the knob at 0 is
 * logged beside it.
 */
TEST_F_TIMEOUT(active, no_trim_starts_without_swap, GUEST_TIMEOUT(180))
{
	static const char *const counters[] = {
		"rss_limit_trim_no_swap", "rss_limit_trim", "pgscan_direct",
		"pgscan_kswapd", "allocstall_dma", "allocstall_dma32",
		"allocstall_normal", "allocstall_movable",
	};
	/* The allocation stalls, one counter per zone, come last. */
	enum { NO_SWAP, TRIMS, SCAN_DIRECT, SCAN_KSWAPD, STALLS,
	       NCOUNTERS = STALLS + 4 };
	long long delta[2][NCOUNTERS];
	pid_t limited[10], pressure;
	long long stalls;
	int mode, i, c;

	for (mode = 0; mode < 2; mode++) {
		ASSERT_EQ(0, sysctl_write("rss_limit_enforce", mode ? 2 : 0));
		ASSERT_EQ(0, make_cgroup(NOSWAP_CG, "max", "0"));
		for (i = 0; i < 10; i++)
			limited[i] = spawn_toucher_in(NOSWAP_CG, "noswap", 8 * MIB,
						      TOUCH_REFAULT, MIB);
		for (c = 0; c < NCOUNTERS; c++)
			delta[mode][c] = -vmstat(counters[c]);
		pressure = spawn_toucher("pressure", 200 * MIB, TOUCH_LOOP, RLIM_INFINITY);
		sleep_s(5);
		for (c = 0; c < NCOUNTERS; c++)
			delta[mode][c] += vmstat(counters[c]);
		stop_child(pressure);
		for (i = 0; i < 10; i++)
			stop_child(limited[i]);
		rmdir(NOSWAP_CG);
		for (i = 0; i < 10; i++)
			ASSERT_GT(limited[i], 0);
		ASSERT_GT(pressure, 0);
		for (stalls = 0, c = STALLS; c < NCOUNTERS; c++)
			stalls += delta[mode][c];
		TH_LOG("mode %d, 5 s: %lld trims refused for want of swap, %lld trims; allocstall %lld, pgscan_direct %lld, pgscan_kswapd %lld",
		       mode ? 2 : 0, delta[mode][NO_SWAP], delta[mode][TRIMS],
		       stalls, delta[mode][SCAN_DIRECT], delta[mode][SCAN_KSWAPD]);
	}
	EXPECT_EQ(0, delta[0][NO_SWAP]);
	/* Memory was short and they asked: each at least once. */
	EXPECT_GE(delta[1][NO_SWAP], 10);
	EXPECT_EQ(0, delta[1][TRIMS]);
}

#define SWAP8_CG "/sys/fs/cgroup/rsslim-swap8m"

/*
 * Swap nearly full, as the process sees it: its cgroup may swap 8 MiB
 * (memory.swap.max). It has 48 MiB, keeps touching it, and is given an
 * 8 MiB limit (mode 3). No trim can bring it there: the trim is refused
 * and counted, and the process keeps its memory. A trim that only tested
 * for some free swap paged out what fit, 8 MiB, left the process 32 MiB
 * over its limit, and did it again every half second as the process
 * touched the pages back in.
 */
TEST_F_TIMEOUT(active, trims_refuse_a_limit_past_the_swap_left, GUEST_TIMEOUT(120))
{
	struct rlimit rl = { 8 * MIB, RLIM_INFINITY };
	long long refused0, refused, out0, out, rss;
	int fds[2];
	pid_t pid;
	char c;

	ASSERT_EQ(0, make_cgroup(SWAP8_CG, "max", "8M"));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		volatile unsigned char *mem;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (join_cgroup(SWAP8_CG))
			_exit(3);
		mem = mmap(NULL, 48 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (mem == MAP_FAILED)
			_exit(4);
		for (long long off = 0; off < 48 * MIB; off += PAGE_SZ)
			mem[off] = 1;
		if (write(fds[1], "r", 1) != 1)
			_exit(5);
		for (;;)
			for (long long off = 0; off < 48 * MIB; off += PAGE_SZ)
				mem[off]++;
	}
	close(fds[1]);
	ASSERT_EQ(1, read(fds[0], &c, 1));
	close(fds[0]);
	refused0 = vmstat("rss_limit_trim_refused");
	out0 = vmstat("pswpout");
	ASSERT_EQ(0, prlimit(pid, RLIMIT_RSS, &rl, NULL));
	sleep_s(2);
	rss = rss_kb(pid);
	refused = vmstat("rss_limit_trim_refused") - refused0;
	out = vmstat("pswpout") - out0;
	stop_child(pid);
	rmdir(SWAP8_CG);
	TH_LOG("48 MiB, limit 8 MiB, 8 MiB of swap allowed: %lld trims refused in 2 s, %lld pages swapped out, rss %lld kB",
	       refused, out, rss);
	EXPECT_GE(refused, 1);
	EXPECT_LT(out, (2 * MIB) / PAGE_SZ);
	EXPECT_GT(rss, 44 * 1024);
}

/* A process that keeps touching memory under a limit, as run_limited() runs it. */
struct limited_run {
	size_t locked;		/* bytes mlocked first: no trim can take them */
	size_t reserved;	/* bytes of PROT_NONE reservation, never touched */
	size_t touched;		/* bytes then written page by page, over and over */
	rlim_t limit;
	double seconds;		/* for how long */
	long long pages;	/* page writes done: the work */
	long long trims;	/* rss_limit_trim meanwhile */
	long long refused;	/* rss_limit_trim_refused meanwhile */
	pid_t pid;		/* the process that ran */
};

static int run_limited(struct limited_run *r)
{
	long long trims0 = vmstat("rss_limit_trim");
	long long refused0 = vmstat("rss_limit_trim_refused");
	int fds[2];
	pid_t pid;

	pid = fork_with_pipe(fds);
	if (pid < 0)
		return -1;
	r->pid = pid;
	if (pid == 0) {
		struct rlimit rl = { r->limit, RLIM_INFINITY };
		unsigned char *locked, *mem;
		long long pages = 0;
		double end = now_s() + r->seconds;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setrlimit(RLIMIT_RSS, &rl))
			_exit(3);
		if (r->locked) {
			locked = mmap(NULL, r->locked, PROT_READ | PROT_WRITE,
				      MAP_PRIVATE | MAP_ANONYMOUS | MAP_LOCKED | MAP_POPULATE, -1, 0);
			if (locked == MAP_FAILED || mlock(locked, r->locked))
				_exit(4);
		}
		if (r->reserved && mmap(NULL, r->reserved, PROT_NONE,
					MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
					-1, 0) == MAP_FAILED)
			_exit(5);
		mem = mmap(NULL, r->touched, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
		if (mem == MAP_FAILED)
			_exit(6);
		for (size_t off = 0; pages % 256 || now_s() < end; pages++) {
			mem[off]++;
			off = (off + PAGE_SZ) % r->touched;
		}
		if (write(fds[1], &pages, sizeof(pages)) != sizeof(pages))
			_exit(7);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &r->pages, sizeof(r->pages)) != sizeof(r->pages)) {
		close(fds[0]);
		stop_child(pid);
		return -1;
	}
	close(fds[0]);
	r->trims = vmstat("rss_limit_trim") - trims0;
	r->refused = vmstat("rss_limit_trim_refused") - refused0;
	return wait_exit_code(pid);
}

/*
 * A limit under what cannot be paged out (mlocked memory here; shared or
 * pinned pages are alike): no trim can get the process under it, so none
 * starts; each is refused, and the next is looked at half a second later.
 * Before a trim counted what it could reach, each took all of the 32 MiB
 * it could and fell short: a sweep per fault at first (without the pause),
 * then the working set swapped out and in twice a second.
 */
TEST_F_TIMEOUT(active, trims_are_refused_when_the_limit_is_under_locked_memory,
	       GUEST_TIMEOUT(120))
{
	struct limited_run r = {
		.locked = 16 * MIB, .touched = 32 * MIB, .limit = 8 * MIB, .seconds = 3,
	};

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	ASSERT_EQ(0, run_limited(&r));
	TH_LOG("16 MiB locked, 32 MiB written for %.0f s under 8 MiB: %lld page writes, %lld trims, %lld refused",
	       r.seconds, r.pages, r.trims, r.refused);
	EXPECT_EQ(0, r.trims);
	EXPECT_GE(r.refused, 1);
	EXPECT_LE(r.refused, 2 * r.seconds + 4);
}

#define RO_FILE "/tmp/rsslim-readonly.data"

/*
 * A limit under what no trim can take: an unprivileged process maps 32 MiB
 * of a file it can neither write nor own (as any dynamically linked
 * program maps its libraries: MADV_PAGEOUT's rule, and ours, leave such
 * page cache alone), then writes an 8 MiB buffer over and over under a
 * 16 MiB limit, in mode 3. Even all of the buffer would leave it over its
 * limit: the trim is refused and counted, and the buffer stays. Before,
 * every trim paged the whole buffer out, hot as it was, and the process
 * faulted it back in: twice a second.
 */
TEST_F_TIMEOUT(active, trims_refuse_a_limit_under_what_they_cannot_reach, GUEST_TIMEOUT(120))
{
	const size_t file_size = 32 * MIB, buffer_size = 8 * MIB;
	long long refused0, pswpout0, refused, pswpout, rss = 0, file_kb = 0;
	double seconds = 3;
	unsigned char *mem;
	int fd, fds[2];
	pid_t pid;

	fd = open(RO_FILE, O_RDWR | O_CREAT | O_TRUNC, 0644);
	ASSERT_LE(0, fd);
	mem = malloc(MIB);
	ASSERT_NE(NULL, mem);
	memset(mem, 0x5a, MIB);
	for (size_t off = 0; off < file_size; off += MIB)
		ASSERT_EQ((ssize_t)MIB, write(fd, mem, MIB));
	free(mem);
	close(fd);
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	refused0 = vmstat("rss_limit_trim_refused");
	pswpout0 = vmstat("pswpout");
	pid = fork_with_pipe(fds);
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct rlimit rl = { 16 * MIB, RLIM_INFINITY };
		unsigned char *file, *buffer;
		unsigned long sum = 0;
		double end;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(fds[0]);
		if (setgid(65534) || setuid(65534))
			_exit(3);
		fd = open(RO_FILE, O_RDONLY);
		file = mmap(NULL, file_size, PROT_READ, MAP_SHARED, fd, 0);
		buffer = mmap(NULL, buffer_size, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (fd < 0 || file == MAP_FAILED || buffer == MAP_FAILED)
			_exit(4);
		for (size_t off = 0; off < file_size; off += PAGE_SZ)
			sum += file[off];
		if (setrlimit(RLIMIT_RSS, &rl))
			_exit(5);
		/*
		 * Never zero: a page of zeros goes to swap without a write, and
		 * pswpout would not count it.
		 */
		memset(buffer, (int)(sum | 1), buffer_size);
		end = now_s() + seconds;
		for (size_t off = 0; now_s() < end; off = (off + PAGE_SZ) % buffer_size)
			buffer[off] |= 1;
		if (write(fds[1], "r", 1) != 1)
			_exit(6);
		pause();
		_exit(0);
	}
	if (wait_child_ready(fds, pid) == 0) {
		rss = rss_kb(pid);
		file_kb = status_num(pid, "RssFile") + status_num(pid, "RssShmem");
	}
	refused = vmstat("rss_limit_trim_refused") + vmstat("rss_limit_trim_no_swap") - refused0;
	pswpout = vmstat("pswpout") - pswpout0;
	stop_child(pid);
	unlink(RO_FILE);
	TH_LOG("32 MiB of a read-only file + 8 MiB written for %.0f s under 16 MiB: rss %lld kB (%lld kB of it the file's), %lld trims refused, %lld pages swapped out",
	       seconds, rss, file_kb, refused, pswpout);
	/* The premise: what it cannot give back is over its limit. */
	ASSERT_GE(file_kb, 16 * 1024);
	/* Never killed, never trimmed to under its limit: it stays over. */
	EXPECT_GT(rss, 16 * 1024);
	EXPECT_GE(refused, 1);
	/* Less than the buffer once (each trim took all 2048 of its pages before). */
	EXPECT_LT(pswpout, (long long)(buffer_size / PAGE_SZ));
}

/*
 * A trim skips address space that cannot hold pages. Beside a 16 TiB
 * PROT_NONE reservation (AddressSanitizer's shadow is that size), each
 * trim of a process writing 32 MiB under an 8 MiB limit walks at most
 * three turns of the page tables that hold its pages (one to count, one
 * that ages what was used, one that takes it): 16 for its 32 MiB and a
 * few for its other mappings, each time. Walked in 2 MiB steps, the
 * reservation alone costs eight million steps each time the walk comes
 * around, which it does within the first few trims. The tracepoint's step
 * count is the cost in a unit no machine's speed changes, unlike the page
 * writes done meanwhile (logged: under TCG they vary by half from run to
 * run).
 */
TEST_F_TIMEOUT(active, trims_skip_a_large_prot_none_reservation, GUEST_TIMEOUT(120))
{
	static char trace[256 * 1024];
	struct limited_run r = {
		.touched = 32 * MIB, .limit = 8 * MIB, .seconds = 4, .reserved = 16ULL << 40,
	};
	unsigned long steps, max_steps = 0, all_steps = 0;
	long long traced = 0;
	char needle[32];
	const char *line;

	ASSERT_EQ(0, clear_trace());
	ASSERT_EQ(0, write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "1"));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 3));
	ASSERT_EQ(0, run_limited(&r));
	write_file(TRACING "/events/rss_limit/rss_limit_trim/enable", "0");
	ASSERT_EQ(0, read_file(TRACING "/trace", trace, sizeof(trace)));
	snprintf(needle, sizeof(needle), "pid=%d ", (int)r.pid);
	for (line = strstr(trace, needle); line; line = strstr(line + 1, needle)) {
		const char *field = strstr(line, " steps=");
		const char *eol = strchr(line, '\n');

		ASSERT_NE(NULL, field);
		ASSERT_TRUE(!eol || field < eol);
		steps = strtoul(field + strlen(" steps="), NULL, 10);
		traced++;
		all_steps += steps;
		if (steps > max_steps)
			max_steps = steps;
	}
	TH_LOG("32 MiB under 8 MiB beside 16 TiB PROT_NONE for %.0f s: %lld page writes, %lld trims (%lld traced), page tables walked: %lu at most in one trim, %lu in all",
	       r.seconds, r.pages, r.trims, traced, max_steps, all_steps);
	/*
	 * Every trim counted while it wrote was traced, none lost in the
	 * buffer (one more may come on its way out).
	 */
	EXPECT_GE(traced, 3);
	EXPECT_GE(traced, r.trims);
	/*
	 * Three turns of 32 MiB and a dozen small mappings (71-73 seen):
	 * far under 8 million.
	 */
	EXPECT_LE(max_steps, 3 * 32UL);
}

static long long meminfo_kb(const char *key)
{
	char buf[8192], text[64];

	if (read_file("/proc/meminfo", buf, sizeof(buf)) || !field_text(buf, key, text, sizeof(text)))
		return -1;
	return atoll(text);
}

/*
 * Mode 2 trims when memory is short, and memory whose page cache could
 * be dropped is not short: with the guest's free memory eaten by the
 * cache of a 200 MiB file (free pages near the watermarks, as on any
 * machine that has read files), a process over its limit is not trimmed.
 */
TEST_F_TIMEOUT(active, no_trim_in_mode_2_while_page_cache_can_go, GUEST_TIMEOUT(180))
{
	static const char path[] = "/scratch/rsslim-page-cache";
	static char chunk[MIB];
	long long trims0, trims, free_kb, cached_kb, before, after;
	pid_t pid;
	int fd;

	memset(chunk, 0x5a, sizeof(chunk));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_LE(0, fd);
	for (int i = 0; i < 200; i++)
		ASSERT_EQ((ssize_t)sizeof(chunk), write(fd, chunk, sizeof(chunk)));
	ASSERT_EQ(0, fsync(fd));
	close(fd);

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	trims0 = vmstat("rss_limit_trim");
	pid = spawn_toucher("limited", 48 * MIB, TOUCH_LOOP, 8 * MIB);
	ASSERT_GT(pid, 0);
	before = rss_kb(pid);
	free_kb = meminfo_kb("MemFree");
	cached_kb = meminfo_kb("Cached");
	sleep_s(3);
	after = rss_kb(pid);
	trims = vmstat("rss_limit_trim") - trims0;
	stop_child(pid);
	unlink(path);
	drop_caches();
	TH_LOG("MemFree %lld kB, Cached %lld kB; rss %lld kB -> %lld kB, %lld trims", free_kb,
	       cached_kb, before, after, trims);
	/* The premise: free memory alone looked short (under 16 MiB). */
	ASSERT_LT(free_kb, 16 * 1024);
	EXPECT_EQ(0, trims);
}

/* A fresh child cgroup of the root whose tasks allocate from @nodes only. */
static int make_node_cgroup(const char *path, const char *nodes)
{
	return new_cgroup(path, "+cpuset") || cgroup_write(path, "cpuset.mems", nodes) ? -1 : 0;
}

/* A node's MemTotal in kB, or -1. */
static long long node_total_kb(int nid)
{
	char path[64], buf[4096], key[32], text[64];

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", nid);
	snprintf(key, sizeof(key), "Node %d MemTotal", nid);
	if (read_file(path, buf, sizeof(buf)) || !field_text(buf, key, text, sizeof(text)))
		return -1;
	return atoll(text);
}

/* Trims of a 32 MiB process over its 4 MiB limit, in @cgroup, in 3 s (scaled). */
static long long trims_in(const char *cgroup)
{
	long long trims0 = vmstat("rss_limit_trim");
	pid_t hog = spawn_toucher_in(cgroup, "hog", 32 * MIB, TOUCH_LOOP, 4 * MIB);

	if (hog < 0)
		return -1;
	sleep_s(3 * time_scale());
	stop_child(hog);
	return vmstat("rss_limit_trim") - trims0;
}

/*
 * Mode 2 judges each node apart, on the nodes the trimming task's cpuset
 * allows: with node 1 full (a sleeper confined to it by its cpuset holds
 * all of it) and node 0 with room, a process over its limit confined to
 * node 0 is not trimmed, and the same process confined to node 1 is. A
 * judgement of the machine as a whole, or on the nodes of some other
 * task, would trim both or neither. Needs two nodes with memory: make
 * test boots a guest with numa=fake=2 for it.
 */
TEST_F_TIMEOUT(active, mode_2_judges_only_the_nodes_a_process_may_use, GUEST_TIMEOUT(180))
{
	const char *room = "/sys/fs/cgroup/rsslim-node0", *full = "/sys/fs/cgroup/rsslim-node1";
	long long node1_kb = node_total_kb(1), beside, inside;
	pid_t filler;

	if (node1_kb < 0)
		SKIP(return, "a guest of one memory node (make test runs this in one of two)");
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 2));
	ASSERT_EQ(0, make_node_cgroup(room, "0"));
	ASSERT_EQ(0, make_node_cgroup(full, "1"));
	/* As much as node 1 holds: what does not fit goes to swap. */
	filler = spawn_toucher_in(full, "filler", (size_t)node1_kb * 1024, TOUCH_ONCE,
				  RLIM_INFINITY);
	ASSERT_GT(filler, 0);
	beside = trims_in(room);
	inside = trims_in(full);
	stop_child(filler);
	rmdir(room);
	rmdir(full);
	TH_LOG("node 1: %lld kB, filled; trims of a process over its limit on node 0: %lld, on node 1: %lld",
	       node1_kb, beside, inside);
	EXPECT_EQ(0, beside);
	EXPECT_GT(inside, 0);
}

/* What the THP counters of /proc/vmstat say about reclaim of huge pages. */
struct thp_counts {
	long long swpout, swpout_fallback, split_page, split_pmd;
};

static void thp_counts_read(struct thp_counts *c)
{
	c->swpout = vmstat("thp_swpout");
	c->swpout_fallback = vmstat("thp_swpout_fallback");
	c->split_page = vmstat("thp_split_page");
	c->split_pmd = vmstat("thp_split_pmd");
}

/* AnonHugePages of a process, in kB (-1 if it cannot be read). */
static long long anon_huge_kb(pid_t pid)
{
	char path[64], buf[4096], text[64];

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	if (read_file(path, buf, sizeof(buf)) || !field_text(buf, "AnonHugePages", text, sizeof(text)))
		return -1;
	return atoll(text);
}

/*
 * A 48 MiB process backed by transparent huge pages (THP "always", as many
 * distributions ship it) gets an 8 MiB limit in mode 2 (beside a 200 MiB
 * toucher that makes memory short) or mode 3. Trims step in PMD-aligned
 * ranges, so every huge page goes to swap whole: thp_swpout grows, and no
 * huge page is split (thp_split_page) or written out page by page
 * (thp_swpout_fallback). thp_split_pmd is logged, not checked: reclaim
 * unmaps a PMD-mapped huge page by splitting the PMD mapping (not the
 * page), with or without this series.
 */
static void thp_trim(struct __test_metadata *_metadata, FIXTURE_DATA(active) *self, int mode)
{
	struct rlimit rl = { 8 * MIB, RLIM_INFINITY };
	const long long bound = 8 * 1024 * 5 / 4 + 1024;
	long long huge_kb, huge_at_limit, before, smallest, rss;
	struct thp_counts c0, c1;
	pid_t pid, pressure = 0;
	double deadline;

	if (!self->saved_thp[0])
		SKIP(return, "this kernel has no transparent huge pages");
	ASSERT_EQ(0, write_file(THP_ENABLED, "always"));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", mode));
	/*
	 * Free 2 MiB blocks for the huge pages: the tests before this one
	 * leave memory fragmented, and on the debug kernel (less free memory,
	 * KASAN's shadow) the toucher got only 6-14 MiB of huge pages without
	 * this.
	 */
	/*
	 * Even so the debug kernel's toucher got 16-48 MiB of huge pages in
	 * one run, and 18-20 MiB on three tries in another: up to three tries
	 * (five there) for half of the process in huge pages.
	 */
	const int tries = time_scale() > 1 ? 5 : 3;

	for (int try = 0; ; try++) {
		drop_caches();
		ASSERT_EQ(0, write_file("/proc/sys/vm/compact_memory", "1"));
		pid = spawn_toucher("huge", 48 * MIB, TOUCH_LOOP, RLIM_INFINITY);
		ASSERT_GT(pid, 0);
		huge_kb = anon_huge_kb(pid);
		if (huge_kb >= 24 * 1024 || try == tries - 1)
			break;
		TH_LOG("try %d: %lld kB in huge pages, trying again", try + 1, huge_kb);
		stop_child(pid);
	}
	if (mode == 2) {
		pressure = spawn_toucher("pressure", 200 * MIB, TOUCH_LOOP, RLIM_INFINITY);
		ASSERT_GT(pressure, 0);
	}
	thp_counts_read(&c0);
	before = rss_kb(pid);
	/*
	 * In mode 2 the pressure may already have swapped some huge pages out
	 * before the limit is set (26 of 48 MiB left in one run): only those
	 * still here can be trimmed.
	 */
	huge_at_limit = anon_huge_kb(pid);
	ASSERT_EQ(0, prlimit(pid, RLIMIT_RSS, &rl, NULL));
	smallest = before;
	deadline = now_s() + time_scale();
	while (now_s() < deadline) {
		sleep_s(0.05);
		rss = rss_kb(pid);
		if (rss >= 0 && rss < smallest)
			smallest = rss;
	}
	thp_counts_read(&c1);
	if (pressure)
		stop_child(pressure);
	stop_child(pid);
	TH_LOG("mode %d: %lld kB in huge pages, %lld kB of %lld kB when limited; smallest rss %lld kB (bound %lld); thp_swpout +%lld, thp_swpout_fallback +%lld, thp_split_page +%lld, thp_split_pmd +%lld",
	       mode, huge_kb, huge_at_limit, before, smallest, bound, c1.swpout - c0.swpout,
	       c1.swpout_fallback - c0.swpout_fallback, c1.split_page - c0.split_page,
	       c1.split_pmd - c0.split_pmd);
	/*
	 * The premise: a third of the process or more was in huge pages (32-48
	 * MiB of 48 on the default kernel, 18 MiB at worst on the debug one),
	 * so at least two huge pages must go to swap for the RSS to reach the
	 * bound.
	 */
	ASSERT_GE(huge_kb, 16 * 1024);
	EXPECT_LE(smallest, bound);
	/*
	 * Down to the bound, at most bound kB of huge pages can be left: the
	 * rest went to swap whole.
	 */
	EXPECT_GE(c1.swpout - c0.swpout, (huge_at_limit - bound) / 2048);
	EXPECT_EQ(0, c1.swpout_fallback - c0.swpout_fallback);
	EXPECT_EQ(0, c1.split_page - c0.split_page);
}

TEST_F_TIMEOUT(active, huge_pages_go_whole_in_mode_2, GUEST_TIMEOUT(120))
{
	thp_trim(_metadata, self, 2);
}

TEST_F_TIMEOUT(active, huge_pages_go_whole_in_mode_3, GUEST_TIMEOUT(120))
{
	thp_trim(_metadata, self, 3);
}

TEST_HARNESS_MAIN
