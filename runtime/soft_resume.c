/* Where a signal interrupted an event path, before the program's handler runs (soft_signal.c
 * calls event_path_resume from its wrapper and from its fatal-signal handler).
 *
 * A trampoline stopped before its commit restarts (tramp_restart, soft_tramp.c).
 *
 * An xadd handler stopped right after its xadd, before comparing the slot it reserved with
 * the buffer's end, is settled here instead: the program's handler may fill the buffer and
 * switch to another, and the compare would then judge a slot of the old buffer against the
 * new buffer's end. Against a lower end a valid slot took the slow path (its event was
 * recorded in the new buffer while its reserved slot stayed empty and was counted lost: one
 * event counted twice); against a higher end a slot past the old buffer's end was written
 * (over whatever lay there). So the compare is done now, while the end is still the one the
 * slot came from, and the thread resumes where its outcome leads. */
#define _GNU_SOURCE
#include <ucontext.h>

#include "soft_internal.h"

extern const uint8_t ptc_chk_ht[], ptc_go_ht[], ptc_slow_ht[], ptc_chk_h[], ptc_go_h[],
    ptc_slow_h[], ptc_chk_iht[], ptc_go_iht[], ptc_slow_iht[], ptc_chk_ih[], ptc_go_ih[],
    ptc_slow_ih[], ptc_chk_hk[], ptc_go_hk[], ptc_slow_hk[], ptc_chk_ihk[], ptc_go_ihk[],
    ptc_slow_ihk[];

/* A compare after an xadd: at, where it goes on with room (go) or without (slow), and the
 * register holding the reserved slot */
struct check_point {
    uint64_t at, go, slow;
    int reg;
};
#define MAX_POINTS 10
static struct check_point points[MAX_POINTS];
static _Atomic unsigned npoints;
static _Atomic uint64_t settled; /* for PTCALL_DEBUG */

static void add_point(uint64_t at, uint64_t go, uint64_t slow, int reg)
{
    unsigned n = atomic_load(&npoints);
    if (n == MAX_POINTS)
        return;
    points[n] = (struct check_point){at, go, slow, reg};
    atomic_store_explicit(&npoints, n + 1, memory_order_release);
}

static uint64_t addr(const uint8_t *p) { return (uint64_t)(uintptr_t)p; }

void check_points_init(void)
{
    add_point(addr(ptc_chk_ht), addr(ptc_go_ht), addr(ptc_slow_ht), REG_RAX);
    add_point(addr(ptc_chk_h), addr(ptc_go_h), addr(ptc_slow_h), REG_RAX);
    add_point(addr(ptc_chk_iht), addr(ptc_go_iht), addr(ptc_slow_iht), REG_RAX);
    add_point(addr(ptc_chk_ih), addr(ptc_go_ih), addr(ptc_slow_ih), REG_RAX);
    add_point(addr(ptc_chk_hk), addr(ptc_go_hk), addr(ptc_slow_hk), REG_RAX);
    add_point(addr(ptc_chk_ihk), addr(ptc_go_ihk), addr(ptc_slow_ihk), REG_RAX);
}

void check_point_add(uint64_t at, uint64_t go, uint64_t slow)
{
    add_point(at, go, slow, REG_R10); /* the generated handlers reserve in %r10 */
}

uint64_t reservations_settled(void) { return atomic_load(&settled); }
void reservations_settled_reset(void) { atomic_store(&settled, 0); }

void event_path_resume(void *ucontext)
{
    ucontext_t *uc = ucontext;
    uint64_t ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    unsigned n = atomic_load_explicit(&npoints, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        if (ip != points[i].at)
            continue;
        /* the handlers' `cmpq end, slot; jae slow`; end is this thread's, read now */
        uint64_t slot = (uint64_t)uc->uc_mcontext.gregs[points[i].reg];
        uint64_t end = __atomic_load_n(&ptc_tls.end, __ATOMIC_RELAXED);
        uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(slot >= end ? points[i].slow : points[i].go);
        atomic_fetch_add_explicit(&settled, 1, memory_order_relaxed);
        return;
    }
    tramp_restart(ucontext);
}
