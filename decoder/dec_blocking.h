/* Floor 3 (blocking.c): the C library's blocking calls the runtime recorded as calls of the
 * pseudo-functions of its module "[blocking]" (MODULE_BLOCKING, docs/trace-format.md 4.22);
 * the queries are public (decode.h). */
#ifndef PTC_DEC_BLOCKING_H
#define PTC_DEC_BLOCKING_H

#include "dec_core.h"

/* A MODULE_BLOCKING chunk's payload for process pid: every function of one of its modules is
 * a blocking call. Its stubs then take the kinds STUB_BLOCK_ENTRY and STUB_BLOCK_EXIT, which
 * the shadow stacks (stack.c) read as an entry and an exit whose time is added to the
 * caller's blocked time. Returns 0 or -PTC_E_* (the message says what is wrong). */
int ptc_module_blocking(struct ptc_session *s, uint32_t pid, const void *payload, size_t size);

#endif
