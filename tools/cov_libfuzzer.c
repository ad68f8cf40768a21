/* `cov run` on a libFuzzer-style harness (LLVMFuzzerTestOneInput, linked with ptcall-cc
 * -fptcall-fuzz-driver): one process runs a batch of input files in counting mode, the
 * driver marks each input's end (ptcall_mark(path)), and the trace's COUNTS chunks, read
 * through the decoder (its counts hook), give each input's calls (docs/cov.md). A crash or
 * a hang ends a batch early: the input after the last mark is the culprit; the next batch
 * starts after it. Here in tools/ because it is the one part of `cov` that needs the
 * decoder. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "cov_libfuzzer.h"
#include "ptcall/decode.h"
#include "ptcall/trace_format.h"

#define BATCH_FILES 1000
#define BATCH_BYTES (256u << 10)   /* of paths on one command line, well under ARG_MAX */
#define START_MS 5000u             /* added to the first input's timeout: start-up */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The functions of d sorted by (linkage name, file): how a session's function is found. */
struct lookup {
    const struct cov_data *d;
    uint32_t *idx;
};
static const struct cov_data *sort_d;
static int cmp_fn(const void *a, const void *b)
{
    const struct cov_func *x = &sort_d->funcs[*(const uint32_t *)a];
    const struct cov_func *y = &sort_d->funcs[*(const uint32_t *)b];
    int c = strcmp(x->linkage, y->linkage);
    return c ? c : strcmp(x->file, y->file);
}

static uint32_t find_fn(const struct lookup *l, const char *linkage, const char *file)
{
    uint32_t lo = 0, hi = l->d->nfuncs;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct cov_func *f = &l->d->funcs[l->idx[mid]];
        int c = strcmp(f->linkage, linkage);
        if (!c)
            c = strcmp(f->file, file);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < l->d->nfuncs) {
        const struct cov_func *f = &l->d->funcs[l->idx[lo]];
        if (!strcmp(f->linkage, linkage) && !strcmp(f->file, file))
            return l->idx[lo];
    }
    return UINT32_MAX;
}

/* One batch's segments as the decoder hands them over. */
struct seg {
    char *label;
    uint32_t flags;
    struct cov_hit *hits;
    uint32_t nhits;
};
struct batch {
    const struct lookup *l;
    struct ptc_session *s;
    struct seg *v;
    size_t n, cap;
    int oom;
};

static int by_func(const void *a, const void *b)
{
    const struct cov_hit *x = a, *y = b;
    return x->func < y->func ? -1 : x->func > y->func;
}

static int on_counts(void *ctx, uint32_t pid, const struct ptc_counts *hdr, const char *label,
                     const uint32_t *fids, const uint64_t *calls, uint32_t n)
{
    (void)pid;
    struct batch *b = ctx;
    if (b->n == b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 64;
        struct seg *v = realloc(b->v, nc * sizeof(*v));
        if (!v) {
            b->oom = 1;
            return -PTC_E_NOMEM;
        }
        b->v = v;
        b->cap = nc;
    }
    struct seg *sg = &b->v[b->n];
    memset(sg, 0, sizeof(*sg));
    sg->label = strdup(label ? label : "");
    sg->flags = hdr->flags;
    sg->hits = malloc(((size_t)n + 1) * sizeof(*sg->hits));
    if (!sg->label || !sg->hits) {
        free(sg->label);
        free(sg->hits);
        b->oom = 1;
        return -PTC_E_NOMEM;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!calls[i])
            continue;
        const struct ptc_func_info *fi = ptc_session_func(b->s, fids[i]);
        uint32_t g = fi ? find_fn(b->l, fi->linkage_name, fi->file) : UINT32_MAX;
        if (g != UINT32_MAX)
            sg->hits[sg->nhits++] = (struct cov_hit){g, calls[i]};
    }
    qsort(sg->hits, sg->nhits, sizeof(*sg->hits), by_func);
    b->n++;
    return 0;
}

static void free_batch(struct batch *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->v[i].label);
        free(b->v[i].hits);
    }
    free(b->v);
    memset(b, 0, sizeof(*b));
}

/* Runs argv; kills it when the trace has not grown for the timeout (the input after the
 * last mark hangs). Returns the wait status; *hung set when it was killed. */
static int run_batch(char **argv, const char *runtime, const char *trace, const char *log,
                     uint32_t timeout_ms, int *hung, char *why, size_t n)
{
    unlink(trace);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "cannot fork: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* the parent has no other thread here: setenv is safe between fork and exec */
        int dn = open("/dev/null", O_RDWR), lf = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (dn < 0 || dup2(dn, 0) < 0 || dup2(dn, 1) < 0 || dup2(lf >= 0 ? lf : dn, 2) < 0)
            _exit(126);
        if (runtime) {
            const char *pre = getenv("LD_PRELOAD");
            char *val = malloc(strlen(runtime) + (pre ? strlen(pre) : 0) + 2);
            if (!val)
                _exit(126);
            sprintf(val, "%s%s%s", runtime, pre && *pre ? ":" : "", pre && *pre ? pre : "");
            setenv("LD_PRELOAD", val, 1);
        }
        setenv("PTCALL_BACKEND", "soft", 1);
        setenv("PTCALL_COUNTS", "1", 1);
        setenv("PTCALL_OUTPUT", trace, 1);
        unsetenv("PTCALL_FORKSERVER");
        unsetenv("PTCALL_COUNTS_FD");
        setpgid(0, 0);
        execv(argv[0], argv);
        _exit(127);
    }
    *hung = 0;
    uint64_t last = now_ms(), limit = (uint64_t)timeout_ms + START_MS;
    off_t size = 0;
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid)
            break;
        if (w < 0 && errno != EINTR) {
            snprintf(why, n, "waitpid: %s", strerror(errno));
            return -1;
        }
        struct stat st;
        if (stat(trace, &st) == 0 && st.st_size != size) {
            /* a mark wrote a segment: the next input starts now */
            size = st.st_size;
            last = now_ms();
            limit = timeout_ms;
        } else if (!*hung && now_ms() - last > limit) {
            /* SIGTERM first: the runtime's fatal-signal path writes the hung input's
             * segment (what it reached until then); SIGKILL if that does not end it */
            kill(pid, SIGTERM);
            *hung = 1;
            last = now_ms();
        } else if (*hung && now_ms() - last > 1000) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    return status;
}

int cov_libfuzzer_run(char **target_argv, const char *runtime, uint32_t timeout_ms,
                      const char *workdir, struct cov_data *d, const struct cov_entries *e,
                      struct cov_result *results, int *ran, char *why, size_t n)
{
    struct lookup l = {d, malloc(((size_t)d->nfuncs + 1) * sizeof(uint32_t))};
    /* "@@" is where the batch's paths go (the driver takes them anywhere among its flags);
     * without it they go at the end. It reached the driver as a file name "@@" before. */
    size_t nargs = 0, at = SIZE_MAX;
    while (target_argv[nargs]) {
        if (at == SIZE_MAX && !strcmp(target_argv[nargs], "@@"))
            at = nargs;
        nargs++;
    }
    size_t tail = at == SIZE_MAX ? 0 : nargs - at - 1;
    if (at != SIZE_MAX)
        nargs = at;
    char **argv = calloc(nargs + tail + BATCH_FILES + 1, sizeof(*argv));
    if (!l.idx || !argv) {
        free(l.idx);
        free(argv);
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < d->nfuncs; i++)
        l.idx[i] = i;
    sort_d = d;
    qsort(l.idx, d->nfuncs, sizeof(*l.idx), cmp_fn);
    memcpy(argv, target_argv, nargs * sizeof(*argv));
    char trace[4096], log[4096];
    snprintf(trace, sizeof(trace), "%s/batch.ptc", workdir);
    snprintf(log, sizeof(log), "%s/stderr", workdir);
    int rc = 0;
    size_t start = 0;
    while (start < e->n && !rc) {
        size_t k = 0, bytes = 0;
        while (start + k < e->n && k < BATCH_FILES &&
               (k == 0 || bytes + strlen(e->v[start + k].path) + 1 < BATCH_BYTES)) {
            argv[nargs + k] = e->v[start + k].path;
            bytes += strlen(e->v[start + k].path) + 1;
            k++;
        }
        for (size_t i = 0; i < tail; i++)
            argv[nargs + k + i] = target_argv[at + 1 + i];
        argv[nargs + k + tail] = NULL;
        uint64_t t0 = now_ms();
        int hung = 0;
        int status = run_batch(argv, runtime, trace, log, timeout_ms, &hung, why, n);
        if (status < 0) {
            rc = -EIO;
            break;
        }
        struct batch b = {&l, ptc_session_new(), NULL, 0, 0, 0};
        if (!b.s) {
            rc = -ENOMEM;
            break;
        }
        ptc_session_set_counts_hook(b.s, on_counts, &b);
        int drc = ptc_decode_file(b.s, trace, PTC_DECODE_SALVAGE);
        if (b.oom) {
            rc = -ENOMEM;
            snprintf(why, n, "out of memory");
        } else if (drc && !b.n && !hung && !WIFSIGNALED(status)) {
            snprintf(why, n, "cannot read the harness's counts (%s): is it linked with "
                             "ptcall-cc -fptcall-fuzz-driver?", ptc_session_errmsg(b.s));
            rc = -EPROTO;
        }
        /* the marked segments, in order: inputs start, start+1, ... */
        size_t marks = 0;
        uint64_t per = k ? (now_ms() - t0) * 1000u / k : 0;
        for (size_t i = 0; i < b.n && !rc; i++) {
            struct seg *sg = &b.v[i];
            if (!(sg->flags & PTC_COUNTS_F_MARK))
                continue;
            size_t at = start + marks;
            /* the driver skips what it cannot read: match the label if it is not next */
            if (at >= start + k || strcmp(e->v[at].path, sg->label)) {
                size_t j = start;
                while (j < start + k && strcmp(e->v[j].path, sg->label))
                    j++;
                if (j == start + k)
                    continue;
                marks = j - start;
                at = j;
            }
            results[at].outcome = COV_EXITED;
            results[at].exec_us = per;
            results[at].hits = sg->hits;
            results[at].nhits = sg->nhits;
            sg->hits = NULL;
            ran[at] = 1;
            marks++;
        }
        size_t next = start + marks;
        if (!rc && next < start + k) {
            /* the batch ended inside input `next`: its crash, hang or exit */
            struct cov_result *r = &results[next];
            r->exec_us = per;
            if (hung) {
                r->outcome = COV_TIMEOUT;
                r->value = (int32_t)timeout_ms;
            } else if (WIFSIGNALED(status)) {
                r->outcome = COV_SIGNALED;
                r->value = WTERMSIG(status);
            } else {
                r->outcome = COV_EXITED;
                r->value = WEXITSTATUS(status);
            }
            /* the segment the end of the process closed (a crash's, or an exit's) */
            for (size_t i = b.n; i-- > 0;)
                if (!(b.v[i].flags & PTC_COUNTS_F_MARK)) {
                    r->hits = b.v[i].hits;
                    r->nhits = b.v[i].nhits;
                    b.v[i].hits = NULL;
                    break;
                }
            ran[next] = 1;
            next++;
        }
        ptc_session_free(b.s);
        free_batch(&b);
        start = next;
    }
    unlink(trace);
    unlink(log);
    free(l.idx);
    free(argv);
    return rc;
}
