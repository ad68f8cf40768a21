/* Floor 3 (budget.c): traces recorded within a budget -- MODULE_COUNTED and BUDGET chunks
 * (docs/trace-format.md 4.20, 4.21); the queries are public (decode.h). */
#ifndef PTC_DEC_BUDGET_H
#define PTC_DEC_BUDGET_H

#include "dec_core.h"

/* A MODULE_COUNTED chunk's payload for process pid: which functions of one of its modules
 * were counted instead of traced. Returns 0 or -PTC_E_* (the message says what is wrong). */
int ptc_module_counted(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);
/* A BUDGET chunk's payload: kept for the views; a pilot's marks process pid's threads as
 * beginning mid-stack at its tsc. Returns 0 or -PTC_E_*. */
int ptc_budget_chunk(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);
void ptc_budget_free(struct ptc_session *s);

#endif
