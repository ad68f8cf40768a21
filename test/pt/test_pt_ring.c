/* pt-ring: the AUX and data ring consumers against an in-test producer thread that behaves
 * like the kernel (free space from the published tail, head published with release order),
 * with wrap-around, a full AUX buffer (data dropped, producer disabled until the consumer
 * re-enables it: the TRUNCATED path), records spanning the end of the data ring, and a
 * snapshot-mode copy of a wrapped buffer. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_rec.h"

#include "pt_check.h"

#define AUX_SIZE (4096u * 4)
#define TOTAL (4u << 20)

struct shared {
    struct perf_event_mmap_page *pc;
    uint8_t *aux;
    uint8_t *ref;        /* what the producer managed to write, in order */
    size_t ref_n;
    volatile int disabled, done;
    uint64_t truncations, dropped;
    uint64_t seed;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *aux_producer(void *arg)
{
    struct shared *sh = arg;
    uint64_t produced = 0, head = 0;
    uint8_t v = 0;
    while (produced < TOTAL) {
        if (__atomic_load_n(&sh->disabled, __ATOMIC_ACQUIRE))
            continue; /* the kernel disabled the event: wait for PERF_EVENT_IOC_ENABLE */
        uint64_t tail = __atomic_load_n(&sh->pc->aux_tail, __ATOMIC_ACQUIRE);
        uint64_t space = AUX_SIZE - (head - tail);
        uint64_t want = 1 + rnd(&sh->seed) % (AUX_SIZE / 3);
        uint64_t n = want < space ? want : space;
        for (uint64_t i = 0; i < n; i++) {
            sh->aux[(head + i) & (AUX_SIZE - 1)] = v;
            sh->ref[sh->ref_n++] = v++;
        }
        head += n;
        produced += want;
        __atomic_store_n(&sh->pc->aux_head, head, __ATOMIC_RELEASE);
        if (n < want) { /* buffer full: the rest is lost, TRUNCATED, event disabled */
            sh->truncations++;
            sh->dropped += want - n;
            v = (uint8_t)(v + (want - n)); /* lost bytes leave a jump in the pattern */
            __atomic_store_n(&sh->disabled, 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct out {
    uint8_t *v;
    size_t n;
    int bad_offset;
};

static int sink(void *ctx, uint64_t off, const void *p, size_t n)
{
    struct out *o = ctx;
    if (off != o->n)
        o->bad_offset = 1;
    memcpy(o->v + o->n, p, n);
    o->n += n;
    return 0;
}

static void test_aux(void)
{
    struct shared sh;
    memset(&sh, 0, sizeof(sh));
    sh.pc = calloc(1, 4096);
    sh.aux = calloc(1, AUX_SIZE);
    sh.ref = malloc(TOTAL + AUX_SIZE);
    sh.seed = 0x1234567;
    struct out o = {.v = malloc(TOTAL + AUX_SIZE)};
    struct ptc_pt_aux_ring r = {.pc = sh.pc, .base = sh.aux, .size = AUX_SIZE};
    pthread_t t;
    pthread_create(&t, NULL, aux_producer, &sh);
    /* Let the producer fill the ring before the first drain, so that the full-buffer path
     * (TRUNCATED, disabled until re-enabled) runs on every run: left to the scheduler, a
     * consumer that kept up never met it (1 run in about 50 on a loaded machine). */
    while (!__atomic_load_n(&sh.disabled, __ATOMIC_ACQUIRE))
        sched_yield();
    uint64_t drains = 0, reenables = 0;
    for (;;) {
        int done = __atomic_load_n(&sh.done, __ATOMIC_ACQUIRE);
        long k = ptc_pt_aux_drain(&r, sink, &o);
        drains += k > 0;
        if (__atomic_load_n(&sh.disabled, __ATOMIC_ACQUIRE)) {
            ptc_pt_aux_drain(&r, sink, &o); /* copy out, advance the tail, then enable */
            __atomic_store_n(&sh.disabled, 0, __ATOMIC_RELEASE);
            reenables++;
        }
        if (done && sh.pc->aux_head == sh.pc->aux_tail)
            break;
    }
    pthread_join(t, NULL);
    CHECK(!o.bad_offset, "AUX offsets not contiguous");
    CHECK(o.n == sh.ref_n && !memcmp(o.v, sh.ref, o.n), "AUX bytes differ (%zu vs %zu)", o.n,
          sh.ref_n);
    CHECK(sh.pc->aux_head > 8 * AUX_SIZE, "no wrap-around");
    CHECK(sh.truncations > 0 && reenables > 0, "the full-buffer path was not exercised");
    printf("aux: %zu bytes through a %u-byte ring in %llu drains, %llu wraps, %llu full-buffer "
           "stops (%llu bytes dropped, re-enabled %llu times)\n",
           o.n, AUX_SIZE, (unsigned long long)drains,
           (unsigned long long)(sh.pc->aux_head / AUX_SIZE),
           (unsigned long long)sh.truncations, (unsigned long long)sh.dropped,
           (unsigned long long)reenables);
    /* snapshot: a wrapped overwrite buffer, oldest byte first */
    uint8_t *buf = malloc(AUX_SIZE);
    uint64_t written = 3 * AUX_SIZE + 1234;
    for (uint64_t i = 0; i < written; i++)
        buf[i & (AUX_SIZE - 1)] = (uint8_t)(i * 7);
    struct perf_event_mmap_page *pc = calloc(1, 4096);
    pc->aux_head = written & (AUX_SIZE - 1);
    struct ptc_pt_aux_ring s = {.pc = pc, .base = buf, .size = AUX_SIZE, .overwrite = 1};
    struct out so = {.v = malloc(AUX_SIZE)};
    CHECK(ptc_pt_aux_snapshot(&s, 1, sink, &so) == AUX_SIZE, "snapshot size");
    int ok = 1;
    for (uint64_t i = 0; i < AUX_SIZE; i++)
        ok &= so.v[i] == (uint8_t)((written - AUX_SIZE + i) * 7);
    CHECK(ok, "snapshot order");
    /* successive snapshots: first (not wrapped), a continuation, then after a full wrap */
    {
        memset(buf, 0, AUX_SIZE);
        struct ptc_pt_snap st = {0};
        struct ptc_pt_aux_ring q = {.pc = pc, .base = buf, .size = AUX_SIZE, .overwrite = 1};
        struct out o2 = {.v = malloc(4 * AUX_SIZE)};
        uint64_t w = 0;
        int gap;
/* not periodic in the buffer size (real trace data is not either) */
#define PAT(x) ((uint8_t)((((uint64_t)(x) + 1) * 0x9E3779B97F4A7C15ULL) >> 56))
#define WRITE(n)                                                                           \
    for (uint64_t i_ = 0; i_ < (n); i_++, w++)                                             \
        buf[w & (AUX_SIZE - 1)] = PAT(w);                                   \
    pc->aux_head = w & (AUX_SIZE - 1)
        WRITE(5000);
        CHECK(ptc_pt_aux_snapshot_next(&q, &st, sink, &o2, &gap) == 5000 && !gap, "snap 1");
        WRITE(3000);
        CHECK(ptc_pt_aux_snapshot_next(&q, &st, sink, &o2, &gap) == 3000 && !gap,
              "snap 2 (continuation)");
        int ok2 = o2.n == 8000;
        for (uint64_t i = 0; i < o2.n && ok2; i++)
            ok2 = o2.v[i] == PAT(i);
        CHECK(ok2, "continuation bytes");
        WRITE(3 * AUX_SIZE + 100);
        size_t before = o2.n;
        CHECK(ptc_pt_aux_snapshot_next(&q, &st, sink, &o2, &gap) == AUX_SIZE && gap,
              "snap 3 (wrapped: whole buffer, gap before)");
        ok2 = o2.n - before == AUX_SIZE;
        for (uint64_t i = 0; i < AUX_SIZE && ok2; i++)
            ok2 = o2.v[before + i] == PAT(w - AUX_SIZE + i);
        CHECK(ok2, "wrapped snapshot bytes");
        printf("snapshots: first 5000 B, continuation 3000 B, after a wrap %u B with a gap\n",
               AUX_SIZE);
        free(o2.v);
    }
    free(buf);
    free(pc);
    free(so.v);
    free(o.v);
    free(sh.ref);
    free(sh.aux);
    free(sh.pc);
}

#define DATA_SIZE 4096u
#define NREC 200000

struct dshared {
    struct perf_event_mmap_page *pc;
    uint8_t *data;
    volatile int done;
};

static void *data_producer(void *arg)
{
    struct dshared *sh = arg;
    uint64_t head = 0, seed = 99;
    for (uint32_t k = 0; k < NREC; k++) {
        uint16_t size = (uint16_t)(16 + 8 * (rnd(&seed) % 40));
        uint8_t rec[400];
        struct perf_event_header h = {.type = 3, .misc = 0, .size = size};
        memcpy(rec, &h, sizeof(h));
        memcpy(rec + 8, &k, 4);
        for (unsigned i = 12; i < size; i++)
            rec[i] = (uint8_t)(k + i);
        while (DATA_SIZE - (head - __atomic_load_n(&sh->pc->data_tail, __ATOMIC_ACQUIRE)) < size)
            ;
        for (unsigned i = 0; i < size; i++)
            sh->data[(head + i) & (DATA_SIZE - 1)] = rec[i];
        head += size;
        __atomic_store_n(&sh->pc->data_head, head, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&sh->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

struct dout {
    uint32_t next;
    int bad;
    uint64_t wrapped;
    uint8_t *base;
};

static int on_rec(void *ctx, const struct perf_event_header *h, const void *rec)
{
    struct dout *o = ctx;
    const uint8_t *p = rec;
    uint32_t k;
    memcpy(&k, p + 8, 4);
    if (k != o->next++)
        o->bad = 1;
    for (unsigned i = 12; i < h->size; i++)
        if (p[i] != (uint8_t)(k + i))
            o->bad = 1;
    if ((const uint8_t *)rec < o->base || (const uint8_t *)rec >= o->base + DATA_SIZE)
        o->wrapped++; /* reassembled in the bounce buffer */
    return 0;
}

static void test_data(void)
{
    struct dshared sh;
    memset(&sh, 0, sizeof(sh));
    sh.pc = calloc(1, 4096);
    sh.data = calloc(1, DATA_SIZE);
    struct ptc_pt_data_ring *r = calloc(1, sizeof(*r));
    r->pc = sh.pc;
    r->base = sh.data;
    r->size = DATA_SIZE;
    struct dout o = {.base = sh.data};
    pthread_t t;
    pthread_create(&t, NULL, data_producer, &sh);
    for (;;) {
        int done = __atomic_load_n(&sh.done, __ATOMIC_ACQUIRE);
        ptc_pt_data_drain(r, on_rec, &o);
        if (done && sh.pc->data_tail == sh.pc->data_head)
            break;
    }
    pthread_join(t, NULL);
    CHECK(!o.bad && o.next == NREC, "data records: %u of %u, bad %d", o.next, NREC, o.bad);
    CHECK(o.wrapped > 0, "no record spanned the end of the ring");
    printf("data: %u records through a %u-byte ring, %llu reassembled across the end\n", o.next,
           DATA_SIZE, (unsigned long long)o.wrapped);
    free(r);
    free(sh.data);
    free(sh.pc);
}

int main(void)
{
    test_aux();
    test_data();
    printf("%s\n", pt_check_fails ? "FAIL" : "PASS");
    return pt_check_fails ? 1 : 0;
}
