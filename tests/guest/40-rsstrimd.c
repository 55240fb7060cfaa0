// SPDX-License-Identifier: GPL-2.0
/*
 * rsstrimd, the user-space RLIMIT_RSS enforcer, on a stock kernel or with the
 * kernel's own enforcement and the swap token off: the 2004 sleeper test, processes
 * within their limit or without one left alone, and --mode hard.
 */
#include "guest_util.h"

#include "kselftest_harness.h"

/*
 * --min-available 128M rather than the default 64M: on this emulated
 * guest the swap disk writes slower than a new hog fills memory, so the
 * enforcer needs that much headroom to page the hog out before kswapd
 * starts on the neighbour (at 64M the sleeper kept 66-100% over runs).
 * --stop: see the sleeper test.
 */
static pid_t spawn_trimd(const char *mode)
{
	pid_t pid = fork();

	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (devnull >= 0)
			dup2(devnull, 1);
		execl("/rsslim/bin/rsstrimd", "rsstrimd", "--mode", mode, "--rescan", "200ms",
		      "--min-available", "128M", "--stop", (char *)NULL);
		_exit(4);
	}
	sleep_s(0.5);
	return pid;
}

FIXTURE(trimd) {
	long saved_enforce;
	long saved_token;
};

/*
 * rsstrimd is for stock kernels, where these knobs do not exist: it needs
 * none of them. On a patched kernel they are turned off, so what is
 * measured is rsstrimd and not the kernel's own enforcement.
 */
FIXTURE_SETUP(trimd)
{
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	self->saved_token = sysctl_read("swap_token");
	if (self->saved_enforce >= 0)
		ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 0));
	if (self->saved_token >= 0)
		ASSERT_EQ(0, sysctl_write("swap_token", 0));
	TH_LOG("kernel enforcement: %s", self->saved_enforce >= 0 ? "present, turned off" :
	       "absent (stock kernel)");
	drop_caches();
}

FIXTURE_TEARDOWN(trimd)
{
	if (self->saved_enforce >= 0)
		sysctl_write("rss_limit_enforce", self->saved_enforce);
	if (self->saved_token >= 0)
		sysctl_write("swap_token", self->saved_token);
}

TEST_F_TIMEOUT(trimd, sleeper_keeps_its_memory, GUEST_TIMEOUT(240))
{
	char *const argv[] = { "hog", "--size", "200M", "--pattern", "sort",
			       "--duration", "20", NULL };
	long long before, after;
	pid_t sleeper, hog, trimd;
	int status;

	trimd = spawn_trimd("active");
	ASSERT_GT(trimd, 0);
	sleeper = spawn_toucher("sleeper", 100 * MIB, TOUCH_ONCE, RLIM_INFINITY);
	ASSERT_GT(sleeper, 0);
	before = rss_kb(sleeper);
	hog = spawn_hog(4000 * 1024, argv);
	ASSERT_GT(hog, 0);
	status = wait_exit_code(hog);
	after = rss_kb(sleeper);
	stop_child(sleeper);
	stop_child(trimd);
	TH_LOG("sleeper rss %lld kB -> %lld kB (%.0f%%), hog exit %d", before, after,
	       100.0 * (double)after / (double)before, status);
	EXPECT_EQ(0, status);
	/*
	 * At least 80%. Without --stop rsstrimd kept 84-100% in earlier runs
	 * (24-36% while another guest competed for the host's CPUs): a hog
	 * faults its pages back in while they are paged out, and the memory
	 * comes from the sleeper. Stopped during each trim it cannot (100% in
	 * 3 of 3 runs next to that competing guest). On the debug kernel
	 * (KASAN, lockdep: every syscall several times slower) it kept 89%
	 * in the one run there. Without rsstrimd
	 * the sleeper keeps about 20%: 80% is still far from that, as in the
	 * kernel's own active-mode test.
	 *
	 * On the debug kernel the bound is half. This is the one threshold
	 * the time scale changes, because what it measures is a race: a
	 * user-space daemon's scans and process_madvise() calls, which KASAN
	 * and lockdep make several times slower, against a hog whose sort
	 * runs in user space at full speed. The sleeper kept 89% and 61% in
	 * two debug runs. Half is still more than twice what it keeps with
	 * no rsstrimd.
	 */
	EXPECT_GE(after * 10, before * (time_scale() > 1 ? 5 : 8));
}

/* Within its limit, or without one: never touched, even in hard mode. */
TEST_F_TIMEOUT(trimd, within_limit_or_unlimited_untouched, GUEST_TIMEOUT(60))
{
	long long within0, free0, within1, free1;
	pid_t within, unlimited, trimd;

	within = spawn_toucher("within", 16 * MIB, TOUCH_ONCE, 64 * MIB);
	unlimited = spawn_toucher("unlimited", 16 * MIB, TOUCH_ONCE, RLIM_INFINITY);
	ASSERT_GT(within, 0);
	ASSERT_GT(unlimited, 0);
	within0 = rss_kb(within);
	free0 = rss_kb(unlimited);
	trimd = spawn_trimd("hard");
	sleep_s(2);
	within1 = rss_kb(within);
	free1 = rss_kb(unlimited);
	stop_child(trimd);
	stop_child(within);
	stop_child(unlimited);
	EXPECT_GE(within1 * 100, within0 * 99);
	EXPECT_GE(free1 * 100, free0 * 99);
}

/* --mode hard trims an over-limit process with no memory pressure. */
TEST_F_TIMEOUT(trimd, hard_mode_trims_without_pressure, GUEST_TIMEOUT(60))
{
	long long before, after;
	pid_t over, trimd;

	over = spawn_toucher("over", 48 * MIB, TOUCH_ONCE, 8 * MIB);
	ASSERT_GT(over, 0);
	before = rss_kb(over);
	trimd = spawn_trimd("hard");
	/*
	 * A window, not a speed goal (that is the bench's): 2 s was enough on
	 * the default kernel but not under KASAN (49 MiB -> 31 MiB in 2 s).
	 */
	for (double end = now_s() + 5 * time_scale(); ; sleep_s(0.1)) {
		after = rss_kb(over);
		if (after <= 8 * 1024 || now_s() >= end)
			break;
	}
	stop_child(trimd);
	stop_child(over);
	TH_LOG("rss %lld kB -> %lld kB (limit 8192 kB)", before, after);
	EXPECT_GT(before, 40 * 1024);
	EXPECT_LE(after, 8 * 1024);
}

TEST_HARNESS_MAIN
