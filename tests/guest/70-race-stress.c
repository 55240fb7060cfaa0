// SPDX-License-Identifier: GPL-2.0
/*
 * Race stress for the new per-mm state and reclaim paths, bounded to about
 * a minute: while two thrashing processes keep memory short, processes
 * fork, exec and exit (short-lived swap-token holders among them), another
 * process changes their RSS limits with prlimit, and the sysctls and MGLRU
 * are switched at random. The kernel must not warn or crash (run-tests.sh
 * fails the run on any splat; the debug kernel adds KASAN and lockdep), and
 * nothing may be left behind: no token held by a process that is gone, no
 * process of the test still around.
 */
#include "guest_util.h"

#include <dirent.h>

#include "kselftest_harness.h"

#define STRESS_SECONDS	40
#define NAME_PREFIX	"race-"

/* Cheap per-process pseudo-random numbers (xorshift), no shared state. */
static unsigned int next_random(unsigned int *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 17;
	*state ^= *state << 5;
	return *state;
}

/* Is pid one of ours: a race-* process or the hog it execs? */
static bool is_target(pid_t pid)
{
	char path[64], comm[32];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_file(path, comm, sizeof(comm)))
		return false;
	return !strncmp(comm, NAME_PREFIX, strlen(NAME_PREFIX)) || !strcmp(comm, "hog\n");
}

static pid_t start_loop(const char *name, int (*body)(double end, unsigned int seed), double end,
			unsigned int seed)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		prctl(PR_SET_NAME, name);
		_exit(body(end, seed));
	}
	return pid;
}

/*
 * Forks children that either touch a few MiB and exit, or exec the hog
 * for one short pass. Exit status: 0; 1 if a child failed; 2 if none ran.
 */
static int churn(double end, unsigned int seed)
{
	int forks = 0;

	while (now_s() < end) {
		unsigned int r = next_random(&seed);
		pid_t pid = fork();
		int status;

		if (pid < 0)
			return 1;
		if (pid == 0) {
			prctl(PR_SET_NAME, NAME_PREFIX "child");
			if (r & 1) {
				char *const argv[] = { "hog", "--size", "24M", "--passes", "1", NULL };
				int devnull = open("/dev/null", O_WRONLY);

				if (devnull >= 0)
					dup2(devnull, 1);
				execv("/rsslim/bin/hog", argv);
				_exit(4);
			}
			{
				size_t bytes = (size_t)(8 + r % 32) * MIB;
				unsigned char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
							  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (mem == MAP_FAILED)
					_exit(5);
				for (int pass = 0; pass < 2; pass++)
					for (size_t off = 0; off < bytes; off += PAGE_SZ)
						mem[off]++;
			}
			_exit(0);
		}
		forks++;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
	}
	fprintf(stderr, "# churn: %d processes forked\n", forks);
	return forks > 0 ? 0 : 2;
}

/* prlimit RLIMIT_RSS on every target found, to random values. */
static int limiter(double end, unsigned int seed)
{
	static const rlim_t limits[] = {
		1 * MIB, 4 * MIB, 16 * MIB, 64 * MIB, RLIM_INFINITY,
	};
	int changed = 0;

	while (now_s() < end) {
		DIR *proc = opendir("/proc");
		struct dirent *d;

		if (!proc)
			return 1;
		while ((d = readdir(proc))) {
			pid_t pid = (pid_t)atoi(d->d_name);
			struct rlimit rl;

			if (pid <= 0 || pid == getpid() || !is_target(pid))
				continue;
			rl.rlim_cur = limits[next_random(&seed) % 5];
			rl.rlim_max = RLIM_INFINITY;
			if (prlimit(pid, RLIMIT_RSS, &rl, NULL) == 0)
				changed++;
			else if (errno != ESRCH)
				return 3;	/* only "it exited" is expected */
		}
		closedir(proc);
		sleep_s(0.01);
	}
	fprintf(stderr, "# limiter: %d limits changed\n", changed);
	return changed > 0 ? 0 : 2;
}

/* The knobs and MGLRU switched at random every 100 ms. */
static int toggler(double end, unsigned int seed)
{
	long modes = kernel_has_part(PART_ACTIVE_MODES) ? 4 : 2;
	bool token = kernel_has_part(PART_SWAP_TOKEN);

	while (now_s() < end) {
		unsigned int r = next_random(&seed);

		if (sysctl_write("rss_limit_enforce", r % modes) ||
		    (token && sysctl_write("swap_token", (r >> 2) & 1)) ||
		    (token && sysctl_write("swap_token_timeout_ms", 100 + (r >> 3) % 2000)) ||
		    set_mglru((r >> 14) & 1))
			return 1;
		sleep_s(0.1);
	}
	return 0;
}

FIXTURE(race) {
	long saved_enforce, saved_token, saved_timeout;
};

FIXTURE_SETUP(race)
{
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	self->saved_token = sysctl_read("swap_token");
	self->saved_timeout = sysctl_read("swap_token_timeout_ms");
	ASSERT_LE(0, self->saved_enforce);
	drop_caches();
}

FIXTURE_TEARDOWN(race)
{
	sysctl_write("rss_limit_enforce", self->saved_enforce);
	if (self->saved_token >= 0) {
		sysctl_write("swap_token", self->saved_token);
		sysctl_write("swap_token_timeout_ms", self->saved_timeout);
	}
	set_mglru(true);
}

/* Processes of this test still around (none may be stuck after it). */
static int leftover_targets(void)
{
	DIR *proc = opendir("/proc");
	struct dirent *d;
	int n = 0;

	if (!proc)
		return -1;
	while ((d = readdir(proc)))
		n += atoi(d->d_name) > 0 && is_target((pid_t)atoi(d->d_name));
	closedir(proc);
	return n;
}

TEST_F_TIMEOUT(race, limits_knobs_and_lru_switched_under_churn, GUEST_TIMEOUT(180))
{
	double end;
	pid_t a, b, loops[3];
	int status[3], holder = -1, leftover = -1;

	a = spawn_toucher(NAME_PREFIX "thrash-a", 110 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	b = spawn_toucher(NAME_PREFIX "thrash-b", 110 * MIB, TOUCH_LOOP, RLIM_INFINITY);
	ASSERT_GT(a, 0);
	ASSERT_GT(b, 0);
	/*
	 * From here: filling 220 MiB took the debug kernel longer than the
	 * whole stress, and a deadline set before it left the loops no time.
	 */
	end = now_s() + STRESS_SECONDS;
	loops[0] = start_loop(NAME_PREFIX "churn", churn, end, 0x9e3779b9u);
	loops[1] = start_loop("limiter", limiter, end, 0x85ebca6bu);
	loops[2] = start_loop("toggler", toggler, end, 0xc2b2ae35u);
	for (int i = 0; i < 3; i++) {
		ASSERT_GT(loops[i], 0);
		status[i] = wait_exit_code(loops[i]);
	}
	stop_child(a);
	stop_child(b);
	/* Quiet again: knobs back on, nobody faulting. */
	if (kernel_has_part(PART_SWAP_TOKEN))
		ASSERT_EQ(0, sysctl_write("swap_token", 1));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", self->saved_enforce));
	for (int i = 0; i < 50; i++) {	/* exits may take a moment to finish */
		holder = kernel_has_part(PART_SWAP_TOKEN) ? swap_token_holder() : 0;
		leftover = leftover_targets();
		/* Nobody, or a live process (this one may fault and take it). */
		if (leftover == 0 && (holder == 0 || kill(holder, 0) == 0))
			break;
		sleep_s(0.1);
	}
	TH_LOG("churn %d, limiter %d, toggler %d; holder %d, processes left %d",
	       status[0], status[1], status[2], holder, leftover);
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(0, status[i]);
	EXPECT_TRUE(holder == 0 || kill(holder, 0) == 0);
	EXPECT_EQ(0, leftover);
}

TEST_HARNESS_MAIN
