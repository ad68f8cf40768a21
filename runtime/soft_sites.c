/* Call-site sleds of this process's own objects (map v3, PTCALL_MAP_F_SLEDS): arming writes
 * `call stub` (or `jmp trampoline`, soft_tramp.c) over every sled of an object's
 * ptcall_sites table, so its functions start reporting their events; until then an
 * instrumented function runs a 5-byte nop per site. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "ptc_sled.h"
#include "ptcall/map_format.h"
#include "soft_internal.h"

static int set_prot(uint64_t lo, uint64_t hi, int prot)
{
    uintptr_t a = (uintptr_t)lo & ~(uintptr_t)4095;
    uintptr_t b = page_round_up((uintptr_t)hi);
    return mprotect((void *)a, b - a, prot);
}

int code_writable(uint64_t lo, uint64_t hi)
{
    if (set_prot(lo, hi, PROT_READ | PROT_WRITE | PROT_EXEC) == 0)
        return 0;
    return set_prot(lo, hi, PROT_READ | PROT_WRITE);
}

void code_executable(uint64_t lo, uint64_t hi) { set_prot(lo, hi, PROT_READ | PROT_EXEC); }

/* Makes the page holding `word` writable unless it is the page made writable last. */
static int open_page(uint64_t word, uint64_t *open)
{
    uint64_t page = word & ~(uint64_t)4095;
    if (page == *open)
        return 0;
    if (*open)
        code_executable(*open, *open + 1);
    *open = 0;
    if (code_writable(page, page + 1) != 0)
        return -1;
    *open = page;
    return 0;
}

/* Whether the plan leaves the sites of this stub disarmed */
static int quiet(const struct arm_plan *p, uint64_t stub)
{
    return p && p->slot_use && stub >= p->o->stubs_start && stub < p->o->stubs_end &&
           (p->slot_use[stub_slot(p->o, stub)] & SLOT_QUIET);
}

int sites_switch(uint64_t start, uint64_t end, int arm, const struct arm_plan *plan,
                 struct sites_result *r)
{
    uint64_t n = (end - start) / sizeof(struct ptcall_map_site), open = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub, now;
        ptc_sled_entry((const void *)(uintptr_t)start, start, i, &site, &stub);
        uint64_t *w = (uint64_t *)(uintptr_t)ptc_sled_word_addr(site);
        int q = arm && quiet(plan, stub);
        r->quiet += q;
        uint64_t tr = arm && !q ? tramp_at(plan ? plan->tramps : NULL, i) : 0;
        int want = !arm || q ? PTC_SLED_WANT_NOP : tr ? PTC_SLED_WANT_JMP : PTC_SLED_WANT_CALL;
        int e = ptc_sled_patch(site, tr ? tr : stub, want, __atomic_load_n(w, __ATOMIC_RELAXED),
                               &now);
        if (e == PTC_SLED_ALREADY)
            continue;
        if (e < 0) {
            if (e == PTC_SLED_E_FAR)
                r->far++;
            else
                r->bad_code++;
            continue;
        }
        if (open_page((uint64_t)(uintptr_t)w, &open) < 0) {
            r->prot_errno = errno;
            r->unpatched += (int)(n - i);
            break;
        }
        /* one aligned store: a thread running the site sees the whole nop or the whole call
         * (or jump) */
        __atomic_store_n(w, now, __ATOMIC_RELEASE);
    }
    if (open)
        code_executable(open, open + 1);
    return r->unpatched ? -1 : 0;
}
