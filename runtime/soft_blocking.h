/* soft_blocking.c: calls into the C library's blocking functions recorded as calls of the
 * pseudo-functions of a module of the runtime's own, "[blocking]" (docs/runtime.md, *Blocking
 * calls*). */
#ifndef PTC_SOFT_BLOCKING_H
#define PTC_SOFT_BLOCKING_H

#pragma GCC visibility push(hidden)

/* Start-up (soft_lifecycle.c, every mode): resolves the C library's functions once, so that
 * no later call enters the dynamic linker (it may allocate); with events traced and
 * PTCALL_BLOCKING not 0, reserves the pseudo-functions' stub ids (before any object takes
 * ids) and arms the wrappers for when tracing is active. */
void blocking_init(int traced_events);
/* The [blocking] MODULE chunk and its MODULE_BLOCKING chunk, right after this process's
 * PROCESS chunk (a start, a fork child); nothing when not armed. */
void blocking_write_module(void);
/* The id handler the wrappers' records go through (set when tracing starts). */
void blocking_set_handler(void *handler_id);

#pragma GCC visibility pop

#endif
