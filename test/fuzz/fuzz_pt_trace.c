/* libFuzzer target: whole Intel PT trace files (backend pt or import: PT_CONFIG, PT_STUBS,
 * PT_AUX, PT_SIDEBAND, PT_GAP and the rest, as ptcall record --backend pt and ptcall import
 * write them) through the PT front-end, the way `ptcall report` reads them: with and
 * without --salvage, with the fast path and with libipt alone, on the input as it comes and
 * on a copy whose chunk CRCs are fixed up (so that mutations reach the front-end). Then the
 * fixed copy goes through every consumer of the front-end (fuzz_trace.c: the session, the
 * packet statistics, side-by-side streams), which must agree. No target fed damaged PT
 * trace files to the front-end before, which is how a PT_CONFIG time shift of 70 reached
 * the time conversion under --salvage (undefined behaviour). Seeds: traces of the test
 * writer (fuzz_seeds ptc: test/pt/ptgen.c), damaged configurations among them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_crcs.h"
#include "fuzz_trace.h"
#include "ptcall/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fixed = fix_crcs(data, size);
    for (int pass = 0; pass < 2; pass++) {
        const uint8_t *d = pass ? fixed : data;
        if (!d)
            break;
        for (unsigned salvage = 0; salvage < 2; salvage++) {
            unsigned flags = salvage ? PTC_DECODE_SALVAGE : 0;
            ft_session(d, size, flags, "fast");
            if (pass)
                ft_session(d, size, flags, "libipt");
        }
    }
    if (fixed) {
        struct ft t = {.v = fixed, .n = size};
        ft_decode(&t, 1, 0);
    }
    free(fixed);
    return 0;
}
