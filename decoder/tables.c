/* The session's tables: processes by pid, threads by (pid, tid), and functions by (module,
 * linkage name, source file), so that a fork child or a second process of the same
 * program shares its parent's function ids; and the memory they own, module tables
 * included (modules.c fills those). */
#include <stdlib.h>
#include <string.h>

#include "dec_tables.h"
#include "ptc_chunk_write.h"

static inline uint32_t hash32(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return (uint32_t)k;
}

static struct hlink *htable_find(const struct htable *h, uint64_t key)
{
    if (!h->cap)
        return NULL;
    for (struct hlink *l = h->bucket[hash32(key) & (h->cap - 1)]; l; l = l->next)
        if (l->key == key)
            return l;
    return NULL;
}

/* Links l in at the head of its bucket, first doubling the table when it is half full.
 * Returns 0, or -1 when out of memory (then l is not linked). */
static int htable_add(struct htable *h, struct hlink *l)
{
    if (h->n * 2 >= h->cap) {
        uint32_t nc = h->cap ? h->cap * 2 : 64;
        struct hlink **nb = calloc(nc, sizeof(*nb));
        if (!nb)
            return -1;
        for (uint32_t i = 0; i < h->cap; i++)
            for (struct hlink *x = h->bucket[i], *n; x; x = n) {
                n = x->next;
                uint32_t b = hash32(x->key) & (nc - 1);
                x->next = nb[b];
                nb[b] = x;
            }
        free(h->bucket);
        h->bucket = nb;
        h->cap = nc;
    }
    uint32_t b = hash32(l->key) & (h->cap - 1);
    l->next = h->bucket[b];
    h->bucket[b] = l;
    h->n++;
    return 0;
}

static uint64_t thread_key(uint32_t pid, uint32_t tid) { return (uint64_t)pid << 32 | tid; }

struct proc *ptc_proc_find(const struct ptc_session *s, uint32_t pid)
{
    return (struct proc *)htable_find(&s->procs, pid);
}

struct proc *ptc_proc_get(struct ptc_session *s, uint32_t pid)
{
    struct proc *p = ptc_proc_find(s, pid);
    if (p)
        return p;
    p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->pid = pid;
    p->link.key = pid;
    if (htable_add(&s->procs, &p->link)) {
        free(p);
        return NULL;
    }
    return p;
}

struct thread *ptc_thread_find(const struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    return (struct thread *)htable_find(&s->threads, thread_key(pid, tid));
}

struct thread *ptc_thread_get(struct ptc_session *s, uint32_t pid, uint32_t tid)
{
    struct thread *t = ptc_thread_find(s, pid, tid);
    if (t)
        return t;
    struct proc *p = ptc_proc_get(s, pid);
    if (!p)
        return NULL;
    t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->pid = pid;
    t->tid = tid;
    t->proc = p;
    t->link.key = thread_key(pid, tid);
    if (htable_add(&s->threads, &t->link)) {
        free(t);
        return NULL;
    }
    t->pnext = p->threads;
    p->threads = t;
    return t;
}

/* ---------------------------------------------------------------- functions */

static uint64_t func_key(const char *module, const char *linkage, const char *file)
{
    uint64_t h = PTC_FNV1A64_INIT;
    h = ptc_fnv1a64(h, module, strlen(module) + 1);
    h = ptc_fnv1a64(h, linkage, strlen(linkage) + 1);
    h = ptc_fnv1a64(h, file, strlen(file) + 1);
    return h;
}

static int fhash_grow(struct ptc_session *s)
{
    uint32_t nc = s->fhash_cap ? s->fhash_cap * 2 : 1024;
    uint32_t *nh = calloc(nc, sizeof(*nh));
    if (!nh)
        return -1;
    for (uint32_t i = 0; i < s->nfuncs; i++) {
        uint32_t b = (uint32_t)s->funcs[i].key_hash & (nc - 1);
        while (nh[b])
            b = (b + 1) & (nc - 1);
        nh[b] = i + 1;
    }
    free(s->fhash);
    s->fhash = nh;
    s->fhash_cap = nc;
    return 0;
}

static char *dupstr(const char *x)
{
    size_t n = strlen(x) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, x, n);
    return d;
}

static void func_info_free(const struct ptc_func_info *fi)
{
    free((char *)fi->name);
    free((char *)fi->linkage_name);
    free((char *)fi->file);
    free((char *)fi->module);
}

uint32_t ptc_func_intern(struct ptc_session *s, const char *module, const char *name,
                         const char *linkage, const char *file, uint32_t line)
{
    if (!*linkage)
        linkage = name;
    uint64_t key = func_key(module, linkage, file);
    if ((s->nfuncs + 1) * 2 > s->fhash_cap && fhash_grow(s))
        return UINT32_MAX;
    uint32_t b = (uint32_t)key & (s->fhash_cap - 1);
    while (s->fhash[b]) {
        struct func *f = &s->funcs[s->fhash[b] - 1];
        if (f->key_hash == key && !strcmp(f->info.linkage_name, linkage) &&
            !strcmp(f->info.module, module) && !strcmp(f->info.file, file))
            return s->fhash[b] - 1;
        b = (b + 1) & (s->fhash_cap - 1);
    }
    if (s->nfuncs == s->capfuncs) {
        uint32_t nc = s->capfuncs ? s->capfuncs * 2 : 256;
        struct func *nf = realloc(s->funcs, nc * sizeof(*nf));
        if (!nf)
            return UINT32_MAX;
        s->funcs = nf;
        struct fstat *ns = realloc(s->fstats, nc * sizeof(*ns));
        if (!ns)
            return UINT32_MAX;
        s->fstats = ns;
        struct ecache *ne = realloc(s->ecache, nc * sizeof(*ne));
        if (!ne)
            return UINT32_MAX;
        s->ecache = ne;
        s->capfuncs = nc;
    }
    struct func *f = &s->funcs[s->nfuncs];
    f->key_hash = key;
    f->info.name = dupstr(name);
    f->info.linkage_name = dupstr(linkage);
    f->info.file = dupstr(file);
    f->info.module = dupstr(module);
    f->info.line = line;
    if (!f->info.name || !f->info.linkage_name || !f->info.file || !f->info.module) {
        func_info_free(&f->info);
        return UINT32_MAX;
    }
    f->in_modules = f->unarmed = f->counted = f->demoted = 0;
    f->blocking = 0; /* realloc'ed memory: a freed session's flags may be there */
    memset(&s->fstats[s->nfuncs], 0, sizeof(struct fstat));
    memset(&s->ecache[s->nfuncs], 0, sizeof(struct ecache));
    s->fhash[b] = s->nfuncs + 1;
    return s->nfuncs++;
}

uint32_t ptc_session_num_funcs(const struct ptc_session *s) { return s->nfuncs; }

const struct ptc_func_info *ptc_session_func(const struct ptc_session *s, uint32_t id)
{
    return id < s->nfuncs ? &s->funcs[id].info : NULL;
}

/* ---------------------------------------------------------------- freeing */

void ptc_module_free(struct module *m)
{
    free(m->addr);
    free(m->ids);
    free(m->by_index);
    free((char *)m->path);
    free(m->fids);
    free(m->sel);
    m->sel = NULL;
    m->fids = NULL;
    m->addr = m->by_index = NULL;
    m->ids = NULL;
    m->path = NULL;
}

void ptc_proc_drop_modules(struct proc *p)
{
    for (uint32_t m = 0; m < p->nmods; m++)
        ptc_module_free(&p->mods[m]);
    p->nmods = 0;
    free(p->stubs);
    p->stubs = NULL;
    p->nstubs = 0;
}

/* ---------------------------------------------------------------- mark labels */

static int marks_grow(struct ptc_session *s)
{
    uint32_t nc = s->nmarkslots ? s->nmarkslots * 2 : 64;
    uint32_t *nh = calloc(nc, sizeof(*nh));
    if (!nh)
        return -1;
    for (uint32_t i = 0; i < s->nmarks; i++) {
        uint32_t b = (uint32_t)s->marks[i].hash & (nc - 1);
        while (nh[b])
            b = (b + 1) & (nc - 1);
        nh[b] = i + 1;
    }
    free(s->markslots);
    s->markslots = nh;
    s->nmarkslots = nc;
    return 0;
}

/* Bytes of the valid UTF-8 sequence at p (1..4), or 0 when it is not one (a stray
 * continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
             : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
        (c == 0xf4 && p[1] > 0x8f))
        return 0;
    return n;
}

/* A copy of label with each byte that starts no valid UTF-8 sequence replaced by U+FFFD: a
 * label is the program's bytes, and every output that shows it (JSON above all) must stay
 * valid UTF-8. NULL when out of memory. */
static char *label_utf8(const char *label)
{
    size_t n = strlen(label);
    char *d = malloc(n * 3 + 1), *o = d;
    if (!d)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)label; *p;) {
        size_t k = utf8_len(p);
        if (k) {
            memcpy(o, p, k);
            o += k;
            p += k;
        } else {
            memcpy(o, "\xef\xbf\xbd", 3);
            o += 3;
            p++;
        }
    }
    *o = 0;
    return d;
}

/* The id of label (label_utf8's, owned by the label table once added). */
static uint32_t mark_find_add(struct ptc_session *s, char *label)
{
    uint64_t h = ptc_fnv1a64(PTC_FNV1A64_INIT, label, strlen(label));
    if ((s->nmarks + 1) * 2 > s->nmarkslots && marks_grow(s))
        return UINT32_MAX;
    uint32_t b = (uint32_t)h & (s->nmarkslots - 1);
    while (s->markslots[b]) {
        const struct mark_label *m = &s->marks[s->markslots[b] - 1];
        if (m->hash == h && !strcmp(m->label, label))
            return s->markslots[b] - 1;
        b = (b + 1) & (s->nmarkslots - 1);
    }
    if (s->nmarks == s->capmarks) {
        uint32_t nc = s->capmarks ? s->capmarks * 2 : 16;
        struct mark_label *nm = realloc(s->marks, nc * sizeof(*nm));
        if (!nm)
            return UINT32_MAX;
        s->marks = nm;
        s->capmarks = nc;
    }
    s->marks[s->nmarks] = (struct mark_label){.label = label, .hash = h};
    s->markslots[b] = s->nmarks + 1;
    return s->nmarks++;
}

/* The id of label, added with no marks when new; UINT32_MAX when out of memory. Labels are
 * kept as label_utf8 makes them (equal after it: one label). */
static uint32_t mark_intern(struct ptc_session *s, const char *raw)
{
    char *label = label_utf8(raw);
    if (!label)
        return UINT32_MAX;
    uint32_t id = mark_find_add(s, label);
    if (id == UINT32_MAX || s->marks[id].label != label)
        free(label); /* known already, or not added */
    return id;
}

int ptc_mark_add(struct ptc_session *s, const char *label, const struct mark_label *add,
                 uint32_t *id)
{
    uint32_t i = mark_intern(s, label);
    if (i == UINT32_MAX)
        return ptc_nomem(s);
    struct mark_label *m = &s->marks[i];
    m->marks += add->marks;
    m->counted_calls += add->counted_calls;
    if (add->segments) {
        if (!m->segments || add->seg_min < m->seg_min)
            m->seg_min = add->seg_min;
        if (add->seg_max > m->seg_max)
            m->seg_max = add->seg_max;
        m->segments += add->segments;
        m->seg_total += add->seg_total;
    }
    *id = i;
    return 0;
}

void ptc_tables_free(struct ptc_session *s)
{
    for (uint32_t i = 0; i < s->nmarks; i++)
        free(s->marks[i].label);
    free(s->marks);
    free(s->markslots);
    for (uint32_t i = 0; i < s->nfuncs; i++)
        func_info_free(&s->funcs[i].info);
    free(s->selection);
    free(s->funcs);
    free(s->fstats);
    free(s->ecache);
    free(s->fhash);
    for (uint32_t i = 0; i < s->threads.cap; i++)
        for (struct hlink *l = s->threads.bucket[i], *n; l; l = n) {
            struct thread *t = (struct thread *)l;
            n = l->next;
            free(t->frames);
            free(t->active);
            free(t->held);
            free(t->name);
            for (uint32_t k = 0; k < t->nrenamed; k++)
                free(t->renamed[k]);
            free(t->renamed);
            free(t);
        }
    free(s->threads.bucket);
    for (uint32_t i = 0; i < s->procs.cap; i++)
        for (struct hlink *l = s->procs.bucket[i], *n; l; l = n) {
            struct proc *p = (struct proc *)l;
            n = l->next;
            ptc_proc_drop_modules(p);
            free(p->mods);
            free(p->snap);
            free(p->exe);
            free(p);
        }
    free(s->procs.bucket);
}
