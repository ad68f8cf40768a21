/* The environment variables' table and their one parser (ptc_env.h). */
#define _GNU_SOURCE
#include "ptc_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

extern char **environ;

#define KIB 1024ull
#define MIB (1024ull * 1024)

const struct ptc_env_var ptc_env_table[PTC_ENV_COUNT] = {
    [PTC_ENV_BACKEND] = {"PTCALL_BACKEND", PTC_ENV_CHOICE, "soft|pt", 0, 0, "", "runtime",
                         "soft: trace with the software backend into PTCALL_OUTPUT. pt: arm "
                         "only (call sites reach the stubs, which stay `ret`) for the Intel PT "
                         "recorder; no trace file, no thread. Unset: nothing is traced until a recorder attaches "
                         "(`ptcall record --pid`, PTCALL_ATTACH)"},
    [PTC_ENV_ARM] = {"PTCALL_ARM", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                     "1: arm only, as PTCALL_BACKEND=pt, for recorders other than ptcall "
                     "(`perf record -e intel_pt//u --filter ...`)"},
    [PTC_ENV_OUTPUT] = {"PTCALL_OUTPUT", PTC_ENV_PATH, NULL, 0, 0, "", "runtime",
                        "the trace file (soft backend). A relative name is taken from the "
                        "starting directory. A new file is created (mode 0600); an existing one "
                        "is appended to only if it is a ptcall trace; a symbolic link is "
                        "refused"},
    [PTC_ENV_TIMESTAMPS] = {"PTCALL_TIMESTAMPS", PTC_ENV_BOOL, NULL, 0, 0, "1", "runtime",
                            "a TSC per event"},
    [PTC_ENV_MODE] = {"PTCALL_MODE", PTC_ENV_CHOICE, "wait|drop", 0, 0, "wait", "runtime",
                      "when a thread has no free buffer: wait for the drain, or drop events "
                      "and count them"},
    [PTC_ENV_BUFFER] = {"PTCALL_BUFFER", PTC_ENV_SIZE, NULL, 4 * KIB, 256 * MIB, "256K",
                        "runtime", "bytes per buffer (K/M/G suffixes), rounded up to pages"},
    [PTC_ENV_BUFFERS] = {"PTCALL_BUFFERS", PTC_ENV_INT, NULL, 2, 64, "4", "runtime",
                         "buffers per thread"},
    [PTC_ENV_FLUSH_MS] = {"PTCALL_FLUSH_MS", PTC_ENV_INT, NULL, 0, 60000, "50", "runtime",
                          "the drain writes what threads' partly filled buffers hold at least "
                          "this often (milliseconds), so a SIGKILL loses at most about that "
                          "much; 0: only full buffers and the final flush"},
    [PTC_ENV_LEAF_EXITS] = {"PTCALL_LEAF_EXITS", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                            "untimed: arm the exit sleds of leaf functions too"},
    [PTC_ENV_ONLY] = {"PTCALL_ONLY", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                      "both backends: arm only the call sites of functions matching one of "
                      "these shell globs, one per line (at most 64, 8 KiB)"},
    [PTC_ENV_SKIP] = {"PTCALL_SKIP", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                      "both backends: never arm functions matching one of these globs (wins "
                      "over PTCALL_ONLY)"},
    [PTC_ENV_TRAMPOLINES] = {"PTCALL_TRAMPOLINES", PTC_ENV_BOOL, NULL, 0, 0, "1", "runtime",
                             "untimed: armed sites of units that give up %r10 jump to call-site "
                             "trampolines; 0: every armed site calls its stub"},
    [PTC_ENV_DEBUG] = {"PTCALL_DEBUG", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                       "statistics on stderr: the id handler built, trampolines, and at the end "
                       "one line per process with the drain's figures"},
    [PTC_ENV_TEST_QUEUE_DELAY_US] = {"PTCALL_TEST_QUEUE_DELAY_US", PTC_ENV_INT, NULL, 0, 100000,
                                     "0", "runtime",
                                     "for tests: a thread handing a full buffer to the drain "
                                     "sleeps this long first (microseconds), which widens the "
                                     "window in which exit() in another thread finds it there "
                                     "(test/faults, thread_exit)"},
    [PTC_ENV_TEST_DRAIN_DELAY_US] = {"PTCALL_TEST_DRAIN_DELAY_US", PTC_ENV_INT, NULL, 0, 1000000,
                                     "0", "runtime",
                                     "for tests: the drain sleeps this long (microseconds) "
                                     "holding its lock before each round, so that threads "
                                     "wait for buffers and a detach or exit waits for the "
                                     "drain (test/e2e, attach slowdrain)"},
    [PTC_ENV_TEST_CTL_START_DELAY_US] = {"PTCALL_TEST_CTL_START_DELAY_US", PTC_ENV_INT, NULL, 0,
                                         5000000, "0", "runtime",
                                         "for tests: libptcall.so's constructor sleeps this "
                                         "long (microseconds) before it opens the attach "
                                         "channel, as a program still loading would be "
                                         "(test/e2e, attach errors)"},
    [PTC_ENV_TIMEBASE] = {"PTCALL_TIMEBASE", PTC_ENV_CHOICE, "perf|calibrated", 0, 0, "perf",
                          "runtime",
                          "where the TSC's frequency comes from: perf (the kernel's perf_event "
                          "page, else calibration) or calibrated (skip perf; for tests)"},
    [PTC_ENV_EXEC_PID] = {"PTCALL_EXEC_PID", PTC_ENV_INT, NULL, 1, 4194304, "", "runtime",
                          "internal: set by the exec wrappers, so the new image says PROCESS "
                          "`how = EXEC`"},
    [PTC_ENV_COUNTS] = {"PTCALL_COUNTS", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                        "with PTCALL_BACKEND=soft: counting mode, calls per function instead "
                        "of a trace of events (no buffers, no drain); COUNTS chunks at exit "
                        "and at each ptcall_mark (docs/runtime.md, *Counting mode*)"},
    [PTC_ENV_COUNTS_FD] = {"PTCALL_COUNTS_FD", PTC_ENV_INT, NULL, 0, 1048575, "", "runtime",
                           "counting mode in a file the caller shares: the counters are laid "
                           "out (include/ptcall/counts_format.h) in this descriptor, sized and "
                           "mapped MAP_SHARED before main; PTCALL_OUTPUT is then optional "
                           "(docs/cov.md)"},
    [PTC_ENV_FORKSERVER] = {"PTCALL_FORKSERVER", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                            "CTL,ST: the descriptors of the fork server protocol v1 "
                            "(include/ptcall/forkserver.h, docs/cov.md): one child per input, "
                            "forked before main; implies counting mode"},
    [PTC_ENV_FORKSERVER_DEFER] = {"PTCALL_FORKSERVER_DEFER", PTC_ENV_BOOL, NULL, 0, 0, "0",
                                  "runtime",
                                  "with PTCALL_FORKSERVER: serve where the program first calls "
                                  "ptcall_forkserver_start() instead of before main, so that "
                                  "its initialisation runs once (docs/cov.md, *Deferred fork "
                                  "server*)"},
    [PTC_ENV_FORKSERVER_HARNESS] = {"PTCALL_FORKSERVER_HARNESS", PTC_ENV_INT, NULL, 0, 1048575,
                                    "", "runtime",
                                    "with PTCALL_FORKSERVER: serve at the first call of "
                                    "LLVMFuzzerTestOneInput (ptcall-cc's entry hook), each "
                                    "child running it once on the contents of this descriptor's "
                                    "file, so libFuzzer's start-up runs once (docs/cov.md, *The "
                                    "fork server at the harness*)"},
    /* the flight recorder (runtime/soft_ring.c, soft_trigger.c; docs/runtime.md) */
    [PTC_ENV_RING] = {"PTCALL_RING", PTC_ENV_SIZE, NULL, 16 * KIB, 1024 * MIB, "", "runtime",
                      "flight recorder: each thread keeps its newest SIZE bytes of events "
                      "(K/M/G; at least 16K: four buffers of a page) in memory and nothing is "
                      "written until a snapshot (ptcall_snapshot(), a fatal signal, "
                      "PTCALL_TRIGGER); implies the soft backend, PTCALL_OUTPUT optional"},
    [PTC_ENV_SNAPSHOT_DIR] = {"PTCALL_SNAPSHOT_DIR", PTC_ENV_PATH, NULL, 0, 0, "", "runtime",
                              "with PTCALL_RING: the directory of the snapshot files "
                              "(ptcall-snap.PID.N.trace; default: PTCALL_OUTPUT's directory, "
                              "else the starting directory)"},
    [PTC_ENV_TRIGGER] = {"PTCALL_TRIGGER", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                         "with PTCALL_RING: FUNC (a snapshot when a function matching this "
                         "glob returns) or FUNC>TIME (when a call of it took longer; TIME in "
                         "ns, us, ms or s); at most one trigger snapshot per second"},
    [PTC_ENV_TEST_SNAPSHOT_FAULT] = {"PTCALL_TEST_SNAPSHOT_FAULT", PTC_ENV_BOOL, NULL, 0, 0, "0",
                                     "runtime",
                                     "for tests: a crash snapshot faults on purpose once its "
                                     "file is begun (a crash inside the runtime's own signal "
                                     "path: test/e2e/ring_test.py)"},
    [PTC_ENV_RUNTIME] = {"PTCALL_RUNTIME", PTC_ENV_PATH, NULL, 0, 0, "", "record",
                         "the libptcall.so to preload (default: next to ptcall)"},
    [PTC_ENV_PT_SYSFS] = {"PTCALL_PT_SYSFS", PTC_ENV_PATH, NULL, 0, 0,
                          "/sys/bus/event_source/devices/intel_pt", "record",
                          "where the Intel PT PMU's sysfs directory is (tests point it at a "
                          "copy)"},
    [PTC_ENV_PT_DECODER] = {"PTCALL_PT_DECODER", PTC_ENV_CHOICE, "fast|libipt", 0, 0, "fast",
                            "decoder",
                            "the PT decoder: the fast path (libipt where it cannot follow), or "
                            "libipt alone"},
    [PTC_ENV_PT_THREADS] = {"PTCALL_PT_THREADS", PTC_ENV_INT, NULL, 1, 8, "1", "decoder",
                            "threads decoding PT streams side by side (opt-in: it showed no "
                            "gain yet, docs/pt.md)"},
    [PTC_ENV_PT_PAR_MIN_BYTES] = {"PTCALL_PT_PAR_MIN_BYTES", PTC_ENV_SIZE, NULL, 1,
                                  1ull << 62, "512K", "decoder",
                                  "PT traces smaller than this are decoded on one thread"},
    [PTC_ENV_PT_DEBUG] = {"PTCALL_PT_DEBUG", PTC_ENV_BOOL, NULL, 0, 0, "0", "decoder",
                          "the PT interpreter's decisions on stderr"},
    [PTC_ENV_OBJDUMP] = {"PTCALL_OBJDUMP", PTC_ENV_PATH, NULL, 0, 0, "", "bandwidth",
                         "the disassembler for full-trace estimates (default: objdump, else "
                         "llvm-objdump)"},
    /* read by db/db_conn.c and db/db_ingest.c (db/ uses no other floor: they call getenv) */
    [PTC_ENV_DB] = {"PTCALL_DB", PTC_ENV_TEXT, NULL, 0, 0, "ptcall.db", "db",
                    "the runs database of `ptcall db` when --db is not given: an SQLite file, "
                    "or postgresql://... (docs/db.md)"},
    [PTC_ENV_DB_PAUSE] = {"PTCALL_DB_PAUSE", PTC_ENV_PATH, NULL, 0, 0, "", "db",
                          "tests only: `db add` creates this file when a run's transaction is "
                          "written and waits a minute before it commits (to be killed there)"},
    /* read by server/web_static.c (server/ stands on db/ only: it calls getenv) */
    [PTC_ENV_WEB_DIR] = {"PTCALL_WEB_DIR", PTC_ENV_PATH, NULL, 0, 0, "", "serve",
                         "the directory of the web page's script, styles and uPlot for `ptcall "
                         "serve` and `ptcall html` (default: EXEDIR/../share/ptcall/web, "
                         "docs/web.md)"},
    [PTC_ENV_ATTACH] = {"PTCALL_ATTACH", PTC_ENV_BOOL, NULL, 0, 0, "1", "runtime",
                        "in a program started without ptcall: 0 starts no `ptcall-ctl` thread, "
                        "so `ptcall record --pid` and `ptcall snapshot` cannot reach it, and "
                        "with PTCALL_RING no snapshot writer thread (snapshots are forked) (for "
                        "programs that must stay single-threaded, e.g. to call "
                        "unshare(CLONE_NEWUSER)); docs/runtime.md, *Attaching to a running "
                        "process*"},
    /* issue 28: counted and traced in one run (docs/runtime.md, *Tracing within a budget*) */
    [PTC_ENV_COUNT_REST] = {"PTCALL_COUNT_REST", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                            "in a trace of events (PTCALL_BACKEND=soft): the functions "
                            "PTCALL_ONLY/SKIP leave out are counted (counting mode's "
                            "trampolines, COUNTS chunks) instead of ignored; `record "
                            "--count-rest`"},
    [PTC_ENV_COUNT_ATOMIC] = {"PTCALL_COUNT_ATOMIC", PTC_ENV_BOOL, NULL, 0, 0, "0", "runtime",
                              "counted calls (counting mode, PTCALL_COUNT_REST, a budget) "
                              "increment their counters with a locked instruction: exact when "
                              "threads call one function at once, at a higher cost per call; "
                              "`record --atomic-counts` (docs/runtime.md, *Counting mode*)"},
    [PTC_ENV_TRACE_SET] = {"PTCALL_TRACE_SET", PTC_ENV_PATH, NULL, 0, 0, "", "runtime",
                           "a file `ptcall-trace-set 1` then one function name a line: the "
                           "candidates it lists are traced, the other candidates counted "
                           "(docs/runtime.md, *Tracing within a budget*)"},
    [PTC_ENV_OVERHEAD] = {"PTCALL_OVERHEAD", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                          "a percentage of the program's CPU time (e.g. 5 or 2.5): every "
                          "candidate is counted during a pilot, then the functions that fit "
                          "the budget are traced and the rest counted (needs PTCALL_COSTS; "
                          "`record --overhead PCT`)"},
    [PTC_ENV_PILOT_MS] = {"PTCALL_PILOT_MS", PTC_ENV_INT, NULL, 1, 3600000, "200", "runtime",
                          "with PTCALL_OVERHEAD: the pilot ends once this many ms of wall time "
                          "have passed and the process has used as many ms of CPU time (an "
                          "idle server's pilot waits for work); `record --pilot`"},
    [PTC_ENV_COSTS] = {"PTCALL_COSTS", PTC_ENV_TEXT, NULL, 0, 0, "", "runtime",
                       "`event=NS,count=NS`: the measured cost of one traced event and of one "
                       "counted call (`ptcall calibrate --env`); the pilot's model"},
    [PTC_ENV_GOVERNOR_MS] = {"PTCALL_GOVERNOR_MS", PTC_ENV_INT, NULL, 0, 3600000, "200",
                             "runtime",
                             "with PTCALL_OVERHEAD: after the pilot's choice, every this many "
                             "ms the runtime prices the events the traced functions made and, "
                             "over the budget, counts instead of tracing those that made the "
                             "most (docs/runtime.md, *The governor*); 0: no governor, the "
                             "pilot's choice stays; `record --governor`"},
    /* issue 28: the ticker clock (runtime/soft_ticker.c) */
    [PTC_ENV_CLOCK] = {"PTCALL_CLOCK", PTC_ENV_TEXT, NULL, 0, 0, "tsc", "runtime",
                       "timed events' clock: tsc (rdtsc per event) or ticker[:US] (a runtime "
                       "thread stores the TSC every US microseconds, 1 to 1000000, default "
                       "100, and each event loads it: cheaper, resolution US; docs/runtime.md, "
                       "*The ticker clock*)"},
    [PTC_ENV_BLOCKING] = {"PTCALL_BLOCKING", PTC_ENV_BOOL, NULL, 0, 0, "1", "runtime",
                          "record calls into the C library's blocking functions (condition "
                          "and mutex waits, reads and writes, poll/epoll/select, sleeps, "
                          "waits for children, joins) as calls of the pseudo-functions of "
                          "the module [blocking], so that reports split self time into "
                          "running and blocked; 0: not recorded (docs/runtime.md, *Blocking "
                          "calls*)"},
    [PTC_ENV_TIMELINE_BUDGET] = {"PTCALL_TIMELINE_BUDGET", PTC_ENV_SIZE, NULL, 4096, 1ull << 32,
                                 "4M", "serve",
                                 "event bytes one answer of the timeline decodes at most: a "
                                 "wider window is drawn from the index's summaries, a longer "
                                 "call's callees counted from them (docs/timeline-index.md)"},
    [PTC_ENV_TEST_SERVE_DECODES] = {"PTCALL_TEST_SERVE_DECODES", PTC_ENV_BOOL, NULL, 0, 0, "0",
                                    "serve",
                                    "for tests: `ptcall serve` writes a line to standard error "
                                    "each time it decodes a run's trace for a flame graph, "
                                    "flame tree or threads table ('ptcall serve: decoding "
                                    "TRACE for WHAT'), so that a test can count them (test/web: "
                                    "clients asking at once are answered from one decoding)"},
};

static int bad(const struct ptc_env_var *v, const char *text, char *err, size_t errsz,
               const char *what)
{
    if (err && errsz)
        snprintf(err, errsz, "%s=%s: %s", v->name, text, what);
    return -1;
}

/* The index of word in "a|b|c", or -1 */
static int choice_index(const char *choices, const char *word)
{
    size_t n = strlen(word);
    int i = 0;
    for (const char *p = choices; *p; i++) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && !strncmp(p, word, n))
            return i;
        if (!bar)
            break;
        p = bar + 1;
    }
    return -1;
}

static int parse_bool(const char *s)
{
    static const char *const no[] = {"0", "no", "off", "false"};
    static const char *const yes[] = {"1", "yes", "on", "true"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(s, no[i]))
            return 0;
        if (!strcasecmp(s, yes[i]))
            return 1;
    }
    return -1;
}

/* A decimal number with, for sizes, one K/M/G suffix; -1 on anything else or overflow. */
static int parse_number(const char *s, int size, uint64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    uint64_t v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    unsigned shift = 0;
    if (size && *s) {
        switch (*s++) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        if (*s == 'i') /* KiB */
            s++;
        if (*s == 'B')
            s++;
    }
    if (*s || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = v << shift;
    return 0;
}

int ptc_env_parse(enum ptc_env_id id, const char *text, uint64_t *num, const char **str,
                  char *err, size_t errsz)
{
    const struct ptc_env_var *v = &ptc_env_table[id];
    uint64_t dummy_num;
    const char *dummy_str;
    if (!num)
        num = &dummy_num;
    if (!str)
        str = &dummy_str;
    int set = text && *text;
    const char *t = set ? text : v->def;
    *str = set ? text : (*v->def ? v->def : NULL);
    *num = 0;
    if (!*t)
        return 0;
    char what[160];
    switch (v->kind) {
    case PTC_ENV_BOOL: {
        int b = parse_bool(t);
        if (b < 0)
            return bad(v, t, err, errsz, "not a yes/no value (use 1 or 0)");
        *num = (uint64_t)b;
        break;
    }
    case PTC_ENV_CHOICE: {
        int i = choice_index(v->choices, t);
        if (i < 0) {
            snprintf(what, sizeof(what), "not one of %s (the values are case-sensitive)",
                     v->choices);
            return bad(v, t, err, errsz, what);
        }
        *num = (uint64_t)i;
        break;
    }
    case PTC_ENV_SIZE:
    case PTC_ENV_INT:
        if (parse_number(t, v->kind == PTC_ENV_SIZE, num) < 0)
            return bad(v, t, err, errsz,
                       v->kind == PTC_ENV_SIZE ? "not a size (a number with an optional K, M "
                                                 "or G)"
                                               : "not a decimal number");
        if (*num < v->min || *num > v->max) {
            snprintf(what, sizeof(what), "out of range (%llu..%llu)",
                     (unsigned long long)v->min, (unsigned long long)v->max);
            return bad(v, t, err, errsz, what);
        }
        break;
    case PTC_ENV_PATH:
    case PTC_ENV_TEXT:
        break;
    }
    return set ? 1 : 0;
}

int ptc_env_get(enum ptc_env_id id, uint64_t *num, const char **str, char *err, size_t errsz)
{
    return ptc_env_parse(id, secure_getenv(ptc_env_table[id].name), num, str, err, errsz);
}

int ptc_env_secure(void)
{
    return getauxval(AT_SECURE) != 0;
}

const char *ptc_env_first_set(void)
{
    for (char **e = environ; e && *e; e++)
        if (!strncmp(*e, "PTCALL_", 7))
            return *e;
    return NULL;
}
