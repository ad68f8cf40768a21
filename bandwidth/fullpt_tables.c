/* The tables of one callgrind output (fullpt_int.h): objects, executed instructions by key,
 * call and jump edges, interned names; and the notes the estimator passes to its outputs. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fullpt_int.h"

/* ------------------------------------------------------------------ interned strings */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

int fpt_str_init(struct fpt_strtab *t)
{
    memset(t, 0, sizeof *t);
    return fpt_str_intern(t, "", 0) == 0 ? 0 : -1;
}

void fpt_str_free(struct fpt_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->s[i]);
    free(t->s);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static int str_rehash(struct fpt_strtab *t, size_t nslot)
{
    uint32_t *slot = calloc(nslot, sizeof *slot);
    if (!slot)
        return -1;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = hash_bytes(t->s[i], strlen(t->s[i])) & (nslot - 1);
        while (slot[j])
            j = (j + 1) & (nslot - 1);
        slot[j] = (uint32_t)i + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->nslot = nslot;
    return 0;
}

uint32_t fpt_str_intern(struct fpt_strtab *t, const char *s, size_t len)
{
    if (t->nslot) {
        size_t j = hash_bytes(s, len) & (t->nslot - 1);
        for (; t->slot[j]; j = (j + 1) & (t->nslot - 1)) {
            const char *o = t->s[t->slot[j] - 1];
            if (strncmp(o, s, len) == 0 && o[len] == 0)
                return t->slot[j] - 1;
        }
    }
    if (t->n >= UINT32_MAX - 1)
        return UINT32_MAX;
    if ((t->n + 1) * 2 > t->nslot && str_rehash(t, t->nslot ? t->nslot * 2 : 64))
        return UINT32_MAX;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        char **s2 = realloc(t->s, cap * sizeof *s2);
        if (!s2)
            return UINT32_MAX;
        t->s = s2;
        t->cap = cap;
    }
    char *c = malloc(len + 1);
    if (!c)
        return UINT32_MAX;
    memcpy(c, s, len);
    c[len] = 0;
    size_t j = hash_bytes(s, len) & (t->nslot - 1);
    while (t->slot[j])
        j = (j + 1) & (t->nslot - 1);
    t->s[t->n] = c;
    t->slot[j] = (uint32_t)t->n + 1;
    return (uint32_t)t->n++;
}

/* ------------------------------------------------------------------ the run */

static uint32_t fn_append(struct fpt_run *r, uint32_t base, uint32_t level);

int fpt_run_init(struct fpt_run *r)
{
    memset(r, 0, sizeof *r);
    r->main_obj = -1;
    if (fpt_str_init(&r->names) || fpt_str_init(&r->fnkeys) || fpt_str_init(&r->labels) ||
        fpt_run_obj(r, "???") != FPT_OBJ_UNKNOWN || fn_append(r, 0, 1) != 0) {
        fpt_run_free(r);
        return -1;
    }
    return 0;
}

void fpt_run_free(struct fpt_run *r)
{
    for (size_t i = 0; i < r->nobj; i++) {
        free(r->obj[i].path);
        free(r->obj[i].bias);
    }
    free(r->obj);
    free(r->insn);
    free(r->edge);
    free(r->fn);
    fpt_str_free(&r->names);
    fpt_str_free(&r->fnkeys);
    fpt_str_free(&r->labels);
    free(r->cmd);
    free(r->log_cmd);
    memset(r, 0, sizeof *r);
    r->main_obj = -1;
}

int fpt_run_obj(struct fpt_run *r, const char *path)
{
    for (size_t i = 0; i < r->nobj; i++)
        if (strcmp(r->obj[i].path, path) == 0)
            return (int)i;
    if (r->nobj >= 0xffff)
        return -1; /* keys hold the object in 16 bits */
    if (r->nobj == r->capobj) {
        size_t cap = r->capobj ? r->capobj * 2 : 16;
        struct fpt_obj *o = realloc(r->obj, cap * sizeof *o);
        if (!o)
            return -1;
        r->obj = o;
        r->capobj = cap;
    }
    struct fpt_obj *o = &r->obj[r->nobj];
    memset(o, 0, sizeof *o);
    if (!(o->path = strdup(path)))
        return -1;
    /* valgrind's own code runs in the process too: its preload objects and the tool */
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t bl = strlen(base);
    o->excluded = strncmp(base, "vgpreload_", 10) == 0 ||
                  (strstr(path, "/valgrind/") && bl > 6 && strcmp(base + bl - 6, "-linux") == 0);
    return (int)r->nobj++;
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

struct fpt_insn *fpt_run_find(const struct fpt_run *r, uint64_t key)
{
    if (!r->capinsn || !key)
        return NULL;
    for (size_t j = mix(key) & (r->capinsn - 1);; j = (j + 1) & (r->capinsn - 1)) {
        if (r->insn[j].key == key)
            return &r->insn[j];
        if (!r->insn[j].key)
            return NULL;
    }
}

static int insn_grow(struct fpt_run *r)
{
    size_t cap = r->capinsn ? r->capinsn * 2 : 4096;
    struct fpt_insn *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < r->capinsn; i++) {
        if (!r->insn[i].key)
            continue;
        size_t j = mix(r->insn[i].key) & (cap - 1);
        while (t[j].key)
            j = (j + 1) & (cap - 1);
        t[j] = r->insn[i];
    }
    free(r->insn);
    r->insn = t;
    r->capinsn = cap;
    return 0;
}

struct fpt_insn *fpt_run_insn(struct fpt_run *r, uint64_t key)
{
    struct fpt_insn *i = fpt_run_find(r, key);
    if (i)
        return i;
    if (!key) /* object 0, address 0: cannot be stored; nothing executes there */
        return NULL;
    if ((r->ninsn + 1) * 4 > r->capinsn * 3 && insn_grow(r))
        return NULL;
    size_t j = mix(key) & (r->capinsn - 1);
    while (r->insn[j].key)
        j = (j + 1) & (r->capinsn - 1);
    memset(&r->insn[j], 0, sizeof r->insn[j]);
    r->insn[j].key = key;
    r->insn[j].fn = UINT32_MAX;
    r->ninsn++;
    return &r->insn[j];
}

int fpt_run_edge(struct fpt_run *r, uint64_t src, uint64_t dst, uint64_t count, uint32_t level,
                 int call)
{
    if (r->nedge == r->capedge) {
        size_t cap = r->capedge ? r->capedge * 2 : 1024;
        struct fpt_edge *e = realloc(r->edge, cap * sizeof *e);
        if (!e)
            return -1;
        r->edge = e;
        r->capedge = cap;
    }
    r->edge[r->nedge++] = (struct fpt_edge){src, dst, count, level, (uint8_t)(call != 0)};
    return 0;
}

static uint32_t fn_append(struct fpt_run *r, uint32_t base, uint32_t level)
{
    if (r->nfn == r->capfn) {
        size_t cap = r->capfn ? r->capfn * 2 : 256;
        struct fpt_fn *f = realloc(r->fn, cap * sizeof *f);
        if (!f)
            return UINT32_MAX;
        r->fn = f;
        r->capfn = cap;
    }
    r->fn[r->nfn] = (struct fpt_fn){base, level};
    return (uint32_t)r->nfn++;
}

uint32_t fpt_run_fn(struct fpt_run *r, const char *s, size_t len)
{
    uint32_t k = fpt_str_intern(&r->fnkeys, s, len);
    if (k == UINT32_MAX)
        return UINT32_MAX;
    if (k < r->nfn)
        return k;
    /* a new name: split callgrind's recursion suffix "'N" (--separate-recs) off */
    uint32_t level = 1;
    size_t base = len;
    size_t q = len;
    while (q > 0 && s[q - 1] >= '0' && s[q - 1] <= '9')
        q--;
    if (q < len && q > 1 && s[q - 1] == '\'' && len - q < 9) {
        level = (uint32_t)strtoul(s + q, NULL, 10);
        base = q - 1;
    }
    uint32_t b = fpt_str_intern(&r->names, s, base);
    if (b == UINT32_MAX)
        return UINT32_MAX;
    return fn_append(r, b, level) == k ? k : UINT32_MAX; /* fnkeys and fn grow together */
}

uint64_t fpt_run_abs_key(const struct fpt_run *r, uint64_t addr)
{
    for (size_t i = 1; i < r->nobj; i++) {
        const struct fpt_obj *o = &r->obj[i];
        if (!o->elf)
            continue;
        if (!o->dyn && addr >= o->lo && addr < o->hi) /* fixed address (ET_EXEC) */
            return FPT_KEY(i, addr);
        for (size_t b = 0; b < o->nbias; b++)
            if (addr >= o->lo + o->bias[b] && addr < o->hi + o->bias[b])
                return FPT_KEY(i, addr - o->bias[b]);
    }
    return FPT_KEY(FPT_OBJ_UNKNOWN, addr);
}

void fpt_note(char **notes, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t ll = strlen(line);
    for (const char *p = *notes; p && *p;) { /* once is enough */
        const char *e = strchr(p, '\n');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == ll && memcmp(p, line, ll) == 0)
            return;
        p += l + (e != NULL);
    }
    size_t old = *notes ? strlen(*notes) : 0;
    char *s = realloc(*notes, old + strlen(line) + 2);
    if (!s)
        return;
    if (old)
        s[old++] = '\n';
    strcpy(s + old, line);
    *notes = s;
}

int fpt_run_rekey(struct fpt_run *r)
{
    size_t moved = 0;
    for (size_t j = 0; j < r->capinsn; j++)
        if (r->insn[j].key && FPT_KEY_OBJ(r->insn[j].key) == FPT_OBJ_UNKNOWN &&
            FPT_KEY_OBJ(fpt_run_abs_key(r, r->insn[j].key)) != FPT_OBJ_UNKNOWN)
            moved++;
    for (size_t e = 0; e < r->nedge; e++) {
        struct fpt_edge *x = &r->edge[e];
        if (FPT_KEY_OBJ(x->src) == FPT_OBJ_UNKNOWN)
            x->src = fpt_run_abs_key(r, x->src);
        if (FPT_KEY_OBJ(x->dst) == FPT_OBJ_UNKNOWN)
            x->dst = fpt_run_abs_key(r, x->dst);
    }
    if (!moved)
        return 0;
    /* rebuild the table: a moved record may land on one the object's own lines made */
    struct fpt_insn *old = r->insn;
    size_t cap = r->capinsn;
    r->insn = NULL;
    r->capinsn = r->ninsn = 0;
    int rc = 0;
    for (size_t j = 0; j < cap && !rc; j++) {
        if (!old[j].key)
            continue;
        uint64_t key = old[j].key;
        if (FPT_KEY_OBJ(key) == FPT_OBJ_UNKNOWN)
            key = fpt_run_abs_key(r, key);
        struct fpt_insn *i = fpt_run_insn(r, key);
        if (!i) {
            rc = -1;
            break;
        }
        i->ir += old[j].ir;
        i->taken += old[j].taken;
        if (i->fn == UINT32_MAX)
            i->fn = old[j].fn;
        if (i->kind == FPT_UNSEEN && FPT_KEY_OBJ(key) == FPT_KEY_OBJ(old[j].key)) {
            i->kind = old[j].kind; /* classified already (this is not the first pass) */
            i->label = old[j].label;
            i->target = old[j].target;
        }
    }
    free(old);
    return rc;
}
