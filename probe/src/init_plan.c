/* init_plan.c - what init mode reads (init.h): a bounded file, the plan,
 * the kernel command line's osmeter.* parameters. */
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse.h"

static int read_all(int fd, char *buf, size_t cap, size_t *got)
{
	size_t n = 0;
	while (n < cap) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*got = n;
	return 0;
}

int osm_init_read_bounded(const char *path, size_t max, char **out, size_t *len, char *err, size_t errlen)
{
	char show[OSM_SHOW_LEN];
	osm_shorten(path, show, sizeof(show));
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open '%s': %s", show, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "'%s' is not a regular file", show);
		close(fd);
		return -1;
	}
	char *buf = malloc(max + 2);
	size_t n = 0;
	int rc = buf ? read_all(fd, buf, max + 1, &n) : -1;
	int saved = buf ? errno : ENOMEM;
	close(fd);
	if (rc) {
		snprintf(err, errlen, "cannot read '%s': %s", show, strerror(saved));
		free(buf);
		return -1;
	}
	if (n > max) {
		snprintf(err, errlen, "'%s' is over %zu bytes", show, max);
		free(buf);
		return -1;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

void osm_init_free_plan(struct osm_plan *plan)
{
	for (int i = 0; i < plan->n; i++)
		free(plan->argv[i]);
	plan->n = 0;
}

/* One line's arguments (line ends at its NUL): TABs become NULs. */
static int split_line(char *line, int lineno, struct osm_plan *plan, char *err, size_t errlen)
{
	if (plan->n == OSM_INIT_MAX_COMMANDS) {
		snprintf(err, errlen, "plan line %d: more than %d commands", lineno, OSM_INIT_MAX_COMMANDS);
		return -1;
	}
	int nargs = 1;
	for (char *p = line; *p; p++)
		nargs += *p == '\t';
	if (nargs > OSM_INIT_MAX_ARGS) {
		snprintf(err, errlen, "plan line %d: %d arguments, at most %d", lineno, nargs, OSM_INIT_MAX_ARGS);
		return -1;
	}
	char **argv = calloc((size_t)nargs + 2, sizeof(*argv));
	if (!argv) {
		snprintf(err, errlen, "plan line %d: out of memory", lineno);
		return -1;
	}
	argv[0] = "osmeter-probe";
	char *arg = line;
	for (int k = 1; k <= nargs; k++) {
		char *tab = strchr(arg, '\t');
		if (tab)
			*tab = '\0';
		if (!*arg) {
			snprintf(err, errlen, "plan line %d: argument %d is empty (arguments are separated by one TAB)",
				 lineno, k);
			free(argv);
			return -1;
		}
		argv[k] = arg;
		arg = tab ? tab + 1 : arg;
	}
	plan->argv[plan->n] = argv;
	plan->argc[plan->n] = nargs + 1;
	plan->n++;
	return 0;
}

int osm_init_parse_plan(char *text, size_t len, struct osm_plan *plan, char *err, size_t errlen)
{
	plan->n = 0;
	if (memchr(text, '\0', len)) {
		snprintf(err, errlen, "the plan holds a NUL byte (at offset %zu)", (size_t)((char *)memchr(text, '\0', len) - text));
		return -1;
	}
	char *end = text + len;
	int lineno = 0;
	for (char *line = text; line < end;) {
		char *nl = memchr(line, '\n', (size_t)(end - line));
		char *next = nl ? nl + 1 : end;
		if (nl)
			*nl = '\0';
		/* The last line without a newline ends at text[len], which the
		 * caller's buffer must hold as a NUL (osm_init_read_bounded does). */
		lineno++;
		if (*line && *line != '#' && split_line(line, lineno, plan, err, errlen)) {
			osm_init_free_plan(plan);
			return -1;
		}
		line = next;
	}
	if (!plan->n) {
		snprintf(err, errlen, "the plan has no command (one a line, arguments separated by TABs)");
		return -1;
	}
	return 0;
}

/* PATH of osmeter.NAME=PATH: non-empty, absolute, fits. */
static int set_path(char *dst, const char *name, const char *val, size_t vlen, char *err, size_t errlen)
{
	if (!vlen || val[0] != '/' || vlen >= OSM_INIT_PATH_MAX) {
		snprintf(err, errlen, "osmeter.%s=%.*s: the value must be an absolute path of under %d bytes", name,
			 (int)(vlen > 64 ? 64 : vlen), val, OSM_INIT_PATH_MAX);
		return -1;
	}
	memcpy(dst, val, vlen);
	dst[vlen] = '\0';
	return 0;
}

static int set_sleep(struct osm_init_cmdline *c, const char *val, size_t vlen, char *err, size_t errlen)
{
	char num[32], why[256];
	int64_t s;
	if (vlen >= sizeof(num)) {
		snprintf(err, errlen, "osmeter.sleep=%.24s...: not an integer of seconds; allowed: 0..86400", val);
		return -1;
	}
	memcpy(num, val, vlen);
	num[vlen] = '\0';
	if (osm_parse_int(num, 0, 86400, &s, why, sizeof(why))) {
		snprintf(err, errlen, "osmeter.sleep: %s", why);
		return -1;
	}
	c->sleep_s = (int)s;
	return 0;
}

static void note_ignored(struct osm_init_cmdline *c, const char *tok, size_t n)
{
	size_t have = strlen(c->ignored);
	if (have + n + 3 >= sizeof(c->ignored))
		return;
	snprintf(c->ignored + have, sizeof(c->ignored) - have, "%s%.*s", have ? ", " : "", (int)n, tok);
}

/* One osmeter.* token (n bytes). */
static int cmdline_token(struct osm_init_cmdline *c, const char *tok, size_t n, char *err, size_t errlen)
{
	const char *eq = memchr(tok, '=', n);
	const char *name = tok + 8;
	size_t nlen = (size_t)((eq ? eq : tok + n) - name);
	const char *val = eq ? eq + 1 : NULL;
	size_t vlen = eq ? (size_t)(tok + n - val) : 0;
#define IS(s) (nlen == strlen(s) && !memcmp(name, s, nlen))
	if (!IS("sleep") && !IS("channel") && !IS("plan")) {
		note_ignored(c, tok, eq ? (size_t)(eq - tok) : n);
		return 0;
	}
	if (!val) {
		snprintf(err, errlen, "osmeter.%.*s has no value (osmeter.%.*s=VALUE)", (int)nlen, name, (int)nlen, name);
		return -1;
	}
	if (IS("sleep"))
		return set_sleep(c, val, vlen, err, errlen);
	return set_path(IS("plan") ? c->plan : c->channel, IS("plan") ? "plan" : "channel", val, vlen, err, errlen);
#undef IS
}

int osm_init_parse_cmdline(const char *text, size_t len, struct osm_init_cmdline *c, char *err, size_t errlen)
{
	c->sleep_s = -1;
	c->channel[0] = c->plan[0] = c->ignored[0] = '\0';
	int rc = 0;
	size_t i = 0;
	while (i < len) {
		while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\0'))
			i++;
		size_t start = i;
		while (i < len && !(text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\0'))
			i++;
		size_t n = i - start;
		if (n > 8 && !memcmp(text + start, "osmeter.", 8)) {
			char why[512];
			if (cmdline_token(c, text + start, n, why, sizeof(why)) && !rc) {
				snprintf(err, errlen, "kernel command line: %s", why);
				rc = -1;
			}
		} else if (n == 8 && !memcmp(text + start, "osmeter.", 8) && !rc) {
			snprintf(err, errlen, "kernel command line: 'osmeter.' names no parameter");
			rc = -1;
		}
	}
	return rc;
}
