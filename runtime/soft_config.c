/* The runtime's state and its configuration: the PTCALL_* environment (docs/runtime.md) and
 * the CPU's register save area for the handlers' slow path. */
#define _GNU_SOURCE
#include <cpuid.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    const char *be = getenv("PTCALL_BACKEND");
    const char *out = getenv("PTCALL_OUTPUT");
    const char *arm = getenv("PTCALL_ARM");
    int arm_only = (be && !strcmp(be, "pt")) || (arm && !strcmp(arm, "1"));
    if ((arm_only || (be && !strcmp(be, "soft"))) && select_init() < 0)
        return; /* neither arm nor trace: the selection cannot be honoured */
    if (arm_only) {
        rt.arm_only = 1; /* the stubs stay `ret`: the hardware sees them run */
        return;
    }
    if (!be || strcmp(be, "soft") || !out || out[0] != '/' || strlen(out) >= PATH_MAX)
        return;
    strcpy(rt.output, out);
    const char *ts = getenv("PTCALL_TIMESTAMPS");
    rt.timed = !(ts && !strcmp(ts, "0"));
    const char *le = getenv("PTCALL_LEAF_EXITS");
    /* untimed, a leaf's exit says nothing its entry does not: record the call once */
    rt.leaf_calls = !rt.timed && !(le && !strcmp(le, "1"));
    const char *mode = getenv("PTCALL_MODE");
    rt.drop = mode && !strcmp(mode, "drop");
    rt.rec = rt.timed ? 16 : 8;
    size_t bs = parse_size(getenv("PTCALL_BUFFER"), 256 << 10);
    if (bs < 4096)
        bs = 4096;
    if (bs > (256ull << 20))
        bs = 256ull << 20;
    rt.bufsize = page_round_up(bs);
    long nb = strtol(getenv("PTCALL_BUFFERS") ? getenv("PTCALL_BUFFERS") : "4", NULL, 10);
    rt.nbufs = nb < 2 ? 2 : nb > MAX_BUFS ? MAX_BUFS : (int)nb;
    rt.handler = rt.timed ? ptc_soft_handler_timed : ptc_soft_handler;
    rt.handler_id = rt.timed ? ptc_soft_handler_id_timed : ptc_soft_handler_id;
    check_points_init();
    rt.handler_fast = fastpath_build(rt.timed);
    rt.debug = getenv("PTCALL_DEBUG") && getenv("PTCALL_DEBUG")[0] == '1';
    if (rt.debug)
        warn("ptcall[%d]: %s id handler for %%r10-scratch units", (int)getpid(),
             rt.handler_fast ? "generated" : "shared (the generated one could not be built)");
    const char *tr = getenv("PTCALL_TRAMPOLINES");
    /* trampolines slow-path into the generated handler's slow entry: only with that handler */
    rt.tramps = !rt.timed && rt.handler_fast && !(tr && !strcmp(tr, "0"));
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
