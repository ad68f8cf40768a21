/* ptcall trace file format, version 1 (contract 2: the trace file).
 *
 * A trace file is a 64-byte file header followed by chunks. Every chunk is a 24-byte
 * header, `payload_size` bytes of payload, and zero padding to a multiple of 8. Several
 * processes append chunks to the same file concurrently (O_APPEND, one write per chunk),
 * so chunks of different processes and threads interleave; within one (pid, tid) stream
 * chunks appear in order and `seq` counts up from 0, so a missing chunk is detectable.
 * Readers stream the file chunk by chunk; nothing needs the whole file in memory.
 *
 * Documented in docs/trace-format.md. Little-endian.
 */
#ifndef PTCALL_TRACE_FORMAT_H
#define PTCALL_TRACE_FORMAT_H

#include <stdint.h>

#define PTC_FILE_MAGIC "PTCALLTR" /* 8 bytes, no NUL */
#define PTC_VERSION_MAJOR 2u      /* what writers write (2: the chunk CRC covers the header) */
#define PTC_VERSION_MAJOR_MIN 1u  /* readers read majors MIN..MAJOR and reject the others */
#define PTC_VERSION_MINOR 8u      /* readers accept any minor: new chunks are optional (1.1:
                                     MODULE stub kind PTC_STUB_CALL; 1.2: the optional
                                     MODULE_ARMED chunk; both are in 2.0; 2.1: the optional
                                     COUNTS and MARK chunks; 2.2: the optional SPAWN and
                                     MODULE_REFUSED chunks; 2.3: LOSS kind WRITE; 2.4: PROCESS
                                     how ATTACH and SNAPSHOT, PROCESS_END how DETACH and
                                     SNAPSHOT, the optional SNAPSHOT, THREAD_NAME and WINDOW
                                     chunks; 2.5: the optional BUDGET and MODULE_COUNTED
                                     chunks, COUNTS flag PILOT, TIMEBASE source TICKER; 2.6: the
                                     optional MODULE_BLOCKING chunk; 2.7: RECORD_END's cpu_ns;
                                     2.8: BUDGET source GOVERNOR) */

struct ptc_file_header {
    char magic[8];          /* PTC_FILE_MAGIC */
    uint16_t version_major;
    uint16_t version_minor;
    uint32_t header_size;   /* 64 */
    uint64_t created_ns;    /* CLOCK_REALTIME when recording started */
    uint32_t backend;       /* enum ptc_backend */
    uint32_t flags;         /* PTC_FILE_F_* */
    uint64_t reserved[4];
};

enum ptc_backend {
    PTC_BACKEND_SOFT = 1,
    PTC_BACKEND_PT = 2,
    PTC_BACKEND_IMPORT = 3, /* Intel PT bytes captured elsewhere (ptcall import) */
};

#define PTC_FILE_F_TIMED 0x1u      /* per-event timestamps were requested */
#define PTC_FILE_F_DROP 0x2u       /* soft backend dropped events instead of waiting */

struct ptc_chunk_header {
    uint16_t type;          /* enum ptc_chunk_type */
    uint16_t flags;         /* PTC_CHUNK_F_* */
    uint32_t payload_size;  /* bytes of payload, without padding */
    uint32_t pid;           /* process the chunk belongs to; 0 = the recording session */
    uint32_t tid;           /* thread for per-thread chunks, 0 for process-level chunks */
    uint32_t seq;           /* per (pid, tid) stream, from 0 */
    uint32_t crc32;         /* zlib crc32 of the payload, then (major 2) of the 20 header
                               bytes before this field (ptc_chunk_crc) */
};

#define PTC_CHUNK_F_OPTIONAL 0x1u  /* a reader that does not know the type may skip it */

enum ptc_chunk_type {
    PTC_CHUNK_RECORD_INFO = 1,   /* pid 0: struct ptc_record_info */
    PTC_CHUNK_PROCESS = 2,       /* struct ptc_process: a traced process began */
    PTC_CHUNK_TIMEBASE = 3,      /* struct ptc_timebase: how to turn TSC into ns */
    PTC_CHUNK_MODULE = 4,        /* struct ptc_module: an instrumented object, with its map */
    PTC_CHUNK_MODULE_UNLOAD = 5, /* struct ptc_module_unload */
    PTC_CHUNK_THREAD = 6,        /* struct ptc_thread: start or exit of a thread */
    PTC_CHUNK_SOFT_EVENTS = 7,   /* struct ptc_soft_events + encoded events of one thread */
    PTC_CHUNK_LOSS = 8,          /* struct ptc_loss: data lost outside an event stream */
    PTC_CHUNK_PROCESS_END = 9,   /* struct ptc_process_end */
    PTC_CHUNK_RECORD_END = 10,   /* pid 0: struct ptc_record_end */
    PTC_CHUNK_MODULE_ARMED = 11, /* OPTIONAL (minor 2): struct ptc_module_armed */
    PTC_CHUNK_COUNTS = 12,       /* OPTIONAL (2.1): struct ptc_counts, counting mode */
    PTC_CHUNK_MARK = 13,         /* OPTIONAL (2.1): struct ptc_mark, ptcall_mark in a trace */
    PTC_CHUNK_SPAWN = 14,        /* OPTIONAL (2.2): struct ptc_spawn, posix_spawn in a trace */
    PTC_CHUNK_MODULE_REFUSED = 15, /* OPTIONAL (2.2): struct ptc_module_refused, an
                                      instrumented object the runtime left untraced */
    PTC_CHUNK_SNAPSHOT = 16,     /* OPTIONAL (2.4): struct ptc_snapshot, process-level: why and
                                    when a flight recorder's snapshot was taken */
    PTC_CHUNK_THREAD_NAME = 17,  /* OPTIONAL (2.4): struct ptc_thread_name, per thread: the
                                    thread's name changed (as perf's COMM) */
    PTC_CHUNK_WINDOW = 18,       /* OPTIONAL (2.4): struct ptc_window, per thread: the span of
                                    the thread's events in an attach or a snapshot */
    PTC_CHUNK_BUDGET = 19,       /* OPTIONAL (2.5): struct ptc_budget, process-level: the budget
                                    a recording was asked to keep, the cost model, and what
                                    was chosen (record --overhead / --budget) */
    PTC_CHUNK_MODULE_COUNTED = 20, /* OPTIONAL (2.5): struct ptc_module_counted: the functions
                                      of a module counted (not traced) in a trace of events */
    PTC_CHUNK_END_CAUSE = 22,    /* OPTIONAL (2.4, SERVE's number): struct ptc_end_cause,
                                    process-level: why the process ended where PROCESS_END
                                    cannot say it (a sanitizer stopped it) */
    PTC_CHUNK_MODULE_BLOCKING = 23, /* OPTIONAL (2.6): struct ptc_module_blocking, right after
                                       the MODULE chunk it qualifies: its functions are the
                                       C library's blocking calls (docs/trace-format.md 4.22) */
    /* 32..63 are Intel PT chunks (docs/trace-format.md, "Intel PT chunks") */
    PTC_CHUNK_PT_FIRST = 32,
    PTC_CHUNK_PT_LAST = 63,
};

struct ptc_record_info {
    uint32_t backend;       /* enum ptc_backend */
    uint32_t flags;         /* PTC_FILE_F_* */
    uint64_t start_ns;      /* CLOCK_MONOTONIC at launch */
    uint32_t argc;
    uint32_t reserved;
    /* then argc NUL-terminated strings: the traced command line */
};

enum ptc_process_how {
    PTC_PROC_START = 1,
    PTC_PROC_FORK = 2,
    PTC_PROC_EXEC = 3,
    PTC_PROC_ATTACH = 4,   /* 2.4: a recorder attached to the running process (record --pid):
                              each thread's events begin mid-stack */
    PTC_PROC_SNAPSHOT = 5, /* 2.4: a flight recorder's snapshot: each thread's events begin
                              mid-stack, at the oldest event its ring still held */
};

struct ptc_process {
    uint32_t ppid;
    uint32_t how;           /* enum ptc_process_how */
    uint32_t parent_tid;    /* fork: the thread that called fork */
    uint32_t flags;         /* PTC_FILE_F_* in force in this process */
    uint64_t tsc;           /* when the process registered its first object */
    uint64_t time_ns;       /* CLOCK_MONOTONIC at the same moment */
    /* then the executable's path, NUL-terminated */
};

/* PTC_TIME_TICKER (2.5): events carry a clock word a runtime thread sets to the TSC every
 * resolution_ns (struct ptc_timebase's reserved1), read by a plain load: the same formula
 * turns it into ns, and no interval is known to better than resolution_ns. */
enum ptc_timebase_source { PTC_TIME_PERF_PAGE = 1, PTC_TIME_CALIBRATED = 2, PTC_TIME_TICKER = 3 };

/* ns = time_zero + (tsc >> time_shift) * time_mult
 *      + (((tsc & ((1 << time_shift) - 1)) * time_mult) >> time_shift)
 * (the perf_event_mmap_page formula; calibrated time bases use it too). */
struct ptc_timebase {
    uint32_t source;        /* enum ptc_timebase_source */
    uint16_t time_shift;
    uint16_t reserved0;
    uint32_t time_mult;
    uint32_t reserved1;     /* PTC_TIME_TICKER: the clock word's period, ns (its resolution);
                               0 otherwise */
    uint64_t time_zero;
    uint64_t tsc_hz;        /* informational */
};

struct ptc_module {
    uint32_t module_id;     /* per process, in registration order from 0 */
    uint32_t first_stub_id; /* per-process dense stub ids: first_stub_id + index */
    uint32_t num_stubs;
    uint32_t num_funcs;
    uint64_t load_bias;     /* run-time address minus ELF virtual address */
    uint64_t stubs_start;   /* run-time bounds of the object's ptcall_stubs section */
    uint64_t stubs_end;
    uint64_t identity;      /* FNV-1a 64 over the unit hashes of the object's map blobs */
    uint32_t path;          /* string offset: the object's path */
    uint32_t strings_size;
    /* then struct ptc_module_stub[num_stubs], struct ptc_module_func[num_funcs],
     * char strings[strings_size] */
};

struct ptc_module_stub {
    uint64_t address;       /* run-time address of the stub */
    uint32_t func;          /* index into this chunk's function table */
    uint16_t kind;          /* enum ptcall_stub_kind (map_format.h), or PTC_STUB_CALL */
    uint16_t site;
};
/* MODULE stub kind (minor 1): the ENTRY stub of a function whose exits this process did not
 * record (a leaf, recorded untimed by the soft backend): one hit of it is the function's
 * call and its return. */
#define PTC_STUB_CALL 4u

struct ptc_module_func {
    uint32_t name;          /* string offsets, as in struct ptcall_map_func */
    uint32_t linkage_name;
    uint32_t file;
    uint32_t line;
};

/* Which functions of a module had their call sites armed (minor 2; written with
 * PTC_CHUNK_F_OPTIONAL, right after the MODULE chunk it qualifies, when `ptcall record
 * --only/--skip` chose what to trace). A function whose bit is clear was not traced: it may
 * have run any number of times. A module without this chunk had every function armed. */
struct ptc_module_armed {
    uint32_t module_id;     /* the process's MODULE chunk of this id, announced before */
    uint32_t num_funcs;     /* that MODULE chunk's num_funcs */
    uint32_t num_armed;     /* bits set below */
    uint32_t spec_size;     /* bytes of the selection text, its NUL included */
    /* then uint8_t armed[(num_funcs + 7) / 8]: bit (i % 8) of byte i / 8 set = function i
     * (of the MODULE chunk's function table) was armed; then the selection as given,
     * NUL-terminated, e.g. "--only 'a*' --skip 'ab*'" */
};

/* Calls per function counted by the runtime's counting mode (2.1; process-level, written with
 * PTC_CHUNK_F_OPTIONAL): one chunk per segment, a segment being the calls since the previous
 * mark (ptcall_mark) or the start, up to this mark or the end. Function entries only: no
 * times, no order, no call graph. */
struct ptc_counts {
    uint32_t segment;       /* 0, 1, ...: the segment's index in its process */
    uint32_t flags;         /* PTC_COUNTS_F_* */
    uint32_t num_modules;   /* module entries that follow */
    uint32_t label_size;    /* bytes of the label at the end, its NUL included (at least 1) */
    uint64_t tsc;           /* when the segment closed */
    uint64_t reserved;      /* 0 */
    /* then num_modules struct ptc_counts_module; then, for each of them in order, num_funcs
     * uint64_t calls (function i of that MODULE chunk's function table); then the label,
     * NUL-terminated ("" for the segment that ends at exit) */
};
#define PTC_COUNTS_F_MARK 0x1u  /* closed by ptcall_mark(label) */
#define PTC_COUNTS_F_END 0x2u   /* closed by the end of the process (exit, _exit, exec) */
#define PTC_COUNTS_F_CRASH 0x4u /* closed by a fatal signal: the segment's input crashed */
#define PTC_COUNTS_F_PILOT 0x8u /* (2.5) closed at the end of a budget's pilot: every function
                                   was counted until then, and its chosen functions traced
                                   after (a BUDGET chunk follows) */
/* ptcall_mark(label) in a trace of events (2.1; process-level, PTC_CHUNK_F_OPTIONAL): thread
 * tid passed a mark here. The runtime writes the thread's events before the mark first, so
 * in file order the chunk follows them and precedes the events after it. */
struct ptc_mark {
    uint32_t tid;           /* the thread that called ptcall_mark */
    uint32_t index;         /* 0, 1, ...: the mark's index in its process */
    uint64_t tsc;           /* when */
    uint32_t label_size;    /* bytes of the label, its NUL included (at least 1, at most 4096) */
    uint32_t reserved;      /* 0 */
    /* then the label, NUL-terminated */
};

/* posix_spawn / posix_spawnp in a trace of events (2.2; process-level, PTC_CHUNK_F_OPTIONAL):
 * thread tid started process child_pid running path here. Written like a MARK chunk (the
 * thread's events before the call precede it in file order). glibc spawns with clone and its
 * own exec, which no fork or exec wrapper sees: without this chunk the child is a process
 * whose link to its parent's timeline is lost. */
struct ptc_spawn {
    uint32_t tid;           /* the thread that called posix_spawn */
    uint32_t child_pid;     /* the pid it returned */
    uint64_t tsc;           /* when the call began (the child runs after it) */
    uint32_t path_size;     /* bytes of the path, its NUL included (1 to 4096) */
    uint32_t reserved;      /* 0 */
    /* then the path the call was given (posix_spawnp: the file name as given), NUL-terminated */
};

/* An instrumented object (it has a ptcall_map) that the runtime refused to trace (2.2;
 * process-level, PTC_CHUNK_F_OPTIONAL): its map names places outside the object, or the
 * runtime ran out of memory or could not make its stubs writable. Its functions are in no
 * figure of the trace, which is therefore not complete. The payload is exactly
 * sizeof(struct ptc_module_refused) + path_size + reason_size bytes. */
struct ptc_module_refused {
    uint64_t tsc;           /* when it was refused */
    uint32_t path_size;     /* bytes of the path, its NUL included (2 to PTC_REFUSED_PATH_MAX) */
    uint32_t reason_size;   /* bytes of the reason, its NUL included (2 to
                               PTC_REFUSED_REASON_MAX) */
    /* then the object's path, NUL-terminated, then the reason (the runtime's warning's text),
     * NUL-terminated; neither holds another NUL */
};
#define PTC_REFUSED_PATH_MAX 4096u
#define PTC_REFUSED_REASON_MAX 1024u

struct ptc_counts_module {
    uint32_t module_id;     /* the process's MODULE chunk of this id, announced before */
    uint32_t num_funcs;     /* that MODULE chunk's num_funcs */
    uint64_t identity;      /* that MODULE chunk's identity */
};

struct ptc_module_unload {
    uint32_t module_id;
    uint32_t reserved;
    uint64_t tsc;
};

enum ptc_thread_event { PTC_THREAD_START = 1, PTC_THREAD_EXIT = 2 };

struct ptc_thread {
    uint32_t event;         /* enum ptc_thread_event */
    uint32_t reserved;
    uint64_t tsc;
    uint64_t events;        /* at exit: stub hits recorded by the thread */
    uint64_t dropped;       /* at exit: stub hits dropped (drop mode) */
    uint64_t waits;         /* at exit: times the thread waited for a free buffer */
    uint64_t wait_ns;       /* at exit: time spent waiting */
    /* then the thread's name, NUL-terminated */
};

/* Soft event stream. After the fixed part comes a byte stream of records, each starting
 * with an unsigned LEB128 value v:
 *   v >= PTC_SOFT_ID_BASE : a stub hit, stub id v - PTC_SOFT_ID_BASE;
 *   v <  PTC_SOFT_ID_BASE : a control record (enum ptc_soft_control) and its operands.
 * In a timed chunk (PTC_SOFT_F_TIMED) every record is followed by a zigzag LEB128 TSC delta
 * from the previous record (the first from start_tsc). */
#define PTC_SOFT_ID_BASE 16u
#define PTC_SOFT_F_TIMED 0x1u

enum ptc_soft_control {
    PTC_SOFT_LOSS = 0,      /* operand: LEB128 count of stub hits dropped right here */
    PTC_SOFT_FORK = 1,      /* operand: LEB128 child pid; the child's stack starts as this one */
};

struct ptc_soft_events {
    uint64_t start_tsc;     /* time base of the first delta; block start if untimed */
    uint64_t end_tsc;       /* when the block was closed */
    uint32_t num_records;
    uint32_t flags;         /* PTC_SOFT_F_* */
    /* then the encoded records */
};

enum ptc_loss_kind {
    PTC_LOSS_DROPPED = 1,   /* soft: stub hits dropped */
    PTC_LOSS_CRASH = 2,     /* soft: buffered hits not written at a fatal signal */
    PTC_LOSS_PT_TRUNCATED = 3, /* pt: AUX buffer was full */
    PTC_LOSS_PT_OVERFLOW = 4,  /* pt: internal buffer overflow (OVF) */
    PTC_LOSS_PERF_LOST = 5,    /* pt: sideband records lost */
    PTC_LOSS_WRITE = 6,        /* soft (2.3): event records in chunks the runtime could not
                                  write (a full disk that freed space later, an I/O error) */
};

struct ptc_loss {
    uint32_t kind;          /* enum ptc_loss_kind */
    uint32_t tid;           /* thread concerned, 0 if unknown or all */
    uint64_t count;         /* stub hits, bytes or records, per kind */
    uint64_t tsc_from;
    uint64_t tsc_to;
    /* then a NUL-terminated human-readable note */
};

enum ptc_end_how {
    PTC_END_EXIT = 1,
    PTC_END_EXEC = 2,
    PTC_END_SIGNAL = 3,
    PTC_END__EXIT = 4,
    PTC_END_DETACH = 5,   /* 2.4: the recorder detached; the process went on untraced */
    PTC_END_SNAPSHOT = 6, /* 2.4: the end of a snapshot's window (the process went on, or died
                             of the signal its SNAPSHOT chunk names) */
};

/* 2.4, OPTIONAL, process-level (tid 0): a snapshot of the flight recorder's rings, written
 * right after the PROCESS chunk of a PTC_PROC_SNAPSHOT process. */
enum ptc_snapshot_kind {
    PTC_SNAP_API = 1,      /* the program called ptcall_snapshot(why) */
    PTC_SNAP_EXTERNAL = 2, /* ptcall snapshot PID */
    PTC_SNAP_CRASH = 3,    /* a fatal signal (signo, addr) */
    PTC_SNAP_TRIGGER = 4,  /* record --trigger: a function returned, or took longer than asked */
};
struct ptc_snapshot {
    uint32_t kind;          /* enum ptc_snapshot_kind */
    uint32_t tid;           /* the thread that asked, crashed or triggered; 0 if none */
    uint64_t tsc;           /* when */
    int32_t signo;          /* PTC_SNAP_CRASH: the signal, else 0 */
    uint32_t reserved;
    uint64_t addr;          /* PTC_SNAP_CRASH: the fault address (si_addr), else 0 */
    /* then why, NUL-terminated (the caller's text, the trigger, or the signal's name) */
};

/* 2.4, OPTIONAL, per thread: the thread's name changed at tsc (pthread_setname_np,
 * prctl(PR_SET_NAME)); the THREAD start chunk holds the name the thread had first. */
struct ptc_thread_name {
    uint64_t tsc;
    /* then the new name, NUL-terminated */
};

/* 2.4, OPTIONAL, process-level, right before the PROCESS_END it explains: what ended the
 * process (docs/trace-format.md 4.18). */
enum ptc_end_cause_kind {
    PTC_CAUSE_SANITIZER = 1, /* a sanitizer's report (its death callback ran); status is the
                                exit status the sanitizer's options give it (exitcode=) */
};
struct ptc_end_cause {
    uint32_t kind;          /* enum ptc_end_cause_kind */
    int32_t status;         /* as PROCESS_END's */
    uint64_t tsc;
    /* then the cause, NUL-terminated (PTC_CAUSE_SANITIZER: "AddressSanitizer", ...) */
};

/* 2.4, OPTIONAL, per thread: the span of a thread's events in a trace that does not hold
 * the thread's whole life (an attach, a snapshot). */
#define PTC_WINDOW_F_MIDSTACK 0x1u /* the events begin mid-stack: returns from calls entered
                                      before tsc_from may come first */
#define PTC_WINDOW_F_WRAPPED 0x2u  /* a ring: older events were overwritten (lost_before) */
#define PTC_WINDOW_F_OPEN_END 0x4u /* the thread was still running at tsc_to: calls open then
                                      had not returned */
struct ptc_window {
    uint64_t tsc_from;      /* the first event's time the window can vouch for */
    uint64_t tsc_to;        /* when the window ended (detach, snapshot) */
    uint32_t flags;         /* PTC_WINDOW_F_* */
    uint32_t reserved;
    uint64_t lost_before;   /* PTC_WINDOW_F_WRAPPED: events overwritten before tsc_from */
};

/* MODULE_COUNTED (2.5; process-level, PTC_CHUNK_F_OPTIONAL): in a trace of events, the
 * functions of a module the runtime counts (a counting trampoline per call) instead of
 * tracing; their calls are in the process's COUNTS chunks. A function neither armed
 * (MODULE_ARMED) nor counted was neither traced nor counted. Same layout as MODULE_ARMED. */
struct ptc_module_counted {
    uint32_t module_id;     /* the process's MODULE chunk of this id, announced before */
    uint32_t num_funcs;     /* that MODULE chunk's num_funcs */
    uint32_t num_counted;   /* bits set below */
    uint32_t reserved;      /* 0 */
    /* then uint8_t counted[(num_funcs + 7) / 8]: bit (i % 8) of byte i / 8 set = function i
     * is counted from tsc on (struct ptc_budget, or the process's start) */
};

enum ptc_budget_kind {
    PTC_BUDGET_KIND_OVERHEAD = 1, /* record --overhead PCT: limit = fraction of CPU time */
    PTC_BUDGET_KIND_RATE = 2,     /* record --budget RATE[,AUX]: limit = bytes per second */
};
enum ptc_budget_source {
    PTC_BUDGET_SRC_PILOT = 1,     /* counted in this process for pilot_ns, then chosen */
    PTC_BUDGET_SRC_PREVIOUS = 2,  /* counts of a previous run (a --counts trace, the runs
                                     database) */
    PTC_BUDGET_SRC_GOVERNOR = 3,  /* 2.8: after a pilot, the events measured over a period
                                     exceeded the budget: the functions the MODULE_ARMED and
                                     MODULE_COUNTED chunks that follow no longer trace are
                                     counted from tsc on (demoted) */
};
/* BUDGET (2.5; process-level, PTC_CHUNK_F_OPTIONAL): written when the chosen set takes
 * effect (the end of the pilot, or the start), and (2.8, source GOVERNOR) each time a
 * governor demotes traced functions after the pilot. outcome is enum ptc_budget_outcome
 * (common/ptc_budget.h); the note says in words what was done, e.g. "counting alone costs
 * 7.1 % > 5 %: nothing traced, every function counted". */
struct ptc_budget {
    uint32_t kind;          /* enum ptc_budget_kind */
    uint32_t source;        /* enum ptc_budget_source */
    double limit;           /* fraction (0.05) or bytes per second */
    double aux_bytes;       /* RATE: the AUX buffer's size; 0 otherwise */
    double per_event;       /* the model: ns (or PT bytes) per traced event, measured */
    double per_count;       /* ns per counted call, measured (0 under PT) */
    double predicted;       /* the chosen set's cost as a fraction, or bytes per second */
    uint64_t tsc;           /* when the choice took effect */
    uint64_t pilot_ns;      /* PILOT: the pilot's wall time; 0 otherwise */
    uint64_t candidates, traced; /* functions */
    uint64_t calls_total, calls_traced; /* over the pilot or the previous run */
    uint32_t outcome;       /* enum ptc_budget_outcome */
    uint32_t note_size;     /* bytes of the note that follows, its NUL included */
    /* then the note, NUL-terminated */
};

/* MODULE_BLOCKING (2.6; process-level, PTC_CHUNK_F_OPTIONAL): every function of module
 * module_id is a pseudo-function standing for calls into a blocking function of the C
 * library (the runtime's module "[blocking]", one function per C library function, named as
 * it): the time in its calls is time the caller waited (a condition, a lock, I/O, a sleep,
 * a child), not time it ran. A reader that skips this chunk sees them as ordinary functions
 * of a module "[blocking]". */
#define PTC_BLOCKING_MODULE_PATH "[blocking]" /* the module's path in its MODULE chunk */
struct ptc_module_blocking {
    uint32_t module_id;     /* the process's MODULE chunk of this id, announced before */
    uint32_t num_funcs;     /* that MODULE chunk's num_funcs */
};

struct ptc_process_end {
    uint32_t how;           /* enum ptc_end_how */
    int32_t status;         /* exit code, or signal number for PTC_END_SIGNAL */
    uint64_t tsc;
    uint64_t events;        /* totals over the process's threads */
    uint64_t dropped;
    uint64_t waits;
};

struct ptc_record_end {
    int32_t wait_status;    /* as from waitpid() for the launched command */
    uint32_t flags;
    uint64_t wall_ns;
    uint32_t child_pid;
    uint32_t reserved;
};
/* Appended to RECORD_END from minor 2.7 (readers of a shorter payload: not known). */
struct ptc_record_end_cpu {
    uint64_t cpu_ns;        /* user + system CPU time of the launched command and the
                               descendants it waited for (getrusage RUSAGE_CHILDREN); 0: not
                               known (an attach; Intel PT traces before 2.8) */
};

#endif
