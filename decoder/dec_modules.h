/* Floor 2 (modules.c): per-process module tables; ptc_session_add_module() and
 * ptc_session_lookup_stub() are public (decode.h). */
#ifndef PTC_DEC_MODULES_H
#define PTC_DEC_MODULES_H

#include "dec_core.h"

/* A fork child without module chunks of its own resolves stubs with its parent's tables. */
int ptc_proc_inherit_modules(struct ptc_session *s, struct proc *c, const struct proc *pp);

#endif
