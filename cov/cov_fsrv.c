/* Running the target over inputs: the client of the runtime's fork server (protocol v1,
 * include/ptcall/forkserver.h, docs/cov.md), and one exec per input for targets whose
 * runtime does not answer. Either way the counters come back through a memfd the runtime
 * lays out (counts_format.h) and this side maps: no trace, no file per input.
 *
 * Inputs reach the target through one work file per runner: its path replaces "@@" in the
 * command line, or it is the target's fd 0. The file is rewritten in place before each run
 * (write_input: pwrite, a shorter input cuts the old tail, lseek to 0 for stdin): the fork
 * server's children share the description the server inherited, so resetting the offset here
 * resets it for the next child. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cov.h"
#include "ptcall/forkserver.h"

extern char **environ;

#define COUNTS_FD 197               /* the target's descriptor for the counts memfd */
#define HELLO_MS 20000u             /* start-up (dynamic linking, constructors) of a big target */

struct cov_runner {
    const struct cov_target *t;
    struct cov_data *d;
    int fs;                         /* the fork server answers */
    pid_t server;
    int ctl, st;                    /* our ends: write commands, read pids and statuses */
    int counts_fd;
    void *map;
    size_t map_size;
    struct cov_counts counts;
    uint64_t *fmap;                 /* per function of d: its counter, UINT64_MAX: none */
    uint64_t *bmap;                 /* per block of d: its block counter, UINT64_MAX: none */
    int input_fd, log_fd, stdin_mode;
    size_t input_len;               /* the work file's size now */
    char input_path[4096], log_path[4096];
    char **argv, **envp;
    size_t env_own;
    int restarts;
    unsigned runs;
    int cfr_ok;                     /* copy_file_range works from the inputs to the work file */
    char *copy_buf;                 /* else COPY_BUF bytes at a time */
};

#define COPY_BUF (64u << 10)

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* ---- environment and argv, made before any fork (the child only dup2s and execs) ----- */

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

static char **make_envp(const struct cov_target *t, int forkserver, size_t *own_out)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **e = calloc(n + 7, sizeof(*e));
    if (!e)
        return NULL;
    size_t k = 0;
    const char *pre = NULL;
    int bind_set = 0;
    for (size_t i = 0; i < n; i++) {
        if (starts(environ[i], "LD_PRELOAD="))
            pre = environ[i] + 11;
        else if (!starts(environ[i], PTCFS_ENV "=") && !starts(environ[i], PTCFS_COUNTS_ENV "=") &&
                 !starts(environ[i], PTCFS_DEFER_ENV "=") &&
                 !starts(environ[i], PTCFS_HARNESS_ENV "="))
            e[k++] = environ[i];
        bind_set |= starts(environ[i], "LD_BIND_NOW=") || starts(environ[i], "LD_BIND_LAZY=");
    }
    /* the allocated strings are the last ones (free_envp) */
    size_t own = k;
    int bad = 0;
    if (t->runtime && asprintf(&e[k++], "LD_PRELOAD=%s%s%s", t->runtime, pre && *pre ? ":" : "",
                               pre && *pre ? pre : "") < 0)
        bad = 1;
    else if (!t->runtime && pre && asprintf(&e[k++], "LD_PRELOAD=%s", pre) < 0)
        bad = 1;
    if (!bad && asprintf(&e[k++], PTCFS_COUNTS_ENV "=%d", COUNTS_FD) < 0)
        bad = 1;
    if (!bad && forkserver &&
        asprintf(&e[k++], PTCFS_ENV "=%d,%d", PTCFS_CTL_FD, PTCFS_ST_FD) < 0)
        bad = 1;
    /* Every symbol bound once in the server (as AFL++ does): with lazy binding each child
     * resolves the functions it calls first all over again, page faults of the dynamic
     * linker's code and data included, and its resolutions die with it. Not for exec per
     * input, where binding everything at each start costs more than it saves;
     * LD_BIND_LAZY (AFL++'s convention) or LD_BIND_NOW in our environment leave it alone. */
    if (!bad && forkserver && !bind_set && !(e[k++] = strdup("LD_BIND_NOW=1")))
        bad = 1;
    if (!bad && forkserver && t->defer && !(e[k++] = strdup(PTCFS_DEFER_ENV "=1")))
        bad = 1;
    /* the fork server at the harness: the child reads its input from the work file there */
    if (!bad && forkserver && t->harness_fork &&
        asprintf(&e[k++], PTCFS_HARNESS_ENV "=%d", PTCFS_INPUT_FD) < 0)
        bad = 1;
    e[k] = NULL;
    if (bad) {
        e[k - 1] = NULL;
        for (size_t i = own; e[i]; i++)
            free(e[i]);
        free(e);
        return NULL;
    }
    *own_out = own;   /* the strings from here on are ours to free */
    return e;
}

static void free_envp(char **e, size_t own)
{
    if (!e)
        return;
    for (size_t i = own; e[i]; i++)
        free(e[i]);
    free(e);
}

/* ---- processes -------------------------------------------------------------------- */

/* Forks the target: stdin the input file (or /dev/null with @@), stdout to /dev/null,
 * stderr to the runner's log, the counts memfd and the protocol pipes on their numbers. */
static pid_t spawn(struct cov_runner *r, int ctl_rd, int st_wr)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    /* child: async-signal-safe calls only (the tool may run several runner threads) */
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0)
        _exit(126);
    if (dup2(r->stdin_mode ? r->input_fd : devnull, 0) < 0 || dup2(devnull, 1) < 0 ||
        dup2(r->log_fd >= 0 ? r->log_fd : devnull, 2) < 0 || dup2(r->counts_fd, COUNTS_FD) < 0)
        _exit(126);
    if (ctl_rd >= 0 && (dup2(ctl_rd, PTCFS_CTL_FD) < 0 || dup2(st_wr, PTCFS_ST_FD) < 0))
        _exit(126);
    if (ctl_rd >= 0 && r->t->harness_fork && dup2(r->input_fd, PTCFS_INPUT_FD) < 0)
        _exit(126);
    /* a new process group: a timeout kills whatever the target started too */
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    execve(r->argv[0], r->argv, r->envp);
    _exit(127);
}

/* Reads a u32 from fd within ms (UINT32_MAX: no limit). 1 read, 0 EOF, -ETIMEDOUT, or -errno. */
static int read_u32(int fd, uint32_t *v, uint32_t ms)
{
    size_t got = 0;
    uint64_t deadline = ms == UINT32_MAX ? 0 : now_us() + (uint64_t)ms * 1000u;
    while (got < 4) {
        if (deadline) {
            uint64_t now = now_us();
            if (now >= deadline)
                return -ETIMEDOUT;
            struct pollfd p = {fd, POLLIN, 0};
            int pr = poll(&p, 1, (int)((deadline - now + 999) / 1000));
            if (pr < 0 && errno != EINTR)
                return -errno;
            if (pr <= 0)
                continue;
        }
        ssize_t n = read(fd, (char *)v + got, 4 - got);
        if (n == 0)
            return got ? -EPIPE : 0;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        got += (size_t)n;
    }
    return 1;
}

static int write_u32(int fd, uint32_t v)
{
    for (;;) {
        ssize_t n = write(fd, &v, 4);
        if (n == 4)
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 ? -errno : -EPIPE;
    }
}

static void reap(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {
    }
}

/* The last line the target wrote on stderr, for messages. */
static void log_tail(struct cov_runner *r, char *out, size_t n)
{
    out[0] = 0;
    if (r->log_fd < 0)
        return;
    char buf[512];
    off_t end = lseek(r->log_fd, 0, SEEK_END);
    off_t from = end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0;
    ssize_t k = pread(r->log_fd, buf, sizeof(buf) - 1, from);
    if (k <= 0)
        return;
    buf[k] = 0;
    while (k > 0 && (buf[k - 1] == '\n' || buf[k - 1] == '\r'))
        buf[--k] = 0;
    char *nl = strrchr(buf, '\n');
    snprintf(out, n, ": it said '%s'", nl ? nl + 1 : buf);
}

/* ---- the counts mapping ---------------------------------------------------------- */

static void unmap(struct cov_runner *r)
{
    cov_counts_free(&r->counts);
    if (r->map)
        munmap(r->map, r->map_size);
    r->map = NULL;
    r->map_size = 0;
}

/* Maps the counts file as the runtime laid it out and matches its modules to d's
 * functions (loading, the first time, instrumented libraries d does not list yet). */
static int map_counts(struct cov_runner *r, int load_modules, char *why, size_t n)
{
    unmap(r);
    struct stat st;
    if (fstat(r->counts_fd, &st))
        return -errno;
    if (st.st_size == 0) {
        snprintf(why, n, "the target did not lay out the counts file: libptcall.so was not "
                         "loaded, or it stopped before main");
        return -ENODATA;
    }
    r->map_size = (size_t)st.st_size;
    r->map = mmap(NULL, r->map_size, PROT_READ, MAP_SHARED, r->counts_fd, 0);
    if (r->map == MAP_FAILED) {
        r->map = NULL;
        int e = errno;
        snprintf(why, n, "cannot map the counts file: %s", strerror(e));
        return -e;
    }
    int rc = cov_counts_parse(r->map, r->map_size, &r->counts, why, n);
    if (rc)
        return rc;
    if (load_modules) {
        for (uint32_t k = 0; k < r->counts.nmodules; k++) {
            const struct cov_counts_module *cm = &r->counts.modules[k];
            uint32_t m = 0;
            while (m < r->d->nmodules && r->d->modules[m].identity != cm->identity)
                m++;
            char w[512];
            if (m == r->d->nmodules && cm->path[0] &&
                cov_map_load(r->d, cm->path, w, sizeof(w)) == -ENOMEM) {
                snprintf(why, n, "out of memory");
                return -ENOMEM;
            }
        }
    }
    if (!r->fmap) {
        if (!(r->fmap = malloc(((size_t)r->d->nfuncs + 1) * sizeof(*r->fmap)))) {
            snprintf(why, n, "out of memory");
            return -ENOMEM;
        }
    }
    if (!r->bmap && !(r->bmap = malloc(((size_t)r->d->nblocks + 1) * sizeof(*r->bmap)))) {
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    uint32_t mismatched;
    char bwhy[512];
    /* a module whose blocks cannot be matched still has its functions: its blocks are left
     * out (the runtime said why on the target's stderr) */
    cov_counts_match_blocks(&r->counts, r->d, r->bmap, &mismatched, bwhy, sizeof(bwhy));
    return cov_counts_match(&r->counts, r->d, r->fmap, why, n);
}

/* The blocks the input reached (block counters, map v7). 0 or -ENOMEM. */
static int collect_blocks(struct cov_runner *r, struct cov_result *res)
{
    uint32_t cap = 0;
    res->bhits = NULL;
    res->nbhits = 0;
    if (!r->counts.blocks)
        return 0;
    for (uint32_t i = 0; i < r->d->nblocks; i++) {
        if (r->bmap[i] == UINT64_MAX)
            continue;
        uint64_t c = r->counts.blocks[r->bmap[i]];
        if (!c)
            continue;
        if (res->nbhits == cap) {
            cap = cap ? cap * 2 : 256;
            struct cov_bhit *h = realloc(res->bhits, cap * sizeof(*h));
            if (!h) {
                free(res->bhits);
                res->bhits = NULL;
                res->nbhits = 0;
                return -ENOMEM;
            }
            res->bhits = h;
        }
        res->bhits[res->nbhits].block = i;
        res->bhits[res->nbhits++].count = c;
    }
    return 0;
}

static int collect(struct cov_runner *r, struct cov_result *res)
{
    uint32_t cap = 0;
    res->hits = NULL;
    res->nhits = 0;
    for (uint32_t i = 0; i < r->d->nfuncs; i++) {
        if (r->fmap[i] == UINT64_MAX)
            continue;
        uint64_t c = r->counts.counters[r->fmap[i]];
        if (!c)
            continue;
        if (res->nhits == cap) {
            cap = cap ? cap * 2 : 64;
            struct cov_hit *h = realloc(res->hits, cap * sizeof(*h));
            if (!h) {
                free(res->hits);
                res->hits = NULL;
                res->nhits = 0;
                return -ENOMEM;
            }
            res->hits = h;
        }
        res->hits[res->nhits].func = i;
        res->hits[res->nhits++].count = c;
    }
    return collect_blocks(r, res);
}

/* ---- the fork server ------------------------------------------------------------- */

static void stop_server(struct cov_runner *r)
{
    if (r->ctl >= 0)
        close(r->ctl);   /* EOF on ctl: the server exits */
    if (r->st >= 0)
        close(r->st);
    r->ctl = r->st = -1;
    if (r->server > 0) {
        /* it exits at once on EOF; a server stuck elsewhere is killed */
        for (int i = 0; i < 100; i++) {
            pid_t w = waitpid(r->server, NULL, WNOHANG);
            if (w == r->server || (w < 0 && errno != EINTR)) {
                r->server = 0;
                break;
            }
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
        reap(r->server);
        r->server = 0;
    }
}

/* 1: the server said hello; 0: the target does not serve (runs exec per input); <0: error. */
static int start_server(struct cov_runner *r, int first, char *why, size_t n)
{
    int ctl[2], st[2];
    if (pipe2(ctl, O_CLOEXEC))
        return -errno;
    if (pipe2(st, O_CLOEXEC)) {
        close(ctl[0]);
        close(ctl[1]);
        return -errno;
    }
    if (ftruncate(r->counts_fd, 0) == 0 && r->log_fd >= 0)
        (void)ftruncate(r->log_fd, 0);
    unmap(r);
    pid_t pid = spawn(r, ctl[0], st[1]);
    close(ctl[0]);
    close(st[1]);
    if (pid < 0) {
        int e = errno;
        close(ctl[1]);
        close(st[0]);
        snprintf(why, n, "cannot fork: %s", strerror(e));
        return -e;
    }
    r->server = pid;
    r->ctl = ctl[1];
    r->st = st[0];
    uint32_t hello = 0;
    int rc = read_u32(r->st, &hello, HELLO_MS);
    if (rc == 1 && hello == PTCFS_HELLO) {
        rc = map_counts(r, first, why, n);
        if (rc) {
            stop_server(r);
            return rc;
        }
        return 1;
    }
    /* no hello: a runtime without the fork server, or a target that ran main at once */
    int status = 0;
    if (rc == -ETIMEDOUT) {
        kill(pid, SIGKILL);
    }
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r->server = 0;
    stop_server(r);
    char said[600];
    log_tail(r, said, sizeof(said));
    if (rc == 1 && hello == PTCFS_ERROR) {
        snprintf(why, n, "the target's fork server could not start%s", said);
        return -EPROTO;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
        snprintf(why, n, "cannot run %s%s", r->argv[0], said);
        return -ENOEXEC;
    }
    if (rc == 1) {
        snprintf(why, n, "the target answered 0x%08x, not the fork server's hello", hello);
        return -EPROTO;
    }
    /* Killed by a signal with the counts file never laid out: the runtime's pre-main point
     * (after every constructor) was not reached, so the target died before main, in a
     * constructor or the dynamic linker, before any input. It read "did not start a fork
     * server", and each input then ran (and died) the same way. */
    struct stat cst;
    if (rc != -ETIMEDOUT && WIFSIGNALED(status) && fstat(r->counts_fd, &cst) == 0 &&
        cst.st_size == 0) {
        int sig = WTERMSIG(status);
        snprintf(why, n,
                 "the target died by signal %d (%s) before main, before its fork server "
                 "started: a constructor or the dynamic linker crashed, before any input was "
                 "read%s; run it by hand (%s < /dev/null, or under gdb) and fix that first",
                 sig, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", said, r->argv[0]);
        return -ECHILD;
    }
    return 0;
}

/* How an input ended, from its wait status, by either way of running it. */
static void set_outcome(struct cov_result *res, int timed_out, int status, uint32_t timeout_ms)
{
    if (timed_out) {
        res->outcome = COV_TIMEOUT;
        res->value = (int32_t)timeout_ms;
    } else if (WIFSIGNALED(status)) {
        res->outcome = COV_SIGNALED;
        res->value = WTERMSIG(status);
    } else {
        res->outcome = COV_EXITED;
        res->value = WEXITSTATUS(status);
    }
}

/* The processes left in the run's process group pgid once its first process ended:
 * orphans, which PR_SET_CHILD_SUBREAPER gives to this process. The ones that ended are
 * reaped; those still running are killed and reaped, and counted: a grandchild that goes on
 * calling instrumented code would otherwise add its calls to the next input's counters.
 * Without the subreaper (waitpid: ECHILD) the group is waited for a moment instead. */
static uint32_t sweep_group(pid_t pgid)
{
    while (waitpid(-pgid, NULL, WNOHANG) > 0) {
    }
    if (kill(-pgid, 0) != 0)
        return 0;   /* ESRCH: nobody left */
    kill(-pgid, SIGKILL);
    uint32_t left = 0;
    for (;;) {
        pid_t w = waitpid(-pgid, NULL, 0);
        if (w > 0) {
            left++;
            continue;
        }
        if (errno == EINTR)
            continue;
        break;
    }
    for (int i = 0; i < 100 && kill(-pgid, 0) == 0; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    return left ? left : 1;
}

static int run_fs(struct cov_runner *r, struct cov_result *res, char *why, size_t n)
{
    uint64_t t0 = now_us();
    uint32_t pid = 0, status = 0;
    int rc = write_u32(r->ctl, PTCFS_CMD_RUN);
    if (rc == 0)
        rc = read_u32(r->st, &pid, HELLO_MS);
    if (rc != 1 || pid == PTCFS_ERROR || pid == 0) {
        snprintf(why, n, "the fork server stopped answering");
        return -EPIPE;
    }
    int timed_out = 0;
    rc = read_u32(r->st, &status, r->t->timeout_ms ? r->t->timeout_ms : UINT32_MAX);
    if (rc == -ETIMEDOUT) {
        timed_out = 1;
        kill(-(pid_t)pid, SIGKILL);   /* the child's group, if it made one */
        kill((pid_t)pid, SIGKILL);
        rc = read_u32(r->st, &status, UINT32_MAX);
    }
    if (rc != 1) {
        snprintf(why, n, "the fork server stopped answering");
        return -EPIPE;
    }
    res->exec_us = now_us() - t0;
    set_outcome(res, timed_out, (int)status, r->t->timeout_ms);
    res->left_running = sweep_group((pid_t)pid);   /* the child leads its own group */
    return collect(r, res);
}

/* ---- exec per input -------------------------------------------------------------- */

/* Waits for pid at most ms (0: no limit); 1 when it ended (status set), 0 on timeout. */
static int wait_for(pid_t pid, uint32_t ms, int *status)
{
#ifdef SYS_pidfd_open
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0) {
        struct pollfd p = {pfd, POLLIN, 0};
        int pr;
        uint64_t deadline = now_us() + (uint64_t)ms * 1000u;
        do {
            uint64_t now = now_us();
            int left = ms ? (now >= deadline ? 0 : (int)((deadline - now + 999) / 1000)) : -1;
            pr = poll(&p, 1, left);
        } while (pr < 0 && errno == EINTR);
        close(pfd);
        if (pr == 0)
            return 0;
        while (waitpid(pid, status, 0) < 0 && errno == EINTR) {
        }
        return 1;
    }
#endif
    /* kernels before 5.3: poll the child */
    uint64_t deadline = now_us() + (uint64_t)ms * 1000u;
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid || (w < 0 && errno != EINTR))
            return 1;
        if (ms && now_us() >= deadline)
            return 0;
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

static int run_exec(struct cov_runner *r, struct cov_result *res, char *why, size_t n)
{
    unmap(r);
    if (ftruncate(r->counts_fd, 0))
        return -errno;
    if (r->log_fd >= 0)
        (void)ftruncate(r->log_fd, 0);
    uint64_t t0 = now_us();
    pid_t pid = spawn(r, -1, -1);
    if (pid < 0) {
        int e = errno;
        snprintf(why, n, "cannot fork: %s", strerror(e));
        return -e;
    }
    int status = 0;
    int timed_out = !wait_for(pid, r->t->timeout_ms, &status);
    if (timed_out) {
        kill(-pid, SIGKILL);
        reap(pid);
    }
    res->left_running = sweep_group(pid);   /* spawn made it a group */
    set_outcome(res, timed_out, status, r->t->timeout_ms);
    res->exec_us = now_us() - t0;
    if (res->outcome == COV_EXITED && res->value == 127) {
        struct stat st;
        if (fstat(r->counts_fd, &st) == 0 && st.st_size == 0) {
            snprintf(why, n, "cannot run %s", r->argv[0]);
            return -ENOEXEC;
        }
    }
    int rc = map_counts(r, 0, why, n);
    if (rc == -ENODATA) {
        /* died before main (or before the runtime started): nothing counted */
        res->nhits = 0;
        res->hits = NULL;
        res->nbhits = 0;
        res->bhits = NULL;
        return 0;
    }
    return rc ? rc : collect(r, res);
}

/* ---- the runner ------------------------------------------------------------------- */

int cov_runner_forkserver(const struct cov_runner *r)
{
    return r->fs;
}

int cov_runner_server_pid(const struct cov_runner *r)
{
    return r->fs ? (int)r->server : 0;
}

void cov_runner_stop(struct cov_runner *r)
{
    if (!r)
        return;
    stop_server(r);
    unmap(r);
    if (r->counts_fd >= 0)
        close(r->counts_fd);
    if (r->input_fd >= 0) {
        close(r->input_fd);
        unlink(r->input_path);
    }
    if (r->log_fd >= 0) {
        close(r->log_fd);
        unlink(r->log_path);
    }
    if (r->argv) {
        for (size_t i = 0; r->argv[i]; i++)
            free(r->argv[i]);
        free(r->argv);
    }
    free_envp(r->envp, r->env_own);
    free(r->fmap);
    free(r->bmap);
    free(r->copy_buf);
    free(r);
}

int cov_runner_start(const struct cov_target *t, struct cov_data *d, const char *workdir,
                     int index, struct cov_runner **out, char *why, size_t n)
{
    struct cov_runner *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    r->t = t;
    r->d = d;
    r->ctl = r->st = r->counts_fd = r->input_fd = r->log_fd = -1;
    r->cfr_ok = 1;
    snprintf(r->input_path, sizeof(r->input_path), "%s/input-%d", workdir, index);
    snprintf(r->log_path, sizeof(r->log_path), "%s/stderr-%d", workdir, index);
    int rc = 0;
    size_t argc = 0;
    while (t->argv[argc])
        argc++;
    r->argv = calloc(argc + 1, sizeof(*r->argv));
    r->stdin_mode = 1;
    for (size_t i = 0; r->argv && i < argc; i++) {
        int at = !strcmp(t->argv[i], "@@");
        r->stdin_mode &= !at;
        if (!(r->argv[i] = strdup(at ? r->input_path : t->argv[i])))
            rc = -ENOMEM;
    }
    if (!r->argv || rc) {
        cov_runner_stop(r);
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    r->input_fd = open(r->input_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    r->log_fd = open(r->log_path, O_RDWR | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    r->counts_fd = memfd_create("ptcall-counts", MFD_CLOEXEC);
    if (r->input_fd < 0 || r->counts_fd < 0) {
        int e = errno;
        snprintf(why, n, "cannot create %s or the counts memfd: %s", r->input_path, strerror(e));
        cov_runner_stop(r);
        return -e;
    }
    if (!t->force_exec) {
        r->envp = make_envp(t, 1, &r->env_own);
        rc = r->envp ? start_server(r, index == 0, why, n) : -ENOMEM;
        if (rc < 0) {
            if (rc == -ENOMEM)
                snprintf(why, n, "out of memory");
            cov_runner_stop(r);
            return rc;
        }
        r->fs = rc == 1;   /* the fork server's environment stays for restarts */
    }
    if (!r->fs) {
        /* exec per input: the same environment without PTCALL_FORKSERVER */
        free_envp(r->envp, r->env_own);
        if (!(r->envp = make_envp(t, 0, &r->env_own))) {
            cov_runner_stop(r);
            snprintf(why, n, "out of memory");
            return -ENOMEM;
        }
    }
    *out = r;
    return 0;
}

/* Copies [off, end) of fd to the work file at the same offsets: copy_file_range (the kernel
 * moves the bytes), else pread/pwrite through the runner's 64 KiB buffer. */
static int copy_range(struct cov_runner *r, int fd, off_t off, off_t end)
{
    while (off < end) {
        size_t want = (size_t)(end - off < (1 << 30) ? end - off : (1 << 30));
        ssize_t k = -1;
        if (r->cfr_ok) {
            loff_t in = off, out = off;
            k = copy_file_range(fd, &in, r->input_fd, &out, want, 0);
            if (k < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
                          errno == EOPNOTSUPP || errno == EBADF)) {
                r->cfr_ok = 0;   /* another file system, or an old kernel */
                continue;
            }
        } else {
            if (!r->copy_buf && !(r->copy_buf = malloc(COPY_BUF)))
                return -ENOMEM;
            k = pread(fd, r->copy_buf, want < COPY_BUF ? want : COPY_BUF, off);
            if (k > 0) {
                ssize_t w = pwrite(r->input_fd, r->copy_buf, (size_t)k, off);
                if (w != k)
                    return w < 0 ? -errno : -EIO;
            }
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -errno;
        if (k == 0)
            return -ENODATA;   /* the file shrank since it was listed */
        off += k;
    }
    return 0;
}

/* Rewrites the work file with one input, in place: the data first, then the old tail cut
 * off only when the file was longer. Truncating to 0 before each write cost a journalled
 * truncate and a sleep in the kernel per input (ext4), more than the rest of the write. An
 * input with holes (a sparse file) is the exception: the work file is emptied and only its
 * data ranges copied, so a 2 GiB sparse input costs neither 2 GiB of memory nor of disk.
 * The offset matters only to a target reading its stdin (the shared description); with @@
 * the target opens the file itself. Returns 0, -EIO... of the work file, or the input's
 * read error as -ENODATA/-errno with *in_err set. */
static int write_input(struct cov_runner *r, int fd, uint64_t len, int *in_err)
{
    off_t end = (off_t)len;
    off_t hole = len ? lseek(fd, 0, SEEK_HOLE) : 0;
    int sparse = hole >= 0 && hole < end;
    int rc = 0;
    if (sparse) {
        if (ftruncate(r->input_fd, 0))
            return -errno;
        r->input_len = 0;
        for (off_t at = 0; at < end && !rc;) {
            off_t data = lseek(fd, at, SEEK_DATA);
            if (data < 0 || data >= end)
                break;   /* ENXIO: holes to the end */
            off_t h = lseek(fd, data, SEEK_HOLE);
            h = h < 0 || h > end ? end : h;
            rc = copy_range(r, fd, data, h);
            at = h;
        }
    } else {
        rc = copy_range(r, fd, 0, end);
    }
    if (rc) {
        if (len > r->input_len)
            r->input_len = len; /* part of it may be in the file: cut it next time */
        *in_err = 1;
        return rc;
    }
    if ((sparse || r->input_len > len) && ftruncate(r->input_fd, end))
        return -errno;
    r->input_len = len;
    if (r->stdin_mode && lseek(r->input_fd, 0, SEEK_SET) < 0)
        return -errno;
    return 0;
}

/* A forgotten "@@": the target's fd 0 shares the work file's description with ours, so a
 * target that read any of its stdin moved our offset; still 0 after the run means it never
 * read it (docs/cov.md, "Harness shapes"). */
static void note_stdin(struct cov_runner *r, uint64_t len, struct cov_result *res)
{
    res->stdin_unread = r->stdin_mode && len > 0 && lseek(r->input_fd, 0, SEEK_CUR) == 0;
}

int cov_runner_run(struct cov_runner *r, int fd, uint64_t len, struct cov_result *res,
                   char *why, size_t n)
{
    memset(res, 0, sizeof(*res));
    int in_err = 0;
    int rc = write_input(r, fd, len, &in_err);
    if (rc && in_err && rc != -ENOMEM) {
        /* the input could not be copied (it shrank, a read error, a full disk): recorded as
         * not run (error, the errno), and the runner goes on */
        res->outcome = COV_ERROR;
        res->value = -rc;
        return 0;
    }
    if (rc) {
        snprintf(why, n, "cannot write %s: %s", r->input_path, strerror(-rc));
        return rc;
    }
    /* the target's stderr matters only when it fails to start: kept from growing without a
     * system call per input */
    if (r->log_fd >= 0 && (++r->runs & 255) == 0)
        (void)ftruncate(r->log_fd, 0);
    if (!r->fs) {
        rc = run_exec(r, res, why, n);
        note_stdin(r, len, res);
        return rc;
    }
    rc = run_fs(r, res, why, n);
    if (rc != -EPIPE) {
        note_stdin(r, len, res);
        return rc;
    }
    /* the server itself died (the program's own code forked or killed it): start it again,
     * and run the input once more, a few times per runner at most */
    if (r->restarts++ >= 16)
        return rc;
    stop_server(r);
    rc = start_server(r, 0, why, n);
    if (rc != 1)
        return rc < 0 ? rc : -EPIPE;
    memset(res, 0, sizeof(*res));
    return run_fs(r, res, why, n);
}
