/* libptcall-decode internals, floor 0 (docs/architecture.md): the session's data -- limits,
 * processes, threads, frames, functions, edges -- and the helpers every floor uses on it.
 * Each decoder file includes this and the headers of the floors below its own, never above. */
#ifndef PTC_DEC_CORE_H
#define PTC_DEC_CORE_H

#include <stddef.h>
#include <stdint.h>

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
/* stubent.kind of the entry and exit stubs of a MODULE_BLOCKING module (blocking.c): not
 * PTCALL_STUB_ENTRY/EXIT, so that the fast soft path leaves them to stack.c */
#define STUB_BLOCK_ENTRY 0xfdu
#define STUB_BLOCK_EXIT 0xfeu

struct stubent {
    uint32_t func;          /* global function id */
    uint8_t kind;           /* enum ptcall_stub_kind, PTC_STUB_CALL, or STUB_NONE */
    uint8_t valid;
    uint16_t site;
};

#define FR_INHERITED 0x1u
#define FR_BEFORE 0x2u      /* ptc_emit: a call entered before the thread's window began */
#define FR_BLOCKING 0x4u    /* a blocking call: its duration is its caller's blocked time */

struct frame {
    uint32_t func;
    uint32_t flags;
    uint64_t start;         /* tsc at entry (or fork) */
    uint64_t child;         /* ticks spent in callees */
};

struct module {
    uint32_t module_id, first_stub, num_stubs;
    int unloaded;
    uint32_t *fids;         /* global id of each function of the MODULE chunk, by index */
    uint32_t num_funcs;
    uint64_t lo, hi;        /* stubs_start, stubs_end */
    uint64_t *addr;         /* sorted stub addresses */
    uint32_t *ids;          /* their stub ids */
    uint64_t *by_index;     /* address of stub first_stub + i */
    uint64_t load_bias, identity;
    const char *path;       /* interned with the module's functions */
    uint8_t *sel;           /* per function, MOD_SEL_* (budget.c, modules.c); NULL: none yet */
};
#define MOD_SEL_OFF 0x1u     /* this listing said it is not traced (disarmed or counted) */
#define MOD_SEL_COUNTED 0x2u /* this listing said it is counted (MODULE_COUNTED) */
#define MOD_SEL_WAS_ON 0x4u  /* a MODULE_ARMED chunk of this listing traced it */
#define MOD_SEL_DEMOTED 0x8u /* a later one no longer did: a budget's governor demoted it */

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
    char *exe;              /* from the PROCESS chunk (NULL: not known) */
    /* windows (window.c): PROCESS_END's how (0: none yet), for threads without an exit */
    uint32_t end_how;
    /* a budget's pilot (budget.c): events begin at pilot_tsc, mid-stack (stack.c) */
    int pilot;
    uint64_t pilot_tsc;
    /* a budget's governor (budget.c): its first demotion; 0: none */
    uint64_t governor_tsc;
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
    int exit_seen;          /* its THREAD exit chunk was read (this life) */
    int ended;
    int waiting;            /* fork child: events held until the fork point is known */
    int end_pending;        /* it ended while waiting: end it once the events are replayed */
    struct ptc_ev *held;
    size_t nheld, capheld;
    uint64_t events, lost, gaps;
    uintptr_t user;
    uint32_t owner;         /* parallel decode: the worker that decodes its events */
    int assigned;           /* parallel decode: owner was chosen (par_policy.c) */
    char *name;             /* from THREAD chunks (NULL: not known) */
    char **renamed;         /* its earlier names, oldest first (THREAD_NAME chunks, a THREAD
                               exit chunk that names it otherwise) */
    uint32_t nrenamed;
    uint64_t seg_from;      /* tsc where its current mark segment began (its first event,
                               then its last mark) */
    int has_seg_from;
    /* windows (window.c, docs/trace-format.md 4.19): the thread's trace may begin
     * mid-stack (an attach, a snapshot) and end while it runs */
    uint64_t first_tsc;     /* its first timed event (this life) */
    int has_first;
    uint64_t base_child;    /* ticks in frames at depth 0 since the last call entered before
                               the window returned: that call's time in callees */
    int gapped;             /* events were lost since its window began: an exit on an empty
                               stack may be of a call entered inside it, before the gap */
    int has_window;         /* a WINDOW chunk was read */
    struct ptc_window win;
    uint64_t before;        /* calls entered before the window that returned in it */
    uint64_t still_open;    /* frames closed at the end of its trace, the thread running */
    uint64_t end_tsc;       /* when its trace ended (THREAD exit, PROCESS_END, WINDOW) */
    int has_end;
};

struct func {
    struct ptc_func_info info;
    uint64_t key_hash;
    /* record-time selection (MODULE_ARMED): in how many MODULE chunks the function was
     * listed, and in how many of them it was left disarmed; traced unless every listing
     * left it out */
    uint32_t in_modules, unarmed;
    uint32_t counted;       /* listings that said it is counted (MODULE_COUNTED, budget.c) */
    uint32_t demoted;       /* listings that traced it, then counted it (a governor) */
    uint8_t blocking;       /* a pseudo-function of a MODULE_BLOCKING module (blocking.c) */
};

struct fstat {
    uint64_t calls, total, self;
    uint64_t blocked;       /* time in its blocking callees (FR_BLOCKING frames) */
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
    int no_aggregates;      /* a view computes its own figures: skip per-function ones */
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
    uint32_t resolution_ns; /* the largest TICKER period of the trace's processes (issue 28) */
    /* file-level facts */
    char *selection;        /* the first MODULE_ARMED chunk's selection text; NULL: none */
    uint32_t backend, file_flags;
    int record_end;
    int32_t wait_status;
    /* the recording as the trace describes it (ptc_session_recording, _modules) */
    uint64_t created_ns, wall_ns, cpu_ns;
    char **argv;            /* RECORD_INFO's command line (argc strings), NULL: none */
    uint32_t argc;
    int has_info;
    struct ptc_module_desc *modlist; /* distinct (path, identity) of MODULE chunks; paths
                                        owned */
    uint32_t nmodlist, capmodlist;
    /* MODULE_REFUSED chunks, in file order: objects the runtime left untraced (chunk.c);
     * path and reason owned */
    struct ptc_refused_object *refused;
    uint32_t nrefused, caprefused;
    struct ptc_end_cause_info *causes; /* END_CAUSE chunks */
    uint32_t ncauses;
    /* BUDGET chunks, in file order (budget.c); note owned, time kept as tsc */
    struct ptc_budget_info *budgets;
    uint32_t nbudgets, capbudgets;
    int has_counted;        /* a MODULE_COUNTED chunk was read */
    int has_blocking;       /* a MODULE_BLOCKING chunk was read */
    /* SNAPSHOT chunks, in file order (window.c); why owned */
    struct ptc_snapshot_info *shots;
    uint32_t nshots, capshots;
    uint64_t timed_events, untimed_events;
    struct ptc_totals tot;
    uint64_t held_total;
    int finished;
    /* hooks */
    /* ptcall_mark labels, each once (tables.c): a mark's id is its label's index. Not one
     * per mark: a fuzzing driver marks every input with its path, and memory must not grow
     * with the trace's length when the labels repeat */
    struct mark_label {
        char *label;
        uint64_t hash;
        uint64_t marks;         /* marks with this label (MARK chunks, marked COUNTS) */
        uint64_t counted_calls; /* counting mode: calls in the segments they closed */
        /* traces of events: the segments these marks closed on their threads (since the
         * thread's previous mark or first event), timed ones only; ns, or ticks without a
         * time base */
        uint64_t segments, seg_total, seg_min, seg_max;
    } *marks;
    uint32_t nmarks, capmarks;
    uint32_t *markslots;    /* open addressing over marks: id + 1, 0 = empty */
    uint32_t nmarkslots;    /* a power of two, at least twice nmarks */
    ptc_counts_hook counts_hook; /* COUNTS chunks (modules.c) */
    void *counts_hook_ctx;
    void (*read_hook)(void *ctx, const void *data, size_t n); /* file.c: the file's bytes */
    void *read_hook_ctx;
    ptc_call_hook hook;
    void *hook_ctx;
    void (*end_hook)(void *ctx, uint32_t pid, uint32_t tid, uintptr_t *user);
    void *end_hook_ctx;
    ptc_hit_hook hit_hook;
    void *hit_ctx;
    int hits_only;          /* the hit hook is all that is wanted: no stacks */
    struct handler handlers[PTC_MAX_HANDLERS];
    int nhandlers;
    /* parallel decode (par_policy.c, par.c): this session is worker par_k of par_n (0 of 0
     * when serial); every worker reads every chunk but decodes the events of its own threads
     * only */
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

#endif
