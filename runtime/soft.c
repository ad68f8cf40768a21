/* libptcall: module registration and the software backend (docs/runtime.md).
 *
 * Inactive unless PTCALL_BACKEND=soft and PTCALL_OUTPUT are set: then registration does
 * nothing and the stubs stay `ret`. Active: each registered object's stubs are patched to
 * call a handler (soft_handler.S) that appends the raw stub return address [+ TSC] to a
 * per-thread buffer; full buffers go to one drain thread per process, which turns addresses
 * into dense stub ids and writes PTC_CHUNK_SOFT_EVENTS chunks.
 *
 * Nothing on the event path allocates with malloc or takes a lock: buffers are mmap'd per
 * thread, handed to the drain through a lock-free stack, and handed back with a per-thread
 * futex. Locks (all plain mutexes, order reg_mu < drain_mu < thr_mu < proc_mu) protect only
 * registration, thread creation/exit, the drain's work and process-level chunk writes.
 */
#define _GNU_SOURCE
#include <cpuid.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptc_chunk_write.h"
#include "ptc_map_read.h"
#include "ptc_varint.h"
#include "ptcall/map_format.h"
#include "ptcall/trace_format.h"

#define PTC_API __attribute__((visibility("default")))

/* ---- TLS shared with soft_handler.S ------------------------------------------------- */

struct thread;
struct ptc_tls {
    uintptr_t pos;      /* next record (offset 0, used by the handler) */
    uintptr_t end;      /* end of the current buffer (offset 8) */
    struct thread *ts;  /* this thread's state, or NULL */
    int state;          /* TS_* */
};
enum { TS_NEW = 0, TS_ACTIVE = 1, TS_EXITED = 2, TS_IGNORE = 3, TS_INIT = 4 };

__thread struct ptc_tls ptc_tls __attribute__((tls_model("initial-exec")));
uint64_t ptc_xsave_size = 512 + 64;
uint8_t ptc_use_xsave;

/* Sets the thread's buffer window. A signal handler on this thread may run between any two
 * stores: end goes to 0 first, so that meanwhile every reservation fails (slow path). */
static void tls_set(struct ptc_tls *t, uintptr_t pos, uintptr_t end)
{
    __atomic_store_n(&t->end, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->pos, pos, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->end, end, __ATOMIC_RELAXED);
}

void ptc_soft_handler(void);
void ptc_soft_handler_timed(void);
void ptc_soft_slow(uintptr_t ret, uint64_t tsc);

/* ---- state ---------------------------------------------------------------------------- */

enum { IT_BUF = 1, IT_THREAD_START, IT_THREAD_EXIT, IT_UNLOAD };
struct item {
    struct item *next;
    int type;
};

enum { B_FREE = 0, B_FILLING = 1, B_QUEUED = 2 };
struct buf {
    struct item it;         /* IT_BUF */
    struct thread *ts;
    uint8_t *data;
    size_t len;             /* bytes of records when queued */
    _Atomic int state;
    uint64_t start_tsc, end_tsc;
};

#define MAX_BUFS 64
struct thread {
    struct item start_it, exit_it;
    struct thread *next;    /* g.threads, under thr_mu */
    uint32_t tid;
    char name[16];
    struct ptc_tls *tls;    /* the owner's TLS block */
    int nbufs;
    struct buf bufs[MAX_BUFS];
    struct buf *cur;        /* buffer being filled, NULL when none or discarding */
    uint8_t *discard;       /* drop mode: events written here are counted and thrown away */
    int discarding;
    _Atomic int in_slow;
    _Atomic uint64_t nested_drop; /* events from signal handlers that hit the slow path */
    uint64_t pending_drop;  /* dropped, not yet reported by a LOSS record */
    _Atomic uint32_t free_seq;
    _Atomic int waiting;
    /* owner-written statistics */
    uint64_t dropped, waits, wait_ns, start_tsc, exit_tsc;
    /* drain-owned */
    uint32_t seq;
    uint64_t events;
    int start_written, exit_written;
};

#define MAX_OBJECTS 4096
struct object {
    const void *map_start;
    size_t map_size;
    uint64_t stubs_start, stubs_end;
    uint32_t *ids;          /* per 16-byte slot of the stub section: stub id or UINT32_MAX */
    size_t ids_bytes;
    uint32_t module_id, first_stub_id, num_stubs;
    uint64_t load_bias;
    char path[PATH_MAX];
    _Atomic int live;
    int drain_dead;         /* drain-owned: its MODULE_UNLOAD was written */
    struct {
        struct item it;
        uint64_t tsc;
    } unload;
};

static struct {
    int enabled, timed, drop;
    size_t bufsize, rec;
    int nbufs;
    char output[PATH_MAX];
    void (*handler)(void);

    _Atomic int active, finishing, finished;
    int fd;
    uint32_t pid;
    uint32_t start_how, parent_pid, parent_tid;

    pthread_mutex_t reg_mu, drain_mu, thr_mu, proc_mu;
    uint32_t proc_seq;

    struct object *objs[MAX_OBJECTS];
    _Atomic uint32_t nobjs;
    uint32_t next_stub_id;

    struct thread *threads;

    _Atomic(struct item *) qhead;
    _Atomic uint32_t qseq;
    _Atomic int drain_sleeping;
    _Atomic int drain_running;
    pthread_t drain;
    _Atomic uint32_t drain_tid;
    uint8_t *enc;           /* drain scratch: the encoded chunk */
    size_t enc_size;
    struct object *cache;   /* drain: last object hit */

    struct ptc_timebase tb;
    pthread_key_t key;
    /* process totals of exited threads (drain-owned) */
    uint64_t tot_events, tot_dropped, tot_waits;
    _Atomic uint64_t late_events, write_errors;
    int debug;               /* PTCALL_DEBUG=1: drain statistics on stderr at the end */
    uint64_t drain_tsc, drain_records, drain_chunks, drain_bytes;

    struct sigaction prev_sa[65]; /* the program's view of each signal we handle */
    _Atomic int managed[65];      /* fatal signals whose handler we keep (see sigaction) */
    _Atomic int in_crash;
    int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

    int (*real_execve)(const char *, char *const[], char *const[]);
    int (*real_execvpe)(const char *, char *const[], char *const[]);
    pid_t (*real_fork)(void);
    void (*real__exit)(int);
} g = {
    .reg_mu = PTHREAD_MUTEX_INITIALIZER,
    .drain_mu = PTHREAD_MUTEX_INITIALIZER,
    .thr_mu = PTHREAD_MUTEX_INITIALIZER,
    .proc_mu = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* ---- small helpers ------------------------------------------------------------------- */

static uint32_t gettid_(void) { return (uint32_t)syscall(SYS_gettid); }
static uint64_t rdtsc_(void) { return __rdtsc(); }
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof(msg) - 2)
        n = sizeof(msg) - 2;
    msg[n++] = '\n';
    ssize_t r = write(2, msg, (size_t)n);
    (void)r;
}

static void *map_anon(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static long futex_(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *to)
{
    return syscall(SYS_futex, (uint32_t *)addr, op | FUTEX_PRIVATE_FLAG, val, to, NULL, 0);
}

static size_t parse_size(const char *s, size_t def)
{
    if (!s || !*s)
        return def;
    char *end;
    unsigned long long v = strtoull(s, &end, 0);
    switch (*end) {
    case 'k': case 'K': v <<= 10; break;
    case 'm': case 'M': v <<= 20; break;
    case 'g': case 'G': v <<= 30; break;
    default: break;
    }
    return v ? (size_t)v : def;
}

/* ---- chunk writing ------------------------------------------------------------------- */

static void chunk(uint16_t type, uint32_t tid, uint32_t *seq, const struct iovec *parts, int n)
{
    int r = ptc_write_chunk(g.fd, type, 0, g.pid, tid, (*seq)++, parts, n);
    if (r < 0 && atomic_fetch_add(&g.write_errors, 1) == 0)
        warn("ptcall: cannot write the trace file %s: %s", g.output, strerror(-r));
}

/* A process-level chunk (tid 0). */
static void proc_chunk(uint16_t type, const struct iovec *parts, int n)
{
    pthread_mutex_lock(&g.proc_mu);
    chunk(type, 0, &g.proc_seq, parts, n);
    pthread_mutex_unlock(&g.proc_mu);
}

/* ---- time base ------------------------------------------------------------------------ */

static void timebase_init(void)
{
    struct ptc_timebase tb;
    memset(&tb, 0, sizeof(tb));
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof(attr));
    attr.size = sizeof(attr);
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.disabled = 1;
    const char *force = getenv("PTCALL_TIMEBASE"); /* "calibrated": skip perf (tests) */
    int fd = force && !strcmp(force, "calibrated")
                 ? -1
                 : (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
        long pg = sysconf(_SC_PAGESIZE);
        struct perf_event_mmap_page *p = mmap(NULL, (size_t)pg, PROT_READ, MAP_SHARED, fd, 0);
        if (p != MAP_FAILED) {
            for (int tries = 0; tries < 1000; tries++) {
                uint32_t seq = p->lock;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                int ok = p->cap_user_time && p->cap_user_time_zero;
                tb.time_shift = p->time_shift;
                tb.time_mult = p->time_mult;
                tb.time_zero = p->time_zero;
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
                if (p->lock == seq) {
                    if (ok)
                        tb.source = PTC_TIME_PERF_PAGE;
                    break;
                }
            }
            munmap(p, (size_t)pg);
        }
        close(fd);
    }
    if (tb.source == PTC_TIME_PERF_PAGE && tb.time_mult) {
        /* ns per tick = mult / 2^shift */
        tb.tsc_hz = (uint64_t)((1e9 * (double)(1ull << tb.time_shift)) / tb.time_mult);
    } else {
        /* calibrate against CLOCK_MONOTONIC over ~2 ms */
        uint64_t t0 = rdtsc_(), n0 = mono_ns(), t1, n1;
        do {
            t1 = rdtsc_();
            n1 = mono_ns();
        } while (n1 - n0 < 2000000);
        double hz = (double)(t1 - t0) * 1e9 / (double)(n1 - n0);
        tb.source = PTC_TIME_CALIBRATED;
        tb.time_shift = 31;
        while (tb.time_shift > 0 && 1e9 / hz * (double)(1ull << tb.time_shift) >= 4294967295.0)
            tb.time_shift--;
        tb.time_mult = (uint32_t)(1e9 / hz * (double)(1ull << tb.time_shift));
        uint64_t quot = t1 >> tb.time_shift, rem = t1 & ((1ull << tb.time_shift) - 1);
        uint64_t conv = quot * tb.time_mult + ((rem * tb.time_mult) >> tb.time_shift);
        tb.time_zero = n1 - conv;
        tb.tsc_hz = (uint64_t)hz;
    }
    g.tb = tb;
}

/* ---- configuration -------------------------------------------------------------------- */

static void xsave_init(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) /* OSXSAVE */ &&
        __get_cpuid_max(0, NULL) >= 0xd) {
        __cpuid_count(0xd, 0, a, b, c, d);
        if (b >= 576) {
            ptc_xsave_size = ((uint64_t)b + 63) & ~(uint64_t)63;
            ptc_use_xsave = 1;
            return;
        }
    }
    ptc_xsave_size = 512 + 64;
    ptc_use_xsave = 0;
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);
static void on_exit_handler(int status, void *arg);
static void thread_key_destructor(void *p);

static void init(void)
{
    const char *be = getenv("PTCALL_BACKEND");
    const char *out = getenv("PTCALL_OUTPUT");
    if (!be || strcmp(be, "soft") || !out || out[0] != '/' || strlen(out) >= PATH_MAX)
        return;
    strcpy(g.output, out);
    const char *ts = getenv("PTCALL_TIMESTAMPS");
    g.timed = !(ts && !strcmp(ts, "0"));
    const char *mode = getenv("PTCALL_MODE");
    g.drop = mode && !strcmp(mode, "drop");
    g.rec = g.timed ? 16 : 8;
    size_t bs = parse_size(getenv("PTCALL_BUFFER"), 256 << 10);
    if (bs < 4096)
        bs = 4096;
    if (bs > (256ull << 20))
        bs = 256ull << 20;
    g.bufsize = (bs + 4095) & ~(size_t)4095;
    long nb = strtol(getenv("PTCALL_BUFFERS") ? getenv("PTCALL_BUFFERS") : "4", NULL, 10);
    g.nbufs = nb < 2 ? 2 : nb > MAX_BUFS ? MAX_BUFS : (int)nb;
    g.handler = g.timed ? ptc_soft_handler_timed : ptc_soft_handler;
    g.debug = getenv("PTCALL_DEBUG") && getenv("PTCALL_DEBUG")[0] == '1';
    xsave_init();
    g.real_execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    g.real_execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    g.real_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    g.real__exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    if (pthread_key_create(&g.key, thread_key_destructor) != 0)
        return;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    /* Registered before __libc_start_main registers the dynamic linker's destructor
     * (library constructors run first), on_exit handlers run after all destructors and
     * after the program's own atexit handlers: the last point where code can still run. */
    on_exit(on_exit_handler, NULL);
    g.enabled = 1;
}

__attribute__((constructor(101))) static void ptc_ctor(void) { pthread_once(&init_once, init); }

/* ---- the queue to the drain ----------------------------------------------------------- */

static void push(struct item *it)
{
    struct item *h = atomic_load_explicit(&g.qhead, memory_order_relaxed);
    do
        it->next = h;
    while (!atomic_compare_exchange_weak_explicit(&g.qhead, &h, it, memory_order_release,
                                                  memory_order_relaxed));
    atomic_fetch_add(&g.qseq, 1);
    if (atomic_load(&g.drain_sleeping))
        futex_(&g.qseq, FUTEX_WAKE, 1, NULL);
}

/* ---- threads -------------------------------------------------------------------------- */

static void thread_name(char name[16])
{
    memset(name, 0, 16);
    if (prctl(PR_GET_NAME, name) != 0)
        name[0] = 0;
    name[15] = 0;
}

#define DISCARD_SIZE (64u << 10)

/* One mapping per thread: its state, then its buffers, then (drop mode) the discard area. */
static size_t thread_map_size(void)
{
    return ((sizeof(struct thread) + 4095) & ~(size_t)4095) + (size_t)g.nbufs * g.bufsize +
           (g.drop ? DISCARD_SIZE : 0);
}

static struct thread *thread_new(void)
{
    struct thread *ts = map_anon(thread_map_size());
    if (!ts)
        return NULL;
    uint8_t *p = (uint8_t *)ts + ((sizeof(struct thread) + 4095) & ~(size_t)4095);
    ts->nbufs = g.nbufs;
    for (int i = 0; i < ts->nbufs; i++) {
        ts->bufs[i].data = p;
        p += g.bufsize;
        ts->bufs[i].it.type = IT_BUF;
        ts->bufs[i].ts = ts;
    }
    if (g.drop)
        ts->discard = p;
    ts->start_it.type = IT_THREAD_START;
    ts->exit_it.type = IT_THREAD_EXIT;
    ts->tid = gettid_();
    thread_name(ts->name);
    ts->start_tsc = rdtsc_();
    return ts;
}

static void thread_free(struct thread *ts) { munmap(ts, thread_map_size()); }

/* The calling thread's state, created on its first event. NULL if tracing does not apply. */
static struct thread *self_thread(void)
{
    struct ptc_tls *t = &ptc_tls;
    if (t->state == TS_ACTIVE)
        return t->ts;
    if (t->state != TS_NEW || !atomic_load(&g.active) || atomic_load(&g.finishing))
        return NULL;
    t->state = TS_INIT; /* events of signal handlers meanwhile are not recorded */
    struct thread *ts = thread_new();
    if (!ts) {
        t->state = TS_IGNORE;
        return NULL;
    }
    ts->tls = t;
    pthread_mutex_lock(&g.thr_mu);
    ts->next = g.threads;
    g.threads = ts;
    pthread_mutex_unlock(&g.thr_mu);
    t->ts = ts;
    tls_set(t, 0, 0);
    t->state = TS_ACTIVE;
    pthread_setspecific(g.key, ts);
    push(&ts->start_it);
    return ts;
}

static struct buf *take_free(struct thread *ts)
{
    for (int i = 0; i < ts->nbufs; i++)
        if (atomic_load_explicit(&ts->bufs[i].state, memory_order_acquire) == B_FREE)
            return &ts->bufs[i];
    return NULL;
}

/* Hands the current buffer (or the discard area's count) to the drain; the thread then
 * has no buffer. */
static void retire_current(struct thread *ts, uint64_t now)
{
    struct ptc_tls *t = ts->tls;
    uintptr_t pos = t->pos < t->end ? t->pos : t->end;
    if (ts->discarding) {
        ts->pending_drop += (pos - (uintptr_t)ts->discard) / g.rec;
        ts->discarding = 0;
    } else if (ts->cur) {
        struct buf *b = ts->cur;
        b->len = pos - (uintptr_t)b->data;
        b->end_tsc = now;
        ts->cur = NULL;
        if (b->len) {
            atomic_store(&b->state, B_QUEUED);
            push(&b->it);
        } else {
            atomic_store(&b->state, B_FREE);
        }
    }
    tls_set(t, 0, 0);
}

static void put_raw(struct thread *ts, uintptr_t v, uint64_t tsc);

/* Gives the thread a buffer with room: a free one (waiting for the drain unless dropping
 * or told not to) or, in drop mode, the discard area. */
static void switch_buffer(struct thread *ts, int may_drop)
{
    struct ptc_tls *t = ts->tls;
    uint64_t now = rdtsc_();
    retire_current(ts, now);
    struct buf *b = take_free(ts);
    if (!b && g.drop && may_drop) {
        ts->discarding = 1;
        tls_set(t, (uintptr_t)ts->discard, (uintptr_t)ts->discard + DISCARD_SIZE);
        return;
    }
    if (!b) {
        uint64_t w0 = mono_ns();
        ts->waits++;
        for (;;) {
            atomic_store(&ts->waiting, 1);
            uint32_t seq = atomic_load(&ts->free_seq);
            b = take_free(ts);
            if (b)
                break;
            if (!atomic_load(&g.drain_running) || atomic_load(&g.finishing)) {
                /* nobody will free a buffer: the caller counts its event as dropped */
                atomic_store(&ts->waiting, 0);
                ts->wait_ns += mono_ns() - w0;
                tls_set(t, 0, 0);
                return;
            }
            struct timespec to = {0, 100 * 1000 * 1000};
            futex_(&ts->free_seq, FUTEX_WAIT, seq, &to);
        }
        atomic_store(&ts->waiting, 0);
        ts->wait_ns += mono_ns() - w0;
        now = rdtsc_();
    }
    atomic_store(&b->state, B_FILLING);
    b->start_tsc = now;
    b->len = 0;
    ts->cur = b;
    tls_set(t, (uintptr_t)b->data, (uintptr_t)b->data + g.bufsize);
    if (ts->pending_drop) {
        uint64_t n = ts->pending_drop;
        ts->pending_drop = 0;
        ts->dropped += n;
        put_raw(ts, (n << 8) | (PTC_SOFT_LOSS << 4) | 1, now);
    }
}

/* Appends one record (stub address, or a control record (operand << 8 | type << 4 | 1)).
 * Reserves like the handler does (an xadd), so that a signal handler's events on this
 * thread, which take the fast path whenever there is room, never share its slot. */
static void put_raw(struct thread *ts, uintptr_t v, uint64_t tsc)
{
    struct ptc_tls *t = ts->tls;
    for (int tries = 0; tries < 3; tries++) {
        uintptr_t end = t->end;
        if (end) {
            uintptr_t p = __atomic_fetch_add(&t->pos, g.rec, __ATOMIC_RELAXED);
            if (p + g.rec <= end) {
                uint64_t *r = (uint64_t *)p;
                if (g.timed)
                    r[1] = tsc;
                __atomic_store_n(&r[0], (uint64_t)v, __ATOMIC_RELEASE);
                return;
            }
        }
        switch_buffer(ts, 1);
        if (!t->end)
            break;
    }
    ts->pending_drop++; /* nowhere to put it (no drain): reported with the next LOSS */
}

static void put_control(struct thread *ts, unsigned type, uint64_t operand)
{
    put_raw(ts, (uintptr_t)((operand << 8) | (type << 4) | 1), rdtsc_());
}

/* Reports events dropped by nested slow paths right after the current record. */
static void put_nested_loss(struct thread *ts)
{
    uint64_t n = atomic_exchange(&ts->nested_drop, 0);
    if (n) {
        ts->dropped += n;
        put_control(ts, PTC_SOFT_LOSS, n);
    }
}

void ptc_soft_slow(uintptr_t ret, uint64_t tsc)
{
    struct ptc_tls *t = &ptc_tls;
    int saved_errno = errno;
    struct thread *ts = t->state == TS_ACTIVE ? t->ts : NULL;
    if (!ts) {
        if (t->state == TS_NEW) {
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_BLOCK, &all, &old);
            ts = self_thread();
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (!ts) {
            tls_set(t, 0, 0);
            atomic_fetch_add(&g.late_events, 1);
            errno = saved_errno;
            return;
        }
    }
    if (atomic_exchange(&ts->in_slow, 1)) {
        atomic_fetch_add(&ts->nested_drop, 1);
        errno = saved_errno;
        return;
    }
    if (atomic_load(&g.finishing)) {
        tls_set(t, 0, 0);
        atomic_fetch_add(&g.late_events, 1);
    } else if (t->end && t->pos + g.rec <= t->end) {
        put_raw(ts, ret, tsc); /* room after all (a nested slow path switched buffers) */
        put_nested_loss(ts);
    } else {
        /* Switching buffers makes system calls, at whose return pending signals would be
         * delivered, and their handlers' events lost (in_slow): hold signals meanwhile. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        put_raw(ts, ret, tsc);
        put_nested_loss(ts);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    atomic_store(&ts->in_slow, 0);
    errno = saved_errno;
}

/* Thread exit (TLS destructor): hand everything over, and a THREAD exit item. */
static void thread_key_destructor(void *p)
{
    struct thread *ts = p;
    struct ptc_tls *t = &ptc_tls;
    if (!ts || t->ts != ts || t->state != TS_ACTIVE)
        return;
    if (atomic_exchange(&ts->in_slow, 1))
        return;
    if (!atomic_load(&g.finishing)) {
        put_nested_loss(ts);
        if (ts->discarding || ts->pending_drop) {
            /* report the drops at their place: wait for a buffer to hold the LOSS record */
            retire_current(ts, rdtsc_());
            if (ts->pending_drop)
                switch_buffer(ts, 0);
        }
        retire_current(ts, rdtsc_());
        ts->dropped += ts->pending_drop; /* only if no buffer could be had */
        ts->pending_drop = 0;
        thread_name(ts->name);
        ts->exit_tsc = rdtsc_();
        t->state = TS_EXITED;
        t->ts = NULL;
        tls_set(t, 0, 0);
        push(&ts->exit_it);
    } else {
        t->state = TS_EXITED;
        tls_set(t, 0, 0);
    }
    /* ts is now the drain's; in_slow stays set */
}

/* ---- the drain ------------------------------------------------------------------------ */

#define STUB_NONE UINT32_MAX

/* The object whose stubs hold a: the oldest one whose MODULE_UNLOAD the drain has not
 * written yet (a thread's events precede its dlclose's unload, and a later dlopen at the same
 * address is newer), else the newest unloaded one (destructors at exit run after their
 * object unregistered). */
static uint32_t lookup(uint64_t a)
{
    struct object *o = g.cache;
    if (o && a - o->stubs_start < o->stubs_end - o->stubs_start)
        return o->ids[(a - o->stubs_start) >> 4];
    uint32_t n = atomic_load_explicit(&g.nobjs, memory_order_acquire);
    struct object *dead = NULL;
    for (uint32_t i = 0; i < n; i++) {
        o = g.objs[i];
        if (a - o->stubs_start < o->stubs_end - o->stubs_start) {
            if (!o->drain_dead) {
                g.cache = o;
                return o->ids[(a - o->stubs_start) >> 4];
            }
            dead = o;
        }
    }
    if (dead) {
        g.cache = dead;
        return dead->ids[(a - dead->stubs_start) >> 4];
    }
    return STUB_NONE;
}

static void write_thread_chunk(struct thread *ts, int event, uint64_t tsc)
{
    struct ptc_thread th;
    memset(&th, 0, sizeof(th));
    th.event = (uint32_t)event;
    th.tsc = tsc;
    if (event == PTC_THREAD_EXIT) {
        th.events = ts->events;
        th.dropped = ts->dropped;
        th.waits = ts->waits;
        th.wait_ns = ts->wait_ns;
    }
    struct iovec v[2] = {{&th, sizeof(th)}, {ts->name, strlen(ts->name) + 1}};
    chunk(PTC_CHUNK_THREAD, ts->tid, &ts->seq, v, 2);
}

/* Encodes len bytes of raw records of ts as one SOFT_EVENTS chunk. */
static void encode(struct thread *ts, uint8_t *data, size_t len, uint64_t start_tsc,
                   uint64_t end_tsc, int wait_for_writers)
{
    if (!ts->start_written) {
        write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
        ts->start_written = 1;
    }
    /* locals: the byte stores through `o` would otherwise force reloads of every global */
    const size_t rec = g.rec;
    const int timed = g.timed;
    const size_t n = len / rec;
    uint8_t *o = g.enc + sizeof(struct ptc_soft_events);
    uint8_t *const lim = g.enc + g.enc_size - 64;
    struct object *cache = g.cache;
    uint64_t c0 = cache ? cache->stubs_start : 1, csz = cache ? cache->stubs_end - c0 : 0;
    const uint32_t *cids = cache ? cache->ids : NULL;
    uint64_t prev = start_tsc, hits = 0, lost = 0;
    uint32_t nrec = 0;
    uint64_t waited_ns = 0;
    for (size_t i = 0; i < n && o <= lim; i++) {
        uint64_t *r = (uint64_t *)(data + i * rec);
        uint64_t v = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE);
        if (__builtin_expect(!v, 0) && wait_for_writers) {
            /* reserved but not yet written: its writer was interrupted (by a signal whose
             * handler filled the buffer); give it a moment */
            uint64_t t0 = mono_ns();
            while (!(v = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE)) &&
                   waited_ns + (mono_ns() - t0) < 20 * 1000 * 1000)
                sched_yield();
            waited_ns += mono_ns() - t0;
        }
        uint64_t tsc = timed ? r[1] : 0;
        if (__builtin_expect(!v, 0)) {
            v = (1u << 8) | (PTC_SOFT_LOSS << 4) | 1;
            tsc = prev;
            lost++;
        }
        uint64_t a = v & ~(uint64_t)15;
        if (__builtin_expect(a - c0 < csz, 1) && (v & 15) != 1) {
            uint32_t id = cids[(a - c0) >> 4];
            if (__builtin_expect(id != STUB_NONE, 1)) {
                uint64_t x = (uint64_t)id + PTC_SOFT_ID_BASE;
                if (x < 128)
                    *o++ = (uint8_t)x;
                else
                    o += ptc_varint_put(o, x);
                hits++;
            } else {
                o += ptc_varint_put(o, PTC_SOFT_LOSS);
                o += ptc_varint_put(o, 1);
                lost++;
            }
        } else if ((v & 15) == 1) {
            o += ptc_varint_put(o, (v >> 4) & 15);
            o += ptc_varint_put(o, v >> 8);
        } else {
            uint32_t id = lookup(a);
            if (g.cache) {
                cache = g.cache;
                c0 = cache->stubs_start;
                csz = cache->stubs_end - c0;
                cids = cache->ids;
            }
            if (id == STUB_NONE) {
                o += ptc_varint_put(o, PTC_SOFT_LOSS);
                o += ptc_varint_put(o, 1);
                lost++;
            } else {
                o += ptc_varint_put(o, (uint64_t)id + PTC_SOFT_ID_BASE);
                hits++;
            }
        }
        if (timed) {
            uint64_t z = ptc_zigzag((int64_t)(tsc - prev));
            if (z < 128)
                *o++ = (uint8_t)z;
            else
                o += ptc_varint_put(o, z);
            prev = tsc;
        }
        nrec++;
    }
    ts->dropped += lost + (n - nrec); /* n - nrec: cannot happen (enc_size = 2 * bufsize) */
    struct ptc_soft_events h = {
        .start_tsc = start_tsc,
        .end_tsc = end_tsc,
        .num_records = nrec,
        .flags = timed ? PTC_SOFT_F_TIMED : 0,
    };
    memcpy(g.enc, &h, sizeof(h));
    struct iovec v = {g.enc, (size_t)(o - g.enc)};
    if (nrec) {
        chunk(PTC_CHUNK_SOFT_EVENTS, ts->tid, &ts->seq, &v, 1);
        g.drain_chunks++;
        g.drain_bytes += v.iov_len;
    }
    ts->events += hits;
}

/* A SOFT_EVENTS chunk holding one LOSS record: drops found at the end of a stream (final
 * flush), so that THREAD exit `dropped` is still the sum of the stream's LOSS records. */
static void encode_loss(struct thread *ts, uint64_t n, uint64_t tsc)
{
    if (!n)
        return;
    if (!ts->start_written) {
        write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
        ts->start_written = 1;
    }
    uint8_t *o = g.enc + sizeof(struct ptc_soft_events);
    o += ptc_varint_put(o, PTC_SOFT_LOSS);
    o += ptc_varint_put(o, n);
    if (g.timed)
        o += ptc_varint_put(o, 0);
    struct ptc_soft_events h = {.start_tsc = tsc, .end_tsc = tsc, .num_records = 1,
                                .flags = g.timed ? PTC_SOFT_F_TIMED : 0};
    memcpy(g.enc, &h, sizeof(h));
    struct iovec v = {g.enc, (size_t)(o - g.enc)};
    chunk(PTC_CHUNK_SOFT_EVENTS, ts->tid, &ts->seq, &v, 1);
    ts->dropped += n;
}

static void release_buf(struct buf *b)
{
    struct thread *ts = b->ts;
    memset(b->data, 0, b->len);
    b->len = 0;
    atomic_store(&b->state, B_FREE);
    atomic_fetch_add(&ts->free_seq, 1);
    if (atomic_load(&ts->waiting))
        futex_(&ts->free_seq, FUTEX_WAKE, 1, NULL);
}

static void thread_unlink(struct thread *ts)
{
    pthread_mutex_lock(&g.thr_mu);
    for (struct thread **pp = &g.threads; *pp; pp = &(*pp)->next)
        if (*pp == ts) {
            *pp = ts->next;
            break;
        }
    pthread_mutex_unlock(&g.thr_mu);
}

/* Processes every queued item, in order. Caller holds drain_mu. */
static void drain_queue(int wait_for_writers)
{
    struct item *list = atomic_exchange_explicit(&g.qhead, NULL, memory_order_acquire);
    struct item *rev = NULL;
    while (list) {
        struct item *nx = list->next;
        list->next = rev;
        rev = list;
        list = nx;
    }
    while (rev) {
        struct item *it = rev;
        rev = rev->next;
        switch (it->type) {
        case IT_BUF: {
            struct buf *b = (struct buf *)it;
            uint64_t t0 = rdtsc_();
            encode(b->ts, b->data, b->len, b->start_tsc, b->end_tsc, wait_for_writers);
            g.drain_records += b->len / g.rec;
            release_buf(b);
            g.drain_tsc += rdtsc_() - t0;
            break;
        }
        case IT_THREAD_START: {
            struct thread *ts = (struct thread *)((char *)it - offsetof(struct thread, start_it));
            if (!ts->start_written) {
                write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
                ts->start_written = 1;
            }
            break;
        }
        case IT_THREAD_EXIT: {
            struct thread *ts = (struct thread *)((char *)it - offsetof(struct thread, exit_it));
            if (!ts->start_written) {
                write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
                ts->start_written = 1;
            }
            write_thread_chunk(ts, PTC_THREAD_EXIT, ts->exit_tsc);
            g.tot_events += ts->events;
            g.tot_dropped += ts->dropped;
            g.tot_waits += ts->waits;
            thread_unlink(ts);
            thread_free(ts);
            break;
        }
        case IT_UNLOAD: {
            struct object *o = (struct object *)((char *)it - offsetof(struct object, unload));
            o->drain_dead = 1;
            g.cache = NULL;
            struct ptc_module_unload u = {.module_id = o->module_id, .tsc = o->unload.tsc};
            struct iovec v = {&u, sizeof(u)};
            proc_chunk(PTC_CHUNK_MODULE_UNLOAD, &v, 1);
            break;
        }
        }
    }
}

static void *drain_main(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    atomic_store(&g.drain_tid, gettid_());
    prctl(PR_SET_NAME, "ptcall-drain");
    for (;;) {
        uint32_t s = atomic_load(&g.qseq);
        if (!atomic_load(&g.qhead)) {
            atomic_store(&g.drain_sleeping, 1);
            if (!atomic_load(&g.qhead) && !atomic_load(&g.finishing)) {
                struct timespec to = {0, 200 * 1000 * 1000};
                futex_(&g.qseq, FUTEX_WAIT, s, &to);
            }
            atomic_store(&g.drain_sleeping, 0);
        }
        pthread_mutex_lock(&g.drain_mu);
        if (atomic_load(&g.finishing)) {
            pthread_mutex_unlock(&g.drain_mu);
            break;
        }
        drain_queue(1);
        pthread_mutex_unlock(&g.drain_mu);
    }
    atomic_store(&g.drain_running, 0);
    return NULL;
}

static int drain_start(void)
{
    if (!g.enc) {
        g.enc_size = 2 * g.bufsize + 4096;
        g.enc = map_anon(g.enc_size);
        if (!g.enc)
            return -1;
    }
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 << 10);
    atomic_store(&g.drain_running, 1);
    /* the drain starts with every signal blocked: the program's handlers never run on it */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int r = pthread_create(&g.drain, &a, drain_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        atomic_store(&g.drain_running, 0);
        warn("ptcall: cannot start the drain thread: %s", strerror(r));
        return -1;
    }
    return 0;
}

/* ---- process start, modules ----------------------------------------------------------- */

static void write_module(struct object *o)
{
    struct ptc_map_summary s;
    if (ptc_map_scan(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start, o->stubs_start,
                     o->stubs_end, &s, NULL) < 0)
        return;
    size_t n = ptc_map_module_size(&s, o->path);
    size_t mapped = (n + 4095) & ~(size_t)4095;
    void *buf = map_anon(mapped);
    if (!buf)
        return;
    struct ptc_module info;
    memset(&info, 0, sizeof(info));
    info.module_id = o->module_id;
    info.first_stub_id = o->first_stub_id;
    info.load_bias = o->load_bias;
    info.stubs_start = o->stubs_start;
    info.stubs_end = o->stubs_end;
    long len = ptc_map_build_module(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                                    &s, &info, o->path, buf, n);
    if (len > 0) {
        struct iovec v = {buf, (size_t)len};
        proc_chunk(PTC_CHUNK_MODULE, &v, 1);
    }
    munmap(buf, mapped);
}

static void write_process_start(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    struct ptc_process p;
    memset(&p, 0, sizeof(p));
    p.ppid = g.start_how == PTC_PROC_FORK ? g.parent_pid : (uint32_t)getppid();
    p.how = g.start_how;
    p.parent_tid = g.parent_tid;
    p.flags = (g.timed ? PTC_FILE_F_TIMED : 0) | (g.drop ? PTC_FILE_F_DROP : 0);
    p.tsc = rdtsc_();
    p.time_ns = mono_ns();
    struct iovec v[2] = {{&p, sizeof(p)}, {exe, strlen(exe) + 1}};
    proc_chunk(PTC_CHUNK_PROCESS, v, 2);
    struct iovec t = {&g.tb, sizeof(g.tb)};
    proc_chunk(PTC_CHUNK_TIMEBASE, &t, 1);
}

static void crash_handler(int sig, siginfo_t *si, void *uc);

static int real_sigaction_(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!g.real_sigaction)
        g.real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
            RTLD_NEXT, "sigaction");
    return g.real_sigaction(sig, act, old);
}

static void install_signals(void)
{
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP, SIGSYS};
    static const int term[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGXCPU, SIGXFSZ};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = crash_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++) {
        struct sigaction cur;
        if (real_sigaction_(fatal[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_IGN)
            continue; /* ignored on purpose: leave it so */
        if (real_sigaction_(fatal[i], &sa, &g.prev_sa[fatal[i]]) == 0)
            atomic_store(&g.managed[fatal[i]], 1);
    }
    /* termination signals only where they would kill the process anyway */
    for (size_t i = 0; i < sizeof(term) / sizeof(term[0]); i++) {
        struct sigaction cur;
        if (real_sigaction_(term[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_DFL)
            real_sigaction_(term[i], &sa, &g.prev_sa[term[i]]);
    }
}

/* Opens the trace file and writes PROCESS + TIMEBASE. Caller holds reg_mu. */
static int activate(void)
{
    int fd = open(g.output, O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL, 0644);
    if (fd >= 0) { /* nobody prepared the file (no `ptcall record`): write its header */
        struct ptc_file_header h;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        ptc_file_header_init(&h, PTC_BACKEND_SOFT,
                             (g.timed ? PTC_FILE_F_TIMED : 0) | (g.drop ? PTC_FILE_F_DROP : 0),
                             (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
        if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
            close(fd);
            fd = -1;
        }
    } else if (errno == EEXIST) {
        fd = open(g.output, O_WRONLY | O_APPEND | O_CLOEXEC);
    }
    if (fd < 0) {
        warn("ptcall: cannot open the trace file %s: %s; not tracing", g.output, strerror(errno));
        return -1;
    }
    /* keep away from the low descriptors programs like to close or dup2 over */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    g.fd = fd;
    g.pid = (uint32_t)getpid();
    /* PTCALL_EXEC_PID=pid, set by our exec wrappers: this image replaces a traced one. Its
     * streams start again at seq 0 (a new life of the pid, docs/trace-format.md 4.2). */
    const char *ep = getenv("PTCALL_EXEC_PID");
    g.start_how = ep && (uint32_t)strtoul(ep, NULL, 10) == g.pid ? PTC_PROC_EXEC : PTC_PROC_START;
    timebase_init();
    write_process_start();
    if (drain_start() < 0)
        return -1;
    install_signals();
    atomic_store(&g.active, 1);
    return 0;
}

static int patch_stub(uint64_t a, uint64_t slot)
{
    uint8_t *p = (uint8_t *)(uintptr_t)a;
    int off = (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) ? 4 : 0;
    if (p[off] == 0xff && p[off + 1] == 0x15)
        return 0; /* already patched */
    if (p[off] != 0xc3)
        return -1;
    int64_t rel = (int64_t)slot - (int64_t)(a + (uint64_t)off + 6);
    if (rel < INT32_MIN || rel > INT32_MAX)
        return -2;
    int32_t r32 = (int32_t)rel;
    uint8_t code[16];
    memcpy(code, p, 16);
    code[off] = 0xff;
    code[off + 1] = 0x15;
    memcpy(code + off + 2, &r32, 4);
    code[off + 6] = 0xc3;
    uint64_t lo, hi;
    memcpy(&lo, code, 8);
    memcpy(&hi, code + 8, 8);
    /* bytes past the first 8 are not reachable until the first 8 change */
    if (off)
        __atomic_store_n((uint64_t *)(p + 8), hi, __ATOMIC_RELEASE);
    __atomic_store_n((uint64_t *)p, lo, __ATOMIC_RELEASE);
    return 0;
}

struct reg_ctx {
    struct object *o;
    uint32_t next_id;
    int patch;
    int bad_code, far;
};

static int fill_ids(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        c->o->ids[(a - c->o->stubs_start) >> 4] = c->next_id++;
    }
    return 0;
}

static int patch_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    if (!u->hdr.num_stubs)
        return 0;
    if (u->hdr.soft_slot_rel == 0) { /* no slot: leave this unit's stubs alone */
        c->far += (int)u->hdr.num_stubs;
        return 0;
    }
    __atomic_store_n((uint64_t *)(uintptr_t)u->slot_addr, (uint64_t)(uintptr_t)g.handler,
                     __ATOMIC_RELEASE);
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        int r = patch_stub(a, u->slot_addr);
        if (r == -1)
            c->bad_code++;
        else if (r == -2)
            c->far++;
    }
    return 0;
}

static int set_prot(uint64_t lo, uint64_t hi, int prot)
{
    uintptr_t a = (uintptr_t)lo & ~(uintptr_t)4095;
    uintptr_t b = ((uintptr_t)hi + 4095) & ~(uintptr_t)4095;
    return mprotect((void *)a, b - a, prot);
}

PTC_API void __ptcall_register_object(const void *map_start, const void *map_stop,
                                      const void *stubs_start, const void *stubs_stop)
{
    pthread_once(&init_once, init);
    if (!g.enabled || atomic_load(&g.finishing) || !map_start || map_stop <= map_start ||
        stubs_stop <= stubs_start)
        return;
    pthread_mutex_lock(&g.reg_mu);
    uint32_t n = atomic_load(&g.nobjs);
    for (uint32_t i = 0; i < n; i++)
        if (g.objs[i]->map_start == map_start && atomic_load(&g.objs[i]->live))
            goto out;
    if (n >= MAX_OBJECTS)
        goto out;
    size_t map_size = (size_t)((const char *)map_stop - (const char *)map_start);
    uint64_t s0 = (uint64_t)(uintptr_t)stubs_start, s1 = (uint64_t)(uintptr_t)stubs_stop;
    struct ptc_map_summary sum;
    size_t bad = 0;
    int err = ptc_map_scan(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1, &sum, &bad);
    Dl_info di;
    struct link_map *lm = NULL;
    char path[PATH_MAX] = "";
    uint64_t bias = 0;
    if (dladdr1(map_start, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
        bias = lm->l_addr;
        if (lm->l_name && lm->l_name[0])
            snprintf(path, sizeof(path), "%s", lm->l_name);
    }
    if (!path[0]) {
        ssize_t k = readlink("/proc/self/exe", path, sizeof(path) - 1);
        path[k > 0 ? k : 0] = 0;
    }
    if (err < 0) {
        warn("ptcall: %s: corrupt ptcall_map section (%s at offset %zu); not traced", path,
             ptc_map_strerror(err), bad);
        goto out;
    }
    if (!atomic_load(&g.active) && activate() < 0) {
        g.enabled = 0;
        goto out;
    }
    struct object *o = map_anon(sizeof(*o));
    if (!o)
        goto out;
    o->map_start = map_start;
    o->map_size = map_size;
    o->stubs_start = s0;
    o->stubs_end = s0 + ((s1 - s0 + 15) & ~(uint64_t)15);
    o->ids_bytes = (size_t)((o->stubs_end - s0) / 16) * sizeof(uint32_t);
    o->ids = map_anon(o->ids_bytes);
    if (!o->ids) {
        munmap(o, sizeof(*o));
        goto out;
    }
    memset(o->ids, 0xff, o->ids_bytes);
    o->module_id = n;
    o->first_stub_id = g.next_stub_id;
    o->num_stubs = sum.num_stubs;
    o->load_bias = bias;
    snprintf(o->path, sizeof(o->path), "%s", path);
    o->unload.it.type = IT_UNLOAD;
    atomic_store(&o->live, 1);
    g.next_stub_id += sum.num_stubs;
    struct reg_ctx c = {.o = o, .next_id = o->first_stub_id};
    ptc_map_walk(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1, fill_ids, &c, NULL);
    write_module(o);
    /* publish before patching: the drain must know the stubs before the first event */
    g.objs[n] = o;
    atomic_store_explicit(&g.nobjs, n + 1, memory_order_release);
    if (set_prot(s0, s1, PROT_READ | PROT_WRITE | PROT_EXEC) != 0 &&
        set_prot(s0, s1, PROT_READ | PROT_WRITE) != 0) {
        warn("ptcall: %s: cannot make the stub section writable (%s); not traced", path,
             strerror(errno));
        goto out;
    }
    ptc_map_walk(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1, patch_unit, &c, NULL);
    set_prot(s0, s1, PROT_READ | PROT_EXEC);
    if (c.bad_code)
        warn("ptcall: %s: %d stubs do not hold `ret`; left alone", path, c.bad_code);
    if (c.far)
        warn("ptcall: %s: %d stubs have no soft-handler slot in reach; left alone", path, c.far);
out:
    pthread_mutex_unlock(&g.reg_mu);
}

PTC_API void __ptcall_unregister_object(const void *map_start)
{
    if (!g.enabled || !atomic_load(&g.active) || atomic_load(&g.finishing))
        return;
    pthread_mutex_lock(&g.reg_mu);
    uint32_t n = atomic_load(&g.nobjs);
    for (uint32_t i = n; i-- > 0;) {
        struct object *o = g.objs[i];
        if (o->map_start == map_start && atomic_load(&o->live)) {
            atomic_store(&o->live, 0);
            /* the caller's own events so far belong before the unload */
            struct ptc_tls *t = &ptc_tls;
            struct thread *ts = t->state == TS_ACTIVE ? t->ts : NULL;
            if (ts && !atomic_exchange(&ts->in_slow, 1)) {
                put_nested_loss(ts);
                retire_current(ts, rdtsc_());
                atomic_store(&ts->in_slow, 0);
            }
            o->unload.tsc = rdtsc_();
            push(&o->unload.it);
            break;
        }
    }
    pthread_mutex_unlock(&g.reg_mu);
}

/* ---- flush points ---------------------------------------------------------------------- */

static int lock_with_timeout(pthread_mutex_t *m, uint64_t ns)
{
    uint64_t t0 = mono_ns();
    while (pthread_mutex_trylock(m) != 0) {
        if (mono_ns() - t0 > ns)
            return -1;
        sched_yield();
    }
    return 0;
}

/* Final flush: every queued buffer, every thread's current buffer, THREAD exit chunks and
 * PROCESS_END. After it the process records nothing more. crash: called from a signal
 * handler (bounded waits). */
static void finish(int how, int status, int crash)
{
    if (!g.enabled || !atomic_load(&g.active))
        return;
    if (atomic_exchange(&g.finishing, 1))
        return;
    struct ptc_tls *t = &ptc_tls;
    struct thread *self = t->state == TS_ACTIVE ? t->ts : NULL;
    uint64_t lost = 0;
    if (self) {
        if (!atomic_exchange(&self->in_slow, 1)) {
            put_nested_loss(self);
            retire_current(self, rdtsc_()); /* a discard count goes to pending_drop */
        } else if (self->cur) { /* crashed inside the runtime: do not touch its state */
            uintptr_t pos = t->pos < t->end ? t->pos : t->end;
            if (pos >= (uintptr_t)self->cur->data)
                lost += (pos - (uintptr_t)self->cur->data) / g.rec;
        }
    }
    uint64_t deadline = crash ? 2000000000ull : 30000000000ull;
    int drain_locked = lock_with_timeout(&g.drain_mu, deadline) == 0;
    if (!drain_locked) {
        /* the drain is stuck: say what is lost and end the process record anyway */
        struct ptc_loss l = {.kind = PTC_LOSS_CRASH, .count = 0, .tsc_to = rdtsc_()};
        static const char note[] = "drain thread did not respond; buffered events lost";
        for (struct item *it = atomic_load(&g.qhead); it; it = it->next)
            if (it->type == IT_BUF)
                l.count += ((struct buf *)it)->len / g.rec;
        struct iovec v[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
        chunk(PTC_CHUNK_LOSS, 0, &g.proc_seq, v, 2);
    } else {
        drain_queue(!crash);
        if (self && self->pending_drop) {
            encode_loss(self, self->pending_drop, rdtsc_());
            self->pending_drop = 0;
        }
        /* other threads are still running (they die with the process): take what their
         * current buffers hold now */
        if (lock_with_timeout(&g.thr_mu, crash ? 500000000ull : 5000000000ull) == 0) {
            for (struct thread *ts = g.threads; ts; ts = ts->next) {
                if (ts != self) {
                    struct ptc_tls *ot = ts->tls;
                    uintptr_t pos = ot->pos, end = ot->end;
                    if (pos > end)
                        pos = end;
                    if (ts->discarding)
                        ts->pending_drop += (pos - (uintptr_t)ts->discard) / g.rec;
                    else if (ts->cur && end && pos >= (uintptr_t)ts->cur->data && pos <= end)
                        encode(ts, ts->cur->data, pos - (uintptr_t)ts->cur->data,
                               ts->cur->start_tsc, rdtsc_(), 0);
                    encode_loss(ts, ts->pending_drop + atomic_exchange(&ts->nested_drop, 0),
                                rdtsc_());
                    ts->pending_drop = 0;
                }
                if (!ts->start_written) {
                    write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
                    ts->start_written = 1;
                }
                write_thread_chunk(ts, PTC_THREAD_EXIT, rdtsc_());
                g.tot_events += ts->events;
                g.tot_dropped += ts->dropped;
                g.tot_waits += ts->waits;
            }
            pthread_mutex_unlock(&g.thr_mu);
        }
        if (lost) {
            struct ptc_loss l = {.kind = PTC_LOSS_CRASH,
                                 .tid = self ? self->tid : 0,
                                 .count = lost,
                                 .tsc_to = rdtsc_()};
            static const char note[] = "events of the crashing thread's current buffer";
            struct iovec v[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
            proc_chunk(PTC_CHUNK_LOSS, v, 2);
        }
    }
    struct ptc_process_end e = {
        .how = (uint32_t)how,
        .status = status,
        .tsc = rdtsc_(),
        .events = g.tot_events,
        .dropped = g.tot_dropped,
        .waits = g.tot_waits,
    };
    struct iovec v = {&e, sizeof(e)};
    int locked = lock_with_timeout(&g.proc_mu, crash ? 500000000ull : 5000000000ull) == 0;
    chunk(PTC_CHUNK_PROCESS_END, 0, &g.proc_seq, &v, 1);
    if (locked)
        pthread_mutex_unlock(&g.proc_mu);
    atomic_store(&g.finished, 1);
    if (g.debug && g.tb.tsc_hz)
        warn("ptcall[%u]: drain: %llu records in %llu chunks, %llu bytes, %.2f ns/record "
             "(encode+write+recycle); %llu events after the end, %llu write errors",
             g.pid, (unsigned long long)g.drain_records, (unsigned long long)g.drain_chunks,
             (unsigned long long)g.drain_bytes,
             g.drain_records ? (double)g.drain_tsc * 1e9 / (double)g.tb.tsc_hz / (double)g.drain_records : 0.0,
             (unsigned long long)atomic_load(&g.late_events),
             (unsigned long long)atomic_load(&g.write_errors));
    tls_set(t, 0, 0);
    if (t->state == TS_ACTIVE)
        t->state = TS_EXITED;
    if (drain_locked) /* the drain sees `finishing` and stops */
        pthread_mutex_unlock(&g.drain_mu);
}

/* Writes the calling thread's current buffer and everything queued; tracing goes on. */
static void flush_partial(void)
{
    if (!g.enabled || !atomic_load(&g.active) || atomic_load(&g.finishing))
        return;
    struct ptc_tls *t = &ptc_tls;
    struct thread *self = t->state == TS_ACTIVE ? t->ts : NULL;
    if (self && !atomic_exchange(&self->in_slow, 1)) {
        put_nested_loss(self);
        retire_current(self, rdtsc_()); /* the next event takes a new buffer */
        atomic_store(&self->in_slow, 0);
    }
    if (lock_with_timeout(&g.drain_mu, 1000000000ull) == 0) {
        if (!atomic_load(&g.finishing))
            drain_queue(0); /* from a signal handler: its own thread cannot finish a write */
        pthread_mutex_unlock(&g.drain_mu);
    }
}

static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    finish(PTC_END_EXIT, status, 0);
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    int saved = errno;
    struct sigaction *prev = &g.prev_sa[sig];
    int terminal = !(prev->sa_flags & SA_SIGINFO) &&
                   (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN);
    if (terminal && gettid_() != atomic_load(&g.drain_tid) && !atomic_exchange(&g.in_crash, 1))
        finish(PTC_END_SIGNAL, sig, 1);
    if (terminal) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        atomic_store(&g.managed[sig], 0);
        real_sigaction_(sig, &dfl, NULL);
        /* a fault re-executes and now kills; a sent signal must be sent again */
        if (si->si_code <= 0 || sig == SIGABRT || sig == SIGINT || sig == SIGTERM ||
            sig == SIGHUP || sig == SIGQUIT)
            raise(sig);
        errno = saved;
        return;
    }
    /* The program's own handler runs next and may end the process in a way we do not see
     * (resetting the action and re-raising): write what is buffered so far, without ending
     * the process's record. Only the first few times: some programs take faults routinely. */
    static _Atomic int chained;
    if (atomic_fetch_add(&chained, 1) < 8 && gettid_() != atomic_load(&g.drain_tid))
        flush_partial();
    /* call it as the kernel would have: its mask, its SA_RESETHAND */
    struct sigaction h = *prev;
    if (h.sa_flags & SA_RESETHAND) {
        memset(prev, 0, sizeof(*prev));
        prev->sa_handler = SIG_DFL;
    }
    sigset_t mask = h.sa_mask, old;
    if (!(h.sa_flags & SA_NODEFER))
        sigaddset(&mask, sig);
    pthread_sigmask(SIG_BLOCK, &mask, &old);
    errno = saved;
    if (h.sa_flags & SA_SIGINFO)
        h.sa_sigaction(sig, si, uc);
    else
        h.sa_handler(sig);
    saved = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved;
}

/* While tracing, the runtime keeps its handler for the fatal signals so that a crash is
 * flushed even when the program installs its own handler later: the program's sigaction()
 * and signal() calls for those signals change what the runtime's handler chains to (and what
 * they report), not the kernel's action. SIG_IGN goes through to the kernel. */
PTC_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= 65 || !atomic_load(&g.managed[sig]))
        return real_sigaction_(sig, act, old);
    struct sigaction prev = g.prev_sa[sig];
    if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN) {
        int r = real_sigaction_(sig, act, NULL);
        if (r == 0) {
            atomic_store(&g.managed[sig], 0);
            g.prev_sa[sig] = *act;
            if (old)
                *old = prev;
        }
        return r;
    }
    if (act)
        g.prev_sa[sig] = *act;
    if (old)
        *old = prev;
    return 0;
}

PTC_API sighandler_t signal(int sig, sighandler_t handler)
{
    if (sig <= 0 || sig >= 65 || !atomic_load(&g.managed[sig])) {
        static sighandler_t (*real_signal)(int, sighandler_t);
        if (!real_signal)
            real_signal = (sighandler_t(*)(int, sighandler_t))dlsym(RTLD_NEXT, "signal");
        return real_signal(sig, handler);
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
                                        : old.sa_handler;
}

/* ---- fork ------------------------------------------------------------------------------ */

static void atfork_prepare(void)
{
    if (!g.enabled)
        return;
    pthread_mutex_lock(&g.reg_mu);
    pthread_mutex_lock(&g.drain_mu);
    pthread_mutex_lock(&g.thr_mu);
    pthread_mutex_lock(&g.proc_mu);
    g.parent_tid = gettid_();
}

static void atfork_parent(void)
{
    if (!g.enabled)
        return;
    pthread_mutex_unlock(&g.proc_mu);
    pthread_mutex_unlock(&g.thr_mu);
    pthread_mutex_unlock(&g.drain_mu);
    pthread_mutex_unlock(&g.reg_mu);
}

static void atfork_child(void)
{
    if (!g.enabled)
        return;
    pthread_mutex_init(&g.reg_mu, NULL);
    pthread_mutex_init(&g.drain_mu, NULL);
    pthread_mutex_init(&g.thr_mu, NULL);
    pthread_mutex_init(&g.proc_mu, NULL);
    if (!atomic_load(&g.active) || atomic_load(&g.finishing)) {
        /* nothing registered yet (or the parent had finished): start from scratch */
        atomic_store(&g.active, 0);
        atomic_store(&g.finishing, 0);
        atomic_store(&g.finished, 0);
        ptc_tls.state = TS_NEW;
        ptc_tls.ts = NULL;
        tls_set(&ptc_tls, 0, 0);
        g.threads = NULL;
        atomic_store(&g.qhead, NULL);
        if (g.fd >= 0)
            close(g.fd);
        g.fd = -1;
        g.nobjs = 0;
        g.next_stub_id = 0;
        g.proc_seq = 0;
        return;
    }
    g.parent_pid = g.pid;
    g.pid = (uint32_t)getpid();
    g.start_how = PTC_PROC_FORK;
    g.proc_seq = 0;
    g.tot_events = g.tot_dropped = g.tot_waits = 0;
    g.cache = NULL;
    atomic_store(&g.qhead, NULL);
    atomic_store(&g.drain_running, 0);
    atomic_store(&g.drain_sleeping, 0);
    atomic_store(&g.drain_tid, 0);
    /* the parent's pending events stay the parent's: drop every other thread and reset
     * this one's buffers (fresh zero pages, no copy) */
    struct ptc_tls *t = &ptc_tls;
    struct thread *self = t->state == TS_ACTIVE ? t->ts : NULL;
    for (struct thread *ts = g.threads, *nx; ts; ts = nx) {
        nx = ts->next;
        if (ts != self)
            thread_free(ts);
    }
    g.threads = self;
    if (self) {
        self->next = NULL;
        for (int i = 0; i < self->nbufs; i++) {
            mmap(self->bufs[i].data, g.bufsize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            self->bufs[i].len = 0;
            atomic_store(&self->bufs[i].state, B_FREE);
        }
        self->cur = NULL;
        self->discarding = 0;
        self->pending_drop = 0;
        atomic_store(&self->nested_drop, 0);
        atomic_store(&self->in_slow, 0);
        self->dropped = self->waits = self->wait_ns = 0;
        self->seq = 0;
        self->events = 0;
        self->start_written = 0;
        self->tid = gettid_();
        self->start_tsc = rdtsc_();
        tls_set(t, 0, 0);
    }
    write_process_start();
    uint32_t n = atomic_load(&g.nobjs);
    for (uint32_t i = 0; i < n; i++) {
        g.objs[i]->drain_dead = !atomic_load(&g.objs[i]->live);
        if (!g.objs[i]->drain_dead)
            write_module(g.objs[i]);
    }
    if (drain_start() < 0) {
        atomic_store(&g.finishing, 1);
        return;
    }
    if (self)
        push(&self->start_it);
}

PTC_API pid_t fork(void)
{
    pthread_once(&init_once, init);
    if (!g.real_fork)
        g.real_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    /* the fork point's time is taken before the child exists, so that in time order it
     * precedes everything the child records */
    uint64_t tsc = rdtsc_();
    pid_t pid = g.real_fork();
    if (pid > 0 && g.enabled && atomic_load(&g.active) && !atomic_load(&g.finishing)) {
        struct thread *ts = self_thread();
        if (ts && !atomic_exchange(&ts->in_slow, 1)) {
            put_raw(ts, (uintptr_t)(((uint64_t)pid << 8) | (PTC_SOFT_FORK << 4) | 1), tsc);
            put_nested_loss(ts);
            /* hand the fork point to the drain now: readers then usually meet it in the file
             * before the child's first events */
            retire_current(ts, rdtsc_());
            atomic_store(&ts->in_slow, 0);
        }
    }
    return pid;
}

/* ---- exec and _exit -------------------------------------------------------------------- */

static int tracing_here(void)
{
    return g.enabled && atomic_load(&g.active) && !atomic_load(&g.finishing) &&
           (uint32_t)getpid() == g.pid; /* not in a vfork child */
}

/* envp plus PTCALL_EXEC_PID=<pid>, in caller-provided storage. */
static char **exec_env(char *const envp[], char **store, size_t cap, char *var, size_t varsz)
{
    snprintf(var, varsz, "PTCALL_EXEC_PID=%u", g.pid);
    size_t n = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        if (!strncmp(envp[i], "PTCALL_EXEC_PID=", 16))
            continue;
        if (n + 2 >= cap)
            return NULL;
        store[n++] = envp[i];
    }
    store[n++] = var;
    store[n] = NULL;
    return store;
}

extern char **environ;

static int do_exec(const char *file, char *const argv[], char *const envp[], int search)
{
    pthread_once(&init_once, init);
    if (!g.real_execve)
        g.real_execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    if (!g.real_execvpe)
        g.real_execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    if (!tracing_here())
        return search ? g.real_execvpe(file, argv, envp) : g.real_execve(file, argv, envp);
    size_t n = 0;
    while (envp && envp[n])
        n++;
    size_t cap = n + 2;
    char **store = mmap(NULL, cap * sizeof(char *), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char var[64];
    char *const *env = envp;
    finish(PTC_END_EXEC, 0, 0);
    if (store != MAP_FAILED)
        env = exec_env(envp, store, cap, var, sizeof(var));
    if (!env)
        env = envp;
    int r = search ? g.real_execvpe(file, argv, env) : g.real_execve(file, argv, env);
    int e = errno;
    if (store != MAP_FAILED)
        munmap(store, cap * sizeof(char *));
    errno = e;
    return r; /* exec failed: this process records nothing more (docs/runtime.md) */
}

PTC_API int execve(const char *path, char *const argv[], char *const envp[])
{
    return do_exec(path, argv, envp, 0);
}
PTC_API int execv(const char *path, char *const argv[]) { return do_exec(path, argv, environ, 0); }
PTC_API int execvp(const char *file, char *const argv[]) { return do_exec(file, argv, environ, 1); }
PTC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return do_exec(file, argv, envp, 1);
}

#define COLLECT_ARGS(first, ap, argv)                                                    \
    size_t argc_ = 1;                                                                    \
    va_start(ap, first);                                                                 \
    while (va_arg(ap, char *))                                                           \
        argc_++;                                                                         \
    va_end(ap);                                                                          \
    char *argv[argc_ + 1];                                                               \
    argv[0] = (char *)first;                                                             \
    va_start(ap, first);                                                                 \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                               \
        argv[i_] = va_arg(ap, char *);

PTC_API int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return do_exec(path, argv, environ, 0);
}
PTC_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return do_exec(file, argv, environ, 1);
}
PTC_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return do_exec(path, argv, envp, 0);
}

static void __attribute__((noreturn)) do__exit(int status)
{
    pthread_once(&init_once, init);
    if (tracing_here())
        finish(PTC_END__EXIT, status, 0);
    if (!g.real__exit)
        g.real__exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    if (g.real__exit)
        g.real__exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

PTC_API void _exit(int status) { do__exit(status); }
PTC_API void _Exit(int status) { do__exit(status); }
