/* Test stream writer: turns a random but reproducible event sequence into Intel PT bytes
 * (written with libipt's encoder), perf sideband and a ptcall trace file, and records the
 * per-thread events a correct decoder must give back. */
#ifndef PTGEN_H
#define PTGEN_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/decode.h"

enum ptgen_timing { PTGEN_NONE = 0, PTGEN_TSC = 1, PTGEN_MTC = 2, PTGEN_CYC = 3 };

struct ptgen_opts {
    uint64_t seed;
    int timing;          /* enum ptgen_timing */
    int ncpus;           /* 1..8 */
    int nprocs;          /* 1..3 */
    int threads;         /* per process, 1..4 */
    int slices;          /* scheduling slices */
    int max_hits;        /* per slice */
    int psb_period;      /* bytes between PSB+ (approximately) */
    int p_ovf;           /* per mille per hit */
    int p_intr;          /* per mille per hit: interrupt taken on the stub */
    int p_trunc;         /* per mille per slice: AUX truncation inside the slice */
    int p_foreign;       /* per mille per hit: a packet the fast path does not know (TNT) */
    int p_pad;           /* per mille per hit: PAD packets */
    int tail_cut;        /* cut the last stream in the middle of a packet */
    int no_aux_records;  /* omit PERF_RECORD_AUX: attribution by switch records and time */
    int chunk_max;       /* max bytes per AUX chunk (0 = one chunk per slice) */
    int forks;           /* process 1 is forked by process 0's first thread (needs nprocs>=2) */
    int no_gap_chunks;   /* truncations only as TRUNCATED flags / offset jumps (perf.data) */
    int rounds;          /* write a PT_ROUND chunk after every `rounds` slices (0 = none) */
    int hw_exact;        /* the hardware model of `ptcall bandwidth` (docs/bandwidth.md):
                            most compact IP compression, MODE.Exec only after PSB+ and OVF,
                            one slice per thread on a CPU of its own starting at its first
                            hit, TIP.PGD(stub ^ 1 MiB) stub_cycles after TIP.PGE, OVF that
                            loses no time and resumes with MODE.Exec, TIP.PGE(full IP) */
    uint64_t mod0_start; /* if set: process 0's stubs are here (a real binary's), */
    uint32_t mod0_nstubs;/* mod0_nstubs of them on a 16-byte stride */
};

struct ptgen_event {
    uint32_t pid, tid;
    uint8_t type;        /* PTC_EV_HIT / PTC_EV_GAP */
    uint8_t has_time;
    uint32_t stub_id;
    uint64_t tsc;
    uint64_t count;      /* PTC_EV_FORK: child pid */
};

struct ptgen_module {
    uint32_t pid;
    uint64_t start;      /* stub i at start + 16 * i */
    uint32_t nstubs;
};

struct ptgen_result {
    struct ptgen_event *ev;
    size_t nev;
    struct ptgen_module mods[4];
    int nmods;
    uint64_t hits_emitted, ovf, truncations, intr, foreign, bytes;
};

void ptgen_default(struct ptgen_opts *o, uint64_t seed);
int ptgen_write(const struct ptgen_opts *o, const char *path, struct ptgen_result *r);
void ptgen_free(struct ptgen_result *r);
/* stub id of ip in process pid, or -1 */
int ptgen_lookup(const struct ptgen_result *r, uint32_t pid, uint64_t ip, uint32_t *id);

/* One raw stream: the AUX bytes of CPU 0 of the trace ptgen_write makes for o (written to
 * tmp_path, which is removed), concatenated as `ptcall import --cpu-stream` would take them;
 * malloc'ed, NULL on failure. With o->mod0_start the stubs are where the caller says. */
uint8_t *ptgen_raw_stream(const struct ptgen_opts *o, const char *tmp_path, size_t *len,
                          struct ptgen_result *r);

/* The test writer's perf.data (ptgen_perf.c): the ptgen trace at trace rewritten as perf
 * record -e intel_pt//u writes one, with an MMAP2 record of mm when it is not NULL.
 * Returns 0 or -1. */
struct ptgen_perf_mmap {
    uint32_t pid;
    uint64_t addr, len, pgoff;
    const char *path;
};
int ptgen_perf_data(const char *trace, const char *out, const struct ptgen_perf_mmap *mm);

/* The bench helper: one CPU, one thread, n hits, no sideband; returns malloc'ed bytes. */
uint8_t *ptgen_bench_stream(int timing, uint64_t nhits, int suppressed_pgd, size_t *len,
                            uint64_t *stub_start, uint32_t *nstubs);

#endif
