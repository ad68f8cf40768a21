/* The coverage component (`ptcall cov`, docs/cov.md): which functions each input of a
 * fuzzing corpus reached. Floors, bottom up (test/lint/layers.py checks them):
 *
 *   0  cov_data.c     the in-memory coverage data set (modules, functions, inputs);
 *                     cov_graph.c: its call graph for reachability (map v8 data)
 *   1  cov_map.c      an instrumented ELF file's function table and build id (ptcall_map);
 *                     cov_corpus.c: plain corpus directories; cov_file.c: the .ptcov file;
 *                     cov_counts.c: the counters memfd the runtime fills
 *                     (PTCALL_COUNTS_FD); cov_uplot.c (generated): uPlot for the HTML view
 *   2  cov_afl.c      AFL++ output directories; cov_fsrv.c: running the target (the fork
 *                     server client, exec per input)
 *   3  cov_blocks.c   blocks and lines per input, file and function (map v7 data);
 *                     cov_watch_dirs.c: --watch's entries and directories
 *   4  cov_reach.c    reachability from the harness entry and the frontier (map v8 data)
 *   5  cov_analysis.c union, first reachers, the curve, blockers, diff;
 *                     cov_watch_file.c: --watch's .ptcov and record 11
 *   6  cov_view_blocks.c the blocks-and-lines parts of the table and JSON views;
 *                     cov_view_source.c: the HTML view's source lines;
 *                     cov_view_reach.c: the reachability parts of the views;
 *                     cov_watch.c: `cov run --watch`, following a live campaign
 *   7  views, one file each: cov_view_table.c, cov_view_csv.c, cov_view_json.c,
 *                     cov_view_html.c, cov_view_diff.c,
 *                     cov_view_lcov.c
 *
 * Functions return 0 or a negative error and fill a caller's `why` buffer with what went
 * wrong; nothing here prints but the views (and warnings to the FILE a caller hands in). */
#ifndef PTC_COV_H
#define PTC_COV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

/* ---- the data set (cov_data.c) ------------------------------------------------------ */

enum cov_kind { COV_KIND_QUEUE = 0, COV_KIND_CRASH = 1, COV_KIND_HANG = 2 };
/* How a run of one input ended. */
enum cov_outcome {
    COV_EXITED = 0,    /* value: exit status */
    COV_SIGNALED = 1,  /* value: the signal (a crash) */
    COV_TIMEOUT = 2,   /* killed at --timeout: a hang */
    COV_ERROR = 3      /* could not be run (value: errno); no counts */
};

struct cov_func {
    char *name, *linkage, *file;
    uint32_t line;
    uint32_t module;      /* index into cov_data.modules */
    uint32_t insns;       /* map v6 (blockers): instructions, basic blocks; 0 = unknown */
    uint32_t blocks;
    uint32_t ncallees;    /* map v6: direct callees, as global function indices */
    uint32_t *callees;
};

/* ---- blocks and lines (map version 7, `ptcall-cc -fptcall-cov`; docs/cov.md, *Blocks and
 * lines*). A block is a basic block of an instrumented function after its critical edges were
 * split (so a block reached implies the edge into it taken); its lines are the source lines
 * (file, line) of its instructions' debug locations. Global block indices: the blocks of the
 * MODULE records in file order, each module's in its map's order (unit by unit, each unit's
 * blocks in order), the counts file's order too. */
struct cov_line {
    uint32_t file;        /* index into cov_data.files */
    uint32_t line;        /* 1-based */
};

struct cov_block {
    uint32_t func;        /* global function index */
    uint32_t first_line;  /* its lines: cov_data.lines[first_line .. first_line + nlines) */
    uint32_t nlines;      /* 0: no instruction of it has a debug location */
};

/* One block reached by an input. */
struct cov_bhit {
    uint32_t block;       /* global block index */
    uint64_t count;       /* times the block ran during the input (64-bit, never saturates) */
};

struct cov_module {
    char *path;
    char build_id[80];    /* hex of the NT_GNU_BUILD_ID note, "" if the file has none */
    uint64_t identity;    /* FNV-1a 64 over the map's unit hashes (ptc_map_summary) */
    uint32_t first;       /* its functions are funcs[first .. first + nfuncs) */
    uint32_t nfuncs;
    uint32_t has_callees; /* the map holds callees and sizes (version 6) */
    /* Which functions it counts (its map's units' PTCALL_MAP_F_EARLY flags): early placement
     * counts the source's functions, late only those that survived inlining. */
    uint8_t placement;    /* enum cov_placement */
    uint32_t units_early, units_late;
    uint32_t first_block; /* its blocks are blocks[first_block .. first_block + nblocks) */
    uint32_t nblocks;     /* 0: built without -fptcall-cov (no block counters) */
};

/* The function universe a module counts (.ptcov record 6, docs/cov.md). */
enum cov_placement {
    COV_PLACE_UNKNOWN = 0,  /* a .ptcov written before the placement was recorded */
    COV_PLACE_EARLY = 1,    /* every unit early: source-level functions */
    COV_PLACE_LATE = 2,     /* every unit late: functions that survived inlining */
    COV_PLACE_MIXED = 3     /* some units each way */
};

struct cov_hit {
    uint32_t func;        /* global function index */
    uint64_t count;       /* entries of the function during the input's run */
};

struct cov_input {
    char *name;           /* as shown: relative to the corpus or AFL++ directory */
    uint8_t kind;         /* enum cov_kind */
    uint8_t outcome;      /* enum cov_outcome */
    int32_t value;        /* exit status, signal or errno */
    int64_t time_ms;      /* campaign time (AFL++ time:, else file times); -1 unknown */
    uint64_t exec_us;     /* wall time of the run */
    uint32_t nhits;       /* hits sorted by func, counts > 0 */
    struct cov_hit *hits;
    uint32_t nbhits;      /* blocks reached, sorted by block, counts > 0 */
    struct cov_bhit *bhits;
    /* INPUT_HASH (record 10; docs/cov.md, *Origins and input hashes*): the content's
     * XXH3-128 (high 64 bits first) and the ORIGIN it came from (index into
     * cov_data.origins; 0 for a file of one cov run) */
    uint8_t has_hash;
    uint8_t hash[16];
    uint32_t origin;
};

/* ORIGIN (record 9): where a file's inputs were measured: the host that ran `cov run` and
 * its time; a merged file has one per part (index = position). */
struct cov_origin {
    char *host;
    char *file;           /* the .ptcov merged in ("" for cov run's own) */
    uint64_t created;     /* Unix seconds */
    int64_t campaign_ms;  /* that part's campaign time, -1 unknown */
};

struct cov_data {
    char *target;         /* the command line, words joined by spaces (for people) */
    uint32_t timeout_ms;
    uint64_t created;     /* Unix seconds */
    uint32_t file_version; /* the .ptcov version it was read from (0: not read from one) */
    int64_t campaign_ms;  /* how long the campaign ran (AFL++'s fuzzer_stats), -1 unknown */
    /* the HARNESS record (type 7; docs/cov.md, "Harness shapes"): how cov run ran the
     * target; NULL when the file has none (made before it) */
    char *harness;
    uint32_t harness_kind, harness_flags;   /* enum cov_shape_kind; COV_HARNESS_F_* */
    uint32_t nmodules, nfuncs, ninputs;
    struct cov_module *modules;
    struct cov_func *funcs;
    struct cov_input *inputs;
    uint32_t cap_modules, cap_funcs, cap_inputs;
    /* blocks and lines (empty when no module was built with -fptcall-cov) */
    uint32_t nfiles, nblocks, nlines;
    char **files;         /* source paths of the blocks' lines, each once */
    struct cov_block *blocks;
    struct cov_line *lines;
    uint32_t cap_files, cap_blocks, cap_lines;
    /* record 11 WATCH (cov_watch.c writes and reads it; cov_file.c keeps its payload as it
     * is): malloc'ed, NULL when the file has none */
    uint8_t *watch;
    size_t nwatch;
    uint32_t norigins;    /* ORIGIN records (0: a file made before them) */
    struct cov_origin *origins;
    struct cov_graph *graph;   /* map v8 / record 8 CALLGRAPH; NULL when no module has it */
};

/* ---- the call graph for reachability (cov_graph.c; map version 8, .ptcov record 8
 * CALLGRAPH; docs/cov.md, *Reachability and the frontier*). Per function whether its address
 * is taken and its type id, and its indirect calls by type id; per block its successors. */
#define COV_GRAPH_TAKEN 1u     /* a function's flags: its address is taken */
struct cov_graph {
    uint32_t nfuncs;           /* the functions described so far (grows with d->nfuncs) */
    uint32_t modules_with;     /* modules whose map had version 8 data */
    uint8_t *flags;            /* per function: COV_GRAPH_TAKEN */
    uint64_t *type_id;         /* per function: FNV-1a 64 of its type's spelling */
    uint32_t *icall_start;     /* nfuncs + 1: function f's indirect calls are
                                  icall_type/icall_block[icall_start[f] .. icall_start[f+1]) */
    uint64_t *icall_type;
    uint32_t *icall_block;     /* global block holding it, UINT32_MAX: not known */
    uint32_t nicalls;
    char **taken_names;        /* address taken in a module that does not define them: linkage
                                  names, resolved over all modules */
    uint32_t ntaken_names;
    uint32_t nblocks;          /* blocks with successors listed (0: none; else d->nblocks) */
    uint32_t *succ_start;      /* nblocks + 1 */
    uint32_t *succs;           /* global block indices */
    uint32_t nsuccs;
    uint32_t cap_funcs, cap_icalls, cap_blocks, cap_succs, cap_names;
};
/* d->graph, made when missing (cov_data_free frees it). NULL when out of memory. */
struct cov_graph *cov_graph_get(struct cov_data *d);
/* Appends function g->nfuncs: flags, type id, its n indirect calls. 0 or -ENOMEM. */
int cov_graph_add_func(struct cov_graph *g, uint32_t flags, uint64_t type_id, uint32_t n,
                       const uint64_t *types, const uint32_t *blocks);
/* Appends block g->nblocks's n successors. 0 or -ENOMEM. */
int cov_graph_add_block(struct cov_graph *g, uint32_t n, const uint32_t *succs);
/* Appends a taken name (copied). 0 or -ENOMEM. */
int cov_graph_add_name(struct cov_graph *g, const char *name);

void cov_data_init(struct cov_data *d);
void cov_data_free(struct cov_data *d);
/* Appends a module / function / input (copied shallowly: the data set owns the pointers
 * afterwards). Returns a pointer to the new element, or NULL when out of memory. */
struct cov_module *cov_data_add_module(struct cov_data *d);
struct cov_func *cov_data_add_func(struct cov_data *d);
struct cov_input *cov_data_add_input(struct cov_data *d);
/* Appends a block / a line of the last block. Returns the new element, or NULL. */
struct cov_block *cov_data_add_block(struct cov_data *d);
struct cov_line *cov_data_add_line(struct cov_data *d);
/* The index of source path file in d->files, added if new (copied). Returns the index, or
 * -ENOMEM. Linear in the files of d from the last lookup on: callers add lines file by file. */
int64_t cov_data_file(struct cov_data *d, const char *file);
/* Appends an origin (strings copied). Returns it, or NULL when out of memory. */
struct cov_origin *cov_data_add_origin(struct cov_data *d, const char *host, const char *file,
                                       uint64_t created, int64_t campaign_ms);
/* Frees one input's owned memory. */
void cov_input_free(struct cov_input *in);
/* "queue", "crash", "hang"; "exited", "signal", "timeout", "error". */
const char *cov_kind_name(unsigned kind);
const char *cov_outcome_name(unsigned outcome);
/* The placement of units_early early and units_late late units (enum cov_placement). */
unsigned cov_placement_of(uint32_t units_early, uint32_t units_late);
/* "unknown", "early", "late", "mixed". */
const char *cov_placement_name(unsigned placement);
/* What a placement counts, for people: "source-level functions (early placement)", ... */
const char *cov_universe_text(unsigned placement);
/* The placement over all of d's modules (mixed when they differ; unknown when any is). */
unsigned cov_data_placement(const struct cov_data *d);
/* Orders the inputs by campaign time (unknown last), then name: the order in which "first
 * reached" is decided. */
void cov_data_sort_inputs(struct cov_data *d);

/* ---- instrumented ELF files (cov_map.c) --------------------------------------------- */

/* Appends the module at path (an instrumented ELF file) and its function table to d, in
 * the order the runtime numbers counters (unit by unit in section order, each unit's
 * function table in order). Returns 0, -ENOENT/-EACCES (cannot open), -ENOEXEC (not an ELF
 * file) or -ENODATA (no ptcall_map section: not built with ptcall), -EINVAL (a damaged
 * map), -ENOMEM; why says which. */
int cov_map_load(struct cov_data *d, const char *path, char *why, size_t n);
/* Build id and map identity of path without keeping its functions: for `report --binary`.
 * Returns 0 or an error as cov_map_load. */
int cov_map_ids(const char *path, char *build_id, size_t bn, uint64_t *identity, char *why,
                size_t n);

/* ---- the target's harness shape (cov_shape.c; docs/cov.md, "Harness shapes") -------- */

enum cov_shape_kind {
    COV_SHAPE_PLAIN,      /* no LLVMFuzzerTestOneInput: one input per process */
    COV_SHAPE_DRIVER,     /* ptcall's fuzz driver (its marker section): batches, marks */
    COV_SHAPE_LIBFUZZER,  /* libFuzzer's main (-fsanitize=fuzzer): one file per process */
    COV_SHAPE_OWN_MAIN,   /* LLVMFuzzerTestOneInput called by a main of the harness's own */
    COV_SHAPE_UNKNOWN,    /* LLVMFuzzerTestOneInput, but whose main cannot be told: refused */
};
struct cov_shape {
    enum cov_shape_kind kind;
    uint32_t toi;         /* LLVMFuzzerTestOneInput's function index in d, UINT32_MAX: none */
    uint8_t toi_symbol, main_symbol, main_instrumented, libfuzzer, driver, symtab;
    uint8_t afl_loop, afl_init, afl_testcase;   /* ptcall-cc's __AFL_* macros are used */
    uint8_t fuzz_hook;    /* LLVMFuzzerTestOneInput has ptcall-cc's entry hook: the fork
                             server can start at the harness (cov_target.harness_fork) */
};
#define COV_HARNESS_F_AFL_LOOP 1u  /* the HARNESS record's flags: ptcall-cc's __AFL_LOOP, */
#define COV_HARNESS_F_AFL_INIT 2u  /* __AFL_INIT, __AFL_FUZZ_TESTCASE_* are used */
#define COV_HARNESS_F_AFL_TESTCASE 4u
/* Reads path's symbols and sections and d's function table (cov_map_load first). Returns 0
 * or -errno (cannot read the file). */
int cov_shape_detect(const char *path, const struct cov_data *d, struct cov_shape *s);
/* One line for the summary: the shape and how it is run. */
const char *cov_shape_name(const struct cov_shape *s);
/* 0 when the shape can be measured (has_at: "@@" is in the command), else -EINVAL with why:
 * what is wrong and what to do. */
int cov_shape_refuse(const struct cov_shape *s, const char *target, int has_at, char *why,
                     size_t n);
/* The command for libFuzzer's main (argv NULL-terminated): argv[0], the flags that make a
 * crash a signal and keep libFuzzer from writing artifacts or stopping an input on limits of
 * its own (the user's flags come after and win), the rest, and "@@" at the end when has_at
 * is 0. *out is malloc'ed (the words are argv's). Returns 0 or -ENOMEM. */
int cov_shape_libfuzzer_argv(char **argv, int has_at, char ***out);

/* ---- inputs to run (cov_corpus.c, cov_afl.c) --------------------------------------- */

struct cov_entry {
    char *path;           /* to open */
    char *name;           /* to show and store */
    uint8_t kind;
    int64_t time_ms;      /* campaign time, -1 unknown */
    uint64_t size;
    int64_t mtime_ms;     /* file time (ms since the epoch), for corpora without time: */
    uint8_t file_time;    /* a plain corpus file: campaign time from file times
                             (cov_corpus_times) */
};

struct cov_entries {
    struct cov_entry *v;
    size_t n, cap;
    size_t skipped;       /* reported to the warning stream and left out */
    int64_t campaign_ms;  /* the longest AFL++ instance's run (fuzzer_stats run_time, or
                             last_update - start_time), in ms; valid when has_campaign */
    int has_campaign;
};

void cov_entries_free(struct cov_entries *e);
/* The regular, readable files directly inside dir, empty ones too (names starting with '.'
 * are AFL++'s and editors' bookkeeping and left out silently). Subdirectories and
 * unreadable files are each reported on warn and skipped. Campaign time: the file's
 * modification time minus the earliest one of all plain-corpus files (cov_corpus_times).
 * Returns 0, or an error when dir itself cannot be read. */
int cov_corpus_add_dir(struct cov_entries *e, const char *dir, FILE *warn, char *why,
                       size_t n);
/* Sets the campaign time of plain corpus files: modification time minus the earliest
 * modification time among them. AFL++ entries without a time keep -1 (unknown). */
void cov_corpus_times(struct cov_entries *e);
/* Opens an input to run: read-only, without blocking on a FIFO or taking a terminal; st
 * filled. Returns the descriptor, -EINVAL when it is not a regular file (any more), or
 * -errno. */
int cov_open_input(const char *path, struct stat *st);
/* s made fit for one message line (control bytes and invalid UTF-8 as \xNN), in out. */
const char *cov_shown(const char *s, char *out, size_t n);
/* An AFL++ output directory (afl-fuzz -o OUTDIR): OUTDIR/queue (one instance) or
 * OUTDIR/NAME/queue for each instance (-M/-S NAME, or 'default'), each with crashes/ and
 * hangs/ beside it. Entries named `id:...,time:MS,...` take their campaign time from the
 * name. Returns 0, -ENOENT when OUTDIR has neither layout (why says what was expected), or
 * another error. */
int cov_afl_add(struct cov_entries *e, const char *outdir, FILE *warn, char *why, size_t n);
/* The value of `key:` in an AFL++ entry name ("id:000003,src:000001,time:1234,..."), or -1.
 * Exposed for the tests. */
int64_t cov_afl_field(const char *name, const char *key);

/* ---- the .ptcov file (cov_file.c, docs/cov.md) -------------------------------------- */

#define COV_FILE_MAGIC "PTCOV\r\n\032"   /* 8 bytes, PNG-style: catches text-mode damage */
#define COV_FILE_VERSION 2u   /* 2: CRC-32 of the header and of each record; 1 is read */

/* Writes d to path (through a temporary file renamed over it: whole or not at all).
 * Returns 0 or -errno. */
int cov_file_write(const struct cov_data *d, const char *path, char *why, size_t n);
/* Reads path into d (initialised by the caller). Returns 0, -ENOENT/-EACCES, -EINVAL (not
 * a .ptcov, damaged or truncated: why says where), -EPROTO (a newer version), -ENOMEM. */
int cov_file_read(struct cov_data *d, const char *path, char *why, size_t n);
/* The same over a file's bytes in memory (path only names it in why): what cov_file_read
 * does after reading, and the fuzz target's entry. A damaged version 2 file is refused
 * naming the record and its bytes; d->file_version says which version was read. */
int cov_file_parse(struct cov_data *d, const uint8_t *data, size_t size, const char *path,
                   char *why, size_t n);

/* ---- input hashes and merging (cov_hash.c, cov_merge.c; docs/cov.md) -------------------- */

/* XXH3-128 of the len bytes of the file open on fd (read with pread), canonical bytes into
 * out. Returns 0 or -errno (-ENODATA: the file shrank). */
int cov_hash_fd(int fd, uint64_t len, uint8_t out[16]);
/* The 32 hex digits of a hash. */
void cov_hash_hex(const uint8_t h[16], char hex[33]);

struct cov_merge_stats {
    uint32_t inputs;          /* in the merged file */
    uint32_t dup_hash;        /* left out: the same content as an earlier one */
    uint32_t by_name;         /* inputs without a hash (older files), matched by name */
    uint32_t dup_name;        /* ... left out: the same instance and name as an earlier one */
    int blocks_dropped;       /* some part had no blocks: the merged file has none */
};
/* Merges parts[0..n) (read from paths[]) into out; the parts are emptied (their inputs move
 * to out). Every part must measure the same build (each module's build id and map identity):
 * else -EINVAL with why naming the module and both files. Inputs are deduplicated by content
 * hash (the earliest campaign time wins), inputs without one by name; names get their origin
 * host as a prefix ("HOST:NAME") so that the instances of different machines stay apart;
 * each part's ORIGIN records (or, for a file without them, one naming the file) become the
 * merged file's. Returns 0, -EINVAL or -ENOMEM. */
int cov_merge(struct cov_data *out, struct cov_data *parts, uint32_t n, const char *const *paths,
              struct cov_merge_stats *st, char *why, size_t wn);

/* ---- the counters (cov_counts.c) --------------------------------------------------- */

/* One module of the counters area as the runtime laid it out. */
struct cov_counts_module {
    uint64_t identity;
    const char *path;
    uint32_t first, nfuncs;
    uint64_t first_block;         /* version 2: its blocks in blocks[] */
    uint32_t nblocks;
};
struct cov_counts {
    const void *base;             /* the mapping */
    size_t size;
    uint32_t nmodules;
    uint64_t ncounters;
    const volatile uint64_t *counters;
    struct cov_counts_module *modules;  /* malloc'ed */
    uint64_t nblocks;             /* version 2: block counters (map v7, -fptcall-cov) */
    const volatile uint64_t *blocks;
};
/* Parses the area the runtime wrote into a memfd of size bytes at base. Returns 0, or
 * -EINVAL/-EPROTO with why. */
int cov_counts_parse(const void *base, size_t size, struct cov_counts *c, char *why, size_t n);
void cov_counts_free(struct cov_counts *c);
/* The area's counter index for each of d's functions (map[i] for global function i;
 * UINT64_MAX: the area has no counter for it). Matches modules by identity, then by path.
 * Returns 0 or -ENOENT when a module of the area is in no module of d (why names it). */
int cov_counts_match(const struct cov_counts *c, const struct cov_data *d, uint64_t *map,
                     char *why, size_t n);

/* The area's block counter index for each of d's blocks (bmap[i] for global block i;
 * UINT64_MAX: none, e.g. a module whose block count differs from its map's, which is said in
 * why and counted in *mismatched). Modules are matched as cov_counts_match does. */
void cov_counts_match_blocks(const struct cov_counts *c, const struct cov_data *d,
                             uint64_t *bmap, uint32_t *mismatched, char *why, size_t n);

/* ---- running the target (cov_fsrv.c) ---------------------------------------------- */

struct cov_target {
    char **argv;          /* NULL-terminated; an "@@" word is replaced by the input's path */
    const char *runtime;  /* libptcall.so to preload (NULL: the target links it) */
    uint32_t timeout_ms;
    int force_exec;       /* never the fork server: one exec per input */
    int defer;            /* the fork server starts at ptcall_forkserver_start() (ptcall.h) */
    int harness_fork;     /* ... at LLVMFuzzerTestOneInput's first call, each child given the
                             work file's contents (PTCALL_FORKSERVER_HARNESS; docs/cov.md) */
};

struct cov_result {
    uint8_t outcome;
    int32_t value;
    uint64_t exec_us;
    uint32_t nhits;
    struct cov_hit *hits; /* malloc'ed, sorted by function; the caller owns it */
    uint32_t nbhits;
    struct cov_bhit *bhits; /* malloc'ed, sorted by block; the caller owns it */
    uint32_t left_running; /* processes of the run still alive after it ended: killed */
    uint8_t stdin_unread;  /* stdin mode, a non-empty input: its offset still 0 after the run */
    uint8_t has_hash;      /* hash: the input's XXH3-128 (cov_hash_fd), for INPUT_HASH */
    uint8_t hash[16];
};

struct cov_runner;
/* Starts a runner (its own work files in workdir, named by index): the fork server when the
 * target answers, else one exec per input. fn_map/nfuncs: counter index per function of d
 * (made by cov_counts_match on the first run; d supplies the function table). Returns 0 or
 * an error with why (the target could not start at all). */
int cov_runner_start(const struct cov_target *t, struct cov_data *d, const char *workdir,
                     int index, struct cov_runner **out, char *why, size_t n);
/* Runs one input: len bytes of the regular file open on fd, copied to the runner's work
 * file through a small buffer (never read whole; holes stay holes). Returns 0 (r filled,
 * also for crashes and hangs, and COV_ERROR with the errno when the input could not be
 * copied), or an error that ends the runner (the fork server died and could not be restarted).
 * Processes the run left behind (a grandchild still calling instrumented code) are killed
 * before the counters are read, so their calls count for this input and never the next
 * one, and counted in res->left_running: the tool is their subreaper
 * (PR_SET_CHILD_SUBREAPER) and the fork server's child a process group of its own. */
int cov_runner_run(struct cov_runner *r, int fd, uint64_t len, struct cov_result *res,
                   char *why, size_t n);
/* Whether the runner uses the fork server. */
int cov_runner_forkserver(const struct cov_runner *r);
/* The fork server's pid (0: none), whose CPU time --watch's budget counts (cov_watch.c). */
int cov_runner_server_pid(const struct cov_runner *r);
void cov_runner_stop(struct cov_runner *r);

/* After the runs (cov_shape.c): says on out each input that ran LLVMFuzzerTestOneInput other
 * than once (the harness's own boundary: never merged silently) and a target that never read
 * the stdin it was given (a forgotten "@@"). Returns the number of such inputs. */
int cov_shape_check(const struct cov_shape *s, const struct cov_entries *e,
                    const struct cov_result *results, const int *ran, FILE *out,
                    const char *cmd);

/* ---- following a live campaign (cov_watch*.c; docs/cov.md, *Watching a live campaign*) */

struct cov_watch_opts {
    const char *cmd;              /* for messages */
    const char **afl;             /* --afl OUTDIRs, --corpus DIRs */
    int nafl;
    const char **corpora;
    int ncorpora;
    const char *output;           /* -o: resumed when it holds a .ptcov of this build */
    uint64_t plateau_ms;          /* no new function (or block) for this long: a plateau */
    uint64_t duration_ms;         /* 0: no limit */
    uint64_t save_ms;             /* rewrite the .ptcov at most this often */
    uint64_t poll_ms;             /* rescan without inotify (and every 5 polls with it) */
    double cpu;                   /* share of one core, (0, 1] */
    int until_idle;               /* end when every AFL++ instance stopped, all measured */
    FILE *log;
};
/* The parsed record 11 (cov_watch_state_read). */
struct cov_watch_state {
    unsigned live;                /* 1: written while the watch ran; 0: its final write */
    int64_t as_of_ms;             /* Unix ms of the write */
    uint64_t pending;             /* entries seen but not measured yet */
    unsigned plateau;             /* 1: on a plateau as of the write */
    int64_t last_growth_ms;       /* Unix ms (file time) of the last input adding coverage */
};
/* Checks the output (refused: not a .ptcov, another build) and resumes from it: its inputs
 * go into d (after cov_runner_start, when d holds every module). 0 or 1 (said on o->log). */
int cov_watch_resume(struct cov_data *d, const struct cov_watch_opts *o, void **state);
/* Follows the directories, measuring each new entry on runner r, until a signal (*stop),
 * --duration or --until-idle; writes the .ptcov at o->save_ms and at the end. Returns 0,
 * or 1 when the file could not be written (said on o->log). state: cov_watch_resume's. */
int cov_watch_run(struct cov_runner *r, struct cov_data *d, const struct cov_watch_opts *o,
                  void *state, volatile int *stop);
/* Reads d's record 11. 0, -ENOENT (none), -EINVAL (damaged or another version). */
int cov_watch_state_read(const struct cov_data *d, struct cov_watch_state *s);

/* ---- analyses (cov_analysis.c) ----------------------------------------------------- */

struct cov_blocker {
    uint32_t func;            /* a reached function */
    uint32_t nunreached;      /* its direct callees never reached, listed under no caller
                                 ranked before it */
    uint64_t insns, blocks;   /* those callees' instructions and blocks */
    uint32_t first;           /* they are blocker_callees[first .. first + nunreached) */
};
struct cov_point {
    int64_t time_ms;
    uint32_t input;
    uint32_t reached;         /* functions reached by this input and all before it */
};
struct cov_group {
    const char *name;         /* module path or source file */
    uint32_t funcs, reached;
};

/* Blocks and lines over all inputs (cov_blocks.c; map v7 builds). A source line (file, line)
 * is reached when a block holding one of its instructions ran; its count is the largest
 * count of those blocks (what llvm-cov and lcov show as a line's hits: the runs of the line,
 * not of each of its pieces). */
struct cov_uline {
    uint32_t file, line;
    uint64_t count;           /* max over its blocks of the block's runs (all inputs) */
    uint32_t inputs;          /* inputs that reached it */
};
struct cov_file_lines {
    uint32_t lines, lines_reached;
    uint32_t blocks, blocks_reached; /* blocks whose first line is in the file */
};
struct cov_blocks_analysis {
    uint32_t nblocks, reached;        /* blocks, blocks reached by any input */
    uint64_t *count;                  /* per block: runs over all inputs */
    uint32_t *inputs;                 /* per block: inputs reaching it */
    uint32_t nulines, ulines_reached;
    struct cov_uline *ulines;         /* sorted by file index, then line */
    uint32_t *uline_of;               /* per cov_data.lines entry: its ulines index */
    struct cov_file_lines *files;     /* per cov_data.files entry */
    uint32_t *func_blocks, *func_reached; /* per function: its blocks, those reached */
    uint32_t *in_blocks, *in_lines;   /* per input: blocks and lines it reached */
};
/* Computes it (b zeroed when d has no blocks). Returns 0 or -ENOMEM. */
int cov_analyse_blocks(const struct cov_data *d, struct cov_blocks_analysis *b);
void cov_blocks_analysis_free(struct cov_blocks_analysis *b);

/* Reachability from the harness entry and the frontier (cov_reach.c; docs/cov.md,
 * *Reachability and the frontier*). The call graph: direct callees, plus each call through a
 * pointer to every address-taken function of the same type id (map version 8). */
enum cov_reach_class {
    COV_R_REACHED = 0,       /* some input reached it */
    COV_R_REACHABLE = 1,     /* never reached; reachable from the entry or reached code */
    COV_R_UNREACHABLE = 2    /* never reached; no path from the harness reaches it */
};
struct cov_frontier {        /* a never-reached function that reached functions call */
    uint32_t callee;
    uint32_t first_caller, ncallers;  /* its reached callers: reach.callers[first ..) */
    uint8_t indirect;        /* only through calls by pointer (of its type id) */
    uint32_t funcs;          /* the never-reached functions behind it: those it reaches
                                through never-reached functions only, itself included */
    uint64_t insns, blocks, lines;    /* their IR instructions, blocks, distinct lines */
};
struct cov_bfrontier {       /* where a reached function stops: a reached block whose
                                successor no input ran */
    uint32_t block, succ;    /* global block indices */
    uint32_t blocks, lines;  /* never-run blocks behind succ in its function (succ
                                included, through never-run blocks no row ranked above
                                holds: each never-run block in one row), their lines */
    struct cov_line at, to;  /* the branch's line (block's last), the first unrun line
                                behind it; file UINT32_MAX: none */
};
struct cov_reach {
    uint32_t entry;          /* LLVMFuzzerTestOneInput, else main; UINT32_MAX: neither */
    int indirect;            /* calls through pointers followed: every module had map v8
                                data (else direct calls only) */
    uint8_t *cls;            /* per function: enum cov_reach_class */
    uint32_t nreachable, nunreachable;
    uint32_t unexplained;    /* reached, though the graph has no path to it from the entry
                                (a constructor, a callback called by uninstrumented code) */
    uint8_t *no_path;        /* per function: 1 for those */
    struct cov_frontier *front;
    uint32_t nfront;
    uint32_t *callers;
    struct cov_bfrontier *bfront;   /* with block successors (map v8 and -fptcall-cov) */
    uint32_t nbfront;
    int have_succs;
};
int cov_reach_compute(const struct cov_data *d, const uint32_t *inputs_reaching,
                      const struct cov_blocks_analysis *blk, struct cov_reach *r);
void cov_reach_free(struct cov_reach *r);

struct cov_analysis {
    const struct cov_data *d;
    struct cov_reach reach;           /* reachability and the frontier */
    struct cov_blocks_analysis blk;   /* blocks and lines (empty without map v7 data) */
    uint32_t reached;                 /* functions reached by any input */
    uint32_t *inputs_reaching;        /* per function: how many inputs reached it */
    uint32_t *first_input;            /* per function: the first input (UINT32_MAX: none) */
    uint64_t *calls;                  /* per function: entries over all inputs */
    uint32_t *new_count;              /* per input: functions it reached first */
    struct cov_point *curve;          /* one point per input that added functions */
    uint32_t ncurve;
    int64_t end_ms;                   /* the campaign's end as far as known: its run time
                                         (AFL++'s fuzzer_stats) or the latest input time (-1:
                                         none known); the curve's plateau runs to it */
    struct cov_group *modules, *files;
    uint32_t nmodules_g, nfiles;
    struct cov_blocker *blockers;     /* ranked, most unreached code first; each unreached
                                         callee under one of them only */
    uint32_t nblockers;
    uint32_t *blocker_callees;        /* the blockers' unreached callees */
    uint32_t *callers_start;          /* per function (nfuncs + 1 entries): its reached direct
                                         callers are callers[callers_start[f] ..
                                         callers_start[f + 1]) when it was never reached */
    uint32_t *callers;
    int have_sizes;                   /* every module has callee and size data */
    uint32_t counted[4];              /* inputs by outcome */
};

/* Computes everything over d (whose inputs must be sorted: cov_data_sort_inputs). Returns 0
 * or -ENOMEM. */
int cov_analyse(const struct cov_data *d, struct cov_analysis *a);
void cov_analysis_free(struct cov_analysis *a);

struct cov_diff_row {
    uint32_t func;            /* in the set that reached it */
    int side;                 /* 0: only A reached it, 1: only B */
    uint32_t inputs;          /* how many of that side's inputs reached it */
    int instrumented_other;   /* the other build has it (0: never instrumented there, so
                                 its inputs could not be seen reaching it) */
};
/* The functions only one of a and b reached, A's first, on each side those the other build
 * instruments before those it does not (instrumented_other). Functions are matched by linkage
 * name and source file (not module: the two binaries are often named apart), two paths
 * naming one file when one is the other's tail after a '/' (a source built in two
 * directories). *common gets how many both reached. Returns 0 or -ENOMEM. */
int cov_diff(const struct cov_analysis *a, const struct cov_analysis *b,
             struct cov_diff_row **rows, uint32_t *nrows, uint32_t *common);

/* ---- views (cov_view_*.c) ---------------------------------------------------------- */

struct cov_view_opts {
    const char *ptcov;        /* the file's name, for the header */
    int blockers;             /* --blockers */
    uint64_t top;             /* table: rows per list (0 = all) */
};
/* Each returns 0, or -EIO when f could not be written. */
int cov_view_table(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_csv(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_json(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_html(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
/* The HTML view's source lines with their hits (cov_view_source.c; nothing without blocks). */
int cov_view_html_source(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
/* lcov tracefile (geninfo's format, read by genhtml): per source file FN/FNDA, DA per line. */
int cov_view_lcov(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
/* The blocks-and-lines parts of the table and JSON views (cov_view_blocks.c). */
int cov_view_table_blocks(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_json_blocks(FILE *f, const struct cov_analysis *a);
/* The reachability parts (cov_view_reach.c): the classes of the never-reached functions
 * and, with --blockers / --frontier, the frontier. */
int cov_view_table_reach(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_json_reach(FILE *f, const struct cov_analysis *a);
int cov_view_html_reach(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o);
int cov_view_csv_reach(FILE *f, const struct cov_analysis *a);
/* cov diff, table / csv / json. */
int cov_view_diff(FILE *f, int format, const struct cov_analysis *a, const char *pa,
                  const struct cov_analysis *b, const char *pb, const struct cov_diff_row *rows,
                  uint32_t nrows, uint32_t common);

/* Shared by the views: a function's display name ("" never: falls back to the linkage). */
const char *cov_func_name(const struct cov_data *d, uint32_t f);
/* A name as a JSON string literal, a CSV field, a name in a text table (common/ptc_escape.h,
 * the one escaping of every output). */
void cov_json_str(FILE *f, const char *s);
void cov_csv_str(FILE *f, const char *s);
void cov_text_str(FILE *f, const char *s);
/* A CSV line column: empty when not known (0). */
void cov_csv_line(FILE *f, uint32_t line);
/* A function's identity as the CSV views' first five fields: name, linkage_name, module,
 * file, line (no comma after). */
void cov_csv_func(FILE *f, const struct cov_data *d, uint32_t func);

#endif
