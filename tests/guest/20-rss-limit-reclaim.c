// SPDX-License-Identifier: GPL-2.0
/*
 * RLIMIT_RSS in reclaim (vm.rss_limit_enforce=1, the passive rule): under
 * memory pressure a process over its limit loses its pages first even when
 * it keeps using them; without pressure nothing happens; with the knob off
 * the kernel behaves as unpatched. Run with MGLRU on and off.
 */
#include "guest_util.h"

#include "kselftest_harness.h"

#define WSS (48 * MIB)
#define PRESSURE (200 * MIB)
#define LIMIT (8 * MIB)
#define WINDOW_S 8.0

FIXTURE(reclaim) {
	long saved_enforce;
	long saved_token;
};

LRU_VARIANTS(reclaim);

FIXTURE_SETUP(reclaim)
{
	self->saved_enforce = sysctl_read("rss_limit_enforce");
	self->saved_token = sysctl_read("swap_token");
	ASSERT_LE(0, self->saved_enforce);
	ASSERT_EQ(0, set_mglru(variant->mglru));
	drop_caches();
}

FIXTURE_TEARDOWN(reclaim)
{
	sysctl_write("rss_limit_enforce", self->saved_enforce);
	if (self->saved_token >= 0)
		sysctl_write("swap_token", self->saved_token);
	set_mglru(true);
}

struct pair_result {
	double kept_limited;	/* RSS at the end of the pressure / RSS before */
	double kept_unlimited;
	long long counted;	/* rss_limit_ignored_ref delta */
};

/*
 * Two identical processes keep touching WSS each; one runs under LIMIT.
 * A third one touches PRESSURE, more than the rest of RAM, for WINDOW_S.
 */
static int run_pair(struct __test_metadata *_metadata, struct pair_result *r)
{
	pid_t limited, unlimited, pressure;
	long long before_l, before_u, after_l, after_u, counter0;

	limited = spawn_toucher("limited", WSS, TOUCH_LOOP, LIMIT);
	unlimited = spawn_toucher("unlimited", WSS, TOUCH_LOOP, RLIM_INFINITY);
	if (limited < 0 || unlimited < 0)
		return -1;
	sleep_s(0.5);
	before_l = rss_kb(limited);
	before_u = rss_kb(unlimited);
	counter0 = vmstat("rss_limit_ignored_ref");
	pressure = spawn_toucher("pressure", PRESSURE, TOUCH_LOOP, RLIM_INFINITY);
	sleep_s(WINDOW_S);
	after_l = rss_kb(limited);
	after_u = rss_kb(unlimited);
	r->counted = vmstat("rss_limit_ignored_ref") - counter0;
	stop_child(pressure);
	stop_child(limited);
	stop_child(unlimited);
	if (pressure < 0 || before_l <= 0 || before_u <= 0)
		return -1;
	r->kept_limited = (double)after_l / (double)before_l;
	r->kept_unlimited = (double)after_u / (double)before_u;
	TH_LOG("%s: kept limited %.0f%%, unlimited %.0f%%, ignored references %lld",
	       sysctl_read("rss_limit_enforce") ? "enforce" : "off",
	       r->kept_limited * 100, r->kept_unlimited * 100, r->counted);
	return 0;
}

/*
 * The limited process must lose at least 10% of its resident set, and more
 * than its twin: 1.5 times the twin's loss, or 10 points more. Both use
 * their memory all the time, so without the limit they fare alike (the
 * knob-off test checks that: both kept 100% in our runs). The swap token
 * is on (it is off by default): the pressure process holds it, which
 * sends reclaim to the pair at all. With it off, reclaim took the pressure
 * process's own pages and the limited one lost 0-21%. Losses seen in CI
 * runs (limited, twin): 39-93% against 0-23% in most; 93% against 54%,
 * 68% against 54%, and 19% against 0% once each.
 */
TEST_F_TIMEOUT(reclaim, over_limit_loses_first, GUEST_TIMEOUT(180))
{
	struct pair_result r;
	double lost_limited, lost_twin;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 1));
	ASSERT_EQ(0, sysctl_write("swap_token", 1));
	ASSERT_EQ(0, run_pair(_metadata, &r));
	lost_limited = 1 - r.kept_limited;
	lost_twin = r.kept_unlimited < 1 ? 1 - r.kept_unlimited : 0;
	EXPECT_GE(lost_limited, 0.10);
	TH_LOG("lost %.0f%% against the twin's %.0f%%", lost_limited * 100, lost_twin * 100);
	EXPECT_TRUE(lost_limited >= 1.5 * lost_twin || lost_limited >= lost_twin + 0.10);
	EXPECT_GT(r.counted, 0);
}

/* Knobs off: neither keeps less than half of what the other keeps, and the
 * counter does not move. The swap token is off too: it would favour one. */
TEST_F_TIMEOUT(reclaim, knob_off_behaves_as_unpatched, GUEST_TIMEOUT(180))
{
	struct pair_result r;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 0));
	ASSERT_EQ(0, sysctl_write("swap_token", 0));
	ASSERT_EQ(0, run_pair(_metadata, &r));
	EXPECT_GT(r.kept_limited * 2, r.kept_unlimited);
	EXPECT_GT(r.kept_unlimited * 2, r.kept_limited);
	EXPECT_EQ(0, r.counted);
}

/* A soft limit: with memory free, an over-limit process keeps its pages. */
TEST_F_TIMEOUT(reclaim, no_pressure_no_enforcement, GUEST_TIMEOUT(60))
{
	long long before, after, counter0;
	pid_t pid;

	ASSERT_EQ(0, sysctl_write("rss_limit_enforce", 1));
	pid = spawn_toucher("limited", WSS, TOUCH_LOOP, LIMIT);
	ASSERT_GT(pid, 0);
	counter0 = vmstat("rss_limit_ignored_ref");
	before = rss_kb(pid);
	sleep_s(3);
	after = rss_kb(pid);
	stop_child(pid);
	TH_LOG("rss %lld kB -> %lld kB", before, after);
	EXPECT_GE(after * 100, before * 98);
	EXPECT_GT(before, (long long)(WSS / 1024 * 9 / 10));
	EXPECT_EQ(0, vmstat("rss_limit_ignored_ref") - counter0);
}

TEST_HARNESS_MAIN
