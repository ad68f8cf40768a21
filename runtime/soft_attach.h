/* Attach and detach (soft_attach.c) as the control channel (soft_ctl.c) uses them. */
#ifndef PTC_SOFT_ATTACH_H
#define PTC_SOFT_ATTACH_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

struct attach_totals {
    uint64_t events, dropped, write_errors, detach_ns;
    uint32_t threads;
};

/* Starts tracing into fd (the recorder's trace file, its header and RECORD_INFO written; the
 * runtime keeps a duplicate), arming the functions only/skip choose (newline-separated
 * globs, "" for none). 0, or -1 with one line in why. */
int attach_start(int fd, const char *only, const char *skip, char *why, size_t n);
/* Detaches: 0 with the window's totals, or -1 when not attached (or the process is ending:
 * its exit writes the trace's end). */
int attach_stop(struct attach_totals *tot);
/* A fork child of an attached process: its stubs back to `ret` (pthread_atfork child). */
void attach_after_fork(void);

#pragma GCC visibility pop

#endif
