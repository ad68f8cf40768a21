/* Seed corpora for the PT fuzz targets, from the test writer (test/pt/ptgen.c):
 *   fuzz_seeds raw DIR    one-stream traces for fuzz_pt_raw: 4 config bytes, 2 layout bytes,
 *                         the stream (stubs where fuzz_trace.h puts the module)
 *   fuzz_seeds diff DIR   the same streams for fuzz_pt_diff: 4 config bytes, 4 bytes of
 *                         cutting seed, the stream
 *   fuzz_seeds perf DIR   perf.data files as the test writer makes them (ptgen_perf.c)
 *   fuzz_seeds ptc DIR    whole Intel PT trace files of the test writer (fuzz_pt_trace), one
 *                         with a damaged second PT_CONFIG (a time shift of 70) among them
 * Streams vary timing (none, TSC, MTC, CYC), PSB period, overflows, interrupts on stubs,
 * foreign packets and a cut last packet; they are small, so the fuzzer runs fast. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_crcs.h"
#include "fuzz_trace.h"
#include "pt_diff.h"
#include "ptgen.h"

static int write_file(const char *dir, const char *name, int i, const void *a, size_t an,
                      const void *b, size_t bn)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s-%02d", dir, name, i);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(a, 1, an, f) != an || (bn && fwrite(b, 1, bn, f) != bn)) {
        fprintf(stderr, "fuzz_seeds: cannot write %s\n", path);
        if (f)
            fclose(f);
        return 1;
    }
    return fclose(f) ? 1 : 0;
}

/* A copy of trace path with a second PT_CONFIG whose time shift is 70 (its CRC fixed up, as the
 * fuzz target does): the damage a configuration check must catch before anything uses it. */
static int damage_config(const char *path, const char *dir)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 1;
    static uint8_t b[1 << 20];
    size_t n = fread(b, 1, sizeof(b), f);
    fclose(f);
    for (size_t off = 64; off + 24 <= n;) {
        struct ptc_chunk_header h;
        memcpy(&h, b + off, sizeof(h));
        size_t total = 24 + h.payload_size + ((8 - (h.payload_size & 7)) & 7);
        if (h.type == PTC_CHUNK_PT_CONFIG &&
            h.payload_size >= offsetof(struct ptc_pt_config, time_shift) + 2) {
            /* the good configuration, then a damaged copy of it: --salvage skips the copy
             * and must not keep any of it */
            static uint8_t d[(1 << 20) + 4096];
            if (n + total > sizeof(d))
                return 1;
            memcpy(d, b, off + total);
            memcpy(d + off + total, b + off, total);
            memcpy(d + off + 2 * total, b + off + total, n - off - total);
            struct ptc_pt_config c;
            memset(&c, 0, sizeof(c));
            memcpy(&c, d + off + total + 24,
                   h.payload_size < sizeof(c) ? h.payload_size : sizeof(c));
            c.time_shift = 70; /* with a perf time base: the conversion uses it */
            c.flags |= PTC_PT_F_TIME_ZERO;
            memcpy(d + off + total + 24, &c, h.payload_size < sizeof(c) ? h.payload_size : sizeof(c));
            uint8_t *fixed = fix_crcs(d, n + total);
            int bad = !fixed || write_file(dir, "ptc-shift70", 0, fixed, n + total, NULL, 0);
            free(fixed);
            return bad;
        }
        off += total;
    }
    return 0;
}

static void opts(struct ptgen_opts *o, int i)
{
    ptgen_default(o, (uint64_t)(100 + i));
    o->timing = i % 4;
    o->ncpus = o->nprocs = o->threads = 1;
    o->slices = 2 + i % 3;
    o->max_hits = 20;
    o->psb_period = 64 + 48 * (i % 5);
    o->p_trunc = 0;
    o->p_foreign = i % 5 == 4 ? 40 : 0;
    o->tail_cut = i % 6 == 5;
    o->mod0_start = FT_STUBS;
    o->mod0_nstubs = FT_NSTUBS;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_seeds raw|diff|perf|ptc DIR\n");
        return 2;
    }
    const char *kind = argv[1], *dir = argv[2];
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s/.ptgen-%d.ptc", dir, (int)getpid());
    int bad = 0, n = 0;
    if (!strcmp(kind, "raw") || !strcmp(kind, "diff")) {
        for (int i = 0; i < 16 && !bad; i++) {
            struct ptgen_opts o;
            opts(&o, i);
            struct ptgen_result r;
            size_t len;
            uint8_t *b = ptgen_raw_stream(&o, tmp, &len, &r);
            if (!b) {
                fprintf(stderr, "fuzz_seeds: ptgen failed\n");
                return 1;
            }
            ptgen_free(&r);
            /* pt_diff_config's bytes for ptgen's timing: MTC period 3, nominal ratio 24,
             * TSC:ART 40:1; the CPU (and so libipt's errata) none or one of the four */
            uint8_t h[8] = {(uint8_t)(o.timing | (i % 5) << 2), 0x63, 1, 40,
                            (uint8_t)(i % 2 ? 0x01 | (i & 6) : (i & 6)), (uint8_t)(37 * i), 0, 0};
            if (!strcmp(kind, "raw"))
                bad = write_file(dir, "raw", i, h, 6, b, len);
            else
                bad = write_file(dir, "diff", i, h, 8, b, len);
            free(b);
            n++;
        }
    } else if (!strcmp(kind, "perf")) {
        for (int i = 0; i < 4 && !bad; i++) {
            struct ptgen_opts o;
            ptgen_default(&o, (uint64_t)(200 + i));
            o.nprocs = 1 + i % 2;
            o.threads = 1 + i / 2;
            o.ncpus = 2;
            o.slices = 6;
            o.max_hits = 12;
            o.no_gap_chunks = 1; /* perf.data says truncation with PERF_AUX_FLAG_TRUNCATED */
            o.timing = i % 4;
            o.mod0_start = FT_STUBS;
            o.mod0_nstubs = FT_NSTUBS;
            struct ptgen_result r;
            if (ptgen_write(&o, tmp, &r)) {
                fprintf(stderr, "fuzz_seeds: ptgen failed\n");
                return 1;
            }
            ptgen_free(&r);
            char out[4096];
            snprintf(out, sizeof(out), "%s/writer-%02d.data", dir, i);
            struct ptgen_perf_mmap mm = {.pid = 1000, .addr = FT_STUBS & ~0xfffull,
                                         .len = 0x1000, .pgoff = 0, .path = "/fuzz/app"};
            bad = ptgen_perf_data(tmp, out, &mm) != 0;
            n++;
        }
        unlink(tmp);
    } else if (!strcmp(kind, "ptc")) {
        for (int i = 0; i < 12 && !bad; i++) {
            struct ptgen_opts o;
            opts(&o, i);
            o.nprocs = 1 + i % 2;
            o.threads = 1 + (i / 2) % 2;
            o.ncpus = 1 + i % 3;
            o.no_gap_chunks = i % 4 == 3;
            char out[4096];
            snprintf(out, sizeof(out), "%s/ptc-%02d", dir, i);
            struct ptgen_result r;
            if (ptgen_write(&o, out, &r)) {
                fprintf(stderr, "fuzz_seeds: ptgen failed\n");
                return 1;
            }
            ptgen_free(&r);
            n++;
            if (i == 1) { /* with forks placed by time: the conversion runs */
                char forked[4096];
                snprintf(forked, sizeof(forked), "%s/.forks-%d", dir, (int)getpid());
                o.timing = 3;
                o.nprocs = 2;
                o.forks = 1;
                if (ptgen_write(&o, forked, &r))
                    return 1;
                ptgen_free(&r);
                bad = damage_config(forked, dir);
                unlink(forked);
            }
        }
    } else {
        fprintf(stderr, "fuzz_seeds: no seeds of kind '%s' (raw, diff, perf, ptc)\n", kind);
        return 2;
    }
    printf("fuzz_seeds: %d %s seed(s) in %s\n", n, kind, dir);
    return bad;
}
