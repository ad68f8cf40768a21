/* libptcall-decode: the interface between trace front-ends (soft event chunks, Intel PT
 * streams) and the analyses. Every front-end turns its input into per-thread sequences of
 * struct ptc_ev and feeds them to a session; the session keeps per-process module tables and
 * per-thread shadow stacks and drives the analyses. Memory grows with processes, threads,
 * stack depth and functions, never with trace length. */
#ifndef PTCALL_DECODE_H
#define PTCALL_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/trace_format.h"

enum ptc_ev_type {
    PTC_EV_HIT = 1,  /* a stub ran: stub_id (per process), tsc if has_time */
    PTC_EV_GAP = 2,  /* events are missing here: count hits if known (0 = unknown);
                        the shadow stack is marked broken rather than guessed */
    PTC_EV_FORK = 3, /* this thread forked: count = child pid; the child's first thread
                        starts from a copy of this thread's shadow stack */
    PTC_EV_MARK = 4, /* ptcall_mark ran here (MARK chunk): count = the session's id of its
                        label (ptc_session_mark_label); the stack is unchanged */
    PTC_EV_SPAWN = 5, /* posix_spawn started process count here (SPAWN chunk); the child
                         starts a new program from an empty stack: this one is unchanged */
};

struct ptc_ev {
    uint8_t type;     /* enum ptc_ev_type */
    uint8_t has_time; /* tsc is valid */
    uint16_t size;    /* bytes of the trace this event took, as its front-end measured them
                         (soft: the record; PT: the stream since the thread's previous event
                         there), saturated at 65535; 0 when not known */
    uint32_t stub_id;
    uint64_t tsc;
    uint64_t count;
};

struct ptc_session;

/* Error codes returned (negated) by decoder functions; ptc_strerror() describes them. */
enum ptc_err {
    PTC_OK = 0,
    PTC_E_IO = 1,        /* read error (errno kept in the session) */
    PTC_E_FORMAT = 2,    /* not a ptcall trace file */
    PTC_E_VERSION = 3,   /* a major version this decoder does not read */
    PTC_E_TRUNCATED = 4, /* the file ends inside a chunk */
    PTC_E_CORRUPT = 5,   /* bad CRC, bad sizes, undecodable records */
    PTC_E_NOMEM = 6,
    PTC_E_NOMODULE = 7,  /* the trace holds no instrumented module */
    PTC_E_BADSTUB = 8,   /* an event names a stub no module has */
    PTC_E_ARG = 9,
    PTC_E_UNSUPPORTED = 10,
};
const char *ptc_strerror(int err);

/* Module tables: the payload of a PTC_CHUNK_MODULE chunk (struct ptc_module and what
 * follows), for process pid. Returns 0 or -PTC_E_*. */
int ptc_session_add_module(struct ptc_session *s, uint32_t pid, const void *payload,
                           size_t size);

/* Maps a run-time instruction address inside some module's stub section of process pid to
 * its per-process stub id. Returns 0, or -PTC_E_BADSTUB when ip is not a stub. */
int ptc_session_lookup_stub(const struct ptc_session *s, uint32_t pid, uint64_t ip,
                            uint32_t *stub_id);

/* Feeds events of one thread, in that thread's order. Returns 0 or -PTC_E_*. */
int ptc_session_feed(struct ptc_session *s, uint32_t pid, uint32_t tid,
                     const struct ptc_ev *ev, size_t n);

/* Records a loss that is not attached to one event stream (struct ptc_loss semantics). */
int ptc_session_add_loss(struct ptc_session *s, uint32_t pid, const struct ptc_loss *loss,
                         const char *note);

/* ---------------------------------------------------------------------------------------
 * Additions by the decoder component (sessions, the trace reader, analyses). Everything
 * above is the front-end contract; everything below is additive.
 * ------------------------------------------------------------------------------------- */

/* Sessions. */
struct ptc_session *ptc_session_new(void);
void ptc_session_free(struct ptc_session *s);
/* The last error's description (one line, no trailing newline; "" if none). */
const char *ptc_session_errmsg(const struct ptc_session *s);

/* Ends the session's input: closes the frames still open in every thread (at each
 * thread's last event), replays events held for fork children whose fork point never
 * appeared, and runs the chunk handlers' finish callbacks. Idempotent. */
int ptc_session_finish(struct ptc_session *s);

/* Reading a whole trace file into a session (streaming: memory does not grow with the
 * file). Returns 0 or -PTC_E_*; ptc_session_errmsg() then says what and where. With
 * PTC_DECODE_SALVAGE, a chunk with a bad CRC is skipped (its stream shows a gap) and a
 * truncated or unreadable tail ends the input; the error is still returned, after the
 * session holds everything that precedes the damage. ptc_session_finish() is called. */
#define PTC_DECODE_SALVAGE 0x1u
int ptc_decode_file(struct ptc_session *s, const char *path, unsigned flags);
int ptc_decode_memory(struct ptc_session *s, const void *data, size_t size, unsigned flags);
/* ptc_decode_file() with up to nthreads threads (0: one per online CPU): a soft trace's
 * threads are decoded by different workers and their figures added up. The result is
 * exactly ptc_decode_file()'s; what cannot be split (one thread, fork, Intel PT, damage,
 * PTC_DECODE_SALVAGE, a call or thread-end hook, a session already used) is decoded
 * serially. Costs one extra read of the file per worker. */
int ptc_decode_file_threads(struct ptc_session *s, const char *path, unsigned flags,
                            unsigned nthreads);
/* How many threads decoded the session's events: 1 unless ptc_decode_file_threads() could
 * split them. */
unsigned ptc_session_decode_threads(const struct ptc_session *s);

/* Chunk handlers for chunk types the session does not decode itself (e.g. Intel PT
 * chunks 32..63): fn gets every CRC-checked chunk whose type is in [first, last] and
 * returns 0 or -PTC_E_* (an error stops decoding; use ptc_session_set_error() for the
 * message). finish (may be NULL) runs once from ptc_session_finish(); or, when the
 * session is freed without having finished (decoding stopped at an error), once with s
 * == NULL, to release ctx without finishing. */
typedef int (*ptc_chunk_fn)(void *ctx, struct ptc_session *s,
                            const struct ptc_chunk_header *h, const void *payload);
typedef int (*ptc_finish_fn)(void *ctx, struct ptc_session *s);
int ptc_session_set_chunk_handler(struct ptc_session *s, uint16_t first, uint16_t last,
                                  ptc_chunk_fn fn, ptc_finish_fn finish, void *ctx);
/* Sets the session's error message (printf-style) and returns -err. */
int ptc_session_set_error(struct ptc_session *s, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Implemented by the Intel PT front-end when it is linked in (weak here): registers its
 * chunk handlers on s. The CLI calls it, if present, on every session it creates. A weak
 * reference does not pull an object out of a static library: define it in an object file
 * of ptcall_decode_pt that the `ptcall` binary links anyway (e.g. one cmd_stat.c uses). */
int ptc_pt_attach(struct ptc_session *s) __attribute__((weak));

/* The trace reader: chunk by chunk, with header, size and CRC checks. */
struct ptc_reader;
struct ptc_chunk {
    struct ptc_chunk_header h;
    const uint8_t *payload; /* h.payload_size bytes, valid until the next call */
    uint64_t offset;        /* file offset of the chunk header */
    uint64_t index;         /* 0-based chunk number in the file */
};
int ptc_reader_open(struct ptc_reader **r, const char *path);
int ptc_reader_open_memory(struct ptc_reader **r, const void *data, size_t size);
/* The file header (valid once open succeeded). */
const struct ptc_file_header *ptc_reader_header(const struct ptc_reader *r);
/* Returns 1 and the next chunk, 0 at a clean end of file, or -PTC_E_*. After
 * -PTC_E_CORRUPT for a CRC mismatch the reader is positioned after that chunk and may be
 * called again; every other error is final. */
int ptc_reader_next(struct ptc_reader *r, struct ptc_chunk *c);
const char *ptc_reader_errmsg(const struct ptc_reader *r);
uint64_t ptc_reader_offset(const struct ptc_reader *r); /* bytes consumed so far */
void ptc_reader_close(struct ptc_reader *r);
/* Goes on reading at a chunk boundary, offset, which is chunk number index (the timeline's
 * index knows both, ptcall/timeline.h). Returns 0 or -PTC_E_*. */
int ptc_reader_seek(struct ptc_reader *r, uint64_t offset, uint64_t index);

/* Functions are identified across processes by (module path, linkage name, source file):
 * a fork child or a second process of the same program shares the parent's ids. */
struct ptc_func_info {
    const char *name;         /* display name */
    const char *linkage_name;
    const char *file;         /* "" if unknown */
    const char *module;       /* path of the object */
    uint32_t line;
};
struct ptc_func_stats {
    uint64_t calls;           /* entries seen */
    uint64_t total;           /* inclusive time (outermost activations only) */
    uint64_t self;            /* inclusive minus time in callees, over all activations */
    uint64_t blocked;         /* (2.6) time in its blocking calls: callees that are
                                 pseudo-functions of a MODULE_BLOCKING module; self + blocked
                                 is what self was without them (the wall time it held the
                                 thread outside its other callees) */
};
uint32_t ptc_session_num_funcs(const struct ptc_session *s);
const struct ptc_func_info *ptc_session_func(const struct ptc_session *s, uint32_t id);
/* Times in ns when the session has a time base, else in TSC ticks; 0 if untimed. */
void ptc_session_func_stats(const struct ptc_session *s, uint32_t id,
                            struct ptc_func_stats *out);

/* Record-time selection (`ptcall record --only/--skip`; MODULE_ARMED chunks, trace format
 * minor 2). Whether function id was traced: 1 unless every module listing it said its call
 * sites were left disarmed (then its calls, 0 here, say nothing about how often it ran).
 * Traces without MODULE_ARMED chunks traced every function. */
int ptc_session_func_traced(const struct ptc_session *s, uint32_t id);
/* Blocked time (trace format 2.6, MODULE_BLOCKING chunks): whether function id is a
 * pseudo-function standing for calls into a blocking function of the C library (the
 * runtime's module "[blocking]"), and whether the trace has any. */
int ptc_session_func_blocking(const struct ptc_session *s, uint32_t id);
int ptc_session_has_blocking(const struct ptc_session *s);
struct ptc_selection {
    int selected;             /* the trace has MODULE_ARMED chunks */
    uint32_t traced, funcs;   /* functions traced, of all functions of the module tables */
    const char *spec;         /* the selection as given to record ("--only 'a*'"), "" when
                                 none; valid until the session is freed */
};
void ptc_session_selection(const struct ptc_session *s, struct ptc_selection *out);

struct ptc_edge {
    uint32_t caller, callee;  /* function ids */
    uint64_t count;
};
/* A malloc'ed array of every caller->callee edge (free() it); returns the count, or
 * (size_t)-1 when out of memory. */
size_t ptc_session_edges(const struct ptc_session *s, struct ptc_edge **out);

struct ptc_totals {
    uint64_t events;          /* stub hits fed, plus the exit each whole call stands for */
    uint64_t whole_calls;     /* hits of PTC_STUB_CALL stubs: a leaf's call and return in one
                                 record (soft backend, untimed) */
    uint64_t chunks;
    uint64_t processes, threads;
    uint64_t calls;           /* entries */
    uint64_t gaps;            /* places where events are missing (stream gaps, losses) */
    uint64_t lost_events;     /* stub hits known to be lost (drops, crash) */
    uint64_t lost_other;      /* PT bytes/records lost (see ptc_loss_kind) */
    uint64_t missing_chunks;  /* chunks missing from seq numbering */
    uint64_t repairs;         /* frames popped because their exit was skipped */
    uint64_t unwound;         /* frames popped by a landing pad */
    uint64_t unmatched;       /* exits/landings of functions not on the stack (ignored) */
    uint64_t broken_frames;   /* open frames closed at a gap */
    uint64_t open_at_end;     /* frames still open when their thread/trace ended */
    uint64_t bad_stubs;       /* events naming an unknown stub (treated as gaps) */
    uint64_t fork_unknown;    /* fork children whose fork point never appeared */
    uint64_t skipped_chunks;  /* optional chunks of unknown type, and salvage skips */
    uint64_t lossy_threads;   /* threads whose figures are lower bounds */
    uint64_t total_time;      /* sum of self times: time spent in traced functions */
    uint32_t backend;         /* from the file header (0 if fed directly) */
    uint32_t file_flags;
    int timed;                /* events carried timestamps */
    int has_timebase;         /* times are ns (else ticks) */
    int record_end;           /* the trace has a RECORD_END chunk */
    int32_t wait_status;      /* from RECORD_END */
    uint64_t unfinished_processes; /* soft traces: processes whose trace has no PROCESS_END
                                      (ended by a signal the runtime cannot catch, such as
                                      SIGKILL, or by a write error): their last events are
                                      lost, how many is not known */
    uint64_t unclosed_threads; /* soft traces: threads of processes that did close their trace
                                  (PROCESS_END) whose own stream has no THREAD exit chunk: the
                                  chunks at the end of such a stream may be missing, which
                                  sequence numbers cannot show */
    uint64_t counted_calls;   /* calls read from COUNTS chunks (counting mode, `record
                                 --counts`): included in `calls` and the functions' calls,
                                 with no times and no call graph behind them */
    uint64_t counts_segments; /* COUNTS chunks read (segments: ptcall_mark, exits) */
    uint64_t refused_objects; /* instrumented objects the runtime refused to trace
                                 (MODULE_REFUSED chunks, ptc_session_refused): their functions
                                 are missing from every figure, which are lower bounds */
    uint64_t spawns;          /* SPAWN chunks read: processes started by posix_spawn */
    /* Traces that do not hold a thread's whole life (docs/trace-format.md 4.19) */
    uint64_t entered_before;  /* calls entered before their thread's window began (attach,
                                 snapshot, a budget's pilot) whose return is in it: counted as
                                 calls (after a pilot, its PILOT COUNTS segment counted them
                                 already), times from the window's start (lower bounds); not
                                 unmatched */
    uint64_t still_open;      /* frames open when their thread's trace ended while the thread
                                 ran (blocked at the program's exit, a detach, a snapshot):
                                 closed at that end, not at the thread's last event; also in
                                 open_at_end */
    uint64_t window_threads;  /* threads whose events are a window of their life (a process
                                 attached to or snapshotted, or a WINDOW chunk) */
    uint32_t resolution_ns;   /* the ticker clock (TIMEBASE source TICKER, issue 28): times
                                 are the clock word's, known to this many ns (the largest
                                 period of the trace's processes); 0: the TSC per event */
    uint32_t blocking;        /* (2.6) 1: the trace recorded blocking calls (MODULE_BLOCKING
                                 chunks), and ptc_func_stats.blocked says where */
    uint64_t governed;        /* (2.8) a budget's governor demoted functions: frames of theirs
                                 open at the demotion that ended without their exit (closed
                                 when a caller returned), and exits of calls counted after
                                 it; not in repairs or unmatched */
};
void ptc_session_totals(const struct ptc_session *s, struct ptc_totals *t);
/* Whether totals t describe a complete trace: it ended with RECORD_END, every process closed
 * its trace, every thread of those has its THREAD exit chunk, and no instrumented object was
 * refused. Gaps and lost events make a trace lossy, not incomplete; a salvaged (damaged) read
 * is the caller's to add. The one definition every output uses. */
int ptc_totals_complete(const struct ptc_totals *t);
/* When the first traced process started, on the time scale of struct ptc_call_event's
 * time (0, or -PTC_E_ARG when the trace does not say). */
int ptc_session_origin(const struct ptc_session *s, uint64_t *time);
/* Threads whose figures are lower bounds (lost events or gaps): calls fn for each. */
void ptc_session_lossy_threads(const struct ptc_session *s,
                               void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                          uint64_t lost, uint64_t gaps),
                               void *ctx);

/* Threads of processes whose trace has no PROCESS_END (soft traces: killed by a signal the
 * runtime cannot catch, or a write error): calls fn with each thread's events and the time of
 * its last one (has_time 0 when the trace does not say; time on the scale of
 * ptc_session_origin), where its record stops: what came after is lost, how much unknown. */
void ptc_session_unfinished_threads(const struct ptc_session *s,
                                    void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                               uint64_t events, int has_time, uint64_t last),
                                    void *ctx);

/* Streaming call sequence (for `ptcall calls`): a hook that sees every call and return
 * as the shadow stacks process them. Costs time; leave unset for aggregate analyses. */
enum ptc_call_kind {
    PTC_CALL_ENTER = 1,     /* func entered at depth */
    PTC_CALL_RETURN = 2,    /* func left (how says why); dur valid if has_time */
    PTC_CALL_GAP = 3,       /* events missing here (count = hits, 0 unknown) */
    PTC_CALL_UNMATCHED = 4, /* exit of func, which is not on the stack: ignored */
    PTC_CALL_FORK = 5,      /* this thread forked child pid = count */
    PTC_CALL_FORKED = 6,    /* this thread starts as a fork child, depth = inherited frames */
    PTC_CALL_LANDING = 7,   /* func resumed at a landing pad (after popping frames) */
    PTC_CALL_MARK = 8,      /* ptcall_mark(label) here: count = the session's id of the
                               label (ptc_session_mark_label), depth = the stack's depth */
    PTC_CALL_SPAWN = 9,     /* this thread started process count (posix_spawn) here;
                               depth = the stack's depth */
};
/* The label of mark label id (PTC_EV_MARK, PTC_CALL_MARK), or "" for an unknown id. Marks of
 * one label share its id. Labels are valid UTF-8: each byte of the program's label that
 * starts no valid sequence is U+FFFD here. Stable until the session is freed. */
const char *ptc_session_mark_label(const struct ptc_session *s, uint64_t id);
/* What the trace's marks say per label (for summaries): ids 0 .. num_mark_labels - 1, in
 * the order the labels were first seen (after a parallel decode, not the file's order). */
struct ptc_mark_stats {
    const char *label;      /* valid until the session is freed */
    uint64_t marks;         /* ptcall_mark(label) calls: MARK chunks (traces of events) and
                               COUNTS segments closed by a mark (counting mode) */
    uint64_t counted_calls; /* counting mode: the calls counted in the segments these marks
                               closed; 0 in traces of events */
    /* Traces of events with times: the segments these marks closed, each the time on the
     * marking thread since its previous mark (or its first event), in ns (ticks without a
     * time base); segments = how many (0: untimed, or counting mode), min and max of one */
    uint64_t segments;
    uint64_t segment_total, segment_min, segment_max;
};
uint32_t ptc_session_num_mark_labels(const struct ptc_session *s);
/* Returns 0, or -PTC_E_ARG for an id out of range. */
int ptc_session_mark_stats(const struct ptc_session *s, uint32_t id, struct ptc_mark_stats *out);
enum ptc_return_how {
    PTC_RET_EXIT = 0,     /* its exit stub ran */
    PTC_RET_UNWIND = 1,   /* its unwind stub ran (exception passing through) */
    PTC_RET_REPAIR = 2,   /* its exit was skipped: a caller's exit popped it */
    PTC_RET_LANDING = 3,  /* popped by a landing pad lower in the stack */
    PTC_RET_BROKEN = 4,   /* closed at a gap; dur ends at the last event before it */
    PTC_RET_END = 5,      /* still open at the end of the thread or trace: closed when its
                             thread's trace ended (its THREAD exit, its process's end, its
                             window's end), so dur is a lower bound */
};
struct ptc_call_event {
    uint32_t pid, tid;
    uint32_t depth;       /* 0 = outermost frame */
    uint32_t func;        /* function id, or UINT32_MAX for GAP/FORK */
    uint8_t kind;         /* enum ptc_call_kind */
    uint8_t how;          /* enum ptc_return_how for RETURN */
    uint8_t has_time;
    uint8_t inherited;    /* RETURN of a frame inherited across fork */
    uint8_t before;       /* RETURN of a call entered before its thread's window began
                             (ptc_totals.entered_before): no ENTER preceded it; dur runs from
                             the window's start; count = its level at that start (1: the
                             innermost frame then open, 2: its caller, ...) */
    uint64_t time;        /* ns since the recording started (ticks without time base) */
    uint64_t dur;         /* RETURN: duration, same unit */
    uint64_t count;
    uintptr_t *thread_user; /* a per-thread word for the hook's own use, starts 0 */
};
/* Called (if set) for each COUNTS chunk (counting mode: one segment of one process, closed
 * by ptcall_mark or the process's end; docs/trace-format.md 4.13) after its calls were added
 * to the functions' figures: hdr as in the file, label its text, and n functions with their
 * session function ids (ptc_session_func) and calls. Its return value: 0 to go on, or a
 * negative -PTC_E_* that stops the decode. Not called by parallel workers but the first. */
typedef int (*ptc_counts_hook)(void *ctx, uint32_t pid, const struct ptc_counts *hdr,
                               const char *label, const uint32_t *fids, const uint64_t *calls,
                               uint32_t n);
void ptc_session_set_counts_hook(struct ptc_session *s, ptc_counts_hook fn, void *ctx);
typedef void (*ptc_call_hook)(void *ctx, const struct ptc_call_event *e);
void ptc_session_set_call_hook(struct ptc_session *s, ptc_call_hook hook, void *ctx);
/* ptc_reader_set_read_hook() on the reader of ptc_decode_file() (set before it): fn sees every
 * byte of the file it decodes, in order. ptc_decode_file_threads() with more than one thread
 * does not call it. */
void ptc_session_set_read_hook(struct ptc_session *s, void (*fn)(void *ctx, const void *data,
                                                                 size_t n),
                               void *ctx);
/* Called (if set) whenever a thread is finished and its per-thread word may be freed. */
void ptc_session_set_thread_end_hook(struct ptc_session *s,
                                     void (*fn)(void *ctx, uint32_t pid, uint32_t tid,
                                                uintptr_t *thread_user),
                                     void *ctx);

/* Names for views: the executable of process pid and the name of thread (pid, tid), as the
 * trace recorded them; NULL when it did not. Valid until the session is freed. */
const char *ptc_session_process_name(const struct ptc_session *s, uint32_t pid);
const char *ptc_session_thread_name(const struct ptc_session *s, uint32_t pid, uint32_t tid);
/* The names thread (pid, tid) had before ptc_session_thread_name's (its last), oldest first:
 * the name at its first event and each change the trace recorded (THREAD_NAME chunks, a
 * THREAD exit chunk's name). Returns how many; *names valid until the session is freed. */
size_t ptc_session_thread_renamed(const struct ptc_session *s, uint32_t pid, uint32_t tid,
                                  const char *const **names);

/* The trace reader for other readers of trace files (the Intel PT tools' ptc_pt_read_file(),
 * `ptcall record`'s summary), which word their own messages and checks. */
/* Chunks for which skip(ctx, header) returns 1 are handed out without their CRC checked (a
 * parallel worker leaves other workers' chunks to them; a reader that checks CRCs itself,
 * or needs only headers, saves the time). */
void ptc_reader_set_crc_skip(struct ptc_reader *r,
                             int (*skip)(void *ctx, const struct ptc_chunk_header *h), void *ctx);
/* Every byte of the input, in order, as the reader reads it: fn(ctx, data, n) right after
 * each read, while the bytes are still in the cache (`ptcall db add` hashes the file so,
 * instead of reading it a second time). What was read already (the file header, at open) is
 * handed over at once. */
typedef void (*ptc_read_hook)(void *ctx, const void *data, size_t n);
void ptc_reader_set_read_hook(struct ptc_reader *r, ptc_read_hook fn, void *ctx);
/* After an error of ptc_reader_next(): whether it may be called again (1: the damaged chunk
 * was skipped), or the error is final (0). */
int ptc_reader_can_continue(const struct ptc_reader *r);
/* After an error of ptc_reader_next() about a damaged or cut chunk: looks for the next whole
 * chunk (a plausible header, zero padding, its CRC right) from the byte after the damaged
 * chunk's start, so that chunks written after a cut one (a disk that filled up and freed
 * space, a process killed in the middle of a write while others went on) are found however
 * the damage shifted them. Returns 1 when ptc_reader_next() will read that chunk, 0 when none
 * follows (the reader is at the end), -1 when the error cannot be passed (a read error, out
 * of memory). *skipped: the bytes passed over from the damaged chunk's start. */
int ptc_reader_resync(struct ptc_reader *r, uint64_t *skipped);
/* After an error of ptc_reader_next(): 1 with the header of the chunk it failed on (as read,
 * unchecked) and that chunk's file offset, or 0 when it failed before a whole chunk header
 * (at ptc_reader_offset()). */
int ptc_reader_failed_chunk(const struct ptc_reader *r, struct ptc_chunk_header *h,
                            uint64_t *offset);

/* Before decoding: the session's per-function figures and edges (ptc_session_func_stats,
 * ptc_session_edges, and the totals made from them: ptc_totals.calls and total_time) are
 * not wanted, because a call hook computes what it shows; they then read as zero. The other
 * totals (events, gaps, losses, ...) and the shadow stacks are kept, and the hook sees the
 * same calls. Saves a few per cent of a hooked decode. */
void ptc_session_skip_aggregates(struct ptc_session *s);

/* Raw events before the shadow stacks, for models of the trace itself (`ptcall bandwidth`,
 * per-function bytes in `ptcall stat`): every HIT and GAP event of a thread in that thread's
 * order, and its FORK events, as the front-ends feed them, in runs of n. Makes the decode
 * serial and takes the general loops (as a call hook does). */
typedef void (*ptc_hit_hook)(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev,
                             size_t n);
void ptc_session_set_hit_hook(struct ptc_session *s, ptc_hit_hook hook, void *ctx);
/* With a hit hook: the hook is all that is wanted. No shadow stacks, calls, edges or times
 * are kept (they read as zero); the event totals, gaps and losses are. */
void ptc_session_hits_only(struct ptc_session *s);

/* A stub of process pid: its run-time address, function id, kind (enum ptcall_stub_kind or
 * PTC_STUB_CALL), exit/landing number, and the object it belongs to (as its MODULE chunk
 * said: path, load bias, stub section, identity). */
struct ptc_stub_desc {
    uint64_t address;
    uint32_t func;
    uint16_t kind;
    uint16_t site;
    const char *module;       /* valid until the session is freed */
    uint64_t load_bias;
    uint64_t stubs_start, stubs_end;
    uint64_t identity;
};
/* The time base that turns process pid's TSC values into the ns of struct ptc_call_event's
 * time (time_zero + ticks * time_mult >> time_shift). Returns 0, or -PTC_E_ARG when the
 * trace has none (times are ticks). */
int ptc_session_timebase(const struct ptc_session *s, uint32_t pid, struct ptc_timebase *out);
/* Returns 0, or -PTC_E_BADSTUB when no loaded module of pid defines stub_id. */
int ptc_session_stub(const struct ptc_session *s, uint32_t pid, uint32_t stub_id,
                     struct ptc_stub_desc *out);

/* What the trace says of the recording itself, for catalogues of runs (`ptcall db add`):
 * the file header's wall-clock start, RECORD_INFO's command line, RECORD_END's duration,
 * and the executable of the first traced process. Strings are valid until the session is
 * freed. */
struct ptc_recording {
    uint64_t created_ns;      /* CLOCK_REALTIME when recording started; 0 if not known */
    int has_info;             /* a RECORD_INFO chunk was read */
    uint32_t argc;
    const char *const *argv;  /* its command line (argc strings) */
    int has_end;              /* a RECORD_END chunk was read */
    uint64_t wall_ns;         /* RECORD_END: how long the recording lasted */
    uint64_t cpu_ns;          /* RECORD_END (2.7): the command's CPU time; 0 if not known */
    const char *first_exe;    /* the first PROCESS chunk's executable; NULL if none */
};
void ptc_session_recording(const struct ptc_session *s, struct ptc_recording *out);
/* Every instrumented object the trace's MODULE chunks announced, once per (path,
 * identity), in the order first seen. identity is the MODULE chunk's (FNV-1a 64 over the
 * unit hashes of the object's map: docs/trace-format.md 4.4), not an ELF build id. */
struct ptc_module_desc {
    const char *path;
    uint64_t identity;
    uint32_t num_funcs;
};
/* The modules and their count; *out is valid until the session is freed. */
size_t ptc_session_modules(const struct ptc_session *s, const struct ptc_module_desc **out);
/* Instrumented objects the runtime refused to trace (MODULE_REFUSED chunks,
 * docs/trace-format.md 4.16): their map was damaged, or the runtime ran out of memory or
 * could not patch them. Their functions are in no figure, so a trace with any is not
 * complete (ptc_totals.refused_objects). In file order, one per chunk (an object refused in
 * several processes is listed for each). */
struct ptc_refused_object {
    uint32_t pid;             /* the process that refused it */
    uint64_t tsc;             /* when */
    const char *path;         /* the object's path; valid until the session is freed */
    const char *reason;       /* the runtime's reason, as its warning said it */
};
uint32_t ptc_session_num_refused(const struct ptc_session *s);
/* Refused object i (0 .. ptc_session_num_refused() - 1): 0, or -PTC_E_ARG when out of
 * range. */
int ptc_session_refused(const struct ptc_session *s, uint32_t i, struct ptc_refused_object *out);

/* Why processes ended where PROCESS_END cannot say it (END_CAUSE chunks, docs/trace-format.md
 * 4.18): a sanitizer's report stopped them. In file order. */
struct ptc_end_cause_info {
    uint32_t pid;
    uint32_t kind;            /* enum ptc_end_cause_kind (trace_format.h) */
    int32_t status;           /* the exit status (or signal, abort_on_error) it ended with */
    const char *what;         /* "AddressSanitizer", ...; valid until the session is freed */
};
uint32_t ptc_session_num_end_causes(const struct ptc_session *s);
/* End cause i: 0, or -PTC_E_ARG when out of range. */
int ptc_session_end_cause(const struct ptc_session *s, uint32_t i, struct ptc_end_cause_info *out);
/* Windows (docs/trace-format.md 4.19): per thread, the span its events cover, for threads
 * whose trace does not hold their whole life -- a process attached to or snapshotted, a
 * WINDOW chunk -- or that ended with frames still open. Times on the scale of struct
 * ptc_call_event's time (has_time 0: untimed). */
struct ptc_thread_window {
    uint32_t pid, tid;
    int windowed;             /* its process was attached to or snapshotted, or WINDOW said */
    int has_chunk;            /* a WINDOW chunk was read: flags and lost_before are its */
    uint32_t flags;           /* PTC_WINDOW_F_* */
    uint64_t lost_before;     /* PTC_WINDOW_F_WRAPPED: events overwritten before from */
    int has_time;
    uint64_t from, to;        /* the window: WINDOW's tsc_from/tsc_to, else the thread's first
                                 event and the end of its trace */
    uint64_t entered_before;  /* its calls entered before from */
    uint64_t still_open;      /* its frames still open at to */
};
void ptc_session_windows(const struct ptc_session *s,
                         void (*fn)(void *ctx, const struct ptc_thread_window *w), void *ctx);
/* SNAPSHOT chunks (docs/trace-format.md 4.17), in file order. */
struct ptc_snapshot_info {
    uint32_t pid;
    uint32_t kind;            /* enum ptc_snapshot_kind */
    uint32_t tid;             /* the thread that asked, crashed or triggered; 0 if none */
    int32_t signo;            /* PTC_SNAP_CRASH: the signal */
    uint64_t addr;            /* PTC_SNAP_CRASH: the fault address */
    int has_time;
    uint64_t time;            /* when, on the scale of struct ptc_call_event's time */
    const char *why;          /* valid until the session is freed */
};
uint32_t ptc_session_num_snapshots(const struct ptc_session *s);
/* Snapshot i: 0, or -PTC_E_ARG when out of range. */
int ptc_session_snapshot(const struct ptc_session *s, uint32_t i, struct ptc_snapshot_info *out);
/* "API", "external", "crash", "trigger" or "unknown". */
const char *ptc_snapshot_kind_name(uint32_t kind);

/* Tracing within a budget (issue 28; docs/trace-format.md 4.20, 4.21): in a trace of events,
 * each function was traced (its events are in the trace), counted (a counting trampoline: its
 * calls are in COUNTS chunks, MODULE_COUNTED), or neither (the selection left it out). Its
 * calls (ptc_func_stats.calls) are exact either way: COUNTS calls plus entries in events. */
enum ptc_func_state {
    PTC_FUNC_NEITHER = 0,     /* left out by the selection: its calls say nothing */
    PTC_FUNC_TRACED = 1,      /* armed in some process (the default without selection) */
    PTC_FUNC_COUNTED = 2,     /* counted, not traced: calls only, no times, no call graph
                                 (every function of a counting mode trace, record --counts) */
};
/* Function id's state; PTC_FUNC_NEITHER for an id out of range. */
int ptc_session_func_state(const struct ptc_session *s, uint32_t id);
/* "traced", "counted", "-" (neither). */
const char *ptc_func_state_name(int state);
struct ptc_func_states {
    int mixed;                /* the trace has MODULE_COUNTED or BUDGET chunks: views show
                                 each function's state */
    uint32_t traced, counted, neither; /* functions of the module tables in each state */
    uint32_t demoted;         /* of the traced, those a budget's governor demoted: traced
                                 until then, counted after (BUDGET source GOVERNOR) */
    int calls_known;          /* calls_traced is known (0 after ptc_session_skip_aggregates) */
    uint64_t calls_traced;    /* entries seen in events (the trace's share of all calls) */
    uint64_t calls_counted;   /* calls read from COUNTS chunks (= ptc_totals.counted_calls;
                                 after a pilot, the traced functions' pilot calls too) */
};
void ptc_session_func_states(const struct ptc_session *s, struct ptc_func_states *out);
/* Whether a budget's governor demoted function id in some process: its calls until then are
 * in the events (with times), its calls after in COUNTS chunks (calls only). */
int ptc_session_func_demoted(const struct ptc_session *s, uint32_t id);
/* BUDGET chunks, in file order: what a recording was asked to keep and what it chose. */
struct ptc_budget_info {
    uint32_t pid;
    uint32_t kind;            /* enum ptc_budget_kind (trace_format.h) */
    uint32_t source;          /* enum ptc_budget_source */
    uint32_t outcome;         /* enum ptc_budget_outcome (common/ptc_budget.h): 0 ok, 1 all,
                                 2 below counting */
    double limit;             /* OVERHEAD: a fraction (0.05); RATE: bytes per second */
    double aux_bytes;         /* RATE: the AUX buffer's size */
    double per_event, per_count, predicted; /* the cost model and the chosen set's cost */
    int has_time;
    uint64_t time;            /* when the choice took effect, on struct ptc_call_event's scale */
    uint64_t pilot_ns;        /* PILOT: how long the pilot ran */
    uint64_t candidates, traced;
    uint64_t calls_total, calls_traced; /* over the pilot or the previous run */
    const char *note;         /* the recorder's words; valid until the session is freed */
};
uint32_t ptc_session_num_budgets(const struct ptc_session *s);
/* Budget i: 0, or -PTC_E_ARG when out of range. */
int ptc_session_budget(const struct ptc_session *s, uint32_t i, struct ptc_budget_info *out);
/* "overhead", "rate"; "pilot", "previous"; "ok", "all", "below-counting"; "unknown" else. */
const char *ptc_budget_kind_name(uint32_t kind);
const char *ptc_budget_source_name(uint32_t source);
const char *ptc_budget_outcome_name(uint32_t outcome);

#endif
