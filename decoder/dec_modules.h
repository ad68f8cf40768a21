/* Floor 2 (modules.c): per-process module tables; ptc_session_add_module() and
 * ptc_session_lookup_stub() are public (decode.h). */
#ifndef PTC_DEC_MODULES_H
#define PTC_DEC_MODULES_H

#include "dec_core.h"

/* The live module of p announced under module_id, or NULL (p may be NULL). */
struct module *ptc_module_find(const struct proc *p, uint32_t module_id);
/* Bits set in bits[0 .. n) (a MODULE_ARMED or MODULE_COUNTED bitmap). */
uint32_t ptc_count_bits(const uint8_t *bits, uint32_t n);
/* A fork child without module chunks of its own resolves stubs with its parent's tables. */
int ptc_proc_inherit_modules(struct ptc_session *s, struct proc *c, const struct proc *pp);
/* A MODULE_ARMED chunk's payload for process pid: which functions of one of its modules were
 * armed. Returns 0 or -PTC_E_* (the message names what is wrong, not where). */
int ptc_module_armed(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);
/* A COUNTS chunk (counting mode): its calls added to the functions of the modules it names */
int ptc_counts_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);

#endif
