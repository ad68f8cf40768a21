/* Counted and traced in one run, its configuration (docs/runtime.md, *Tracing within a
 * budget*): PTCALL_COUNT_REST and PTCALL_TRACE_SET read at start-up, the trace set's file
 * loaded and looked up. Arming is soft_mixed.c's. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptc_budget.h"
#include "ptc_env.h"
#include "soft_internal.h"

/* PTCALL_TRACE_SET: the names (sorted, pointing into the file's private copy), whether each
 * matched a function, and whether the file could be used at all */
static struct {
    int given, bad;
    char path[PATH_MAX];
    const char **names;
    uint8_t *hit;
    size_t n;
    int have_budget; /* a "# budget overhead ..." line: record's choice, written as BUDGET */
    struct ptc_budget budget;
    char note[256];  /* its "# written by ..." line */
} set;

/* record --overhead --from-counts/--from-db's lines (tools/record_budget.c): the second says
 * who chose, the budget line what */
static void budget_line(const char *line)
{
    static const char mine[] = PTC_TRACE_SET_WRITTEN_BY, budget[] = PTC_TRACE_SET_BUDGET;
    if (!strncmp(line, mine, sizeof(mine) - 1)) {
        snprintf(set.note, sizeof(set.note), "chosen by %s", line + sizeof(mine) - 1);
        return;
    }
    if (strncmp(line, budget, sizeof(budget) - 1))
        return;
    struct ptc_budget *b = &set.budget;
    unsigned long long cand, traced, total, ctraced;
    int outcome;
    if (sscanf(line + sizeof(budget) - 1, "limit=%lf per_event=%lf per_count=%lf predicted=%lf "
               "candidates=%llu traced=%llu calls_total=%llu calls_traced=%llu outcome=%d",
               &b->limit, &b->per_event, &b->per_count, &b->predicted, &cand, &traced, &total,
               &ctraced, &outcome) != 9)
        return; /* a line of another version: no BUDGET chunk, the set still applies */
    b->kind = PTC_BUDGET_KIND_OVERHEAD;
    b->source = PTC_BUDGET_SRC_PREVIOUS;
    b->candidates = cand;
    b->traced = traced;
    b->calls_total = total;
    b->calls_traced = ctraced;
    b->outcome = (uint32_t)outcome;
    set.have_budget = 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

/* Reads the file into set; -1 after one line saying what is done instead */
static int load_set(const char *path)
{
    static const char instead[] = "tracing none of the functions, counting every candidate";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        warn("ptcall: PTCALL_TRACE_SET=%s: cannot read it (%s): %s (write one with ptcall "
             "record --from-counts, docs/runtime.md)",
             path, fd < 0 ? strerror(errno) : "not a regular file", instead);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    size_t size = (size_t)st.st_size;
    char *text = size ? mmap(NULL, size + 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0)
                      : NULL;
    close(fd);
    if (text == MAP_FAILED)
        text = NULL;
    /* the mapping's last page is zero-filled past the file; one more byte needs a page */
    if (text && (size & 4095) == 0) {
        char *copy = map_anon(size + 1);
        if (copy)
            memcpy(copy, text, size);
        munmap(text, size + 1);
        text = copy;
    }
    if (text)
        text[size] = 0;
    char *nl = text ? strchr(text, '\n') : NULL;
    if (nl)
        *nl = 0;
    if (!text || strcmp(trim(text), "ptcall-trace-set 1") != 0) {
        warn("ptcall: PTCALL_TRACE_SET=%s: its first line is not 'ptcall-trace-set 1' (not a "
             "trace set, or of a later version): %s", path, instead);
        return -1;
    }
    size_t lines = 0;
    for (char *p = nl; p; p = strchr(p + 1, '\n'))
        lines++;
    set.names = map_anon(lines * sizeof(char *) + 1);
    set.hit = map_anon(lines + 1);
    if (!set.names || !set.hit) {
        warn("ptcall: PTCALL_TRACE_SET=%s: out of memory for its %zu lines: %s", path, lines,
             instead);
        return -1;
    }
    for (char *p = nl ? nl + 1 : NULL; p;) {
        char *next = strchr(p, '\n');
        if (next)
            *next++ = 0;
        char *name = trim(p);
        if (*name && *name != '#')
            set.names[set.n++] = name;
        else if (*name == '#')
            budget_line(name);
        p = next;
    }
    qsort(set.names, set.n, sizeof(char *), cmp_str);
    return 0;
}

int mixed_config(void)
{
    uint64_t v;
    const char *path;
    char err[256];
    if (ptc_env_get(PTC_ENV_COUNT_REST, &v, NULL, err, sizeof(err)) < 0 ||
        ptc_env_get(PTC_ENV_TRACE_SET, NULL, &path, err, sizeof(err)) < 0) {
        warn("ptcall: %s: not tracing (docs/runtime.md lists the values)", err);
        return -1;
    }
    rt.count_rest = (int)v;
    set.given = path && path[0];
    if (set.given) {
        snprintf(set.path, sizeof(set.path), "%s", path);
        set.bad = load_set(path) < 0;
    }
    rt.mixed = rt.count_rest || set.given;
    return 0;
}

void mixed_ignored(const char *mode)
{
    const char *a = secure_getenv("PTCALL_COUNT_REST"), *b = secure_getenv("PTCALL_TRACE_SET");
    const char *o = secure_getenv("PTCALL_OVERHEAD");
    if (o && o[0])
        warn("ptcall: PTCALL_OVERHEAD is ignored %s: no pilot, nothing chosen", mode);
    int on = (a && a[0] && strcmp(a, "0") && strcmp(a, "no") && strcmp(a, "off") &&
              strcmp(a, "false")) || (b && b[0]);
    if (on)
        warn("ptcall: %s is ignored %s: the functions not traced are not counted",
             b && b[0] ? "PTCALL_TRACE_SET" : "PTCALL_COUNT_REST", mode);
}

/* Whether a candidate is traced: listed in the trace set (by its linkage name when the map
 * has one, else its display name), or, without a set, every candidate */
int trace_set_has(const char *name, const char *linkage)
{
    if (!set.given)
        return 1;
    if (set.bad)
        return 0;
    const char *key = linkage && linkage[0] ? linkage : name;
    const char **f = bsearch(&key, set.names, set.n, sizeof(char *), cmp_str);
    if (!f)
        return 0;
    /* equal names sit side by side: mark them all */
    for (const char **g = f; g >= set.names && !strcmp(*g, key); g--)
        set.hit[g - set.names] = 1;
    for (const char **g = f + 1; g < set.names + set.n && !strcmp(*g, key); g++)
        set.hit[g - set.names] = 1;
    return 1;
}

const char *trace_set_path(void) { return set.given ? set.path : NULL; }

int trace_set_budget(struct ptc_budget *b, const char **note)
{
    if (!set.given || set.bad || !set.have_budget)
        return 0;
    *b = set.budget;
    *note = set.note[0] ? set.note : "chosen from a previous run's counts";
    return 1;
}

void trace_set_report_unmatched(void)
{
    if (!set.given || set.bad || rt.start_how == PTC_PROC_FORK)
        return;
    size_t said = 0, left = 0;
    for (size_t i = 0; i < set.n; i++) {
        if (set.hit[i])
            continue;
        if (said < 10) {
            warn("ptcall[%d]: PTCALL_TRACE_SET=%s: '%s' names no function of the instrumented "
                 "objects this process loaded: nothing was traced for it",
                 (int)getpid(), set.path, set.names[i]);
            said++;
        } else {
            left++;
        }
    }
    if (left)
        warn("ptcall[%d]: PTCALL_TRACE_SET=%s: %zu more names matched no function",
             (int)getpid(), set.path, left);
}
