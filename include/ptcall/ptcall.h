/* ptcall user header: what an instrumented program may use. */
#ifndef PTCALL_H
#define PTCALL_H

/* Keeps the ptcall pass away from a function (as no_instrument_function does). */
#define PTCALL_NO_INSTRUMENT __attribute__((annotate("ptcall_no_instrument")))

#ifdef __cplusplus
extern "C" {
#endif

/* Provided by libptcall.so (the runtime); a weak reference, so that a program that is not
 * linked with it, nor run with it preloaded, still links and runs: the reference is then
 * null and ptcall_mark does nothing. */
void __ptcall_mark(const char *label) __attribute__((weak));

/* Marks a boundary, e.g. between two inputs of a fuzzing harness (docs/cov.md, "Marks"). In
 * counting mode (`ptcall record --counts`) the calls counted since the previous mark (or the
 * start) are written at once as one COUNTS chunk carrying `label` and its index, then
 * counting starts again from 0. In a trace of events it is a mark on the calling thread's
 * timeline (`ptcall calls`, `ptcall export --format chrome` show it; `ptcall report` counts
 * the marks per label). Without the runtime it does nothing. Thread-safe;
 * label may be NULL (""). Cost: a few system calls per mark. */
static inline void ptcall_mark(const char *label)
{
    if (__ptcall_mark)
        __ptcall_mark(label);
}

/* Provided by libptcall.so as __ptcall_mark is; weak for the same reason. */
void __ptcall_forkserver_start(void) __attribute__((weak));

/* Where a fork server started with `ptcall cov run --deferred` (PTCALL_FORKSERVER_DEFER=1)
 * begins to serve, instead of before main: the program's initialisation (reading
 * configuration, building tables) then runs once, and each input's child goes on from here
 * (docs/cov.md, "Deferred fork server"). Calls before it are counted in no input. Call it
 * once, from the only thread, before reading the input. Otherwise it does nothing. */
static inline void ptcall_forkserver_start(void)
{
    if (__ptcall_forkserver_start)
        __ptcall_forkserver_start();
}

/* Provided by libptcall.so as __ptcall_mark is; weak for the same reason. */
void __ptcall_snapshot(const char *why) __attribute__((weak));

/* The flight recorder (`ptcall record --ring SIZE`, or PTCALL_RING; docs/runtime.md, "Flight
 * recorder"): writes every thread's newest events, kept in memory, as a trace file of its own
 * (ptcall-snap.PID.N.trace in PTCALL_SNAPSHOT_DIR), with `why` in it; the program goes on.
 * Safe from any thread and from a signal handler (no malloc, no stdio, no lock a signal
 * could interrupt). Outside ring mode, and without the runtime, it does nothing. why may be
 * NULL. Cost: the program's threads go on; the caller waits while the rings are written
 * (docs/benchmarks.md gives the stall per MiB of rings). */
static inline void ptcall_snapshot(const char *why)
{
    if (__ptcall_snapshot)
        __ptcall_snapshot(why);
}

#ifdef __cplusplus
}
#endif

#endif
