/* The runtime's configuration: the PTCALL_* environment (common/ptc_env.c's table,
 * docs/runtime.md) read into the runtime's state, every value checked. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "ptc_env.h"
#include "soft_internal.h"

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

static int soft_settings(void);
static int attachable_config(void);

static int fd_ok(int fd) { return fd >= 0 && fcntl(fd, F_GETFD) >= 0; }

/* PTCALL_COUNTS_FD, PTCALL_FORKSERVER and PTCALL_FORKSERVER_DEFER (docs/cov.md) into rt: 1 when either is set, 0
 * when neither, -1 after a warning (then nothing is counted). */
static int forkserver_config(void)
{
    uint64_t v;
    const char *fs;
    char err[256];
    int set = ptc_env_get(PTC_ENV_COUNTS_FD, &v, NULL, err, sizeof(err));
    if (set < 0 || (set && !fd_ok((int)v))) {
        warn("ptcall: %s: not counting", set < 0 ? err : "PTCALL_COUNTS_FD is not an open "
                                                         "descriptor");
        return -1;
    }
    int any = set;
    if (set)
        rt.counts_fd = (int)v;
    set = ptc_env_get(PTC_ENV_FORKSERVER, NULL, &fs, err, sizeof(err));
    if (set > 0) {
        char *end;
        long ctl = strtol(fs, &end, 10), st = -1;
        if (*end == ',')
            st = strtol(end + 1, &end, 10);
        if (*end || ctl < 0 || st < 0 || ctl > INT_MAX || st > INT_MAX || !fd_ok((int)ctl) ||
            !fd_ok((int)st)) {
            warn("ptcall: PTCALL_FORKSERVER=%s: not two open descriptors CTL,ST: no fork "
                 "server", fs);
            return -1;
        }
        rt.fs_ctl = (int)ctl;
        rt.fs_st = (int)st;
        any = 1;
        set = ptc_env_get(PTC_ENV_FORKSERVER_DEFER, &v, NULL, err, sizeof(err));
        if (set < 0) {
            warn("ptcall: %s: no fork server", err);
            return -1;
        }
        rt.fs_defer = set > 0 && v;
        set = ptc_env_get(PTC_ENV_FORKSERVER_HARNESS, &v, NULL, err, sizeof(err));
        if (set < 0 || (set > 0 && !fd_ok((int)v))) {
            warn("ptcall: %s: no fork server", set < 0 ? err : "PTCALL_FORKSERVER_HARNESS is "
                                                               "not an open descriptor");
            return -1;
        }
        if (set > 0) {
            /* served from the harness's entry hook (soft_fuzz_input.c): deferred */
            rt.fs_harness_fd = (int)v;
            rt.fs_defer = 1;
        }
    }
    return any;
}

int ring_config(void)
{
    const char *dir, *trig;
    uint64_t fault;
    if (env(PTC_ENV_SNAPSHOT_DIR, NULL, &dir, NULL) || env(PTC_ENV_TRIGGER, NULL, &trig, NULL) ||
        env(PTC_ENV_TEST_SNAPSHOT_FAULT, &fault, NULL, NULL))
        return -1;
    rt.ring_test_fault = (int)fault;
    char cwd[PATH_MAX];
    if (dir && dir[0]) {
        if (dir[0] != '/' && getcwd(cwd, sizeof(cwd)) &&
            strlen(cwd) + 1 + strlen(dir) < sizeof(rt.snap_dir)) {
            strcpy(rt.snap_dir, cwd);
            strcat(rt.snap_dir, "/");
            strcat(rt.snap_dir, dir);
        } else if (strlen(dir) < sizeof(rt.snap_dir)) {
            strcpy(rt.snap_dir, dir);
        } else {
            warn("ptcall: PTCALL_SNAPSHOT_DIR is longer than PATH_MAX: not tracing");
            return -1;
        }
    } else if (rt.output[0]) { /* the trace output's directory */
        strcpy(rt.snap_dir, rt.output);
        char *slash = strrchr(rt.snap_dir, '/');
        if (slash == rt.snap_dir)
            slash[1] = 0;
        else if (slash)
            *slash = 0;
    } else if (getcwd(cwd, sizeof(cwd))) { /* the starting directory */
        strcpy(rt.snap_dir, cwd);
    } else {
        warn("ptcall: PTCALL_RING: the current directory is unknown and PTCALL_SNAPSHOT_DIR is "
             "not set: not tracing (set PTCALL_SNAPSHOT_DIR)");
        return -1;
    }
    rt.trigger_spec = trig && trig[0] ? trig : NULL; /* checked at start-up (trigger_config) */
    return 0;
}

int config_read(void)
{
    uint64_t backend, arm, v, v2;
    const char *out;
    int be_set;
    /* A set-user-ID program runs with rights its caller lacks: its caller's PTCALL_OUTPUT
     * would create or append to a file with the owner's rights, PTCALL_COUNTS_FD write into
     * any descriptor. Like glibc's secure mode, the caller's settings are ignored. */
    if (ptc_env_secure()) {
        const char *any = ptc_env_first_set();
        if (any) {
            const char *eq = strchr(any, '=');
            warn("ptcall: %.*s and the other PTCALL_* variables are ignored: this is a "
                 "set-user-ID or set-group-ID program (secure mode, as glibc's); trace it "
                 "as the user it runs as, or as root (docs/reliability.md)",
                 (int)(eq ? eq - any : 64), any);
        }
        return CONFIG_OFF;
    }
    if (env(PTC_ENV_BACKEND, &backend, NULL, &be_set) || env(PTC_ENV_ARM, &arm, NULL, NULL))
        return CONFIG_OFF;
    if ((be_set && backend == 1) || arm) {
        mixed_ignored("under Intel PT (PTCALL_BACKEND=pt, PTCALL_ARM)");
        /* Intel PT without timing (record --timing none sets PTCALL_TIMESTAMPS=0): a leaf's
         * exit says nothing its entry does not, so it stays unarmed, as untimed soft */
        uint64_t ts = 1, le = 0, dbg = 0;
        if (!env(PTC_ENV_TIMESTAMPS, &ts, NULL, NULL) && !env(PTC_ENV_LEAF_EXITS, &le, NULL, NULL))
            rt.leaf_calls = !ts && !le;
        if (!env(PTC_ENV_DEBUG, &dbg, NULL, NULL)) /* says how many exits stayed unarmed */
            rt.debug = (int)dbg;
        return CONFIG_ARM_ONLY;
    }
    /* PTCALL_RING alone is enough: a service started by its own manager gets one variable */
    uint64_t ring;
    int ring_set;
    if (env(PTC_ENV_RING, &ring, NULL, &ring_set))
        return CONFIG_OFF;
    /* counting mode: PTCALL_COUNTS=1 with the soft backend, or a counts file / fork server
     * of a tool (docs/cov.md), where the trace file is optional */
    int shared = forkserver_config();
    if (shared < 0 || env(PTC_ENV_COUNTS, &v, NULL, NULL))
        return CONFIG_OFF;
    rt.counting = shared || (be_set && backend == 0 && v);
    if (rt.counting && ring_set) {
        warn("ptcall: PTCALL_RING (a flight recorder of events) and counting mode exclude each "
             "other: not tracing (leave out one of them)");
        return CONFIG_OFF;
    }
    /* counted calls, whichever mode counts them: locked increments or not */
    if (env(PTC_ENV_COUNT_ATOMIC, &v, NULL, NULL))
        return CONFIG_OFF;
    rt.count_atomic = (int)v;
    if (!rt.counting && !ring_set && !be_set)
        return attachable_config();
    if (!rt.counting && !ring_set && backend != 0)
        return CONFIG_OFF;
    if (env(PTC_ENV_OUTPUT, NULL, &out, NULL))
        return CONFIG_OFF;
    if ((shared || ring_set) && (!out || !out[0]))
        out = NULL; /* counts in the shared file only; a ring writes snapshot files only */
    else if (output_path(out))
        return CONFIG_OFF;
    if (rt.counting) {
        rt.tramps = 1;
        if (env(PTC_ENV_TRAMPOLINES, &v, NULL, NULL) || env(PTC_ENV_DEBUG, &v2, NULL, NULL))
            return CONFIG_OFF;
        rt.tramps = (int)v;
        rt.debug = (int)v2;
        mixed_ignored("in counting mode (every function is counted already)");
        return CONFIG_COUNTS;
    }
    if (soft_settings() < 0)
        return CONFIG_OFF;
    if (ring_set) { /* the flight recorder: four buffers of a quarter of the ring each */
        rt.ring = (size_t)ring;
        rt.nbufs = 4;
        rt.bufsize = page_round_up(rt.ring / 4);
        rt.drop = 0;
        rt.flush_ns = 0;
        if (ring_config() < 0)
            return CONFIG_OFF;
        /* `ptcall snapshot PID` reaches the rings through the attach control channel */
        if (env(PTC_ENV_ATTACH, &v, NULL, NULL))
            return CONFIG_OFF;
        rt.ring_ctl = (int)v;
        mixed_ignored("with PTCALL_RING (a flight recorder writes no counts)");
    } else if (mixed_config() < 0 || pilot_config() < 0) {
        return CONFIG_OFF;
    }
    return CONFIG_SOFT;
}

/* The software backend's settings, for a traced run and an attachable one. 0 or -1. */
static int soft_settings(void)
{
    uint64_t v;
    if (env(PTC_ENV_TIMESTAMPS, &v, NULL, NULL))
        return -1;
    rt.timed = (int)v;
    if (ticker_config() < 0) /* PTCALL_CLOCK (soft_ticker.c) */
        return -1;
    /* untimed, a leaf's exit says nothing its entry does not: record the call once */
    if (env(PTC_ENV_LEAF_EXITS, &v, NULL, NULL))
        return -1;
    rt.leaf_calls = !rt.timed && !v;
    if (env(PTC_ENV_MODE, &v, NULL, NULL))
        return -1;
    rt.drop = v == 1;
    if (env(PTC_ENV_BLOCKING, &v, NULL, NULL)) /* blocking calls as events (soft_blocking.c) */
        return -1;
    rt.blocking = (int)v;
    rt.rec = rt.timed ? 16 : 8;
    if (env(PTC_ENV_BUFFER, &v, NULL, NULL))
        return -1;
    rt.bufsize = page_round_up((size_t)v);
    if (env(PTC_ENV_BUFFERS, &v, NULL, NULL))
        return -1;
    rt.nbufs = (int)v;
    if (env(PTC_ENV_FLUSH_MS, &v, NULL, NULL))
        return -1;
    rt.flush_ns = v * 1000000u;
    if (env(PTC_ENV_DEBUG, &v, NULL, NULL))
        return -1;
    rt.debug = (int)v;
    if (env(PTC_ENV_TEST_QUEUE_DELAY_US, &v, NULL, NULL))
        return -1;
    rt.test_queue_delay_ns = v * 1000u;
    if (env(PTC_ENV_TEST_DRAIN_DELAY_US, &v, NULL, NULL))
        return -1;
    rt.test_drain_delay_ns = v * 1000u;
    if (env(PTC_ENV_TEST_CTL_START_DELAY_US, &v, NULL, NULL))
        return -1;
    rt.test_ctl_start_delay_ns = v * 1000u;
    if (env(PTC_ENV_TRAMPOLINES, &v, NULL, NULL))
        return -1;
    rt.tramps = (int)v; /* wanted; start-up keeps it only where trampolines can work */
    return 0;
}

/* ---- attach (issue 31): a program started without ptcall ------------------------------ */

/* Not traced now, but a recorder may attach later (docs/runtime.md, *Attaching to a running
 * process*): the software backend's settings, unless PTCALL_ATTACH=0. */
static int attachable_config(void)
{
    uint64_t v;
    if (env(PTC_ENV_ATTACH, &v, NULL, NULL) || !v)
        return CONFIG_OFF;
    mixed_ignored("in a program started without ptcall (record --pid traces what it chose)");
    return soft_settings() < 0 ? CONFIG_OFF : CONFIG_ATTACH;
}
