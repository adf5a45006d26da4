/* symbols.h - addresses to function names for the profiler (hotspots).
 *
 * Kernel: /proc/kallsyms (text symbols; module symbols keep their
 * "[module]", BPF programs are "bpf_prog_<tag>_<name> [bpf]"). kallsyms
 * gives no sizes, so each symbol spans up to the next one, with bounds:
 * the kernel's own symbols only within its text ([_stext, _etext),
 * [_sinittext, _einittext) and the __*_text_start/_end ranges listed);
 * code made at run time ([bpf], [__builtin__*]) up to one page past the
 * page it starts in (perf's bound), as the last symbol of a module, or
 * exactly (osm_ksyms_set_end: bpf(2) tells a BPF program's functions).
 * An address no span holds is OSM_KSYM_OUTSIDE, never the symbol below it
 * (JIT-compiled classic BPF, such as seccomp filters, is in no kallsyms).
 * When kptr_restrict hides the addresses (all read as 0), the reason says
 * what to set (the profiler, as root, lowers kptr_restrict for the moment
 * of reading: profile_perf.c).
 *
 * User space: the ELF symbol tables (.symtab, else .dynsym; ELF32 and
 * ELF64) of the files mapped executable in /proc/self/maps, and of the
 * vDSO (read from memory), read when the profile ends. Processes the
 * benchmark forked share those mappings; a process that exec'd another
 * program is not symbolised (the caller knows from the perf COMM records). */
#ifndef OSM_SYMBOLS_H
#define OSM_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct osm_ksyms;
/* Loads /proc/kallsyms. Returns NULL with the reason in why when the
 * symbols cannot be had (why is always set to a status: "kallsyms" when
 * loaded, else a sentence). */
struct osm_ksyms *osm_ksyms_load(char *why, size_t len);
/* The same from kallsyms text (unit tests): no bpf(2) sizes. */
struct osm_ksyms *osm_ksyms_parse(const char *text, char *why, size_t len);
/* Sets the span of the code made at run time at addr ([bpf]) to end: its
 * exact size, where bpf(2) tells it (profile_perf.c). */
void osm_ksyms_set_end(struct osm_ksyms *k, uint64_t addr, uint64_t end);
/* The function containing addr, or NULL (outside every symbol's span). */
const char *osm_ksyms_find(const struct osm_ksyms *k, uint64_t addr);
/* The name of a kernel frame: the function, OSM_KSYM_OUTSIDE where none
 * holds addr, "0x<addr>" without symbols (k NULL). */
#define OSM_KSYM_OUTSIDE "[kernel outside text]"
void osm_ksyms_name(const struct osm_ksyms *k, uint64_t addr, char *out, size_t len);
void osm_ksyms_free(struct osm_ksyms *k);

struct osm_usyms;
/* Reads the executable mappings of /proc/self/maps (ELF files are read on
 * the first lookup in them). NULL when /proc/self/maps cannot be read. */
struct osm_usyms *osm_usyms_load(void);
/* Writes the function containing addr into out ("name", or "file+0xoff"
 * when the file has no symbol for it, or "[unknown]" outside any mapping). */
void osm_usyms_name(struct osm_usyms *u, uint64_t addr, char *out, size_t len);
void osm_usyms_free(struct osm_usyms *u);

#endif
