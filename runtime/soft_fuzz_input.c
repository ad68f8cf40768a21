/* The fork server at the harness (PTCALL_FORKSERVER_HARNESS=<fd>; docs/cov.md, "The fork
 * server at the harness"). ptcall-cc gives LLVMFuzzerTestOneInput(data, size) an entry hook,
 * a call to __ptcall_fuzz_input(&data, &size) through a null-checked weak reference
 * (pass/PtcallPass.cpp, addFuzzInputHook). libFuzzer's main (-fsanitize=fuzzer) builds its
 * corpus and mutator tables before it runs its one file argument: about 150 ms per input when
 * the fork comes before main. Here the harness's first call becomes the fork server instead
 * (as ptcall_forkserver_start does): that start-up runs once, in the server, and its counters
 * are zeroed before each fork. Each child reads the tool's input from the descriptor, replaces
 * both arguments and returns into the harness, which runs that input once; a second call in
 * the same child (libFuzzer's -runs=N) ends the child at its entry, before it is counted, so
 * one child is exactly one run of the harness. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "soft_internal.h"

void __ptcall_forkserver_start(void); /* soft_forkserver.c */

static int served; /* this process is a child of the harness's fork server, its input given */

/* A fork server's child whose harness returned and is called again: its input has run. The
 * counters are in the shared file; the program's exit handlers do not run (libFuzzer's would
 * take an exit inside its callback for a crash and write a crash- file). */
static void __attribute__((noreturn)) end_child(void)
{
    fflush(NULL);
    if (rt.fd >= 0)
        _exit(0); /* the runtime's: the trace file takes the child's counts */
    syscall(SYS_exit_group, 0);
    abort();
}

/* The input: the whole of the tool's work file as it is now (the tool wrote it, then sent
 * the run command), in a buffer of exactly its size, as libFuzzer passes one. */
static int read_input(int fd, const uint8_t **data, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return -errno;
    size_t n = (size_t)st.st_size, got = 0;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        return -ENOMEM;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            int e = errno;
            free(buf);
            return -e;
        }
        if (k == 0)
            break; /* cut meanwhile: what is there */
        got += (size_t)k;
    }
    *data = buf;
    *size = got;
    return 0;
}

PTC_API void __ptcall_fuzz_input(const uint8_t **data, size_t *size)
{
    if (rt.fs_harness_fd < 0)
        return; /* not asked for: the harness runs as it was called */
    if (served)
        end_child();
    if (rt.fs_started || rt.fs_ctl < 0)
        return;
    __ptcall_forkserver_start(); /* serves; returns in each child */
    if (!rt.fs_started)
        return;
    served = 1;
    int rc = read_input(rt.fs_harness_fd, data, size);
    close(rt.fs_harness_fd); /* not inherited by what the input's run execs */
    if (rc) {
        warn("ptcall: fork server at the harness: cannot read the input (descriptor %d): %s",
             rt.fs_harness_fd, strerror(-rc));
        syscall(SYS_exit_group, 2);
    }
}

/* A deferred server (or one at the harness) whose program exits without ever reaching its
 * start: said on the protocol, as when main returns (soft_forkserver.c), rather than leave
 * the tool reading EOF. libFuzzer's main ends with exit(), never by returning. */
static pid_t loaded_in; /* the process the runtime was loaded in: the one that would serve */

__attribute__((constructor)) static void fuzz_input_loaded(void)
{
    loaded_in = getpid();
}

__attribute__((destructor)) static void fuzz_input_never_served(void)
{
    /* not in a child the program forked before serving: it inherited the descriptors, and
     * its exit says nothing about the server */
    if (rt.fs_defer && rt.fs_ctl >= 0 && !rt.fs_started && getpid() == loaded_in)
        fork_server_not_started();
}
