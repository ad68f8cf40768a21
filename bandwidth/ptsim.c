/* The stub-filtered Intel PT simulator (ptsim.h; the model is docs/bandwidth.md "Stub-
 * filtered PT, simulated"). One stream per thread and configuration; for every stub hit:
 *   time passes to the hit: an MTC for every crossing of a 2^mtc_period crystal boundary
 *     (cycle-accurate: a CYC before each), then PSB+ if psb_period bytes were written;
 *   after a gap of a PT trace: CYC, OVF, and the next TIP.PGE carries a full IP;
 *   CYC, MODE.Exec (first enable after a PSB+ or OVF), TIP.PGE(stub);
 *   stub_cycles later: MTCs, CYC, TIP.PGD(return address, or none under return compression).
 * The same order as the hardware model of the test stream writer (test/pt/ptgen.c), so that
 * the packets of a synthetic trace are predicted exactly from its decoded hits. */
#include "ptsim.h"

#include <errno.h>
#include <fcntl.h>
#include <intel-pt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_pipe.h"
#include "ptcall/map_format.h"
#include "sites.h"

#define SIM_ENC_BUF (1u << 20)
#define BASE(m) (&(m)->mode[PTC_SIM_MAX_MODES])
#define CYCB(m) (&(m)->mode[PTC_SIM_MAX_MODES + 1])
#define NACC(m) (PTC_SIM_MAX_MODES + 2) /* every accumulator, in use or not */

#if defined(__GNUC__)
#define PTC_SIM_NOINLINE __attribute__((noinline))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#else
#define PTC_SIM_NOINLINE
#define likely(x) (x)
#define unlikely(x) (x)
#endif

#define SS_PUSH 1u   /* an entry: opens a frame */
#define SS_POP 2u    /* an exit: closes one */
#define SS_CALLER 4u /* returns into the caller (a ret sled): the address comes from the frames */

enum { RET_KNOWN, RET_CALLER, RET_ASSUMED };

struct sstub {
    uint64_t addr;
    uint64_t ret;      /* TIP.PGD target unless SS_CALLER */
    uint32_t func;
    uint8_t kind;
    uint8_t armed;
    uint8_t valid;
    uint8_t flags;     /* SS_* */
    uint8_t pgd;       /* IP bytes of TIP.PGD(ret) unless SS_CALLER */
    uint8_t how;       /* RET_*: where ret came from */
};

struct pstubs {
    uint32_t pid;
    uint32_t n;
    struct sstub *v;
    uint64_t fallback_ret; /* assumed return address when the object's sites are unknown */
};

struct enc {
    struct pt_encoder *e;
    uint8_t *buf;
    int fd;
};

struct mstate {
    uint64_t since_psb, last_ip, last_cyc, mtc_k;
    uint64_t next_mtc;     /* TSC time of the next MTC (UINT64_MAX: no MTC) */
    uint8_t started, need_mode, full_ip;
    struct enc *enc;
};

struct sthread {
    uint32_t pid, tid;
    uint64_t last_t;
    int have_t, ovf_pending;
    uint64_t first_t, last_timed; /* of the timed hits, for the span */
    int have_first;
    uint64_t *callers;     /* return-address proxies of the open frames (ret sleds) */
    uint32_t depth, cap;
    struct ptc_timebase tb;
    int has_tb;
    uint64_t bin_lo, bin_hi;   /* TSC range of the rate bin cur_bin was made for */
    uint64_t bin;
    /* the simulating thread's, a cache line apart from the hook's fields above: where every
     * configuration stands after each hit (mstate holds only what differs) */
    _Alignas(64) uint64_t prev_ip, prev_out; /* the last IP; the time the last CYC counted to */
    uint64_t mtc_k, next_mtc;    /* the last MTC crossing, the time of the next */
    uint64_t cum, cyc_cum;       /* BASE and CYCB bytes of this stream */
    uint64_t psb_at[PTC_SIM_MAX_MODES]; /* cum (+ cyc_cum for `cyc`) where PSB+ is due */
    uint64_t psb_at_min;         /* the least psb_at of the configurations without CYC */
    int started;
    struct mstate st[PTC_SIM_MAX_MODES];
};

struct modmap { /* objects whose sites were read (or tried), by stub section */
    uint64_t stubs_start;
    int ok;
    struct ptc_sites sites;
};

struct ptc_sim {
    struct ptc_session *s;
    struct ptc_sim_cfg cfg;
    /* the configurations, then two accumulators every hit of the common case adds to once
     * for all of them: BASE (TIP.PGE, TIP.PGD) and CYCB (their CYC, for `cyc` only);
     * ptc_sim_mode() adds them in */
    struct ptc_sim_mode mode[PTC_SIM_MAX_MODES + 2];
    int merged;
    int slow_only;              /* every hit through hit_mode() */
    int has_mtc, cyc_mode;      /* a configuration with MTC; the index of `cyc` (-1) */
    size_t nbins, capbins;
    uint32_t nfuncs;
    uint64_t *fhits;            /* per function: [2*f] entry hits, [2*f+1] exit hits */
    struct pstubs *procs;
    size_t nprocs;
    struct pstubs *last_procs;  /* of the last stub looked up */
    struct sthread **thr;
    size_t nthr;
    struct sthread *last_thr;
    struct modmap *mods;
    size_t nmods;
    int (*armed)(void *, uint32_t);
    void *armed_ctx;
    const char *enc_dir;
    int encoding;
    int backend_known, is_pt;
    /* the hook's counters, written at every hit, on cache lines of their own */
    _Alignas(64) uint64_t ret_how[3]; /* RET_*: return addresses not from call sites */
    uint64_t recs;              /* stub executions simulated (a whole call is two) */
    struct ptc_sim_totals tot;
    const uint8_t *charge_mask;  /* per bin: charge hits there to their functions */
    size_t ncharge;
    int have_origin, rates_cut;
    uint32_t max_func_seen;     /* the hook's: function ids below it were looked up */
    /* records go from the hook to the simulating thread in batches */
    struct ptc_pipe *pipe;
    struct qbatch *fill;        /* the hook's batch being filled */
    int finished;
    uint64_t origin, tmin, tmax;
    /* the simulating thread's: the packet being counted, its rate bin and function slot */
    _Alignas(64) uint64_t cur_bin;
    uint64_t *cur_fslot[PTC_SIM_MAX_MODES];
    int b_io_error;             /* the simulating thread's io_error */
};

/* Zeroed memory on cache lines of its own (struct ptc_sim and struct sthread keep the two
 * threads' fields apart). */
static void *zalloc64(size_t n)
{
    n = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, n);
    if (p)
        memset(p, 0, n);
    return p;
}

static const char *const timing_names[] = {"none", "tsc", "mtc", "cyc"};

const char *ptc_sim_timing_name(int timing)
{
    return timing >= 0 && timing < 4 ? timing_names[timing] : "?";
}

void ptc_sim_cfg_default(struct ptc_sim_cfg *c)
{
    memset(c, 0, sizeof(*c));
    for (int i = 0; i < 4; i++)
        c->timing[i] = i;
    c->nmodes = 4;
    c->mtc_period = 3;       /* perf's default */
    c->psb_period = 1u << 14; /* perf's default psb_period=3: 2^(3+11) bytes */
    c->tsc_per_ctc_num = 100; /* e.g. a 2.4 GHz TSC over a 24 MHz crystal */
    c->tsc_per_ctc_den = 1;
    c->stub_cycles = 2;
    c->bin_ns = 100000;
}

/* ---------------------------------------------------------------- packet sizes */

static inline unsigned ip_bytes(uint64_t ip, uint64_t last)
{
    if (likely(!((ip ^ last) >> 16)))
        return 2;
    if (!((ip ^ last) >> 32))
        return 4;
    int64_t sext = (int64_t)(ip << 16) >> 16;
    if (!((ip ^ last) >> 48) || (uint64_t)sext == ip)
        return 6;
    return 8;
}

unsigned ptc_sim_ip_bytes(uint64_t ip, uint64_t last) { return ip_bytes(ip, last); }

static enum pt_ip_compression ipc_of(uint64_t ip, uint64_t last, unsigned bytes)
{
    switch (bytes) {
    case 2: return pt_ipc_update_16;
    case 4: return pt_ipc_update_32;
    case 6: return !((ip ^ last) >> 48) ? pt_ipc_update_48 : pt_ipc_sext_48;
    default: return pt_ipc_full;
    }
}

unsigned ptc_sim_cyc_bytes(uint64_t v)
{
    /* 5 value bits in the first byte, 7 in each further one */
    if (v < (1u << 5))
        return 1;
    if (v < (1u << 12))
        return 2;
    unsigned n = 3;
    for (v >>= 19; v; v >>= 7)
        n++;
    return n;
}

/* ---------------------------------------------------------------- counting and encoding */

static void enc_flush(struct ptc_sim *m, struct enc *e)
{
    uint64_t off = 0;
    pt_enc_get_offset(e->e, &off);
    if (e->fd >= 0 && off) {
        const uint8_t *p = e->buf;
        size_t left = (size_t)off;
        while (left) {
            ssize_t w = write(e->fd, p, left);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                m->b_io_error = errno ? errno : EIO;
                break;
            }
            p += w;
            left -= (size_t)w;
        }
    }
    pt_enc_sync_set(e->e, 0);
}

static void put_enc(struct ptc_sim *m, struct mstate *st, const struct pt_packet *p,
                    unsigned size)
{
    uint64_t off = 0;
    pt_enc_get_offset(st->enc->e, &off);
    if (off + 64 > SIM_ENC_BUF) {
        enc_flush(m, st->enc);
        off = 0;
    }
    int n = pt_enc_next(st->enc->e, p);
    if (n != (int)size)
        m->tot.encoder_mismatches++;
}

/* Counts one packet of mode i: hit is 1 for packets a hit causes (charged to its function),
 * 0 for time passing and synchronisation. */
static inline void put(struct ptc_sim *m, int i, struct mstate *st, int type, unsigned size,
                       int hit)
{
    struct ptc_sim_mode *md = &m->mode[i];
    md->count[type]++;
    md->bytes[type] += size;
    md->total += size;
    st->since_psb += size;
    if (hit) {
        md->hit_bytes += size;
        if (m->cur_fslot[i])
            *m->cur_fslot[i] += size;
    } else {
        md->flow_bytes += size;
    }
    if (md->bins)
        md->bins[m->cur_bin] += size;
}

static void pkt_init(struct pt_packet *p, enum pt_packet_type t)
{
    memset(p, 0, sizeof(*p));
    p->type = t;
}

/* a packet without payload: PSB, PSBEND, OVF, and MODE.Exec (64-bit) */
static void pk_plain(struct ptc_sim *m, int i, struct mstate *st, enum pt_packet_type t,
                     int hit)
{
    static const unsigned size[PTC_SIM_NPKT] = {[ppt_psb] = 16, [ppt_psbend] = 2,
                                                [ppt_ovf] = 2, [ppt_mode] = 2};
    put(m, i, st, t, size[t], hit);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, t);
        if (t == ppt_mode) {
            p.payload.mode.leaf = pt_mol_exec;
            p.payload.mode.bits.exec = pt_set_exec_mode(ptem_64bit);
        }
        put_enc(m, st, &p, size[t]);
    }
}

/* TIP.PGE / TIP.PGD / FUP: ip compressed against the last IP (suppressed: no IP) */
static void pk_ip(struct ptc_sim *m, int i, struct mstate *st, enum pt_packet_type t,
                  uint64_t ip, int suppressed)
{
    unsigned b = suppressed ? 0 : st->full_ip ? 6 : ip_bytes(ip, st->last_ip);
    put(m, i, st, t, 1 + b, 1);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, t);
        p.payload.ip.ipc = suppressed ? pt_ipc_suppressed
                           : st->full_ip ? pt_ipc_sext_48
                                         : ipc_of(ip, st->last_ip, b);
        p.payload.ip.ip = ip;
        put_enc(m, st, &p, 1 + b);
    }
    if (!suppressed) {
        st->last_ip = ip;
        st->full_ip = 0;
    }
}

static uint64_t ctc_of(const struct ptc_sim_cfg *c, uint64_t tsc)
{
    if (tsc <= UINT64_MAX / c->tsc_per_ctc_den) /* a 64-bit division is much cheaper */
        return tsc * c->tsc_per_ctc_den / c->tsc_per_ctc_num;
    return (uint64_t)((unsigned __int128)tsc * c->tsc_per_ctc_den / c->tsc_per_ctc_num);
}

/* the TSC time of crystal tick ctc (the first TSC value at or after it) */
static uint64_t tsc_of(const struct ptc_sim_cfg *c, uint64_t ctc)
{
    if (ctc <= (UINT64_MAX - c->tsc_per_ctc_den) / c->tsc_per_ctc_num)
        return (ctc * c->tsc_per_ctc_num + c->tsc_per_ctc_den - 1) / c->tsc_per_ctc_den;
    unsigned __int128 x = (unsigned __int128)ctc * c->tsc_per_ctc_num;
    return (uint64_t)((x + c->tsc_per_ctc_den - 1) / c->tsc_per_ctc_den);
}

static void set_mtc_k(const struct ptc_sim *m, int i, struct mstate *st, uint64_t k)
{
    st->mtc_k = k;
    st->next_mtc = m->mode[i].timing >= PTC_SIM_MTC
                       ? tsc_of(&m->cfg, (k + 1) << m->cfg.mtc_period)
                       : UINT64_MAX;
}

static void pk_cyc(struct ptc_sim *m, int i, struct mstate *st, uint64_t now, int hit)
{
    if (now <= st->last_cyc)
        return;
    uint64_t v = now - st->last_cyc;
    if (m->cfg.cyc_threshold && v < (1ull << (m->cfg.cyc_threshold - 1)))
        return; /* below the threshold the cycles add up to the next CYC */
    unsigned b = ptc_sim_cyc_bytes(v);
    put(m, i, st, ppt_cyc, b, hit);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, ppt_cyc);
        p.payload.cyc.value = v;
        put_enc(m, st, &p, b);
    }
    st->last_cyc = now;
}

/* TSC (+ TMA when MTC is on) at time now: restarts the MTC and CYC references */
static void pk_tsc(struct ptc_sim *m, int i, struct mstate *st, uint64_t now)
{
    int timing = m->mode[i].timing;
    put(m, i, st, ppt_tsc, 8, 0);
    uint64_t ctc = ctc_of(&m->cfg, now);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, ppt_tsc);
        p.payload.tsc.tsc = now;
        put_enc(m, st, &p, 8);
    }
    st->last_cyc = now;
    if (timing < PTC_SIM_MTC)
        return;
    put(m, i, st, ppt_tma, 7, 0);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, ppt_tma);
        p.payload.tma.ctc = (uint16_t)ctc;
        p.payload.tma.fc = (uint16_t)((now - tsc_of(&m->cfg, ctc)) & 0x1ff);
        put_enc(m, st, &p, 7);
    }
    set_mtc_k(m, i, st, ctc >> m->cfg.mtc_period);
}

static void psb_plus(struct ptc_sim *m, int i, struct mstate *st, uint64_t now)
{
    st->since_psb = 0;
    pk_plain(m, i, st, ppt_psb, 0);
    if (m->mode[i].timing != PTC_SIM_NONE)
        pk_tsc(m, i, st, now);
    put(m, i, st, ppt_cbr, 4, 0);
    if (st->enc) {
        struct pt_packet p;
        pkt_init(&p, ppt_cbr);
        p.payload.cbr.ratio = 24;
        put_enc(m, st, &p, 4);
    }
    pk_plain(m, i, st, ppt_psbend, 0);
    st->last_ip = 0;   /* the hardware's last IP restarts at every PSB */
    st->need_mode = 1; /* a PSB+ outside the stubs carries no MODE.Exec */
}

static uint64_t bin_of(const struct ptc_sim *m, const struct sthread *t, uint64_t tsc);
static int ensure_bins(struct ptc_sim *m, uint64_t k);

/* Time passes to now: the MTC of every crystal boundary crossed (with its CYC), each in
 * the rate bin of its own time. */
static void advance(struct ptc_sim *m, int i, struct sthread *t, struct mstate *st,
                    uint64_t now)
{
    if (m->mode[i].timing < PTC_SIM_MTC)
        return;
    uint64_t k = ctc_of(&m->cfg, now) >> m->cfg.mtc_period;
    int cyc = m->mode[i].timing == PTC_SIM_CYC;
    uint64_t hit_bin = m->cur_bin;
    for (uint64_t j = st->mtc_k + 1; j <= k; j++) {
        uint64_t at = tsc_of(&m->cfg, j << m->cfg.mtc_period);
        m->cur_bin = bin_of(m, t, at);
        if (ensure_bins(m, m->cur_bin)) /* an exit just past the last hit's bin */
            m->cur_bin = m->nbins ? m->nbins - 1 : 0;
        if (cyc)
            pk_cyc(m, i, st, at, 0);
        put(m, i, st, ppt_mtc, 2, 0);
        if (st->enc) {
            struct pt_packet p;
            pkt_init(&p, ppt_mtc);
            p.payload.mtc.ctc = (uint8_t)j;
            put_enc(m, st, &p, 2);
        }
    }
    m->cur_bin = hit_bin;
    if (k > st->mtc_k)
        set_mtc_k(m, i, st, k);
}

static struct enc *enc_open(struct ptc_sim *m, int i, uint32_t pid, uint32_t tid)
{
    struct enc *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->fd = -1;
    e->buf = malloc(SIM_ENC_BUF);
    if (e->buf) {
        struct pt_config c;
        pt_config_init(&c);
        c.begin = e->buf;
        c.end = e->buf + SIM_ENC_BUF;
        e->e = pt_alloc_encoder(&c);
    }
    if (e->e && m->enc_dir) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s-%u-%u.pt", m->enc_dir,
                 ptc_sim_timing_name(m->mode[i].timing), pid, tid);
        e->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    }
    if (!e->e || (m->enc_dir && e->fd < 0)) {
        int err = errno;
        if (e->e)
            pt_free_encoder(e->e);
        free(e->buf);
        free(e);
        errno = err;
        return NULL;
    }
    return e;
}

static void enc_close(struct ptc_sim *m, struct enc *e)
{
    if (!e)
        return;
    enc_flush(m, e);
    if (e->fd >= 0 && close(e->fd) && !m->b_io_error)
        m->b_io_error = errno;
    pt_free_encoder(e->e);
    free(e->buf);
    free(e);
}

/* ---------------------------------------------------------------- time bins */

#define SIM_MAX_BINS (1u << 22) /* 419 s of 100 us bins */

static uint64_t ns_of(const struct sthread *t, uint64_t tsc)
{
    const struct ptc_timebase *tb = &t->tb;
    unsigned __int128 x = (unsigned __int128)tsc * tb->time_mult;
    return tb->time_zero + (uint64_t)(x >> tb->time_shift);
}

/* Rate bins belong to the simulating thread (run_batch and below), which grows them; the
 * reading thread (the hook) only computes indices. */
static int ensure_bins(struct ptc_sim *m, uint64_t k)
{
    if (k < m->nbins)
        return 0;
    if (k >= m->capbins) {
        size_t cap = m->capbins ? m->capbins : 1024;
        while (cap <= k)
            cap *= 2;
        for (int i = 0; i < NACC(m); i++) {
            uint64_t *b = realloc(m->mode[i].bins, cap * sizeof(*b));
            if (!b)
                return -1;
            memset(b + m->capbins, 0, (cap - m->capbins) * sizeof(*b));
            m->mode[i].bins = b;
        }
        m->capbins = cap;
    }
    m->nbins = k + 1;
    return 0;
}

/* The rate bin of TSC value tsc of thread t (100 us wide, from the origin); a pure function
 * once the origin is set (by the hook, before any record is handed over). */
static uint64_t bin_of(const struct ptc_sim *m, const struct sthread *t, uint64_t tsc)
{
    if (!t->has_tb)
        return 0;
    uint64_t ns = ns_of(t, tsc);
    uint64_t rel = ns > m->origin ? ns - m->origin : 0;
    uint64_t k = rel / m->cfg.bin_ns;
    return k < SIM_MAX_BINS ? k : SIM_MAX_BINS - 1; /* later times: the last bin */
}

/* ---------------------------------------------------------------- stubs and threads */

static struct modmap *object_sites(struct ptc_sim *m, const struct ptc_stub_desc *d)
{
    for (size_t i = 0; i < m->nmods; i++)
        if (m->mods[i].stubs_start == d->stubs_start)
            return &m->mods[i];
    struct modmap *v = realloc(m->mods, (m->nmods + 1) * sizeof(*v));
    if (!v)
        return NULL;
    m->mods = v;
    struct modmap *o = &v[m->nmods++];
    memset(o, 0, sizeof(*o));
    o->stubs_start = d->stubs_start;
    char why[256];
    o->ok = ptc_sites_read(d->module, d->load_bias, d->stubs_start, d->stubs_end, &o->sites,
                           why, sizeof(why)) == 0;
    return o;
}

static struct pstubs *proc_stubs(struct ptc_sim *m, uint32_t pid)
{
    for (size_t i = 0; i < m->nprocs; i++)
        if (m->procs[i].pid == pid)
            return &m->procs[i];
    struct pstubs *v = realloc(m->procs, (m->nprocs + 1) * sizeof(*v));
    if (!v)
        return NULL;
    m->procs = v;
    struct pstubs *p = &v[m->nprocs++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    return p;
}

static const struct sstub *stub_make(struct ptc_sim *m, uint32_t pid, uint32_t id);

/* The simulator's view of a stub, made on its first hit; NULL for an unknown stub. */
static inline const struct sstub *stub_of(struct ptc_sim *m, uint32_t pid, uint32_t id)
{
    const struct pstubs *p = m->last_procs;
    if (likely(p && p->pid == pid && id < p->n && p->v[id].valid))
        return &p->v[id];
    return stub_make(m, pid, id);
}

static const struct sstub *stub_make(struct ptc_sim *m, uint32_t pid, uint32_t id)
{
    struct pstubs *p = proc_stubs(m, pid);
    m->last_procs = p;
    if (!p)
        return NULL;
    if (id < p->n && p->v[id].valid)
        return &p->v[id];
    struct ptc_stub_desc d;
    if (ptc_session_stub(m->s, pid, id, &d))
        return NULL;
    if (id >= p->n) {
        uint32_t n = p->n ? p->n : 256;
        while (n <= id)
            n *= 2;
        struct sstub *v = realloc(p->v, (size_t)n * sizeof(*v));
        if (!v)
            return NULL;
        memset(v + p->n, 0, (size_t)(n - p->n) * sizeof(*v));
        p->v = v;
        p->n = n;
    }
    struct sstub *st = &p->v[id];
    st->addr = d.address;
    st->func = d.func;
    if (d.func >= m->max_func_seen)
        m->max_func_seen = d.func + 1;
    st->kind = (uint8_t)d.kind;
    st->armed = !m->armed || m->armed(m->armed_ctx, d.func);
    st->valid = 1;
    struct modmap *o = object_sites(m, &d);
    st->ret = o && o->ok ? ptc_sites_ret(&o->sites, d.address) : 0;
    st->how = RET_KNOWN;
    if (st->ret == PTC_SITE_RET_CALLER) {
        st->flags |= SS_CALLER;
        st->how = RET_CALLER;
    } else if (!st->ret) {
        /* the object's sites are unknown: assume its text is in the stubs' 4 GiB but not in
         * their 64 KiB (a 4-byte IP either way) */
        st->ret = st->addr ^ (1ull << 20);
        st->how = RET_ASSUMED;
    }
    st->pgd = (uint8_t)ip_bytes(st->ret, st->addr);
    if (st->kind == PTCALL_STUB_ENTRY)
        st->flags |= SS_PUSH;
    if (st->kind == PTCALL_STUB_EXIT || st->kind == PTCALL_STUB_UNWIND)
        st->flags |= SS_POP;
    return st;
}

static struct sthread *thread_of(struct ptc_sim *m, uint32_t pid, uint32_t tid)
{
    struct sthread *t = m->last_thr;
    if (t && t->pid == pid && t->tid == tid)
        return t;
    for (size_t i = 0; i < m->nthr; i++)
        if (m->thr[i]->pid == pid && m->thr[i]->tid == tid)
            return m->last_thr = m->thr[i];
    struct sthread **v = realloc(m->thr, (m->nthr + 1) * sizeof(*v));
    if (!v)
        return NULL;
    m->thr = v;
    if (!(t = zalloc64(sizeof(*t))))
        return NULL;
    t->pid = pid;
    t->tid = tid;
    t->has_tb = ptc_session_timebase(m->s, pid, &t->tb) == 0;
    m->thr[m->nthr++] = t;
    if (m->encoding)
        for (int i = 0; i < m->cfg.nmodes; i++)
            if (!(t->st[i].enc = enc_open(m, i, pid, tid)))
                m->tot.io_error = errno ? errno : ENOMEM;
    m->tot.threads++;
    return m->last_thr = t;
}

/* ---------------------------------------------------------------- hits */

/* The packets of one stub execution at time now in mode i: entry at addr, leaving to ret
 * (0: under return compression, no IP). */
static void hit_mode(struct ptc_sim *m, int i, struct sthread *t, uint64_t now, uint64_t addr,
                     uint64_t ret, int ovf)
{
    struct mstate *st = &t->st[i];
    if (!st->started) {
        st->started = 1;
        psb_plus(m, i, st, now); /* the first bytes of an event start with a PSB */
        set_mtc_k(m, i, st, ctc_of(&m->cfg, now) >> m->cfg.mtc_period);
    } else {
        advance(m, i, t, st, now);
        if (st->since_psb >= m->cfg.psb_period)
            psb_plus(m, i, st, now);
    }
    int timing = m->mode[i].timing;
    if (ovf) {
        if (timing == PTC_SIM_CYC)
            pk_cyc(m, i, st, now, 1);
        pk_plain(m, i, st, ppt_ovf, 1);
        st->need_mode = 1;
        st->full_ip = 1;
    }
    if (timing == PTC_SIM_CYC)
        pk_cyc(m, i, st, now, 1);
    if (st->need_mode) {
        pk_plain(m, i, st, ppt_mode, 1);
        st->need_mode = 0;
    }
    pk_ip(m, i, st, ppt_tip_pge, addr, 0);
    uint64_t out = now + m->cfg.stub_cycles;
    advance(m, i, t, st, out);
    if (timing == PTC_SIM_CYC)
        pk_cyc(m, i, st, out, 1);
    pk_ip(m, i, st, ppt_tip_pgd, ret, ret == 0);
}

/* The address the stub's ret goes to, and the frame bookkeeping behind ret sleds. */
static PTC_SIM_NOINLINE void push_frame(struct sthread *t, uint64_t ret)
{
    if (t->depth == t->cap) {
        uint32_t n = t->cap ? t->cap * 2 : 64;
        uint64_t *v = realloc(t->callers, (size_t)n * sizeof(*v));
        if (!v)
            return; /* deeper frames return to an assumed address */
        t->callers = v;
        t->cap = n;
    }
    t->callers[t->depth++] = ret;
}

/* The address stub s's ret goes to (*pgd: its IP bytes after s->addr), keeping the frames
 * whose places stand in for the return addresses of ret sleds. */
static inline __attribute__((always_inline)) uint64_t return_address(struct ptc_sim *m,
                                                                      struct sthread *t,
                                      const struct sstub *s, unsigned *pgd)
{
    uint64_t ret = s->ret;
    unsigned how = s->how;
    *pgd = s->pgd;
    if (s->flags & SS_POP)
        t->depth -= t->depth > 0;
    if (unlikely(s->flags & SS_CALLER)) {
        /* into the caller: an address inside it stands in for the call's return address */
        if (t->depth && t->depth <= t->cap) {
            ret = t->callers[t->depth - 1];
        } else {
            ret = s->addr ^ (1ull << 20);
            how = RET_ASSUMED;
        }
        *pgd = ip_bytes(ret, s->addr);
    }
    if (unlikely(how != RET_KNOWN)) /* the known ones are the rest of the hits */
        m->ret_how[how]++;
    if (s->flags & SS_PUSH) {
        if (likely(t->depth < t->cap))
            t->callers[t->depth++] = ret;
        else
            push_frame(t, ret);
    }
    return ret;
}

/* A stub execution, made once for every configuration. */
struct hitrec { /* 32 bytes: a hundred million of them cross between the two cores */
    uint64_t now, addr, ret;   /* ret 0: TIP.PGD without IP (return compression) */
    uint32_t slot;             /* 2 * func + exit into fbytes; UINT32_MAX: not charged */
    uint32_t bin : 23;         /* rate bin (< SIM_MAX_BINS) */
    uint32_t pgd : 4;          /* IP bytes of its TIP.PGD */
    uint32_t ovf : 1;          /* an overflow before it (Intel PT gap) */
    uint32_t unused : 4;       /* the whole word is written: no read of the slot's old one */
};

/* hit_mode() for one record, with the figures kept in locals put back first. */
static void hit_slow(struct ptc_sim *m, int i, struct sthread *t, const struct hitrec *h)
{
    uint64_t *f = m->mode[i].fbytes;
    m->cur_bin = h->bin;
    m->cur_fslot[i] = f && h->slot != UINT32_MAX ? &f[h->slot] : NULL;
    hit_mode(m, i, t, h->now, h->addr, h->ret, h->ovf);
}

/* What configuration i stands at, from the thread's shared figures. */
static void materialize(struct ptc_sim *m, int i, struct sthread *t)
{
    struct mstate *st = &t->st[i];
    if (!st->started)
        return;
    uint64_t c = t->cum + (i == m->cyc_mode ? t->cyc_cum : 0);
    st->since_psb = c + m->cfg.psb_period - t->psb_at[i];
    st->last_ip = t->prev_ip;
    st->last_cyc = t->prev_out;
    st->mtc_k = t->mtc_k;
    st->next_mtc = m->mode[i].timing >= PTC_SIM_MTC ? t->next_mtc : UINT64_MAX;
}

/* A hit every configuration takes through hit_mode(); then the shared figures again. */
static void hit_all_slow(struct ptc_sim *m, struct sthread *t, const struct hitrec *x)
{
    int mtc_i = -1;
    for (int i = 0; i < m->cfg.nmodes; i++) {
        materialize(m, i, t);
        hit_slow(m, i, t, x);
        struct mstate *st = &t->st[i];
        uint64_t c = t->cum + (i == m->cyc_mode ? t->cyc_cum : 0);
        t->psb_at[i] = c + m->cfg.psb_period - st->since_psb;
        if (m->mode[i].timing >= PTC_SIM_MTC)
            mtc_i = i;
    }
    t->psb_at_min = UINT64_MAX;
    for (int i = 0; i < m->cfg.nmodes; i++)
        if (i != m->cyc_mode && t->psb_at[i] < t->psb_at_min)
            t->psb_at_min = t->psb_at[i];
    t->prev_ip = x->ret ? x->ret : x->addr;
    t->prev_out = m->cyc_mode >= 0 ? t->st[m->cyc_mode].last_cyc : x->now + m->cfg.stub_cycles;
    if (mtc_i >= 0) {
        t->mtc_k = t->st[mtc_i].mtc_k;
        t->next_mtc = t->st[mtc_i].next_mtc;
    } else {
        t->next_mtc = UINT64_MAX;
    }
    t->started = 1;
}

/* MTC crossings of one hit of the common case: how many, and (for `cyc`) the CYC bytes and
 * packets they add as time passing, and the hit's own CYC bytes and packets. */
struct crossings {
    uint64_t n, flow_cyc_b, flow_cyc_n;
    unsigned hit_cyc_b, hit_cyc_n;
    uint64_t last;               /* where the CYC count stands after the hit */
};

/* The packets of time passing between the last CYC and out, around a hit at now, as
 * hit_mode() writes them: crossings up to now, the hit's CYC, crossings up to out, the exit's
 * CYC. Returns 0, or -1 when there are too many crossings to take here (the rare path). */
static int cross(const struct ptc_sim *m, const struct sthread *t, uint64_t now, uint64_t out,
                 struct crossings *c)
{
    memset(c, 0, sizeof(*c));
    uint64_t last = t->prev_out, k = t->mtc_k, next = t->next_mtc;
    const int cyc = m->cyc_mode >= 0;
    for (int part = 0; part < 2; part++) {
        uint64_t upto = part ? out : now;
        while (next <= upto) {
            if (++c->n > 4)
                return -1;
            if (cyc && next > last) {
                c->flow_cyc_b += ptc_sim_cyc_bytes(next - last);
                c->flow_cyc_n++;
                last = next;
            }
            k++;
            next = tsc_of(&m->cfg, (k + 1) << m->cfg.mtc_period);
        }
        if (cyc && upto > last) { /* the CYC before TIP.PGE, then the one before TIP.PGD */
            c->hit_cyc_b += ptc_sim_cyc_bytes(upto - last);
            c->hit_cyc_n++;
            last = upto;
        }
    }
    c->last = last;
    return 0;
}

/* n records of thread t, for every configuration. The common case -- no PSB+ due in any
 * configuration, no overflow, not the first hit, no encoder, few MTC crossings -- is the
 * same TIP.PGE and TIP.PGD in all of them (and the same CYC in `cyc`): it is counted once,
 * into BASE and CYCB; MTCs and their CYCs go to the configurations that have them. The
 * rest goes through hit_mode() for each. */
static void run_batch(struct ptc_sim *m, struct sthread *t, const struct hitrec *h, size_t n)
{
    struct ptc_sim_mode *base = BASE(m), *cycb = CYCB(m);
    uint64_t *bb = base->bins, *bf = base->fbytes, *cb = cycb->bins, *cf = cycb->fbytes;
    const uint64_t sc = m->cfg.stub_cycles;
    const int ci = m->cyc_mode, cyc = ci >= 0;
    const int never = m->encoding | m->slow_only;
    uint64_t hits = 0, pge_b = 0, pgd_b = 0, total = 0, cyc_n = 0, cyc_b = 0;
    /* the thread's shared figures in locals (the stores below may not alias them) */
    uint64_t cum = t->cum, cyc_cum = t->cyc_cum, prev_ip = t->prev_ip, prev_out = t->prev_out;
    uint64_t psb_min = t->psb_at_min, next_mtc = t->next_mtc;
    uint64_t psb_c = cyc ? t->psb_at[ci] : UINT64_MAX;
#define SYNC_OUT() (t->cum = cum, t->cyc_cum = cyc_cum, t->prev_ip = prev_ip, t->prev_out = prev_out)
#define SYNC_IN()                                                                          \
    (cum = t->cum, cyc_cum = t->cyc_cum, prev_ip = t->prev_ip, prev_out = t->prev_out,      \
     psb_min = t->psb_at_min, next_mtc = t->next_mtc, psb_c = cyc ? t->psb_at[ci] : UINT64_MAX)
    for (size_t k = 0; k < n; k++) {
        const struct hitrec *x = &h[k];
        uint64_t out = x->now + sc;
        struct crossings c;
        c.n = 0;
        c.hit_cyc_b = c.hit_cyc_n = 0;
        c.last = out;
        if (unlikely(x->ovf | never | !t->started | (cum >= psb_min)))
            goto slow;
        if (unlikely(out >= next_mtc)) {
            SYNC_OUT();
            if (cross(m, t, x->now, out, &c))
                goto slow;
        } else if (cyc) { /* no crossing: the CYC before TIP.PGE, then before TIP.PGD */
            uint64_t last = prev_out;
            if (x->now > last) {
                c.hit_cyc_b = ptc_sim_cyc_bytes(x->now - last);
                c.hit_cyc_n = 1;
                last = x->now;
            }
            if (out > last) {
                c.hit_cyc_b += ptc_sim_cyc_bytes(out - last);
                c.hit_cyc_n++;
                last = out;
            }
            c.last = last;
        }
        if (unlikely(c.n)) {
            /* the MTCs (and CYCs) before the hit count towards a PSB+ that would come
             * before it: leave that to hit_mode() */
            int due = 0;
            for (int i = 0; i < m->cfg.nmodes; i++)
                if (m->mode[i].timing >= PTC_SIM_MTC) {
                    uint64_t extra = 2 * c.n + (i == ci ? c.flow_cyc_b : 0);
                    due |= cum + (i == ci ? cyc_cum : 0) + extra >= t->psb_at[i];
                }
            if (due)
                goto slow;
            for (int i = 0; i < m->cfg.nmodes; i++) {
                struct ptc_sim_mode *md = &m->mode[i];
                if (md->timing < PTC_SIM_MTC)
                    continue;
                uint64_t extra = 2 * c.n + (i == ci ? c.flow_cyc_b : 0);
                md->count[ppt_mtc] += c.n;
                md->bytes[ppt_mtc] += 2 * c.n;
                if (i == ci) {
                    md->count[ppt_cyc] += c.flow_cyc_n;
                    md->bytes[ppt_cyc] += c.flow_cyc_b;
                }
                md->total += extra;
                md->flow_bytes += extra;
                md->bins[x->bin] += extra;
                t->psb_at[i] -= extra; /* the stream grew by more than BASE and CYCB */
            }
            t->mtc_k += c.n;
            t->next_mtc = next_mtc = tsc_of(&m->cfg, (t->mtc_k + 1) << m->cfg.mtc_period);
            t->psb_at_min = UINT64_MAX;
            for (int i = 0; i < m->cfg.nmodes; i++)
                if (i != ci && t->psb_at[i] < t->psb_at_min)
                    t->psb_at_min = t->psb_at[i];
            psb_min = t->psb_at_min;
            psb_c = cyc ? t->psb_at[ci] : UINT64_MAX;
        }
        if (unlikely(cum + cyc_cum >= psb_c))
            goto slow; /* a PSB+ due in `cyc` only (never after crossings: checked above) */
        unsigned pge = ip_bytes(x->addr, prev_ip);
        unsigned size = 2 + pge + x->pgd;
        hits++;
        pge_b += 1 + pge;
        pgd_b += 1 + x->pgd;
        total += size;
        cum += size;
        bb[x->bin] += size;
        if (x->slot != UINT32_MAX)
            bf[x->slot] += size;
        if (cyc) {
            cyc_n += c.hit_cyc_n;
            cyc_b += c.hit_cyc_b;
            cyc_cum += c.hit_cyc_b;
            cb[x->bin] += c.hit_cyc_b;
            if (x->slot != UINT32_MAX)
                cf[x->slot] += c.hit_cyc_b;
        }
        prev_out = c.last;
        prev_ip = x->ret ? x->ret : x->addr;
        continue;
    slow:
        SYNC_OUT();
        hit_all_slow(m, t, x);
        SYNC_IN();
    }
    SYNC_OUT();
#undef SYNC_OUT
#undef SYNC_IN
    base->count[ppt_tip_pge] += hits;
    base->count[ppt_tip_pgd] += hits;
    base->bytes[ppt_tip_pge] += pge_b;
    base->bytes[ppt_tip_pgd] += pgd_b;
    base->total += total;
    base->hit_bytes += total;
    cycb->count[ppt_cyc] += cyc_n;
    cycb->bytes[ppt_cyc] += cyc_b;
    cycb->total += cyc_b;
    cycb->hit_bytes += cyc_b;
}

/* One stub execution into a record; exit: its bytes are charged to its function's exits
 * (else its entries). */
static inline __attribute__((always_inline)) void make_rec(struct ptc_sim *m, struct sthread *t,
                                                           const struct sstub *s,
                            uint64_t now, uint64_t addr, int exit, struct hitrec *x)
{
    unsigned pgd;
    uint64_t ret = return_address(m, t, s, &pgd);
    if (addr != s->addr) /* the exit of a whole call, at an address of its own */
        pgd = ip_bytes(ret, addr);
    if (m->cfg.ret_compression)
        ret = pgd = 0;
    int charge = likely(!m->charge_mask) || (t->bin < m->ncharge && m->charge_mask[t->bin]);
    *x = (struct hitrec){.now = now, .addr = addr, .ret = ret, .bin = (uint32_t)t->bin,
                         .slot = charge ? 2 * s->func + (unsigned)exit : UINT32_MAX,
                         .pgd = pgd & 15u, .ovf = t->ovf_pending != 0};
    t->ovf_pending = 0;
}

/* The rate bin of time now for thread t (kept while now stays in the bin's TSC range). */
static void set_bin(struct ptc_sim *m, struct sthread *t, uint64_t now)
{
    if (likely(now >= t->bin_lo && now < t->bin_hi))
        return;
    if (!m->have_origin) {
        uint64_t o;
        m->origin = ptc_session_origin(m->s, &o) == 0 ? o : t->has_tb ? ns_of(t, now) : 0;
        m->have_origin = 1;
    }
    uint64_t k = bin_of(m, t, now);
    t->bin = k;
    /* the bin's TSC range, found by halving around now (the conversion is monotonic) */
    uint64_t lo = now, hi = now, step = 1;
    while (lo > step && bin_of(m, t, lo - step) == k && step < (1ull << 40))
        lo -= step, step *= 2;
    while (step > 1) {
        step /= 2;
        if (lo > step && bin_of(m, t, lo - step) == k)
            lo -= step;
    }
    step = 1;
    while (bin_of(m, t, hi + step) == k && step < (1ull << 40))
        hi += step, step *= 2;
    while (step > 1) {
        step /= 2;
        if (bin_of(m, t, hi + step) == k)
            hi += step;
    }
    t->bin_lo = lo;
    t->bin_hi = hi + 1;
}

/* The span of the timed hits, from each thread's first and last one (at the end). */
static void span(struct ptc_sim *m)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < m->nthr; i++) {
        const struct sthread *t = m->thr[i];
        if (!t->has_tb || !t->have_first)
            continue;
        uint64_t a = ns_of(t, t->first_t), b = ns_of(t, t->last_timed);
        lo = a < lo ? a : lo;
        hi = b > hi ? b : hi;
        m->rates_cut |= bin_of(m, t, t->last_timed) == SIM_MAX_BINS - 1;
    }
    m->tot.span_ns = hi >= lo && lo != UINT64_MAX ? hi - lo + 1 : 0;
}

static int trace_is_pt(struct ptc_sim *m)
{
    if (!m->backend_known) {
        struct ptc_totals t;
        ptc_session_totals(m->s, &t);
        m->is_pt = t.backend == PTC_BACKEND_PT || t.backend == PTC_BACKEND_IMPORT;
        m->backend_known = 1;
    }
    return m->is_pt;
}

/* Event ev of thread t into records at x (0, 1 or 2 of them); returns how many. */
static size_t sim_event(struct ptc_sim *m, struct sthread *t, const struct ptc_ev *ev,
                        struct hitrec *x)
{
    if (ev->type == PTC_EV_GAP) {
        m->tot.gaps++;
        if (trace_is_pt(m)) /* the CPU wrote an OVF here; a soft loss is the soft backend's */
            t->ovf_pending = 1;
        return 0;
    }
    if (ev->type != PTC_EV_HIT)
        return 0;
    const struct sstub *s = stub_of(m, t->pid, ev->stub_id);
    if (!s)
        return 0;
    if (!s->armed) {
        m->tot.filtered++;
        return 0;
    }
    uint64_t now = t->last_t;
    if (ev->has_time) {
        now = ev->tsc;
        if (t->have_t && now < t->last_t)
            now = t->last_t; /* time never runs backwards in one stream */
    } else {
        m->tot.untimed_hits++;
    }
    t->last_t = now;
    t->have_t = 1;
    m->tot.hits++;
    if (ev->has_time) {
        set_bin(m, t, now);
        if (unlikely(!t->have_first)) {
            t->first_t = now;
            t->have_first = 1;
        }
        t->last_timed = now;
    } else {
        t->bin = 0; /* untimed: no rates */
    }
    int exit = s->kind == PTCALL_STUB_EXIT || s->kind == PTCALL_STUB_UNWIND;
    make_rec(m, t, s, now, s->addr, exit, &x[0]);
    if (s->kind != PTC_STUB_CALL || m->cfg.leaf_calls)
        return 1;
    /* a whole call: its exit stub (address unknown) ran too */
    make_rec(m, t, s, now, s->addr + PTCALL_STUB_STRIDE, 1, &x[1]);
    return 2;
}

/* ---------------------------------------------------------------- the two threads */

/* The decoder's thread (the hook) looks stubs up, keeps frames and times and makes records;
 * a second thread turns them into packets (run_batch), so the two halves of the work run on
 * two cores. A batch holds records of one thread. */
#define SIM_QBATCH 16384
#define SIM_QLEN 4

struct qbatch {
    struct sthread *t;
    size_t n;
    uint64_t max_bin;
    uint32_t max_slot;
    struct hitrec rec[SIM_QBATCH];
};

static int ensure_funcs(struct ptc_sim *m, uint32_t slot)
{
    uint32_t f = slot / 2;
    if (slot != UINT32_MAX && f < m->nfuncs)
        return 0;
    if (slot == UINT32_MAX && m->nfuncs)
        return 0;
    uint32_t n = m->nfuncs ? m->nfuncs : 64;
    while (slot != UINT32_MAX && n <= f)
        n *= 2;
    for (int i = 0; i < NACC(m); i++) {
        uint64_t *v = realloc(m->mode[i].fbytes, (size_t)n * 2 * sizeof(*v));
        if (!v)
            return -1;
        memset(v + 2 * (size_t)m->nfuncs, 0, (size_t)(n - m->nfuncs) * 2 * sizeof(*v));
        m->mode[i].fbytes = v;
    }
    uint64_t *h = realloc(m->fhits, (size_t)n * 2 * sizeof(*h));
    if (!h)
        return -1;
    memset(h + 2 * (size_t)m->nfuncs, 0, (size_t)(n - m->nfuncs) * 2 * sizeof(*h));
    m->fhits = h;
    m->nfuncs = n;
    return 0;
}

/* The simulating side of one batch. */
static void simulate_batch(struct ptc_sim *m, struct qbatch *b)
{
    if (ensure_bins(m, b->max_bin) || ensure_funcs(m, b->max_slot)) {
        m->b_io_error = ENOMEM;
        return;
    }
    for (size_t k = 0; k < b->n; k++) /* the budget's calls per function */
        if (b->rec[k].slot != UINT32_MAX)
            m->fhits[b->rec[k].slot]++;
    run_batch(m, b->t, b->rec, b->n);
}

static void consume(void *ctx, void *slot) { simulate_batch(ctx, slot); }

static int queue_start(struct ptc_sim *m)
{
    m->pipe = ptc_pipe_new(sizeof(struct qbatch), SIM_QLEN, consume, m);
    if (!m->pipe)
        return -1;
    m->fill = ptc_pipe_slot(m->pipe);
    m->fill->n = 0;
    return 0;
}

/* Hands the filled batch over; the next one to fill is m->fill. */
static void publish(struct ptc_sim *m)
{
    /* a thread's times never go back: its last record has the largest bin */
    m->fill->max_bin = m->fill->n ? m->fill->rec[m->fill->n - 1].bin : 0;
    m->fill->max_slot = m->max_func_seen ? 2 * (m->max_func_seen - 1) + 1 : UINT32_MAX;
    m->fill = ptc_pipe_put(m->pipe);
    m->fill->n = 0;
}

/* A batch of thread t with room for 2 records. */
static struct qbatch *batch_for(struct ptc_sim *m, struct sthread *t)
{
    if (m->fill->n && (m->fill->t != t || m->fill->n + 2 > SIM_QBATCH))
        publish(m);
    struct qbatch *b = m->fill;
    if (!b->n)
        b->t = t;
    return b;
}

/* Everything handed over is simulated (idempotent). */
static void sim_finish(struct ptc_sim *m)
{
    if (m->finished || !m->pipe)
        return;
    if (m->fill->n)
        publish(m);
    ptc_pipe_drain(m->pipe);
    m->finished = 1;
}

void ptc_sim_hit_hook(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    struct ptc_sim *m = ctx;
    struct sthread *t = thread_of(m, pid, tid);
    if (!t) {
        m->tot.io_error = ENOMEM;
        return;
    }
    struct qbatch *b = batch_for(m, t);
    uint64_t recs = 0;
    for (size_t k = 0; k < n; k++) {
        if (unlikely(b->n + 2 > SIM_QBATCH))
            b = batch_for(m, t);
        size_t made = sim_event(m, t, &ev[k], &b->rec[b->n]);
        b->n += made;
        recs += made;
    }
    m->recs += recs;
}

/* ---------------------------------------------------------------- the simulator */

struct ptc_sim *ptc_sim_new(struct ptc_session *s, const struct ptc_sim_cfg *cfg)
{
    struct ptc_sim *m = zalloc64(sizeof(*m));
    if (!m)
        return NULL;
    m->s = s;
    m->cfg = *cfg;
    if (!m->cfg.bin_ns)
        m->cfg.bin_ns = 100000;
    if (!m->cfg.tsc_per_ctc_num || !m->cfg.tsc_per_ctc_den)
        m->cfg.tsc_per_ctc_num = m->cfg.tsc_per_ctc_den = 1;
    m->cyc_mode = -1;
    for (int i = 0; i < cfg->nmodes; i++) {
        m->mode[i].timing = cfg->timing[i];
        if (cfg->timing[i] == PTC_SIM_CYC)
            m->cyc_mode = i;
        m->has_mtc |= cfg->timing[i] >= PTC_SIM_MTC;
    }
    /* CYC then depends on more than the last hit: no common case */
    m->slow_only = m->cfg.cyc_threshold != 0;
    if (ensure_bins(m, 0) || ensure_funcs(m, 0) || queue_start(m)) {
        ptc_sim_free(m);
        return NULL;
    }
    return m;
}

void ptc_sim_free(struct ptc_sim *m)
{
    if (!m)
        return;
    sim_finish(m);
    ptc_pipe_free(m->pipe);
    for (size_t i = 0; i < m->nthr; i++) {
        for (int k = 0; k < m->cfg.nmodes; k++)
            enc_close(m, m->thr[i]->st[k].enc);
        free(m->thr[i]->callers);
        free(m->thr[i]);
    }
    free(m->thr);
    for (size_t i = 0; i < m->nprocs; i++)
        free(m->procs[i].v);
    free(m->procs);
    for (size_t i = 0; i < m->nmods; i++)
        ptc_sites_free(&m->mods[i].sites);
    free(m->mods);
    for (int i = 0; i < PTC_SIM_MAX_MODES + 2; i++) {
        free(m->mode[i].bins);
        free(m->mode[i].fbytes);
    }
    free(m->fhits);
    free(m);
}

void ptc_sim_set_filter(struct ptc_sim *m, int (*armed)(void *ctx, uint32_t func), void *ctx)
{
    m->armed = armed;
    m->armed_ctx = ctx;
}

void ptc_sim_charge_only(struct ptc_sim *m, const uint8_t *mask, size_t n)
{
    m->charge_mask = mask;
    m->ncharge = n;
}

int ptc_sim_encode(struct ptc_sim *m, const char *dir)
{
    m->encoding = 1;
    m->enc_dir = dir;
    return 0;
}

/* Writes out what the encoders still hold (before the figures are read). */
static void finish_encoders(struct ptc_sim *m)
{
    for (size_t i = 0; i < m->nthr; i++)
        for (int k = 0; k < m->cfg.nmodes; k++)
            if (m->thr[i]->st[k].enc)
                enc_flush(m, m->thr[i]->st[k].enc);
}

static void add_into(const struct ptc_sim *m, struct ptc_sim_mode *to,
                     const struct ptc_sim_mode *from)
{
    for (int k = 0; k < PTC_SIM_NPKT; k++) {
        to->count[k] += from->count[k];
        to->bytes[k] += from->bytes[k];
    }
    to->total += from->total;
    to->hit_bytes += from->hit_bytes;
    to->flow_bytes += from->flow_bytes;
    for (size_t k = 0; k < m->nbins; k++)
        to->bins[k] += from->bins[k];
    for (size_t k = 0; to->fbytes && k < 2 * (size_t)m->nfuncs; k++)
        to->fbytes[k] += from->fbytes[k];
}

const struct ptc_sim_mode *ptc_sim_mode(const struct ptc_sim *m_, int i)
{
    struct ptc_sim *m = (struct ptc_sim *)m_;
    if (i < 0 || i >= m->cfg.nmodes)
        return NULL;
    if (!m->merged) { /* the common case's figures belong to every configuration */
        sim_finish(m);
        finish_encoders(m);
        for (int k = 0; k < m->cfg.nmodes; k++) {
            add_into(m, &m->mode[k], BASE(m));
            if (k == m->cyc_mode)
                add_into(m, &m->mode[k], CYCB(m));
        }
        m->merged = 1;
    }
    return &m->mode[i];
}

size_t ptc_sim_nbins(const struct ptc_sim *m)
{
    sim_finish((struct ptc_sim *)m);
    return m->nbins;
}

uint32_t ptc_sim_nfuncs(const struct ptc_sim *m)
{
    sim_finish((struct ptc_sim *)m);
    return m->nfuncs;
}
uint64_t ptc_sim_bin_ns(const struct ptc_sim *m) { return m->cfg.bin_ns; }

const uint64_t *ptc_sim_fhits(const struct ptc_sim *m)
{
    sim_finish((struct ptc_sim *)m);
    return m->fhits;
}

uint64_t ptc_sim_tsc_hz(const struct ptc_sim *m)
{
    for (size_t i = 0; i < m->nthr; i++) {
        const struct ptc_timebase *tb = &m->thr[i]->tb;
        if (m->thr[i]->has_tb && tb->time_mult)
            return (uint64_t)(1e9 * (double)(1ull << tb->time_shift) / (double)tb->time_mult);
    }
    return 0;
}

void ptc_sim_totals(const struct ptc_sim *m, struct ptc_sim_totals *t)
{
    sim_finish((struct ptc_sim *)m);
    span((struct ptc_sim *)m);
    *t = m->tot;
    if (!t->io_error)
        t->io_error = m->b_io_error;
    t->rates_cut = m->rates_cut;
    t->ret_known = m->recs - m->ret_how[RET_CALLER] - m->ret_how[RET_ASSUMED];
    t->ret_caller = m->ret_how[RET_CALLER];
    t->ret_assumed = m->ret_how[RET_ASSUMED];
}
