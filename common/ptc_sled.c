/* Sled arithmetic: see ptc_sled.h. */
#include "ptc_sled.h"

#include <stddef.h>
#include <string.h>

#include "ptcall/map_format.h"

int ptc_sled_patch(uint64_t site, uint64_t target, int want, uint64_t word, uint64_t *out)
{
    static const uint8_t nop[PTCALL_SLED_SIZE] = PTCALL_SLED_NOP;
    unsigned at = (unsigned)(site & 7);
    if (at + PTCALL_SLED_SIZE > 8)
        return PTC_SLED_E_ALIGN;
    uint8_t b[8];
    memcpy(b, &word, 8);
    int is_nop = memcmp(b + at, nop, PTCALL_SLED_SIZE) == 0;
    int is_armed = b[at] == PTCALL_SLED_CALL || b[at] == PTCALL_SLED_JMP;
    if (!is_nop && !is_armed)
        return PTC_SLED_E_CODE;
    if (want == PTC_SLED_WANT_NOP) {
        if (is_nop)
            return PTC_SLED_ALREADY;
        memcpy(b + at, nop, PTCALL_SLED_SIZE);
    } else {
        int64_t rel = (int64_t)target - (int64_t)(site + PTCALL_SLED_SIZE);
        if (rel < INT32_MIN || rel > INT32_MAX)
            return PTC_SLED_E_FAR;
        int32_t r32 = (int32_t)rel;
        uint8_t op = want == PTC_SLED_WANT_JMP ? PTCALL_SLED_JMP : PTCALL_SLED_CALL;
        if (b[at] == op && memcmp(b + at + 1, &r32, 4) == 0)
            return PTC_SLED_ALREADY;
        b[at] = op;
        memcpy(b + at + 1, &r32, 4);
    }
    memcpy(out, b, 8);
    return PTC_SLED_CHANGED;
}

void ptc_sled_entry(const void *table, uint64_t table_addr, uint64_t i, uint64_t *site,
                    uint64_t *stub, int *ret_sled)
{
    struct ptcall_map_site e;
    memcpy(&e, (const uint8_t *)table + i * sizeof(e), sizeof(e));
    uint64_t at = table_addr + i * sizeof(e);
    uint64_t s = at + offsetof(struct ptcall_map_site, stub_rel) + (uint64_t)(int64_t)e.stub_rel;
    *site = at + offsetof(struct ptcall_map_site, site_rel) + (uint64_t)(int64_t)e.site_rel;
    *stub = s & ~(uint64_t)PTCALL_SITE_RET;
    *ret_sled = (s & PTCALL_SITE_RET) != 0;
}

int ptc_ret_sled_patch(uint64_t site, uint64_t target, int want, const uint8_t cur[5],
                       uint8_t out[5])
{
    if (cur[0] != PTCALL_SLED_RET && cur[0] != PTCALL_SLED_JMP)
        return PTC_SLED_E_CODE;
    memcpy(out, cur, PTC_RET_SLED_SIZE);
    if (want == PTC_SLED_WANT_NOP) {
        if (cur[0] == PTCALL_SLED_RET)
            return PTC_SLED_ALREADY;
        out[0] = PTCALL_SLED_RET;
        return PTC_SLED_CHANGED;
    }
    int64_t rel = (int64_t)target - (int64_t)(site + PTC_RET_SLED_SIZE);
    if (rel < INT32_MIN || rel > INT32_MAX)
        return PTC_SLED_E_FAR;
    int32_t r32 = (int32_t)rel;
    if (cur[0] == PTCALL_SLED_JMP && memcmp(cur + 1, &r32, 4) == 0)
        return PTC_SLED_ALREADY;
    out[0] = PTCALL_SLED_JMP;
    memcpy(out + 1, &r32, 4);
    return PTC_SLED_CHANGED;
}

int ptc_ret_sled_steps(const uint8_t cur[5], const uint8_t out[5], struct ptc_ret_step steps[3])
{
    int n = 0;
    if (out[0] == PTCALL_SLED_JMP) {
        if (cur[0] == PTCALL_SLED_JMP) /* retarget: return untraced while the rel32 changes */
            steps[n++] = (struct ptc_ret_step){.off = 0, .len = 1, .bytes = {PTCALL_SLED_RET}};
        steps[n] = (struct ptc_ret_step){.off = 1, .len = 4};
        memcpy(steps[n++].bytes, out + 1, 4);
    }
    steps[n++] = (struct ptc_ret_step){.off = 0, .len = 1, .bytes = {out[0]}};
    return n;
}
