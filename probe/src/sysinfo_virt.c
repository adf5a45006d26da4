/* sysinfo_virt.c - the virtualisation fields of the machine description:
 * hypervisor, qemu-user emulation, container. See sysinfo_int.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* cpu_set_t, fmemopen, strnlen; CMake defines it too */
#endif
#include "sysinfo_int.h"

#include <string.h>
#include <unistd.h>

#if defined(OSM_X86)
#include <cpuid.h>
#endif

#if defined(OSM_X86)
/* CPUID leaf 1 ECX bit 31 says a hypervisor is present; leaf 0x40000000
 * names it. KVM with Hyper-V enlightenments shows "Microsoft Hv" there and
 * its own signature at 0x40000100. */
static const char *x86_hypervisor(bool *present)
{
	static const struct {
		char sig[13];
		const char *name;
	} sigs[] = {
		{"KVMKVMKVM\0\0\0", "kvm"},    {"Microsoft Hv", "hyperv"}, {"VMwareVMware", "vmware"},
		{"XenVMMXenVMM", "xen"},       {"TCGTCGTCGTCG", "qemu"},   {" lrpepyh  vr", "parallels"},
		{"bhyve bhyve ", "bhyve"},     {"ACRNACRNACRN", "acrn"},   {"VBoxVBoxVBox", "virtualbox"},
		{"Jailhouse\0\0\0", "jailhouse"},
	};
	unsigned a, b, c, d;
	*present = false;
	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return NULL;
	*present = true;
	const char *found = NULL;
	for (unsigned leaf = 0x40000000; leaf <= 0x40000100; leaf += 0x100) {
		char sig[12];
		__cpuid(leaf, a, b, c, d);
		memcpy(sig, &b, 4);
		memcpy(sig + 4, &c, 4);
		memcpy(sig + 8, &d, 4);
		for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
			if (memcmp(sig, sigs[i].sig, 12) == 0) {
				if (leaf == 0x40000000)
					found = sigs[i].name;
				else if (strcmp(sigs[i].name, "kvm") == 0)
					found = "kvm";
			}
		if (!found || strcmp(found, "hyperv") != 0)
			break;
	}
	return found;
}
#endif

/* Finds needle in a buffer of NUL-separated strings (device-tree lists). */
static bool dt_list_has(const char *buf, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i < n;) {
		size_t len = strnlen(buf + i, n - i);
		if (len == k && memcmp(buf + i, needle, k) == 0)
			return true;
		i += len + 1;
	}
	return false;
}

static const char *dmi_hypervisor(const char *vendor, const char *product)
{
	if (strstr(product, "KVM"))
		return "kvm";
	if (strstr(vendor, "QEMU"))
		return "qemu"; /* KVM or TCG: DMI cannot tell */
	if (strstr(vendor, "Microsoft Corporation") && strstr(product, "Virtual Machine"))
		return "hyperv";
	if (strstr(vendor, "VMware"))
		return "vmware";
	if (strstr(vendor, "innotek") || strstr(product, "VirtualBox"))
		return "virtualbox";
	if (strstr(vendor, "Xen"))
		return "xen";
	if (strstr(vendor, "Parallels"))
		return "parallels";
	if (strstr(vendor, "Bochs"))
		return "bochs";
	/* Trap: EC2 bare-metal instances ("m5.metal") also say "Amazon EC2". */
	if (strstr(vendor, "Amazon EC2") && !strstr(product, ".metal"))
		return "amazon";
	if (strstr(product, "Google Compute Engine"))
		return "google";
	return NULL;
}

/* "kvm", "xen", ... when a hypervisor is seen; "none" when a source that
 * would show one (x86 CPUID, DMI, device tree) shows none; null when there is
 * no such source. */
static bool virtualization(char *out, size_t len)
{
	bool evidence = false;
	char buf[SMALL], product[SMALL];
	size_t n;
#if defined(OSM_X86)
	bool present;
	const char *h = x86_hypervisor(&present);
	if (present) {
		si_copy_str(out, len, h ? h : "other");
		return true;
	}
	evidence = true; /* still look at DMI: a hypervisor can hide the bit */
#endif
	if (si_read_file_trim("/sys/hypervisor/type", buf, sizeof(buf)) && buf[0]) {
		si_copy_str(out, len, buf);
		return true;
	}
	if (si_read_file_raw("/proc/device-tree/hypervisor/compatible", buf, sizeof(buf) - 1, &n) && n) {
		buf[n] = '\0';
		si_copy_str(out, len, strncmp(buf, "xen", 3) == 0 ? "xen" : "other");
		return true;
	}
	if (si_read_file_raw("/proc/device-tree/compatible", buf, sizeof(buf), &n) && n) {
		evidence = true;
		if (dt_list_has(buf, n, "linux,dummy-virt")) { /* qemu -M virt */
			si_copy_str(out, len, "qemu");
			return true;
		}
	}
	bool v_ok = si_read_file_trim("/sys/class/dmi/id/sys_vendor", buf, sizeof(buf));
	bool p_ok = si_read_file_trim("/sys/class/dmi/id/product_name", product, sizeof(product));
	if (v_ok || p_ok) {
		evidence = true;
		const char *d = dmi_hypervisor(v_ok ? buf : "", p_ok ? product : "");
		if (d) {
			si_copy_str(out, len, d);
			return true;
		}
	}
#if !defined(OSM_X86)
	/* An x86 flag on a non-x86 probe: the host's cpuinfo seen through
	 * qemu-user, and that host is a VM. */
	char flags[LINE];
	if (si_cpuinfo_value("flags", flags, sizeof(flags), NULL)) {
		char *save = NULL;
		for (char *w = strtok_r(flags, " ", &save); w; w = strtok_r(NULL, " ", &save))
			if (strcmp(w, "hypervisor") == 0) {
				si_copy_str(out, len, "other");
				return true;
			}
	}
#endif
	if (evidence)
		si_copy_str(out, len, "none");
	return evidence;
}

void si_w_virtualization(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	osm_json_str(j, key, virtualization(buf, sizeof(buf)) ? buf : NULL);
}

/* qemu-user runs the probe on another architecture's CPU and (qemu 7.2)
 * shows the host's /proc/cpuinfo: a cpuinfo of another family than the
 * probe's build is the sign. Newer qemu versions fake the guest's cpuinfo
 * for some targets; then this says "none". */
void si_w_emulation(struct osm_json *j, const char *key)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f) {
		osm_json_null(j, key);
		return;
	}
	fclose(f);
	bool x86_info = si_cpuinfo_has("vendor_id") && si_cpuinfo_has("flags");
	bool arm_info = si_cpuinfo_has("CPU implementer");
	bool other;
#if defined(OSM_X86)
	other = arm_info && !x86_info;
#else
	other = x86_info && !arm_info;
#if !defined(__aarch64__) && !defined(__arm__)
	other = other || arm_info;
#endif
#endif
	osm_json_str(j, key, other ? "qemu-user" : "none");
}

static bool cgroup1_hint(char *out, size_t len)
{
	static const struct {
		const char *hint, *name;
	} hints[] = {
		{"kubepods", "kubernetes"}, {"libpod", "podman"}, {"docker", "docker"},
		{"lxc", "lxc"},             {"containerd", "containerd"},
	};
	FILE *f = fopen("/proc/1/cgroup", "re");
	if (!f)
		return false;
	char line[MEDIUM];
	bool cut, found = false;
	while (!found && si_read_line(f, line, sizeof(line), &cut))
		for (size_t i = 0; i < ARRAY_SIZE(hints) && !found; i++)
			if (strstr(line, hints[i].hint)) {
				si_copy_str(out, len, hints[i].name);
				found = true;
			}
	fclose(f);
	return found;
}

/* "none" means no sign was found: a cgroup-v2 container with its own cgroup
 * namespace and no marker file looks like a host. */
void si_w_container(struct osm_json *j, const char *key)
{
	char buf[SMALL];
	if (si_read_file_trim("/run/systemd/container", buf, sizeof(buf)) && buf[0])
		osm_json_str(j, key, buf);
	else if (access("/run/.containerenv", F_OK) == 0)
		osm_json_str(j, key, "podman");
	else if (access("/.dockerenv", F_OK) == 0)
		osm_json_str(j, key, "docker");
	else if (cgroup1_hint(buf, sizeof(buf)))
		osm_json_str(j, key, buf);
	else
		osm_json_str(j, key, "none");
}
