/* `ptcall cov run|report|diff`: function coverage of fuzzing corpora (docs/cov.md). The
 * coverage component (cov/) does the work; this file turns options into its calls, runs
 * the inputs on --jobs threads and says what happened. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "cov.h"
#include "cov_libfuzzer.h"
#include "options.h"

/* ---- the target and the runtime --------------------------------------------------- */

/* The target's path: as given when it has a '/', else the first executable on $PATH (what
 * execvp would run; the fork server's child execs this path). */
static int resolve_target(const char *name, char *out, size_t n)
{
    if (strchr(name, '/')) {
        snprintf(out, n, "%s", name);
        return access(out, X_OK) ? -errno : 0;
    }
    const char *path = getenv("PATH");
    path = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *c = strchr(p, ':');
        size_t len = c ? (size_t)(c - p) : strlen(p);
        if (snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", name) < (int)n &&
            access(out, X_OK) == 0)
            return 0;
        p += len + (c ? 1 : 0);
    }
    return -ENOENT;
}

static int is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* libptcall.so to preload, found as `ptcall record` finds it: $PTCALL_RUNTIME, or next to
 * the ptcall executable (install tree ../lib, build tree ../runtime). NULL: not found (a
 * target linked with the runtime still works). */
static const char *find_runtime(char *out, size_t n)
{
    const char *env = getenv("PTCALL_RUNTIME");
    if (env && *env)
        return is_file(env) ? (snprintf(out, n, "%s", env), out) : NULL;
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (k <= 0)
        return NULL;
    exe[k] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return NULL;
    *slash = 0;
    static const char *const rel[] = {"../lib/libptcall.so", "../lib64/libptcall.so",
                                      "../lib/x86_64-linux-gnu/libptcall.so",
                                      "../runtime/libptcall.so"};
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char cand[PATH_MAX + 64];
        snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]);
        if (is_file(cand) && realpath(cand, out))
            return out;
    }
    return NULL;
}

/* ---- the universe: refuse a late build (docs/cov.md, *The universe*) ------------- */

/* Modules [from, d->nmodules) with late-placed units: instrumented after inlining, they
 * count only the functions that survived it (93 of libyaml's 199 were gone), and no input's
 * set matches a source-level tool's. Refused (1) unless --allow-late, then said once. */
static int check_universe(const char *cmd, const struct cov_data *d, uint32_t from,
                          int allow_late)
{
    for (uint32_t m = from; m < d->nmodules; m++) {
        const struct cov_module *mod = &d->modules[m];
        if (!mod->units_late)
            continue;
        char sh[768], units[64] = "";
        if (mod->units_early)
            snprintf(units, sizeof(units), " (%u of its %u units)", mod->units_late,
                     mod->units_late + mod->units_early);
        cov_shown(mod->path, sh, sizeof(sh));
        if (allow_late) {
            fprintf(stderr, "%s: note: %s was built with late placement%s: counting only the "
                            "functions that survived inlining (--allow-late)\n",
                    cmd, sh, units);
            continue;
        }
        fprintf(stderr,
                "%s: %s was built with late placement%s: it counts only the functions that "
                "survived inlining, not the source's; rebuild it with ptcall-cc -fptcall-cov "
                "(early placement, with blocks and lines), or give --allow-late to count it "
                "as it is\n",
                cmd, sh, units);
        return 1;
    }
    return 0;
}

/* ---- cov run ---------------------------------------------------------------------- */

struct job {
    struct cov_target *target;
    struct cov_data *d;
    const struct cov_entries *e;
    struct cov_result *results;
    int *ran;                      /* per input: 1 once its result is in */
    const char *workdir;
    int index;
    struct cov_runner *runner;     /* runner 0 is started before the threads */
    atomic_size_t *next;
    atomic_size_t *done;
    char why[1024];
    int failed;
    int fs;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    if (!j->runner &&
        cov_runner_start(j->target, j->d, j->workdir, j->index, &j->runner, j->why,
                         sizeof(j->why))) {
        j->failed = 1;
        return NULL;
    }
    j->fs = cov_runner_forkserver(j->runner);
    for (;;) {
        size_t i = atomic_fetch_add(j->next, 1);
        if (i >= j->e->n)
            break;
        struct cov_result *r = &j->results[i];
        struct stat st;
        /* the file itself goes to the runner, never read whole into memory; opened without
         * blocking: a FIFO swapped in since the listing is refused, not waited on */
        int fd = cov_open_input(j->e->v[i].path, &st), rc = 0;
        if (fd < 0) {
            /* gone or changed since the corpus was listed: recorded as not run */
            memset(r, 0, sizeof(*r));
            r->outcome = COV_ERROR;
            r->value = -fd;
        } else {
            rc = cov_runner_run(j->runner, fd, (uint64_t)st.st_size, r, j->why,
                                sizeof(j->why));
            /* its content hash (INPUT_HASH), read from the descriptor the run was given
             * (the page cache holds it now): cov merge deduplicates by it */
            if (!rc)
                r->has_hash = !cov_hash_fd(fd, (uint64_t)st.st_size, r->hash);
            close(fd);
        }
        if (rc) {
            r->outcome = COV_ERROR;
            r->value = -rc;
            j->ran[i] = 1;
            j->failed = 1;
            break;
        }
        j->ran[i] = 1;
        atomic_fetch_add(j->done, 1);
    }
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *join_words(char **w)
{
    size_t n = 1;
    for (size_t i = 0; w[i]; i++)
        n += strlen(w[i]) + 1;
    char *s = malloc(n);
    if (!s)
        return NULL;
    s[0] = 0;
    for (size_t i = 0; w[i]; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, w[i]);
    }
    return s;
}

static int run_cov(struct cli_values *v)
{
    const char *cmd = "ptcall cov run";
    if (!cli_given(v, "--output"))
        return cli_usage_error(CMD_COV_RUN, "-o OUT.ptcov is required");
    if (!v->cov.corpora.n && !v->cov.afl.n)
        return cli_usage_error(CMD_COV_RUN, "give the inputs: --corpus DIR or --afl OUTDIR");
    if (!v->rest || !v->rest[0])
        return cli_usage_error(CMD_COV_RUN, "give the target after --: -- ./target [ARGS]");
    if (v->cov.exec && v->cov.deferred)
        return cli_usage_error(CMD_COV_RUN, "--deferred starts the fork server later; --exec "
                                            "runs without one: give one of them");
    char why[2048], target[PATH_MAX];
    int rc = resolve_target(v->rest[0], target, sizeof(target));
    if (rc) {
        fprintf(stderr, "%s: cannot run %s: %s\n", cmd, v->rest[0], strerror(-rc));
        return 1;
    }
    /* the map first: a target not built with ptcall is refused before any input runs */
    struct cov_data d;
    cov_data_init(&d);
    if ((rc = cov_map_load(&d, target, why, sizeof(why)))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        cov_data_free(&d);
        return 1;
    }
    if (check_universe(cmd, &d, 0, v->cov.allow_late)) {
        cov_data_free(&d);
        return 1;
    }
    /* the harness's shape decides how it is run, or that it cannot be (docs/cov.md,
     * "Harness shapes"); an "@@" is the input's path, once */
    struct cov_shape shape;
    int has_at = 0;
    for (size_t i = 1; v->rest[i]; i++)
        has_at += !strcmp(v->rest[i], "@@");
    if (has_at > 1)
        snprintf(why, sizeof(why), "@@ is in the command %d times: give it once, where the "
                                   "input file's path goes", has_at);
    else if ((rc = cov_shape_detect(target, &d, &shape)))
        snprintf(why, sizeof(why), "cannot read %.1900s: %s", target, strerror(-rc));
    else
        rc = cov_shape_refuse(&shape, v->rest[0], has_at, why, sizeof(why));
    if (has_at > 1 || rc) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        cov_data_free(&d);
        return 1;
    }
    struct cov_entries e = {0};
    for (int i = 0; i < v->cov.afl.n && !rc; i++)
        if ((rc = cov_afl_add(&e, v->cov.afl.v[i], stderr, why, sizeof(why))))
            fprintf(stderr, "%s: %s\n", cmd, why);
    for (int i = 0; i < v->cov.corpora.n && !rc; i++)
        if ((rc = cov_corpus_add_dir(&e, v->cov.corpora.v[i], stderr, why, sizeof(why))))
            fprintf(stderr, "%s: %s\n", cmd, why);
    if (!rc && !e.n) {
        fprintf(stderr, "%s: no inputs to run (%zu skipped)\n", cmd, e.skipped);
        rc = -ENOENT;
    }
    if (rc) {
        cov_entries_free(&e);
        cov_data_free(&d);
        return 1;
    }
    cov_corpus_times(&e);

    char rt[PATH_MAX];
    struct cov_target t = {0};
    t.runtime = find_runtime(rt, sizeof(rt));
    t.timeout_ms = v->cov.timeout_ms;
    t.force_exec = v->cov.exec;
    t.defer = v->cov.deferred;
    size_t argc = 0;
    while (v->rest[argc])
        argc++;
    t.argv = v->rest;
    char *argv0 = v->rest[0];
    v->rest[0] = target;
    char **argv_at = NULL;
    if (shape.kind == COV_SHAPE_LIBFUZZER) {
        if (cov_shape_libfuzzer_argv(v->rest, has_at, &argv_at)) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            v->rest[0] = argv0;
            cov_entries_free(&e);
            cov_data_free(&d);
            return 1;
        }
        t.argv = argv_at;
        if (!has_at)
            fprintf(stderr, "%s: libFuzzer's main reads its inputs from file arguments: each "
                            "input is given as one (@@ added at the end of the command)\n", cmd);
    }
    /* ptcall's driver: its batches count through the trace's COUNTS chunks, which hold
     * functions only; a -fptcall-cov build runs one input per fork-server child instead (the
     * driver runs its one file argument), so its blocks and lines are counted */
    int driver_batches = shape.kind == COV_SHAPE_DRIVER && !d.nblocks;
    if (shape.kind == COV_SHAPE_DRIVER && d.nblocks && !has_at) {
        if (!(argv_at = calloc(argc + 2, sizeof(*argv_at)))) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            v->rest[0] = argv0;
            cov_entries_free(&e);
            cov_data_free(&d);
            return 1;
        }
        memcpy(argv_at, v->rest, argc * sizeof(*argv_at));
        argv_at[argc] = "@@";
        t.argv = argv_at;
    }
    /* libFuzzer's main with ptcall-cc's entry hook: forked at the harness's first call, so
     * libFuzzer's start-up runs once (docs/cov.md, "The fork server at the harness") */
    if (shape.kind == COV_SHAPE_LIBFUZZER && !t.force_exec) {
        if (shape.fuzz_hook)
            t.harness_fork = 1;
        else
            fprintf(stderr, "%s: LLVMFuzzerTestOneInput has no entry hook (built with a "
                            "ptcall-cc before it): libFuzzer's start-up runs for every input "
                            "(about 150 ms each); rebuild it to fork at the harness\n", cmd);
    }
    if (shape.afl_init && !t.force_exec && !t.defer) {
        /* as afl-fuzz defers on a target built with __AFL_INIT() */
        t.defer = 1;
        fprintf(stderr, "%s: the target calls __AFL_INIT(): the fork server starts there "
                        "(as with --deferred)\n", cmd);
    }
    d.target = join_words(t.argv);
    d.harness = strdup(cov_shape_name(&shape));   /* NULL: the file goes without it */
    d.harness_kind = shape.kind;
    d.harness_flags = (shape.afl_loop ? COV_HARNESS_F_AFL_LOOP : 0) |
                      (shape.afl_init ? COV_HARNESS_F_AFL_INIT : 0) |
                      (shape.afl_testcase ? COV_HARNESS_F_AFL_TESTCASE : 0);
    d.timeout_ms = t.timeout_ms;
    d.created = (uint64_t)time(NULL);
    d.campaign_ms = e.has_campaign ? e.campaign_ms : -1;
    /* ORIGIN 0: this machine (cov merge keeps the parts of many apart by it) */
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1))
        snprintf(host, sizeof(host), "unknown");
    if (!cov_data_add_origin(&d, host, "", d.created, d.campaign_ms)) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        cov_data_free(&d);
        cov_entries_free(&e);
        return 1;
    }
    if (!t.runtime)
        fprintf(stderr, "%s: libptcall.so not found next to ptcall: only a target linked with "
                        "it is counted (set PTCALL_RUNTIME=/path/to/libptcall.so)\n", cmd);

    char workdir[PATH_MAX];
    const char *tmp = getenv("TMPDIR");
    snprintf(workdir, sizeof(workdir), "%s/ptcall-cov-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(workdir)) {
        fprintf(stderr, "%s: cannot create a work directory in %s: %s\n", cmd,
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        free(argv_at);
        v->rest[0] = argv0;
        cov_entries_free(&e);
        cov_data_free(&d);
        return 1;
    }
    /* a target that closes its stdin early must not kill us while we write the next input */
    signal(SIGPIPE, SIG_IGN);

    /* a libFuzzer-style harness runs its inputs in one process (the fuzz driver) */
    int libfuzzer = driver_batches;
    uint32_t jobs = libfuzzer ? 1 : v->cov.jobs;
    if (jobs > e.n)
        jobs = (uint32_t)e.n;
    struct cov_result *results = calloc(e.n, sizeof(*results));
    int *ran = calloc(e.n, sizeof(*ran));
    struct job *js = calloc(jobs, sizeof(*js));
    pthread_t *th = calloc(jobs, sizeof(*th));
    atomic_size_t next = 0, done = 0;
    int status = 0;
    double t0 = now_s();
    if (!results || !ran || !js || !th) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        status = 1;
        goto out;
    }
    for (uint32_t k = 0; k < jobs; k++)
        js[k] = (struct job){&t, &d, &e, results, ran, workdir, (int)k, NULL, &next, &done,
                             "", 0, 0};
    if (libfuzzer) {
        /* one process per batch of inputs, the driver marking each (cov_libfuzzer.c) */
        if (cov_libfuzzer_run(t.argv, t.runtime, t.timeout_ms, workdir, &d, &e, results, ran,
                              why, sizeof(why))) {
            fprintf(stderr, "%s: %s\n", cmd, why);
            status = 1;
        }
        goto collect;
    }
    /* Orphans of the target's runs come to this process (not to init), in their run's
     * process group: a runner kills and reaps what an input left running before it reads
     * the counters (cov_runner_run), so a grandchild's calls never land in the next input. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
        fprintf(stderr, "%s: note: cannot become the subreaper of the target's processes "
                        "(%s): processes an input leaves running are killed but not waited "
                        "for\n", cmd, strerror(errno));
    /* runner 0 first, alone: it may add the target's instrumented libraries to d, which
     * the other runners then only read */
    if (cov_runner_start(&t, &d, workdir, 0, &js[0].runner, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        status = 1;
        goto out;
    }
    /* the instrumented libraries runner 0 found: the same universe as the target's */
    if (check_universe(cmd, &d, 1, v->cov.allow_late)) {
        status = 1;
        goto out;
    }
    if (!cov_runner_forkserver(js[0].runner) && t.defer && !t.force_exec) {
        /* one exec per input would run the initialisation every time and count it too:
         * not what --deferred asked for */
        fprintf(stderr, "%s: --deferred: the target did not start a fork server (a runtime "
                        "without it, or a target not built with ptcall-cc); no input was run\n",
                cmd);
        status = 1;
        goto out;
    }
    if (!cov_runner_forkserver(js[0].runner) && !t.force_exec)
        fprintf(stderr, "%s: the target's runtime did not start a fork server: running one "
                        "exec per input (slower)\n", cmd);
    uint32_t started = 0;
    for (uint32_t k = 0; k < jobs; k++, started++)
        if (pthread_create(&th[k], NULL, worker, &js[k])) {
            fprintf(stderr, "%s: cannot start thread %u\n", cmd, k);
            break;
        }
    /* The runners end by themselves (all inputs taken, or failed): this thread only shows
     * progress on a terminal. Without one it just joins them; waking every 5 ms to look was a
     * context switch per few inputs of a fast target (docs/benchmarks.md). */
    double last = t0;
    while (isatty(2) && atomic_load(&done) < e.n) {
        int alive = 0;
        for (uint32_t k = 0; k < started; k++)
            alive += !js[k].failed;
        if (!alive)
            break;
        struct timespec ts = {0, 50000000};
        nanosleep(&ts, NULL);
        double now = now_s();
        if (now - last >= 5) {
            size_t dn = atomic_load(&done);
            fprintf(stderr, "%s: %zu of %zu inputs (%.0f/s)\r", cmd, dn, e.n, dn / (now - t0));
            last = now;
        }
    }
    for (uint32_t k = 0; k < started; k++)
        pthread_join(th[k], NULL);
collect:;
    double secs = now_s() - t0;
    for (uint32_t k = 0; k < jobs; k++)
        if (js[k].failed && js[k].why[0]) {
            fprintf(stderr, "%s: runner %u stopped: %s\n", cmd, k, js[k].why);
            status = 1;
        }

    uint32_t crashes = 0, hangs = 0, errors = 0, leaving = 0;
    cov_shape_check(&shape, &e, results, ran, stderr, cmd);
    for (size_t i = 0; i < e.n; i++) {
        if (ran[i] && results[i].left_running && leaving++ < 10) {
            char sh[768];
            fprintf(stderr,
                    "%s: %s left %u process%s running after it ended (killed then: %s calls "
                    "until then count for this input, not the next)\n",
                    cmd, cov_shown(e.v[i].name, sh, sizeof(sh)), results[i].left_running,
                    results[i].left_running == 1 ? "" : "es",
                    results[i].left_running == 1 ? "its" : "their");
        }
        struct cov_input *in = cov_data_add_input(&d);
        if (!in) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            status = 1;
            goto out;
        }
        in->name = strdup(e.v[i].name);
        in->kind = e.v[i].kind;
        in->time_ms = e.v[i].time_ms;
        if (!ran[i]) {
            in->outcome = COV_ERROR;
            in->value = ECANCELED;
        } else {
            in->outcome = results[i].outcome;
            in->has_hash = results[i].has_hash;
            memcpy(in->hash, results[i].hash, sizeof(in->hash));
            in->value = results[i].value;
            in->exec_us = results[i].exec_us;
            in->nhits = results[i].nhits;
            in->hits = results[i].hits;
            results[i].hits = NULL;
            in->nbhits = results[i].nbhits;
            in->bhits = results[i].bhits;
            results[i].bhits = NULL;
        }
        crashes += in->outcome == COV_SIGNALED;
        hangs += in->outcome == COV_TIMEOUT;
        errors += in->outcome == COV_ERROR;
        if (!in->name) {
            fprintf(stderr, "%s: out of memory\n", cmd);
            status = 1;
            goto out;
        }
    }
    cov_data_sort_inputs(&d);
    if (cov_file_write(&d, v->output, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        status = 1;
        goto out;
    }
    struct cov_analysis a;
    uint32_t reached = 0;
    if (cov_analyse(&d, &a) == 0) {
        reached = a.reached;
        cov_analysis_free(&a);
    }
    fprintf(stderr,
            "%s: %zu inputs in %.2f s (%.0f/s, %s, %u job%s): %u crashed, %u hung, %u not run"
            "%s; %u of %u functions reached%s; wrote %s; the target: %s\n",
            cmd, e.n, secs, secs > 0 ? e.n / secs : 0.0,
            libfuzzer ? "libFuzzer-style, batches"
            : js[0].fs || cov_runner_forkserver(js[0].runner) ? "fork server"
                                                             : "exec per input",
            jobs, jobs == 1 ? "" : "s", crashes, hangs, errors,
            e.skipped ? " (and skipped entries, above)" : "", reached, d.nfuncs,
            cov_data_placement(&d) == COV_PLACE_EARLY ? ""
            : cov_data_placement(&d) == COV_PLACE_MIXED
                ? " (mixed placement: the late-placed units count only functions that "
                  "survived inlining)"
                : " (late placement: only functions that survived inlining)",
            v->output, cov_shape_name(&shape));
    if (leaving > 10)
        fprintf(stderr, "%s: %u inputs in all left processes running (the first 10 above)\n",
                cmd, leaving);
    if (errors)
        status = 1;
out:
    for (uint32_t k = 0; js && k < jobs; k++)
        cov_runner_stop(js[k].runner);
    if (results)
        for (size_t i = 0; i < e.n; i++) {
            free(results[i].hits);
            free(results[i].bhits);
        }
    free(results);
    free(ran);
    free(js);
    free(th);
    rmdir(workdir);   /* the runners removed their work files */
    free(argv_at);
    v->rest[0] = argv0;
    cov_entries_free(&e);
    cov_data_free(&d);
    return status;
}

int cmd_cov_run(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_COV_RUN, argc, argv, &v, CLI_STOP_AT_POSITIONAL);
    if (r != CLI_GO)
        return r;
    r = run_cov(&v);
    cli_values_free(&v);
    return r;
}

/* ---- cov report, cov diff --------------------------------------------------------- */

static int load(const char *cmd, const char *path, struct cov_data *d, struct cov_analysis *a)
{
    char why[1024];
    cov_data_init(d);
    if (cov_file_read(d, path, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        cov_data_free(d);
        return 1;
    }
    if (d->file_version < 2)
        fprintf(stderr, "%s: note: %s is a version %u .ptcov, which has no checksum: damage to "
                        "it cannot be told from other figures (a 'cov run' of this ptcall "
                        "writes version %u)\n",
                cmd, path, d->file_version, COV_FILE_VERSION);
    cov_data_sort_inputs(d);
    if (cov_analyse(d, a)) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        cov_data_free(d);
        return 1;
    }
    return 0;
}

/* --binary: the file's first module (the target) must be this build. */
static int check_binary(const char *cmd, const char *ptcov, const struct cov_data *d,
                        const char *bin)
{
    char bid[80], why[1024];
    uint64_t ident;
    if (cov_map_ids(bin, bid, sizeof(bid), &ident, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        return 1;
    }
    const struct cov_module *m = d->nmodules ? &d->modules[0] : NULL;
    if (!m)
        return 0;
    if (bid[0] && m->build_id[0] && strcmp(bid, m->build_id)) {
        fprintf(stderr,
                "%s: %s was made with another build of the target: its build id is %s, %s's is "
                "%s (the build ids do not match; rerun 'ptcall cov run' with this binary)\n",
                cmd, ptcov, m->build_id, bin, bid);
        return 1;
    }
    if (ident != m->identity) {
        fprintf(stderr,
                "%s: %s was made with another build of the target: its function map %016llx, "
                "%s's %016llx (the instrumented functions differ; rerun 'ptcall cov run' with "
                "this binary)\n",
                cmd, ptcov, (unsigned long long)m->identity, bin, (unsigned long long)ident);
        return 1;
    }
    return 0;
}

int cmd_cov_report(int argc, char **argv)
{
    const char *cmd = "ptcall cov report";
    struct cli_values v;
    int r = cli_parse(CMD_COV_REPORT, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos != 1) {
        r = cli_usage_error(CMD_COV_REPORT, v.npos ? "one .ptcov file at a time"
                                                   : "give the .ptcov file");
        cli_values_free(&v);
        return r;
    }
    struct cov_data d;
    struct cov_analysis a;
    if (load(cmd, v.pos[0], &d, &a)) {
        cli_values_free(&v);
        return 1;
    }
    r = v.cov.binary ? check_binary(cmd, v.pos[0], &d, v.cov.binary) : 0;
    if (!r) {
        struct cov_view_opts o = {v.pos[0], v.cov.blockers, v.top};
        int (*const views[])(FILE *, const struct cov_analysis *, const struct cov_view_opts *) = {
            cov_view_table, cov_view_csv, cov_view_json, cov_view_html, cov_view_lcov};
        if (v.cov.format == 4 && !d.nblocks) { /* lcov: lines come from block counters */
            fprintf(stderr, "%s: %s has no blocks and lines (its target was not built with "
                            "ptcall-cc -fptcall-cov): no lcov tracefile to write; rebuild "
                            "with -fptcall-cov and run 'ptcall cov run' again\n", cmd, v.pos[0]);
            r = 1;
        } else if (views[v.cov.format](stdout, &a, &o)) {
            fprintf(stderr, "%s: cannot write the report: check the output device\n", cmd);
            r = 1;
        }
    }
    cov_analysis_free(&a);
    cov_data_free(&d);
    cli_values_free(&v);
    return r;
}

int cmd_cov_diff(int argc, char **argv)
{
    const char *cmd = "ptcall cov diff";
    struct cli_values v;
    int r = cli_parse(CMD_COV_DIFF, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (v.npos != 2) {
        r = cli_usage_error(CMD_COV_DIFF, "give two .ptcov files (%d given)", v.npos);
        cli_values_free(&v);
        return r;
    }
    struct cov_data da, db;
    struct cov_analysis aa, ab;
    if (load(cmd, v.pos[0], &da, &aa)) {
        cli_values_free(&v);
        return 1;
    }
    if (load(cmd, v.pos[1], &db, &ab)) {
        cov_analysis_free(&aa);
        cov_data_free(&da);
        cli_values_free(&v);
        return 1;
    }
    struct cov_diff_row *rows = NULL;
    uint32_t nrows = 0, common = 0;
    r = 0;
    if (cov_diff(&aa, &ab, &rows, &nrows, &common)) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        r = 1;
    } else if (cov_view_diff(stdout, v.format, &aa, v.pos[0], &ab, v.pos[1], rows, nrows,
                             common)) {
        fprintf(stderr, "%s: cannot write the comparison: check the output device\n", cmd);
        r = 1;
    }
    free(rows);
    cov_analysis_free(&aa);
    cov_analysis_free(&ab);
    cov_data_free(&da);
    cov_data_free(&db);
    cli_values_free(&v);
    return r;
}
