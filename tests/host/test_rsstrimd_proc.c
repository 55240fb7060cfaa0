// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for rsstrimd's /proc parsers, on recorded and malformed samples (TAP 13). */
#include "proc.h"

#include <stdio.h>

static int n, failed;

static void result(int ok, const char *name)
{
	n++;
	failed += !ok;
	printf("%sok %d %s\n", ok ? "" : "not ", n, name);
}

static const char limits_limited[] =
	"Limit                     Soft Limit           Hard Limit           Units     \n"
	"Max cpu time              unlimited            unlimited            seconds   \n"
	"Max resident set          4096000              unlimited            bytes     \n"
	"Max processes             7823                 7823                 processes \n";
static const char limits_unlimited[] =
	"Limit                     Soft Limit           Hard Limit           Units     \n"
	"Max resident set          unlimited            unlimited            bytes     \n";

int main(void)
{
	uint64_t v = 0;
	double psi = 0;
	struct map_range r;

	printf("TAP version 13\n1..6\n");
	result(!parse_limits_rss(limits_limited, &v) && v == 4096000 &&
	       !parse_limits_rss(limits_unlimited, &v) && v == RLIM_NONE,
	       "limits: finite and unlimited RSS soft limits");
	result(parse_limits_rss("Max cpu time unlimited unlimited seconds\n", &v) &&
	       parse_limits_rss("Max resident set          -5     unlimited   bytes\n", &v) &&
	       parse_limits_rss("Max resident set          12x    unlimited   bytes\n", &v) &&
	       parse_limits_rss("Max resident set", &v) && parse_limits_rss("", &v),
	       "limits: missing or malformed lines are rejected");
	result(!parse_statm_resident("6044 1370 935 136 0 466 0\n", &v) && v == 1370 &&
	       parse_statm_resident("6044\n", &v) && parse_statm_resident("x y", &v),
	       "statm: resident pages; malformed rejected");
	result(!parse_meminfo_available("MemTotal:  250000 kB\nMemFree: 1000 kB\n"
					"MemAvailable:   123456 kB\n", &v) && v == 123456 &&
	       parse_meminfo_available("MemTotal: 1 kB\n", &v) &&
	       parse_meminfo_available("MemAvailable: lots\n", &v),
	       "meminfo: MemAvailable; missing or malformed rejected");
	result(!parse_psi_some_avg10("some avg10=12.50 avg60=3.00 avg300=1.00 total=5\n"
				     "full avg10=1.00 avg60=0.00 avg300=0.00 total=1\n", &psi) &&
	       psi > 12.49 && psi < 12.51 && parse_psi_some_avg10("full avg10=1.0\n", &psi) &&
	       parse_psi_some_avg10("some avg10=abc\n", &psi),
	       "psi: some avg10; missing or malformed rejected");
	result(!parse_maps_line("7f0000000000-7f0000021000 rw-p 00000000 00:00 0\n", &r) &&
	       r.start == 0x7f0000000000ULL && r.end == 0x7f0000021000ULL && r.private_writable &&
	       !parse_maps_line("55d0c0000000-55d0c0001000 r-xp 00000000 fd:01 42 /bin/x\n", &r) &&
	       !r.private_writable &&
	       !parse_maps_line("7f0000000000-7f0000021000 rw-s 00000000 00:01 7 /dev/zero\n", &r) &&
	       !r.private_writable &&
	       parse_maps_line("zzzz-7f00 rw-p 0 0 0\n", &r) &&
	       parse_maps_line("7f00-7e00 rw-p 0 0 0\n", &r) && parse_maps_line("", &r),
	       "maps: private writable ranges; shared, read-only and malformed lines");
	return failed ? 1 : 0;
}
