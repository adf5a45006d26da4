/* sysinfo_int.h - what the parts of the machine description share; not for
 * use outside sysinfo*.c.
 *
 * sysinfo.c holds the one table of fields and the emitters (JSON and text);
 * each field's writer lives with its source:
 *   sysinfo_util.c    file, sysfs, cpu-list and /proc/cpuinfo readers
 *   sysinfo_kernel.c  identity, kernel, kernel settings, the probe's build
 *   sysinfo_cpu.c     CPU model, topology, caches, frequency, idle
 *   sysinfo_mem.c     memory, huge pages, KSM, NUMA balancing, zswap
 *   sysinfo_cgroup.c  cgroup limits of the run (v1 and v2)
 *   sysinfo_audit.c   audit: on, rules, ever on in this boot
 *   sysinfo_sec.c     seccomp, lockdown, LSMs, BPF programs, tracers
 *   sysinfo_dev.c     disks and network interfaces
 *   sysinfo_virt.c    hypervisor, qemu-user emulation, container
 *   sysinfo_id.c      the machine's identity (machine_id)
 * Rules (all parts): fixed buffers only; a missing or unreadable file gives
 * null and no message (a writer that knows why says it with si_null, and
 * null_reasons lists it); every read is bounded in size and time; nothing is
 * cached between calls. */
#ifndef OSM_SYSINFO_INT_H
#define OSM_SYSINFO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "compiler.h"
#include "emit.h"

#if defined(__x86_64__) || defined(__i386__)
#define OSM_X86 1
#endif

#define SMALL 256          /* one sysfs value */
#define MEDIUM 4096        /* a longer file: /proc/cmdline, vulnerability text */
#define LINE 16384         /* one /proc/cpuinfo line: x86 "flags" is ~2 KB */
#define PATH_LEN 512
#define NAME_LEN 64
#define MAX_ENTRIES 256    /* disks, NICs, vulnerabilities listed at most */
#define MAX_PACKAGES 256
#define MAX_ARM_CORES 8    /* distinct core types (big.LITTLE) */

/* A field's writer: emits the value (or null) as member `key`. */
typedef void (*si_field_writer)(struct osm_json *j, const char *key);

/* --- sysinfo_util.c ---------------------------------------------------- */

/* snprintf into a path buffer; false when it did not fit. */
bool si_pathf(char *buf, size_t len, const char *fmt, ...) OSM_PRINTF(3, 4);
/* Copies s, cut to len - 1 bytes. */
void si_copy_str(char *out, size_t len, const char *s);
/* Replaces every byte that is not part of valid UTF-8 with '?'. */
void si_sanitize_utf8(char *s);
/* Reads at most len bytes of a file; false when it cannot be opened or read. */
bool si_read_file_raw(const char *path, void *buf, size_t len, size_t *got);
/* A text file, whitespace-trimmed, valid UTF-8, cut at len - 1 bytes. */
bool si_read_file_trim(const char *path, char *buf, size_t len);
bool si_parse_ll(const char *s, long long *v);
bool si_read_int(const char *path, long long *v);
/* The active choice of a selector: "always [madvise] never" -> "madvise". */
bool si_read_marked_choice(const char *path, char open, char close,
			   char *out, size_t len);
bool si_read_bracketed_choice(const char *path, char *out, size_t len);
void si_json_int_or_null(struct osm_json *j, const char *key, bool ok, long long v);
/* A file's content, integer or bracketed choice as the value, or null. */
void si_json_file_str(struct osm_json *j, const char *key, const char *path);
void si_json_file_int(struct osm_json *j, const char *key, const char *path);
void si_json_file_choice(struct osm_json *j, const char *key, const char *path);
/* Writes the whitespace-separated words of s as a JSON array. */
void si_json_words(struct osm_json *j, const char *key, char *s, bool drop_last);

/* Why a field is null: sysinfo.c calls si_reasons_reset() before each walk
 * over the table and si_reason_field(key) before each field's writer;
 * si_null() writes null and keeps its reason under that field's key (the
 * first one only); si_w_null_reasons writes them all (the last field). */
void si_reasons_reset(void);
void si_reason_field(const char *key);
void si_null(struct osm_json *j, const char *key, const char *why);
void si_w_null_reasons(struct osm_json *j, const char *key);

/* Mount tables: the kernel's octal escapes undone in place; the mount point
 * of the first mount of a file system type (/proc/self/mounts). */
void si_unescape_mount(char *s);
bool si_mount_point(const char *fstype, char *out, size_t len);
/* The lines of a file, read to at most cap bytes; false when unreadable or
 * longer. */
bool si_count_lines(const char *path, size_t cap, long long *lines);

/* Sorted names of a directory's entries that keep() accepts. */
struct si_names {
	size_t n;
	char name[MAX_ENTRIES][NAME_LEN];
};

/* A kernel cpu list, "0-3,8,10-11". */
struct si_cpulist {
	const char *p;
	long cur, last;
};

bool si_list_dir(const char *path, struct si_names *out,
		 bool (*keep)(const char *dir, const char *name));
void si_cpulist_init(struct si_cpulist *it, const char *s);
bool si_cpulist_next(struct si_cpulist *it, long *cpu);
long si_cpulist_count(const char *s);

/* /proc/cpuinfo (its format depends on the architecture; under qemu-user it
 * is the host's): one whole line, cut when longer than the buffer; the
 * value of "key<blanks>: value"; the first line with this key. */
bool si_read_line(FILE *f, char *buf, size_t len, bool *cut);
char *si_cpuinfo_match(char *line, const char *key);
bool si_cpuinfo_value(const char *key, char *out, size_t len, bool *cut_out);
bool si_cpuinfo_has(const char *key);

/* --- sysinfo_kernel.c readers (tested by probe/tests/test_sysinfo.c) --- */

/* NAME=value on the kernel command line (/proc/cmdline, before "--"). */
bool si_cmdline_param(const char *name, char *out, size_t len);
/* 1 when the file reads 1, 0 when it reads 0 or does not exist, -1 otherwise. */
int si_flag_file(const char *path);
/* NAME=<integer> in a kernel config file; false when absent or unreadable. */
bool si_config_int(const char *path, const char *name, long long *v);

/* --- sysinfo_audit.c reader (tested by probe/tests/test_sysinfo.c) ---- */

/* What one /dev/kmsg record tells of audit: its start ("state=initialized"),
 * and a record that exists only while audit is on (type=1305 CONFIG_CHANGE,
 * type=1300 SYSCALL, audit_enabled=1 or 2). Kernel records only. */
#define SI_KMSG_AUDIT_START 1
#define SI_KMSG_AUDIT_ON 2
int si_audit_kmsg_record(const char *rec);

/* --- sysinfo_id.c ----------------------------------------------------- */

/* osmeter's application-specific ID of the first of `files` that holds a
 * machine ID (32 hex digits, not all zero), as 32 lowercase hex digits into
 * out; false when none does. */
bool si_machine_app_id(const char *const *files, size_t n, char out[33]);

/* --- field writers, by source ----------------------------------------- */

/* sysinfo_kernel.c */
void si_w_hostname(struct osm_json *j, const char *key);
void si_w_os(struct osm_json *j, const char *key);
void si_w_kernel_release(struct osm_json *j, const char *key);
void si_w_kernel_version(struct osm_json *j, const char *key);
void si_w_arch(struct osm_json *j, const char *key);
void si_w_kernel_cmdline(struct osm_json *j, const char *key);
void si_w_preemption(struct osm_json *j, const char *key);
void si_w_preemption_source(struct osm_json *j, const char *key);
void si_w_realtime(struct osm_json *j, const char *key);
void si_w_kernel_hz(struct osm_json *j, const char *key);
/* HZ from a /proc/timer_list (sysinfo_kernel.c); false when it cannot tell. */
bool si_hz_from_timer_list(const char *path, long long *hz);
void si_w_mitigations(struct osm_json *j, const char *key);
void si_w_clocksource(struct osm_json *j, const char *key);
void si_w_available_clocksources(struct osm_json *j, const char *key);
void si_w_perf_event_paranoid(struct osm_json *j, const char *key);
void si_w_aslr(struct osm_json *j, const char *key);
void si_w_libc(struct osm_json *j, const char *key);
void si_w_build_compiler(struct osm_json *j, const char *key);
void si_w_build_flags(struct osm_json *j, const char *key);
void si_w_build_type(struct osm_json *j, const char *key);
void si_w_build_arch(struct osm_json *j, const char *key);
void si_w_build_static(struct osm_json *j, const char *key);

/* sysinfo_cpu.c */
void si_w_cpu_model(struct osm_json *j, const char *key);
void si_w_cpu_vendor(struct osm_json *j, const char *key);
void si_w_board(struct osm_json *j, const char *key);
void si_w_cpu_flags(struct osm_json *j, const char *key);
void si_w_cpus_online(struct osm_json *j, const char *key);
void si_w_cpus_allowed(struct osm_json *j, const char *key);
void si_w_sockets(struct osm_json *j, const char *key);
void si_w_cores_per_socket(struct osm_json *j, const char *key);
void si_w_threads_per_core(struct osm_json *j, const char *key);
void si_w_smt_control(struct osm_json *j, const char *key);
void si_w_isolated_cpus(struct osm_json *j, const char *key);
void si_w_nohz_full_cpus(struct osm_json *j, const char *key);
void si_w_caches(struct osm_json *j, const char *key);
void si_w_numa_nodes(struct osm_json *j, const char *key);
void si_w_cpufreq_driver(struct osm_json *j, const char *key);
void si_w_cpufreq_governor(struct osm_json *j, const char *key);
void si_w_cpu_max_mhz(struct osm_json *j, const char *key);
void si_w_cpu_min_mhz(struct osm_json *j, const char *key);
void si_w_cpu_boost(struct osm_json *j, const char *key);
void si_w_cpuidle_driver(struct osm_json *j, const char *key);

/* sysinfo_mem.c */
void si_w_memory_bytes(struct osm_json *j, const char *key);
void si_w_hugepage_size_bytes(struct osm_json *j, const char *key);
void si_w_memory_type(struct osm_json *j, const char *key);
void si_w_thp_enabled(struct osm_json *j, const char *key);
void si_w_thp_defrag(struct osm_json *j, const char *key);
void si_w_thp_shmem_enabled(struct osm_json *j, const char *key);
void si_w_ksm_run(struct osm_json *j, const char *key);
void si_w_numa_balancing(struct osm_json *j, const char *key);
void si_w_zswap_enabled(struct osm_json *j, const char *key);
void si_w_fault_around_bytes(struct osm_json *j, const char *key);

/* sysinfo_cgroup.c */
void si_w_cgroup_memory_limit(struct osm_json *j, const char *key);
void si_w_cgroup_cpu_limit(struct osm_json *j, const char *key);
void si_w_cgroup_pids_limit(struct osm_json *j, const char *key);
void si_w_cgroup_cpuset_cpus(struct osm_json *j, const char *key);

/* sysinfo_audit.c */
void si_w_audit_enabled(struct osm_json *j, const char *key);
void si_w_audit_rules(struct osm_json *j, const char *key);
void si_w_audit_ever_enabled(struct osm_json *j, const char *key);
void si_w_audit_ever_enabled_source(struct osm_json *j, const char *key);

/* sysinfo_sec.c */
void si_w_seccomp_mode(struct osm_json *j, const char *key);
void si_w_seccomp_filters(struct osm_json *j, const char *key);
void si_w_lockdown(struct osm_json *j, const char *key);
void si_w_lsms(struct osm_json *j, const char *key);
void si_w_bpf_programs(struct osm_json *j, const char *key);
void si_w_bpf_program_types(struct osm_json *j, const char *key);
void si_w_tracing(struct osm_json *j, const char *key);

/* sysinfo_dev.c */
void si_w_disks(struct osm_json *j, const char *key);
void si_w_nics(struct osm_json *j, const char *key);

/* sysinfo_virt.c */
void si_w_virtualization(struct osm_json *j, const char *key);
void si_w_emulation(struct osm_json *j, const char *key);
void si_w_container(struct osm_json *j, const char *key);

/* sysinfo_id.c */
void si_w_machine_id(struct osm_json *j, const char *key);

#endif
