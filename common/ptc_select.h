/* Choosing functions by name (docs/usage.md, Filters; docs/runtime.md, Choosing what to trace).
 *
 * One rule for every shell glob over function names: `--function` and `--exclude` of the
 * analyses (outputs/driver.c) and `ptcall record --only/--skip`, whose selection is checked by
 * `ptcall record` against the program's ELF files, applied by the runtime when it arms call
 * sites (soft and Intel PT), and recorded in MODULE_ARMED chunks (docs/trace-format.md 4.12).
 * Nothing here allocates: the runtime calls it while registering objects.
 */
#ifndef PTC_SELECT_H
#define PTC_SELECT_H

#include <stddef.h>
#include <stdint.h>

#include "ptc_map_read.h"

/* Most globs of each list (the bit masks of struct ptc_select are 64 bits wide). */
#define PTC_SELECT_MAX 64

/* The display name without its C++ parameter list and trailing qualifiers ("f(int) const"
 * -> "f"), in buf (n bytes), or name itself when it has none or does not fit. A clone's
 * suffixes stay ("counter(int) (.resume)" -> "counter (.resume)", "f(int) [clone .cold]" ->
 * "f [clone .cold]"): a coroutine's resume and destroy parts, cold parts and LTO's renamed
 * copies are functions of their own. */
const char *ptc_func_short_name(const char *name, char *buf, size_t n);

/* Whether glob (fnmatch, no flags) matches a function's display name, that name without
 * its C++ parameters, or its linkage name (may be NULL or ""). */
int ptc_glob_func(const char *glob, const char *name, const char *linkage);

/* A record-time selection: a function is chosen when it matches one of `only` (or `only` is
 * empty) and none of `skip` (--skip wins). only_hit / skip_hit: bit k is set once only[k] /
 * skip[k] matched a function looked at by ptc_select_func (for "matched nothing" messages). */
struct ptc_select {
    const char *only[PTC_SELECT_MAX];
    const char *skip[PTC_SELECT_MAX];
    int nonly, nskip;
    uint64_t only_hit, skip_hit;
    /* kept by ptc_select_func: the globs' literal heads (computed at its first call, when
     * lits_known is 0: clear it if the lists change afterwards) */
    int lits_known;
    uint16_t only_lit[PTC_SELECT_MAX], skip_lit[PTC_SELECT_MAX];
};

static inline int ptc_select_active(const struct ptc_select *s)
{
    return s->nonly > 0 || s->nskip > 0;
}

/* Appends the newline-separated globs of text (split in place; empty lines are ignored) to
 * list, which holds *n. 0, or -1 when there would be more than PTC_SELECT_MAX. */
int ptc_select_add_lines(const char **list, int *n, char *text);

/* Whether the function (display name, linkage name) is chosen; notes which globs matched. */
int ptc_select_func(struct ptc_select *s, const char *name, const char *linkage);

/* The selection as a user would type it, e.g. "--only 'a*' --skip 'ab*'", into out (n
 * bytes, cut short with "..." when it does not fit). Returns the length written. */
size_t ptc_select_describe(const struct ptc_select *s, char *out, size_t n);

/* Whether the functions of unit u can be chosen one by one: its call sites are sleds listed
 * in ptcall_sites (map v3+), which the runtime arms per site. Other units' sites call their
 * stubs always (-fptcall-ungated) or per unit (gated v2). */
static inline int ptc_select_per_function(const struct ptc_map_unit *u)
{
    return (u->hdr.flags & PTCALL_MAP_F_SLEDS) != 0;
}

/* Whether stub st of unit u belongs to a chosen function. */
int ptc_select_stub(struct ptc_select *s, const struct ptc_map_unit *u,
                    const struct ptcall_map_stub *st);

/* Which functions of unit u are chosen: bit i % 8 of bits[i / 8] for function i (bits holds
 * nbytes). Asks once per function where a unit has several stubs per function. 0, or -1
 * when the unit has more functions than fit (then ask per stub). */
int ptc_select_unit(struct ptc_select *s, const struct ptc_map_unit *u, uint8_t *bits,
                    size_t nbytes);

/* ptc_select_build_armed flags: units whose functions cannot be chosen one by one
 * (ptc_select_per_function) count as armed entirely -- their stubs run whatever was chosen,
 * which is what the Intel PT hardware then sees. Without it (the software backend, which
 * leaves the stubs of unchosen functions `ret`), only chosen functions count. */
#define PTC_SELECT_WHOLE_UNITS 0x1u

/* Bytes of the PTC_CHUNK_MODULE_ARMED payload for an object of sum's functions. */
size_t ptc_select_armed_size(const struct ptc_map_summary *sum, const char *spec);

/* Writes the PTC_CHUNK_MODULE_ARMED payload of the object whose map section is
 * [data, data + size) at run-time address addr (as for ptc_map_build_module, whose function
 * numbering it follows) into out: struct ptc_module_armed, the bit set of armed functions,
 * then spec (ptc_select_describe). Returns the payload size, or a PTC_MAP_E_* error. */
long ptc_select_build_armed(struct ptc_select *s, const void *data, size_t size, uint64_t addr,
                            const struct ptc_map_summary *sum, uint32_t module_id,
                            unsigned flags, const char *spec, void *out, size_t out_size);

#endif
