/* The runtime's state and its configuration: the PTCALL_* environment (docs/runtime.md) and
 * the CPU's register save area for the handlers' slow path. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_env.h"
#include "soft_internal.h"

struct runtime_state rt = {
    .reg_mu = PTHREAD_MUTEX_INITIALIZER,
    .drain_mu = PTHREAD_MUTEX_INITIALIZER,
    .thr_mu = PTHREAD_MUTEX_INITIALIZER,
    .proc_mu = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};

uint64_t ptc_xsave_size = 512 + 64; /* fxsave64, unless xsave_init finds XSAVE */
uint8_t ptc_use_xsave;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* Reads variable id (common/ptc_env.c: the table docs/runtime.md shows). 0, or -1 after
 * saying why the value cannot be used: then nothing is traced, since a run configured
 * otherwise than asked (PTCALL_MODE=DROP as wait) would mislead. *set: whether it was set. */
static int env(enum ptc_env_id id, uint64_t *num, const char **str, int *set)
{
    char err[256];
    int r = ptc_env_get(id, num, str, err, sizeof(err));
    if (r < 0) {
        warn("ptcall: %s: not tracing (docs/runtime.md lists the values)", err);
        return -1;
    }
    if (set)
        *set = r;
    return 0;
}

/* rt.output from PTCALL_OUTPUT. 0, or -1 after a warning. */
static int output_path(const char *out)
{
    if (!out || !out[0]) {
        warn("ptcall: PTCALL_BACKEND=soft without PTCALL_OUTPUT: not tracing (set "
             "PTCALL_OUTPUT to the trace file, or run the program with ptcall record)");
        return -1;
    }
    /* a relative name is the starting directory's: the program may change directory */
    char cwd[PATH_MAX];
    if (out[0] != '/' && !getcwd(cwd, sizeof(cwd))) {
        warn("ptcall: PTCALL_OUTPUT=%s is relative and the current directory is unknown: not "
             "tracing (give an absolute path)", out);
        return -1;
    }
    if ((out[0] == '/' ? strlen(out) : strlen(cwd) + 1 + strlen(out)) >= PATH_MAX) {
        warn("ptcall: PTCALL_OUTPUT is longer than PATH_MAX: not tracing");
        return -1;
    }
    if (out[0] == '/') {
        strcpy(rt.output, out);
    } else {
        size_t n = strlen(cwd);
        memcpy(rt.output, cwd, n);
        rt.output[n] = '/';
        strcpy(rt.output + n + 1, out);
    }
    return 0;
}

static void xsave_init(void)
{
    unsigned a, b, c, d;
    if (__get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 27)) /* OSXSAVE */ &&
        __get_cpuid_max(0, NULL) >= 0xd) {
        __cpuid_count(0xd, 0, a, b, c, d);
        if (b >= 576) {
            ptc_xsave_size = ((uint64_t)b + 63) & ~(uint64_t)63;
            ptc_use_xsave = 1;
        }
    }
}

static void init(void)
{
    uint64_t backend, arm, v;
    const char *out;
    int be_set;
    if (env(PTC_ENV_BACKEND, &backend, NULL, &be_set) || env(PTC_ENV_ARM, &arm, NULL, NULL))
        return;
    int soft = be_set && backend == 0, arm_only = (be_set && backend == 1) || arm;
    if ((arm_only || soft) && select_init() < 0)
        return; /* neither arm nor trace: the selection cannot be honoured */
    if (arm_only) {
        rt.arm_only = 1; /* the stubs stay `ret`: the hardware sees them run */
        return;
    }
    if (!soft || env(PTC_ENV_OUTPUT, NULL, &out, NULL) || output_path(out))
        return;
    if (env(PTC_ENV_TIMESTAMPS, &v, NULL, NULL))
        return;
    rt.timed = (int)v;
    /* untimed, a leaf's exit says nothing its entry does not: record the call once */
    if (env(PTC_ENV_LEAF_EXITS, &v, NULL, NULL))
        return;
    rt.leaf_calls = !rt.timed && !v;
    if (env(PTC_ENV_MODE, &v, NULL, NULL))
        return;
    rt.drop = v == 1;
    rt.rec = rt.timed ? 16 : 8;
    if (env(PTC_ENV_BUFFER, &v, NULL, NULL))
        return;
    rt.bufsize = page_round_up((size_t)v);
    if (env(PTC_ENV_BUFFERS, &v, NULL, NULL))
        return;
    rt.nbufs = (int)v;
    if (env(PTC_ENV_FLUSH_MS, &v, NULL, NULL))
        return;
    rt.flush_ns = v * 1000000u;
    uint64_t debug, tramps;
    if (env(PTC_ENV_DEBUG, &debug, NULL, NULL) || env(PTC_ENV_TRAMPOLINES, &tramps, NULL, NULL))
        return;
    rt.handler = rt.timed ? ptc_soft_handler_timed : ptc_soft_handler;
    rt.handler_id = rt.timed ? ptc_soft_handler_id_timed : ptc_soft_handler_id;
    check_points_init();
    rt.handler_fast = fastpath_build(rt.timed);
    rt.debug = (int)debug;
    if (rt.debug)
        warn("ptcall[%d]: %s id handler for %%r10-scratch units", (int)getpid(),
             rt.handler_fast ? "generated" : "shared (the generated one could not be built)");
    /* trampolines slow-path into the generated handler's slow entry: only with that handler */
    rt.tramps = !rt.timed && rt.handler_fast && tramps;
    if (!rt.handler_fast)
        rt.handler_fast = (void *)(uintptr_t)rt.handler_id;
    xsave_init();
    if (threads_init() != 0)
        return;
    lifecycle_init();
    rt.enabled = 1;
}

void runtime_init(void) { pthread_once(&init_once, init); }

__attribute__((constructor(101))) static void ptc_ctor(void) { runtime_init(); }
