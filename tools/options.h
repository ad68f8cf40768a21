/* The one option table of every `ptcall` command (options.c): what each command accepts,
 * how each value is checked, its default, and the help, `--help` text and Markdown
 * reference (docs/options.md, the README's summary) generated from it. Modelled on
 * uftrace's single option table with per-command masks: one name may have several rows
 * with different masks when it means different things to different commands (`--pid`
 * filters calls/report/graph/export, is the process to attach for record and the process
 * id for import).
 *
 * A command calls cli_parse() once; the values land in one struct cli_values, defaults
 * filled in from the table. Rules that tie options together (`--min-calls` goes with
 * `--paths`, `-o` is required for import) stay in the commands, which ask cli_given(). */
#ifndef PTCALL_OPTIONS_H
#define PTCALL_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli_common.h"
#include "cli_filter.h"
#include "db_cli.h"
#include "runs.h"

enum cli_cmd {
    CMD_RECORD,
    CMD_REPORT,
    CMD_DIFF,
    CMD_CALLS,
    CMD_GRAPH,
    CMD_EXPORT,
    CMD_STAT,
    CMD_IMPORT,
    CMD_ARM,
    CMD_BANDWIDTH,
    CMD_DB_ADD, /* `ptcall db SUB`: one command per subcommand, named "db SUB" */
    CMD_DB_LIST,
    CMD_DB_SHOW,
    CMD_DB_RM,
    CMD_DB_QUERY,
    CMD_SERVE,
    CMD_HTML,
    CMD_COV_RUN, /* `ptcall cov SUB` (cmd_cov.c) */
    CMD_COV_REPORT,
    CMD_COV_DIFF,
    CMD_COV_MERGE, /* cov_campaign.c: parts of a campaign, into one file or the database */
    CMD_COV_ADD,
    CMD_COV_LIST, /* cov_campaign_list.c */
    CMD_COV_SHOW,
    CMD_SNAPSHOT, /* cmd_snapshot.c: the flight recorder of a running process (issue 31) */
    CMD_CALIBRATE, /* cmd_calibrate.c: the cost model of a budget (issue 28) */
    CMD_HELP,
    CMD_COUNT
};
#define CLI_CM(c) (1u << (c))

/* A command: its name, synopsis (one line per form, after "ptcall NAME "), the summary
 * that `ptcall --help` lists, and notes printed after the options (paragraphs separated
 * by '\n', wrapped by the printer). */
struct cli_command {
    const char *name;
    const char *synopsis;
    const char *summary;
    const char *notes;
};
extern const struct cli_command cli_commands[CMD_COUNT];

enum cli_kind {
    CLI_FLAG,       /* no value: sets an int to 1 */
    CLI_UINT,       /* a whole number in [min, max], into an unsigned field of 1..8 bytes */
    CLI_SIZE,       /* bytes, with K, M, G suffixes (powers of 1024), in [min, max] */
    CLI_PERCENT,    /* a number 0..100 (decimals allowed), into a double */
    CLI_CHOICE,     /* one word of a list: its index, into an int (-1 when not given and no
                       default) */
    CLI_STRING,     /* a const char * (the last one given counts) */
    CLI_LIST,       /* repeatable: every value, in order, into a struct cli_list */
    CLI_DURATION,   /* a time with a unit ns (default), us, ms, s, into a uint64_t of ns */
    CLI_CUSTOM      /* parsed by the row's parse function */
};

/* Row flags. */
#define CLI_O_NONEMPTY 1u   /* STRING, LIST: an empty value is an error */
#define CLI_O_FILTER 2u     /* one of the shared filters (printed as one block) */

/* One word of a CHOICE, with what it means (NULL: the option's help says it all). */
struct cli_choice {
    const char *word;
    const char *help;
};

/* A heading under which a command's help groups some of its options, with a note printed
 * after them. */
struct cli_group {
    const char *title;
    const char *note;
};

struct cli_opt {
    const char *name;       /* "--top" */
    const char *alias;      /* "-o", or NULL */
    enum cli_kind kind;
    const char *metavar;    /* "N", "FILE"; CHOICE without one shows "a|b|c" */
    unsigned cmds;          /* CLI_CM(CMD_...) | ... */
    size_t off;             /* the field in struct cli_values */
    size_t given_off;       /* 1 + offset of an int set to 1 when given (0: none) */
    unsigned width;         /* UINT: the field's size in bytes */
    unsigned flags;         /* CLI_O_* */
    uint64_t min, max;      /* UINT, SIZE: the range; LIST: most values (0: no limit) */
    const struct cli_choice *choices;           /* CHOICE, NULL-terminated ... */
    const struct cli_choice *(*choices_fn)(void); /* ... or made at run time */
    /* CUSTOM: parses val into field; LIST: checks val (may be NULL). 0, or -1 with a
     * message (what is wrong, without the option's name) in err */
    int (*parse)(const char *val, void *field, char *err, size_t errn);
    const char *def;        /* the default as a user would write it: parsed into the field
                               before the command line, and shown in the help */
    const struct cli_group *group;  /* heading in the help (NULL: the command's options) */
    const char *help;
};

/* What cli_parse() does. */
#define CLI_STOP_AT_POSITIONAL 1u   /* the first positional argument (or "--") ends the
                                       options: record's COMMAND [ARGS...] */

#define CLI_MAX_ROWS 160
#define CLI_GO (-1)

struct cli_values {
    enum cli_cmd cmd;
    const char **pos;       /* positional arguments, in order (all of them after "--") */
    int npos;
    char **rest;            /* CLI_STOP_AT_POSITIONAL: argv from the first positional on */
    int given[CLI_MAX_ROWS];   /* per table row: argv index of its last use, 0 if unused */

    int help;
    int salvage;
    int quiet;
    uint32_t threads;       /* report, diff, graph: decode threads (0 = one per CPU) */
    const char *output;     /* -o: record, export, import */
    uint64_t min_calls;     /* report --paths, graph */
    double min_share;       /* report --paths, graph */
    int sort;               /* report, diff: calls, self, total; -1: by the traces */
    int format;             /* report, diff: table, csv, json */
    uint64_t top;           /* report, diff */
    int allow_different;    /* report, diff */
    int timing;             /* record, import: none, tsc, mtc, cyc; -1: not given */
    struct cli_filter filter;   /* calls, report, graph, export */

    /* --budget RATE[,AUX] of bandwidth and record (Intel PT, docs/bandwidth.md) */
    struct cli_budget {
        uint64_t rate;      /* bytes per second */
        uint64_t aux;       /* bytes of AUX buffer per stream; 0: not given */
    } budget;
    int have_budget;

    struct {
        int backend;        /* auto, soft, pt */
        int no_timestamps, leaf_exits, drop, snapshot;
        int counts;         /* --counts: counting mode (calls per function, no events) */
        int count_rest;     /* --count-rest: the functions not traced are counted (issue 28) */
        int count_atomic;   /* --atomic-counts: locked increments, exact across threads */
        int no_blocking;    /* --no-blocking: PTCALL_BLOCKING=0 (issue 27) */
        uint64_t buffer;    /* 0: the backend's default */
        uint32_t pid;       /* 0: launch COMMAND */
        uint64_t duration_ms; /* --pid: detach after this long (0: no limit) */
        struct cli_list modules;
        struct cli_list only, skip; /* --only / --skip GLOB: the functions to arm */
        uint64_t ring;      /* --ring SIZE: the flight recorder; 0: off */
        const char *trigger; /* --trigger FUNC[>TIME] */
        /* a budget (issue 28, record_budget.c) */
        double overhead;    /* --overhead PCT, in percent */
        int have_overhead, have_pilot, have_governor;
        uint64_t pilot_ms;  /* --pilot DURATION */
        uint64_t governor_ms; /* --governor DURATION (0: none) */
        const char *from_counts, *from_db; /* --from-counts TRACE, --from-db DB */
        const char *clock;  /* --clock tsc|ticker[:PERIOD] (issue 28) */
    } record;
    struct {
        int format;         /* table, json */
        int env;            /* --env: PTCALL_COSTS=... */
    } calibrate;
    struct {
        const char *why;    /* ptcall snapshot --why */
    } snapshot;
    struct {
        const char *meta;
        struct cli_stats { int v[RUNS_NSTATS]; int n; } stats; /* --stat, first-given order */
        int by;             /* thread, process; -1: none */
        int paths;
    } report;
    struct {
        int order;          /* time, thread; -1: by the trace */
    } calls;
    struct {
        int heat;
    } graph;
    struct {
        int format;         /* index in ptc_export_formats */
        int weight;         /* calls, self, total (enum ptc_weight order) */
        uint64_t max_size;
        int force;
        int svg_static;     /* svg without its script */
    } export_;
    struct {
        int decoder;        /* fast, libipt */
    } stat;
    struct {
        const char *perf_data, *thread_stream;
        struct cli_list cpu_streams;    /* "N:FILE", checked */
        struct cli_list binaries;       /* "PATH[@HEXADDR]", checked */
        uint32_t pid, tid;
        uint8_t mtc_period, nom_freq;
        uint32_t tsc_ratio[2];          /* EBX, EAX */
        int have_tsc_ratio;
        uint32_t cpu[3];                /* family, model, stepping */
        int have_cpu;
        struct cli_time_conv { uint32_t shift, mult; uint64_t zero; } time_conv;
        int have_time_conv;
    } import;
    struct {
        int off;
    } arm;
    struct {
        struct cli_timings { int v[4]; int n; } timings; /* --timing, in the order given */
        uint8_t mtc_period, cyc_threshold;
        int have_mtc_period, have_cyc_threshold, have_psb_period, have_aux;
        uint64_t psb_period, drain, aux;
        int ret_compression;        /* off, on */
        uint32_t tsc_ratio[2];      /* EBX, EAX: TSC ticks per crystal tick */
        int have_tsc_ratio;
        struct cli_list only;
        const char *emit, *callgrind;
        uint64_t top;
    } bandwidth;
    struct {
        const char *url;            /* --db; NULL: $PTCALL_DB, else ptcall.db */
        struct cli_list tags;       /* add: NAME=VALUE to store; list, query: filters */
        struct cli_list programs;   /* --program GLOB */
        struct cli_db_time since, until;
        int has_since, has_until;
        const char *runs;           /* --runs SPEC */
        struct cli_db_stats stats;  /* query --stat */
    } db;
    struct {
        const char *listen;         /* serve --listen ADDR:PORT */
    } serve;
    struct {
        uint32_t timeout_ms;        /* run --timeout */
        uint32_t jobs;              /* run --jobs */
        struct cli_list corpora;    /* run --corpus DIR */
        struct cli_list afl;        /* run --afl OUTDIR */
        int exec;                   /* run --exec: no fork server */
        int deferred;               /* run --deferred: serve at ptcall_forkserver_start() */
        int allow_late;             /* run --allow-late: count late-placed modules */
        /* run --watch (cov_watch.c): follow a live campaign */
        int watch, until_idle;
        uint64_t plateau_ms, duration_ms, save_ms, poll_ms;
        double cpu;                 /* --cpu FRACTION of one core */
        uint32_t nice;
        int format;                 /* report: table, csv, json, html */
        int blockers;               /* report --blockers */
        const char *binary;         /* report --binary */
        const char *campaign;       /* add (and db add of a .ptcov) --campaign NAME */
    } cov;
    struct {
        int markdown, readme, check, env;
        const char *man;            /* --man PAGE */
        int man_pages, bash_completion;
    } help_cmd;
};

/* Parses argv[1..argc-1] for command cmd into *v (defaults first). Returns CLI_GO to go on,
 * 0 after printing the help for --help / -h (1 if it cannot be written, or when out of
 * memory), or 2 after a usage error (one line "ptcall CMD: what is wrong: see 'ptcall CMD
 * --help'" and the synopsis, on stderr). Options and positional arguments may mix; "--"
 * ends the options. With CLI_STOP_AT_POSITIONAL the first positional argument (or what
 * follows "--") and everything after it is left in v->rest. On CLI_GO the caller must call
 * cli_values_free(v). */
int cli_parse(enum cli_cmd cmd, int argc, char **argv, struct cli_values *v, unsigned flags);
void cli_values_free(struct cli_values *v);

/* Where option name (or its alias) was last given on the command line: its argv index,
 * or 0 if it was not. */
int cli_given(const struct cli_values *v, const char *name);
/* The latest argv index at which any filter option was given, 0 if none. */
int cli_given_filter(const struct cli_values *v);

/* Usage error of command cmd: prints "ptcall CMD: <msg>: see 'ptcall CMD --help'" and the
 * synopsis on stderr; returns 2. */
int cli_usage_error(enum cli_cmd cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The whole help of cmd (what --help prints). */
void cli_print_help(enum cli_cmd cmd, FILE *out);
/* The synopsis lines of cmd ("usage: ptcall CMD ..."). */
void cli_print_synopsis(enum cli_cmd cmd, FILE *out);
/* docs/options.md: every command's options as Markdown. */
void cli_print_markdown(FILE *out);
/* The README's per-command summary (between its options markers). */
void cli_print_readme(FILE *out);
/* The table for the other texts made from it (cli_man.c: manual pages, bash completion). */
const struct cli_opt *cli_rows(size_t *n);
int cli_opt_in_cmd(const struct cli_opt *o, enum cli_cmd cmd);
/* CHOICE: its words (NULL-terminated); other kinds: NULL. */
const struct cli_choice *cli_opt_choices(const struct cli_opt *o);
/* "-o, --output FILE", as --help shows it. */
void cli_opt_label(const struct cli_opt *o, char *buf, size_t n);
/* The row's help with its default, range and repeat limit, as --help shows it. */
void cli_opt_help(const struct cli_opt *o, char *buf, size_t n);
/* The distinct groups of cmd's rows in the order they first appear, NULL (the command's own
 * options) first; returns how many. */
int cli_groups_of(enum cli_cmd cmd, const struct cli_group **g, int max);

/* cli_man.c: the manual page named page ("ptcall", "ptcall-record", "ptcall-db-add") in
 * roff. Returns 0, or -1 when no page has that name. */
int cli_print_man(const char *page, FILE *out);
/* The names of the pages cli_print_man writes, one a line. */
void cli_print_man_pages(FILE *out);
/* A bash completion script for ptcall: commands, each one's options, choices' words. */
void cli_print_bash_completion(FILE *out);

/* Checks the table itself (unique names per command, ranges that fit their fields,
 * defaults that parse, groups contiguous). Prints what is wrong; returns 0 or 1. */
int cli_check_table(FILE *err);

#endif
