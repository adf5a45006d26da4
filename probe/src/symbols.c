/* symbols.c - see symbols.h. */
#include "symbols.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knob.h"


/* ---- kernel ------------------------------------------------------------ */

/* What a kallsyms line names: the kernel's own text, a module's, or code
 * made at run time ([bpf]: BPF programs, trampolines, dispatchers;
 * [__builtin__ftrace], [__builtin__kprobes]: their trampolines and slots). */
enum { KS_CORE, KS_MODULE, KS_JIT };

struct ksym {
	uint64_t addr, end; /* the span [addr, end); end == addr covers nothing */
	uint32_t name;      /* offset in pool ("name" or "name [module]") */
	uint32_t mod;       /* offset in pool of "[module]", or NO_MOD */
	uint8_t bind;       /* STB_LOCAL, STB_GLOBAL or STB_WEAK */
	uint8_t kind;       /* KS_* */
};
#define NO_MOD UINT32_MAX

/* Of several names at one address, the one perf report shows (its
 * choose_best_symbol): a sized one, then not weak, then global, then the
 * fewest leading underscores, then the longest. Returns > 0 when a is
 * better. */
static int better(uint64_t size_a, int bind_a, const char *a, uint64_t size_b, int bind_b, const char *b)
{
	if ((size_a > 0) != (size_b > 0))
		return size_a > 0 ? 1 : -1;
	if ((bind_a == STB_WEAK) != (bind_b == STB_WEAK))
		return bind_a == STB_WEAK ? -1 : 1;
	if ((bind_a == STB_GLOBAL) != (bind_b == STB_GLOBAL))
		return bind_a == STB_GLOBAL ? 1 : -1;
	size_t ua = strspn(a, "_"), ub = strspn(b, "_");
	if (ua != ub)
		return ua < ub ? 1 : -1;
	size_t la = strlen(a), lb = strlen(b);
	return (la > lb) - (la < lb);
}

static const char *sort_pool; /* the names of the table being sorted */

/* The kernel's own text: [_stext, _etext), [_sinittext, _einittext), and
 * each [__X_text_start, __X_text_end) kallsyms lists (entry, irqentry, ...;
 * inside the first on x86, not on every architecture). */
#define KS_MAX_RANGES 32
struct krange {
	char stem[48];
	uint64_t lo, hi; /* 0: not listed */
};

struct osm_ksyms {
	struct ksym *s;
	size_t n;
	char *pool;
	struct krange r[KS_MAX_RANGES];
	int n_r;
};

/* By address; at one address the best name last (lookups take the last). */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return better(0, x->bind, sort_pool + x->name, 0, y->bind, sort_pool + y->name);
}

/* A core symbol that marks a text range's start or end: its stem. */
static void note_range(struct osm_ksyms *k, const char *name, uint64_t addr)
{
	char stem[48];
	int hi;
	size_t l = strlen(name);
	if (!strcmp(name, "_stext") || !strcmp(name, "_etext")) {
		snprintf(stem, sizeof(stem), "text");
		hi = name[1] == 'e';
	} else if (!strcmp(name, "_sinittext") || !strcmp(name, "_einittext")) {
		snprintf(stem, sizeof(stem), "inittext");
		hi = name[1] == 'e';
	} else if (l > 13 && l < 40 && !strncmp(name, "__", 2) &&
		   (!strcmp(name + l - 11, "_text_start") || !strcmp(name + l - 9, "_text_end"))) {
		hi = !strcmp(name + l - 4, "_end");
		snprintf(stem, sizeof(stem), "%.*s", (int)(l - (hi ? 4 : 6)), name);
	} else {
		return;
	}
	int i = 0;
	while (i < k->n_r && strcmp(k->r[i].stem, stem))
		i++;
	if (i == KS_MAX_RANGES)
		return;
	if (i == k->n_r)
		memset(&k->r[k->n_r++], 0, sizeof(k->r[0]));
	snprintf(k->r[i].stem, sizeof(k->r[i].stem), "%s", stem);
	*(hi ? &k->r[i].hi : &k->r[i].lo) = addr;
}

/* Appends one symbol; -1: out of memory. */
static int add_ksym(struct osm_ksyms *k, size_t *cap, size_t *pool_cap, size_t *pool_n, uint64_t addr, char type,
		    const char *name, const char *mod)
{
	char full[400];
	int fl = snprintf(full, sizeof(full), "%s%s%s", name, mod[0] ? " " : "", mod);
	if (fl < 0 || (size_t)fl >= sizeof(full))
		return 0;
	if (k->n == *cap) {
		*cap = *cap ? *cap * 2 : 65536;
		struct ksym *ns = realloc(k->s, *cap * sizeof(*ns));
		if (!ns)
			return -1;
		k->s = ns;
	}
	if (*pool_n + (size_t)fl + 1 > *pool_cap) {
		*pool_cap = *pool_cap ? *pool_cap * 2 : 1 << 21;
		char *np = realloc(k->pool, *pool_cap);
		if (!np)
			return -1;
		k->pool = np;
	}
	memcpy(k->pool + *pool_n, full, (size_t)fl + 1);
	int jit = !strcmp(mod, "[bpf]") || !strncmp(mod, "[__builtin__", 12);
	k->s[k->n] = (struct ksym){
		.addr = addr,
		.end = addr,
		.name = (uint32_t)*pool_n,
		.mod = mod[0] ? (uint32_t)(*pool_n + strlen(name) + 1) : NO_MOD,
		.bind = type == 'w' || type == 'W' ? STB_WEAK : type == 'T' ? STB_GLOBAL : STB_LOCAL,
		.kind = jit ? KS_JIT : mod[0] ? KS_MODULE : KS_CORE,
	};
	k->n++;
	*pool_n += (size_t)fl + 1;
	return 0;
}

/* Reads kallsyms' text symbols from f; returns the count whose address is not 0. */
static size_t read_kallsyms(struct osm_ksyms *k, FILE *f)
{
	size_t cap = 0, pool_cap = 0, pool_n = 0, nonzero = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[128] = "";
		unsigned long long addr;
		int got = sscanf(line, "%llx %c %255s %127s", &addr, &type, name, mod);
		if (got < 3 || !strchr("tTwW", type))
			continue;
		if (add_ksym(k, &cap, &pool_cap, &pool_n, addr, type, name, mod))
			break;
		if (!mod[0])
			note_range(k, name, addr);
		nonzero += addr != 0;
	}
	return nonzero;
}

/* Where a symbol of unknown size may end at most (perf's rule for the last
 * symbol of a module: the end of the page after the one it starts in). */
static uint64_t page_bound(uint64_t a)
{
	return a > UINT64_MAX - 8192 ? UINT64_MAX : ((a + 4096 + 4095) & ~(uint64_t)4095);
}

/* The end of the kernel's text that holds a, or a itself when none does. */
static uint64_t text_end(const struct osm_ksyms *k, uint64_t a)
{
	uint64_t end = a;
	for (int i = 0; i < k->n_r; i++)
		if (k->r[i].lo && a >= k->r[i].lo && a < k->r[i].hi && k->r[i].hi > end)
			end = k->r[i].hi;
	return end;
}

static int have_ranges(const struct osm_ksyms *k)
{
	for (int i = 0; i < k->n_r; i++)
		if (k->r[i].lo && k->r[i].lo < k->r[i].hi)
			return 1;
	return 0;
}

/* Each symbol's span (kallsyms has no sizes): up to the next symbol, but
 * for the kernel's own only within its text ranges (outside them a symbol
 * covers nothing: _etext, _einittext), for code made at run time only
 * within page_bound, and for a module's last symbol likewise. */
static void ksym_spans(struct osm_ksyms *k)
{
	int ranges = have_ranges(k);
	for (size_t i = 0, j; i < k->n; i = j) {
		for (j = i; j < k->n && k->s[j].addr == k->s[i].addr;)
			j++;
		const struct ksym *nx = j < k->n ? &k->s[j] : NULL;
		for (size_t g = i; g < j; g++) {
			struct ksym *s = &k->s[g];
			uint64_t next = nx ? nx->addr : UINT64_MAX, bound = page_bound(s->addr);
			int same = nx && nx->kind == s->kind &&
				   (s->mod == NO_MOD ? nx->mod == NO_MOD
						     : nx->mod != NO_MOD && !strcmp(k->pool + s->mod, k->pool + nx->mod));
			if (s->kind == KS_CORE && ranges) {
				uint64_t hi = text_end(k, s->addr);
				s->end = next < hi ? next : hi;
			} else if (same && s->kind != KS_JIT) {
				s->end = next;
			} else {
				s->end = next < bound ? next : bound;
			}
		}
	}
}

void osm_ksyms_set_end(struct osm_ksyms *k, uint64_t addr, uint64_t end)
{
	size_t lo = 0, hi = k ? k->n : 0; /* first with s.addr >= addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->s[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; k && lo < k->n && k->s[lo].addr == addr; lo++)
		if (k->s[lo].kind == KS_JIT)
			k->s[lo].end = end;
}

static struct osm_ksyms *ksyms_read(FILE *f, char *why, size_t len)
{
	struct osm_ksyms *k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(why, len, "out of memory for kernel symbols");
		return NULL;
	}
	size_t nonzero = f ? read_kallsyms(k, f) : 0;
	int kptr = osm_knob_read_int(OSM_KNOB_KPTR, -1);
	if (!k->n) {
		snprintf(why, len, "/proc/kallsyms cannot be read: %s", strerror(errno ? errno : ENOENT));
		osm_ksyms_free(k);
		return NULL;
	}
	if (!nonzero) {
		snprintf(why, len,
			 "/proc/kallsyms hides kernel addresses (kptr_restrict is %d): run as root, or set "
			 "kernel.kptr_restrict=0 and kernel.perf_event_paranoid<=1 (sysctl -w ...)", kptr);
		osm_ksyms_free(k);
		return NULL;
	}
	sort_pool = k->pool;
	qsort(k->s, k->n, sizeof(*k->s), cmp_ksym);
	ksym_spans(k);
	snprintf(why, len, "kallsyms");
	return k;
}

struct osm_ksyms *osm_ksyms_parse(const char *text, char *why, size_t len)
{
	FILE *f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	struct osm_ksyms *k = ksyms_read(f, why, len);
	if (f)
		fclose(f);
	return k;
}

struct osm_ksyms *osm_ksyms_load(char *why, size_t len)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct osm_ksyms *k = ksyms_read(f, why, len);
	if (f)
		fclose(f);
	return k;
}

/* The symbol whose span holds addr, or NULL. */
static const struct ksym *ksym_at(const struct osm_ksyms *k, uint64_t addr)
{
	if (!k || !k->n || addr < k->s[0].addr)
		return NULL;
	size_t lo = 0, hi = k->n; /* last with s.addr <= addr */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->s[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return addr < k->s[lo].end ? &k->s[lo] : NULL;
}

const char *osm_ksyms_find(const struct osm_ksyms *k, uint64_t addr)
{
	const struct ksym *s = ksym_at(k, addr);
	return s ? k->pool + s->name : NULL;
}

void osm_ksyms_name(const struct osm_ksyms *k, uint64_t addr, char *out, size_t len)
{
	const char *name = osm_ksyms_find(k, addr);
	if (name)
		snprintf(out, len, "%s", name);
	else if (k)
		snprintf(out, len, "%s", OSM_KSYM_OUTSIDE);
	else
		snprintf(out, len, "0x%llx", (unsigned long long)addr);
}

void osm_ksyms_free(struct osm_ksyms *k)
{
	if (!k)
		return;
	free(k->s);
	free(k->pool);
	free(k);
}

/* ---- user space -------------------------------------------------------- */

struct usym {
	uint64_t addr, size;
	uint32_t name;
	uint8_t bind;
};

struct load_seg {
	uint64_t off, filesz, vaddr;
};

struct elf_file {
	char path[512];
	const unsigned char *mem; /* the vDSO: its image in memory */
	size_t mem_len;
	int loaded, ok;
	struct usym *s;
	size_t n;
	char *pool;
	struct load_seg seg[16];
	int n_seg;
};

struct mapping {
	uint64_t start, end, pgoff;
	int file; /* index in files, or -1 ([vdso] and anonymous) */
	char label[32];
};

struct osm_usyms {
	struct mapping *m;
	size_t n;
	struct elf_file *files;
	size_t n_files;
};

static int cmp_usym(const void *a, const void *b)
{
	const struct usym *x = a, *y = b;
	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return better(x->size, x->bind, sort_pool + x->name, y->size, y->bind, sort_pool + y->name);
}

/* Field access for ELF32 and ELF64 alike. */
#define EFIELD(c64, p, T, f) ((c64) ? (uint64_t)((const Elf64_##T *)(p))->f : (uint64_t)((const Elf32_##T *)(p))->f)

static void elf_symbols(struct elf_file *e, const unsigned char *b, size_t sz, int c64)
{
	size_t ehsz = c64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (sz < ehsz)
		return;
	uint64_t phoff = EFIELD(c64, b, Ehdr, e_phoff), shoff = EFIELD(c64, b, Ehdr, e_shoff);
	uint64_t phnum = EFIELD(c64, b, Ehdr, e_phnum), shnum = EFIELD(c64, b, Ehdr, e_shnum);
	size_t phsz = c64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr), shsz = c64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	for (uint64_t i = 0; i < phnum && e->n_seg < 16; i++) {
		const unsigned char *p = b + phoff + i * phsz;
		if (phoff + (i + 1) * phsz > sz)
			break;
		if (EFIELD(c64, p, Phdr, p_type) != PT_LOAD)
			continue;
		e->seg[e->n_seg++] = (struct load_seg){EFIELD(c64, p, Phdr, p_offset), EFIELD(c64, p, Phdr, p_filesz),
						       EFIELD(c64, p, Phdr, p_vaddr)};
	}
	if (shoff + shnum * shsz > sz)
		return;
	/* .symtab when there is one (not stripped), else .dynsym. */
	for (int want = SHT_SYMTAB; want >= 0; want = want == SHT_SYMTAB ? SHT_DYNSYM : -1) {
		for (uint64_t i = 0; i < shnum; i++) {
			const unsigned char *sh = b + shoff + i * shsz;
			if (EFIELD(c64, sh, Shdr, sh_type) != (uint64_t)want)
				continue;
			uint64_t off = EFIELD(c64, sh, Shdr, sh_offset), size = EFIELD(c64, sh, Shdr, sh_size);
			uint64_t link = EFIELD(c64, sh, Shdr, sh_link);
			if (link >= shnum || off + size > sz)
				continue;
			const unsigned char *strh = b + shoff + link * shsz;
			uint64_t soff = EFIELD(c64, strh, Shdr, sh_offset), ssize = EFIELD(c64, strh, Shdr, sh_size);
			if (soff + ssize > sz)
				continue;
			size_t symsz = c64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym), count = size / symsz;
			e->s = calloc(count ? count : 1, sizeof(*e->s));
			e->pool = malloc(ssize + 1);
			if (!e->s || !e->pool)
				return;
			memcpy(e->pool, b + soff, ssize);
			e->pool[ssize] = 0;
			for (size_t k = 0; k < count; k++) {
				const unsigned char *s = b + off + k * symsz;
				unsigned info = c64 ? ((const Elf64_Sym *)(const void *)s)->st_info
						    : ((const Elf32_Sym *)(const void *)s)->st_info;
				uint64_t name = EFIELD(c64, s, Sym, st_name), value = EFIELD(c64, s, Sym, st_value);
				if ((info & 0xf) != STT_FUNC || !value || name >= ssize)
					continue;
				e->s[e->n++] = (struct usym){value, EFIELD(c64, s, Sym, st_size), (uint32_t)name,
							     (uint8_t)(info >> 4)};
				if (!c64)
					e->s[e->n - 1].addr &= ~(uint64_t)1; /* ARM Thumb functions are odd */
			}
			sort_pool = e->pool;
			qsort(e->s, e->n, sizeof(*e->s), cmp_usym);
			e->ok = 1;
			return;
		}
	}
}

static void elf_load(struct elf_file *e)
{
	e->loaded = 1;
	if (e->mem) {
		if (e->mem_len >= EI_NIDENT && !memcmp(e->mem, ELFMAG, SELFMAG))
			elf_symbols(e, e->mem, e->mem_len, e->mem[EI_CLASS] == ELFCLASS64);
		return;
	}
	FILE *f = fopen(e->path, "rb");
	if (!f)
		return;
	unsigned char *b = NULL;
	long sz = -1;
	if (!fseek(f, 0, SEEK_END) && (sz = ftell(f)) > 0 && !fseek(f, 0, SEEK_SET) && (b = malloc((size_t)sz)) &&
	    fread(b, 1, (size_t)sz, f) == (size_t)sz && sz >= EI_NIDENT && !memcmp(b, ELFMAG, SELFMAG))
		elf_symbols(e, b, (size_t)sz, b[EI_CLASS] == ELFCLASS64);
	free(b);
	fclose(f);
}

/* The index in u->files of path (added when new), or -1: out of memory. */
static int file_of(struct osm_usyms *u, const char *path)
{
	for (size_t i = 0; i < u->n_files; i++)
		if (!strcmp(u->files[i].path, path))
			return (int)i;
	struct elf_file *nf = realloc(u->files, (u->n_files + 1) * sizeof(*nf));
	if (!nf)
		return -1;
	u->files = nf;
	memset(&nf[u->n_files], 0, sizeof(*nf));
	snprintf(nf[u->n_files].path, sizeof(nf->path), "%s", path);
	return (int)u->n_files++;
}

/* A mapping's label: src cut to the label's size (a long file name keeps its head). */
static void set_label(struct mapping *m, const char *src)
{
	size_t n = strnlen(src, sizeof(m->label) - 1);
	memcpy(m->label, src, n);
	m->label[n] = '\0';
}

struct osm_usyms *osm_usyms_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return NULL;
	struct osm_usyms *u = calloc(1, sizeof(*u));
	char line[1024];
	while (u && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		char perms[8], path[512] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &s, &e, perms, &off, path) < 4 || perms[2] != 'x')
			continue;
		struct mapping *nm = realloc(u->m, (u->n + 1) * sizeof(*nm));
		if (!nm)
			break;
		u->m = nm;
		struct mapping *m = &u->m[u->n++];
		*m = (struct mapping){s, e, off, -1, ""};
		int vdso = !strcmp(path, "[vdso]") && perms[0] == 'r';
		if (path[0] != '/' && !vdso) {
			set_label(m, path[0] ? path : "[anon]");
			continue;
		}
		if ((m->file = file_of(u, path)) < 0)
			break;
		if (vdso) {
			u->files[m->file].mem = (const unsigned char *)(uintptr_t)s;
			u->files[m->file].mem_len = (size_t)(e - s);
		}
		const char *base = strrchr(path, '/');
		set_label(m, base ? base + 1 : path);
	}
	fclose(f);
	return u;
}

void osm_usyms_name(struct osm_usyms *u, uint64_t addr, char *out, size_t len)
{
	const struct mapping *m = NULL;
	for (size_t i = 0; u && i < u->n && !m; i++)
		if (addr >= u->m[i].start && addr < u->m[i].end)
			m = &u->m[i];
	if (!m) {
		snprintf(out, len, "[unknown]");
		return;
	}
	uint64_t foff = addr - m->start + m->pgoff;
	if (m->file < 0) {
		snprintf(out, len, "%s", m->label);
		return;
	}
	struct elf_file *e = &u->files[m->file];
	if (!e->loaded)
		elf_load(e);
	uint64_t vaddr = 0;
	int have = 0;
	for (int i = 0; i < e->n_seg && !have; i++)
		if (foff >= e->seg[i].off && foff < e->seg[i].off + e->seg[i].filesz) {
			vaddr = foff - e->seg[i].off + e->seg[i].vaddr;
			have = 1;
		}
	if (have && e->ok && e->n && vaddr >= e->s[0].addr) {
		size_t lo = 0, hi = e->n;
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;
			if (e->s[mid].addr <= vaddr)
				lo = mid;
			else
				hi = mid;
		}
		/* A sized symbol spans its size; one without, up to the next (the
		 * last one: perf's bound, the end of the page after its own). */
		const struct usym *s = &e->s[lo];
		uint64_t end = s->size ? s->addr + s->size : lo + 1 < e->n ? e->s[lo + 1].addr : page_bound(s->addr);
		if (vaddr < end) {
			snprintf(out, len, "%s", e->pool + s->name);
			return;
		}
	}
	snprintf(out, len, "%s+0x%llx", m->label, (unsigned long long)foff);
}

void osm_usyms_free(struct osm_usyms *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->n_files; i++) {
		free(u->files[i].s);
		free(u->files[i].pool);
	}
	free(u->files);
	free(u->m);
	free(u);
}
