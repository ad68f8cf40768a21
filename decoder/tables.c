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
    f->in_modules = f->unarmed = 0;
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

void ptc_tables_free(struct ptc_session *s)
{
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
