/* The flight recorder's rings (docs/runtime.md, *Flight recorder*): what the event path
 * needs of ring mode, below the threads' file: a thread moving on to its oldest buffer, and
 * the one-at-a-time snapshot lock (an atomic owner, never a mutex a signal could interrupt).
 * The snapshots themselves are soft_ring.c's. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "soft_internal.h"

/* the thread taking a snapshot, 0 when none (one snapshot at a time) */
static _Atomic uint32_t snap_owner;

#define WAIT_NS (100ull * 1000 * 1000)

static void nap(void)
{
    struct timespec d = {0, 20 * 1000};
    nanosleep(&d, NULL);
}

void ring_switch(struct thread *ts)
{
    struct ptc_tls *t = ts->tls;
    int next = ts->cur ? (int)(ts->cur - ts->bufs + 1) % ts->nbufs : 0;
    /* a snapshot reading this ring may not have read the buffer we would overwrite: wait for
     * it (bounded: a snapshot that hangs must not hang the program) */
    uint64_t t0 = 0;
    for (;;) {
        atomic_store(&ts->ring_switching, 1);
        if (!(atomic_load(&ts->snap_unread) & (1u << next)))
            break;
        atomic_store(&ts->ring_switching, 0);
        if (!t0)
            t0 = mono_ns();
        else if (mono_ns() - t0 > 10 * WAIT_NS)
            break;
        nap();
    }
    atomic_store(&ts->ring_switching, 1);
    uint64_t now = rdtsc_();
    struct buf *b = ts->cur;
    if (b) {
        uintptr_t pos = t->pos < t->end ? t->pos : t->end;
        if (t->end == (uintptr_t)b->data + rt.bufsize)
            b->len = pos - (uintptr_t)b->data;
        b->end_tsc = now;
        atomic_store(&b->state, B_QUEUED); /* a whole lap, kept until overwritten */
    }
    struct buf *nb = &ts->bufs[next];
    if (atomic_load(&nb->state) != B_FREE) {
        ts->ring_lost += nb->len / rt.rec;
        memset(nb->data, 0, nb->len); /* a zero record is one not written yet */
    }
    nb->len = 0;
    nb->start_tsc = now;
    atomic_store(&nb->state, B_FILLING);
    ts->cur = nb;
    tls_set(t, (uintptr_t)nb->data, (uintptr_t)nb->data + rt.bufsize);
    atomic_store(&ts->ring_switching, 0);
}

/* Takes the snapshot lock for the calling thread. 0, or -1 with errno: EDEADLK when this
 * thread holds it (a signal inside a snapshot), EBUSY after waiting (another one hangs). */
int ring_lock(uint64_t wait_ns)
{
    uint32_t self = gettid_(), none = 0;
    uint64_t t0 = 0;
    while (!atomic_compare_exchange_strong(&snap_owner, &none, self)) {
        if (none == self) {
            errno = EDEADLK;
            return -1;
        }
        none = 0;
        if (!t0)
            t0 = mono_ns();
        else if (mono_ns() - t0 > wait_ns) {
            errno = EBUSY;
            return -1;
        }
        nap();
    }
    return 0;
}

void ring_unlock(void) { atomic_store(&snap_owner, 0); }

void ring_lock_give(uint32_t tid) { atomic_store(&snap_owner, tid); }

int ring_lock_owned(void) { return atomic_load(&snap_owner) == gettid_(); }

