/* The soft front-end's specialised loop (decoder/soft_fast.c, taken when no call hook is
 * set) must give exactly what the general loop gives (taken when a hook is set), and the
 * parallel decode by threads (decoder/par.c) exactly what the serial one gives. Random
 * traces that exercise every way out of the specialised loop -- 1- and 2-byte stub ids,
 * 1- to 4-byte and negative time deltas, skipped exits, unwinds, landings, unmatched exits,
 * unknown stubs, whole calls of leaves (PTC_STUB_CALL), drops, stacks deeper than the first allocation, timed and untimed chunks
 * of one thread, chunks cut at random places, loss chunks and missing chunks of threads and
 * of the process -- are decoded all three ways and every figure the session offers is
 * compared; a trace with a fork must fall back to the serial decode and agree as well. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptcall/decode.h"
#include "ptcall/map_format.h"
#include "tw.h"

static int failures;

#define CHECK_EQ(what, a, b)                                                                \
    do {                                                                                    \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);      \
        if (a_ != b_) {                                                                     \
            fprintf(stderr, "%s: %s: fast %llu, %s %llu\n", name, what, a_, other, b_);   \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

enum { NF = 40 }; /* 160 stubs: ids from 96 up take two bytes */
static const char *names[NF];
static char namebuf[NF][16];

static uint64_t rng;
static uint64_t xr(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct gen {
    struct tw_stream *st[2]; /* timed and untimed chunks of the same thread */
    int cur;
    uint32_t stack[4096];
    int depth;
    uint64_t t;
};

static void hit(struct gen *g, uint32_t id)
{
    uint64_t r = xr() % 100;
    if (r < 80)
        g->t += 1 + xr() % 60; /* one-byte delta */
    else if (r < 90)
        g->t += 64 + xr() % 8000; /* two bytes */
    else if (r < 97)
        g->t += xr() % 5000000; /* three or four bytes */
    else
        g->t -= xr() % 50; /* the clock stepped back (another CPU) */
    tw_hit(g->st[g->cur], id, g->t);
}

static void events(struct gen *g, int n, int mixed)
{
    for (int i = 0; i < n; i++) {
        if (mixed && xr() % 200 == 0) { /* switch between timed and untimed chunks */
            tw_flush(g->st[g->cur]);
            g->cur ^= 1;
        }
        uint64_t r = xr() % 1000;
        if (r < 560 || g->depth == 0) {
            uint32_t f = (uint32_t)(xr() % (xr() % 4 ? 6 : NF)); /* mostly a few hot ones */
            if (g->depth < 4096) {
                g->stack[g->depth++] = f;
                hit(g, TW_E(f));
            }
        } else if (r < 930) {
            hit(g, TW_X(g->stack[--g->depth]));
        } else if (r < 945) { /* exits skipped: leave a deeper frame (repairs) */
            int k = (int)(xr() % (uint64_t)g->depth);
            g->depth = k;
            hit(g, TW_X(g->stack[k]));
        } else if (r < 960) { /* an exception passes: unwind stub */
            hit(g, TW_U(g->stack[--g->depth]));
        } else if (r < 970) { /* landing pad in a frame further down */
            int k = (int)(xr() % (uint64_t)g->depth);
            g->depth = k + 1;
            hit(g, TW_L(g->stack[k]));
        } else if (r < 980) { /* exit of a function that was never entered */
            hit(g, TW_X((uint32_t)(xr() % NF)));
        } else if (r < 985) { /* an id no module defines */
            hit(g, 5 * NF + (uint32_t)(xr() % 3000));
        } else if (r < 988) { /* a leaf's call and return in one record */
            hit(g, TW_C(NF, (uint32_t)(xr() % (xr() % 4 ? 6 : NF))));
        } else if (r < 991) { /* dropped events: the stack restarts empty */
            tw_drop(g->st[g->cur], 1 + xr() % 5, g->t);
            g->depth = 0;
        } else if (r < 993) { /* deep recursion: the stack grows past its first size */
            uint32_t f = (uint32_t)(xr() % NF);
            for (int k = 0; k < 300 && g->depth < 4096; k++) {
                g->stack[g->depth++] = f;
                hit(g, TW_E(f));
            }
        } else if (g->depth < 4096) {
            hit(g, TW_E(g->stack[g->depth - 1])); /* direct recursion */
            g->stack[g->depth] = g->stack[g->depth - 1];
            g->depth++;
        }
    }
}

static void write_trace(const char *path, uint64_t seed, int timed, int mixed, int fork)
{
    rng = seed;
    uint32_t ff = timed ? PTC_FILE_F_TIMED : 0;
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, ff);
    tw_record_info(w, ff, "./prog");
    tw_process(w, 100, PTC_PROC_START, 1, 0, "/bin/prog");
    tw_timebase(w, 100, 1, 3, 0);
    tw_module_ex(w, 100, 0, 0, 0x400000, "/bin/prog", names, NF, 1);
    static struct gen g[3];
    for (uint32_t k = 0; k < 3; k++) {
        uint32_t tid = 100 + k;
        if (k)
            tw_thread(w, 100, tid, PTC_THREAD_START, "worker");
        memset(&g[k], 0, sizeof(g[k]));
        g[k].t = 1000000 * (k + 1);
        g[k].st[0] = tw_stream(w, 100, tid, timed, 1 + (uint32_t)(xr() % 700));
        g[k].st[1] = tw_stream(w, 100, tid, !timed, 1 + (uint32_t)(xr() % 700));
    }
    for (int round = 0; round < 30; round++) {
        for (int k = 0; k < 3; k++)
            events(&g[k], 2000, mixed);
        if (round == 10) { /* losses outside the event streams, and lost chunks */
            tw_loss_chunk(w, 100, 101, PTC_LOSS_DROPPED, 7);
            tw_loss_chunk(w, 100, 0, PTC_LOSS_CRASH, 3);
            tw_flush(g[2].st[g[2].cur]);
            tw_skip_seq(w, 100, 102, 2);
            g[2].depth = 0;
            tw_skip_seq(w, 100, 0, 1);
        }
    }
    if (fork) { /* thread 100 forks; the child returns through the inherited frames */
        tw_flush(g[0].st[g[0].cur]);
        tw_fork(g[0].st[g[0].cur], 200, g[0].t);
        tw_flush(g[0].st[g[0].cur]);
        tw_process(w, 200, PTC_PROC_FORK, 100, 100, "/bin/prog");
        struct tw_stream *c = tw_stream(w, 200, 200, timed, 0);
        for (int d = g[0].depth; d > 0; d--)
            tw_hit(c, TW_X(g[0].stack[d - 1]), g[0].t += 5);
        tw_stream_free(c);
        tw_process_end(w, 200, 0);
    }
    for (uint32_t k = 0; k < 3; k++) {
        tw_stream_free(g[k].st[0]);
        tw_stream_free(g[k].st[1]);
        if (k)
            tw_thread(w, 100, 100 + k, PTC_THREAD_EXIT, "worker");
    }
    tw_process_end(w, 100, 0);
    tw_record_end(w, 0);
    tw_close(w);
}

static void noop_hook(void *ctx, const struct ptc_call_event *e)
{
    (void)ctx;
    (void)e;
}

static int cmp_edge(const void *a, const void *b)
{
    const struct ptc_edge *x = a, *y = b;
    if (x->caller != y->caller)
        return x->caller < y->caller ? -1 : 1;
    return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static void lossy(void *ctx, uint32_t pid, uint32_t tid, uint64_t lost, uint64_t gaps)
{
    char *b = ctx;
    size_t n = strlen(b);
    snprintf(b + n, 4096 - n, "%u/%u:%llu:%llu ", pid, tid, (unsigned long long)lost,
             (unsigned long long)gaps);
}

static void compare_pair(const char *name, const char *other, struct ptc_session *a0,
                         struct ptc_session *b0)
{
    struct ptc_totals t[2];
    ptc_session_totals(a0, &t[0]);
    ptc_session_totals(b0, &t[1]);
#define TOT(f) CHECK_EQ(#f, t[0].f, t[1].f)
    TOT(events);
    TOT(whole_calls);
    TOT(chunks);
    TOT(threads);
    TOT(calls);
    TOT(gaps);
    TOT(lost_events);
    TOT(repairs);
    TOT(unwound);
    TOT(unmatched);
    TOT(broken_frames);
    TOT(open_at_end);
    TOT(bad_stubs);
    TOT(lossy_threads);
    TOT(total_time);
    TOT(timed);
    TOT(processes);
    TOT(missing_chunks);
    TOT(lost_other);
    TOT(skipped_chunks);
    TOT(fork_unknown);
    TOT(record_end);
    char la[4096] = "", lb[4096] = ""; /* lossy threads, in the order reports list them */
    ptc_session_lossy_threads(a0, lossy, la);
    ptc_session_lossy_threads(b0, lossy, lb);
    if (strcmp(la, lb)) {
        fprintf(stderr, "%s: lossy threads: fast %s, %s %s\n", name, la, other, lb);
        failures++;
    }
    /* the trace must exercise what it is meant to: a test that cannot fail is no test */
    if (!t[0].events || !t[0].repairs || !t[0].unwound || !t[0].unmatched || !t[0].bad_stubs ||
        !t[0].gaps || !t[0].whole_calls) {
        fprintf(stderr, "%s: the trace misses a case (events %llu whole calls %llu repairs %llu "
                        "unwound %llu unmatched %llu bad %llu gaps %llu)\n",
                name, (unsigned long long)t[0].events, (unsigned long long)t[0].whole_calls,
                (unsigned long long)t[0].repairs,
                (unsigned long long)t[0].unwound, (unsigned long long)t[0].unmatched,
                (unsigned long long)t[0].bad_stubs, (unsigned long long)t[0].gaps);
        failures++;
    }
    uint32_t nf = ptc_session_num_funcs(a0);
    CHECK_EQ("functions", nf, ptc_session_num_funcs(b0));
    for (uint32_t f = 0; f < nf; f++) {
        struct ptc_func_stats a, b;
        ptc_session_func_stats(a0, f, &a);
        ptc_session_func_stats(b0, f, &b);
        CHECK_EQ("calls", a.calls, b.calls);
        CHECK_EQ("total", a.total, b.total);
        CHECK_EQ("self", a.self, b.self);
    }
    struct ptc_edge *e[2];
    size_t ne[2];
    for (int i = 0; i < 2; i++) {
        ne[i] = ptc_session_edges(i ? b0 : a0, &e[i]);
        qsort(e[i], ne[i], sizeof(*e[i]), cmp_edge);
    }
    CHECK_EQ("edges", ne[0], ne[1]);
    for (size_t i = 0; i < ne[0] && i < ne[1]; i++) {
        CHECK_EQ("edge caller", e[0][i].caller, e[1][i].caller);
        CHECK_EQ("edge callee", e[0][i].callee, e[1][i].callee);
        CHECK_EQ("edge count", e[0][i].count, e[1][i].count);
    }
    for (int i = 0; i < 2; i++)
        free(e[i]);
}

static void compare(const char *name, const char *path, int fork)
{
    struct ptc_session *s[3];
    static const char *const how[3] = {"fast", "general", "parallel"};
    for (int i = 0; i < 3; i++) {
        s[i] = ptc_session_new();
        if (i == 1) /* any hook makes the session take the general loop */
            ptc_session_set_call_hook(s[i], noop_hook, NULL);
        int rc = i == 2 ? ptc_decode_file_threads(s[i], path, 0, 3) : ptc_decode_file(s[i], path, 0);
        if (rc) {
            fprintf(stderr, "%s: decode %d: rc %d (%s)\n", name, i, rc, ptc_session_errmsg(s[i]));
            failures++;
        }
    }
    for (int j = 1; j < 3; j++)
        compare_pair(name, how[j], s[0], s[j]);
    /* and the parallel decode really split the threads, unless it had to fall back */
    unsigned want = fork ? 1 : 3, got = ptc_session_decode_threads(s[2]);
    if (got != want) {
        fprintf(stderr, "%s: decoded by %u threads, expected %u\n", name, got, want);
        failures++;
    }
    for (int i = 0; i < 3; i++)
        ptc_session_free(s[i]);
}

int main(void)
{
    for (int i = 0; i < NF; i++) {
        snprintf(namebuf[i], sizeof(namebuf[i]), "f%02d", i);
        names[i] = namebuf[i];
    }
    char dir[] = "/tmp/ptc_fastpath_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[256];
    snprintf(path, sizeof(path), "%s/t.ptc", dir);
    static const struct {
        const char *name;
        int timed, mixed;
        int fork;
    } cases[] = {{"timed", 1, 0, 0}, {"untimed", 0, 0, 0}, {"mixed", 1, 1, 0},
                 {"mixed-untimed", 0, 1, 0}, {"fork", 1, 0, 1}};
    for (uint64_t seed = 1; seed <= 4; seed++)
        for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
            char name[64];
            snprintf(name, sizeof(name), "%s seed %llu", cases[c].name, (unsigned long long)seed);
            write_trace(path, seed * 0x9E3779B97F4A7C15ULL, cases[c].timed, cases[c].mixed,
                        cases[c].fork);
            compare(name, path, cases[c].fork);
        }
    unlink(path);
    rmdir(dir);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("fast == general == parallel on all traces\n");
    return 0;
}
