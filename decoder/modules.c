/* Per-process module tables: stub ids to (function, kind), and stub addresses to stub ids
 * for front-ends that see instruction addresses (Intel PT). */
#include <stdlib.h>
#include <string.h>

#include "dec_modules.h"
#include "dec_par.h"
#include "dec_tables.h"
#include "ptc_sorted.h"

/* Allocates m's address index for its num_stubs stubs. Returns 0, or -1 when out of
 * memory (then m holds nothing to free). */
static int module_alloc_index(struct module *m)
{
    size_t n = m->num_stubs ? m->num_stubs : 1;
    m->addr = malloc(n * sizeof(uint64_t));
    m->ids = malloc(n * sizeof(uint32_t));
    m->by_index = malloc(n * sizeof(uint64_t));
    if (m->addr && m->ids && m->by_index)
        return 0;
    ptc_module_free(m);
    return -1;
}

static int cmp_u64idx(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

#define CORRUPT_MODULE(...) ptc_session_set_error(s, PTC_E_CORRUPT, __VA_ARGS__)

static int str_ok(const char *strings, uint32_t size, uint32_t off)
{
    return off < size && memchr(strings + off, 0, size - off) != NULL;
}

/* Adds (path, identity) to the session's list of objects (ptc_session_modules) unless there.
 * Returns 0 or -PTC_E_NOMEM. */
static int note_module(struct ptc_session *s, const char *path, uint64_t identity,
                       uint32_t num_funcs)
{
    for (uint32_t i = 0; i < s->nmodlist; i++)
        if (s->modlist[i].identity == identity && !strcmp(s->modlist[i].path, path))
            return 0;
    if (s->nmodlist == s->capmodlist) {
        uint32_t nc = s->capmodlist ? s->capmodlist * 2 : 8;
        struct ptc_module_desc *n = realloc(s->modlist, nc * sizeof(*n));
        if (!n)
            return -PTC_E_NOMEM;
        s->modlist = n;
        s->capmodlist = nc;
    }
    char *p = strdup(path);
    if (!p)
        return -PTC_E_NOMEM;
    s->modlist[s->nmodlist++] = (struct ptc_module_desc){p, identity, num_funcs};
    return 0;
}

int ptc_session_add_module(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module m;
    if (!s || (!payload && size))
        return -PTC_E_ARG;
    if (size < sizeof(m))
        return CORRUPT_MODULE("module chunk of pid %u is %zu bytes, shorter than its header",
                              pid, size);
    memcpy(&m, payload, sizeof(m));
    uint64_t need = sizeof(m) + (uint64_t)m.num_stubs * sizeof(struct ptc_module_stub) +
                    (uint64_t)m.num_funcs * sizeof(struct ptc_module_func) + m.strings_size;
    if (need > size)
        return CORRUPT_MODULE("module chunk of pid %u: %u stubs, %u functions and %u bytes "
                              "of strings do not fit its %zu bytes",
                              pid, m.num_stubs, m.num_funcs, m.strings_size, size);
    if ((uint64_t)m.first_stub_id + m.num_stubs > PTC_MAX_STUBS_PER_PROC)
        return CORRUPT_MODULE("module chunk of pid %u: stub ids %u..%u are implausible", pid,
                              m.first_stub_id, m.first_stub_id + m.num_stubs);
    const uint8_t *base = payload;
    const uint8_t *stubp = base + sizeof(m);
    const uint8_t *funcp = stubp + (size_t)m.num_stubs * sizeof(struct ptc_module_stub);
    const char *strings = (const char *)(funcp + (size_t)m.num_funcs * sizeof(struct ptc_module_func));
    if (!str_ok(strings, m.strings_size, m.path))
        return CORRUPT_MODULE("module chunk of pid %u: its path is not a string", pid);
    const char *path = strings + m.path;
    struct proc *p = ptc_proc_get(s, pid);
    if (!p)
        return ptc_nomem(s);
    /* function ids */
    uint32_t *ids = malloc((m.num_funcs ? m.num_funcs : 1) * sizeof(*ids));
    if (!ids)
        return ptc_nomem(s);
    for (uint32_t i = 0; i < m.num_funcs; i++) {
        struct ptc_module_func f;
        memcpy(&f, funcp + (size_t)i * sizeof(f), sizeof(f));
        if (!str_ok(strings, m.strings_size, f.name) ||
            !str_ok(strings, m.strings_size, f.linkage_name) ||
            !str_ok(strings, m.strings_size, f.file)) {
            free(ids);
            return CORRUPT_MODULE("module chunk of pid %u (%s): function %u has a bad string "
                                  "offset", pid, path, i);
        }
        ids[i] = ptc_func_intern(s, path, strings + f.name, strings + f.linkage_name,
                                 strings + f.file, f.line);
        if (ids[i] == UINT32_MAX) {
            free(ids);
            return ptc_nomem(s);
        }
    }
    /* check the stubs before changing anything */
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        struct ptc_module_stub st;
        memcpy(&st, stubp + (size_t)i * sizeof(st), sizeof(st));
        if (st.func >= m.num_funcs || (st.kind > PTCALL_STUB_LANDING && st.kind != PTC_STUB_CALL)) {
            free(ids);
            return CORRUPT_MODULE("module chunk of pid %u (%s): stub %u names function %u "
                                  "of %u, kind %u",
                                  pid, path, i, st.func, m.num_funcs, st.kind);
        }
    }
    uint32_t end = m.first_stub_id + m.num_stubs;
    if (end > p->nstubs) {
        struct stubent *ns = realloc(p->stubs, (size_t)end * sizeof(*ns));
        if (!ns) {
            free(ids);
            return ptc_nomem(s);
        }
        for (uint32_t i = p->nstubs; i < end; i++)
            ns[i] = (struct stubent){.func = 0, .kind = STUB_NONE, .valid = 0, .site = 0};
        p->stubs = ns;
        p->nstubs = end;
    }
    struct module mod = {.module_id = m.module_id, .first_stub = m.first_stub_id,
                         .num_stubs = m.num_stubs, .lo = m.stubs_start, .hi = m.stubs_end,
                         .load_bias = m.load_bias, .identity = m.identity};
    uint64_t *pairs = malloc(((size_t)m.num_stubs ? m.num_stubs : 1) * 2 * sizeof(uint64_t));
    if (!pairs || module_alloc_index(&mod) || !(mod.path = strdup(path))) {
        if (mod.addr)
            ptc_module_free(&mod); /* mod.fids is still NULL: ids is freed below */
        free(pairs);
        free(ids);
        return ptc_nomem(s);
    }
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        struct ptc_module_stub st;
        memcpy(&st, stubp + (size_t)i * sizeof(st), sizeof(st));
        struct stubent *se = &p->stubs[m.first_stub_id + i];
        se->func = ids[st.func];
        se->kind = (uint8_t)st.kind;
        se->site = st.site;
        se->valid = 1;
        pairs[2 * i] = st.address;
        pairs[2 * i + 1] = m.first_stub_id + i;
        mod.by_index[i] = st.address;
    }
    qsort(pairs, m.num_stubs, 2 * sizeof(uint64_t), cmp_u64idx);
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        mod.addr[i] = pairs[2 * i];
        mod.ids[i] = (uint32_t)pairs[2 * i + 1];
    }
    free(pairs);
    /* kept: MODULE_ARMED chunks name functions by their index in this chunk */
    mod.fids = ids;
    mod.num_funcs = m.num_funcs;
    for (uint32_t i = 0; i < m.num_funcs; i++)
        s->funcs[ids[i]].in_modules++;
    if (note_module(s, path, m.identity, m.num_funcs)) {
        ptc_module_free(&mod);
        return ptc_nomem(s);
    }
    /* a module re-announced under the same id replaces the old entry */
    for (uint32_t i = 0; i < p->nmods; i++)
        if (p->mods[i].module_id == m.module_id && !p->mods[i].unloaded) {
            ptc_module_free(&p->mods[i]);
            p->mods[i] = mod;
            return 0;
        }
    if (p->nmods == p->capmods) {
        uint32_t nc = p->capmods ? p->capmods * 2 : 8;
        struct module *nm = realloc(p->mods, nc * sizeof(*nm));
        if (!nm) {
            ptc_module_free(&mod);
            return ptc_nomem(s);
        }
        p->mods = nm;
        p->capmods = nc;
    }
    p->mods[p->nmods++] = mod;
    return 0;
}

struct module *ptc_module_find(const struct proc *p, uint32_t module_id)
{
    for (uint32_t i = p ? p->nmods : 0; i-- > 0;)
        if (p->mods[i].module_id == module_id && !p->mods[i].unloaded)
            return &p->mods[i];
    return NULL;
}

/* The module of p last announced under module_id, unloaded or not: a COUNTS chunk of a trace
 * of events (counted beside tracing, issue 28) comes at the process's end, after the
 * executable's own MODULE_UNLOAD (its destructor runs first); a process never reuses an id */
static const struct module *module_by_id_any(const struct proc *p, uint32_t module_id)
{
    for (uint32_t i = p ? p->nmods : 0; i-- > 0;)
        if (p->mods[i].module_id == module_id)
            return &p->mods[i];
    return NULL;
}

uint32_t ptc_count_bits(const uint8_t *bits, uint32_t n)
{
    uint32_t c = 0;
    for (uint32_t i = 0; i < n; i++)
        c += (bits[i / 8] >> (i % 8)) & 1u;
    return c;
}

int ptc_module_armed(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module_armed a;
    if (size < sizeof(a))
        return CORRUPT_MODULE("MODULE_ARMED chunk of pid %u is %zu bytes, shorter than its "
                              "header", pid, size);
    memcpy(&a, payload, sizeof(a));
    const uint8_t *bits = (const uint8_t *)payload + sizeof(a);
    uint64_t nbytes = ((uint64_t)a.num_funcs + 7) / 8;
    const char *spec = (const char *)bits + nbytes;
    if (sizeof(a) + nbytes + a.spec_size > size || !a.spec_size || spec[a.spec_size - 1])
        return CORRUPT_MODULE("MODULE_ARMED chunk of pid %u: %u functions and a %u-byte "
                              "selection text do not fit its %zu bytes",
                              pid, a.num_funcs, a.spec_size, size);
    const struct proc *proc = ptc_proc_find(s, pid);
    struct module *m = ptc_module_find(proc, a.module_id);
    /* a function armed and no longer: demoted, once a governor said so (4.20) */
    int governed = proc && proc->governor_tsc;
    if (!m || m->num_funcs != a.num_funcs)
        return CORRUPT_MODULE("MODULE_ARMED chunk of pid %u names module %u with %u functions, "
                              "which that process did not announce before it",
                              pid, a.module_id, a.num_funcs);
    if (ptc_count_bits(bits, a.num_funcs) != a.num_armed)
        return CORRUPT_MODULE("MODULE_ARMED chunk of pid %u: %u functions said armed, %u bits "
                              "set", pid, a.num_armed, ptc_count_bits(bits, a.num_funcs));
    if (!s->selection && !(s->selection = strdup(spec)))
        return ptc_nomem(s);
    if (!m->sel && a.num_funcs && !(m->sel = calloc(a.num_funcs, 1)))
        return ptc_nomem(s);
    /* once per listing: a MODULE_COUNTED chunk of the module may have said it first. A
     * later MODULE_ARMED chunk of the same listing (a budget's pilot chose, docs/trace-format.md
     * 4.20) arms what it names from then on: those functions are traced, no longer counted */
    for (uint32_t i = 0; i < a.num_funcs; i++) {
        struct func *f = &s->funcs[m->fids[i]];
        int on = (bits[i / 8] >> (i % 8)) & 1u;
        if (on) {
            m->sel[i] |= MOD_SEL_WAS_ON;
        } else if (governed && (m->sel[i] & (MOD_SEL_WAS_ON | MOD_SEL_OFF)) == MOD_SEL_WAS_ON) {
            /* traced, and no longer: a budget's governor demoted it (4.20). It stays traced
             * for its part of the run, its later calls counted */
            if (!(m->sel[i] & MOD_SEL_DEMOTED)) {
                m->sel[i] |= MOD_SEL_DEMOTED;
                f->demoted++;
            }
            continue;
        }
        if (!on && !(m->sel[i] & MOD_SEL_OFF)) {
            m->sel[i] |= MOD_SEL_OFF;
            f->unarmed++;
        } else if (on && (m->sel[i] & MOD_SEL_OFF)) {
            m->sel[i] &= (uint8_t)~MOD_SEL_OFF;
            f->unarmed--;
            if (m->sel[i] & MOD_SEL_COUNTED) {
                m->sel[i] &= (uint8_t)~MOD_SEL_COUNTED;
                f->counted--;
            }
        }
    }
    return 0;
}

void ptc_session_set_counts_hook(struct ptc_session *s, ptc_counts_hook fn, void *ctx)
{
    s->counts_hook = fn;
    s->counts_hook_ctx = ctx;
}

int ptc_counts_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_counts h;
    if (size < sizeof(h))
        return CORRUPT_MODULE("COUNTS chunk of pid %u is %zu bytes, shorter than its header",
                              pid, size);
    memcpy(&h, payload, sizeof(h));
    const uint8_t *p = payload;
    uint64_t at = sizeof(h) + (uint64_t)h.num_modules * sizeof(struct ptc_counts_module);
    uint64_t nf = 0;
    for (uint32_t i = 0; i < h.num_modules && at <= size; i++) {
        struct ptc_counts_module m;
        memcpy(&m, p + sizeof(h) + i * sizeof(m), sizeof(m));
        nf += m.num_funcs;
    }
    if (at > size || nf > size || at + nf * 8 + h.label_size != size || !h.label_size ||
        p[size - 1])
        return CORRUPT_MODULE("COUNTS chunk of pid %u: %u modules, %llu functions and a "
                              "%u-byte label do not fill its %zu bytes exactly",
                              pid, h.num_modules, (unsigned long long)nf, h.label_size, size);
    /* parallel decode: every worker reads process-level chunks; one adds the calls */
    int add = ptc_par_primary(s);
    uint32_t *fids = NULL;
    uint64_t *calls = NULL;
    if (add && s->counts_hook && nf) {
        fids = malloc(nf * sizeof(*fids));
        calls = malloc(nf * sizeof(*calls));
        if (!fids || !calls) {
            free(fids);
            free(calls);
            return ptc_nomem(s);
        }
    }
    const struct proc *pr = ptc_proc_find(s, pid);
    uint64_t k = 0;
    for (uint32_t i = 0; i < h.num_modules; i++) {
        struct ptc_counts_module m;
        memcpy(&m, p + sizeof(h) + i * sizeof(m), sizeof(m));
        const struct module *mod = module_by_id_any(pr, m.module_id);
        if (!mod || mod->num_funcs != m.num_funcs) {
            free(fids);
            free(calls);
            return CORRUPT_MODULE("COUNTS chunk of pid %u names module %u with %u functions, "
                                  "which that process did not announce before it",
                                  pid, m.module_id, m.num_funcs);
        }
        for (uint32_t f = 0; f < m.num_funcs; f++, k++) {
            uint64_t c;
            memcpy(&c, p + at + k * 8, 8);
            if (!add)
                continue;
            s->fstats[mod->fids[f]].calls += c;
            s->tot.counted_calls += c;
            if (fids) {
                fids[k] = mod->fids[f];
                calls[k] = c;
            }
        }
    }
    int r = 0;
    if (add && (h.flags & PTC_COUNTS_F_MARK)) { /* ptcall_mark(label) closed it */
        uint64_t seg = 0;
        for (uint64_t i = 0; i < nf; i++) {
            uint64_t c;
            memcpy(&c, p + at + i * 8, 8);
            seg += c;
        }
        uint32_t id;
        r = ptc_mark_add(s, (const char *)p + at + nf * 8,
                         &(struct mark_label){.marks = 1, .counted_calls = seg}, &id);
    }
    if (add && !r) {
        s->tot.counts_segments++;
        if (s->counts_hook)
            r = s->counts_hook(s->counts_hook_ctx, pid, &h, (const char *)p + at + nf * 8, fids,
                               calls, (uint32_t)nf);
    }
    free(fids);
    free(calls);
    return r;
}

int ptc_session_lookup_stub(const struct ptc_session *s, uint32_t pid, uint64_t ip,
                            uint32_t *stub_id)
{
    const struct proc *p = s ? ptc_proc_find(s, pid) : NULL;
    if (!p)
        return -PTC_E_BADSTUB;
    for (uint32_t i = p->nmods; i-- > 0;) { /* newest first: a reloaded address wins */
        const struct module *m = &p->mods[i];
        if (m->unloaded || ip < m->lo || ip >= m->hi)
            continue;
        size_t k = ptc_sorted_find(m->addr, m->num_stubs, ip);
        if (k < m->num_stubs) {
            *stub_id = m->ids[k];
            return 0;
        }
    }
    return -PTC_E_BADSTUB;
}

int ptc_session_stub(const struct ptc_session *s, uint32_t pid, uint32_t stub_id,
                     struct ptc_stub_desc *out)
{
    const struct proc *p = s ? ptc_proc_find(s, pid) : NULL;
    if (!p || stub_id >= p->nstubs || !p->stubs[stub_id].valid)
        return -PTC_E_BADSTUB;
    for (uint32_t i = p->nmods; i-- > 0;) {
        const struct module *m = &p->mods[i];
        if (m->unloaded || stub_id < m->first_stub || stub_id - m->first_stub >= m->num_stubs)
            continue;
        const struct stubent *se = &p->stubs[stub_id];
        *out = (struct ptc_stub_desc){.address = m->by_index[stub_id - m->first_stub],
                                      .func = se->func,
                                      .kind = se->kind == STUB_BLOCK_ENTRY  ? PTCALL_STUB_ENTRY
                                              : se->kind == STUB_BLOCK_EXIT ? PTCALL_STUB_EXIT
                                                                            : se->kind,
                                      .site = se->site,
                                      .module = m->path ? m->path : "",
                                      .load_bias = m->load_bias, .stubs_start = m->lo,
                                      .stubs_end = m->hi, .identity = m->identity};
        return 0;
    }
    return -PTC_E_BADSTUB;
}

int ptc_proc_inherit_modules(struct ptc_session *s, struct proc *c, const struct proc *pp)
{
    if (c->nmods || !pp->nstubs)
        return 0;
    free(c->stubs);
    free(c->mods);
    c->nstubs = 0;
    c->capmods = 0;
    c->stubs = malloc((size_t)pp->nstubs * sizeof(*c->stubs));
    c->mods = calloc(pp->nmods ? pp->nmods : 1, sizeof(*c->mods));
    if (!c->stubs || !c->mods)
        return ptc_nomem(s);
    memcpy(c->stubs, pp->stubs, (size_t)pp->nstubs * sizeof(*c->stubs));
    c->nstubs = pp->nstubs;
    c->capmods = pp->nmods ? pp->nmods : 1;
    for (uint32_t i = 0; i < pp->nmods; i++) {
        struct module m = pp->mods[i];
        m.path = NULL;
        m.fids = NULL;
        m.sel = NULL; /* the child's own MODULE_ARMED/COUNTED chunks, if any, say its own */
        if (module_alloc_index(&m))
            return ptc_nomem(s);
        memcpy(m.addr, pp->mods[i].addr, (size_t)m.num_stubs * sizeof(uint64_t));
        memcpy(m.ids, pp->mods[i].ids, (size_t)m.num_stubs * sizeof(uint32_t));
        memcpy(m.by_index, pp->mods[i].by_index, (size_t)m.num_stubs * sizeof(uint64_t));
        m.path = pp->mods[i].path ? strdup(pp->mods[i].path) : NULL;
        if (m.num_funcs && (m.fids = malloc((size_t)m.num_funcs * sizeof(*m.fids))))
            memcpy(m.fids, pp->mods[i].fids, (size_t)m.num_funcs * sizeof(*m.fids));
        c->mods[c->nmods++] = m;
        if (m.num_funcs && !m.fids)
            return ptc_nomem(s);
        if (pp->mods[i].path && !m.path)
            return ptc_nomem(s);
    }
    if (pp->has_tb && !c->has_tb) {
        c->has_tb = 1;
        c->tb = pp->tb;
    }
    return 0;
}
