/* libFuzzer target: what `ptcall import --thread-stream / --cpu-stream` makes of arbitrary
 * bytes. The input is 4 bytes of PT configuration (pt_diff_config: timing, CPU, MTC period,
 * nominal frequency, TSC ratio), 2 bytes of layout, and one raw PT stream. The stream goes
 * into a trace as ptcall import writes one (tools/cmd_import.c): MODULE and PT_STUBS of a
 * small instrumented module, PT_CONFIG, the stream in PT_AUX chunks - one thread's, or one
 * CPU's with the ITRACE_START record import writes - cut into 1 to 4 pieces, with bytes lost
 * between them or not (the AUX offsets jump), and RECORD_END. Then every consumer decodes it
 * (fuzz_trace.c): a session with the fast path and with libipt alone, and the front-end as
 * `ptcall stat` runs it, serially and with streams decoded side by side; they must agree.
 *   layout[0]: bit 0 a CPU stream (else a thread's), bits 1-2 pieces - 1, bit 3 bytes lost
 *              between pieces, bit 4 PT_CONFIG after the bytes (as a perf.data import)
 *   layout[1]: where the pieces are cut */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_trace.h"

#define TID 4243u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6)
        return 0;
    const uint8_t *cfg4 = data, *lay = data + 4, *pt = data + 6;
    size_t n = size - 6;
    int cpu_stream = lay[0] & 1, pieces = 1 + ((lay[0] >> 1) & 3), lost = (lay[0] >> 3) & 1;
    int config_last = (lay[0] >> 4) & 1;
    struct ft t;
    ft_begin(&t);
    ft_module(&t);
    struct ptc_pt_config pc;
    if (!config_last)
        ft_config(&t, cfg4, &pc);
    uint32_t cpu = cpu_stream ? 1 : PTC_PT_CPU_THREAD;
    uint32_t pid = cpu_stream ? 0 : FT_PID, tid = cpu_stream ? 0 : TID;
    uint64_t aux = 0;
    size_t at = 0;
    for (int k = 0; k < pieces; k++) {
        size_t len = k + 1 == pieces ? n - at : (n - at) * (size_t)((lay[1] >> (2 * k)) & 3) / 4;
        struct ptc_pt_aux a = {.cpu = cpu, .offset = aux};
        ft_chunk(&t, PTC_CHUNK_PT_AUX, pid, tid, &a, sizeof(a), pt + at, len);
        at += len;
        aux += len + (lost ? 64u * (unsigned)(k + 1) : 0);
    }
    if (cpu_stream) { /* the thread runs on the CPU from the start (ptcall import) */
        uint8_t rec[48];
        struct perf_event_header h = {.type = PERF_RECORD_ITRACE_START, .size = sizeof(rec)};
        uint32_t ids[2] = {FT_PID, TID}, cpu2[2] = {cpu, 0};
        uint64_t t0 = 0, id = 0;
        memcpy(rec, &h, 8);
        memcpy(rec + 8, ids, 8);
        memcpy(rec + 16, ids, 8);
        memcpy(rec + 24, &t0, 8);
        memcpy(rec + 32, cpu2, 8);
        memcpy(rec + 40, &id, 8);
        struct ptc_pt_sideband sb = {.cpu = cpu, .sample_type = 0x10086};
        ft_chunk(&t, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sb, sizeof(sb), rec, sizeof(rec));
    }
    if (config_last)
        ft_config(&t, cfg4, &pc);
    struct ptc_record_end re;
    memset(&re, 0, sizeof(re));
    ft_chunk(&t, PTC_CHUNK_RECORD_END, 0, 0, &re, sizeof(re), NULL, 0);
    ft_decode(&t, (pc.flags & PTC_PT_F_CYC) != 0, 1);
    ft_free(&t);
    return 0;
}
