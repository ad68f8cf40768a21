/* cov run --watch (cov_watch.c): the .ptcov it keeps current, whole at every moment, and
 * record 11 WATCH (docs/cov.md): live or final, as of when, entries pending, the plateau, and
 * per input its name, size, file time and instance start, from which a restarted watch
 * resumes without running anything again. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "cov_int.h"
#include "cov_watch_int.h"
#include "ptc_varint.h"

#define WATCH_STATE_VERSION 1u

/* ---- record 11 -------------------------------------------------------------------- */

/* Record 11's payload: version, live, as of, watch start, pending, plateau, last growth, then
 * per measured input its name, size, file time and instance start (what resuming matches). */
static int make_state(struct watch *w, int live)
{
    struct cov_buf b = {0};
    cov_buf_put_v(&b, WATCH_STATE_VERSION);
    cov_buf_put_v(&b, (uint64_t)live);
    cov_buf_put_v(&b, ptc_zigzag(cov_watch_unix_ms()));
    cov_buf_put_v(&b, ptc_zigzag(w->started_ms));
    cov_buf_put_v(&b, w->pending);
    cov_buf_put_v(&b, (uint64_t)w->plateau);
    cov_buf_put_v(&b, ptc_zigzag(w->last_growth_ms));
    size_t n = 0;
    for (size_t k = 0; k < w->ne; k++)
        n += w->e[k].input != UINT32_MAX;
    cov_buf_put_v(&b, n);
    for (size_t k = 0; k < w->ne; k++) {
        const struct went *x = &w->e[k];
        if (x->input == UINT32_MAX)
            continue;
        cov_buf_put_s(&b, x->name);
        cov_buf_put_v(&b, x->size);
        cov_buf_put_v(&b, ptc_zigzag(x->mtime_ms));
        cov_buf_put_v(&b, ptc_zigzag(x->gen));
    }
    if (b.oom) {
        free(b.p);
        return -ENOMEM;
    }
    free(w->d->watch);
    w->d->watch = b.p;
    w->d->nwatch = b.n;
    return 0;
}

static int read_head(struct cov_rd *r, struct cov_watch_state *s, int64_t *started)
{
    if (cov_rd_v(r) != WATCH_STATE_VERSION || r->bad)
        return -EINVAL;
    s->live = (unsigned)cov_rd_v(r);
    s->as_of_ms = ptc_unzigzag(cov_rd_v(r));
    *started = ptc_unzigzag(cov_rd_v(r));
    s->pending = cov_rd_v(r);
    s->plateau = (unsigned)cov_rd_v(r);
    s->last_growth_ms = ptc_unzigzag(cov_rd_v(r));
    return r->bad ? -EINVAL : 0;
}

int cov_watch_state_read(const struct cov_data *d, struct cov_watch_state *s)
{
    if (!d->watch)
        return -ENOENT;
    struct cov_rd r = {d->watch, d->watch + d->nwatch, 0};
    int64_t started;
    return read_head(&r, s, &started);
}

/* ---- the output ------------------------------------------------------------------- */

void cov_watch_write(struct watch *w, int live, int *failed)
{
    const struct cov_watch_opts *o = w->o;
    char why[2048], sh[768];
    struct stat st;
    /* a file another process put there since our last write is never written over */
    if (w->out_known && stat(w->out_path, &st) == 0 &&
        (st.st_dev != w->out_dev || st.st_ino != w->out_ino)) {
        char *alt = NULL;
        if (asprintf(&alt, "%s.%ld.ptcov", o->output, (long)getpid()) < 0) {
            *failed = 1;
            return;
        }
        fprintf(o->log, "%s: %s was replaced by another process since the last write: not "
                        "writing over it; writing %s instead\n", o->cmd,
                cov_shown(w->out_path, sh, sizeof(sh)), alt);
        if (w->out_path != o->output)
            free(w->out_path);
        w->out_path = alt;
        w->out_known = 0;
    }
    /* corpus campaign times from the earliest corpus file seen so far */
    for (size_t k = 0; k < w->ne; k++) {
        struct went *x = &w->e[k];
        if (x->input != UINT32_MAX && x->dir != UINT32_MAX && w->dirs[x->dir].inst < 0)
            w->d->inputs[x->input].time_ms = x->mtime_ms - w->corpus_t0;
    }
    int64_t camp = -1;
    for (size_t i = 0; i < w->ninst; i++) {
        const struct winst *in = &w->insts[i];
        int64_t ms = !in->start_s ? -1
                     : !in->stopped ? cov_watch_unix_ms() - in->start_s * 1000
                     : in->run_s ? in->run_s * 1000
                     : in->last_update_s >= in->start_s ? (in->last_update_s - in->start_s) * 1000
                                                        : -1;
        if (ms > camp)
            camp = ms;
    }
    if (camp >= 0 || w->d->campaign_ms < 0)
        w->d->campaign_ms = camp > w->d->campaign_ms ? camp : w->d->campaign_ms;
    if (make_state(w, live)) {
        fprintf(o->log, "%s: out of memory\n", o->cmd);
        *failed = 1;
        return;
    }
    /* the inputs in the order readers decide "first reached" by; d's own order stays (the
     * entries point into it) */
    struct cov_data view = *w->d;
    if (w->d->ninputs) {
        view.inputs = malloc(w->d->ninputs * sizeof(*view.inputs));
        if (!view.inputs) {
            fprintf(o->log, "%s: out of memory\n", o->cmd);
            *failed = 1;
            return;
        }
        memcpy(view.inputs, w->d->inputs, w->d->ninputs * sizeof(*view.inputs));
        cov_data_sort_inputs(&view);
    }
    int rc = cov_file_write(&view, w->out_path, why, sizeof(why));
    if (w->d->ninputs)
        free(view.inputs);
    if (rc) {
        fprintf(o->log, "%s: %s\n", o->cmd, why);
        *failed = 1;
        return;
    }
    if (stat(w->out_path, &st) == 0 && S_ISREG(st.st_mode)) {
        w->out_dev = st.st_dev;
        w->out_ino = st.st_ino;
        w->out_known = 1;
    }
    double now = cov_watch_unix_ms() / 1000.0;
    for (size_t k = 0; k < w->ne; k++) {
        struct went *x = &w->e[k];
        if (x->state != E_MEASURED || x->written || x->input == UINT32_MAX)
            continue;
        x->written = 1;
        if (w->nlags == w->cap_lags) {
            size_t nc = w->cap_lags ? w->cap_lags * 2 : 256;
            double *v = realloc(w->lags, nc * sizeof(*v));
            if (!v)
                continue;
            w->lags = v;
            w->cap_lags = nc;
        }
        /* from the file's time, or the watch's start for a file older than it (AFL++ links
         * its seeds into the queue with their old times) */
        int64_t from = x->mtime_ms > w->started_ms ? x->mtime_ms : w->started_ms;
        double lag = now - from / 1000.0;
        w->lags[w->nlags++] = lag > 0 ? lag : 0;
    }
    w->dirty = 0;
}

/* ---- resuming --------------------------------------------------------------------- */


/* Whether the output's directory is one the watch lists (a --corpus DIR, or an instance's
 * queue/, crashes/ or hangs/ under an --afl OUTDIR): its own writes would be taken as
 * inputs. */
static int output_inside(const struct cov_watch_opts *o)
{
    char dir[4096], real[4096], other[4096];
    snprintf(dir, sizeof(dir), "%s", o->output);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;
    else
        snprintf(dir, sizeof(dir), ".");
    if (!realpath(dir, real))
        return 0;
    for (int c = 0; c < o->ncorpora; c++)
        if (realpath(o->corpora[c], other) && !strcmp(real, other))
            return 1;
    const char *base = strrchr(real, '/');
    base = base ? base + 1 : real;
    if (strcmp(base, "queue") && strcmp(base, "crashes") && strcmp(base, "hangs"))
        return 0;
    for (int a = 0; a < o->nafl; a++) {
        size_t n;
        if (realpath(o->afl[a], other) && (n = strlen(other)) && !strncmp(real, other, n) &&
            real[n] == '/')
            return 1;
    }
    return 0;
}

int cov_watch_resume(struct cov_data *d, const struct cov_watch_opts *o, void **state)
{
    *state = NULL;
    char why[2048];
    struct stat st;
    if (output_inside(o)) {
        fprintf(o->log, "%s: %s is inside a directory the watch follows: its writes would be "
                        "taken as inputs; write it elsewhere\n", o->cmd, o->output);
        return 1;
    }
    if (stat(o->output, &st) || !S_ISREG(st.st_mode))
        return 0;   /* new, or a device written into */
    struct resume *rs = calloc(1, sizeof(*rs));
    if (!rs) {
        fprintf(o->log, "%s: out of memory\n", o->cmd);
        return 1;
    }
    cov_data_init(&rs->old);
    if (cov_file_read(&rs->old, o->output, why, sizeof(why))) {
        fprintf(o->log, "%s: %s exists and is not a whole .ptcov (%s): --watch resumes from "
                        "its own file and never writes over another; give another -o\n",
                o->cmd, o->output, why);
        cov_data_free(&rs->old);
        free(rs);
        return 1;
    }
    int same = rs->old.nmodules == d->nmodules;
    for (uint32_t m = 0; same && m < d->nmodules; m++)
        same = rs->old.modules[m].identity == d->modules[m].identity &&
               rs->old.modules[m].nblocks == d->modules[m].nblocks;
    if (!same) {
        fprintf(o->log, "%s: %s was made with another build of the target (its modules or "
                        "their function maps differ): not resuming from it, nor writing over "
                        "it; give another -o\n", o->cmd, o->output);
        cov_data_free(&rs->old);
        free(rs);
        return 1;
    }
    *state = rs;
    return 0;
}

/* Moves the resumed file's inputs into d and its record 11 into entries. */
int cov_watch_take_resumed(struct watch *w, struct resume *rs)
{
    struct cov_data *old = &rs->old;
    const char *cmd = w->o->cmd;
    struct cov_watch_state s;
    int64_t started = 0;
    struct cov_rd r = {NULL, NULL, 0};
    if (old->watch) {
        r = (struct cov_rd){old->watch, old->watch + old->nwatch, 0};
        if (read_head(&r, &s, &started))
            r.bad = 1;
    }
    if (!old->watch || r.bad)
        fprintf(w->o->log, "%s: note: %s has no watch state of this version: its %u inputs are "
                           "kept, matched by name only\n", cmd, w->o->output, old->ninputs);
    else {
        w->started_ms = started;
        w->last_growth_ms = s.last_growth_ms;
    }
    w->d->campaign_ms = old->campaign_ms;
    for (uint32_t i = 0; i < old->ninputs; i++) {
        struct cov_input *in = cov_data_add_input(w->d);
        if (!in)
            return -ENOMEM;
        *in = old->inputs[i];
        memset(&old->inputs[i], 0, sizeof(old->inputs[i]));
        int64_t k = cov_watch_add_entry(w, in->name, NULL);
        if (k < 0)
            return (int)k;
        w->e[k].input = w->d->ninputs - 1;
        w->e[k].state = E_MEASURED;
        w->e[k].written = 1;
        w->e[k].kind = in->kind;
        w->e[k].size = UINT64_MAX;   /* unknown: run again when the file is there */
        w->resumed++;
    }
    uint64_t n = r.bad || !old->watch ? 0 : cov_rd_v(&r);
    for (uint64_t i = 0; i < n && !r.bad; i++) {
        uint64_t len = cov_rd_v(&r);
        if (r.bad || len > (uint64_t)(r.end - r.p) || len >= 8192) {
            r.bad = 1;
            break;
        }
        char name[8192];
        memcpy(name, r.p, len);
        name[len] = 0;
        r.p += len;
        uint64_t size = cov_rd_v(&r);
        int64_t mt = ptc_unzigzag(cov_rd_v(&r)), gen = ptc_unzigzag(cov_rd_v(&r));
        int64_t k = cov_watch_find(w, name);
        if (k >= 0 && !r.bad) {
            w->e[k].size = size;
            w->e[k].mtime_ms = mt;
            w->e[k].gen = gen;
        }
    }
    fprintf(w->o->log, "%s: resuming from %s: %zu inputs measured before are not run again\n",
            cmd, w->o->output, w->resumed);
    return 0;
}

