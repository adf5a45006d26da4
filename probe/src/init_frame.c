/* init_frame.c - init mode's channel (init_int.h): CRC-32, the frame
 * format (init.h) and writing frames whole. */
#include "init_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "parse.h"

uint32_t osm_crc32(const void *buf, size_t len)
{
	static uint32_t table[256];
	static int ready;
	if (!ready) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		ready = 1;
	}
	const unsigned char *p = buf;
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < len; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

size_t osm_init_frame_format(char *out, size_t cap, unsigned long long seq, char kind, int cmd,
			     const void *payload, size_t len)
{
	if (len && memchr(payload, '\n', len))
		return 0;
	int head = snprintf(out, cap, "@osm1 %llu %c %d %zu %08x ", seq, kind, cmd, len,
			    (unsigned)osm_crc32(payload, len));
	if (head < 0 || (size_t)head + len + 1 > cap)
		return 0;
	if (len)
		memcpy(out + head, payload, len);
	out[(size_t)head + len] = '\n';
	return (size_t)head + len + 1;
}

/* Raw: no "\n" -> "\r\n", no echo, 8 bits; CLOCAL, so no modem line is waited on. */
static int make_raw(int fd)
{
	struct termios t;
	if (tcgetattr(fd, &t))
		return -1;
	cfmakeraw(&t);
	t.c_cflag |= CLOCAL;
	return tcsetattr(fd, TCSANOW, &t);
}

int osm_chan_open(struct osm_chan *c, const char *path, char *err, size_t errlen)
{
	char show[OSM_SHOW_LEN];
	osm_shorten(path, show, sizeof(show));
	c->fd = -1;
	c->is_tty = c->broken = 0;
	c->seq = 0;
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK | O_TRUNC);
	if (fd < 0) {
		snprintf(err, errlen, "cannot open the channel '%s': %s%s", show, strerror(errno),
			 errno == ENXIO ? " (a FIFO needs a reader)" : "");
		return -1;
	}
	if (fd < 3) {
		/* Never on stdout or stderr, where progress goes. */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		close(fd);
		if (hi < 0) {
			snprintf(err, errlen, "cannot move the channel's descriptor: %s", strerror(errno));
			return -1;
		}
		fd = hi;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		snprintf(err, errlen, "cannot make the channel '%s' blocking: %s", show, strerror(errno));
		close(fd);
		return -1;
	}
	if (isatty(fd)) {
		if (make_raw(fd)) {
			snprintf(err, errlen, "cannot make the channel '%s' raw: %s", show, strerror(errno));
			close(fd);
			return -1;
		}
		c->is_tty = 1;
	}
	c->fd = fd;
	return 0;
}

static int write_full(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (!w)
				errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int osm_chan_send(struct osm_chan *c, char kind, int cmd, const void *payload, size_t len)
{
	static char frame[OSM_INIT_PIECE + OSM_INIT_FRAME_HEAD];
	if (c->fd < 0 || c->broken)
		return -1;
	size_t n = osm_init_frame_format(frame, sizeof(frame), c->seq, kind, cmd, payload, len);
	if (!n) {
		/* Cannot happen for what init sends (lines are split on '\n',
		 * pieces are at most OSM_INIT_PIECE); never send a bad frame. */
		osm_init_progress("internal: a %c frame of %zu bytes was not sent", kind, len);
		return 0;
	}
	if (write_full(c->fd, frame, n)) {
		osm_init_progress("error: cannot write to the channel: %s", strerror(errno));
		c->broken = 1;
		return -1;
	}
	c->seq++;
	return 0;
}

int osm_chan_sendf(struct osm_chan *c, char kind, int cmd, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	size_t len = (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1;
	for (size_t i = 0; i < len; i++)
		if (msg[i] == '\n')
			msg[i] = ' ';
	return osm_chan_send(c, kind, cmd, msg, len);
}

void osm_chan_drain(struct osm_chan *c)
{
	if (c->fd < 0)
		return;
	if (c->is_tty)
		tcdrain(c->fd);
	else if (fsync(c->fd) && errno != EINVAL && errno != EROFS)
		osm_init_progress("warning: fsync of the channel: %s", strerror(errno));
}

void osm_init_progress(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* One write: the console's lines stay whole. */
	dprintf(2, "osmeter-probe init: %s\n", msg);
}
