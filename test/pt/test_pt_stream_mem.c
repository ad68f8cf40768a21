/* pt-stream-mem: the PT front-end streams (DESIGN decision 6: memory grows with threads x
 * stack depth + functions, never with trace length).
 *
 *   test_pt_stream_mem [HITS] [--no-rounds] [--threads N]     (default 50 M stub hits)
 *
 * --no-rounds leaves out the round markers, to show what they buy (the front-end then holds
 * every byte until the end, and the bounds fail).
 *
 * Writes, chunk by chunk and straight into the front-end (no file, so that the test's own
 * memory stays flat too), a long per-CPU trace the way the recorder does: 4 CPUs, 6 threads
 * migrating between them, slices of up to 4000 hits (TIP.PGE into a stub with 16-bit IP
 * compression, suppressed TIP.PGD, PSB+ every 4 KiB, a TSC at every switch-in), one PT_AUX
 * chunk, one PT_SIDEBAND chunk with the PERF_RECORD_AUX naming the owner, and a PT_ROUND
 * chunk after every slice. The decoded events must be exactly the written ones (per thread:
 * count, and a hash of the stub and time sequence), and peak RSS (getrusage) must stay
 * under a fixed bound far below the trace size, as must what the front-end holds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "ptc_pt_decode.h"

#define NCPU 4
#define NTHR 6
#define STUBS 0x7f0000010000ull
#define NSTUBS 4000u
#define RSS_BOUND_MB 16 /* the whole process: binary, libraries, libipt, buffers */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif
#define HELD_BOUND (4u << 20)

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct expect { uint64_t n, hash; };
static struct expect want[NTHR], got[NTHR];

static void mix(struct expect *e, uint32_t stub, uint64_t tsc)
{
    e->n++;
    e->hash = (e->hash ^ stub) * 0x100000001b3ull;
    e->hash = (e->hash ^ tsc) * 0x100000001b3ull;
}

static int s_lookup(void *ctx, uint32_t pid, uint64_t ip, uint32_t *id)
{
    (void)ctx;
    (void)pid;
    if (ip < STUBS || ip >= STUBS + 16ull * NSTUBS || (ip - STUBS) % 16)
        return -1;
    *id = (uint32_t)((ip - STUBS) / 16);
    return 0;
}

static uint64_t other_events;
static int s_feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    (void)ctx;
    (void)pid;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].type != PTC_EV_HIT || tid < 100 || tid >= 100 + NTHR) {
            other_events++;
            continue;
        }
        mix(&got[tid - 100], ev[i].stub_id, ev[i].tsc);
    }
    return 0;
}

static uint8_t chunkbuf[1 << 20];

static int give(struct ptc_pt_front *f, uint16_t type, const void *a, size_t an, const void *b,
                size_t bn)
{
    struct ptc_chunk_header h;
    memset(&h, 0, sizeof(h));
    h.type = type;
    h.payload_size = (uint32_t)(an + bn);
    memcpy(chunkbuf, a, an);
    if (bn)
        memcpy(chunkbuf + an, b, bn);
    int r = ptc_pt_front_chunk(f, &h, chunkbuf);
    if (r)
        fprintf(stderr, "FAIL: chunk type %u: %s\n", type, ptc_pt_strerror(-r));
    return r;
}

struct cpu {
    uint8_t buf[64 << 10];
    size_t n;
    uint64_t off;       /* AUX offset of buf[0] */
    uint64_t last_psb;  /* stream position of the last PSB */
    uint64_t last_ip;   /* the decoder's last IP */
    int started;
};
static struct cpu cpus[NCPU];

static void put(struct cpu *c, const void *p, size_t n)
{
    memcpy(c->buf + c->n, p, n);
    c->n += n;
}

static void tsc_pkt(struct cpu *c, uint64_t t)
{
    uint8_t p[8] = {0x19};
    memcpy(p + 1, &t, 7);
    put(c, p, 8);
}

static void psb_plus(struct cpu *c, uint64_t t)
{
    static const uint8_t psb[16] = {2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82,
                                    2, 0x82, 2, 0x82, 2, 0x82, 2, 0x82};
    static const uint8_t cbr[4] = {2, 3, 24, 0}, psbend[2] = {2, 0x23};
    c->last_psb = c->off + c->n;
    put(c, psb, 16);
    tsc_pkt(c, t);
    put(c, cbr, 4);
    put(c, psbend, 2);
    c->last_ip = 0;
}

static void hit(struct cpu *c, uint64_t ip)
{
    uint8_t p[8];
    if ((ip >> 16) == (c->last_ip >> 16)) {
        p[0] = 0x11 | (1 << 5); /* TIP.PGE, 16-bit update */
        memcpy(p + 1, &ip, 2);
        put(c, p, 3);
    } else {
        p[0] = 0x11 | (3 << 5); /* TIP.PGE, sign-extended 48 bits */
        memcpy(p + 1, &ip, 6);
        put(c, p, 7);
    }
    c->last_ip = ip;
    p[0] = 0x01; /* TIP.PGD, IP suppressed (the stub's ret) */
    put(c, p, 1);
}

static void sb_aux(uint8_t *rec, size_t *n, uint64_t aux_off, uint64_t size, uint32_t pid,
                   uint32_t tid, uint64_t time, uint32_t cpu)
{
    uint16_t type = 11, misc = 0, rsize = 8 + 24 + 32; /* PERF_RECORD_AUX + sample_id */
    uint32_t t32 = type;
    memcpy(rec, &t32, 4);
    memcpy(rec + 4, &misc, 2);
    memcpy(rec + 6, &rsize, 2);
    uint64_t flags = 0;
    memcpy(rec + 8, &aux_off, 8);
    memcpy(rec + 16, &size, 8);
    memcpy(rec + 24, &flags, 8);
    memcpy(rec + 32, &pid, 4);
    memcpy(rec + 36, &tid, 4);
    memcpy(rec + 40, &time, 8);
    uint32_t cr[2] = {cpu, 0};
    memcpy(rec + 48, cr, 8);
    uint64_t id = 42;
    memcpy(rec + 56, &id, 8);
    *n = rsize;
}

static long rss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

int main(int argc, char **argv)
{
    uint64_t total = argc > 1 ? strtoull(argv[1], NULL, 0) : 50000000ull;
    int rounds = 1, threads = 1;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--no-rounds"))
            rounds = 0;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = atoi(argv[++i]);
    }
    struct ptc_pt_sink sink = {.lookup = s_lookup, .feed = s_feed};
    struct ptc_pt_front *f = ptc_pt_front_new(&sink, PTC_PT_MODE_FAST);
    ptc_pt_front_set_packet_stats(f, 0); /* as for sessions */
    ptc_pt_front_set_threads(f, threads);
    struct ptc_pt_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.size = sizeof(cfg);
    cfg.flags = PTC_PT_F_TSC | PTC_PT_F_NORETCOMP;
    cfg.num_cpus = NCPU;
    cfg.sample_type = 0x10000 | 0x2 | 0x4 | 0x80; /* IDENTIFIER | TID | TIME | CPU */
    if (give(f, PTC_CHUNK_PT_CONFIG, &cfg, sizeof(cfg), NULL, 0))
        return 1;
    struct ptc_pt_stubs st = {.stubs_start = STUBS, .stubs_end = STUBS + 16ull * NSTUBS};
    if (give(f, PTC_CHUNK_PT_STUBS, &st, sizeof(st), NULL, 0))
        return 1;
    uint64_t now = 1000000, hits = 0, bytes = 0, slices = 0, round = 0;
    size_t held_max = 0;
    long rss_start = 0;
    while (hits < total) {
        int ci = (int)(rnd() % NCPU), ti = (int)(rnd() % NTHR);
        struct cpu *c = &cpus[ci];
        uint32_t pid = 100, tid = 100 + (uint32_t)ti;
        now += 1000 + rnd() % 1000;
        c->n = 0;
        if (!c->started || c->off - c->last_psb >= 4096) {
            psb_plus(c, now);
            c->started = 1;
        } else {
            static const uint8_t cbr[4] = {2, 3, 24, 0};
            tsc_pkt(c, now); /* TraceEn 0 -> 1 at switch-in: TSC, CBR */
            put(c, cbr, 4);
        }
        uint64_t nh = 1 + rnd() % 4000;
        if (nh > total - hits)
            nh = total - hits;
        for (uint64_t h = 0; h < nh; h++) {
            if (c->off + c->n - c->last_psb >= 4096)
                psb_plus(c, now); /* the same time: the slice has one TSC value */
            uint32_t stub = (uint32_t)(rnd() % NSTUBS);
            hit(c, STUBS + 16ull * stub);
            mix(&want[ti], stub, now);
        }
        hits += nh;
        struct ptc_pt_aux a = {.cpu = (uint32_t)ci, .offset = c->off};
        if (give(f, PTC_CHUNK_PT_AUX, &a, sizeof(a), c->buf, c->n))
            return 1;
        uint8_t rec[64];
        size_t rn;
        sb_aux(rec, &rn, c->off, c->n, pid, tid, now + 1, (uint32_t)ci);
        struct ptc_pt_sideband sb = {.cpu = (uint32_t)ci, .sample_type = cfg.sample_type};
        if (give(f, PTC_CHUNK_PT_SIDEBAND, &sb, sizeof(sb), rec, rn))
            return 1;
        struct ptc_pt_round rd = {.size = sizeof(rd), .version = PTC_PT_ROUND_VERSION,
                                  .seq = round++};
        if (rounds && give(f, PTC_CHUNK_PT_ROUND, &rd, sizeof(rd), NULL, 0))
            return 1;
        c->off += c->n;
        bytes += c->n;
        slices++;
        size_t held = ptc_pt_front_held(f);
        if (held > held_max)
            held_max = held;
        if (!rss_start && hits > total / 20)
            rss_start = rss_kb(); /* after warm-up: buffers have their steady size */
    }
    int rc = ptc_pt_front_finish(f);
    long rss_end = rss_kb();
    int bad = rc != 0;
    if (rc)
        printf("FAIL: finish: %s\n", ptc_pt_strerror(-rc));
    for (int t = 0; t < NTHR; t++)
        if (want[t].n != got[t].n || want[t].hash != got[t].hash) {
            printf("FAIL: thread %d: %llu hits expected, %llu decoded (hash %s)\n", 100 + t,
                   (unsigned long long)want[t].n, (unsigned long long)got[t].n,
                   want[t].hash == got[t].hash ? "same" : "differs");
            bad = 1;
        }
    if (other_events) {
        printf("FAIL: %llu unexpected events (gaps)\n", (unsigned long long)other_events);
        bad = 1;
    }
    printf("%llu hits in %llu slices/rounds on %d CPUs, %.1f MB of PT bytes; peak RSS %.1f MB "
           "(%.1f MB after 5%%), front-end held at most %.2f MB\n",
           (unsigned long long)hits, (unsigned long long)slices, NCPU, (double)bytes / 1e6,
           (double)rss_end / 1024.0, (double)rss_start / 1024.0, (double)held_max / 1e6);
    if (SANITIZED) /* shadow memory and the freed-memory quarantine are not the decoder's */
        printf("SKIP: the process RSS bound under a sanitizer (the front-end's bound still "
               "holds)\n");
    else if (rss_end > RSS_BOUND_MB * 1024L) {
        printf("FAIL: peak RSS %.1f MB is over the bound of %d MB\n", (double)rss_end / 1024.0,
               RSS_BOUND_MB);
        bad = 1;
    }
    if (held_max > HELD_BOUND) {
        printf("FAIL: the front-end held %.2f MB (bound %.2f MB)\n", (double)held_max / 1e6,
               (double)HELD_BOUND / 1e6);
        bad = 1;
    }
    ptc_pt_front_free(f);
    printf("%s\n", bad ? "FAIL" : "PASS");
    return bad;
}
