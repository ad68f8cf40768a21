/* Fuzzing campaigns in the runs database (schema version 4, docs/db.md, *Campaigns*): a
 * campaign is a name and a program (and its build); each `ptcall cov add` of a .ptcov is one
 * part of it (one machine or one set of instances), stored in one transaction. What is stored
 * is what the campaign views read (docs/web.md): per part and instance the coverage curve as
 * the points where it grew, per function and block its first reach, and the campaign's
 * totals and union curve, recomputed in the transaction that adds a part. tools/ hands the
 * figures in (db/ reads no .ptcov: it uses no other floor). */
#ifndef PTCALL_DB_CAMPAIGN_H
#define PTCALL_DB_CAMPAIGN_H

#include <stddef.h>
#include <stdint.h>

#include "db_backend.h"
#include "db_ingest.h"

/* A point of a coverage curve: at campaign time t_ms, functions (and blocks, -1 when the
 * build counts none) reached by then. Curves hold the points where coverage grew. */
struct db_cpoint {
    int64_t t_ms;
    int64_t functions, blocks;
};

struct db_cinst_in {
    const char *name;          /* "default", an AFL++ -M/-S name, or the corpus */
    const char *host;          /* the machine that ran it */
    int64_t inputs, crashes, hangs, functions, blocks;  /* blocks -1: none counted */
    int64_t last_new_ms;       /* -1: no input reached anything */
    const struct db_cpoint *points;
    size_t npoints;
};

/* A function's first reach in this part: its key (as the runs' functions dictionary keys
 * functions: module base name, linkage name, source file) and who reached it first. */
struct db_cfirst {
    const char *module, *linkage_name, *file, *name;
    int64_t line;
    int64_t t_ms;
    uint32_t instance;         /* index into the part's instances */
    const char *input;         /* its name */
};
struct db_cbfirst {
    int64_t block;             /* global block index of the build */
    int64_t t_ms;
};

/* A row of a part's frontier (docs/db.md, *The frontier*): a never-reached function that
 * reached functions call, its reached callers, and the never-reached code behind it. */
struct db_cfront {
    const char *linkage_name, *name, *file;
    int64_t line;
    int by_pointer_only;       /* called only through pointers of its type */
    const char *const *callers; /* their names */
    size_t ncallers;
    int64_t functions, insns, blocks, lines;  /* behind it; lines -1: the build counts none */
};

struct db_campaign_in {
    const char *name;          /* the campaign */
    const char *program;       /* base name of the target's main module */
    const char *build_id;      /* the build: main module's build id, or its map identity */
    const char *content_hash;  /* the part: XXH3-128 of the .ptcov, as runs are identified */
    const char *file;          /* the .ptcov as given */
    const char *host;          /* the part's host (several: the merged file's first) */
    const struct db_tag *tags;
    size_t ntags;
    int64_t added_ns;
    int64_t functions_total, blocks_total;  /* blocks_total -1: the build counts none */
    int64_t campaign_ms;       /* -1 unknown */
    int64_t inputs, crashes, hangs, functions, blocks, last_new_ms;
    const struct db_cinst_in *inst;
    size_t ninst;
    const struct db_cpoint *points; /* the part's union curve */
    size_t npoints;
    struct db_cfirst *firsts;  /* sorted here (by key) */
    size_t nfirsts;
    const struct db_cbfirst *bfirsts;
    size_t nbfirsts;
    /* reachability, when the .ptcov has the call graph (has_reach 0: none stored) */
    int has_reach;
    int indirect_calls;        /* calls through pointers followed (every module had one) */
    int64_t unreachable, reachable_not_reached;
    int64_t frontier_total;    /* the frontier's rows, of which front holds the first */
    const struct db_cfront *front;
    size_t nfront;
};

/* Why a part was refused (the message is in d->err): */
#define DB_CAMP_STORED 1       /* the same content is a part already (*existing: its id) */
#define DB_CAMP_PROGRAM 2      /* the campaign is of another program */
#define DB_CAMP_BUILD 3        /* ... of another build */

/* Stores one part: creates the campaign when new, checks program and build when not.
 * Returns 0 with *campaign_id and *part_id, -DB_E_CONSTRAINT with *why one of DB_CAMP_*, or
 * -DB_E_*. */
int db_campaign_add(struct db *d, struct db_campaign_in *c, int64_t *campaign_id,
                    int64_t *part_id, int64_t *existing, int *why);

/* ---- reading (db_campaign_query.c) ------------------------------------------------------ */

struct db_campaign {
    int64_t id;
    char *name, *program, *build_id;
    struct db_tag_out *tags;
    size_t ntags;
    char **hosts;
    size_t nhosts;
    int64_t parts, instances, inputs, crashes, hangs;
    int64_t functions_reached, functions_total;
    int64_t blocks_reached, blocks_total;  /* -1: no blocks */
    int64_t campaign_ms, last_new_ms;      /* -1: unknown */
    int64_t added_ns;
};

/* Which campaigns: tags "K=V" or "K", program globs, ids (NULL: all). */
struct db_cfilter {
    const char *const *tags;
    int ntags;
    const char *const *programs;
    int nprograms;
    const int64_t *ids;
    size_t nids;
};
/* The campaigns f keeps, by id. 0 or -DB_E_*. */
int db_campaigns_get(struct db *d, const struct db_cfilter *f, struct db_campaign **out,
                     size_t *n);
void db_campaigns_free(struct db_campaign *c, size_t n);

struct db_ccurve {
    char *name, *host;         /* instance curves: both; host curves: host only */
    struct db_cpoint *points;
    size_t npoints, cap;
};
struct db_cfunc {
    int64_t function_id;
    char *name, *module, *file;
    int64_t line, t_ms;
    char *instance, *host, *input;
};
struct db_campaign_detail {
    struct db_cpoint *curve;   /* the union of all parts */
    size_t ncurve;
    struct db_ccurve *instances, *hosts;
    size_t ninstances, nhosts;
    struct db_cfunc *funcs;    /* first reached first; top of them */
    size_t nfuncs, more;
};
/* Campaign id's curves and reached functions (top: at most so many; 0 all). */
int db_campaign_detail(struct db *d, int64_t id, size_t top, struct db_campaign_detail *out);
void db_campaign_detail_free(struct db_campaign_detail *x);
/* The curve of first reaches of campaign's parts (of host's parts only, when not NULL):
 * functions, and blocks when blocks is set (else -1), at each time coverage grew. */
int db_campaign_firsts_curve(struct db *d, int64_t campaign, const char *host, int blocks,
                             struct db_cpoint **out, size_t *n);
/* Each of hosts[0..nhosts)'s curve (hosts[k].host names it), from one pass over the
 * campaign's first reaches. */
struct db_ccurve;
int db_campaign_host_curves(struct db *d, int64_t campaign, int blocks, struct db_ccurve *hosts,
                            size_t nhosts);
/* The frontier the API shows (db_campaign_frontier.c): that of the campaign's latest part
 * (by added_ns, then id) that has one. */
struct db_cfront_out {
    char *linkage_name, *name, *file;
    int64_t line;
    int by_pointer_only;
    char **callers;
    size_t ncallers;
    int64_t functions, insns, blocks, lines;  /* lines -1: none counted */
};
struct db_cfrontier {
    int found;                 /* 0: no part of the campaign has one */
    int64_t part, added_ns;
    char *host;
    int indirect_calls;
    int64_t unreachable, reachable_not_reached, total;
    struct db_cfront_out *rows;
    size_t nrows;
};
int db_campaign_frontier(struct db *d, int64_t campaign, struct db_cfrontier *out);
void db_campaign_frontier_free(struct db_cfrontier *x);
/* Inside db_campaign_add's transaction: stores c's reachability as part part's. */
int db_campaign_reach_write(struct db *d, int64_t campaign, int64_t part,
                            const struct db_campaign_in *c);
/* Campaign id's union curve alone (as the last add stored it). */
int db_campaign_curve(struct db *d, int64_t id, struct db_cpoint **out, size_t *n);

#endif
