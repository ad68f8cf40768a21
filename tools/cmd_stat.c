/* ptcall stat FILE: what a trace holds - chunks, bytes, Intel PT packets by type, stub hits,
 * bytes per hit, gaps and lost bytes, per CPU and per thread; for soft traces records and
 * bytes per thread. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <intel-pt.h>

#include "cli_common.h"
#include "commands.h"
#include "options.h"
#include "stat_funcs.h"
#include "ptc_sorted.h"
#include "ptc_pt_decode.h"
#include "ptcall/trace_format_pt.h"

struct mod { uint32_t pid; uint64_t *addr; uint32_t *id; uint32_t n; };

struct soft_thr { uint32_t pid, tid; uint64_t records, bytes, chunks; };

struct st {
    struct ptc_pt_front *f;
    struct mod *mods;
    size_t nmods;
    struct soft_thr *soft;
    size_t nsoft;
    uint64_t chunks, ctype[64], cbytes[64];
    uint64_t pt_chunks, modules, stubs;
    uint64_t call_stubs;       /* CALL kinds in MODULE chunks: an untimed soft trace */
    uint64_t loss[8], loss_count[8];
    uint32_t processes[4096];
    size_t nproc;
    char **refused;            /* MODULE_REFUSED chunks: "pid P: PATH: REASON" each */
    size_t nrefused;
};

static int lookup(void *ctx, uint32_t pid, uint64_t ip, uint32_t *id)
{
    struct st *s = ctx;
    for (size_t i = s->nmods; i-- > 0;) {
        struct mod *m = &s->mods[i];
        if (m->pid != pid || !m->n || ip < m->addr[0] || ip > m->addr[m->n - 1])
            continue;
        size_t k = ptc_sorted_find(m->addr, m->n, ip);
        if (k < m->n) {
            *id = m->id[k];
            return 0;
        }
    }
    return -1;
}

static int feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    (void)ctx, (void)pid, (void)tid, (void)ev, (void)n;
    return 0; /* the front-end keeps per-thread counts */
}

static int cmp_u64pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static int add_module(struct st *s, uint32_t pid, const uint8_t *p, size_t n)
{
    struct ptc_module m;
    if (n < sizeof(m))
        return -PTC_E_CORRUPT;
    memcpy(&m, p, sizeof(m));
    if ((uint64_t)m.num_stubs * sizeof(struct ptc_module_stub) > n - sizeof(m))
        return -PTC_E_CORRUPT;
    void *v = realloc(s->mods, (s->nmods + 1) * sizeof(*s->mods));
    if (!v)
        return -PTC_E_NOMEM;
    s->mods = v;
    struct mod *md = &s->mods[s->nmods++];
    md->pid = pid;
    md->n = m.num_stubs;
    uint64_t *pairs = malloc((size_t)m.num_stubs * 16 + 16);
    md->addr = malloc((size_t)m.num_stubs * 8 + 8);
    md->id = malloc((size_t)m.num_stubs * 4 + 4);
    if (!pairs || !md->addr || !md->id)
        return -PTC_E_NOMEM;
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        struct ptc_module_stub st;
        memcpy(&st, p + sizeof(m) + (size_t)i * sizeof(st), sizeof(st));
        s->call_stubs += st.kind == PTC_STUB_CALL;
        pairs[2 * i] = st.address;
        pairs[2 * i + 1] = m.first_stub_id + i;
    }
    qsort(pairs, m.num_stubs, 16, cmp_u64pair);
    for (uint32_t i = 0; i < m.num_stubs; i++) {
        md->addr[i] = pairs[2 * i];
        md->id[i] = (uint32_t)pairs[2 * i + 1];
    }
    free(pairs);
    s->modules++;
    s->stubs += m.num_stubs;
    return 0;
}

/* A MODULE_REFUSED chunk: an instrumented object the runtime left untraced. Its sizes are
 * checked as the decoder checks them (docs/trace-format.md 4.16). */
static int add_refused(struct st *s, uint32_t pid, const uint8_t *p, size_t n)
{
    struct ptc_module_refused m;
    if (n < sizeof(m))
        return -PTC_E_CORRUPT;
    memcpy(&m, p, sizeof(m));
    const char *path = (const char *)p + sizeof(m), *reason = path + m.path_size;
    if (m.path_size < 2 || m.path_size > PTC_REFUSED_PATH_MAX || m.reason_size < 2 ||
        m.reason_size > PTC_REFUSED_REASON_MAX ||
        sizeof(m) + (uint64_t)m.path_size + m.reason_size != n ||
        strnlen(path, m.path_size) != m.path_size - 1u ||
        strnlen(reason, m.reason_size) != m.reason_size - 1u)
        return -PTC_E_CORRUPT;
    size_t len = m.path_size + m.reason_size + 32;
    char *line = malloc(len);
    void *v = realloc(s->refused, (s->nrefused + 1) * sizeof(*s->refused));
    if (!line || !v) {
        free(line);
        if (v)
            s->refused = v;
        return -PTC_E_NOMEM;
    }
    s->refused = v;
    snprintf(line, len, "pid %u: %s: %s", pid, path, reason);
    s->refused[s->nrefused++] = line;
    return 0;
}

static void note_process(struct st *s, uint32_t pid)
{
    if (!pid)
        return;
    for (size_t i = 0; i < s->nproc; i++)
        if (s->processes[i] == pid)
            return;
    if (s->nproc < sizeof(s->processes) / sizeof(s->processes[0]))
        s->processes[s->nproc++] = pid;
}

static int on_chunk(void *ctx, const struct ptc_chunk_header *h, const void *payload)
{
    struct st *s = ctx;
    s->chunks++;
    s->ctype[h->type < 64 ? h->type : 0]++;
    s->cbytes[h->type < 64 ? h->type : 0] += h->payload_size;
    note_process(s, h->pid);
    const uint8_t *p = payload;
    if (h->type == PTC_CHUNK_MODULE) {
        int r = add_module(s, h->pid, p, h->payload_size);
        if (r < 0)
            return r;
    }
    if (h->type == PTC_CHUNK_MODULE_REFUSED) {
        int r = add_refused(s, h->pid, p, h->payload_size);
        if (r < 0)
            return r;
    }
    if (h->type == PTC_CHUNK_SOFT_EVENTS && h->payload_size >= sizeof(struct ptc_soft_events)) {
        struct ptc_soft_events se;
        memcpy(&se, p, sizeof(se));
        struct soft_thr *t = NULL;
        for (size_t i = 0; i < s->nsoft; i++)
            if (s->soft[i].pid == h->pid && s->soft[i].tid == h->tid)
                t = &s->soft[i];
        if (!t) {
            void *v = realloc(s->soft, (s->nsoft + 1) * sizeof(*s->soft));
            if (!v)
                return -PTC_E_NOMEM;
            s->soft = v;
            t = &s->soft[s->nsoft++];
            memset(t, 0, sizeof(*t));
            t->pid = h->pid;
            t->tid = h->tid;
        }
        t->records += se.num_records;
        t->bytes += h->payload_size;
        t->chunks++;
    }
    if (h->type == PTC_CHUNK_LOSS && h->payload_size >= sizeof(struct ptc_loss)) {
        struct ptc_loss l;
        memcpy(&l, p, sizeof(l));
        s->loss[l.kind < 8 ? l.kind : 0]++;
        s->loss_count[l.kind < 8 ? l.kind : 0] += l.count;
    }
    if (h->type >= PTC_CHUNK_PT_FIRST && h->type <= PTC_CHUNK_PT_LAST) {
        s->pt_chunks++;
        return ptc_pt_front_chunk(s->f, h, payload);
    }
    return 0;
}

static const char *chunk_name(unsigned t)
{
    static const char *const n[] = {"?", "RECORD_INFO", "PROCESS", "TIMEBASE", "MODULE",
                                    "MODULE_UNLOAD", "THREAD", "SOFT_EVENTS", "LOSS",
                                    "PROCESS_END", "RECORD_END", "MODULE_ARMED", "COUNTS", "MARK"};
    if (t < sizeof(n) / sizeof(n[0]))
        return n[t];
    switch (t) {
    case PTC_CHUNK_SPAWN: return "SPAWN";
    case PTC_CHUNK_MODULE_REFUSED: return "MODULE_REFUSED";
    case PTC_CHUNK_PT_CONFIG: return "PT_CONFIG";
    case PTC_CHUNK_PT_AUX: return "PT_AUX";
    case PTC_CHUNK_PT_SIDEBAND: return "PT_SIDEBAND";
    case PTC_CHUNK_PT_GAP: return "PT_GAP";
    case PTC_CHUNK_PT_STUBS: return "PT_STUBS";
    case PTC_CHUNK_PT_ROUND: return "PT_ROUND";
    default: return "unknown";
    }
}

static void per_hit(char *buf, size_t n, uint64_t bytes, uint64_t hits)
{
    if (hits)
        snprintf(buf, n, "%.2f", (double)bytes / (double)hits);
    else
        snprintf(buf, n, "-");
}

static void print_pt(struct st *s)
{
    struct ptc_pt_front *f = s->f;
    const struct ptc_pt_config *c = ptc_pt_front_config(f);
    if (c) {
        printf("Intel PT config: timing %s%s%s%s", c->flags & PTC_PT_F_TSC ? "tsc " : "",
               c->flags & PTC_PT_F_MTC ? "mtc " : "", c->flags & PTC_PT_F_CYC ? "cyc " : "",
               c->flags & (PTC_PT_F_TSC | PTC_PT_F_MTC | PTC_PT_F_CYC) ? "" : "none ");
        if (c->flags & PTC_PT_F_MTC)
            printf("(mtc_period %u) ", c->mtc_freq);
        printf("%s%s, config 0x%" PRIx64 ", cpu %u/%u/%u, nom_freq %u, tsc:crystal %u:%u, "
               "%u filter(s)\n",
               c->flags & PTC_PT_F_NORETCOMP ? "noretcomp " : "",
               c->flags & PTC_PT_F_SNAPSHOT ? "snapshot " : "", c->config, c->cpu_family,
               c->cpu_model, c->cpu_stepping, c->nom_freq, c->cpuid_0x15_ebx,
               c->cpuid_0x15_eax, c->num_filters);
    } else {
        printf("Intel PT config: missing (no PT_CONFIG chunk): timing assumed absent\n");
    }
    const struct ptc_pt_cpu_stats *cs;
    size_t nc = ptc_pt_front_cpus(f, &cs);
    struct ptc_pt_pktstat tot;
    memset(&tot, 0, sizeof(tot));
    uint64_t th = 0, tg = 0, tb = 0, tl = 0, tovf = 0, ttr = 0, terr = 0, tlib = 0, tsp = 0;
    printf("\nper stream:\n  %-8s %12s %10s %9s %9s %9s %6s %6s %10s %9s %8s %10s\n", "cpu",
           "bytes", "packets", "TIP.PGE", "TIP.PGD", "hits", "OVF", "gaps", "lost-bytes",
           "bytes/hit", "sb-recs", "libipt-spans");
    for (size_t i = 0; i < nc; i++) {
        struct ptc_pt_pktstat ps;
        ptc_pt_front_packets(f, i, &ps);
        uint64_t np = 0;
        for (int k = 0; k < PTC_PT_NPKT; k++) {
            np += ps.count[k];
            tot.count[k] += ps.count[k];
            tot.bytes[k] += ps.bytes[k];
        }
        tot.errors += ps.errors;
        tot.unsynced_bytes += ps.unsynced_bytes;
        const struct ptc_pt_stream_stats *x = &cs[i].s;
        char name[16], bph[32];
        if (cs[i].cpu == PTC_PT_CPU_THREAD)
            snprintf(name, sizeof(name), "thread");
        else
            snprintf(name, sizeof(name), "%u", cs[i].cpu);
        per_hit(bph, sizeof(bph), x->bytes, x->hits);
        printf("  %-8s %12" PRIu64 " %10" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
               " %6" PRIu64 " %6" PRIu64 " %10" PRIu64 " %9s %8" PRIu64 " %5" PRIu64 "/%" PRIu64
               "\n",
               name, x->bytes, np, ps.count[ppt_tip_pge], ps.count[ppt_tip_pgd], x->hits, x->ovf, x->gaps,
               x->lost_bytes, bph, cs[i].sideband_records, x->spans_libipt, x->spans);
        th += x->hits;
        tg += x->gaps;
        tb += x->bytes;
        tl += x->lost_bytes;
        tovf += x->ovf;
        ttr += x->truncations;
        terr += x->decode_errors;
        tlib += x->spans_libipt;
        tsp += x->spans;
    }
    printf("\npackets by type:\n");
    uint64_t np = 0;
    for (int k = 0; k < PTC_PT_NPKT; k++)
        np += tot.count[k];
    for (int k = 0; k < PTC_PT_NPKT; k++)
        if (tot.count[k])
            printf("  %-8s %12" PRIu64 " packets %12" PRIu64 " bytes  %5.1f%%\n",
                   ptc_pt_packet_name(k), tot.count[k], tot.bytes[k],
                   np ? 100.0 * (double)tot.count[k] / (double)np : 0.0);
    if (tot.errors || tot.unsynced_bytes)
        printf("  undecodable: %" PRIu64 " errors, %" PRIu64 " bytes outside PSB sync\n",
               tot.errors, tot.unsynced_bytes);
    const struct ptc_pt_thread_stats *ts;
    size_t nt = ptc_pt_front_threads(f, &ts);
    printf("\nper thread:\n  %8s %8s %10s %6s %12s %9s\n", "pid", "tid", "hits", "gaps",
           "bytes", "bytes/hit");
    for (size_t i = 0; i < nt; i++) {
        char bph[32];
        per_hit(bph, sizeof(bph), ts[i].bytes, ts[i].hits);
        printf("  %8u %8u %10" PRIu64 " %6" PRIu64 " %12" PRIu64 " %9s\n", ts[i].pid,
               ts[i].tid, ts[i].hits, ts[i].gaps, ts[i].bytes, bph);
    }
    char bph[32];
    per_hit(bph, sizeof(bph), tb, th);
    printf("\ntotal: %" PRIu64 " PT bytes, %" PRIu64 " stub hits, %s bytes/hit, %" PRIu64
           " gaps (%" PRIu64 " OVF, %" PRIu64 " truncations, %" PRIu64
           " decode errors), %" PRIu64 " bytes known lost\n",
           tb, th, bph, tg, tovf, ttr, terr, tl);
    printf("decoding: %" PRIu64 " of %" PRIu64 " spans needed libipt; %" PRIu64
           " hits on no known stub, %" PRIu64 " items with no known thread\n",
           tlib, tsp, ptc_pt_front_unmapped(f), ptc_pt_front_unattributed(f));
}

static void st_free(struct st *S)
{
    ptc_pt_front_free(S->f);
    for (size_t i = 0; i < S->nmods; i++) {
        free(S->mods[i].addr);
        free(S->mods[i].id);
    }
    free(S->mods);
    free(S->soft);
    for (size_t i = 0; i < S->nrefused; i++)
        free(S->refused[i]);
    free(S->refused);
}

static int run_stat(const struct cli_values *v)
{
    if (v->npos > 1)
        return cli_usage_error(CMD_STAT, "one trace file at a time ('%s' and '%s')", v->pos[0],
                               v->pos[1]);
    if (!v->npos)
        return cli_usage_error(CMD_STAT, "which trace file?");
    const char *path = v->pos[0];
    /* --decoder fast|libipt, in enum ptc_pt_mode order */
    int mode = v->stat.decoder == 1 ? PTC_PT_MODE_LIBIPT : PTC_PT_MODE_FAST;
    struct stat sb;
    if (stat(path, &sb)) {
        fprintf(stderr, "ptcall stat: %s: %s\n", path, strerror(errno));
        return 1;
    }
    struct st S;
    memset(&S, 0, sizeof(S));
    struct ptc_pt_sink sink = {.ctx = &S, .lookup = lookup, .feed = feed};
    S.f = ptc_pt_front_new(&sink, mode);
    struct ptc_file_header fh;
    char err[512];
    int rc = ptc_pt_read_file(path, &fh, on_chunk, &S, err, sizeof(err));
    if (rc == 0 && S.pt_chunks)
        rc = ptc_pt_front_finish(S.f);
    if (rc < 0) {
        if (!err[0] || rc == -PTC_E_NOMEM)
            snprintf(err, sizeof(err), "%s: %s", path, ptc_pt_strerror(-rc));
        fprintf(stderr, "ptcall stat: %s\n", err);
        st_free(&S);
        return 1;
    }
    const char *bk = fh.backend == PTC_BACKEND_SOFT   ? "soft"
                     : fh.backend == PTC_BACKEND_PT   ? "pt"
                     : fh.backend == PTC_BACKEND_IMPORT ? "import"
                                                        : "unknown";
    printf("file: ");
    cli_text_str(stdout, path);
    printf(", %lld bytes, format %u.%u, backend %s\n", (long long)sb.st_size, fh.version_major,
           fh.version_minor, bk);
    printf("chunks: %" PRIu64 ":", S.chunks);
    for (unsigned t = 0; t < 64; t++)
        if (S.ctype[t])
            printf(" %s %" PRIu64 " (%" PRIu64 " B)", chunk_name(t), S.ctype[t], S.cbytes[t]);
    printf("\nprocesses: %zu, modules: %" PRIu64 ", stubs: %" PRIu64 "\n", S.nproc, S.modules,
           S.stubs);
    if (S.nrefused) { /* not in the modules: the trace is not complete without them */
        printf("refused: %zu instrumented object%s not traced (%s functions are in no "
               "figure):\n", S.nrefused, S.nrefused == 1 ? " was" : "s were",
               S.nrefused == 1 ? "its" : "their");
        for (size_t i = 0; i < S.nrefused; i++) {
            printf("  ");
            cli_text_str(stdout, S.refused[i]);
            printf("\n");
        }
    }
    static const char *const lk[] = {"?", "dropped hits", "lost at crash", "PT truncated",
                                     "PT overflow", "perf records lost"};
    for (int k = 0; k < 6; k++)
        if (S.loss[k])
            printf("loss: %" PRIu64 " x %s (count %" PRIu64 ")\n", S.loss[k], lk[k],
                   S.loss_count[k]);
    if (S.nsoft) {
        uint64_t rec = 0, by = 0;
        /* records, not events: untimed, one record of a leaf's CALL stub is its entry and
         * its return (docs/trace-format.md 4.4); `ptcall report` counts the events */
        printf("\nsoft records per thread:\n  %8s %8s %12s %12s %8s %9s\n", "pid", "tid",
               "records", "bytes", "chunks", "bytes/rec");
        for (size_t i = 0; i < S.nsoft; i++) {
            char b[32];
            per_hit(b, sizeof(b), S.soft[i].bytes, S.soft[i].records);
            printf("  %8u %8u %12" PRIu64 " %12" PRIu64 " %8" PRIu64 " %9s\n", S.soft[i].pid,
                   S.soft[i].tid, S.soft[i].records, S.soft[i].bytes, S.soft[i].chunks, b);
            rec += S.soft[i].records;
            by += S.soft[i].bytes;
        }
        char b[32];
        per_hit(b, sizeof(b), by, rec);
        printf("  total: %" PRIu64 " records, %" PRIu64 " bytes, %s bytes/record\n", rec, by, b);
        if (S.call_stubs)
            printf("  (untimed: a leaf's call is one record, its entry and its return; "
                   "`ptcall report` counts events)\n");
    }
    if (S.pt_chunks) {
        printf("\n");
        print_pt(&S);
    } else if (!S.nsoft) {
        printf("no events: the trace holds neither soft event chunks nor Intel PT data\n");
    }
    st_free(&S);
    /* A foreign PT stream imported without --binary has no module: no function to charge
     * bytes to, which is a fact about the trace, not a failure of stat. */
    if ((S.pt_chunks || S.nsoft) && !S.modules)
        printf("\nbytes per function: none (the trace holds no instrumented module: imported "
               "without --binary, its hits cannot be named)\n");
    else if ((S.pt_chunks || S.nsoft) && stat_bytes_per_function(path, 20, stdout))
        return 1;
    return cli_flush_output("stat", "the statistics");
}

int cmd_stat(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_STAT, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_stat(&v);
    cli_values_free(&v);
    return r;
}
