/* Flushing: the final flush (exit, _exit, exec, a fatal signal) writes everything and ends
 * the process's record; the partial flush (before a program's own signal handler runs)
 * writes what is buffered and tracing goes on. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "soft_internal.h"

static int lock_with_timeout(pthread_mutex_t *m, uint64_t ns)
{
    uint64_t t0 = mono_ns();
    while (pthread_mutex_trylock(m) != 0) {
        if (mono_ns() - t0 > ns)
            return -1;
        sched_yield();
    }
    return 0;
}

/* Waits (at most ns) until no thread but self is inside the runtime's slow path. A thread
 * there when `finishing` was set may still hand a full buffer to the queue after the final
 * flush drained it, and that buffer would never be written: a buffer of events gone while the
 * trace says complete (faults' thread_exit, once in CI). A thread sets in_slow before it looks
 * at `finishing`, so once `finishing` is set and no thread is in_slow, none will queue
 * anything more. */
static void wait_slow_paths(const struct thread *self, uint64_t ns)
{
    /* the threads in the slow path now, taken under thr_mu and waited for without it (a
     * thread ending there takes thr_mu); none is freed meanwhile: only the drain frees
     * threads, and the caller holds drain_mu */
    struct thread *busy[256];
    size_t n = 0;
    uint64_t t0 = mono_ns();
    if (lock_with_timeout(&rt.thr_mu, ns) != 0)
        return;
    for (struct thread *ts = rt.threads; ts && n < 256; ts = ts->next)
        if (ts != self && atomic_load(&ts->in_slow))
            busy[n++] = ts;
    pthread_mutex_unlock(&rt.thr_mu);
    for (size_t i = 0; i < n; i++)
        while (atomic_load(&busy[i]->in_slow) && mono_ns() - t0 < ns) {
            struct timespec nap = {0, 50 * 1000};
            nanosleep(&nap, NULL);
        }
}

/* Chunks a write error lost (a disk that filled up and later freed space) are said in the
 * trace itself, once the runtime can write again: the runtime's line on stderr may be gone,
 * and without it `record` and `report` would call the trace whole. */
static void write_errors_loss(void)
{
    uint64_t errors = atomic_load(&rt.write_errors);
    if (!errors)
        return;
    struct ptc_loss l = {.kind = PTC_LOSS_WRITE,
                         .count = atomic_load(&rt.write_lost_records),
                         .tsc_to = rdtsc_()};
    char note[160];
    int len = snprintf(note, sizeof(note), "%llu chunks could not be written (%s); the events "
                       "of %llu records are missing", (unsigned long long)errors,
                       strerror(rt.write_first_errno), (unsigned long long)l.count);
    if (len < 0 || len >= (int)sizeof(note))
        len = (int)sizeof(note) - 1;
    struct iovec v[2] = {{&l, sizeof(l)}, {note, (size_t)len + 1}};
    write_proc_chunk(PTC_CHUNK_LOSS, v, 2);
}

/* After the final drain: a buffer a thread handed over that the drain never wrote (one still
 * being handed over when the wait above gave up, or lost another way) is a LOSS chunk of its
 * records, so that the trace never says complete without them. Caller holds thr_mu and
 * drain_mu. */
static void unwritten_buffers(void)
{
    for (struct thread *ts = rt.threads; ts; ts = ts->next) {
        uint64_t unwritten = atomic_load(&ts->recs_handed) - ts->recs_released;
        if (!unwritten)
            continue;
        struct ptc_loss l = {.kind = PTC_LOSS_CRASH,
                             .tid = ts->tid,
                             .count = unwritten,
                             .tsc_to = rdtsc_()};
        static const char note[] = "records of buffers the thread handed to the drain that "
                                   "were never written: the process ended while the thread "
                                   "was still handing one over";
        struct iovec v[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
        write_proc_chunk(PTC_CHUNK_LOSS, v, 2);
    }
}

/* Final flush: every queued buffer, every thread's current buffer, THREAD exit chunks and
 * PROCESS_END. After it the process records nothing more. crash: called from a signal
 * handler (bounded waits). detach: a recorder detaches (how PTC_END_DETACH): the threads go
 * on, each gets an open-ended WINDOW, and the caller (soft_attach.c) resets the state. */
static int finish_ex(int how, int status, int crash, int detach);

void finish(int how, int status, int crash) { (void)finish_ex(how, status, crash, 0); }

int finish_detach(void) { return finish_ex(PTC_END_DETACH, 0, 0, 1); }

/* 0, or -1 when there was nothing to finish (not active, or finishing already) */
static int finish_ex(int how, int status, int crash, int detach)
{
    if (rt.counting) { /* no buffers: the counts (soft_counts.c) */
        counts_finish(how, status, crash);
        return 0;
    }
    if (!rt.enabled || !atomic_load(&rt.active))
        return -1;
    if (atomic_exchange(&rt.finishing, FINISH_FLUSHING))
        return -1;
    if (rt.ring) { /* the flight recorder writes at snapshots only (soft_ring.c) */
        ring_writer_wait(); /* a snapshot being written is finished first */
        return 0;
    }
    /* a governor's demotion under way (soft_governor.c, under reg_mu) writes its chunks and
     * switches its sites before the process's last chunks; it checks `finishing` before it
     * starts. Bounded: a thread that crashed holding reg_mu must not hold the exit up. */
    if ((rt.pilot || rt.gov_set) && lock_with_timeout(&rt.reg_mu, crash ? 50000000ull : 500000000ull) == 0)
        pthread_mutex_unlock(&rt.reg_mu);
    struct ptc_tls *t = &ptc_tls;
    struct thread *self = traced_thread();
    uint64_t lost = 0;
    if (self) {
        if (!atomic_exchange(&self->in_slow, 1)) {
            put_nested_loss(self);
            retire_current(self, rdtsc_()); /* a discard count goes to pending_drop */
        } else if (self->cur) { /* crashed inside the runtime: do not touch its state */
            uintptr_t pos = t->pos < t->end ? t->pos : t->end;
            if (pos >= (uintptr_t)self->cur->data)
                lost += (pos - (uintptr_t)self->cur->data) / rt.rec;
        }
    }
    uint64_t deadline = crash ? 2000000000ull : 30000000000ull;
    int drain_locked = lock_with_timeout(&rt.drain_mu, deadline) == 0;
    if (!drain_locked) {
        atomic_store(&rt.finishing, FINISH_FINAL);
        /* the drain is stuck: say what is lost and end the process record anyway */
        struct ptc_loss l = {.kind = PTC_LOSS_CRASH, .count = 0, .tsc_to = rdtsc_()};
        static const char note[] = "drain thread did not respond; buffered events lost";
        for (struct item *it = atomic_load(&rt.qhead); it; it = it->next)
            if (it->type == IT_BUF)
                l.count += ((struct buf *)it)->len / rt.rec;
        struct iovec v[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
        write_chunk(PTC_CHUNK_LOSS, 0, &rt.proc_seq, v, 2);
    } else {
        drain_queue(crash ? ENC_NOWAIT : ENC_WAIT);
        /* the queued buffers are free again: a thread waiting for one has taken it, and one
         * still without gives up within its 100 ms wait */
        atomic_store(&rt.finishing, FINISH_FINAL);
        /* what threads in the slow path queued meanwhile */
        wait_slow_paths(self, crash ? 200000000ull : 1000000000ull);
        drain_queue(crash ? ENC_NOWAIT : ENC_WAIT);
        if (self && self->pending_drop) {
            encode_loss(self, self->pending_drop, rdtsc_());
            self->pending_drop = 0;
        }
        /* other threads are still running (they die with the process): take what their
         * current buffers hold now */
        if (lock_with_timeout(&rt.thr_mu, crash ? 500000000ull : 5000000000ull) == 0) {
            unwritten_buffers();
            for (struct thread *ts = rt.threads; ts; ts = ts->next) {
                if (ts != self) {
                    struct ptc_tls *ot = ts->tls; /* NULL: the thread is exiting */
                    if (ot && ts->discarding) {
                        uintptr_t pos = ot->pos, end = ot->end;
                        if (pos > end)
                            pos = end;
                        if (pos >= (uintptr_t)ts->discard)
                            ts->pending_drop += (pos - (uintptr_t)ts->discard) / rt.rec;
                    } else if (ot) {
                        /* detached, the process goes on: a record the thread has reserved
                         * but not yet stored (it is a few instructions from it) is waited
                         * for, bounded, instead of counted lost (real-redis-attach lost one
                         * such event in about 1 detach of 80) */
                        flush_live(ts, detach ? ENC_WAIT : ENC_NOWAIT);
                    }
                    encode_loss(ts, ts->pending_drop + atomic_exchange(&ts->nested_drop, 0),
                                rdtsc_());
                    ts->pending_drop = 0;
                }
                write_thread_start(ts);
                /* the name it has now (a server's threads name themselves after starting) */
                if (ts->tls)
                    thread_name_at_end(ts, ts == self);
                uint64_t end_tsc = rdtsc_();
                write_window(ts, detach && ts->tls, end_tsc); /* attached processes only */
                write_thread_chunk(ts, PTC_THREAD_EXIT, end_tsc);
                add_thread_totals(ts);
            }
            pthread_mutex_unlock(&rt.thr_mu);
        }
        if (lost) {
            struct ptc_loss l = {.kind = PTC_LOSS_CRASH,
                                 .tid = self ? self->tid : 0,
                                 .count = lost,
                                 .tsc_to = rdtsc_()};
            static const char note[] = "events of the crashing thread's current buffer";
            struct iovec v[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
            write_proc_chunk(PTC_CHUNK_LOSS, v, 2);
        }
    }
    write_errors_loss();
    struct ptc_process_end e = {
        .how = (uint32_t)how,
        .status = status,
        .tsc = rdtsc_(),
        .events = rt.tot_events,
        .dropped = rt.tot_dropped,
        .waits = rt.tot_waits,
    };
    struct iovec v = {&e, sizeof(e)};
    if (rt.pilot) /* a pilot still counting says so (soft_pilot_config.c); takes proc_mu */
        pilot_at_end();
    int locked = lock_with_timeout(&rt.proc_mu, crash ? 500000000ull : 5000000000ull) == 0;
    if (rt.mixed) /* the counted functions' last segment (soft_mixed.c) */
        counts_write_segment(how == PTC_END_SIGNAL ? PTC_COUNTS_F_END | PTC_COUNTS_F_CRASH
                                                   : PTC_COUNTS_F_END, "");
    write_chunk(PTC_CHUNK_PROCESS_END, 0, &rt.proc_seq, &v, 1);
    if (locked)
        pthread_mutex_unlock(&rt.proc_mu);
    if (rt.debug && rt.tb.tsc_hz)
        warn("ptcall[%u]: drain: %llu records in %llu chunks, %llu bytes, %.2f ns/record "
             "(encode+write+recycle); %llu events after the end, %llu write errors; "
             "%llu trampoline restarts, %llu reservation checks settled; %llu drain wake-ups, drain CPU %.1f ms (%.1f ms waiting "
             "for work); %llu unwritten records given up; %llu chunks from buffers still "
             "being filled",
             rt.pid, (unsigned long long)rt.drain_records, (unsigned long long)rt.drain_chunks,
             (unsigned long long)rt.drain_bytes,
             rt.drain_records ? (double)rt.drain_tsc * 1e9 / (double)rt.tb.tsc_hz / (double)rt.drain_records : 0.0,
             (unsigned long long)atomic_load(&rt.late_events),
             (unsigned long long)atomic_load(&rt.write_errors),
             (unsigned long long)tramp_restarts(), (unsigned long long)reservations_settled(),
             (unsigned long long)atomic_load(&rt.drain_wakes), (double)rt.drain_cpu_ns / 1e6,
             (double)rt.drain_spin_ns / 1e6, (unsigned long long)rt.drain_given_up,
             (unsigned long long)rt.drain_live_flushes);
    if (rt.debug && ticker_period_ns()) {
        uint64_t ticks, late, cpu;
        ticker_stats(&ticks, &late, &cpu);
        warn("ptcall[%u]: ticker: %llu ticks of %u ns, %llu a period or more late, ticker CPU "
             "%.1f ms",
             rt.pid, (unsigned long long)ticks, ticker_period_ns(), (unsigned long long)late,
             (double)cpu / 1e6);
    }
    if (!detach) { /* a detaching thread is the control thread, never traced */
        tls_set(t, 0, 0);
        if (t->state == TS_ACTIVE)
            t->state = TS_EXITED;
    }
    if (drain_locked) /* the drain sees `finishing` and stops */
        pthread_mutex_unlock(&rt.drain_mu);
    return 0;
}

/* Writes the calling thread's current buffer and everything queued; tracing goes on. */
void flush_partial(void)
{
    if (rt.counting || rt.ring || !rt.enabled || !atomic_load(&rt.active) ||
        atomic_load(&rt.finishing))
        return;
    struct thread *self = traced_thread();
    /* the signal interrupted this thread between reserving a record and writing it: writing
     * its buffers now would count that record lost; the periodic flush takes them later */
    if (self && thread_has_unwritten(self))
        return;
    hand_over_current(self);
    if (lock_with_timeout(&rt.drain_mu, 1000000000ull) == 0) {
        if (!atomic_load(&rt.finishing))
            drain_queue(ENC_NOWAIT); /* from a signal handler: its own thread cannot finish a write */
        pthread_mutex_unlock(&rt.drain_mu);
    }
}

int flush_queued(void)
{
    if (rt.counting || rt.ring || !rt.enabled || !atomic_load(&rt.active) || atomic_load(&rt.finishing))
        return 0;
    if (lock_with_timeout(&rt.drain_mu, 1000000000ull) != 0)
        return -1;
    if (!atomic_load(&rt.finishing))
        drain_queue(ENC_WAIT);
    pthread_mutex_unlock(&rt.drain_mu);
    return 0;
}
