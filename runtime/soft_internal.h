/* libptcall's software backend (docs/runtime.md): what its files share.
 *
 * Inactive unless PTCALL_BACKEND=soft and PTCALL_OUTPUT are set: then registration does
 * nothing and the stubs stay `ret`. Active: each registered object's stubs are patched to
 * call a handler (soft_handler.S) that appends the raw stub return address [+ TSC] to a
 * per-thread buffer; full buffers go to one drain thread per process, which turns addresses
 * into dense stub ids and writes PTC_CHUNK_SOFT_EVENTS chunks.
 *
 * Nothing on the event path allocates with malloc or takes a lock: buffers are mmap'd per
 * thread, handed to the drain through a lock-free stack, and handed back with a per-thread
 * futex. Locks (all plain mutexes, order reg_mu < drain_mu < thr_mu < proc_mu) protect only
 * registration, thread creation/exit, the drain's work and process-level chunk writes.
 */
#ifndef PTC_SOFT_INTERNAL_H
#define PTC_SOFT_INTERNAL_H

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "ptc_select.h"
#include "ptcall/map_format.h"
#include "ptcall/trace_format.h"

/* The library's ABI: registration and the interposed libc functions. */
#define PTC_API __attribute__((visibility("default")))

/* Everything below is internal to the library: hidden declarations give direct calls and
 * PC-relative data access across its files, as `static` did within one. */
#pragma GCC visibility push(hidden)

/* ---- TLS shared with soft_handler.S -------------------------------------------------- */

struct thread;
struct object;
struct ptc_tls {
    uintptr_t pos;      /* next record (offset 0, used by the handler) */
    uintptr_t end;      /* end of the current buffer (offset 8) */
    struct thread *ts;  /* this thread's state, or NULL */
    int state;          /* TS_* */
};
enum { TS_NEW = 0, TS_ACTIVE = 1, TS_EXITED = 2, TS_IGNORE = 3, TS_INIT = 4 };

extern __thread struct ptc_tls ptc_tls __attribute__((tls_model("initial-exec")));
extern uint64_t ptc_xsave_size; /* the slow path's register save area (soft_state.c) */
extern uint8_t ptc_use_xsave;   /* xsave64 (else fxsave64) */
void xsave_init(void);          /* sets both from CPUID */
/* The C library's function name, looked up once into *cache (soft_state.c): an interposed
 * call may come before the runtime's constructor (a library's static constructors run first). */
void *libc_fn(void *_Atomic *cache, const char *name);
/* soft_state.c: a new recording's counters (a fork child's, an attach's) start at zero */
void recording_counters_reset(void);

void ptc_soft_handler(void);
void ptc_soft_handler_timed(void);
void ptc_soft_handler_id(void);
void ptc_soft_handler_id_timed(void);
void ptc_soft_handler_ticker(void);    /* timed, the time loaded from ptc_clock */
void ptc_soft_handler_id_ticker(void);
void ptc_soft_slow(uintptr_t ret, uint64_t tsc);
/* soft_fastpath.c: a fast id handler for PTCALL_MAP_F_SCRATCH_R10 units, or NULL (then the
 * shared id handler serves them) */
void *fastpath_build(int timed);
/* soft_thread.c: the %fs offsets of ptc_tls.pos and ptc_tls.end, for generated code; -1 if
 * out of disp32 */
int tls_offsets(int32_t *pos, int32_t *end);
void ptc_fast_slow_id(void);

/* soft_tramp.c: call-site trampolines (untimed, PTCALL_MAP_F_SCRATCH_R10 units). An armed
 * sled becomes `jmp` to the trampoline of its sites-table entry, which stores the record and
 * jumps back behind the sled. Trampoline i of a table sits at base + i * TRAMP_SIZE; one
 * whose first byte is 0 was not made (its site calls its stub instead). */
#define TRAMP_SIZE 64u
struct tramps {
    uint64_t base, n, made;
};
/* Per stub slot of an object being armed (soft_register.c): what its call sites become. */
#define SLOT_TRAMP 0x1u /* may jump to a call-site trampoline */
#define SLOT_QUIET 0x2u /* stays disarmed: a leaf's exit, whose call its entry records whole */
#define SLOT_OFF 0x4u   /* stays disarmed: its function was not chosen (PTCALL_ONLY/SKIP) */
#define SLOT_COUNT 0x8u /* with SLOT_OFF, an entry stub's sites: a counting trampoline
                           (counted and traced in one run, soft_mixed.c) */
/* Builds the trampolines of the sites table [sites_start, sites_end) of object o, for the
 * sites whose stub slot has SLOT_TRAMP in slot_use[slot], in reach of the sites. 0, or -1
 * (none made). */
int tramps_build(const struct object *o, const uint8_t *slot_use, uint64_t sites_start,
                 uint64_t sites_end, struct tramps *out);
/* The address of trampoline i, or 0 */
uint64_t tramp_at(const struct tramps *t, uint64_t i);
/* From a signal handler, with the interrupted context: a thread stopped inside a trampoline's
 * reservation restarts that trampoline when the handler returns. Async-signal-safe. */
void tramp_restart(void *ucontext);
uint64_t tramp_restarts(void); /* how many times tramp_restart moved a thread back */
void tramp_restarts_reset(void); /* a fork child counts its own */
/* soft_resume.c: from a signal handler, with the interrupted context, before the program's
 * handler runs: restarts an interrupted trampoline (tramp_restart), or settles an xadd
 * handler's reservation check against the buffer the slot came from. Async-signal-safe. */
void event_path_resume(void *ucontext);
void check_points_init(void); /* the shared handlers' check points */
void check_point_add(uint64_t at, uint64_t go, uint64_t slow); /* a generated handler's */
uint64_t reservations_settled(void); /* how many times event_path_resume settled a check */
void reservations_settled_reset(void); /* a fork child counts its own */
/* soft_signal.c: from now on every program signal handler runs behind event_path_resume,
 * those already installed included. Idempotent. */
void wrap_program_handlers(void);
/* At the end: warns about program handlers that bypassed the wrapping (so could not restart
 * an interrupted trampoline). */
void audit_program_handlers(void);

/* Sets the thread's buffer window. A signal handler on this thread may run between any two
 * stores: end goes to 0 first, so that meanwhile every reservation fails (slow path). */
static inline void tls_set(struct ptc_tls *t, uintptr_t pos, uintptr_t end)
{
    __atomic_store_n(&t->end, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->pos, pos, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&t->end, end, __ATOMIC_RELAXED);
}

/* ---- state --------------------------------------------------------------------------- */

enum { IT_BUF = 1, IT_THREAD_START, IT_THREAD_EXIT, IT_UNLOAD, IT_NAME /* soft_names.c */ };
struct item {
    struct item *next;
    int type;
};

enum { B_FREE = 0, B_FILLING = 1, B_QUEUED = 2 };
struct buf {
    struct item it;         /* IT_BUF */
    struct thread *ts;
    uint8_t *data;
    size_t len;             /* bytes of records when queued */
    size_t flushed;         /* drain-owned: bytes already written from the buffer while its
                               thread was filling it (flush_live); the rest starts there */
    uint64_t flushed_tsc;   /* drain-owned: when (the next chunk's start_tsc) */
    _Atomic int state;
    uint64_t start_tsc, end_tsc;
};

#define MAX_BUFS 64
struct thread {
    struct item start_it, exit_it;
    struct thread *next;    /* rt.threads, under thr_mu */
    uint32_t tid;
    char name[16];
    char exit_name[16];     /* the name at exit, set before exit_it is queued: the drain may
                               still be writing the start chunk from name */
    pthread_t self;         /* pthread_setname_np of another thread finds it (soft_names.c) */
    struct ptc_tls *tls;    /* the owner's TLS block */
    _Atomic int nbufs;      /* grows (never shrinks) while the drain is stalled on it */
    struct buf bufs[MAX_BUFS];
    struct buf *cur;        /* buffer being filled, NULL when none or discarding */
    uint8_t *discard;       /* drop mode: events written here are counted and thrown away */
    int discarding;
    _Atomic int in_slow;
    /* records of the buffers the thread handed to the drain, and of those the drain wrote
     * and released (a handed buffer holds at least one): at exit they must be equal, else
     * the difference is lost and said (soft_flush.c, finish), whatever lost it */
    _Atomic uint64_t recs_handed;
    uint64_t recs_released;
    _Atomic uint64_t nested_drop; /* events from signal handlers that hit the slow path */
    uint64_t pending_drop;  /* dropped, not yet reported by a LOSS record */
    _Atomic uint32_t free_seq;
    _Atomic int waiting;
    _Atomic int stalled;    /* the drain waits for a record this thread reserved and has not
                               written (a signal storm holds the store back): rather than wait
                               for the drain, the thread adds a buffer (up to MAX_BUFS) */
    /* owner-written statistics */
    uint64_t dropped, waits, wait_ns, start_tsc, exit_tsc;
    /* drain-owned */
    uint32_t seq;
    uint64_t events;
    int start_written;
    /* flight recorder (soft_ring.c): the buffers are a ring the thread itself wraps */
    _Atomic int ring_switching; /* the owner is moving to its next buffer */
    /* bit i: a snapshot reading this ring has not read buffer i yet: the owner does not wrap
     * onto it (the snapshot reads oldest first, so the owner waits for one buffer at most) */
    _Atomic uint32_t snap_unread;
    uint64_t ring_lost;         /* records the ring overwrote */
    /* record --trigger (soft_trigger.c): entry times of the watched function's open calls */
    uint32_t trig_depth;
    uint64_t trig_tsc[32];
};

#define MAX_OBJECTS 4096
struct object {
    const void *map_start;
    size_t map_size;
    uint64_t stubs_start, stubs_end;
    uint32_t *ids;          /* per 16-byte slot of the stub section: stub id or UINT32_MAX
                               (counting mode: an entry stub's counter index) */
    uint64_t first_counter; /* counting mode: counters[first_counter + i] counts function i
                               of its MODULE chunk */
    uint32_t num_funcs;
    uint64_t identity;      /* its MODULE chunk's: FNV-1a 64 over its units' hashes */
    uint32_t module_id, first_stub_id;
    uint64_t load_bias;
    char path[PATH_MAX];
    _Atomic int live;
    int drain_dead;         /* drain-owned: its MODULE_UNLOAD was written */
    struct {
        struct item it;
        uint64_t tsc;
    } unload;
    struct tramps kept_tr;  /* attachable: its trampolines, made at the first attach and kept
                               (a thread may still run one after a detach) */
    void *module_buf;       /* attachable: its MODULE chunk's body, built at the first attach */
    size_t module_len, module_mapped;
    unsigned module_flags;  /* the PTC_MAP_BUILD_* it was built with */
    uint64_t first_block;   /* counting mode, map v7 blocks: ptc_blocks[first_block + i]
                               counts block i of the object (units in section order) */
    uint32_t num_blocks;
    /* counted and traced in one run (soft_mixed.c): per function of its MODULE chunk,
     * MIXED_F_*; per stub slot, an entry stub's counter index (UINT32_MAX: none); the
     * counting trampolines of its entry sites (kept: never unmapped) */
    uint32_t total_funcs;
    uint8_t *fstate;
    uint32_t *cidx;
    struct tramps count_tr;
};
#define MIXED_F_TRACED 0x1u
#define MIXED_F_COUNTED 0x2u
#define MIXED_F_CHOSEN 0x4u /* a budget's pilot chose it (soft_pilot.c): traced from then on */
#define MIXED_F_DEMOTING 0x8u /* the governor demoted it (soft_governor.c): counted, its exits
                                 still armed for the calls in flight */
#define MIXED_F_CHANGED 0x10u /* the governor's latest demotion (its object is armed again) */
#define MIXED_F_DEMOTED 0x20u /* the governor demoted it: counted for good */

/* The 16-byte slot of stub address a in o's stub section: the index of o->ids and of the
 * per-slot tables built while arming */
static inline uint64_t stub_slot(const struct object *o, uint64_t a)
{
    return (a - o->stubs_start) / PTCALL_STUB_STRIDE;
}

/* The runtime's state, one per process (soft_config.c). */
enum { FINISH_NONE, FINISH_FLUSHING, FINISH_FINAL };

struct runtime_state {
    int enabled, timed, drop;
    int arm_only;           /* PTCALL_BACKEND=pt or PTCALL_ARM=1: arm gated call sites, no
                               software tracing (Intel PT or an external perf records) */
    int armed_objects;      /* arm-only: objects whose call sites were armed */
    size_t bufsize, rec;
    int nbufs;
    char output[PATH_MAX];
    void (*handler)(void);    /* called by `call *slot` stubs: record = stub address */
    void (*handler_id)(void); /* jumped to by `mov $rec, %r11d; jmp *slot` stubs */
    void *handler_fast;       /* the same, for units that also give up %r10 (soft_fastpath.c;
                                 handler_id when it could not be built) */
    int tramps;               /* untimed, generated handler, PTCALL_TRAMPOLINES not 0:
                                 sites of such units may use trampolines (soft_tramp.c) */
    int leaf_calls;           /* untimed, PTCALL_LEAF_EXITS not 1: the exits of leaves
                                 (ptc_map_leaf_quiet) stay disarmed, and MODULE chunks say
                                 their entries are whole calls (PTC_STUB_CALL) */
    struct ptc_select sel;    /* PTCALL_ONLY / PTCALL_SKIP (soft_select.c): the functions
                                 whose call sites are armed; all when not active */
    char sel_spec[1024];      /* the selection as text, for MODULE_ARMED chunks */

    /* finishing: FINISH_NONE, FINISH_FLUSHING (a final flush will free the queued buffers:
     * a thread waiting for one keeps waiting, its event is inside the trace's window) or
     * FINISH_FINAL (no buffer will be freed any more: a waiting thread gives up) */
    _Atomic int active, finishing;
    int fd;
    uint32_t pid;
    uint32_t start_how, parent_pid, parent_tid;

    pthread_mutex_t reg_mu, drain_mu, thr_mu, proc_mu;
    uint32_t proc_seq;

    struct object *objs[MAX_OBJECTS];
    _Atomic uint32_t nobjs;
    uint32_t next_stub_id;

    struct thread *threads;

    _Atomic(struct item *) qhead;
    _Atomic uint32_t qseq;
    _Atomic int drain_sleeping;
    _Atomic int drain_running;
    _Atomic uint32_t drain_tid;
    struct object *cache;   /* drain: last object hit */

    struct ptc_timebase tb;
    /* process totals of exited threads (drain-owned) */
    uint64_t tot_events, tot_dropped, tot_waits;
    _Atomic uint64_t late_events, write_errors;
    /* bytes of a chunk a failed write cut short (a full disk): the next write appends them as
     * zeros first, so chunks after it start on a boundary (ptc_write_chunk_owed) */
    _Atomic uint64_t write_owed;
    _Atomic uint64_t write_lost_records; /* event records of chunks a write error lost */
    int write_first_errno;
    int debug;               /* PTCALL_DEBUG=1: drain statistics on stderr at the end */
    uint64_t drain_tsc, drain_records, drain_chunks, drain_bytes;
    _Atomic uint64_t drain_wakes; /* futex wake-ups of the sleeping drain */
    uint64_t drain_spin_ns, drain_cpu_ns; /* the drain's time watching the queue, its CPU time */
    uint64_t drain_given_up; /* records the drain could not wait for (their buffers moved) */
    uint64_t flush_ns;       /* PTCALL_FLUSH_MS: partly filled buffers are written this often
                                (0: never; soft_drain.c, flush_live) */
    uint64_t drain_live_flushes; /* chunks written from buffers still being filled */
    uint64_t test_drain_delay_ns; /* PTCALL_TEST_DRAIN_DELAY_US: the drain holds drain_mu this
                                     long before each round (tests only) */
    uint64_t test_ctl_start_delay_ns; /* PTCALL_TEST_CTL_START_DELAY_US: the constructor that
                                         opens the attach channel waits this long (tests) */
    uint64_t test_queue_delay_ns; /* PTCALL_TEST_QUEUE_DELAY_US: a full buffer waits this long
                                     before it is queued (soft_thread.c, retire; tests only) */
    int fork_point_known;    /* a fork child: its parent said its FORK record is written
                                (soft_lifecycle.c, await_fork_point) */
    /* counting mode (soft_counts.c): calls per function, no events */
    int counting;            /* PTCALL_COUNTS=1, PTCALL_COUNTS_FD or PTCALL_FORKSERVER */
    uint64_t ncounters;      /* counters handed out (rt.counters[0..ncounters)) */
    uint64_t nblocks;        /* block counters handed out (ptc_blocks[0..nblocks)) */
    uint32_t segment;        /* the next COUNTS chunk's segment index */
    uint32_t marks;          /* tracing: the next MARK chunk's index (under proc_mu) */
    int counts_fd;           /* PTCALL_COUNTS_FD, or -1 */
    int counts_shared;       /* the counters live in counts_fd's file (MAP_SHARED) */
    int quick_fork;          /* fork_server_fork is forking: the atfork handlers stand aside */
    int fs_ctl, fs_st;       /* PTCALL_FORKSERVER's descriptors, or -1 */
    int fs_defer;            /* PTCALL_FORKSERVER_DEFER: serve at ptcall_forkserver_start() */
    int fs_started;          /* the deferred server has started (in it and its children) */
    int fs_harness_fd;       /* PTCALL_FORKSERVER_HARNESS: the input file, or -1 */
    int (*real_main)(int, char **, char **); /* main, while the pre-main point runs first */
    /* flight recorder (soft_ring.c, soft_trigger.c; docs/runtime.md, *Flight recorder*) */
    size_t ring;             /* PTCALL_RING: bytes of events kept per thread; 0: off */
    int ring_ctl;            /* ring mode, PTCALL_ATTACH not 0: the control thread serves
                                `ptcall snapshot PID` (soft_ctl.c) */
    char snap_dir[PATH_MAX]; /* where ptcall_snapshot() and crashes write their files */
    int ring_errno;          /* the first write error of the snapshot being written */
    uint64_t ring_start_tsc; /* when tracing began (the snapshots' PROCESS tsc) */
    const char *trigger_spec; /* PTCALL_TRIGGER, read at start-up (soft_trigger.c) */
    int ring_test_fault;      /* PTCALL_TEST_SNAPSHOT_FAULT: a crash snapshot faults (tests) */
    /* an event of a watched stub (soft_trigger.c sets it): a hook, so that the threads' file
     * below it does not call up into the snapshots */
    void (*trigger_hook)(struct thread *ts, uint64_t rec, uint64_t tsc);
    /* attach (issue 31, soft_attach.c): started without ptcall, traced while a recorder is
     * attached. Inactive, registration keeps each object (stub ids, no MODULE, stubs `ret`) */
    int attachable;
    uint64_t attach_tsc;     /* when the current attach started tracing (WINDOW tsc_from) */
    /* attach: timed records before this TSC are not written (KEEP_ARMING: every record;
     * KEEP_SETTING: the value is being set). While the sites are armed one by one, a call's
     * entry may be recorded and its exit not, or the reverse: the window starts when every
     * site is armed. 0: every record is written. */
    uint64_t keep_from;
    /* detach: timed records after this TSC are not written (0: none). The sites are disarmed
     * one by one while threads run, so an entry's sled may be a nop again while its exit's
     * still records: the window ends when disarming starts (a busy thread's last records
     * held exits without their entries in about one detach in three). */
    uint64_t keep_until;
    uint32_t attach_threads; /* threads whose WINDOW this attach wrote */
    /* counted and traced in one run (soft_mixed.c; docs/runtime.md, *Tracing within a
     * budget*): in a trace of events, the functions not traced are counted */
    int mixed;               /* PTCALL_COUNT_REST or PTCALL_TRACE_SET (counters handed out) */
    int count_rest;          /* PTCALL_COUNT_REST=1 */
    int count_atomic;        /* PTCALL_COUNT_ATOMIC=1: locked increments */
    /* a budget's pilot (soft_pilot.c): every candidate counted until the pilot ends, then
     * the chosen ones traced; count_base: the counters at that moment, which later COUNTS
     * segments subtract (index first_counter + i; count_base_n entries) */
    int pilot;
    int gov_set;             /* a budget's trace set that a governor watches (soft_governor.c):
                                its traced functions get counting trampolines too */
    int blocking;            /* PTCALL_BLOCKING (soft_blocking.c): blocking calls recorded */
    uint64_t *count_base;
    uint64_t count_base_n;
    /* a budget's governor (soft_governor.c): events per stub id in the chunks the drain
     * tallied (one in GOV_SAMPLE: an add per record costs as much as encoding it, the same
     * counter taken again and again), and the records of all chunks and of those, so the
     * governor scales the sample; written by the drain only (GOV_TALLY_MAX entries, touched
     * as used); NULL without a governor */
    uint64_t *gov_tally;
    uint64_t gov_chunks, gov_all, gov_sampled;
};
#define GOV_TALLY_MAX (1u << 22)
#define GOV_SAMPLE 8
/* Counting mode's counters: one uint64_t per instrumented function, a fixed reservation of
 * COUNTERS_MAX (their addresses are built into trampolines, so the array never moves; the
 * shared file is mapped over its start). Read by ptc_count_handler (soft_handler.S). */
#define COUNTERS_MAX (1u << 22)
extern uint64_t *ptc_counters;
/* Block counters (map v7, -fptcall-cov): one fixed reservation of BLOCKS_MAX as well; each
 * unit's counter pointer is pointed into it at registration, and the shared file's blocks
 * part is mapped over its start, as the function counters'. */
#define BLOCKS_MAX (1u << 24)
extern uint64_t *ptc_blocks;
extern struct runtime_state rt;

/* ---- small helpers ------------------------------------------------------------------- */

static inline uint32_t gettid_(void) { return (uint32_t)syscall(SYS_gettid); }
/* soft_ticker.c: the ticker clock (PTCALL_CLOCK=ticker). The word the ticker thread sets to
 * the TSC every period, alone on its cache line; read by the *_ticker handlers. */
struct ptc_clock_line {
    _Alignas(64) uint64_t word;
    uint8_t pad[56];
};
extern struct ptc_clock_line ptc_clock;
extern int ptc_ticker_on;
extern uint32_t ptc_ticker_period;
int ticker_config(void);          /* PTCALL_CLOCK: 0, or -1 after a warning */
int ticker_start(void);           /* (re)starts the thread in this process; 0 when off */
uint32_t ticker_period_ns(void);  /* 0: the TSC per event */
void ticker_stats(uint64_t *ticks, uint64_t *late, uint64_t *cpu_ns); /* PTCALL_DEBUG */
/* The runtime's clock: with the ticker, its word, so that every record of a stream is on the
 * events' clock (__rdtsc() where the real TSC is needed: the time base, the ticker). */
static inline uint64_t rdtsc_(void)
{
    return ptc_ticker_on ? __atomic_load_n(&ptc_clock.word, __ATOMIC_ACQUIRE) : __rdtsc();
}
static inline uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline size_t page_round_up(size_t n) { return (n + 4095) & ~(size_t)4095; }

static inline void *map_anon(size_t n)
{
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static inline long futex_(_Atomic uint32_t *addr, int op, uint32_t val, const struct timespec *to)
{
    return syscall(SYS_futex, (uint32_t *)addr, op | FUTEX_PRIVATE_FLAG, val, to, NULL, 0);
}

static inline void block_all_signals(sigset_t *old)
{
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, old);
}

/* Raw records in a thread's buffer, told apart by their low 4 bits:
 *   stub address + 6 or + 10 (the stub's `ret`)  from a `call *slot` stub (low bits 6, 10)
 *   id << 4 | 2                                   from an id stub (RECORD_ID_TAG)
 *   operand << 8 | type << 4 | 1                  a control record (PTC_SOFT_*) */
#define RECORD_ID_TAG 2u
#define RECORD_ID_MAX ((1u << 28) - 1) /* the tag must fit the stub's 32-bit immediate */

/* A record that is not a stub address: operand << 8 | type << 4 | 1 (PTC_SOFT_*). */
static inline uintptr_t control_record(unsigned type, uint64_t operand)
{
    return (uintptr_t)((operand << 8) | (type << 4) | 1);
}

/* The calling thread's state if it is being traced, else NULL. */
static inline struct thread *traced_thread(void)
{
    return ptc_tls.state == TS_ACTIVE ? ptc_tls.ts : NULL;
}

/* ---- soft_config.c: configuration from the environment ------------------------------- */

/* Reads the environment into rt (output, timed, drop, buffers, flush period, debug, wanted
 * trampolines). Says on stderr why a value cannot be used. */
enum { CONFIG_OFF, CONFIG_ARM_ONLY, CONFIG_SOFT, CONFIG_COUNTS,
       CONFIG_ATTACH /* not traced now; a recorder may attach (soft_attach.c) */ };
int config_read(void);

/* ---- soft_write.c: the trace file and stderr ----------------------------------------- */

void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* soft_sites.c: arms (arm = 1) or disarms the call-site sleds of the table [start, end)
 * (struct ptcall_map_site entries, in this process). Armed, a site with a trampoline in
 * plan->tramps jumps to it, a site whose stub's slot_use has SLOT_QUIET stays a nop, the
 * others call their stubs (plan may be NULL, and so may its members; o is needed with
 * slot_use). Counts what it did and what it left alone in *r; -1 if a page could not be
 * made writable (r->prot_errno). */
#define KEEP_ARMING UINT64_MAX
#define KEEP_SETTING (UINT64_MAX - 1)

struct arm_plan {
    const struct tramps *tramps;
    const struct tramps *count_tramps; /* sites of SLOT_OFF stubs with one jump to it */
    uint64_t stubs_start, stubs_end; /* the stub section of the object whose sites these are */
    const uint8_t *slot_use;         /* per 16-byte stub slot of that section, SLOT_* */
};
struct sites_result {
    int bad_code, far, unpatched, prot_errno, quiet, off; /* quiet: leaf exits; off: sites
                                                             of functions not chosen */
};
int sites_switch(uint64_t start, uint64_t end, int arm, const struct arm_plan *plan,
                 struct sites_result *r);
/* Makes the pages of [lo, hi) writable for patching code (RWX, else RW where the system
 * refuses RWX: then no other thread may run that code meanwhile), and read+execute again. */
int code_writable(uint64_t lo, uint64_t hi);
void code_executable(uint64_t lo, uint64_t hi);
int open_trace_file(void); /* sets rt.fd; says why not on stderr */
void exe_path(char path[PATH_MAX]);
void write_chunk(uint16_t type, uint32_t tid, uint32_t *seq, const struct iovec *parts, int n);
void write_proc_chunk(uint16_t type, const struct iovec *parts, int n); /* tid 0, proc_mu */
void write_proc_chunk_flags(uint16_t type, uint16_t flags, const struct iovec *parts, int n);
/* write_chunk with chunk flags, no lock taken */
void write_chunk_flags(uint16_t type, uint16_t flags, uint32_t tid, uint32_t *seq,
                       const struct iovec *parts, int n);
void write_process_start(void); /* PROCESS + TIMEBASE */
/* A thread's name change on its way to the drain (soft_names.c queues it, soft_drain.c writes
 * it as a THREAD_NAME chunk): one page, unmapped by the drain (mmap, unlike malloc, may run
 * in a signal handler that calls prctl) */
struct name_item {
    struct item it; /* IT_NAME */
    struct thread *ts;
    uint64_t tsc;
    char name[16];
};
void write_name_item(struct item *it); /* soft_drain.c */
/* soft_names.c: the final flush reads the name of a thread still alive (self: the caller's)
 * into its exit_name */
void thread_name_at_end(struct thread *ts, int self);
/* soft_sanitizer.c: a sanitizer's death callback ends the trace (called at activation) */
void sanitizer_death_init(void);
/* o's MODULE chunk; 1 when written (the caller then writes its MODULE_ARMED right behind) */
int write_module(struct object *o);
/* A MODULE_REFUSED chunk (optional): the object at path, recognised as instrumented, is left
 * untraced for reason (the text of the runtime's warning). Needs the trace open and this
 * process's PROCESS chunk written (rt.active, rt.fd >= 0). */
void write_module_refused(const char *path, const char *reason);

/* ---- soft_select.c: choosing what to trace (PTCALL_ONLY, PTCALL_SKIP) ----------------- */

/* Reads PTCALL_ONLY and PTCALL_SKIP into rt.sel. 0, or -1 after saying on stderr why the
 * selection cannot be used (then nothing may be armed: tracing something else than what was
 * asked for would mislead). */
int select_init(void);
/* Marks SLOT_OFF in slot_use (one byte per 16-byte slot of [stubs_start, ...)) for the stubs
 * of unit u whose functions are not chosen; units whose functions cannot be chosen one by one
 * (their sites call their stubs always, or per unit) only with whole_units (the software
 * backend, which then leaves those stubs `ret`). */
void select_mark_unit(const struct ptc_map_unit *u, uint64_t stubs_start, uint8_t *slot_use,
                      int whole_units);
/* At the end of a process that registered objects: a warning for each glob that matched no
 * function of any of them (not in fork children: their parent says it). */
void select_report_unmatched(void);
/* The MODULE_ARMED chunk of object o, after its MODULE chunk (nothing when not active). */
void write_module_armed(const struct object *o);

/* ---- soft_object.c: the loaded object a map belongs to ------------------------------ */

#define OBJECT_SEGS_MAX 32
/* Its extent and mapped pieces (PT_LOAD pages, PF_W taken away by PT_GNU_RELRO), for the map
 * reader's object checks. obj points into segs: pass the struct by address, never copy it. */
struct object_layout {
    struct ptc_map_segment segs[OBJECT_SEGS_MAX];
    size_t nsegs;
    struct ptc_map_object obj;
};
/* The object whose PT_LOAD segments hold addr (its map section). 0, or -1 with why. */
int object_layout(const void *addr, struct object_layout *out, char *why, size_t why_size);

/* ---- soft_counts.c: counting mode ---------------------------------------------------- */

void ptc_count_handler(void); /* soft_handler.S: an id stub's counter (%r11 = index << 4 | 2) */
void ptc_count_handler_atomic(void); /* the same, locked (PTCALL_COUNT_ATOMIC=1) */
/* Reserves the counters (start-up). 0, or -1 after a warning (then nothing is counted). */
int counts_init(void);
/* Counting trampolines for the entry sites of object o whose stub slot has SLOT_TRAMP: each
 * `movabs $counter, %r11; incq (%r11); jmp back`, laid out as tramps_build's. 0 or -1. */
int count_tramps_build(const struct object *o, const uint8_t *slot_use, uint64_t sites_start,
                       uint64_t sites_end, struct tramps *out);
/* Writes the counts since the last segment as one COUNTS chunk (flags PTC_COUNTS_F_*,
 * label) and zeroes them. Caller holds proc_mu (or, crashing, gave up on it). */
void counts_write_segment(uint32_t flags, const char *label);
/* The final flush of counting mode: the last segment and PROCESS_END. */
void counts_finish(int how, int status, int crash);
/* Lays the counters out in PTCALL_COUNTS_FD's file and maps it over them. 0, or -1 after a
 * warning (the counters stay private). */
int counts_share(void);
/* Map v7: points the counter pointer of each unit of o that counts blocks into ptc_blocks
 * (o->first_block, o->num_blocks). Registration, counting mode. */
void counts_blocks_register(struct object *o, const void *map_start, size_t map_size,
                            uint64_t stubs_start, uint64_t stubs_end,
                            const struct ptc_map_object *obj);
/* The highest function counter index handed out + 1 (the pilot's copy, the governor's). */
uint64_t counters_in_use(void);
/* Zeroes every counter handed out, functions and blocks (the fork server, before a fork). */
void counts_zero(void);
/* A fork child (counting mode): its own process record; private counters start at 0. */
void counts_after_fork(void);

/* soft_tramp.c: a mapping of size bytes within rel32 reach of all of [lo, hi), or NULL */
uint8_t *map_near(uint64_t lo, uint64_t hi, size_t size);
uint8_t *map_tramps_near(uint64_t sites_start, uint64_t n, size_t *size);

/* ---- soft_timebase.c: the TSC's time base -------------------------------------------- */

void timebase_init(void); /* sets rt.tb */

/* ---- soft_thread.c: per-thread buffers and the C slow path --------------------------- */

int threads_init(void); /* the TLS key whose destructor ends a thread's stream */
void push(struct item *it); /* to the drain */
void thread_unlink(struct thread *ts);
void thread_free(struct thread *ts);
void retire_current(struct thread *ts, uint64_t now);
void put_nested_loss(struct thread *ts);
void hand_over_current(struct thread *ts);
/* Whether the calling thread (ts, from a signal handler) reserved a record it has not written
 * yet (the signal interrupted it): a flush now would count that record lost. */
int thread_has_unwritten(struct thread *ts);
void record_fork(pid_t pid, uint64_t tsc);
void threads_after_fork(struct thread *self);

/* ---- soft_drain.c: the drain thread and the soft-event encoder ----------------------- */

int drain_start(void);
void drain_queue(int mode); /* ENC_*; caller holds drain_mu */
/* How encode treats a record that is reserved but still zero (its writer not done). */
enum { ENC_NOWAIT = 0, /* count it lost (final flush, from a signal handler) */
       ENC_WAIT = 1,   /* wait for it (up to 500 ms, and not while its thread waits for a
                          buffer), then count it lost (the buffer is moved) */
       ENC_PREFIX = 2  /* stop before it: a buffer its thread is still filling */ };
/* Encodes raw records of ts from data (at most len bytes) as one SOFT_EVENTS chunk; returns
 * the bytes of records consumed (len, except ENC_PREFIX). */
size_t encode(struct thread *ts, uint8_t *data, size_t len, uint64_t start_tsc,
              uint64_t end_tsc, int mode);
/* The part of ts's current buffer written since the last flush, as a chunk; tracing goes on.
 * Caller holds drain_mu and thr_mu and ts is still running (its TLS exists). */
void flush_live(struct thread *ts, int mode);
void encode_loss(struct thread *ts, uint64_t n, uint64_t tsc);
void write_thread_start(struct thread *ts);
void write_thread_chunk(struct thread *ts, int event, uint64_t tsc);
void add_thread_totals(const struct thread *ts);

/* ---- soft_flush.c: the final and the partial flush ----------------------------------- */

void finish(int how, int status, int crash);
void flush_partial(void);
/* Writes everything queued now (not from a signal handler). 0, or -1 if the drain's lock
 * could not be had within a second. */
int flush_queued(void);

/* ---- attach and detach (soft_register.c, soft_flush.c, soft_thread.c) ---------------- */

void objects_attach(void); /* arms every object kept while inactive; reg_mu, tracing active */
int objects_detach(void);  /* disarms them, stubs back to `ret`; reg_mu */
/* The detach's flush: finish's machinery with PROCESS_END how DETACH; every thread's WINDOW
 * (open-ended when it is still running). Threads keep running. */
int finish_detach(void); /* 0, or -1 when the process is ending already (its own flush) */
/* A thread's WINDOW chunk (attached processes), before its THREAD exit chunk */
void write_window(struct thread *ts, int open_end, uint64_t tsc_to);
/* After a detach's flush (at_attach 0): every thread still running starts clean at the next
 * attach (its buffers empty, its counts zero, its stream at seq 0). At the attach (1): the
 * threads that exited meanwhile are freed, the others start at rt.attach_tsc with their
 * current names. thr_mu is taken; no drain may be running. */
void threads_reset_for_attach(int at_attach);
/* soft_select.c: an attach's --only/--skip (newline-separated globs, "" for none) in place of
 * PTCALL_ONLY/PTCALL_SKIP. 0, or -1 with why. */
int select_set(const char *only, const char *skip, char *why, size_t n);

/* ---- soft_signal.c: fatal signals, sigaction and signal ------------------------------ */

void install_signals(void);

/* ---- soft_fd.c: the trace's descriptor, kept from the program's close and dup2 -------- */

int close_trace_fd(void); /* the runtime's own close of it (a fork child starting over) */

/* ---- soft_ring.c: the flight recorder (PTCALL_RING) ----------------------------------- */

/* Reads PTCALL_RING's companions (PTCALL_SNAPSHOT_DIR, PTCALL_TRIGGER) into rt; rt.ring is
 * set. 0, or -1 after a warning (then nothing is traced). */
int ring_config(void);
/* soft_ring_buf.c: the slow path in ring mode: ts's buffer is full; it moves to its next
 * buffer, the oldest, whose events are overwritten (counted in ring_lost). Signals are
 * blocked. */
void ring_switch(struct thread *ts);
/* soft_ring_buf.c: one snapshot at a time (an atomic owner: async-signal-safe). 0, or -1 with
 * errno EDEADLK (this thread holds it) or EBUSY (not had within wait_ns). */
int ring_lock(uint64_t wait_ns);
void ring_unlock(void);
int ring_lock_owned(void); /* whether the calling thread holds it */
/* Writes every thread's ring to fd as a self-contained trace (docs/runtime.md, *Flight
 * recorder*). 0, or -1 with errno (ENOTSUP: not in ring mode). Async-signal-safe. The
 * internal entry point `ptcall snapshot PID` reaches through the control channel. */
int ring_snapshot_to_fd(int fd, uint32_t kind, const char *why);
/* A snapshot file in rt.snap_dir; kind PTC_SNAP_*; sig and addr for PTC_SNAP_CRASH.
 * Async-signal-safe. 0, or -1 after one line on stderr. */
int ring_snapshot_file(uint32_t kind, const char *why, int sig, uint64_t addr);
/* What the writer thread calls for a request posted with ring_writer_post (soft_ring.c's:
 * writes the snapshot file of kind and why, taken by thread tid of parent ppid at instant
 * tsc); the writer then releases the snapshot lock. */
typedef void (*ring_write_fn)(uint32_t kind, const char *why, uint32_t tid, uint32_t ppid,
                              uint64_t tsc);
/* soft_ring_writer.c: the thread that writes the snapshots the process outlives, so that the
 * program's stall is a hand-over (docs/runtime.md, *The stall*). ring_writer_start: in each
 * process with rings (again in a fork child); 0, or -1 (PTCALL_ATTACH=0, or after a warning:
 * snapshots are then written by a forked child). ring_writer_post: with the snapshot lock held and
 * the rings held at instant tsc, hands the lock and the request to the writer; 0, or -1 (no writer: the caller writes it).
 * Async-signal-safe. ring_writer_wait: waits, bounded, for a snapshot being written (exit). */
int ring_writer_start(void);
int ring_writer_post(uint32_t kind, const char *why, uint64_t tsc, ring_write_fn write);
void ring_writer_wait(void);
/* soft_ring_buf.c: passes the snapshot lock to another thread (the writer), or frees it
 * after a fork (the owner does not exist in the child) */
void ring_lock_give(uint32_t tid);
/* From the fatal-signal handler, before the default action: the crash snapshot. */
void ring_crash(int sig, const siginfo_t *si);
/* From the fatal-signal handler first: a fault inside the crash snapshot itself abandons it
 * (one line) and returns to ring_crash's caller, which dies as the program would have. */
void ring_crash_nested(int sig);

/* soft_trigger.c: record --trigger (PTCALL_TRIGGER) */
int trigger_config(const char *spec); /* 0, or -1 after a warning */
int trigger_active(void);
/* The slot a watched stub of unit u jumps through (the trigger handler's), or 0 when the
 * stub is not the watched function's. Registration, under reg_mu. */
uint64_t trigger_slot(const struct object *o, const struct ptc_map_unit *u,
                      const struct ptcall_map_stub *st, uint32_t id);
void trigger_report_unmatched(void);
void ptc_trigger_handler(void); /* soft_handler.S */
#define RECORD_TRIGGER_BIT (1ull << 63) /* set by ptc_trigger_handler on its record */

/* ---- soft_mixed.c: counted and traced in one run ------------------------------------ */

/* soft_mixed_config.c: reads PTCALL_COUNT_REST and PTCALL_TRACE_SET (a traced run). 0, or
 * -1 after a warning. */
int mixed_config(void);
/* In a mode that cannot count beside tracing (mode names it): one line if they are set. */
void mixed_ignored(const char *mode);
/* Before o's MODULE chunk: which of its functions are traced and which counted (o->fstate),
 * the stub slots of both (SLOT_OFF, SLOT_COUNT in slot_use) and the counting trampolines
 * (o->count_tr). 0, or -1 after a warning (out of memory: o is refused). */
int mixed_plan(struct object *o, const struct object_layout *lay, uint8_t *slot_use);
/* o's MODULE_ARMED and MODULE_COUNTED chunks (write_module_armed calls it when rt.mixed) */
void mixed_write_module_chunks(const struct object *o);
/* Counting trampolines for the entry sites of o whose slot has SLOT_COUNT (o->cidx). */
int count_tramps_build_mixed(const struct object *o, const uint8_t *slot_use,
                             uint64_t sites_start, uint64_t sites_end, struct tramps *out);
void mixed_after_fork(void);          /* a fork child's counters start at 0 */
/* soft_mixed_config.c: PTCALL_TRACE_SET's file, or NULL; whether a function (display name,
 * linkage name) is traced by it (1 without a file, 0 for a file that cannot be used); at the
 * end, one line per name that matched nothing */
const char *trace_set_path(void);
/* The budget of a trace set that record chose (its budget line; source PREVIOUS, no tsc
 * yet) and its note: 1, or 0 for other sets. */
int trace_set_budget(struct ptc_budget *b, const char **note);
/* soft_pilot_config.c: that budget's BUDGET chunk, after the PROCESS chunk; nothing for
 * other sets. */
void budget_write_previous(void);
int trace_set_has(const char *name, const char *linkage);
void trace_set_report_unmatched(void);

/* ---- soft_pilot.c: a budget's pilot ---------------------------------------------------- */

enum { PILOT_COUNTING = 1, PILOT_DONE = 2 };
struct pilot_state {
    _Atomic int state;       /* PILOT_COUNTING until the choice (or the end) */
    double fraction;         /* PTCALL_OVERHEAD / 100 */
    char pct_text[32];
    double event_ns, count_ns;
    int have_costs;
    char costs_why[160];     /* why PTCALL_COSTS cannot be used */
    uint64_t ms;
    uint64_t wall0, cpu0;    /* at the start */
    int fork_child;          /* a fork child of a process in its pilot */
    uint64_t govern_ms;      /* PTCALL_GOVERNOR_MS: the governor's period; 0: none */
    uint64_t set_candidates, set_traced; /* a governed trace set's choice (rt.gov_set) */
};
extern struct pilot_state pilot; /* soft_pilot_config.c */
uint64_t pilot_cpu_ns(void);     /* the process's CPU time, ns */
/* A BUDGET chunk: its head filled for a pilot of wall ns so far; written with its note */
struct ptc_budget pilot_budget_head(uint64_t wall);
void pilot_write_budget(const struct ptc_budget *b, const char *note);
/* soft_pilot_config.c: reads PTCALL_OVERHEAD, PTCALL_PILOT_MS and PTCALL_COSTS (a traced
 * run): sets rt.pilot and rt.mixed. 0, or -1 after a warning. */
int pilot_config(void);
/* Starts the pilot's thread (soft_pilot.c's constructor). 0, or -1 after a warning
 * (counting goes on, nothing is chosen). */
int pilot_start(void);
/* The final flush, the pilot still counting: its BUDGET chunk and one line. */
void pilot_at_end(void);
/* A fork child: a pilot still counting stays so in the child (its thread is not there). */
void pilot_after_fork(void);
/* soft_governor.c: the drain's tallies, before the pilot's choice is armed (nothing without
 * PTCALL_GOVERNOR_MS or a cost model). 0, or -1 after a warning (no governor). */
int governor_prepare(void);
/* soft_governor.c: the pilot's thread after the choice: looks every PTCALL_GOVERNOR_MS until
 * the process finishes; demotes traced functions whose calls exceed the budget. */
struct ptc_budget_result;
void governor_run(const struct ptc_budget_result *chosen);
/* soft_governor.c: a trace set's governor (rt.gov_set), its thread started with the library.
 * 0, or -1 after a warning (the set's choice stays). */
int governor_start(void);
/* soft_governor.c: starts fn on a detached thread of the runtime with every signal blocked
 * (the pilot's, a governor's). 0, or pthread_create's error. */
int budget_thread_start(void *(*fn)(void *));
/* soft_governor.c: returns once an object registered (tracing active) or the process
 * finishes, looking from every 10 ms up to every 500 ms */
void wait_until_active(void);
/* soft_register.c: arms o again after the pilot chose (o->fstate MIXED_F_CHOSEN): the chosen
 * functions' stubs patched and their sites switched from counting to tracing. Caller holds
 * reg_mu. 0, or -1 after a warning. */
int object_rearm(struct object *o);

/* ---- soft_lifecycle.c: exit, _exit, exec, fork --------------------------------------- */

void runtime_init(void); /* once per process; sets rt.enabled when tracing applies */
/* soft_lifecycle.c: whether the program registered exit handlers (atexit, on_exit, C++ static
 * or thread_local destructors); the runtime's own atexit, which does not count */
int exit_handlers_registered(void);
int runtime_atexit(void (*fn)(void));
/* soft_lifecycle.c: the fork server's fork (the wrapper's work only where it protects
 * something) */
pid_t fork_server_fork(void);
/* A deferred fork server that never started (main returned, or the program exits): says so,
 * writes PTCFS_ERROR instead of the hello and exits with status 2 (soft_forkserver.c). */
void fork_server_not_started(void) __attribute__((noreturn));

#pragma GCC visibility pop

#endif
