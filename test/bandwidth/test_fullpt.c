/* Tests of the full-PT estimator (bandwidth/fullpt.h).
 *
 *   test_fullpt model                      the byte model, on counts and configurations whose
 *                                          packets and bytes are worked out by hand below
 *   test_fullpt program NAME EXE WORKDIR   the estimator on one of the assembly programs
 *                                          (fpt_*.S): valgrind really runs it; the branch counts,
 *                                          TNT bits, TIPs and bytes expected are worked out by
 *                                          hand from the program's construction
 *   test_fullpt dynamic EXE WORKDIR        a dynamically linked C program: PLT stubs, ld.so and
 *                                          libc resolved and disassembled, the main share apart
 *   test_fullpt errors WORKDIR             the messages of what cannot work
 *
 * Tests that need valgrind print a SKIP line and exit 77 (ctest SKIP_RETURN_CODE) without it.
 *
 * Why the programs are exact: they are static, have no libc and no loader (-nostdlib
 * -static), so callgrind sees exactly the instructions written in them. One thing callgrind
 * does not report is the block that ends in the exit syscall (the process ends inside it
 * before the block's costs are added), so the exit syscall's TIP.PGD is not counted: the
 * expected syscall counts below leave it out, as docs/bandwidth.md says. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <intel-pt.h>

#include "fullpt.h"

static int failures;

#define CHECK_EQ(what, got, want)                                                              \
    do {                                                                                       \
        unsigned long long g_ = (unsigned long long)(got), w_ = (unsigned long long)(want);    \
        if (g_ != w_) {                                                                        \
            fprintf(stderr, "FAIL %s:%d: %s = %llu, expected %llu\n", __FILE__, __LINE__,      \
                    what, g_, w_);                                                             \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                    \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static struct ptc_fullpt_cfg cfg_of(int timing, int retcomp, uint64_t psb_period)
{
    struct ptc_fullpt_cfg c;
    ptc_fullpt_cfg_default(&c);
    c.timing = timing;
    c.ret_compression = retcomp;
    c.psb_period = psb_period;
    c.mtc_period = 3;
    c.cyc_threshold = 0;
    c.tsc_hz = 2400000000ull; /* 2.4 GHz TSC (and core clock) */
    c.ctc_hz = 24000000ull;   /* 24 MHz crystal */
    c.duration_tsc = 2400000; /* 1 ms */
    return c;
}

static struct ptc_fullpt_bytes estimate(const struct ptc_fullpt_profile *p,
                                        const struct ptc_fullpt_cfg *c,
                                        struct ptc_fullpt_bytes *per_func)
{
    struct ptc_fullpt_bytes b;
    char why[256];
    if (ptc_fullpt_estimate(p, c, &b, per_func, why, sizeof why)) {
        fprintf(stderr, "FAIL: estimate refused: %s\n", why);
        failures++;
        memset(&b, 0, sizeof b);
    }
    return b;
}

/* ------------------------------------------------------------------ the byte model */

static int test_model(void)
{
    /* the pieces */
    CHECK_EQ("cyc_bytes(31)", ptc_fullpt_cyc_bytes(31), 1);
    CHECK_EQ("cyc_bytes(32)", ptc_fullpt_cyc_bytes(32), 2);
    CHECK_EQ("cyc_bytes(4095)", ptc_fullpt_cyc_bytes(4095), 2);
    CHECK_EQ("cyc_bytes(4096)", ptc_fullpt_cyc_bytes(4096), 3);
    uint64_t full;
    CHECK_EQ("tnt(0 bits)", ptc_fullpt_tnt_packets(0, 9, &full), 0);
    CHECK_EQ("tnt(6 bits, no flush)", ptc_fullpt_tnt_packets(6, 0, &full), 1);
    CHECK_EQ("  full", full, 1);
    CHECK_EQ("tnt(7 bits, no flush)", ptc_fullpt_tnt_packets(7, 0, &full), 2);
    CHECK_EQ("  full", full, 1);
    /* 5 bits, 10 flushes: at most 5 stretches have bits, one bit each: 5 partial packets */
    CHECK_EQ("tnt(5 bits, 10 flushes)", ptc_fullpt_tnt_packets(5, 10, &full), 5);
    CHECK_EQ("  full", full, 0);
    struct ptc_fullpt_cfg c = cfg_of(PTC_FULLPT_NONE, 1, 0);
    CHECK_EQ("psb+ none", ptc_fullpt_psb_plus_bytes(&c), 31); /* 16+4+2+7+2 */
    c.timing = PTC_FULLPT_TSC;
    CHECK_EQ("psb+ tsc", ptc_fullpt_psb_plus_bytes(&c), 39);  /* + TSC 8 */
    c.timing = PTC_FULLPT_CYC;
    CHECK_EQ("psb+ cyc", ptc_fullpt_psb_plus_bytes(&c), 46);  /* + TMA 7 */

    /* One function with these counts (a second one, all zero, must change nothing). */
    struct ptc_fullpt_func fn[2];
    memset(fn, 0, sizeof fn);
    fn[0].name = "f";
    fn[0].module = "/bin/prog";
    fn[0].in_main = 1;
    fn[1].name = "g";
    fn[1].module = "/lib/libc.so.6";
    struct ptc_fullpt_counts *k = &fn[0].c;
    k->cond = 1000;
    k->ret = 100;
    k->ret_deep = 10;
    k->ijmp = 30;
    k->icall = 20;
    k->sys = 5;
    uint64_t ind[3] = {30, 15, 5}, ret[3] = {60, 30, 10}, deep[3] = {10, 0, 0}, sys[3] = {5, 0, 0};
    memcpy(k->ind_ipc, ind, sizeof ind);
    memcpy(k->ret_ipc, ret, sizeof ret);
    memcpy(k->deep_ipc, deep, sizeof deep);
    memcpy(k->sys_ipc, sys, sizeof sys);
    struct ptc_fullpt_profile p;
    memset(&p, 0, sizeof p);
    p.nfunc = 2;
    p.func = fn;
    struct ptc_fullpt_bytes pf[2];

    /* A: no timing, return compression, PSB every 4096 bytes.
     *   TNT bits = 1000 conditional + (100 - 10) predicted returns = 1090
     *   TIPs = 30 + 20 indirect + 10 unpredicted returns = 60;
     *     bytes: indirect 30*3 + 15*5 + 5*7 = 200, returns 10*3 = 30 -> 230
     *   flushes = 60 TIPs + 5 TIP.PGD = 65 -> 66 stretches of 1090 bits: q = 16, r = 34
     *     TNT packets = 34 * ceil(17/6) + 32 * ceil(16/6) = 102 + 96 = 198
     *   TIP.PGD 5 * 1 = 5, TIP.PGE 5 * (1 + 2) = 15
     *   control flow 198 + 230 + 5 + 15 = 448; PSB+ 31: P = max(1, ceil(448 / (4096 - 31))) = 1
     *   total 448 + 31 = 479 */
    c = cfg_of(PTC_FULLPT_NONE, 1, 4096);
    struct ptc_fullpt_bytes b = estimate(&p, &c, pf);
    CHECK_EQ("A tnt bits", b.tnt_bits, 1090);
    CHECK_EQ("A tips", b.tips, 60);
    CHECK_EQ("A tnt packets", b.packets[ppt_tnt_8], 198);
    CHECK_EQ("A tip bytes", b.bytes[ppt_tip], 230);
    CHECK_EQ("A pgd bytes", b.bytes[ppt_tip_pgd], 5);
    CHECK_EQ("A pge bytes", b.bytes[ppt_tip_pge], 15);
    CHECK_EQ("A psb", b.packets[ppt_psb], 1);
    CHECK_EQ("A total", b.total, 479);
    CHECK_EQ("A main", b.main_bytes, 448);
    CHECK_EQ("A f", pf[0].total, 448);
    CHECK_EQ("A g", pf[1].total, 0);
    CHECK(b.estimate == 1);

    /* B: TSC + MTC + CYC (threshold 0), no return compression, PSB every 256 bytes, 1 ms.
     *   TNT bits = 1000; TIPs = 50 indirect + 100 returns = 150;
     *     bytes 200 + returns 60*3 + 30*5 + 10*7 = 400 -> 600
     *   flushes 155 -> 156 stretches of 1000 bits: q = 6, r = 64
     *     TNT packets = 64 * ceil(7/6) + 92 * ceil(6/6) = 128 + 92 = 220,
     *     full ones 64 * 1 + 92 * 1 = 156
     *   TIP.PGD 5, TIP.PGE 15
     *   MTC: 2.4e6 TSC ticks = 24000 crystal ticks, / 2^3 = 3000 MTC, 6000 bytes
     *   CYC-eligible: 156 full TNT + 150 TIP + 5 PGD + 5 PGE + 3000 MTC = 3316 CYC,
     *     mean 2400000 / 3316 = 723 cycles -> 2 bytes each: 6632
     *   other bytes 220 + 600 + 5 + 15 + 6000 + 6632 = 13472; PSB+ 46 bytes:
     *     P = ceil(13472 / (256 - 46)) = ceil(64.15) = 65 -> 2990 bytes
     *   total 13472 + 2990 = 16462, over 1 ms: 16.462 MB/s */
    c = cfg_of(PTC_FULLPT_CYC, 0, 256);
    b = estimate(&p, &c, pf);
    CHECK_EQ("B tnt packets", b.packets[ppt_tnt_8], 220);
    CHECK_EQ("B tip bytes", b.bytes[ppt_tip], 600);
    CHECK_EQ("B mtc", b.packets[ppt_mtc], 3000);
    CHECK_EQ("B cyc", b.packets[ppt_cyc], 3316);
    CHECK_EQ("B cyc bytes", b.bytes[ppt_cyc], 6632);
    CHECK_EQ("B psb", b.packets[ppt_psb], 65);
    CHECK_EQ("B tsc", b.packets[ppt_tsc], 65);
    CHECK_EQ("B tma", b.packets[ppt_tma], 65);
    CHECK_EQ("B total", b.total, 16462);
    CHECK_EQ("B f (its CYC: 316 * 2)", pf[0].total, 220 + 600 + 5 + 15 + 632);
    CHECK_EQ("B bytes/s", (uint64_t)(b.bytes_per_sec + 0.5), 16462000);

    /* C: as B with CycThresh 13: at most one CYC per 2^12 = 4096 cycles: 2400000 >> 12 = 585
     *   CYCs, mean 2400000 / 585 = 4102 cycles -> 3 bytes; shared out: the function's
     *   floor(585 * 316 / 3316) = 55, the MTCs' floor(585 * 3000 / 3316) = 529: 584 CYC, 1752
     *   bytes. Other bytes 220 + 600 + 20 + 6000 + 1752 = 8592; P = ceil(8592 / 210) = 41
     *   -> 1886; total 10478 */
    c.cyc_threshold = 13;
    b = estimate(&p, &c, NULL);
    CHECK_EQ("C cyc", b.packets[ppt_cyc], 584);
    CHECK_EQ("C cyc bytes", b.bytes[ppt_cyc], 1752);
    CHECK_EQ("C total", b.total, 10478);

    /* D: TSC only, return compression, no periodic PSB: A's 448 + one PSB+ of 39 = 487 */
    c = cfg_of(PTC_FULLPT_TSC, 1, 0);
    c.duration_tsc = 0; /* TSC needs no duration */
    b = estimate(&p, &c, NULL);
    CHECK_EQ("D total", b.total, 487);
    CHECK(b.bytes_per_sec == 0);

    /* refusals */
    char why[256];
    c = cfg_of(PTC_FULLPT_MTC, 1, 0);
    c.duration_tsc = 0;
    CHECK(ptc_fullpt_estimate(&p, &c, &b, NULL, why, sizeof why) == -1 && strstr(why, "duration"));
    c = cfg_of(PTC_FULLPT_MTC, 1, 40); /* a PSB+ is 46 bytes */
    CHECK(ptc_fullpt_estimate(&p, &c, &b, NULL, why, sizeof why) == -1 &&
          strstr(why, "psb_period"));
    c = cfg_of(PTC_FULLPT_NONE, 1, 0);
    c.mtc_period = 16;
    CHECK(ptc_fullpt_estimate(&p, &c, &b, NULL, why, sizeof why) == -1);
    return failures ? 1 : 0;
}

/* ------------------------------------------------------------------ programs under valgrind */

/* Whether valgrind is in PATH; says SKIP when not, unless quiet. */
static int have_valgrind(int quiet)
{
    const char *path = getenv("PATH");
    char buf[4096];
    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        snprintf(buf, sizeof buf, "%.*s/valgrind", (int)len, path);
        if (len && access(buf, X_OK) == 0)
            return 1;
        path += len + (e != NULL);
    }
    if (!quiet)
        printf("SKIP: valgrind not found in PATH (apt-get install valgrind; scripts/setup.sh "
               "installs it)\n");
    return 0;
}

static void remove_tree(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    closedir(d);
    rmdir(dir);
}

static const struct ptc_fullpt_func *need(const struct ptc_fullpt_profile *p, const char *name,
                                          const char *module)
{
    const struct ptc_fullpt_func *f = ptc_fullpt_find(p, name, module);
    if (!f) {
        fprintf(stderr, "FAIL: no function %s in %s; functions:", name, module ? module : "*");
        for (size_t i = 0; i < p->nfunc; i++)
            fprintf(stderr, " %s[%s]", p->func[i].name, p->func[i].module);
        fprintf(stderr, "\n");
        failures++;
        static struct ptc_fullpt_func none = {.name = "", .module = ""};
        return &none;
    }
    return f;
}

static void check_counts(const char *fn, const struct ptc_fullpt_counts *c, uint64_t cond,
                         uint64_t taken, uint64_t jmp, uint64_t call, uint64_t ijmp,
                         uint64_t icall, uint64_t ret, uint64_t deep, uint64_t sys)
{
    char what[128];
#define C(field, want)                                                                         \
    snprintf(what, sizeof what, "%s." #field, fn);                                             \
    CHECK_EQ(what, c->field, want)
    C(cond, cond);
    C(cond_taken, taken);
    C(jmp, jmp);
    C(call, call);
    C(ijmp, ijmp);
    C(icall, icall);
    C(ret, ret);
    C(ret_deep, deep);
    C(sys, sys);
#undef C
}

static void check_ipc(const char *what, const uint64_t got[3], uint64_t b2, uint64_t b4,
                      uint64_t b6)
{
    char w[128];
    snprintf(w, sizeof w, "%s 2-byte IPs", what);
    CHECK_EQ(w, got[0], b2);
    snprintf(w, sizeof w, "%s 4-byte IPs", what);
    CHECK_EQ(w, got[1], b4);
    snprintf(w, sizeof w, "%s 6-byte IPs", what);
    CHECK_EQ(w, got[2], b6);
}

/* Expected totals of a program: no timing, no periodic PSB (one PSB+ of 31 bytes). */
static void check_bytes(const struct ptc_fullpt_profile *p, int retcomp, uint64_t bits,
                        uint64_t tips, uint64_t tnt_packets, uint64_t total)
{
    struct ptc_fullpt_cfg c = cfg_of(PTC_FULLPT_NONE, retcomp, 0);
    struct ptc_fullpt_bytes *pf = calloc(p->nfunc + 1, sizeof *pf);
    struct ptc_fullpt_bytes b = estimate(p, &c, pf);
    const char *rc = retcomp ? "retcomp on" : "retcomp off";
    char w[128];
    snprintf(w, sizeof w, "%s: TNT bits", rc);
    CHECK_EQ(w, b.tnt_bits, bits);
    snprintf(w, sizeof w, "%s: TIPs", rc);
    CHECK_EQ(w, b.tips, tips);
    snprintf(w, sizeof w, "%s: TNT packets", rc);
    CHECK_EQ(w, b.packets[ppt_tnt_8], tnt_packets);
    snprintf(w, sizeof w, "%s: total bytes", rc);
    CHECK_EQ(w, b.total, total);
    uint64_t sum = 0;
    for (size_t i = 0; i < p->nfunc; i++)
        sum += pf[i].total;
    snprintf(w, sizeof w, "%s: functions' bytes + PSB+", rc);
    CHECK_EQ(w, sum + 31, b.total);
    snprintf(w, sizeof w, "%s: main executable's bytes", rc);
    CHECK_EQ(w, b.main_bytes, sum); /* everything is in the program */
    free(pf);
}

static void expect_loop(const struct ptc_fullpt_profile *p)
{
    /* _start: jnz 1000 times, taken 999; one getpid syscall (the exit is not reported) */
    check_counts("_start", &need(p, "_start", NULL)->c, 1000, 999, 0, 0, 0, 0, 0, 0, 1);
    /* TIP.PGE after the syscall: its next instruction is in the same 64 KiB: 2 IP bytes */
    check_ipc("_start syscall", need(p, "_start", NULL)->c.sys_ipc, 1, 0, 0);
    /* 1000 bits, one flush (the syscall's TIP.PGD): 2 stretches of 500 bits, ceil(500/6) = 84
     * packets each = 168 TNT bytes; TIP.PGD 1, TIP.PGE 3: 172; + PSB+ 31 = 203 (with or
     * without return compression: there are no returns) */
    check_bytes(p, 1, 1000, 0, 168, 203);
    check_bytes(p, 0, 1000, 0, 168, 203);
    /* TSC + MTC + CYC over 1 ms: 3000 MTC (6000 bytes); CYC-eligible: 2 * 83 full TNT
     * packets + PGD + PGE + 3000 MTC = 3168, mean 2400000 / 3168 = 757 cycles -> 2 bytes:
     * 6336; 172 + 6000 + 6336 = 12508, + one PSB+ of 46 = 12554 */
    struct ptc_fullpt_cfg c = cfg_of(PTC_FULLPT_CYC, 1, 0);
    struct ptc_fullpt_bytes b = estimate(p, &c, NULL);
    CHECK_EQ("cyc: CYC packets", b.packets[ppt_cyc], 3168);
    CHECK_EQ("cyc: total", b.total, 12554);
}

static void expect_switch(const struct ptc_fullpt_profile *p)
{
    /* 400 indirect jmps through the table, 300 direct jmps out of cases 0..2, the loop's jne
     * 400 times (399 taken); the cases are within 64 KiB of the jmp: 2 IP bytes each */
    const struct ptc_fullpt_func *s = need(p, "_start", NULL);
    check_counts("_start", &s->c, 400, 399, 300, 0, 400, 0, 0, 0, 0);
    check_ipc("_start ijmp", s->c.ind_ipc, 400, 0, 0);
    /* 400 bits, 400 flushes: 400 stretches of one bit, 400 TNT packets; 400 TIPs of 3
     * bytes = 1200; 1600 + 31 = 1631 */
    check_bytes(p, 1, 400, 400, 400, 1631);
    check_bytes(p, 0, 400, 400, 400, 1631);
}

static void expect_icall(const struct ptc_fullpt_profile *p)
{
    const struct ptc_fullpt_func *s = need(p, "_start", NULL), *f1 = need(p, "f1", NULL),
                                 *f2 = need(p, "f2", NULL), *f3 = need(p, "f3", NULL);
    /* 50 iterations: each function's indirect call and each return 50 times */
    check_counts("_start", &s->c, 50, 49, 0, 0, 0, 50, 0, 0, 0);
    check_counts("f1", &f1->c, 0, 0, 0, 0, 0, 50, 50, 0, 0);
    check_counts("f2", &f2->c, 0, 0, 0, 0, 0, 50, 50, 0, 0);
    check_counts("f3", &f3->c, 0, 0, 0, 0, 0, 0, 50, 0, 0);
    /* call targets against the call: _start -> f1 same 64 KiB (2), f1 -> f2 at 0x20000000
     * (upper 32 bits equal: 4), f2 -> f3 at 0x100000000 (6); a return's target (the call
     * site) against the callee: the same classes */
    check_ipc("_start icall", s->c.ind_ipc, 50, 0, 0);
    check_ipc("f1 icall", f1->c.ind_ipc, 0, 50, 0);
    check_ipc("f2 icall", f2->c.ind_ipc, 0, 0, 50);
    check_ipc("f1 ret", f1->c.ret_ipc, 50, 0, 0);
    check_ipc("f2 ret", f2->c.ret_ipc, 0, 50, 0);
    check_ipc("f3 ret", f3->c.ret_ipc, 0, 0, 50);
    /* Return compression on: bits 50 jnz + 150 returns = 200, TIPs 150 (the calls).
     *   _start: 50 bits, 50 flushes: 50 one-bit packets; TIPs 50 * 3 -> 200
     *   f1: 50 bits (returns), 50 flushes: 50 packets; 50 * 5 -> 300
     *   f2: 50 packets; 50 * 7 -> 400
     *   f3: 50 bits, no flush: ceil(50/6) = 9 packets -> 9
     *   909 + PSB+ 31 = 940; TNT packets 50 + 50 + 50 + 9 = 159 */
    check_bytes(p, 1, 200, 150, 159, 940);
    /* Off: bits 50, TIPs 300.
     *   _start 200; f1: calls 50 * 5 + returns 50 * 3 = 400; f2: 50 * 7 + 50 * 5 = 600;
     *   f3: 50 * 7 = 350; 1550 + 31 = 1581; TNT packets: _start's 50 */
    check_bytes(p, 0, 50, 300, 50, 1581);
}

static void expect_recurse(const struct ptc_fullpt_profile *p)
{
    /* rec(100) .. rec(0): 101 calls (1 direct from _start, 100 from rec), 101 jz (taken once,
     * at n = 0), 101 returns of which 101 - 64 = 37 are beyond the 64-deep return stack */
    check_counts("_start", &need(p, "_start", NULL)->c, 0, 0, 0, 1, 0, 0, 0, 0, 0);
    const struct ptc_fullpt_func *r = need(p, "rec", NULL);
    check_counts("rec", &r->c, 101, 1, 0, 100, 0, 0, 101, 37, 0);
    check_ipc("rec ret", r->c.ret_ipc, 101, 0, 0);
    check_ipc("rec deep ret", r->c.deep_ipc, 37, 0, 0);
    /* On: bits 101 + 64 = 165, TIPs 37 (3 bytes: 111); 38 stretches of 165 bits: q = 4,
     *   r = 13: 13 * ceil(5/6) + 25 * ceil(4/6) = 38 packets; 149 + 31 = 180
     * Off: bits 101, TIPs 101 (303); 101 stretches of one bit: 101 packets; 404 + 31 = 435 */
    check_bytes(p, 1, 165, 37, 38, 180);
    check_bytes(p, 0, 101, 101, 101, 435);
}

static void check_same(const struct ptc_fullpt_profile *a, const struct ptc_fullpt_profile *b,
                       const char *what)
{
    char w[128];
    snprintf(w, sizeof w, "%s: functions", what);
    CHECK_EQ(w, b->nfunc, a->nfunc);
    snprintf(w, sizeof w, "%s: instructions", what);
    CHECK_EQ(w, b->total.insns, a->total.insns);
    CHECK(memcmp(&a->total, &b->total, sizeof a->total) == 0);
}

/* The callgrind output and log collect left in dir/fullpt.*, into cg and log. */
static int find_outputs(const char *dir, char *cg, char *log, size_t size)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    cg[0] = log[0] = 0;
    while ((e = readdir(d)))
        if (strncmp(e->d_name, "callgrind.out.", 14) == 0)
            snprintf(cg, size, "%s/%s", dir, e->d_name);
        else if (strncmp(e->d_name, "valgrind.log.", 13) == 0)
            snprintf(log, size, "%s/%s", dir, e->d_name);
    closedir(d);
    return cg[0] && log[0] ? 0 : -1;
}

static struct ptc_fullpt_profile *collect(const char *exe, const char *workdir)
{
    if (mkdir(workdir, 0755) && errno != EEXIST) {
        fprintf(stderr, "FAIL: mkdir %s: %s\n", workdir, strerror(errno));
        return NULL;
    }
    const char *argv[] = {exe, NULL};
    struct ptc_fullpt_profile *p;
    char why[1024];
    if (ptc_fullpt_collect(argv, workdir, &p, why, sizeof why)) {
        fprintf(stderr, "FAIL: collect %s: %s\n", exe, why);
        return NULL;
    }
    printf("%s: %zu functions, %llu instructions, %.2f s under valgrind (in %s)\n", exe,
           p->nfunc, (unsigned long long)p->total.insns, p->run_seconds, p->workdir);
    if (p->notes)
        printf("notes: %s\n", p->notes);
    return p;
}

static int test_program(const char *name, const char *exe, const char *workdir)
{
    if (!have_valgrind(0))
        return 77;
    struct ptc_fullpt_profile *p = collect(exe, workdir);
    if (!p)
        return 1;
    CHECK_EQ("processes", p->processes, 1);
    CHECK_EQ("unclassified instructions", p->unclassified_insns, 0);
    CHECK(p->main_module && strstr(p->main_module, strrchr(exe, '/') ? strrchr(exe, '/') : exe));
    for (size_t i = 0; i < p->nfunc; i++)
        CHECK(p->func[i].in_main);
    CHECK(memcmp(&p->total, &p->main, sizeof p->total) == 0);
    if (strcmp(name, "loop") == 0)
        expect_loop(p);
    else if (strcmp(name, "switch") == 0)
        expect_switch(p);
    else if (strcmp(name, "icall") == 0)
        expect_icall(p);
    else if (strcmp(name, "recurse") == 0)
        expect_recurse(p);
    else {
        fprintf(stderr, "unknown program %s\n", name);
        failures++;
    }
    /* the saved output read again: with valgrind's log, and without it (a static program
     * needs no load addresses) */
    char cg[4096], log[4096], why[1024];
    if (find_outputs(p->workdir, cg, log, sizeof cg)) {
        fprintf(stderr, "FAIL: no callgrind.out.* and valgrind.log.* in %s\n", p->workdir);
        failures++;
    } else {
        struct ptc_fullpt_profile *q;
        for (int with_log = 1; with_log >= 0; with_log--) {
            if (ptc_fullpt_parse(cg, with_log ? log : NULL, &q, why, sizeof why)) {
                fprintf(stderr, "FAIL: parse %s: %s\n", cg, why);
                failures++;
                continue;
            }
            check_same(p, q, with_log ? "parse with log" : "parse without log");
            ptc_fullpt_free(q);
        }
    }
    if (!failures)
        remove_tree(p->workdir);
    ptc_fullpt_free(p);
    printf("%s: %s\n", name, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

/* A dynamically linked C program (fpt_dyn.c): spin() runs an inline-asm loop of 500
 * iterations, so its counts are exact even though the program around it is compiled C. */
static int test_dynamic(const char *exe, const char *workdir)
{
    if (!have_valgrind(0))
        return 77;
    struct ptc_fullpt_profile *p = collect(exe, workdir);
    if (!p)
        return 1;
    const char *base = strrchr(exe, '/') ? strrchr(exe, '/') : exe;
    CHECK_EQ("unclassified instructions", p->unclassified_insns, 0);
    CHECK(p->excluded_insns > 0); /* valgrind's preload object ran, and was left out */
    const struct ptc_fullpt_func *spin = need(p, "spin", base);
    CHECK_EQ("spin.cond", spin->c.cond, 500);
    CHECK_EQ("spin.cond_taken", spin->c.cond_taken, 499);
    CHECK(spin->in_main);
    CHECK(need(p, "main", base)->c.call >= 2);
    /* the PLT stubs: code callgrind reports at run-time addresses, placed with the log's
     * load addresses and named by their disassembly labels; each call through one is an
     * indirect jmp */
    uint64_t plt_ijmp = 0, libc = 0, ldso = 0;
    for (size_t i = 0; i < p->nfunc; i++) {
        const struct ptc_fullpt_func *f = &p->func[i];
        if (f->in_main && strstr(f->name, "@plt"))
            plt_ijmp += f->c.ijmp;
        if (strstr(f->module, "libc.so"))
            libc += f->c.insns;
        if (strstr(f->module, "ld-linux"))
            ldso += f->c.insns;
    }
    CHECK(plt_ijmp >= 2);
    CHECK(libc > 0 && ldso > 0);
    CHECK(p->total.insns > p->main.insns);
    CHECK(p->total.cond > p->main.cond && p->main.cond >= 500);
    CHECK(p->total.sys >= 1);
    struct ptc_fullpt_cfg c = cfg_of(PTC_FULLPT_MTC, 1, 4096);
    struct ptc_fullpt_bytes b = estimate(p, &c, NULL);
    CHECK(b.total > b.main_bytes && b.main_bytes > 0);
    /* without valgrind's log the load addresses of the PLTs come from the direct calls into
     * them: the same counts */
    char cg[4096], log[4096], why[1024];
    struct ptc_fullpt_profile *q;
    if (find_outputs(p->workdir, cg, log, sizeof cg)) {
        fprintf(stderr, "FAIL: no callgrind.out.* and valgrind.log.* in %s\n", p->workdir);
        failures++;
    } else if (ptc_fullpt_parse(cg, NULL, &q, why, sizeof why)) {
        fprintf(stderr, "FAIL: parse %s: %s\n", cg, why);
        failures++;
    } else {
        check_same(p, q, "parse without log");
        CHECK_EQ("without log: unclassified", q->unclassified_insns, 0);
        CHECK_EQ("without log: valgrind's own", q->excluded_insns, p->excluded_insns);
        CHECK(q->main_module && strcmp(q->main_module, p->main_module) == 0);
        ptc_fullpt_free(q);
    }
    if (!failures)
        remove_tree(p->workdir);
    ptc_fullpt_free(p);
    printf("dynamic: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

static int test_errors(const char *workdir)
{
    char why[1024];
    struct ptc_fullpt_profile *p = (struct ptc_fullpt_profile *)1;
    const char *missing[] = {"/nonexistent/program", NULL};
    if (have_valgrind(1)) {
        CHECK(ptc_fullpt_collect(missing, workdir, &p, why, sizeof why) == -1);
        CHECK(p == NULL);
        CHECK(strstr(why, "cannot run /nonexistent/program") != NULL);
        printf("missing program: %s\n", why);
    }
    /* without valgrind in PATH: the message says how to get it */
    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent", 1);
    const char *prog[] = {"/bin/true", NULL};
    CHECK(ptc_fullpt_collect(prog, workdir, &p, why, sizeof why) == -1);
    CHECK(strstr(why, "valgrind not found") && strstr(why, "apt-get install valgrind"));
    printf("no valgrind: %s\n", why);
    if (path) {
        setenv("PATH", path, 1);
        free(path);
    }
    /* files that are not callgrind outputs */
    CHECK(ptc_fullpt_parse("/nonexistent/callgrind.out", NULL, &p, why, sizeof why) == -1);
    CHECK(strstr(why, "cannot open") != NULL);
    printf("missing file: %s\n", why);
    char bad[4096];
    snprintf(bad, sizeof bad, "%s/not-callgrind.txt", workdir);
    mkdir(workdir, 0755);
    FILE *f = fopen(bad, "w");
    if (f) {
        fputs("hello\nworld\n", f);
        fclose(f);
        CHECK(ptc_fullpt_parse(bad, NULL, &p, why, sizeof why) == -1);
        CHECK(strstr(why, "not a callgrind output") != NULL);
        printf("not callgrind: %s\n", why);
        f = fopen(bad, "w");
        fputs("events: Ir\nfn=(1) f\n0x1000 0 1\ncalls=1 0x2000\n", f);
        fclose(f);
        CHECK(ptc_fullpt_parse(bad, NULL, &p, why, sizeof why) == -1);
        printf("bad callgrind: %s\n", why);
        unlink(bad);
    }
    printf("errors: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc >= 2 && strcmp(argv[1], "model") == 0) {
        int rc = test_model();
        printf("model: %s\n", rc ? "FAILED" : "ok");
        return rc;
    }
    if (argc == 5 && strcmp(argv[1], "program") == 0)
        return test_program(argv[2], argv[3], argv[4]);
    if (argc == 4 && strcmp(argv[1], "dynamic") == 0)
        return test_dynamic(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "errors") == 0)
        return test_errors(argv[2]);
    fprintf(stderr, "usage: test_fullpt model | program NAME EXE WORKDIR | dynamic EXE WORKDIR | "
                    "errors WORKDIR\n");
    return 2;
}
