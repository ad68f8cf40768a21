/* posix_spawn and posix_spawnp: glibc starts the child with clone and execs it with its own
 * internal calls, so neither the fork wrapper nor the exec wrappers (soft_lifecycle.c) see it,
 * and the child's trace would start with no link to where its parent made it. The wrappers
 * here call libc's function, then write a SPAWN chunk (docs/trace-format.md 4.15) behind the
 * calling thread's events, as a mark is written (soft_mark.c). glibc's system() and popen()
 * spawn through internal calls no wrapper can reach (docs/reliability.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <string.h>

#include "soft_internal.h"

typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
                        const posix_spawnattr_t *, char *const[], char *const[]);

static void *_Atomic real_spawn, *_Atomic real_spawnp;

/* The SPAWN chunk of child, started at tsc by the calling thread. */
static void trace_spawn(pid_t child, const char *path, uint64_t tsc)
{
    if (!rt.enabled || rt.counting || rt.fd < 0 || !atomic_load(&rt.active) ||
        atomic_load(&rt.finishing) || child <= 0)
        return;
    size_t psize = (path ? strlen(path) : 0) + 1;
    if (psize > 4096)
        psize = 4096;
    hand_over_current(traced_thread());
    if (flush_queued() != 0)
        return; /* the drain did not answer: a spawn point in the wrong place would mislead */
    char p[4096];
    if (psize > 1)
        memcpy(p, path, psize - 1);
    p[psize - 1] = 0;
    struct ptc_spawn s = {.tid = gettid_(), .child_pid = (uint32_t)child, .tsc = tsc,
                          .path_size = (uint32_t)psize};
    struct iovec v[2] = {{&s, sizeof(s)}, {p, psize}};
    pthread_mutex_lock(&rt.proc_mu);
    write_chunk_flags(PTC_CHUNK_SPAWN, PTC_CHUNK_F_OPTIONAL, 0, &rt.proc_seq, v, 2);
    pthread_mutex_unlock(&rt.proc_mu);
}

static int spawn(spawn_fn f, pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!f)
        return ENOSYS;
    pid_t child = 0;
    uint64_t tsc = rdtsc_();
    int r = f(&child, path, fa, attr, argv, envp);
    if (r == 0) {
        if (pid)
            *pid = child;
        trace_spawn(child, path, tsc);
    }
    return r;
}

PTC_API int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                        const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn((spawn_fn)libc_fn(&real_spawn, "posix_spawn"), pid, path, fa, attr, argv, envp);
}

PTC_API int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                         const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    return spawn((spawn_fn)libc_fn(&real_spawnp, "posix_spawnp"), pid, file, fa, attr, argv,
                 envp);
}
