/* libFuzzer target: the fast PT path against libipt (DESIGN decision 7). The input is 4 bytes
 * of configuration (pt_diff_config: timing, CPU and its errata, MTC period, nominal frequency,
 * TSC ratio), 4 bytes that choose how the streaming and parallel decodes cut the stream, and
 * the PT bytes of one stream. The fast path, libipt alone, both fed as a stream in pieces,
 * and the parallel decode with 1-3 threads must give the same hits (address, order, time,
 * offset), gaps and decode errors (test/pt/pt_diff.c); where they differ, the target says how
 * and aborts. What it found went into pt-agree (test/pt/test_pt_agree.c). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pt_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8)
        return 0;
    struct ptc_pt_dcfg cfg;
    pt_diff_config(data, 4, &cfg);
    uint32_t seed;
    memcpy(&seed, data + 4, 4);
    char why[512];
    int r = pt_diff_run(&cfg, data + 8, size - 8, seed, why, sizeof(why));
    if (r > 0) {
        fprintf(stderr, "fuzz_pt_diff: the decoders disagree: %s\n", why);
        __builtin_trap();
    }
    return 0;
}
