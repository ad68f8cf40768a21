/* pt-import: `ptcall import` from raw per-CPU PT streams and from a perf.data file, both
 * made from a synthetic recording of a real instrumented binary (pt_stubprog, stubs at their
 * run-time addresses for a chosen load address); the imported traces must decode to exactly
 * the events the writer injected. */
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ptc_pt_decode.h"
#include "ptc_pt_rec.h"
#include "ptgen.h"

#include "pt_check.h"

struct mods { uint64_t start[8]; uint32_t n[8], pid[8]; int k; };
struct actual { struct ptgen_event *v; size_t n, cap; struct mods mods; };

static int on_mod(void *ctx, uint32_t pid, const void *p, size_t n)
{
    struct actual *a = ctx;
    struct ptc_module h;
    if (n < sizeof(h) || a->mods.k == 8)
        return -1;
    memcpy(&h, p, sizeof(h));
    a->mods.start[a->mods.k] = h.stubs_start;
    a->mods.n[a->mods.k] = h.num_stubs;
    a->mods.pid[a->mods.k++] = pid;
    return 0;
}

static int lookup(void *ctx, uint32_t pid, uint64_t ip, uint32_t *id)
{
    struct actual *a = ctx;
    for (int i = 0; i < a->mods.k; i++)
        if (a->mods.pid[i] == pid && ip >= a->mods.start[i] &&
            ip < a->mods.start[i] + 16ull * a->mods.n[i] && !((ip - a->mods.start[i]) % 16)) {
            *id = (uint32_t)((ip - a->mods.start[i]) / 16);
            return 0;
        }
    return -1;
}

static int feed(void *ctx, uint32_t pid, uint32_t tid, const struct ptc_ev *ev, size_t n)
{
    struct actual *a = ctx;
    for (size_t i = 0; i < n; i++) {
        if (a->n == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 1024;
            a->v = realloc(a->v, a->cap * sizeof(*a->v));
        }
        struct ptgen_event *e = &a->v[a->n++];
        memset(e, 0, sizeof(*e));
        e->pid = pid;
        e->tid = tid;
        e->type = ev[i].type;
        e->stub_id = ev[i].type == PTC_EV_HIT ? ev[i].stub_id : 0;
        e->has_time = ev[i].has_time;
        e->tsc = ev[i].tsc;
    }
    return 0;
}

static int load(void *ctx, const struct ptc_chunk_header *h, const void *p)
{
    return ptc_pt_front_chunk(ctx, h, p);
}

static void decode_compare(const char *what, const char *path, const struct ptgen_result *r,
                           int map_pid, uint32_t pid, uint32_t tid)
{
    struct actual a;
    memset(&a, 0, sizeof(a));
    struct ptc_pt_sink sink = {.ctx = &a, .add_module = on_mod, .lookup = lookup, .feed = feed};
    struct ptc_pt_front *f = ptc_pt_front_new(&sink, PTC_PT_MODE_FAST);
    struct ptc_file_header fh;
    char err[256];
    int e = ptc_pt_read_file(path, &fh, load, f, err, sizeof(err));
    if (!e)
        e = ptc_pt_front_finish(f);
    CHECK(!e, "%s: decode: %s", what, err);
    CHECK(a.mods.k == 1, "%s: %d modules", what, a.mods.k);
    size_t bad = 0, k = 0;
    /* per thread, in order */
    for (size_t i = 0; i < r->nev; i++) {
        struct ptgen_event x = r->ev[i];
        if (map_pid) {
            x.pid = pid;
            x.tid = tid;
        }
        size_t nth = 0; /* x is the nth event of its thread */
        for (size_t j = 0; j < i; j++)
            nth += (map_pid || (r->ev[j].pid == x.pid && r->ev[j].tid == x.tid));
        const struct ptgen_event *y = NULL;
        for (size_t j = 0, c = 0; j < a.n; j++)
            if (a.v[j].pid == x.pid && a.v[j].tid == x.tid && c++ == nth) {
                y = &a.v[j];
                break;
            }
        if (!y || x.type != y->type || x.stub_id != y->stub_id ||
            (x.type == PTC_EV_HIT && (x.has_time != y->has_time || (x.has_time && x.tsc != y->tsc)))) {
            if (!bad)
                printf("  %s: event %zu (thread %u/%u #%zu): expected %s %u t=%llu, got %s\n", what,
                       i, x.pid, x.tid, nth, x.type == 1 ? "HIT" : "GAP", x.stub_id,
                       (unsigned long long)x.tsc, y ? (y->type == 1 ? "HIT" : "GAP") : "nothing");
            if (!bad && y) /* what was decoded instead: stub and time */
                printf("   got stub %u t=%d:%llu\n", y->stub_id, y->has_time,
                       (unsigned long long)y->tsc);
            bad++;
        }
        k++;
    }
    CHECK(!bad && k == a.n, "%s: %zu mismatches, %zu expected, %zu decoded", what, bad, r->nev,
          a.n);
    printf("%s: %zu events decoded, %zu expected, %zu mismatches\n", what, a.n, r->nev, bad);
    ptc_pt_front_free(f);
    free(a.v);
}

/* raw per-CPU streams out of a ptgen trace */
struct split { FILE *cpu[8]; };
static int split_chunk(void *ctx, const struct ptc_chunk_header *h, const void *p)
{
    struct split *s = ctx;
    if (h->type != PTC_CHUNK_PT_AUX)
        return 0;
    struct ptc_pt_aux a;
    memcpy(&a, p, sizeof(a));
    fwrite((const uint8_t *)p + sizeof(a), 1, h->payload_size - sizeof(a), s->cpu[a.cpu]);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: test_pt_import PTCALL STUBPROG DIR\n");
        return 2;
    }
    const char *ptcall = argv[1], *dir = argv[3];
    char prog[PATH_MAX], why[512];
    if (!realpath(argv[2], prog))
        return 2;
    struct ptc_pt_elf_sections sec;
    CHECK(!ptc_pt_elf_sections(prog, &sec, why, sizeof(why)) && sec.has_stubs && sec.has_map,
          "stubprog sections");
    uint64_t load = 0x5555aaaa0000ull; /* where its first PT_LOAD "was" */
    uint64_t bias = load - sec.text_vaddr_min;

    /* 1. raw streams, one thread on three CPUs */
    struct ptgen_opts o;
    ptgen_default(&o, 77);
    o.nprocs = 1;
    o.threads = 1;
    o.ncpus = 3;
    o.p_trunc = 0;
    o.mod0_start = sec.stubs_addr + bias;
    o.mod0_nstubs = (uint32_t)(sec.stubs_size + 15) / 16;
    char trace[PATH_MAX], cmd[8 * PATH_MAX], out[PATH_MAX];
    snprintf(trace, sizeof(trace), "%s/pt-import-src.ptc", dir);
    struct ptgen_result r;
    CHECK(!ptgen_write(&o, trace, &r), "ptgen");
    struct split sp;
    char raw[3][PATH_MAX];
    for (int i = 0; i < 3; i++) {
        snprintf(raw[i], sizeof(raw[i]), "%s/pt-import-cpu%d.pt", dir, i);
        sp.cpu[i] = fopen(raw[i], "wb");
    }
    struct ptc_file_header fh;
    ptc_pt_read_file(trace, &fh, split_chunk, &sp, why, sizeof(why));
    for (int i = 0; i < 3; i++)
        fclose(sp.cpu[i]);
    snprintf(out, sizeof(out), "%s/pt-import-raw.ptc", dir);
    snprintf(cmd, sizeof(cmd),
             "%s import -o %s --binary %s@%llx --pid 1000 --tid 1000 --timing mtc "
             "--mtc-period 3 --nom-freq 24 --tsc-ratio 40:1 --time-conv 10:1365:5000 "
             "--cpu-stream 0:%s --cpu-stream 1:%s --cpu-stream 2:%s",
             ptcall, out, prog, (unsigned long long)load, raw[0], raw[1], raw[2]);
    CHECK(system(cmd) == 0, "%s", cmd);
    decode_compare("raw per-CPU streams", out, &r, 1, 1000, 1000);
    ptgen_free(&r);

    /* the same streams as a foreign trace (no --binary: no module, as DynamoRIO's, kAFL's or
     * libipt's PT files import): stat prints its figures and exits 0, saying why it has no
     * bytes per function (it exited 1 with "holds no instrumented module") */
    snprintf(out, sizeof(out), "%s/pt-import-foreign.ptc", dir);
    snprintf(cmd, sizeof(cmd),
             "%s import -o %s --pid 1000 --tid 1000 --cpu-stream 0:%s --cpu-stream 1:%s "
             "--cpu-stream 2:%s 2>/dev/null",
             ptcall, out, raw[0], raw[1], raw[2]);
    CHECK(system(cmd) == 0, "%s", cmd);
    snprintf(cmd, sizeof(cmd), "%s stat %s > %s/stat-foreign.txt 2>&1", ptcall, out, dir);
    CHECK(system(cmd) == 0, "stat of a foreign PT trace must exit 0: %s", cmd);
    snprintf(cmd, sizeof(cmd),
             "grep -q '^bytes per function: none (the trace holds no instrumented module' "
             "%s/stat-foreign.txt && grep -q '^chunks: ' %s/stat-foreign.txt",
             dir, dir);
    CHECK(system(cmd) == 0, "stat of a foreign PT trace: figures and the reason the table is "
                            "absent (%s/stat-foreign.txt)", dir);

    /* 2. perf.data: two threads of one process on two CPUs, with AUX/SWITCH sideband */
    ptgen_default(&o, 78);
    o.nprocs = 1;
    o.threads = 2;
    o.ncpus = 2;
    o.no_gap_chunks = 1; /* perf.data reports truncation with PERF_AUX_FLAG_TRUNCATED */
    o.mod0_start = sec.stubs_addr + bias;
    o.mod0_nstubs = (uint32_t)(sec.stubs_size + 15) / 16;
    CHECK(!ptgen_write(&o, trace, &r), "ptgen 2");
    char pd[PATH_MAX];
    snprintf(pd, sizeof(pd), "%s/pt-import.perf.data", dir);
    /* MMAP2 of the binary in pid 1000: the page holding ptcall_stubs */
    uint64_t pgoff = sec.stubs_offset & ~0xfffull;
    struct ptgen_perf_mmap mm = {.pid = 1000, .addr = sec.stubs_addr + bias - (sec.stubs_offset - pgoff),
                                 .len = 0x1000, .pgoff = pgoff, .path = prog};
    CHECK(!ptgen_perf_data(trace, pd, &mm), "perf.data writer");
    snprintf(out, sizeof(out), "%s/pt-import-perf.ptc", dir);
    snprintf(cmd, sizeof(cmd), "%s import -o %s --perf-data %s", ptcall, out, pd);
    CHECK(system(cmd) == 0, "%s", cmd);
    decode_compare("perf.data", out, &r, 0, 0, 0);
    ptgen_free(&r);

    /* bad input: one clear line */
    snprintf(cmd, sizeof(cmd), "%s import -o %s/x.ptc --perf-data %s 2>&1 | grep -q 'not a perf.data file'",
             ptcall, dir, trace);
    CHECK(system(cmd) == 0, "bad perf.data must say so");
    printf("%s\n", pt_check_fails ? "FAIL" : "PASS");
    return pt_check_fails ? 1 : 0;
}
