/* `ptcall record --ring SIZE [--trigger SPEC]` (docs/runtime.md, *Flight recorder*): the
 * command runs with the runtime in ring mode, which writes nothing until a snapshot; each
 * snapshot is a trace file of its own (ptcall-snap.PID.N.trace) in the snapshot directory.
 * record makes no trace file itself: it checks the directory before the command starts and
 * lists the snapshots written during the run when it ends. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "record_clock.h"
#include "record_ring.h"

/* The snapshot directory: PTCALL_SNAPSHOT_DIR as set, else -o's directory, absolute. */
static int snapshot_dir(const struct record_options *o, char *dir, size_t n)
{
    const char *env = getenv("PTCALL_SNAPSHOT_DIR");
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        return -1;
    const char *base = env && env[0] ? env : o->output;
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s%s%s", base[0] == '/' ? "" : cwd,
                 base[0] == '/' ? "" : "/", base) >= (int)sizeof(path))
        return -1;
    if (!(env && env[0])) { /* -o names a file: its directory */
        char *slash = strrchr(path, '/');
        if (slash == path)
            slash[1] = 0;
        else
            *slash = 0;
    }
    return snprintf(dir, n, "%s", path) < (int)n ? 0 : -1;
}

static int is_snapshot_name(const char *name)
{
    size_t l = strlen(name);
    return !strncmp(name, "ptcall-snap.", 12) && l > 18 && !strcmp(name + l - 6, ".trace");
}

/* Lists the snapshot files in dir modified at or after since (CLOCK_REALTIME). */
static unsigned list_snapshots(const char *dir, const struct timespec *since, int quiet)
{
    DIR *d = opendir(dir);
    unsigned n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_snapshot_name(e->d_name))
            continue;
        char p[PATH_MAX];
        struct stat st;
        if (snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) || lstat(p, &st) ||
            !S_ISREG(st.st_mode))
            continue;
        if (st.st_mtim.tv_sec < since->tv_sec ||
            (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec < since->tv_nsec))
            continue;
        if (!quiet)
            fprintf(stderr, "ptcall: snapshot %s\n", p);
        n++;
    }
    closedir(d);
    return n;
}

int record_ring(const struct record_options *o, const char *cmdpath, int *wait_status)
{
    char dir[PATH_MAX];
    if (snapshot_dir(o, dir, sizeof(dir)) < 0) {
        fprintf(stderr, "ptcall record: --ring: the snapshot directory's name is too long (or "
                        "the current directory is unknown); set PTCALL_SNAPSHOT_DIR\n");
        return -1;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "ptcall record: --ring: snapshots cannot be written in %s: %s; give -o "
                        "a file in a directory you may write, or set PTCALL_SNAPSHOT_DIR\n",
                dir, errno ? strerror(errno) : "not a directory");
        return -1;
    }
    if (preload_runtime(o) < 0)
        return -1;
    char buf[32];
    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->ring);
    setenv("PTCALL_BACKEND", "soft", 1);
    setenv("PTCALL_RING", buf, 1);
    setenv("PTCALL_SNAPSHOT_DIR", dir, 1);
    unsetenv("PTCALL_OUTPUT");
    unsetenv("PTCALL_COUNTS");
    unsetenv("PTCALL_MODE");
    setenv("PTCALL_TIMESTAMPS", o->timed ? "1" : "0", 1);
    set_clock_env(o);
    setenv("PTCALL_LEAF_EXITS", o->leaf_exits ? "1" : "0", 1);
    if (o->trigger)
        setenv("PTCALL_TRIGGER", o->trigger, 1);
    else
        unsetenv("PTCALL_TRIGGER");
    unsetenv("PTCALL_EXEC_PID");
    struct timespec start;
    clock_gettime(CLOCK_REALTIME, &start);
    start.tv_sec -= 1; /* file times may be a tick coarser than the clock */
    /* a snapshot is written by a child of the program (soft_ring.c), which may still be
     * writing when the program ends: it becomes ours, and is waited for */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "ptcall: cannot fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        execv(cmdpath, o->argv);
        fprintf(stderr, "ptcall: cannot run %s: %s\n", o->argv[0], strerror(errno));
        _exit(127);
    }
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_int, old_quit;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
        ;
    /* the snapshot writers left behind (their end signals nobody: __WALL) */
    for (int waited = 0; waited < 3000; waited++) {
        pid_t r;
        while ((r = waitpid(-1, NULL, WNOHANG | __WALL)) > 0)
            ;
        if (r < 0)
            break;
        usleep(10000);
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    *wait_status = ws;
    unsigned n = list_snapshots(dir, &start, o->quiet);
    if (!o->quiet)
        fprintf(stderr, "ptcall: flight recorder: %u snapshot%s written in %s%s\n", n,
                n == 1 ? "" : "s", dir,
                n ? "" : " (none was taken: ptcall_snapshot(), a crash or --trigger takes one)");
    return 0;
}
