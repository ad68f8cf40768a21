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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "cov_int.h"
#include "ptc_varint.h"

#define WATCH_STATE_VERSION 1u
#define BURST_S 0.5          /* CPU the runners may spend ahead of the budget */
#define SETTLE_MS 50         /* after an inotify event: let the writer finish its file */

enum { E_PENDING = 0, E_MEASURED = 1, E_GONE = 2 };

struct went {
    char *name;               /* stored name: "INST/queue/id:...", "DIR/FILE" */
    char *path;
    uint32_t dir;             /* index into w->dirs */
    uint8_t kind, state;
    uint8_t written;          /* its result is in the file on disk */
    uint64_t size;
    int64_t mtime_ms;         /* Unix ms */
    int64_t gen;              /* its instance's start_time (s) when seen; 0: unknown/corpus */
    uint32_t input;           /* index into d->inputs when measured */
    uint64_t seen_scan;       /* the last scan of its directory that listed it */
};

struct winst {
    char *rel, *path;         /* "" and OUTDIR for the one-instance layout */
    uint32_t outdir;          /* index into o->afl */
    int64_t start_s, last_update_s, run_s;
    long pid;
    int present, stopped;
};

struct wdir {
    char *path, *prefix;      /* prefix: what goes before the file name in stored names */
    uint8_t kind;
    int inst;                 /* index into w->insts, -1: a corpus directory */
    int wd;                   /* inotify watch, -1: none */
    int present, dirty, said_missing;
};

struct watch {
    const struct cov_watch_opts *o;
    struct cov_data *d;
    struct cov_runner *r;
    struct went *e;
    size_t ne, cap_e;
    uint32_t *hash;           /* open addressing over e by name; UINT32_MAX: empty */
    size_t hcap;
    struct winst *insts;
    size_t ninst;
    struct wdir *dirs;
    size_t ndirs;
    int ifd;                  /* inotify, -1: polling */
    uint64_t scan;
    size_t pending, measured, replaced, resumed;
    int64_t corpus_t0;        /* earliest corpus file time: corpus campaign times start there */
    /* coverage so far, for the plateau */
    uint8_t *fseen, *bseen;
    int64_t last_growth_ms;   /* file time of the last input adding a function or block */
    int plateau;
    /* the output */
    dev_t out_dev;
    ino_t out_ino;
    int out_known;
    char *out_path;           /* where it writes (another name after a replaced output) */
    int dirty;
    double *lags;             /* seconds, file time to the write that held its result */
    size_t nlags, cap_lags;
    int64_t started_ms;
};

/* ---- time -------------------------------------------------------------------------- */

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int64_t unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
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

/* ---- the entries' index ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

static int64_t find(const struct watch *w, const char *name)
{
    if (!w->hcap)
        return -1;
    for (size_t i = hash_str(name) & (w->hcap - 1);; i = (i + 1) & (w->hcap - 1)) {
        if (w->hash[i] == UINT32_MAX)
            return -1;
        if (!strcmp(w->e[w->hash[i]].name, name))
            return w->hash[i];
    }
}

static void hash_put(struct watch *w, uint32_t k)
{
    size_t i = hash_str(w->e[k].name) & (w->hcap - 1);
    while (w->hash[i] != UINT32_MAX)
        i = (i + 1) & (w->hcap - 1);
    w->hash[i] = k;
}

static int rehash(struct watch *w)
{
    size_t nc = w->hcap ? w->hcap * 2 : 1024;
    uint32_t *h = malloc(nc * sizeof(*h));
    if (!h)
        return -ENOMEM;
    memset(h, 0xff, nc * sizeof(*h));
    free(w->hash);
    w->hash = h;
    w->hcap = nc;
    for (size_t k = 0; k < w->ne; k++)
        hash_put(w, (uint32_t)k);
    return 0;
}

/* A new entry (name and path copied). Returns its index, or -ENOMEM. */
static int64_t add_entry(struct watch *w, const char *name, const char *path)
{
    if (w->ne == w->cap_e) {
        size_t nc = w->cap_e ? w->cap_e * 2 : 256;
        struct went *v = realloc(w->e, nc * sizeof(*v));
        if (!v)
            return -ENOMEM;
        w->e = v;
        w->cap_e = nc;
    }
    if ((w->ne + 1) * 2 > w->hcap && rehash(w))
        return -ENOMEM;
    struct went *x = &w->e[w->ne];
    memset(x, 0, sizeof(*x));
    x->name = strdup(name);
    x->path = path ? strdup(path) : NULL;
    x->input = UINT32_MAX;
    x->dir = UINT32_MAX;
    if (!x->name || (path && !x->path)) {
        free(x->name);
        free(x->path);
        return -ENOMEM;
    }
    hash_put(w, (uint32_t)w->ne);
    return (int64_t)w->ne++;
}

/* Renames entry k (its stored input too), rebuilding the index. */
static int rename_entry(struct watch *w, size_t k, const char *name)
{
    char *s = strdup(name), *s2 = strdup(name);
    if (!s || !s2) {
        free(s);
        free(s2);
        return -ENOMEM;
    }
    free(w->e[k].name);
    w->e[k].name = s;
    if (w->e[k].input != UINT32_MAX) {
        free(w->d->inputs[w->e[k].input].name);
        w->d->inputs[w->e[k].input].name = s2;
    } else
        free(s2);
    w->hcap /= 2;   /* same size again */
    return rehash(w);
}

/* ---- the directories -------------------------------------------------------------- */

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static void watch_dir(struct watch *w, struct wdir *dr)
{
    if (w->ifd < 0 || dr->wd >= 0)
        return;
    dr->wd = inotify_add_watch(w->ifd, dr->path,
                               IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE |
                                   IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
}

static int add_dir(struct watch *w, const char *path, const char *prefix, unsigned kind, int inst)
{
    struct wdir *v = realloc(w->dirs, (w->ndirs + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    w->dirs = v;
    struct wdir *dr = &v[w->ndirs];
    memset(dr, 0, sizeof(*dr));
    dr->path = strdup(path);
    dr->prefix = strdup(prefix);
    if (!dr->path || !dr->prefix) {
        free(dr->path);
        free(dr->prefix);
        return -ENOMEM;
    }
    dr->kind = (uint8_t)kind;
    dr->inst = inst;
    dr->wd = -1;
    dr->dirty = 1;
    w->ndirs++;
    watch_dir(w, dr);
    return 0;
}

/* fuzzer_stats of an instance: start_time, last_update, run_time, fuzzer_pid. 0 or -1. */
static int read_stats(const char *inst, int64_t *start, int64_t *last, int64_t *run, long *pid)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/fuzzer_stats", inst);
    struct stat st;
    int fd = cov_open_input(path, &st);
    if (fd < 0)
        return -1;
    FILE *f = fdopen(fd, "re");
    if (!f) {
        close(fd);
        return -1;
    }
    char line[512];
    *start = *last = *run = 0;
    *pid = 0;
    while (fgets(line, sizeof(line), f)) {
        long long v;
        if (sscanf(line, "start_time : %lld", &v) == 1)
            *start = v;
        else if (sscanf(line, "last_update : %lld", &v) == 1)
            *last = v;
        else if (sscanf(line, "run_time : %lld", &v) == 1)
            *run = v;
        else if (sscanf(line, "fuzzer_pid : %lld", &v) == 1)
            *pid = (long)v;
    }
    fclose(f);
    return *start > 0 ? 0 : -1;
}

static int add_instance(struct watch *w, uint32_t outdir, const char *rel)
{
    const char *od = w->o->afl[outdir];
    struct winst *v = realloc(w->insts, (w->ninst + 1) * sizeof(*v));
    if (!v)
        return -ENOMEM;
    w->insts = v;
    struct winst *in = &v[w->ninst];
    memset(in, 0, sizeof(*in));
    in->outdir = outdir;
    in->rel = strdup(rel);
    if (!in->rel || asprintf(&in->path, "%s%s%s", od, *rel ? "/" : "", rel) < 0) {
        free(in->rel);
        return -ENOMEM;
    }
    in->present = 1;
    w->ninst++;
    static const char *const subs[] = {"queue", "crashes", "hangs"};
    for (unsigned k = 0; k < 3; k++) {
        char *path = NULL, *prefix = NULL;
        if (asprintf(&path, "%s/%s", in->path, subs[k]) < 0)
            return -ENOMEM;
        if (asprintf(&prefix, "%s%s%s/", rel, *rel ? "/" : "", subs[k]) < 0) {
            free(path);
            return -ENOMEM;
        }
        int rc = add_dir(w, path, prefix, k, (int)(w->ninst - 1));
        free(path);
        free(prefix);
        if (rc)
            return rc;
    }
    if (w->ifd >= 0)
        inotify_add_watch(w->ifd, in->path, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
    return 0;
}

/* New instances of every --afl OUTDIR (the one-instance layout, or NAME/queue/). */
static int find_instances(struct watch *w)
{
    for (int a = 0; a < w->o->nafl; a++) {
        const char *od = w->o->afl[a];
        char q[4200];
        snprintf(q, sizeof(q), "%s/queue", od);
        if (is_dir(q)) {
            int known = 0;
            for (size_t i = 0; i < w->ninst; i++)
                known |= w->insts[i].outdir == (uint32_t)a && !*w->insts[i].rel;
            if (!known) {
                int rc = add_instance(w, (uint32_t)a, "");
                if (rc)
                    return rc;
            }
            continue;
        }
        char **names;
        size_t count;
        if (cov_list_dir(od, &names, &count))
            continue;   /* said by the scan of its instances, or at the start */
        for (size_t i = 0; i < count; i++) {
            if (names[i][0] == '.')
                continue;
            snprintf(q, sizeof(q), "%s/%s/queue", od, names[i]);
            if (!is_dir(q))
                continue;
            int known = 0;
            for (size_t k = 0; k < w->ninst && !known; k++)
                known = w->insts[k].outdir == (uint32_t)a && !strcmp(w->insts[k].rel, names[i]);
            if (!known) {
                char sh[768];
                if (w->scan)
                    fprintf(w->o->log, "%s: following a new AFL++ instance, %s\n", w->o->cmd,
                            cov_shown(q, sh, sizeof(sh)));
                int rc = add_instance(w, (uint32_t)a, names[i]);
                if (rc) {
                    cov_free_names(names, count);
                    return rc;
                }
            }
        }
        cov_free_names(names, count);
    }
    return 0;
}

static int zombie(long pid)
{
    char p[64], buf[512];
    snprintf(p, sizeof(p), "/proc/%ld/stat", pid);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    char *q = k > 0 ? (buf[k] = 0, strrchr(buf, ')')) : NULL;
    return q && q[1] == ' ' && (q[2] == 'Z' || q[2] == 'X');
}

/* An instance's state: gone, back, restarted, stopped (its fuzzer_pid gone). */
static void check_instance(struct watch *w, struct winst *in)
{
    char sh[768];
    const char *cmd = w->o->cmd;
    int present = is_dir(in->path);
    cov_shown(in->path, sh, sizeof(sh));
    if (!present) {
        if (in->present) {
            size_t kept = 0;
            for (size_t k = 0; k < w->ne; k++)
                kept += w->e[k].dir != UINT32_MAX &&
                        w->dirs[w->e[k].dir].inst == (int)(in - w->insts) &&
                        w->e[k].state == E_MEASURED;
            fprintf(w->o->log, "%s: the AFL++ instance %s is gone (its directory was removed): "
                               "its %zu measured entries stay in the file; watching for it to "
                               "come back\n", cmd, sh, kept);
        }
        in->present = 0;
        in->stopped = 1;
        return;
    }
    if (!in->present)
        fprintf(w->o->log, "%s: the AFL++ instance %s is back\n", cmd, sh);
    in->present = 1;
    int64_t start, last, run;
    long pid;
    if (read_stats(in->path, &start, &last, &run, &pid)) {
        in->stopped = 0;   /* starting: fuzzer_stats comes after the first calibration */
        return;
    }
    if (in->start_s && start != in->start_s)
        fprintf(w->o->log, "%s: the AFL++ instance %s restarted (start_time %lld, was %lld): "
                           "what was measured stays; entries it writes under names already "
                           "measured are measured again, the earlier results kept as NAME~%lld\n",
                cmd, sh, (long long)start, (long long)in->start_s, (long long)in->start_s);
    in->start_s = start;
    in->last_update_s = last;
    in->run_s = run;
    in->pid = pid;
    /* stopped: its pid is gone (or a zombie its parent has not reaped yet), or (on another
     * machine's file system) no update for 10 min */
    int alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM) && !zombie(pid);
    in->stopped = !alive || (last && unix_ms() / 1000 - last > 600);
}

static int64_t file_ms(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

/* The file at path is the one entry x was measured on (size and time). */
static int same_file(const struct went *x, const char *path, struct stat *st)
{
    return stat(path, st) == 0 && S_ISREG(st->st_mode) && (uint64_t)st->st_size == x->size &&
           file_ms(st) == x->mtime_ms;
}

/* Keeps entry k's result under NAME~START (its instance's start_time then): another input
 * now has its name. */
static int keep_as_old(struct watch *w, size_t k)
{
    char old[8192];
    snprintf(old, sizeof(old), "%s~%lld", w->e[k].name, (long long)w->e[k].gen);
    w->e[k].dir = UINT32_MAX;
    return w->e[k].input == UINT32_MAX ? 0 : rename_entry(w, k, old);
}

/* One name listed in directory di: known and the same file (nothing to do), rewritten in
 * place (measured again, the result replaced), another input under a measured name after a
 * restart (the old result kept as NAME~START), back after it was gone, resumed from the file,
 * or new. */
static int take_name(struct watch *w, uint32_t di, const char *name, const char *path,
                     int64_t gen, uint64_t scan)
{
    struct stat st;
    int64_t k = find(w, name);
    int rc = 0;
    if (k >= 0) {
        struct went *x = &w->e[k];
        if (x->dir == UINT32_MAX && x->input != UINT32_MAX && x->path == NULL) {
            /* resumed from the file (size UINT64_MAX: one without record 11, matched by name) */
            if (x->size == UINT64_MAX ? stat(path, &st) == 0 : same_file(x, path, &st)) {
                x->size = (uint64_t)st.st_size;
                x->mtime_ms = file_ms(&st);
                x->dir = di;
                x->seen_scan = scan;
                return (x->path = strdup(path)) ? 0 : -ENOMEM;
            }
            rc = keep_as_old(w, (size_t)k);
        } else if (x->dir == di && same_file(x, path, &st)) {
            x->seen_scan = scan;
            if (x->state == E_GONE) {   /* back (a restored queue): not run again */
                x->state = x->input != UINT32_MAX ? E_MEASURED : E_PENDING;
                w->pending += x->state == E_PENDING;
            }
            return 0;
        } else if (x->dir == di && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            int restarted = x->gen && gen && x->gen != gen;
            if (x->input == UINT32_MAX || !restarted) {
                /* rewritten in place (AFL++'s trim), or not measured yet: measured (again) */
                x->seen_scan = scan;
                w->replaced += x->state == E_MEASURED;
                w->pending += x->state != E_PENDING;
                x->state = E_PENDING;
                x->size = (uint64_t)st.st_size;
                x->mtime_ms = file_ms(&st);
                x->gen = gen;
                return 0;
            }
            rc = keep_as_old(w, (size_t)k);
        } else if (x->dir == di) {
            x->seen_scan = scan;   /* gone between the listing and stat: the next scan says */
            return 0;
        }
        /* else: the name of an entry kept as NAME~START, or of another directory */
    }
    if (rc || !cov_entry_check(path, name, &st, w->o->log))
        return rc;
    int64_t nk = add_entry(w, name, path);
    if (nk < 0)
        return (int)nk;
    struct went *x = &w->e[nk];
    x->dir = di;
    x->kind = w->dirs[di].kind;
    x->size = (uint64_t)st.st_size;
    x->mtime_ms = file_ms(&st);
    x->gen = gen;
    x->seen_scan = scan;
    x->state = E_PENDING;
    w->pending++;
    return 0;
}

/* Lists one directory: new entries pending, changed ones pending again, gone ones said. */
static int scan_dir(struct watch *w, uint32_t di)
{
    struct wdir *dr = &w->dirs[di];
    char sh[768];
    const char *cmd = w->o->cmd;
    dr->dirty = 0;
    char **names;
    size_t count;
    int rc = cov_list_dir(dr->path, &names, &count);
    if (rc) {
        /* crashes/ and hangs/ come lazily; a removed instance is said by check_instance */
        if (dr->present && !dr->said_missing && (dr->inst < 0 || dr->kind == COV_KIND_QUEUE) &&
            (dr->inst < 0 || w->insts[dr->inst].present)) {
            fprintf(w->o->log, "%s: %s %s: %s; what was measured from it stays, and it is "
                               "watched for again\n", cmd,
                    dr->inst < 0 ? "the corpus directory" : "the queue",
                    cov_shown(dr->path, sh, sizeof(sh)),
                    rc == -ENOENT ? "removed" : strerror(-rc));
            dr->said_missing = 1;
        }
        dr->present = 0;
        if (dr->wd >= 0 && w->ifd >= 0)
            inotify_rm_watch(w->ifd, dr->wd);
        dr->wd = -1;
        return rc == -ENOMEM ? rc : 0;
    }
    if (!dr->present && dr->said_missing)
        fprintf(w->o->log, "%s: %s is back\n", cmd, cov_shown(dr->path, sh, sizeof(sh)));
    dr->present = 1;
    dr->said_missing = 0;
    watch_dir(w, dr);
    uint64_t scan = ++w->scan;
    int64_t gen = dr->inst >= 0 ? w->insts[dr->inst].start_s : 0;
    for (size_t i = 0; i < count && !rc; i++) {
        if (names[i][0] == '.' || !strcmp(names[i], "README.txt"))
            continue;
        char *path = NULL, *name = NULL;
        if (asprintf(&path, "%s/%s", dr->path, names[i]) < 0 ||
            asprintf(&name, "%s%s", dr->prefix, names[i]) < 0) {
            free(path);
            rc = -ENOMEM;
            break;
        }
        rc = take_name(w, di, name, path, gen, scan);
        free(path);
        free(name);
    }
    cov_free_names(names, count);
    /* entries that were here and are not any more: afl-cmin, a restart, a cleaned corpus */
    size_t gone = 0, gone_pending = 0;
    for (size_t k = 0; k < w->ne && !rc; k++) {
        struct went *x = &w->e[k];
        if (x->dir != di || x->state == E_GONE || x->seen_scan == scan)
            continue;
        if (x->state == E_PENDING) {
            gone_pending++;
            w->pending--;
        }
        x->state = E_GONE;
        gone++;
    }
    if (gone)
        fprintf(w->o->log, "%s: %zu entr%s of %s %s gone (a queue rewritten by afl-cmin, a "
                           "restart, a cleaned corpus): what was measured stays in the file%s\n",
                cmd, gone, gone == 1 ? "y" : "ies", cov_shown(dr->path, sh, sizeof(sh)),
                gone == 1 ? "is" : "are",
                gone_pending ? "; those not measured yet are left out" : "");
    return rc;
}

static int scan_all(struct watch *w, int all)
{
    int rc = find_instances(w);
    for (size_t i = 0; i < w->ninst && !rc; i++)
        check_instance(w, &w->insts[i]);
    for (size_t i = 0; i < w->ndirs && !rc; i++) {
        struct wdir *dr = &w->dirs[i];
        if (dr->inst >= 0 && !w->insts[dr->inst].present) {
            dr->present = 0;
            dr->wd = -1;   /* the kernel dropped the watch with the directory */
            continue;
        }
        if (all || dr->dirty || dr->wd < 0)
            rc = scan_dir(w, (uint32_t)i);
    }
    return rc;
}

/* Drains inotify: marks the directories with events dirty. 1 when any event came. */
static int drain_events(struct watch *w)
{
    if (w->ifd < 0)
        return 0;
    char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
    int any = 0;
    for (;;) {
        ssize_t k = read(w->ifd, buf, sizeof(buf));
        if (k <= 0)
            break;
        any = 1;
        for (char *p = buf; p < buf + k;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            for (size_t i = 0; i < w->ndirs; i++)
                if (w->dirs[i].wd == ev->wd || (ev->mask & IN_Q_OVERFLOW)) {
                    w->dirs[i].dirty = 1;
                    /* removed with its directory; or the directory moved away (a queue
                     * swapped by renames): the path is watched again at the next listing */
                    if (ev->mask & IN_MOVE_SELF)
                        inotify_rm_watch(w->ifd, ev->wd);
                    if (ev->mask & (IN_IGNORED | IN_MOVE_SELF))
                        w->dirs[i].wd = -1;
                }
            p += sizeof(*ev) + ev->len;
        }
    }
    return any;
}

/* ---- record 11 -------------------------------------------------------------------- */

struct buf {
    uint8_t *p;
    size_t n, cap;
    int oom;
};

static void put(struct buf *b, const void *src, size_t n)
{
    if (b->oom)
        return;
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
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

static void put_v(struct buf *b, uint64_t v)
{
    uint8_t t[PTC_VARINT_MAX];
    put(b, t, ptc_varint_put(t, v));
}

static void put_s(struct buf *b, const char *s)
{
    size_t n = strlen(s);
    put_v(b, n);
    put(b, s, n);
}

/* Record 11's payload: version, live, as of, watch start, pending, plateau, last growth, then
 * per measured input its name, size, file time and instance start (what resuming matches). */
static int make_state(struct watch *w, int live)
{
    struct buf b = {0};
    put_v(&b, WATCH_STATE_VERSION);
    put_v(&b, (uint64_t)live);
    put_v(&b, ptc_zigzag(unix_ms()));
    put_v(&b, ptc_zigzag(w->started_ms));
    put_v(&b, w->pending);
    put_v(&b, (uint64_t)w->plateau);
    put_v(&b, ptc_zigzag(w->last_growth_ms));
    size_t n = 0;
    for (size_t k = 0; k < w->ne; k++)
        n += w->e[k].input != UINT32_MAX;
    put_v(&b, n);
    for (size_t k = 0; k < w->ne; k++) {
        const struct went *x = &w->e[k];
        if (x->input == UINT32_MAX)
            continue;
        put_s(&b, x->name);
        put_v(&b, x->size);
        put_v(&b, ptc_zigzag(x->mtime_ms));
        put_v(&b, ptc_zigzag(x->gen));
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

struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t get_v(struct rd *r)
{
    uint64_t v = 0;
    if (!r->bad && ptc_varint_get(&r->p, r->end, &v))
        r->bad = 1;
    return r->bad ? 0 : v;
}

static int read_head(struct rd *r, struct cov_watch_state *s, int64_t *started)
{
    if (get_v(r) != WATCH_STATE_VERSION || r->bad)
        return -EINVAL;
    s->live = (unsigned)get_v(r);
    s->as_of_ms = ptc_unzigzag(get_v(r));
    *started = ptc_unzigzag(get_v(r));
    s->pending = get_v(r);
    s->plateau = (unsigned)get_v(r);
    s->last_growth_ms = ptc_unzigzag(get_v(r));
    return r->bad ? -EINVAL : 0;
}

int cov_watch_state_read(const struct cov_data *d, struct cov_watch_state *s)
{
    if (!d->watch)
        return -ENOENT;
    struct rd r = {d->watch, d->watch + d->nwatch, 0};
    int64_t started;
    return read_head(&r, s, &started);
}

/* ---- the output ------------------------------------------------------------------- */

static void sort_copy_write(struct watch *w, int live, int *failed)
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
                     : !in->stopped ? unix_ms() - in->start_s * 1000
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
    double now = unix_ms() / 1000.0;
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

struct resume {
    struct cov_data old;
};

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
static int take_resumed(struct watch *w, struct resume *rs)
{
    struct cov_data *old = &rs->old;
    const char *cmd = w->o->cmd;
    struct cov_watch_state s;
    int64_t started = 0;
    struct rd r = {NULL, NULL, 0};
    if (old->watch) {
        r = (struct rd){old->watch, old->watch + old->nwatch, 0};
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
        int64_t k = add_entry(w, in->name, NULL);
        if (k < 0)
            return (int)k;
        w->e[k].input = w->d->ninputs - 1;
        w->e[k].state = E_MEASURED;
        w->e[k].written = 1;
        w->e[k].kind = in->kind;
        w->e[k].size = UINT64_MAX;   /* unknown: run again when the file is there */
        w->resumed++;
    }
    uint64_t n = r.bad || !old->watch ? 0 : get_v(&r);
    for (uint64_t i = 0; i < n && !r.bad; i++) {
        uint64_t len = get_v(&r);
        if (r.bad || len > (uint64_t)(r.end - r.p) || len >= 8192) {
            r.bad = 1;
            break;
        }
        char name[8192];
        memcpy(name, r.p, len);
        name[len] = 0;
        r.p += len;
        uint64_t size = get_v(&r);
        int64_t mt = ptc_unzigzag(get_v(&r)), gen = ptc_unzigzag(get_v(&r));
        int64_t k = find(w, name);
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
    x->mtime_ms = file_ms(&st);
    int rc = cov_runner_run(w->r, fd, (uint64_t)st.st_size, &res, why, sizeof(why));
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
    w.started_ms = unix_ms();
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
    if (state && (rc = take_resumed(&w, state)))
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
            rc = add_dir(&w, dir, prefix, COV_KIND_QUEUE, -1);
        free(dir);
        free(prefix);
    }
    if (!rc)
        rc = scan_all(&w, 1);
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
        int ev = drain_events(&w);
        /* a directory inotify could not watch (its limit reached) is polled as without it */
        int unwatched = w.ifd < 0;
        for (size_t i = 0; i < w.ndirs && !unwatched; i++)
            unwatched = w.dirs[i].present && w.dirs[i].wd < 0;
        int full = (now - last_full) * 1000 >= (double)o->poll_ms * (unwatched ? 1 : 5);
        if (ev || full) {
            if (ev)
                sleep_s(SETTLE_MS / 1000.0, stop);
            drain_events(&w);
            if ((rc = scan_all(&w, full)))
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
            sort_copy_write(&w, 1, &failed);
            last_save = now;
        }
        if (w.pending)
            continue;
        /* caught up: the plateau, the end, then wait for the next entry */
        int64_t since = w.last_growth_ms >= 0 ? w.last_growth_ms : w.started_ms;
        if (!w.plateau && unix_ms() - since >= (int64_t)o->plateau_ms) {
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
                if ((rc = scan_all(&w, 1)))
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
        sort_copy_write(&w, 0, &failed);
        double secs = mono() - t0, cpu = cpu_used(r) - cpu0;
        char lag[128] = "";
        if (w.nlags) {
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
