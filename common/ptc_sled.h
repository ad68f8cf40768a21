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
 * `table_addr` and whose bytes are `table` (unaligned reads): the sled and stub addresses. */
void ptc_sled_entry(const void *table, uint64_t table_addr, uint64_t i, uint64_t *site,
                    uint64_t *stub);

#endif
