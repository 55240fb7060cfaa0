// SPDX-License-Identifier: GPL-2.0
/*
 * redis-load: a fixed-rate load generator for a real server, redis-server,
 * as the latency-sensitive neighbour of a memory hog.
 *
 * It fills the server with --data bytes of values (--value bytes each, keys
 * key:00000000 on), then every --period a GET of a random key is due. As in
 * victim's server mode the loop is open: a request's latency runs from when
 * it was due, so a stall of the server shows in every request queued behind
 * it (redis-benchmark runs closed loops and times from the send, which hides
 * such stalls: coordinated omission). Its summary has victim's columns, and
 * majflt counts the server's major faults (from /proc/PID/stat), not ours.
 */
#include "wl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Pipelined SETs per write while filling. */
#define FILL_BATCH 32

struct load_opts {
	const char *socket_path;
	int server_pid;
	uint64_t data, value;
	uint64_t period_ns;
	uint64_t duration_ns;	/* 0: until SIGTERM */
	const char *log_path;
	uint64_t seed;
};

struct load {
	struct load_opts o;
	int fd;
	int stat_fd;		/* the server's /proc/PID/stat */
	uint64_t keys;
	uint64_t rng;
	char *value;		/* one value, reused for every key */
	char *buf;		/* replies */
	size_t buf_len, buf_cap;
	FILE *log;
};

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: redis-load --socket PATH --server-pid PID [options]\n"
		"  --socket PATH     the server's unix socket (waits up to 10 s for it)\n"
		"  --server-pid PID  the server, whose major faults are reported\n"
		"  --data SIZE       total size of the values stored (default 64M)\n"
		"  --value SIZE      size of one value (default 1000: with the server's\n"
		"                    header, one 1 KiB allocation)\n"
		"  --period TIME     one GET of a random key is due every TIME (default 2ms)\n"
		"  --duration SECS   stop after this long (default: until SIGTERM)\n"
		"  --log FILE        per-request log with a header\n"
		"                    (due_ms latency_us service_us majflt)\n"
		"  --seed N          random seed (default 1)\n"
		"  --help            this text\n"
		"Prints '# ready keys=N' once filled, then at the end a TSV summary with\n"
		"victim's server columns: rounds missed p50_us p90_us p99_us p999_us\n"
		"max_us majflt service_p50_us service_p99_us service_max_us refills\n"
		"refill_p50_ms refill_max_ms (a round is one request; no refills).\n");
}

static void die_usage(const char *what, const char *value)
{
	fprintf(stderr, "redis-load: %s%s%s\n", what, value ? ": " : "", value ? value : "");
	exit(WL_EXIT_USAGE);
}

static void die(const char *what)
{
	fprintf(stderr, "redis-load: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
	exit(1);
}

static void parse_args(int argc, char **argv, struct load_opts *o)
{
	enum { O_SOCKET = 256, O_PID, O_DATA, O_VALUE, O_PERIOD, O_DURATION, O_LOG, O_SEED, O_HELP };
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, O_SOCKET },
		{ "server-pid", required_argument, NULL, O_PID },
		{ "data", required_argument, NULL, O_DATA },
		{ "value", required_argument, NULL, O_VALUE },
		{ "period", required_argument, NULL, O_PERIOD },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "log", required_argument, NULL, O_LOG },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, O_HELP },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pid;
	const char *err;
	int c;

	*o = (struct load_opts){
		.data = 64ull << 20, .value = 1000, .period_ns = 2000000ull, .seed = 1,
	};
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case O_SOCKET:
			if (strlen(optarg) >= sizeof(((struct sockaddr_un *)0)->sun_path))
				die_usage("--socket path too long", optarg);
			o->socket_path = optarg;
			break;
		case O_PID:
			if (wl_parse_u64(optarg, 0x7fffffff, &pid) || !pid)
				die_usage("--server-pid must be a process id", optarg);
			o->server_pid = (int)pid;
			break;
		case O_DATA:
			if (wl_parse_size(optarg, &o->data, &err))
				die_usage(err, optarg);
			break;
		case O_VALUE:
			if (wl_parse_size(optarg, &o->value, &err))
				die_usage(err, optarg);
			if (!o->value || o->value > (64u << 20))
				die_usage("--value must be from 1 byte to 64M", optarg);
			break;
		case O_PERIOD:
			if (wl_parse_duration_ns(optarg, &o->period_ns) || o->period_ns < 100000)
				die_usage("--period must be at least 100us", optarg);
			break;
		case O_DURATION:
			if (wl_parse_duration_ns(optarg, &o->duration_ns) || !o->duration_ns)
				die_usage("--duration must be a positive time", optarg);
			break;
		case O_LOG:
			o->log_path = optarg;
			break;
		case O_SEED:
			if (wl_parse_u64(optarg, UINT64_MAX, &o->seed))
				die_usage("--seed must be a non-negative integer", optarg);
			break;
		case O_HELP:
			usage(stdout);
			exit(0);
		default:
			die_usage("unknown or incomplete option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument", argv[optind]);
	if (!o->socket_path)
		die_usage("--socket is required", NULL);
	if (!o->server_pid)
		die_usage("--server-pid is required", NULL);
	if (o->data < o->value)
		die_usage("--data must hold at least one --value", NULL);
	if (o->data / o->value > 100000000ull)
		die_usage("--data / --value: more than 100 million keys", NULL);
}

/* Field 12 of /proc/PID/stat, counted after the command's closing ')'. */
static uint64_t server_majflt(struct load *l)
{
	char text[1024], *p;
	ssize_t n = pread(l->stat_fd, text, sizeof(text) - 1, 0);
	int field;

	if (n <= 0) {
		errno = n < 0 ? errno : 0;
		die("cannot read the server's /proc/PID/stat (did it exit?)");
	}
	text[n] = '\0';
	p = strrchr(text, ')');
	if (!p) {
		errno = 0;
		die("malformed /proc/PID/stat");
	}
	/* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt" */
	for (field = 2; field < 12 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p) {
		errno = 0;
		die("malformed /proc/PID/stat");
	}
	return strtoull(p + 1, NULL, 10);
}

static void connect_server(struct load *l)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	uint64_t give_up = wl_now_ns() + 10000000000ull;

	strcpy(addr.sun_path, l->o.socket_path);
	for (;;) {
		l->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (l->fd < 0)
			die("socket");
		if (!connect(l->fd, (struct sockaddr *)&addr, sizeof(addr)))
			return;
		if ((errno != ENOENT && errno != ECONNREFUSED) || wl_now_ns() > give_up)
			die("cannot connect to the server");
		close(l->fd);
		wl_sleep_until_ns(wl_now_ns() + 50000000ull);
	}
}

static void send_all(struct load *l, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(l->fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write to the server");
		p += w;
		n -= (size_t)w;
	}
}

/* Read more of the server's replies into l->buf. */
static void receive(struct load *l)
{
	ssize_t r;

	if (l->buf_cap - l->buf_len < 4096) {
		l->buf_cap = l->buf_cap * 2 + 4096;
		l->buf = realloc(l->buf, l->buf_cap);
		if (!l->buf)
			die("out of memory");
	}
	do
		r = read(l->fd, l->buf + l->buf_len, l->buf_cap - l->buf_len);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		die("read from the server");
	if (r == 0) {
		errno = 0;
		die("the server closed the connection");
	}
	l->buf_len += (size_t)r;
}

static void consume(struct load *l, size_t n)
{
	memmove(l->buf, l->buf + n, l->buf_len - n);
	l->buf_len -= n;
}

/* The length of the first line of l->buf with its CRLF, reading as needed. */
static size_t reply_line(struct load *l)
{
	for (;;) {
		char *nl = l->buf_len ? memchr(l->buf, '\n', l->buf_len) : NULL;

		if (nl)
			return (size_t)(nl - l->buf) + 1;
		receive(l);
	}
}

static void protocol_error(struct load *l, const char *expected, size_t line)
{
	fprintf(stderr, "redis-load: expected %s, the server said: %.*s\n", expected,
		(int)(line > 200 ? 200 : line), l->buf);
	exit(1);
}

static void expect_ok(struct load *l)
{
	size_t line = reply_line(l);

	if (line != 5 || memcmp(l->buf, "+OK\r\n", 5))
		protocol_error(l, "+OK", line);
	consume(l, line);
}

/* A bulk string reply of exactly --value bytes. */
static void expect_value(struct load *l)
{
	size_t line = reply_line(l), total;

	if (l->buf[0] != '$' || strtoull(l->buf + 1, NULL, 10) != l->o.value)
		protocol_error(l, "the value stored", line);
	total = line + l->o.value + 2;
	while (l->buf_len < total)
		receive(l);
	consume(l, total);
}

static int format_key(char *key, uint64_t k)
{
	return snprintf(key, 32, "key:%08llu", (unsigned long long)k);
}

static void fill(struct load *l)
{
	size_t cmd_cap = 128 + l->o.value, batch_cap = cmd_cap * FILL_BATCH, len = 0;
	char *batch = malloc(batch_cap), key[32];
	uint64_t k, queued = 0;

	if (!batch)
		die("out of memory");
	for (k = 0; k < l->keys; k++) {
		int klen = format_key(key, k);

		len += (size_t)snprintf(batch + len, batch_cap - len,
					"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%llu\r\n", klen, key,
					(unsigned long long)l->o.value);
		memcpy(batch + len, l->value, l->o.value);
		len += l->o.value;
		memcpy(batch + len, "\r\n", 2);
		len += 2;
		if (++queued == FILL_BATCH || k + 1 == l->keys) {
			send_all(l, batch, len);
			while (queued--)
				expect_ok(l);
			queued = 0;
			len = 0;
		}
	}
	free(batch);
}

/* Open loop, as victim's run_server(): see the comment at the top. */
static void serve(struct load *l)
{
	static struct wl_hist latency, service;
	uint64_t start = wl_now_ns(), due = start, rounds = 0, late = 0;
	uint64_t majflt0 = server_majflt(l);
	char key[32], cmd[96];

	wl_hist_init(&latency);
	wl_hist_init(&service);
	while (!stop_requested) {
		uint64_t t0, t1;
		int klen, len;

		wl_sleep_until_ns(due);
		if (stop_requested)
			break;
		klen = format_key(key, wl_rand(&l->rng) % l->keys);
		len = snprintf(cmd, sizeof(cmd), "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", klen, key);
		t0 = wl_now_ns();
		send_all(l, cmd, (size_t)len);
		expect_value(l);
		t1 = wl_now_ns();
		wl_hist_add(&latency, t1 - due);
		wl_hist_add(&service, t1 - t0);
		rounds++;
		if (t0 >= due + l->o.period_ns)
			late++;
		if (l->log)
			fprintf(l->log, "%.1f\t%.1f\t%.1f\t%llu\n", (double)(due - start) / 1e6,
				(double)(t1 - due) / 1e3, (double)(t1 - t0) / 1e3,
				(unsigned long long)(server_majflt(l) - majflt0));
		due += l->o.period_ns;
		if (l->o.duration_ns && due - start >= l->o.duration_ns)
			break;
	}
	wl_print_rounds_summary(stdout, rounds, late, &latency, server_majflt(l) - majflt0, &service, NULL);
}

int main(int argc, char **argv)
{
	struct load l = { .fd = -1 };
	struct sigaction stop = { .sa_handler = on_stop };
	char path[64];

	parse_args(argc, argv, &l.o);
	wl_line_buffered();
	sigaction(SIGTERM, &stop, NULL);
	sigaction(SIGINT, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);
	l.keys = l.o.data / l.o.value;
	l.rng = l.o.seed * 0x9E3779B97F4A7C15ULL + 1;
	snprintf(path, sizeof(path), "/proc/%d/stat", l.o.server_pid);
	l.stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	if (l.stat_fd < 0)
		die("cannot open the server's /proc/PID/stat");
	if (l.o.log_path) {
		l.log = fopen(l.o.log_path, "we");
		if (!l.log) {
			fprintf(stderr, "redis-load: cannot create %s: %s\n", l.o.log_path,
				strerror(errno));
			return WL_EXIT_USAGE;
		}
		fprintf(l.log, "due_ms\tlatency_us\tservice_us\tmajflt\n");
	}
	/* One string of random letters; the server keeps a copy per key. */
	l.value = malloc(l.o.value);
	if (!l.value)
		die("out of memory");
	for (uint64_t i = 0; i < l.o.value; i++)
		l.value[i] = (char)('a' + wl_rand(&l.rng) % 26);
	connect_server(&l);
	fill(&l);
	/* The scenario driver waits for this line before it starts the hog. */
	printf("# ready keys=%llu\n", (unsigned long long)l.keys);
	serve(&l);
	if (l.log)
		fclose(l.log);
	return 0;
}
