/* record --trigger (PTCALL_TRIGGER, docs/runtime.md *Flight recorder*): a snapshot when a
 * function returns, or when a call of it took longer than a bound.
 *
 * Only the watched function pays: its entry and exit stubs are patched to jump through a
 * slot of their own (a word in a page within rel32 reach of the stub section) that holds
 * ptc_trigger_handler, which takes the slow path with the record marked; the slow path
 * stores the event as usual and then checks the call (trigger_event). Every other stub
 * keeps its unit's handler, so the rest of the program runs at ring mode's cost. Its call
 * sites call their stubs (no trampoline, its leaf exit armed) so that the check sees them. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "soft_internal.h"

static char spec_text[512];   /* PTCALL_TRIGGER as given, for messages */
static char glob_text[512];   /* the function glob (the text before '>') */
static struct ptc_select sel; /* one glob, matched as --only matches */
static uint64_t bound_ns;     /* FUNC>TIME: the bound; 0: every return */
static int active;

/* the watched stubs: record id, whether it is an exit */
#define TRIG_STUBS 256
static struct {
    uint32_t id;
    uint8_t exit;
} stubs[TRIG_STUBS];
static _Atomic uint32_t nstubs;

/* per object: the page holding the handler's address, within reach of its stubs */
static uint64_t slot_page[MAX_OBJECTS];

/* at most one trigger snapshot per second */
static _Atomic uint64_t last_fire_ns, skipped;

int trigger_active(void) { return active; }

static void trigger_event(struct thread *ts, uint64_t rec, uint64_t tsc);

/* "10ms", "500us", "2s", "100ns", "1.5ms": ns, or -1 */
static int64_t parse_time(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    double mult;
    if (!strcmp(end, "ns"))
        mult = 1;
    else if (!strcmp(end, "us"))
        mult = 1e3;
    else if (!strcmp(end, "ms"))
        mult = 1e6;
    else if (!strcmp(end, "s"))
        mult = 1e9;
    else
        return -1;
    double ns = v * mult;
    return ns >= 1 && ns < 1e18 ? (int64_t)ns : -1;
}

int trigger_config(const char *spec)
{
    if (strlen(spec) >= sizeof(spec_text)) {
        warn("ptcall: PTCALL_TRIGGER is longer than %zu bytes: not tracing", sizeof(spec_text) - 1);
        return -1;
    }
    strcpy(spec_text, spec);
    strcpy(glob_text, spec);
    char *gt = strchr(glob_text, '>');
    if (gt) {
        *gt = 0;
        int64_t ns = parse_time(gt + 1);
        if (ns < 0) {
            warn("ptcall: PTCALL_TRIGGER=%s: '%s' is not a duration (a number with ns, us, ms "
                 "or s, as FUNC>10ms): not tracing", spec_text, gt + 1);
            return -1;
        }
        bound_ns = (uint64_t)ns;
    }
    if (!glob_text[0] || strchr(glob_text, '\n')) {
        warn("ptcall: PTCALL_TRIGGER=%s: no function named (give FUNC or FUNC>TIME, as "
             "--trigger 'handle_request>10ms'): not tracing", spec_text);
        return -1;
    }
    memset(&sel, 0, sizeof(sel));
    sel.only[0] = glob_text;
    sel.nonly = 1;
    active = 1;
    rt.trigger_hook = trigger_event;
    return 0;
}

uint64_t trigger_slot(const struct object *o, const struct ptc_map_unit *u,
                      const struct ptcall_map_stub *st, uint32_t id)
{
    if (!active)
        return 0;
    unsigned kind = st->kind & PTCALL_STUB_KIND_MASK;
    if (kind != PTCALL_STUB_ENTRY && kind != PTCALL_STUB_EXIT)
        return 0;
    if (!ptc_select_stub(&sel, u, st))
        return 0;
    uint32_t n = atomic_load(&nstubs);
    if (n >= TRIG_STUBS)
        return 0;
    uint32_t k;
    for (k = 0; k < atomic_load(&rt.nobjs) && rt.objs[k] != o; k++)
        ;
    if (k >= atomic_load(&rt.nobjs))
        return 0;
    if (!slot_page[k]) {
        uint8_t *p = map_near(o->stubs_start, o->stubs_end, 4096);
        if (!p)
            return 0;
        uint64_t h = (uint64_t)(uintptr_t)ptc_trigger_handler;
        memcpy(p, &h, sizeof(h));
        slot_page[k] = (uint64_t)(uintptr_t)p;
    }
    stubs[n].id = id;
    stubs[n].exit = kind == PTCALL_STUB_EXIT;
    atomic_store(&nstubs, n + 1);
    return slot_page[k];
}

static void trigger_event(struct thread *ts, uint64_t rec, uint64_t tsc)
{
    uint32_t id = (uint32_t)(rec >> 4), n = atomic_load(&nstubs);
    int exit = -1;
    for (uint32_t i = 0; i < n; i++)
        if (stubs[i].id == id) {
            exit = stubs[i].exit;
            break;
        }
    if (exit < 0)
        return;
    if (!exit) {
        if (ts->trig_depth < sizeof(ts->trig_tsc) / sizeof(ts->trig_tsc[0]))
            ts->trig_tsc[ts->trig_depth] = tsc;
        ts->trig_depth++;
        return;
    }
    uint64_t took_ns = 0;
    if (ts->trig_depth) {
        uint32_t d = --ts->trig_depth;
        if (d < sizeof(ts->trig_tsc) / sizeof(ts->trig_tsc[0]) && rt.tb.tsc_hz)
            took_ns = (uint64_t)((double)(tsc - ts->trig_tsc[d]) * 1e9 / (double)rt.tb.tsc_hz);
    }
    if (bound_ns && took_ns <= bound_ns)
        return;
    uint64_t now = mono_ns(), last = atomic_load(&last_fire_ns);
    if (last && now - last < 1000000000ull) {
        if (atomic_fetch_add(&skipped, 1) == 0)
            warn("ptcall: trigger '%s' fired again within a second of its last snapshot: "
                 "skipped (at most one trigger snapshot per second; this is said once)",
                 spec_text);
        return;
    }
    atomic_store(&last_fire_ns, now);
    char why[600];
    size_t at = 0;
    const char *p = spec_text;
    while (*p && at + 1 < sizeof(why))
        why[at++] = *p++;
    why[at] = 0;
    if (bound_ns) {
        /* the call's duration, in microseconds */
        char d[32];
        int k = 0;
        uint64_t us = took_ns / 1000;
        do
            d[k++] = (char)('0' + us % 10);
        while ((us /= 10) && k < 30);
        const char *took = ": took ";
        while (*took && at + 1 < sizeof(why))
            why[at++] = *took++;
        while (k && at + 1 < sizeof(why))
            why[at++] = d[--k];
        const char *unit = " us";
        while (*unit && at + 1 < sizeof(why))
            why[at++] = *unit++;
        why[at] = 0;
    }
    ring_snapshot_file(PTC_SNAP_TRIGGER, why, 0, 0);
}

void trigger_report_unmatched(void)
{
    if (!active || (sel.only_hit & 1) || rt.start_how == PTC_PROC_FORK)
        return;
    warn("ptcall[%d]: trigger '%s' names no function of the instrumented objects this process "
         "loaded: no trigger snapshot was taken (see the names with ptcall report, or nm)",
         (int)getpid(), spec_text);
}
