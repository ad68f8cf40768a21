/* The pre-main point and the fork server (protocol v1: include/ptcall/forkserver.h,
 * docs/cov.md).
 *
 * With PTCALL_COUNTS_FD or PTCALL_FORKSERVER the runtime interposes __libc_start_main (which
 * the executable's _start calls through the dynamic symbol table) and runs main through
 * counts_main: by then every constructor of the executable and of the libraries loaded with
 * it has run, so every instrumented object loaded at start has registered. There the
 * counters are laid out in the shared file, and the fork server, if asked for, serves: one
 * fork per input, the child going on into main. The server never reads or seeks fd 0: a
 * child's stdin is the tool's shared file description. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptcall/forkserver.h"
#include "soft_internal.h"

static int write_u32(int fd, uint32_t v)
{
    for (;;) {
        ssize_t w = write(fd, &v, 4);
        if (w == 4)
            return 0;
        if (w < 0 && errno == EINTR)
            continue;
        return -1; /* a pipe write of 4 bytes is atomic: never short */
    }
}

/* 1 with *v, 0 at EOF, -1 on an error or a partial word */
static int read_u32(int fd, uint32_t *v)
{
    size_t got = 0;
    while (got < 4) {
        ssize_t r = read(fd, (char *)v + got, 4 - got);
        if (r == 0)
            return got ? -1 : 0;
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        got += (size_t)r;
    }
    return 1;
}

/* The server's loop; returns only in a child, which goes on into main. */
static void serve(void)
{
    int ctl = rt.fs_ctl, st = rt.fs_st;
    /* A program a child execs must not serve, nor lay the shared file out again over the
     * tool's reading of it: it runs uncounted. The children inherit the environment, so it is
     * unset once here rather than in each child (the server needs neither variable again). */
    unsetenv(PTCFS_ENV);
    unsetenv(PTCFS_COUNTS_ENV);
    unsetenv(PTCFS_DEFER_ENV);
    unsetenv(PTCFS_HARNESS_ENV);
    if (write_u32(st, PTCFS_HELLO) != 0)
        _exit(2); /* nobody listens */
    for (;;) {
        uint32_t cmd;
        int r = read_u32(ctl, &cmd);
        if (r == 0)
            _exit(0); /* the tool is done: quietly, without the program's exit handlers */
        if (r < 0 || cmd != PTCFS_CMD_RUN) {
            write_u32(st, PTCFS_ERROR);
            _exit(2);
        }
        /* Zeroed here, where every page of counters is mapped already: a child that zeroed
         * them would fault each page in, not only the pages its calls touch. Nothing of the
         * program runs in the server between this and the fork. */
        counts_zero();
        pid_t pid = fork_server_fork(); /* counts_after_fork in the child */
        if (pid < 0) {
            warn("ptcall: fork server: fork failed (%s)", strerror(errno));
            write_u32(st, PTCFS_ERROR);
            _exit(2);
        }
        if (pid == 0) {
            /* A process group of its own: what the input's run starts and leaves running
             * (a grandchild still calling instrumented code) is found and killed by the
             * tool through it, before its calls reach the next input's counters. */
            setpgid(0, 0);
            close(ctl);
            close(st);
            rt.fs_ctl = rt.fs_st = -1;
            return;
        }
        if (write_u32(st, (uint32_t)pid) != 0)
            _exit(2);
        int status = 0;
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                status = 0;
                break;
            }
        }
        if (write_u32(st, (uint32_t)status) != 0)
            _exit(2);
    }
}

/* A fork server's child whose main returned. Its calls are in the shared counters already:
 * nothing of the runtime needs the exit path. When the program registered no exit handlers
 * (exit_handlers_registered: atexit, on_exit, C++ static or thread_local destructors) the
 * child flushes stdio, as exit would, and ends at once: no destructors of the libraries (the
 * dynamic linker's walk over every object, each touching pages the child never had) and no
 * final flush of the runtime (docs/cov.md, "The child's end", says what that saves). With
 * handlers, or a trace file that takes the child's counts at exit (PTCALL_OUTPUT), it goes
 * the whole way; so does a program that calls exit itself. */
static int child_return(int status)
{
    if (rt.fd >= 0 || exit_handlers_registered())
        return status;
    fflush(NULL);
    syscall(SYS_exit_group, status); /* not the runtime's _exit: nothing left to write */
    return status;
}

/* The deferred fork server (PTCALL_FORKSERVER_DEFER): the program's initialisation has run
 * once, in what becomes the server; each child goes on from here with the counters zeroed,
 * so what ran before this point is counted in no input (docs/cov.md). Once per process; a
 * call without a deferred fork server does nothing. */
PTC_API void __ptcall_forkserver_start(void)
{
    if (!rt.enabled || !rt.fs_defer || rt.fs_ctl < 0 || rt.fs_started)
        return;
    rt.fs_started = 1;
    serve();
}

static int counts_main(int argc, char **argv, char **envp)
{
    if (counts_share() != 0 && rt.fs_ctl >= 0) {
        /* the tool would read nothing: say so on the protocol rather than run main once */
        write_u32(rt.fs_st, PTCFS_ERROR);
        _exit(2);
    }
    if (rt.fs_ctl >= 0 && !rt.fs_defer) {
        serve();
        return child_return(rt.real_main(argc, argv, envp));
    }
    int status = rt.real_main(argc, argv, envp);
    if (rt.fs_defer && rt.fs_ctl >= 0 && !rt.fs_started)
        fork_server_not_started(); /* main returned and never served: the tool waits */
    return rt.fs_started ? child_return(status) : status;
}

void fork_server_not_started(void)
{
    if (rt.fs_harness_fd >= 0)
        warn("ptcall: fork server: PTCALL_FORKSERVER_HARNESS is set but the program ended "
             "without calling LLVMFuzzerTestOneInput: no fork server (libFuzzer's main runs "
             "it once per file argument; -help=1, -runs=0 or a bad flag end it before)");
    else
        warn("ptcall: fork server: PTCALL_FORKSERVER_DEFER is set but main returned without "
             "calling ptcall_forkserver_start(): no fork server (call it after the "
             "initialisation, or leave out --deferred)");
    write_u32(rt.fs_st, PTCFS_ERROR);
    _exit(2);
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                             void (*)(void), void *);

PTC_API int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                              void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
    start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (!real)
        abort(); /* no C library to start the program with */
    runtime_init();
    if (rt.enabled && rt.counting && (rt.counts_fd >= 0 || rt.fs_ctl >= 0)) {
        rt.real_main = main;
        main = counts_main;
    }
    return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}
