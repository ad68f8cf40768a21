/* Fatal signals: the runtime's handler ends the process's record before the default action
 * (or writes what is buffered before chaining to the program's handler), and the sigaction
 * and signal interposition keeps that handler in place while tracing.
 *
 * While tracing in software, every other handler the program installs runs behind
 * restart_wrapper, which first settles an event path the signal interrupted in mid-reservation
 * (soft_resume.c): the kernel gets the wrapper with the program's flags and mask, and
 * sigaction() reports the program's own action. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include "soft_internal.h"

static struct sigaction prev_sa[65]; /* the program's view of each signal we handle */
static _Atomic int managed[65];      /* fatal signals whose handler we keep (see sigaction) */
static _Atomic int wrapped[65];      /* program handlers the kernel reaches via restart_wrapper */
static _Atomic int wrapping;         /* wrap_program_handlers() has run */
static _Atomic int in_crash;
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);

static int real_sigaction_(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (!real_sigaction)
        real_sigaction = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(
            RTLD_NEXT, "sigaction");
    return real_sigaction(sig, act, old);
}

static void crash_handler(int sig, siginfo_t *si, void *uc);

void install_signals(void)
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
        if (real_sigaction_(fatal[i], &sa, &prev_sa[fatal[i]]) == 0)
            atomic_store(&managed[fatal[i]], 1);
    }
    /* termination signals only where they would kill the process anyway */
    for (size_t i = 0; i < sizeof(term) / sizeof(term[0]); i++) {
        struct sigaction cur;
        if (real_sigaction_(term[i], NULL, &cur) == 0 && !(cur.sa_flags & SA_SIGINFO) &&
            cur.sa_handler == SIG_DFL)
            real_sigaction_(term[i], &sa, &prev_sa[term[i]]);
    }
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
    event_path_resume(uc);
    int saved = errno;
    struct sigaction *prev = &prev_sa[sig];
    int terminal = !(prev->sa_flags & SA_SIGINFO) &&
                   (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN);
    if (terminal && gettid_() != atomic_load(&rt.drain_tid) && !atomic_exchange(&in_crash, 1))
        finish(PTC_END_SIGNAL, sig, 1);
    if (terminal) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        atomic_store(&managed[sig], 0);
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
    if (atomic_fetch_add(&chained, 1) < 8 && gettid_() != atomic_load(&rt.drain_tid))
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

static int is_handler(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) ||
           (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN);
}

static void restart_wrapper(int sig, siginfo_t *si, void *uc)
{
    event_path_resume(uc);
    struct sigaction h = prev_sa[sig];
    if (h.sa_flags & SA_RESETHAND) { /* the kernel has just reset the action, as asked */
        atomic_store(&wrapped[sig], 0);
        memset(&prev_sa[sig], 0, sizeof(prev_sa[sig]));
    }
    if (!is_handler(&h))
        return; /* changed meanwhile */
    if (h.sa_flags & SA_SIGINFO)
        h.sa_sigaction(sig, si, uc);
    else
        h.sa_handler(sig);
}

/* Installs the wrapper for the program's action *act on sig (a handler); 0 or -1 (errno). */
static int install_wrapped(int sig, const struct sigaction *act)
{
    struct sigaction k = *act;
    k.sa_flags |= SA_SIGINFO;
    k.sa_sigaction = restart_wrapper;
    struct sigaction keep = prev_sa[sig];
    int was = atomic_load(&wrapped[sig]);
    prev_sa[sig] = *act; /* before the kernel can deliver to the wrapper */
    atomic_store(&wrapped[sig], 1);
    if (real_sigaction_(sig, &k, NULL) != 0) {
        int e = errno;
        prev_sa[sig] = keep;
        atomic_store(&wrapped[sig], was);
        errno = e;
        return -1;
    }
    return 0;
}

void wrap_program_handlers(void)
{
    if (atomic_exchange(&wrapping, 1))
        return;
    for (int sig = 1; sig < 65; sig++) {
        struct sigaction cur;
        if (sig == SIGKILL || sig == SIGSTOP || atomic_load(&managed[sig]) ||
            real_sigaction_(sig, NULL, &cur) != 0 || !is_handler(&cur) ||
            cur.sa_sigaction == crash_handler)
            continue;
        install_wrapped(sig, &cur);
    }
}

void audit_program_handlers(void)
{
    if (!atomic_load(&wrapping))
        return;
    for (int sig = 1; sig < 65; sig++) {
        struct sigaction cur;
        if (sig == SIGKILL || sig == SIGSTOP || real_sigaction_(sig, NULL, &cur) != 0 ||
            !is_handler(&cur) || cur.sa_sigaction == restart_wrapper ||
            cur.sa_sigaction == crash_handler)
            continue;
        warn("ptcall: the handler of signal %d was installed past sigaction() and signal() "
             "(raw rt_sigaction, sigset, sysv_signal?): if it ran traced functions while its "
             "thread was recording an event, an event may have been overwritten or counted "
             "twice", sig);
    }
}

/* While tracing, the runtime keeps its handler for the fatal signals so that a crash is
 * flushed even when the program installs its own handler later: the program's sigaction()
 * and signal() calls for those signals change what the runtime's handler chains to (and what
 * they report), not the kernel's action. SIG_IGN goes through to the kernel. */
PTC_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= 65)
        return real_sigaction_(sig, act, old);
    if (!atomic_load(&managed[sig])) {
        if (!atomic_load(&wrapping)) /* nothing is wrapped before wrap_program_handlers() */
            return real_sigaction_(sig, act, old);
        /* tracing in software: a program handler runs behind restart_wrapper */
        struct sigaction view;
        int was = atomic_load(&wrapped[sig]);
        if (was)
            view = prev_sa[sig];
        else if (real_sigaction_(sig, NULL, &view) != 0)
            return -1;
        else if ((view.sa_flags & SA_SIGINFO) && view.sa_sigaction == crash_handler)
            view = prev_sa[sig]; /* a termination signal's flush handler: the default */
        if (act) {
            if (is_handler(act)) {
                if (install_wrapped(sig, act) != 0)
                    return -1;
            } else {
                if (real_sigaction_(sig, act, NULL) != 0)
                    return -1;
                atomic_store(&wrapped[sig], 0);
            }
        }
        if (old)
            *old = view;
        return 0;
    }
    struct sigaction prev = prev_sa[sig];
    if (act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_IGN) {
        int r = real_sigaction_(sig, act, NULL);
        if (r == 0) {
            atomic_store(&managed[sig], 0);
            prev_sa[sig] = *act;
            if (old)
                *old = prev;
        }
        return r;
    }
    if (act)
        prev_sa[sig] = *act;
    if (old)
        *old = prev;
    return 0;
}

/* glibc's signal() installs through an internal sigaction that the interposition above does
 * not see: it goes through ours, with glibc's (BSD) semantics. */
PTC_API sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < 65)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
                                        : old.sa_handler;
}

/* The System V and BSD names for installing a handler. A program compiled with
 * _POSIX_C_SOURCE (zstd, for one) gets glibc's signal() as __sysv_signal, which installs
 * through glibc's internal sigaction as well: each of them goes through ours, with the
 * semantics glibc gives it, so that its handler is wrapped (it used to be reported as
 * installed past sigaction() on every record). */
static sighandler_t install_with(int sig, sighandler_t handler, int flags)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
                                        : old.sa_handler;
}

/* System V: the handler is reset to the default when it runs, and the signal is not blocked
 * while it runs (glibc: SA_ONESHOT | SA_NOMASK) */
PTC_API sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
    return install_with(sig, handler, SA_RESETHAND | SA_NODEFER);
}

PTC_API sighandler_t sysv_signal(int sig, sighandler_t handler)
{
    return install_with(sig, handler, SA_RESETHAND | SA_NODEFER);
}

/* BSD: signal()'s own semantics */
PTC_API sighandler_t bsd_signal(int sig, sighandler_t handler) { return signal(sig, handler); }

/* System V sigset(): SIG_HOLD adds the signal to the blocked set; anything else installs
 * the disposition (no flags, empty mask) and unblocks it. Returns SIG_HOLD when the signal
 * was blocked, else the previous disposition. */
PTC_API sighandler_t sigset(int sig, sighandler_t handler)
{
    sigset_t set, was;
    if (sig <= 0 || sig >= 65) {
        errno = EINVAL;
        return SIG_ERR;
    }
    sigemptyset(&set);
    sigaddset(&set, sig);
    if (handler == SIG_HOLD) {
        struct sigaction old;
        if (sigaction(sig, NULL, &old) != 0 || sigprocmask(SIG_BLOCK, &set, &was) != 0)
            return SIG_ERR;
        if (sigismember(&was, sig))
            return SIG_HOLD;
        return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction
                                            : old.sa_handler;
    }
    sighandler_t prev = install_with(sig, handler, 0);
    if (prev == SIG_ERR || sigprocmask(SIG_UNBLOCK, &set, &was) != 0)
        return SIG_ERR;
    return sigismember(&was, sig) ? SIG_HOLD : prev;
}
