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
 *      (pid, tid), and feeds per-thread struct ptc_ev in order to a sink (the session) -
 *      at every PT_ROUND chunk what has become safe (streaming), else at the end.
 *   Parallel decode (pt_par.c) cuts complete streams at PSBs for worker threads.
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

/* Everything the fast path carries from one call to the next inside a span, so that a span
 * can be decoded as its bytes arrive (streaming) and resumed at the next byte. */
struct ptc_pt_fstate {
    struct ptc_pt_ftime time, ovf_time;
    uint64_t last_ip, fup_ip, ovf_off;
    uint64_t nev;            /* enables, async disables and overflows since the span's PSB */
    uint8_t in_psb, fup_pending, ovf_pending, psb_seen;
    uint8_t mode_pending;    /* a MODE.Exec outside PSB+ waits for its TIP.PGE */
};

/* libipt's errata workarounds the fast path must leave to libipt (pt_ipt.c): which apply
 * to the configured CPU (pt_cpu_errata), as PTC_PT_ERRATUM_* bits. */
enum {
    PTC_PT_ERRATUM_BDM70 = 1u << 0,  /* a FUP in PSB+ when tracing is disabled */
    PTC_PT_ERRATUM_SKD007 = 1u << 1, /* a CYC that overlaps an OVF */
    PTC_PT_ERRATUM_SKD010 = 1u << 2, /* a FUP lost after OVF */
    PTC_PT_ERRATUM_APL11 = 1u << 3,  /* an extra TIP.PGD after OVF */
    PTC_PT_ERRATUM_APL12 = 1u << 4,  /* an extra FUP after OVF */
};
unsigned ptc_pt_errata(const struct ptc_pt_dcfg *cfg);

/* Items (layer 2) are declared below; the interpretation state is shared by the fast path
 * (which interprets while it parses, to avoid a second pass) and the libipt path. */
struct ptc_pt_item;
struct ptc_pt_stream_stats;

struct ptc_pt_interp {
    uint64_t resume_ip;
    uint8_t have_resume, suspect, have_last, touched;
    uint64_t last_tsc;           /* time of the last item: gaps at breaks get it */
    struct ptc_pt_item *q;       /* output queue */
    size_t qn, qcap;
    struct ptc_pt_stream_stats *st;
    /* parallel decode: the first ENABLE of a piece, seen before anything that changes the
     * resume state, may be a resume that only the previous piece can recognise */
    uint64_t first_ip;
    size_t first_item;           /* index of the hit it produced, or SIZE_MAX */
    uint8_t first_seen, first_open;
};

enum { PTC_FAST_PSB = 0, PTC_FAST_MORE = 1, PTC_FAST_FAIL = -1, PTC_FAST_NOMEM = -2 };

/* Fast path over buf[0..len) (stream offset base of buf[0]): at a span start buf begins with
 * its PSB and *fs is freshly reset (all zero); otherwise fs is the state where the previous
 * call stopped. final: buf ends where the segment ends. Interprets what it parses straight
 * into in's queue.
 * Returns PTC_FAST_PSB: stopped right before a PSB pattern that begins where a packet ends
 *                      (*consumed = its offset in buf): the next span's PSB if
 *                      ptc_pt_psb_ends_span says so;
 *         PTC_FAST_MORE: parsed every whole packet (*consumed = bytes used; a packet cut by
 *                      the end of buf is left for the next call unless final);
 *         PTC_FAST_FAIL: a packet or sequence it does not handle, or one libipt would read
 *                      otherwise (or, when final, a cut packet): items appended by this
 *                      call must be discarded by the caller and the span given to libipt.
 * Spans end at the next PSB (ptc_pt_find_span_psb: a run of PSB patterns holds PSBs at its
 * end only), so that a packet a PSB cuts, or that runs into one, is one cut packet whoever
 * decodes the span. The fast path needs no search for it: no packet is long enough to swallow
 * a whole PSB, and what is left of one after a packet that runs into it is a TNT byte (a
 * failure) or a PSB pattern that is not a PSB - cut short (a failure), or not at the end of
 * its run, which the caller checks after PTC_FAST_PSB (ptc_pt_psb_ends_span). */
int ptc_pt_fast_run(const struct ptc_pt_dcfg *cfg, struct ptc_pt_fstate *fs,
                    struct ptc_pt_interp *in, const uint8_t *buf, size_t len, uint64_t base,
                    int final, size_t *consumed);

/* Interprets libipt's abstract events (the same rules the fast path applies inline). The
 * first skip_events enables, async disables and overflows, and everything before them, are
 * dropped: the fast path already gave them (libipt's offsets are not the fast path's, so
 * the events are counted, not compared by offset). */
int ptc_pt_interp_aevs(const struct ptc_pt_dcfg *cfg, struct ptc_pt_interp *in,
                       const struct ptc_pt_aevs *a, uint64_t skip_events);

/* libipt's query decoder over buf[0..len), one span: syncs to the first PSB, decodes to the
 * end, resynchronising after errors. psb_at_end: a PSB begins right after buf, so a packet
 * cut by the end is an error (PTC_AEV_ERROR), not the end of the trace. Returns 0 or a
 * negative libipt error for setup failures (no memory). */
int ptc_pt_ipt_decode(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                      uint64_t base, int psb_at_end, struct ptc_pt_aevs *out);

/* Offset of the first PSB pattern at or after pos, or len. */
size_t ptc_pt_find_psb(const uint8_t *buf, size_t len, size_t pos);
/* PSB patterns come in runs of 02 82 pairs: consecutive PSBs, and a packet whose last bytes
 * happen to be 02 82 right before a PSB (a TIP.PGD whose 16-bit IP is 0x8202), which makes
 * the pattern begin 2 bytes before the PSB. The PSBs of a run are the 16-byte pieces that end
 * where the run ends (as libipt's pt_sync_forward takes them); less than 16 bytes of the run
 * before the first are the tail of the packet before. The first PSB of the run of the pattern
 * at q, at or after q; the run ends at len at the latest, so a caller that may get more bytes
 * holds the trailing run back (ptc_pt_psb_tail). */
size_t ptc_pt_run_psb(const uint8_t *buf, size_t len, size_t q);
/* The first PSB at or after pos by that rule, or len: where spans begin, and where the
 * parallel decode may cut a stream. */
size_t ptc_pt_find_span_psb(const uint8_t *buf, size_t len, size_t pos);
/* Whether the PSB pattern at at ends the span that began with the PSB at span_start: a PSB
 * by that rule, and no PSB of its run after span_start before it (one a packet ran over). */
int ptc_pt_psb_ends_span(const uint8_t *buf, size_t len, size_t span_start, size_t at);
/* Whether a PSB (by that rule, within buf[0..len)) begins after span_start and less than
 * 16 bytes before at, where the fast path stopped: a packet before at ran into it. */
int ptc_pt_psb_ran_into(const uint8_t *buf, size_t len, size_t span_start, size_t at);
/* How many of the last bytes of buf[0..len) are a run of 02 82 pairs (and a lone 02 after
 * them) that more bytes could extend: which of its patterns are PSBs is known only once the
 * run has ended. */
size_t ptc_pt_psb_tail(const uint8_t *buf, size_t len);

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
    uint32_t reserved2;      /* feed: the item's size, bytes since its stream's previous item */
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

struct ptc_pt_pktstat;
struct ptc_pt_sdec; /* per-stream decoder */

/* A decoder over a complete stream held by the caller (buf must outlive the decoder);
 * breaks sorted by pos. Offsets in items are positions in buf plus base. */
struct ptc_pt_sdec *ptc_pt_sdec_new(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                    size_t len, const struct ptc_pt_break *breaks,
                                    size_t num_breaks);
/* psb_after: a PSB begins right after the bytes (a parallel piece cut before one). */
struct ptc_pt_sdec *ptc_pt_sdec_new_at(const struct ptc_pt_dcfg *cfg, const uint8_t *buf,
                                       size_t len, uint64_t base, int psb_after);
/* A streaming decoder: bytes are appended as they arrive and dropped once decoded (it keeps
 * only the current span, for libipt). */
struct ptc_pt_sdec *ptc_pt_sdec_new_stream(const struct ptc_pt_dcfg *cfg);
/* Appends n bytes at the end of the stream. Returns 0 or -1 (no memory). */
int ptc_pt_sdec_append(struct ptc_pt_sdec *d, const void *p, size_t n);
/* Bytes are missing at stream position pos (normally the current end). */
int ptc_pt_sdec_add_break(struct ptc_pt_sdec *d, const struct ptc_pt_break *b);
/* No more bytes will come: pending packets and spans are finished. */
void ptc_pt_sdec_finish(struct ptc_pt_sdec *d);
/* Stream position one past the last byte appended. */
uint64_t ptc_pt_sdec_end(const struct ptc_pt_sdec *d);
/* The configuration came after the first bytes (perf.data imports write it last): takes
 * effect for what is decoded from now on. */
void ptc_pt_sdec_set_config(struct ptc_pt_sdec *d, const struct ptc_pt_dcfg *cfg);
/* Stub ranges changed (a module was mapped): ranges stays owned by the caller. */
void ptc_pt_sdec_set_ranges(struct ptc_pt_sdec *d, const struct ptc_pt_range *r, size_t n);
/* Is stream position pos in bytes skipped before a segment's first PSB? */
int ptc_pt_sdec_in_skip(const struct ptc_pt_sdec *d, uint64_t pos);
/* Count packets (for `ptcall stat`) span by span as they are decoded. */
void ptc_pt_sdec_count_packets(struct ptc_pt_sdec *d, struct ptc_pt_pktstat *st);
/* Next item: 1 = *out filled, 0 = nothing more now (end of stream once finished, else
 * wait for more bytes), <0 error. */
int ptc_pt_sdec_next(struct ptc_pt_sdec *d, struct ptc_pt_item *out);
/* The next batch of items (valid until the next call): returns their number, 0 when there
 * is nothing more now, <0 on error. */
long ptc_pt_sdec_batch(struct ptc_pt_sdec *d, const struct ptc_pt_item **items);
/* 1 when every byte appended has been decoded into items (or waits as a cut packet), 0 when
 * the decoder waits for more bytes to finish a span (libipt needs whole spans). */
int ptc_pt_sdec_caught_up(const struct ptc_pt_sdec *d);
/* Decodes about max_bytes more into the queue (another thread may do this for a stream
 * while the owner does not touch it: the front-end decodes streams side by side). */
int ptc_pt_sdec_prefetch(struct ptc_pt_sdec *d, size_t max_bytes);
size_t ptc_pt_sdec_queued(const struct ptc_pt_sdec *d);   /* items waiting */
uint64_t ptc_pt_sdec_undecoded(const struct ptc_pt_sdec *d); /* bytes it could decode now */
const struct ptc_pt_stream_stats *ptc_pt_sdec_stats(const struct ptc_pt_sdec *d);
/* Interpretation state (parallel decode joins pieces with it). */
const struct ptc_pt_interp *ptc_pt_sdec_interp(const struct ptc_pt_sdec *d);
/* Bytes the decoder holds (memory accounting in tests). */
size_t ptc_pt_sdec_held(const struct ptc_pt_sdec *d);
void ptc_pt_sdec_free(struct ptc_pt_sdec *d);

/* ---- parallel decode (pt_par.c) --------------------------------------------------------
 * Streams (one per CPU) are cut at PSBs into pieces; worker threads decode pieces with the
 * fast path (libipt for spans it does not handle); the pieces of each stream are joined in
 * order, fixing the one thing a PSB does not reset (an interrupt taken on a stub whose
 * resume TIP.PGE lies after the PSB), so the result equals a serial decode. */
int ptc_pt_sdec_run_piece(struct ptc_pt_sdec *d, int first_open);
/* The same a span at a time (pt_par_relay.c hands a piece out while decoding it): begin,
 * then step until 0 (the piece's end) or -1 (error); take returns the items queued since
 * the last take - those of the spans stepped, which no later step takes back. */
void ptc_pt_sdec_begin_piece(struct ptc_pt_sdec *d, int first_open);
int ptc_pt_sdec_piece_step(struct ptc_pt_sdec *d);
size_t ptc_pt_sdec_take(struct ptc_pt_sdec *d, const struct ptc_pt_item **items);
void ptc_pt_sdec_reuse_at(struct ptc_pt_sdec *d, const uint8_t *buf, size_t len,
                          uint64_t base, int psb_after);
struct ptc_pt_par_stream {
    const uint8_t *buf;
    size_t len;
    struct ptc_pt_stream_stats st; /* out */
};
/* Decodes the streams with nthreads threads - the calling thread and nthreads - 1 workers
 * (pieces of about piece_bytes, at most 4 per thread decoded ahead of the consumer, so
 * memory stays bounded) - and hands every item
 * of all streams to fn, in runs, in time order: items of one stream keep their order;
 * across streams the earliest time goes first (an item without a time goes with the run it
 * is in). Calls to fn never overlap and each one happens after the one before; with
 * several streams they come from the calling thread, with a single stream (nothing to
 * merge) from whichever thread decoded the piece (pt_par_relay.c: items are handed out
 * while still in that thread's cache), so fn must not depend on the calling thread.
 * fn returns 0 or stops everything with a negative
 * value. Returns 0, fn's value, or -1 (no memory / no threads). */
typedef int (*ptc_pt_par_fn)(void *ctx, size_t stream, const struct ptc_pt_item *it,
                             size_t n);
int ptc_pt_par_decode(const struct ptc_pt_dcfg *cfg, struct ptc_pt_par_stream *s, size_t ns,
                      int nthreads, size_t piece_bytes, ptc_pt_par_fn fn, void *ctx);

/* Packet counts by libipt packet type (enum pt_packet_type), for `ptcall stat`. */
#define PTC_PT_NPKT 32
struct ptc_pt_pktstat {
    uint64_t count[PTC_PT_NPKT], bytes[PTC_PT_NPKT];
    uint64_t errors, unsynced_bytes;
};
/* Adds the packets of buf[0..len) to *st (libipt's packet decoder, configured for the
 * trace's CPU so that its errata workarounds apply). psb_after: a PSB follows the bytes, so
 * a packet cut by their end is an error. Bytes outside PSB synchronisation (before the
 * first PSB, from an undecodable packet to the next PSB or the end) are unsynced_bytes. */
int ptc_pt_count_packets(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                         int psb_after, struct ptc_pt_pktstat *st);
const char *ptc_pt_packet_name(int type);

/* ---- front-end (layer 3) ------------------------------------------------------------- */

/* ptc_pt_attach() that also counts the packets of every stream by type (a libipt packet
 * decode of every byte) and, when the session's input ends, fills *out (done = 1). */
struct ptc_pt_measured {
    int done, have_config;
    struct ptc_pt_config config;
    struct ptc_pt_pktstat packets;
    uint64_t streams, bytes, hits;
};
struct ptc_session;
int ptc_pt_attach_measured(struct ptc_session *s, struct ptc_pt_measured *out);

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
 * LOSS chunks it needs and ignores the rest). At every PT_ROUND chunk it decodes and feeds
 * the sink everything up to the round's safe time (docs/pt.md "Streaming"). Returns 0 or
 * -PTC_E_*. */
int ptc_pt_front_chunk(struct ptc_pt_front *f, const struct ptc_chunk_header *h,
                       const void *payload);
/* Decode everything still held and feed the sink. Returns 0 or -PTC_E_*. */
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
/* Packet statistics (ptc_pt_front_packets) cost a libipt packet decode of every byte: on
 * by default (`ptcall stat`), off for sessions (ptc_pt_attach). Call before any chunk. */
void ptc_pt_front_set_packet_stats(struct ptc_pt_front *f, int on);
/* Threads that decode streams side by side (1 = none; the result is the same either way:
 * each stream's decoder runs the same steps, only on another thread). Sessions: 1, or
 * PTCALL_PT_THREADS (at most 8). */
void ptc_pt_front_set_threads(struct ptc_pt_front *f, int n);
/* PT_ROUND chunks seen, and the bytes of PT data and pending records the front-end holds
 * right now (the bounded-memory test watches it). */
uint64_t ptc_pt_front_rounds(const struct ptc_pt_front *f);
size_t ptc_pt_front_held(const struct ptc_pt_front *f);
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
