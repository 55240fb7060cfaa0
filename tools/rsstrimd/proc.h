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

#endif
