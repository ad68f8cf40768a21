/* Traces recorded within a budget (issue 28; docs/trace-format.md 4.20, 4.21): which
 * functions were counted instead of traced (MODULE_COUNTED), and the budget a recording kept
 * (BUDGET). A process whose budget was chosen by a pilot began its events when the pilot
 * ended, mid-stack: stack.c treats its threads as windows from the BUDGET's tsc on. */
#include <stdlib.h>
#include <string.h>

#include "dec_budget.h"
#include "dec_modules.h"
#include "dec_tables.h"
#include "ptc_budget.h"

#define CORRUPT(...) ptc_session_set_error(s, PTC_E_CORRUPT, __VA_ARGS__)

int ptc_module_counted(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module_counted a;
    if (size < sizeof(a))
        return CORRUPT("MODULE_COUNTED chunk of pid %u is %zu bytes, shorter than its %zu-byte "
                       "header", pid, size, sizeof(a));
    memcpy(&a, payload, sizeof(a));
    const uint8_t *bits = (const uint8_t *)payload + sizeof(a);
    uint64_t nbytes = ((uint64_t)a.num_funcs + 7) / 8;
    if (sizeof(a) + nbytes != size)
        return CORRUPT("MODULE_COUNTED chunk of pid %u: a bitmap of %u functions does not fill "
                       "its %zu bytes exactly", pid, a.num_funcs, size);
    struct module *m = ptc_module_find(ptc_proc_find(s, pid), a.module_id);
    if (!m || m->num_funcs != a.num_funcs)
        return CORRUPT("MODULE_COUNTED chunk of pid %u names module %u with %u functions, "
                       "which that process did not announce before it",
                       pid, a.module_id, a.num_funcs);
    if (ptc_count_bits(bits, a.num_funcs) != a.num_counted)
        return CORRUPT("MODULE_COUNTED chunk of pid %u: %u functions said counted, %u bits set",
                       pid, a.num_counted, ptc_count_bits(bits, a.num_funcs));
    if (!m->sel && a.num_funcs && !(m->sel = calloc(a.num_funcs, 1)))
        return ptc_nomem(s);
    s->has_counted = 1;
    /* a counted function is not traced by this listing, whether or not a MODULE_ARMED chunk
     * said so too: each listing counts once */
    for (uint32_t i = 0; i < a.num_funcs; i++) {
        if (!((bits[i / 8] >> (i % 8)) & 1u) || (m->sel[i] & (MOD_SEL_COUNTED | MOD_SEL_DEMOTED)))
            continue;
        struct func *f = &s->funcs[m->fids[i]];
        m->sel[i] |= MOD_SEL_COUNTED;
        f->counted++;
        if (!(m->sel[i] & MOD_SEL_OFF)) {
            m->sel[i] |= MOD_SEL_OFF;
            f->unarmed++;
        }
    }
    return 0;
}

int ptc_budget_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_budget b;
    if (size < sizeof(b))
        return CORRUPT("BUDGET chunk of pid %u is %zu bytes, shorter than its %zu-byte header",
                       pid, size, sizeof(b));
    memcpy(&b, payload, sizeof(b));
    const char *note = (const char *)payload + sizeof(b);
    if (!b.note_size || b.note_size != size - sizeof(b) || note[b.note_size - 1])
        return CORRUPT("BUDGET chunk of pid %u: its %u-byte note does not fill its %zu bytes "
                       "and end with a NUL", pid, b.note_size, size);
    struct proc *p = ptc_proc_get(s, pid);
    if (!p)
        return ptc_nomem(s);
    if (s->nbudgets == s->capbudgets) {
        uint32_t cap = s->capbudgets ? 2 * s->capbudgets : 4;
        struct ptc_budget_info *v = realloc(s->budgets, (size_t)cap * sizeof(*v));
        if (!v)
            return ptc_nomem(s);
        s->budgets = v;
        s->capbudgets = cap;
    }
    char *n = strdup(note);
    if (!n)
        return ptc_nomem(s);
    if (b.source == PTC_BUDGET_SRC_PILOT) {
        p->pilot = 1;
        p->pilot_tsc = b.tsc;
    }
    if (b.source == PTC_BUDGET_SRC_GOVERNOR && (!p->governor_tsc || b.tsc < p->governor_tsc))
        p->governor_tsc = b.tsc ? b.tsc : 1;
    /* time is made at query time: the process's time base may come after this chunk */
    s->budgets[s->nbudgets++] = (struct ptc_budget_info){
        .pid = pid, .kind = b.kind, .source = b.source, .outcome = b.outcome, .limit = b.limit,
        .aux_bytes = b.aux_bytes, .per_event = b.per_event, .per_count = b.per_count,
        .predicted = b.predicted, .time = b.tsc, .pilot_ns = b.pilot_ns,
        .candidates = b.candidates, .traced = b.traced, .calls_total = b.calls_total,
        .calls_traced = b.calls_traced, .note = n};
    return 0;
}

void ptc_budget_free(struct ptc_session *s)
{
    for (uint32_t i = 0; i < s->nbudgets; i++)
        free((char *)s->budgets[i].note);
    free(s->budgets);
    s->budgets = NULL;
    s->nbudgets = s->capbudgets = 0;
}

int ptc_session_func_state(const struct ptc_session *s, uint32_t id)
{
    if (!s || id >= s->nfuncs)
        return PTC_FUNC_NEITHER;
    /* counting mode (record --counts): COUNTS chunks and no events, every function counted */
    if (ptc_session_func_traced(s, id))
        return !s->has_counted && s->tot.counts_segments && !s->tot.events
                   ? PTC_FUNC_COUNTED
                   : PTC_FUNC_TRACED;
    return s->funcs[id].counted ? PTC_FUNC_COUNTED : PTC_FUNC_NEITHER;
}

const char *ptc_func_state_name(int state)
{
    return state == PTC_FUNC_TRACED ? "traced" : state == PTC_FUNC_COUNTED ? "counted" : "-";
}

void ptc_session_func_states(const struct ptc_session *s, struct ptc_func_states *out)
{
    memset(out, 0, sizeof(*out));
    out->mixed = s->has_counted || s->nbudgets;
    uint64_t calls = 0;
    for (uint32_t id = 0; id < s->nfuncs; id++) {
        int st = ptc_session_func_state(s, id);
        out->traced += st == PTC_FUNC_TRACED;
        out->counted += st == PTC_FUNC_COUNTED;
        out->neither += st == PTC_FUNC_NEITHER;
        out->demoted += s->funcs[id].demoted != 0;
        calls += s->fstats[id].calls;
    }
    out->calls_counted = s->tot.counted_calls;
    out->calls_known = !s->no_aggregates;
    out->calls_traced = calls > out->calls_counted ? calls - out->calls_counted : 0;
}

int ptc_session_func_demoted(const struct ptc_session *s, uint32_t id)
{
    return s && id < s->nfuncs && s->funcs[id].demoted != 0;
}

uint32_t ptc_session_num_budgets(const struct ptc_session *s) { return s ? s->nbudgets : 0; }

int ptc_session_budget(const struct ptc_session *s, uint32_t i, struct ptc_budget_info *out)
{
    if (!s || !out || i >= s->nbudgets)
        return -PTC_E_ARG;
    *out = s->budgets[i];
    const struct proc *p = ptc_proc_find(s, out->pid);
    out->has_time = out->time != 0 && p && (s->timed_events || (s->file_flags & PTC_FILE_F_TIMED));
    out->time = out->has_time ? ptc_event_time(s, p, out->time) : 0;
    return 0;
}

const char *ptc_budget_kind_name(uint32_t kind)
{
    return kind == PTC_BUDGET_KIND_OVERHEAD ? "overhead"
           : kind == PTC_BUDGET_KIND_RATE   ? "rate"
                                            : "unknown";
}

const char *ptc_budget_source_name(uint32_t source)
{
    return source == PTC_BUDGET_SRC_PILOT      ? "pilot"
           : source == PTC_BUDGET_SRC_PREVIOUS ? "previous"
           : source == PTC_BUDGET_SRC_GOVERNOR ? "governor"
                                               : "unknown";
}

const char *ptc_budget_outcome_name(uint32_t outcome)
{
    return outcome == PTC_BUDGET_OK                ? "ok"
           : outcome == PTC_BUDGET_ALL             ? "all"
           : outcome == PTC_BUDGET_BELOW_COUNTING ? "below-counting"
                                                   : "unknown";
}
