/* Counts per function from one callgrind output (ptc_fullpt_parse), and merging the
 * outputs of several processes. The rules (docs/bandwidth.md, "Full tracing, estimated"):
 *   - an instruction counts for the function callgrind charged it to (its symbol; for code
 *     without one, such as a PLT, the disassembly's label), in the object it is in;
 *   - its kind comes from the disassembly, its executions from callgrind's Ir, the taken
 *     count of a conditional branch from jcnd= lines (and from the calls= line callgrind
 *     writes instead when the branch goes to a function's first instruction);
 *   - the IP payload of a TIP is estimated by compressing the target against the branch's
 *     own address, standing in for the last IP (see ipc_of);
 *   - returns get the payload classes of the calls into their function (target: the call
 *     site, against the callee), and a return is taken to be unpredictable by the 64-deep
 *     return stack when a call instruction entered a recursion level above 64 (callgrind's
 *     f'65 with --separate-recs=65). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fullpt_int.h"

/* Payload class of a TIP to b when the last IP is a. Within one object the link-time
 * addresses decide (objects are taken to load at 64 KiB-aligned addresses); between
 * objects: two shared objects are taken to be mapped within one 4 GiB region (4 bytes),
 * the main executable and anything else are not (6 bytes). */
static int ipc_of(const struct fpt_run *r, uint64_t a, uint64_t b)
{
    uint32_t oa = FPT_KEY_OBJ(a), ob = FPT_KEY_OBJ(b);
    if (oa == ob) {
        uint64_t x = FPT_KEY_ADDR(a) ^ FPT_KEY_ADDR(b);
        return !(x >> 16) ? 0 : !(x >> 32) ? 1 : 2;
    }
    if (oa == FPT_OBJ_UNKNOWN || ob == FPT_OBJ_UNKNOWN)
        return 2;
    const struct fpt_obj *x = &r->obj[oa], *y = &r->obj[ob];
    if (x->elf && y->elf && x->dyn && y->dyn && !x->is_main && !y->is_main)
        return 1;
    return 2;
}

/* n split over classes in proportion to hist (largest remainder to the largest class); all
 * in class 1 (4 bytes) when hist is empty. */
static void distribute(uint64_t n, const uint64_t hist[PTC_FULLPT_NIPC],
                       uint64_t out[PTC_FULLPT_NIPC])
{
    uint64_t sum = 0;
    int big = 1;
    for (int k = 0; k < PTC_FULLPT_NIPC; k++) {
        sum += hist[k];
        if (hist[k] > hist[big])
            big = k;
    }
    memset(out, 0, PTC_FULLPT_NIPC * sizeof *out);
    if (!sum) {
        out[1] = n;
        return;
    }
    uint64_t given = 0;
    for (int k = 0; k < PTC_FULLPT_NIPC; k++) {
        out[k] = (uint64_t)((unsigned __int128)n * hist[k] / sum);
        given += out[k];
    }
    out[big] += n - given;
}

static void add_counts(struct ptc_fullpt_counts *a, const struct ptc_fullpt_counts *b)
{
    a->insns += b->insns;
    a->cond += b->cond;
    a->cond_taken += b->cond_taken;
    a->jmp += b->jmp;
    a->call += b->call;
    a->ijmp += b->ijmp;
    a->icall += b->icall;
    a->ret += b->ret;
    a->ret_deep += b->ret_deep;
    a->sys += b->sys;
    for (int k = 0; k < PTC_FULLPT_NIPC; k++) {
        a->ind_ipc[k] += b->ind_ipc[k];
        a->ret_ipc[k] += b->ret_ipc[k];
        a->deep_ipc[k] += b->deep_ipc[k];
        a->sys_ipc[k] += b->sys_ipc[k];
    }
}

static int func_cmp(const void *a, const void *b)
{
    const struct ptc_fullpt_func *x = a, *y = b;
    int c = strcmp(x->module, y->module);
    return c ? c : strcmp(x->name, y->name);
}

static void free_funcs(struct ptc_fullpt_func *f, size_t n)
{
    for (size_t i = 0; f && i < n; i++) {
        free(f[i].name);
        free(f[i].module);
    }
    free(f);
}

void ptc_fullpt_free(struct ptc_fullpt_profile *p)
{
    if (!p)
        return;
    free_funcs(p->func, p->nfunc);
    free(p->main_module);
    free(p->notes);
    free(p->workdir);
    free(p);
}

/* Sorts p->func, sums the totals. */
static void finish(struct ptc_fullpt_profile *p)
{
    qsort(p->func, p->nfunc, sizeof *p->func, func_cmp);
    memset(&p->total, 0, sizeof p->total);
    memset(&p->main, 0, sizeof p->main);
    for (size_t i = 0; i < p->nfunc; i++) {
        add_counts(&p->total, &p->func[i].c);
        if (p->func[i].in_main)
            add_counts(&p->main, &p->func[i].c);
    }
}

/* Which object is the program when valgrind's log did not say: the one the command's first
 * word resolves to (through PATH and symbolic links), else the one with its base name. */
static void guess_main(struct fpt_run *r)
{
    if (r->main_obj >= 0 || !r->cmd)
        return;
    char prog[4096], path[4096];
    if (sscanf(r->cmd, " %4095s", prog) != 1)
        return;
    char *real = fpt_which(prog, path, sizeof path) ? NULL : realpath(path, NULL);
    for (int pass = 0; pass < 2 && r->main_obj < 0; pass++) {
        for (size_t i = 1; i < r->nobj; i++) {
            const char *op = r->obj[i].path;
            if (pass == 0 && (!real || strcmp(op, real)))
                continue;
            if (pass == 1) {
                const char *pb = strrchr(prog, '/'), *ob = strrchr(op, '/');
                if (strcmp(ob ? ob + 1 : op, pb ? pb + 1 : prog))
                    continue;
            }
            r->main_obj = (int)i;
            break;
        }
    }
    free(real);
}

/* Load biases of shared objects (and PIEs) that valgrind's log did not give, from the
 * code: a direct call or jump whose target callgrind reports at a run-time address (into a
 * PLT, which callgrind knows no object of) lands at the target the disassembly gives plus
 * the bias. The most common page-aligned difference wins. Returns how many objects got one. */
static int derive_biases(struct fpt_run *r)
{
    struct vote {
        uint32_t obj;
        uint64_t bias, n;
    } *v = NULL;
    size_t nv = 0, cap = 0;
    for (size_t e = 0; e < r->nedge; e++) {
        const struct fpt_edge *x = &r->edge[e];
        uint32_t obj = FPT_KEY_OBJ(x->src);
        if (FPT_KEY_OBJ(x->dst) != FPT_OBJ_UNKNOWN || obj == FPT_OBJ_UNKNOWN)
            continue;
        const struct fpt_insn *s = fpt_run_find(r, x->src);
        const struct fpt_obj *o = &r->obj[obj];
        if (!s || !s->target || !o->elf || !o->dyn || o->nbias ||
            (s->kind != FPT_CALL && s->kind != FPT_JMP && s->kind != FPT_COND))
            continue;
        uint64_t bias = FPT_KEY_ADDR(x->dst) - s->target;
        if (bias & 0xfff)
            continue;
        size_t k = 0;
        while (k < nv && !(v[k].obj == obj && v[k].bias == bias))
            k++;
        if (k == nv) {
            if (nv == cap) {
                cap = cap ? cap * 2 : 16;
                struct vote *v2 = realloc(v, cap * sizeof *v2);
                if (!v2)
                    break;
                v = v2;
            }
            v[nv++] = (struct vote){obj, bias, 0};
        }
        v[k].n += x->count ? x->count : 1;
    }
    int given = 0;
    for (size_t k = 0; k < nv; k++) {
        size_t best = k;
        for (size_t j = 0; j < nv; j++)
            if (v[j].obj == v[k].obj && v[j].n > v[best].n)
                best = j;
        struct fpt_obj *o = &r->obj[v[k].obj];
        if (best != k || o->nbias)
            continue;
        if (!(o->bias = malloc(sizeof *o->bias)))
            break;
        o->bias[0] = v[k].bias;
        o->nbias = 1;
        given++;
    }
    free(v);
    return given;
}

struct fn_acc {
    uint64_t ret_hist[PTC_FULLPT_NIPC], deep_hist[PTC_FULLPT_NIPC], ind_hist[PTC_FULLPT_NIPC];
};

/* The function of each executed instruction, built while counting. */
struct builder {
    struct fpt_run *r;
    struct fpt_strtab keys; /* "obj:name" -> function index */
    struct ptc_fullpt_func *func;
    struct fn_acc *acc;
    size_t nfunc, cap;
    uint32_t *of;           /* per instruction slot: function index, UINT32_MAX none */
};

static uint32_t func_of(struct builder *b, const struct fpt_insn *in)
{
    struct fpt_run *r = b->r;
    uint32_t obj = FPT_KEY_OBJ(in->key);
    const char *name = "???";
    if (in->fn != UINT32_MAX && in->fn < r->nfn)
        name = r->names.s[r->fn[in->fn].base];
    if ((!*name || strncmp(name, "0x", 2) == 0) && in->label) /* no symbol: the label */
        name = r->labels.s[in->label];
    char key[4200];
    int len = snprintf(key, sizeof key, "%u:%s", obj, name);
    if (len < 0 || (size_t)len >= sizeof key)
        len = (int)sizeof key - 1;
    uint32_t k = fpt_str_intern(&b->keys, key, (size_t)len);
    if (k == UINT32_MAX)
        return UINT32_MAX;
    if (k - 1 < b->nfunc) /* key 0 is "" */
        return k - 1;
    if (b->nfunc == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        struct ptc_fullpt_func *f = realloc(b->func, cap * sizeof *f);
        if (!f)
            return UINT32_MAX;
        b->func = f;
        struct fn_acc *a = realloc(b->acc, cap * sizeof *a);
        if (!a)
            return UINT32_MAX;
        b->acc = a;
        b->cap = cap;
    }
    struct ptc_fullpt_func *f = &b->func[b->nfunc];
    memset(f, 0, sizeof *f);
    memset(&b->acc[b->nfunc], 0, sizeof b->acc[b->nfunc]);
    f->name = strdup(name);
    f->module = strdup(r->obj[obj].path);
    f->in_main = (int)obj == r->main_obj;
    if (!f->name || !f->module) {
        free(f->name);
        free(f->module);
        return UINT32_MAX;
    }
    return (uint32_t)b->nfunc++;
}

static int build(struct fpt_run *r, struct ptc_fullpt_profile *p, char *why, size_t n)
{
    struct builder b = {.r = r};
    int rc = -1;
    if (fpt_str_init(&b.keys) || !(b.of = malloc(r->capinsn * sizeof *b.of + 1)))
        goto out;
    /* callgrind records a jump to the first instruction of a function as a call (its loop
     * back to the entry, a tail jump): such a conditional jump's calls= count is its taken
     * count, which then has no jcnd= line */
    for (size_t e = 0; e < r->nedge; e++) {
        struct fpt_insn *s = fpt_run_find(r, r->edge[e].src);
        if (s && r->edge[e].call && s->kind == FPT_COND)
            s->taken += r->edge[e].count;
    }
    for (size_t j = 0; j < r->capinsn; j++) {
        struct fpt_insn *in = &r->insn[j];
        b.of[j] = UINT32_MAX;
        if (!in->key || !in->ir)
            continue;
        uint32_t obj = FPT_KEY_OBJ(in->key);
        if (r->obj[obj].excluded) {
            p->excluded_insns += in->ir;
            continue;
        }
        uint32_t fi = func_of(&b, in);
        if (fi == UINT32_MAX)
            goto out;
        b.of[j] = fi;
        struct ptc_fullpt_counts *c = &b.func[fi].c;
        c->insns += in->ir;
        switch (in->kind) {
        case FPT_COND:
            c->cond += in->ir;
            c->cond_taken += in->taken < in->ir ? in->taken : in->ir;
            break;
        case FPT_JMP: c->jmp += in->ir; break;
        case FPT_CALL: c->call += in->ir; break;
        case FPT_IJMP: c->ijmp += in->ir; break;
        case FPT_ICALL: c->icall += in->ir; break;
        case FPT_RET: c->ret += in->ir; break;
        case FPT_SYS: /* TIP.PGE at the next instruction (2 bytes on), against the syscall */
            c->sys += in->ir;
            c->sys_ipc[ipc_of(r, in->key, in->key + 2)] += in->ir;
            break;
        case FPT_UNSEEN: p->unclassified_insns += in->ir; break;
        default: break;
        }
    }
    for (size_t e = 0; e < r->nedge; e++) {
        const struct fpt_edge *x = &r->edge[e];
        const struct fpt_insn *s = fpt_run_find(r, x->src), *d = fpt_run_find(r, x->dst);
        if (!s || !x->count)
            continue;
        int k = ipc_of(r, x->src, x->dst);
        uint32_t fs = b.of[s - r->insn];
        if (fs != UINT32_MAX && (s->kind == FPT_IJMP || s->kind == FPT_ICALL))
            b.acc[fs].ind_hist[k] += x->count;
        /* returns: the calls into a function, made by a call instruction or by an indirect
         * jump (a PLT stub's, whose callee returns to the stub's caller); only a call
         * instruction goes on the return stack */
        uint32_t fd = d ? b.of[d - r->insn] : UINT32_MAX;
        int real_call = s->kind == FPT_CALL || s->kind == FPT_ICALL;
        if (x->call && fd != UINT32_MAX && (real_call || s->kind == FPT_IJMP)) {
            b.acc[fd].ret_hist[k] += x->count;
            if (real_call && x->level > PTC_FULLPT_RSTACK)
                b.acc[fd].deep_hist[k] += x->count;
        }
    }
    for (size_t i = 0; i < b.nfunc; i++) {
        struct ptc_fullpt_counts *c = &b.func[i].c;
        const struct fn_acc *a = &b.acc[i];
        distribute(c->ijmp + c->icall, a->ind_hist, c->ind_ipc);
        distribute(c->ret, a->ret_hist, c->ret_ipc);
        uint64_t deep = 0;
        for (int k = 0; k < PTC_FULLPT_NIPC; k++)
            deep += a->deep_hist[k];
        c->ret_deep = deep < c->ret ? deep : c->ret;
        distribute(c->ret_deep, a->deep_hist, c->deep_ipc);
    }
    p->func = b.func;
    p->nfunc = b.nfunc;
    b.func = NULL;
    b.nfunc = 0;
    rc = 0;
out:
    if (rc)
        snprintf(why, n, "out of memory counting branches");
    free_funcs(b.func, b.nfunc);
    free(b.acc);
    free(b.of);
    fpt_str_free(&b.keys);
    return rc;
}

static int profile_of_run(struct fpt_run *r, struct fpt_dcache *cache,
                          struct ptc_fullpt_profile **out, char *why, size_t n)
{
    struct ptc_fullpt_profile *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    /* a log of another image of the process (it exec'd after this output was dumped, and
     * the new image's log replaced the old one): its load addresses are not this output's */
    char prog[4096];
    if (r->log_cmd && r->cmd && sscanf(r->cmd, " %4095s", prog) == 1 && strcmp(prog, r->log_cmd)) {
        for (size_t i = 1; i < r->nobj; i++) {
            free(r->obj[i].bias);
            r->obj[i].bias = NULL;
            r->obj[i].nbias = 0;
        }
        r->main_obj = -1;
    }
    guess_main(r);
    for (size_t i = 1; i < r->nobj; i++) {
        r->obj[i].is_main = (int)i == r->main_obj;
        fpt_elf_span(&r->obj[i]); /* missing files are noted by fpt_classify */
    }
    if (r->main_obj > 0 && !(p->main_module = strdup(r->obj[r->main_obj].path)))
        goto oom;
    /* place code at run-time addresses with the log's load addresses, classify, then with
     * the load addresses the classified code implies, and classify what that placed */
    if (fpt_run_rekey(r))
        goto oom;
    if (fpt_classify(r, cache, &p->notes, why, n))
        goto fail;
    if (derive_biases(r)) {
        if (fpt_run_rekey(r))
            goto oom;
        if (fpt_classify(r, cache, &p->notes, why, n))
            goto fail;
    }
    fpt_note_unseen(r, &p->notes);
    if (build(r, p, why, n))
        goto fail;
    if (r->main_obj < 0)
        fpt_note(&p->notes, "the main executable is not known: no function is counted as its");
    p->processes = 1;
    finish(p);
    *out = p;
    return 0;
oom:
    snprintf(why, n, "out of memory");
fail:
    ptc_fullpt_free(p);
    return -1;
}

int fpt_parse_run(const char *callgrind_file, const char *vg_log, struct fpt_dcache *cache,
                  struct ptc_fullpt_profile **out, char *why, size_t n)
{
    struct fpt_run r;
    *out = NULL;
    if (fpt_run_init(&r)) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    int rc = vg_log ? fpt_read_vglog(&r, vg_log, why, n) : 0;
    if (!rc)
        rc = fpt_read_callgrind(&r, callgrind_file, why, n);
    if (!rc)
        rc = profile_of_run(&r, cache, out, why, n);
    fpt_run_free(&r);
    return rc ? -1 : 0;
}

int ptc_fullpt_parse(const char *callgrind_file, const char *vg_log,
                     struct ptc_fullpt_profile **out, char *why, size_t n)
{
    return fpt_parse_run(callgrind_file, vg_log, NULL, out, why, n);
}

const struct ptc_fullpt_func *ptc_fullpt_find(const struct ptc_fullpt_profile *p,
                                              const char *name, const char *module_suffix)
{
    size_t sl = module_suffix ? strlen(module_suffix) : 0;
    for (size_t i = 0; i < p->nfunc; i++) {
        const struct ptc_fullpt_func *f = &p->func[i];
        if (strcmp(f->name, name))
            continue;
        size_t ml = strlen(f->module);
        if (!module_suffix || (ml >= sl && strcmp(f->module + ml - sl, module_suffix) == 0))
            return f;
    }
    return NULL;
}

int fpt_merge(struct ptc_fullpt_profile *into, struct ptc_fullpt_profile *from, char *why,
              size_t n)
{
    size_t total = into->nfunc + from->nfunc;
    struct ptc_fullpt_func *all = realloc(into->func, (total ? total : 1) * sizeof *all);
    if (!all) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    memcpy(all + into->nfunc, from->func, from->nfunc * sizeof *all);
    free(from->func);
    from->func = NULL;
    from->nfunc = 0;
    /* the program is the first process's main executable */
    if (!into->main_module && from->main_module) {
        into->main_module = from->main_module;
        from->main_module = NULL;
    }
    qsort(all, total, sizeof *all, func_cmp);
    size_t w = 0;
    for (size_t i = 0; i < total; i++) {
        if (w && func_cmp(&all[w - 1], &all[i]) == 0) {
            add_counts(&all[w - 1].c, &all[i].c);
            free(all[i].name);
            free(all[i].module);
            continue;
        }
        all[w++] = all[i];
    }
    for (size_t i = 0; i < w; i++)
        all[i].in_main = into->main_module && strcmp(all[i].module, into->main_module) == 0;
    into->func = all;
    into->nfunc = w;
    into->processes += from->processes;
    into->unclassified_insns += from->unclassified_insns;
    into->excluded_insns += from->excluded_insns;
    if (from->notes) {
        fpt_note(&into->notes, "%s", from->notes);
    }
    finish(into);
    return 0;
}
