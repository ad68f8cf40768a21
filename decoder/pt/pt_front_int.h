/* Internals of the PT front-end, shared by its files (each calls only the ones listed
 * below it):
 *   pt_front.c     chunk intake (PT bytes, gaps, stub ranges, rounds), life cycle, accessors
 *   pt_feed.c      decoding what is safe, attribution to threads, feeding the sink
 *   pt_sideband.c  perf records -> AUX pieces, task switches, forks, truncation breaks
 *   pt_predecode.c decoding streams side by side on several threads
 *   pt_fstream.c   the streams: their decoders, AUX offsets -> positions, breaks */
#ifndef PTC_PT_FRONT_INT_H
#define PTC_PT_FRONT_INT_H

#include <stdlib.h>

#include "ptc_pt_decode.h"

#define VEC(T)                                                                             \
    struct {                                                                               \
        T *v;                                                                              \
        size_t n, cap;                                                                     \
    }
#define VPUSH(vec, val)                                                                    \
    ({                                                                                     \
        int r_ = 0;                                                                        \
        if ((vec).n == (vec).cap) {                                                        \
            size_t c_ = (vec).cap ? (vec).cap * 2 : 16;                                    \
            void *p_ = realloc((vec).v, c_ * sizeof(*(vec).v));                            \
            if (!p_)                                                                       \
                r_ = -1;                                                                   \
            else {                                                                         \
                (vec).v = p_;                                                              \
                (vec).cap = c_;                                                            \
            }                                                                              \
        }                                                                                  \
        if (!r_)                                                                           \
            (vec).v[(vec).n++] = (val);                                                    \
        r_;                                                                                \
    })
/* drops the first k elements */
#define VDROP(vec, k)                                                                      \
    do {                                                                                   \
        size_t k_ = (k);                                                                   \
        if ((vec).v)                                                                       \
            memmove((vec).v, (vec).v + k_, ((vec).n - k_) * sizeof(*(vec).v));             \
        (vec).n -= k_;                                                                     \
    } while (0)

struct auxmap { uint64_t aux_off, pos, len; };
/* one PERF_RECORD_AUX: the piece [aux_off, aux_off + size) of a stream, and its owner */
struct auxrec {
    uint64_t aux_off, size, flags, time;
    uint32_t pid, tid;
    size_t stream;
    uint64_t seq;      /* arrival order: ties keep it */
    int phase;         /* 0 not begun, 1 bytes before it done, 2 owner's items under way */
};
struct taskev { uint64_t time; uint32_t pid, tid; int in; };
struct forkrec { uint64_t time; uint32_t ppid, ptid, pid; int done; };

struct stream {
    uint32_t cpu, pid, tid;
    struct ptc_pt_sdec *dec;
    VEC(struct auxmap) map;     /* AUX offset -> stream position, for bytes not dropped */
    uint64_t map_base;          /* stream position where the dropped map entries ended */
    VEC(struct taskev) tasks;   /* sorted by time */
    VEC(struct auxrec) dbreaks; /* TRUNCATED pieces whose bytes have not all arrived */
    uint64_t next_aux;
    int have_next;
    int has_records;            /* AUX records name this stream's owners */
    uint64_t prev_end;          /* stream position where the last piece fed ended */
    uint64_t last_unit_time;
    int skip_checked;           /* per-thread streams: the start was checked for a skip */
    struct ptc_pt_item peek;
    int have_peek;
    uint64_t last_item_off;     /* stream position of the last item fed (event sizes) */
    uint64_t aux_chunks, sb_bytes, sb_records;
    uint64_t skip_gaps;         /* gaps fed for pieces that begin in bytes before a PSB */
    struct ptc_pt_pktstat pk;
};

struct ptc_pt_front {
    struct ptc_pt_sink sink;
    int mode, pkstats, threads;
    struct ptc_pt_config cfg;
    int have_cfg;
    struct ptc_pt_dcfg dc;
    VEC(struct stream *) streams;
    VEC(struct ptc_pt_range) ranges;  /* as given */
    VEC(struct ptc_pt_range) mranges; /* sorted and merged: what the decoders use */
    VEC(struct forkrec) forks;        /* sorted by time */
    VEC(struct auxrec) pending;       /* AUX pieces not fed yet */
    uint64_t aux_seq;
    uint64_t sb_max, round_prev_max;  /* record times for the round rule */
    uint64_t rounds;
    VEC(struct ptc_pt_cpu_stats) cpu_stats;
    VEC(struct ptc_pt_thread_stats) thr_stats;
    uint64_t unmapped, unattributed;
    int finished;
    /* feeding */
    uint32_t fpid, ftid;
    int fvalid;
    struct ptc_ev fbuf[1024];
    size_t fn;
    struct ptc_pt_thread_stats *fstat;
};

/* pt_fstream.c: the stream of cpu (and of (pid, tid) per thread), added if new; NULL when
 * out of memory. */
struct stream *ptc_front_stream(struct ptc_pt_front *f, uint32_t cpu, uint32_t pid,
                                uint32_t tid);
struct ptc_pt_sdec *ptc_front_dec(struct ptc_pt_front *f, struct stream *s);
uint64_t ptc_front_aux_to_pos(const struct stream *s, uint64_t aux);
int ptc_front_break(struct ptc_pt_front *f, struct stream *s, uint64_t pos, uint64_t lost);
/* pt_sideband.c */
int ptc_front_sideband(struct ptc_pt_front *f, const struct ptc_pt_sideband *sb,
                       const uint8_t *p, size_t n);
/* pt_predecode.c: decodes the next bytes of every stream whose queue is empty, streams side
 * by side on f->threads threads. */
int ptc_front_predecode(struct ptc_pt_front *f);
/* Feeds everything safe at time horizon (all of it when final). */
int ptc_front_process(struct ptc_pt_front *f, uint64_t horizon, int final);

#endif
