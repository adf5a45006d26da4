/* test_symbols.c - every frame named, never after a neighbour (symbols.h):
 * a synthetic kallsyms text (the kernel's text ranges, a BPF program, a
 * trampoline, a module) where an address inside each span is named by it
 * and one outside every span is OSM_KSYM_OUTSIDE, not the symbol below it;
 * a real eBPF program loaded here (root, where the kernel JIT-compiles and
 * lists them) named from /proc/kallsyms, with its exact span from bpf(2);
 * the vDSO's functions named from its image in memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "profile_int.h"
#include "symbols.h"
#include "tap.h"

#if defined(__has_include)
#if __has_include(<linux/bpf.h>)
#include <linux/bpf.h>
#define HAVE_BPF_H 1
#endif
#endif

static const char KALLSYMS[] =
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T do_syscall_64\n"
	"ffffffff81000180 d some_data\n"
	"ffffffff81000200 t helper\n"
	"ffffffff81000300 T __entry_text_start\n"
	"ffffffff81000310 T entry_SYSCALL_64\n"
	"ffffffff81000400 T __entry_text_end\n"
	"ffffffff81000400 T after_entry\n"
	"ffffffff81100000 T _etext\n"
	"ffffffff82000000 T _sinittext\n"
	"ffffffff82000010 t init_fn\n"
	"ffffffff82010000 T _einittext\n"
	"ffffffffa0000000 t bpf_prog_6deef7357e7b4530_first\t[bpf]\n"
	"ffffffffa0000080 t bpf_prog_0123456789abcdef_second\t[bpf]\n"
	"ffffffffa0100000 t ftrace_trampoline\t[__builtin__ftrace]\n"
	"ffffffffc0000000 t mod_a\t[mymod]\n"
	"ffffffffc0000100 T mod_b\t[mymod]\n";

static void is_at(const struct osm_ksyms *k, uint64_t addr, const char *want, const char *what)
{
	const char *got = osm_ksyms_find(k, addr);
	if (want)
		ok(got && !strcmp(got, want), "%s: %llx is %s (got %s)", what, (unsigned long long)addr, want,
		   got ? got : "none");
	else
		ok(!got, "%s: %llx is outside every span (got %s)", what, (unsigned long long)addr, got ? got : "none");
}

static void test_synthetic(void)
{
	char why[512];
	struct osm_ksyms *k = osm_ksyms_parse(KALLSYMS, why, sizeof(why));
	ok(k != NULL, "synthetic kallsyms parsed (%s)", why);
	if (!k) {
		skip(19, "not parsed");
		return;
	}
	is_at(k, 0xffffffff81000150ull, "do_syscall_64", "the kernel's text");
	is_at(k, 0xffffffff81000190ull, "do_syscall_64", "a data symbol is no function");
	is_at(k, 0xffffffff81000320ull, "entry_SYSCALL_64", "entry text");
	is_at(k, 0xffffffff810fffffull, "after_entry", "the last function spans up to _etext");
	is_at(k, 0xffffffff81100000ull, NULL, "_etext itself");
	is_at(k, 0xffffffff81200000ull, NULL, "between _etext and _sinittext");
	is_at(k, 0xffffffff82000020ull, "init_fn", "init text");
	is_at(k, 0xffffffff82010000ull, NULL, "_einittext itself");
	is_at(k, 0xffffffff82010f09ull, NULL, "past _einittext (the measured _einittext case)");
	is_at(k, 0xffffffffa0000040ull, "bpf_prog_6deef7357e7b4530_first [bpf]", "inside a BPF program");
	is_at(k, 0xffffffffa0000100ull, "bpf_prog_0123456789abcdef_second [bpf]", "the next BPF program");
	is_at(k, 0xffffffffa0003000ull, NULL, "BPF code far past the last program (perf's page bound)");
	is_at(k, 0xffffffffa0100010ull, "ftrace_trampoline [__builtin__ftrace]", "a trampoline");
	is_at(k, 0xffffffffc0000080ull, "mod_a [mymod]", "a module's function spans up to its next");
	is_at(k, 0xffffffffc0000200ull, "mod_b [mymod]", "a module's last function, within its bound");
	is_at(k, 0xffffffffc0003000ull, NULL, "past a module's last function's bound");
	/* bpf(2)'s exact sizes: code after the first program is no longer its. */
	osm_ksyms_set_end(k, 0xffffffffa0000000ull, 0xffffffffa0000040ull);
	is_at(k, 0xffffffffa000003full, "bpf_prog_6deef7357e7b4530_first [bpf]", "the exact span's last byte");
	is_at(k, 0xffffffffa0000050ull, NULL, "between two programs (a classic BPF filter's place)");
	char name[128];
	osm_ksyms_name(k, 0xffffffff82010f09ull, name, sizeof(name));
	is_str(name, OSM_KSYM_OUTSIDE, "named as outside the text, not after _einittext");
	osm_ksyms_free(k);
}

static void test_synthetic_edges(void)
{
	char why[512], name[64];
	/* No text range listed (another architecture's kallsyms): the kernel's
	 * own symbols span up to the next, the last within a page bound. */
	struct osm_ksyms *k = osm_ksyms_parse("ffffffff81000000 T a\nffffffff81000100 T b\n", why, sizeof(why));
	is_at(k, 0xffffffff81000050ull, "a", "no ranges: up to the next");
	is_at(k, 0xffffffff81000800ull, "b", "no ranges: the last within its bound");
	is_at(k, 0xffffffff81005000ull, NULL, "no ranges: the last's bound");
	osm_ksyms_free(k);
	k = osm_ksyms_parse("0000000000000000 T _stext\n0000000000000000 T f\n", why, sizeof(why));
	ok(!k && strstr(why, "hides"), "every address 0: hidden, with the reason (%s)", why);
	osm_ksyms_free(k);
	osm_ksyms_name(NULL, 0x1234, name, sizeof(name));
	is_str(name, "0x1234", "without kernel symbols a frame is its address");
}

#if defined(HAVE_BPF_H) && defined(__NR_bpf)
/* A tiny socket-filter program named osm_symtest (r0 = 0; exit), or -1. */
static int load_prog(void)
{
	struct bpf_insn insns[2];
	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 0 */
	insns[1].code = BPF_JMP | BPF_EXIT;
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	snprintf(a.prog_name, sizeof(a.prog_name), "osm_symtest");
	return (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

static uint32_t jited_len(int fd)
{
	struct bpf_prog_info info;
	union bpf_attr a;
	memset(&info, 0, sizeof(info));
	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (uint32_t)fd;
	a.info.info_len = sizeof(info);
	a.info.info = (uint64_t)(uintptr_t)&info;
	return syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) ? 0 : info.jited_prog_len;
}

/* The address of the kallsyms line ending in "_osm_symtest [bpf]", or 0. */
static uint64_t prog_addr(char *name, size_t len)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], n[256], mod[64];
	unsigned long long addr;
	char type;
	uint64_t found = 0;
	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s %63s", &addr, &type, n, mod) == 4 && !strcmp(mod, "[bpf]") &&
		    strstr(n, "_osm_symtest") && strlen(n) > 12 && !strcmp(n + strlen(n) - 12, "_osm_symtest")) {
			found = addr;
			snprintf(name, len, "%s [bpf]", n);
		}
	if (f)
		fclose(f);
	return found;
}

static void test_real_bpf(void)
{
	int jit = 0, listed = 0;
	FILE *f = fopen("/proc/sys/net/core/bpf_jit_enable", "r");
	if (f) {
		jit = fscanf(f, "%d", &jit) == 1 ? jit : 0;
		fclose(f);
	}
	f = fopen("/proc/sys/net/core/bpf_jit_kallsyms", "r");
	if (f) {
		listed = fscanf(f, "%d", &listed) == 1 ? listed : 0;
		fclose(f);
	}
	if (geteuid() != 0 || !jit || !listed) {
		diag("bpf_jit_enable %d, bpf_jit_kallsyms %d", jit, listed);
		skip(4, "a real BPF program needs root, net.core.bpf_jit_enable and bpf_jit_kallsyms");
		return;
	}
	int fd = load_prog();
	char name[300] = "", why[512];
	uint64_t addr = fd >= 0 ? prog_addr(name, sizeof(name)) : 0;
	uint32_t len = fd >= 0 ? jited_len(fd) : 0;
	struct osm_ksyms *k = addr && len ? osm_ksyms_load(why, sizeof(why)) : NULL;
	if (!k) {
		diag("BPF program: fd %d, address %llx, length %u", fd, (unsigned long long)addr, len);
		skip(4, "no JIT-compiled BPF program listed in kallsyms here");
		if (fd >= 0)
			close(fd);
		return;
	}
	is_at(k, addr + len / 2, name, "inside a real BPF program");
	ok(osm_prof_bpf_spans(k) >= 1, "bpf(2) gave the programs' spans");
	is_at(k, addr + len - 1, name, "the real program's last byte");
	const char *past = osm_ksyms_find(k, addr + len);
	ok(!past || strcmp(past, name), "the byte after it is not named after it (%s)", past ? past : "outside");
	osm_ksyms_free(k);
	close(fd);
}
#else
static void test_real_bpf(void)
{
	skip(4, "built without linux/bpf.h");
}
#endif

static void test_vdso(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	unsigned long long s = 0, e = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2)
			break;
	if (f)
		fclose(f);
	if (!s || e <= s) {
		skip(1, "no vDSO mapped here");
		return;
	}
	struct osm_usyms *u = osm_usyms_load();
	char name[256], seen[256] = "";
	for (unsigned long long a = s; a < e && !seen[0]; a += 4) {
		osm_usyms_name(u, a, name, sizeof(name));
		if (strstr(name, "clock_gettime"))
			snprintf(seen, sizeof(seen), "%s", name);
	}
	osm_usyms_free(u);
	ok(seen[0] != 0, "the vDSO's clock_gettime is named (%s)", seen[0] ? seen : "no");
}

int main(void)
{
	test_synthetic();
	test_synthetic_edges();
	test_real_bpf();
	test_vdso();
	return done_testing();
}
