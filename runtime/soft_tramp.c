/* Call-site trampolines (docs/runtime.md, "Call-site trampolines"): untimed software tracing
 * without a call. An armed sled is `jmp tramp`; the trampoline, a copy of ptc_tpl_site
 * (soft_handler.S) with its site's record as an immediate, appends the record to the thread's
 * buffer and jumps back behind the sled (or, for a ret sled, returns to the function's
 * caller). Against `call stub` + the generated id handler this
 * drops a call, a return, an indirect jump and the xadd: on the call-heavy benchmark about
 * 1.1 of 1.9 ns per event (bench/, docs/benchmarks.md).
 *
 * The reservation is load, compare, store: a signal handler that runs instrumented code
 * between the load and the committing store would have its records overwritten. So every
 * program signal handler runs behind soft_signal.c's wrapper, which calls tramp_restart():
 * a thread interrupted before the commit resumes at the start of its trampoline.
 *
 * Each object's trampolines live in one mapping within rel32 reach of all its sleds, written
 * once and then made read+execute; it is never unmapped (a dlclose'd object's sleds are gone
 * with its code, and its destructor may run through its own trampolines). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "ptc_sled.h"
#include "ptcall/map_format.h"
#include "soft_internal.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

extern const uint8_t ptc_tpl_site[], ptc_tpl_site_pos[], ptc_tpl_site_end[], ptc_tpl_site_rec[],
    ptc_tpl_site_commit[], ptc_tpl_site_pos2[], ptc_tpl_site_back[], ptc_tpl_site_rec2[],
    ptc_tpl_site_slot[], ptc_tpl_site_back2[];
extern const uint64_t ptc_tpl_site_size;

/* The trampolines of every object, for tramp_restart: [first, end) of each mapping. Entries
 * are written before the count is raised and never change after. */
static struct {
    uint64_t first, end;
} regions[MAX_OBJECTS];
static _Atomic unsigned nregions;
static _Atomic uint64_t restarts; /* for PTCALL_DEBUG */

uint64_t tramp_restarts(void) { return atomic_load(&restarts); }
void tramp_restarts_reset(void) { atomic_store(&restarts, 0); }

/* Offset of a label in the template (labels are separate symbols: compare as addresses) */
static uint64_t tpl_off(const uint8_t *label)
{
    return (uint64_t)((uintptr_t)label - (uintptr_t)ptc_tpl_site);
}

void tramp_restart(void *ucontext)
{
    ucontext_t *uc = ucontext;
    uint64_t ip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    uint64_t commit = tpl_off(ptc_tpl_site_commit);
    unsigned n = atomic_load_explicit(&nregions, memory_order_acquire);
    for (unsigned i = 0; i < n; i++) {
        if (ip < regions[i].first || ip >= regions[i].end)
            continue;
        uint64_t off = (ip - regions[i].first) % TRAMP_SIZE;
        /* before the committing store has run, nothing is reserved: run it all again */
        if (off <= commit) {
            uc->uc_mcontext.gregs[REG_RIP] = (greg_t)(ip - off);
            atomic_fetch_add_explicit(&restarts, 1, memory_order_relaxed);
        }
        return;
    }
}

uint64_t tramp_at(const struct tramps *t, uint64_t i)
{
    if (!t || !t->base || i >= t->n)
        return 0;
    uint64_t a = t->base + TRAMP_SIZE + i * TRAMP_SIZE;
    return *(const uint8_t *)(uintptr_t)a ? a : 0;
}

/* A mapping of `size` bytes whose every byte is within rel32 reach of every address in
 * [lo, hi): tried at growing distances below, then above, the range. */
uint8_t *map_near(uint64_t lo, uint64_t hi, size_t size)
{
    const uint64_t reach = (1ull << 31) - (1ull << 24); /* keep clear of the rel32 limit */
    const uint64_t step = 1ull << 24;
    if (hi - lo + size >= reach)
        return NULL;
    for (uint64_t d = step; d < reach - (hi - lo) - size; d += step) {
        uint64_t cand[2] = {lo > d + size ? ((lo - d - size) & ~(uint64_t)4095) : 0,
                            (hi + d + 4095) & ~(uint64_t)4095};
        for (int k = 0; k < 2; k++) {
            uint64_t a = cand[k];
            if (!a || a + size > (1ull << 47))
                continue;
            void *p = mmap((void *)(uintptr_t)a, size, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            uint64_t got = (uint64_t)(uintptr_t)p;
            /* kernels before 4.17 take the address as a hint only: check the whole span */
            uint64_t span_lo = got < lo ? got : lo, span_hi = got + size > hi ? got + size : hi;
            if (span_hi - span_lo < reach)
                return p;
            munmap(p, size);
        }
    }
    return NULL;
}

static void put32(uint8_t *tr, const uint8_t *label, int32_t v)
{
    memcpy(tr + tpl_off(label) - 4, &v, 4);
}

/* Turns the `jmp rel32` that ends at `label` into `ret` and int3 padding */
static void ret_instead_of_jump(uint8_t *tr, const uint8_t *label)
{
    static const uint8_t ret_pad[5] = {0xc3, 0xcc, 0xcc, 0xcc, 0xcc};
    memcpy(tr + tpl_off(label) - sizeof(ret_pad), ret_pad, sizeof(ret_pad));
}

/* rel32 of a jump or call whose displacement ends at `label` in the trampoline at tr_addr */
static int32_t rel_from(uint64_t tr_addr, const uint8_t *label, uint64_t target)
{
    return (int32_t)(int64_t)(target - (tr_addr + tpl_off(label)));
}

/* Memory for n trampolines (after a TRAMP_SIZE header) within rel32 reach of every sled of
 * the call-site table at sites_start (the layout tramps_build and count_tramps_build share:
 * trampoline i at base + TRAMP_SIZE * (i + 1)); its size in *size. NULL when none is free. */
uint8_t *map_tramps_near(uint64_t sites_start, uint64_t n, size_t *size)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry((const void *)(uintptr_t)sites_start, sites_start, i, &site, &stub,
                       &ret_sled);
        if (site < lo)
            lo = site;
        if (site + PTCALL_SLED_SIZE > hi)
            hi = site + PTCALL_SLED_SIZE;
    }
    *size = page_round_up(TRAMP_SIZE + n * TRAMP_SIZE);
    return map_near(lo, hi, *size);
}

int tramps_build(const struct object *o, const uint8_t *slot_use, uint64_t sites_start,
                 uint64_t sites_end, struct tramps *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t n = (sites_end - sites_start) / sizeof(struct ptcall_map_site);
    int32_t d_pos, d_end;
    if (!n || ptc_tpl_site_size > TRAMP_SIZE || tls_offsets(&d_pos, &d_end) != 0)
        return -1;
    if (atomic_load(&nregions) >= MAX_OBJECTS)
        return -1;
    size_t size;
    uint8_t *m = map_tramps_near(sites_start, n, &size);
    if (!m)
        return -1;
    uint64_t base = (uint64_t)(uintptr_t)m;
    /* the slow-path slot the trampolines call through */
    uint64_t slow = (uint64_t)(uintptr_t)ptc_fast_slow_id;
    memcpy(m, &slow, 8);
    uint64_t made = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry((const void *)(uintptr_t)sites_start, sites_start, i, &site, &stub,
                       &ret_sled);
        if (stub < o->stubs_start || stub >= o->stubs_end || (stub & 15))
            continue;
        uint64_t slot = stub_slot(o, stub);
        uint32_t id = o->ids[slot];
        if (!(slot_use[slot] & SLOT_TRAMP) || id > RECORD_ID_MAX)
            continue;
        uint64_t rec = (uint64_t)id << 4 | RECORD_ID_TAG;
        if (rec > INT32_MAX) /* `movq $imm32` sign-extends */
            continue;
        uint64_t a = base + TRAMP_SIZE + i * TRAMP_SIZE;
        uint8_t *tr = m + TRAMP_SIZE + i * TRAMP_SIZE;
        memcpy(tr, ptc_tpl_site, ptc_tpl_site_size);
        memset(tr + ptc_tpl_site_size, 0xcc, TRAMP_SIZE - ptc_tpl_site_size);
        put32(tr, ptc_tpl_site_pos, d_pos);
        put32(tr, ptc_tpl_site_end, d_end);
        put32(tr, ptc_tpl_site_rec, (int32_t)rec);
        put32(tr, ptc_tpl_site_pos2, d_pos);
        put32(tr, ptc_tpl_site_back, rel_from(a, ptc_tpl_site_back, site + PTCALL_SLED_SIZE));
        put32(tr, ptc_tpl_site_rec2, (int32_t)rec);
        put32(tr, ptc_tpl_site_slot, rel_from(a, ptc_tpl_site_slot, base));
        put32(tr, ptc_tpl_site_back2, rel_from(a, ptc_tpl_site_back2, site + PTCALL_SLED_SIZE));
        if (ret_sled) { /* the site was the function's `ret`: return where it would have */
            ret_instead_of_jump(tr, ptc_tpl_site_back);
            ret_instead_of_jump(tr, ptc_tpl_site_back2);
        }
        made++;
    }
    if (!made || mprotect(m, size, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, size);
        return -1;
    }
    unsigned r = atomic_load(&nregions);
    regions[r].first = base + TRAMP_SIZE;
    regions[r].end = base + TRAMP_SIZE + n * TRAMP_SIZE;
    atomic_store_explicit(&nregions, r + 1, memory_order_release);
    out->base = base;
    out->n = n;
    out->made = made;
    return 0;
}
