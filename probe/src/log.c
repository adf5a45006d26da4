/* log.c - see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

int osm_log_quiet;

static void vlog(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "osmeter-probe: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void osm_warn(const char *fmt, ...)
{
	if (osm_log_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void osm_info(const char *fmt, ...)
{
	if (osm_log_quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void osm_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}
