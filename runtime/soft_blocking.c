/* Blocked time (issue 27, item 6; docs/runtime.md, *Blocking calls*). libptcall.so defines
 * the C library's blocking functions and forwards each to the next definition (the C
 * library's). While this process traces events, a traced thread's call into one is recorded
 * as a call of a pseudo-function of the runtime's own module "[blocking]": an entry record
 * before, an exit record after, through the same id handler an id stub uses. A decoder then
 * sees that time as a callee of the calling function, and the MODULE_BLOCKING chunk tells it
 * that the callee waited rather than ran.
 *
 * Never recorded: calls before the runtime started or while it is not tracing events (one
 * flag test, then the call), calls from threads that have not entered an instrumented
 * function yet or are the runtime's own (their state is not TS_ACTIVE), and calls made by
 * libptcall.so itself (the return address lies in its text: its locks, its trace writes,
 * its sleeps). errno and the return value are the C library's: the records are stored by
 * the handler, which keeps errno, and errno is put back after the exit record anyway. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "soft_blocking.h"
#include "soft_internal.h"

/* name, return type, parameters, arguments; the order is the pseudo-functions' order in the
 * MODULE chunk (docs/trace-format.md 4.22 lists them) */
#define BLOCKING_FUNCS(X)                                                                      \
    X(pthread_cond_wait, int, (pthread_cond_t * c, pthread_mutex_t * m), (c, m))               \
    X(pthread_cond_timedwait, int,                                                             \
      (pthread_cond_t * c, pthread_mutex_t * m, const struct timespec * t), (c, m, t))         \
    X(pthread_mutex_lock, int, (pthread_mutex_t * m), (m))                                     \
    X(pthread_join, int, (pthread_t th, void **r), (th, r))                                    \
    X(sem_wait, int, (sem_t * s), (s))                                                         \
    X(sem_timedwait, int, (sem_t * s, const struct timespec *t), (s, t))                       \
    X(read, ssize_t, (int fd, void *b, size_t n), (fd, b, n))                                  \
    X(write, ssize_t, (int fd, const void *b, size_t n), (fd, b, n))                           \
    X(recv, ssize_t, (int fd, void *b, size_t n, int fl), (fd, b, n, fl))                      \
    X(recvfrom, ssize_t,                                                                       \
      (int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *al),                  \
      (fd, b, n, fl, a, al))                                                                   \
    X(send, ssize_t, (int fd, const void *b, size_t n, int fl), (fd, b, n, fl))                \
    X(sendto, ssize_t,                                                                         \
      (int fd, const void *b, size_t n, int fl, const struct sockaddr *a, socklen_t al),       \
      (fd, b, n, fl, a, al))                                                                   \
    X(accept, int, (int fd, struct sockaddr *a, socklen_t *al), (fd, a, al))                   \
    X(accept4, int, (int fd, struct sockaddr *a, socklen_t *al, int fl), (fd, a, al, fl))      \
    X(connect, int, (int fd, const struct sockaddr *a, socklen_t al), (fd, a, al))             \
    X(poll, int, (struct pollfd * p, nfds_t n, int t), (p, n, t))                              \
    X(ppoll, int,                                                                              \
      (struct pollfd * p, nfds_t n, const struct timespec *t, const sigset_t *m),              \
      (p, n, t, m))                                                                            \
    X(epoll_wait, int, (int fd, struct epoll_event *e, int n, int t), (fd, e, n, t))           \
    X(epoll_pwait, int, (int fd, struct epoll_event *e, int n, int t, const sigset_t *m),      \
      (fd, e, n, t, m))                                                                        \
    X(select, int, (int n, fd_set * r, fd_set * w, fd_set * x, struct timeval * t),            \
      (n, r, w, x, t))                                                                         \
    X(pselect, int,                                                                            \
      (int n, fd_set *r, fd_set *w, fd_set *x, const struct timespec *t, const sigset_t *m),   \
      (n, r, w, x, t, m))                                                                      \
    X(nanosleep, int, (const struct timespec *r, struct timespec *rem), (r, rem))              \
    X(clock_nanosleep, int,                                                                    \
      (clockid_t c, int fl, const struct timespec *r, struct timespec *rem),                   \
      (c, fl, r, rem))                                                                         \
    X(usleep, int, (useconds_t u), (u))                                                        \
    X(sleep, unsigned, (unsigned s), (s))                                                      \
    X(wait, pid_t, (int *st), (st))                                                            \
    X(waitpid, pid_t, (pid_t p, int *st, int o), (p, st, o))                                   \
    X(wait4, pid_t, (pid_t p, int *st, int o, struct rusage *ru), (p, st, o, ru))              \
    X(waitid, int, (idtype_t it, id_t id, siginfo_t * si, int o), (it, id, si, o))

#define BLK_ENUM(name, ret, params, args) BLK_##name,
enum { BLOCKING_FUNCS(BLK_ENUM) BLK_N };

#define BLK_NAME(name, ret, params, args) #name,
static const char *const blk_names[BLK_N] = {BLOCKING_FUNCS(BLK_NAME)};

/* The [blocking] module (docs/trace-format.md 4.22): a module id no object takes (objects
 * count up from 0) */
#define BLK_MODULE_ID 0xfffffff0u
#define BLK_PATH PTC_BLOCKING_MODULE_PATH

void ptc_blk_emit(uint32_t record); /* soft_blocking_emit.S */
extern void *ptc_blk_handler;       /* soft_blocking_emit.S: where ptc_blk_emit jumps */

/* the C library's definitions, resolved once */
static void *_Atomic blk_real[BLK_N];
/* set while this process traces events and PTCALL_BLOCKING is not 0 */
static _Atomic int blk_armed;
static int blk_enabled;           /* PTCALL_BLOCKING and the mode allow it (start-up) */
static uint32_t blk_first_id;     /* stub id of the entry of pseudo-function 0 */
/* Stub addresses for the MODULE chunk: two 16-byte slots per pseudo-function in this
 * library, so that no other module's stubs can have them */
static const uint8_t blk_stub_space[BLK_N * 2 * 16] __attribute__((aligned(16)));

/* libptcall.so's own text, whose calls are never recorded */
extern const char __ehdr_start[] __attribute__((visibility("hidden")));
extern const char etext[] __attribute__((visibility("hidden")));

static void *blk_fn(int i)
{
    void *f = atomic_load_explicit(&blk_real[i], memory_order_relaxed);
    if (__builtin_expect(f != NULL, 1))
        return f;
    /* the new condition variables: an unversioned lookup finds glibc's 2.2.5 compat ones */
    if (i == BLK_pthread_cond_wait || i == BLK_pthread_cond_timedwait)
        f = dlvsym(RTLD_NEXT, blk_names[i], "GLIBC_2.3.2");
    if (!f)
        f = dlsym(RTLD_NEXT, blk_names[i]);
    atomic_store_explicit(&blk_real[i], f, memory_order_relaxed);
    return f;
}

static inline int blk_recorded(const void *ra)
{
    if (__builtin_expect(!atomic_load_explicit(&blk_armed, memory_order_relaxed), 1))
        return 0;
    if (ptc_tls.state != TS_ACTIVE)
        return 0;
    return (uintptr_t)ra - (uintptr_t)__ehdr_start >= (uintptr_t)etext - (uintptr_t)__ehdr_start;
}

static inline void blk_event(int i, int exit)
{
    int e = errno;
    ptc_blk_emit((blk_first_id + 2u * (uint32_t)i + (uint32_t)exit) << 4 | RECORD_ID_TAG);
    errno = e;
}

/* Each wrapper: the C library's function, between an entry and an exit record when recorded.
 * A function the C library lacks fails with ENOSYS, as a missing system call would. */
#define BLK_DEFINE(name, ret, params, args)                                                    \
    PTC_API ret name params                                                                    \
    {                                                                                          \
        ret (*blk_f_) params = (ret(*) params)blk_fn(BLK_##name);                              \
        if (__builtin_expect(!blk_f_, 0)) {                                                    \
            errno = ENOSYS;                                                                    \
            return (ret)-1;                                                                    \
        }                                                                                      \
        if (!blk_recorded(__builtin_return_address(0)))                                        \
            return blk_f_ args;                                                                \
        BLK_PRE_##name;                                                                        \
        blk_event(BLK_##name, 0);                                                              \
        ret blk_r_ = blk_f_ args;                                                              \
        blk_event(BLK_##name, 1);                                                              \
        return blk_r_;                                                                         \
    }

/* pthread_mutex_lock is recorded only when it would block: a free mutex is taken by
 * pthread_mutex_trylock, which returns what pthread_mutex_lock would (0; for a recursive
 * mutex the same count) */
#define BLK_PRE_pthread_mutex_lock                                                             \
    do {                                                                                       \
        if (pthread_mutex_trylock(m) == 0)                                                     \
            return 0;                                                                          \
    } while (0)
#define BLK_PRE_pthread_cond_wait
#define BLK_PRE_pthread_cond_timedwait
#define BLK_PRE_pthread_join
#define BLK_PRE_sem_wait
#define BLK_PRE_sem_timedwait
#define BLK_PRE_read
#define BLK_PRE_write
#define BLK_PRE_recv
#define BLK_PRE_recvfrom
#define BLK_PRE_send
#define BLK_PRE_sendto
#define BLK_PRE_accept
#define BLK_PRE_accept4
#define BLK_PRE_connect
#define BLK_PRE_poll
#define BLK_PRE_ppoll
#define BLK_PRE_epoll_wait
#define BLK_PRE_epoll_pwait
#define BLK_PRE_select
#define BLK_PRE_pselect
#define BLK_PRE_nanosleep
#define BLK_PRE_clock_nanosleep
#define BLK_PRE_usleep
#define BLK_PRE_sleep
#define BLK_PRE_wait
#define BLK_PRE_waitpid
#define BLK_PRE_wait4
#define BLK_PRE_waitid

BLOCKING_FUNCS(BLK_DEFINE)

void blocking_init(int traced_events)
{
    for (int i = 0; i < BLK_N; i++)
        (void)blk_fn(i);
    if (!traced_events || !rt.blocking) /* PTCALL_BLOCKING, read with the others */
        return;
    /* a selection (--only/--skip) or a budget chose which functions are traced: the C
     * library's calls are not among them (their MODULE would count as traced functions) */
    if (ptc_select_active(&rt.sel) || rt.mixed || rt.pilot)
        return;
    for (int i = 0; i < BLK_N; i++)
        if (!atomic_load(&blk_real[i]))
            return; /* cannot happen with glibc: then none is recorded */
    blk_first_id = rt.next_stub_id;
    rt.next_stub_id += 2u * BLK_N;
    blk_enabled = 1;
}

void blocking_set_handler(void *handler_id)
{
    ptc_blk_handler = handler_id;
    atomic_store(&blk_armed, blk_enabled && handler_id != NULL);
}

void blocking_write_module(void)
{
    if (!blk_enabled)
        return;
    struct {
        struct ptc_module m;
        struct ptc_module_stub st[2 * BLK_N];
        struct ptc_module_func fn[BLK_N];
        char strings[sizeof(BLK_PATH) + BLK_N * 24];
    } c;
    memset(&c, 0, sizeof(c));
    uint32_t off = 1; /* offset 0: "" (the functions' file) */
    memcpy(c.strings + off, BLK_PATH, sizeof(BLK_PATH));
    c.m.path = off;
    off += (uint32_t)sizeof(BLK_PATH);
    uint64_t base = (uint64_t)(uintptr_t)blk_stub_space;
    for (uint32_t i = 0; i < BLK_N; i++) {
        size_t l = strlen(blk_names[i]) + 1;
        memcpy(c.strings + off, blk_names[i], l);
        c.fn[i] = (struct ptc_module_func){.name = off, .linkage_name = off, .file = 0};
        off += (uint32_t)l;
        c.st[2 * i] = (struct ptc_module_stub){.address = base + 32u * i, .func = i,
                                               .kind = PTCALL_STUB_ENTRY};
        c.st[2 * i + 1] = (struct ptc_module_stub){.address = base + 32u * i + 16, .func = i,
                                                   .kind = PTCALL_STUB_EXIT};
    }
    c.m.module_id = BLK_MODULE_ID;
    c.m.first_stub_id = blk_first_id;
    c.m.num_stubs = 2 * BLK_N;
    c.m.num_funcs = BLK_N;
    c.m.stubs_start = base;
    c.m.stubs_end = base + sizeof(blk_stub_space);
    c.m.identity = 0x9e3779b97f4a7c15ull ^ (uint64_t)BLK_N; /* same set, same identity */
    c.m.strings_size = off;
    struct iovec v[4] = {{&c.m, sizeof(c.m)}, {c.st, sizeof(c.st)}, {c.fn, sizeof(c.fn)},
                         {c.strings, off}};
    write_proc_chunk(PTC_CHUNK_MODULE, v, 4);
    struct ptc_module_blocking b = {.module_id = BLK_MODULE_ID, .num_funcs = BLK_N};
    struct iovec bv = {&b, sizeof(b)};
    write_proc_chunk_flags(PTC_CHUNK_MODULE_BLOCKING, PTC_CHUNK_F_OPTIONAL, &bv, 1);
}
