/* The perf.data reader (perf_data.h): the file is read whole (perf.data files of a traced
 * run fit in memory, and records refer back to the attribute table), then walked record by
 * record. docs/pt.md "Importing" lists what is taken from it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_data.h"
#include "perf_sample.h"

struct perf_file_section { uint64_t offset, size; };
struct perf_file_header {
    uint64_t magic, size, attr_size;
    struct perf_file_section attrs, data, event_types;
    uint64_t features[4];
};

enum { PERF_AUXTRACE_INFO = 70, PERF_AUXTRACE = 71, PERF_COMPRESSED = 81 };
#define HEADER_CPUID_BIT 9
#define MAX_BUFS 1024
#define MAX_THREADS 4096

/* AUX data of one perf buffer (idx), assembled by offset: perf pads each AUXTRACE record's
 * data to 8 bytes and starts the next record at the real (unpadded) offset, so records may
 * overlap by up to 7 bytes of padding; a real gap in offsets is kept as a gap. */
struct asm_buf { uint32_t idx, cpu, tid; uint64_t base; uint8_t *v; size_t n, cap; };

struct reader {
    const struct ptc_perf_data_ops *ops;
    const char *path;
    const uint8_t *f;
    size_t len;
    struct perf_file_header h;
    size_t nattr;
    struct { uint32_t tid, pid; } t2p[MAX_THREADS]; /* per-thread mode: whose thread is it */
    int nt2p;
    struct asm_buf bufs[MAX_BUFS];
    int nbufs;
    struct ptc_perf_data_info *info;
    int have_info;
    char *err;
    size_t err_size;
};

/* The message of an error of the file itself; returns 1. */
static int fail(struct reader *x, const char *what)
{
    snprintf(x->err, x->err_size, "%s%s", x->path, what);
    return 1;
}

/* fail() with a record's file offset in the message. */
static int fail_at(struct reader *x, const char *what, uint64_t off)
{
    snprintf(x->err, x->err_size, "%s is corrupt: %s (the record at file offset %llu)", x->path,
             what, (unsigned long long)off);
    return 1;
}

/* The file header's attr_size is that of perf's struct perf_file_attr: the event's
 * perf_event_attr followed by a perf_file_section (16 bytes) locating its sample ids
 * (tools/perf/util/header.c: f_header.attr_size = sizeof(f_attr)). */
#define PERF_FILE_IDS_SIZE 16u
#define PERF_ATTR_MIN 64u /* PERF_ATTR_SIZE_VER0 */

uint8_t *ptc_read_whole_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st)) {
        close(fd);
        return NULL;
    }
    uint8_t *b = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (b && got < (size_t)st.st_size) {
        ssize_t k = read(fd, b + got, (size_t)st.st_size - got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    *len = got;
    return b;
}

static void note_tid(struct reader *x, uint32_t pid, uint32_t tid)
{
    if (!pid || !tid || pid == UINT32_MAX)
        return;
    for (int i = 0; i < x->nt2p; i++)
        if (x->t2p[i].tid == tid) {
            x->t2p[i].pid = pid;
            return;
        }
    if (x->nt2p < MAX_THREADS) {
        x->t2p[x->nt2p].tid = tid;
        x->t2p[x->nt2p++].pid = pid;
    }
}

static uint32_t pid_of(const struct reader *x, uint32_t tid)
{
    for (int i = 0; i < x->nt2p; i++)
        if (x->t2p[i].tid == tid)
            return x->t2p[i].pid;
    return tid;
}

static int asm_flush(struct reader *x, struct asm_buf *a)
{
    int r = 0;
    /* before a jump in offsets (or at the end) the padding of the last record cannot be told
     * from data by its offset: drop up to 7 trailing zero bytes (at worst PAD packets) */
    for (int k = 0; k < 7 && a->n && !a->v[a->n - 1]; k++)
        a->n--;
    if (a->n)
        r = a->cpu == PTC_PT_CPU_THREAD
                ? x->ops->aux(x->ops->ctx, a->cpu, pid_of(x, a->tid), a->tid, a->base, a->v, a->n)
                : x->ops->aux(x->ops->ctx, a->cpu, 0, 0, a->base, a->v, a->n);
    a->base += a->n;
    a->n = 0;
    return r;
}

/* Returns 0, the aux callback's value, or 1 when out of memory. */
static int asm_add(struct reader *x, struct asm_buf *a, uint64_t off, const uint8_t *p, size_t n)
{
    if (!n)
        return 0; /* an AUXTRACE record without data (fuzz_perf_data: NULL + 0 below) */
    if (off < a->base + a->n && off + 8 > a->base + a->n && off >= a->base) {
        a->n = (size_t)(off - a->base); /* drop the previous record's padding */
    } else if (off != a->base + a->n) {
        int r = asm_flush(x, a);
        if (r)
            return r;
        a->base = off;
    }
    if (a->n + n > a->cap) {
        size_t c = a->cap ? a->cap * 2 : (1u << 20);
        while (c < a->n + n)
            c *= 2;
        void *v = realloc(a->v, c);
        if (!v)
            return 1;
        a->v = v;
        a->cap = c;
    }
    memcpy(a->v + a->n, p, n);
    a->n += n;
    return 0;
}

static void read_attr(const struct reader *x, size_t i, struct perf_event_attr *a)
{
    size_t n = (size_t)x->h.attr_size - PERF_FILE_IDS_SIZE;
    memset(a, 0, sizeof(*a));
    memcpy(a, x->f + x->h.attrs.offset + i * x->h.attr_size, n < sizeof(*a) ? n : sizeof(*a));
}

/* The sample_id layout every event shares. Returns 0 or 1 (layouts differ). */
static int read_sample_type(struct reader *x)
{
    uint64_t st_all = 0;
    int st_mixed = 0;
    for (size_t i = 0; i < x->nattr; i++) {
        struct perf_event_attr a;
        read_attr(x, i, &a);
        uint64_t st = a.sample_id_all ? a.sample_type & PTC_PERF_SAMPLE_ID_BITS : 0;
        if (i && st != st_all)
            st_mixed = 1;
        st_all = st;
    }
    if (st_mixed)
        return fail(x, ": its events have different sample_id layouts; record with "
                       "perf record -e intel_pt//u only");
    x->info->sample_type = st_all;
    x->info->cfg.sample_type = st_all;
    return 0;
}

/* HEADER_CPUID feature: "GenuineIntel,6,85,4" */
static void read_cpuid(struct reader *x)
{
    const struct perf_file_header *h = &x->h;
    struct ptc_pt_config *cfg = &x->info->cfg;
    uint64_t fo = h->data.offset + h->data.size;
    int idx = 0;
    for (int bit = 0; bit < HEADER_CPUID_BIT; bit++)
        if (h->features[bit / 64] >> (bit % 64) & 1)
            idx++;
    if (!((h->features[0] >> HEADER_CPUID_BIT) & 1) || fo + (size_t)(idx + 1) * 16 > x->len)
        return;
    struct perf_file_section s;
    memcpy(&s, x->f + fo + (size_t)idx * 16, 16);
    /* in a form that cannot overflow (fuzz_perf_data: an offset near 2^64 wrapped past the
     * check and was read) */
    if (s.offset > x->len || s.size > x->len - s.offset || s.size <= 4)
        return;
    char buf[128] = "";
    size_t sl = s.size - 4 < 127 ? s.size - 4 : 127;
    memcpy(buf, x->f + s.offset + 4, sl);
    unsigned fam, mod, step;
    if (!strncmp(buf, "GenuineIntel,", 13) && sscanf(buf + 13, "%u,%u,%u", &fam, &mod, &step) == 3) {
        cfg->cpu_vendor = 1;
        cfg->cpu_family = (uint16_t)fam;
        cfg->cpu_model = (uint8_t)mod;
        cfg->cpu_stepping = (uint8_t)step;
    }
}

/* PERF_RECORD_AUXTRACE_INFO of record r (size bytes): timing parameters, and from the
 * intel_pt event's config which timing packets are on. Returns 0 or 1. */
static int on_auxtrace_info(struct reader *x, const uint8_t *r, uint32_t size)
{
    struct ptc_pt_config *cfg = &x->info->cfg;
    uint64_t priv[32] = {0};
    size_t np = (size - 16) / 8;
    memcpy(priv, r + 16, 8 * (np < 32 ? np : 32));
    uint32_t type;
    memcpy(&type, r + 8, 4);
    if (type != 1)
        return fail(x, ": its AUX trace is not Intel PT (type )");
    uint64_t pt_type = priv[0];
    if (priv[1] > 63) {
        snprintf(x->err, x->err_size,
                 "%s is corrupt: its AUXTRACE_INFO time_shift is %llu, not a shift count (0..63)",
                 x->path, (unsigned long long)priv[1]);
        return 1;
    }
    cfg->time_shift = (uint16_t)priv[1];
    cfg->time_mult = (uint32_t)priv[2];
    cfg->time_zero = priv[3];
    if (priv[4])
        cfg->flags |= PTC_PT_F_TIME_ZERO;
    cfg->cpuid_0x15_ebx = (uint32_t)priv[12];
    cfg->cpuid_0x15_eax = (uint32_t)priv[13];
    cfg->nom_freq = (uint8_t)priv[15];
    for (size_t i = 0; i < x->nattr; i++) {
        struct perf_event_attr a;
        read_attr(x, i, &a);
        if (a.type != pt_type)
            continue;
        cfg->config = a.config;
        cfg->pmu_type = a.type;
        /* INTEL_PT_TSC_BIT, _NORETCOMP_BIT, _MTC_BIT, _CYC_BIT hold the config *mask* of the
         * format term (perf's intel_pt_info_fill: intel_pt_parse_terms(pmu, "tsc", &tsc_bit);
         * its decoder tests attr.config & tsc_bit); _MTC_FREQ_BITS the mask of mtc_period */
        if (a.config & priv[5])
            cfg->flags |= PTC_PT_F_TSC;
        if (a.config & priv[6])
            cfg->flags |= PTC_PT_F_NORETCOMP;
        if (a.config & priv[10])
            cfg->flags |= PTC_PT_F_MTC;
        if (a.config & priv[14])
            cfg->flags |= PTC_PT_F_CYC;
        if (priv[11]) {
            uint64_t f = (a.config & priv[11]) >> __builtin_ctzll(priv[11]);
            /* IA32_RTIT_CTL.MTCFreq is 4 bits: more is damage, which the decoder would
             * refuse in the trace written from it (fuzz_perf_data) */
            if (f > 15) {
                snprintf(x->err, x->err_size,
                         "%s is corrupt: its MTC period (AUXTRACE_INFO mask %#llx of the "
                         "event's config) is %llu, not 0..15",
                         x->path, (unsigned long long)priv[11], (unsigned long long)f);
                return 1;
            }
            cfg->mtc_freq = (uint8_t)f;
        }
    }
    if (priv[8])
        cfg->flags |= PTC_PT_F_SNAPSHOT;
    if (!priv[9])
        cfg->flags |= PTC_PT_F_PER_THREAD;
    x->have_info = 1;
    return 0;
}

/* PERF_RECORD_AUXTRACE at r, its data at data (size bytes, checked to be in the file).
 * Returns 0, 1, or the aux callback's value. */
static int on_auxtrace(struct reader *x, const uint8_t *r, const uint8_t *data, uint64_t size)
{
    uint64_t aoff;
    uint32_t idx, tid, cpu;
    memcpy(&aoff, r + 16, 8);
    memcpy(&idx, r + 32, 4);
    memcpy(&tid, r + 36, 4);
    memcpy(&cpu, r + 40, 4);
    /* per-CPU mode: one buffer per CPU; per-thread mode: cpu is -1 */
    struct asm_buf *ab = NULL;
    for (int i = 0; i < x->nbufs; i++)
        if (x->bufs[i].idx == idx)
            ab = &x->bufs[i];
    if (!ab) {
        if (x->nbufs == MAX_BUFS)
            return fail(x, ": more than 1024 AUX buffers");
        ab = &x->bufs[x->nbufs++];
        memset(ab, 0, sizeof(*ab));
        ab->idx = idx;
        ab->cpu = cpu == UINT32_MAX ? PTC_PT_CPU_THREAD : cpu;
        ab->tid = tid;
        ab->base = aoff;
    }
    return asm_add(x, ab, aoff, data, (size_t)size);
}

/* A kernel record (type < 64, not a sample) at r. Returns 0 or a callback's value. */
static int on_sideband(struct reader *x, const struct perf_event_header *eh, const uint8_t *r)
{
    const struct ptc_perf_data_ops *ops = x->ops;
    uint64_t st = x->info->sample_type;
    size_t tsz = ptc_perf_trailer_size(st);
    struct ptc_perf_sid sid;
    memset(&sid, 0, sizeof(sid));
    if (eh->size >= 8 + tsz)
        ptc_perf_parse_trailer(r + eh->size - tsz, st, &sid);
    uint32_t cpu = sid.have_cpu ? sid.cpu : 0;
    if (x->info->cfg.flags & PTC_PT_F_PER_THREAD)
        cpu = PTC_PT_CPU_THREAD;
    if (sid.have_tid)
        note_tid(x, sid.pid, sid.tid);
    int rc = 0;
    if (eh->type == PERF_RECORD_MMAP2 && eh->size > 72) {
        struct ptc_perf_mmap m;
        memcpy(&m.pid, r + 8, 4);
        memcpy(&m.addr, r + 16, 8);
        memcpy(&m.len, r + 24, 8);
        memcpy(&m.pgoff, r + 32, 8);
        memcpy(&m.prot, r + 64, 4);
        char file[PATH_MAX];
        size_t fl = (size_t)(eh->size - 72) < sizeof(file) - 1 ? (size_t)(eh->size - 72)
                                                               : sizeof(file) - 1;
        memcpy(file, r + 72, fl);
        file[fl] = 0;
        m.file = file;
        if ((m.prot & PROT_EXEC) && file[0] == '/')
            rc = ops->mmap(ops->ctx, &m);
    }
    if (eh->type == PERF_RECORD_FORK && eh->size >= 8 + 24) {
        uint32_t v[4];
        memcpy(v, r + 8, 16);
        if (v[0] != v[1] && v[2] == v[0])
            rc = ops->fork(ops->ctx, v[0], v[1], v[3]);
    }
    if (!rc)
        rc = ops->sideband(ops->ctx, cpu, r, eh->size);
    x->info->sideband++;
    return rc;
}

static int walk(struct reader *x)
{
    const struct perf_file_header *h = &x->h;
    uint64_t off = h->data.offset, end = h->data.offset + h->data.size;
    int rc = 0;
    while (off + 8 <= end && !rc) {
        struct perf_event_header eh;
        memcpy(&eh, x->f + off, sizeof(eh));
        if (eh.size < 8)
            return fail_at(x, "a record is shorter than its 8-byte header", off);
        if (eh.size > end - off)
            return fail_at(x, "a record's size runs past the data section", off);
        const uint8_t *r = x->f + off;
        uint64_t next = off + eh.size;
        if (eh.type == PERF_AUXTRACE_INFO && eh.size >= 16 + 8 * 16) {
            rc = on_auxtrace_info(x, r, eh.size);
        } else if (eh.type == PERF_AUXTRACE && eh.size >= 48) {
            uint64_t size;
            memcpy(&size, r + 8, 8);
            if (size > end - next)
                return fail_at(x, "an AUXTRACE record's data runs past the data section", off);
            rc = on_auxtrace(x, r, x->f + next, size);
            next += size; /* the data is not counted in header.size */
            x->info->auxtrace++;
            x->info->aux_bytes += size;
        } else if (eh.type == PERF_COMPRESSED) {
            return fail(x, " was recorded with -z (compressed records): record it again "
                           "without -z");
        } else if (eh.type < 64 && eh.type != PERF_RECORD_SAMPLE) {
            rc = on_sideband(x, &eh, r);
        }
        off = next;
    }
    return rc;
}

/* The header and attribute table of the file in x->f. Returns 0 or 1. */
static int read_header(struct reader *x)
{
    struct perf_file_header *h = &x->h;
    if (x->len < 16 || memcmp(x->f, "PERFILE2", 8))
        return fail(x, " is not a perf.data file (no PERFILE2 magic)");
    uint64_t hsize;
    memcpy(&hsize, x->f + 8, 8);
    if (hsize == 16) /* perf record -o - writes a 16-byte header and no sections */
        return fail(x, " was written in pipe mode (perf record -o -), which import does not "
                       "read: record to a file (perf record -o FILE)");
    if (x->len < sizeof(*h))
        return fail(x, " is truncated: shorter than a perf.data header");
    memcpy(h, x->f, sizeof(*h));
    /* sections inside the file, in a form that cannot overflow */
    if (h->attrs.offset > x->len || h->attrs.size > x->len - h->attrs.offset ||
        h->data.offset > x->len || h->data.size > x->len - h->data.offset)
        return fail(x, " is truncated or corrupt (sections past the end of the file)");
    if (h->attr_size < PERF_ATTR_MIN + PERF_FILE_IDS_SIZE || h->attr_size > 4096 ||
        h->attrs.size % h->attr_size) {
        snprintf(x->err, x->err_size,
                 "%s is corrupt: its attribute table has %llu-byte entries and %llu bytes (an "
                 "entry is a perf_event_attr of at least 64 bytes and 16 bytes of ids)",
                 x->path, (unsigned long long)h->attr_size, (unsigned long long)h->attrs.size);
        return 1;
    }
    x->nattr = h->attrs.size / h->attr_size;
    return 0;
}

int ptc_perf_data_parse(const uint8_t *buf, size_t len, const char *name,
                        const struct ptc_perf_data_ops *ops, struct ptc_perf_data_info *info,
                        char *err, size_t err_size)
{
    memset(info, 0, sizeof(*info));
    info->cfg.size = sizeof(info->cfg);
    err[0] = 0;
    struct reader *x = calloc(1, sizeof(*x));
    if (!x) {
        snprintf(err, err_size, "out of memory");
        return 1;
    }
    x->ops = ops;
    x->path = name;
    x->info = info;
    x->err = err;
    x->err_size = err_size;
    x->f = buf;
    x->len = len;
    int rc = read_header(x);
    if (!rc)
        rc = read_sample_type(x);
    if (!rc) {
        read_cpuid(x);
        rc = walk(x);
    }
    for (int i = 0; i < x->nbufs; i++) {
        if (!rc)
            rc = asm_flush(x, &x->bufs[i]);
        free(x->bufs[i].v);
    }
    if (!rc && !x->have_info)
        rc = fail(x, " holds no PERF_RECORD_AUXTRACE_INFO: it was not recorded with an "
                     "intel_pt event");
    free(x);
    return rc;
}

int ptc_perf_data_read(const char *path, const struct ptc_perf_data_ops *ops,
                       struct ptc_perf_data_info *info, char *err, size_t err_size)
{
    size_t len;
    uint8_t *f = ptc_read_whole_file(path, &len);
    if (!f) {
        memset(info, 0, sizeof(*info));
        snprintf(err, err_size, "cannot read %s: %s", path, strerror(errno));
        return 1;
    }
    int rc = ptc_perf_data_parse(f, len, path, ops, info, err, err_size);
    free(f);
    return rc;
}
