/* Choosing what to trace at run time (`ptcall record --only/--skip`, docs/runtime.md):
 * PTCALL_ONLY and PTCALL_SKIP hold shell globs, one per line, matched as the analyses'
 * `--function` matches (common/ptc_select.c). The call sites of functions not chosen stay
 * disarmed nops -- for the software backend and for Intel PT alike, so under PT they never
 * enter the stub section -- and each object's MODULE_ARMED chunk says which functions were
 * armed, so that the outputs can tell "not traced" from "not called". */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "soft_internal.h"

/* The globs point into these (getenv's strings must not be split in place). */
static char only_text[8192], skip_text[8192];

/* Copies variable var into buf and adds its lines to list. 0, or -1 after a warning. */
static int read_globs(const char *var, char *buf, size_t n, const char **list, int *count)
{
    const char *v = secure_getenv(var); /* none in a set-user-ID program */
    if (!v || !*v)
        return 0;
    if (strlen(v) >= n) {
        warn("ptcall: %s is longer than %zu bytes; tracing nothing rather than something else",
             var, n - 1);
        return -1;
    }
    strcpy(buf, v);
    if (ptc_select_add_lines(list, count, buf) < 0) {
        warn("ptcall: %s holds more than %d globs; tracing nothing rather than something else",
             var, PTC_SELECT_MAX);
        return -1;
    }
    return 0;
}

int select_init(void)
{
    if (read_globs("PTCALL_ONLY", only_text, sizeof(only_text), rt.sel.only, &rt.sel.nonly) ||
        read_globs("PTCALL_SKIP", skip_text, sizeof(skip_text), rt.sel.skip, &rt.sel.nskip))
        return -1;
    ptc_select_describe(&rt.sel, rt.sel_spec, sizeof(rt.sel_spec));
    return 0;
}

void select_mark_unit(const struct ptc_map_unit *u, uint64_t stubs_start, uint8_t *slot_use,
                      int whole_units)
{
    if (!whole_units && !ptc_select_per_function(u))
        return;
    /* a decision per function, not per stub (a function has an entry and one or more exits):
     * units of up to 32 Ki functions, the others per stub */
    uint8_t bits[4096];
    int per_func = ptc_select_unit(&rt.sel, u, bits, sizeof(bits)) == 0;
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        int chosen = per_func ? (bits[st.func_index / 8] >> (st.func_index % 8)) & 1
                              : ptc_select_stub(&rt.sel, u, &st);
        if (!chosen)
            slot_use[(a - stubs_start) / PTCALL_STUB_STRIDE] |= SLOT_OFF;
    }
}

static void unmatched(const char *opt, const char *const *list, int n, uint64_t hit,
                      const char *what)
{
    for (int k = 0; k < n; k++)
        if (!(hit & ((uint64_t)1 << k)))
            warn("ptcall[%d]: %s '%s' matched no function of the instrumented objects this "
                 "process loaded: %s",
                 (int)getpid(), opt, list[k], what);
}

void select_report_unmatched(void)
{
    if (!ptc_select_active(&rt.sel) || rt.start_how == PTC_PROC_FORK ||
        (rt.arm_only && (uint32_t)getpid() != rt.pid))
        return;
    unmatched("--only", rt.sel.only, rt.sel.nonly, rt.sel.only_hit,
              "nothing it names was traced (see the names with 'ptcall report')");
    unmatched("--skip", rt.sel.skip, rt.sel.nskip, rt.sel.skip_hit, "it left nothing out");
}

void write_module_armed(const struct object *o)
{
    if (!ptc_select_active(&rt.sel))
        return;
    struct ptc_map_summary s;
    uint64_t addr = (uint64_t)(uintptr_t)o->map_start;
    if (ptc_map_scan(o->map_start, o->map_size, addr, o->stubs_start, o->stubs_end, &s, NULL) < 0)
        return;
    size_t n = ptc_select_armed_size(&s, rt.sel_spec), mapped = page_round_up(n);
    void *buf = map_anon(mapped);
    if (!buf) {
        /* without it the trace would claim every function was traced */
        warn("ptcall: %s: out of memory for its MODULE_ARMED chunk: the trace will not say "
             "which of its functions were left out",
             o->path);
        return;
    }
    /* soft: stubs of functions not chosen stay `ret` in every unit, so only chosen ones count */
    long len = ptc_select_build_armed(&rt.sel, o->map_start, o->map_size, addr, &s, o->module_id,
                                      0, rt.sel_spec, buf, n);
    if (len > 0) {
        struct iovec v = {buf, (size_t)len};
        write_proc_chunk_flags(PTC_CHUNK_MODULE_ARMED, PTC_CHUNK_F_OPTIONAL, &v, 1);
    }
    munmap(buf, mapped);
}

/* ---- attach (issue 31) ------------------------------------------------------------------ */

int select_set(const char *only, const char *skip, char *why, size_t n)
{
    if (strlen(only) >= sizeof(only_text) || strlen(skip) >= sizeof(skip_text)) {
        snprintf(why, n, "--only/--skip: more than %zu bytes of globs", sizeof(only_text) - 1);
        return -1;
    }
    memset(&rt.sel, 0, sizeof(rt.sel));
    strcpy(only_text, only);
    strcpy(skip_text, skip);
    if ((only_text[0] && ptc_select_add_lines(rt.sel.only, &rt.sel.nonly, only_text) < 0) ||
        (skip_text[0] && ptc_select_add_lines(rt.sel.skip, &rt.sel.nskip, skip_text) < 0)) {
        memset(&rt.sel, 0, sizeof(rt.sel));
        snprintf(why, n, "--only/--skip: more than %d globs", PTC_SELECT_MAX);
        return -1;
    }
    ptc_select_describe(&rt.sel, rt.sel_spec, sizeof(rt.sel_spec));
    return 0;
}
