/* Per-thread buffers: a thread's state and buffers (one mapping, created at its first
 * event), the C slow path the handlers call when the buffer window is exhausted, the
 * lock-free queue to the drain, and thread exit. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "soft_internal.h"

__thread struct ptc_tls ptc_tls __attribute__((tls_model("initial-exec")));

static pthread_key_t thread_key; /* its destructor ends the thread's stream */

int tls_offsets(int32_t *pos, int32_t *end)
{
    /* %fs:0 holds the thread pointer itself (x86-64 TLS ABI); static TLS sits at a fixed
     * offset from it, the same in every thread */
    uintptr_t tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    int64_t off = (int64_t)((uintptr_t)&ptc_tls.pos - tp);
    int64_t off_end = (int64_t)((uintptr_t)&ptc_tls.end - tp);
    if (off < INT32_MIN || off > INT32_MAX || off_end < INT32_MIN || off_end > INT32_MAX)
        return -1;
    *pos = (int32_t)off;
    *end = (int32_t)off_end;
    return 0;
}

/* ---- the queue to the drain ---------------------------------------------------------- */

/* Queues an item without waking the drain. */
static void enqueue(struct item *it)
{
    struct item *h = atomic_load_explicit(&rt.qhead, memory_order_relaxed);
    do
        it->next = h;
    while (!atomic_compare_exchange_weak_explicit(&rt.qhead, &h, it, memory_order_release,
                                                  memory_order_relaxed));
    atomic_fetch_add(&rt.qseq, 1);
}

/* Wakes the drain if it sleeps. No wake-up is lost: the drain rechecks the queue after
 * announcing its sleep, and its futex wait fails once qseq moved past what it read. */
static void drain_kick(void)
{
    if (atomic_load(&rt.drain_sleeping)) {
        atomic_fetch_add_explicit(&rt.drain_wakes, 1, memory_order_relaxed);
        futex_(&rt.qseq, FUTEX_WAKE, 1, NULL);
    }
}

void push(struct item *it)
{
    if (rt.ring) /* no drain: a snapshot writes threads and modules itself */
        return;
    enqueue(it);
    drain_kick();
}

/* ---- threads ------------------------------------------------------------------------- */

/* The system call itself: prctl is interposed (soft_names.c), and this runs in the slow path */
static void thread_name(char name[16])
{
    memset(name, 0, 16);
    if (syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) != 0)
        name[0] = 0;
    name[15] = 0;
}

#define DISCARD_SIZE (64u << 10)

/* One mapping per thread: its state, then its buffers, then (drop mode) the discard area. */
static size_t thread_map_size(void)
{
    return page_round_up(sizeof(struct thread)) + (size_t)rt.nbufs * rt.bufsize +
           (rt.drop ? DISCARD_SIZE : 0);
}

static struct thread *thread_new(void)
{
    struct thread *ts = map_anon(thread_map_size());
    if (!ts)
        return NULL;
    /* the flight recorder: a snapshot forks (soft_ring.c), and fork's cost is the page
     * table entries of what it copies: 2 MiB pages make a big ring's a few hundred times
     * fewer (advice only: without transparent huge pages nothing changes) */
    if (rt.ring && thread_map_size() >= (4u << 20))
        madvise(ts, thread_map_size(), MADV_HUGEPAGE);
    uint8_t *p = (uint8_t *)ts + page_round_up(sizeof(struct thread));
    ts->nbufs = rt.nbufs;
    for (int i = 0; i < ts->nbufs; i++) {
        ts->bufs[i].data = p;
        p += rt.bufsize;
        ts->bufs[i].it.type = IT_BUF;
        ts->bufs[i].ts = ts;
    }
    if (rt.drop)
        ts->discard = p;
    ts->start_it.type = IT_THREAD_START;
    ts->exit_it.type = IT_THREAD_EXIT;
    ts->tid = gettid_();
    thread_name(ts->name);
    ts->self = pthread_self();
    ts->start_tsc = rdtsc_();
    return ts;
}

/* Frees a thread's mapping and the buffers the drain moved out of it (relocate_buf) */
void thread_free(struct thread *ts)
{
    uintptr_t lo = (uintptr_t)ts, hi = lo + thread_map_size();
    for (int i = 0; i < ts->nbufs; i++) {
        uintptr_t d = (uintptr_t)ts->bufs[i].data;
        if (d < lo || d >= hi)
            munmap(ts->bufs[i].data, rt.bufsize);
    }
    munmap(ts, thread_map_size());
}

void thread_unlink(struct thread *ts)
{
    pthread_mutex_lock(&rt.thr_mu);
    for (struct thread **pp = &rt.threads; *pp; pp = &(*pp)->next)
        if (*pp == ts) {
            *pp = ts->next;
            break;
        }
    pthread_mutex_unlock(&rt.thr_mu);
}

/* The calling thread's state, created on its first event. NULL if tracing does not apply. */
static struct thread *self_thread(void)
{
    struct ptc_tls *t = &ptc_tls;
    if (t->state == TS_ACTIVE)
        return t->ts;
    if (t->state != TS_NEW || !atomic_load(&rt.active) || atomic_load(&rt.finishing))
        return NULL;
    t->state = TS_INIT; /* events of signal handlers meanwhile are not recorded */
    struct thread *ts = thread_new();
    if (!ts) {
        t->state = TS_IGNORE;
        return NULL;
    }
    ts->tls = t;
    pthread_mutex_lock(&rt.thr_mu);
    ts->next = rt.threads;
    rt.threads = ts;
    pthread_mutex_unlock(&rt.thr_mu);
    t->ts = ts;
    tls_set(t, 0, 0);
    t->state = TS_ACTIVE;
    pthread_setspecific(thread_key, ts);
    push(&ts->start_it);
    return ts;
}

/* A free buffer of ts, or NULL; *left: how many others are free */
static struct buf *take_free(struct thread *ts, int *left)
{
    struct buf *got = NULL;
    *left = 0;
    for (int i = 0; i < ts->nbufs; i++) {
        if (atomic_load_explicit(&ts->bufs[i].state, memory_order_acquire) != B_FREE)
            continue;
        if (got)
            ++*left;
        else
            got = &ts->bufs[i];
    }
    return got;
}

/* Hands the current buffer (or the discard area's count) to the drain, waking it if wake;
 * the thread then has no buffer. */
static void retire(struct thread *ts, uint64_t now, int wake)
{
    if (rt.ring) /* the ring keeps its buffers: nothing is handed anywhere */
        return;
    struct ptc_tls *t = ts->tls;
    uintptr_t pos = t->pos < t->end ? t->pos : t->end;
    if (ts->discarding) {
        ts->pending_drop += (pos - (uintptr_t)ts->discard) / rt.rec;
        ts->discarding = 0;
    } else if (ts->cur) {
        struct buf *b = ts->cur;
        b->len = pos - (uintptr_t)b->data;
        b->end_tsc = now;
        ts->cur = NULL;
        if (b->len) {
            atomic_fetch_add(&ts->recs_handed, b->len / rt.rec);
            /* tests only: the exit race's window (soft_flush.c, wait_slow_paths), made wide
             * for a thread switching buffers (not for the final flush's own hand-over) */
            if (__builtin_expect(rt.test_queue_delay_ns != 0, 0) && !wake) {
                struct timespec d = {(time_t)(rt.test_queue_delay_ns / 1000000000u),
                                     (long)(rt.test_queue_delay_ns % 1000000000u)};
                nanosleep(&d, NULL);
            }
            atomic_store(&b->state, B_QUEUED);
            enqueue(&b->it);
            if (wake)
                drain_kick();
        } else {
            atomic_store(&b->state, B_FREE);
        }
    }
    tls_set(t, 0, 0);
}

void retire_current(struct thread *ts, uint64_t now) { retire(ts, now, 1); }

static void put_raw(struct thread *ts, uintptr_t v, uint64_t tsc);

/* One more buffer for ts, beyond the configured ones, or NULL (MAX_BUFS, or no memory).
 * Only while the drain waits for a record of this thread: a signal storm can keep the thread
 * in handlers, with the store it owes below them, until every buffer is queued; waiting for
 * the drain then would wait for itself, and the drain would give the record up (lost). */
static struct buf *add_buffer(struct thread *ts)
{
    int n = atomic_load(&ts->nbufs);
    if (n >= MAX_BUFS)
        return NULL;
    uint8_t *data = map_anon(rt.bufsize);
    if (!data)
        return NULL;
    struct buf *b = &ts->bufs[n];
    b->data = data;
    b->it.type = IT_BUF;
    b->ts = ts;
    b->len = b->flushed = 0;
    atomic_store(&b->state, B_FREE);
    atomic_store_explicit(&ts->nbufs, n + 1, memory_order_release); /* the drain reads it */
    return b;
}

/* Gives the thread a buffer with room: a free one (waiting for the drain unless dropping
 * or told not to) or, in drop mode, the discard area. */
static void switch_buffer(struct thread *ts, int may_drop)
{
    if (rt.ring) {
        ring_switch(ts);
        return;
    }
    struct ptc_tls *t = ts->tls;
    uint64_t now = rdtsc_();
    /* Waking a sleeping drain costs this thread a system call and, in a virtual machine,
     * an inter-processor interrupt: 5-15 us, as much as 3000 trampoline events. So a full
     * buffer wakes the drain only once half of the thread's buffers are queued. */
    retire(ts, now, 0);
    int left;
    struct buf *b = take_free(ts, &left);
    if (!b || 2 * left < ts->nbufs)
        drain_kick();
    if (!b && rt.drop && may_drop) {
        ts->discarding = 1;
        tls_set(t, (uintptr_t)ts->discard, (uintptr_t)ts->discard + DISCARD_SIZE);
        return;
    }
    if (!b) {
        uint64_t w0 = mono_ns();
        ts->waits++;
        for (;;) {
            atomic_store(&ts->waiting, 1);
            uint32_t seq = atomic_load(&ts->free_seq);
            b = take_free(ts, &left);
            if (b || (atomic_load(&ts->stalled) && (b = add_buffer(ts))))
                break;
            int fin = atomic_load(&rt.finishing);
            /* a final flush on its way frees the queued buffers (a detach under load may
             * take it longer than one wait to get there): only once it has, or when no
             * drain and no flush will, is the event given up */
            if (fin == FINISH_FINAL || (fin == FINISH_NONE && !atomic_load(&rt.drain_running))) {
                /* the flush stored FINISH_FINAL after its frees: take one it made */
                if ((b = take_free(ts, &left)) != NULL)
                    break;
                /* nobody will free a buffer: the caller counts its event as dropped */
                atomic_store(&ts->waiting, 0);
                ts->wait_ns += mono_ns() - w0;
                tls_set(t, 0, 0);
                return;
            }
            struct timespec to = {0, 100 * 1000 * 1000};
            futex_(&ts->free_seq, FUTEX_WAIT, seq, &to);
        }
        atomic_store(&ts->waiting, 0);
        ts->wait_ns += mono_ns() - w0;
        now = rdtsc_();
    }
    atomic_store(&b->state, B_FILLING);
    b->start_tsc = now;
    b->len = 0;
    ts->cur = b;
    tls_set(t, (uintptr_t)b->data, (uintptr_t)b->data + rt.bufsize);
    if (ts->pending_drop) {
        uint64_t n = ts->pending_drop;
        ts->pending_drop = 0;
        ts->dropped += n;
        put_raw(ts, control_record(PTC_SOFT_LOSS, n), now);
    }
}

/* Appends one record (stub address, or a control record (operand << 8 | type << 4 | 1)).
 * Reserves like the handler does (an xadd), so that a signal handler's events on this
 * thread, which take the fast path whenever there is room, never share its slot. */
static void put_raw(struct thread *ts, uintptr_t v, uint64_t tsc)
{
    struct ptc_tls *t = ts->tls;
    if (ts->discarding && (v & 15) == 1) {
        /* a control record (FORK) is not an event to drop: in the discard area it was counted
         * as a dropped hit and its content lost (every fork of a dropping thread: children
         * without their parent's stack). It waits for a real buffer, whose first record is
         * then the LOSS of what the discard area took. (put_nested_loss keeps LOSS out.) */
        retire(ts, tsc, 1);
        switch_buffer(ts, 0);
    }
    for (int tries = 0; tries < 3; tries++) {
        uintptr_t end = t->end;
        if (end) {
            uintptr_t p = __atomic_fetch_add(&t->pos, rt.rec, __ATOMIC_RELAXED);
            if (p + rt.rec <= end) {
                uint64_t *r = (uint64_t *)p;
                if (rt.timed)
                    r[1] = tsc;
                __atomic_store_n(&r[0], (uint64_t)v, __ATOMIC_RELEASE);
                return;
            }
        }
        switch_buffer(ts, 1);
        if (!t->end)
            break;
    }
    ts->pending_drop++; /* nowhere to put it (no drain): reported with the next LOSS */
}

/* Reports events dropped by nested slow paths right after the current record. */
void put_nested_loss(struct thread *ts)
{
    uint64_t n = atomic_exchange(&ts->nested_drop, 0);
    if (n && ts->discarding) { /* the next LOSS record, when a buffer is free, says them */
        ts->pending_drop += n;
    } else if (n) {
        ts->dropped += n;
        put_raw(ts, control_record(PTC_SOFT_LOSS, n), rdtsc_());
    }
}

/* The handlers' slow path (soft_handler.S): the thread's first event, a full buffer, or
 * tracing over. The program reaches it at its stubs, where errno may be live: errno is kept. */
void ptc_soft_slow(uintptr_t ret, uint64_t tsc)
{
    struct ptc_tls *t = &ptc_tls;
    int saved_errno = errno;
    if (tsc && ptc_ticker_on) /* the trigger handler and fast_slow_idt read the TSC */
        tsc = rdtsc_();
    int trig = (ret & RECORD_TRIGGER_BIT) != 0; /* a watched stub (soft_trigger.c) */
    ret &= ~RECORD_TRIGGER_BIT;
    struct thread *ts = traced_thread();
    if (!ts) {
        if (t->state == TS_NEW) {
            sigset_t old;
            block_all_signals(&old);
            ts = self_thread();
            pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (!ts) {
            tls_set(t, 0, 0);
            atomic_fetch_add(&rt.late_events, 1);
            errno = saved_errno;
            return;
        }
    }
    /* Signals wait until the record is stored and the thread has room again: a handler that
     * reached an instrumented function meanwhile would find no room and no way to get some
     * (in_slow), and its events would be dropped -- in wait mode, which must never drop (a
     * switch may wait for the drain for milliseconds, long enough for thousands of signals).
     * They are delivered when the mask is restored, and their events find a buffer. */
    sigset_t old;
    block_all_signals(&old);
    if (atomic_exchange(&ts->in_slow, 1)) {
        /* only from a handler that interrupted another runtime path (hand_over_current) */
        atomic_fetch_add(&ts->nested_drop, 1);
    } else {
        if (atomic_load(&rt.finishing)) {
            tls_set(t, 0, 0);
            atomic_fetch_add(&rt.late_events, 1);
        } else {
            put_raw(ts, ret, tsc);
            put_nested_loss(ts);
            if (trig && rt.trigger_hook)
                rt.trigger_hook(ts, ret, tsc);
        }
        atomic_store(&ts->in_slow, 0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = saved_errno;
}

/* The thread's TLS is freed when it exits: the drain (flush_live) and the final flush, which
 * read its buffer position under thr_mu, must not look at it any more. */
static void forget_tls(struct thread *ts)
{
    pthread_mutex_lock(&rt.thr_mu);
    ts->tls = NULL;
    pthread_mutex_unlock(&rt.thr_mu);
}

/* Thread exit (TLS destructor): hand everything over, and a THREAD exit item. */
static void thread_key_destructor(void *p)
{
    struct thread *ts = p;
    struct ptc_tls *t = &ptc_tls;
    if (!ts || t->ts != ts || t->state != TS_ACTIVE)
        return;
    sigset_t old; /* as in ptc_soft_slow: a handler must not find the thread in here */
    block_all_signals(&old);
    if (atomic_exchange(&ts->in_slow, 1)) {
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        return;
    }
    if (rt.ring) { /* its ring goes with it */
        struct buf *b = ts->cur;
        /* where it got to, for a snapshot that reads this ring before the thread leaves */
        if (b && t->end == (uintptr_t)b->data + rt.bufsize)
            b->len = (t->pos < t->end ? t->pos : t->end) - (uintptr_t)b->data;
        t->state = TS_EXITED;
        t->ts = NULL;
        tls_set(t, 0, 0);
        /* a snapshot may be walking the list: the thread leaves it between snapshots (if one
         * hangs, the thread's memory is left to it rather than freed under it) */
        if (ring_lock(1000000000ull) == 0) {
            thread_unlink(ts);
            ring_unlock();
            thread_free(ts);
        }
    } else if (!atomic_load(&rt.finishing) && atomic_load(&rt.active)) {
        /* not active: detached (attach mode), no drain to take the exit; freed at the next
         * attach (threads_reset_for_attach) */
        put_nested_loss(ts);
        if (ts->discarding || ts->pending_drop) {
            /* report the drops at their place: wait for a buffer to hold the LOSS record */
            retire_current(ts, rdtsc_());
            if (ts->pending_drop)
                switch_buffer(ts, 0);
        }
        retire_current(ts, rdtsc_());
        /* a pending_drop left (no buffer could be had) is the drain's to write as a LOSS
         * before the THREAD exit chunk, so that the two agree */
        thread_name(ts->exit_name);
        ts->exit_tsc = rdtsc_();
        t->state = TS_EXITED;
        t->ts = NULL;
        tls_set(t, 0, 0);
        forget_tls(ts);
        push(&ts->exit_it);
    } else {
        t->state = TS_EXITED;
        tls_set(t, 0, 0);
        forget_tls(ts);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    /* ts is now the drain's; in_slow stays set */
}

/* Whether ts (the calling thread, from a signal handler) reserved a record it has not
 * written yet: in a queued buffer, or in the current one below its position. */
static int has_unwritten(const uint8_t *data, size_t from, size_t to)
{
    for (size_t o = from; o + rt.rec <= to; o += rt.rec)
        if (!__atomic_load_n((const uint64_t *)(data + o), __ATOMIC_ACQUIRE))
            return 1;
    return 0;
}

int thread_has_unwritten(struct thread *ts)
{
    for (int i = 0; i < ts->nbufs; i++) {
        struct buf *b = &ts->bufs[i];
        if (atomic_load(&b->state) == B_QUEUED && has_unwritten(b->data, b->flushed, b->len))
            return 1;
    }
    struct ptc_tls *t = ts->tls;
    struct buf *b = ts->cur;
    if (!t || !b || ts->discarding || t->end != (uintptr_t)b->data + rt.bufsize)
        return 0;
    uintptr_t pos = t->pos < t->end ? t->pos : t->end;
    return pos > (uintptr_t)b->data &&
           has_unwritten(b->data, b->flushed, pos - (uintptr_t)b->data);
}

/* The caller's events so far go to the drain now, unless it is inside the slow path (a
 * signal handler interrupted it there); its next event takes a new buffer. */
void hand_over_current(struct thread *ts)
{
    if (!ts)
        return;
    sigset_t old; /* as in ptc_soft_slow: no handler may find the thread in here */
    block_all_signals(&old);
    if (!atomic_exchange(&ts->in_slow, 1)) {
        put_nested_loss(ts);
        retire_current(ts, rdtsc_());
        atomic_store(&ts->in_slow, 0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The parent's side of fork: a FORK control record, timed at tsc, in the caller's stream. */
void record_fork(pid_t pid, uint64_t tsc)
{
    sigset_t old; /* as in ptc_soft_slow: no handler may find the thread in here */
    block_all_signals(&old);
    struct thread *ts = self_thread();
    if (ts && !atomic_exchange(&ts->in_slow, 1)) {
        put_raw(ts, control_record(PTC_SOFT_FORK, (uint64_t)pid), tsc);
        put_nested_loss(ts);
        /* hand the fork point to the drain now: readers then usually meet it in the file
         * before the child's first events */
        retire_current(ts, rdtsc_());
        atomic_store(&ts->in_slow, 0);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

int threads_init(void) { return pthread_key_create(&thread_key, thread_key_destructor); }

/* In a fork child: the parent's pending events stay the parent's. Drops every other thread
 * and resets self's buffers (fresh zero pages, no copy) and counts. */
/* A thread's stream starts over (a fork child's own thread, each thread at an attach): no
 * buffer being filled, nothing dropped or handed over, its chunks numbered from 0. */
static void stream_reset(struct thread *ts)
{
    ts->cur = NULL;
    ts->discarding = 0;
    ts->pending_drop = 0;
    atomic_store(&ts->nested_drop, 0);
    ts->dropped = ts->waits = ts->wait_ns = 0;
    ts->seq = 0;
    ts->events = 0;
    atomic_store(&ts->recs_handed, 0);
    ts->recs_released = 0;
    ts->start_written = 0;
}

void threads_after_fork(struct thread *self)
{
    for (struct thread *ts = rt.threads, *nx; ts; ts = nx) {
        nx = ts->next;
        if (ts != self)
            thread_free(ts);
    }
    rt.threads = self;
    if (self) {
        self->next = NULL;
        for (int i = 0; i < self->nbufs; i++) {
            mmap(self->bufs[i].data, rt.bufsize, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
            self->bufs[i].len = 0;
            self->bufs[i].flushed = 0;
            atomic_store(&self->bufs[i].state, B_FREE);
        }
        stream_reset(self);
        atomic_store(&self->in_slow, 0);
        self->ring_lost = 0;
        self->trig_depth = 0;
        atomic_store(&self->snap_unread, 0);
        atomic_store(&self->ring_switching, 0);
        self->tid = gettid_();
        self->start_tsc = rdtsc_();
        tls_set(&ptc_tls, 0, 0);
    }
}

/* ---- attach and detach (issue 31) ------------------------------------------------------ */

/* The name of thread tid of this process (its own prctl name is not ours to ask). */
static void task_name(uint32_t tid, char name[16])
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[17];
    ssize_t n = read(fd, buf, 16);
    syscall(SYS_close, fd); /* not the interposed close (soft_fd.c): nothing to move here */
    if (n <= 0)
        return;
    if (buf[n - 1] == '\n')
        n--;
    memset(name, 0, 16);
    memcpy(name, buf, (size_t)(n < 15 ? n : 15));
}

void threads_reset_for_attach(int at_attach)
{
    if (at_attach) {
        /* exit items queued while detached (no drain): their threads are freed below */
        atomic_store(&rt.qhead, NULL);
    }
    pthread_mutex_lock(&rt.thr_mu);
    for (struct thread **pp = &rt.threads, *ts; (ts = *pp);) {
        if (!ts->tls) { /* it exited */
            if (at_attach) {
                *pp = ts->next;
                thread_free(ts);
                continue;
            }
            pp = &ts->next;
            continue;
        }
        if (at_attach) {
            ts->start_tsc = rt.attach_tsc;
            task_name(ts->tid, ts->name);
            ts->exit_name[0] = 0;
            pp = &ts->next;
            continue;
        }
        /* what a record written after the flush left in a buffer is overwritten before it
         * is read: the next window writes each buffer from its start */
        for (int i = 0; i < ts->nbufs; i++) {
            struct buf *b = &ts->bufs[i];
            if (atomic_load(&b->state) != B_FREE)
                memset(b->data, 0, rt.bufsize);
            b->len = b->flushed = 0;
            atomic_store(&b->state, B_FREE);
        }
        stream_reset(ts);
        atomic_store(&ts->stalled, 0);
        /* its next event takes the slow path, which finds a free buffer */
        tls_set(ts->tls, 0, 0);
        atomic_store(&ts->in_slow, 0);
        pp = &ts->next;
    }
    pthread_mutex_unlock(&rt.thr_mu);
}
