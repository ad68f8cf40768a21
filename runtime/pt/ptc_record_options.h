/* Options of `ptcall record`, shared by the soft path (tools/cmd_record.c) and the Intel PT
 * recorder here, which the tools call through the weak hooks below: the recorder owns this
 * interface and the tools (the floor above) include it, never the other way round. */
#ifndef PTC_RECORD_OPTIONS_H
#define PTC_RECORD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum record_backend { RECORD_AUTO = 0, RECORD_SOFT = 1, RECORD_PT = 2 };
enum record_timing { TIMING_DEFAULT = 0, TIMING_NONE, TIMING_TSC, TIMING_MTC, TIMING_CYC };

struct record_options {
    const char *output;         /* -o FILE (default ptcall.ptc) */
    enum record_backend backend;
    int timed;                  /* soft: a timestamp on every event (default 1) */
    uint32_t clock_ns;          /* soft, timed: --clock ticker:PERIOD (ns); 0: rdtsc per event */
    int leaf_exits;             /* soft, untimed: record the returns of leaves too */
    int drop;                   /* soft: drop events when buffers are full instead of waiting */
    uint64_t buffer_size;       /* --buffer: soft per-thread buffer, or PT AUX size; 0 = default */
    enum record_timing timing;  /* pt: --timing */
    int snapshot;               /* pt: --snapshot */
    int attach_pid;             /* pt: --pid PID (0 = launch argv) */
    const char **modules;       /* pt: --module PATH, repeatable (also checked by --only) */
    int num_modules;
    const char **only;          /* --only GLOB, repeatable: arm only the matching functions */
    int num_only;
    const char **skip;          /* --skip GLOB, repeatable: never arm these (wins over only) */
    int num_skip;
    char **argv;                /* the command, NULL-terminated */
    int quiet;                  /* -q: no notices on stderr */
    int counts;                 /* soft: --counts, counting mode (docs/runtime.md) */
    int count_rest;             /* soft: --count-rest, the functions not traced are counted */
    int count_atomic;           /* soft: --atomic-counts, locked increments (exact across threads) */
    /* soft: the flight recorder (tools/record_ring.c, docs/runtime.md *Flight recorder*) */
    uint64_t ring;              /* --ring SIZE: bytes of events kept per thread; 0 = off */
    const char *trigger;        /* --trigger FUNC[>TIME]: a snapshot when FUNC returns (slowly) */
    uint64_t duration_ns;       /* --pid: detach after this long (0: at Ctrl-C or its exit) */
};

/* Under Intel PT without timing a leaf's exit says nothing its entry does not: the program's
 * runtime leaves it unarmed (PTCALL_TIMESTAMPS=0, PTCALL_LEAF_EXITS=0) and the MODULE chunks
 * give leaves' entries kind CALL. Not for --pid (its sites were armed by another runtime's
 * settings). The recorder and cmd_record.c decide by this one test. */
static inline int pt_leaf_calls(const struct record_options *o)
{
    return o->timing == TIMING_NONE && !o->leaf_exits && !o->attach_pid;
}

/* Implemented by the Intel PT recorder (runtime/pt). pt_available() returns 1 when this
 * machine can trace with Intel PT, else 0 and a one-line reason in why. record_pt() runs
 * the recording and stores the command's wait status; it returns 0, 1 when the trace is
 * incomplete (trace data or sideband lost, a write failed: it said so on stderr), or -1
 * after printing an error that says what to do. */
int pt_available(char *why, size_t why_size) __attribute__((weak));
int record_pt(const struct record_options *opts, int *wait_status) __attribute__((weak));

/* Implemented with the Intel PT recorder (runtime/pt/pt_select.c, which reads ELF files):
 * checks record's --only globs before the command starts, against the functions of the
 * executable exe, of the instrumented libraries it names in DT_NEEDED (found through its
 * RUNPATH/RPATH, LD_LIBRARY_PATH and the system directories; not their own dependencies) and
 * of every --module PATH. Returns 0 when each glob matches one of them, 1 when none of these
 * objects has a ptcall_map section (nothing to check against; the runtime warns at exit
 * instead), or -1 after printing an error that names the glob, the objects, how many
 * functions they have and where to see their names. Libraries the program dlopens are not
 * seen (name them with --module). */
int record_check_select(const struct record_options *opts, const char *exe)
    __attribute__((weak));

/* Implemented with the Intel PT recorder (runtime/pt/pt_arm.c): arms (on) or disarms the
 * gated call sites of every instrumented module mapped in process pid by writing its sleds
 * and unit slots (0 -> 1, or 1 -> 0; a soft handler's address is left alone). Each module is
 * read from the object the process mapped: through /proc/PID/map_files when the kernel lets
 * us, else from its path once the file there is shown to be that object (device and inode of
 * /proc/PID/maps); its ptcall_map must also be the one in the process's memory. */
struct arm_result {
    int changed;  /* units switched */
    int gated;    /* gated units found */
    int skipped;  /* objects left alone because their file could not be shown to be the one
                     mapped (replaced or removed on disk, unreadable): one warning each */
};

/* Receives one line (no newline) per object left alone. */
typedef void arm_warn_fn(void *ctx, const char *msg);

/* Returns 0 with *res filled (warn called for each skipped object; it may be NULL), or -1
 * with one line in why saying what failed and what to do: no such process, permission
 * denied (whose process it is, the ptrace settings that refuse), the process exited, a
 * read or write of its memory refused. */
int arm_process_ex(int pid, int on, struct arm_result *res, arm_warn_fn *warn, void *warn_ctx,
                   char *why, size_t why_size) __attribute__((weak));

/* arm_process_ex with the warnings printed to stderr ("ptcall: warning: ..."): *changed
 * counts the units switched, *gated the gated units found (either may be NULL). */
int arm_process(int pid, int on, int *changed, int *gated, char *why, size_t why_size)
    __attribute__((weak));

/* ---- the software backend's attach (runtime/pt/attach_soft.c, issue 31) ---------------- */

struct attach_outcome {
    uint64_t attach_ns;         /* from the call to tracing on (stubs patched) */
    uint64_t detach_ns;         /* the DETACH request's round trip */
    uint64_t runtime_detach_ns; /* of which the runtime's own work */
    double seconds;             /* attached */
    uint64_t events, dropped;   /* the runtime's totals at detach */
    uint32_t threads;
    int detached;               /* detached on request (else the target ended the channel) */
    int exited, execed;         /* the target exited, or exec'd, while attached */
};

/* record --pid with the software backend: attaches to o->attach_pid over its control channel
 * (include/ptcall/attach_ctl.h), into the new trace file out (created here), until SIGINT,
 * SIGTERM, SIGHUP, o->duration_ns or the target's end, then detaches and appends RECORD_END.
 * 0 with *res filled, 1 when the file could not be finished, or -1 after one line on stderr
 * (the target left running, untraced; no file left behind). */
int record_soft_attach(const struct record_options *o, const char *out,
                       struct attach_outcome *res) __attribute__((weak));

/* ptcall snapshot PID: asks the target's flight recorder for a snapshot into out (created
 * here). 0, or -1 after one line on stderr (no ring mode, refused, ...). */
int snapshot_soft(int pid, const char *out, const char *why) __attribute__((weak));

#endif
