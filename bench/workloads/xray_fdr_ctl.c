/* Starts and flushes XRay's FDR (flight data recorder) mode for an unmodified program.
 * LLVM 14's runtime only *selects* FDR mode from XRAY_OPTIONS="xray_mode=xray-fdr"; unlike basic
 * mode it is not initialised nor flushed at exit unless the program calls the log interface
 * (see the XRay docs, "Flight Data Recorder Mode"). Linked, uninstrumented, into the benchmark's
 * XRay binaries; it does nothing unless XRAY_OPTIONS asks for xray-fdr, so the same binary also
 * serves the unpatched and basic-mode contestants. FDR's own options come from XRAY_FDR_OPTIONS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* compiler-rt/include/xray/xray_log_interface.h (C++ header; the ABI is C) */
int __xray_log_init_mode(const char *mode, const char *config);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);
enum { XRAY_LOG_INITIALIZED = 2, XRAY_LOG_FINALIZED = 4, XRAY_LOG_FLUSHED = 2 };

static int started;

__attribute__((constructor)) static void fdr_start(void)
{
    const char *o = getenv("XRAY_OPTIONS");
    if (!o || !strstr(o, "xray-fdr"))
        return;
    int st = __xray_log_init_mode("xray-fdr", "");
    if (st != XRAY_LOG_INITIALIZED) {
        fprintf(stderr, "xray_fdr_ctl: __xray_log_init_mode(xray-fdr) returned %d\n", st);
        return;
    }
    started = 1;
}

__attribute__((destructor)) static void fdr_stop(void)
{
    if (!started)
        return;
    int f = __xray_log_finalize();
    int l = __xray_log_flushLog();
    if (f != XRAY_LOG_FINALIZED || l != XRAY_LOG_FLUSHED)
        fprintf(stderr, "xray_fdr_ctl: finalize returned %d, flush %d\n", f, l);
}
