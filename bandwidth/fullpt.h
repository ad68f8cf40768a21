/* Full Intel PT, estimated (docs/bandwidth.md, "Full tracing, estimated"): what Intel PT
 * would write if it traced ALL user-space control flow of a program (no IP filter) for one
 * run, worked out from branch counts instead of a trace. Every figure here is an ESTIMATE
 * and the outputs must say so.
 *
 *   1. counts: ptc_fullpt_collect() runs the program under valgrind's callgrind (jump
 *      collection, per-instruction costs) and ptc_fullpt_parse() reads its output (also a
 *      saved one); every executed instruction is classified with the disassembly of its
 *      object (objdump), which tells conditional, direct, indirect branches and returns
 *      apart. Counts are kept per function (name, module).
 *   2. bytes: ptc_fullpt_estimate() turns the counts into packets and bytes for one PT
 *      configuration (timing, MTC period, CYC threshold, PSB period, return compression).
 *
 * Packet types are libipt's enum pt_packet_type (ppt_tnt_8, ppt_tip, ...), the same index the
 * stub-filtered simulator (ptsim.h) uses, so both can be printed side by side. */
#ifndef PTC_FULLPT_H
#define PTC_FULLPT_H

#include <stddef.h>
#include <stdint.h>

#define PTC_FULLPT_NPKT 32         /* per-type arrays, indexed by enum pt_packet_type */
#define PTC_FULLPT_RSTACK 64       /* the return-compression stack's depth */

/* IP payload classes of a TIP compressed against the last IP: 2 bytes (upper 48 bits as
 * the last IP's), 4 (upper 32), 6 (sign-extended 48 bits). Index 0, 1, 2. */
#define PTC_FULLPT_NIPC 3
extern const unsigned ptc_fullpt_ipc_bytes[PTC_FULLPT_NIPC];

/* Branch counts of one function, or of a whole run. */
struct ptc_fullpt_counts {
    uint64_t insns;                /* instructions executed (callgrind's Ir) */
    uint64_t cond, cond_taken;     /* conditional branches (Jcc, JrCXZ, LOOP*): a TNT bit each */
    uint64_t jmp, call;            /* direct jumps and calls: no packet */
    uint64_t ijmp, icall;          /* indirect jumps and calls: a TIP each */
    uint64_t ret;                  /* near returns */
    uint64_t ret_deep;             /* returns the 64-deep return stack cannot predict: a TIP
                                      even with return compression (estimate, see docs) */
    uint64_t sys;                  /* SYSCALL/SYSENTER/INT n: TIP.PGD() and TIP.PGE(next) */
    uint64_t ind_ipc[PTC_FULLPT_NIPC];  /* ijmp + icall by IP payload class */
    uint64_t ret_ipc[PTC_FULLPT_NIPC];  /* ret by payload class (when not compressed) */
    uint64_t deep_ipc[PTC_FULLPT_NIPC]; /* ret_deep by payload class */
    uint64_t sys_ipc[PTC_FULLPT_NIPC];  /* the TIP.PGE after each syscall, by payload class */
};

struct ptc_fullpt_func {
    char *name;                    /* callgrind's name (the symbol), or the disassembly's label */
    char *module;                  /* path of the object the code is in ("???" if unknown) */
    int in_main;                   /* 1: the main executable */
    struct ptc_fullpt_counts c;
};

struct ptc_fullpt_profile {
    size_t nfunc;
    struct ptc_fullpt_func *func;  /* sorted by module, then name */
    struct ptc_fullpt_counts total;     /* every user-space instruction the run executed */
    struct ptc_fullpt_counts main;      /* the main executable's share of it */
    char *main_module;             /* path of the main executable, NULL if not known */
    unsigned processes;            /* processes whose callgrind outputs were merged */
    uint64_t unclassified_insns;   /* executed at addresses no disassembly covered: their
                                      branches are missing from the counts */
    uint64_t excluded_insns;       /* valgrind's own preloaded code (not the program's) */
    char *notes;                   /* what was missing or assumed, for the output; or NULL */
    char *workdir;                 /* collect: where callgrind.out.PID and valgrind.log.PID are */
    int exit_status;               /* collect: the program's wait status (0 for parse) */
    double run_seconds;            /* collect: wall time of the run under valgrind */
};

/* Runs argv (argv[0] found in PATH like execvp) under valgrind --tool=callgrind with the
 * caller's stdin/stdout/stderr, writing valgrind's files into a new directory fullpt.XXXXXX
 * under workdir (kept, its path in (*out)->workdir), or under $TMPDIR (removed afterwards)
 * when workdir is NULL; follows forked and exec'd children (outputs merged; the main
 * executable is the first process's). A program that exits non-zero is still measured (its
 * wait status is in exit_status). Takes as long as the program under callgrind (tens of times
 * its normal run) plus about 0.3 s. Returns 0, or -1 with why set (valgrind or objdump
 * missing, the program not runnable, no output). */
int ptc_fullpt_collect(const char *const *argv, const char *workdir,
                       struct ptc_fullpt_profile **out, char *why, size_t n);

/* Reads one callgrind output written with --dump-instr=yes --collect-jumps=yes (better with
 * collect's other options too: --skip-plt=no --separate-recs=65 --show-below-main=yes; see
 * docs/bandwidth.md) and classifies its instructions with the disassembly of the objects it
 * names, which must still be the files that ran. vg_log: valgrind's -v -v log of the same
 * process (load addresses of the code callgrind reports at run-time addresses, PLT stubs),
 * or NULL (they are then derived from the direct calls into that code). Returns 0, or -1 with
 * why set. */
int ptc_fullpt_parse(const char *callgrind_file, const char *vg_log,
                     struct ptc_fullpt_profile **out, char *why, size_t n);

void ptc_fullpt_free(struct ptc_fullpt_profile *p);

/* The function called name whose module ends with module_suffix (any module if NULL);
 * NULL if none. */
const struct ptc_fullpt_func *ptc_fullpt_find(const struct ptc_fullpt_profile *p,
                                              const char *name, const char *module_suffix);

/* Timing packets, cumulative like perf's usual choices: TSC = TSC packets (in PSB+);
 * MTC = TSC + TMA + MTC; CYC = TSC + TMA + MTC + CYC. */
enum ptc_fullpt_timing {
    PTC_FULLPT_NONE = 0, PTC_FULLPT_TSC = 1, PTC_FULLPT_MTC = 2, PTC_FULLPT_CYC = 3
};

struct ptc_fullpt_cfg {
    int timing;                    /* enum ptc_fullpt_timing */
    unsigned mtc_period;           /* MTCFreq: an MTC every 2^mtc_period crystal ticks */
    unsigned cyc_threshold;        /* CycThresh: 0 = a CYC before every CYC-eligible packet;
                                      v > 0: only once 2^(v-1) cycles passed since the last */
    uint64_t psb_period;           /* bytes between PSB+ (0: only the one that starts the trace) */
    int ret_compression;           /* 1: compressed RETs are TNT bits (hardware default);
                                      0: noretcomp, every RET a TIP */
    uint64_t duration_tsc;         /* the run's time on CPU, in TSC ticks (needed by MTC/CYC) */
    uint64_t tsc_hz;               /* TSC frequency; the core clock is taken to be the same */
    uint64_t ctc_hz;               /* crystal (ART/CTC) frequency, for MTC */
};

/* perf's defaults: timing MTC, mtc_period 3, cyc_threshold 0, psb_period 16 KiB
 * (psb_period=3), return compression on; a 2.4 GHz TSC and a 24 MHz crystal; duration 0. */
void ptc_fullpt_cfg_default(struct ptc_fullpt_cfg *cfg);

/* Estimated packets and bytes, per packet type. */
struct ptc_fullpt_bytes {
    uint64_t packets[PTC_FULLPT_NPKT];
    uint64_t bytes[PTC_FULLPT_NPKT];
    uint64_t total;                /* bytes */
    uint64_t tnt_bits;             /* conditional branches + compressed returns */
    uint64_t tips;                 /* TIP packets (indirect branches, uncompressed returns) */
    uint64_t main_bytes;           /* total only: bytes of the main executable's functions */
    double bytes_per_sec;          /* over cfg.duration_tsc / cfg.tsc_hz; 0 when unknown */
    int estimate;                  /* always 1: say "estimated" wherever this is shown */
};

/* Fills total (the run) and, when per_func is not NULL, per_func[i] for p->func[i]
 * (control-flow packets and their CYC; PSB+, MTC and the MTC's CYC are only in total).
 * Returns 0, or -1 with why set when cfg is unusable: MTC/CYC without duration_tsc,
 * tsc_hz and ctc_hz, a psb_period smaller than a PSB+, a period field out of range. */
int ptc_fullpt_estimate(const struct ptc_fullpt_profile *p, const struct ptc_fullpt_cfg *cfg,
                        struct ptc_fullpt_bytes *total, struct ptc_fullpt_bytes *per_func,
                        char *why, size_t n);

/* Name of a packet type in this module's outputs ("tnt.8", "tip", "psb", ...). */
const char *ptc_fullpt_pkt_name(int ppt);

/* The model's pieces, exposed for the tests. TNT packets (1-byte short TNT, up to 6 bits)
 * for `bits` bits split by `flushes` packets that flush the TNT buffer (TIP, TIP.PGD),
 * the bits spread evenly over the min(flushes + 1, bits) stretches between them;
 * *full gets how many of those packets are full (6 bits, emitted on their own). */
uint64_t ptc_fullpt_tnt_packets(uint64_t bits, uint64_t flushes, uint64_t *full);
/* Bytes of a CYC packet carrying value v: 1 if v < 32, one more per further 7 bits. */
unsigned ptc_fullpt_cyc_bytes(uint64_t v);
/* Bytes of a PSB+ under cfg: PSB 16, TSC 8, TMA 7, CBR 4, MODE.Exec 2, FUP 7, PSBEND 2. */
unsigned ptc_fullpt_psb_plus_bytes(const struct ptc_fullpt_cfg *cfg);

#endif
