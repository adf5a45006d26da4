/* init.c - init mode's steps (init.h, docs/probe-init.md): the command
 * line's files first, then the mounts, the kernel command line, the
 * channel (H), the plan, each command (init_run.c), D, power off. PID 1
 * never returns: the kernel panics when init exits. */
#include "init.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch/arch.h"
#include "build_info.h"
#include "cli.h"
#include "init_int.h"
#include "log.h"

#define DEFAULT_CHANNEL "/dev/ttyS1"
#define DEFAULT_PLAN "/osmeter/plan"
#define EARLY_MAX 16

struct init_state {
	struct osm_chan chan;
	int chan_tried;
	osm_dispatch_fn dispatch;
	const char *opt_plan, *opt_channel, *opt_cmdline;
	char *plan_text, *cmdline_text; /* read whole (osm_init_read_bounded) */
	size_t plan_len, cmdline_len;
	char plan_err[512], cmdline_err[1024]; /* why it could not be read or parsed; "" if fine */
	char early[EARLY_MAX][1024];     /* messages before the channel opened */
	int n_early;
	int n_run;                      /* commands that ended with an X frame */
	struct osm_plan plan;
	struct osm_init_cmdline cl;
};

static struct init_state state = {.chan = {.fd = -1}, .cl = {.sleep_s = -1}};

/* A message of init: on the console, and as an L frame once the channel
 * is open (kept until then). */
static OSM_PRINTF(2, 3) void note(struct init_state *st, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	osm_init_progress("%s", msg);
	if (st->chan.fd >= 0)
		osm_chan_sendf(&st->chan, 'L', 0, "%s", msg);
	else if (st->n_early < EARLY_MAX)
		snprintf(st->early[st->n_early++], sizeof(st->early[0]), "%s", msg);
}

/* Opens the channel once (the command line's, the kernel's, the default),
 * then sends H and the messages kept so far. */
static int open_channel(struct init_state *st)
{
	if (st->chan.fd >= 0 || st->chan_tried)
		return st->chan.fd >= 0 ? 0 : -1;
	st->chan_tried = 1;
	const char *path = st->opt_channel ? st->opt_channel : st->cl.channel[0] ? st->cl.channel : DEFAULT_CHANNEL;
	char err[512];
	if (osm_chan_open(&st->chan, path, err, sizeof(err))) {
		osm_init_progress("error: %s", err);
		return -1;
	}
	osm_chan_sendf(&st->chan, 'H', 0, "osmeter-probe %s %s", OSM_VERSION, OSM_ARCH_NAME);
	for (int i = 0; i < st->n_early; i++)
		osm_chan_sendf(&st->chan, 'L', 0, "%s", st->early[i]);
	st->n_early = 0;
	return 0;
}

static OSM_NORETURN void power_off(struct init_state *st)
{
	if (st->chan.fd >= 0 && !st->chan.broken) {
		osm_chan_sendf(&st->chan, 'D', 0, "%d", st->n_run);
		osm_chan_drain(&st->chan);
	}
	osm_init_progress("powering off");
	sync();
	reboot(RB_POWER_OFF);
	osm_init_progress("error: reboot(RB_POWER_OFF) failed: %s", strerror(errno));
	_exit(OSM_EXIT_CANNOT_RUN);
}

/* An error that ends init: L (the channel is opened for it if it can be), D, power off. */
static OSM_NORETURN OSM_PRINTF(2, 3) void fatal(struct init_state *st, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(st, "error: %s", msg);
	if (st->chan.fd < 0 && !open_channel(st))
		note(st, "(the error above happened before the channel was open)");
	power_off(st);
}

/* --plan FILE, --channel PATH, --cmdline FILE (testing: read instead of
 * /proc/cmdline); also --opt=VALUE. Words not starting with '-' are
 * ignored: the kernel passes boot parameters it does not know to init. */
static void parse_options(struct init_state *st, int argc, char **argv)
{
	static const char *const names[] = {"--plan", "--channel", "--cmdline"};
	const char **slots[] = {&st->opt_plan, &st->opt_channel, &st->opt_cmdline};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		size_t k = 0, n = 0;
		for (; k < 3; k++) {
			n = strlen(names[k]);
			if (!strncmp(a, names[k], n) && (a[n] == '\0' || a[n] == '='))
				break;
		}
		if (k == 3) {
			if (a[0] == '-')
				fatal(st, "unknown option '%.200s'; usage: osmeter-probe init [--plan FILE] [--channel PATH]", a);
			note(st, "ignored argument '%.200s'", a);
			continue;
		}
		const char *val = a[n] == '=' ? a + n + 1 : i + 1 < argc ? argv[++i] : NULL;
		if (!val || !*val)
			fatal(st, "%s needs a value", names[k]);
		if (*slots[k])
			fatal(st, "%s is given twice", names[k]);
		*slots[k] = val;
	}
}

/* Step 1: what the command line names, before anything is mounted over it. */
static void read_given(struct init_state *st)
{
	if (st->opt_plan && osm_init_read_bounded(st->opt_plan, OSM_INIT_MAX_BYTES, &st->plan_text, &st->plan_len,
						  st->plan_err, sizeof(st->plan_err)))
		osm_init_progress("error: plan: %s", st->plan_err);
	char err[512];
	if (st->opt_cmdline && osm_init_read_bounded(st->opt_cmdline, OSM_INIT_MAX_BYTES, &st->cmdline_text,
						     &st->cmdline_len, err, sizeof(err)))
		snprintf(st->cmdline_err, sizeof(st->cmdline_err), "--cmdline: %s", err);
	if (st->opt_channel && open_channel(st))
		power_off(st);
}

static void mount_one(struct init_state *st, const char *type, const char *dir, unsigned long flags,
		      const char *data)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		note(st, "cannot make %s: %s", dir, strerror(errno));
	if (mount(type, dir, type, flags, data))
		note(st, "cannot mount %s on %s: %s%s", type, dir, strerror(errno),
		     errno == EBUSY ? " (already mounted there)" : "");
}

/* fds 0, 1 and 2 open (the console, else /dev/null, else the root directory),
 * so that no file init opens lands on stdout or stderr. */
static void std_fds(void)
{
	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int got = open("/dev/console", O_RDWR | O_NOCTTY);
		if (got < 0)
			got = open("/dev/null", O_RDWR);
		if (got < 0)
			got = open("/", O_RDONLY | O_DIRECTORY);
		if (got >= 0 && got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
}

static void dir_env(const char *name)
{
	const char *v = getenv(name);
	struct stat sb;
	if (!v || !*v || stat(v, &sb) || !S_ISDIR(sb.st_mode))
		setenv(name, "/tmp", 1);
}

/* The loopback, which a fresh kernel leaves down: net.* talks over it. */
static void loopback_up(struct init_state *st)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		note(st, "cannot bring up lo: socket: %s", strerror(errno));
		return;
	}
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr)) {
		note(st, "cannot bring up lo: SIOCGIFFLAGS: %s", strerror(errno));
	} else if (!(ifr.ifr_flags & IFF_UP)) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr))
			note(st, "cannot bring up lo: SIOCSIFFLAGS: %s", strerror(errno));
		else
			osm_init_progress("lo up");
	}
	close(fd);
}

/* A kernel without a hostname calls itself "(none)": the guest is named
 * for what it is (a host's own name, under unshare, is left alone). */
static void name_guest(struct init_state *st)
{
	char name[256] = "";
	if (gethostname(name, sizeof(name) - 1) == 0 && strcmp(name, "(none)") == 0 &&
	    sethostname("osmeter-guest", strlen("osmeter-guest")))
		note(st, "cannot set the hostname: %s", strerror(errno));
}

/* Step 2: the file systems a probe command reads or writes, the loopback; the environment. */
static void mount_all(struct init_state *st)
{
	mount_one(st, "proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_one(st, "sysfs", "/sys", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_one(st, "devtmpfs", "/dev", MS_NOSUID, "mode=0755");
	mount_one(st, "tmpfs", "/tmp", MS_NOSUID | MS_NODEV, "mode=1777");
	loopback_up(st);
	name_guest(st);
	std_fds();
	setenv("PATH", "/:/bin:/usr/bin", 0);
	dir_env("HOME");
	dir_env("TMPDIR");
}

/* Step 3: the kernel command line (or --cmdline's file). Returns -1 when
 * it is malformed (the reason in st->cmdline_err). */
static int read_cmdline(struct init_state *st)
{
	if (st->opt_cmdline && !st->cmdline_text)
		return -1;
	if (!st->cmdline_text && osm_init_read_bounded("/proc/cmdline", OSM_INIT_MAX_BYTES, &st->cmdline_text,
						       &st->cmdline_len, st->cmdline_err, sizeof(st->cmdline_err))) {
		note(st, "kernel command line: %s; no osmeter.* parameters", st->cmdline_err);
		st->cmdline_err[0] = '\0';
		return 0;
	}
	return osm_init_parse_cmdline(st->cmdline_text, st->cmdline_len, &st->cl, st->cmdline_err,
				      sizeof(st->cmdline_err));
}

/* Step 5: the plan, read (if --plan did not) and parsed. */
static void load_plan(struct init_state *st)
{
	const char *path = st->opt_plan ? st->opt_plan : st->cl.plan[0] ? st->cl.plan : DEFAULT_PLAN;
	if (!st->opt_plan && osm_init_read_bounded(path, OSM_INIT_MAX_BYTES, &st->plan_text, &st->plan_len,
						   st->plan_err, sizeof(st->plan_err)))
		fatal(st, "plan: %s", st->plan_err);
	if (!st->plan_text)
		fatal(st, "plan: %s", st->plan_err);
	char err[512];
	if (osm_init_parse_plan(st->plan_text, st->plan_len, &st->plan, err, sizeof(err)))
		fatal(st, "plan '%.200s': %s", path, err);
	note(st, "plan '%.200s': %d command%s", path, st->plan.n, st->plan.n == 1 ? "" : "s");
}

static void sleep_for(struct init_state *st, int s)
{
	note(st, "sleeping %d s (osmeter.sleep=%d)", s, s);
	struct timespec t = {.tv_sec = s};
	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* A command's arguments on one line, cut at len. */
static void describe(int argc, char **argv, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = 1; i < argc && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s%s", i > 1 ? " " : "", argv[i]);
	if (n >= len && len > 4)
		memcpy(out + len - 4, "...", 4);
}

/* Step 6: every command, in order; a failed one does not stop the next. */
static void run_plan(struct init_state *st)
{
	for (int i = 0; i < st->plan.n; i++) {
		char what[320], err[256];
		describe(st->plan.argc[i], st->plan.argv[i], what, sizeof(what));
		osm_init_progress("command %d/%d: %s", i + 1, st->plan.n, what);
		int status;
		int rc = osm_init_run_command(&st->chan, i + 1, st->plan.argc[i], st->plan.argv[i], st->dispatch,
					      &status, err, sizeof(err));
		if (rc)
			fatal(st, "%s", err);
		st->n_run = i + 1;
		if (WIFSIGNALED(status))
			osm_init_progress("command %d killed by signal %d", i + 1, WTERMSIG(status));
		else
			osm_init_progress("command %d exited %d", i + 1, WEXITSTATUS(status));
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int osm_init_main(int argc, char **argv, osm_dispatch_fn dispatch)
{
	if (getpid() != 1) {
		osm_err("init mode runs only as PID 1 (a VM's /init, or a new PID namespace: "
			"unshare --mount --pid --fork)");
		return OSM_EXIT_USAGE;
	}
	struct init_state *st = &state;
	st->dispatch = dispatch;
	std_fds();
	signal(SIGPIPE, SIG_IGN);
	osm_init_progress("osmeter-probe %s %s as PID 1", OSM_VERSION, OSM_ARCH_NAME);
	parse_options(st, argc, argv);
	read_given(st);
	mount_all(st);
	int bad_cmdline = read_cmdline(st);
	if (open_channel(st))
		power_off(st);
	if (bad_cmdline)
		fatal(st, "%s", st->cmdline_err);
	if (st->cl.ignored[0])
		note(st, "kernel command line: ignored unknown %s", st->cl.ignored);
	load_plan(st);
	if (st->cl.sleep_s > 0)
		sleep_for(st, st->cl.sleep_s);
	run_plan(st);
	power_off(st);
}
