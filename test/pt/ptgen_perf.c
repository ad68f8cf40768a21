/* The test writer's perf.data (ptgen.h, ptgen_perf_data): a ptgen trace rewritten as `perf
 * record -e intel_pt//u` would have written it - the file header, one intel_pt attribute
 * (with its ids section, at perf's stride), AUXTRACE_INFO, an MMAP2 of the binary, the
 * sideband records, AUXTRACE records whose data perf pads to 8 bytes. Our reading of the
 * format: pt-perf-data-real holds it to files the real perf wrote. */
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ptc_pt_decode.h"
#include "ptgen.h"

struct pw {
    FILE *f;
    uint64_t data_bytes, aux_ref;
};

static void put(struct pw *w, const void *p, size_t n)
{
    fwrite(p, 1, n, w->f);
    w->data_bytes += n;
}

static int perf_chunk(void *ctx, const struct ptc_chunk_header *h, const void *p)
{
    struct pw *w = ctx;
    const uint8_t *b = p;
    if (h->type == PTC_CHUNK_PT_SIDEBAND) {
        put(w, b + sizeof(struct ptc_pt_sideband), h->payload_size - sizeof(struct ptc_pt_sideband));
    } else if (h->type == PTC_CHUNK_PT_AUX) {
        struct ptc_pt_aux a;
        memcpy(&a, p, sizeof(a));
        uint64_t n = h->payload_size - sizeof(a), pad = (8 - (n & 7)) & 7;
        struct perf_event_header eh = {.type = 71, .size = 48};
        uint64_t sz = n + pad, ref = w->aux_ref++;
        uint32_t idx = a.cpu, tid = UINT32_MAX, cpu = a.cpu, res = 0;
        put(w, &eh, 8);
        put(w, &sz, 8);
        put(w, &a.offset, 8);
        put(w, &ref, 8);
        put(w, &idx, 4);
        put(w, &tid, 4);
        put(w, &cpu, 4);
        put(w, &res, 4);
        put(w, b + sizeof(a), n);
        static const uint8_t zeros[8];
        put(w, zeros, pad);
    }
    return 0;
}

int ptgen_perf_data(const char *trace, const char *out, const struct ptgen_perf_mmap *mm)
{
    struct pw w = {.f = fopen(out, "wb")};
    if (!w.f)
        return -1;
    struct {
        uint64_t magic, size, attr_size;
        uint64_t attrs[2], data[2], event_types[2];
        uint64_t features[4];
    } ph;
    memset(&ph, 0, sizeof(ph));
    memcpy(&ph.magic, "PERFILE2", 8);
    ph.size = sizeof(ph);
    ph.attr_size = sizeof(struct perf_event_attr) + 16; /* perf_file_attr: attr + ids section */
    struct perf_event_attr at;
    memset(&at, 0, sizeof(at));
    at.size = sizeof(at);
    at.type = 8;
    at.config = (1ull << 10) | (1ull << 9) | (1ull << 11) | (3ull << 14);
    at.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                     PERF_SAMPLE_IDENTIFIER;
    at.sample_id_all = 1;
    uint64_t ids[2] = {0, 0};
    ph.attrs[0] = sizeof(ph);
    ph.attrs[1] = sizeof(at) + 16;
    ph.data[0] = ph.attrs[0] + ph.attrs[1];
    fwrite(&ph, sizeof(ph), 1, w.f);
    fwrite(&at, sizeof(at), 1, w.f);
    fwrite(ids, 16, 1, w.f);
    /* AUXTRACE_INFO: tools/perf/util/intel-pt.h's order; TSC/NORETCOMP/MTC/CYC_BIT are
     * config masks */
    uint64_t priv[17] = {8, 10, 1365, 5000, 1, 1ull << 10, 1ull << 11, 2, 0, 1, 1ull << 9,
                         0xfull << 14, 40, 1, 1ull << 1, 24, 0};
    struct perf_event_header eh = {.type = 70, .size = 16 + sizeof(priv)};
    uint32_t ty[2] = {1, 0};
    put(&w, &eh, 8);
    put(&w, ty, 8);
    put(&w, priv, sizeof(priv));
    if (mm) { /* MMAP2 of the binary */
        size_t pl = strlen(mm->path) + 1, padl = (pl + 7) & ~(size_t)7;
        uint8_t rec[8 + 64 + PATH_MAX + 40];
        if (pl > PATH_MAX) {
            fclose(w.f);
            return -1;
        }
        memset(rec, 0, sizeof(rec));
        struct perf_event_header m2 = {.type = PERF_RECORD_MMAP2,
                                       .size = (uint16_t)(72 + padl + 32)};
        uint32_t prot = PROT_READ | PROT_EXEC;
        memcpy(rec, &m2, 8);
        memcpy(rec + 8, &mm->pid, 4);
        memcpy(rec + 12, &mm->pid, 4);
        memcpy(rec + 16, &mm->addr, 8);
        memcpy(rec + 24, &mm->len, 8);
        memcpy(rec + 32, &mm->pgoff, 8);
        memcpy(rec + 64, &prot, 4);
        memcpy(rec + 72, mm->path, pl);
        memcpy(rec + 72 + padl, &mm->pid, 4);
        memcpy(rec + 76 + padl, &mm->pid, 4);
        put(&w, rec, m2.size);
    }
    struct ptc_file_header fh;
    char why[256];
    int e = ptc_pt_read_file(trace, &fh, perf_chunk, &w, why, sizeof(why));
    ph.data[1] = w.data_bytes;
    fseek(w.f, 0, SEEK_SET);
    fwrite(&ph, sizeof(ph), 1, w.f);
    return fclose(w.f) || e ? -1 : 0;
}
