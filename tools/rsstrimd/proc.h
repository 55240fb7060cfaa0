/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Parsers for the /proc files rsstrimd reads. Pure functions on text, so
 * they are unit-tested on recorded samples, malformed ones included.
 */
#ifndef RSSTRIMD_PROC_H
#define RSSTRIMD_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define RLIM_NONE UINT64_MAX

/*
 * The soft "Max resident set" limit from the text of /proc/PID/limits, in
 * bytes; RLIM_NONE for "unlimited". Returns -1 when the line is missing or
 * malformed.
 */
int parse_limits_rss(const char *text, uint64_t *soft_bytes);

/* Resident pages from /proc/PID/statm. */
int parse_statm_resident(const char *text, uint64_t *pages);

/* MemAvailable in KiB from /proc/meminfo. */
int parse_meminfo_available(const char *text, uint64_t *kib);

/* "some avg10=" from /proc/pressure/memory, in percent. */
int parse_psi_some_avg10(const char *text, double *pct);

/*
 * One line of /proc/PID/maps: the range, and whether it is a private
 * writable mapping (the only kind rsstrimd trims). Returns -1 if malformed.
 */
struct map_range {
	uint64_t start, end;
	bool private_writable;
};
int parse_maps_line(const char *line, struct map_range *r);

/* A growing array of ranges: no limit on how many a process has. */
struct range_list {
	struct map_range *r;
	size_t n, cap;
};

/*
 * The private writable ranges of a whole /proc/PID/maps file into @list
 * (emptied first), however long its lines (a path may be 4095 bytes) and
 * however many. Malformed lines are skipped and counted in @malformed.
 * Returns -1 with errno set if the file could not be read or memory ran out.
 */
int read_private_writable_ranges(FILE *maps, struct range_list *list, size_t *malformed);

/*
 * The state letter and start time (clock ticks after boot) from the text of
 * /proc/PID/stat. The command name may hold spaces and parentheses.
 */
int parse_stat_state_start(const char *text, char *state, uint64_t *start_ticks);

#endif
