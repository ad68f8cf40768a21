/* `ptcall cov run --watch` (docs/cov.md, *Watching a live campaign*): follows running AFL++
 * instances and libFuzzer corpus directories, measures each new entry once on the fork-server
 * runner `cov run` uses, and keeps the .ptcov current, so that a reader at any moment finds a
 * whole file saying which moment of the live campaign it holds (record 11).
 *
 * Entries are told apart by their stored name plus size and modification time: AFL++ trims a
 * queue entry in place after it first fuzzes it (same name, fewer bytes), which is measured
 * again and replaces the result, as a plain `cov run` of the finished queue would see it. An
 * instance that restarted (its fuzzer_stats start_time changed) reuses ids for other inputs:
 * the earlier result is kept under NAME~START (its run's start_time), nothing measured is lost.
 *
 * The budget: one runner (one core at most), at nice 19 by default, and the runners' CPU
 * (this process, its reaped children, the fork server and its children, from /proc) held to
 * --cpu of one core by sleeping between inputs (a leaky bucket of half a second). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "cov_int.h"
#include "cov_watch_int.h"

#define BURST_S 0.5          /* CPU the runners may spend ahead of the budget */
#define SETTLE_MS 50         /* after an inotify event: let the writer finish its file */

/* ---- time -------------------------------------------------------------------------- */

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}


static void sleep_s(double s, volatile int *stop)
{
    while (s > 0 && !*stop) {
        double step = s < 0.2 ? s : 0.2;
        struct timespec ts = {(time_t)step, (long)((step - (time_t)step) * 1e9)};
        nanosleep(&ts, NULL);
        s -= step;
    }
}

/* CPU seconds of this process, its reaped children and the live fork server with its reaped
 * children (the inputs' runs): what the budget counts. */
static double cpu_used(const struct cov_runner *r)
{
    struct rusage a, b;
    getrusage(RUSAGE_SELF, &a);
    getrusage(RUSAGE_CHILDREN, &b);
    double s = a.ru_utime.tv_sec + a.ru_utime.tv_usec / 1e6 + a.ru_stime.tv_sec +
               a.ru_stime.tv_usec / 1e6 + b.ru_utime.tv_sec + b.ru_utime.tv_usec / 1e6 +
               b.ru_stime.tv_sec + b.ru_stime.tv_usec / 1e6;
    int pid = r ? cov_runner_server_pid(r) : 0;
    if (pid > 0) {
        char p[64], buf[1024];
        snprintf(p, sizeof(p), "/proc/%d/stat", pid);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            ssize_t k = read(fd, buf, sizeof(buf) - 1);
            close(fd);
            char *q = k > 0 ? (buf[k] = 0, strrchr(buf, ')')) : NULL;
            unsigned long long ut, st;
            long long cut, cst;
            /* after "(comm)": state, then fields 4..13, then utime stime cutime cstime */
            if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld "
                                   "%lld", &ut, &st, &cut, &cst) == 4) {
                long hz = sysconf(_SC_CLK_TCK);
                s += (double)(ut + st + (unsigned long long)(cut + cst)) / (hz > 0 ? hz : 100);
            }
        }
    }
    return s;
}

/* ---- measuring ------------------------------------------------------------------- */

static int measure(struct watch *w, size_t k, volatile int *stop)
{
    struct went *x = &w->e[k];
    struct cov_result res;
    memset(&res, 0, sizeof(res));
    struct stat st;
    char why[1024];
    int fd = cov_open_input(x->path, &st);
    if (fd < 0) {
        /* gone since the listing (the next scan says so if it stays gone) */
        x->state = E_GONE;
        w->pending--;
        return 0;
    }
    x->size = (uint64_t)st.st_size;
    x->mtime_ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
    int rc = cov_runner_run(w->r, fd, (uint64_t)st.st_size, &res, why, sizeof(why));
    /* INPUT_HASH, as cov run writes it: cov merge deduplicates the parts of many
     * machines by it */
    if (!rc)
        res.has_hash = !cov_hash_fd(fd, (uint64_t)st.st_size, res.hash);
    close(fd);
    if (rc) {
        fprintf(w->o->log, "%s: the runner stopped: %s\n", w->o->cmd, why);
        return rc;
    }
    if (*stop) {
        /* a SIGINT from the terminal reaches the target too: this run is not the input's */
        free(res.hits);
        free(res.bhits);
        return 0;
    }
    struct cov_input *in;
    if (x->input != UINT32_MAX) {
        in = &w->d->inputs[x->input];
        free(in->hits);
        free(in->bhits);
    } else {
        if (!(in = cov_data_add_input(w->d)))
            return -ENOMEM;
        if (!(in->name = strdup(x->name)))
            return -ENOMEM;
        x->input = w->d->ninputs - 1;
    }
    const struct wdir *dr = &w->dirs[x->dir];
    int64_t t = cov_afl_field(strrchr(x->path, '/') + 1, "time");
    if (dr->inst >= 0 && t < 0 && w->insts[dr->inst].start_s)
        t = x->mtime_ms - w->insts[dr->inst].start_s * 1000;
    if (dr->inst < 0 && x->mtime_ms < w->corpus_t0)
        w->corpus_t0 = x->mtime_ms;
    in->kind = x->kind;
    in->time_ms = dr->inst < 0 ? x->mtime_ms - w->corpus_t0 : t >= 0 ? t : -1;
    in->outcome = res.outcome;
    in->value = res.value;
    in->exec_us = res.exec_us;
    in->nhits = res.nhits;
    in->hits = res.hits;
    in->nbhits = res.nbhits;
    in->bhits = res.bhits;
    in->has_hash = res.has_hash;
    memcpy(in->hash, res.hash, sizeof(in->hash));
    x->state = E_MEASURED;
    x->written = 0;
    w->pending--;
    w->measured++;
    w->dirty = 1;
    /* the plateau: did it add a function, or a block? */
    int grew = 0;
    for (uint32_t i = 0; i < in->nhits; i++)
        if (in->hits[i].func < w->d->nfuncs && !w->fseen[in->hits[i].func]) {
            w->fseen[in->hits[i].func] = 1;
            grew = 1;
        }
    for (uint32_t i = 0; i < in->nbhits; i++)
        if (in->bhits[i].block < w->d->nblocks && !w->bseen[in->bhits[i].block]) {
            w->bseen[in->bhits[i].block] = 1;
            grew = 1;
        }
    if (grew) {
        if (x->mtime_ms > w->last_growth_ms)
            w->last_growth_ms = x->mtime_ms;
        if (w->plateau) {
            char sh[768];
            fprintf(w->o->log, "%s: coverage grows again: %s reached new %s; the plateau "
                               "ended\n", w->o->cmd, cov_shown(x->name, sh, sizeof(sh)),
                    w->d->nblocks ? "functions or blocks" : "functions");
            w->plateau = 0;
        }
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void fmt_dur(char *out, size_t n, uint64_t ms)
{
    if (ms % 3600000 == 0)
        snprintf(out, n, "%llu h", (unsigned long long)(ms / 3600000));
    else if (ms % 60000 == 0)
        snprintf(out, n, "%llu min", (unsigned long long)(ms / 60000));
    else
        snprintf(out, n, "%.3g s", ms / 1000.0);
}

int cov_watch_run(struct cov_runner *r, struct cov_data *d, const struct cov_watch_opts *o,
                  void *state, volatile int *stop)
{
    struct watch w;
    memset(&w, 0, sizeof(w));
    w.o = o;
    w.d = d;
    w.r = r;
    w.out_path = (char *)o->output;
    w.started_ms = cov_watch_unix_ms();
    w.last_growth_ms = -1;
    w.corpus_t0 = INT64_MAX;
    const char *cmd = o->cmd;
    int failed = 0, rc = 0;
    w.fseen = calloc(d->nfuncs + 1, 1);
    w.bseen = calloc(d->nblocks + 1, 1);
    if (!w.fseen || !w.bseen) {
        rc = -ENOMEM;
        goto out;
    }
    if (state && (rc = cov_watch_take_resumed(&w, state)))
        goto out;
    for (uint32_t i = 0; i < d->ninputs; i++) {
        for (uint32_t k = 0; k < d->inputs[i].nhits; k++)
            if (d->inputs[i].hits[k].func < d->nfuncs)
                w.fseen[d->inputs[i].hits[k].func] = 1;
        for (uint32_t k = 0; k < d->inputs[i].nbhits; k++)
            if (d->inputs[i].bhits[k].block < d->nblocks)
                w.bseen[d->inputs[i].bhits[k].block] = 1;
    }
    w.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (w.ifd < 0)
        fprintf(o->log, "%s: note: inotify is not available (%s): polling the directories "
                        "every %.3g s\n", cmd, strerror(errno), o->poll_ms / 1000.0);
    for (int a = 0; a < o->nafl && w.ifd >= 0; a++)
        inotify_add_watch(w.ifd, o->afl[a], IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
    for (int c = 0; c < o->ncorpora && !rc; c++) {
        size_t dl = strlen(o->corpora[c]);
        while (dl > 1 && o->corpora[c][dl - 1] == '/')
            dl--;
        char *dir = strndup(o->corpora[c], dl), *prefix = NULL;
        if (!dir || asprintf(&prefix, "%s/", dir) < 0)
            rc = -ENOMEM;
        else
            rc = cov_watch_add_dir(&w, dir, prefix, COV_KIND_QUEUE, -1);
        free(dir);
        free(prefix);
    }
    if (!rc)
        rc = cov_watch_scan_all(&w, 1);
    if (rc)
        goto out;
    char pl[32], sv[32];
    fmt_dur(pl, sizeof(pl), o->plateau_ms);
    fmt_dur(sv, sizeof(sv), o->save_ms);
    fprintf(o->log, "%s: watching %zu AFL++ instance%s and %d corpus director%s (%s; %zu "
                    "entries to measure); writing %s every %s and at the end; a plateau after "
                    "%s without new coverage; CPU budget %.2f of one core\n",
            cmd, w.ninst, w.ninst == 1 ? "" : "s", o->ncorpora, o->ncorpora == 1 ? "y" : "ies",
            w.ifd >= 0 ? "inotify" : "polling", w.pending, o->output, sv, pl, o->cpu);
    double t0 = mono(), last_full = t0, last_save = t0 - o->save_ms / 1000.0, tcpu = t0;
    double cpu0 = cpu_used(r), cpu_prev = cpu0, credit = 0;
    size_t next = 0;   /* entries are measured in the order they were seen */
    int why_end = 0;   /* 1 signal, 2 --duration, 3 idle */
    while (!failed && !rc) {
        if (*stop) {
            why_end = 1;
            break;
        }
        double now = mono();
        if (o->duration_ms && (now - t0) * 1000 >= (double)o->duration_ms) {
            why_end = 2;
            break;
        }
        int ev = cov_watch_drain(&w);
        /* a directory inotify could not watch (its limit reached) is polled as without it */
        int unwatched = w.ifd < 0;
        for (size_t i = 0; i < w.ndirs && !unwatched; i++)
            unwatched = w.dirs[i].present && w.dirs[i].wd < 0;
        int full = (now - last_full) * 1000 >= (double)o->poll_ms * (unwatched ? 1 : 5);
        if (ev || full) {
            if (ev)
                sleep_s(SETTLE_MS / 1000.0, stop);
            cov_watch_drain(&w);
            if ((rc = cov_watch_scan_all(&w, full)))
                break;
            if (full)
                last_full = now;
        }
        if (w.pending) {
            while (next < w.ne && w.e[next].state != E_PENDING)
                next++;
            if (next == w.ne)   /* a rewritten entry earlier in the list */
                for (next = 0; next < w.ne && w.e[next].state != E_PENDING; next++) {
                }
            if (next < w.ne && (rc = measure(&w, next, stop))) {
                why_end = 4;
                break;
            }
            /* the budget: sleep off what the runs spent beyond --cpu of one core */
            double t = mono(), c = cpu_used(r);
            credit += o->cpu * (t - tcpu) - (c - cpu_prev);
            if (credit > BURST_S)
                credit = BURST_S;
            tcpu = t;
            cpu_prev = c;
            if (credit < 0)
                sleep_s(-credit / o->cpu, stop);
        }
        now = mono();
        if (w.dirty && (now - last_save) * 1000 >= (double)o->save_ms) {
            cov_watch_write(&w, 1, &failed);
            last_save = now;
        }
        if (w.pending)
            continue;
        /* caught up: the plateau, the end, then wait for the next entry */
        int64_t since = w.last_growth_ms >= 0 ? w.last_growth_ms : w.started_ms;
        if (!w.plateau && cov_watch_unix_ms() - since >= (int64_t)o->plateau_ms) {
            char tm[64];
            time_t ts = (time_t)(since / 1000);
            struct tm g;
            strftime(tm, sizeof(tm), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&ts, &g));
            fprintf(o->log, "%s: plateau: no new function%s for %s (the last came at %s; %u "
                            "inputs measured)\n", cmd, d->nblocks ? " or block" : "", pl,
                    w.last_growth_ms >= 0 ? tm : "the start", d->ninputs);
            w.plateau = 1;
            w.dirty = 1;
        }
        if (o->until_idle && w.ninst) {
            int all = 1;
            for (size_t i = 0; i < w.ninst; i++)
                all &= w.insts[i].stopped;
            if (all) {
                /* the last entries an instance wrote before it ended */
                if ((rc = cov_watch_scan_all(&w, 1)))
                    break;
                if (!w.pending) {
                    why_end = 3;
                    break;
                }
                continue;
            }
        }
        double wait = o->poll_ms / 1000.0;
        if (w.dirty) {
            double left = o->save_ms / 1000.0 - (mono() - last_save);
            if (left < wait)
                wait = left > 0.01 ? left : 0.01;
        }
        if (w.ifd >= 0) {
            struct pollfd p = {w.ifd, POLLIN, 0};
            poll(&p, 1, (int)(wait * 1000));
        } else
            sleep_s(wait, stop);
    }
    if (rc != -ENOMEM) {
        cov_watch_write(&w, 0, &failed);
        double secs = mono() - t0, cpu = cpu_used(r) - cpu0;
        char lag[128] = "";
        if (w.nlags) {
            if (w.nlags > 1)
                qsort(w.lags, w.nlags, sizeof(*w.lags), cmp_double);
            snprintf(lag, sizeof(lag), "; lag behind the files: median %.2f s, max %.2f s",
                     w.lags[w.nlags / 2], w.lags[w.nlags - 1]);
        }
        fprintf(o->log, "%s: watch ended (%s) after %.1f s: %zu entries measured (%zu again "
                        "after a rewrite), %zu resumed, %zu pending; %u inputs in %s%s; CPU "
                        "%.2f s, %.1f%% of one core%s\n",
                cmd, why_end == 1 ? "signal" : why_end == 2 ? "--duration" : why_end == 3 ?
                "every instance stopped, all measured" : why_end == 4 ? "the runner stopped" : "error",
                secs, w.measured, w.replaced,
                w.resumed, w.pending, d->ninputs, w.out_path, lag, cpu,
                secs > 0 ? 100 * cpu / secs : 0.0, w.plateau ? "; on a plateau" : "");
    }
out:
    if (rc == -ENOMEM)
        fprintf(o->log, "%s: out of memory\n", cmd);
    if (w.ifd >= 0)
        close(w.ifd);
    for (size_t k = 0; k < w.ne; k++) {
        free(w.e[k].name);
        free(w.e[k].path);
    }
    free(w.e);
    free(w.hash);
    for (size_t i = 0; i < w.ninst; i++) {
        free(w.insts[i].rel);
        free(w.insts[i].path);
    }
    free(w.insts);
    for (size_t i = 0; i < w.ndirs; i++) {
        free(w.dirs[i].path);
        free(w.dirs[i].prefix);
    }
    free(w.dirs);
    free(w.fseen);
    free(w.bseen);
    free(w.lags);
    if (w.out_path != o->output)
        free(w.out_path);
    if (state) {
        cov_data_free(&((struct resume *)state)->old);
        free(state);
    }
    return rc || failed ? 1 : 0;
}
