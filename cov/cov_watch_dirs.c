/* cov run --watch (cov_watch.c): the entries seen, and the directories they are listed from
 * (AFL++ instances, new ones too, their fuzzer_stats, and corpus directories), followed with
 * inotify. Each listed name is taken as one of: the same file as measured, rewritten in place
 * (AFL++'s trim: measured again), another input under a name measured before an instance's
 * restart (the old result kept as NAME~START), back after it was gone, resumed, or new. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "cov_int.h"
#include "cov_watch_int.h"

int64_t cov_watch_unix_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the entries' index ------------------------------------------------------------ */

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return h;
}

int64_t cov_watch_find(const struct watch *w, const char *name)
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
int64_t cov_watch_add_entry(struct watch *w, const char *name, const char *path)
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

int cov_watch_add_dir(struct watch *w, const char *path, const char *prefix, unsigned kind, int inst)
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

/* fuzzer_stats of an instance (cov_afl_read_stats): start_time, last_update, run_time,
 * fuzzer_pid, 0 where absent. 0, or -1 when it is unreadable or says no start_time. */
static int read_stats(const char *inst, int64_t *start, int64_t *last, int64_t *run, long *pid)
{
    struct cov_afl_stats s;
    if (cov_afl_read_stats(inst, &s))
        return -1;
    *start = s.start_time == COV_AFL_STAT_NONE ? 0 : s.start_time;
    *last = s.last_update == COV_AFL_STAT_NONE ? 0 : s.last_update;
    *run = s.run_time == COV_AFL_STAT_NONE ? 0 : s.run_time;
    *pid = s.fuzzer_pid == COV_AFL_STAT_NONE ? 0 : (long)s.fuzzer_pid;
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
        int rc = cov_watch_add_dir(w, path, prefix, k, (int)(w->ninst - 1));
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
    in->stopped = !alive || (last && cov_watch_unix_ms() / 1000 - last > 600);
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
    int64_t k = cov_watch_find(w, name);
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
    int64_t nk = cov_watch_add_entry(w, name, path);
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

int cov_watch_scan_all(struct watch *w, int all)
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
int cov_watch_drain(struct watch *w)
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

