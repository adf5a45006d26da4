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

struct ksym {
	uint64_t addr;
	uint32_t name; /* offset in pool */
	uint8_t bind;  /* STB_LOCAL, STB_GLOBAL or STB_WEAK */
};

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

struct osm_ksyms {
	struct ksym *s;
	size_t n;
	char *pool;
};

/* By address; at one address the best name last (lookups take the last). */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	if (x->addr != y->addr)
		return (x->addr > y->addr) - (x->addr < y->addr);
	return better(0, x->bind, sort_pool + x->name, 0, y->bind, sort_pool + y->name);
}

/* Reads kallsyms' text symbols; returns the count whose address is not 0. */
static size_t read_kallsyms(struct osm_ksyms *k)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return 0;
	size_t cap = 0, pool_cap = 0, pool_n = 0, nonzero = 0;
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char type, name[256], mod[128] = "";
		unsigned long long addr;
		int got = sscanf(line, "%llx %c %255s %127s", &addr, &type, name, mod);
		if (got < 3 || !strchr("tTwW", type))
			continue;
		char full[400];
		int fl = snprintf(full, sizeof(full), "%s%s%s", name, mod[0] ? " " : "", mod);
		if (fl < 0 || (size_t)fl >= sizeof(full))
			continue;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 65536;
			struct ksym *ns = realloc(k->s, cap * sizeof(*ns));
			if (!ns)
				break;
			k->s = ns;
		}
		if (pool_n + (size_t)fl + 1 > pool_cap) {
			pool_cap = pool_cap ? pool_cap * 2 : 1 << 21;
			char *np = realloc(k->pool, pool_cap);
			if (!np)
				break;
			k->pool = np;
		}
		memcpy(k->pool + pool_n, full, (size_t)fl + 1);
		k->s[k->n].addr = addr;
		k->s[k->n].name = (uint32_t)pool_n;
		k->s[k->n].bind = type == 'w' || type == 'W' ? STB_WEAK : type == 'T' ? STB_GLOBAL : STB_LOCAL;
		k->n++;
		pool_n += (size_t)fl + 1;
		nonzero += addr != 0;
	}
	fclose(f);
	return nonzero;
}

struct osm_ksyms *osm_ksyms_load(char *why, size_t len)
{
	struct osm_ksyms *k = calloc(1, sizeof(*k));
	if (!k) {
		snprintf(why, len, "out of memory for kernel symbols");
		return NULL;
	}
	size_t nonzero = read_kallsyms(k);
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
	snprintf(why, len, "kallsyms");
	return k;
}

const char *osm_ksyms_find(const struct osm_ksyms *k, uint64_t addr)
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
	return k->pool + k->s[lo].name;
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
		if (path[0] != '/') {
			snprintf(m->label, sizeof(m->label), "%s", path[0] ? path : "[anon]");
			continue;
		}
		for (size_t i = 0; i < u->n_files && m->file < 0; i++)
			if (!strcmp(u->files[i].path, path))
				m->file = (int)i;
		if (m->file < 0) {
			struct elf_file *nf = realloc(u->files, (u->n_files + 1) * sizeof(*nf));
			if (!nf)
				break;
			u->files = nf;
			memset(&nf[u->n_files], 0, sizeof(*nf));
			snprintf(nf[u->n_files].path, sizeof(nf->path), "%s", path);
			m->file = (int)u->n_files++;
		}
		const char *base = strrchr(path, '/');
		snprintf(m->label, sizeof(m->label), "%s", base + 1);
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
		const struct usym *s = &e->s[lo];
		if (!s->size || vaddr < s->addr + s->size) {
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
