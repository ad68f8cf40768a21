/* ptcall import: make a ptcall trace file from Intel PT captured elsewhere - raw PT byte
 * streams (one per CPU, or one for a single thread) plus the instrumented binaries and their
 * load addresses, or a perf.data file recorded with `perf record -e intel_pt//u` (read by
 * decoder/pt/perf_data.c; this file writes the trace). docs/pt.md "Importing". */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "options.h"
#include "perf_data.h"
#include "ptc_chunk_write.h"
#include "ptc_pt_rec.h"
#include "ptc_seqtab.h"
#include "ptcall/trace_format_pt.h"

struct binary { char path[PATH_MAX]; uint64_t load; int has_load; };

struct imp {
    int fd;
    struct ptc_trace_path made; /* whether import created the output (only then may it remove it) */
    const char *out;
    struct ptc_seqtab seq; /* per (pid, tid) chunk stream */
    struct binary bins[32];
    int nbins;
    uint32_t pid, tid;
    struct { uint32_t pid; uint32_t next_mod, next_stub; } procs[256];
    int nprocs;
    struct { uint32_t pid; uint64_t bias; char path[256]; } seen[256];
    int nseen;
    uint64_t modules;
};

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "ptcall import: ");
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    return 1;
}

static int chunk(struct imp *m, uint16_t type, uint32_t pid, uint32_t tid, const void *a,
                 size_t an, const void *b, size_t bn)
{
    struct iovec iov[2] = {{(void *)a, an}, {(void *)b, bn}};
    uint32_t seq;
    if (ptc_seq_next(&m->seq, pid, tid, &seq)) {
        fprintf(stderr, "ptcall import: out of memory numbering the chunks of %u/%u\n", pid, tid);
        return -1;
    }
    int e = ptc_write_chunk(m->fd, type, 0, pid, tid, seq, iov, bn ? 2 : 1);
    if (e < 0) {
        fprintf(stderr, "ptcall import: writing %s: %s\n", m->out, strerror(-e));
        return -1;
    }
    return 0;
}

/* MODULE + PT_STUBS chunks for an instrumented object of process pid at bias */
static int add_module(struct imp *m, uint32_t pid, const char *path, uint64_t bias,
                      int quiet_if_plain)
{
    for (int i = 0; i < m->nseen; i++)
        if (m->seen[i].pid == pid && m->seen[i].bias == bias &&
            !strncmp(m->seen[i].path, path, 255))
            return 0;
    struct ptc_pt_elf_sections sec;
    char why[512];
    if (ptc_pt_elf_sections(path, &sec, why, sizeof(why))) {
        if (quiet_if_plain)
            return 0;
        fprintf(stderr, "ptcall import: %s\n", why);
        return -1;
    }
    if (!sec.has_stubs) {
        if (quiet_if_plain)
            return 0;
        fprintf(stderr, "ptcall import: %s has no ptcall_stubs section: it was not built with "
                        "ptcall-cc\n", path);
        return -1;
    }
    int pi = -1;
    for (int i = 0; i < m->nprocs; i++)
        if (m->procs[i].pid == pid)
            pi = i;
    if (pi < 0) {
        if (m->nprocs == 256)
            return -1;
        pi = m->nprocs++;
        m->procs[pi].pid = pid;
        m->procs[pi].next_mod = m->procs[pi].next_stub = 0;
    }
    void *buf = NULL;
    uint32_t ns = 0;
    long n = ptc_pt_build_module(path, &sec, bias, m->procs[pi].next_mod,
                                 m->procs[pi].next_stub, &buf, &ns, why, sizeof(why));
    if (n < 0) {
        fprintf(stderr, "ptcall import: %s\n", why);
        return -1;
    }
    struct ptc_pt_stubs st = {.module_id = m->procs[pi].next_mod,
                              .stubs_start = sec.stubs_addr + bias,
                              .stubs_end = sec.stubs_addr + bias + sec.stubs_size};
    int r = chunk(m, PTC_CHUNK_MODULE, pid, 0, buf, (size_t)n, NULL, 0);
    if (!r)
        r = chunk(m, PTC_CHUNK_PT_STUBS, pid, 0, &st, sizeof(st), NULL, 0);
    free(buf);
    m->procs[pi].next_mod++;
    m->procs[pi].next_stub += ns;
    if (m->nseen < 256) {
        m->seen[m->nseen].pid = pid;
        m->seen[m->nseen].bias = bias;
        snprintf(m->seen[m->nseen].path, 256, "%s", path);
        m->nseen++;
    }
    m->modules++;
    return r;
}

#define SB_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

static int aux_chunks(struct imp *m, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t off,
                      const uint8_t *p, size_t n)
{
    while (n) {
        size_t k = n > (1u << 20) ? (1u << 20) : n;
        struct ptc_pt_aux a = {.cpu = cpu, .offset = off};
        if (chunk(m, PTC_CHUNK_PT_AUX, pid, tid, &a, sizeof(a), p, k))
            return -1;
        off += k;
        p += k;
        n -= k;
    }
    return 0;
}

/* ---- perf.data (read by decoder/pt/perf_data.c) ------------------------------------------ */

struct sbbuf { uint32_t cpu; uint8_t *v; size_t n, cap; };

struct perf_import {
    struct imp *m;
    struct sbbuf *sbs; /* sideband records by CPU, written once the config is known */
    int nsb;
};

static int sb_add(struct sbbuf **sbs, int *nsb, uint32_t cpu, const void *p, size_t n)
{
    struct sbbuf *s = NULL;
    for (int i = 0; i < *nsb; i++)
        if ((*sbs)[i].cpu == cpu)
            s = &(*sbs)[i];
    if (!s) {
        struct sbbuf *v = realloc(*sbs, (size_t)(*nsb + 1) * sizeof(**sbs));
        if (!v)
            return -1;
        *sbs = v;
        s = &v[(*nsb)++];
        memset(s, 0, sizeof(*s));
        s->cpu = cpu;
    }
    if (s->n + n > s->cap) {
        size_t c = s->cap ? s->cap * 2 : 65536;
        while (c < s->n + n)
            c *= 2;
        void *v = realloc(s->v, c);
        if (!v)
            return -1;
        s->v = v;
        s->cap = c;
    }
    memcpy(s->v + s->n, p, n);
    s->n += n;
    return 0;
}

static int perf_aux(void *ctx, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t off,
                    const uint8_t *p, size_t n)
{
    struct perf_import *pi = ctx;
    return aux_chunks(pi->m, cpu, pid, tid, off, p, n) ? 1 : 0;
}

/* An executable mapping: a module when the object (or the --binary of that file name) is
 * instrumented and the mapping holds its stubs. */
static int perf_mmap(void *ctx, const struct ptc_perf_mmap *mm)
{
    struct imp *m = ((struct perf_import *)ctx)->m;
    const char *use = mm->file;
    const char *base = strrchr(mm->file, '/') ? strrchr(mm->file, '/') + 1 : mm->file;
    for (int i = 0; i < m->nbins; i++) {
        const char *b = strrchr(m->bins[i].path, '/');
        if (!strcmp(b ? b + 1 : m->bins[i].path, base))
            use = m->bins[i].path;
    }
    struct ptc_pt_elf_sections sec;
    char why[256];
    if (!ptc_pt_elf_sections(use, &sec, why, sizeof(why)) && sec.has_stubs &&
        sec.stubs_offset >= mm->pgoff && sec.stubs_offset < mm->pgoff + mm->len) {
        uint64_t bias = mm->addr + (sec.stubs_offset - mm->pgoff) - sec.stubs_addr;
        if (add_module(m, mm->pid, use, bias, 0))
            return 1;
    }
    return 0;
}

static int perf_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t ptid)
{
    struct imp *m = ((struct perf_import *)ctx)->m;
    struct ptc_process pr = {.ppid = ppid, .how = PTC_PROC_FORK, .parent_tid = ptid};
    return chunk(m, PTC_CHUNK_PROCESS, pid, 0, &pr, sizeof(pr), NULL, 0) ? 1 : 0;
}

static int perf_sideband(void *ctx, uint32_t cpu, const uint8_t *rec, size_t size)
{
    struct perf_import *pi = ctx;
    if (sb_add(&pi->sbs, &pi->nsb, cpu, rec, size))
        return fail("out of memory%s%s", "", "");
    return 0;
}

static int import_perf(struct imp *m, const char *path)
{
    struct perf_import pi = {.m = m};
    struct ptc_perf_data_ops ops = {.ctx = &pi, .aux = perf_aux, .mmap = perf_mmap,
                                    .fork = perf_fork, .sideband = perf_sideband};
    struct ptc_perf_data_info info;
    char err[PATH_MAX + 256];
    int rc = ptc_perf_data_read(path, &ops, &info, err, sizeof(err)) ? 1 : 0;
    if (rc && err[0])
        fail("%s%s", err, "");
    const struct ptc_pt_config *cfg = &info.cfg;
    if (!rc) {
        /* the config first in reading order does not matter to the decoder; write it now */
        rc = chunk(m, PTC_CHUNK_PT_CONFIG, 0, 0, cfg, sizeof(*cfg), NULL, 0) ? 1 : 0;
        if (!rc && (cfg->flags & PTC_PT_F_TIME_ZERO)) {
            struct ptc_timebase tb = {.source = PTC_TIME_PERF_PAGE, .time_shift = cfg->time_shift,
                                      .time_mult = cfg->time_mult, .time_zero = cfg->time_zero};
            rc = chunk(m, PTC_CHUNK_TIMEBASE, 0, 0, &tb, sizeof(tb), NULL, 0) ? 1 : 0;
        }
        for (int i = 0; i < pi.nsb && !rc; i++) {
            struct ptc_pt_sideband sb = {.cpu = pi.sbs[i].cpu, .sample_type = info.sample_type};
            rc = chunk(m, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sb, sizeof(sb), pi.sbs[i].v, pi.sbs[i].n)
                     ? 1
                     : 0;
        }
    }
    if (!rc)
        fprintf(stderr, "ptcall import: %s: %llu AUXTRACE records (%llu bytes), %llu sideband "
                        "records, %llu instrumented module mappings\n",
                path, (unsigned long long)info.auxtrace, (unsigned long long)info.aux_bytes,
                (unsigned long long)info.sideband, (unsigned long long)m->modules);
    for (int i = 0; i < pi.nsb; i++)
        free(pi.sbs[i].v);
    free(pi.sbs);
    return rc;
}

/* ---- command -------------------------------------------------------------------------- */

static int run_import(const struct cli_values *v)
{
    struct imp M;
    memset(&M, 0, sizeof(M));
    struct imp *m = &M;
    m->pid = v->import.pid;
    m->tid = v->import.tid;
    const char *out = v->output, *perf = v->import.perf_data,
               *thread_stream = v->import.thread_stream;
    struct { uint32_t cpu; const char *file; } cs[256];
    int ncs = 0;
    struct ptc_pt_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.size = sizeof(cfg);
    cfg.sample_type = SB_TYPE;
    /* --timing none|tsc|mtc|cyc: each adds to the one before */
    static const uint32_t timing_flags[] = {
        0, PTC_PT_F_TSC, PTC_PT_F_TSC | PTC_PT_F_MTC, PTC_PT_F_TSC | PTC_PT_F_MTC | PTC_PT_F_CYC};
    cfg.flags = timing_flags[v->timing];
    cfg.mtc_freq = v->import.mtc_period;
    cfg.nom_freq = v->import.nom_freq;
    if (v->import.have_tsc_ratio) {
        cfg.cpuid_0x15_ebx = v->import.tsc_ratio[0];
        cfg.cpuid_0x15_eax = v->import.tsc_ratio[1];
    }
    if (v->import.have_cpu) {
        cfg.cpu_vendor = 1;
        cfg.cpu_family = (uint16_t)v->import.cpu[0];
        cfg.cpu_model = (uint8_t)v->import.cpu[1];
        cfg.cpu_stepping = (uint8_t)v->import.cpu[2];
    }
    if (v->import.have_time_conv) {
        cfg.time_shift = (uint16_t)v->import.time_conv.shift;
        cfg.time_mult = v->import.time_conv.mult;
        cfg.time_zero = v->import.time_conv.zero;
        cfg.flags |= PTC_PT_F_TIME_ZERO;
    }
    /* the table checked the forms N:FILE and PATH[@HEXADDR] and how many were given */
    for (int i = 0; i < v->import.cpu_streams.n && i < 256; i++) {
        const char *c = v->import.cpu_streams.v[i];
        cs[ncs].cpu = (uint32_t)strtoul(c, NULL, 10);
        cs[ncs++].file = strchr(c, ':') + 1;
    }
    for (int i = 0; i < v->import.binaries.n && m->nbins < 32; i++) {
        struct binary *b = &m->bins[m->nbins++];
        snprintf(b->path, sizeof(b->path), "%s", v->import.binaries.v[i]);
        char *at = strrchr(b->path, '@');
        if (at) {
            *at = 0;
            b->load = strtoull(at + 1, NULL, 16);
            b->has_load = 1;
        }
    }
    if (v->npos)
        return cli_usage_error(CMD_IMPORT, "unexpected argument '%s'", v->pos[0]);
    if (!out)
        return cli_usage_error(CMD_IMPORT, "where to? (-o OUT)");
    if (!perf && !thread_stream && !ncs)
        return cli_usage_error(CMD_IMPORT, "nothing to import: give --cpu-stream, "
                                           "--thread-stream or --perf-data");
    if (perf && (thread_stream || ncs))
        return cli_usage_error(CMD_IMPORT, "--perf-data brings its own streams; do not add raw "
                                           "ones");
    m->out = out;
    m->fd = ptc_create_trace(out, &m->made);
    if (m->fd < 0) {
        char why[PATH_MAX + 200];
        ptc_create_trace_error(why, sizeof(why), out, errno);
        return fail("%s%s", why, "");
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct ptc_file_header fh;
    ptc_file_header_init(&fh, PTC_BACKEND_IMPORT, 0,
                         (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
    if (write(m->fd, &fh, sizeof(fh)) != (ssize_t)sizeof(fh))
        return fail("writing %s: %s", out, strerror(errno));
    int rc = 0;
    if (perf) {
        rc = import_perf(m, perf);
    } else {
        if (!m->nbins)
            fprintf(stderr, "ptcall import: note: no --binary given: the trace will have no "
                            "function names and every hit will be an unknown stub\n");
        for (int i = 0; i < m->nbins && !rc; i++) {
            struct ptc_pt_elf_sections sec;
            char why[512];
            if (ptc_pt_elf_sections(m->bins[i].path, &sec, why, sizeof(why))) {
                rc = fail("%s%s", why, "");
                break;
            }
            uint64_t bias = 0;
            if (m->bins[i].has_load)
                bias = m->bins[i].load - (sec.text_vaddr_min == UINT64_MAX ? 0 : sec.text_vaddr_min);
            else if (sec.pie)
                fprintf(stderr, "ptcall import: note: %s is position-independent and no load "
                                "address was given (--binary PATH@ADDR): assuming %s\n",
                        m->bins[i].path, "its link address");
            if (add_module(m, m->pid, m->bins[i].path, bias, 0))
                rc = 1;
        }
        if (!rc && chunk(m, PTC_CHUNK_PT_CONFIG, 0, 0, &cfg, sizeof(cfg), NULL, 0))
            rc = 1;
        if (!rc && (cfg.flags & PTC_PT_F_TIME_ZERO)) {
            struct ptc_timebase tb = {.source = PTC_TIME_PERF_PAGE, .time_shift = cfg.time_shift,
                                      .time_mult = cfg.time_mult, .time_zero = cfg.time_zero};
            rc = chunk(m, PTC_CHUNK_TIMEBASE, 0, 0, &tb, sizeof(tb), NULL, 0) ? 1 : 0;
        }
        if (!rc && thread_stream) {
            size_t n;
            uint8_t *b = ptc_read_whole_file(thread_stream, &n);
            if (!b)
                rc = fail("cannot read %s: %s", thread_stream, strerror(errno));
            else
                rc = aux_chunks(m, PTC_PT_CPU_THREAD, m->pid, m->tid, 0, b, n) ? 1 : 0;
            free(b);
        }
        for (int i = 0; i < ncs && !rc; i++) {
            size_t n;
            uint8_t *b = ptc_read_whole_file(cs[i].file, &n);
            if (!b) {
                rc = fail("cannot read %s: %s", cs[i].file, strerror(errno));
                break;
            }
            rc = aux_chunks(m, cs[i].cpu, 0, 0, 0, b, n) ? 1 : 0;
            free(b);
            /* sideband: the thread runs on this CPU from the start */
            uint8_t rec[8 + 8 + 32];
            struct perf_event_header h = {.type = PERF_RECORD_ITRACE_START, .size = sizeof(rec)};
            uint32_t ids[2] = {m->pid, m->tid};
            uint64_t t0 = 0, id = 0;
            uint32_t cpu2[2] = {cs[i].cpu, 0};
            memcpy(rec, &h, 8);
            memcpy(rec + 8, ids, 8);
            memcpy(rec + 16, ids, 8);
            memcpy(rec + 24, &t0, 8);
            memcpy(rec + 32, cpu2, 8);
            memcpy(rec + 40, &id, 8);
            struct ptc_pt_sideband sb = {.cpu = cs[i].cpu, .sample_type = SB_TYPE};
            if (!rc)
                rc = chunk(m, PTC_CHUNK_PT_SIDEBAND, 0, 0, &sb, sizeof(sb), rec, sizeof(rec)) ? 1
                                                                                               : 0;
        }
    }
    struct ptc_record_end re = {0};
    if (!rc)
        rc = chunk(m, PTC_CHUNK_RECORD_END, 0, 0, &re, sizeof(re), NULL, 0) ? 1 : 0;
    ptc_seq_free(&m->seq);
    close(m->fd);
    if (rc) /* only a file import created: never one it emptied, nor what replaced it */
        ptc_remove_created_trace(out, &m->made);
    return rc ? 1 : 0;
}

int cmd_import(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_IMPORT, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_import(&v);
    cli_values_free(&v);
    return r;
}
