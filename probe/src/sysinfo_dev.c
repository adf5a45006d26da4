/* sysinfo_dev.c - the device fields of the machine description: disks and
 * network interfaces. See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Devices                                                                  */

static bool keep_disk(const char *dir, const char *name)
{
	char path[PATH_LEN];
	long long sectors;
	if (strncmp(name, "loop", 4) == 0 || strncmp(name, "ram", 3) == 0)
		return false;
	/* Devices without media (empty nbd*, an empty CD drive) are size 0. */
	return si_pathf(path, sizeof(path), "%s/%s/size", dir, name) && si_read_int(path, &sectors) &&
	       sectors > 0;
}

void si_w_disks(struct osm_json *j, const char *key)
{
	struct si_names d;
	if (!si_list_dir("/sys/block", &d, keep_disk)) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN], buf[SMALL];
		long long v = 0;
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "name", d.name[i]);
		/* Trap: "size" counts 512-byte sectors whatever the block size. */
		bool ok = si_pathf(path, sizeof(path), "/sys/block/%s/size", d.name[i]) && si_read_int(path, &v);
		si_json_int_or_null(j, "size_bytes", ok, v * 512);
		ok = si_pathf(path, sizeof(path), "/sys/block/%s/queue/rotational", d.name[i]) &&
		     si_read_int(path, &v);
		if (ok)
			osm_json_bool(j, "rotational", v != 0);
		else
			osm_json_null(j, "rotational");
		/* virtio disks have no model; SCSI pads it with blanks (trimmed). */
		ok = si_pathf(path, sizeof(path), "/sys/block/%s/device/model", d.name[i]) &&
		     si_read_file_trim(path, buf, sizeof(buf)) && buf[0];
		osm_json_str(j, "model", ok ? buf : NULL);
		ok = si_pathf(path, sizeof(path), "/sys/block/%s/queue/scheduler", d.name[i]) &&
		     si_read_bracketed_choice(path, buf, sizeof(buf));
		osm_json_str(j, "scheduler", ok ? buf : NULL);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

/* Trap: /sys/class/net holds the regular file "bonding_masters" when the
 * bonding module is loaded; interfaces are (symlinks to) directories. */
static bool keep_nic(const char *dir, const char *name)
{
	char path[PATH_LEN];
	struct stat st;
	return si_pathf(path, sizeof(path), "%s/%s", dir, name) && stat(path, &st) == 0 &&
	       S_ISDIR(st.st_mode);
}

void si_w_nics(struct osm_json *j, const char *key)
{
	struct si_names d;
	if (!si_list_dir("/sys/class/net", &d, keep_nic)) {
		osm_json_null(j, key);
		return;
	}
	osm_json_arr_begin(j, key);
	for (size_t i = 0; i < d.n; i++) {
		char path[PATH_LEN], buf[PATH_LEN];
		long long v = 0;
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "name", d.name[i]);
		bool ok = si_pathf(path, sizeof(path), "/sys/class/net/%s/operstate", d.name[i]) &&
			  si_read_file_trim(path, buf, sizeof(buf));
		osm_json_str(j, "operstate", ok ? buf : NULL);
		/* Reading speed fails (EINVAL) when the link is down, and is -1
		 * for virtual NICs: both null. */
		ok = si_pathf(path, sizeof(path), "/sys/class/net/%s/speed", d.name[i]) &&
		     si_read_int(path, &v) && v > 0;
		si_json_int_or_null(j, "speed_mbps", ok, v);
		ok = si_pathf(path, sizeof(path), "/sys/class/net/%s/mtu", d.name[i]) && si_read_int(path, &v);
		si_json_int_or_null(j, "mtu", ok, v);
		ssize_t n = -1;
		if (si_pathf(path, sizeof(path), "/sys/class/net/%s/device/driver", d.name[i]))
			n = readlink(path, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			const char *base = strrchr(buf, '/');
			osm_json_str(j, "driver", base ? base + 1 : buf);
		} else {
			osm_json_null(j, "driver");
		}
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}
