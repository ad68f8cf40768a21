/* AFL++ output directories (`cov run --afl OUTDIR`, afl-fuzz -o OUTDIR). AFL++ 4 writes
 * OUTDIR/NAME/{queue,crashes,hangs} per instance (NAME: 'default', or the -M/-S name);
 * AFL and AFL++ before 3.0 wrote OUTDIR/{queue,crashes,hangs}. Entry names carry fields
 * "id:000012,src:000003,time:20931,execs:1234,op:havoc,rep:4,+cov": time: is the instance's
 * campaign time in milliseconds. Entries synced from other instances (sync:NAME) and old
 * AFL's have none: they take their file time minus the instance's start_time (fuzzer_stats). */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cov.h"
#include "cov_int.h"

int64_t cov_afl_field(const char *name, const char *key)
{
    size_t kl = strlen(key);
    for (const char *p = name; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
        if (!strncmp(p, key, kl) && p[kl] == ':') {
            char *end;
            errno = 0;
            long long v = strtoll(p + kl + 1, &end, 10);
            if (errno || end == p + kl + 1 || (*end && *end != ','))
                return -1;
            return v;
        }
    }
    return -1;
}

int cov_afl_read_stats(const char *inst, struct cov_afl_stats *s)
{
    s->start_time = s->last_update = s->run_time = s->fuzzer_pid = COV_AFL_STAT_NONE;
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/fuzzer_stats", inst) >= (int)sizeof(path))
        return -ENAMETOOLONG;
    struct stat st;
    int fd = cov_open_input(path, &st);
    if (fd < 0)
        return fd;
    FILE *f = fdopen(fd, "re");
    if (!f) {
        close(fd);
        return -errno;
    }
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        long long v;
        if (sscanf(line, "start_time : %lld", &v) == 1)
            s->start_time = v;
        else if (sscanf(line, "last_update : %lld", &v) == 1)
            s->last_update = v;
        else if (sscanf(line, "run_time : %lld", &v) == 1)
            s->run_time = v;
        else if (sscanf(line, "fuzzer_pid : %lld", &v) == 1)
            s->fuzzer_pid = v;
    }
    fclose(f);
    return 0;
}

/* Seconds as ms; -1 when absent or not in [min, INT64_MAX / 1000). */
static int64_t stats_ms(long long s, long long min)
{
    return s >= min && s < INT64_MAX / 1000 ? (int64_t)s * 1000 : -1;
}

/* start_time (Unix seconds) from DIR/fuzzer_stats, in ms; -1 when absent or unreadable
 * (said on warn). Opened without blocking and refused unless a regular file: a FIFO there
 * hung `cov run` for ever. *run_ms gets how long the instance ran (run_time, else
 * last_update - start_time), -1 when not said: the curve's plateau runs to it. */
static int64_t instance_start_ms(const char *inst, FILE *warn, int64_t *run_ms)
{
    *run_ms = -1;
    struct cov_afl_stats s;
    int rc = cov_afl_read_stats(inst, &s);
    if (rc == -ENOENT || rc == -ENAMETOOLONG)
        return -1;
    if (rc) {
        char path[4096], sh[768];
        if (snprintf(path, sizeof(path), "%s/fuzzer_stats", inst) >= (int)sizeof(path))
            return -1;
        fprintf(warn, "ptcall cov: %s: %s: entries without time: in their names get an unknown "
                      "campaign time\n", cov_shown(path, sh, sizeof(sh)),
                rc == -EINVAL ? "not a regular file" : strerror(-rc));
        return -1;
    }
    int64_t v = stats_ms(s.start_time, 1), last = stats_ms(s.last_update, 1),
            run = stats_ms(s.run_time, 0);
    *run_ms = run >= 0 ? run : v >= 0 && last >= v ? last - v : -1;
    return v;
}

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The entries of one instance's subdirectory (queue, crashes or hangs). */
static int add_sub(struct cov_entries *e, const char *outdir, const char *inst_rel,
                   const char *sub, unsigned kind, int64_t start_ms, FILE *warn)
{
    char dir[4096];
    if (snprintf(dir, sizeof(dir), "%s/%s%s%s", outdir, inst_rel, *inst_rel ? "/" : "", sub) >=
        (int)sizeof(dir))
        return 0;
    if (!is_dir(dir))
        return 0;   /* AFL++ makes crashes/ and hangs/ lazily in some versions */
    char **names;
    size_t count;
    int rc = cov_list_dir(dir, &names, &count);
    if (rc) {
        char sh[768];
        fprintf(warn, "ptcall cov: skipping %s: %s\n", cov_shown(dir, sh, sizeof(sh)),
                strerror(-rc));
        e->skipped++;
        return rc == -ENOMEM ? rc : 0;
    }
    for (size_t i = 0; i < count && !rc; i++) {
        /* .state/ is AFL++'s bookkeeping; README.txt its note in crashes/ */
        if (names[i][0] == '.' || !strcmp(names[i], "README.txt"))
            continue;
        char path[8192], shown[8192];
        if (snprintf(path, sizeof(path), "%s/%s", dir, names[i]) >= (int)sizeof(path) ||
            snprintf(shown, sizeof(shown), "%s%s%s/%s", inst_rel, *inst_rel ? "/" : "", sub,
                     names[i]) >= (int)sizeof(shown)) {
            char sh[768];
            fprintf(warn, "ptcall cov: skipping %s: path too long\n",
                    cov_shown(names[i], sh, sizeof(sh)));
            e->skipped++;
            continue;
        }
        struct stat st;
        if (!cov_entry_check(path, shown, &st, warn)) {
            e->skipped++;
            continue;
        }
        int64_t t = cov_afl_field(names[i], "time");
        if (t < 0 && start_ms >= 0) {
            /* a file older than the instance's start has no campaign time we can tell */
            int64_t m = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
            t = m >= start_ms ? m - start_ms : -1;
        }
        rc = cov_entries_push(e, path, shown, kind, t, &st);
    }
    cov_free_names(names, count);
    return rc;
}

static int add_instance(struct cov_entries *e, const char *outdir, const char *inst_rel,
                        FILE *warn)
{
    char inst[4096];
    if (snprintf(inst, sizeof(inst), "%s%s%s", outdir, *inst_rel ? "/" : "", inst_rel) >=
        (int)sizeof(inst))
        return -ENAMETOOLONG;
    int64_t run_ms;
    int64_t start = instance_start_ms(inst, warn, &run_ms);
    if (run_ms >= 0 && (!e->has_campaign || run_ms > e->campaign_ms)) {
        e->campaign_ms = run_ms;
        e->has_campaign = 1;
    }
    int rc = add_sub(e, outdir, inst_rel, "queue", COV_KIND_QUEUE, start, warn);
    if (!rc)
        rc = add_sub(e, outdir, inst_rel, "crashes", COV_KIND_CRASH, start, warn);
    if (!rc)
        rc = add_sub(e, outdir, inst_rel, "hangs", COV_KIND_HANG, start, warn);
    return rc;
}

int cov_afl_add(struct cov_entries *e, const char *outdir, FILE *warn, char *why, size_t n)
{
    char q[4096];
    struct stat st;
    if (stat(outdir, &st)) {
        snprintf(why, n, "%s: %s (--afl takes an AFL++ output directory, afl-fuzz -o OUTDIR)",
                 outdir, strerror(errno));
        return -ENOENT;
    }
    if (!S_ISDIR(st.st_mode)) {
        /* errno is not set for this case: it read "Invalid argument" */
        snprintf(why, n,
                 "%s is %s, not a directory: --afl takes an AFL++ output directory (afl-fuzz "
                 "-o OUTDIR, with OUTDIR/NAME/queue/ inside); give a directory of inputs as "
                 "--corpus DIR",
                 outdir, S_ISREG(st.st_mode) ? "a file" : "not a directory");
        return -ENOTDIR;
    }
    int rc;
    if (snprintf(q, sizeof(q), "%s/queue", outdir) >= (int)sizeof(q)) {
        snprintf(why, n, "%s: path too long", outdir);
        return -ENAMETOOLONG;
    }
    if (is_dir(q)) {
        rc = add_instance(e, outdir, "", warn);
    } else {
        char **names;
        size_t count;
        if ((rc = cov_list_dir(outdir, &names, &count))) {
            snprintf(why, n, "cannot read %s: %s", outdir, strerror(-rc));
            return rc;
        }
        int found = 0;
        for (size_t i = 0; i < count && !rc; i++) {
            if (names[i][0] == '.' ||
                snprintf(q, sizeof(q), "%s/%s/queue", outdir, names[i]) >= (int)sizeof(q) ||
                !is_dir(q))
                continue;
            found++;
            rc = add_instance(e, outdir, names[i], warn);
        }
        cov_free_names(names, count);
        if (!rc && !found) {
            snprintf(why, n,
                     "%s is not an AFL++ output directory: expected %s/NAME/queue/ (afl-fuzz -o "
                     "%s; NAME is 'default' or each instance's -M/-S name, with crashes/ and "
                     "hangs/ beside queue/) or %s/queue/ (AFL before 3.0)",
                     outdir, outdir, outdir, outdir);
            return -ENOENT;
        }
    }
    if (rc)
        snprintf(why, n, "out of memory");
    return rc;
}
