/* The .ptcov file (docs/cov.md): a header, then records (type byte, LEB128 payload length,
 * payload, and from version 2 a CRC-32 of the three), the END record last. Length-prefixed
 * records let a reader skip types a later minor revision adds; END (with the number of
 * inputs) tells a whole file from one cut short by a killed `cov run`; the CRCs (version 2)
 * tell a damaged file from one that holds other figures: without them half of all single
 * flipped bits were read as other names, counts or times. Version 1 (no CRC) is still read. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptc_outfile.h"
#include "cov.h"
#include "cov_int.h"
#include "ptc_crc.h"
#include "ptc_varint.h"

enum { REC_END = 0, REC_RUN = 1, REC_MODULE = 2, REC_INPUT = 3, REC_BLOCKS = 4,
       REC_INPUT_BLOCKS = 5 };

/* Record 6 (a later revision of version 2: older readers skip it): each module's placement,
 * the function universe it counts, and the campaign's run time. Types 4 and 5 are the
 * blocks'. */
enum { REC_UNIVERSE = 6 };
/* 7: how cov run ran the target */
enum { REC_HARNESS = 7 };
/* 11: cov run --watch's state (cov_watch.c owns its payload; kept here as bytes) */
enum { REC_WATCH = 11 };
/* 9 ORIGIN: a host (and, in a merged file, a part) the inputs came from, by index; 10
 * INPUT_HASH: the content hash and origin of the INPUT record before it (docs/cov.md,
 * *Origins and input hashes*) */
enum { REC_ORIGIN = 9, REC_INPUT_HASH = 10 };
/* 8: the call graph for reachability (map version 8): after MODULE and BLOCKS */
enum { REC_CALLGRAPH = 8 };
#define HEADER_SIZE_V1 16u
#define HEADER_SIZE 20u   /* version 2: the first 16 bytes and their CRC-32 */

/* ---- writing ------------------------------------------------------------------------ */

void cov_buf_put(struct cov_buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + n)
            nc *= 2;
        uint8_t *p = realloc(b->p, nc);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = nc;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

void cov_buf_put_v(struct cov_buf *b, uint64_t v)
{
    uint8_t t[PTC_VARINT_MAX];
    cov_buf_put(b, t, ptc_varint_put(t, v));
}

void cov_buf_put_s(struct cov_buf *b, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    cov_buf_put_v(b, n);
    cov_buf_put(b, s, n);
}

static void put_u64(struct cov_buf *b, uint64_t v)
{
    uint8_t t[8];
    for (int i = 0; i < 8; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    cov_buf_put(b, t, 8);
}

static void put_u32(struct cov_buf *b, uint32_t v)
{
    uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    cov_buf_put(b, t, 4);
}

/* Appends record type with payload rec to out, and the CRC-32 of the type byte, the length
 * and the payload. */
static void put_rec(struct cov_buf *out, unsigned type, const struct cov_buf *rec)
{
    uint8_t t = (uint8_t)type;
    size_t at = out->n;
    cov_buf_put(out, &t, 1);
    cov_buf_put_v(out, rec->n);
    cov_buf_put(out, rec->p, rec->n);
    if (rec->oom)
        out->oom = 1;
    if (!out->oom)
        put_u32(out, ptc_crc32(out->p + at, out->n - at));
}

static int write_all(struct ptc_outfile *f, struct cov_buf *b)
{
    if (b->oom)
        return -ENOMEM;
    int e = b->n ? ptc_outfile_write(f, b->p, b->n) : 0;
    b->n = 0;
    return e;
}

int cov_file_write(const struct cov_data *d, const char *path, char *why, size_t n)
{
    /* a temporary file of an unguessable name beside path (a fixed name.tmpPID could be a
     * link another user planted in a shared directory), renamed over it when whole; a
     * device or FIFO is written into, never replaced (common/ptc_outfile.h) */
    struct ptc_outfile f;
    int oe = ptc_outfile_open(&f, path, 0644);
    if (oe) {
        snprintf(why, n, "cannot create %s: %s", path, strerror(-oe));
        return oe;
    }
    struct cov_buf out = {0}, rec = {0};
    int rc = 0;
    uint8_t hdr[HEADER_SIZE] = {0};
    memcpy(hdr, COV_FILE_MAGIC, 8);
    hdr[8] = COV_FILE_VERSION;
    hdr[12] = HEADER_SIZE;
    uint32_t hcrc = ptc_crc32(hdr, 16);
    for (int i = 0; i < 4; i++)
        hdr[16 + i] = (uint8_t)(hcrc >> (8 * i));
    cov_buf_put(&out, hdr, sizeof(hdr));

    cov_buf_put_s(&rec, d->target);
    cov_buf_put_v(&rec, d->timeout_ms);
    cov_buf_put_v(&rec, d->created);
    put_rec(&out, REC_RUN, &rec);
    if (d->harness) {
        rec.n = 0;
        cov_buf_put_v(&rec, d->harness_kind);
        cov_buf_put_v(&rec, d->harness_flags);
        cov_buf_put_s(&rec, d->harness);
        put_rec(&out, REC_HARNESS, &rec);
    }
    for (uint32_t o = 0; o < d->norigins; o++) {
        rec.n = 0;
        cov_buf_put_v(&rec, o);
        cov_buf_put_s(&rec, d->origins[o].host);
        cov_buf_put_s(&rec, d->origins[o].file);
        cov_buf_put_v(&rec, d->origins[o].created);
        cov_buf_put_v(&rec, ptc_zigzag(d->origins[o].campaign_ms));
        put_rec(&out, REC_ORIGIN, &rec);
    }
    for (uint32_t m = 0; m < d->nmodules && !rc; m++) {
        const struct cov_module *mod = &d->modules[m];
        rec.n = 0;
        cov_buf_put_s(&rec, mod->path);
        cov_buf_put_s(&rec, mod->build_id);
        put_u64(&rec, mod->identity);
        cov_buf_put_v(&rec, mod->nfuncs);
        cov_buf_put_v(&rec, mod->has_callees);
        for (uint32_t i = 0; i < mod->nfuncs; i++) {
            const struct cov_func *fn = &d->funcs[mod->first + i];
            cov_buf_put_s(&rec, fn->name);
            cov_buf_put_s(&rec, fn->linkage);
            cov_buf_put_s(&rec, fn->file);
            cov_buf_put_v(&rec, fn->line);
            cov_buf_put_v(&rec, fn->insns);
            cov_buf_put_v(&rec, fn->blocks);
            cov_buf_put_v(&rec, fn->ncallees);
            for (uint32_t k = 0; k < fn->ncallees; k++)
                cov_buf_put_v(&rec, fn->callees[k]);
        }
        put_rec(&out, REC_MODULE, &rec);
        rc = write_all(&f, &out);
    }
    if (!rc) {
        rec.n = 0;
        cov_buf_put_v(&rec, d->nmodules);
        for (uint32_t m = 0; m < d->nmodules; m++) {
            cov_buf_put_v(&rec, d->modules[m].placement);
            cov_buf_put_v(&rec, d->modules[m].units_early);
            cov_buf_put_v(&rec, d->modules[m].units_late);
        }
        cov_buf_put_v(&rec, ptc_zigzag(d->campaign_ms));
        put_rec(&out, REC_UNIVERSE, &rec);
        rc = write_all(&f, &out);
    }
    if (d->nblocks && !rc) {
        /* BLOCKS: the files, each module's block count, each block's function and lines */
        rec.n = 0;
        cov_buf_put_v(&rec, d->nfiles);
        for (uint32_t k = 0; k < d->nfiles; k++)
            cov_buf_put_s(&rec, d->files[k]);
        cov_buf_put_v(&rec, d->nmodules);
        for (uint32_t m = 0; m < d->nmodules; m++)
            cov_buf_put_v(&rec, d->modules[m].nblocks);
        cov_buf_put_v(&rec, d->nblocks);
        for (uint32_t k = 0; k < d->nblocks; k++) {
            const struct cov_block *b = &d->blocks[k];
            cov_buf_put_v(&rec, b->func);
            cov_buf_put_v(&rec, b->nlines);
            for (uint32_t j = 0; j < b->nlines; j++) {
                cov_buf_put_v(&rec, d->lines[b->first_line + j].file);
                cov_buf_put_v(&rec, d->lines[b->first_line + j].line);
            }
        }
        put_rec(&out, REC_BLOCKS, &rec);
        rc = write_all(&f, &out);
    }
    if (d->graph && !rc) {
        /* CALLGRAPH: per function its flags, type id and indirect calls; the taken names;
         * per block its successors */
        const struct cov_graph *g = d->graph;
        rec.n = 0;
        cov_buf_put_v(&rec, d->nmodules);
        cov_buf_put_v(&rec, g->modules_with);
        cov_buf_put_v(&rec, g->nfuncs);
        for (uint32_t i = 0; i < g->nfuncs; i++) {
            cov_buf_put_v(&rec, g->flags[i]);
            put_u64(&rec, g->type_id[i]);
            cov_buf_put_v(&rec, g->icall_start[i + 1] - g->icall_start[i]);
            for (uint32_t k = g->icall_start[i]; k < g->icall_start[i + 1]; k++) {
                put_u64(&rec, g->icall_type[k]);
                cov_buf_put_v(&rec, g->icall_block[k] == UINT32_MAX ? 0 : (uint64_t)g->icall_block[k] + 1);
            }
        }
        cov_buf_put_v(&rec, g->ntaken_names);
        for (uint32_t k = 0; k < g->ntaken_names; k++)
            cov_buf_put_s(&rec, g->taken_names[k]);
        cov_buf_put_v(&rec, g->nblocks);
        for (uint32_t b = 0; b < g->nblocks; b++) {
            cov_buf_put_v(&rec, g->succ_start[b + 1] - g->succ_start[b]);
            for (uint32_t k = g->succ_start[b]; k < g->succ_start[b + 1]; k++)
                cov_buf_put_v(&rec, g->succs[k]);
        }
        put_rec(&out, REC_CALLGRAPH, &rec);
        rc = write_all(&f, &out);
    }
    for (uint32_t i = 0; i < d->ninputs && !rc; i++) {
        const struct cov_input *in = &d->inputs[i];
        rec.n = 0;
        cov_buf_put_s(&rec, in->name);
        cov_buf_put_v(&rec, in->kind);
        cov_buf_put_v(&rec, in->outcome);
        cov_buf_put_v(&rec, ptc_zigzag(in->value));
        cov_buf_put_v(&rec, ptc_zigzag(in->time_ms));
        cov_buf_put_v(&rec, in->exec_us);
        cov_buf_put_v(&rec, in->nhits);
        uint32_t prev = 0;
        for (uint32_t k = 0; k < in->nhits; k++) {
            /* sorted: deltas keep most indices to one byte */
            cov_buf_put_v(&rec, in->hits[k].func - prev);
            cov_buf_put_v(&rec, in->hits[k].count);
            prev = in->hits[k].func;
        }
        put_rec(&out, REC_INPUT, &rec);
        if (d->nblocks) { /* INPUT_BLOCKS: right behind its INPUT record */
            rec.n = 0;
            cov_buf_put_v(&rec, i);
            cov_buf_put_v(&rec, in->nbhits);
            uint32_t pb = 0;
            for (uint32_t k = 0; k < in->nbhits; k++) {
                cov_buf_put_v(&rec, in->bhits[k].block - pb);
                cov_buf_put_v(&rec, in->bhits[k].count);
                pb = in->bhits[k].block;
            }
            put_rec(&out, REC_INPUT_BLOCKS, &rec);
        }
        if (in->has_hash) { /* INPUT_HASH: behind its INPUT (and INPUT_BLOCKS) record */
            rec.n = 0;
            cov_buf_put_v(&rec, i);
            cov_buf_put(&rec, in->hash, sizeof(in->hash));
            cov_buf_put_v(&rec, in->origin);
            put_rec(&out, REC_INPUT_HASH, &rec);
        }
        if (out.n > (1u << 20))
            rc = write_all(&f, &out);
    }
    if (!rc && d->watch) {
        rec.n = 0;
        cov_buf_put(&rec, d->watch, d->nwatch);
        put_rec(&out, REC_WATCH, &rec);
    }
    if (!rc) {
        rec.n = 0;
        cov_buf_put_v(&rec, d->ninputs);
        put_rec(&out, REC_END, &rec);
        rc = write_all(&f, &out);
    }
    free(out.p);
    free(rec.p);
    if (rc)
        ptc_outfile_abort(&f);
    else
        rc = ptc_outfile_commit(&f);
    if (rc) {
        snprintf(why, n, "cannot write %s: %s", path,
                 rc == -ENOMEM ? "out of memory" : strerror(-rc));
    }
    return rc;
}

/* ---- reading ------------------------------------------------------------------------ */

uint64_t cov_rd_v(struct cov_rd *r)
{
    uint64_t v = 0;
    if (!r->bad && ptc_varint_get(&r->p, r->end, &v))
        r->bad = 1;
    return r->bad ? 0 : v;
}

/* A count that bounds an allocation: each element takes at least min_bytes of the record,
 * so a damaged count cannot ask for more memory than the file could describe. */
static uint64_t get_count(struct cov_rd *r, size_t min_bytes)
{
    uint64_t v = cov_rd_v(r);
    if (!r->bad && v > (uint64_t)(r->end - r->p) / min_bytes)
        r->bad = 1;
    return r->bad ? 0 : v;
}

char *cov_rd_s(struct cov_rd *r)
{
    uint64_t n = cov_rd_v(r);
    if (r->bad || n > (uint64_t)(r->end - r->p)) {
        r->bad = 1;
        return NULL;
    }
    char *s = malloc(n + 1);
    if (!s) {
        r->bad = 2;
        return NULL;
    }
    memcpy(s, r->p, n);
    s[n] = 0;
    r->p += n;
    return s;
}

static uint64_t get_u64(struct cov_rd *r)
{
    if (r->bad || r->end - r->p < 8) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += 8;
    return v;
}

static int read_module(struct cov_data *d, struct cov_rd *r)
{
    struct cov_module *m = cov_data_add_module(d);
    if (!m)
        return 2;
    m->path = cov_rd_s(r);
    char *bid = cov_rd_s(r);
    if (bid) {
        snprintf(m->build_id, sizeof(m->build_id), "%s", bid);
        free(bid);
    }
    m->identity = get_u64(r);
    uint32_t nf = (uint32_t)get_count(r, 7);
    m->has_callees = (uint32_t)cov_rd_v(r);
    m->first = d->nfuncs;
    uint32_t mi = d->nmodules - 1;
    for (uint32_t i = 0; i < nf && !r->bad; i++) {
        struct cov_func *f = cov_data_add_func(d);
        if (!f)
            return 2;
        f->module = mi;
        f->name = cov_rd_s(r);
        f->linkage = cov_rd_s(r);
        f->file = cov_rd_s(r);
        f->line = (uint32_t)cov_rd_v(r);
        f->insns = (uint32_t)cov_rd_v(r);
        f->blocks = (uint32_t)cov_rd_v(r);
        f->ncallees = (uint32_t)get_count(r, 1);
        if (f->ncallees && !r->bad) {
            if (!(f->callees = malloc(f->ncallees * sizeof(*f->callees))))
                return 2;
            for (uint32_t k = 0; k < f->ncallees; k++)
                f->callees[k] = (uint32_t)cov_rd_v(r);
        }
        d->modules[mi].nfuncs++;
    }
    return r->bad;
}

static int read_input(struct cov_data *d, struct cov_rd *r)
{
    struct cov_input *in = cov_data_add_input(d);
    if (!in)
        return 2;
    in->name = cov_rd_s(r);
    in->kind = (uint8_t)cov_rd_v(r);
    in->outcome = (uint8_t)cov_rd_v(r);
    in->value = (int32_t)ptc_unzigzag(cov_rd_v(r));
    in->time_ms = ptc_unzigzag(cov_rd_v(r));
    in->exec_us = cov_rd_v(r);
    uint32_t nh = (uint32_t)get_count(r, 2);
    if (nh && !r->bad) {
        if (!(in->hits = malloc(nh * sizeof(*in->hits))))
            return 2;
        uint64_t f = 0;
        for (uint32_t k = 0; k < nh && !r->bad; k++) {
            f += cov_rd_v(r);
            in->hits[k].func = (uint32_t)f;
            in->hits[k].count = cov_rd_v(r);
            in->nhits = k + 1;
        }
    }
    return r->bad;
}

/* Record 6: the modules' placements (each module read already), then the campaign's run
 * time. Fields a later revision appends are left unread. */
static int read_universe(struct cov_data *d, struct cov_rd *r)
{
    uint64_t nm = cov_rd_v(r);
    if (r->bad || nm != d->nmodules)
        return 1;
    for (uint32_t m = 0; m < nm; m++) {
        uint64_t p = cov_rd_v(r), early = cov_rd_v(r), late = cov_rd_v(r);
        if (r->bad || early > UINT32_MAX || late > UINT32_MAX ||
            p != cov_placement_of((uint32_t)early, (uint32_t)late))
            return 1;
        d->modules[m].placement = (uint8_t)p;
        d->modules[m].units_early = (uint32_t)early;
        d->modules[m].units_late = (uint32_t)late;
    }
    int64_t ms = ptc_unzigzag(cov_rd_v(r));
    if (r->bad || ms < -1)
        return 1;
    d->campaign_ms = ms;
    return 0;
}

/* BLOCKS (type 4): once, after the MODULE records. 0, 1 (damaged) or 2 (out of memory). */
static int read_blocks(struct cov_data *d, struct cov_rd *r)
{
    if (d->nblocks || d->nfiles || d->ninputs)
        return 1; /* a second one, or one after the inputs: not what cov run writes */
    uint32_t nf = (uint32_t)get_count(r, 1);
    for (uint32_t k = 0; k < nf && !r->bad; k++) {
        char *s = cov_rd_s(r);
        if (!s)
            return r->bad ? r->bad : 2;
        char **slot = realloc(d->files, ((size_t)d->nfiles + 1) * sizeof(*d->files));
        if (!slot) {
            free(s);
            return 2;
        }
        d->files = slot;
        d->files[d->nfiles++] = s;
        d->cap_files = d->nfiles;
    }
    uint64_t nm = cov_rd_v(r), sum = 0;
    if (r->bad || nm != d->nmodules)
        return 1;
    for (uint32_t m = 0; m < nm && !r->bad; m++) {
        d->modules[m].first_block = (uint32_t)sum;
        d->modules[m].nblocks = (uint32_t)cov_rd_v(r);
        sum += d->modules[m].nblocks;
    }
    uint32_t nb = (uint32_t)get_count(r, 2);
    if (r->bad || nb != sum)
        return 1;
    for (uint32_t k = 0; k < nb && !r->bad; k++) {
        struct cov_block *b = cov_data_add_block(d);
        if (!b)
            return 2;
        b->func = (uint32_t)cov_rd_v(r);
        b->first_line = d->nlines;
        uint32_t nl = (uint32_t)get_count(r, 2);
        /* a block of module m names a function of module m */
        if (r->bad || b->func >= d->nfuncs)
            return 1;
        const struct cov_module *m = &d->modules[d->funcs[b->func].module];
        if (k < m->first_block || k >= m->first_block + m->nblocks)
            return 1;
        for (uint32_t j = 0; j < nl && !r->bad; j++) {
            struct cov_line *l = cov_data_add_line(d);
            if (!l)
                return 2;
            l->file = (uint32_t)cov_rd_v(r);
            l->line = (uint32_t)cov_rd_v(r);
            if (l->file >= d->nfiles)
                return 1;
            b->nlines++;
        }
    }
    return r->bad;
}

/* CALLGRAPH (type 8): once, after the MODULE (and BLOCKS) records, before the inputs; every
 * count must match what they hold. 0, 1 (damaged) or 2 (out of memory). */
static int read_callgraph(struct cov_data *d, struct cov_rd *r)
{
    if (d->graph || d->ninputs)
        return 1;
    uint64_t nm = cov_rd_v(r), with = cov_rd_v(r), nf = cov_rd_v(r);
    if (r->bad || nm != d->nmodules || with > nm || nf != d->nfuncs)
        return 1;
    struct cov_graph *g = cov_graph_get(d);
    if (!g)
        return 2;
    g->modules_with = (uint32_t)with;
    for (uint32_t i = 0; i < nf && !r->bad; i++) {
        uint64_t flags = cov_rd_v(r), type = get_u64(r);
        uint32_t ni = (uint32_t)get_count(r, 9);   /* each at least 9 bytes */
        if (r->bad || flags > COV_GRAPH_TAKEN)
            return 1;
        uint64_t *types = malloc(((size_t)ni + 1) * sizeof(*types));
        uint32_t *blocks = malloc(((size_t)ni + 1) * sizeof(*blocks));
        int bad = !types || !blocks ? 2 : 0;
        for (uint32_t k = 0; k < ni && !bad; k++) {
            types[k] = get_u64(r);
            uint64_t b = cov_rd_v(r);
            if (r->bad || b > d->nblocks || (b && d->blocks[b - 1].func != i))
                bad = 1;   /* an indirect call in a block of another function */
            blocks[k] = b ? (uint32_t)(b - 1) : UINT32_MAX;
        }
        if (!bad && cov_graph_add_func(g, (uint32_t)flags, type, ni, types, blocks))
            bad = 2;
        free(types);
        free(blocks);
        if (bad)
            return bad;
    }
    uint32_t nn = (uint32_t)get_count(r, 1);
    for (uint32_t k = 0; k < nn && !r->bad; k++) {
        char *s = cov_rd_s(r);
        if (!s)
            return r->bad ? r->bad : 2;
        int e = cov_graph_add_name(g, s);
        free(s);
        if (e)
            return 2;
    }
    uint64_t nb = cov_rd_v(r);
    if (r->bad || (nb && nb != d->nblocks))
        return 1;
    uint32_t *succ = NULL;
    for (uint32_t b = 0; b < nb && !r->bad; b++) {
        uint32_t ns = (uint32_t)get_count(r, 1);
        uint32_t *t = realloc(succ, ((size_t)ns + 1) * sizeof(*t));
        if (!t) {
            free(succ);
            return 2;
        }
        succ = t;
        for (uint32_t k = 0; k < ns && !r->bad; k++) {
            uint64_t v = cov_rd_v(r);
            /* a successor is a block of the same function */
            if (v >= d->nblocks || d->blocks[v].func != d->blocks[b].func) {
                free(succ);
                return 1;
            }
            succ[k] = (uint32_t)v;
        }
        if (!r->bad && cov_graph_add_block(g, ns, succ)) {
            free(succ);
            return 2;
        }
    }
    free(succ);
    return r->bad;
}

/* INPUT_BLOCKS (type 5): the blocks of the INPUT record right before it. */
static int read_input_blocks(struct cov_data *d, struct cov_rd *r)
{
    uint64_t i = cov_rd_v(r);
    if (r->bad || !d->ninputs || i != d->ninputs - 1U || d->inputs[i].bhits)
        return 1;
    struct cov_input *in = &d->inputs[i];
    uint32_t nb = (uint32_t)get_count(r, 2);
    if (nb && !r->bad) {
        if (!(in->bhits = malloc(nb * sizeof(*in->bhits))))
            return 2;
        uint64_t b = 0;
        for (uint32_t k = 0; k < nb && !r->bad; k++) {
            uint64_t delta = cov_rd_v(r);
            b += delta;
            /* ascending, inside the blocks of the file */
            if ((k && !delta) || b >= d->nblocks)
                return 1;
            in->bhits[k].block = (uint32_t)b;
            in->bhits[k].count = cov_rd_v(r);
            in->nbhits = k + 1;
        }
    }
    return r->bad;
}

/* ORIGIN (type 9): origins come in index order. */
static int read_origin(struct cov_data *d, struct cov_rd *r)
{
    uint64_t idx = cov_rd_v(r);
    char *host = cov_rd_s(r), *file = cov_rd_s(r);
    uint64_t created = cov_rd_v(r);
    int64_t cms = ptc_unzigzag(cov_rd_v(r));
    int bad = r->bad || idx != d->norigins;
    if (!bad && !cov_data_add_origin(d, host, file, created, cms))
        bad = 2;
    free(host);
    free(file);
    return bad;
}

/* INPUT_HASH (type 10): the hash and origin of the INPUT record before it. */
static int read_input_hash(struct cov_data *d, struct cov_rd *r)
{
    uint64_t i = cov_rd_v(r);
    if (r->bad || !d->ninputs || i != d->ninputs - 1U || d->inputs[i].has_hash ||
        (size_t)(r->end - r->p) < 16)
        return 1;
    struct cov_input *in = &d->inputs[i];
    memcpy(in->hash, r->p, 16);
    r->p += 16;
    uint64_t o = cov_rd_v(r);
    if (r->bad || o >= (d->norigins ? d->norigins : 1))
        return 1;
    in->origin = (uint32_t)o;
    in->has_hash = 1;
    return 0;
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* What a record is, for messages: "the INPUT record 3" names the part of the file. */
static void rec_name(char *out, size_t n, unsigned type, const struct cov_data *d)
{
    if (type == REC_RUN)
        snprintf(out, n, "RUN record");
    else if (type == REC_MODULE)
        snprintf(out, n, "MODULE record %u", d->nmodules);
    else if (type == REC_INPUT)
        snprintf(out, n, "INPUT record %u", d->ninputs);
    else if (type == REC_HARNESS)
        snprintf(out, n, "HARNESS record");
    else if (type == REC_END)
        snprintf(out, n, "END record");
    else if (type == REC_UNIVERSE)
        snprintf(out, n, "UNIVERSE record");
    else if (type == REC_BLOCKS)
        snprintf(out, n, "BLOCKS record");
    else if (type == REC_ORIGIN)
        snprintf(out, n, "ORIGIN record %u", d->norigins);
    else if (type == REC_INPUT_HASH)
        snprintf(out, n, "INPUT_HASH record %u", d->ninputs ? d->ninputs - 1 : 0);
    else if (type == REC_INPUT_BLOCKS)
        snprintf(out, n, "INPUT_BLOCKS record %u", d->ninputs ? d->ninputs - 1 : 0);
    else if (type == REC_CALLGRAPH)
        snprintf(out, n, "CALLGRAPH record");
    else
        snprintf(out, n, "record of type %u", type);
}

int cov_file_parse(struct cov_data *d, const uint8_t *data, size_t size, const char *path,
                   char *why, size_t n)
{
    int rc = 0;
    unsigned version = 0;
    if (size < HEADER_SIZE_V1 || memcmp(data, COV_FILE_MAGIC, 8)) {
        snprintf(why, n, "%s is not a .ptcov file (made by 'ptcall cov run')", path);
        return -EINVAL;
    }
    version = le32(data + 8);
    if (version == 0 || version > COV_FILE_VERSION) {
        snprintf(why, n, "%s is a .ptcov of version %u; this ptcall reads versions 1 to %u",
                 path, version, COV_FILE_VERSION);
        return -EPROTO;
    }
    size_t hs = le32(data + 12);
    if (version >= 2) {
        if (size < HEADER_SIZE || le32(data + 16) != ptc_crc32(data, 16)) {
            snprintf(why, n, "%s is damaged: its header (bytes 0 to 19) fails its checksum",
                     path);
            return -EINVAL;
        }
    }
    if (hs < (version >= 2 ? HEADER_SIZE : HEADER_SIZE_V1) || hs > size) {
        snprintf(why, n, "%s: damaged header", path);
        return -EINVAL;
    }
    d->file_version = version;
    size_t crc_size = version >= 2 ? 4 : 0;
    const uint8_t *p = data + hs, *end = data + size;
    int ended = 0;
    while (!rc && p < end) {
        const uint8_t *start = p;
        unsigned type = *p++;
        struct cov_rd hdr = {p, end, 0};
        uint64_t len = cov_rd_v(&hdr);
        char what[64];
        rec_name(what, sizeof(what), type, d);
        if (hdr.bad || len > (uint64_t)(end - hdr.p) ||
            crc_size > (size_t)(end - hdr.p) - len) {
            snprintf(why, n, "%s is truncated or damaged at byte %zu (its %s)", path,
                     (size_t)(start - data), what);
            rc = -EINVAL;
            break;
        }
        if (crc_size && le32(hdr.p + len) != ptc_crc32(start, (size_t)(hdr.p + len - start))) {
            snprintf(why, n,
                     "%s is damaged: its %s (bytes %zu to %zu) fails its checksum", path,
                     what, (size_t)(start - data), (size_t)(hdr.p + len + crc_size - data) - 1);
            rc = -EINVAL;
            break;
        }
        struct cov_rd r = {hdr.p, hdr.p + len, 0};
        int bad = 0;
        if (type == REC_RUN) {
            free(d->target);
            d->target = cov_rd_s(&r);
            d->timeout_ms = (uint32_t)cov_rd_v(&r);
            d->created = cov_rd_v(&r);
            bad = r.bad;
        } else if (type == REC_HARNESS) {
            free(d->harness);
            d->harness_kind = (uint32_t)cov_rd_v(&r);
            d->harness_flags = (uint32_t)cov_rd_v(&r);
            d->harness = cov_rd_s(&r);
            bad = r.bad;
        } else if (type == REC_MODULE) {
            bad = read_module(d, &r);
        } else if (type == REC_INPUT) {
            bad = read_input(d, &r);
        } else if (type == REC_UNIVERSE) {
            bad = read_universe(d, &r);
        } else if (type == REC_BLOCKS) {
            bad = read_blocks(d, &r);
        } else if (type == REC_INPUT_BLOCKS) {
            bad = read_input_blocks(d, &r);
        } else if (type == REC_WATCH) {
            free(d->watch);
            d->nwatch = len;
            if (!(d->watch = malloc(len ? len : 1)))
                bad = 2;
            else
                memcpy(d->watch, r.p, len);
        } else if (type == REC_ORIGIN) {
            bad = read_origin(d, &r);
        } else if (type == REC_INPUT_HASH) {
            bad = read_input_hash(d, &r);
        } else if (type == REC_CALLGRAPH) {
            bad = read_callgraph(d, &r);
        } else if (type == REC_END) {
            uint64_t ni = cov_rd_v(&r);
            if (r.bad || ni != d->ninputs) {
                snprintf(why, n, "%s: its end record counts %llu inputs, the file holds %u",
                         path, (unsigned long long)ni, d->ninputs);
                rc = -EINVAL;
                break;
            }
            ended = 1;
            break;
        }
        /* other types: a later revision's records, skipped whole */
        if (bad) {
            snprintf(why, n, bad == 2 ? "out of memory" : "%s: damaged %s at byte %zu", path,
                     what, (size_t)(start - data));
            rc = bad == 2 ? -ENOMEM : -EINVAL;
            break;
        }
        p = r.end + crc_size;
    }
    if (!rc && !ended) {
        snprintf(why, n,
                 "%s is truncated (no end record after %u inputs: was 'ptcall cov run' "
                 "killed?)",
                 path, d->ninputs);
        rc = -EINVAL;
    }
    if (!rc) {
        /* indices in the file must name functions of the file */
        for (uint32_t i = 0; i < d->ninputs && !rc; i++)
            for (uint32_t k = 0; k < d->inputs[i].nhits; k++)
                if (d->inputs[i].hits[k].func >= d->nfuncs ||
                    (k && d->inputs[i].hits[k].func <= d->inputs[i].hits[k - 1].func)) {
                    snprintf(why, n, "%s: input %u names function %u of %u", path, i,
                             d->inputs[i].hits[k].func, d->nfuncs);
                    rc = -EINVAL;
                    break;
                }
        for (uint32_t i = 0; i < d->nfuncs && !rc; i++)
            for (uint32_t k = 0; k < d->funcs[i].ncallees; k++)
                if (d->funcs[i].callees[k] >= d->nfuncs) {
                    snprintf(why, n, "%s: function %u has callee %u of %u", path, i,
                             d->funcs[i].callees[k], d->nfuncs);
                    rc = -EINVAL;
                    break;
                }
    }
    return rc;
}

int cov_file_read(struct cov_data *d, const char *path, char *why, size_t n)
{
    /* O_NONBLOCK: a FIFO named as the file is refused below, not waited on */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        int e = errno;
        snprintf(why, n, "cannot open %s: %s", path, strerror(e));
        return -e;
    }
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(why, n, "%s is not a regular file (a .ptcov is one)", path);
        return -EINVAL;
    }
    uint8_t *data = NULL;
    size_t size = 0, cap = 0;
    int rc = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 1u << 16;
            uint8_t *p = realloc(data, cap);
            if (!p) {
                rc = -ENOMEM;
                break;
            }
            data = p;
        }
        ssize_t got = read(fd, data + size, cap - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -EIO;
            break;
        }
        if (got == 0)
            break;
        size += (size_t)got;
    }
    close(fd);
    if (rc == -ENOMEM)
        snprintf(why, n, "out of memory");
    else if (rc)
        snprintf(why, n, "cannot read %s", path);
    else
        rc = cov_file_parse(d, data, size, path, why, n);
    free(data);
    return rc;
}
