/* The differential check of the PT decoders (DESIGN decision 7: libipt is the decoder of
 * record, the fast path must agree with it): the same bytes decoded as one stream by
 *   - the fast path (libipt for the spans it hands over), serially,
 *   - libipt's query decoder alone,
 *   - the fast path fed as a stream in pieces (streaming decode),
 *   - the parallel decode (pieces cut at PSBs, decoded by several threads),
 * must give the same stub hits (address, order, time), the same gaps (reason, time) and the
 * same counts of decode errors, overflows and skipped bytes. Used by the pt-agree test and
 * the fuzz_pt_diff libFuzzer target. */
#ifndef PT_DIFF_H
#define PT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "ptc_pt_decode.h"

/* The stub range every differential decode uses, and how many stubs it holds. */
#define PT_DIFF_STUBS 0x401000ull
#define PT_DIFF_NSTUBS 64u

/* A decoder configuration from the first bytes of a fuzz input (timing flags, MTC period,
 * nominal frequency, TSC ratio, CPU): returns the bytes used. */
size_t pt_diff_config(const uint8_t *p, size_t n, struct ptc_pt_dcfg *cfg);

/* Decodes buf[0..len) with every decoder (split_seed picks the streaming pieces and the
 * parallel piece size). Returns 0 when all agree, 1 when they differ (why says where and how),
 * -1 when a decoder failed (out of memory). */
int pt_diff_run(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                uint32_t split_seed, char *why, size_t why_size);

/* One decoder's output, for tests that look at it. */
struct pt_diff_out {
    struct ptc_pt_item *v;
    size_t n, cap;
    struct ptc_pt_stream_stats st;
};
/* mode: PTC_PT_MODE_FAST or PTC_PT_MODE_LIBIPT, serially over the whole buffer. */
int pt_diff_decode(const struct ptc_pt_dcfg *cfg, int mode, const uint8_t *buf, size_t len,
                   struct pt_diff_out *out);
void pt_diff_out_free(struct pt_diff_out *o);

#endif
