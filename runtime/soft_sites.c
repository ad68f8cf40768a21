/* Call-site sleds of this process's own objects (map v3, PTCALL_MAP_F_SLEDS): arming writes
 * `call stub` (or `jmp trampoline`, soft_tramp.c) over every sled of an object's
 * ptcall_sites table, so its functions start reporting their events; until then an
 * instrumented function runs a 5-byte nop per site. A ret sled (map v5) becomes
 * `jmp stub` (or `jmp trampoline`) in place of the function's `ret`. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "ptc_sled.h"
#include "ptcall/map_format.h"
#include "soft_internal.h"

static int set_prot(uint64_t lo, uint64_t hi, int prot)
{
    uintptr_t a = (uintptr_t)lo & ~(uintptr_t)4095;
    uintptr_t b = page_round_up((uintptr_t)hi);
    int r = mprotect((void *)a, b - a, prot);
#ifdef MADV_POPULATE_WRITE
    /* the first store to each code page copies it (copy on write): one call for the whole
     * span instead of a fault per page, which on a VM cost most of arming 100,000 functions
     * (advice only: kernels before 5.14 say EINVAL and the stores fault as before) */
    if (r == 0 && (prot & PROT_WRITE) && b - a > 4096)
        madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#endif
    return r;
}

int code_writable(uint64_t lo, uint64_t hi)
{
    if (set_prot(lo, hi, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
        return 0;
    return set_prot(lo, hi, PROT_READ | PROT_WRITE);
}

void code_executable(uint64_t lo, uint64_t hi) { set_prot(lo, hi, PROT_READ | PROT_EXEC); }

/* `open` when every page of the sites' span is writable and executable at once (page
 * addresses are multiples of 4096, so never 1) */
#define OPEN_ALL 1u

/* Whether the pages of [lo, hi) belong to one r-x segment of the object that holds them and
 * to no other segment (a page two segments share may be mapped with the other's protection):
 * only then may the whole span be made RWX and put back to r-x after. */
static int in_one_exec_segment(uint64_t lo, uint64_t hi)
{
    struct object_layout l;
    char why[160];
    if (object_layout((const void *)(uintptr_t)lo, &l, why, sizeof(why)) < 0)
        return 0;
    const unsigned rwx = PTC_MAP_SEG_R | PTC_MAP_SEG_W | PTC_MAP_SEG_X;
    int in = 0;
    for (size_t i = 0; i < l.nsegs; i++) {
        const struct ptc_map_segment *g = &l.segs[i];
        if (g->start <= lo && hi <= g->end && (g->prot & rwx) == (PTC_MAP_SEG_R | PTC_MAP_SEG_X))
            in = 1;
        else if (g->start < hi && lo < g->end)
            return 0;
    }
    return in;
}

/* Makes the page holding `word` writable unless it is the page made writable last. */
static int open_page(uint64_t word, uint64_t *open)
{
    uint64_t page = word & ~(uint64_t)4095;
    if (*open == OPEN_ALL || page == *open)
        return 0;
    if (*open)
        code_executable(*open, *open + 1);
    *open = 0;
    if (code_writable(page, page + 1) != 0)
        return -1;
    *open = page;
    return 0;
}

/* What the plan says of the sites of this stub: SLOT_QUIET or SLOT_OFF (left disarmed), or
 * 0 (armed) */
static unsigned left_off(const struct arm_plan *p, uint64_t stub)
{
    if (!p || !p->slot_use || stub < p->stubs_start || stub >= p->stubs_end)
        return 0;
    return p->slot_use[(stub - p->stubs_start) / PTCALL_STUB_STRIDE] & (SLOT_QUIET | SLOT_OFF);
}

/* A site left alone: its bytes are not a sled we know, or its target is out of rel32 reach */
static void count_refused(struct sites_result *r, int e)
{
    if (e == PTC_SLED_E_FAR)
        r->far++;
    else
        r->bad_code++;
}

/* Writes a ret sled's new bytes: one store of the aligned word when the sled fits in one,
 * else the ordered steps (the opcode byte last), so a thread reaching the site executes the
 * whole `ret` or the whole `jmp`. */
static void put_ret_sled(uint64_t site, const uint8_t cur[PTC_RET_SLED_SIZE],
                         const uint8_t out[PTC_RET_SLED_SIZE])
{
    if (ptc_ret_sled_fits(site)) {
        uint64_t *w = (uint64_t *)(uintptr_t)ptc_sled_word_addr(site);
        uint64_t v = __atomic_load_n(w, __ATOMIC_RELAXED);
        memcpy((uint8_t *)&v + (site & 7), out, PTC_RET_SLED_SIZE);
        __atomic_store_n(w, v, __ATOMIC_RELEASE);
        return;
    }
    struct ptc_ret_step steps[3];
    int n = ptc_ret_sled_steps(cur, out, steps);
    for (int k = 0; k < n; k++) {
        uint8_t *at = (uint8_t *)(uintptr_t)(site + steps[k].off);
        if (steps[k].len == 1) {
            __atomic_store_n(at, steps[k].bytes[0], __ATOMIC_RELEASE);
        } else {
            memcpy(at, steps[k].bytes, steps[k].len);
            __atomic_thread_fence(__ATOMIC_RELEASE);
        }
    }
}

/* Switches one ret sled; 0, or -1 with errno when its code cannot be made writable. */
static int switch_ret_sled(uint64_t site, uint64_t target, int want, uint64_t *open,
                           struct sites_result *r)
{
    uint8_t cur[PTC_RET_SLED_SIZE], out[PTC_RET_SLED_SIZE];
    memcpy(cur, (const void *)(uintptr_t)site, sizeof(cur));
    int e = ptc_ret_sled_patch(site, target, want, cur, out);
    if (e == PTC_SLED_ALREADY)
        return 0;
    if (e < 0) {
        count_refused(r, e);
        return 0;
    }
    uint64_t last = site + PTC_RET_SLED_SIZE - 1;
    if ((last & ~(uint64_t)4095) == (site & ~(uint64_t)4095)) {
        if (open_page(site, open) < 0)
            return -1;
        put_ret_sled(site, cur, out);
        return 0;
    }
    if (*open == OPEN_ALL) {
        put_ret_sled(site, cur, out);
        return 0;
    }
    /* the sled crosses a page boundary: both pages, outside the one-open-page cache */
    if (*open)
        code_executable(*open, *open + 1);
    *open = 0;
    if (code_writable(site, last + 1) != 0)
        return -1;
    put_ret_sled(site, cur, out);
    code_executable(site, last + 1);
    return 0;
}

/* Switches one nop sled with one aligned store: a thread running the site sees the whole nop
 * or the whole call (or jump). 0, or -1 with errno when its code cannot be made writable. */
static int switch_sled(uint64_t site, uint64_t target, int want, uint64_t *open,
                       struct sites_result *r)
{
    uint64_t *w = (uint64_t *)(uintptr_t)ptc_sled_word_addr(site), now;
    int e = ptc_sled_patch(site, target, want, __atomic_load_n(w, __ATOMIC_RELAXED), &now);
    if (e == PTC_SLED_ALREADY)
        return 0;
    if (e < 0) {
        count_refused(r, e);
        return 0;
    }
    if (open_page((uint64_t)(uintptr_t)w, open) < 0)
        return -1;
    __atomic_store_n(w, now, __ATOMIC_RELEASE);
    return 0;
}

int sites_switch(uint64_t start, uint64_t end, int arm, const struct arm_plan *plan,
                 struct sites_result *r)
{
    uint64_t n = (end - start) / sizeof(struct ptcall_map_site), open = 0;
    /* One page at a time costs two mprotect calls (each a TLB shootdown in a threaded
     * process) per page of code: 0.3-1.2 s for 200,000 sleds. Where the system allows RWX and
     * the sites lie in one r-x segment, the whole span is opened once: the code stays
     * executable meanwhile, so other threads run on through it. */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t i = 0; i < n && n >= 64; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry((const void *)(uintptr_t)start, start, i, &site, &stub, &ret_sled);
        lo = site < lo ? site : lo;
        hi = site + 8 > hi ? site + 8 : hi;
    }
    if (hi > lo && in_one_exec_segment(lo & ~(uint64_t)4095, page_round_up(hi)) &&
        set_prot(lo, hi, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
        open = OPEN_ALL;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry((const void *)(uintptr_t)start, start, i, &site, &stub, &ret_sled);
        unsigned why = arm ? left_off(plan, stub) : 0;
        /* a function counted beside tracing: its entry jumps to its counting trampoline */
        uint64_t ct = (why & SLOT_OFF) ? tramp_at(plan->count_tramps, i) : 0;
        if (ct)
            why = 0;
        int q = why != 0;
        r->off += (why & SLOT_OFF) != 0;
        r->quiet += why == SLOT_QUIET;
        uint64_t tr = ct ? ct : arm && !q ? tramp_at(plan ? plan->tramps : NULL, i) : 0;
        int want = !arm || q ? PTC_SLED_WANT_NOP : tr ? PTC_SLED_WANT_JMP : PTC_SLED_WANT_CALL;
        uint64_t target = tr ? tr : stub;
        int e = ret_sled ? switch_ret_sled(site, target, want, &open, r)
                         : switch_sled(site, target, want, &open, r);
        if (e < 0) {
            r->prot_errno = errno;
            r->unpatched += (int)(n - i);
            break;
        }
    }
    if (open == OPEN_ALL)
        code_executable(lo, hi);
    else if (open)
        code_executable(open, open + 1);
    return r->unpatched ? -1 : 0;
}
