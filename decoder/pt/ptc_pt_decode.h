/* Intel PT front-end of libptcall-decode (decoder/pt, library ptcall_decode_pt).
 *
 * Layers, bottom up:
 *   1. span decoders: turn the bytes between two PSBs into "abstract events" (enable, disable,
 *      async disable, overflow, psb, error) with stream offset and time. Two implementations:
 *      a specialised parser for the packets a stub-filtered trace contains (fast path) and
 *      libipt's query decoder (decoder of record). The fast path hands any span holding a
 *      packet it does not understand to libipt.
 *   2. stream decoder: one per CPU (or per thread) stream; splits it at PSBs and at gaps
 *      (truncation), interprets abstract events into items: stub HITs and GAPs.
 *   3. front-end: collects PT chunks of a trace file, parses sideband, attributes items to
 *      (pid, tid), and feeds per-thread struct ptc_ev in order to a sink (the session).
 */
#ifndef PTC_PT_DECODE_H
#define PTC_PT_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/decode.h"
#include "ptcall/trace_format.h"
#include "ptcall/trace_format_pt.h"

/* ---- configuration ------------------------------------------------------------------ */

struct ptc_pt_range {
    uint64_t start, end; /* [start, end) run-time stub section bounds */
};

struct ptc_pt_dcfg {
    uint32_t flags;          /* PTC_PT_F_* (timing) */
    uint8_t mtc_freq;
    uint8_t nom_freq;
    uint16_t cpu_family;
    uint8_t cpu_model, cpu_stepping;
    uint32_t cpuid_0x15_eax, cpuid_0x15_ebx;
    /* stub ranges of all processes (a hit is a TIP.PGE inside one of them), sorted */
    const struct ptc_pt_range *ranges;
    size_t num_ranges;
    int mode;                /* enum ptc_pt_mode */
};

enum ptc_pt_mode {
    PTC_PT_MODE_FAST = 0,    /* fast path, libipt for spans it does not understand */
    PTC_PT_MODE_LIBIPT = 1,  /* libipt's query decoder only */
    PTC_PT_MODE_FAST_ONLY = 2, /* fast path only; spans it cannot decode become gaps (tests) */
};

void ptc_pt_dcfg_from_config(struct ptc_pt_dcfg *d, const struct ptc_pt_config *c);

/* ---- abstract events (layer 1) ------------------------------------------------------- */

enum ptc_pt_aev_type {
    PTC_AEV_ENABLE = 1,        /* TIP.PGE: ip */
    PTC_AEV_DISABLE = 2,       /* TIP.PGD: ip if ip_valid */
    PTC_AEV_ASYNC_DISABLE = 3, /* FUP + TIP.PGD: ip = FUP address */
    PTC_AEV_OVF = 4,           /* overflow; ip_valid: resumed at ip (FUP) */
    PTC_AEV_PSB = 5,           /* synchronisation point */
    PTC_AEV_ERROR = 6,         /* undecodable bytes; decoding resumes at the next PSB */
};

struct ptc_pt_aev {
    uint8_t type;
    uint8_t ip_valid;
    uint8_t has_time;
    uint8_t reserved;
    int32_t err;             /* PTC_AEV_ERROR: libipt error code */
    uint64_t ip;
    uint64_t tsc;
    uint64_t off;            /* stream offset just after the packet the event binds to */
};

struct ptc_pt_aevs {
    struct ptc_pt_aev *v;
    size_t n, cap;
};
int ptc_pt_aevs_push(struct ptc_pt_aevs *a, const struct ptc_pt_aev *e);

/* Timing state of the fast path (mirrors libipt's TSC/TMA/MTC rules; CYC: see docs). */
struct ptc_pt_ftime {
    uint64_t tsc, base, fc, cyc_base_tsc, cyc_sum;
    uint32_t ctc;
    uint8_t have_tsc, have_tma, have_mtc, cbr;
};

/* Fast path over buf[0..len) which starts at a PSB; stops right before the next PSB
 * (*consumed = its offset) or at the end. Offsets in events are base + position.
 * Returns 0, or -1 when it met a packet or sequence it does not handle (events appended
 * before that point must then be discarded by the caller). */
int ptc_pt_fast_span(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                     uint64_t base, struct ptc_pt_ftime *time, struct ptc_pt_aevs *out,
                     size_t *consumed);

/* libipt's query decoder over buf[0..len): syncs to the first PSB, decodes to the end,
 * resynchronising after errors. Returns 0 or a negative libipt error for setup failures. */
int ptc_pt_ipt_decode(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                      uint64_t base, struct ptc_pt_aevs *out);

/* Offset of the first PSB at or after pos, or len. */
size_t ptc_pt_find_psb(const uint8_t *buf, size_t len, size_t pos);

/* ---- items (layer 2) ----------------------------------------------------------------- */

enum ptc_pt_item_kind { PTC_PT_ITEM_HIT = 1, PTC_PT_ITEM_GAP = 2 };
enum ptc_pt_gap_reason {
    PTC_PT_WHY_OVF = 1,       /* OVF packet */
    PTC_PT_WHY_TRUNCATED = 2, /* bytes missing from the stream */
    PTC_PT_WHY_DECODE = 3,    /* undecodable bytes */
    PTC_PT_WHY_SUSPECT = 4,   /* after OVF an IP decoded outside all stub ranges */
};

struct ptc_pt_item {
    uint8_t kind;
    uint8_t has_time;
    uint8_t why;             /* gaps: enum ptc_pt_gap_reason */
    uint8_t reserved;
    uint32_t reserved2;
    uint64_t ip;
    uint64_t tsc;
    uint64_t off;
    uint64_t count;          /* gaps: lost bytes if known */
};

struct ptc_pt_stream_stats {
    uint64_t bytes, hits, gaps, ovf, truncations, lost_bytes, decode_errors, resumes, stray;
    uint64_t spans, spans_libipt;
    uint64_t skipped_bytes;  /* bytes before the first PSB of a segment */
};

struct ptc_pt_break {
    uint64_t pos;            /* offset in the stream buffer where bytes are missing */
    uint64_t lost;           /* bytes lost, 0 = unknown */
    uint32_t why;            /* enum ptc_pt_gap_reason */
};

struct ptc_pt_sdec; /* per-stream decoder */

/* buf must outlive the decoder; breaks sorted by pos. */
struct ptc_pt_sdec *ptc_pt_sdec_new(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                    size_t len, const struct ptc_pt_break *breaks,
                                    size_t num_breaks);
/* Next item: 1 = *out filled, 0 = end of stream, <0 error. */
int ptc_pt_sdec_next(struct ptc_pt_sdec *d, struct ptc_pt_item *out);
/* The next batch of items (valid until the next call): returns their number, 0 at the end,
 * <0 on error. */
long ptc_pt_sdec_batch(struct ptc_pt_sdec *d, const struct ptc_pt_item **items);
const struct ptc_pt_stream_stats *ptc_pt_sdec_stats(const struct ptc_pt_sdec *d);
void ptc_pt_sdec_free(struct ptc_pt_sdec *d);

/* Packet counts by libipt packet type (enum pt_packet_type), for `ptcall stat`. */
#define PTC_PT_NPKT 32
struct ptc_pt_pktstat {
    uint64_t count[PTC_PT_NPKT], bytes[PTC_PT_NPKT];
    uint64_t errors, unsynced_bytes;
};
int ptc_pt_count_packets(const uint8_t *buf, size_t len, struct ptc_pt_pktstat *st);
const char *ptc_pt_packet_name(int type);

/* ---- front-end (layer 3) ------------------------------------------------------------- */

struct ptc_pt_sink {
    void *ctx;
    int (*add_module)(void *ctx, uint32_t pid, const void *payload, size_t size);
    int (*lookup)(void *ctx, uint32_t pid, uint64_t ip, uint32_t *stub_id);
    int (*feed)(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n);
    int (*loss)(void *ctx, uint32_t pid, const struct ptc_loss *loss, const char *note);
};

/* A sink that forwards to a ptc_session (pt_session.c). */
void ptc_pt_sink_session(struct ptc_pt_sink *sink, struct ptc_session *s);

struct ptc_pt_front;

struct ptc_pt_thread_stats {
    uint32_t pid, tid;
    uint64_t hits, gaps, bytes;
};

struct ptc_pt_cpu_stats {
    uint32_t cpu;
    struct ptc_pt_stream_stats s;
    uint64_t aux_chunks, sideband_bytes, sideband_records;
};

struct ptc_pt_front *ptc_pt_front_new(const struct ptc_pt_sink *sink, int mode);
/* Give every chunk of the file (the front-end keeps PT chunks, MODULE chunks and
 * LOSS chunks it needs and ignores the rest). Returns 0 or -PTC_E_*. */
int ptc_pt_front_chunk(struct ptc_pt_front *f, const struct ptc_chunk_header *h,
                       const void *payload);
/* Decode everything and feed the sink. Returns 0 or -PTC_E_*. */
int ptc_pt_front_finish(struct ptc_pt_front *f);
/* After finish: statistics. */
size_t ptc_pt_front_cpus(const struct ptc_pt_front *f, const struct ptc_pt_cpu_stats **out);
size_t ptc_pt_front_threads(const struct ptc_pt_front *f,
                            const struct ptc_pt_thread_stats **out);
const struct ptc_pt_config *ptc_pt_front_config(const struct ptc_pt_front *f);
/* Hits that no sink lookup could map to a stub, items without a known thread. */
uint64_t ptc_pt_front_unmapped(const struct ptc_pt_front *f);
/* Packet statistics of stream i (same order as ptc_pt_front_cpus). */
int ptc_pt_front_packets(const struct ptc_pt_front *f, size_t i, struct ptc_pt_pktstat *st);
uint64_t ptc_pt_front_unattributed(const struct ptc_pt_front *f);
void ptc_pt_front_free(struct ptc_pt_front *f);

/* ---- minimal trace-file reader (used by stat, import tests and the PT tests) ---------- */

/* Calls fn for every chunk of the file; payload is valid during the call. Returns 0, or
 * -PTC_E_* (and a message in err). */
int ptc_pt_read_file(const char *path, struct ptc_file_header *hdr,
                     int (*fn)(void *ctx, const struct ptc_chunk_header *h,
                               const void *payload),
                     void *ctx, char *err, size_t err_size);

const char *ptc_pt_strerror(int err);

 /* PTC_E_* text (positive code) */

/* perf time (ns) from a TSC value, as perf_event_mmap_page (time_zero/mult/shift). */
static inline uint64_t ptc_pt_tsc_to_perf(const struct ptc_pt_config *c, uint64_t tsc)
{
    if (!(c->flags & PTC_PT_F_TIME_ZERO))
        return tsc;
    uint64_t quot = tsc >> c->time_shift;
    uint64_t rem = tsc & (((uint64_t)1 << c->time_shift) - 1);
    return c->time_zero + quot * c->time_mult + ((rem * c->time_mult) >> c->time_shift);
}

#endif
