/* `ptcall cov merge` (cov.h, docs/cov.md, *Merging*): the parts of one campaign measured on
 * several machines (or instance sets) made one file. The first part gives the static tables
 * (modules, functions, blocks); the others must have the same build, so their function and
 * block indices mean the same. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* 0 when part b measures part a's build, else -EINVAL with why. */
static int same_build(const struct cov_data *a, const char *pa, const struct cov_data *b,
                      const char *pb, char *why, size_t n)
{
    if (a->nmodules != b->nmodules) {
        snprintf(why, n, "%s and %s are of different builds: %u modules against %u (merge "
                         "only .ptcov files of one build of the target)",
                 pa, pb, a->nmodules, b->nmodules);
        return -EINVAL;
    }
    for (uint32_t m = 0; m < a->nmodules; m++) {
        const struct cov_module *x = &a->modules[m], *y = &b->modules[m];
        if (x->build_id[0] && y->build_id[0] && strcmp(x->build_id, y->build_id)) {
            snprintf(why, n, "%s and %s are of different builds: module %s has build id %s in "
                             "the first and %s in the second (merge only .ptcov files of one "
                             "build of the target)",
                     pa, pb, base_name(x->path), x->build_id, y->build_id);
            return -EINVAL;
        }
        if (x->identity != y->identity || x->nfuncs != y->nfuncs) {
            snprintf(why, n, "%s and %s are of different builds: module %s has function map "
                             "%016llx in the first and %016llx (%s) in the second (merge only "
                             ".ptcov files of one build of the target)",
                     pa, pb, base_name(x->path), (unsigned long long)x->identity,
                     (unsigned long long)y->identity, base_name(y->path));
            return -EINVAL;
        }
    }
    return 0;
}

/* The host an input of part p came from, for its name's prefix. */
static const char *host_of(const struct cov_data *d, uint32_t origin, const char *path)
{
    if (origin < d->norigins && d->origins[origin].host[0])
        return d->origins[origin].host;
    return base_name(path);
}

struct key {
    uint32_t input;
    const uint8_t *hash;   /* NULL: no hash, keyed by name */
    const char *name;
    int64_t t;             /* campaign time, unknown as the latest */
};

static int cmp_key(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    int c = a->hash && b->hash ? memcmp(a->hash, b->hash, 16)
                               : (a->hash ? -1 : b->hash ? 1 : strcmp(a->name, b->name));
    if (c)
        return c;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    return a->input < b->input ? -1 : a->input > b->input;
}

int cov_merge(struct cov_data *out, struct cov_data *parts, uint32_t n, const char *const *paths,
              struct cov_merge_stats *st, char *why, size_t wn)
{
    memset(st, 0, sizeof(*st));
    for (uint32_t p = 1; p < n; p++) {
        int rc = same_build(&parts[0], paths[0], &parts[p], paths[p], why, wn);
        if (rc)
            return rc;
    }
    int blocks = 1;
    for (uint32_t p = 0; p < n; p++)
        if (!parts[p].nblocks || parts[p].nblocks != parts[0].nblocks)
            blocks = 0;
    st->blocks_dropped = !blocks && parts[0].nblocks;
    /* the first part's tables are the merged file's; its inputs and origins are redone */
    *out = parts[0];
    struct cov_input *in0 = out->inputs;
    uint32_t n0 = out->ninputs;
    struct cov_origin *o0 = out->origins;
    uint32_t no0 = out->norigins;
    out->inputs = NULL;
    out->ninputs = out->cap_inputs = 0;
    out->origins = NULL;
    out->norigins = 0;
    cov_data_init(&parts[0]);
    parts[0].inputs = in0;
    parts[0].ninputs = n0;
    parts[0].cap_inputs = n0;
    parts[0].origins = o0;
    parts[0].norigins = no0;
    parts[0].created = out->created;
    parts[0].campaign_ms = out->campaign_ms;
    if (!blocks) {
        free(out->blocks);
        free(out->lines);
        for (uint32_t i = 0; i < out->nfiles; i++)
            free(out->files[i]);
        free(out->files);
        out->blocks = NULL;
        out->lines = NULL;
        out->files = NULL;
        out->nblocks = out->nlines = out->nfiles = 0;
        out->cap_blocks = out->cap_lines = out->cap_files = 0;
        for (uint32_t m = 0; m < out->nmodules; m++)
            out->modules[m].first_block = out->modules[m].nblocks = 0;
    }
    int rc = 0;
    for (uint32_t p = 0; p < n && !rc; p++) {
        struct cov_data *d = &parts[p];
        uint32_t base = out->norigins;
        /* a file without ORIGIN records: one origin named after the file */
        uint32_t no = d->norigins ? d->norigins : 1;
        for (uint32_t o = 0; o < no && !rc; o++) {
            const struct cov_origin *src = d->norigins ? &d->origins[o] : NULL;
            if (!cov_data_add_origin(out, src ? src->host : "",
                                     src && src->file[0] ? src->file : paths[p],
                                     src ? src->created : d->created,
                                     src ? src->campaign_ms : d->campaign_ms))
                rc = -ENOMEM;
        }
        /* a merged file's names carry their host already */
        int prefixed = d->norigins > 1 || (d->norigins == 1 && d->origins[0].file[0]);
        for (uint32_t i = 0; i < d->ninputs && !rc; i++) {
            struct cov_input *src = &d->inputs[i];
            struct cov_input *dst = cov_data_add_input(out);
            if (!dst) {
                rc = -ENOMEM;
                break;
            }
            *dst = *src;
            dst->origin = base + (src->origin < no ? src->origin : 0);
            if (!blocks) {
                free(dst->bhits);
                dst->bhits = NULL;
                dst->nbhits = 0;
            }
            memset(src, 0, sizeof(*src));
            if (!prefixed) {
                const char *h = host_of(d, dst->origin - base, paths[p]);
                size_t len = strlen(h) + strlen(dst->name) + 2;
                char *nm = malloc(len);
                if (!nm) {
                    rc = -ENOMEM;
                    break;
                }
                snprintf(nm, len, "%s:%s", h, dst->name);
                free(dst->name);
                dst->name = nm;
            }
        }
        if (d->campaign_ms > out->campaign_ms)
            out->campaign_ms = d->campaign_ms;
    }
    if (rc) {
        snprintf(why, wn, "out of memory");
        return rc;
    }
    /* duplicates: the same content (or, without a hash, the same prefixed name) again */
    struct key *k = malloc(((size_t)out->ninputs + 1) * sizeof(*k));
    if (!k) {
        snprintf(why, wn, "out of memory");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < out->ninputs; i++) {
        const struct cov_input *x = &out->inputs[i];
        k[i] = (struct key){i, x->has_hash ? x->hash : NULL, x->name,
                            x->time_ms < 0 ? INT64_MAX : x->time_ms};
        if (!x->has_hash)
            st->by_name++;
    }
    if (out->ninputs > 1)
        qsort(k, out->ninputs, sizeof(*k), cmp_key);
    uint8_t *drop = calloc((size_t)out->ninputs + 1, 1);
    if (!drop) {
        free(k);
        snprintf(why, wn, "out of memory");
        return -ENOMEM;
    }
    for (uint32_t i = 1; i < out->ninputs; i++) {
        const struct key *a = &k[i - 1], *b = &k[i];
        int same = a->hash && b->hash ? !memcmp(a->hash, b->hash, 16)
                                      : !a->hash && !b->hash && !strcmp(a->name, b->name);
        if (same) {
            drop[b->input] = 1;
            if (b->hash)
                st->dup_hash++;
            else
                st->dup_name++;
        }
    }
    free(k);
    uint32_t w = 0;
    for (uint32_t i = 0; i < out->ninputs; i++) {
        if (drop[i])
            cov_input_free(&out->inputs[i]);
        else
            out->inputs[w++] = out->inputs[i];
    }
    out->ninputs = w;
    st->inputs = w;
    free(drop);
    cov_data_sort_inputs(out);
    return 0;
}
