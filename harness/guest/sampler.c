// SPDX-License-Identifier: GPL-2.0
/*
 * sampler: every --interval, one TSV row per role with the memory counters
 * of the role's process tree, plus system-wide swap traffic and memory
 * pressure. Roles are named by pid files in --roles DIR (file name = role,
 * content = pid), written by the scenario driver as it starts processes;
 * a role's figures cover the pid and all its descendants (stress-ng
 * forks its workers).
 *
 * Columns: t_ms role pid nprocs rss_kb swap_kb majflt minflt over_limit
 *          token_pid pswpin pswpout psi_some_avg10
 */
#include "wl.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PROCS 4096
#define MAX_ROLES 16

struct proc_info {
	int pid, ppid;
	unsigned long long majflt, minflt;
};

struct sampler {
	const char *roles_dir;
	uint64_t interval_ns;
	FILE *out;
	struct proc_info procs[MAX_PROCS];
	int nprocs;
	char role_name[MAX_ROLES][256];
	int role_pid[MAX_ROLES];
	int nroles;
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static int read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

/* Fields after the command name in /proc/PID/stat, which may hold spaces. */
static int parse_stat(const char *buf, struct proc_info *p)
{
	const char *rp = strrchr(buf, ')');
	char state;

	if (!rp)
		return -1;
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt */
	if (sscanf(rp + 2, "%c %d %*d %*d %*d %*d %*u %llu %*u %llu", &state, &p->ppid,
		   &p->minflt, &p->majflt) != 4)
		return -1;
	return 0;
}

static void scan_procs(struct sampler *s)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[1024];

	s->nprocs = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && s->nprocs < MAX_PROCS) {
		struct proc_info *p = &s->procs[s->nprocs];
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (read_text(path, buf, sizeof(buf)) || parse_stat(buf, p))
			continue;	/* exited meanwhile */
		p->pid = (int)pid;
		s->nprocs++;
	}
	closedir(d);
}

static void load_roles(struct sampler *s)
{
	DIR *d = opendir(s->roles_dir);
	struct dirent *e;
	char path[512], buf[32];

	s->nroles = 0;
	if (!d)
		return;
	while ((e = readdir(d)) && s->nroles < MAX_ROLES) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", s->roles_dir, e->d_name);
		if (read_text(path, buf, sizeof(buf)) || atoi(buf) <= 0)
			continue;
		snprintf(s->role_name[s->nroles], sizeof(s->role_name[0]), "%s", e->d_name);
		s->role_pid[s->nroles] = atoi(buf);
		s->nroles++;
	}
	closedir(d);
}

static bool descends_from(const struct sampler *s, int pid, int root)
{
	for (int hops = 0; pid > 1 && hops < 64; hops++) {
		if (pid == root)
			return true;
		for (int i = 0; i < s->nprocs; i++) {
			if (s->procs[i].pid == pid) {
				pid = s->procs[i].ppid;
				goto next;
			}
		}
		return false;
next:;
	}
	return pid == root;
}

static long long status_kb(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? atoll(p + strlen(key)) : 0;
}

static long long vmstat_value(const char *buf, const char *key)
{
	const char *p = strstr(buf, key);

	return p ? atoll(p + strlen(key)) : -1;
}

static double psi_some_avg10(void)
{
	char buf[256];
	const char *p;

	if (read_text("/proc/pressure/memory", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "some avg10=");
	return p ? atof(p + 11) : -1;
}

/* Pid of the swap token holder when the kernel has one, else -1. */
static long token_pid(void)
{
	char buf[64];

	if (read_text("/proc/sys/vm/swap_token_holder", buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

static void sample(struct sampler *s, uint64_t t_ms)
{
	static char vm[16384];
	long long pswpin = -1, pswpout = -1;
	double psi = psi_some_avg10();
	long token = token_pid();

	if (!read_text("/proc/vmstat", vm, sizeof(vm))) {
		pswpin = vmstat_value(vm, "\npswpin ");
		pswpout = vmstat_value(vm, "\npswpout ");
	}
	load_roles(s);
	scan_procs(s);
	for (int r = 0; r < s->nroles; r++) {
		long long rss = 0, swap = 0, over = -1;
		unsigned long long majflt = 0, minflt = 0;
		int members = 0;

		for (int i = 0; i < s->nprocs; i++) {
			struct proc_info *p = &s->procs[i];
			char path[64], buf[4096];

			if (!descends_from(s, p->pid, s->role_pid[r]))
				continue;
			snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
			if (read_text(path, buf, sizeof(buf)))
				continue;
			members++;
			rss += status_kb(buf, "\nVmRSS:");
			swap += status_kb(buf, "\nVmSwap:");
			majflt += p->majflt;
			minflt += p->minflt;
			if (strstr(buf, "\nRssOverLimit:\t1"))
				over = 1;
			else if (over < 0 && strstr(buf, "\nRssOverLimit:"))
				over = 0;
		}
		if (!members)
			continue;
		fprintf(s->out, "%llu\t%s\t%d\t%d\t%lld\t%lld\t%llu\t%llu\t%lld\t%ld\t%lld\t%lld\t%.2f\n",
			(unsigned long long)t_ms, s->role_name[r], s->role_pid[r], members, rss,
			swap, majflt, minflt, over, token, pswpin, pswpout, psi);
	}
	fflush(s->out);
}

int main(int argc, char **argv)
{
	struct sampler *s = calloc(1, sizeof(*s));
	struct sigaction sa = { .sa_handler = on_stop };
	const char *out_path = NULL;
	uint64_t start, next;
	int c;

	static const struct option longopts[] = {
		{ "roles", required_argument, NULL, 'r' },
		{ "interval", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};

	if (!s)
		return 1;
	s->interval_ns = 100000000ull;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			s->roles_dir = optarg;
			break;
		case 'i':
			if (wl_parse_duration_ns(optarg, &s->interval_ns) || s->interval_ns < 1000000)
				goto usage;
			break;
		case 'o':
			out_path = optarg;
			break;
		case 'h':
			printf("usage: sampler --roles DIR --out FILE [--interval 100ms]\n");
			return 0;
		default:
			goto usage;
		}
	}
	if (!s->roles_dir || !out_path || optind < argc)
		goto usage;
	s->out = fopen(out_path, "we");
	if (!s->out) {
		fprintf(stderr, "sampler: cannot create %s: %s\n", out_path, strerror(errno));
		return WL_EXIT_USAGE;
	}
	wl_set_name("sampler");
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	fprintf(s->out, "t_ms\trole\tpid\tnprocs\trss_kb\tswap_kb\tmajflt\tminflt\tover_limit\t"
		"token_pid\tpswpin\tpswpout\tpsi_some_avg10\n");
	start = next = wl_now_ns();
	while (!stop_requested) {
		sample(s, (wl_now_ns() - start) / 1000000u);
		next += s->interval_ns;
		wl_sleep_until_ns(next);
	}
	fclose(s->out);
	free(s);
	return 0;
usage:
	fprintf(stderr, "sampler: usage: sampler --roles DIR --out FILE [--interval 100ms]\n");
	return WL_EXIT_USAGE;
}
