/* The process's life: start-up (the run-once guard and the order in which each part starts,
 * below), the final flush at exit (on_exit), _exit and _Exit, the exec family, daemon and
 * forkpty (interposed); at fork, consistent locks and a fresh record for the child. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pty.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <utmp.h> /* login_tty */

#include "soft_blocking.h"
#include "soft_internal.h"

static int (*real_execve)(const char *, char *const[], char *const[]);
static int (*real_execvpe)(const char *, char *const[], char *const[]);
static int (*real_fexecve)(int, char *const[], char *const[]);
static int (*real_execveat)(int, const char *, char *const[], char *const[], int);
static pid_t (*real_fork)(void);
static void (*real__exit)(int);

/* The functions the wrappers call on to. Resolved at start-up when tracing, so that
 * the wrappers need not enter the dynamic linker at fork, exec or _exit; on first use
 * otherwise. */
static void resolve_real_functions(void)
{
    if (!real_execve)
        real_execve = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execve");
    if (!real_execvpe)
        real_execvpe = (int (*)(const char *, char *const[], char *const[]))dlsym(RTLD_NEXT, "execvpe");
    if (!real_fexecve)
        real_fexecve = (int (*)(int, char *const[], char *const[]))dlsym(RTLD_NEXT, "fexecve");
    if (!real_execveat) /* glibc >= 2.34; the system call otherwise */
        real_execveat = (int (*)(int, const char *, char *const[], char *const[], int))dlsym(
            RTLD_NEXT, "execveat");
    if (!real_fork)
        real_fork = (pid_t(*)(void))dlsym(RTLD_NEXT, "fork");
    if (!real__exit)
        real__exit = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
}

/* ---- exit ---------------------------------------------------------------------------- */

static void end_process(int how, int status);

/* ---- the program's exit handlers ------------------------------------------------------ *
 *
 * A fork server's child whose main returns may end at once (soft_forkserver.c) when nothing
 * of the program waits for exit: so registrations are watched here. atexit (linked into each
 * object from libc_nonshared.a) and C++ static destructors register through __cxa_atexit,
 * thread_local destructors through __cxa_thread_atexit_impl; on_exit is its own. Each is
 * passed on unchanged. The runtime's own handlers are registered past these (runtime_atexit,
 * runtime_on_exit) and do not count. */

static _Atomic int program_exit_handlers;

int exit_handlers_registered(void) { return atomic_load(&program_exit_handlers); }

typedef int (*cxa_atexit_fn)(void (*)(void *), void *, void *);
typedef int (*on_exit_fn)(void (*)(int, void *), void *);

static void *_Atomic real_cxa_atexit, *_Atomic real_on_exit, *_Atomic real_thread_atexit;

static int libc_cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
    cxa_atexit_fn f = (cxa_atexit_fn)libc_fn(&real_cxa_atexit, "__cxa_atexit");
    return f ? f(fn, arg, dso) : -1;
}

static int libc_on_exit(void (*fn)(int, void *), void *arg)
{
    on_exit_fn f = (on_exit_fn)libc_fn(&real_on_exit, "on_exit");
    return f ? f(fn, arg) : -1;
}

PTC_API int __cxa_atexit(void (*fn)(void *), void *arg, void *dso)
{
    atomic_store(&program_exit_handlers, 1);
    return libc_cxa_atexit(fn, arg, dso);
}

PTC_API int on_exit(void (*fn)(int, void *), void *arg)
{
    atomic_store(&program_exit_handlers, 1);
    return libc_on_exit(fn, arg);
}

PTC_API int __cxa_thread_atexit_impl(void (*fn)(void *), void *obj, void *dso)
{
    atomic_store(&program_exit_handlers, 1);
    cxa_atexit_fn f = (cxa_atexit_fn)libc_fn(&real_thread_atexit, "__cxa_thread_atexit_impl");
    return f ? f(fn, obj, dso) : -1;
}

extern void *__dso_handle;

int runtime_atexit(void (*fn)(void))
{
    return libc_cxa_atexit((void (*)(void *))(uintptr_t)fn, NULL, __dso_handle);
}

static void on_exit_handler(int status, void *arg)
{
    (void)arg;
    end_process(PTC_END_EXIT, status);
}

/* ---- fork ---------------------------------------------------------------------------- */

static void atfork_prepare(void)
{
    if (!rt.enabled || rt.quick_fork)
        return;
    pthread_mutex_lock(&rt.reg_mu);
    pthread_mutex_lock(&rt.drain_mu);
    pthread_mutex_lock(&rt.thr_mu);
    pthread_mutex_lock(&rt.proc_mu);
    rt.parent_tid = gettid_();
}

static void atfork_parent(void)
{
    if (!rt.enabled || rt.quick_fork)
        return;
    pthread_mutex_unlock(&rt.proc_mu);
    pthread_mutex_unlock(&rt.thr_mu);
    pthread_mutex_unlock(&rt.drain_mu);
    pthread_mutex_unlock(&rt.reg_mu);
}

static void atfork_child(void)
{
    if (!rt.enabled || rt.quick_fork)
        return;
    pthread_mutex_init(&rt.reg_mu, NULL);
    pthread_mutex_init(&rt.drain_mu, NULL);
    pthread_mutex_init(&rt.thr_mu, NULL);
    pthread_mutex_init(&rt.proc_mu, NULL);
    if (rt.attachable) {
        /* started without ptcall: a fork child has no control thread (starting one in a
         * fork child of a threaded program is not safe), so it is never attached; it stops
         * recording for good, and soft_ctl.c's fork handler, which runs next, puts an
         * attached parent's stubs back to `ret` in it. Its exec starts a new image, which
         * has its own. */
        atomic_store(&rt.finishing, FINISH_FINAL);
        close_trace_fd();
        return;
    }
    if (rt.counting) { /* no threads, no drain: a process record of its own */
        if (atomic_load(&rt.active) && !atomic_load(&rt.finishing))
            counts_after_fork();
        return;
    }
    if (!atomic_load(&rt.active) || atomic_load(&rt.finishing)) {
        /* nothing registered yet (or the parent had finished): start from scratch */
        atomic_store(&rt.active, 0);
        atomic_store(&rt.finishing, FINISH_NONE);
        ptc_tls.state = TS_NEW;
        ptc_tls.ts = NULL;
        tls_set(&ptc_tls, 0, 0);
        rt.threads = NULL;
        atomic_store(&rt.qhead, NULL);
        close_trace_fd();
        rt.nobjs = 0;
        rt.next_stub_id = 0;
        rt.proc_seq = 0;
        return;
    }
    rt.parent_pid = rt.pid;
    rt.pid = (uint32_t)getpid();
    rt.start_how = PTC_PROC_FORK;
    rt.fork_point_known = 0;
    /* its totals and PTCALL_DEBUG's figures are its own; the parent's cut chunk (write_owed)
     * is the parent's to finish */
    recording_counters_reset();
    mixed_after_fork(); /* counted functions: the child's counts are its own */
    pilot_after_fork();
    tramp_restarts_reset();
    reservations_settled_reset();
    rt.cache = NULL;
    atomic_store(&rt.qhead, NULL);
    atomic_store(&rt.drain_running, 0);
    atomic_store(&rt.drain_sleeping, 0);
    atomic_store(&rt.drain_tid, 0);
    /* a fork child has only the forking thread: its own ticker, as its own drain below */
    if (ticker_start() < 0) {
        atomic_store(&rt.finishing, FINISH_FINAL);
        return;
    }
    struct thread *self = traced_thread();
    threads_after_fork(self);
    write_process_start();
    budget_write_previous();
    blocking_write_module();
    uint32_t n = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < n; i++) {
        rt.objs[i]->drain_dead = !atomic_load(&rt.objs[i]->live);
        if (!rt.objs[i]->drain_dead && write_module(rt.objs[i])) {
            if (rt.mixed) /* counted beside tracing: MODULE_ARMED and MODULE_COUNTED */
                mixed_write_module_chunks(rt.objs[i]);
            else
                write_module_armed(rt.objs[i]);
        }
    }
    if (drain_start() < 0) {
        atomic_store(&rt.finishing, FINISH_FINAL);
        return;
    }
    if (rt.ring) /* the parent's snapshot writer is not in this process */
        (void)ring_writer_start();
    if (self)
        push(&self->start_it);
}

/* ---- fork points before exec --------------------------------------------------------- */

/* A fork child that execs starts a new life of its pid (docs/trace-format.md 4.2). Readers
 * hold a child's events until its parent's FORK record gives them the parent's stack; a
 * new life that comes first ends the wait, and the child starts without that stack (4 to 8
 * children in 1,000 fork+exec did). So the parent writes its FORK record at once, then says
 * so in a slot of a page all processes of this image share; a child waits for that before
 * it execs (at most a second: a parent that died meanwhile does not hold it up for long).
 * Slots are per pid modulo their number: two children waiting on one slot at once only
 * delay each other, and the timeout bounds it. */
#define FORK_SLOTS 4096u
static _Atomic uint32_t *fork_slots;

static long shared_futex(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *to)
{
    return syscall(SYS_futex, (uint32_t *)addr, op, val, to, NULL, 0); /* not private */
}

static void fork_slots_init(void)
{
    void *p = mmap(NULL, FORK_SLOTS * sizeof(uint32_t), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    fork_slots = p == MAP_FAILED ? NULL : p;
}

static void publish_fork_point(pid_t pid)
{
    flush_queued(); /* the FORK record record_fork queued */
    if (fork_slots) {
        _Atomic uint32_t *slot = &fork_slots[(uint32_t)pid % FORK_SLOTS];
        atomic_store(slot, (uint32_t)pid);
        shared_futex(slot, FUTEX_WAKE, INT_MAX, NULL);
    }
}

static void await_fork_point(void)
{
    if (rt.start_how != PTC_PROC_FORK || rt.fork_point_known || !fork_slots)
        return;
    rt.fork_point_known = 1;
    _Atomic uint32_t *slot = &fork_slots[rt.pid % FORK_SLOTS];
    uint64_t t0 = mono_ns();
    for (;;) {
        uint32_t v = atomic_load(slot);
        if (v == rt.pid || mono_ns() - t0 > 1000000000ull)
            return;
        struct timespec to = {0, 10 * 1000 * 1000};
        shared_futex(slot, FUTEX_WAIT, v, &to);
    }
}

/* A vfork child shares the parent's memory, thread buffers included: its events would be
 * mixed into the parent's stream. A vfork child may only exec or _exit, which a fork child
 * does just as well, so vfork is a fork here (as under Valgrind). */
PTC_API pid_t vfork(void) { return fork(); }

PTC_API pid_t fork(void)
{
    runtime_init();
    resolve_real_functions();
    /* the fork point's time is taken before the child exists, so that in time order it
     * precedes everything the child records */
    uint64_t tsc = rdtsc_();
    /* Signals wait until the fork is done: a handler running inside fork(), after the
     * prepare handler took the runtime's locks, whose events need a buffer would wait for a
     * drain that needs those locks (a hang), and one in the child before atfork_child would
     * write into the parent's buffers. A signal sent meanwhile is delivered to the parent
     * right after (the child starts with none pending, as POSIX has it). */
    sigset_t old;
    int hold = rt.enabled;
    if (hold)
        block_all_signals(&old);
    pid_t pid = real_fork();
    if (pid > 0 && rt.enabled && !rt.counting && atomic_load(&rt.active) &&
        !atomic_load(&rt.finishing)) {
        record_fork(pid, tsc);
        publish_fork_point(pid);
    }
    if (hold) {
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        errno = e;
    }
    return pid;
}

/* The fork server's fork (soft_forkserver.c), once per input. While the process has one
 * thread (no constructor started any), no other thread can hold the runtime's locks and
 * counting mode has no buffers a signal handler could write into: the wrapper's blocked
 * signals and the atfork handlers' locking protect nothing then, and they cost system calls
 * in the server and page faults in every child (code and data it would not touch otherwise).
 * So glibc's fork alone, and the child renews its process record as atfork_child would. */
#if __has_include(<sys/single_threaded.h>) /* glibc 2.32 */
#include <sys/single_threaded.h>
#define ONE_THREAD() (__libc_single_threaded != 0)
#else
#define ONE_THREAD() 0
#endif

pid_t fork_server_fork(void)
{
    resolve_real_functions();
    if (!ONE_THREAD() || !rt.counting || !real_fork)
        return fork();
    rt.quick_fork = 1;
    pid_t pid = real_fork();
    rt.quick_fork = 0;
    if (pid == 0 && atomic_load(&rt.active) && !atomic_load(&rt.finishing))
        counts_after_fork();
    return pid;
}

/* glibc's daemon() forks and leaves through its own internal fork and _exit, which the
 * wrappers here never see: the parent's last events were lost, its trace unclosed, and the
 * child's fork point missing. So daemon() is done here, through the wrappers, as glibc does
 * it (fork, the parent _exits, setsid, "/" and /dev/null unless told not to). */
PTC_API int daemon(int nochdir, int noclose)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0)
        _exit(0);
    if (setsid() < 0)
        return -1;
    if (!nochdir && chdir("/") != 0)
        return -1;
    if (!noclose) {
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return -1;
        if (dup2(fd, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (fd > 2)
            close(fd);
    }
    return 0;
}

/* glibc's forkpty() forks through its internal fork as well: the child started without its
 * parent's stack (fork_unknown). It is done here through the wrapper, as glibc does it: a
 * new pseudo-terminal, fork, the child makes the terminal its controlling one and its stdio
 * (login_tty), the parent keeps the other side. */
PTC_API pid_t forkpty(int *amaster, char *name, const struct termios *termp,
                      const struct winsize *winp)
{
    int master, slave;
    if (openpty(&master, &slave, name, termp, winp) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(master);
        close(slave);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(master);
        if (login_tty(slave) != 0)
            _exit(1); /* as glibc's: the child has no terminal to go on with */
        return 0;
    }
    *amaster = master;
    close(slave);
    return pid;
}

/* ---- exec and _exit ------------------------------------------------------------------ */

static int tracing_here(void)
{
    return rt.enabled && atomic_load(&rt.active) && !atomic_load(&rt.finishing) &&
           (uint32_t)getpid() == rt.pid; /* not in a vfork child */
}

/* envp plus PTCALL_EXEC_PID=<pid>, in caller-provided storage. */
static char **exec_env(char *const envp[], char **store, size_t cap, char *var, size_t varsz)
{
    snprintf(var, varsz, "PTCALL_EXEC_PID=%u", rt.pid);
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

/* Which exec function a wrapper stands for, and its arguments besides argv and envp. */
enum exec_kind { EXEC_PATH, EXEC_SEARCH, EXEC_FD, EXEC_AT };
struct exec_call {
    enum exec_kind kind;
    const char *file; /* EXEC_PATH, EXEC_SEARCH, EXEC_AT */
    int fd, flags;    /* EXEC_FD, EXEC_AT */
};

static int real_exec(const struct exec_call *c, char *const argv[], char *const envp[])
{
    switch (c->kind) {
    case EXEC_SEARCH:
        return real_execvpe(c->file, argv, envp);
    case EXEC_FD:
        return real_fexecve(c->fd, argv, envp);
    case EXEC_AT:
        if (real_execveat)
            return real_execveat(c->fd, c->file, argv, envp, c->flags);
        return (int)syscall(SYS_execveat, c->fd, c->file, argv, envp, c->flags);
    default:
        return real_execve(c->file, argv, envp);
    }
}

static int do_exec(const struct exec_call *c, char *const argv[], char *const envp[])
{
    runtime_init();
    resolve_real_functions();
    if (!tracing_here())
        return real_exec(c, argv, envp);
    size_t n = 0;
    while (envp && envp[n])
        n++;
    size_t cap = n + 2;
    char **store = mmap(NULL, cap * sizeof(char *), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char var[64];
    char *const *env = envp;
    await_fork_point();
    end_process(PTC_END_EXEC, 0);
    if (store != MAP_FAILED)
        env = exec_env(envp, store, cap, var, sizeof(var));
    if (!env)
        env = envp;
    int r = real_exec(c, argv, env);
    int e = errno;
    if (store != MAP_FAILED)
        munmap(store, cap * sizeof(char *));
    errno = e;
    return r; /* exec failed: this process records nothing more (docs/runtime.md) */
}

static int exec_path(const char *path, char *const argv[], char *const envp[], int search)
{
    struct exec_call c = {.kind = search ? EXEC_SEARCH : EXEC_PATH, .file = path};
    return do_exec(&c, argv, envp);
}

PTC_API int execve(const char *path, char *const argv[], char *const envp[])
{
    return exec_path(path, argv, envp, 0);
}
PTC_API int execv(const char *path, char *const argv[]) { return exec_path(path, argv, environ, 0); }
PTC_API int execvp(const char *file, char *const argv[]) { return exec_path(file, argv, environ, 1); }
PTC_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
    return exec_path(file, argv, envp, 1);
}
PTC_API int fexecve(int fd, char *const argv[], char *const envp[])
{
    struct exec_call c = {.kind = EXEC_FD, .fd = fd};
    return do_exec(&c, argv, envp);
}
PTC_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
    struct exec_call c = {.kind = EXEC_AT, .file = path, .fd = dirfd, .flags = flags};
    return do_exec(&c, argv, envp);
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
    return exec_path(path, argv, environ, 0);
}
PTC_API int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    va_end(ap);
    return exec_path(file, argv, environ, 1);
}
PTC_API int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return exec_path(path, argv, envp, 0);
}

static void __attribute__((noreturn)) do__exit(int status)
{
    runtime_init();
    if (tracing_here())
        end_process(PTC_END__EXIT, status);
    resolve_real_functions();
    if (real__exit)
        real__exit(status);
    for (;;)
        syscall(SYS_exit_group, status);
}

PTC_API void _exit(int status) { do__exit(status); }
PTC_API void _Exit(int status) { do__exit(status); }

/* ---- start-up and exit: the order ------------------------------------------------------ *
 *
 * Start-up, once per process (runtime_init: the library's constructor, or the first
 * registration or wrapper that runs before it):
 *   1. configuration: the PTCALL_* environment (config_read, soft_config.c);
 *   2. the selection of functions to arm (select_init, soft_select.c); arm-only stops here;
 *   3. the handlers: reservation check points (soft_resume.c), the generated id handler
 *      (soft_fastpath.c), whether trampolines apply;
 *   4. the CPU's register save area (xsave_init, soft_state.c);
 *   5. threads: the TLS key whose destructor ends a thread's stream (soft_thread.c);
 *   6. the process's life: real libc functions, the fork slots, pthread_atfork, on_exit.
 * The first registered object then activates tracing (soft_register.c): the trace file,
 * the time base, PROCESS and MODULE chunks, the drain thread, the signal handlers.
 *
 * Exit (on_exit after every destructor, _exit/_Exit, exec; a fatal signal in soft_signal.c
 * goes straight to 3): 1. warnings about program signal handlers that bypassed the wrapping
 * (soft_signal.c); 2. globs of PTCALL_ONLY/SKIP that matched nothing (soft_select.c); 3. the
 * final flush (finish, soft_flush.c): the queue, every thread's buffer, THREAD exits, LOSS
 * chunks, PROCESS_END. */

static void end_process(int how, int status)
{
    if (rt.counting) {
        counts_finish(how, status, 0);
        return;
    }
    if (rt.enabled && atomic_load(&rt.active) && !atomic_load(&rt.finishing)) {
        audit_program_handlers();
        select_report_unmatched();
        trace_set_report_unmatched();
        trigger_report_unmatched();
    }
    finish(how, status, 0);
}

static void start(void)
{
    int mode = config_read();
    if (mode == CONFIG_OFF || select_init() < 0)
        return; /* neither arm nor trace (a selection that cannot be honoured included) */
    blocking_init(0); /* the C library's blocking functions resolved, whatever the mode */
    if (mode == CONFIG_ARM_ONLY) {
        rt.arm_only = 1; /* the stubs stay `ret`: the hardware sees them run */
        return;
    }
    if (mode == CONFIG_COUNTS) {
        /* entry stubs and trampolines count (soft_counts.c): no buffers, no drain */
        if (counts_init() != 0)
            return;
        rt.handler = NULL; /* address stubs cannot name a counter: such units stay ret */
        rt.handler_id = rt.handler_fast =
            rt.count_atomic ? (void *)(uintptr_t)ptc_count_handler_atomic
                            : (void *)(uintptr_t)ptc_count_handler;
        resolve_real_functions();
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
        libc_on_exit(on_exit_handler, NULL);
        rt.enabled = 1;
        return;
    }
    if (rt.trigger_spec && trigger_config(rt.trigger_spec) < 0)
        return; /* a trigger that cannot be honoured: untraced, as a bad variable is */
    if (rt.mixed && counts_init() != 0) /* counted beside tracing: said; traced only */
        rt.mixed = 0;
    /* not traced now: the same start-up, so that an attach only has to switch tracing on
     * (soft_attach.c); the control thread starts in soft_ctl.c */
    rt.attachable = mode == CONFIG_ATTACH;
    rt.handler = rt.timed ? ptc_soft_handler_timed : ptc_soft_handler;
    rt.handler_id = rt.timed ? ptc_soft_handler_id_timed : ptc_soft_handler_id;
    if (ptc_ticker_on) { /* the ticker clock: a load instead of rdtsc (soft_ticker.c) */
        rt.handler = ptc_soft_handler_ticker;
        rt.handler_id = ptc_soft_handler_id_ticker;
    }
    check_points_init();
    rt.handler_fast = fastpath_build(ptc_ticker_on ? 2 : rt.timed);
    if (rt.debug)
        warn("ptcall[%d]: %s id handler for %%r10-scratch units", (int)getpid(),
             rt.handler_fast ? "generated" : "shared (the generated one could not be built)");
    /* trampolines slow-path into the generated handler's slow entry: only with that handler */
    rt.tramps = rt.tramps && !rt.timed && rt.handler_fast;
    if (!rt.handler_fast)
        rt.handler_fast = (void *)(uintptr_t)rt.handler_id;
    xsave_init();
    /* blocking calls as events: not in a flight recorder's or an attach's traces, whose
     * MODULE chunks are written from the objects alone */
    if (!rt.ring && !rt.attachable)
        blocking_init(1);
    if (threads_init() != 0)
        return;
    resolve_real_functions();
    fork_slots_init();
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
    /* Registered before __libc_start_main registers the dynamic linker's destructor
     * (library constructors run first), on_exit handlers run after all destructors and
     * after the program's own atexit handlers: the last point where code can still run. */
    libc_on_exit(on_exit_handler, NULL);
    rt.enabled = 1;
}

static pthread_once_t start_once = PTHREAD_ONCE_INIT;

void runtime_init(void) { pthread_once(&start_once, start); }

__attribute__((constructor(101))) static void ptc_ctor(void) { runtime_init(); }
