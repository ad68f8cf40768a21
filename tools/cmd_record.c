/* ptcall record: run a command and record its function calls (docs/usage.md, docs/runtime.md).
 *
 * Soft backend: write the file header and RECORD_INFO, run the command with libptcall
 * preloaded and PTCALL_* set (the runtime in each traced process appends its chunks), wait,
 * append RECORD_END, check that something registered, print a summary. Intel PT: hand the
 * options to record_pt() (runtime/pt), if built in. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "budget.h"
#include "commands.h"
#include "options.h"
#include "record_budget_pt.h"
#include "ptc_chunk_write.h"
#include "ptc_crc.h"
#include "ptc_varint.h"
#include "ptc_record_options.h"
#include "ptc_rusage.h"
#include "ptcall/decode.h"
#include "ptcall/trace_format.h"
#include "record_clock.h"
#include "record_ring.h"

#ifndef PTCALL_RT_BUILD_PATH
#define PTCALL_RT_BUILD_PATH ""
#endif
#ifndef PTCALL_RT_INSTALL_REL
#define PTCALL_RT_INSTALL_REL "../lib/libptcall.so"
#endif

/* Finds COMMAND like execvp would. 0 with the path in out, or -errno. */
static int find_command(const char *cmd, char *out, size_t outsz)
{
    struct stat st;
    if (strchr(cmd, '/')) {
        if (stat(cmd, &st) != 0)
            return -errno;
        if (!S_ISREG(st.st_mode) || access(cmd, X_OK) != 0)
            return -EACCES;
        snprintf(out, outsz, "%s", cmd);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int found_noexec = 0;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        char cand[PATH_MAX];
        int w = len == 0 ? snprintf(cand, sizeof(cand), "%s", cmd)
                         : snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, path, cmd);
        if (w < (int)sizeof(cand) && stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                snprintf(out, outsz, "%s", cand);
                return 0;
            }
            found_noexec = 1;
        }
        path += len + (colon ? 1 : 0);
    }
    return found_noexec ? -EACCES : -ENOENT;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* libptcall.so: $PTCALL_RUNTIME, next to the install tree's bin/, the build tree, or the
 * build path compiled in. */
int find_runtime(char *out, size_t outsz) /* record_ring.h */
{
    const char *env = getenv("PTCALL_RUNTIME");
    if (env && *env) {
        snprintf(out, outsz, "%s", env);
        return file_exists(out) ? 0 : -1;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *rel[] = {PTCALL_RT_INSTALL_REL, "../runtime/libptcall.so"};
            for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                char cand[PATH_MAX];
                if (snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]) < (int)sizeof(cand) &&
                    file_exists(cand) && realpath(cand, out))
                    return 0;
            }
        }
    }
    if (PTCALL_RT_BUILD_PATH[0] && file_exists(PTCALL_RT_BUILD_PATH)) {
        snprintf(out, outsz, "%s", PTCALL_RT_BUILD_PATH);
        return 0;
    }
    return -1;
}

/* Puts libptcall.so first in LD_PRELOAD for the command: it registers the instrumented
 * objects and arms their call sites (both backends), and runs the software backend.
 * Programs linked with it find it anyway; a missing library is only a notice. */
int preload_runtime(const struct record_options *o) /* record_ring.h */
{
    char rt[PATH_MAX];
    if (find_runtime(rt, sizeof(rt)) != 0) {
        if (!o->quiet)
            fprintf(stderr, "ptcall: libptcall.so not found next to ptcall; only programs linked with "
                            "it will trace (set PTCALL_RUNTIME=/path/to/libptcall.so)\n");
        return 0;
    }
    const char *pre = getenv("LD_PRELOAD");
    size_t n = strlen(rt) + (pre ? strlen(pre) : 0) + 2;
    char *val = malloc(n);
    if (!val) {
        fprintf(stderr, "ptcall: out of memory\n");
        return -1;
    }
    snprintf(val, n, "%s%s%s", rt, pre && *pre ? ":" : "", pre && *pre ? pre : "");
    setenv("LD_PRELOAD", val, 1);
    free(val);
    return 0;
}

static uint64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct trace_summary {
    uint64_t events, dropped, waits, modules, processes, loss_chunks, event_bytes, file_bytes;
    uint64_t write_losses, write_lost_records; /* LOSS(WRITE): chunks the runtime could not write */
    uint64_t written;       /* event records in the file's SOFT_EVENTS chunks */
    uint64_t process_ends;  /* PROCESS_END chunks: processes that closed their trace */
    uint64_t execs;         /* PROCESS chunks of exec'd images: a new life of a pid already
                               counted (report counts processes by pid, so does the summary) */
    uint64_t counts_chunks, counted; /* counting mode: COUNTS chunks, calls they hold */
    uint64_t refused;       /* MODULE_REFUSED chunks: instrumented objects left untraced */
    uint64_t spawns;        /* SPAWN chunks: processes started by posix_spawn */
    uint64_t causes;        /* END_CAUSE chunks: processes a sanitizer stopped */
    char cause_first[200];  /* the first one said ("process PID was stopped by ...") */
    char refused_first[PTC_REFUSED_PATH_MAX + PTC_REFUSED_REASON_MAX]; /* "PATH: REASON" */
    int bad;
};

/* A process killed while its drain wrote a chunk (SIGKILL can stop the kernel between two
 * pages of a write) leaves the file ending inside that chunk, and a RECORD_END appended then
 * would read as the chunk's missing bytes: readers would lose it, and with it how the command
 * ended. Zeros up to the chunk's announced end make the cut chunk whole but failing its CRC
 * (readers refuse it and name --salvage, which skips it and reads on), and RECORD_END then
 * starts where a chunk may. Walks the chunk headers only. Returns the bytes added (0: the
 * file ends on a chunk boundary, or its end cannot be told; then nothing is changed). */
/* The largest chunk the runtime writes: an events chunk of the largest buffer (PTCALL_BUFFER
 * 256 MiB, twice that encoded), with room for its header. */
#define PTC_RUNTIME_MAX_CHUNK ((512u << 20) + 4096u)

/* Whether the chunk at byte at of fd is whole and passes its CRC. */
static int chunk_crc_ok(int fd, uint64_t at, uint16_t version_major)
{
    struct ptc_chunk_header h;
    if (pread(fd, &h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) ||
        h.payload_size > PTC_RUNTIME_MAX_CHUNK)
        return 0;
    uint8_t *p = malloc(h.payload_size ? h.payload_size : 1);
    int ok = p && pread(fd, p, h.payload_size, (off_t)(at + sizeof(h))) == (ssize_t)h.payload_size &&
             ptc_chunk_crc((const uint8_t *)&h, p, h.payload_size, version_major) == h.crc32;
    free(p);
    return ok;
}

static uint64_t pad_cut_chunk(int fd, uint64_t *cut_at)
{
    struct ptc_file_header fh;
    struct stat st;
    if (fstat(fd, &st) != 0 || pread(fd, &fh, sizeof(fh), 0) != (ssize_t)sizeof(fh) ||
        memcmp(fh.magic, PTC_FILE_MAGIC, 8) != 0 || fh.header_size < sizeof(fh) ||
        fh.header_size % 8)
        return 0;
    uint64_t size = (uint64_t)st.st_size, at = fh.header_size, prev = 0;
    while (at + sizeof(struct ptc_chunk_header) <= size) {
        struct ptc_chunk_header h;
        if (pread(fd, &h, sizeof(h), (off_t)at) != (ssize_t)sizeof(h) || h.type == 0 ||
            h.payload_size > (1u << 30))
            return 0; /* not a chunk header: damage the walk cannot size */
        uint64_t total = sizeof(h) + h.payload_size + ptc_chunk_padding(h.payload_size);
        if (at + total > size) {
            /* only a chunk the walk reached on true chunk boundaries: when chunks were
             * written after a cut one, the walk reads a header out of their bytes and would
             * pad up to whatever size it holds (321 MB on an 8 MB disk); the chunk before must
             * pass its CRC, and the cut one be no larger than the runtime writes */
            if (h.payload_size > PTC_RUNTIME_MAX_CHUNK ||
                (prev && !chunk_crc_ok(fd, prev, fh.version_major)))
                return 0;
            if (ftruncate(fd, (off_t)(at + total)) != 0)
                return 0;
            *cut_at = at;
            return at + total - size;
        }
        prev = at;
        at += total;
    }
    return 0;
}

/* The stub hits among an events chunk's records: its control records (a child's FORK, a
 * LOSS marker) are not events (the summary counted one more event per forked child than
 * report did). A payload that does not decode whole counts its header's figure. */
static uint64_t hit_records(const void *payload, uint32_t size, struct ptc_soft_events se)
{
    const uint8_t *p = (const uint8_t *)payload + sizeof(se), *end = (const uint8_t *)payload + size;
    uint64_t hits = 0, v = 0, operand = 0;
    for (uint32_t i = 0; i < se.num_records; i++) {
        if (ptc_varint_get(&p, end, &v))
            return se.num_records;
        if (v >= PTC_SOFT_ID_BASE)
            hits++;
        else if ((v == PTC_SOFT_LOSS || v == PTC_SOFT_FORK) && ptc_varint_get(&p, end, &operand))
            return se.num_records;
        if ((se.flags & PTC_SOFT_F_TIMED) && ptc_varint_get(&p, end, &operand))
            return se.num_records;
    }
    return hits;
}

/* Streams over the chunks: totals from PROCESS_END, counts of MODULE / LOSS. CRCs are
 * checked, so that a damaged chunk is not counted and the chunks after it are found where
 * they are (without them a chunk cut by a kill or a full disk made the rest read as chunks
 * at the wrong offsets): the summary counts what report --salvage reads. The chunk at byte
 * cut_at (UINT64_MAX: none) is one pad_cut_chunk filled: its header's counts are not there. */
static void summarize(const char *path, uint64_t cut_at, struct trace_summary *s)
{
    memset(s, 0, sizeof(*s));
    struct stat st;
    struct ptc_reader *r = NULL;
    if (stat(path, &st) != 0 || ptc_reader_open(&r, path) != 0) {
        if (r)
            ptc_reader_close(r);
        s->bad = 1;
        return;
    }
    s->file_bytes = (uint64_t)st.st_size;
    struct ptc_chunk c;
    int rc;
    while ((rc = ptc_reader_next(r, &c)) != 0) {
        if (rc < 0) {
            s->bad = 1;
            uint64_t skipped; /* the chunks after damage count too, as report --salvage reads */
            if (ptc_reader_resync(r, &skipped) > 0 || ptc_reader_can_continue(r))
                continue;
            break;
        }
        if (c.offset == cut_at)
            continue;
        const struct ptc_chunk_header *h = &c.h;
        if (h->type == PTC_CHUNK_PROCESS_END) {
            s->process_ends++;
            struct ptc_process_end e;
            if (h->payload_size >= sizeof(e)) {
                memcpy(&e, c.payload, sizeof(e));
                s->events += e.events;
                s->dropped += e.dropped;
                s->waits += e.waits;
            }
        } else if (h->type == PTC_CHUNK_MODULE) {
            s->modules++;
        } else if (h->type == PTC_CHUNK_SPAWN) {
            s->spawns++;
        } else if (h->type == PTC_CHUNK_END_CAUSE) {
            struct ptc_end_cause ec;
            const char *what = (const char *)c.payload + sizeof(ec);
            if (s->causes++ || h->payload_size <= sizeof(ec) ||
                !memchr(what, 0, h->payload_size - sizeof(ec)))
                continue;
            memcpy(&ec, c.payload, sizeof(ec));
            snprintf(s->cause_first, sizeof(s->cause_first),
                     "process %u was stopped by %.100s (exit status %d)", h->pid, what, ec.status);
        } else if (h->type == PTC_CHUNK_MODULE_REFUSED) {
            struct ptc_module_refused m;
            if (s->refused++ || h->payload_size < sizeof(m))
                continue;
            memcpy(&m, c.payload, sizeof(m));
            const char *path = (const char *)c.payload + sizeof(m);
            /* the decoder checks it whole; here only that the two strings are there */
            if (m.path_size && m.reason_size &&
                sizeof(m) + (uint64_t)m.path_size + m.reason_size == h->payload_size &&
                !path[m.path_size - 1] && !path[m.path_size + m.reason_size - 1])
                snprintf(s->refused_first, sizeof(s->refused_first), "%s: %s", path,
                         path + m.path_size);
        } else if (h->type == PTC_CHUNK_PROCESS) {
            s->processes++;
            struct ptc_process p;
            if (h->payload_size >= sizeof(p)) {
                memcpy(&p, c.payload, sizeof(p));
                s->execs += p.how == PTC_PROC_EXEC;
            }
        } else if (h->type == PTC_CHUNK_COUNTS) {
            s->counts_chunks++;
            struct ptc_counts k;
            if (h->payload_size >= sizeof(k)) {
                memcpy(&k, c.payload, sizeof(k));
                /* the calls: every uint64 between the module table and the label */
                uint64_t at = sizeof(k) + (uint64_t)k.num_modules * sizeof(struct ptc_counts_module);
                for (; at + 8 + k.label_size <= h->payload_size; at += 8) {
                    uint64_t n;
                    memcpy(&n, (const uint8_t *)c.payload + at, 8);
                    s->counted += n;
                }
            }
        } else if (h->type == PTC_CHUNK_LOSS) {
            s->loss_chunks++;
            struct ptc_loss l;
            if (h->payload_size >= sizeof(l)) {
                memcpy(&l, c.payload, sizeof(l));
                if (l.kind == PTC_LOSS_WRITE) {
                    s->write_losses++;
                    s->write_lost_records += l.count;
                }
            }
        } else if (h->type == PTC_CHUNK_SOFT_EVENTS) {
            if (h->payload_size > sizeof(struct ptc_soft_events)) {
                struct ptc_soft_events se;
                memcpy(&se, c.payload, sizeof(se));
                s->written += hit_records(c.payload, h->payload_size, se);
                s->event_bytes += h->payload_size - sizeof(struct ptc_soft_events);
            }
        }
    }
    ptc_reader_close(r);
}

/* `ptcall record`'s status when the command succeeded but its trace is incomplete (a full
 * disk, a process killed by SIGKILL): distinct from the command's own statuses, as
 * timeout(1)'s 124 is. */
#define PTCALL_EXIT_INCOMPLETE 125

static int exit_status_of(int ws)
{
    if (WIFEXITED(ws))
        return WEXITSTATUS(ws);
    if (WIFSIGNALED(ws))
        return 128 + WTERMSIG(ws);
    return 1;
}

/* The command's descendants still running after it ended (they were reparented to us): waits
 * up to grace_ms for them, reaping those that end, and returns how many still run (at least
 * 1 when some do and /proc cannot count them). */
static uint64_t wait_left_behind(unsigned grace_ms)
{
    for (unsigned waited = 0;; waited += 10) {
        pid_t r;
        while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
            ;
        if (r < 0) /* ECHILD: nobody left */
            return 0;
        if (waited >= grace_ms)
            break;
        usleep(10000);
    }
    char path[64], buf[4096];
    snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    uint64_t count = 0;
    for (ssize_t i = 0; i < n; i++)
        count += buf[i] == ' ';
    return count ? count : 1;
}

/* ---- signals sent to record: passed on to the command (docs/usage.md, "Stopping a
 * recording") -------------------------------------------------------------------------- *
 *
 * A service manager or a script stops `ptcall record` with kill: SIGTERM, SIGINT, SIGHUP.
 * Left to their default action they ended record alone: the command ran on, orphaned, and
 * the trace never got its RECORD_END. So record passes them on to the command and goes on
 * waiting for it, then finishes the trace as after any other end. A terminal's ^C, ^\ and
 * hangup (si_code SI_KERNEL) already reach the command, which is in the terminal's
 * foreground process group with record: those are not sent a second time. */
static const int forwarded_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
#define NUM_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))

static volatile sig_atomic_t forward_pid; /* the command until it is reaped, else 0 */

static void forward_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    pid_t p = forward_pid;
    if (p > 0 && si->si_code != SI_KERNEL)
        kill(p, sig);
    errno = saved;
}

static void forward_block(sigset_t *old)
{
    sigset_t m;
    sigemptyset(&m);
    for (size_t i = 0; i < NUM_FORWARDED; i++)
        sigaddset(&m, forwarded_signals[i]);
    sigprocmask(SIG_BLOCK, &m, old);
}

/* From now until forward_stop, the signals above go to pid; then the mask before
 * forward_block is back (a signal sent meanwhile is delivered and passed on now). */
static void forward_start(pid_t pid, const sigset_t *old_mask)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = forward_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    forward_pid = pid;
    for (size_t i = 0; i < NUM_FORWARDED; i++)
        sigaction(forwarded_signals[i], &sa, NULL);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
}

/* Waits for pid to end and reaps it. It is waited for without being reaped first, and only
 * then left out of forwarding: a signal never goes to a reaped pid, which may be reused. */
static void forward_wait(pid_t pid, int *ws)
{
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    forward_pid = 0;
    while (waitpid(pid, ws, 0) < 0 && errno == EINTR)
        ;
}

static volatile sig_atomic_t late_status; /* the command's, for late_signal */

static void late_signal(int sig)
{
    (void)sig;
    _exit(late_status);
}

/* The trace is finished. Until here a signal sent to record after the command ended is
 * ignored: record is finishing the trace, which is what the sender asked for. From here one
 * ends record at once with the command's status, the summary left out: a script's or service
 * manager's second signal, or a ^C during a long summary. (Record's default actions here made
 * a second SIGINT, when it came this late, end record by that signal instead.) */
static void forward_stop(int ws)
{
    late_status = exit_status_of(ws);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = late_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NUM_FORWARDED; i++)
        sigaction(forwarded_signals[i], &sa, NULL);
}

static int record_soft(const struct record_options *o, int *wait_status)
{
    char cmdpath[PATH_MAX];
    int r = find_command(o->argv[0], cmdpath, sizeof(cmdpath));
    if (r == -ENOENT || r == -ENOTDIR) {
        fprintf(stderr, "ptcall: %s: command not found; give a path or fix PATH\n", o->argv[0]);
        return -1;
    }
    if (r < 0) {
        fprintf(stderr, "ptcall: %s: not executable (%s); check the file and its permissions\n",
                o->argv[0], strerror(r == -EACCES ? EACCES : -r));
        return -1;
    }
    if (o->ring) /* the flight recorder: snapshot files instead of one trace */
        return record_ring(o, cmdpath, wait_status);
    /* absolute output path: the traced processes may change directory */
    char out[PATH_MAX];
    if (o->output[0] == '/') {
        snprintf(out, sizeof(out), "%s", o->output);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof(cwd))) {
            fprintf(stderr, "ptcall: cannot get the current directory: %s; give -o an absolute path\n",
                    strerror(errno));
            return -1;
        }
        if (snprintf(out, sizeof(out), "%s/%s", cwd, o->output) >= (int)sizeof(out)) {
            fprintf(stderr, "ptcall: output path too long; give -o a shorter path\n");
            return -1;
        }
    }
    struct ptc_trace_path made;
    int fd = ptc_create_trace(out, &made);
    if (fd < 0) {
        char why[PATH_MAX + 200];
        ptc_create_trace_error(why, sizeof(why), out, errno);
        fprintf(stderr, "ptcall: %s\n", why);
        return -1;
    }
    uint32_t flags = (o->timed ? PTC_FILE_F_TIMED : 0) | (o->drop ? PTC_FILE_F_DROP : 0);
    struct ptc_file_header fh;
    ptc_file_header_init(&fh, PTC_BACKEND_SOFT, flags, now_ns(CLOCK_REALTIME));
    uint64_t start_ns = now_ns(CLOCK_MONOTONIC);
    int argc = 0;
    while (o->argv[argc])
        argc++;
    struct ptc_record_info ri = {.backend = PTC_BACKEND_SOFT, .flags = flags,
                                 .start_ns = start_ns, .argc = (uint32_t)argc};
    struct iovec parts[14];
    int np = 0;
    parts[np++] = (struct iovec){&ri, sizeof(ri)};
    /* the command line: up to 13 parts per iovec list, so join it first */
    size_t args_len = 0;
    for (int i = 0; i < argc; i++)
        args_len += strlen(o->argv[i]) + 1;
    char *args = malloc(args_len ? args_len : 1);
    if (!args) {
        close(fd);
        fprintf(stderr, "ptcall: out of memory\n");
        return -1;
    }
    size_t p = 0;
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(o->argv[i]) + 1;
        memcpy(args + p, o->argv[i], l);
        p += l;
    }
    parts[np++] = (struct iovec){args, args_len};
    if (write(fd, &fh, sizeof(fh)) != (ssize_t)sizeof(fh) ||
        ptc_write_chunk(fd, PTC_CHUNK_RECORD_INFO, 0, 0, 0, 0, parts, np) < 0) {
        fprintf(stderr, "ptcall: cannot write %s: %s; choose another file with -o\n", out,
                strerror(errno));
        free(args);
        close(fd);
        return -1;
    }
    free(args);
    close(fd);

    if (preload_runtime(o) < 0)
        return -1;
    char buf[32];
    setenv("PTCALL_BACKEND", "soft", 1);
    setenv("PTCALL_OUTPUT", out, 1);
    setenv("PTCALL_TIMESTAMPS", o->timed ? "1" : "0", 1);
    set_clock_env(o);
    setenv("PTCALL_LEAF_EXITS", o->leaf_exits ? "1" : "0", 1);
    setenv("PTCALL_COUNTS", o->counts ? "1" : "0", 1);
    if (o->count_rest)
        setenv("PTCALL_COUNT_REST", "1", 1);
    if (o->count_atomic)
        setenv("PTCALL_COUNT_ATOMIC", "1", 1);
    setenv("PTCALL_MODE", o->drop ? "drop" : "wait", 1);
    if (o->buffer_size) {
        snprintf(buf, sizeof(buf), "%llu", (unsigned long long)o->buffer_size);
        setenv("PTCALL_BUFFER", buf, 1);
    }
    unsetenv("PTCALL_EXEC_PID");

    /* processes the command leaves behind (daemon(), a child it did not wait for) become
     * ours: record can tell whether they still run when the command ends */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    /* the signals record passes on wait until it can (a kill right after the fork would
     * otherwise end record and leave the command running untraced-to-the-end) */
    sigset_t fwd_old;
    forward_block(&fwd_old);
    uint64_t cpu_before = ptc_children_cpu_ns();
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "ptcall: cannot fork: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, &fwd_old, NULL);
        return -1;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &fwd_old, NULL);
        execv(cmdpath, o->argv);
        fprintf(stderr, "ptcall: cannot run %s: %s\n", o->argv[0], strerror(errno));
        _exit(127);
    }
    forward_start(pid, &fwd_old);
    int ws = 0;
    forward_wait(pid, &ws);
    uint64_t left_running = wait_left_behind(1000);
    *wait_status = ws;

    char end_error[PATH_MAX + 128] = "";
    uint64_t padded = 0, cut_at = 0;
    fd = open(out, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW); /* read: pad_cut_chunk */
    if (fd >= 0) {
        if (!left_running) /* a process still running may be writing the last chunk */
            padded = pad_cut_chunk(fd, &cut_at);
        struct ptc_record_end re = {.wait_status = ws, .wall_ns = now_ns(CLOCK_MONOTONIC) - start_ns,
                                    .child_pid = (uint32_t)pid};
        struct ptc_record_end_cpu cpu = {.cpu_ns = ptc_children_cpu_ns() - cpu_before};
        struct iovec v[2] = {{&re, sizeof(re)}, {&cpu, sizeof(cpu)}};
        struct stat before;
        int have_before = padded && fstat(fd, &before) == 0;
        int e = ptc_write_chunk(fd, PTC_CHUNK_RECORD_END, 0, 0, 0, 1, v, 2);
        if (e < 0 && have_before) { /* no RECORD_END after it (a full disk): the cut as it was */
            if (ftruncate(fd, before.st_size - (off_t)padded) == 0)
                padded = 0;
        }
        if (e < 0 || close(fd))
            snprintf(end_error, sizeof(end_error), "cannot finish %s: %s", out,
                     strerror(e < 0 ? -e : errno));
    } else {
        snprintf(end_error, sizeof(end_error), "cannot open %s to finish it: %s", out,
                 strerror(errno));
    }
    forward_stop(ws); /* the trace is finished: a signal ends record now */
    struct trace_summary s;
    summarize(out, padded ? cut_at : UINT64_MAX, &s);
    if (!s.modules && !s.refused) {
        fprintf(stderr,
                "ptcall: %s ran but no ptcall-instrumented code registered: build it with ptcall-cc "
                "(see docs/pass.md); no trace written\n",
                o->argv[0]);
        /* a header and nothing traced: leave no file that looks like a recording, but
         * remove only the file record made (never what -o named before, nor what replaced it) */
        if (ptc_remove_created_trace(out, &made))
            fprintf(stderr, "ptcall: %s now holds no recording and was left in place (an "
                    "earlier trace, emptied: record removes only files it created)\n", out);
        return 1;
    }
    if (!o->quiet && o->counts) {
        fprintf(stderr, "ptcall: %llu calls counted in %llu process%s, %llu segment%s "
                "(COUNTS chunks), %.1f KiB: %s\n",
                (unsigned long long)s.counted, (unsigned long long)(s.processes - s.execs),
                s.processes - s.execs == 1 ? "" : "es", (unsigned long long)s.counts_chunks,
                s.counts_chunks == 1 ? "" : "s", (double)s.file_bytes / 1024, o->output);
    } else if (!o->quiet) {
        /* untimed, a leaf's call is one record: the decoder counts it as two events. What
         * the file holds, not what the processes said they made (a killed one says nothing) */
        const char *what = o->timed || o->leaf_exits ? "event" : "event record";
        /* " (N execs)", " (N spawned)" or " (N execs, N spawned)" */
        char execs[32] = "", spawned[32] = "", execs_note[80] = "";
        if (s.execs)
            snprintf(execs, sizeof(execs), "%llu exec%s", (unsigned long long)s.execs,
                     s.execs == 1 ? "" : "s");
        if (s.spawns)
            snprintf(spawned, sizeof(spawned), "%llu spawned", (unsigned long long)s.spawns);
        if (s.execs || s.spawns)
            snprintf(execs_note, sizeof(execs_note), " (%s%s%s)", execs,
                     s.execs && s.spawns ? ", " : "", spawned);
        fprintf(stderr,
                "ptcall: %llu %ss in %llu process%s%s, %.1f MiB (%.2f bytes/%s in event "
                "chunks), %llu waits, %llu dropped%s: %s\n",
                (unsigned long long)s.written, what, (unsigned long long)(s.processes - s.execs),
                s.processes - s.execs == 1 ? "" : "es", execs_note, (double)s.file_bytes / (1 << 20),
                s.written ? (double)s.event_bytes / (double)s.written : 0.0, what,
                (unsigned long long)s.waits, (unsigned long long)s.dropped,
                s.loss_chunks ? " (see LOSS chunks)" : "", o->output);
    }
    /* why a process ended, where its exit status alone would not say (the sanitizer's report
     * is on stderr above, but easy to take for the trace's fault): said even with -q */
    if (s.causes)
        fprintf(stderr, "ptcall: %s%s: the trace holds its calls up to the sanitizer's report "
                        "(above)\n",
                s.cause_first[0] ? s.cause_first : "a process was stopped by a sanitizer",
                s.causes > 1 ? ", and more" : "");
    /* a trace that lacks what it should hold is said to be incomplete, and the status says
     * so when the command's own does not (docs/usage.md, Exit status) */
    uint64_t unfinished = s.processes > s.process_ends ? s.processes - s.process_ends : 0;
    if (end_error[0] || unfinished || left_running || s.bad || s.refused || padded ||
        s.write_losses) {
        fprintf(stderr, "ptcall: the trace is INCOMPLETE: ");
        if (s.write_losses)
            fprintf(stderr, "the runtime could not write part of the trace (%llu event records "
                            "lost: a write error such as a full disk, see the messages above; "
                            "the trace says it in a LOSS chunk); ",
                    (unsigned long long)s.write_lost_records);
        if (end_error[0])
            fprintf(stderr, "%s; ", end_error);
        if (padded)
            fprintf(stderr, "a process was killed while writing the chunk at byte %llu (%llu "
                            "bytes of it missing, filled with zeros so that the file reads on: "
                            "ptcall report --salvage skips it); ",
                    (unsigned long long)cut_at, (unsigned long long)padded);
        /* the runtime said why on stderr as it happened; the trace says it too */
        if (s.refused)
            fprintf(stderr, "%llu instrumented object%s not traced (%s%s): %s functions are "
                            "missing from every figure; ",
                    (unsigned long long)s.refused, s.refused == 1 ? " was" : "s were",
                    s.refused_first[0] ? s.refused_first : "a damaged MODULE_REFUSED chunk",
                    s.refused > 1 ? ", ..." : "", s.refused == 1 ? "its" : "their");
        if (left_running)
            fprintf(stderr, "%llu process%s the command left behind %s still running (a "
                            "daemon, or a child it did not wait for): %s part of the trace is "
                            "not finished until %s; ",
                    (unsigned long long)left_running, left_running == 1 ? "" : "es",
                    left_running == 1 ? "is" : "are", left_running == 1 ? "its" : "their",
                    left_running == 1 ? "it ends" : "they end");
        else if (unfinished)
            fprintf(stderr, "%llu of %llu process%s did not close %s trace (killed by a signal "
                            "the runtime cannot catch, such as SIGKILL, a write error, or a "
                            "sanitizer whose death callback the program replaced: see the "
                            "messages above); ",
                    (unsigned long long)unfinished, (unsigned long long)s.processes,
                    s.processes == 1 ? "" : "es", unfinished == 1 ? "its" : "their");
        if (s.bad)
            fprintf(stderr, "the file ends inside a chunk or has a damaged one; ");
        fprintf(stderr, "what it holds can be read (ptcall report says what is missing)%s\n",
                end_error[0] || s.bad ? "; free space or record elsewhere (-o) and run again"
                                      : "");
        return PTCALL_EXIT_INCOMPLETE;
    }
    return 0;
}

/* Sets var to the n globs of v, one per line (the runtime's format, docs/runtime.md), or
 * removes it when there are none: what `ptcall record` was told decides what is armed, not
 * a PTCALL_ONLY/SKIP left in the environment. 0, or -1 when out of memory. */
static int set_globs_env(const char *var, const char *const *v, int n)
{
    if (!n)
        return unsetenv(var);
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += strlen(v[i]) + 1;
    char *text = malloc(len);
    if (!text)
        return -1;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(v[i]);
        memcpy(text + at, v[i], l);
        at += l;
        text[at++] = i + 1 < n ? '\n' : 0;
    }
    int r = setenv(var, text, 1);
    free(text);
    return r;
}

/* --only: each glob must match a function the program is known to hold before it starts
 * (record_check_select, with the Intel PT recorder). 0 to go on, 1 after the error. */
static int check_only(const struct record_options *o)
{
    if (!o->num_only)
        return 0;
    char exe[PATH_MAX];
    if (find_command(o->argv[0], exe, sizeof(exe)) != 0)
        return 0; /* the backend says the command is not found */
    int r = record_check_select ? record_check_select(o, exe) : 1;
    if (r < 0)
        return 1;
    if (r > 0 && !o->quiet)
        fprintf(stderr, "ptcall: note: --only cannot be checked before %s runs (%s); globs "
                        "that match nothing are reported when it ends\n",
                o->argv[0],
                record_check_select ? "it holds no ptcall_map: not built with ptcall-cc?"
                                    : "this ptcall was built without the ELF reader");
    return 0;
}

/* pt_available() reasons end with the remedy for an explicit --backend pt; under auto the
 * remedy is already being applied, so drop it from the notice. */
static void strip_soft_advice(char *why)
{
    static const char *const tails[] = {"; use --backend soft", ": use --backend soft"};
    size_t n = strlen(why);
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        size_t t = strlen(tails[i]);
        if (n >= t && !strcmp(why + n - t, tails[i])) {
            why[n - t] = 0;
            return;
        }
    }
}

/* ---- record --pid, software backend (runtime/pt/attach_soft.c does the work) ------------ */

static int record_attach(const struct record_options *o)
{
    if (!record_soft_attach) {
        fprintf(stderr, "ptcall: this ptcall was built without the recorder library (libelf): "
                        "record --pid is not available\n");
        return 1;
    }
    if ((o->timing || o->snapshot || o->num_modules || o->counts || o->buffer_size ||
         !o->timed || o->leaf_exits || o->drop) && !o->quiet)
        fprintf(stderr, "ptcall: with --pid the process records as its runtime was configured "
                        "at its start (PTCALL_* variables); --timing, --snapshot, --module, "
                        "--counts, --buffer, --no-timestamps, --leaf-exits and --drop are "
                        "ignored\n");
    struct attach_outcome a;
    int r = record_soft_attach(o, o->output, &a);
    if (r < 0)
        return 1;
    struct trace_summary s;
    summarize(o->output, UINT64_MAX, &s);
    if (!o->quiet) {
        fprintf(stderr, "ptcall: %llu events in %u thread%s of process %d over %.1f s, %.1f MiB, "
                        "%llu dropped%s: %s\n",
                (unsigned long long)s.written, a.threads, a.threads == 1 ? "" : "s",
                o->attach_pid, a.seconds, (double)s.file_bytes / (1 << 20),
                (unsigned long long)s.dropped, s.loss_chunks ? " (see LOSS chunks)" : "",
                o->output);
        if (a.detached)
            fprintf(stderr, "ptcall: detached in %.1f ms; process %d goes on untraced\n",
                    (double)a.detach_ns / 1e6, o->attach_pid);
    }
    if (a.exited)
        fprintf(stderr, "ptcall: process %d exited while attached: the trace ends at its exit\n",
                o->attach_pid);
    else if (a.execed)
        fprintf(stderr, "ptcall: process %d exec'd a new program while attached (or closed the "
                        "channel): the trace ends there; attach again to trace the new image\n",
                o->attach_pid);
    if (r > 0 || s.bad || s.write_losses || s.refused) {
        fprintf(stderr, "ptcall: the trace is INCOMPLETE: %s%s%swhat it holds can be read "
                        "(ptcall report says what is missing)\n",
                r > 0 ? "the file could not be finished; " : "",
                s.bad ? "the file ends inside a chunk or has a damaged one; " : "",
                s.write_losses ? "the runtime could not write part of it; "
                : s.refused ? "instrumented objects were not traced; " : "");
        return PTCALL_EXIT_INCOMPLETE;
    }
    return 0;
}

static int record_main(struct cli_values *v)
{
    struct record_options o;
    memset(&o, 0, sizeof(o));
    o.output = v->output;
    /* --backend auto|soft|pt, in enum record_backend order */
    o.backend = (enum record_backend)(RECORD_AUTO + v->record.backend);
    o.timed = !v->record.no_timestamps;
    o.leaf_exits = v->record.leaf_exits;
    if (v->record.no_blocking) /* the traced processes' runtimes read it (soft_blocking.c) */
        setenv("PTCALL_BLOCKING", "0", 1);
    o.drop = v->record.drop;
    o.buffer_size = v->record.buffer;
    /* --timing none|tsc|mtc|cyc from TIMING_NONE on; not given: the recorder's default */
    o.timing = v->timing < 0 ? TIMING_DEFAULT : (enum record_timing)(TIMING_NONE + v->timing);
    o.snapshot = v->record.snapshot;
    o.attach_pid = (int)v->record.pid;
    o.modules = v->record.modules.v;
    o.num_modules = v->record.modules.n;
    o.only = v->record.only.v;
    o.num_only = v->record.only.n;
    o.skip = v->record.skip.v;
    o.num_skip = v->record.skip.n;
    o.quiet = v->quiet;
    o.counts = v->record.counts;
    o.count_rest = v->record.count_rest;
    o.count_atomic = v->record.count_atomic;
    o.ring = v->record.ring;
    o.trigger = v->record.trigger;
    o.argv = v->rest;
    o.duration_ns = v->record.duration_ms * 1000000u;
    int clock_err = record_clock_option(v->record.clock, &o);
    if (clock_err)
        return clock_err;
    if (!o.argv[0] && !o.attach_pid)
        return cli_usage_error(CMD_RECORD, "missing command");
    if (o.attach_pid && o.argv[0])
        return cli_usage_error(CMD_RECORD, "--pid records a running process: give no COMMAND");
    if (o.duration_ns && !o.attach_pid)
        return cli_usage_error(CMD_RECORD, "--duration applies to --pid (a command is recorded "
                                           "until it ends)");
    if (o.attach_pid && (o.num_only || o.num_skip) && o.backend == RECORD_PT)
        return cli_usage_error(CMD_RECORD, "--only and --skip choose what a program arms when "
                                           "it starts; with --backend pt --pid it is already "
                                           "running (record it from the start, or use the "
                                           "software backend)");
    if (!o.attach_pid && check_only(&o))
        return 1;
    if (set_globs_env("PTCALL_ONLY", o.only, o.num_only) ||
        set_globs_env("PTCALL_SKIP", o.skip, o.num_skip)) {
        fprintf(stderr, "ptcall: out of memory\n");
        return 1;
    }

    /* --budget RATE[,AUX] (Intel PT): record_budget.c */
    if (record_budget_check(v))
        return 1;

    enum record_backend be = o.backend;
    if (o.trigger && !o.ring)
        return cli_usage_error(CMD_RECORD, "--trigger takes a flight recorder's snapshot: "
                                           "give --ring SIZE too");
    if (o.ring && (o.counts || be == RECORD_PT || o.attach_pid || o.drop))
        return cli_usage_error(CMD_RECORD, "--ring is the software backend's flight recorder: "
                                           "leave out --counts, --drop, --pid and --backend pt");
    if (o.ring) /* the flight recorder is the runtime's */
        be = RECORD_SOFT;
    if (o.counts && be == RECORD_PT)
        return cli_usage_error(CMD_RECORD, "--counts is the software backend's counting mode; "
                                           "leave out --backend pt");
    if (o.counts) /* counting is the runtime's: Intel PT has nothing to add */
        be = RECORD_SOFT;
    if (v->record.have_overhead && be == RECORD_AUTO) /* a CPU-time budget is the runtime's */
        be = RECORD_SOFT;
    { /* --overhead (record_budget.c): its conflicts, costs and the choice's variables */
        char exe[PATH_MAX] = "";
        if (o.argv[0] && find_command(o.argv[0], exe, sizeof(exe)) != 0)
            snprintf(exe, sizeof(exe), "%s", o.argv[0]);
        int br = record_budget_prepare(v, &o, exe, o.output);
        if (br)
            return br;
    }
    if (o.count_rest && (o.counts || o.ring || o.attach_pid || be == RECORD_PT))
        return cli_usage_error(CMD_RECORD, "--count-rest counts beside a software trace of "
                                           "events: leave out --counts (which counts every "
                                           "function), --ring, --pid and --backend pt");
    if (o.count_rest)
        be = RECORD_SOFT;
    if (o.count_atomic && !(o.counts || o.count_rest || v->record.have_overhead))
        return cli_usage_error(CMD_RECORD, "--atomic-counts locks the increments of counted "
                                           "calls: add --counts, --count-rest or --overhead");
    if (o.count_atomic && (o.ring || o.attach_pid || be == RECORD_PT))
        return cli_usage_error(CMD_RECORD, "--atomic-counts is for the software backend's "
                                           "counters: leave out --ring, --pid and --backend pt");
    if (be == RECORD_AUTO || be == RECORD_PT) {
        char why[256] = "Intel PT support is not built into this ptcall";
        if (pt_available && record_pt && pt_available(why, sizeof(why)) == 1) {
            be = RECORD_PT;
        } else {
            if (be == RECORD_PT) {
                fprintf(stderr, "ptcall: Intel PT not available: %s\n", why);
                return 1;
            }
            be = RECORD_SOFT;
            strip_soft_advice(why);
            if (!o.quiet)
                fprintf(stderr, "ptcall: Intel PT not available (%s): recording with the software backend\n",
                        why);
        }
    }
    int ws = 0;
    if (be == RECORD_PT) {
        if (!record_pt) {
            fprintf(stderr, "ptcall: Intel PT support is not built into this ptcall; use --backend soft\n");
            return 1;
        }
        /* the command's runtime arms the call sites and leaves the stubs to the hardware */
        if (!o.attach_pid) {
            if (preload_runtime(&o) < 0)
                return 1;
            setenv("PTCALL_BACKEND", "pt", 1);
            unsetenv("PTCALL_OUTPUT");
            /* --timing none: leaves' exits stay unarmed (pt_leaf_calls) */
            setenv("PTCALL_TIMESTAMPS", pt_leaf_calls(&o) ? "0" : "1", 1);
            setenv("PTCALL_LEAF_EXITS", o.leaf_exits ? "1" : "0", 1);
        }
        int pr = record_pt(&o, &ws);
        if (pr < 0)
            return 1;
        int st = exit_status_of(ws);
        /* incomplete: the command's failure says more, if it failed */
        return pr > 0 && !st ? PTCALL_EXIT_INCOMPLETE : st;
    }
    if (o.attach_pid) /* the software backend's attach (issue 31) */
        return record_attach(&o);
    /* --module also widens --only's check, for both backends */
    if ((o.timing || o.snapshot || (o.num_modules && !o.num_only)) && !o.quiet)
        fprintf(stderr, "ptcall: --timing, --snapshot and --module apply to Intel PT only; ignored\n");
    int r = record_soft(&o, &ws);
    if (r < 0)
        return 1;
    record_budget_finish(v, &o, o.output);
    int st = exit_status_of(ws);
    if (r == PTCALL_EXIT_INCOMPLETE) /* the command's failure says more, if it failed */
        return st ? st : PTCALL_EXIT_INCOMPLETE;
    if (r > 0) /* ran, but nothing was instrumented */
        return st ? st : 1;
    return st;
}

int cmd_record(int argc, char **argv)
{
    struct cli_values v;
    /* the options end at COMMAND: its own options are its business */
    int r = cli_parse(CMD_RECORD, argc, argv, &v, CLI_STOP_AT_POSITIONAL);
    if (r != CLI_GO)
        return r;
    r = record_main(&v);
    cli_values_free(&v);
    return r;
}
