// SPDX-License-Identifier: GPL-2.0
/*
 * RLIMIT_RSS plumbing: the limit reclaim sees (RssLimitPages in
 * /proc/PID/status) follows setrlimit, prlimit on other processes, fork and
 * exec, converts bytes to pages without overflow, and leaves prlimit's
 * permission rules alone.
 */
#include "guest_util.h"

#include <pthread.h>
#include <sys/syscall.h>
#include "kselftest_harness.h"

/* RssLimitPages of pid as a number; -2 for "unlimited", -1 when missing. */
static long long limit_pages(pid_t pid)
{
	char text[64];

	status_text(pid, "RssLimitPages", text, sizeof(text));
	if (!text[0])
		return -1;
	if (!strcmp(text, "unlimited"))
		return -2;
	return atoll(text);
}

static int set_rss(pid_t pid, rlim_t soft, rlim_t hard)
{
	struct rlimit rl = { soft, hard };

	return prlimit(pid, RLIMIT_RSS, &rl, NULL);
}

/* A child that sleeps until killed. */
static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

TEST(setrlimit_self_is_seen_at_once)
{
	ASSERT_EQ(0, set_rss(0, 64 * MIB, RLIM_INFINITY));
	EXPECT_EQ(64 * MIB / PAGE_SZ, limit_pages(getpid()));
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
	EXPECT_EQ(-2, limit_pages(getpid()));
}

TEST(prlimit_on_another_process)
{
	pid_t pid = spawn_sleeper();
	struct rlimit got;

	ASSERT_GT(pid, 0);
	EXPECT_EQ(-2, limit_pages(pid));
	ASSERT_EQ(0, set_rss(pid, 32 * MIB, 64 * MIB));
	EXPECT_EQ(32 * MIB / PAGE_SZ, limit_pages(pid));
	ASSERT_EQ(0, prlimit(pid, RLIMIT_RSS, NULL, &got));
	EXPECT_EQ((rlim_t)(32 * MIB), got.rlim_cur);
	EXPECT_EQ((rlim_t)(64 * MIB), got.rlim_max);
	/* Our own limit did not move. */
	EXPECT_EQ(-2, limit_pages(getpid()));
	stop_child(pid);
}

TEST(fork_inherits)
{
	pid_t pid;

	ASSERT_EQ(0, set_rss(0, 16 * MIB, RLIM_INFINITY));
	pid = spawn_sleeper();
	ASSERT_GT(pid, 0);
	EXPECT_EQ(16 * MIB / PAGE_SZ, limit_pages(pid));
	stop_child(pid);
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
}

TEST(exec_keeps_the_limit)
{
	char out[4096] = "", value[64];
	int fds[2];
	ssize_t n, total = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(fds));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		if (set_rss(0, 8 * MIB, RLIM_INFINITY))
			_exit(3);
		execl("/bin/busybox", "cat", "/proc/self/status", (char *)NULL);
		_exit(4);
	}
	close(fds[1]);
	while ((n = read(fds[0], out + total, sizeof(out) - 1 - total)) > 0)
		total += n;
	out[total] = '\0';
	close(fds[0]);
	ASSERT_EQ(0, wait_exit_code(pid));
	ASSERT_NE(NULL, field_text(out, "RssLimitPages", value, sizeof(value)));
	EXPECT_EQ(8 * MIB / PAGE_SZ, atoll(value));
}

TEST(byte_values_convert_without_overflow)
{
	static const struct { rlim_t bytes; long long pages; } cases[] = {
		{ 0, 0 },
		{ 4095, 0 },
		{ 4096, 1 },
		{ 4097, 1 },
		{ 4000 * 1024, 1000 },		/* ulimit -m 4000 */
		{ 1ULL << 40, 1LL << 28 },	/* far more than the guest has */
		{ RLIM_INFINITY - 1, (long long)((RLIM_INFINITY - 1) >> 12) },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, set_rss(0, cases[i].bytes, RLIM_INFINITY));
		EXPECT_EQ(cases[i].pages, limit_pages(getpid()))
			TH_LOG("limit %llu bytes", (unsigned long long)cases[i].bytes);
	}
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
}

TEST(limit_zero_means_over_limit)
{
	char text[16];

	ASSERT_EQ(0, set_rss(0, 0, RLIM_INFINITY));
	EXPECT_STREQ("1", status_text(getpid(), "RssOverLimit", text, sizeof(text)));
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
	EXPECT_STREQ("0", status_text(getpid(), "RssOverLimit", text, sizeof(text)));
}

TEST(soft_above_hard_is_rejected)
{
	errno = 0;
	EXPECT_EQ(-1, set_rss(0, 64 * MIB, 32 * MIB));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-2, limit_pages(getpid()));
}

/* After dropping root, neither raising the hard limit nor touching another
 * user's process is allowed: the usual prlimit rules. */
TEST(unprivileged_rules_unchanged)
{
	pid_t root_child = spawn_sleeper(), pid;

	ASSERT_GT(root_child, 0);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (set_rss(0, 16 * MIB, 32 * MIB) || setgid(65534) || setuid(65534))
			_exit(10);
		errno = 0;
		if (set_rss(0, 16 * MIB, 64 * MIB) != -1 || errno != EPERM)
			_exit(11);
		errno = 0;
		if (set_rss(root_child, 1 * MIB, 1 * MIB) != -1 || errno != EPERM)
			_exit(12);
		if (set_rss(0, 8 * MIB, 32 * MIB))
			_exit(13);
		_exit(0);
	}
	EXPECT_EQ(0, wait_exit_code(pid));
	EXPECT_EQ(-2, limit_pages(root_child));
	stop_child(root_child);
}

static void *thread_sets_limit(void *arg)
{
	(void)arg;
	return (void *)(long)set_rss(0, 24 * MIB, RLIM_INFINITY);
}

TEST(threads_share_the_limit)
{
	pthread_t th;
	void *rc;

	ASSERT_EQ(0, pthread_create(&th, NULL, thread_sets_limit, NULL));
	ASSERT_EQ(0, pthread_join(th, &rc));
	ASSERT_EQ(0, (long)rc);
	EXPECT_EQ(24 * MIB / PAGE_SZ, limit_pages(getpid()));
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
}

/* prlimit racing with the target's exit: only success or ESRCH, no splat
 * (the guest suite fails on any kernel warning). */
TEST(limit_change_while_target_exits)
{
	int odd = 0;

	for (int i = 0; i < 300; i++) {
		pid_t pid = fork();

		ASSERT_GE(pid, 0);
		if (pid == 0)
			_exit(0);
		for (int k = 0; k < 20; k++) {
			errno = 0;
			if (set_rss(pid, (rlim_t)(k + 1) * MIB, RLIM_INFINITY) && errno != ESRCH)
				odd++;
		}
		waitpid(pid, NULL, 0);
		errno = 0;
		if (set_rss(pid, MIB, RLIM_INFINITY) == 0 || errno != ESRCH)
			odd++;
	}
	EXPECT_EQ(0, odd);
}

TEST_HARNESS_MAIN
