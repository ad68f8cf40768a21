/* Counted and traced in one run (docs/runtime.md, *Tracing within a budget*): in a trace of
 * events, the candidate functions that are not traced get counting mode's trampolines on
 * their entry sites, so every function's calls stay exact. Which are traced:
 *   PTCALL_COUNT_REST=1   those PTCALL_ONLY/SKIP choose; every other function is counted;
 *   PTCALL_TRACE_SET=PATH the candidates (PTCALL_ONLY/SKIP's choice) the file lists; the other
 *                         candidates are counted, the rest neither.
 * The trace says it per module: MODULE_ARMED (traced) and MODULE_COUNTED (counted) after its
 * MODULE chunk; the calls are in COUNTS chunks (segments MARK, END, CRASH as in counting
 * mode; a traced function's slot is 0). A counting trampoline needs a unit that gives up
 * %r11 and has call-site sleds (every unit the pass builds); a function of another unit is
 * traced or neither. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "ptc_sled.h"
#include "soft_internal.h"

struct plan_ctx {
    struct object *o;
    uint8_t *slot_use;
    uint32_t fbase;
    uint32_t counted;
    uint64_t sites_start, sites_end;
};

static char spec[1024 + PATH_MAX + 64]; /* MODULE_ARMED's selection text */

static void add_spec(const char *text)
{
    size_t l = strlen(spec);
    snprintf(spec + l, sizeof(spec) - l, "%s%s", l ? " " : "", text);
}

static int plan_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct plan_ctx *c = ctx;
    struct object *o = c->o;
    uint32_t fb = c->fbase;
    c->fbase += u->hdr.num_funcs;
    if (fb + (uint64_t)u->hdr.num_funcs > o->total_funcs)
        return 1;
    if (u->sites_end > u->sites_start) {
        c->sites_start = u->sites_start;
        c->sites_end = u->sites_end;
    }
    /* counting needs a sled per entry (a site to jump from) and %r11 to give up */
    int countable = ptc_select_per_function(u) && (u->hdr.flags & PTCALL_MAP_F_SCRATCH_R11) &&
                    o->num_funcs != 0;
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++) {
        struct ptcall_map_func f;
        ptc_map_get_func(u, i, &f);
        const char *name = u->strings + f.name, *linkage = u->strings + f.linkage_name;
        int cand = !ptc_select_active(&rt.sel) || ptc_select_func(&rt.sel, name, linkage);
        uint8_t chosen = o->fstate[fb + i] & MIXED_F_CHOSEN;
        uint8_t governed = o->fstate[fb + i] & (MIXED_F_DEMOTING | MIXED_F_CHANGED |
                                                MIXED_F_DEMOTED);
        /* a pilot traces what it chose (nothing while it counts) */
        int traced = cand && !(governed & MIXED_F_DEMOTED) &&
                     (rt.pilot ? chosen != 0 : trace_set_has(name, linkage));
        /* a trace set or a pilot counts the other candidates; --count-rest alone what --only
         * left out */
        int counted = !traced && countable && (trace_set_path() || rt.pilot ? cand : 1);
        o->fstate[fb + i] = (uint8_t)((traced ? MIXED_F_TRACED : 0) |
                                      (counted ? MIXED_F_COUNTED : 0) | chosen | governed);
    }
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        uint64_t k = stub_slot(o, a);
        uint32_t fi = fb + st.func_index;
        if (st.func_index >= u->hdr.num_funcs)
            continue;
        /* a function the governor just demoted keeps its exits for the calls in flight */
        int exit_kept = (o->fstate[fi] & MIXED_F_DEMOTING) &&
                        (st.kind & PTCALL_STUB_KIND_MASK) != PTCALL_STUB_ENTRY;
        if (!(o->fstate[fi] & MIXED_F_TRACED) && !exit_kept)
            c->slot_use[k] |= SLOT_OFF;
        uint64_t idx = o->first_counter + fi;
        if ((st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_ENTRY && countable &&
            idx < COUNTERS_MAX)
            o->cidx[k] = (uint32_t)idx;
        /* a governed set's traced functions get trampolines too: it may demote them */
        if ((st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_ENTRY && o->cidx[k] != UINT32_MAX &&
            ((o->fstate[fi] & MIXED_F_COUNTED) || (rt.gov_set && (o->fstate[fi] & MIXED_F_TRACED))))
            c->slot_use[k] |= SLOT_COUNT;
    }
    return 0;
}

int mixed_plan(struct object *o, const struct object_layout *lay, uint8_t *slot_use)
{
    size_t nslots = (size_t)((o->stubs_end - o->stubs_start) / PTCALL_STUB_STRIDE);
    if (!o->fstate)
        o->fstate = map_anon(o->total_funcs + 1);
    if (!o->cidx) {
        o->cidx = map_anon((nslots + 1) * sizeof(uint32_t));
        if (o->cidx)
            memset(o->cidx, 0xff, (nslots + 1) * sizeof(uint32_t));
    }
    if (!o->fstate || !o->cidx)
        return -1;
    struct plan_ctx c = {.o = o, .slot_use = slot_use};
    ptc_map_walk_in(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                    o->stubs_start, o->stubs_end, &lay->obj, plan_unit, &c, NULL);
    int any = 0;
    for (uint32_t i = 0; i < o->total_funcs && !any; i++)
        any = (o->fstate[i] & (MIXED_F_COUNTED | (rt.gov_set ? MIXED_F_TRACED : 0))) != 0;
    if (!any || o->count_tr.base)
        return 0;
    if (c.sites_end <= c.sites_start ||
        count_tramps_build_mixed(o, slot_use, c.sites_start, c.sites_end, &o->count_tr) < 0) {
        /* the chunks must not claim counts nobody takes */
        warn("ptcall: %s: no room for counting trampolines near its code: the functions it "
             "does not trace are not counted", o->path);
        for (uint32_t i = 0; i < o->total_funcs; i++)
            o->fstate[i] &= (uint8_t)~MIXED_F_COUNTED;
        for (size_t k = 0; k < nslots; k++)
            slot_use[k] &= (uint8_t)~SLOT_COUNT;
    }
    return 0;
}

/* MODULE_ARMED (bits MIXED_F_TRACED, with the selection's text) or MODULE_COUNTED */
static void write_bits(const struct object *o, uint16_t type, uint8_t flag)
{
    if (!o->fstate)
        return;
    if (!spec[0]) { /* once: the selection, then how the rest is chosen */
        add_spec(rt.sel_spec);
        if (rt.pilot) {
            add_spec("--overhead");
        } else if (trace_set_path()) {
            char t[PATH_MAX + 32];
            snprintf(t, sizeof(t), "--trace-set '%s'", trace_set_path());
            add_spec(t);
        } else {
            add_spec("--count-rest");
        }
    }
    size_t nbits = ((size_t)o->total_funcs + 7) / 8;
    size_t text = type == PTC_CHUNK_MODULE_ARMED ? strlen(spec) + 1 : 0;
    size_t size = sizeof(struct ptc_module_armed) + nbits + text, mapped = page_round_up(size);
    uint8_t *buf = map_anon(mapped);
    if (!buf) {
        warn("ptcall: %s: out of memory for its %s chunk", o->path,
             type == PTC_CHUNK_MODULE_ARMED ? "MODULE_ARMED" : "MODULE_COUNTED");
        return;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < o->total_funcs; i++)
        if (o->fstate[i] & flag) {
            buf[sizeof(struct ptc_module_armed) + i / 8] |= (uint8_t)(1u << (i % 8));
            n++;
        }
    /* the two layouts are the same; MODULE_COUNTED has no text (reserved 0) */
    struct ptc_module_armed h = {.module_id = o->module_id, .num_funcs = o->total_funcs,
                                 .num_armed = n, .spec_size = (uint32_t)text};
    memcpy(buf, &h, sizeof(h));
    if (text)
        memcpy(buf + sizeof(h) + nbits, spec, text);
    struct iovec v = {buf, size};
    write_proc_chunk_flags(type, PTC_CHUNK_F_OPTIONAL, &v, 1);
    munmap(buf, mapped);
}

void mixed_write_module_chunks(const struct object *o)
{
    write_bits(o, PTC_CHUNK_MODULE_ARMED, MIXED_F_TRACED);
    write_bits(o, PTC_CHUNK_MODULE_COUNTED, MIXED_F_COUNTED);
}

void mixed_after_fork(void)
{
    if (!rt.mixed || !ptc_counters)
        return;
    counts_zero();
    rt.segment = 0;
}
