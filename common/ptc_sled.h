/* Arming and disarming call-site sleds (map version 3, PTCALL_MAP_F_SLEDS; docs/map-format.md,
 * "Call-site sleds"). Pure computation, shared by the runtime (which patches its own text) and
 * `ptcall arm` (which patches another process's text through /proc/PID/mem).
 *
 * A sled is 5 bytes that never straddle an 8-byte boundary, so the aligned 8-byte word holding
 * it switches with one store: a thread running the code sees the whole nop or the whole call. */
#ifndef PTC_SLED_H
#define PTC_SLED_H

#include <stdint.h>

enum ptc_sled_result {
    PTC_SLED_CHANGED = 0,   /* *out holds the new word */
    PTC_SLED_ALREADY = 1,   /* the sled is already in the wanted state */
    PTC_SLED_E_CODE = -1,   /* the bytes at the site are neither the nop nor an armed form: left alone */
    PTC_SLED_E_FAR = -2,    /* the stub is out of rel32 reach of the site */
    PTC_SLED_E_ALIGN = -3,  /* the sled straddles an 8-byte boundary */
};

/* The aligned word that holds the sled at `site`. */
static inline uint64_t ptc_sled_word_addr(uint64_t site) { return site & ~(uint64_t)7; }

/* What a sled should become. An armed sled calls its stub; under the software backend, in
 * the traced process itself, it may instead jump to a call-site trampoline (runtime/soft_tramp.c).
 * Either armed form is recognised when switching. */
enum ptc_sled_want {
    PTC_SLED_WANT_NOP = 0,  /* disarmed */
    PTC_SLED_WANT_CALL = 1, /* `call target` (the stub) */
    PTC_SLED_WANT_JMP = 2,  /* `jmp target` (a trampoline that jumps back behind the sled) */
};

/* Given `word`, the current contents of the aligned 8 bytes at ptc_sled_word_addr(site),
 * computes in *out the word with the sled in the state `want` (enum ptc_sled_want). */
int ptc_sled_patch(uint64_t site, uint64_t target, int want, uint64_t word, uint64_t *out);

/* Reads entry i of a ptcall_sites table whose first entry lives at run-time address
 * `table_addr` and whose bytes are `table` (unaligned reads): the sled and stub addresses,
 * and whether the site is a ret sled (map v5, PTCALL_SITE_RET; the flag is not in *stub). */
void ptc_sled_entry(const void *table, uint64_t table_addr, uint64_t i, uint64_t *site,
                    uint64_t *stub, int *ret_sled);

/* Ret sleds (map v5): the site is the function's `ret` (c3), followed by 4 bytes that run
 * only as the rel32 of the armed form, `jmp target` (e9 rel32): the target's own `ret`
 * returns to the function's caller. There is no `call` form; PTC_SLED_WANT_CALL and
 * PTC_SLED_WANT_JMP both arm it with a jump. A ret sled has no alignment: one that fits an
 * aligned 8-byte word switches with one store of that word (ptc_ret_sled_fits), any other
 * with the ordered steps of ptc_ret_sled_steps. */
#define PTC_RET_SLED_SIZE 5u

/* Given `cur`, the 5 bytes at the site, computes in `out` the bytes for the state `want`.
 * Returns PTC_SLED_CHANGED, PTC_SLED_ALREADY, PTC_SLED_E_CODE (neither c3 nor e9 at the
 * site) or PTC_SLED_E_FAR. Disarming rewrites only the opcode byte. */
int ptc_ret_sled_patch(uint64_t site, uint64_t target, int want, const uint8_t cur[5],
                       uint8_t out[5]);

static inline int ptc_ret_sled_fits(uint64_t site) { return (site & 7) + PTC_RET_SLED_SIZE <= 8; }

/* One write of a ret sled switch: `len` bytes at site + `off`. */
struct ptc_ret_step {
    unsigned off, len;
    uint8_t bytes[4];
};

/* The writes that take a ret sled from `cur` to `out` (ptc_ret_sled_patch) when it straddles
 * a word, in the order they must land: the rel32 only while the opcode byte is c3, the
 * opcode byte last. Retargeting an armed sled goes through c3 for the moment between
 * (a thread returning then returns untraced). Returns how many (1-3). */
int ptc_ret_sled_steps(const uint8_t cur[5], const uint8_t out[5], struct ptc_ret_step steps[3]);

#endif
