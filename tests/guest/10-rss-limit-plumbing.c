// SPDX-License-Identifier: GPL-2.0
/*
 * RLIMIT_RSS plumbing: the limit reclaim sees (RssLimit in
 * /proc/PID/status) follows setrlimit, prlimit on other processes, fork and
 * exec, converts bytes to pages without overflow, and leaves prlimit's
 * permission rules alone.
 */
#include "guest_util.h"

#include <dirent.h>
#include <pthread.h>
#include <sys/syscall.h>
#include "kselftest_harness.h"

/* RssLimit (kB) of a status text in pages; -2 for "unlimited", -1 when missing. */
static long long limit_pages_in(const char *status)
{
	char text[64];

	if (!field_text(status, "RssLimit", text, sizeof(text)))
		return -1;
	if (!strcmp(text, "unlimited"))
		return -2;
	if (!strstr(text, " kB"))
		return -1;
	return atoll(text) * 1024 / PAGE_SZ;
}

static long long limit_pages_at(const char *status_path)
{
	char buf[4096];

	if (read_file(status_path, buf, sizeof(buf)))
		return -1;
	return limit_pages_in(buf);
}

/* RssLimit of pid in pages; -2 for "unlimited", -1 when missing. */
static long long limit_pages(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return limit_pages_at(path);
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
	char out[4096] = "";
	int fds[2];
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
	read_child_output(fds, out, sizeof(out));
	ASSERT_EQ(0, wait_exit_code(pid));
	EXPECT_EQ(8 * MIB / PAGE_SZ, limit_pages_in(out));
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

/* A thread of process pid other than its main thread, or 0. */
static pid_t other_thread(pid_t pid)
{
	char task_dir[64];
	struct dirent *d;
	pid_t tid = 0;
	DIR *dir;

	snprintf(task_dir, sizeof(task_dir), "/proc/%d/task", (int)pid);
	dir = opendir(task_dir);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (atoi(d->d_name) > 0 && atoi(d->d_name) != pid)
			tid = atoi(d->d_name);
	closedir(dir);
	return tid;
}

static void *sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/*
 * A process whose main thread has exited (a zombie leader, no mm) while
 * another thread runs: prlimit() on its pid must still reach the mm the
 * running thread uses.
 */
TEST(prlimit_reaches_threads_after_the_leader_exited)
{
	char path[64], state[64];
	pid_t pid, tid = 0;

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		pthread_t th;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (pthread_create(&th, NULL, sleep_forever, NULL))
			_exit(3);
		pthread_exit(NULL);
	}
	for (int tries = 0; tries < 200; tries++) {
		tid = other_thread(pid);
		status_text(pid, "State", state, sizeof(state));
		if (tid > 0 && state[0] == 'Z')
			break;
		tid = 0;
		sleep_s(0.05);
	}
	ASSERT_GT(tid, 0);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	EXPECT_EQ(-2, limit_pages_at(path));
	ASSERT_EQ(0, set_rss(pid, 12 * MIB, RLIM_INFINITY));
	EXPECT_EQ(12 * MIB / PAGE_SZ, limit_pages_at(path));
	stop_child(pid);
}

/*
 * A vfork() child runs on its parent's mm until it execs. A limit it sets
 * is its own: the parent's stays as it was, and the child's program gets it.
 */
TEST(vfork_child_limit_stays_with_the_child)
{
	char out[4096] = "";
	int fds[2];
	pid_t pid;

	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
	ASSERT_EQ(0, pipe(fds));
	pid = vfork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		struct rlimit rl = { 8 * MIB, RLIM_INFINITY };

		if (dup2(fds[1], 1) < 0 || setrlimit(RLIMIT_RSS, &rl))
			_exit(3);
		execl("/bin/busybox", "cat", "/proc/self/status", (char *)NULL);
		_exit(4);
	}
	read_child_output(fds, out, sizeof(out));
	ASSERT_EQ(0, wait_exit_code(pid));
	EXPECT_EQ(-2, limit_pages(getpid()));
	EXPECT_EQ(8 * MIB / PAGE_SZ, limit_pages_in(out));
}

/* What the vfork race's two sides share. */
struct vfork_race {
	volatile pid_t newest;		/* the vfork() child to aim at */
	volatile int stop;
	volatile long hits;		/* limits the spinner set */
};

/* Set an 8 MiB limit on the newest vfork() child, over and over. */
static void prlimit_spinner(struct vfork_race *race)
{
	struct rlimit rl = { 8 * MIB, RLIM_INFINITY };

	while (!race->stop) {
		pid_t pid = race->newest;

		if (pid > 0 && prlimit(pid, RLIMIT_RSS, &rl, NULL) == 0)
			race->hits++;
	}
	_exit(0);
}

FIXTURE(vfork_race) {
	struct vfork_race *race;
	pid_t spinner;
};

FIXTURE_SETUP(vfork_race)
{
	self->race = mmap(NULL, sizeof(*self->race), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->race);
	ASSERT_EQ(0, set_rss(0, RLIM_INFINITY, RLIM_INFINITY));
	self->spinner = fork();
	ASSERT_LE(0, self->spinner);
	if (self->spinner == 0)
		prlimit_spinner(self->race);
}

FIXTURE_TEARDOWN(vfork_race)
{
	self->race->stop = 1;
	waitpid(self->spinner, NULL, 0);
	munmap(self->race, sizeof(*self->race));
}

/*
 * prlimit() aimed at vfork() children while they exec: whenever it lands,
 * before, during or after the exec, the limit is the child's, never the
 * parent's, whose mm the child ran on until its exec. A prlimit() that
 * found the mm before the exec and stored the limit after it (the owner
 * was judged by vfork_done, outside the store's lock) left the child's
 * limit on the parent.
 */
TEST_F_TIMEOUT(vfork_race, children_racing_prlimit_leave_the_parent_alone, GUEST_TIMEOUT(300))
{
	struct vfork_race *race = self->race;
	const int spawns = 3000;
	int done, failed = 0;

	for (done = 0; done < spawns && limit_pages(getpid()) == -2; done++) {
		pid_t pid = vfork();

		if (pid == 0) {
			race->newest = getpid();
			execl("/bin/busybox", "true", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || wait_exit_code(pid) != 0)
			failed++;
	}
	TH_LOG("%d spawns, %ld limits set on the children, parent's RssLimit %lld pages (-2: unlimited)",
	       done, race->hits, limit_pages(getpid()));
	EXPECT_EQ(0, failed);
	/* The premise: the spinner kept landing on the children. */
	EXPECT_GT(race->hits, done);
	EXPECT_EQ(-2, limit_pages(getpid()));
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
