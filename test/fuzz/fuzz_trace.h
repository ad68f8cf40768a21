/* What the PT fuzz targets (fuzz_pt_raw, fuzz_perf_data) share: a trace file built in memory
 * the way `ptcall import` writes one (file header, MODULE and PT_STUBS of a small
 * instrumented module, PT_CONFIG, PT_AUX, PT_SIDEBAND, RECORD_END, each chunk with its CRC),
 * and its decoding by every consumer of the PT front-end: a session (`ptcall report`, with
 * the fast path and with libipt alone, which must give every thread the same events), and
 * the front-end with packet statistics (`ptcall stat`, serial and with streams decoded side
 * by side), whose per-stream and per-thread tables must count the same gaps and hits.
 * Anything that disagrees, or an error without a message, is __builtin_trap(). */
#ifndef FUZZ_TRACE_H
#define FUZZ_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/trace_format.h"
#include "ptcall/trace_format_pt.h"

/* The module: FT_NSTUBS stubs (entry and exit of FT_NSTUBS / 2 functions) at FT_STUBS, the
 * stub range of the differential tests (test/pt/pt_diff.h), in process FT_PID. */
#define FT_STUBS 0x401000ull
#define FT_NSTUBS 64u
#define FT_PID 4242u

struct ft {
    uint8_t *v;
    size_t n, cap;
    int oom;
    struct { uint32_t pid, tid, seq; } seq[64];
    int nseq;
};

/* A trace with its file header (backend import). */
void ft_begin(struct ft *t);
/* One chunk whose payload is a[0..an) then b[0..bn). */
void ft_chunk(struct ft *t, uint16_t type, uint32_t pid, uint32_t tid, const void *a, size_t an,
              const void *b, size_t bn);
/* The module's MODULE and PT_STUBS chunks. */
void ft_module(struct ft *t);
/* A PT_CONFIG from the 4 bytes pt_diff_config reads (timing, CPU, MTC period, nominal
 * frequency, TSC ratio); cfg gets the decoder's view of it. */
void ft_config(struct ft *t, const uint8_t cfg4[4], struct ptc_pt_config *out);
void ft_free(struct ft *t);

/* A session decodes v[0, n) with the PT front-end attached, as `ptcall report` does (flags:
 * PTC_DECODE_*; decoder: "fast" or "libipt"); an error without a message is a trap. */
void ft_session(const uint8_t *v, size_t n, unsigned flags, const char *decoder);

/* Decodes the trace every way and checks that they agree (see above). cyc: the config has
 * CYC timing (libipt's times are estimates: only whether an event has one is compared).
 * modes: compare the fast path with libipt too. */
void ft_decode(const struct ft *t, int cyc, int modes);

#endif
