/* The option table of every `ptcall` command, its parser and the texts made from it
 * (options.h). Adding an option is one row here; its parsing, checking, default, `--help`
 * line, docs/options.md entry and README summary follow from the row. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "ptc_select.h"

/* ---- commands ---------------------------------------------------------------------- */

const struct cli_command cli_commands[CMD_COUNT] = {
    [CMD_RECORD] = {"record", "[OPTIONS] [--] COMMAND [ARGS...]\n[OPTIONS] --pid PID [--duration TIME]",
                    "run a command and record its function calls",
                    "Runs COMMAND (built with ptcall-cc) and records its function calls.\n"
                    "The exit status is COMMAND's (128+N if a signal N killed it).\n"
                    "With --pid, attaches to a running instrumented process instead (Intel PT, "
                    "or the software backend's control channel: docs/runtime.md, Attaching to a "
                    "running process) until Ctrl-C, --duration or its exit, then detaches: the "
                    "process goes on untraced."},
    [CMD_REPORT] = {"report", "FILE|DIR... [OPTIONS] [FILTERS]",
                    "per-function calls, inclusive and self time, hottest first",
                    "--by, --paths and the filters read one run. See docs/usage.md "
                    "(ptcall report)."},
    [CMD_DIFF] = {"diff", "BASE NEW [OPTIONS]",
                  "per-function changes between two runs, largest first",
                  "Functions only in NEW are marked new, functions only in BASE gone. Untimed "
                  "traces compare calls only. Functions are matched as report matches them "
                  "over several runs. See docs/usage.md (ptcall diff)."},
    [CMD_CALLS] = {"calls", "FILE [OPTIONS] [FILTERS]", "the indented call sequence of each thread",
                   "Columns: time since the traced program started, duration (at a function's "
                   "end), pid/tid, and the call tree. A leaf call is one line 'f();'. See "
                   "docs/usage.md (ptcall calls)."},
    [CMD_GRAPH] = {"graph", "FILE [OPTIONS] [FILTERS]", "the dynamic call graph in Graphviz DOT",
                   "Writes DOT to stdout: ptcall graph run.ptc | dot -Tsvg > run.svg\n"
                   "With filters, the figures count only the calls the filters keep and the "
                   "trace is decoded on one thread."},
    [CMD_STAT] = {"stat", "[OPTIONS] FILE",
                  "what a trace holds: bytes, packets, hits, gaps, per CPU and thread",
                  "Prints what the trace FILE holds: chunks, bytes, Intel PT packets by type, "
                  "stub hits, bytes per hit, gaps and lost bytes, per CPU and per thread (soft "
                  "traces: records and bytes per thread)."},
    [CMD_IMPORT] = {"import",
                    "-o OUT [OPTIONS] --cpu-stream N:FILE [--cpu-stream ...]\n"
                    "-o OUT [OPTIONS] --thread-stream FILE\n"
                    "-o OUT [--binary PATH[@ADDR] ...] --perf-data perf.data",
                    "make a trace file from raw Intel PT streams or perf.data",
                    "All raw streams are attributed to --pid/--tid; CPU streams of one thread "
                    "are merged by time, so they need timing packets. See docs/pt.md (ptcall "
                    "import)."},
    [CMD_EXPORT] = {"export", "FILE --format FORMAT [-o OUT] [OPTIONS] [FILTERS]",
                    "write decoded events in another tool's format",
                    "See docs/usage.md (ptcall export, Filters)."},
    [CMD_ARM] = {"arm", "[--off] PID",
                 "arm (or disarm) the call sites of a running process for Intel PT",
                 "Arms the call sites of the ptcall-instrumented code in running process PID "
                 "so that its stubs run (for an Intel PT recorder attached to it); --off "
                 "disarms them again. A process started with PTCALL_ARM=1 is armed from the "
                 "start."},
    [CMD_BANDWIDTH] = {"bandwidth", "FILE [OPTIONS] [-- COMMAND [ARGS...]]",
                       "Intel PT bytes for this run: stub-filtered (simulated), full (estimated)",
                       "Simulates, from the trace's stub hits, the Intel PT packets a CPU would "
                       "write when only the stubs are traced, under each --timing: bytes by "
                       "packet type, per hit, per second (mean and the worst 1 ms and 10 ms), "
                       "per function. On an Intel PT trace the measured packets stand beside "
                       "the prediction. With -- COMMAND (the same binary and input) or "
                       "--callgrind, it also estimates what tracing all control flow would "
                       "write. --drain and --aux replay the byte rate against a buffer. See "
                       "docs/bandwidth.md."},
    [CMD_DB_ADD] = {"db add", "[--db URL] [--tag NAME=VALUE]... FILE.ptc...",
                    "store runs in a runs database (SQLite, or PostgreSQL for many machines)",
                    "Stores one run per trace, in one transaction each: its program and "
                    "modules, command line, host, start, duration, exit status, backend, trace "
                    "quality, and per function calls, total and self time, per caller->callee "
                    "edge its calls. A trace stored already (the same XXH3-128 content hash) is "
                    "refused, naming its run; one that cannot be read stores nothing. The exit "
                    "status is 1 when some trace was not stored. See docs/db.md."},
    [CMD_DB_LIST] = {"db list", "[--db URL] [--tag NAME[=VALUE]]... [--program GLOB] [--since "
                                "TIME] [--until TIME] [--runs SPEC] [--format F]",
                     "the runs of a runs database, with their tags and trace quality",
                     "See docs/db.md (ptcall db list)."},
    [CMD_DB_SHOW] = {"db show", "RUN [--db URL] [--top N] [--sort calls|self|total] [--format F]",
                     "one stored run: what was recorded, its trace quality, its hot functions",
                     "--format json lists the run's edges among the functions shown. See "
                     "docs/db.md (ptcall db show)."},
    [CMD_DB_RM] = {"db rm", "RUN... [--db URL]", "remove runs from a runs database",
                   "All the runs given are removed, or none when one of them is not there."},
    [CMD_DB_QUERY] = {"db query", "[--db URL] [--top N] [--stat S] [--sort calls|self|total] "
                                  "[--runs SPEC] [--tag NAME[=VALUE]]... [--program GLOB] "
                                  "[--since TIME] [--until TIME] [--format F]",
                      "hot functions over the chosen runs: sum, mean, median, max, min, stddev",
                      "Per function: the runs it was called in and, for each --stat, that "
                      "statistic of its calls, total and self time over the chosen runs (a run "
                      "without the function counts as 0), ranked by the first --stat of --sort. "
                      "See docs/db.md (ptcall db query)."},
    [CMD_SERVE] = {"serve", "[--db URL] [--listen ADDR:PORT]",
                   "a web page of the runs database: runs, hot functions, a function, a run",
                   "Serves the runs database read-only over HTTP: the runs with their tags "
                   "and trace quality, the hot functions over chosen runs (sum, mean, median, "
                   "spread), one function across runs with its callers and callees, a run's "
                   "call graph and flame graph, two runs compared, and the JSON API behind "
                   "every page (/api/v1/...). Stops on SIGINT or SIGTERM. See docs/web.md."},
    [CMD_HTML] = {"html", "[--tag NAME=VALUE]... FILE.ptc... [-o report.html]",
                  "the web page's views of a few runs as one self-contained HTML file",
                  "Writes one HTML file that opens from disk with no server (the chart "
                  "library inlined): the runs, the hot functions over them, each function "
                  "called, each run's call graph and flame graph, and the runs compared. "
                  "See docs/web.md."},
    [CMD_COV_RUN] = {"cov run",
                     "-o OUT.ptcov [--timeout MS] [--jobs N] (--corpus DIR...|--afl OUTDIR) "
                     "-- TARGET [ARGS with @@]",
                     "run a fuzzing corpus through a ptcall build: functions reached per input",
                     "Runs TARGET (built with ptcall-cc) once per input, through the runtime's "
                     "fork server (one fork per input, no trace; exec per input for targets "
                     "whose runtime does not answer), and writes per input the functions it "
                     "reached and their calls to OUT.ptcov. An argument @@ is replaced by the "
                     "input's path; without one the input is the target's stdin. A crash is "
                     "recorded with its signal, a hang is killed at --timeout: neither stops the "
                     "run. Unreadable, empty or directory entries and ones that are not regular "
                     "files (FIFOs, sockets) are reported and skipped. A process an input leaves "
                     "running is killed when the input ends, and said. A "
                     "libFuzzer-style harness linked with ptcall-cc -fptcall-fuzz-driver runs "
                     "its inputs in batches, one process each; libFuzzer's main "
                     "(-fsanitize=fuzzer), a harness's own main and AFL++ persistent harnesses "
                     "run one input per child, each checked to run LLVMFuzzerTestOneInput "
                     "once; a harness whose shape cannot be told is refused. See docs/cov.md."},
    [CMD_COV_REPORT] = {"cov report",
                        "FILE.ptcov [--format table|csv|json|html|lcov] [--frontier] [--top N] "
                        "[--binary PATH]",
                        "coverage of a campaign: union, per input, per function, over time",
                        "The union (functions reached of those instrumented, per module and per "
                        "source file), per input the functions it reached and those it reached "
                        "first, per function the first input that reached it and how many did, "
                        "the functions reached over campaign time and those never reached. "
                        "Never-reached functions are classed reachable or unreachable from the harness; "
                        "--frontier (--blockers): what reached code calls and never reached. "
                        "See docs/cov.md."},
    [CMD_COV_DIFF] = {"cov diff", "A.ptcov B.ptcov [--format table|csv|json]",
                      "functions only one of two campaigns reached",
                      "Functions are matched by linkage name and source file. "
                      "See docs/cov.md."},
    [CMD_COV_MERGE] = {"cov merge", "-o OUT.ptcov A.ptcov B.ptcov...",
                       "the parts of a campaign (machines, instance sets) merged into one file",
                       "Every file must measure the same build of the target (each module's "
                       "build id and function map): files of different builds are refused, "
                       "naming the module. Inputs are deduplicated by content hash (INPUT_HASH; "
                       "the earliest campaign time is kept) and said; inputs of files made "
                       "before the hash are matched by instance and name, and that is said. "
                       "Input names get their machine as a prefix (HOST:default/queue/...), so "
                       "each machine's instances stay apart. Blocks are kept when every file "
                       "has them. -o never replaces a file that is not a .ptcov. "
                       "See docs/cov.md."},
    [CMD_COV_ADD] = {"cov add", "[--db URL] [--campaign NAME] [--tag NAME=VALUE]... FILE.ptcov...",
                     "a .ptcov stored as one part of a campaign in the runs database",
                     "Each file is one part (one machine or one set of instances), stored in "
                     "one transaction; parts of one campaign may be added from many machines "
                     "at once. The same file content added twice is refused, and so is a file "
                     "of another program or build than the campaign's. 'ptcall db add' of a "
                     ".ptcov does the same. The campaign views are in 'ptcall serve' "
                     "(/api/v1/campaigns). See docs/db.md."},
    [CMD_COV_LIST] = {"cov list", "[--db URL] [--tag NAME[=VALUE]]... [--program GLOB]... "
                                  "[--format F]",
                      "the fuzzing campaigns of a runs database, with their coverage",
                      "Per campaign: parts, instances, inputs, functions and blocks reached "
                      "over all its parts, the campaign's time and when it last found new "
                      "coverage. --format json prints the API's /api/v1/campaigns document. "
                      "See docs/db.md (Campaigns)."},
    [CMD_COV_SHOW] = {"cov show", "ID [--db URL] [--top N] [--format F]",
                      "one campaign: the functions it reached, first reached first",
                      "Each function with the campaign time, instance, host and input of its "
                      "first reach over all parts. --format json prints the API's "
                      "/api/v1/campaigns/ID document (with the curves). See docs/db.md "
                      "(Campaigns)."},
    [CMD_SNAPSHOT] = {"snapshot", "PID [-o FILE] [--why TEXT]",
                      "write a running process's flight-recorder rings to a trace",
                      "Asks process PID (built with ptcall-cc, running in ring mode: "
                      "PTCALL_RING=SIZE or record --ring) for a snapshot of its rings over its "
                      "control channel; who may ask is who may ptrace it. See docs/runtime.md "
                      "(Attaching to a running process)."},
    [CMD_CALIBRATE] = {"calibrate", "[--format table|json] [--env]",
                       "measure what tracing costs on this machine (for record --overhead)",
                       "Runs a small instrumented program plain and traced in paired runs (the "
                       "software backend, each timing mode, and counting mode) and prints the "
                       "median cost of one traced event and of one counted call, with their "
                       "spread; caches them in $XDG_CACHE_HOME/ptcall/costs.json (keyed by CPU "
                       "model, kernel and libptcall build), where record --overhead reads them. "
                       "See docs/usage.md (Tracing within a budget)."},
    [CMD_HELP] = {"help",
                  "[COMMAND]\n--markdown | --readme | --env | --check\n"
                  "--man PAGE | --man-pages | --bash-completion",
                  "the commands, a command's help, or every command's options as Markdown",
                  "Without arguments, lists the commands. 'ptcall help COMMAND' is 'ptcall "
                  "COMMAND --help'. docs/options.md is the output of --markdown; the manual "
                  "pages and the bash completion that packages install are made by --man and "
                  "--bash-completion from the same table."},
};

/* ---- option table ------------------------------------------------------------------ */

#define R CLI_CM(CMD_RECORD)
#define P CLI_CM(CMD_REPORT)
#define D CLI_CM(CMD_DIFF)
#define C CLI_CM(CMD_CALLS)
#define G CLI_CM(CMD_GRAPH)
#define E CLI_CM(CMD_EXPORT)
#define S CLI_CM(CMD_STAT)
#define I CLI_CM(CMD_IMPORT)
#define A CLI_CM(CMD_ARM)
#define B CLI_CM(CMD_BANDWIDTH)
#define H CLI_CM(CMD_HELP)
#define CVR CLI_CM(CMD_COV_RUN)
#define CVP CLI_CM(CMD_COV_REPORT)
#define CVD CLI_CM(CMD_COV_DIFF)
#define CVM CLI_CM(CMD_COV_MERGE)
#define CVA CLI_CM(CMD_COV_ADD)
#define CVL CLI_CM(CMD_COV_LIST)
#define CVS CLI_CM(CMD_COV_SHOW)
#define DBA CLI_CM(CMD_DB_ADD)
#define DBL CLI_CM(CMD_DB_LIST)
#define DBS CLI_CM(CMD_DB_SHOW)
#define DBR CLI_CM(CMD_DB_RM)
#define DBQ CLI_CM(CMD_DB_QUERY)
#define SRV CLI_CM(CMD_SERVE)
#define HTM CLI_CM(CMD_HTML)
#define SNP CLI_CM(CMD_SNAPSHOT)
#define CAL CLI_CM(CMD_CALIBRATE)
#define ALL ((1u << CMD_COUNT) - 1)
#define FILTERED (C | P | G | E)

/* The field m of struct cli_values, checked at compile time to have type T: a row can
 * only store into the type its kind writes. */
#define F(m) offsetof(struct cli_values, m)
#define TYPED(m, T) \
    (F(m) + 0 * sizeof(struct { int t[_Generic(((struct cli_values *)0)->m, T: 1, default: -1)]; }))
#define UWIDTH(m) \
    _Generic(((struct cli_values *)0)->m, uint8_t: 1u, uint16_t: 2u, uint32_t: 4u, uint64_t: 8u)

#define FLAG(m) .kind = CLI_FLAG, .off = TYPED(m, int)
#define UINT(m, lo, hi) .kind = CLI_UINT, .off = F(m), .width = UWIDTH(m), .min = (lo), .max = (hi)
#define SIZE(m, lo, hi) .kind = CLI_SIZE, .off = TYPED(m, uint64_t), .min = (lo), .max = (hi)
#define PERCENT(m) .kind = CLI_PERCENT, .off = TYPED(m, double)
#define CHOICE(m, w) .kind = CLI_CHOICE, .off = TYPED(m, int), .choices = (w)
#define STRING(m) .kind = CLI_STRING, .off = TYPED(m, const char *)
#define LIST(m, most) .kind = CLI_LIST, .off = TYPED(m, struct cli_list), .max = (most)
#define DURATION(m) .kind = CLI_DURATION, .off = TYPED(m, uint64_t)
#define CUSTOM(m, fn) .kind = CLI_CUSTOM, .off = F(m), .parse = (fn)
#define GIVEN(m) .given_off = TYPED(m, int) + 1

static int parse_stats(const char *val, void *field, char *err, size_t errn);
static int parse_window(const char *val, void *field, char *err, size_t errn);
static int check_cpu_stream(const char *val, void *field, char *err, size_t errn);
static int check_binary(const char *val, void *field, char *err, size_t errn);
static int parse_watch_time(const char *val, void *field, char *err, size_t errn);
static int parse_fraction(const char *val, void *field, char *err, size_t errn);
static int check_one_line(const char *val, void *field, char *err, size_t errn);
static int parse_tsc_ratio(const char *val, void *field, char *err, size_t errn);
static int parse_budget(const char *val, void *field, char *err, size_t errn);
static int parse_cpu(const char *val, void *field, char *err, size_t errn);
static int parse_time_conv(const char *val, void *field, char *err, size_t errn);
static const struct cli_choice *export_formats(void);
static int parse_timings(const char *val, void *field, char *err, size_t errn);
static int parse_overhead(const char *val, void *field, char *err, size_t errn);

static const struct cli_choice backends[] = {
    {"auto", "Intel PT where this machine and this ptcall support it, else soft"},
    {"soft", "the software backend (no special hardware)"},
    {"pt", "Intel PT (an error where it is not available)"},
    {NULL, NULL}};
/* in enum record_timing order from TIMING_NONE */
static const struct cli_choice timings[] = {
    {"none", "no times, the smallest trace"},
    {"tsc", "the time of the last TSC packet only (coarse)"},
    {"mtc", "TSC and MTC: hit times at MTC resolution"},
    {"cyc", "also cycle-accurate CYC packets: exact per hit"},
    {NULL, NULL}};
static const struct cli_choice sort_keys[] = {{"calls", NULL}, {"self", NULL}, {"total", NULL},
                                              {NULL, NULL}};
static const struct cli_choice table_formats[] = {{"table", NULL}, {"csv", NULL}, {"json", NULL},
                                                  {NULL, NULL}};
static const struct cli_choice cov_formats[] = {{"table", NULL}, {"csv", NULL}, {"json", NULL},
                                                {"html", NULL}, {"lcov", NULL}, {NULL, NULL}};
static const struct cli_choice calib_formats[] = {{"table", NULL}, {"json", NULL}, {NULL, NULL}};
static const struct cli_choice on_off[] = {{"off", NULL}, {"on", NULL}, {NULL, NULL}};
static const struct cli_choice bys[] = {{"thread", NULL}, {"process", NULL}, {NULL, NULL}};
static const struct cli_choice orders[] = {
    {"time", "the lines of all threads in time order (default for timed traces)"},
    {"thread", "each thread's lines in its own order, threads as the trace holds them "
               "(default for untimed traces)"},
    {NULL, NULL}};
/* in enum ptc_weight order */
static const struct cli_choice weights[] = {{"calls", NULL}, {"self", NULL}, {"total", NULL},
                                            {NULL, NULL}};
/* in enum ptc_pt_mode order */
static const struct cli_choice decoders[] = {
    {"fast", "ptcall's packet decoder, libipt for the spans it does not handle"},
    {"libipt", "libipt's query decoder only"},
    {NULL, NULL}};

static const struct cli_group g_runs = {
    "Several runs (more than one FILE, a DIR: its *.ptc files, or --stat) give one row per "
    "function, matched by (module basename, linkage name, file), with figures summed",
    NULL};
static const struct cli_group g_one_run = {"One run only", NULL};
static const struct cli_group g_filters = {
    "Filters",
    "GLOBs are shell patterns matched against the name, the name without C++ parameters, "
    "and the linkage name. Filters combine (all must hold); the figures count only the calls "
    "they keep. See docs/usage.md (Filters)."};
static const struct cli_group g_raw = {"Raw streams (Intel PT bytes as the hardware wrote them)",
                                       NULL};
static const struct cli_group g_perf = {"perf.data (perf record -e intel_pt//u, without -z)",
                                        NULL};
static const struct cli_group g_db_runs = {
    "Choosing runs (all must hold; TIME: 2024-05-01, 2024-05-01T13:30:00, Z for UTC, "
    "@SECONDS, or an age: 90m, 36h, 7d)",
    NULL};

static const struct cli_opt opts[] = {
    /* ptcall record */
    {.name = "--output", .alias = "-o", .metavar = "FILE", .cmds = R, STRING(output),
     .def = "ptcall.ptc",
     .help = "the trace file to write: a new file (mode 0600) or an earlier trace of yours, "
             "replaced; a device, FIFO or any other file is refused"},
    {.name = "--backend", .cmds = R, CHOICE(record.backend, backends), .def = "auto",
     .help = "how to record:"},
    {.name = "--no-timestamps", .cmds = R, FLAG(record.no_timestamps),
     .help = "soft: no timestamp per event (smaller, faster; no times). The call of a function "
             "that calls nothing is one record"},
    {.name = "--clock", .metavar = "CLOCK", .cmds = R, STRING(record.clock), .def = "tsc",
     .help = "soft, timed: tsc (rdtsc per event) or ticker[:PERIOD] (a runtime thread stores "
             "the TSC every PERIOD, default 100us, and events load it: cheaper, times to "
             "PERIOD; docs/runtime.md, The ticker clock)"},
    {.name = "--leaf-exits", .cmds = R, FLAG(record.leaf_exits),
     .help = "soft, with --no-timestamps: record those returns as well"},
    {.name = "--no-blocking", .cmds = R, FLAG(record.no_blocking),
     .help = "soft: do not record calls into the C library's blocking functions (waits, I/O, "
             "sleeps) as calls of the module [blocking]; report then counts that time as the "
             "callers' self time (PTCALL_BLOCKING=0; docs/runtime.md, Blocking calls)"},
    {.name = "--counts", .cmds = R, FLAG(record.counts),
     .help = "soft: count calls per function instead of tracing events (no times, no call "
             "graph; about the cost of the untraced build plus one increment per call). "
             "ptcall_mark() in the program closes a segment (docs/runtime.md, Counting mode)"},
    {.name = "--count-rest", .cmds = R, FLAG(record.count_rest),
     .help = "soft: in a trace of events, count the calls of the functions --only/--skip "
             "leave out (counting mode's trampolines), so that every function's calls are "
             "exact (docs/runtime.md, Tracing within a budget)"},
    {.name = "--atomic-counts", .cmds = R, FLAG(record.count_atomic),
     .help = "soft: counted calls increment their counters with a locked instruction, so that "
             "threads calling one function at once lose no call (with --counts, --count-rest "
             "or --overhead; costs more per call: docs/runtime.md, Counting mode)"},
    {.name = "--drop", .cmds = R, FLAG(record.drop),
     .help = "soft: drop events when buffers are full instead of waiting (every drop is "
             "counted and marked in the trace)"},
    {.name = "--buffer", .metavar = "SIZE", .cmds = R, SIZE(record.buffer, 4u << 10, 256u << 20),
     .help = "the size of each buffer. soft: each of the 4 buffers per thread (default 256K); "
             "pt: the AUX area per CPU (default 128K, 4M for root). SIZE takes K, M, G"},
    {.name = "--ring", .metavar = "SIZE", .cmds = R, SIZE(record.ring, 16u << 10, 1024u << 20),
     .help = "soft: flight recorder: each thread keeps its newest SIZE of events in memory "
             "(at least 16K) and nothing is written until a snapshot (ptcall_snapshot() in the "
             "program, a crash, --trigger), each a trace file ptcall-snap.PID.N.trace in -o's "
             "directory (or PTCALL_SNAPSHOT_DIR)"},
    {.name = "--trigger", .metavar = "SPEC", .cmds = R, STRING(record.trigger),
     .flags = CLI_O_NONEMPTY,
     .help = "soft, with --ring: FUNC takes a snapshot when a function matching the glob FUNC "
             "returns; 'FUNC>TIME' (TIME in ns, us, ms, s) when a call of it took longer. At "
             "most one trigger snapshot per second"},
    {.name = "--timing", .cmds = R, CHOICE(timing, timings),
     .help = "pt: timing packets (default mtc):"},
    {.name = "--snapshot", .cmds = R, FLAG(record.snapshot),
     .help = "pt: snapshot mode: the AUX area keeps the most recent data, written at exit and "
             "on SIGUSR2"},
    {.name = "--pid", .metavar = "PID", .cmds = R, UINT(record.pid, 1, INT_MAX),
     .help = "attach to the running process PID instead of running COMMAND (software "
             "backend: it must have been built with ptcall-cc; docs/runtime.md)"},
    {.name = "--duration", .metavar = "TIME", .cmds = R,
     CUSTOM(record.duration_ms, parse_watch_time), .def = "0",
     .help = "--pid: detach after TIME (500ms, 30s, 10min; 0: at Ctrl-C or the process's exit)"},
    {.name = "--module", .metavar = "PATH", .cmds = R, LIST(record.modules, 0),
     .help = "pt: also trace this instrumented object (repeatable). Both backends: --only "
             "is checked against it too (a library the program dlopens)"},
    {.name = "--only", .metavar = "GLOB", .cmds = R, LIST(record.only, PTC_SELECT_MAX),
     .flags = CLI_O_NONEMPTY, .parse = check_one_line,
     .help = "arm only the call sites of matching functions (repeatable; matched like "
             "--function of report: name, name without C++ parameters, linkage name); the "
             "others run untraced, at the untraced build's cost. A GLOB that matches no "
             "function of the program, the instrumented libraries it links or a --module is "
             "an error before it starts"},
    {.name = "--skip", .metavar = "GLOB", .cmds = R, LIST(record.skip, PTC_SELECT_MAX),
     .flags = CLI_O_NONEMPTY, .parse = check_one_line,
     .help = "never arm matching functions (repeatable; wins over --only). The trace says "
             "which functions were armed: the outputs show the others as not traced"},
    {.name = "--quiet", .alias = "-q", .cmds = R, FLAG(quiet),
     .help = "no notices or summary on stderr"},
    /* a budget (issue 28; record_budget.c, docs/usage.md Tracing within a budget) */
    {.name = "--overhead", .metavar = "PCT", .cmds = R, CUSTOM(record.overhead, parse_overhead),
     GIVEN(record.have_overhead),
     .help = "soft: trace within PCT percent of the program's CPU time (0 < PCT <= 100): a "
             "pilot counts every function first, then the cheapest are traced and the rest "
             "counted, by the costs ptcall calibrate measured (measured first if none). With "
             "--only, the budget chooses among --only's functions"},
    {.name = "--pilot", .metavar = "DURATION", .cmds = R,
     CUSTOM(record.pilot_ms, parse_watch_time), GIVEN(record.have_pilot), .def = "200ms",
     .help = "with --overhead: how long the pilot counts before choosing (--from-counts and "
             "--from-db need none; 0 without them is said and the default used)"},
    {.name = "--governor", .metavar = "DURATION", .cmds = R,
     CUSTOM(record.governor_ms, parse_watch_time), GIVEN(record.have_governor), .def = "200ms",
     .help = "with --overhead: after the choice (a pilot's or previous counts'), every DURATION the traced functions' calls are "
             "priced again, and over the budget those with the most are counted from then on "
             "(their calls stay exact); 0: the pilot's choice stays for the whole run"},
    {.name = "--from-counts", .metavar = "TRACE", .cmds = R, STRING(record.from_counts),
     .flags = CLI_O_NONEMPTY,
     .help = "with --overhead: choose from this record --counts trace of the same build "
             "instead of a pilot"},
    {.name = "--from-db", .metavar = "DB", .cmds = R, STRING(record.from_db),
     .flags = CLI_O_NONEMPTY,
     .help = "with --overhead: choose from the newest run of the same build in this runs "
             "database instead of a pilot"},

    /* ptcall report, diff */
    {.name = "--top", .metavar = "N", .cmds = P, UINT(top, 0, UINT64_MAX),
     .help = "show the N hottest functions (default 20 for table, all for csv/json; 0 = all)"},
    {.name = "--top", .metavar = "N", .cmds = D, UINT(top, 0, UINT64_MAX),
     .help = "show the N largest changes (default 20 for table, all for csv/json; 0 = all)"},
    {.name = "--sort", .cmds = P, CHOICE(sort, sort_keys),
     .help = "order by calls, self or total time (default total, or calls for untimed "
             "traces)"},
    {.name = "--sort", .cmds = D, CHOICE(sort, sort_keys),
     .help = "order by the largest absolute change of calls, self or total time (default "
             "total, or calls when a trace is untimed)"},
    {.name = "--format", .cmds = P | D, CHOICE(format, table_formats), .def = "table",
     .help = "table (for people), csv or json (versioned, see docs/usage.md)"},
    {.name = "--meta", .metavar = "FILE", .cmds = P, STRING(report.meta), .flags = CLI_O_NONEMPTY,
     .help = "also write the report's metadata (trace, time unit, totals) to FILE as a JSON "
             "object (the csv output is the header and the rows only)"},
    {.name = "--allow-different", .cmds = D, FLAG(allow_different),
     .help = "compare runs that share no instrumented module"},
    {.name = "--threads", .metavar = "N", .cmds = P | D, UINT(threads, 0, 1024), .def = "1",
     .help = "decode each trace with N threads, one per traced thread at most (0 = one per "
             "CPU); the output is the same"},
    {.name = "--salvage", .cmds = P, FLAG(salvage),
     .help = "analyse what precedes damage in a truncated or corrupt trace (several runs: "
             "leave out, with a warning, the files that cannot be read at all)"},
    {.name = "--stat", .metavar = "S", .cmds = P, CUSTOM(report.stats, parse_stats),
     .group = &g_runs,
     .help = "also per-run statistics: mean, min, max, stddev (comma-separated or repeated); "
             "a run without the function counts as 0"},
    {.name = "--allow-different", .cmds = P, FLAG(allow_different), .group = &g_runs,
     .help = "combine runs that share no instrumented module"},
    {.name = "--by", .cmds = P, CHOICE(report.by, bys), .group = &g_one_run,
     .help = "rows per thread or per process"},
    {.name = "--paths", .cmds = P, FLAG(report.paths), .group = &g_one_run,
     .help = "the hot call paths (root ... function) instead of functions: those with at least "
             "--min-share P % of the time in outermost frames (untimed: of the calls) or at "
             "least --min-calls N calls"},
    {.name = "--min-share", .metavar = "P", .cmds = P, PERCENT(min_share), .def = "1",
     .group = &g_one_run, .help = "with --paths: the share a path needs"},
    {.name = "--min-calls", .metavar = "N", .cmds = P, UINT(min_calls, 0, UINT64_MAX),
     .group = &g_one_run, .help = "with --paths: the calls that also make a path pass"},

    /* ptcall calls */
    {.name = "--order", .cmds = C, CHOICE(calls.order, orders), .help = "the order of the lines:"},

    /* ptcall graph */
    {.name = "--min-calls", .metavar = "N", .cmds = G, UINT(min_calls, 0, UINT64_MAX),
     .def = "1",
     .help = "leave out edges called fewer than N times, and functions called fewer than N "
             "times that no kept edge touches"},
    {.name = "--min-share", .metavar = "P", .cmds = G, PERCENT(min_share), .def = "0",
     .help = "leave out functions whose inclusive time is below P % of the time in traced "
             "functions (untimed: of the calls), and their edges; the roots and the paths "
             "to the functions kept stay (as ptcall serve's call graph)"},
    {.name = "--heat", .cmds = G, FLAG(graph.heat),
     .help = "colour functions by their share of the time (or of the calls, untimed) and draw "
             "busier edges thicker"},
    {.name = "--threads", .metavar = "N", .cmds = G, UINT(threads, 0, 1024), .def = "1",
     .help = "decode with N threads, one per traced thread at most (0 = one per CPU; not with "
             "filters); the output is the same"},

    /* ptcall export */
    {.name = "--format", .metavar = "FORMAT", .cmds = E, .kind = CLI_CHOICE,
     .off = TYPED(export_.format, int), .choices_fn = export_formats,
     .help = "the output format (required):"},
    {.name = "--output", .alias = "-o", .metavar = "OUT", .cmds = E, STRING(output),
     .flags = CLI_O_NONEMPTY,
     .help = "write to OUT (made whole or not at all); default (or -): stdout"},
    {.name = "--weight", .cmds = E, CHOICE(export_.weight, weights), .def = "calls",
     .help = "folded, svg, flame-json: what a frame's width counts: calls, or self time (then "
             "a frame is as wide as its total time); total is refused for folded and svg "
             "(flame-json: each frame's own total time)"},
    {.name = "--max-size", .metavar = "SIZE", .cmds = E, SIZE(export_.max_size, 1, UINT64_MAX),
     .help = "stop when the output would exceed SIZE (e.g. 500M); chrome's default is 200M, "
             "what trace viewers load"},
    {.name = "--force", .cmds = E, FLAG(export_.force), .help = "no size limit"},
    {.name = "--svg-static", .cmds = E, FLAG(export_.svg_static),
     .help = "svg: leave out the script that zooms (click a frame) and searches (Ctrl-F) when "
             "the file is opened on its own; for pages that show it as an image"},

    /* shared by calls, graph, export, diff */
    {.name = "--salvage", .cmds = C | G | E | D, FLAG(salvage),
     .help = "use what precedes damage in a truncated or corrupt trace (the output says what "
             "was lost)"},

    /* ptcall stat */
    {.name = "--decoder", .cmds = S, CHOICE(stat.decoder, decoders), .def = "fast",
     .help = "how to decode Intel PT:"},

    /* ptcall import */
    {.name = "--output", .alias = "-o", .metavar = "OUT", .cmds = I, STRING(output),
     .help = "the trace file to write (required): a new file or an earlier trace of yours"},
    {.name = "--binary", .metavar = "PATH[@ADDR]", .cmds = I, LIST(import.binaries, 32),
     .parse = check_binary,
     .help = "an instrumented object and the address its first PT_LOAD segment was loaded at "
             "(hex; default: its link address); with --perf-data: where to find an object "
             "that MMAP2 records name, matched by file name"},
    {.name = "--cpu-stream", .metavar = "N:FILE", .cmds = I, LIST(import.cpu_streams, 256),
     .parse = check_cpu_stream, .group = &g_raw, .help = "the trace of CPU N (repeat per CPU)"},
    {.name = "--thread-stream", .metavar = "FILE", .cmds = I, STRING(import.thread_stream),
     .group = &g_raw, .help = "the trace of one thread (any CPU)"},
    {.name = "--pid", .metavar = "PID", .cmds = I, UINT(import.pid, 0, UINT32_MAX), .def = "1",
     .group = &g_raw, .help = "the process that ran"},
    {.name = "--tid", .metavar = "TID", .cmds = I, UINT(import.tid, 0, UINT32_MAX), .def = "1",
     .group = &g_raw, .help = "the thread that ran"},
    {.name = "--timing", .cmds = I, CHOICE(timing, timings), .def = "mtc", .group = &g_raw,
     .help = "timing packets in the streams:"},
    {.name = "--mtc-period", .metavar = "N", .cmds = I, UINT(import.mtc_period, 0, 15),
     .def = "3", .group = &g_raw, .help = "IA32_RTIT_CTL.MTCFreq used"},
    {.name = "--tsc-ratio", .metavar = "EBX:EAX", .cmds = I,
     CUSTOM(import.tsc_ratio, parse_tsc_ratio), GIVEN(import.have_tsc_ratio), .group = &g_raw,
     .help = "CPUID.15H TSC/crystal ratio (sysfs intel_pt/tsc_art_ratio)"},
    {.name = "--nom-freq", .metavar = "N", .cmds = I, UINT(import.nom_freq, 0, 255),
     .group = &g_raw, .help = "max non-turbo ratio (sysfs intel_pt/max_nonturbo_ratio)"},
    {.name = "--cpu", .metavar = "F/M/S", .cmds = I, CUSTOM(import.cpu, parse_cpu),
     GIVEN(import.have_cpu), .group = &g_raw,
     .help = "CPU family/model/stepping (libipt errata)"},
    {.name = "--time-conv", .metavar = "S:M:Z", .cmds = I,
     CUSTOM(import.time_conv, parse_time_conv), GIVEN(import.have_time_conv), .group = &g_raw,
     .help = "perf time_shift:time_mult:time_zero (default: times in TSC)"},
    {.name = "--perf-data", .metavar = "FILE", .cmds = I, STRING(import.perf_data),
     .group = &g_perf,
     .help = "AUXTRACE data, MMAP2/COMM/SWITCH/AUX sideband and the AUXTRACE_INFO timing "
             "parameters are read from the file"},

    /* ptcall arm */
    {.name = "--off", .cmds = A, FLAG(arm.off), .help = "disarm the call sites again"},

    /* ptcall bandwidth */
    {.name = "--timing", .metavar = "LIST", .cmds = B, CUSTOM(bandwidth.timings, parse_timings),
     .help = "the timing configurations to simulate, comma-separated or repeated: none, tsc, "
             "mtc, cyc (default all four; mtc and cyc need a timed trace)"},
    {.name = "--mtc-period", .metavar = "N", .cmds = B, UINT(bandwidth.mtc_period, 0, 15),
     GIVEN(bandwidth.have_mtc_period),
     .help = "an MTC every 2^N crystal ticks (perf mtc_period; default: the PT trace's, else 3)"},
    {.name = "--cyc-threshold", .metavar = "N", .cmds = B, UINT(bandwidth.cyc_threshold, 0, 15),
     GIVEN(bandwidth.have_cyc_threshold),
     .help = "CYC only after 2^(N-1) cycles (perf cyc_thresh; default: the trace's, else 0: "
             "before every eligible packet)"},
    {.name = "--psb-period", .metavar = "BYTES", .cmds = B,
     SIZE(bandwidth.psb_period, 256, 1u << 30), GIVEN(bandwidth.have_psb_period),
     .help = "bytes between PSB+ (default: the PT trace's, else 16K, perf's psb_period=3)"},
    {.name = "--ret-compression", .cmds = B, CHOICE(bandwidth.ret_compression, on_off),
     .def = "off",
     .help = "on: the stub's ret is compressed, TIP.PGD carries no IP; off (noretcomp, what "
             "ptcall records with): TIP.PGD carries the return address"},
    {.name = "--tsc-ratio", .metavar = "EBX:EAX", .cmds = B,
     CUSTOM(bandwidth.tsc_ratio, parse_tsc_ratio), GIVEN(bandwidth.have_tsc_ratio),
     .help = "TSC ticks per crystal tick, as CPUID.15H (default: the PT trace's, else 100:1, a "
             "24 MHz crystal under a 2.4 GHz TSC)"},
    {.name = "--only", .metavar = "GLOB", .cmds = B, LIST(bandwidth.only, 0),
     .flags = CLI_O_NONEMPTY,
     .help = "simulate tracing only matching functions (repeatable; matched like report's "
             "--function): what `record --only` would write"},
    {.name = "--drain", .metavar = "SIZE", .cmds = B, SIZE(bandwidth.drain, 1, UINT64_MAX),
     .help = "bytes per second the recorder moves to storage (e.g. 500M): replays the byte "
             "rate against --aux and reports what would be lost, when and where"},
    {.name = "--aux", .metavar = "SIZE", .cmds = B, SIZE(bandwidth.aux, 4096, UINT64_MAX),
     GIVEN(bandwidth.have_aux),
     .help = "the buffer per stream for --drain (default: the PT trace's AUX size, else 4M)"},
    {.name = "--callgrind", .metavar = "FILE", .cmds = B, STRING(bandwidth.callgrind),
     .flags = CLI_O_NONEMPTY,
     .help = "estimate full tracing from this callgrind output (valgrind --tool=callgrind "
             "--collect-jumps=yes --dump-instr=yes) instead of running COMMAND"},
    {.name = "--emit", .metavar = "DIR", .cmds = B, STRING(bandwidth.emit),
     .flags = CLI_O_NONEMPTY,
     .help = "also write each simulated stream with libipt's encoder to DIR/MODE-PID-TID.pt"},
    {.name = "--budget", .metavar = "RATE[,AUX]", .cmds = B | R, CUSTOM(budget, parse_budget),
     GIVEN(have_budget),
     .help = "Intel PT: choose the functions to trace so that the (simulated) trace stays within "
             "RATE bytes per second (K, M, G) and loses nothing in an AUX buffer of AUX bytes per "
             "stream (default 4M) drained at RATE. record: from a previous run's counts; "
             "bandwidth: from this trace's hits (docs/bandwidth.md, Tracing within a budget)"},
    {.name = "--top", .metavar = "N", .cmds = B, UINT(bandwidth.top, 0, UINT64_MAX), .def = "10",
     .help = "functions listed (table; csv and json list all; 0 = all)"},
    {.name = "--format", .cmds = B, CHOICE(format, table_formats), .def = "table",
     .help = "table, csv or json (versioned, docs/bandwidth.md)"},

    /* ptcall db add, list, show, rm, query */
    {.name = "--db", .metavar = "URL", .cmds = DBA | DBL | DBS | DBR | DBQ | SRV | CVA | CVL | CVS,
     STRING(db.url),
     .flags = CLI_O_NONEMPTY,
     .help = "the runs database: an SQLite file (default $PTCALL_DB, else ptcall.db) or "
             "postgresql://[USER@]HOST[:PORT]/DBNAME (libpq's URLs and parameters)"},
    {.name = "--tag", .metavar = "NAME=VALUE", .cmds = DBA | CVA | HTM, LIST(db.tags, 0),
     .parse = db_cli_check_tag,
     .help = "store this tag with each run, or with the campaign of a .ptcov (repeatable, one "
             "value per NAME); html: the tags its pages show, name=NAME names the runs"},
    {.name = "--campaign", .metavar = "NAME", .cmds = DBA | CVA, STRING(cov.campaign),
     .flags = CLI_O_NONEMPTY,
     .help = "the campaign a .ptcov is a part of (default: PROGRAM-YYYY-MM-DD, the day its "
             "cov run was made)"},
    {.name = "--threads", .metavar = "N", .cmds = DBA, UINT(threads, 0, 1024), .def = "1",
     .help = "decode each trace with N threads, as report does (0 = one per CPU)"},
    {.name = "--top", .metavar = "N", .cmds = DBS, UINT(top, 0, UINT64_MAX), .def = "10",
     .help = "the N hottest functions (0 = all)"},
    {.name = "--top", .metavar = "N", .cmds = CVS, UINT(top, 0, UINT64_MAX), .def = "20",
     .help = "the N functions first reached first (0 = all)"},
    {.name = "--top", .metavar = "N", .cmds = DBQ, UINT(top, 0, UINT64_MAX),
     .help = "the N hottest functions (default 20 for table, all for csv/json; 0 = all)"},
    {.name = "--stat", .metavar = "S", .cmds = DBQ, CUSTOM(db.stats, db_cli_parse_stats),
     .help = "sum (default), mean, median, max, min, stddev over the chosen runs, comma-separated or "
             "repeated; the first ranks"},
    {.name = "--sort", .cmds = DBS | DBQ, CHOICE(sort, sort_keys),
     .help = "rank by calls, self or total time (default self, or calls when untimed)"},
    {.name = "--format", .cmds = DBL | DBS | DBQ | CVL | CVS, CHOICE(format, table_formats),
     .def = "table",
     .help = "table (for people), csv or json (versioned, see docs/db.md)"},
    {.name = "--tag", .metavar = "NAME[=VALUE]", .cmds = DBL | DBQ | CVL, LIST(db.tags, 0),
     .parse = db_cli_check_tag_filter, .group = &g_db_runs,
     .help = "runs with this tag (and value) (repeatable)"},
    {.name = "--program", .metavar = "GLOB", .cmds = DBL | DBQ | CVL, LIST(db.programs, 0),
     .flags = CLI_O_NONEMPTY, .group = &g_db_runs,
     .help = "runs whose program's name or path matches (repeatable: any)"},
    {.name = "--since", .metavar = "TIME", .cmds = DBL | DBQ,
     CUSTOM(db.since, db_cli_parse_time), GIVEN(db.has_since), .group = &g_db_runs,
     .help = "runs recorded at TIME or later"},
    {.name = "--until", .metavar = "TIME", .cmds = DBL | DBQ,
     CUSTOM(db.until, db_cli_parse_time), GIVEN(db.has_until), .group = &g_db_runs,
     .help = "runs recorded before TIME"},
    {.name = "--runs", .metavar = "SPEC", .cmds = DBL | DBQ, CUSTOM(db.runs, db_cli_parse_runs),
     .group = &g_db_runs,
     .help = "all, run ids and ranges (3,5-9) and last:N (the N newest), comma-separated"},

    /* ptcall serve, html */
    {.name = "--listen", .metavar = "ADDR:PORT", .cmds = SRV, STRING(serve.listen),
     .def = "127.0.0.1:8080", .flags = CLI_O_NONEMPTY,
     .help = "the IPv4 address and port to serve on (port 0: any free one; the URL is "
             "printed). Other hosts can reach the page only when ADDR is not 127.0.0.1"},
    {.name = "--output", .alias = "-o", .metavar = "FILE", .cmds = SNP, STRING(output),
     .def = "ptcall-snapshot.ptc", .help = "the snapshot's trace file"},
    {.name = "--why", .metavar = "TEXT", .cmds = SNP, STRING(snapshot.why),
     .help = "why the snapshot was taken (written into it)"},
    /* ptcall calibrate */
    {.name = "--format", .cmds = CAL, CHOICE(calibrate.format, calib_formats), .def = "table",
     .help = "table (for people) or json (versioned, see docs/usage.md)"},
    {.name = "--env", .cmds = CAL, FLAG(calibrate.env),
     .help = "print PTCALL_COSTS=event=NS,count=NS (the timed mode) for a program started "
             "without ptcall record"},
    {.name = "--quiet", .alias = "-q", .cmds = CAL, FLAG(quiet),
     .help = "no notices on stderr"},
    {.name = "--output", .alias = "-o", .metavar = "FILE", .cmds = HTM, STRING(output),
     .def = "report.html", .flags = CLI_O_NONEMPTY, .help = "the HTML file to write"},

    /* ptcall cov run, report, diff */
    {.name = "--output", .alias = "-o", .metavar = "OUT.ptcov", .cmds = CVR, STRING(output),
     .flags = CLI_O_NONEMPTY, .help = "the coverage file to write (required)"},
    {.name = "--corpus", .metavar = "DIR", .cmds = CVR, LIST(cov.corpora, 0),
     .flags = CLI_O_NONEMPTY,
     .help = "a directory of inputs, the files directly inside it (repeatable); campaign "
             "time: file times"},
    {.name = "--afl", .metavar = "OUTDIR", .cmds = CVR, LIST(cov.afl, 0), .flags = CLI_O_NONEMPTY,
     .help = "an AFL++ output directory (afl-fuzz -o OUTDIR): every instance's queue/, and "
             "crashes/ and hangs/ marked as such (repeatable); campaign time: the time: of the "
             "entries' names"},
    {.name = "--timeout", .metavar = "MS", .cmds = CVR, UINT(cov.timeout_ms, 1, 86400000),
     .def = "1000", .help = "an input still running after MS milliseconds is killed and "
                           "recorded as a hang"},
    {.name = "--jobs", .metavar = "N", .cmds = CVR, UINT(cov.jobs, 1, 256), .def = "1",
     .help = "run N copies of the target side by side (N fork servers)"},
    {.name = "--exec", .cmds = CVR, FLAG(cov.exec),
     .help = "no fork server: one exec per input (slower; for cross-checks)"},
    {.name = "--allow-late", .cmds = CVR, FLAG(cov.allow_late),
     .help = "count a target (or instrumented library) built with late placement as it is: "
             "only the functions that survived inlining (docs/cov.md, The universe)"},
    {.name = "--deferred", .cmds = CVR, FLAG(cov.deferred),
     .help = "the fork server starts where the target calls ptcall_forkserver_start() (after "
             "its initialisation), not before main"},
    /* cov run --watch (docs/cov.md, Watching a live campaign) */
    {.name = "--watch", .cmds = CVR, FLAG(cov.watch),
     .help = "follow a live campaign: measure each new entry of the --afl instances (new "
             "instances too) and --corpus directories as it appears, keeping OUT.ptcov current, "
             "until SIGINT/SIGTERM, --duration or --until-idle"},
    {.name = "--plateau", .metavar = "TIME", .cmds = CVR, CUSTOM(cov.plateau_ms, parse_watch_time),
     .def = "1h", .help = "--watch: say when no new function (or block) came for TIME (s, min, "
                          "h; e.g. 30min)"},
    {.name = "--cpu", .metavar = "FRACTION", .cmds = CVR, CUSTOM(cov.cpu, parse_fraction),
     .def = "1", .help = "--watch: the runs' share of one core (0.01 to 1), measured from their "
                         "CPU time"},
    {.name = "--nice", .metavar = "N", .cmds = CVR, UINT(cov.nice, 0, 19), .def = "19",
     .help = "--watch: the niceness of the watcher and its runs"},
    {.name = "--duration", .metavar = "TIME", .cmds = CVR,
     CUSTOM(cov.duration_ms, parse_watch_time), .def = "0",
     .help = "--watch: end after TIME (0: no limit)"},
    {.name = "--until-idle", .cmds = CVR, FLAG(cov.until_idle),
     .help = "--watch: end when every AFL++ instance followed has stopped and all its entries "
             "are measured"},
    {.name = "--save-every", .metavar = "TIME", .cmds = CVR,
     CUSTOM(cov.save_ms, parse_watch_time), .def = "5s",
     .help = "--watch: rewrite OUT.ptcov at most this often (and at the end)"},
    {.name = "--poll", .metavar = "TIME", .cmds = CVR, CUSTOM(cov.poll_ms, parse_watch_time),
     .def = "1s", .help = "--watch: list the directories this often without inotify (with it, "
                          "every 5 times this, besides its events)"},
    {.name = "--format", .cmds = CVP, CHOICE(cov.format, cov_formats), .def = "table",
     .help = "table (for people), csv (one row per function), json (everything, versioned: "
             "docs/schema/cov-report.schema.json), html (one page with the curve) or lcov (a "
             "tracefile of lines and functions for genhtml; needs a -fptcall-cov build)"},
    {.name = "--frontier", .cmds = CVP, FLAG(cov.blockers),
     .help = "the frontier: never-reached functions that reached code calls (directly or by "
             "a pointer of their type), by the never-reached code behind each, and with "
             "-fptcall-cov the branches where reached functions stop (docs/cov.md, "
             "Reachability and the frontier; csv: the old per-caller blockers list)"},
    {.name = "--blockers", .cmds = CVP, FLAG(cov.blockers),
     .help = "the same as --frontier (its former name)"},
    {.name = "--top", .metavar = "N", .cmds = CVP, UINT(top, 0, UINT64_MAX), .def = "20",
     .help = "table: rows per list (0 = all)"},
    {.name = "--binary", .metavar = "PATH", .cmds = CVP, STRING(cov.binary),
     .flags = CLI_O_NONEMPTY,
     .help = "check that the coverage file was made with this build of the target (its build "
             "id and map)"},
    {.name = "--format", .cmds = CVD, CHOICE(format, table_formats), .def = "table",
     .help = "table, csv or json (docs/cov.md)"},
    {.name = "--output", .alias = "-o", .metavar = "OUT.ptcov", .cmds = CVM, STRING(output),
     .flags = CLI_O_NONEMPTY, .help = "the merged coverage file to write (required)"},

    /* ptcall help */
    {.name = "--markdown", .cmds = H, FLAG(help_cmd.markdown),
     .help = "every command's options as Markdown (docs/options.md)"},
    {.name = "--readme", .cmds = H, FLAG(help_cmd.readme),
     .help = "the per-command option summary of README.md"},
    {.name = "--check", .cmds = H, FLAG(help_cmd.check),
     .help = "check the option table itself (for the tests)"},
    {.name = "--env", .cmds = H, FLAG(help_cmd.env),
     .help = "the PTCALL_* environment variables as a Markdown table (docs/runtime.md)"},
    {.name = "--man", .metavar = "PAGE", .cmds = H, STRING(help_cmd.man),
     .flags = CLI_O_NONEMPTY,
     .help = "the manual page PAGE in roff (ptcall, ptcall-record, ptcall-db-add, ...; "
             "docs/install.md)"},
    {.name = "--man-pages", .cmds = H, FLAG(help_cmd.man_pages),
     .help = "the names of the manual pages --man writes, one a line"},
    {.name = "--bash-completion", .cmds = H, FLAG(help_cmd.bash_completion),
     .help = "the bash completion script of ptcall (docs/install.md)"},

    /* every command */
    {.name = "--help", .alias = "-h", .cmds = ALL, FLAG(help), .help = "print this help"},

    /* the filters of calls, report, graph, export */
    {.name = "--pid", .metavar = "P", .cmds = FILTERED, UINT(filter.f.pid, 0, UINT32_MAX),
     GIVEN(filter.f.have_pid), .flags = CLI_O_FILTER, .group = &g_filters,
     .help = "only process P"},
    {.name = "--tid", .metavar = "T", .cmds = FILTERED, UINT(filter.f.tid, 0, UINT32_MAX),
     GIVEN(filter.f.have_tid), .flags = CLI_O_FILTER, .group = &g_filters,
     .help = "only thread T"},
    {.name = "--function", .metavar = "GLOB", .cmds = FILTERED,
     LIST(filter.funcs, CLI_FILTER_MAX_GLOBS), .flags = CLI_O_FILTER | CLI_O_NONEMPTY,
     .group = &g_filters,
     .help = "only calls of matching functions and what they call (repeatable; depths then "
             "count from the matching frame)"},
    {.name = "--exclude", .metavar = "GLOB", .cmds = FILTERED,
     LIST(filter.excludes, CLI_FILTER_MAX_GLOBS), .flags = CLI_O_FILTER | CLI_O_NONEMPTY,
     .group = &g_filters,
     .help = "leave out matching functions and what they call (repeatable)"},
    {.name = "--max-depth", .metavar = "D", .cmds = FILTERED,
     UINT(filter.f.max_depth, 1, UINT32_MAX), .flags = CLI_O_FILTER, .group = &g_filters,
     .help = "only calls less than D levels deep (1 = outermost only)"},
    {.name = "--time", .metavar = "START,END", .cmds = FILTERED, CUSTOM(filter, parse_window),
     .flags = CLI_O_FILTER, .group = &g_filters,
     .help = "only calls that start in this window, times since the recording started, with "
             "a unit: ns (default), us, ms, s (e.g. 1.5s,2s)"},
    {.name = "--min-duration", .metavar = "D", .cmds = FILTERED, DURATION(filter.f.min_dur),
     .flags = CLI_O_FILTER, .group = &g_filters,
     .help = "only calls that last at least D (e.g. 10us)"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))
_Static_assert(NOPTS <= CLI_MAX_ROWS, "raise CLI_MAX_ROWS: cli_values.given has a slot per row");

#undef R
#undef P
#undef D
#undef C
#undef G
#undef E
#undef S
#undef I
#undef A
#undef H
#undef DBA
#undef DBL
#undef DBS
#undef DBR
#undef DBQ
#undef CVR
#undef CVP
#undef CVD
#undef CVM
#undef CVA
#undef CVL
#undef CVS
#undef SRV
#undef HTM

/* ---- values ------------------------------------------------------------------------ */

static const struct cli_choice *choices_of(const struct cli_opt *o)
{
    return o->choices_fn ? o->choices_fn() : o->choices;
}

const struct cli_choice *cli_opt_choices(const struct cli_opt *o)
{
    return o->kind == CLI_CHOICE ? choices_of(o) : NULL;
}

const struct cli_opt *cli_rows(size_t *n)
{
    *n = NOPTS;
    return opts;
}

/* ptc_export_formats as choices, made once: the registry (outputs/registry.c) is the one
 * list of formats, and the help lists each with its summary. */
static const struct cli_choice *export_formats(void)
{
    static struct cli_choice list[32];
    if (!list[0].word) {
        size_t n = 0;
        for (const struct ptc_view_format *f = ptc_export_formats; f->name && n + 1 < 32; f++)
            list[n++] = (struct cli_choice){f->name, f->summary};
    }
    return list;
}

/* A whole number: digits only (no sign, no space), no overflow. 0 or -1. */
static int parse_u64(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

/* Bytes: digits with an optional K, M or G (any case, powers of 1024), optionally followed
 * by "B" or "iB" ("4KiB", "4096B"). A value that does not fit 64 bits is refused rather
 * than wrapped. 0 or -1. */
static int parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if ((*end == 'i' || *end == 'I') && end[1] == 'B')
        end += 2;
    else if (*end == 'B' || *end == 'b')
        end++;
    if (*end || v > (UINT64_MAX >> shift))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* A duration: a number with an optional unit ns (default), us, ms or s, in ns. 0 or -1. */
static int parse_duration(const char *s, uint64_t *ns)
{
    if (!s || !*s || *s == '-' || *s == '+')
        return -1;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || !(v >= 0))
        return -1;
    double mul;
    if (!*end || !strcmp(end, "ns"))
        mul = 1;
    else if (!strcmp(end, "us"))
        mul = 1e3;
    else if (!strcmp(end, "ms"))
        mul = 1e6;
    else if (!strcmp(end, "s"))
        mul = 1e9;
    else
        return -1;
    v *= mul;
    if (!(v < 1.8e19))
        return -1;
    *ns = (uint64_t)(v + 0.5);
    return 0;
}

/* "A:B:C" (sep ':') into n numbers, each at most max[i]. 0 or -1. */
static int parse_tuple(const char *s, char sep, int n, const uint64_t *max, uint64_t *out)
{
    for (int i = 0; i < n; i++) {
        const char *e = i + 1 < n ? strchr(s, sep) : s + strlen(s);
        char num[24];
        if (!e || e == s || (size_t)(e - s) >= sizeof(num))
            return -1;
        memcpy(num, s, (size_t)(e - s));
        num[e - s] = 0;
        if (parse_u64(num, &out[i]) || out[i] > max[i])
            return -1;
        s = e + (i + 1 < n);
    }
    return 0;
}

/* --watch's times: a number with ms, s (the default), min or h; stored in ms. */
static int parse_watch_time(const char *val, void *field, char *err, size_t errn)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    double mul = !*end || !strcmp(end, "s") ? 1e3
                 : !strcmp(end, "ms")       ? 1
                 : !strcmp(end, "min") || !strcmp(end, "m") ? 60e3
                 : !strcmp(end, "h")        ? 3600e3
                                            : -1;
    if (errno || end == val || *val == '-' || mul < 0 || !(v >= 0) || v * mul > 1e15) {
        snprintf(err, errn, "takes a time such as 500ms, 30s, 10min or 2h, not '%s'", val);
        return -1;
    }
    *(uint64_t *)field = (uint64_t)(v * mul + 0.5);
    return 0;
}

/* record --overhead PCT: a share of CPU time in percent, "5" or "5%", above 0 (0 % would
 * trace nothing: that is --counts) and at most 100. */
static int parse_overhead(const char *val, void *field, char *err, size_t errn)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (*end == '%')
        end++;
    if (errno || end == val || *end || !(v > 0 && v <= 100)) {
        snprintf(err, errn, "takes a percentage of the program's CPU time above 0 and at most "
                            "100, such as 5 or 2.5%%, not '%s' (to count calls only, use --counts)",
                 val);
        return -1;
    }
    *(double *)field = v;
    return 0;
}

static int parse_fraction(const char *val, void *field, char *err, size_t errn)
{
    char *end;
    errno = 0;
    double v = strtod(val, &end);
    if (errno || end == val || *end || !(v >= 0.01 && v <= 1)) {
        snprintf(err, errn, "takes a share of one core from 0.01 to 1 (0.25: a quarter), not "
                            "'%s'", val);
        return -1;
    }
    *(double *)field = v;
    return 0;
}

static int parse_tsc_ratio(const char *val, void *field, char *err, size_t errn)
{
    static const uint64_t max[2] = {UINT32_MAX, UINT32_MAX};
    uint64_t v[2];
    if (parse_tuple(val, ':', 2, max, v)) {
        snprintf(err, errn, "takes EBX:EAX (as in sysfs intel_pt/tsc_art_ratio), not '%s'", val);
        return -1;
    }
    uint32_t *r = field;
    r[0] = (uint32_t)v[0];
    r[1] = (uint32_t)v[1];
    return 0;
}

/* --budget RATE[,AUX]: sizes as parse_size takes them; RATE may end in "/s". */
static int parse_budget(const char *val, void *field, char *err, size_t errn)
{
    char buf[64];
    struct cli_budget *b = field;
    size_t n = strlen(val);
    const char *comma = strchr(val, ',');
    size_t rn = comma ? (size_t)(comma - val) : n;
    int bad = n >= sizeof(buf) || !rn;
    if (!bad) {
        memcpy(buf, val, rn);
        buf[rn] = 0;
        if (rn > 2 && !strcmp(buf + rn - 2, "/s"))
            buf[rn - 2] = 0;
        bad = parse_size(buf, &b->rate) || !b->rate;
    }
    b->aux = 0;
    if (!bad && comma)
        bad = parse_size(comma + 1, &b->aux) || b->aux < 4096;
    if (bad) {
        snprintf(err, errn,
                 "takes RATE[,AUX]: bytes per second above 0 (K, M, G: 200M) and optionally the "
                 "AUX buffer per stream, at least 4K (200M,4M); not '%s'",
                 val);
        return -1;
    }
    return 0;
}

static int parse_cpu(const char *val, void *field, char *err, size_t errn)
{
    static const uint64_t max[3] = {UINT16_MAX, UINT8_MAX, UINT8_MAX};
    uint64_t v[3];
    if (parse_tuple(val, '/', 3, max, v)) {
        snprintf(err, errn, "takes FAMILY/MODEL/STEPPING (e.g. 6/85/4), not '%s'", val);
        return -1;
    }
    uint32_t *c = field;
    for (int i = 0; i < 3; i++)
        c[i] = (uint32_t)v[i];
    return 0;
}

static int parse_time_conv(const char *val, void *field, char *err, size_t errn)
{
    static const uint64_t max[3] = {63, UINT32_MAX, UINT64_MAX}; /* SHIFT is a shift count */
    uint64_t v[3];
    if (parse_tuple(val, ':', 3, max, v)) {
        snprintf(err, errn, "takes SHIFT:MULT:ZERO (perf's time conversion, SHIFT 0..63), not "
                            "'%s'", val);
        return -1;
    }
    struct cli_time_conv *t = field;
    t->shift = (uint32_t)v[0];
    t->mult = (uint32_t)v[1];
    t->zero = v[2];
    return 0;
}

static int check_cpu_stream(const char *val, void *field, char *err, size_t errn)
{
    (void)field;
    const char *colon = strchr(val, ':');
    char num[24];
    uint64_t cpu;
    if (!colon || colon == val || !colon[1] || (size_t)(colon - val) >= sizeof(num)) {
        snprintf(err, errn, "takes N:FILE, not '%s'", val);
        return -1;
    }
    memcpy(num, val, (size_t)(colon - val));
    num[colon - val] = 0;
    /* a CPU number below the stream-per-thread marker (PTC_PT_CPU_THREAD), which a
     * trace could not tell from it */
    if (parse_u64(num, &cpu) || cpu >= 65536) {
        snprintf(err, errn, "takes N:FILE with N a CPU number (0..65535), not '%s'", val);
        return -1;
    }
    return 0;
}

/* record --only/--skip: the runtime gets the globs one per line (PTCALL_ONLY/SKIP) */
static int check_one_line(const char *val, void *field, char *err, size_t errn)
{
    (void)field;
    if (!strchr(val, '\n'))
        return 0;
    snprintf(err, errn, "cannot hold a newline (no function name has one)");
    return -1;
}

static int check_binary(const char *val, void *field, char *err, size_t errn)
{
    (void)field;
    const char *at = strrchr(val, '@');
    if (at) {
        char *end;
        errno = 0;
        strtoull(at + 1, &end, 16);
        if (errno || *end || end == at + 1) {
            snprintf(err, errn, "%s: the load address must be hex", val);
            return -1;
        }
    }
    if (!*val || at == val) {
        snprintf(err, errn, "needs a PATH, not '%s'", val);
        return -1;
    }
    if (strlen(val) >= PATH_MAX) {
        snprintf(err, errn, "takes a path shorter than %d bytes", PATH_MAX);
        return -1;
    }
    return 0;
}

/* --stat LIST: adds each statistic once, in the order first given. */
/* A comma-separated list of words of names (NULL-terminated) into v[0..*n), each once, in
 * the order first given. 0, or -1 when a word is unknown or the list is malformed. */
static int parse_words(const char *val, const char *const *names, int *v, int *n)
{
    const char *p = val;
    while (*p) {
        size_t len = strcspn(p, ",");
        int k;
        for (k = 0; names[k]; k++)
            if (strlen(names[k]) == len && !strncmp(p, names[k], len))
                break;
        if (!names[k])
            break;
        int seen = 0;
        for (int j = 0; j < *n; j++)
            seen |= v[j] == k;
        if (!seen)
            v[(*n)++] = k;
        p += len;
        if (*p == ',' && *++p == 0)
            break;
    }
    return *p || !*val || val[strlen(val) - 1] == ',' ? -1 : 0;
}

static int parse_stats(const char *val, void *field, char *err, size_t errn)
{
    struct cli_stats *st = field;
    if (parse_words(val, runs_stat_names, st->v, &st->n)) {
        snprintf(err, errn, "takes mean, min, max or stddev (comma-separated or repeated), not "
                            "'%s'", val);
        return -1;
    }
    return 0;
}

static int parse_timings(const char *val, void *field, char *err, size_t errn)
{
    static const char *const names[] = {"none", "tsc", "mtc", "cyc", NULL};
    struct cli_timings *t = field;
    if (parse_words(val, names, t->v, &t->n)) {
        snprintf(err, errn, "takes none, tsc, mtc or cyc (comma-separated or repeated), not "
                            "'%s'", val);
        return -1;
    }
    return 0;
}

/* --time START,END into the filter's window. */
static int parse_window(const char *val, void *field, char *err, size_t errn)
{
    struct cli_filter *cf = field;
    char a[64], b[64];
    const char *comma = strchr(val, ',');
    if (!comma || (size_t)(comma - val) >= sizeof(a) || strlen(comma + 1) >= sizeof(b)) {
        snprintf(err, errn, "needs START,END (e.g. 1s,2.5s), not '%s'", val);
        return -1;
    }
    memcpy(a, val, (size_t)(comma - val));
    a[comma - val] = 0;
    strcpy(b, comma + 1);
    uint64_t s, e;
    if (parse_duration(a, &s) || parse_duration(b, &e) || e < s) {
        snprintf(err, errn, "needs START,END with START <= END (e.g. 1s,2.5s), not '%s'", val);
        return -1;
    }
    cf->f.win_start = s;
    cf->f.win_end = e;
    cf->f.have_window = 1;
    cf->window_text = val;
    return 0;
}

/* "4K", "256M": the largest unit that divides v exactly. */
static void fmt_size(char *buf, size_t n, uint64_t v)
{
    static const char units[] = "KMG";
    int u = -1;
    while (u < 2 && v && !(v & 1023)) {
        v >>= 10;
        u++;
    }
    if (u < 0)
        snprintf(buf, n, "%llu", (unsigned long long)v);
    else
        snprintf(buf, n, "%llu%c", (unsigned long long)v, units[u]);
}

static uint64_t width_max(unsigned width)
{
    return width >= 8 ? UINT64_MAX : (UINT64_C(1) << (8 * width)) - 1;
}

/* The range of a UINT or SIZE row as words ("from 4K to 256M", "at least 1"), or "" when
 * only the field's width bounds it. Maxima of 2^31 and more only guard the field and are
 * not worth a reader's attention. */
static void range_text(const struct cli_opt *o, char *buf, size_t n, int terse)
{
    char lo[32], hi[32];
    int shown_max = o->max < (uint64_t)INT_MAX;
    if (o->kind == CLI_SIZE) {
        fmt_size(lo, sizeof(lo), o->min);
        fmt_size(hi, sizeof(hi), o->max);
    } else {
        snprintf(lo, sizeof(lo), "%llu", (unsigned long long)o->min);
        snprintf(hi, sizeof(hi), "%llu", (unsigned long long)o->max);
    }
    if (shown_max)
        snprintf(buf, n, "from %s to %s", lo, hi);
    else if (o->min)
        snprintf(buf, n, terse ? ">= %s" : "at least %s", lo);
    else
        buf[0] = 0;
}

/* "calls, self or total" */
static void choice_words(const struct cli_opt *o, char *buf, size_t n, const char *sep,
                         const char *last)
{
    const struct cli_choice *c = choices_of(o);
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; c[i].word; i++) {
        const char *s = !i ? "" : c[i + 1].word ? sep : last;
        k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", s, c[i].word);
    }
}

static void *field_of(struct cli_values *v, const struct cli_opt *o)
{
    return (char *)v + o->off;
}

/* Stores val for row o; 0, or -1 with the whole message (naming the option as the user
 * wrote it, as) in err. */
static int store(struct cli_values *v, const struct cli_opt *o, const char *as, const char *val,
                 char *err, size_t errn)
{
    void *f = field_of(v, o);
    char range[80], words[200], sub[400];
    uint64_t u;
    switch (o->kind) {
    case CLI_FLAG:
        *(int *)f = 1;
        return 0;
    case CLI_UINT:
        if (parse_u64(val, &u) || u < o->min || u > o->max) {
            range_text(o, range, sizeof(range), 1);
            snprintf(err, errn, "%s needs a number%s%s, not '%s'", as, range[0] ? " " : "", range,
                     val);
            return -1;
        }
        switch (o->width) {
        case 1: *(uint8_t *)f = (uint8_t)u; break;
        case 2: *(uint16_t *)f = (uint16_t)u; break;
        case 4: *(uint32_t *)f = (uint32_t)u; break;
        default: *(uint64_t *)f = u; break;
        }
        return 0;
    case CLI_SIZE:
        if (parse_size(val, &u) || u < o->min || u > o->max) {
            range_text(o, range, sizeof(range), 1);
            snprintf(err, errn, "%s needs a size%s%s (a number with an optional K, M or G), "
                                "not '%s'", as, range[0] ? " " : "", range, val);
            return -1;
        }
        *(uint64_t *)f = u;
        return 0;
    case CLI_PERCENT: {
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (!*val || errno || *end || !(d >= 0 && d <= 100)) {
            snprintf(err, errn, "%s needs a percentage from 0 to 100, not '%s'", as, val);
            return -1;
        }
        *(double *)f = d;
        return 0;
    }
    case CLI_CHOICE: {
        const struct cli_choice *c = choices_of(o);
        for (int i = 0; c[i].word; i++)
            if (!strcmp(val, c[i].word)) {
                *(int *)f = i;
                return 0;
            }
        choice_words(o, words, sizeof(words), ", ", " or ");
        snprintf(err, errn, "%s takes %s, not '%s'", as, words, val);
        return -1;
    }
    case CLI_STRING:
        if ((o->flags & CLI_O_NONEMPTY) && !*val) {
            snprintf(err, errn, "%s needs a non-empty %s", as, o->metavar);
            return -1;
        }
        *(const char **)f = val;
        return 0;
    case CLI_LIST: {
        struct cli_list *l = f;
        if ((o->flags & CLI_O_NONEMPTY) && !*val) {
            snprintf(err, errn, "%s needs a non-empty %s", as, o->metavar);
            return -1;
        }
        if (o->parse && o->parse(val, f, sub, sizeof(sub))) {
            snprintf(err, errn, "%s %s", as, sub);
            return -1;
        }
        if (o->max && (uint64_t)l->n >= o->max) {
            snprintf(err, errn, "%s can be given at most %llu times", as,
                     (unsigned long long)o->max);
            return -1;
        }
        /* l->v has room for every argument (cli_parse() sized it by argc) */
        l->v[l->n++] = val;
        return 0;
    }
    case CLI_DURATION:
        if (parse_duration(val, (uint64_t *)f)) {
            snprintf(err, errn, "%s needs a duration such as 10us or 2ms, not '%s'", as, val);
            return -1;
        }
        return 0;
    case CLI_CUSTOM:
        if (o->parse(val, f, sub, sizeof(sub))) {
            snprintf(err, errn, "%s %s", as, sub);
            return -1;
        }
        return 0;
    }
    return -1;
}

static int in_cmd(const struct cli_opt *o, enum cli_cmd cmd)
{
    return (o->cmds & CLI_CM(cmd)) != 0;
}

int cli_opt_in_cmd(const struct cli_opt *o, enum cli_cmd cmd)
{
    return in_cmd(o, cmd);
}

/* The row of cmd named name (n bytes, as "--top" or an alias "-o"), or NULL. */
static const struct cli_opt *find(enum cli_cmd cmd, const char *name, size_t n)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const struct cli_opt *o = &opts[i];
        if (!in_cmd(o, cmd))
            continue;
        if ((strlen(o->name) == n && !strncmp(o->name, name, n)) ||
            (o->alias && strlen(o->alias) == n && !strncmp(o->alias, name, n)))
            return o;
    }
    return NULL;
}

void cli_values_free(struct cli_values *v)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].kind == CLI_LIST && in_cmd(&opts[i], v->cmd)) {
            struct cli_list *l = field_of(v, &opts[i]);
            free(l->v);
            l->v = NULL;
            l->n = 0;
        }
    free(v->pos);
    v->pos = NULL;
}

/* Fills in the defaults of cmd's rows. 0, or -1 with the message in err (a row whose
 * default does not parse: a bug in the table, which cli_check_table() catches). */
static int set_defaults(enum cli_cmd cmd, struct cli_values *v, char *err, size_t errn)
{
    for (size_t i = 0; i < NOPTS; i++) {
        const struct cli_opt *o = &opts[i];
        if (!in_cmd(o, cmd))
            continue;
        if (o->kind == CLI_CHOICE)
            *(int *)field_of(v, o) = -1;
        if (o->def && o->kind != CLI_LIST && store(v, o, o->name, o->def, err, errn))
            return -1;
    }
    return 0;
}

/* Lists hold at most one value per argument: one allocation each, sized by argc. */
static int alloc_lists(enum cli_cmd cmd, struct cli_values *v, int argc)
{
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].kind == CLI_LIST && in_cmd(&opts[i], cmd)) {
            struct cli_list *l = field_of(v, &opts[i]);
            if (!l->v && !(l->v = calloc((size_t)argc + 1, sizeof(*l->v))))
                return -1;
        }
    v->pos = calloc((size_t)argc + 1, sizeof(*v->pos));
    return v->pos ? 0 : -1;
}

/* The commands (other than cmd) that have an option named name, for the hint after
 * "unknown option". */
static void owners(enum cli_cmd cmd, const char *name, size_t n, char *buf, size_t bn)
{
    unsigned mask = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if ((strlen(opts[i].name) == n && !strncmp(opts[i].name, name, n)) ||
            (opts[i].alias && strlen(opts[i].alias) == n && !strncmp(opts[i].alias, name, n)))
            mask |= opts[i].cmds;
    mask &= ~CLI_CM(cmd);
    size_t k = 0;
    buf[0] = 0;
    for (int c = 0; c < CMD_COUNT; c++)
        if (mask & CLI_CM(c))
            k += (size_t)snprintf(buf + k, k < bn ? bn - k : 0, "%s%s", k ? ", " : "",
                                  cli_commands[c].name);
}

int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct cli_values *v, unsigned flags)
{
    memset(v, 0, sizeof(*v));
    v->cmd = cmd;
    const char *name = cli_commands[cmd].name;
    char err[1200];
    if (alloc_lists(cmd, v, argc)) {
        cli_values_free(v);
        fprintf(stderr, "ptcall %s: out of memory: %s\n", name, cli_advice(PTC_E_NOMEM));
        return 1;
    }
    if (set_defaults(cmd, v, err, sizeof(err))) {
        cli_values_free(v);
        fprintf(stderr, "ptcall %s: %s: the option table's default is wrong; report this as a "
                        "ptcall bug\n", name, err);
        return 1;
    }
    int i, options_end = 0;
    for (i = 1; i < argc; i++) {
        char *a = argv[i];
        if (options_end || a[0] != '-' || !a[1]) {
            if (flags & CLI_STOP_AT_POSITIONAL)
                break;
            v->pos[v->npos++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            options_end = 1;
            if (flags & CLI_STOP_AT_POSITIONAL) {
                i++;
                break;
            }
            continue;
        }
        const char *eq = strchr(a, '=');
        size_t n = eq ? (size_t)(eq - a) : strlen(a);
        const struct cli_opt *o = find(cmd, a, n);
        if (!o) {
            char who[200];
            owners(cmd, a, n, who, sizeof(who));
            cli_values_free(v);
            if (who[0])
                return cli_usage_error(cmd, "unknown option '%s' (an option of %s)", a, who);
            return cli_usage_error(cmd, "unknown option '%s'", a);
        }
        char as[64];
        snprintf(as, sizeof(as), "%.*s", (int)(n < 60 ? n : 60), a);
        const char *val = NULL;
        if (o->kind == CLI_FLAG) {
            if (eq) {
                cli_values_free(v);
                return cli_usage_error(cmd, "%s takes no value", as);
            }
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc) {
            val = argv[++i];
        } else {
            cli_values_free(v);
            return cli_usage_error(cmd, "%s needs a value (%s)", as,
                                   o->metavar ? o->metavar : "a word");
        }
        if (o->off == offsetof(struct cli_values, help)) {
            cli_values_free(v);
            cli_print_help(cmd, stdout);
            return cli_flush_output(name, "the help");
        }
        if (store(v, o, as, val, err, sizeof(err))) {
            cli_values_free(v);
            return cli_usage_error(cmd, "%s", err);
        }
        if (o->given_off)
            *(int *)((char *)v + o->given_off - 1) = 1;
        v->given[o - opts] = i;
    }
    v->rest = argv + i;
    /* the filters' globs live in lists; the output driver reads them from the filter */
    v->filter.f.funcs = v->filter.funcs.v;
    v->filter.f.nfuncs = v->filter.funcs.n;
    v->filter.f.excludes = v->filter.excludes.v;
    v->filter.f.nexcludes = v->filter.excludes.n;
    return CLI_GO;
}

int cli_given(const struct cli_values *v, const char *name)
{
    int last = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if (in_cmd(&opts[i], v->cmd) &&
            (!strcmp(opts[i].name, name) || (opts[i].alias && !strcmp(opts[i].alias, name))) &&
            v->given[i] > last)
            last = v->given[i];
    return last;
}

int cli_given_filter(const struct cli_values *v)
{
    int last = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if (in_cmd(&opts[i], v->cmd) && (opts[i].flags & CLI_O_FILTER) && v->given[i] > last)
            last = v->given[i];
    return last;
}

int cli_usage_error(enum cli_cmd cmd, const char *fmt, ...)
{
    const char *name = cli_commands[cmd].name;
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "ptcall %s: ", name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": see 'ptcall %s --help'\n", name);
    cli_print_synopsis(cmd, stderr);
    return 2;
}

/* ---- help -------------------------------------------------------------------------- */

#define WIDTH 80
#define HELP_COL 26 /* where an option's help starts */

/* Writes text from column col (where the cursor is), wrapping before WIDTH; continuation
 * lines (and lines after a '\n' in text) start at column indent. Returns the column. */
static int wrap(FILE *f, int col, int indent, const char *t)
{
    int fresh = 1; /* no word on this line yet: no space before the next */
    while (*t) {
        if (*t == ' ') {
            t++;
            continue;
        }
        if (*t == '\n') {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            fresh = 1;
            t++;
            continue;
        }
        int n = (int)strcspn(t, " \n");
        if (!fresh && col + 1 + n > WIDTH) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
            fresh = 1;
        }
        if (!fresh) {
            fputc(' ', f);
            col++;
        }
        fwrite(t, 1, (size_t)n, f);
        col += n;
        t += n;
        fresh = 0;
    }
    return col;
}

/* "-o, --output FILE", "--sort calls|self|total", "--heat" */
void cli_opt_label(const struct cli_opt *o, char *buf, size_t n)
{
    char words[200] = "";
    const char *mv = o->metavar;
    if (!mv && o->kind == CLI_CHOICE) {
        choice_words(o, words, sizeof(words), "|", "|");
        mv = words;
    }
    snprintf(buf, n, "%s%s%s%s%s", o->alias ? o->alias : "", o->alias ? ", " : "", o->name,
             mv ? " " : "", mv ? mv : "");
}

/* The row's help with what the table knows besides: the default, the range, how often a
 * list may be given. */
void cli_opt_help(const struct cli_opt *o, char *buf, size_t n)
{
    char range[80] = "", extra[200] = "";
    if (o->kind == CLI_UINT || o->kind == CLI_SIZE)
        range_text(o, range, sizeof(range), 0);
    if (o->kind == CLI_LIST && o->max)
        snprintf(range, sizeof(range), "at most %llu", (unsigned long long)o->max);
    if (o->def && range[0])
        snprintf(extra, sizeof(extra), " (default %s; %s)", o->def, range);
    else if (o->def)
        snprintf(extra, sizeof(extra), " (default %s)", o->def);
    else if (range[0])
        snprintf(extra, sizeof(extra), " (%s)", range);
    size_t h = strlen(o->help);
    /* "how to record:" announces the choices listed below it: the extra goes before ':';
     * a help ending in a remark in parentheses takes the extra into them */
    if (h && o->help[h - 1] == ':' && extra[0])
        snprintf(buf, n, "%.*s%s:", (int)(h - 1), o->help, extra);
    else if (h && o->help[h - 1] == ')' && extra[0])
        snprintf(buf, n, "%.*s; %.*s", (int)(h - 1), o->help, (int)strlen(extra) - 2, extra + 2);
    else
        snprintf(buf, n, "%s%s", o->help, extra);
}

static int has_word_help(const struct cli_opt *o)
{
    if (o->kind != CLI_CHOICE)
        return 0;
    const struct cli_choice *c = choices_of(o);
    for (int i = 0; c[i].word; i++)
        if (c[i].help)
            return 1;
    return 0;
}

static void print_row(FILE *f, const struct cli_opt *o)
{
    char lab[200], text[1200];
    cli_opt_label(o, lab, sizeof(lab));
    cli_opt_help(o, text, sizeof(text));
    int col = fprintf(f, "  %s", lab);
    if (col > HELP_COL - 2) {
        fprintf(f, "\n%*s", HELP_COL, "");
    } else {
        fprintf(f, "%*s", HELP_COL - col, "");
    }
    wrap(f, HELP_COL, HELP_COL, text);
    fputc('\n', f);
    if (!has_word_help(o))
        return;
    const struct cli_choice *c = choices_of(o);
    int w = 0;
    for (int i = 0; c[i].word; i++)
        if ((int)strlen(c[i].word) > w)
            w = (int)strlen(c[i].word);
    for (int i = 0; c[i].word; i++) {
        fprintf(f, "%*s%-*s  ", HELP_COL + 2, "", w, c[i].word);
        wrap(f, HELP_COL + 4 + w, HELP_COL + 4 + w, c[i].help ? c[i].help : "");
        fputc('\n', f);
    }
}

/* The summaries are fragments for `ptcall --help`'s list; alone they start a sentence. */
static int upper(char ch)
{
    return ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch;
}

void cli_print_synopsis(enum cli_cmd cmd, FILE *out)
{
    const char *s = cli_commands[cmd].synopsis;
    for (int first = 1; *s; first = 0) {
        size_t n = strcspn(s, "\n");
        fprintf(out, "%s ptcall %s %.*s\n", first ? "usage:" : "      ", cli_commands[cmd].name,
                (int)n, s);
        s += n + (s[n] == '\n');
    }
}

/* The distinct groups of cmd's rows, in the order they first appear (NULL first). */
int cli_groups_of(enum cli_cmd cmd, const struct cli_group **g, int max)
{
    int n = 0;
    g[n++] = NULL;
    for (size_t i = 0; i < NOPTS; i++) {
        if (!in_cmd(&opts[i], cmd) || !opts[i].group)
            continue;
        int seen = 0;
        for (int k = 0; k < n; k++)
            seen |= g[k] == opts[i].group;
        if (!seen && n < max)
            g[n++] = opts[i].group;
    }
    return n;
}

void cli_print_help(enum cli_cmd cmd, FILE *out)
{
    const struct cli_command *c = &cli_commands[cmd];
    cli_print_synopsis(cmd, out);
    fprintf(out, "\n%c%s.\n", upper(c->summary[0]), c->summary + 1);
    const struct cli_group *g[16];
    int ng = cli_groups_of(cmd, g, 16);
    for (int k = 0; k < ng; k++) {
        if (g[k]) {
            fputc('\n', out);
            wrap(out, 0, 0, g[k]->title);
            fprintf(out, ":\n");
        } else {
            fprintf(out, "\nOptions:\n");
        }
        for (size_t i = 0; i < NOPTS; i++)
            if (in_cmd(&opts[i], cmd) && opts[i].group == g[k])
                print_row(out, &opts[i]);
        if (g[k] && g[k]->note) {
            wrap(out, 0, 0, g[k]->note);
            fputc('\n', out);
        }
    }
    if (c->notes) {
        fputc('\n', out);
        wrap(out, 0, 0, c->notes);
        fputc('\n', out);
    }
}

/* ---- Markdown ---------------------------------------------------------------------- */

/* Text for Markdown: '*' and '_' would start emphasis, '|' would end a table cell, '<' an
 * HTML tag. */
static void md_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '*' || *s == '|' || *s == '<' || *s == '>' || *s == '\\' ||
            (*s == '_' && (s[1] == ' ' || s[1] == 0)))
            fputc('\\', f);
        fputc(*s == '\n' ? ' ' : *s, f);
    }
}

/* A code span inside a table cell: '|' still ends the cell unless escaped. */
static void md_code_cell(FILE *f, const char *s)
{
    fputc('`', f);
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
    fputc('`', f);
}

static void md_row(FILE *f, const struct cli_opt *o)
{
    char text[1200];
    cli_opt_help(o, text, sizeof(text));
    fputs("| ", f);
    char lab[200];
    if (o->alias) {
        snprintf(lab, sizeof(lab), "%s", o->alias);
        md_code_cell(f, lab);
        fputs(", ", f);
    }
    struct cli_opt plain = *o;
    plain.alias = NULL;
    cli_opt_label(&plain, lab, sizeof(lab));
    md_code_cell(f, lab);
    fputs(" | ", f);
    md_text(f, text);
    if (has_word_help(o)) {
        const struct cli_choice *c = choices_of(o);
        for (int i = 0; c[i].word; i++) {
            fprintf(f, "%s`%s`: ", i ? "; " : " ", c[i].word);
            md_text(f, c[i].help ? c[i].help : "");
        }
    }
    fputs(" |\n", f);
}

static void md_table(FILE *f, enum cli_cmd cmd, const struct cli_group *g)
{
    fprintf(f, "| option | meaning |\n|---|---|\n");
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].group == g && (cmd == CMD_COUNT ? (opts[i].flags & CLI_O_FILTER) != 0
                                                     : in_cmd(&opts[i], cmd) &&
                                                           !(opts[i].flags & CLI_O_FILTER) &&
                                                           opts[i].off != F(help)))
            md_row(f, &opts[i]);
}

static void md_synopsis(FILE *f, enum cli_cmd cmd)
{
    fprintf(f, "```\n");
    cli_print_synopsis(cmd, f);
    fprintf(f, "```\n");
}

static unsigned filter_cmds(void)
{
    unsigned m = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].flags & CLI_O_FILTER)
            m |= opts[i].cmds;
    return m;
}

static void md_cmd_list(FILE *f, unsigned mask)
{
    int k = 0, n = 0;
    for (int c = 0; c < CMD_COUNT; c++)
        n += (mask & CLI_CM(c)) != 0;
    for (int c = 0; c < CMD_COUNT; c++)
        if (mask & CLI_CM(c)) {
            k++;
            fprintf(f, "%s`%s`", k == 1 ? "" : k == n ? " and " : ", ", cli_commands[c].name);
        }
}

void cli_print_markdown(FILE *f)
{
    fprintf(f, "# ptcall options\n\n"
               "<!-- Generated by `ptcall help --markdown` from the option table in "
               "tools/options.c: do not edit. `ctest -R decoder-options-doc` fails when it is "
               "out of date; `python3 test/decoder/options_doc.py --update --ptcall "
               "build/tools/ptcall --src .` rewrites it and the README's summary. -->\n\n"
               "Every command of `ptcall` and its options, from the one table that also parses "
               "them and prints `ptcall COMMAND --help`.\n\n"
               "- `--name VALUE` and `--name=VALUE` are the same; `--` ends the options. "
               "Every command takes `-h`, `--help`.\n"
               "- N is a whole number; SIZE a number of bytes with an optional suffix K, M or "
               "G (powers of 1024); P a percentage from 0 to 100 (decimals allowed); a "
               "duration a number with a unit `ns` (default), `us`, `ms` or `s`.\n"
               "- An unknown option, a missing or bad value is a usage error: one line "
               "`ptcall CMD: what is wrong: see 'ptcall CMD --help'`, then the synopsis, and "
               "exit status 2.\n\n");
    fprintf(f, "Commands:");
    for (int c = 0; c < CMD_COUNT; c++) {
        /* the heading's anchor: "db add" -> ptcall-db-add */
        char anchor[64];
        snprintf(anchor, sizeof(anchor), "%s", cli_commands[c].name);
        for (char *p = anchor; *p; p++)
            if (*p == ' ')
                *p = '-';
        fprintf(f, "%s [%s](#ptcall-%s)", c ? "," : "", cli_commands[c].name, anchor);
    }
    fprintf(f, "; [filters](#filters).\n");
    for (int c = 0; c < CMD_COUNT; c++) {
        const struct cli_command *cc = &cli_commands[c];
        fprintf(f, "\n## ptcall %s\n\n%c", cc->name, upper(cc->summary[0]));
        md_text(f, cc->summary + 1);
        fprintf(f, ".\n\n");
        md_synopsis(f, (enum cli_cmd)c);
        const struct cli_group *g[16];
        int ng = cli_groups_of((enum cli_cmd)c, g, 16);
        for (int k = 0; k < ng; k++) {
            if (g[k] == &g_filters)
                continue;
            int any = 0;
            for (size_t i = 0; i < NOPTS; i++)
                any |= in_cmd(&opts[i], (enum cli_cmd)c) && opts[i].group == g[k] &&
                       opts[i].off != F(help);
            if (!any)
                continue;
            if (g[k]) {
                fprintf(f, "\n");
                md_text(f, g[k]->title);
                fprintf(f, ":\n");
            }
            fprintf(f, "\n");
            md_table(f, (enum cli_cmd)c, g[k]);
        }
        if (filter_cmds() & CLI_CM(c))
            fprintf(f, "\nand the [filters](#filters).\n");
        if (cc->notes) {
            fprintf(f, "\n");
            for (const char *s = cc->notes; *s;) {
                size_t n = strcspn(s, "\n");
                char para[1200];
                snprintf(para, sizeof(para), "%.*s", (int)n, s);
                md_text(f, para);
                fprintf(f, "\n");
                s += n + (s[n] == '\n');
                if (*s)
                    fprintf(f, "\n");
            }
        }
    }
    fprintf(f, "\n## Filters\n\nThe filters of ");
    md_cmd_list(f, filter_cmds());
    fprintf(f, ":\n\n");
    md_table(f, CMD_COUNT, &g_filters);
    fprintf(f, "\n");
    md_text(f, g_filters.note);
    fprintf(f, "\n");
}

void cli_print_readme(FILE *f)
{
    fprintf(f, "### Options\n\n"
               "Every command's options (generated from the one option table by `ptcall help "
               "--readme`); [docs/options.md](docs/options.md) says what each does, with "
               "defaults and ranges, and `ptcall COMMAND --help` prints the same.\n\n");
    for (int c = 0; c < CMD_COUNT; c++) {
        const struct cli_command *cc = &cli_commands[c];
        size_t n = strcspn(cc->synopsis, "\n");
        fprintf(f, "- `ptcall %s %.*s`:", cc->name, (int)n, cc->synopsis);
        int any = 0;
        for (size_t i = 0; i < NOPTS; i++) {
            const struct cli_opt *o = &opts[i];
            if (!in_cmd(o, (enum cli_cmd)c) || (o->flags & CLI_O_FILTER) || o->off == F(help))
                continue;
            char lab[200];
            cli_opt_label(o, lab, sizeof(lab));
            fprintf(f, "%s `%s`", any ? "," : "", lab);
            any = 1;
        }
        if (filter_cmds() & CLI_CM(c))
            fprintf(f, "%s filters", any ? "," : "");
        fprintf(f, "\n");
    }
    fprintf(f, "- filters (");
    md_cmd_list(f, filter_cmds());
    fprintf(f, "):");
    int any = 0;
    for (size_t i = 0; i < NOPTS; i++)
        if (opts[i].flags & CLI_O_FILTER) {
            char lab[200];
            cli_opt_label(&opts[i], lab, sizeof(lab));
            fprintf(f, "%s `%s`", any ? "," : "", lab);
            any = 1;
        }
    fprintf(f, "\n");
}

/* ---- the table's own checks -------------------------------------------------------- */

static int same_name(const char *a, const char *b)
{
    return a && b && !strcmp(a, b);
}

int cli_check_table(FILE *err)
{
    int bad = 0;
#define BAD(...)                                 \
    do {                                         \
        fprintf(err, "option table: " __VA_ARGS__); \
        fputc('\n', err);                        \
        bad = 1;                                 \
    } while (0)
    for (size_t i = 0; i < NOPTS; i++) {
        const struct cli_opt *o = &opts[i];
        if (!o->name || strncmp(o->name, "--", 2) || !o->name[2])
            BAD("row %zu: a name must start with --", i);
        if (o->alias && (o->alias[0] != '-' || !o->alias[1]))
            BAD("%s: an alias must start with -", o->name);
        if (!o->cmds || (o->cmds & ~ALL))
            BAD("%s: no command, or a command that does not exist", o->name);
        if (!o->help || !o->help[0])
            BAD("%s: no help", o->name);
        if (o->kind == CLI_UINT &&
            (!(o->width == 1 || o->width == 2 || o->width == 4 || o->width == 8) ||
             o->max > width_max(o->width) || o->min > o->max))
            BAD("%s: the range does not fit the field", o->name);
        if (o->kind == CLI_SIZE && o->min > o->max)
            BAD("%s: the range is empty", o->name);
        if (o->kind == CLI_CHOICE && (!choices_of(o) || !choices_of(o)[0].word))
            BAD("%s: a choice without words", o->name);
        if (o->kind == CLI_CUSTOM && !o->parse)
            BAD("%s: a custom option without a parse function", o->name);
        if (o->kind != CLI_FLAG && o->kind != CLI_CHOICE && !o->metavar)
            BAD("%s: a value without a metavar", o->name);
        for (size_t j = 0; j < i; j++) {
            const struct cli_opt *p = &opts[j];
            if (!(o->cmds & p->cmds))
                continue;
            if (same_name(o->name, p->name) || same_name(o->alias, p->alias) ||
                same_name(o->name, p->alias) || same_name(o->alias, p->name))
                BAD("%s: two rows of one command have this name", o->name);
            if (o->off == p->off && o->kind != CLI_FLAG)
                BAD("%s and %s: two rows of one command share a field", o->name, p->name);
        }
        /* the default must parse, for every command of the row */
        for (int c = 0; c < CMD_COUNT; c++) {
            if (!in_cmd(o, (enum cli_cmd)c) || !o->def)
                continue;
            struct cli_values *v = calloc(1, sizeof(*v));
            char msg[1200];
            if (!v)
                return 1;
            if (o->kind == CLI_LIST || store(v, o, o->name, o->def, msg, sizeof(msg)))
                BAD("%s: the default '%s' does not parse", o->name, o->def);
            free(v);
        }
    }
    for (int c = 0; c < CMD_COUNT; c++)
        if (!cli_commands[c].name || !cli_commands[c].synopsis || !cli_commands[c].summary)
            BAD("command %d: no name, synopsis or summary", c);
#undef BAD
    return bad;
}
