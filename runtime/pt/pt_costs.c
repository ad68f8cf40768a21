/* The measured cost model (ptc_costs.h): paired runs of the calibration program, plain and
 * traced, the difference of their CPU time over the loop divided by the events the trace
 * says were made (or the calls counted); the median of the repeats, with their spread. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_costs.h"
#include "ptc_escape.h"
#include "ptc_outfile.h"
#include "ptcall/trace_format.h"

/* Extendable: a mode is measured with its variables set; one whose trace does not carry
 * the time base source it asks for (expect_source, 0: any) was refused by the runtime. */
struct mode_def {
    const char *name;
    const char *timestamps; /* PTCALL_TIMESTAMPS */
    const char *clock;      /* PTCALL_CLOCK, or NULL */
    uint32_t expect_source;
};
static const struct mode_def mode_defs[] = {
    {"timed", "1", NULL, 0},
    {"untimed", "0", NULL, 0},
    {"ticker", "1", "ticker", PTC_TIME_TICKER},
};
#define NUM_MODE_DEFS (sizeof(mode_defs) / sizeof(mode_defs[0]))
const char *const ptc_costs_mode_names[] = {"timed", "untimed", "ticker", NULL};

#define COSTS_MAGIC "{\"format\": \"ptcall-costs\", \"version\": 1, \"entries\": ["
#define COSTS_MAX_ENTRIES 16

/* ---- the key --------------------------------------------------------------------------- */

static void build_id_of(const char *path, char *out, size_t n)
{
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) {
        if (fd >= 0)
            close(fd);
        return;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    for (Elf_Scn *scn = NULL; e && !out[0] && (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        GElf_Nhdr nh;
        size_t off = 0, name_off, desc_off, next;
        while (d && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                !memcmp((const char *)d->d_buf + name_off, "GNU", 4)) {
                const unsigned char *b = (const unsigned char *)d->d_buf + desc_off;
                for (size_t i = 0; i < nh.n_descsz && 2 * i + 2 < n; i++)
                    snprintf(out + 2 * i, 3, "%02x", b[i]);
                break;
            }
            off = next;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
}

int ptc_costs_key(const char *runtime, struct ptc_costs *c, char *why, size_t n)
{
    snprintf(c->cpu, sizeof(c->cpu), "unknown");
    FILE *f = fopen("/proc/cpuinfo", "re");
    char line[512];
    while (f && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (!strncmp(line, "model name", 10) && colon) {
            colon += 1 + (colon[1] == ' ');
            colon[strcspn(colon, "\n")] = 0;
            snprintf(c->cpu, sizeof(c->cpu), "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
    struct utsname u;
    snprintf(c->kernel, sizeof(c->kernel), "%s", uname(&u) == 0 ? u.release : "unknown");
    build_id_of(runtime, c->build_id, sizeof(c->build_id));
    if (!c->build_id[0]) {
        snprintf(why, n, "%s has no GNU build id (or cannot be read): its costs cannot be told "
                         "from another build's", runtime);
        return -1;
    }
    return 0;
}

/* ---- one run --------------------------------------------------------------------------- */

struct run_result {
    uint64_t cpu_ns;   /* the program's CPU time over its loop */
    uint64_t events;   /* traced: PROCESS_END's events */
    uint64_t counted;  /* counting: the calls in COUNTS chunks */
    uint32_t source;   /* traced: the TIMEBASE chunk's source (0: none) */
};

/* The chunks of the run's trace that say what it did. 0, or -1 (not a trace). */
static int read_trace(const char *path, struct run_result *r)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ptc_file_header fh;
    int ok = read(fd, &fh, sizeof(fh)) == (ssize_t)sizeof(fh) &&
             !memcmp(fh.magic, PTC_FILE_MAGIC, 8) && fh.header_size >= sizeof(fh);
    off_t at = ok ? (off_t)fh.header_size : 0;
    struct ptc_chunk_header h;
    while (ok && pread(fd, &h, sizeof(h), at) == (ssize_t)sizeof(h) && h.payload_size < (1u << 30)) {
        off_t p = at + (off_t)sizeof(h);
        if (h.type == PTC_CHUNK_TIMEBASE) {
            struct ptc_timebase tb;
            if (h.payload_size >= sizeof(tb) && pread(fd, &tb, sizeof(tb), p) == (ssize_t)sizeof(tb))
                r->source = tb.source;
        } else if (h.type == PTC_CHUNK_PROCESS_END) {
            struct ptc_process_end e;
            if (h.payload_size >= sizeof(e) && pread(fd, &e, sizeof(e), p) == (ssize_t)sizeof(e))
                r->events += e.events;
        } else if (h.type == PTC_CHUNK_COUNTS) {
            struct ptc_counts k;
            if (h.payload_size >= sizeof(k) && pread(fd, &k, sizeof(k), p) == (ssize_t)sizeof(k)) {
                uint64_t off = sizeof(k) + (uint64_t)k.num_modules * sizeof(struct ptc_counts_module);
                for (; off + 8 + k.label_size <= h.payload_size; off += 8) {
                    uint64_t v = 0;
                    if (pread(fd, &v, 8, p + (off_t)off) == 8)
                        r->counted += v;
                }
            }
        }
        at = p + (off_t)h.payload_size + (off_t)ptc_chunk_padding(h.payload_size);
    }
    close(fd);
    return ok ? 0 : -1;
}

/* Runs prog CALLS times its loop; with trace set, preloads runtime and sets the variables of
 * mode (NULL: counting mode) with the trace into trace. 0, or -1 with why. */
static int run_once(const char *prog, const char *runtime, uint64_t calls, int traced,
                    const struct mode_def *mode, int atomic, const char *trace,
                    struct run_result *r, char *why, size_t n)
{
    memset(r, 0, sizeof(*r));
    if (traced)
        unlink(trace);
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0) {
        snprintf(why, n, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    char arg[32];
    snprintf(arg, sizeof(arg), "%llu", (unsigned long long)calls);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "cannot fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        /* the runtime's configuration is the one asked for, not what the caller had set */
        for (int again = 1; again;) {
            again = 0;
            for (char **e = environ; *e; e++)
                if (!strncmp(*e, "PTCALL_", 7)) {
                    char name[128];
                    snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
                    unsetenv(name);
                    again = 1;
                    break;
                }
        }
        if (traced) {
            const char *pre = getenv("LD_PRELOAD");
            char val[PATH_MAX * 2];
            snprintf(val, sizeof(val), "%s%s%s", runtime, pre && *pre ? ":" : "",
                     pre && *pre ? pre : "");
            setenv("LD_PRELOAD", val, 1);
            setenv("PTCALL_BACKEND", "soft", 1);
            setenv("PTCALL_OUTPUT", trace, 1);
            setenv("PTCALL_COUNTS", mode ? "0" : "1", 1);
            if (atomic)
                setenv("PTCALL_COUNT_ATOMIC", "1", 1);
            if (mode) {
                setenv("PTCALL_TIMESTAMPS", mode->timestamps, 1);
                if (mode->clock)
                    setenv("PTCALL_CLOCK", mode->clock, 1);
            }
        }
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        execl(prog, prog, arg, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    char out[4096];
    size_t got = 0;
    ssize_t k;
    while (got + 1 < sizeof(out) && (k = read(pfd[0], out + got, sizeof(out) - 1 - got)) != 0) {
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break;
        got += (size_t)k;
    }
    out[got] = 0;
    close(pfd[0]);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    const char *line = strstr(out, "ptcall-calib cpu_ns=");
    unsigned long long ns = 0;
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) || !line ||
        sscanf(line, "ptcall-calib cpu_ns=%llu", &ns) != 1) {
        out[strcspn(out, "\n")] = 0;
        snprintf(why, n, "the calibration program %s failed (%s%s%.120s)", prog,
                 WIFEXITED(ws) ? "exit status " : "killed by signal ",
                 WIFEXITED(ws) ? (WEXITSTATUS(ws) ? "non-zero: " : "0: ") : "", out);
        return -1;
    }
    r->cpu_ns = ns;
    if (traced && read_trace(trace, r) != 0) {
        snprintf(why, n, "the calibration run wrote no trace to %s: is %s a libptcall?", trace,
                 runtime);
        return -1;
    }
    return 0;
}

/* ---- measuring ------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void summarize(double *v, unsigned k, struct ptc_cost_fig *f)
{
    qsort(v, k, sizeof(*v), cmp_double);
    f->ok = 1;
    f->ns = k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
    f->min = v[0];
    f->max = v[k - 1];
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Paired runs of one figure (mode NULL: counting, with locked increments when atomic). 0, 1
 * when the runtime refused the mode (f->why says so), -1 with why. */
static int measure_one(const char *prog, const char *runtime, const char *trace, uint64_t calls,
                       unsigned repeats, const struct mode_def *mode, int atomic,
                       struct ptc_cost_fig *f, char *why, size_t n)
{
    double v[64] = {0};
    if (repeats > 64)
        repeats = 64;
    if (!repeats)
        repeats = 1;
    for (unsigned i = 0; i < repeats; i++) {
        struct run_result plain, tr;
        if (run_once(prog, runtime, calls, 0, NULL, 0, trace, &plain, why, n) ||
            run_once(prog, runtime, calls, 1, mode, atomic, trace, &tr, why, n))
            return -1;
        if (mode && mode->expect_source && tr.source != mode->expect_source) {
            snprintf(f->why, sizeof(f->why), "this libptcall does not have it (PTCALL_CLOCK=%s "
                     "gave time base source %u)", mode->clock, tr.source);
            return 1;
        }
        uint64_t units = mode ? tr.events : tr.counted;
        if (!units) {
            snprintf(why, n, "the calibration run %s no %s: is %s built with ptcall-cc?",
                     mode ? "traced" : "counted", mode ? "events" : "calls", prog);
            return -1;
        }
        v[i] = ((double)tr.cpu_ns - (double)plain.cpu_ns) / (double)units;
    }
    summarize(v, repeats, f);
    return 0;
}

int ptc_costs_measure(const char *prog, const char *runtime, const char *tmpdir,
                      unsigned repeats, struct ptc_costs *c, char *why, size_t n)
{
    double t0 = now_s();
    char trace[PATH_MAX];
    if (snprintf(trace, sizeof(trace), "%s/ptcall-calib.%d.ptc", tmpdir, (int)getpid()) >=
        (int)sizeof(trace)) {
        snprintf(why, n, "temporary directory path too long: %s", tmpdir);
        return -1;
    }
    if (!repeats)
        repeats = 5;
    c->calls = 1000000;
    c->repeats = repeats;
    c->nmodes = 0;
    int r = 0;
    for (size_t i = 0; i < NUM_MODE_DEFS && c->nmodes < PTC_COSTS_MAX_MODES && r >= 0; i++) {
        struct ptc_cost_fig *f = &c->mode[c->nmodes].f;
        memset(f, 0, sizeof(*f));
        snprintf(c->mode[c->nmodes].name, sizeof(c->mode[0].name), "%s", mode_defs[i].name);
        c->nmodes++;
        r = measure_one(prog, runtime, trace, c->calls, repeats, &mode_defs[i], 0, f, why, n);
        if (r > 0)
            r = 0; /* refused: said in f->why, the others go on */
    }
    memset(&c->count, 0, sizeof(c->count));
    memset(&c->count_atomic, 0, sizeof(c->count_atomic));
    /* a counted call costs about a nanosecond: five times the calls, for as many ms of it
     * as an event's figure has; a locked one several, on its own cache line */
    if (r >= 0)
        r = measure_one(prog, runtime, trace, 5 * c->calls, repeats, NULL, 0, &c->count, why,
                        n);
    if (r >= 0)
        r = measure_one(prog, runtime, trace, 5 * c->calls, repeats, NULL, 1, &c->count_atomic,
                        why, n);
    unlink(trace);
    if (r < 0)
        return -1;
    c->seconds = now_s() - t0;
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(c->calibrated, sizeof(c->calibrated), "%Y-%m-%dT%H:%M:%SZ", &tm);
    return 0;
}

const struct ptc_cost_fig *ptc_costs_count(const struct ptc_costs *c, int atomic)
{
    const struct ptc_cost_fig *f = atomic ? &c->count_atomic : &c->count;
    return f->ok ? f : NULL;
}

const struct ptc_cost_fig *ptc_costs_mode(const struct ptc_costs *c, const char *name)
{
    for (unsigned i = 0; i < c->nmodes; i++)
        if (!strcmp(c->mode[i].name, name))
            return c->mode[i].f.ok ? &c->mode[i].f : NULL;
    return NULL;
}

/* ---- the cache ------------------------------------------------------------------------- */

int ptc_costs_cache_path(char *out, size_t n)
{
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int w = x && x[0] == '/' ? snprintf(out, n, "%s/ptcall/costs.json", x)
            : home && *home ? snprintf(out, n, "%s/.cache/ptcall/costs.json", home)
                            : -1;
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* The start of c's entry line: the key, so that an entry is found by comparing it. */
static char *key_prefix(const struct ptc_costs *c)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    fputs("{\"cpu\": ", m);
    ptc_fput_json(m, c->cpu);
    fputs(", \"kernel\": ", m);
    ptc_fput_json(m, c->kernel);
    fputs(", \"libptcall_build_id\": ", m);
    ptc_fput_json(m, c->build_id);
    fputs(", ", m);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void put_fig(FILE *m, const struct ptc_cost_fig *f)
{
    if (f->ok) {
        fprintf(m, "{\"ns\": %.3f, \"min\": %.3f, \"max\": %.3f}", f->ns, f->min, f->max);
    } else {
        fputs("{\"ns\": null, \"why\": ", m);
        ptc_fput_json(m, f->why);
        fputc('}', m);
    }
}

static int get_fig(const char *line, const char *label, struct ptc_cost_fig *f)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\": {\"ns\": ", label);
    const char *p = strstr(line, pat);
    memset(f, 0, sizeof(*f));
    if (!p)
        return -1;
    p += strlen(pat);
    if (!strncmp(p, "null", 4)) {
        snprintf(f->why, sizeof(f->why), "not measured (ptcall calibrate says why)");
        return 0;
    }
    f->ok = sscanf(p, "%lf, \"min\": %lf, \"max\": %lf", &f->ns, &f->min, &f->max) == 3;
    return f->ok ? 0 : -1;
}

/* The whole file, or NULL (errno ENOENT: none). */
static char *read_all(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return NULL;
    if (!S_ISREG(st.st_mode) || st.st_size > (16 << 20)) {
        errno = EPERM;
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (got < 0) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[got] = 0;
    return buf;
}

static int ours(const char *text)
{
    return !strncmp(text, COSTS_MAGIC, strlen(COSTS_MAGIC));
}

int ptc_costs_load(const char *path, struct ptc_costs *c, char *why, size_t n)
{
    char *text = read_all(path);
    if (!text) {
        if (errno == ENOENT)
            return 0;
        snprintf(why, n, "%s cannot be read as ptcall's costs cache: %s", path,
                 errno == EPERM ? "not a regular file" : strerror(errno));
        return -1;
    }
    if (!ours(text)) {
        snprintf(why, n, "%s was not written by ptcall (it is not a ptcall-costs file)", path);
        free(text);
        return -1;
    }
    char *key = key_prefix(c);
    int found = 0;
    for (char *line = text; key && line && *line && !found; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        if (strncmp(line, key, strlen(key)))
            continue;
        char *end = strchr(line, '\n');
        if (end)
            *end = 0;
        const char *p;
        found = (p = strstr(line, "\"calibrated\": \"")) &&
                sscanf(p, "\"calibrated\": \"%31[^\"]", c->calibrated) == 1 &&
                (p = strstr(line, "\"seconds\": ")) && sscanf(p, "\"seconds\": %lf", &c->seconds) == 1 &&
                (p = strstr(line, "\"repeats\": ")) && sscanf(p, "\"repeats\": %u", &c->repeats) == 1 &&
                get_fig(line, "ns_per_count", &c->count) == 0;
        unsigned long long calls = 0;
        if (found && (p = strstr(line, "\"calls\": ")) && sscanf(p, "\"calls\": %llu", &calls) == 1)
            c->calls = calls;
        /* entries cached before locked counts were measured lack it: not measured */
        if (found && get_fig(line, "ns_per_count_atomic", &c->count_atomic) != 0)
            snprintf(c->count_atomic.why, sizeof(c->count_atomic.why),
                     "not in the cache (calibrated before locked counts were measured): run "
                     "ptcall calibrate");
        c->nmodes = 0;
        for (size_t i = 0; found && i < NUM_MODE_DEFS; i++) {
            struct ptc_cost_fig f;
            if (get_fig(line, mode_defs[i].name, &f) != 0)
                continue;
            snprintf(c->mode[c->nmodes].name, sizeof(c->mode[0].name), "%s", mode_defs[i].name);
            c->mode[c->nmodes++].f = f;
        }
        if (!found) {
            snprintf(why, n, "%s: the entry for this machine is damaged; run ptcall calibrate "
                             "to measure again", path);
            free(key);
            free(text);
            return -1;
        }
    }
    free(key);
    free(text);
    return found;
}

/* mkdir of path's directory and its parent (~/.cache/ptcall): what the cache needs. */
static int make_dirs(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = 0;
    char *parent = strrchr(dir, '/');
    if (parent && parent != dir) {
        *parent = 0;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            return -1;
        *parent = '/';
    }
    return mkdir(dir, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

int ptc_costs_save(const char *path, const struct ptc_costs *c, char *why, size_t n)
{
    char *old = read_all(path);
    if (!old && errno != ENOENT) {
        snprintf(why, n, "%s is not a file ptcall wrote (%s): left as it is, the costs are not "
                         "cached (remove it, or set XDG_CACHE_HOME elsewhere)", path,
                 errno == EPERM ? "not a regular file" : strerror(errno));
        return -1;
    }
    if (old && !ours(old)) {
        snprintf(why, n, "%s was not written by ptcall: left as it is, the costs are not cached "
                         "(remove it, or set XDG_CACHE_HOME elsewhere)", path);
        free(old);
        return -1;
    }
    char *key = key_prefix(c), *buf = NULL;
    size_t len = 0;
    FILE *m = key ? open_memstream(&buf, &len) : NULL;
    if (!m) {
        free(old);
        free(key);
        snprintf(why, n, "out of memory");
        return -1;
    }
    fputs(COSTS_MAGIC "\n", m);
    /* this entry first, then the others the file had (other machines sharing a home) */
    fprintf(m, "%s\"calibrated\": \"%s\", \"seconds\": %.3f, \"calls\": %llu, \"repeats\": %u, "
               "\"ns_per_event\": {", key, c->calibrated, c->seconds,
            (unsigned long long)c->calls, c->repeats);
    for (unsigned i = 0; i < c->nmodes; i++) {
        fprintf(m, "%s\"%s\": ", i ? ", " : "", c->mode[i].name);
        put_fig(m, &c->mode[i].f);
    }
    fputs("}, \"ns_per_count\": ", m);
    put_fig(m, &c->count);
    fputs(", \"ns_per_count_atomic\": ", m);
    put_fig(m, &c->count_atomic);
    fputs("}", m);
    int kept = 0;
    for (char *line = old ? strchr(old, '\n') : NULL; line && kept < COSTS_MAX_ENTRIES - 1;) {
        line++;
        char *end = strchr(line, '\n');
        size_t l = end ? (size_t)(end - line) : strlen(line);
        if (!strncmp(line, "{\"cpu\": ", 8) && strncmp(line, key, strlen(key))) {
            size_t t = l;
            if (t && line[t - 1] == ',')
                t--;
            fprintf(m, ",\n%.*s", (int)t, line);
            kept++;
        }
        line = end;
    }
    fputs("\n]}\n", m);
    free(old);
    free(key);
    if (fclose(m) != 0) {
        free(buf);
        snprintf(why, n, "out of memory");
        return -1;
    }
    struct ptc_outfile of;
    int e = make_dirs(path) != 0 ? -errno : ptc_outfile_open(&of, path, 0644);
    if (e == 0 && (e = ptc_outfile_write(&of, buf, len)) != 0)
        ptc_outfile_abort(&of);
    else if (e == 0)
        e = ptc_outfile_commit(&of);
    free(buf);
    if (e) {
        snprintf(why, n, "cannot write %s: %s; the costs are not cached", path, strerror(-e));
        return -1;
    }
    return 0;
}
