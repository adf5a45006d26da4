/* symbols.h - addresses to function names for the profiler (hotspots).
 *
 * Kernel: /proc/kallsyms (text symbols; module symbols keep their
 * "[module]"). When kptr_restrict hides the addresses (all read as 0), the
 * reason says what to set (the profiler, as root, lowers kptr_restrict for
 * the moment of reading: profile_perf.c).
 *
 * User space: the ELF symbol tables (.symtab, else .dynsym; ELF32 and
 * ELF64) of the files mapped executable in /proc/self/maps, read when the
 * profile ends. Processes the benchmark forked share those mappings; a
 * process that exec'd another program is not symbolised (the caller knows
 * from the perf COMM records). */
#ifndef OSM_SYMBOLS_H
#define OSM_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct osm_ksyms;
/* Loads /proc/kallsyms. Returns NULL with the reason in why when the
 * symbols cannot be had (why is always set to a status: "kallsyms" when
 * loaded, else a sentence). */
struct osm_ksyms *osm_ksyms_load(char *why, size_t len);
/* The function containing addr, or NULL. */
const char *osm_ksyms_find(const struct osm_ksyms *k, uint64_t addr);
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
