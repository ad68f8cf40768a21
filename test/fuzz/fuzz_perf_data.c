/* libFuzzer target: the perf.data reader behind `ptcall import --perf-data`
 * (decoder/pt/perf_data.c, perf_sample.c) on arbitrary files: the header, the attribute
 * table at perf's stride, HEADER_CPUID, the records, AUXTRACE_INFO, AUX data assembled from
 * AUXTRACE records, sideband records and their sample_id trailers. Every failure must come
 * with a one-line message; what the callbacks get must be whole (records of the size they
 * claim, NUL-terminated file names, a sane configuration). Then what was read becomes a
 * trace as ptcall import writes it (tools/cmd_import.c: the AUX bytes, PT_CONFIG, the
 * sideband by CPU) and is decoded every way (fuzz_trace.c), so that the PT front-end's
 * sideband reading (pt_sideband.c) gets records perf wrote and mutations of them. Seeds: the
 * perf.data files of pt-perf-data-real (this machine's perf record) and of the test writer
 * (test/pt/ptgen_perf.c). */
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_trace.h"
#include "perf_data.h"

struct sb { uint32_t cpu; uint8_t *v; size_t n, cap; };

struct ctx {
    struct ft t;
    struct sb sb[8];
    int nsb;
    uint64_t touched;
};

static void touch(struct ctx *c, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) /* every byte handed out is readable (ASan) */
        c->touched += p[i];
}

static int on_aux(void *x, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t off,
                  const uint8_t *p, size_t n)
{
    struct ctx *c = x;
    if (!n || !p)
        __builtin_trap(); /* nothing to hand out: no call */
    touch(c, p, n);
    struct ptc_pt_aux a = {.cpu = cpu, .offset = off};
    ft_chunk(&c->t, PTC_CHUNK_PT_AUX, pid, tid, &a, sizeof(a), p, n);
    return 0;
}

static int on_mmap(void *x, const struct ptc_perf_mmap *m)
{
    struct ctx *c = x;
    if (!m->file || m->file[0] != '/')
        __builtin_trap(); /* only executable mappings of files by absolute path */
    touch(c, (const uint8_t *)m->file, strlen(m->file));
    return 0;
}

static int on_fork(void *x, uint32_t pid, uint32_t ppid, uint32_t ptid)
{
    (void)x;
    if (pid == ppid)
        __builtin_trap(); /* a new process, not a thread */
    (void)ptid;
    return 0;
}

static int on_sideband(void *x, uint32_t cpu, const uint8_t *rec, size_t size)
{
    struct ctx *c = x;
    struct perf_event_header h;
    if (size < sizeof(h))
        __builtin_trap();
    memcpy(&h, rec, sizeof(h));
    if (h.size != size)
        __builtin_trap(); /* a record as long as it says */
    touch(c, rec, size);
    struct sb *s = NULL;
    for (int i = 0; i < c->nsb; i++)
        if (c->sb[i].cpu == cpu)
            s = &c->sb[i];
    if (!s) {
        if (c->nsb == 8)
            return 0; /* enough CPUs for a fuzz input */
        s = &c->sb[c->nsb++];
        s->cpu = cpu;
    }
    if (s->n + size > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        while (cap < s->n + size)
            cap *= 2;
        void *v = realloc(s->v, cap);
        if (!v)
            return 0;
        s->v = v;
        s->cap = cap;
    }
    memcpy(s->v + s->n, rec, size);
    s->n += size;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return 0;
    ft_begin(&c->t);
    ft_module(&c->t);
    struct ptc_perf_data_ops ops = {.ctx = c, .aux = on_aux, .mmap = on_mmap, .fork = on_fork,
                                    .sideband = on_sideband};
    struct ptc_perf_data_info info;
    char err[512];
    int rc = ptc_perf_data_parse(data, size, "fuzz.data", &ops, &info, err, sizeof(err));
    if (rc && (!err[0] || strchr(err, '\n')))
        __builtin_trap(); /* one line that says what is wrong */
    if (!rc) {
        const struct ptc_pt_config *cfg = &info.cfg;
        if (cfg->size != sizeof(*cfg) || cfg->time_shift > 63 || cfg->mtc_freq > 15)
            __builtin_trap(); /* a configuration the decoder refuses must be refused here */
        ft_chunk(&c->t, PTC_CHUNK_PT_CONFIG, 0, 0, cfg, sizeof(*cfg), NULL, 0);
        for (int i = 0; i < c->nsb; i++) {
            struct ptc_pt_sideband sb = {.cpu = c->sb[i].cpu, .sample_type = info.sample_type};
            ft_chunk(&c->t, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sb, sizeof(sb), c->sb[i].v,
                     c->sb[i].n);
        }
        struct ptc_record_end re;
        memset(&re, 0, sizeof(re));
        ft_chunk(&c->t, PTC_CHUNK_RECORD_END, 0, 0, &re, sizeof(re), NULL, 0);
        /* AUX pieces named by PERF_RECORD_AUX are attributed by offset: the fast path and
         * libipt are compared on raw streams (fuzz_pt_raw), here only each with itself */
        ft_decode(&c->t, (cfg->flags & PTC_PT_F_CYC) != 0, 0);
    }
    for (int i = 0; i < c->nsb; i++)
        free(c->sb[i].v);
    ft_free(&c->t);
    free(c);
    return 0;
}
