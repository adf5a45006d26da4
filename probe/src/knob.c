/* knob.c - see knob.h. */
#include "knob.h"

#include <stdio.h>

int osm_knob_read_int(const char *path, int fallback)
{
	FILE *f = fopen(path, "r");
	int v = fallback;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = fallback;
		fclose(f);
	}
	return v;
}

long osm_knob_read_text(const char *path, char *buf, unsigned long len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	return (long)n;
}

int osm_knob_write(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int ok = fputs(value, f) >= 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}
