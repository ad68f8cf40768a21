/* The timeline of a trace (docs/timeline-index.md): an index built once by one streaming
 * pass (per thread, its event chunks' offsets and times, the call stack at the start of each,
 * and per chunk and depth a summary of the calls that returned in it), then windows decoded
 * from it at a level of detail: only the chunks that overlap the window, each thread started
 * from the stack its first chunk begins with. Soft-backend traces with times only. */
#ifndef PTCALL_TIMELINE_H
#define PTCALL_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#define PTC_TL_VERSION 2     /* of the index file (docs/timeline-index.md) */
#define PTC_TL_SUM_DEPTH 32  /* depths summarised per chunk; deeper calls only decoded */

struct ptc_tl;

/* Builds the index of the trace at trace into the file out (written whole through a
 * temporary file in its directory renamed over it). 0, or -PTC_E_* with err set (one line). */
int ptc_tl_build(const char *trace, const char *out, char *err, size_t n);
/* Loads an index file; 0, or -PTC_E_* with err set (-PTC_E_VERSION: another version, build it
 * again). */
int ptc_tl_load(const char *path, struct ptc_tl **out, char *err, size_t n);
void ptc_tl_free(struct ptc_tl *x);
/* The bytes a loaded index holds in memory (its arrays): what a cache of indexes counts. */
uint64_t ptc_tl_bytes(const struct ptc_tl *x);

struct ptc_tl_thread_info {
    uint32_t pid, tid;
    const char *name;       /* "" when the trace does not name it */
    const char *process;    /* the process's executable, "" when not known */
    uint64_t first, last;   /* ns: its first chunk's start, its last event */
    uint64_t chunks, calls;
};
uint32_t ptc_tl_num_threads(const struct ptc_tl *x);
void ptc_tl_thread(const struct ptc_tl *x, uint32_t i, struct ptc_tl_thread_info *out);
/* The run's span in ns (first chunk start, last event). */
void ptc_tl_span(const struct ptc_tl *x, uint64_t *t0, uint64_t *t1);
uint32_t ptc_tl_num_funcs(const struct ptc_tl *x);
/* Function id's name, source file ("" unknown) and line (0 unknown). */
void ptc_tl_func(const struct ptc_tl *x, uint32_t id, const char **name, const char **file,
                 uint32_t *line);
/* Whether function id stands for calls into a blocking function of the C library (the
 * runtime's module "[blocking]", trace format 2.6): its calls are the thread blocked. */
int ptc_tl_func_blocking(const struct ptc_tl *x, uint32_t id);
struct ptc_tl_mark {
    uint64_t time;
    uint32_t thread;        /* index into the threads */
    uint32_t label;         /* ptc_tl_mark_label */
};
uint64_t ptc_tl_num_marks(const struct ptc_tl *x);
const struct ptc_tl_mark *ptc_tl_marks(const struct ptc_tl *x); /* by time */
const char *ptc_tl_mark_label(const struct ptc_tl *x, uint32_t label);

/* One drawable item of a window: a call (count 1) or a summary block of calls narrower than
 * a pixel (count calls, busy ns of them), at one depth of one thread. */
#define PTC_TL_CLIP_LEFT 0x1u  /* began before the window (start is the window's) */
#define PTC_TL_CLIP_RIGHT 0x2u /* still open at the window's end (end is the window's) */
#define PTC_TL_BLOCK 0x4u      /* a summary block */
#define PTC_TL_BLOCKED 0x8u    /* a call of a blocking function (a block: its dominant one) */
struct ptc_tl_item {
    uint64_t start, end;    /* ns, clipped to the window */
    uint64_t count, busy;   /* calls held; ns inside calls */
    uint32_t func;          /* the call's function; a block's dominant one (most time) */
    uint32_t depth;
    uint32_t flags;         /* PTC_TL_* */
};
typedef int (*ptc_tl_emit_fn)(void *ctx, uint32_t thread, const struct ptc_tl_item *it);
struct ptc_tl_query {
    uint64_t t0, t1;        /* ns, t0 < t1 */
    uint32_t px;            /* pixels across the window (1 .. 100000) */
    const uint8_t *threads; /* per thread index, nonzero: wanted (NULL: all) */
    uint64_t decode_budget; /* event bytes above which a window is answered from the index's
                               summaries, whatever its width (0: the default, 4 MiB): the
                               time and memory of an answer do not grow with the trace */
};
/* Decodes the window q of the trace at trace (the file the index was built from) and hands
 * its items, per thread in time order per depth, to fn. *summarised is set when it was
 * answered from the index alone. 0, or -PTC_E_* with err set. */
int ptc_tl_window(const struct ptc_tl *x, const char *trace, const struct ptc_tl_query *q,
                  ptc_tl_emit_fn fn, void *ctx, int *summarised, char *err, size_t n);

/* One call of thread at depth that is running at time t, as the decoder sees it. Its
 * duration, self time and calls made are exact however long it is: the chunks in its middle
 * are counted from the index's summaries (its callees' calls and time), only its first
 * chunks (up to the decode budget) and its last one are decoded. Its callees by function
 * are those of the decoded part: children_calls of calls are broken down. */
#define PTC_TL_MAX_CHILDREN 64
struct ptc_tl_call {
    uint32_t func, depth;
    uint64_t start, end;    /* ns */
    uint64_t dur, self;     /* ns */
    int open;               /* still open at its thread's trace end (end, dur lower bounds) */
    int blocking;           /* a call of a blocking function (ptc_tl_func_blocking) */
    uint64_t calls;         /* calls it made */
    uint64_t children_calls; /* of those, the calls in children (the decoded part) */
    uint32_t nchildren;     /* distinct callees, most time first (at most MAX_CHILDREN) */
    struct {
        uint32_t func;
        uint64_t calls, total;
    } children[PTC_TL_MAX_CHILDREN];
};
/* 0 with *out filled, 1 when no call of that thread runs at t at depth, or -PTC_E_*.
 * budget: event bytes decoded at most besides the call's last chunk (0: 4 MiB). */
int ptc_tl_call_at(const struct ptc_tl *x, const char *trace, uint32_t thread, uint64_t t,
                   uint32_t depth, uint64_t budget, struct ptc_tl_call *out, char *err,
                   size_t n);

#endif
