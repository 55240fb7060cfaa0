// SPDX-License-Identifier: GPL-2.0
/* Parsers for the /proc files rsstrimd reads; see proc.h. */
#include "proc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *line_starting(const char *text, const char *prefix)
{
	size_t len = strlen(prefix);
	const char *p = text;

	while (p && *p) {
		if (!strncmp(p, prefix, len))
			return p + len;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static int parse_u64_word(const char **pp, uint64_t *out)
{
	const char *p = *pp;
	char *end;
	unsigned long long v;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || (*end && *end != ' ' && *end != '\t' && *end != '\n'))
		return -1;
	*out = v;
	*pp = end;
	return 0;
}

int parse_limits_rss(const char *text, uint64_t *soft_bytes)
{
	const char *p = line_starting(text, "Max resident set");

	if (!p)
		return -1;
	while (*p == ' ')
		p++;
	if (!strncmp(p, "unlimited", 9) && (p[9] == ' ' || p[9] == '\t')) {
		*soft_bytes = RLIM_NONE;
		return 0;
	}
	return parse_u64_word(&p, soft_bytes);
}

int parse_statm_resident(const char *text, uint64_t *pages)
{
	const char *p = text;
	uint64_t size;

	if (parse_u64_word(&p, &size) || parse_u64_word(&p, pages))
		return -1;
	return 0;
}

int parse_meminfo_available(const char *text, uint64_t *kib)
{
	const char *p = line_starting(text, "MemAvailable:");

	if (!p || parse_u64_word(&p, kib))
		return -1;
	while (*p == ' ')
		p++;
	return strncmp(p, "kB", 2) ? -1 : 0;
}

int parse_psi_some_avg10(const char *text, double *pct)
{
	const char *p = line_starting(text, "some avg10=");
	char *end;

	if (!p)
		return -1;
	errno = 0;
	*pct = strtod(p, &end);
	if (errno || end == p || *pct < 0 || *pct > 100)
		return -1;
	return 0;
}

int parse_maps_line(const char *line, struct map_range *r)
{
	unsigned long long start, end;
	char perms[8];
	int used = 0;

	if (sscanf(line, "%llx-%llx %7s%n", &start, &end, perms, &used) != 3 || !used ||
	    end <= start || strlen(perms) != 4)
		return -1;
	r->start = start;
	r->end = end;
	r->private_writable = perms[1] == 'w' && perms[3] == 'p';
	return 0;
}

int read_private_writable_ranges(FILE *maps, struct range_list *list, size_t *malformed)
{
	char *line = NULL;
	size_t len = 0;
	int ret = 0;

	list->n = 0;
	*malformed = 0;
	errno = 0;
	while (getline(&line, &len, maps) >= 0) {
		struct map_range r;

		if (parse_maps_line(line, &r)) {
			(*malformed)++;
			continue;
		}
		if (!r.private_writable)
			continue;
		if (list->n == list->cap) {
			size_t cap = list->cap ? list->cap * 2 : 64;
			struct map_range *nr = realloc(list->r, cap * sizeof(*nr));

			if (!nr) {
				ret = -1;
				break;
			}
			list->r = nr;
			list->cap = cap;
		}
		list->r[list->n++] = r;
	}
	if (ferror(maps))
		ret = -1;
	free(line);
	return ret;
}

int parse_stat_state_start(const char *text, char *state, uint64_t *start_ticks)
{
	const char *p = strrchr(text, ')');
	int field;

	/* ") S ": the state is field 3, the start time field 22. */
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	*state = p[2];
	p += 3;
	for (field = 4; field < 22; field++) {
		while (*p == ' ')
			p++;
		p = strchr(p, ' ');
		if (!p)
			return -1;
	}
	return parse_u64_word(&p, start_ticks);
}
