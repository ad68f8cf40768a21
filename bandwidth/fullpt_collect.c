/* Running a program under valgrind's callgrind for the full-PT estimate, and reading what it
 * wrote: one callgrind output and one log per process (forks and execs are followed, as PT
 * with inherit would follow them), merged into one profile.
 *
 * The options, and why:
 *   --dump-instr=yes        costs per instruction: how often each branch ran
 *   --collect-jumps=yes     jcnd= (taken counts) and jump= (indirect jump targets)
 *   --skip-plt=no           PLT stubs are code PT traces (their indirect jmp is a TIP)
 *   --separate-recs=65      recursion levels 1..65 apart: calls beyond the 64-deep return stack
 *   --show-below-main=yes   _start and __libc_start_main under their own names
 *   --dump-before=*_Fork (and __libc_fork, *vfork)   a forked child inherits its parent's
 *                           counters: dumping them just before the fork keeps the child's
 *                           output to what it ran itself (the parent's pre-fork part goes to
 *                           callgrind.out.PID.N)
 *   -v -v, --log-file       the log names each object with its load address (svma/avma); a
 *                           forked child's names none (it loads nothing): its parent's serves */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fullpt_int.h"

#define NAME_CG "callgrind.out."
#define NAME_LOG "valgrind.log."

/* dir/name into buf; -1 when it does not fit. */
static int join(char *buf, size_t size, const char *dir, const char *name)
{
    int k = snprintf(buf, size, "%s/%s", dir, name);
    return k < 0 || (size_t)k >= size ? -1 : 0;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in dir starting with prefix, sorted; NULL with *count 0 when none or on error. */
static char **list_dir(const char *dir, const char *prefix, size_t *count)
{
    *count = 0;
    DIR *d = opendir(dir);
    if (!d)
        return NULL;
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            char **v2 = realloc(v, cap * sizeof *v2);
            if (!v2)
                break;
            v = v2;
        }
        if (!(v[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(v, n, sizeof *v, name_cmp);
    *count = n;
    return v;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The last line of dir's valgrind logs that says why valgrind stopped, into buf. */
static void log_reason(const char *dir, char *buf, size_t size)
{
    size_t n;
    char **logs = list_dir(dir, NAME_LOG, &n);
    buf[0] = 0;
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        FILE *f = join(path, sizeof path, dir, logs[i]) ? NULL : fopen(path, "r");
        if (!f)
            continue;
        char line[1024];
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\n")] = 0;
            if (strstr(line, "valgrind:") || strstr(line, "FATAL") || strstr(line, "Fatal"))
                snprintf(buf, size, "%s", line);
        }
        fclose(f);
    }
    free_list(logs, n);
}

static void remove_dir(const char *dir)
{
    size_t n;
    char **names = list_dir(dir, "", &n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], ".") == 0 || strcmp(names[i], "..") == 0)
            continue;
        char path[4096];
        if (!join(path, sizeof path, dir, names[i]))
            unlink(path);
    }
    free_list(names, n);
    rmdir(dir);
}

/* Whether valgrind's log at path names loaded objects ("Reading syms"); and the parent pid
 * it names ("Parent PID: N"), 0 if none. */
static int log_info(const char *path, long *parent)
{
    FILE *f = fopen(path, "r");
    *parent = 0;
    if (!f)
        return 0;
    char line[4096];
    int syms = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "Parent PID: ");
        if (p && !*parent)
            *parent = strtol(p + 12, NULL, 10);
        if (strstr(line, "Reading syms from ")) {
            syms = 1;
            break;
        }
    }
    fclose(f);
    return syms;
}

/* The log that names the objects of process pid: its own, or for a child forked without an
 * exec (which inherits its parent's address space and loads nothing) its nearest ancestor's
 * that has them. 0 with path set, or -1. */
static int objects_log(const char *dir, long pid, char *path, size_t size)
{
    for (int depth = 0; depth < 64 && pid > 0; depth++) {
        char name[64];
        snprintf(name, sizeof name, NAME_LOG "%ld", pid);
        if (join(path, size, dir, name) || access(path, R_OK))
            return -1;
        long parent;
        if (log_info(path, &parent))
            return 0;
        pid = parent;
    }
    return -1;
}

/* Parses and merges every callgrind output in dir. */
static int read_outputs(const char *dir, long root, struct ptc_fullpt_profile **out, char *why,
                        size_t n)
{
    size_t count;
    char **cg = list_dir(dir, NAME_CG, &count);
    /* the process started first (its last image's output) goes first: its program is the
     * main executable */
    char rootname[64];
    snprintf(rootname, sizeof rootname, NAME_CG "%ld", root);
    for (size_t i = 1; i < count; i++)
        if (strcmp(cg[i], rootname) == 0) {
            char *t = cg[0];
            cg[0] = cg[i];
            cg[i] = t;
        }
    struct ptc_fullpt_profile *all = NULL;
    struct fpt_dcache *cache = fpt_dcache_new();
    long *pids = calloc(count + 1, sizeof *pids);
    size_t npids = 0;
    int rc = cache && pids ? 0 : -1;
    if (rc)
        snprintf(why, n, "out of memory");
    for (size_t i = 0; i < count && !rc; i++) {
        /* callgrind.out.PID, and callgrind.out.PID.N for what was dumped before a fork */
        long pid = strtol(cg[i] + strlen(NAME_CG), NULL, 10);
        char cgpath[4096], logpath[4096];
        if (join(cgpath, sizeof cgpath, dir, cg[i])) {
            snprintf(why, n, "path too long in %s", dir);
            rc = -1;
            break;
        }
        const char *log = objects_log(dir, pid, logpath, sizeof logpath) ? NULL : logpath;
        struct ptc_fullpt_profile *p;
        rc = fpt_parse_run(cgpath, log, cache, &p, why, n);
        if (rc)
            break;
        size_t k = 0;
        while (k < npids && pids[k] != pid)
            k++;
        if (k == npids)
            pids[npids++] = pid;
        if (!all) {
            all = p;
        } else {
            rc = fpt_merge(all, p, why, n);
            ptc_fullpt_free(p);
        }
    }
    free_list(cg, count);
    fpt_dcache_free(cache);
    free(pids);
    if (!rc && !all) {
        char reason[1024];
        log_reason(dir, reason, sizeof reason);
        snprintf(why, n, "valgrind wrote no callgrind output in %s%s%s", dir,
                 reason[0] ? ": " : "", reason);
        rc = -1;
    }
    if (rc) {
        ptc_fullpt_free(all);
        return -1;
    }
    all->processes = (unsigned)npids;
    *out = all;
    return 0;
}

/* When valgrind itself gave up, its log says why; the usual case gets what to do. */
static void explain_valgrind(const char *dir, long pid, char *why, size_t n)
{
    char path[4200], buf[65536];
    snprintf(path, sizeof path, "%s/%s%ld", dir, NAME_LOG, pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[got] = 0;
    if (strstr(buf, "debuginfo reader: Possibly corrupted debuginfo"))
        snprintf(why, n, "valgrind cannot read the program's debug information (valgrind 3.19 "
                         "gives up on clang 14's default DWARF 5): rebuild it with -gdwarf-4, "
                         "or without -g");
    else if (strstr(buf, "I can't recover") || strstr(buf, "Giving up"))
        snprintf(why, n, "valgrind gave up on the program (run it under valgrind "
                         "--tool=callgrind yourself to see why)");
}

int ptc_fullpt_collect(const char *const *argv, const char *workdir,
                       struct ptc_fullpt_profile **out, char *why, size_t n)
{
    *out = NULL;
    char vg[4096], prog[4096], dir[4096];
    if (!argv || !argv[0]) {
        snprintf(why, n, "no program to run");
        return -1;
    }
    if (fpt_which("valgrind", vg, sizeof vg)) {
        snprintf(why, n, "valgrind not found in PATH (the full-PT estimate counts branches "
                         "with its callgrind tool): apt-get install valgrind, or run "
                         "scripts/setup.sh");
        return -1;
    }
    if (!fpt_objdump(prog, sizeof prog)) {
        snprintf(why, n, "objdump not found (it tells direct from indirect branches): "
                         "apt-get install binutils, or set PTCALL_OBJDUMP");
        return -1;
    }
    if (fpt_which(argv[0], prog, sizeof prog)) {
        snprintf(why, n, "cannot run %s: not found or not executable", argv[0]);
        return -1;
    }
    const char *base = workdir;
    if (!base && (!(base = getenv("TMPDIR")) || !*base))
        base = "/tmp";
    if ((size_t)snprintf(dir, sizeof dir, "%s/%s", base,
                         workdir ? "fullpt.XXXXXX" : "ptcall-fullpt.XXXXXX") >= sizeof dir - 64 ||
        !mkdtemp(dir)) {
        snprintf(why, n, "cannot make a directory in %s for valgrind's output: %s", base,
                 strerror(errno));
        return -1;
    }
    /* the program may change directory: valgrind's file names must be absolute */
    char *abs = realpath(dir, NULL);
    if (!abs || strlen(abs) >= sizeof dir) {
        snprintf(why, n, "cannot resolve %s: %s", dir, strerror(errno));
        free(abs);
        rmdir(dir);
        return -1;
    }
    strcpy(dir, abs);
    free(abs);
    char logopt[4200], outopt[4200], recs[32];
    snprintf(logopt, sizeof logopt, "--log-file=%s/%s%%p", dir, NAME_LOG);
    snprintf(outopt, sizeof outopt, "--callgrind-out-file=%s/%s%%p", dir, NAME_CG);
    snprintf(recs, sizeof recs, "--separate-recs=%d", PTC_FULLPT_RSTACK + 1);
    const char *fixed[] = {vg, "--tool=callgrind", "--dump-instr=yes", "--collect-jumps=yes",
                           "--skip-plt=no", recs, "--show-below-main=yes", "--trace-children=yes",
                           "--dump-before=*_Fork", "--dump-before=__libc_fork",
                           "--dump-before=*vfork", "-v", "-v", logopt, outopt, "--"};
    size_t nfixed = sizeof fixed / sizeof *fixed, nargs = 0;
    while (argv[nargs])
        nargs++;
    const char **args = calloc(nfixed + nargs + 1, sizeof *args);
    if (!args) {
        snprintf(why, n, "out of memory");
        rmdir(dir);
        return -1;
    }
    memcpy(args, fixed, sizeof fixed);
    memcpy(args + nfixed, argv, nargs * sizeof *args);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, n, "fork: %s", strerror(errno));
        free(args);
        rmdir(dir);
        return -1;
    }
    if (pid == 0) {
        execv(vg, (char *const *)args);
        _exit(127);
    }
    free(args);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            snprintf(why, n, "waitpid: %s", strerror(errno));
            return -1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    int rc = read_outputs(dir, (long)pid, out, why, n);
    if (rc)
        explain_valgrind(dir, (long)pid, why, n);
    if (!rc) {
        (*out)->exit_status = st;
        (*out)->run_seconds =
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        if (workdir && !((*out)->workdir = strdup(dir))) {
            ptc_fullpt_free(*out);
            *out = NULL;
            snprintf(why, n, "out of memory");
            rc = -1;
        }
    }
    if (!workdir)
        remove_dir(dir);
    return rc;
}
