// SPDX-License-Identifier: GPL-2.0
/*
 * The swap token: under thrashing one of the thrashing processes holds it
 * and it moves between them; a process over its RSS limit never holds it
 * and a holder that goes over its limit loses it; an exiting holder frees
 * it; vm.swap_token=0 means nobody holds it. Run with MGLRU on and off.
 */
#include "guest_util.h"

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
	self->saved_token = sysctl_read("swap_token");
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	self->saved_timeout = sysctl_read("swap_token_timeout_ms");
	self->saved_idle = sysctl_read("swap_token_idle_ms");
	ASSERT_LE(0, self->saved_token);
	ASSERT_EQ(0, set_mglru(variant->mglru));
	ASSERT_EQ(0, sysctl_write("swap_token", 1));
	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 1));
	ASSERT_EQ(0, sysctl_write("swap_token_timeout_ms", 1000));
	write_file(TRACING "/trace", "");
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
	/* The token was in play (someone else took it), and the limited one was refused. */
	EXPECT_GT(vmstat("swap_token_grab") - grabs0, 0);
	EXPECT_GT(vmstat("swap_token_rss_limit_deny") - denied0, 0);
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

TEST_HARNESS_MAIN
