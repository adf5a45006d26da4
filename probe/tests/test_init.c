/* test_init.c - init mode's pure parts (init.h): CRC-32 against known
 * vectors, the frame format, the channel on a regular file, the bounded
 * reader (a FIFO, /dev/zero and an oversized file refused), the plan
 * parser and its limits, the kernel command line's osmeter.* values, and
 * one command run the way init runs it (a fake dispatch): its lines,
 * pieces, exit or signal, and output a leftover process keeps open. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "init.h"
#include "init_int.h"
#include "tap.h"

static char err[1024];

static void test_crc32(void)
{
	static const struct {
		const char *in;
		uint32_t want;
	} v[] = {
		{"", 0x00000000u},
		{"a", 0xe8b7be43u},
		{"abc", 0x352441c2u},
		{"123456789", 0xcbf43926u},
		{"The quick brown fox jumps over the lazy dog", 0x414fa339u},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		is_int(osm_crc32(v[i].in, strlen(v[i].in)), v[i].want, "crc32('%s')", v[i].in);
	unsigned char bytes[256];
	for (int i = 0; i < 256; i++)
		bytes[i] = (unsigned char)i;
	is_int(osm_crc32(bytes, sizeof(bytes)), 0x29058c73u, "crc32 of bytes 0..255");
}

static void test_frame_format(void)
{
	char out[256];
	size_t n = osm_init_frame_format(out, sizeof(out), 0, 'H', 0, "123456789", 9);
	out[n] = '\0';
	is_str(out, "@osm1 0 H 0 9 cbf43926 123456789\n", "H frame");
	n = osm_init_frame_format(out, sizeof(out), 12345678901ULL, 'O', 3, "", 0);
	out[n] = '\0';
	is_str(out, "@osm1 12345678901 O 3 0 00000000 \n", "an empty payload");
	n = osm_init_frame_format(out, sizeof(out), 7, 'o', 32, "a\0b\r", 4);
	ok(n == 29 && !memcmp(out, "@osm1 7 o 32 4 ", 15) && !memcmp(out + 23, " a\0b\r\n", 6),
	   "raw bytes, a NUL and a CR included");
	is_int((int64_t)osm_init_frame_format(out, sizeof(out), 1, 'O', 1, "a\nb", 3), 0, "a newline is refused");
	is_int((int64_t)osm_init_frame_format(out, 20, 1, 'O', 1, "0123456789", 10), 0, "too small a buffer");
}

static void test_channel_file(void)
{
	char path[] = "/tmp/osm-test-init-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0) {
		skip(3, "no temporary file");
		return;
	}
	(void)!write(fd, "old contents\n", 13);
	close(fd);
	struct osm_chan c;
	ok(!osm_chan_open(&c, path, err, sizeof(err)) && c.fd > 2 && !c.is_tty, "open a regular file: %s", err);
	osm_chan_sendf(&c, 'H', 0, "osmeter-probe %s", "x");
	osm_chan_sendf(&c, 'L', 0, "two\nlines");
	osm_chan_drain(&c);
	close(c.fd);
	char buf[256] = "";
	fd = open(path, O_RDONLY);
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	char want[256];
	snprintf(want, sizeof(want), "@osm1 0 H 0 15 %08x osmeter-probe x\n@osm1 1 L 0 9 %08x two lines\n",
		 (unsigned)osm_crc32("osmeter-probe x", 15), (unsigned)osm_crc32("two lines", 9));
	is_str(buf, want, "truncated, then two frames numbered 0 and 1 (a newline in L becomes a space)");
	unlink(path);
	ok(osm_chan_open(&c, path, err, sizeof(err)) && strstr(err, "No such file"), "a missing channel: %s", err);
}

static void test_read_bounded(void)
{
	char *text = NULL;
	size_t len = 0;
	ok(osm_init_read_bounded("/dev/zero", 100, &text, &len, err, sizeof(err)) && strstr(err, "not a regular file"),
	   "/dev/zero refused: %s", err);
	char fifo[] = "/tmp/osm-test-init-fifo-XXXXXX";
	int fd = mkstemp(fifo);
	if (fd >= 0) {
		close(fd);
		unlink(fifo);
	}
	if (fd < 0 || mkfifo(fifo, 0600)) {
		skip(1, "no FIFO");
	} else {
		ok(osm_init_read_bounded(fifo, 100, &text, &len, err, sizeof(err)) && strstr(err, "not a regular file"),
		   "a FIFO without a writer refused at once: %s", err);
		unlink(fifo);
	}
	char path[] = "/tmp/osm-test-init-XXXXXX";
	fd = mkstemp(path);
	(void)!write(fd, "0123456789", 10);
	close(fd);
	ok(!osm_init_read_bounded(path, 10, &text, &len, err, sizeof(err)) && len == 10 && !strcmp(text, "0123456789"),
	   "a file of exactly the limit");
	free(text);
	ok(osm_init_read_bounded(path, 9, &text, &len, err, sizeof(err)) && strstr(err, "over 9 bytes"),
	   "one byte over the limit: %s", err);
	unlink(path);
}

/* Parses a copy of s; returns the parser's result, the plan in *p. */
static int plan_of(const char *s, size_t len, struct osm_plan *p, char **keep)
{
	*keep = malloc(len + 1);
	memcpy(*keep, s, len);
	(*keep)[len] = '\0';
	err[0] = '\0';
	return osm_init_parse_plan(*keep, len, p, err, sizeof(err));
}

static void test_plan(void)
{
	struct osm_plan p;
	char *t;
	const char *s = "# a comment\n\nrun\tsyscall.null\t--max-time\t0.05\nsysinfo\t--json\n#x\tb\nversion";
	ok(!plan_of(s, strlen(s), &p, &t) && p.n == 3, "three commands: %s", err);
	is_int(p.argc[0], 5, "argc counts the program's name");
	ok(!strcmp(p.argv[0][0], "osmeter-probe") && !strcmp(p.argv[0][1], "run") && !strcmp(p.argv[0][4], "0.05") &&
	   p.argv[0][5] == NULL, "argv of command 1");
	ok(p.argc[2] == 2 && !strcmp(p.argv[2][1], "version"), "a last line without a newline");
	osm_init_free_plan(&p);
	free(t);

	static const struct {
		const char *in, *err_has;
	} bad[] = {
		{"", "no command"},
		{"# only\n\n", "no command"},
		{"run\t\tx\n", "line 1: argument 2 is empty"},
		{"run\tx\t\n", "argument 3 is empty"},
		{"\trun\n", "argument 1 is empty"},
		{"version\n\nrun\tx\t\t", "line 3"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(plan_of(bad[i].in, strlen(bad[i].in), &p, &t) && strstr(err, bad[i].err_has) && p.n == 0,
		   "bad plan %zu refused: %s", i + 1, err);
		free(t);
	}
	ok(plan_of("run\0x\n", 6, &p, &t) && strstr(err, "NUL"), "a NUL byte: %s", err);
	free(t);

	char big[8192];
	size_t n = 0;
	for (int i = 0; i < OSM_INIT_MAX_COMMANDS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "version\n");
	ok(!plan_of(big, n, &p, &t) && p.n == OSM_INIT_MAX_COMMANDS, "%d commands", OSM_INIT_MAX_COMMANDS);
	osm_init_free_plan(&p);
	free(t);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "# a comment is no command\nversion\n");
	ok(plan_of(big, n, &p, &t) && strstr(err, "more than 32 commands") && strstr(err, "line 34"), "33: %s", err);
	free(t);

	n = (size_t)snprintf(big, sizeof(big), "run");
	for (int i = 1; i < OSM_INIT_MAX_ARGS; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "\ta");
	ok(!plan_of(big, n, &p, &t) && p.argc[0] == OSM_INIT_MAX_ARGS + 1 && !p.argv[0][OSM_INIT_MAX_ARGS + 1],
	   "%d arguments", OSM_INIT_MAX_ARGS);
	osm_init_free_plan(&p);
	free(t);
	n += (size_t)snprintf(big + n, sizeof(big) - n, "\ta");
	ok(plan_of(big, n, &p, &t) && strstr(err, "513 arguments, at most 512"), "513: %s", err);
	free(t);
}

static int cmdline(const char *s, struct osm_init_cmdline *c)
{
	err[0] = '\0';
	return osm_init_parse_cmdline(s, strlen(s), c, err, sizeof(err));
}

static void test_cmdline(void)
{
	struct osm_init_cmdline c;
	ok(!cmdline("console=ttyS0 panic=-1 quiet\n", &c) && c.sleep_s == -1 && !c.channel[0] && !c.plan[0] &&
	   !c.ignored[0], "no osmeter.* parameter");
	ok(!cmdline("console=ttyS0 osmeter.sleep=5\tosmeter.channel=/dev/hvc1 osmeter.plan=/p\n", &c) &&
	   c.sleep_s == 5 && !strcmp(c.channel, "/dev/hvc1") && !strcmp(c.plan, "/p"), "all three: %s", err);
	ok(!cmdline("osmeter.sleep=0 osmeter.sleep=86400", &c) && c.sleep_s == 86400, "the last one wins, 86400");
	ok(!cmdline("osmeter.frob=1 osmeter.x", &c) && !strcmp(c.ignored, "osmeter.frob, osmeter.x"),
	   "unknown names are noted, not errors: %s", c.ignored);
	static const struct {
		const char *in, *err_has;
	} bad[] = {
		{"osmeter.sleep=x", "osmeter.sleep: 'x' is not an integer; allowed: 0..86400"},
		{"osmeter.sleep=86401", "allowed: 0..86400"},
		{"osmeter.sleep=-1", "allowed: 0..86400"},
		{"osmeter.sleep=", "osmeter.sleep"},
		{"osmeter.sleep=99999999999999999999999999999999999", "not an integer"},
		{"osmeter.sleep", "osmeter.sleep has no value"},
		{"osmeter.channel=", "absolute path"},
		{"osmeter.plan=plan", "osmeter.plan=plan: the value must be an absolute path"},
		{"osmeter.", "names no parameter"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(cmdline(bad[i].in, &c) && strstr(err, bad[i].err_has) && strstr(err, "kernel command line: "),
		   "refused: '%s': %s", bad[i].in, err);
	ok(cmdline("osmeter.plan=/good osmeter.sleep=x osmeter.channel=/c", &c) && !strcmp(c.plan, "/good") &&
	   !strcmp(c.channel, "/c") && strstr(err, "sleep"), "the good ones are still set: %s", err);
}

/* The frames of a channel file, checked (LEN, CRC, SEQ from 0): kinds
 * into kinds[], payloads (NUL-terminated copies) into texts[]. */
#define MAX_FRAMES 64
static char kinds[MAX_FRAMES + 1];
static char *texts[MAX_FRAMES];
static size_t lens[MAX_FRAMES];

static int read_frames(const char *path)
{
	static char data[1 << 20];
	int fd = open(path, O_RDONLY);
	ssize_t got = fd >= 0 ? read(fd, data, sizeof(data) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (got < 0)
		return -1;
	int n = 0;
	for (char *p = data; p < data + got && n < MAX_FRAMES; n++) {
		unsigned long long seq;
		char kind;
		int cmd, head = 0;
		size_t len;
		unsigned crc;
		if (sscanf(p, "@osm1 %llu %c %d %zu %8x %n", &seq, &kind, &cmd, &len, &crc, &head) != 5 || !head ||
		    seq != (unsigned long long)n || p + head + len >= data + got || p[head + len] != '\n' ||
		    osm_crc32(p + head, len) != crc)
			return -1;
		kinds[n] = kind;
		texts[n] = strndup(p + head, len);
		lens[n] = len;
		p += head + len + 1;
	}
	kinds[n] = '\0';
	return n;
}

static void free_frames(int n)
{
	for (int i = 0; i < n; i++)
		free(texts[i]);
}

static int fake_lines(int argc, char **argv)
{
	(void)argc;
	printf("one\n%s\n", argv[1]);
	fflush(stdout);
	fprintf(stderr, "warning\n");
	for (int i = 0; i < OSM_INIT_PIECE + 10; i++)
		putchar('x');
	printf("\nno newline");
	return 3;
}

static int fake_signal(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("bye\n");
	fflush(stdout);
	raise(SIGTERM);
	return 0;
}

/* Leaves a process behind that holds stdout for 60 s; prints its pid. */
static int fake_leftover(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		sleep(60);
		_exit(0);
	}
	printf("left %d\n", (int)pid);
	return 0;
}

static int run_one(const char *path, osm_dispatch_fn fn, int *status)
{
	struct osm_chan c;
	char *argv[] = {"osmeter-probe", "arg", NULL};
	err[0] = '\0';
	if (osm_chan_open(&c, path, err, sizeof(err)))
		return -1;
	int rc = osm_init_run_command(&c, 1, 2, argv, fn, status, err, sizeof(err));
	close(c.fd);
	return rc;
}

static void test_run_command(void)
{
	char path[] = "/tmp/osm-test-init-XXXXXX";
	int fd = mkstemp(path), status = -1, n;
	close(fd);
	ok(!run_one(path, fake_lines, &status) && WIFEXITED(status) && WEXITSTATUS(status) == 3, "exit 3: %s", err);
	n = read_frames(path);
	ok(n > 0, "frames check out (%d)", n);
	/* stdout and stderr may interleave: compare each stream alone. */
	char out[16] = "", errs[16] = "";
	for (int i = 0; i < n; i++)
		if (strchr("Oo", kinds[i]) && strlen(out) < 15)
			out[strlen(out)] = kinds[i];
		else if (strchr("Ee", kinds[i]) && strlen(errs) < 15)
			errs[strlen(errs)] = kinds[i];
	is_str(out, "OOoOO", "stdout: two lines, a 64 KiB piece, its end, the last line without newline");
	is_str(errs, "E", "stderr: one line");
	int o = 0;
	for (int i = 0; i < n; i++)
		if (strchr("Oo", kinds[i])) {
			static const size_t want[] = {3, 3, OSM_INIT_PIECE, 10, 10};
			ok(lens[i] == want[o], "stdout frame %d: %zu bytes", o + 1, lens[i]);
			o++;
		}
	ok(n > 0 && kinds[n - 1] == 'X' && !strcmp(texts[n - 1], "exit 3"), "X exit 3 last");
	free_frames(n);

	ok(!run_one(path, fake_signal, &status) && WIFSIGNALED(status), "killed by SIGTERM");
	n = read_frames(path);
	is_str(n > 0 ? kinds : "", "OX", "O, then X");
	ok(n == 2 && !strcmp(texts[1], "signal 15"), "X signal 15");
	free_frames(n);

	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ok(!run_one(path, fake_leftover, &status) && WIFEXITED(status) && !WEXITSTATUS(status), "leftover: exit 0");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	n = read_frames(path);
	is_str(n > 0 ? kinds : "", "OLX", "its line, an L about the open output, X");
	int left = n > 0 ? atoi(texts[0] + 5) : 0;
	if (left > 0)
		kill(left, SIGKILL); /* not ours to reap: an orphan goes to init (or a subreaper) */
	ok(n == 3 && strstr(texts[1], "stayed open 2 s after it ended"), "L: %s", n == 3 ? texts[1] : "");
	ok(s >= 1.9 && s < 10, "closed after the grace of 2 s (%.2f s)", s);
	free_frames(n);
	unlink(path);
}

int main(void)
{
	test_crc32();
	test_frame_format();
	test_channel_file();
	test_read_bounded();
	test_plan();
	test_cmdline();
	test_run_command();
	return done_testing();
}
