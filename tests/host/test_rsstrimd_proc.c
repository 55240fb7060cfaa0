// SPDX-License-Identifier: GPL-2.0
/* Host unit tests for rsstrimd's /proc parsers, on recorded and malformed samples (TAP 13). */
#include "proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Reads @text as a maps file; the ranges and malformed count come back. */
static int read_maps_text(const char *text, struct range_list *list, size_t *malformed)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	int ret;

	if (!f)
		return -1;
	ret = read_private_writable_ranges(f, list, malformed);
	fclose(f);
	return ret;
}

/*
 * A path of 3000 bytes ending in hex-looking text: read 512 bytes at a time
 * (as before), its tail parsed as a range of its own.
 */
static int maps_long_lines(void)
{
	static const char head[] = "7f0000000000-7f0000021000 rw-p 00000000 08:01 12 /";
	static const char tail[] = "/aaaa-bbbb rw-p 0 0 0\n7f0000030000-7f0000031000 rw-p 0 00:00 0\n";
	struct range_list list = { 0 };
	size_t malformed = 9;
	char *text = malloc(sizeof(head) + 3000 + sizeof(tail));
	int ok;

	if (!text)
		return 0;
	strcpy(text, head);
	memset(text + strlen(text), 'd', 3000);
	strcpy(text + sizeof(head) - 1 + 3000, tail);
	ok = !read_maps_text(text, &list, &malformed) && list.n == 2 && malformed == 0 &&
	     list.r[0].end == 0x7f0000021000ULL && list.r[1].start == 0x7f0000030000ULL;
	free(text);
	free(list.r);
	return ok;
}

static int maps_many_ranges(void)
{
	struct range_list list = { 0 };
	size_t malformed = 0, len = 0, cap = 10002 * 64;
	char *text = malloc(cap);
	int ok, i;

	if (!text)
		return 0;
	for (i = 0; i < 10000; i++)
		len += (size_t)snprintf(text + len, cap - len, "%llx-%llx %s 0 00:00 0\n",
					0x100000ULL * (unsigned long long)(i + 1),
					0x100000ULL * (unsigned long long)(i + 1) + 0x1000,
					i % 2 ? "rw-p" : "r--p");
	snprintf(text + len, cap - len, "garbage\n\n");
	ok = !read_maps_text(text, &list, &malformed) && list.n == 5000 && malformed == 2 &&
	     list.r[4999].start == 0x100000ULL * 10000;
	free(text);
	free(list.r);
	return ok;
}

static int stat_fields(void)
{
	static const char stat[] =
		"4242 (evil) S (x) ) T 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
		"987654321 1000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1\n";
	uint64_t start = 0;
	char state = '?';

	return !parse_stat_state_start(stat, &state, &start) && state == 'T' && start == 987654321 &&
	       parse_stat_state_start("4242 (x) R 1 2\n", &state, &start) &&
	       parse_stat_state_start("no parenthesis", &state, &start);
}

int main(void)
{
	uint64_t v = 0;
	double psi = 0;
	struct map_range r;

	printf("TAP version 13\n1..9\n");
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
	result(maps_long_lines(), "maps file: a 3000-byte path is one range, not several");
	result(maps_many_ranges(), "maps file: 10000 ranges are all kept; malformed lines counted");
	result(stat_fields(), "stat: state and start time, past a command name with ') ' in it");
	return failed ? 1 : 0;
}
