/* Options of `ptcall record`, shared by the soft path (tools/cmd_record.c) and the Intel PT
 * recorder here, which the tools call through the weak hooks below: the recorder owns this
 * interface and the tools (the floor above) include it, never the other way round. */
#ifndef PTC_RECORD_OPTIONS_H
#define PTC_RECORD_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

enum record_backend { RECORD_AUTO = 0, RECORD_SOFT = 1, RECORD_PT = 2 };
enum record_timing { TIMING_DEFAULT = 0, TIMING_NONE, TIMING_TSC, TIMING_MTC, TIMING_CYC };

struct record_options {
    const char *output;         /* -o FILE (default ptcall.ptc) */
    enum record_backend backend;
    int timed;                  /* soft: a timestamp on every event (default 1) */
    int leaf_exits;             /* soft, untimed: record the returns of leaves too */
    int drop;                   /* soft: drop events when buffers are full instead of waiting */
    uint64_t buffer_size;       /* --buffer: soft per-thread buffer, or PT AUX size; 0 = default */
    enum record_timing timing;  /* pt: --timing */
    int snapshot;               /* pt: --snapshot */
    int attach_pid;             /* pt: --pid PID (0 = launch argv) */
    const char **modules;       /* pt: --module PATH, repeatable */
    int num_modules;
    char **argv;                /* the command, NULL-terminated */
    int quiet;                  /* -q: no notices on stderr */
};

/* Implemented by the Intel PT recorder (runtime/pt). pt_available() returns 1 when this
 * machine can trace with Intel PT, else 0 and a one-line reason in why. record_pt() runs
 * the recording and stores the command's wait status; it returns 0, or -1 after printing
 * an error that says what to do. */
int pt_available(char *why, size_t why_size) __attribute__((weak));
int record_pt(const struct record_options *opts, int *wait_status) __attribute__((weak));

/* Implemented with the Intel PT recorder (runtime/pt/pt_arm.c): arms (on) or disarms the
 * gated call sites of every instrumented module mapped in process pid by writing its unit
 * slots (0 -> 1, or 1 -> 0; a soft handler's address is left alone). *changed counts the
 * slots written, *gated the gated units found. 0, or -1 with the reason in why. */
int arm_process(int pid, int on, int *changed, int *gated, char *why, size_t why_size)
    __attribute__((weak));

#endif
