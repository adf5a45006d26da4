/* sysinfo_audit.c - the audit fields of the machine description: is audit
 * on, how many rules it has, and did this boot ever turn it on. See
 * sysinfo_int.h and docs/schema.md.
 *
 * The probe only ASKS the kernel (AUDIT_GET, AUDIT_LIST_RULES over the audit
 * netlink socket); it never sends AUDIT_SET or anything else that changes
 * audit. Trap: once audit has been on in a boot (audit_ever_enabled), every
 * task created afterwards gets an audit context and every system call pays
 * for it, even after `auditctl -e 0`, until the next reboot. That is why
 * audit_ever_enabled is recorded, and why nothing here may turn audit on.
 *
 * The kernel answers audit requests only from the initial user and PID
 * namespaces and with CAP_AUDIT_CONTROL; elsewhere the fields are null with
 * the reason (null_reasons). Every exchange is bounded in time. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef NETLINK_AUDIT
#define NETLINK_AUDIT 9
#endif
/* linux/audit.h: the two requests the probe sends (read-only ones). */
#define OSM_AUDIT_GET 1000
#define OSM_AUDIT_LIST_RULES 1013
#define AUDIT_SEQ 0x05e7
#define AUDIT_WAIT_MS 1000
#define AUDIT_MAX_RULES 1000000
#define KMSG_WAIT_MS 500
#define KMSG_MAX_RECORDS 1000000

/* The first members of struct audit_status (linux/audit.h), the same in
 * every kernel since 2.6. */
struct audit_head {
	uint32_t mask, enabled, failure, pid, rate_limit, backlog_limit, lost, backlog;
};

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* A reply's handler: 1 when the answer is complete, 0 for more, -errno. */
typedef int (*audit_reply)(uint16_t type, const void *data, size_t len, void *ctx);

/* The replies in one datagram, handed to `on`; 0 when it wants more. */
static int audit_parse(const char *buf, size_t n, audit_reply on, void *ctx)
{
	size_t off = 0;
	while (n - off >= sizeof(struct nlmsghdr)) {
		struct nlmsghdr h;
		memcpy(&h, buf + off, sizeof(h));
		if (h.nlmsg_len < sizeof(h))
			return -EPROTO;
		size_t len = h.nlmsg_len <= n - off ? h.nlmsg_len : n - off; /* cut short: what came */
		const char *data = buf + off + NLMSG_HDRLEN;
		size_t dlen = len > NLMSG_HDRLEN ? len - NLMSG_HDRLEN : 0;
		if (h.nlmsg_seq == AUDIT_SEQ) {
			int r;
			if (h.nlmsg_type == NLMSG_ERROR) {
				int err = 0;
				if (dlen >= sizeof(err))
					memcpy(&err, data, sizeof(err));
				r = err < 0 ? err : 0; /* 0: an acknowledgement */
			} else {
				r = on(h.nlmsg_type, data, dlen, ctx);
			}
			if (r)
				return r;
		}
		off += NLMSG_ALIGN(len);
		if (off >= n)
			break;
	}
	return 0;
}

/* Sends one read-only request (no payload) and hands its replies to `on`
 * until it says they are complete: 0, or -errno (-ETIMEDOUT after
 * AUDIT_WAIT_MS). */
static int audit_ask(uint16_t type, audit_reply on, void *ctx)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
	if (fd < 0)
		return -errno;
	struct nlmsghdr req = {.nlmsg_len = NLMSG_LENGTH(0), .nlmsg_type = type,
			       .nlmsg_flags = NLM_F_REQUEST, .nlmsg_seq = AUDIT_SEQ};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	int rc = -ETIMEDOUT;
	if (sendto(fd, &req, req.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	long long end = now_ms() + AUDIT_WAIT_MS;
	static char buf[1 << 16]; /* one rule is at most a few KiB */
	for (long long left; (left = end - now_ms()) > 0;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int pr = poll(&p, 1, (int)left);
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			break;
		struct sockaddr_nl from;
		socklen_t flen = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (from.nl_pid != 0)
			continue; /* not from the kernel */
		int r = audit_parse(buf, (size_t)n, on, ctx);
		if (r) {
			rc = r < 0 ? r : 0;
			break;
		}
	}
	close(fd);
	return rc;
}

static int on_status(uint16_t type, const void *data, size_t len, void *ctx)
{
	if (type != OSM_AUDIT_GET)
		return 0;
	struct audit_head *st = ctx;
	memset(st, 0, sizeof(*st));
	memcpy(st, data, len < sizeof(*st) ? len : sizeof(*st));
	return len >= offsetof(struct audit_head, backlog) ? 1 : -EPROTO;
}

static int on_rule(uint16_t type, const void *data, size_t len, void *ctx)
{
	(void)data;
	(void)len;
	long long *n = ctx;
	if (type == NLMSG_DONE)
		return 1;
	if (type == OSM_AUDIT_LIST_RULES && ++*n > AUDIT_MAX_RULES)
		return -E2BIG;
	return 0;
}

/* Why a request failed, in words. */
static void audit_why(int err, const char *what, char *why, size_t len)
{
	switch (-err) {
	case EPERM:
		snprintf(why, len, "%s refused (EPERM): it needs CAP_AUDIT_CONTROL (root) in the initial PID "
			 "namespace", what);
		break;
	case ECONNREFUSED:
		snprintf(why, len, "%s refused (ECONNREFUSED): the kernel answers audit requests from the "
			 "initial user namespace only (a container?)", what);
		break;
	case ETIMEDOUT:
		snprintf(why, len, "no answer to %s within %d ms", what, AUDIT_WAIT_MS);
		break;
	case E2BIG:
		snprintf(why, len, "more than %d rules: not counted further", AUDIT_MAX_RULES);
		break;
	default:
		snprintf(why, len, "%s failed: %s", what, strerror(-err));
	}
}

/* The audit status: 0, or -errno (-EPROTONOSUPPORT: the kernel has no audit
 * netlink socket, CONFIG_AUDIT off or audit=0 on its command line). */
static int audit_status(struct audit_head *st)
{
	return audit_ask(OSM_AUDIT_GET, on_status, st);
}

#define NO_AUDIT "the kernel has no audit netlink socket (CONFIG_AUDIT off, or audit=0 on the command line)"

void si_w_audit_enabled(struct osm_json *j, const char *key)
{
	struct audit_head st;
	int rc = audit_status(&st);
	char why[SMALL * 2];
	if (rc == 0) {
		osm_json_int(j, key, st.enabled);
	} else if (rc == -EPROTONOSUPPORT) {
		osm_json_int(j, key, 0); /* audit cannot be on in this boot */
	} else {
		audit_why(rc, "AUDIT_GET", why, sizeof(why));
		si_null(j, key, why);
	}
}

void si_w_audit_rules(struct osm_json *j, const char *key)
{
	long long n = 0;
	int rc = audit_ask(OSM_AUDIT_LIST_RULES, on_rule, &n);
	char why[SMALL * 2];
	if (rc == 0) {
		osm_json_int(j, key, n);
	} else if (rc == -EPROTONOSUPPORT) {
		osm_json_int(j, key, 0); /* rules are only added over that socket */
	} else {
		audit_why(rc, "AUDIT_LIST_RULES", why, sizeof(why));
		si_null(j, key, why);
	}
}

/* ------------------------------------------------------------------------ */
/* Did this boot ever turn audit on?                                        */
/*
 * The kernel keeps audit_ever_enabled to itself. What shows it:
 *   1. audit=N on the command line: N != 0 turns audit on at boot; 0 turns
 *      it off until reboot (no netlink socket: nothing can turn it on).
 *   2. AUDIT_GET: audit on now (enabled 1 or 2); no audit socket at all.
 *   3. The kernel log (/dev/kmsg, root): with no audit daemon, audit records
 *      go to it, and some exist only while audit is on: CONFIG_CHANGE
 *      (type=1305: the kernel logs configuration changes only then), SYSCALL
 *      (type=1300), "audit_enabled=1" (or 2) at initialisation.
 * "Never" needs the whole story: the log still holding audit's start
 * ("state=initialized") and everything after it (it drops the oldest
 * records first), read to its end; AUDIT_GET saying audit is off, no daemon
 * registered (its records go to the daemon, not to the log) and no record
 * lost. Anything less is null, with the reason. Not seen: a daemon that was
 * sent the records while audit was on, then turned it off and went away. */

struct kmsg_scan {
	int err;        /* errno of open/read, 0 */
	bool start;     /* audit's "state=initialized" record seen */
	bool gap;       /* records overwritten while read, after the start */
	bool complete;  /* read to the end */
	bool evidence;  /* a record that exists only while audit is on */
};

/* One /dev/kmsg record, "PRI,SEQ,USEC,FLAGS;TEXT\n[ KEY=VALUE\n...]": what
 * it tells of audit (SI_KMSG_* bits). Only the kernel's records count
 * (facility 0): user space may write to /dev/kmsg too. */
int si_audit_kmsg_record(const char *rec)
{
	const char *semi = strchr(rec, ';');
	char *end;
	long pri = strtol(rec, &end, 10);
	if (!semi || end == rec || *end != ',' || pri < 0 || pri >> 3 != 0)
		return 0;
	char text[SMALL * 8];
	si_copy_str(text, sizeof(text), semi + 1);
	char *nl = strchr(text, '\n');
	if (nl)
		*nl = '\0';
	if (strncmp(text, "audit: ", 7) != 0)
		return 0;
	int bits = 0;
	if (strstr(text, "state=initialized"))
		bits |= SI_KMSG_AUDIT_START;
	if (strstr(text, "type=1305 ") || strstr(text, "type=1300 ") || strstr(text, "audit_enabled=1") ||
	    strstr(text, "audit_enabled=2"))
		bits |= SI_KMSG_AUDIT_ON;
	return bits;
}

static void kmsg_scan(struct kmsg_scan *k)
{
	memset(k, 0, sizeof(*k));
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		k->err = errno;
		return;
	}
	static char rec[8193]; /* a record is at most 8 KiB (CONSOLE_EXT_LOG_MAX) */
	long long end = now_ms() + KMSG_WAIT_MS;
	for (long n = 0; n < KMSG_MAX_RECORDS && !k->evidence; n++) {
		if ((n & 255) == 0 && now_ms() > end)
			break;
		ssize_t r = read(fd, rec, sizeof(rec) - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EPIPE) {
			k->gap |= k->start; /* overwritten while read: the next read goes on */
			continue;
		}
		if (r <= 0) {
			k->complete = r == 0 || errno == EAGAIN;
			k->err = r < 0 && errno != EAGAIN ? errno : 0;
			break;
		}
		rec[r] = '\0';
		int bits = si_audit_kmsg_record(rec);
		k->start |= (bits & SI_KMSG_AUDIT_START) != 0;
		k->evidence |= (bits & SI_KMSG_AUDIT_ON) != 0;
	}
	close(fd);
}

struct ever {
	int v;              /* 1 yes, 0 no, -1 unknown */
	const char *source; /* cmdline, audit_status, kmsg */
	char why[SMALL * 2];
};

/* The verdict from AUDIT_GET and the kernel log (after the command line). */
static void ever_from_log(const struct audit_head *st, int rc, struct ever *e)
{
	struct kmsg_scan k;
	kmsg_scan(&k);
	e->source = "kmsg";
	if (k.evidence) {
		e->v = 1;
	} else if (k.err) {
		snprintf(e->why, sizeof(e->why), "cannot read /dev/kmsg (%s; it needs CAP_SYSLOG where "
			 "kernel.dmesg_restrict is 1)", strerror(k.err));
	} else if (rc != 0) {
		audit_why(rc, "AUDIT_GET", e->why, sizeof(e->why));
		si_copy_str(e->why + strlen(e->why), sizeof(e->why) - strlen(e->why),
			    ": without it an audit daemon taking the records cannot be ruled out");
	} else if (st->pid) {
		/* No pid or count in a reason: compare would list it as a difference. */
		si_copy_str(e->why, sizeof(e->why), "an audit daemon is registered (AUDIT_GET pid) and takes the "
			    "audit records, so the kernel log cannot tell");
	} else if (st->lost) {
		si_copy_str(e->why, sizeof(e->why), "audit records were lost (AUDIT_GET lost): the kernel log may "
			    "miss the one that would tell");
	} else if (!k.complete) {
		snprintf(e->why, sizeof(e->why), "the kernel log was not read to its end within %d ms",
			 KMSG_WAIT_MS);
	} else if (!k.start || k.gap) {
		si_copy_str(e->why, sizeof(e->why), "the kernel log no longer holds audit's start "
			    "(state=initialized): older records were overwritten");
	} else {
		e->v = 0;
	}
}

/* audit= on the command line: the kernel takes 0/1 and off/on; -1 for
 * anything else (then the other sources decide). */
static int cmdline_audit(const char *arg)
{
	if (!strcasecmp(arg, "on"))
		return 1;
	if (!strcasecmp(arg, "off"))
		return 0;
	char *end;
	long v = strtol(arg, &end, 0);
	return end != arg && !*end ? v != 0 : -1;
}

/* Once per process: the two fields share it (two AUDIT_GETs and kernel-log
 * scans of up to 500 ms each otherwise). */
static void audit_ever(struct ever *e)
{
	static struct ever known;
	static int done;
	if (done) {
		*e = known;
		return;
	}
	done = 1;
	char arg[SMALL];
	struct audit_head st;
	e->v = -1;
	e->source = NULL;
	e->why[0] = '\0';
	if (si_cmdline_param("audit", arg, sizeof(arg)) && cmdline_audit(arg) >= 0) {
		e->v = cmdline_audit(arg);
		e->source = "cmdline";
		known = *e;
		return;
	}
	int rc = audit_status(&st);
	if (rc == 0 && st.enabled) {
		e->v = 1;
		e->source = "audit_status";
	} else if (rc == -EPROTONOSUPPORT) {
		e->v = 0;
		e->source = "audit_status";
	} else {
		ever_from_log(&st, rc, e);
	}
	known = *e;
}

void si_w_audit_ever_enabled(struct osm_json *j, const char *key)
{
	struct ever e;
	audit_ever(&e);
	if (e.v >= 0)
		osm_json_bool(j, key, e.v == 1);
	else
		si_null(j, key, e.why);
}

void si_w_audit_ever_enabled_source(struct osm_json *j, const char *key)
{
	struct ever e;
	audit_ever(&e);
	if (e.v >= 0)
		osm_json_str(j, key, e.source);
	else
		si_null(j, key, e.why);
}
