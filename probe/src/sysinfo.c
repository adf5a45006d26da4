/* sysinfo.c - the machine description. See sysinfo.h and docs/schema.md.
 *
 * Every field is one entry of the table below: key, help and a writer that
 * emits the value (or null) through emit.h; the writers live in one file per
 * source (sysinfo_int.h lists them). The JSON outputs walk the
 * table; the text output renders each writer's JSON, so all three agree.
 *
 * Rules: fixed buffers only; a missing or unreadable file gives null and no
 * message (the probe runs unprivileged, on ARM boards, in containers and
 * under qemu-user); nothing is cached between calls. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "compiler.h"
#include "sysinfo_int.h"

#define TEXT_BUF 65536     /* one field's JSON, for the text output */

/* ------------------------------------------------------------------------ */
/* The table                                                                */

static const struct field {
	const char *key;
	const char *help;
	si_field_writer write;
} fields[] = {
	{"hostname", "Host name (uname nodename)", si_w_hostname},
	{"machine_id", "The machine's identity: osmeter's application-specific ID of /etc/machine-id (else /var/lib/dbus/machine-id), HMAC-SHA256 as systemd-id128 machine-id --app-specific=57032c07d9184336b4cf11796e44f07c prints it; not the machine ID itself; null without one", si_w_machine_id},
	{"os", "Distribution (PRETTY_NAME of /etc/os-release)", si_w_os},
	{"kernel_release", "Kernel release (uname -r)", si_w_kernel_release},
	{"kernel_version", "Kernel build string (uname -v)", si_w_kernel_version},
	{"arch", "Machine architecture as the kernel reports it (uname -m; the emulated one under qemu-user)", si_w_arch},
	{"kernel_cmdline", "Kernel command line (/proc/cmdline)", si_w_kernel_cmdline},
	{"preemption", "Preemption model: none/voluntary/full/lazy (exact, from debugfs or preempt=), rt, full, dynamic (default not known) or none_or_voluntary (from uname -v)", si_w_preemption},
	{"preemption_source", "Where preemption was read: debugfs (/sys/kernel/debug/sched/preempt), cmdline (preempt=) or uname", si_w_preemption_source},
	{"realtime", "PREEMPT_RT kernel: true when /sys/kernel/realtime reads 1, false when it reads 0 or is absent (a kernel without PREEMPT_RT has no such file); null if unreadable", si_w_realtime},
	{"kernel_hz", "Scheduler tick rate CONFIG_HZ (ticks per second) from /boot/config-$(uname -r), else worked out from /proc/timer_list (root: jiffies against the monotonic clock); null = unknown (/proc/config.gz is not read)", si_w_kernel_hz},
	{"cpu_model", "CPU model (/proc/cpuinfo model name; on ARM the decoded CPU implementer/part, core types joined by ' + '; else Hardware)", si_w_cpu_model},
	{"cpu_vendor", "CPU vendor (/proc/cpuinfo vendor_id, or the ARM implementer)", si_w_cpu_vendor},
	{"board", "Board or system model (device-tree model, or DMI vendor and product name)", si_w_board},
	{"cpu_flags", "CPU feature flags of the first CPU (/proc/cpuinfo flags on x86, Features on ARM)", si_w_cpu_flags},
	{"cpus_online", "Online logical CPUs (/sys/devices/system/cpu/online)", si_w_cpus_online},
	{"cpus_allowed", "Logical CPUs this process may run on (sched_getaffinity: taskset, cpusets)", si_w_cpus_allowed},
	{"sockets", "CPU packages: distinct physical_package_id of the online CPUs", si_w_sockets},
	{"cores_per_socket", "Physical cores per package (from sysfs topology; null if packages differ)", si_w_cores_per_socket},
	{"threads_per_core", "Hardware threads per core (largest thread-sibling list; 1 = no SMT)", si_w_threads_per_core},
	{"smt_control", "SMT state (/sys/devices/system/cpu/smt/control: on, off, forceoff, notsupported, notimplemented)", si_w_smt_control},
	{"isolated_cpus", "CPUs isolated from the scheduler (isolcpus=), as a cpu list; empty = none", si_w_isolated_cpus},
	{"nohz_full_cpus", "CPUs in adaptive-tick mode (nohz_full=), as a cpu list; empty = none; null if the kernel lacks NO_HZ_FULL", si_w_nohz_full_cpus},
	{"caches", "Caches seen by CPU 0 (/sys/devices/system/cpu/cpu0/cache/index*)", si_w_caches},
	{"numa_nodes", "NUMA nodes (/sys/devices/system/node/node*)", si_w_numa_nodes},
	{"cpufreq_driver", "CPU frequency driver of CPU 0 (null without cpufreq, as in most VMs)", si_w_cpufreq_driver},
	{"cpufreq_governor", "CPU frequency governor of CPU 0", si_w_cpufreq_governor},
	{"cpu_max_mhz", "Highest CPU 0 frequency in MHz (cpufreq cpuinfo_max_freq)", si_w_cpu_max_mhz},
	{"cpu_min_mhz", "Lowest CPU 0 frequency in MHz (cpufreq cpuinfo_min_freq)", si_w_cpu_min_mhz},
	{"cpu_boost", "Turbo/boost enabled (intel_pstate no_turbo inverted, or cpufreq boost)", si_w_cpu_boost},
	{"cpuidle_driver", "CPU idle driver (/sys/devices/system/cpu/cpuidle/current_driver)", si_w_cpuidle_driver},
	{"memory_bytes", "Physical memory seen by the kernel (MemTotal; the host's inside a container)", si_w_memory_bytes},
	{"memory_type", "Memory type and speed of the first populated slot (SMBIOS type 17; root only)", si_w_memory_type},
	{"cgroup_memory_limit_bytes", "Smallest cgroup memory limit over this process's cgroup and its parents (memory.limit_in_bytes on cgroup v1, memory.max on v2; the hierarchies from /proc/self/mountinfo); null if none", si_w_cgroup_memory_limit},
	{"cgroup_cpu_limit", "cgroup CPU bandwidth limit in CPUs, smallest over this process's cgroup and its parents (cpu.cfs_quota_us / cpu.cfs_period_us on v1, cpu.max on v2); null if none", si_w_cgroup_cpu_limit},
	{"cgroup_pids_limit", "Smallest cgroup task limit over this process's cgroup and its parents (pids.max, v1 or v2); null if none", si_w_cgroup_pids_limit},
	{"cgroup_cpuset_cpus", "CPUs of this process's cpuset, as a cpu list (cpuset.effective_cpus on cgroup v1, cpuset.cpus.effective on v2; the nearest cgroup that has it)", si_w_cgroup_cpuset_cpus},
	{"hugepage_size_bytes", "Default huge page size (Hugepagesize in /proc/meminfo)", si_w_hugepage_size_bytes},
	{"thp_enabled", "Transparent huge pages mode (/sys/kernel/mm/transparent_hugepage/enabled)", si_w_thp_enabled},
	{"thp_defrag", "Transparent huge pages defrag mode (/sys/kernel/mm/transparent_hugepage/defrag)", si_w_thp_defrag},
	{"thp_shmem_enabled", "Transparent huge pages for shared memory and tmpfs (/sys/kernel/mm/transparent_hugepage/shmem_enabled)", si_w_thp_shmem_enabled},
	{"ksm_run", "Kernel samepage merging: 0 stopped, 1 running, 2 unmerging (/sys/kernel/mm/ksm/run)", si_w_ksm_run},
	{"numa_balancing", "Automatic NUMA balancing: 0 off, 1 on, 2 memory tiering, 3 both (/proc/sys/kernel/numa_balancing)", si_w_numa_balancing},
	{"zswap_enabled", "Compressed swap cache on (/sys/module/zswap/parameters/enabled)", si_w_zswap_enabled},
	{"fault_around_bytes", "Page fault-around size (/sys/kernel/debug/fault_around_bytes; root and debugfs only)", si_w_fault_around_bytes},
	{"disks", "Block devices (/sys/block, without loop*, ram* and empty devices); size_bytes, rotational, model, I/O scheduler", si_w_disks},
	{"nics", "Network interfaces (/sys/class/net): operstate, link speed (null if down or virtual), MTU, driver", si_w_nics},
	{"mitigations", "CPU vulnerability status per issue (/sys/devices/system/cpu/vulnerabilities)", si_w_mitigations},
	{"clocksource", "Current kernel clocksource", si_w_clocksource},
	{"available_clocksources", "Clocksources the kernel could use", si_w_available_clocksources},
	{"virtualization", "Hypervisor (x86 CPUID signature, /sys/hypervisor, device tree, DMI): e.g. kvm, xen, hyperv, vmware, qemu, other; none; null if unknowable", si_w_virtualization},
	{"emulation", "qemu-user when /proc/cpuinfo describes another architecture than the probe's build, else none", si_w_emulation},
	{"container", "Container runtime (/run/systemd/container, /run/.containerenv, /.dockerenv, /proc/1/cgroup); none = no sign found", si_w_container},
	{"perf_event_paranoid", "perf_event_paranoid (/proc/sys/kernel): what unprivileged perf counters may do", si_w_perf_event_paranoid},
	{"aslr", "Address space randomisation (/proc/sys/kernel/randomize_va_space: 0 off, 1 partial, 2 full)", si_w_aslr},
	{"audit_enabled", "Kernel audit: 0 off, 1 on, 2 on and locked (AUDIT_GET over the audit netlink socket: root, CAP_AUDIT_CONTROL; 0 when the kernel has no audit socket, CONFIG_AUDIT off or audit=0). Trap: once audit was on in this boot, every task keeps an audit context and every system call pays for it, even after auditctl -e 0, until reboot (audit_ever_enabled); the probe never changes audit", si_w_audit_enabled},
	{"audit_rules", "Audit rules loaded (AUDIT_LIST_RULES over the audit netlink socket, its replies counted: root, CAP_AUDIT_CONTROL; 0 without an audit socket). Rules slow the system calls they watch; and once audit was on in this boot, every task keeps an audit context and every system call pays for it even after auditctl -e 0", si_w_audit_rules},
	{"audit_ever_enabled", "Audit was on at some time in this boot: then every task keeps an audit context and every system call pays for it, even after auditctl -e 0, until reboot. From audit= on the command line (/proc/cmdline), else AUDIT_GET (on now = true; no audit socket = false), else the kernel log (/dev/kmsg, root): a record only an enabled audit writes (type=1305, type=1300, audit_enabled=1) = true; false only when the log still holds audit's start (state=initialized), no audit daemon takes the records and none was lost; else null (null_reasons says why)", si_w_audit_ever_enabled},
	{"audit_ever_enabled_source", "Where audit_ever_enabled was learnt: cmdline (audit= in /proc/cmdline), audit_status (AUDIT_GET) or kmsg (/dev/kmsg)", si_w_audit_ever_enabled_source},
	{"seccomp_mode", "The probe's own seccomp mode: 0 none, 1 strict, 2 filter (Seccomp in /proc/self/status); a probe started under filters runs them on every system call", si_w_seccomp_mode},
	{"seccomp_filters", "seccomp filters on the probe itself (Seccomp_filters in /proc/self/status, 5.9+): each runs on every system call it makes", si_w_seccomp_filters},
	{"lockdown", "Kernel lockdown: none, integrity or confidentiality (/sys/kernel/security/lockdown, the bracketed value; none when the lockdown LSM is not active); null when securityfs is not mounted (the probe does not mount it)", si_w_lockdown},
	{"lsms", "Active Linux security modules, in order (/sys/kernel/security/lsm); null when securityfs is not mounted", si_w_lsms},
	{"bpf_programs", "Loaded BPF programs (bpf(BPF_PROG_GET_NEXT_ID) over every id: root, CAP_SYS_ADMIN); seccomp filters are not among them", si_w_bpf_programs},
	{"bpf_program_types", "Loaded BPF programs by type (bpf(BPF_PROG_GET_FD_BY_ID), bpf(BPF_OBJ_GET_INFO_BY_FD): root)", si_w_bpf_program_types},
	{"tracing", "Active tracing, from tracefs where /proc/self/mounts lists it (the probe does not mount it): path, current_tracer, tracing_on, kprobe_events and uprobe_events (lines of those files), enabled_events (lines of set_event), ftrace_functions (functions with an ftrace hook: lines of enabled_functions), instances; a member is null where its file is absent or unreadable", si_w_tracing},
	{"libc", "C library the probe runs with (glibc version; null for others)", si_w_libc},
	{"build_compiler", "Compiler that built the probe", si_w_build_compiler},
	{"build_flags", "C flags the probe was built with", si_w_build_flags},
	{"build_type", "CMake build type of the probe", si_w_build_type},
	{"build_static", "Probe statically linked", si_w_build_static},
	{"build_arch", "Architecture the probe was built for", si_w_build_arch},
	{"null_reasons", "Why a field above is null, where the probe knows (field: reason): not mounted, not permitted, absent from this kernel, no limit set; must stay the last field", si_w_null_reasons},
};

void osm_sysinfo_write_fields(struct osm_json *j)
{
	osm_json_arr_begin(j, "fields");
	si_reasons_reset();
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		si_reason_field(fields[i].key);
		osm_json_obj_begin(j, NULL);
		osm_json_str(j, "key", fields[i].key);
		fields[i].write(j, "value");
		osm_json_str(j, "help", fields[i].help);
		osm_json_obj_end(j);
	}
	osm_json_arr_end(j);
}

void osm_sysinfo_write_machine(struct osm_json *j, const char *key)
{
	osm_json_obj_begin(j, key);
	si_reasons_reset();
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		si_reason_field(fields[i].key);
		fields[i].write(j, fields[i].key);
	}
	osm_json_obj_end(j);
}

/* ------------------------------------------------------------------------ */
/* Text output: each writer's JSON, rendered for people. Scalars as they are
 * (null as n/a), arrays of scalars as words, objects and arrays of objects
 * one entry a line. The input is our own JSON, but may be cut short if a
 * value outgrew TEXT_BUF: every loop stops at the NUL. */

static const char *skip_ws(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	return p;
}

static const char *text_string(FILE *f, const char *p)
{
	p++; /* the opening quote */
	while (*p && *p != '"') {
		if (*p == '\\' && p[1]) {
			p++;
			switch (*p) {
			case 'n': case 'r': case 't': case 'b': case 'f':
				fputc(' ', f); /* keep one value on one line */
				p++;
				break;
			case 'u':
				fputc('?', f); /* emit.c writes \u00XX for control bytes only */
				p++;
				for (int k = 0; k < 4 && isxdigit((unsigned char)*p); k++)
					p++;
				break;
			default:
				fputc(*p++, f);
			}
		} else {
			fputc(*p++, f);
		}
	}
	return *p == '"' ? p + 1 : p;
}

static const char *text_inline(FILE *f, const char *p, bool bare)
{
	p = skip_ws(p);
	if (*p == '"')
		return text_string(f, p);
	if (*p != '{' && *p != '[') {
		const char *s = p;
		while (*p && !strchr(",]}", *p) && !isspace((unsigned char)*p))
			p++;
		if (p - s == 4 && strncmp(s, "null", 4) == 0)
			fputs("n/a", f);
		else
			fwrite(s, 1, (size_t)(p - s), f);
		return p;
	}
	bool obj = *p == '{';
	char close = obj ? '}' : ']';
	if (!bare)
		fputc(*p, f);
	p++;
	for (bool first = true;; first = false) {
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		if (!*p || *p == close) {
			if (*p)
				p++;
			break;
		}
		if (!first)
			fputs(obj ? ", " : " ", f);
		if (obj) {
			if (*p != '"')
				break;
			p = skip_ws(text_string(f, p));
			if (*p != ':')
				break;
			p++;
			fputc('=', f);
		}
		const char *q = text_inline(f, p, false);
		if (q == p)
			break; /* malformed: no progress */
		p = q;
	}
	if (!bare)
		fputc(close, f);
	return p;
}

static void text_field(FILE *f, const char *key, const char *json)
{
	const char *p = skip_ws(json);
	bool obj = *p == '{';
	bool arr_of_obj = *p == '[' && *skip_ws(p + 1) == '{';
	bool empty = (*p == '[' || obj) && (*skip_ws(p + 1) == ']' || *skip_ws(p + 1) == '}');
	if (empty) {
		fprintf(f, "%s: (none)\n", key);
		return;
	}
	if (!obj && !arr_of_obj) {
		fprintf(f, "%s: ", key);
		text_inline(f, p, true);
		fputc('\n', f);
		return;
	}
	char close = obj ? '}' : ']';
	fprintf(f, "%s:\n", key);
	p++;
	for (;;) {
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		if (!*p || *p == close)
			break;
		fputs(obj ? "  " : "  - ", f);
		if (obj) {
			if (*p != '"')
				break;
			p = skip_ws(text_string(f, p));
			if (*p != ':')
				break;
			p++;
			fputs(": ", f);
		}
		const char *q = text_inline(f, p, true);
		fputc('\n', f);
		if (q == p)
			break;
		p = q;
	}
}

void osm_sysinfo_print_text(FILE *f)
{
	char buf[TEXT_BUF];
	si_reasons_reset();
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		si_reason_field(fields[i].key);
		memset(buf, 0, sizeof(buf));
		/* size - 1: the buffer always ends with a NUL, even when full. */
		FILE *m = fmemopen(buf, sizeof(buf) - 1, "w");
		if (!m) {
			fprintf(f, "%s: n/a\n", fields[i].key);
			continue;
		}
		struct osm_json j;
		osm_json_init(&j, m);
		osm_json_doc_begin(&j);
		fields[i].write(&j, "v");
		osm_json_doc_end(&j);
		fclose(m);
		/* buf is {"v":VALUE}\n */
		const char *colon = strchr(buf, ':');
		text_field(f, fields[i].key, colon ? colon + 1 : "");
	}
}
