/* The flight recorder (PTCALL_RING, docs/runtime.md *Flight recorder*): each thread's
 * buffers are a ring. A full buffer is not handed to a drain (there is none): the thread
 * itself moves on to its oldest buffer and overwrites it, so the fast path is the timed
 * trace's, and the slow path runs once per buffer. Nothing is written until a snapshot,
 * which encodes every thread's ring, oldest buffer first, as a self-contained trace.
 *
 * The program's stall is a hand-over: a snapshot that the process outlives (ptcall_snapshot(),
 * a trigger) is written by the runtime's writer thread (soft_ring_writer.c), `ptcall snapshot
 * PID` by the control thread, while the program's threads run on. Each ring is read oldest
 * buffer first, and its owner waits only before overwriting a buffer not read yet
 * (snap_unread, set for every ring at the snapshot's instant). A timed ring is cut at that
 * instant; an untimed one holds its thread's events up to the moment its ring was read. A
 * fork cost 0.7-1.4 ms of the caller's time on the development VM (page tables), and
 * encoding in the caller 15 ms per 16 MiB of rings. Without a writer thread, a child made with
 * a raw clone (no atfork handlers, no SIGCHLD) writes it; such children are reaped at the next
 * snapshot (waitpid __WALL: a program's own wait(-1) never sees them). A crash snapshot is
 * written by the crashing thread itself, the other threads still running; the snapshot waits,
 * bounded, for a thread moving to its next buffer.
 *
 * It may be taken from a signal handler: it takes no lock a signal could interrupt (one
 * snapshot at a time, by an atomic owner), allocates nothing with malloc and writes with
 * write(2). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ptc_chunk_write.h"
#include "soft_internal.h"

static _Atomic uint32_t snap_count; /* this process's snapshot files, for their names */

/* the crash snapshot: where a fault inside it goes back to */
static sigjmp_buf crash_jb;
static _Atomic uint32_t crash_jb_tid;
static char crash_part[PATH_MAX]; /* its file, removed when it is abandoned */
static int *volatile test_null;   /* PTCALL_TEST_SNAPSHOT_FAULT's fault */
static int crash_fd = -1;

#define WAIT_NS (100ull * 1000 * 1000)

/* the snapshot's facts, taken in the process before a child writes it */
static uint32_t snap_tid, snap_ppid;
static uint64_t snap_at; /* the instant it was asked for: each timed ring is cut there */
static int in_child; /* this is a snapshot's child: every other thread is frozen */

/* the snapshot children not reaped yet */
#define KIDS 32
static _Atomic int kids[KIDS];

/* ---- writing a snapshot --------------------------------------------------------------- */

static void put_chunk(uint16_t type, uint16_t flags, uint32_t tid, uint32_t *seq,
                      const struct iovec *v, int n)
{
    write_chunk_flags(type, flags, tid, seq, v, n);
}

static void write_process(void)
{
    char exe[PATH_MAX];
    exe_path(exe);
    struct ptc_process p;
    memset(&p, 0, sizeof(p));
    p.ppid = snap_ppid;
    p.how = PTC_PROC_SNAPSHOT;
    p.flags = rt.timed ? PTC_FILE_F_TIMED : 0;
    p.tsc = rt.ring_start_tsc;
    p.time_ns = mono_ns() - (rt.tb.tsc_hz ? (uint64_t)((double)(rdtsc_() - p.tsc) * 1e9 /
                                                       (double)rt.tb.tsc_hz)
                                          : 0);
    struct iovec v[2] = {{&p, sizeof(p)}, {exe, strlen(exe) + 1}};
    put_chunk(PTC_CHUNK_PROCESS, 0, 0, &rt.proc_seq, v, 2);
    struct iovec t = {&rt.tb, sizeof(rt.tb)};
    put_chunk(PTC_CHUNK_TIMEBASE, 0, 0, &rt.proc_seq, &t, 1);
}

/* The bytes of a timed buffer's records written at or before tsc `to` (records are in time
 * order; one reserved but not written yet, zero, counts as before). */
static size_t len_until(const uint8_t *data, size_t len, uint64_t to)
{
    size_t lo = 0, hi = len / rt.rec;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint64_t *r = (const uint64_t *)(const void *)(data + mid * rt.rec);
        if (__atomic_load_n(&r[1], __ATOMIC_ACQUIRE) <= to)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo * rt.rec;
}

/* The snapshot's instant, when its rings are read while their threads run on: every ring is
 * held (no thread overwrites a buffer the snapshot has not read), then the time is taken;
 * each timed ring is cut there. Threads are only added at the list's head. */
static uint64_t hold_rings(void)
{
    for (struct thread *ts = __atomic_load_n(&rt.threads, __ATOMIC_ACQUIRE); ts; ts = ts->next)
        atomic_store(&ts->snap_unread, ts->nbufs >= 32 ? ~0u : (1u << ts->nbufs) - 1);
    return rdtsc_();
}

static void release_rings(void)
{
    for (struct thread *ts = __atomic_load_n(&rt.threads, __ATOMIC_ACQUIRE); ts; ts = ts->next)
        atomic_store(&ts->snap_unread, 0);
}

/* One thread's ring: THREAD start, its buffers oldest first as SOFT_EVENTS chunks, and a
 * WINDOW chunk. Adds its events to *events. */
static void write_thread_ring(struct thread *ts, uint64_t snap_tsc, uint64_t *events)
{
    int n = ts->nbufs;
    uint64_t t0 = mono_ns();
    while (atomic_load(&ts->ring_switching)) {
        if (in_child || mono_ns() - t0 > WAIT_NS) { /* stopped there (a crash inside the runtime?) */
            atomic_store(&ts->snap_unread, 0);
            warn("ptcall: snapshot: thread %u was moving to its next buffer: its ring is "
                 "left out", ts->tid);
            return;
        }
        sched_yield();
    }
    struct buf *cur = __atomic_load_n(&ts->cur, __ATOMIC_ACQUIRE);
    struct ptc_tls *t = ts->tls;
    if (!cur || !t) {
        atomic_store(&ts->snap_unread, 0);
        return;
    }
    uintptr_t end = __atomic_load_n(&t->end, __ATOMIC_ACQUIRE);
    uintptr_t pos = __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
    uintptr_t lo = (uintptr_t)cur->data, hi = lo + rt.bufsize;
    if (end != hi)
        pos = lo + cur->len;
    if (pos > hi)
        pos = hi;
    /* the thread runs on while its ring is read: a timed ring is cut at the instant the
     * snapshot was asked for (its records carry their time), an untimed one ends where its
     * position was read, which may be later */
    uint64_t read_tsc = rdtsc_();
    if (read_tsc < snap_tsc)
        read_tsc = snap_tsc;
    uint64_t to = rt.timed ? snap_tsc : read_tsc;
    ts->seq = 0;
    ts->start_written = 0;
    uint64_t before = ts->events, from = 0;
    int ci = (int)(cur - ts->bufs);
    for (int k = 1; k <= n; k++) { /* oldest first: the one the owner would overwrite next */
        int bi = (ci + k) % n;
        struct buf *b = &ts->bufs[bi];
        size_t len = b == cur ? pos - lo : atomic_load(&b->state) == B_QUEUED ? b->len : 0;
        if (rt.timed)
            len = len_until(b->data, len, to);
        if (len) {
            if (!from)
                from = b->start_tsc;
            uint64_t end = b == cur || b->end_tsc > to ? to : b->end_tsc;
            encode(ts, b->data, len, b->start_tsc, end, b == cur ? ENC_PREFIX : ENC_NOWAIT);
        }
        if (bi < 32)
            atomic_fetch_and(&ts->snap_unread, ~(1u << bi));
    }
    write_thread_start(ts); /* a thread with no event yet still shows up */
    struct ptc_window w = {.tsc_from = from ? from : to, .tsc_to = to,
                           .flags = PTC_WINDOW_F_MIDSTACK | PTC_WINDOW_F_OPEN_END,
                           .lost_before = ts->ring_lost};
    if (ts->ring_lost)
        w.flags |= PTC_WINDOW_F_WRAPPED;
    struct iovec v = {&w, sizeof(w)};
    put_chunk(PTC_CHUNK_WINDOW, PTC_CHUNK_F_OPTIONAL, ts->tid, &ts->seq, &v, 1);
    *events += ts->events - before;
    atomic_store(&ts->snap_unread, 0);
}

static int snapshot_locked(int fd, uint32_t kind, const char *why, int sig, uint64_t addr)
{
    uint64_t snap_tsc = snap_at;
    rt.fd = fd;
    rt.ring_errno = 0;
    rt.proc_seq = 0;
    struct ptc_file_header h;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    ptc_file_header_init(&h, PTC_BACKEND_SOFT, rt.timed ? PTC_FILE_F_TIMED : 0,
                         (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h) && !rt.ring_errno)
        rt.ring_errno = errno ? errno : EIO;
    write_process();
    uint32_t nobj = atomic_load_explicit(&rt.nobjs, memory_order_acquire);
    for (uint32_t i = 0; i < nobj; i++)
        if (write_module(rt.objs[i]))
            write_module_armed(rt.objs[i]);
    if (!why)
        why = "";
    size_t wl = strnlen(why, 1023);
    static const char nul = 0;
    struct ptc_snapshot s = {.kind = kind, .tid = snap_tid, .tsc = snap_tsc, .signo = sig,
                             .addr = addr};
    struct iovec sv[3] = {{&s, sizeof(s)}, {(void *)(uintptr_t)why, wl},
                          {(void *)(uintptr_t)&nul, 1}};
    put_chunk(PTC_CHUNK_SNAPSHOT, PTC_CHUNK_F_OPTIONAL, 0, &rt.proc_seq, sv, 3);
    uint64_t events = 0;
    /* threads are only added at the list's head (ts->next set first) and only removed
     * under the snapshot lock: walked without thr_mu, which a signal could have interrupted */
    for (struct thread *ts = __atomic_load_n(&rt.threads, __ATOMIC_ACQUIRE); ts; ts = ts->next)
        write_thread_ring(ts, snap_tsc, &events);
    struct ptc_process_end e = {.how = PTC_END_SNAPSHOT, .status = sig, .tsc = rdtsc_(),
                                .events = events};
    struct iovec ev = {&e, sizeof(e)};
    put_chunk(PTC_CHUNK_PROCESS_END, 0, 0, &rt.proc_seq, &ev, 1);
    rt.fd = -1;
    if (rt.ring_errno) {
        errno = rt.ring_errno;
        return -1;
    }
    return 0;
}

/* Reaps the snapshot children that have ended; with wait, the oldest one too (the table is
 * full). */
static void reap_kids(int wait)
{
    for (int i = 0; i < KIDS; i++) {
        int pid = atomic_load(&kids[i]);
        if (pid > 0 && waitpid(pid, NULL, WNOHANG | __WALL) != 0)
            atomic_store(&kids[i], 0);
    }
    for (int i = 0; wait && i < KIDS; i++)
        if (!atomic_load(&kids[i]))
            return;
    if (wait) {
        int pid = atomic_exchange(&kids[0], 0);
        while (pid > 0 && waitpid(pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
    }
}

static void remember_kid(int pid)
{
    for (int i = 0; i < KIDS; i++) {
        int none = 0;
        if (atomic_compare_exchange_strong(&kids[i], &none, pid))
            return;
    }
    while (waitpid(pid, NULL, __WALL) < 0 && errno == EINTR) /* cannot happen: reap_kids */
        ;
}

/* A child holding a copy of the process as it is now, or 0 in that child, or -1. A raw
 * clone: no atfork handler runs (a signal handler may be calling), and its end sends no
 * SIGCHLD (waitpid needs __WALL). */
static long fork_snapshot(void)
{
    snap_tid = gettid_();
    snap_at = rdtsc_();
    snap_ppid = (uint32_t)getppid();
    long pid = syscall(SYS_clone, 0ul, NULL, NULL, NULL, 0ul);
    if (pid == 0) {
        in_child = 1;
        block_all_signals(NULL);
    }
    return pid;
}

static void __attribute__((noreturn)) child_exit(int code)
{
    for (;;)
        syscall(SYS_exit_group, code);
}

/* From the control thread (`ptcall snapshot PID`): a runtime thread, so it writes the rings
 * itself while the program's threads run on; a thread waits only before overwriting a
 * buffer not read yet. */
int ring_snapshot_to_fd(int fd, uint32_t kind, const char *why)
{
    if (!rt.ring || !rt.enabled || !atomic_load(&rt.active)) {
        errno = ENOTSUP;
        return -1;
    }
    if (ring_lock(2 * 1000 * 1000 * 1000ull) != 0)
        return -1;
    reap_kids(0);
    snap_tid = gettid_();
    snap_at = hold_rings();
    snap_ppid = (uint32_t)getppid();
    int r = snapshot_locked(fd, kind, why, 0, 0);
    int e = errno;
    ring_unlock();
    errno = e;
    return r;
}

/* ---- snapshot files ------------------------------------------------------------------- */

/* Appends s to buf at *at (bounded by n, NUL-terminated). snprintf is not async-signal-safe. */
static void cat(char *buf, size_t n, size_t *at, const char *s)
{
    while (*s && *at + 1 < n)
        buf[(*at)++] = *s++;
    buf[*at] = 0;
}

static void cat_u(char *buf, size_t n, size_t *at, uint64_t v)
{
    char d[24];
    int k = 0;
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 23);
    while (k && *at + 1 < n)
        buf[(*at)++] = d[--k];
    buf[*at] = 0;
}

static void snap_name(char *buf, size_t n, const char *prefix, uint32_t num, const char *suffix)
{
    size_t at = 0;
    cat(buf, n, &at, rt.snap_dir);
    cat(buf, n, &at, "/");
    cat(buf, n, &at, prefix);
    cat_u(buf, n, &at, rt.pid);
    cat(buf, n, &at, ".");
    cat_u(buf, n, &at, num);
    cat(buf, n, &at, suffix);
}

/* The snapshot is written under a name that does not look like a trace
 * (.ptcall-snap.PID.N.part) and linked to ptcall-snap.PID.N.trace only when whole: a full
 * disk or a crash meanwhile never leaves a file that looks complete. link() never replaces
 * a file: an existing name takes the next N. */
static int write_snapshot_file(uint32_t kind, const char *why, int sig, uint64_t addr)
{
    char part[PATH_MAX], name[PATH_MAX];
    uint32_t num = atomic_fetch_add(&snap_count, 1);
    int fd = -1;
    for (int tries = 0; tries < 1000 && fd < 0; tries++) {
        snap_name(part, sizeof(part), ".ptcall-snap.", num, ".part");
        fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
        if (fd < 0)
            num = atomic_fetch_add(&snap_count, 1);
    }
    if (fd < 0) {
        int e = errno;
        warn("ptcall: snapshot (%s) not written: cannot create a file in %s: %s (set "
             "PTCALL_SNAPSHOT_DIR to a directory you may write)",
             why ? why : "", rt.snap_dir, strerror(e));
        return -1;
    }
    if (kind == PTC_SNAP_CRASH) {
        memcpy(crash_part, part, sizeof(part));
        crash_fd = fd;
        atomic_store(&crash_jb_tid, gettid_());
        if (rt.ring_test_fault) /* tests: a fault inside the runtime's own signal path */
            *test_null = 1;
    }
    int r = snapshot_locked(fd, kind, why, sig, addr);
    int e = errno;
    atomic_store(&crash_jb_tid, 0);
    close(fd);
    if (r != 0) {
        unlink(part);
        warn("ptcall: snapshot (%s) not written: %s in %s; nothing was left there (free "
             "space or set PTCALL_SNAPSHOT_DIR elsewhere)",
             why ? why : "", strerror(e), rt.snap_dir);
        return -1;
    }
    for (int tries = 0; tries < 1000; tries++) {
        snap_name(name, sizeof(name), "ptcall-snap.", num, ".trace");
        if (link(part, name) == 0)
            break;
        if (errno != EEXIST) {
            name[0] = 0;
            break;
        }
        num = atomic_fetch_add(&snap_count, 1);
        name[0] = 0;
    }
    int le = errno;
    unlink(part);
    if (!name[0]) {
        warn("ptcall: snapshot (%s) not written: cannot name it in %s: %s", why ? why : "",
             rt.snap_dir, strerror(le));
        return -1;
    }
    warn("ptcall: snapshot (%s) written to %s", why ? why : "", name);
    return 0;
}

/* the writer thread's ring_write_fn */
static void write_posted(uint32_t kind, const char *why, uint32_t tid, uint32_t ppid,
                         uint64_t tsc)
{
    snap_tid = tid;
    snap_at = tsc;
    snap_ppid = ppid;
    reap_kids(0);
    write_snapshot_file(kind, why, 0, 0);
}

int ring_snapshot_file(uint32_t kind, const char *why, int sig, uint64_t addr)
{
    if (!rt.ring || !rt.enabled || !atomic_load(&rt.active))
        return -1;
    if (ring_lock(2 * 1000 * 1000 * 1000ull) != 0) {
        warn("ptcall: snapshot (%s) not taken: %s", why ? why : "",
             errno == EDEADLK ? "asked for inside another snapshot of this thread"
                              : "another snapshot has not finished within 2 s");
        return -1;
    }
    if (kind != PTC_SNAP_CRASH) {
        if (ring_writer_post(kind, why, hold_rings(), write_posted) == 0)
            return 0; /* the writer thread has the request and the lock */
        release_rings(); /* no writer: a forked child holds them */
    }
    long pid = -1;
    if (kind != PTC_SNAP_CRASH) { /* no writer thread: a forked child writes it */
        reap_kids(1);
        uint64_t t0 = rt.debug ? mono_ns() : 0;
        pid = fork_snapshot();
        if (pid == 0)
            child_exit(write_snapshot_file(kind, why, sig, addr) ? 1 : 0);
        if (rt.debug) /* the program's stall (PTCALL_DEBUG=1) */
            warn("ptcall[%u]: snapshot (%s): the fork took %llu us", rt.pid, why ? why : "",
                 (unsigned long long)((mono_ns() - t0) / 1000));
    } else {
        snap_tid = gettid_();
        snap_at = hold_rings();
        snap_ppid = (uint32_t)getppid();
    }
    int r = 0;
    if (pid > 0)
        remember_kid((int)pid);
    else
        r = write_snapshot_file(kind, why, sig, addr);
    ring_unlock();
    return r;
}

PTC_API void __ptcall_snapshot(const char *why)
{
    if (!rt.ring || !rt.enabled || !atomic_load(&rt.active) || atomic_load(&rt.finishing))
        return;
    int saved = errno;
    ring_snapshot_file(PTC_SNAP_API, why ? why : "", 0, 0);
    errno = saved;
}

/* ---- crashes -------------------------------------------------------------------------- */

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "fatal signal";
    }
}

void ring_crash(int sig, const siginfo_t *si)
{
    if (!rt.ring || sig == SIGTRAP || sig == SIGSYS || sig == SIGINT || sig == SIGTERM ||
        sig == SIGHUP || sig == SIGQUIT || sig == SIGXCPU || sig == SIGXFSZ)
        return;
    if (ring_lock_owned()) {
        warn("ptcall: %s inside the runtime's own snapshot: no crash snapshot; the program "
             "dies of it as it would have", signal_name(sig));
        return;
    }
    if (sigsetjmp(crash_jb, 1)) {
        /* a fault inside the snapshot: ring_crash_nested came back here */
        atomic_store(&crash_jb_tid, 0);
        rt.fd = -1;
        if (crash_fd >= 0)
            close(crash_fd);
        unlink(crash_part);
        ring_unlock();
        return;
    }
    uint64_t addr = (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL)
                        ? (uint64_t)(uintptr_t)si->si_addr
                        : 0;
    ring_snapshot_file(PTC_SNAP_CRASH, signal_name(sig), sig, addr);
}

void ring_crash_nested(int sig)
{
    if (!rt.ring || atomic_load(&crash_jb_tid) != gettid_())
        return;
    warn("ptcall: %s while writing the crash snapshot: the snapshot is abandoned (its "
         "partial file removed); the program dies of the first signal as it would have",
         signal_name(sig));
    siglongjmp(crash_jb, 1);
}
