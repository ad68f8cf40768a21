/* The drain: one thread per process takes the queued items (full buffers, thread start and
 * exit, module unloads) in order, maps each raw stub address to its stub id and encodes
 * the buffer as a SOFT_EVENTS chunk (LEB128 ids, zigzag LEB128 TSC deltas), then hands the
 * buffer back to its thread. */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "ptc_varint.h"
#include "soft_internal.h"

#define STUB_NONE UINT32_MAX

/* How long the drain waits, per buffer, for records reserved but not yet written */
#define WRITER_WAIT_NS (500ull * 1000 * 1000)

static uint8_t *enc; /* the chunk being encoded */
static size_t enc_size;

/* Records of the buffer being encoded that were still zero when the drain gave up on them
 * (their writers may store them later): where they are, the first GIVEN_UP_MAX of them. */
#define GIVEN_UP_MAX 8
static uintptr_t given_up[GIVEN_UP_MAX];
static unsigned n_given_up;

/* The object whose stubs hold a: the oldest one whose MODULE_UNLOAD the drain has not
 * written yet (a thread's events precede its dlclose's unload, and a later dlopen at the same
 * address is newer), else the newest unloaded one (destructors at exit run after their
 * object unregistered). */
static uint32_t lookup(uint64_t a)
{
    struct object *o = rt.cache;
    if (o && a - o->stubs_start < o->stubs_end - o->stubs_start)
        return o->ids[stub_slot(o, a)];
    uint32_t n = atomic_load_explicit(&rt.nobjs, memory_order_acquire);
    struct object *dead = NULL;
    for (uint32_t i = 0; i < n; i++) {
        o = rt.objs[i];
        if (a - o->stubs_start < o->stubs_end - o->stubs_start) {
            if (!o->drain_dead) {
                rt.cache = o;
                return o->ids[stub_slot(o, a)];
            }
            dead = o;
        }
    }
    if (dead) {
        rt.cache = dead;
        return dead->ids[stub_slot(dead, a)];
    }
    return STUB_NONE;
}

void write_thread_chunk(struct thread *ts, int event, uint64_t tsc)
{
    struct ptc_thread th;
    memset(&th, 0, sizeof(th));
    th.event = (uint32_t)event;
    th.tsc = tsc;
    if (event == PTC_THREAD_EXIT) {
        th.events = ts->events;
        th.dropped = ts->dropped;
        th.waits = ts->waits;
        th.wait_ns = ts->wait_ns;
    }
    /* the exit chunk names the thread as it was at exit: it may have renamed itself */
    const char *name = event == PTC_THREAD_EXIT && ts->exit_name[0] ? ts->exit_name : ts->name;
    struct iovec v[2] = {{&th, sizeof(th)}, {(void *)name, strlen(name) + 1}};
    write_chunk(PTC_CHUNK_THREAD, ts->tid, &ts->seq, v, 2);
}

/* A name change the thread (or another) made (soft_names.c): a THREAD_NAME chunk in its
 * stream */
void write_name_item(struct item *it)
{
    struct name_item *n = (struct name_item *)it;
    struct thread *ts = n->ts;
    write_thread_start(ts);
    struct ptc_thread_name tn = {.tsc = n->tsc};
    struct iovec v[2] = {{&tn, sizeof(tn)}, {n->name, strlen(n->name) + 1}};
    write_chunk_flags(PTC_CHUNK_THREAD_NAME, PTC_CHUNK_F_OPTIONAL, ts->tid, &ts->seq, v, 2);
    munmap(n, sizeof(*n));
}

/* A thread's stream begins with its THREAD start chunk, whichever item of it comes first. */
void write_thread_start(struct thread *ts)
{
    if (!ts->start_written) {
        write_thread_chunk(ts, PTC_THREAD_START, ts->start_tsc);
        ts->start_written = 1;
    }
}

/* An attached process (record --pid): the span of the thread's events, before its THREAD
 * exit chunk. Its events may begin mid-stack (calls entered before the attach), whether the
 * thread started before the attach or not: a thread whose first event comes after it may
 * have been running untraced since before. open_end: still running at tsc_to (detach). */
void write_window(struct thread *ts, int open_end, uint64_t tsc_to)
{
    if (rt.start_how != PTC_PROC_ATTACH)
        return;
    struct ptc_window w;
    memset(&w, 0, sizeof(w));
    w.tsc_from = ts->start_tsc > rt.attach_tsc ? ts->start_tsc : rt.attach_tsc;
    uint64_t u = __atomic_load_n(&rt.keep_until, __ATOMIC_SEQ_CST);
    w.tsc_to = u && u < tsc_to ? u : tsc_to;
    w.flags = PTC_WINDOW_F_MIDSTACK | (open_end ? PTC_WINDOW_F_OPEN_END : 0);
    write_thread_start(ts);
    struct iovec v = {&w, sizeof(w)};
    write_chunk_flags(PTC_CHUNK_WINDOW, PTC_CHUNK_F_OPTIONAL, ts->tid, &ts->seq, &v, 1);
    rt.attach_threads++;
}

/* Adds an ended thread's counts to the process totals (PROCESS_END). */
void add_thread_totals(const struct thread *ts)
{
    rt.tot_events += ts->events;
    rt.tot_dropped += ts->dropped;
    rt.tot_waits += ts->waits;
}

/* Untimed, the common case: 8 records that are all id records with ids below
 * 128 - PTC_SOFT_ID_BASE, each encoded as one byte. Encodes them into o[0..7] and returns 1,
 * else 0 (nothing written). SSE2: about 20 instructions for 8 records, where the general
 * loop spends about 20 per record, which made the drain slower than a program writing
 * through call-site trampolines. */
static int encode8_small_ids(const uint64_t *r, uint8_t *o)
{
    const __m128i keep = _mm_set1_epi64x((long long)~(uint64_t)0x7f0); /* all but id bits 0..6 */
    const __m128i tag = _mm_set1_epi64x(RECORD_ID_TAG);
    __m128i a = _mm_loadu_si128((const __m128i *)r), b = _mm_loadu_si128((const __m128i *)r + 1);
    __m128i c = _mm_loadu_si128((const __m128i *)r + 2), d = _mm_loadu_si128((const __m128i *)r + 3);
    /* every record must be id << 4 | RECORD_ID_TAG with id < 128 (so a zero record fails) */
    __m128i bad = _mm_or_si128(
        _mm_or_si128(_mm_xor_si128(_mm_and_si128(a, keep), tag),
                     _mm_xor_si128(_mm_and_si128(b, keep), tag)),
        _mm_or_si128(_mm_xor_si128(_mm_and_si128(c, keep), tag),
                     _mm_xor_si128(_mm_and_si128(d, keep), tag)));
    if (_mm_movemask_epi8(_mm_cmpeq_epi8(bad, _mm_setzero_si128())) != 0xffff)
        return 0;
    /* ids into the low dword of each qword, then 32 -> 16 -> 8 bits */
    a = _mm_shuffle_epi32(_mm_srli_epi64(a, 4), _MM_SHUFFLE(3, 1, 2, 0));
    b = _mm_shuffle_epi32(_mm_srli_epi64(b, 4), _MM_SHUFFLE(3, 1, 2, 0));
    c = _mm_shuffle_epi32(_mm_srli_epi64(c, 4), _MM_SHUFFLE(3, 1, 2, 0));
    d = _mm_shuffle_epi32(_mm_srli_epi64(d, 4), _MM_SHUFFLE(3, 1, 2, 0));
    __m128i w = _mm_packs_epi32(_mm_unpacklo_epi64(a, b), _mm_unpacklo_epi64(c, d));
    __m128i v = _mm_add_epi8(_mm_packus_epi16(w, _mm_setzero_si128()),
                             _mm_set1_epi8((char)PTC_SOFT_ID_BASE));
    if (_mm_movemask_epi8(v) & 0xff) /* id + base >= 128: a two-byte LEB128 */
        return 0;
    _mm_storel_epi64((__m128i *)o, v);
    return 1;
}

/* Whether a timed record of this TSC falls outside an attach's window: before every site
 * was armed (rt.keep_from) or after disarming began (rt.keep_until). */
static int outside_window(uint64_t tsc)
{
    uint64_t k = __atomic_load_n(&rt.keep_from, __ATOMIC_SEQ_CST);
    while (k == KEEP_SETTING) /* a few instructions away */
        k = __atomic_load_n(&rt.keep_from, __ATOMIC_SEQ_CST);
    uint64_t u = __atomic_load_n(&rt.keep_until, __ATOMIC_SEQ_CST);
    /* an edge's own value is outside too: the clock may step by 10 ns (an AMD TSC) or a
     * period (the ticker), and records of that step may come from either side of it */
    return (k && tsc <= k) || (u && tsc >= u);
}

/* One event of stub id for the governor, which reads the tallies while the drain writes
 * them (relaxed: a plain add, no lock; only the drain writes) */
static inline void tally_add(uint64_t *c, uint64_t n)
{
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* tally: NULL when this chunk is not tallied */
static inline void tally_one(uint64_t *tally, uint64_t id)
{
    if (tally && id < GOV_TALLY_MAX)
        tally_add(&tally[id], 1);
}

size_t encode(struct thread *ts, uint8_t *data, size_t len, uint64_t start_tsc,
              uint64_t end_tsc, int mode)
{
    write_thread_start(ts);
    /* locals: the byte stores through `o` would otherwise force reloads of every global */
    const size_t rec = rt.rec;
    const int timed = rt.timed;
    const size_t n = len / rec;
    uint8_t *o = enc + sizeof(struct ptc_soft_events);
    uint8_t *const lim = enc + enc_size - 64;
    struct object *cache = rt.cache;
    uint64_t c0 = cache ? cache->stubs_start : 1, csz = cache ? cache->stubs_end - c0 : 0;
    const uint32_t *cids = cache ? cache->ids : NULL;
    /* a budget's governor counts events per stub id in one chunk of GOV_SAMPLE
     * (soft_governor.c) */
    uint64_t *const gov = __atomic_load_n(&rt.gov_tally, __ATOMIC_ACQUIRE);
    uint64_t *const tally = gov && rt.gov_chunks++ % GOV_SAMPLE == 0 ? gov : NULL;
    uint64_t prev = start_tsc, hits = 0, lost = 0;
    uint32_t nrec = 0, skipped = 0;
    uint64_t waited_ns = 0;
    size_t fast_from = 0; /* where the 8-record path may be tried again */
    for (size_t i = 0; i < n && o <= lim; i++) {
        if (!timed && i >= fast_from && i + 8 <= n) {
            if (encode8_small_ids((const uint64_t *)(data + i * 8), o)) {
                for (int j = 0; tally && j < 8; j++)
                    tally_one(tally, ((const uint64_t *)data)[i + j] >> 4);
                o += 8;
                hits += 8;
                nrec += 8;
                i += 7;
                continue;
            }
            fast_from = i + 8; /* some other record among these 8 */
        }
        uint64_t *r = (uint64_t *)(data + i * rec);
        uint64_t v = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE);
        if (__builtin_expect(!v, 0) && mode == ENC_PREFIX)
            break; /* its writer has not got there yet: the next flush takes it */
        if (__builtin_expect(!v, 0) && mode == ENC_WAIT) {
            /* reserved but not yet written: its writer was interrupted by a signal whose
             * handlers filled the buffer and run on. Wait for it; meanwhile the thread adds
             * buffers instead of waiting for the drain (`stalled`): the store it owes sits
             * below its handlers, so it would wait for itself. Given up only when it cannot
             * add any more and waits, or after WRITER_WAIT_NS. A storm of back-to-back
             * handlers on a loaded machine held stores longer than the 20 ms this used to
             * allow (3 events in 100 storm runs under the sanitizer build), and then filled
             * every buffer (1 in 100). */
            uint64_t t0 = mono_ns();
            atomic_store(&ts->stalled, 1);
            if (atomic_load(&ts->waiting)) /* let it see `stalled` and add a buffer */
                futex_(&ts->free_seq, FUTEX_WAKE, 1, NULL);
            while (!(v = __atomic_load_n(&r[0], __ATOMIC_ACQUIRE)) &&
                   !(atomic_load_explicit(&ts->waiting, memory_order_acquire) &&
                     atomic_load(&ts->nbufs) >= MAX_BUFS) &&
                   waited_ns + (mono_ns() - t0) < WRITER_WAIT_NS)
                sched_yield();
            atomic_store(&ts->stalled, 0);
            waited_ns += mono_ns() - t0;
        }
        uint64_t tsc = timed ? r[1] : 0;
        if (__builtin_expect(timed && v != 0 && outside_window(tsc), 0)) {
            skipped++; /* recorded while an attach armed or disarmed the sites */
            continue;
        }
        if (__builtin_expect(!v, 0)) {
            v = control_record(PTC_SOFT_LOSS, 1);
            tsc = prev;
            lost++;
            if (n_given_up < GIVEN_UP_MAX)
                given_up[n_given_up] = (uintptr_t)r;
            n_given_up++;
            rt.drain_given_up++;
        }
        uint64_t a = v & ~(uint64_t)15;
        if (__builtin_expect((v & 15) == RECORD_ID_TAG, 1)) {
            uint64_t x = (v >> 4) + PTC_SOFT_ID_BASE; /* id stubs carry their id */
            if (x < 128)
                *o++ = (uint8_t)x;
            else
                o += ptc_varint_put(o, x);
            hits++;
            tally_one(tally, v >> 4);
        } else if (__builtin_expect(a - c0 < csz, 1) && (v & 15) != 1) {
            uint32_t id = cids[(a - c0) >> 4];
            if (__builtin_expect(id != STUB_NONE, 1)) {
                uint64_t x = (uint64_t)id + PTC_SOFT_ID_BASE;
                if (x < 128)
                    *o++ = (uint8_t)x;
                else
                    o += ptc_varint_put(o, x);
                hits++;
                tally_one(tally, id);
            } else {
                o += ptc_varint_put(o, PTC_SOFT_LOSS);
                o += ptc_varint_put(o, 1);
                lost++;
            }
        } else if ((v & 15) == 1) {
            o += ptc_varint_put(o, (v >> 4) & 15);
            o += ptc_varint_put(o, v >> 8);
        } else {
            uint32_t id = lookup(a);
            if (rt.cache) {
                cache = rt.cache;
                c0 = cache->stubs_start;
                csz = cache->stubs_end - c0;
                cids = cache->ids;
            }
            if (id == STUB_NONE) {
                o += ptc_varint_put(o, PTC_SOFT_LOSS);
                o += ptc_varint_put(o, 1);
                lost++;
            } else {
                o += ptc_varint_put(o, (uint64_t)id + PTC_SOFT_ID_BASE);
                hits++;
                tally_one(tally, id);
            }
        }
        if (timed) {
            uint64_t z = ptc_zigzag((int64_t)(tsc - prev));
            if (z < 128)
                *o++ = (uint8_t)z;
            else
                o += ptc_varint_put(o, z);
            prev = tsc;
        }
        nrec++;
    }
    if (mode != ENC_PREFIX) /* n - nrec: cannot happen (enc_size = 2 * bufsize) */
        ts->dropped += lost + (n - nrec - skipped);
    else
        ts->dropped += lost;
    struct ptc_soft_events h = {
        .start_tsc = start_tsc,
        .end_tsc = end_tsc,
        .num_records = nrec,
        .flags = timed ? PTC_SOFT_F_TIMED : 0,
    };
    memcpy(enc, &h, sizeof(h));
    struct iovec v = {enc, (size_t)(o - enc)};
    if (nrec) {
        write_chunk(PTC_CHUNK_SOFT_EVENTS, ts->tid, &ts->seq, &v, 1);
        rt.drain_chunks++;
        rt.drain_bytes += v.iov_len;
    }
    ts->events += hits;
    if (gov) {
        tally_add(&rt.gov_all, hits);
        if (tally)
            tally_add(&rt.gov_sampled, hits);
    }
    return (size_t)(nrec + skipped) * rec;
}

/* The records a thread wrote into the buffer it is filling since the last flush. Only the
 * drain releases buffers, so the buffer stays this thread's meanwhile; the thread may have
 * moved on to another one (its position is then outside this buffer, and the queued buffer
 * is written from `flushed` on). x86 keeps stores in order: a nonzero record's TSC, stored
 * before it, is there, and a buffer retired before b became current is seen queued. */
void flush_live(struct thread *ts, int mode)
{
    struct ptc_tls *t = ts->tls;
    struct buf *b = __atomic_load_n(&ts->cur, __ATOMIC_ACQUIRE);
    if (!t || !b || __atomic_load_n(&ts->discarding, __ATOMIC_RELAXED))
        return;
    /* an older buffer of the thread still queued must be written first (its chunk precedes
     * in the stream): the next flush takes this one. Read after cur: a buffer retired before
     * b became current is seen queued here. (The final flush takes every buffer anyway.) */
    for (int i = 0; mode == ENC_PREFIX && i < ts->nbufs; i++)
        if (&ts->bufs[i] != b && atomic_load(&ts->bufs[i].state) == B_QUEUED)
            return;
    uintptr_t end = __atomic_load_n(&t->end, __ATOMIC_ACQUIRE);
    uintptr_t pos = __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
    uintptr_t lo = (uintptr_t)b->data + b->flushed, hi = (uintptr_t)b->data + rt.bufsize;
    if (end != hi) /* the thread is between buffers, or in another one */
        return;
    if (pos > end)
        pos = end;
    if (pos < lo + rt.rec)
        return;
    uint64_t now = rdtsc_();
    size_t done = encode(ts, (uint8_t *)lo, pos - lo, b->flushed ? b->flushed_tsc : b->start_tsc,
                         now, mode);
    if (done) {
        b->flushed += done;
        b->flushed_tsc = now;
        rt.drain_live_flushes++;
    }
}

/* Every PTCALL_FLUSH_MS: what running threads wrote into buffers they are still filling goes
 * to the file, so a process killed by SIGKILL loses at most about that much. */
static void flush_all_live(void)
{
    pthread_mutex_lock(&rt.thr_mu);
    for (struct thread *ts = rt.threads; ts; ts = ts->next)
        flush_live(ts, ENC_PREFIX);
    pthread_mutex_unlock(&rt.thr_mu);
}

/* A SOFT_EVENTS chunk holding one LOSS record: drops found at the end of a stream (final
 * flush), so that THREAD exit `dropped` is still the sum of the stream's LOSS records. */
void encode_loss(struct thread *ts, uint64_t n, uint64_t tsc)
{
    if (!n)
        return;
    write_thread_start(ts);
    uint8_t *o = enc + sizeof(struct ptc_soft_events);
    o += ptc_varint_put(o, PTC_SOFT_LOSS);
    o += ptc_varint_put(o, n);
    if (rt.timed)
        o += ptc_varint_put(o, 0);
    struct ptc_soft_events h = {.start_tsc = tsc, .end_tsc = tsc, .num_records = 1,
                                .flags = rt.timed ? PTC_SOFT_F_TIMED : 0};
    memcpy(enc, &h, sizeof(h));
    struct iovec v = {enc, (size_t)(o - enc)};
    write_chunk(PTC_CHUNK_SOFT_EVENTS, ts->tid, &ts->seq, &v, 1);
    ts->dropped += n;
}

static int cmp_uintptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* A record the drain gave up on (counted lost) may still be stored by its writer, when the
 * signal handler that interrupted it returns, at its old address. Were the buffer refilled
 * there, that late store would overwrite a newer record, whose event would vanish with the
 * late one counted twice (once lost, once present). So the buffer moves to fresh memory; of
 * the old, only the pages such stores can hit stay mapped, and are never used again: 4 KiB
 * per page with such a record, which takes a writer stalled by its signal handlers. */
static void relocate_buf(struct buf *b)
{
    uint8_t *fresh = map_anon(rt.bufsize);
    if (!fresh) { /* no memory: reuse in place, and say the count may be off */
        warn("ptcall: cannot move a buffer away from a late writer (no memory): one event may "
             "be counted both lost and recorded");
        memset(b->data, 0, b->len);
        return;
    }
    uintptr_t lo = (uintptr_t)b->data, hi = lo + rt.bufsize;
    if (n_given_up <= GIVEN_UP_MAX) {
        qsort(given_up, n_given_up, sizeof(given_up[0]), cmp_uintptr);
        uintptr_t from = lo;
        for (unsigned i = 0; i < n_given_up; i++) {
            uintptr_t page = given_up[i] & ~(uintptr_t)4095;
            if (page > from)
                munmap((void *)from, page - from);
            if (page + 4096 > from)
                from = page + 4096;
        }
        if (from < hi)
            munmap((void *)from, hi - from);
    } /* else: more than we kept track of; the old buffer stays mapped */
    b->data = fresh;
}

static void release_buf(struct buf *b)
{
    struct thread *ts = b->ts;
    ts->recs_released += b->len / rt.rec;
    if (n_given_up)
        relocate_buf(b);
    else
        memset(b->data, 0, b->len);
    n_given_up = 0;
    b->len = 0;
    b->flushed = 0;
    atomic_store(&b->state, B_FREE);
    atomic_fetch_add(&ts->free_seq, 1);
    if (atomic_load(&ts->waiting))
        futex_(&ts->free_seq, FUTEX_WAKE, 1, NULL);
}

/* Processes every queued item, in order. Caller holds drain_mu. */
void drain_queue(int mode)
{
    struct item *list = atomic_exchange_explicit(&rt.qhead, NULL, memory_order_acquire);
    struct item *rev = NULL;
    while (list) {
        struct item *nx = list->next;
        list->next = rev;
        rev = list;
        list = nx;
    }
    while (rev) {
        struct item *it = rev;
        rev = rev->next;
        switch (it->type) {
        case IT_BUF: {
            struct buf *b = (struct buf *)it;
            uint64_t t0 = __rdtsc(); /* the real TSC: the ticker's word is too coarse */
            n_given_up = 0;
            if (b->len > b->flushed)
                encode(b->ts, b->data + b->flushed, b->len - b->flushed,
                       b->flushed ? b->flushed_tsc : b->start_tsc, b->end_tsc, mode);
            rt.drain_records += (b->len - b->flushed) / rt.rec;
            release_buf(b);
            rt.drain_tsc += __rdtsc() - t0;
            break;
        }
        case IT_THREAD_START: {
            struct thread *ts = (struct thread *)((char *)it - offsetof(struct thread, start_it));
            write_thread_start(ts);
            break;
        }
        case IT_THREAD_EXIT: {
            struct thread *ts = (struct thread *)((char *)it - offsetof(struct thread, exit_it));
            write_thread_start(ts);
            encode_loss(ts, ts->pending_drop, ts->exit_tsc); /* drops no buffer could hold */
            ts->pending_drop = 0;
            write_window(ts, 0, ts->exit_tsc);
            write_thread_chunk(ts, PTC_THREAD_EXIT, ts->exit_tsc);
            add_thread_totals(ts);
            thread_unlink(ts);
            thread_free(ts);
            break;
        }
        case IT_NAME:
            write_name_item(it);
            break;
        case IT_UNLOAD: {
            struct object *o = (struct object *)((char *)it - offsetof(struct object, unload));
            o->drain_dead = 1;
            rt.cache = NULL;
            struct ptc_module_unload u = {.module_id = o->module_id, .tsc = o->unload.tsc};
            struct iovec v = {&u, sizeof(u)};
            write_proc_chunk(PTC_CHUNK_MODULE_UNLOAD, &v, 1);
            break;
        }
        }
    }
}

/* Before sleeping, the drain watches the queue for a while: a thread writing at full speed
 * fills its next buffer within about that time, and finds the drain awake, so it need not
 * wake it (a system call and, in a virtual machine, an inter-processor interrupt on the
 * program's time). It yields meanwhile, so a program with more threads than cores gets the
 * core. Bounded: at most DRAIN_SPIN_NS per emptied queue. */
#define DRAIN_SPIN_NS (100 * 1000)
static void spin_for_work(void)
{
    uint64_t t0 = mono_ns(), t = t0;
    while (!atomic_load_explicit(&rt.qhead, memory_order_relaxed) &&
           !atomic_load_explicit(&rt.finishing, memory_order_relaxed) &&
           (t = mono_ns()) - t0 < DRAIN_SPIN_NS)
        sched_yield();
    rt.drain_spin_ns += t - t0;
}

static void *drain_main(void *arg)
{
    (void)arg;
    block_all_signals(NULL);
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    atomic_store(&rt.drain_tid, gettid_());
    prctl(PR_SET_NAME, "ptcall-drain");
    uint64_t last_live = mono_ns();
    for (;;) {
        uint32_t s = atomic_load(&rt.qseq);
        if (!atomic_load(&rt.qhead))
            spin_for_work();
        if (!atomic_load(&rt.qhead)) {
            atomic_store(&rt.drain_sleeping, 1);
            if (!atomic_load(&rt.qhead) && !atomic_load(&rt.finishing)) {
                uint64_t sleep_ns = 200 * 1000 * 1000, since = mono_ns() - last_live;
                if (rt.flush_ns)
                    sleep_ns = since >= rt.flush_ns ? 0 : rt.flush_ns - since;
                struct timespec to = {(time_t)(sleep_ns / 1000000000u),
                                      (long)(sleep_ns % 1000000000u)};
                if (sleep_ns)
                    futex_(&rt.qseq, FUTEX_WAIT, s, &to);
            }
            atomic_store(&rt.drain_sleeping, 0);
        }
        pthread_mutex_lock(&rt.drain_mu);
        if (atomic_load(&rt.finishing)) {
            pthread_mutex_unlock(&rt.drain_mu);
            break;
        }
        if (__builtin_expect(rt.test_drain_delay_ns != 0, 0)) {
            /* tests only: a drain too slow for its writers (a loaded machine) */
            struct timespec d = {(time_t)(rt.test_drain_delay_ns / 1000000000u),
                                 (long)(rt.test_drain_delay_ns % 1000000000u)};
            nanosleep(&d, NULL);
        }
        drain_queue(ENC_WAIT);
        if (rt.flush_ns && mono_ns() - last_live >= rt.flush_ns) {
            flush_all_live();
            last_live = mono_ns();
        }
        pthread_mutex_unlock(&rt.drain_mu);
    }
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        rt.drain_cpu_ns = (uint64_t)cpu.tv_sec * 1000000000u + (uint64_t)cpu.tv_nsec;
    atomic_store(&rt.drain_running, 0);
    return NULL;
}

int drain_start(void)
{
    if (!enc) {
        enc_size = 2 * rt.bufsize + 4096;
        enc = map_anon(enc_size);
        if (!enc)
            return -1;
    }
    if (rt.ring) /* the flight recorder encodes at snapshots only: no drain thread */
        return 0;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 << 10);
    atomic_store(&rt.drain_running, 1);
    /* the drain starts with every signal blocked: the program's handlers never run on it */
    sigset_t old;
    block_all_signals(&old);
    pthread_t drain;
    int r = pthread_create(&drain, &a, drain_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        atomic_store(&rt.drain_running, 0);
        warn("ptcall: cannot start the drain thread: %s", strerror(r));
        return -1;
    }
    return 0;
}
