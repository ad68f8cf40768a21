/* The stub-filtered Intel PT simulator (docs/bandwidth.md): from a trace's decoded stub hits
 * it writes, or only measures, the packet stream a CPU would produce for the same hits under
 * one or more PT configurations -- TIP.PGE into the stub and TIP.PGD out of it with IP
 * compression against the last IP, MODE.Exec where the rules want one, PSB+ every
 * psb_period bytes, TSC/TMA/MTC/CYC from the recorded times -- one stream per thread.
 *
 * Fed by the session's hit hook (ptc_sim_hit_hook), it counts packets and bytes per type,
 * per function (entries and exits), and per time bin. With ptc_sim_encode() it also writes
 * every packet through libipt's encoder and checks that the encoder's size of each packet
 * is the one the model counted (the fast path is the encoder's arithmetic, proven packet
 * by packet in the tests). */
#ifndef PTC_PTSIM_H
#define PTC_PTSIM_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/decode.h"

#define PTC_SIM_MAX_MODES 4
#define PTC_SIM_NPKT 32 /* packet types by libipt's enum pt_packet_type */

enum ptc_sim_timing { PTC_SIM_NONE = 0, PTC_SIM_TSC = 1, PTC_SIM_MTC = 2, PTC_SIM_CYC = 3 };

struct ptc_sim_cfg {
    int timing[PTC_SIM_MAX_MODES]; /* enum ptc_sim_timing, one simulated stream set each */
    int nmodes;
    unsigned mtc_period;           /* MTC every 2^mtc_period crystal ticks (perf mtc_period) */
    unsigned cyc_threshold;        /* 0: a CYC before every eligible packet; v: only after at
                                      least 2^(v-1) cycles (perf cyc_thresh) */
    uint64_t psb_period;           /* bytes between PSB+ */
    int ret_compression;           /* 1: the stub's ret leaves by a compressed RET, TIP.PGD
                                      without IP; 0 (noretcomp): TIP.PGD(return address) */
    uint32_t tsc_per_ctc_num;      /* TSC ticks per crystal tick = num / den (CPUID 0x15 */
    uint32_t tsc_per_ctc_den;      /* EBX / EAX) */
    uint32_t stub_cycles;          /* core cycles from entering a stub to its ret */
    uint64_t bin_ns;               /* width of a rate bin (0: 100 us) */
    int leaf_calls;                /* a whole call (PTC_STUB_CALL: a leaf's entry, untimed) is
                                      one stub execution, its exit unarmed as `record
                                      --backend pt --timing none` leaves it; 0: two */
};
void ptc_sim_cfg_default(struct ptc_sim_cfg *c);
const char *ptc_sim_timing_name(int timing);

/* Figures of one simulated configuration. */
struct ptc_sim_mode {
    int timing;
    uint64_t count[PTC_SIM_NPKT], bytes[PTC_SIM_NPKT];
    uint64_t total;
    uint64_t hit_bytes;     /* packets a stub hit causes (TIP.PGE/PGD, their CYC, MODE, OVF) */
    uint64_t flow_bytes;    /* packets of time passing (MTC and its CYC) and PSB+ */
    uint64_t *bins;         /* bytes per bin of cfg.bin_ns since the first hit */
    uint64_t *fbytes;       /* per function id: [2*f] entries, [2*f+1] exits */
};

struct ptc_sim;

/* A simulator over session s (which it reads stub addresses and time bases from). Returns
 * NULL when out of memory. */
struct ptc_sim *ptc_sim_new(struct ptc_session *s, const struct ptc_sim_cfg *cfg);
void ptc_sim_free(struct ptc_sim *m);
/* The hit hook to install with ptc_session_set_hit_hook(s, ptc_sim_hit_hook, m). */
void ptc_sim_hit_hook(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev,
                      size_t n);
/* Hits of functions for which armed(ctx, func) returns 0 are not simulated: the figures
 * of tracing only the others (`bandwidth --only`). */
void ptc_sim_set_filter(struct ptc_sim *m, int (*armed)(void *ctx, uint32_t func), void *ctx);
/* Charges to functions (fbytes) only the hits in the rate bins whose mask byte is set (a
 * second pass over the same trace with the first pass's bin width: the functions whose
 * bytes a full buffer would lose). */
void ptc_sim_charge_only(struct ptc_sim *m, const uint8_t *mask, size_t n);
/* Writes every simulated packet with libipt's encoder as well: into files DIR/PREFIX-
 * <mode>-<pid>-<tid>.pt when dir is not NULL, else only to check sizes. Call before the
 * first hit. Returns 0 or -1 (errno). */
int ptc_sim_encode(struct ptc_sim *m, const char *dir);

/* After the decode: the figures of mode i (0..nmodes-1). */
const struct ptc_sim_mode *ptc_sim_mode(const struct ptc_sim *m, int i);
size_t ptc_sim_nbins(const struct ptc_sim *m);
/* The width of a bin: cfg.bin_ns, doubled as often as a long trace needed. */
uint64_t ptc_sim_bin_ns(const struct ptc_sim *m);
/* TSC ticks per second, from the trace's time base (0: none). */
uint64_t ptc_sim_tsc_hz(const struct ptc_sim *m);
uint32_t ptc_sim_nfuncs(const struct ptc_sim *m);  /* entries of fbytes / 2 */
/* Stub executions simulated per function, indexed as fbytes ([2*f] entries, [2*f+1] exits;
 * a whole call counts one of each); NULL when no hit was charged. */
const uint64_t *ptc_sim_fhits(const struct ptc_sim *m);
/* Hits simulated, hits left out by the filter, threads, the time span (ns; 0 untimed). */
struct ptc_sim_totals {
    uint64_t hits, filtered, gaps, threads, span_ns, untimed_hits;
    uint64_t ret_known, ret_caller, ret_assumed; /* how PGD return addresses were found */
    uint64_t encoder_mismatches;                 /* packets whose encoded size differed */
    int io_error;                                /* writing an encoded stream failed */
    int rates_cut;                               /* hits after 419 s share the last bin */
};
void ptc_sim_totals(const struct ptc_sim *m, struct ptc_sim_totals *t);
/* Bytes of one packet as the model counts them (for the tests). */
unsigned ptc_sim_ip_bytes(uint64_t ip, uint64_t last_ip);
unsigned ptc_sim_cyc_bytes(uint64_t cycles);

#endif
