/* What cov run --watch's files share (cov_watch_dirs.c: the entries and the directories;
 * cov_watch_file.c: record 11, writing and resuming; cov_watch.c: measuring, the budget, the
 * loop). Nobody else includes it. */
#ifndef PTC_COV_WATCH_INT_H
#define PTC_COV_WATCH_INT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cov.h"

/* An entry: seen and to be measured, measured, or gone from its directory. */
enum { E_PENDING = 0, E_MEASURED = 1, E_GONE = 2 };

struct went {
    char *name;               /* stored name: "INST/queue/id:...", "DIR/FILE" */
    char *path;
    uint32_t dir;             /* index into w->dirs */
    uint8_t kind, state;
    uint8_t written;          /* its result is in the file on disk */
    uint64_t size;
    int64_t mtime_ms;         /* Unix ms */
    int64_t gen;              /* its instance's start_time (s) when seen; 0: unknown/corpus */
    uint32_t input;           /* index into d->inputs when measured */
    uint64_t seen_scan;       /* the last scan of its directory that listed it */
};

struct winst {
    char *rel, *path;         /* "" and OUTDIR for the one-instance layout */
    uint32_t outdir;          /* index into o->afl */
    int64_t start_s, last_update_s, run_s;
    long pid;
    int present, stopped;
};

struct wdir {
    char *path, *prefix;      /* prefix: what goes before the file name in stored names */
    uint8_t kind;
    int inst;                 /* index into w->insts, -1: a corpus directory */
    int wd;                   /* inotify watch, -1: none */
    int present, dirty, said_missing;
};

struct watch {
    const struct cov_watch_opts *o;
    struct cov_data *d;
    struct cov_runner *r;
    struct went *e;
    size_t ne, cap_e;
    uint32_t *hash;           /* open addressing over e by name; UINT32_MAX: empty */
    size_t hcap;
    struct winst *insts;
    size_t ninst;
    struct wdir *dirs;
    size_t ndirs;
    int ifd;                  /* inotify, -1: polling */
    uint64_t scan;
    size_t pending, measured, replaced, resumed;
    int64_t corpus_t0;        /* earliest corpus file time: corpus campaign times start there */
    /* coverage so far, for the plateau */
    uint8_t *fseen, *bseen;
    int64_t last_growth_ms;   /* file time of the last input adding a function or block */
    int plateau;
    /* the output */
    dev_t out_dev;
    ino_t out_ino;
    int out_known;
    char *out_path;           /* where it writes (another name after a replaced output) */
    int dirty;
    double *lags;             /* seconds, file time to the write that held its result */
    size_t nlags, cap_lags;
    int64_t started_ms;
};

/* The file a watch resumes from (cov_watch_resume). */
struct resume {
    struct cov_data old;
};

/* cov_watch_dirs.c */
int64_t cov_watch_unix_ms(void);
/* The entry named name, or -1. */
int64_t cov_watch_find(const struct watch *w, const char *name);
/* A new entry (name and path copied; path may be NULL). Returns its index, or -ENOMEM. */
int64_t cov_watch_add_entry(struct watch *w, const char *name, const char *path);
/* A directory to list (kind: of its entries; inst: its instance, -1 a corpus). 0 or -ENOMEM. */
int cov_watch_add_dir(struct watch *w, const char *path, const char *prefix, unsigned kind,
                      int inst);
/* New instances, the instances' states, then the directories (all, or those with events). */
int cov_watch_scan_all(struct watch *w, int all);
/* Drains inotify: the directories with events marked dirty. 1 when any event came. */
int cov_watch_drain(struct watch *w);

/* cov_watch_file.c */
/* Writes the .ptcov (live: record 11 says so), never over a file another process put there;
 * *failed set when it could not. */
void cov_watch_write(struct watch *w, int live, int *failed);
/* Moves a resumed file's inputs into the watch, its record 11 into the entries. */
int cov_watch_take_resumed(struct watch *w, struct resume *rs);

#endif
