/* libptcall-decode internals (not installed). */
#ifndef PTC_DECODE_INTERNAL_H
#define PTC_DECODE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ptc_chunk_write.h"
#include "ptcall/decode.h"
#include "ptcall/map_format.h"

#define PTC_MAX_CHUNK_PAYLOAD (1u << 30)   /* larger payloads are corrupt */
#define PTC_MAX_STUBS_PER_PROC (1u << 24)  /* per-process stub ids beyond are corrupt */
#define PTC_MAX_DEPTH (1u << 22)           /* deeper stacks are treated as broken */
#define PTC_FORK_BUFFER_MAX (1u << 22)     /* events held, over all fork children */
#define PTC_MAX_HANDLERS 8
#define PTC_PAR_MAX 16                     /* worker threads of a parallel decode */

#if defined(__GNUC__)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define PTC_INLINE inline __attribute__((always_inline))
#define PTC_NOINLINE __attribute__((noinline))
#else
#define PTC_INLINE inline
#define PTC_NOINLINE
#define likely(x) (x)
#define unlikely(x) (x)
#endif

#define STUB_NONE 0xffu     /* stubent.kind of ids no module defines */

struct stubent {
    uint32_t func;          /* global function id */
    uint8_t kind;           /* enum ptcall_stub_kind, PTC_STUB_CALL, or STUB_NONE */
    uint8_t valid;
    uint16_t site;
};

#define FR_INHERITED 0x1u

struct frame {
    uint32_t func;
    uint32_t flags;
    uint64_t start;         /* tsc at entry (or fork) */
    uint64_t child;         /* ticks spent in callees */
};

struct module {
    uint32_t module_id, first_stub, num_stubs;
    int unloaded;
    uint64_t lo, hi;        /* stubs_start, stubs_end */
    uint64_t *addr;         /* sorted stub addresses */
    uint32_t *ids;          /* their stub ids */
};

/* A link in a chained hash table: processes are keyed by pid, threads by pid << 32 | tid.
 * It is the first member of struct proc and struct thread, so that one lookup and one
 * growth policy serve both tables. */
struct hlink {
    struct hlink *next;
    uint64_t key;
};

struct htable {
    struct hlink **bucket;
    uint32_t cap, n;
};

struct thread;

struct proc {
    struct hlink link;      /* first: in the session's process table */
    uint32_t pid, ppid, how, parent_tid;
    int have_process;       /* a PROCESS chunk was seen */
    int ended;
    struct stubent *stubs;
    uint32_t nstubs;
    struct module *mods;
    uint32_t nmods, capmods;
    int has_tb;
    struct ptc_timebase tb;
    uint32_t next_seq;      /* process-level stream (tid 0) */
    int seq_seen;
    struct thread *threads; /* list of this process's threads */
    /* fork: stack snapshot from the parent's FORK record, until the child starts */
    struct frame *snap;
    uint32_t snap_n;
    int snap_valid;
};

struct thread {
    struct hlink link;      /* first: in the session's thread table */
    uint32_t pid, tid;
    struct proc *proc;
    struct thread *pnext;   /* in proc->threads */
    struct frame *frames;
    uint32_t depth, cap;
    uint32_t *active;       /* per function: activations on this stack */
    uint32_t nactive;
    uint64_t last;          /* tsc of the last event */
    uint32_t next_seq;
    int seq_seen;
    int started;            /* has been fed */
    int ended;
    int waiting;            /* fork child: events held until the fork point is known */
    int end_pending;        /* it ended while waiting: end it once the events are replayed */
    struct ptc_ev *held;
    size_t nheld, capheld;
    uint64_t events, lost, gaps;
    uintptr_t user;
    uint32_t owner;         /* parallel decode: the worker that decodes its events */
};

struct func {
    struct ptc_func_info info;
    uint64_t key_hash;
};

struct fstat {
    uint64_t calls, total, self;
};

/* Edge cache of one function as a caller: the callee it last called + 1 (0: none), that
 * edge's slot in the edge table, and calls on it not yet added there. A call on the cached
 * edge touches only this entry, not the edge table. Kept per function rather than per frame
 * so that it survives returns: a loop calling one helper, or a recursive function, hits it
 * on every call. Flushed into the table when it changes and before the table is rehashed;
 * ptc_session_edges() adds what is pending. */
struct ecache {
    uint32_t callee1, slot;
    uint64_t pending;
};

struct edge_slot {
    uint64_t key;           /* caller << 32 | callee; UINT64_MAX empty */
    uint64_t count;
};

struct handler {
    uint16_t first, last;
    ptc_chunk_fn fn;
    ptc_finish_fn finish;
    void *ctx;
};

struct ptc_session {
    /* the first PROCESS chunk: where `calls` puts time zero */
    uint32_t origin_pid;
    int have_origin;
    uint64_t origin_tsc;
    /* functions */
    struct func *funcs;
    struct fstat *fstats;
    struct ecache *ecache;  /* per function, as fstats */
    uint32_t nfuncs, capfuncs;
    uint32_t *fhash;        /* open addressing: func id + 1, 0 empty */
    uint32_t fhash_cap;
    /* edges */
    struct edge_slot *edges; /* open addressing */
    uint32_t ecap, nedges;
    /* processes and threads */
    struct htable procs, threads;
    /* time */
    int has_tb;
    struct ptc_timebase tb;
    /* file-level facts */
    uint32_t backend, file_flags;
    int record_end;
    int32_t wait_status;
    uint64_t timed_events, untimed_events;
    struct ptc_totals tot;
    uint64_t held_total;
    int finished;
    /* hooks */
    ptc_call_hook hook;
    void *hook_ctx;
    void (*end_hook)(void *ctx, uint32_t pid, uint32_t tid, uintptr_t *user);
    void *end_hook_ctx;
    struct handler handlers[PTC_MAX_HANDLERS];
    int nhandlers;
    /* parallel decode (par.c): this session is worker par_k of par_n (0 of 0 when serial);
     * every worker reads every chunk but decodes the events of its own threads only */
    uint32_t par_k, par_n;
    uint64_t par_load[PTC_PAR_MAX]; /* event bytes of the threads given to each worker */
    uint32_t par_nthr[PTC_PAR_MAX]; /* and their number */
    const volatile int *par_stop;   /* set when a worker failed: the others stop early */
    uint32_t par_used;              /* workers that decoded events of this session (0: serial) */
    /* current chunk, for messages */
    const char *src_name;
    uint64_t chunk_index, chunk_offset;
    char msg[512];
};

/* The entries of a table, bucket by bucket and newest first in a bucket: the order in
 * which lossy threads are listed. */
#define PTC_HTABLE_EACH(tab, type, var)                                                     \
    for (uint32_t var##_b = 0; var##_b < (tab)->cap; var##_b++)                              \
        for (type *var = (type *)(tab)->bucket[var##_b]; var;                              \
             var = (type *)var->link.next)

static inline uint64_t ptc_ticks_to_ns(const struct ptc_timebase *tb, uint64_t t)
{
    unsigned sh = tb->time_shift;
    uint64_t q = sh ? t >> sh : t;
    uint64_t r = sh ? t & ((1ULL << sh) - 1) : 0;
    return q * tb->time_mult + ((r * tb->time_mult) >> sh);
}

/* A TSC value of process p on the time scale of struct ptc_call_event's time. */
static inline uint64_t ptc_event_time(const struct ptc_session *s, const struct proc *p,
                                      uint64_t tsc)
{
    if (p->has_tb)
        return p->tb.time_zero + ptc_ticks_to_ns(&p->tb, tsc);
    if (s->has_tb)
        return s->tb.time_zero + ptc_ticks_to_ns(&s->tb, tsc);
    return tsc;
}

/* Sets the session's error to "out of memory"; returns -PTC_E_NOMEM. */
static inline int ptc_nomem(struct ptc_session *s)
{
    return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
}

/* tables.c: processes, threads and functions (get = find or add; NULL when out of memory) */
struct proc *ptc_proc_find(const struct ptc_session *s, uint32_t pid);
struct proc *ptc_proc_get(struct ptc_session *s, uint32_t pid);
struct thread *ptc_thread_find(const struct ptc_session *s, uint32_t pid, uint32_t tid);
struct thread *ptc_thread_get(struct ptc_session *s, uint32_t pid, uint32_t tid);
/* Returns the id of (module, linkage name, file), adding it; UINT32_MAX if out of memory. */
uint32_t ptc_func_intern(struct ptc_session *s, const char *module, const char *name,
                         const char *linkage, const char *file, uint32_t line);
void ptc_tables_free(struct ptc_session *s);

/* modules.c */
/* Frees p's module and stub tables (a new life of the process, or its end). */
void ptc_proc_drop_modules(struct proc *p);
/* A fork child without module chunks of its own resolves stubs with its parent's tables. */
int ptc_proc_inherit_modules(struct ptc_session *s, struct proc *c, const struct proc *pp);

/* stack.c: shadow stacks and call accounting */
/* Calls the call hook (s->hook, which must be set) with one event of t. */
PTC_NOINLINE void ptc_emit(struct ptc_session *s, struct thread *t, uint8_t kind, uint8_t how,
              uint32_t depth, uint32_t func, uint64_t dur, uint64_t count, int inherited);
/* Starts t's stack from a copy of n frames inherited across fork. Returns 0 or -PTC_E_*. */
int ptc_thread_start_from(struct ptc_session *s, struct thread *t, const struct frame *fr,
                          uint32_t n);
int ptc_thread_feed(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n);
void ptc_thread_end(struct ptc_session *s, struct thread *t);
/* Counts one call on the edge caller -> callee when it is not the caller's cached edge,
 * and makes it the cached one. Returns 0 or -PTC_E_NOMEM. */
PTC_NOINLINE int ptc_edge_count(struct ptc_session *s, uint32_t caller, uint32_t callee);
/* Applies one stub hit of t at time t->last (any kind, any stack state; bad ids are gaps).
 * Does not count it in the event totals. Returns 0 or -PTC_E_*. */
PTC_NOINLINE int ptc_thread_hit(struct ptc_session *s, struct thread *t, uint32_t id);
/* Soft front-end fast path: applies the records at *pp directly to a started thread that
 * is not waiting for a fork point, while they are stub hits; stops before a control record
 * (LOSS, FORK) or an undecodable one (and the hooked loop before any value longer than 2
 * bytes), leaving *pp there. Adds the hits to *records and the deltas to *tsc.
 * Returns 0 or -PTC_E_*. soft_fast.c specialises it for sessions without a call hook;
 * ptc_thread_soft_hooked() is the general loop (every hit through ptc_thread_hit's code),
 * which the hook needs and which the tests compare the specialised loop with. */
int ptc_thread_soft_fast(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                         const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records);
int ptc_thread_soft_hooked(struct ptc_session *s, struct thread *t, const uint8_t **pp,
                           const uint8_t *end, int timed, uint64_t *tsc, uint64_t *records);
/* Counts a batch of n decoded soft records of thread t (both soft loops end with it). */
static inline void ptc_count_batch(struct ptc_session *s, struct thread *t, uint64_t n, int timed,
                                   uint64_t *records)
{
    *records += n;
    t->events += n;
    s->tot.events += n;
    if (timed)
        s->timed_events += n;
    else
        s->untimed_events += n;
}

/* Counts n whole-call records (PTC_STUB_CALL) of thread t: each stands for an exit too, one
 * event more than ptc_count_batch counted for it. */
static inline void ptc_count_whole(struct ptc_session *s, struct thread *t, uint64_t n)
{
    s->tot.whole_calls += n;
    s->tot.events += n;
    t->events += n;
}

static inline int ptc_thread_ready(const struct thread *t)
{
    return t->started && !t->ended && !t->waiting;
}

/* fork.c: fork points, parents' stack snapshots, and events held until the fork point */
/* First events of t: a fork child's first thread starts from its parent's stack, or
 * waits for it. Returns 0 or -PTC_E_*. */
int ptc_thread_start(struct ptc_session *s, struct thread *t);
/* Holds events of a thread that waits for its fork point. Returns 0 or -PTC_E_*. */
int ptc_fork_hold(struct ptc_session *s, struct thread *t, const struct ptc_ev *ev, size_t n);
/* The fork point of child pid is known: t is the forking thread. Returns 0 or -PTC_E_*. */
int ptc_fork_point(struct ptc_session *s, struct thread *t, uint32_t child_pid, uint64_t tsc);
/* Stops waiting for a fork point that will not come: replays from an empty stack. */
int ptc_fork_give_up(struct ptc_session *s, struct thread *t);

/* chunk.c */
int ptc_session_chunk(struct ptc_session *s, const struct ptc_chunk *c);

/* the CRC-32 of a chunk payload: ptc_crc32() */
#include "ptc_crc.h"

/* reader.c: after an error, whether ptc_reader_next() may be called again */
int ptc_reader_can_continue(const struct ptc_reader *r);

/* soft.c */
int ptc_soft_chunk(struct ptc_session *s, const struct ptc_chunk *c);
/* Decodes every chunk of r (opened with result rc) into s, then finishes s; closes r. */
int ptc_decode_reader(struct ptc_session *s, struct ptc_reader *r, int rc, unsigned flags,
                      const char *name);

/* reader.c: chunks for which skip(ctx, header) returns 1 are handed out without their CRC
 * checked (a parallel worker leaves other workers' chunks to them) */
void ptc_reader_set_crc_skip(struct ptc_reader *r,
                             int (*skip)(void *ctx, const struct ptc_chunk_header *h), void *ctx);

/* par.c: parallel decode by threads */
/* Whether this session counts things that belong to no thread (process-level chunks):
 * always when serial, only worker 0 of a parallel decode. */
static inline int ptc_par_primary(const struct ptc_session *s) { return s->par_k == 0; }
/* Whether this session decodes the events of thread (pid, tid): 1, 0, or -PTC_E_NOMEM. */
int ptc_par_owns(struct ptc_session *s, uint32_t pid, uint32_t tid);
/* Before a chunk is processed in a parallel worker: 1 to process it, 0 to skip it (another
 * worker's thread), or -PTC_E_* to give up the parallel decode (what it cannot split). */
int ptc_par_filter(struct ptc_session *s, const struct ptc_chunk *c);
/* The worker a new thread goes to (the least loaded so far). */
uint32_t ptc_par_assign(struct ptc_session *s);
/* Adds count calls on caller -> callee (merging workers). Returns 0 or -PTC_E_NOMEM. */
int ptc_edge_add_count(struct ptc_session *s, uint32_t caller, uint32_t callee, uint64_t count);

#endif
