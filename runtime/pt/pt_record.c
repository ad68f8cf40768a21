/* record_pt() and pt_available() (ptc_record_options.h): `ptcall record --backend pt`.
 *
 * Like `perf record -e intel_pt//u -- cmd`: fork the command and hold it on a pipe; open
 * one intel_pt event and one dummy tracking event per CPU for the child (inherit=1,
 * disabled, enable_on_exec); map a data ring and an AUX area per CPU; put the dummy's
 * records in the PT event's ring; set the address filters (one range per instrumented
 * module: its ptcall_stubs section, as a file offset); release the child; drain the rings
 * while it runs; write trace chunks (docs/trace-format-pt.md). See docs/pt.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_map_read.h"
#include "ptc_pt_rec.h"
#include "ptc_rusage.h"
#include "ptc_select.h"
#include "ptc_seqtab.h"
#include "ptcall/trace_format_pt.h"

const char *ptc_pt_advice(const char *what, int err)
{
    (void)what;
    switch (err) {
    case EACCES:
    case EPERM:
        return "not allowed: lower /proc/sys/kernel/perf_event_paranoid to 2 or less "
               "(sysctl kernel.perf_event_paranoid=2), or give ptcall CAP_PERFMON";
    case ENOMEM:
        return "not enough lockable memory: raise /proc/sys/kernel/perf_event_mlock_kb (or "
               "ulimit -l), or ask for a smaller --buffer";
    case EBUSY:
        return "another Intel PT (or LBR/BTS) user holds the hardware: stop it and retry";
    case ENOENT:
    case ENODEV:
        return "no Intel PT event on this machine: use --backend soft";
    case EOPNOTSUPP:
        return "the address filters were refused (too many ranges, or a CPU-wide event): "
               "trace fewer modules";
    case EINVAL:
        return "the kernel rejected the configuration (a format term or caps value it does "
               "not accept, or a buffer size that is not a power of two pages)";
    default:
        return "see docs/pt.md";
    }
}

int pt_available(char *why, size_t why_size)
{
    struct ptc_pt_pmu pmu;
    if (ptc_pt_pmu_read(ptc_pt_sysfs_root(), &pmu, why, why_size))
        return 0;
    if (pmu.nr_addr_filters <= 0 || pmu.num_address_ranges == 0) {
        snprintf(why, why_size,
                 "this CPU's Intel PT has no IP filtering (caps/num_address_ranges = %lld): "
                 "ptcall needs an address filter on the stub section; use --backend soft",
                 (long long)(pmu.num_address_ranges < 0 ? 0 : pmu.num_address_ranges));
        return 0;
    }
    if (why_size)
        snprintf(why, why_size, "Intel PT with %lld address range(s)",
                 (long long)pmu.nr_addr_filters);
    return 1;
}

/* ---- state ------------------------------------------------------------------------- */

struct rcpu {
    int cpu;
    int fd_pt, fd_dummy;
    void *ring;
    size_t ring_len;
    void *aux;
    struct ptc_pt_aux_ring ar;
    struct ptc_pt_data_ring *dr;
    int truncated;        /* a TRUNCATED AUX record was seen: re-enable after draining */
    struct ptc_pt_snap snap; /* snapshot mode: where the last snapshot ended */
    uint8_t *sb;          /* sideband records collected since the last chunk */
    size_t sb_n, sb_cap;
};

struct rproc {
    uint32_t pid;
    uint32_t next_module, next_stub;
    struct { char path[256]; uint64_t bias; } seen[32];
    int nseen;
};

struct rec {
    const struct record_options *o;
    int out;
    struct ptc_trace_path made; /* whether record created out (only then may it remove it) */
    uint32_t seq0;
    struct rcpu *cpus;
    int ncpus;
    struct ptc_pt_module_req *mods;
    int nmods;
    struct rproc procs[256];
    int nprocs;
    struct ptc_seqtab seq; /* per (pid, tid) chunk stream */
    uint64_t lost_records;
    uint64_t truncations;  /* AUX buffers that filled up: trace data lost */
    uint64_t write_errors; /* chunks that could not be written */
    int quiet;
    int max_ranges;
    uint64_t rounds;      /* PT_ROUND chunks written */
    uint64_t since_round; /* chunks written since the last PT_ROUND */
    char filter[8192];
    char checked[64][256]; /* executables already looked at for a ptcall_stubs section */
    int nchecked;
    struct ptc_select sel; /* --only / --skip: what the runtime arms */
    char sel_spec[1024];
};

static volatile sig_atomic_t snapshot_req, stop_req;
static void on_usr2(int s) { (void)s; snapshot_req = 1; }
static void on_int(int s) { (void)s; stop_req = 1; }

static long sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
                                unsigned long flags)
{
    return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static int chunk_flags(struct rec *r, uint16_t type, uint16_t flags, uint32_t pid,
                       uint32_t tid, const struct iovec *parts, int n)
{
    uint32_t seq;
    if (ptc_seq_next(&r->seq, pid, tid, &seq)) {
        fprintf(stderr, "ptcall record: out of memory numbering the chunks of %u/%u\n", pid, tid);
        return -1;
    }
    int e = ptc_write_chunk(r->out, type, flags, pid, tid, seq, parts, n);
    r->since_round++;
    if (e < 0 && r->write_errors++ == 0)
        fprintf(stderr, "ptcall record: writing %s: %s\n", r->o->output, strerror(-e));
    return e;
}

static int chunk(struct rec *r, uint16_t type, uint32_t pid, uint32_t tid,
                 const struct iovec *parts, int n)
{
    return chunk_flags(r, type, 0, pid, tid, parts, n);
}

static struct rproc *proc_of(struct rec *r, uint32_t pid)
{
    for (int i = 0; i < r->nprocs; i++)
        if (r->procs[i].pid == pid)
            return &r->procs[i];
    if (r->nprocs == 256)
        return NULL;
    struct rproc *p = &r->procs[r->nprocs++];
    memset(p, 0, sizeof(*p));
    p->pid = pid;
    return p;
}

/* With --only/--skip: the MODULE_ARMED chunk of module m of process pid (its MODULE chunk
 * was just written), computed from the file as the runtime arms it. */
static void write_armed(struct rec *r, uint32_t pid, const struct ptc_pt_module_req *m,
                        uint64_t bias, uint32_t module_id)
{
    if (!ptc_select_active(&r->sel))
        return;
    void *buf = NULL;
    char why[512];
    long n = ptc_pt_build_armed(m->path, &m->sec, bias, module_id, &r->sel, r->sel_spec, &buf,
                                why, sizeof(why));
    if (n < 0) {
        fprintf(stderr, "ptcall record: %s; the trace will not say which of its functions "
                        "were left out\n", why);
        return;
    }
    struct iovec iov = {buf, (size_t)n};
    chunk_flags(r, PTC_CHUNK_MODULE_ARMED, PTC_CHUNK_F_OPTIONAL, pid, 0, &iov, 1);
    free(buf);
}

/* An executable mapping of an instrumented module appeared in process pid: write its
 * MODULE chunk (map read from the file, run-time addresses from the mapping). */
/* Whether file is one of the instrumented objects the recording looks for */
static int mapped_file_is_instrumented(const struct rec *r, const char *file)
{
    for (int i = 0; i < r->nmods; i++)
        if (!strcmp(r->mods[i].path, file) && r->mods[i].sec.has_stubs)
            return 1;
    return 0;
}

static void on_mmap2(struct rec *r, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
                     const char *file)
{
    for (int i = 0; i < r->nmods; i++) {
        struct ptc_pt_module_req *m = &r->mods[i];
        if (strcmp(m->path, file) || !m->sec.has_stubs || !m->sec.has_map)
            continue;
        if (m->sec.stubs_offset < pgoff || m->sec.stubs_offset >= pgoff + len)
            continue; /* not the mapping that holds the stubs */
        uint64_t stubs_rt = addr + (m->sec.stubs_offset - pgoff);
        uint64_t bias = stubs_rt - m->sec.stubs_addr;
        struct rproc *p = proc_of(r, pid);
        if (!p)
            return;
        for (int k = 0; k < p->nseen; k++)
            if (p->seen[k].bias == bias && !strncmp(p->seen[k].path, file, 255))
                return;
        if (p->nseen < 32) {
            snprintf(p->seen[p->nseen].path, 256, "%s", file);
            p->seen[p->nseen++].bias = bias;
        }
        void *buf = NULL;
        uint32_t nst = 0;
        char why[512];
        /* untimed, a launched program's runtime leaves leaves' exits unarmed (cmd_record.c
         * sets PTCALL_TIMESTAMPS=0): their entries are whole calls (issue 28, PT) */
        unsigned fl = pt_leaf_calls(r->o) ? PTC_MAP_BUILD_LEAF_CALLS : 0;
        long n = ptc_pt_build_module_flags(file, &m->sec, bias, p->next_module, p->next_stub, fl,
                                           &buf, &nst, why, sizeof(why));
        if (n < 0) {
            fprintf(stderr, "ptcall record: %s; its calls will show as unknown stubs\n", why);
            return;
        }
        struct iovec iov = {buf, (size_t)n};
        chunk(r, PTC_CHUNK_MODULE, pid, 0, &iov, 1);
        struct ptc_pt_stubs st = {.module_id = p->next_module,
                                  .stubs_start = m->sec.stubs_addr + bias,
                                  .stubs_end = m->sec.stubs_addr + bias + m->sec.stubs_size};
        struct iovec iv2 = {&st, sizeof(st)};
        chunk(r, PTC_CHUNK_PT_STUBS, pid, 0, &iv2, 1);
        write_armed(r, pid, m, bias, p->next_module);
        p->next_module++;
        p->next_stub += nst;
        free(buf);
    }
}

static int sb_append(struct rcpu *c, const void *p, size_t n)
{
    if (c->sb_n + n > c->sb_cap) {
        size_t cap = c->sb_cap ? c->sb_cap * 2 : 65536;
        while (cap < c->sb_n + n)
            cap *= 2;
        void *v = realloc(c->sb, cap);
        if (!v)
            return -1;
        c->sb = v;
        c->sb_cap = cap;
    }
    memcpy(c->sb + c->sb_n, p, n);
    c->sb_n += n;
    return 0;
}

struct rctx { struct rec *r; struct rcpu *c; };

/* An executable mapping of a file the recorder did not know (a shared library loaded by
 * ld.so or dlopen): if it is instrumented, give it an address range if one is free and
 * re-set the filters (the kernel resolves them against the existing mappings). */
static void maybe_new_module(struct rec *r, const char *file)
{
    if (file[0] != '/')
        return;
    for (int i = 0; i < r->nmods; i++)
        if (!strcmp(r->mods[i].path, file))
            return;
    for (int i = 0; i < r->nchecked; i++)
        if (!strncmp(r->checked[i], file, 255))
            return;
    if (r->nchecked < 64)
        snprintf(r->checked[r->nchecked++], 256, "%s", file);
    struct ptc_pt_elf_sections sec;
    char why[512];
    if (ptc_pt_elf_sections(file, &sec, why, sizeof(why)) || !sec.has_stubs)
        return;
    void *v = realloc(r->mods, (size_t)(r->nmods + 1) * sizeof(*r->mods));
    if (!v)
        return;
    r->mods = v;
    struct ptc_pt_module_req *m = &r->mods[r->nmods++];
    memset(m, 0, sizeof(*m));
    snprintf(m->path, sizeof(m->path), "%s", file);
    m->sec = sec;
    char f[sizeof(r->filter)];
    int n = ptc_pt_filter_string(r->mods, r->nmods, r->max_ranges, f, sizeof(f));
    if (n < 0 || !m->traced) {
        fprintf(stderr, "ptcall record: %s (mapped while running) is NOT traced: this CPU has %d "
                        "address range(s) and they are all used (name fewer modules, or use "
                        "--backend soft)\n",
                file, r->max_ranges);
        return;
    }
    int ok = 1;
    for (int i = 0; i < r->ncpus; i++)
        if (ioctl(r->cpus[i].fd_pt, PERF_EVENT_IOC_SET_FILTER, f))
            ok = 0;
    if (ok) {
        snprintf(r->filter, sizeof(r->filter), "%s", f);
        if (!r->quiet)
            fprintf(stderr, "ptcall record: tracing %s too (found when it was mapped; calls "
                            "before that are not traced)\n",
                    file);
    } else {
        fprintf(stderr, "ptcall record: adding %s to the address filter failed (%s): %s\n",
                file, strerror(errno), ptc_pt_advice("filter", errno));
        m->traced = 0;
    }
}

static int on_record(void *ctx, const struct perf_event_header *h, const void *rec)
{
    struct rctx *x = ctx;
    const uint8_t *p = rec;
    if (h->type == PERF_RECORD_MMAP2 && h->size >= sizeof(*h) + 8 + 24 + 24 + 8) {
        uint32_t pid;
        uint64_t addr, len, pgoff;
        uint32_t prot;
        memcpy(&pid, p + 8, 4);
        memcpy(&addr, p + 16, 8);
        memcpy(&len, p + 24, 8);
        memcpy(&pgoff, p + 32, 8);
        memcpy(&prot, p + 64, 4);
        const char *file = (const char *)p + 72;
        if ((prot & PROT_EXEC) && memchr(file, 0, h->size - 72)) {
            maybe_new_module(x->r, file);
            on_mmap2(x->r, pid, addr, len, pgoff, file);
        }
    } else if (h->type == PERF_RECORD_AUX && h->size >= sizeof(*h) + 24) {
        uint64_t flags;
        memcpy(&flags, p + 24, 8);
        if (flags & PERF_AUX_FLAG_TRUNCATED)
            x->c->truncated = 1;
    } else if (h->type == PERF_RECORD_FORK && h->size >= sizeof(*h) + 24) {
        /* a new process: the session starts its stack from the parent's at the fork point
         * and gives it the parent's module tables */
        uint32_t v[4];
        memcpy(v, p + 8, 16);
        if (v[0] != v[1] && v[2] == v[0]) {
            struct ptc_process pr = {.ppid = v[1], .how = PTC_PROC_FORK, .parent_tid = v[3]};
            struct iovec iov = {&pr, sizeof(pr)};
            chunk(x->r, PTC_CHUNK_PROCESS, v[0], 0, &iov, 1);
        }
    } else if (h->type == PERF_RECORD_LOST) {
        uint64_t lost = 0;
        memcpy(&lost, p + 16, 8);
        x->r->lost_records += lost;
    }
    return sb_append(x->c, rec, h->size);
}

static int aux_sink(void *ctx, uint64_t off, const void *p, size_t n)
{
    struct rctx *x = ctx;
    struct ptc_pt_aux a = {.cpu = (uint32_t)x->c->cpu, .offset = off,
                           .flags = x->r->o->snapshot ? PTC_PT_AUX_F_SNAPSHOT : 0};
    /* chunks of at most 1 MiB */
    const uint8_t *b = p;
    while (n) {
        size_t k = n > (1u << 20) ? (1u << 20) : n;
        struct iovec iov[2] = {{&a, sizeof(a)}, {(void *)b, k}};
        if (chunk(x->r, PTC_CHUNK_PT_AUX, 0, 0, iov, 2))
            return -1;
        a.offset += k;
        b += k;
        n -= k;
    }
    return 0;
}

static void flush_sideband(struct rec *r, struct rcpu *c)
{
    if (!c->sb_n)
        return;
    struct ptc_pt_sideband sb = {.cpu = (uint32_t)c->cpu,
                                 .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                                PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER};
    struct iovec iov[2] = {{&sb, sizeof(sb)}, {c->sb, c->sb_n}};
    chunk(r, PTC_CHUNK_PT_SIDEBAND, 0, 0, iov, 2);
    c->sb_n = 0;
}

static void drain_cpu(struct rec *r, struct rcpu *c, int final)
{
    struct rctx x = {r, c};
    ptc_pt_data_drain(c->dr, on_record, &x);
    if (!r->o->snapshot) {
        ptc_pt_aux_drain(&c->ar, aux_sink, &x);
        if (c->truncated) {
            /* the buffer was full: data was lost and the kernel disabled the event */
            uint64_t at = c->ar.pc->aux_tail;
            struct ptc_pt_gap g = {.cpu = (uint32_t)c->cpu, .kind = PTC_PT_GAP_TRUNCATED,
                                   .offset = at};
            static const char note[] = "AUX buffer full: raise --buffer";
            struct iovec iov[2] = {{&g, sizeof(g)}, {(void *)note, sizeof(note)}};
            chunk(r, PTC_CHUNK_PT_GAP, 0, 0, iov, 2);
            r->truncations++;
            c->truncated = 0;
            if (!final)
                ioctl(c->fd_pt, PERF_EVENT_IOC_ENABLE, 0);
        }
    }
    flush_sideband(r, c);
}

/* PT_ROUND (trace_format_pt.h): written after a pass that drained the data ring and the
 * AUX area of every CPU, so that a decoder can feed what is safe and drop it (bounded
 * memory) instead of holding the whole trace. Optional: older decoders skip it. */
static void write_round(struct rec *r)
{
    if (!r->since_round)
        return; /* an idle pass: nothing to mark */
    struct ptc_pt_round rd = {.size = sizeof(rd), .version = PTC_PT_ROUND_VERSION,
                              .seq = r->rounds++};
    struct iovec iov = {&rd, sizeof(rd)};
    chunk_flags(r, PTC_CHUNK_PT_ROUND, PTC_CHUNK_F_OPTIONAL, 0, 0, &iov, 1);
    r->since_round = 0;
}

static void take_snapshot(struct rec *r)
{
    for (int i = 0; i < r->ncpus; i++)
        ioctl(r->cpus[i].fd_pt, PERF_EVENT_IOC_DISABLE, 0);
    for (int i = 0; i < r->ncpus; i++) {
        struct rcpu *c = &r->cpus[i];
        struct rctx x = {r, c};
        uint64_t at = c->ar.copied;
        int gap = 0;
        ptc_pt_aux_snapshot_next(&c->ar, &c->snap, aux_sink, &x, &gap);
        if (gap) { /* written before the data (the decoder sorts breaks by position) */
            struct ptc_pt_gap g = {.cpu = (uint32_t)c->cpu, .kind = PTC_PT_GAP_SNAPSHOT,
                                   .offset = at};
            static const char note[] = "snapshot: what ran before it is unknown";
            struct iovec iov[2] = {{&g, sizeof(g)}, {(void *)note, sizeof(note)}};
            chunk(r, PTC_CHUNK_PT_GAP, 0, 0, iov, 2);
        }
    }
    for (int i = 0; i < r->ncpus; i++)
        ioctl(r->cpus[i].fd_pt, PERF_EVENT_IOC_ENABLE, 0);
}

/* Was process pid started armed (PTCALL_ARM=1 or PTCALL_BACKEND=pt in its initial
 * environment)? Then it stays armed after we detach. 1 yes, 0 no, -1 unknown. */
static int attach_target_armed(int pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/environ", pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    char var[256];
    size_t n = 0;
    int c, armed = 0;
    while ((c = fgetc(f)) != EOF && !armed) {
        if (c) {
            if (n < sizeof(var) - 1)
                var[n++] = (char)c;
            continue;
        }
        var[n] = 0;
        armed = !strcmp(var, "PTCALL_ARM=1") || !strcmp(var, "PTCALL_BACKEND=pt");
        n = 0;
    }
    fclose(f);
    return armed;
}

static int resolve_exe(const char *cmd, char *out, size_t n)
{
    char tmp[PATH_MAX];
    if (strchr(cmd, '/')) {
        if (!realpath(cmd, tmp))
            return -1;
    } else {
        const char *path = getenv("PATH");
        if (!path)
            path = "/usr/bin:/bin";
        int found = 0;
        while (*path && !found) {
            const char *c = strchr(path, ':');
            size_t l = c ? (size_t)(c - path) : strlen(path);
            char cand[PATH_MAX];
            snprintf(cand, sizeof(cand), "%.*s/%s", (int)l, path, cmd);
            if (!access(cand, X_OK) && realpath(cand, tmp))
                found = 1;
            path += l + (c ? 1 : 0);
        }
        if (!found)
            return -1;
    }
    snprintf(out, n, "%s", tmp);
    return 0;
}

/* What a failed record_pt() leaves: nothing. The buffers and tables it made are freed, and
 * the trace file it created is removed rather than left behind half written (the command
 * did not run, or its recording could not start). Returns -1. */
static int rec_abort(struct rec *r)
{
    for (int i = 0; r->cpus && i < r->ncpus; i++) {
        struct rcpu *c = &r->cpus[i];
        munmap(c->aux, c->ar.size);
        munmap(c->ring, c->ring_len);
        close(c->fd_pt);
        close(c->fd_dummy);
        free(c->dr);
        free(c->sb);
    }
    free(r->cpus);
    free(r->mods);
    r->cpus = NULL;
    r->mods = NULL;
    ptc_seq_free(&r->seq);
    if (r->out > 0) {
        close(r->out);
        ptc_remove_created_trace(r->o->output ? r->o->output : "ptcall.ptc", &r->made);
        r->out = -1;
    }
    return -1;
}

int record_pt(const struct record_options *o, int *wait_status)
{
    char why[512];
    struct ptc_pt_pmu pmu;
    struct rec R;
    memset(&R, 0, sizeof(R));
    struct rec *r = &R;
    r->o = o;
    r->quiet = o->quiet;
    if (o->num_only > PTC_SELECT_MAX || o->num_skip > PTC_SELECT_MAX) {
        fprintf(stderr, "ptcall record: at most %d --only and %d --skip globs\n", PTC_SELECT_MAX,
                PTC_SELECT_MAX);
        return -1;
    }
    for (int i = 0; i < o->num_only; i++)
        r->sel.only[r->sel.nonly++] = o->only[i];
    for (int i = 0; i < o->num_skip; i++)
        r->sel.skip[r->sel.nskip++] = o->skip[i];
    ptc_select_describe(&r->sel, r->sel_spec, sizeof(r->sel_spec));
    if (ptc_pt_pmu_read(ptc_pt_sysfs_root(), &pmu, why, sizeof(why))) {
        fprintf(stderr, "ptcall record: %s\n", why);
        return -1;
    }
    if (!pt_available(why, sizeof(why))) {
        fprintf(stderr, "ptcall record: %s\n", why);
        return -1;
    }
    struct ptc_pt_attr_req req = {.timing = o->timing, .snapshot = o->snapshot,
                                  .mtc_period = -1, .psb_period = -1, .cyc_thresh = -1};
    struct ptc_pt_attrs at;
    if (ptc_pt_build_attrs(&pmu, &req, o->attach_pid > 0, &at, why, sizeof(why))) {
        fprintf(stderr, "ptcall record: %s\n", why);
        return -1;
    }
    /* modules: the program, then --module PATH */
    int cap = 1 + o->num_modules;
    r->mods = calloc((size_t)cap, sizeof(*r->mods));
    if (!r->mods)
        return rec_abort(r);
    char exe[PATH_MAX];
    int armed_here = 0; /* --pid: we armed the target's call sites (undo at the end) */
    if (o->attach_pid > 0) {
        char l[64];
        snprintf(l, sizeof(l), "/proc/%d/exe", o->attach_pid);
        ssize_t k = readlink(l, exe, sizeof(exe) - 1);
        if (k < 0) {
            fprintf(stderr, "ptcall record: --pid %d: %s\n", o->attach_pid, strerror(errno));
            return rec_abort(r);
        }
        exe[k] = 0;
    } else if (!o->argv || !o->argv[0] || resolve_exe(o->argv[0], exe, sizeof(exe))) {
        fprintf(stderr, "ptcall record: cannot find the command '%s'\n",
                o->argv && o->argv[0] ? o->argv[0] : "");
        return rec_abort(r);
    }
    snprintf(r->mods[r->nmods++].path, PATH_MAX, "%s", exe);
    for (int i = 0; i < o->num_modules; i++) {
        char rp[PATH_MAX];
        if (!realpath(o->modules[i], rp)) {
            fprintf(stderr, "ptcall record: --module %s: %s\n", o->modules[i], strerror(errno));
            return rec_abort(r);
        }
        snprintf(r->mods[r->nmods++].path, PATH_MAX, "%s", rp);
    }
    int with_stubs = 0;
    for (int i = 0; i < r->nmods; i++) {
        if (ptc_pt_elf_sections(r->mods[i].path, &r->mods[i].sec, why, sizeof(why))) {
            fprintf(stderr, "ptcall record: %s\n", why);
            return rec_abort(r);
        }
        with_stubs += r->mods[i].sec.has_stubs;
        if (!r->mods[i].sec.has_stubs && !r->quiet)
            fprintf(stderr, "ptcall record: note: %s has no ptcall_stubs section (not built "
                            "with ptcall-cc): nothing in it is traced\n",
                    r->mods[i].path);
    }
    if (!with_stubs) {
        fprintf(stderr, "ptcall record: no instrumented module (none has a ptcall_stubs "
                        "section): build the program with ptcall-cc, or name instrumented "
                        "libraries with --module PATH\n");
        return rec_abort(r);
    }
    char *filter = r->filter;
    r->max_ranges = (int)pmu.nr_addr_filters;
    int nf = ptc_pt_filter_string(r->mods, r->nmods, r->max_ranges, filter, sizeof(r->filter));
    if (nf < 0) {
        fprintf(stderr, "ptcall record: the address filter string is too long\n");
        return rec_abort(r);
    }
    for (int i = 0; i < r->nmods; i++)
        if (r->mods[i].sec.has_stubs && !r->mods[i].traced)
            fprintf(stderr, "ptcall record: %s is NOT traced: this CPU has %lld address "
                            "range(s) and they are all used (trace fewer modules, or use "
                            "--backend soft)\n",
                    r->mods[i].path, (long long)pmu.nr_addr_filters);

    /* buffers */
    long page = sysconf(_SC_PAGESIZE);
    uint64_t aux = o->buffer_size ? o->buffer_size : (geteuid() == 0 ? (4u << 20) : (128u << 10));
    uint64_t pages = (aux + (uint64_t)page - 1) / (uint64_t)page;
    uint64_t p2 = 1;
    while (p2 < pages)
        p2 <<= 1;
    aux = p2 * (uint64_t)page;
    size_t data_pages = 16;
    at.pt.aux_watermark = (uint32_t)(aux / 4);

    r->out = ptc_create_trace(o->output ? o->output : "ptcall.ptc", &r->made);
    if (r->out < 0 || fcntl(r->out, F_SETFL, O_APPEND)) {
        char why[PATH_MAX + 200];
        ptc_create_trace_error(why, sizeof(why), o->output ? o->output : "ptcall.ptc", errno);
        fprintf(stderr, "ptcall record: %s\n", why);
        return rec_abort(r);
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct ptc_file_header fh;
    ptc_file_header_init(&fh, PTC_BACKEND_PT, o->timing != TIMING_NONE ? PTC_FILE_F_TIMED : 0,
                         (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
    if (write(r->out, &fh, sizeof(fh)) != (ssize_t)sizeof(fh)) {
        fprintf(stderr, "ptcall record: writing %s: %s\n", o->output, strerror(errno));
        return rec_abort(r);
    }

    /* the child, held on a pipe until the events exist; its wall and CPU time from here
     * (RECORD_END, as the soft backend's record writes them) */
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    uint64_t cpu_before = ptc_children_cpu_ns();
    int go[2] = {-1, -1};
    pid_t pid = o->attach_pid;
    if (pid <= 0) {
        if (pipe2(go, O_CLOEXEC)) {
            perror("ptcall record: pipe");
            return rec_abort(r);
        }
        pid = fork();
        if (pid < 0) {
            perror("ptcall record: fork");
            return rec_abort(r);
        }
        if (pid == 0) {
            char c;
            close(go[1]);
            if (read(go[0], &c, 1) != 1)
                _exit(127); /* the recorder gave up */
            execvp(o->argv[0], o->argv);
            fprintf(stderr, "ptcall record: cannot run %s: %s\n", o->argv[0], strerror(errno));
            _exit(127);
        }
        close(go[0]);
    }
    int ncpu = (int)sysconf(_SC_NPROCESSORS_CONF);
    r->cpus = calloc((size_t)ncpu, sizeof(*r->cpus));
    int fail = 0;
    for (int cpu = 0; cpu < ncpu && !fail; cpu++) {
        struct rcpu *c = &r->cpus[r->ncpus];
        c->cpu = cpu;
        long fd = sys_perf_event_open(&at.pt, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0 && (errno == ENODEV || errno == EINVAL) && cpu > 0)
            continue; /* offline CPU */
        if (fd < 0) {
            fprintf(stderr, "ptcall record: perf_event_open(intel_pt, cpu %d): %s: %s\n", cpu,
                    strerror(errno), ptc_pt_advice("open", errno));
            fail = 1;
            break;
        }
        c->fd_pt = (int)fd;
        c->ring_len = (size_t)(1 + data_pages) * (size_t)page;
        c->ring = mmap(NULL, c->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd_pt, 0);
        if (c->ring == MAP_FAILED) {
            fprintf(stderr, "ptcall record: mapping the data ring of cpu %d: %s: %s\n", cpu,
                    strerror(errno), ptc_pt_advice("mmap", errno == EPERM ? ENOMEM : errno));
            fail = 1;
            break;
        }
        struct perf_event_mmap_page *pc = c->ring;
        pc->aux_offset = pc->data_offset + pc->data_size;
        pc->aux_size = aux;
        c->aux = mmap(NULL, aux, PROT_READ | (o->snapshot ? 0 : PROT_WRITE), MAP_SHARED,
                      c->fd_pt, (off_t)pc->aux_offset);
        if (c->aux == MAP_FAILED) {
            fprintf(stderr, "ptcall record: mapping a %llu KiB AUX area on cpu %d: %s: %s\n",
                    (unsigned long long)(aux >> 10), cpu, strerror(errno),
                    ptc_pt_advice("mmap", errno == EPERM ? ENOMEM : errno));
            fail = 1;
            break;
        }
        c->ar.pc = pc;
        c->ar.base = c->aux;
        c->ar.size = aux;
        c->ar.overwrite = o->snapshot;
        c->dr = calloc(1, sizeof(*c->dr));
        c->dr->pc = pc;
        c->dr->base = (uint8_t *)c->ring + pc->data_offset;
        c->dr->size = pc->data_size;
        fd = sys_perf_event_open(&at.dummy, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0 || ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, c->fd_pt)) {
            fprintf(stderr, "ptcall record: the sideband event on cpu %d: %s: %s\n", cpu,
                    strerror(errno), ptc_pt_advice("open", errno));
            fail = 1;
            break;
        }
        c->fd_dummy = (int)fd;
        if (nf > 0 && ioctl(c->fd_pt, PERF_EVENT_IOC_SET_FILTER, filter)) {
            fprintf(stderr, "ptcall record: setting the address filter \"%s\": %s: %s\n", filter,
                    strerror(errno), ptc_pt_advice("filter", errno));
            fail = 1;
            break;
        }
        r->ncpus++;
    }
    if (fail || !r->ncpus) {
        if (o->attach_pid <= 0) {
            close(go[1]); /* the child exits without running the command */
            waitpid(pid, NULL, 0);
        }
        return rec_abort(r);
    }

    /* the config chunk */
    {
        struct ptc_pt_config cfg;
        memset(&cfg, 0, sizeof(cfg));
        cfg.size = sizeof(cfg);
        cfg.flags = at.flags;
        uint32_t intel, eax15, ebx15;
        ptc_pt_cpuid(&cfg.cpu_family, &cfg.cpu_model, &cfg.cpu_stepping, &intel, &eax15, &ebx15);
        cfg.cpu_vendor = intel ? 1 : 0;
        cfg.mtc_freq = at.mtc_freq;
        cfg.cyc_thresh = at.cyc_thresh;
        cfg.psb_period = at.psb_period;
        cfg.nom_freq = (uint8_t)(pmu.max_nonturbo_ratio > 0 ? pmu.max_nonturbo_ratio : 0);
        cfg.cpuid_0x15_eax = pmu.tsc_art_den ? pmu.tsc_art_den : eax15;
        cfg.cpuid_0x15_ebx = pmu.tsc_art_num ? pmu.tsc_art_num : ebx15;
        cfg.pmu_type = pmu.type;
        cfg.num_cpus = (uint32_t)ncpu;
        cfg.config = at.pt.config;
        cfg.sample_type = at.pt.sample_type;
        cfg.aux_size = aux;
        if (!ptc_pt_time_conv(r->cpus[0].ring, &cfg.time_shift, &cfg.time_mult, &cfg.time_zero))
            cfg.flags |= PTC_PT_F_TIME_ZERO;
        struct ptc_pt_filter fl[64];
        char strings[8192];
        size_t sn = 0;
        int n = 0;
        for (int i = 0; i < r->nmods && n < 64; i++) {
            if (!r->mods[i].sec.has_stubs)
                continue;
            fl[n].file_offset = r->mods[i].sec.stubs_offset;
            fl[n].size = r->mods[i].sec.stubs_size;
            fl[n].vaddr = r->mods[i].sec.stubs_addr;
            fl[n].flags = r->mods[i].traced ? PTC_PT_FILTER_ACTIVE : PTC_PT_FILTER_NO_RANGE;
            fl[n].path = (uint32_t)sn;
            int w = snprintf(strings + sn, sizeof(strings) - sn, "%s", r->mods[i].path);
            if (w < 0 || (size_t)w + 1 > sizeof(strings) - sn)
                break;
            sn += (size_t)w + 1;
            n++;
        }
        cfg.num_filters = (uint32_t)n;
        cfg.strings_size = (uint32_t)sn;
        struct iovec iov[3] = {{&cfg, sizeof(cfg)}, {fl, sizeof(fl[0]) * (size_t)n},
                               {strings, sn}};
        chunk(r, PTC_CHUNK_PT_CONFIG, 0, 0, iov, 3);
        if (cfg.flags & PTC_PT_F_TIME_ZERO) {
            struct ptc_timebase tb = {.source = PTC_TIME_PERF_PAGE, .time_shift = cfg.time_shift,
                                      .time_mult = cfg.time_mult, .time_zero = cfg.time_zero};
            struct iovec tv = {&tb, sizeof(tb)};
            chunk(r, PTC_CHUNK_TIMEBASE, 0, 0, &tv, 1);
        }
    }
    {
        struct ptc_process pr = {.ppid = (uint32_t)getpid(),
                                 .how = o->attach_pid > 0 ? PTC_PROC_EXEC : PTC_PROC_START};
        struct iovec iov[2] = {{&pr, sizeof(pr)}, {exe, strlen(exe) + 1}};
        chunk(r, PTC_CHUNK_PROCESS, (uint32_t)pid, 0, iov, 2);
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_int;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    if (o->attach_pid > 0) {
        for (int i = 0; i < r->ncpus; i++) {
            ioctl(r->cpus[i].fd_dummy, PERF_EVENT_IOC_ENABLE, 0);
            ioctl(r->cpus[i].fd_pt, PERF_EVENT_IOC_ENABLE, 0);
        }
        /* modules already mapped: MMAP2 records are only written for new mappings */
        char maps[64], line[8192];
        snprintf(maps, sizeof(maps), "/proc/%d/maps", o->attach_pid);
        FILE *mf = fopen(maps, "r");
        while (mf && fgets(line, sizeof(line), mf)) {
            unsigned long long lo, hi, off, ino;
            unsigned dmaj, dmin;
            char perm[8];
            int at = 0;
            if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &lo, &hi, perm, &off, &dmaj,
                       &dmin, &ino, &at) < 7 || perm[2] != 'x' || line[at] != '/')
                continue;
            char *file = line + at;
            file[strcspn(file, "\n")] = 0;
            /* module information comes from the file: only from the one the process mapped
             * (not a file that replaced it since: other addresses, other stubs) */
            struct stat st;
            size_t fl = strlen(file);
            int deleted = fl > 10 && !strcmp(file + fl - 10, " (deleted)");
            if (deleted || stat(file, &st) != 0 || st.st_ino != ino ||
                major(st.st_dev) != dmaj || minor(st.st_dev) != dmin) {
                if (deleted)
                    file[fl - 10] = 0;
                if (mapped_file_is_instrumented(r, file))
                    fprintf(stderr, "ptcall record: %s was replaced on disk since process %d "
                                    "mapped it: its calls will show as unknown stubs (restart "
                                    "the process to trace them)\n", file, o->attach_pid);
                continue;
            }
            on_mmap2(r, (uint32_t)o->attach_pid, lo, hi - lo, off, file);
        }
        if (mf)
            fclose(mf);
    } else {
        if (write(go[1], "g", 1) != 1) {
            perror("ptcall record: starting the command");
            return rec_abort(r);
        }
        close(go[1]);
    }

    /* --pid: the target's gated call sites must run the stubs. Arm them now that the
     * events are set up; disarm them at the end unless the process was started armed. */
    if (o->attach_pid > 0 && attach_target_armed(o->attach_pid) != 1) {
        char awhy[512];
        int changed = 0, gated = 0;
        if (arm_process(o->attach_pid, 1, &changed, &gated, awhy, sizeof(awhy)) < 0)
            fprintf(stderr, "ptcall record: warning: cannot arm process %d (%s): only code built "
                            "with -fptcall-ungated will be traced; start it with PTCALL_ARM=1\n",
                    o->attach_pid, awhy);
        else
            armed_here = changed > 0;
    }
    struct pollfd *pfd = calloc((size_t)r->ncpus, sizeof(*pfd));
    int status = 0, done = 0;
    while (!done) {
        for (int i = 0; i < r->ncpus; i++) {
            pfd[i].fd = r->cpus[i].fd_pt;
            pfd[i].events = POLLIN;
        }
        poll(pfd, (nfds_t)r->ncpus, 100);
        for (int i = 0; i < r->ncpus; i++)
            drain_cpu(r, &r->cpus[i], 0);
        if (snapshot_req && o->snapshot) {
            snapshot_req = 0;
            take_snapshot(r);
        }
        write_round(r); /* every CPU was drained: the decoder may stream up to here */
        pid_t w = waitpid(pid, &status, WNOHANG | __WALL);
        if (w == pid || (w < 0 && errno == ECHILD) || stop_req) {
            if (o->attach_pid > 0 && w <= 0 && !stop_req)
                continue;
            done = 1;
        }
        if (o->attach_pid > 0 && kill(o->attach_pid, 0) && errno == ESRCH)
            done = 1;
    }
    if (o->snapshot)
        take_snapshot(r);
    for (int i = 0; i < r->ncpus; i++) {
        ioctl(r->cpus[i].fd_pt, PERF_EVENT_IOC_DISABLE, 0);
        drain_cpu(r, &r->cpus[i], 1);
    }
    write_round(r);
    if (armed_here && !kill(o->attach_pid, 0)) {
        char awhy[512];
        if (arm_process(o->attach_pid, 0, NULL, NULL, awhy, sizeof(awhy)) < 0)
            fprintf(stderr, "ptcall record: warning: cannot disarm process %d: %s\n", o->attach_pid,
                    awhy);
    }
    if (r->lost_records) {
        struct ptc_loss l = {.kind = PTC_LOSS_PERF_LOST, .count = r->lost_records};
        static const char note[] = "perf sideband records lost (data ring full)";
        struct iovec iov[2] = {{&l, sizeof(l)}, {(void *)note, sizeof(note)}};
        chunk(r, PTC_CHUNK_LOSS, 0, 0, iov, 2);
    }
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    struct ptc_record_end re = {
        .wait_status = status,
        .wall_ns = (uint64_t)((end.tv_sec - start.tv_sec) * 1000000000ll +
                              (end.tv_nsec - start.tv_nsec)),
        .child_pid = (uint32_t)pid};
    /* an attached process is not our child: its CPU time is not known (0) */
    struct ptc_record_end_cpu cpu = {.cpu_ns = o->attach_pid > 0 ? 0
                                                                 : ptc_children_cpu_ns() - cpu_before};
    struct iovec iov[2] = {{&re, sizeof(re)}, {&cpu, sizeof(cpu)}};
    chunk(r, PTC_CHUNK_RECORD_END, 0, 0, iov, 2);
    for (int i = 0; i < r->ncpus; i++) {
        struct rcpu *c = &r->cpus[i];
        munmap(c->aux, c->ar.size);
        munmap(c->ring, c->ring_len);
        close(c->fd_pt);
        close(c->fd_dummy);
        free(c->dr);
        free(c->sb);
    }
    free(pfd);
    free(r->cpus);
    free(r->mods);
    ptc_seq_free(&r->seq);
    if (close(r->out) != 0 && r->write_errors++ == 0)
        fprintf(stderr, "ptcall record: writing %s: %s\n", o->output, strerror(errno));
    if (wait_status)
        *wait_status = status;
    /* what the trace lacks is said here, and by the status (docs/usage.md, Exit status) */
    if (!r->truncations && !r->lost_records && !r->write_errors)
        return 0;
    fprintf(stderr, "ptcall: the trace is INCOMPLETE: ");
    if (r->truncations)
        fprintf(stderr, "the AUX buffer filled up %llu time%s and trace data was lost there "
                        "(raise --buffer, or trace fewer functions with --only); ",
                (unsigned long long)r->truncations, r->truncations == 1 ? "" : "s");
    if (r->lost_records)
        fprintf(stderr, "%llu sideband records were lost (the data ring was full); ",
                (unsigned long long)r->lost_records);
    if (r->write_errors)
        fprintf(stderr, "%llu chunks could not be written (see above; free space or record "
                        "elsewhere with -o); ",
                (unsigned long long)r->write_errors);
    fprintf(stderr, "what it holds can be read (ptcall report shows the gaps)\n");
    return 1;
}
