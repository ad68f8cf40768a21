/* libFuzzer target: the trace reader, the soft front-end and the session (shadow stacks,
 * analyses, fork buffering), with and without salvage, and with the call hook on. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <string.h>

#include "fuzz_crcs.h"
#include "ptcall/decode.h"

static void hook(void *ctx, const struct ptc_call_event *e)
{
    uint64_t *sum = ctx;
    *sum += e->depth + e->func + e->dur;
    if (e->func != UINT32_MAX)
        (void)0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *fixed = fix_crcs(data, size);
    for (unsigned flags = 0; flags < 4; flags++) {
        if (flags >= 2) {
            if (!fixed)
                break;
            data = fixed;
        }
        struct ptc_session *s = ptc_session_new();
        if (!s)
            return 0;
        uint64_t sum = 0;
        if (flags & 1)
            ptc_session_set_call_hook(s, hook, &sum);
        int rc = ptc_decode_memory(s, data, size, (flags & 1) ? PTC_DECODE_SALVAGE : 0);
        if (rc > 0 || rc < -PTC_E_UNSUPPORTED)
            abort(); /* error codes are -PTC_E_* */
        if (rc && !ptc_session_errmsg(s)[0])
            abort(); /* every error has a message */
        struct ptc_totals t;
        ptc_session_totals(s, &t);
        uint32_t nf = ptc_session_num_funcs(s);
        for (uint32_t i = 0; i < nf; i++) {
            struct ptc_func_stats st;
            ptc_session_func_stats(s, i, &st);
            const struct ptc_func_info *fi = ptc_session_func(s, i);
            if (!fi || !fi->name || !fi->module)
                abort();
        }
        struct ptc_edge *e;
        size_t ne = ptc_session_edges(s, &e);
        if (ne != (size_t)-1) {
            for (size_t i = 0; i < ne; i++)
                if (e[i].caller >= nf || e[i].callee >= nf)
                    abort();
            free(e);
        }
        uint32_t id;
        ptc_session_lookup_stub(s, 1, 0x1000, &id);
        ptc_session_free(s);
    }
    free(fixed);
    return 0;
}
