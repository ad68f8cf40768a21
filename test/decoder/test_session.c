/* Decoder semantics on synthetic traces with known content: call sequences, counts,
 * inclusive/self times, edges, repairs, unwinding, gaps, drops, fork, untimed, threads. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptcall/decode.h"
#include "ptcall/map_format.h"
#include "tw.h"

static int failures;
static char tmpdir[256];
static char logbuf[1 << 16];
static int log_tids;
static struct ptc_session *cur;

#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: %s: CHECK failed: %s\n", __FILE__, __LINE__, __func__,  \
                    #cond);                                                                 \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)
#define CHECK_EQ(a, b)                                                                      \
    do {                                                                                    \
        unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);      \
        if (a_ != b_) {                                                                     \
            fprintf(stderr, "%s:%d: %s: %s == %llu, expected %s == %llu\n", __FILE__,       \
                    __LINE__, __func__, #a, a_, #b, b_);                                    \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)
#define CHECK_STR(a, b)                                                                     \
    do {                                                                                    \
        if (strcmp((a), (b))) {                                                             \
            fprintf(stderr, "%s:%d: %s: got\n  %s\nexpected\n  %s\n", __FILE__, __LINE__,   \
                    __func__, (a), (b));                                                    \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

static const char *const NAMES[] = {"main", "a", "b", "c", "even", "odd", "fact"};
enum { MAIN, A, B, C, EVEN, ODD, FACT, NF };

static void logf_(const char *fmt, ...)
{
    size_t l = strlen(logbuf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(logbuf + l, sizeof(logbuf) - l, fmt, ap);
    va_end(ap);
}

static const char *fname(uint32_t id)
{
    const struct ptc_func_info *f = ptc_session_func(cur, id);
    return f ? f->name : "?";
}

static void hook(void *ctx, const struct ptc_call_event *e)
{
    (void)ctx;
    static const char *how[] = {"", "/unwind", "/repair", "/landing", "/broken", "/end"};
    if (log_tids)
        logf_("%u:", e->tid);
    switch (e->kind) {
    case PTC_CALL_ENTER:
        logf_(">%s", fname(e->func));
        break;
    case PTC_CALL_RETURN:
        logf_("<%s%s", fname(e->func), how[e->how]);
        if (e->has_time)
            logf_("=%llu", (unsigned long long)e->dur);
        break;
    case PTC_CALL_GAP:
        logf_("gap(%llu)", (unsigned long long)e->count);
        break;
    case PTC_CALL_UNMATCHED:
        logf_("?%s", fname(e->func));
        break;
    case PTC_CALL_FORK:
        logf_("fork(%llu)", (unsigned long long)e->count);
        break;
    case PTC_CALL_FORKED:
        logf_("forked(%u)", e->depth);
        break;
    case PTC_CALL_SPAWN:
        logf_("spawn(%llu@%u)", (unsigned long long)e->count, e->depth);
        break;
    case PTC_CALL_LANDING:
        logf_("!%s", fname(e->func));
        break;
    }
    logf_(" ");
}

static char *path_for(const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s.ptc", tmpdir, name);
    return p;
}

/* A trace with process pid, its module (NAMES) and a 1:1 time base. */
static struct tw *begin(const char *name, int timed)
{
    struct tw *w = tw_open(path_for(name), PTC_BACKEND_SOFT, timed ? PTC_FILE_F_TIMED : 0);
    tw_record_info(w, timed ? PTC_FILE_F_TIMED : 0, "./prog");
    tw_process(w, 100, PTC_PROC_START, 1, 0, "/bin/prog");
    tw_timebase(w, 100, 0, 1, 0);
    tw_module(w, 100, 0, 0, 0x400000, "/bin/prog", NAMES, NF);
    return w;
}

static struct ptc_session *decode(const char *name, int expect_rc)
{
    struct ptc_session *s = ptc_session_new();
    cur = s;
    logbuf[0] = 0;
    ptc_session_set_call_hook(s, hook, NULL);
    int rc = ptc_decode_file(s, path_for(name), 0);
    if (rc != expect_rc)
        fprintf(stderr, "decode %s: rc %d (%s)\n", name, rc, ptc_session_errmsg(s));
    CHECK_EQ(rc, expect_rc);
    size_t l = strlen(logbuf);
    if (l && logbuf[l - 1] == ' ')
        logbuf[l - 1] = 0;
    return s;
}

static struct ptc_func_stats fs(struct ptc_session *s, uint32_t f)
{
    struct ptc_func_stats st;
    ptc_session_func_stats(s, f, &st);
    return st;
}

static uint64_t edge(struct ptc_session *s, uint32_t a, uint32_t b)
{
    struct ptc_edge *e;
    size_t n = ptc_session_edges(s, &e);
    uint64_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (e[i].caller == a && e[i].callee == b)
            c = e[i].count;
    free(e);
    return c;
}

#define HITS(st, ...)                                                                       \
    do {                                                                                    \
        const uint64_t ev_[][2] = {__VA_ARGS__};                                            \
        for (size_t i_ = 0; i_ < sizeof(ev_) / sizeof(ev_[0]); i_++)                        \
            tw_hit(st, (uint32_t)ev_[i_][0], ev_[i_][1]);                                   \
    } while (0)

static void end_trace(struct tw *w)
{
    tw_process_end(w, 100, 0);
    tw_record_end(w, 0);
    tw_close(w);
}

static void test_basic(void)
{
    struct tw *w = begin("basic", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 3); /* several chunks */
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 10}, {TW_E(B), 20}, {TW_X(B), 30}, {TW_X(A), 40},
         {TW_E(A), 50}, {TW_X(A), 60}, {TW_X(MAIN), 100});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("basic", 0);
    CHECK_STR(logbuf, ">main >a >b <b=10 <a=30 >a <a=10 <main=100");
    CHECK_EQ(fs(s, MAIN).calls, 1);
    CHECK_EQ(fs(s, MAIN).total, 100);
    CHECK_EQ(fs(s, MAIN).self, 60);
    CHECK_EQ(fs(s, A).calls, 2);
    CHECK_EQ(fs(s, A).total, 40);
    CHECK_EQ(fs(s, A).self, 30);
    CHECK_EQ(fs(s, B).calls, 1);
    CHECK_EQ(fs(s, B).total, 10);
    CHECK_EQ(fs(s, B).self, 10);
    CHECK_EQ(edge(s, MAIN, A), 2);
    CHECK_EQ(edge(s, A, B), 1);
    CHECK_EQ(edge(s, MAIN, B), 0);
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.events, 8);
    CHECK_EQ(t.calls, 4);
    CHECK_EQ(t.threads, 1);
    CHECK_EQ(t.processes, 1);
    CHECK_EQ(t.gaps + t.repairs + t.unmatched + t.lost_events + t.open_at_end, 0);
    CHECK_EQ(t.total_time, 100);
    CHECK(t.timed && t.has_timebase && t.record_end);
    ptc_session_free(s);
}

static void test_recursion(void)
{
    struct tw *w = begin("recursion", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    HITS(st, {TW_E(FACT), 0}, {TW_E(FACT), 10}, {TW_E(FACT), 20}, {TW_X(FACT), 30},
         {TW_X(FACT), 40}, {TW_X(FACT), 50});
    /* mutual recursion */
    HITS(st, {TW_E(MAIN), 100}, {TW_E(EVEN), 110}, {TW_E(ODD), 120}, {TW_E(EVEN), 130},
         {TW_X(EVEN), 140}, {TW_X(ODD), 150}, {TW_X(EVEN), 160}, {TW_X(MAIN), 170});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("recursion", 0);
    CHECK_EQ(fs(s, FACT).calls, 3);
    CHECK_EQ(fs(s, FACT).total, 50); /* outermost activation only */
    CHECK_EQ(fs(s, FACT).self, 50);
    CHECK_EQ(edge(s, FACT, FACT), 2);
    CHECK_EQ(fs(s, EVEN).calls, 2);
    CHECK_EQ(fs(s, EVEN).total, 50);
    CHECK_EQ(fs(s, EVEN).self, 30);
    CHECK_EQ(fs(s, ODD).total, 30);
    CHECK_EQ(fs(s, ODD).self, 20);
    CHECK_EQ(fs(s, MAIN).total, 70);
    CHECK_EQ(fs(s, MAIN).self, 20);
    CHECK_EQ(edge(s, EVEN, ODD), 1);
    CHECK_EQ(edge(s, ODD, EVEN), 1);
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.total_time, 120);
    ptc_session_free(s);
}

static void test_longjmp(void)
{
    struct tw *w = begin("longjmp", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    /* exits of b and c skipped (longjmp into a, no landing stub): a's exit repairs */
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 10}, {TW_E(B), 20}, {TW_E(C), 30}, {TW_X(A), 40});
    /* with a landing stub after setjmp returns a second time in a */
    HITS(st, {TW_E(A), 50}, {TW_E(B), 60}, {TW_E(C), 70}, {TW_L(A), 80}, {TW_X(A), 90});
    /* an exit of a function that is not on the stack */
    HITS(st, {TW_X(C), 95}, {TW_X(MAIN), 100});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("longjmp", 0);
    CHECK_STR(logbuf, ">main >a >b >c <c/repair=10 <b/repair=20 <a=30 >a >b >c <c/landing=10 "
                      "<b/landing=20 !a <a=40 ?c <main=100");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.repairs, 2);
    CHECK_EQ(t.unwound, 2);
    CHECK_EQ(t.unmatched, 1);
    CHECK_EQ(fs(s, C).calls, 2);
    CHECK_EQ(fs(s, C).total, 20);
    CHECK_EQ(fs(s, A).total, 70);
    CHECK_EQ(fs(s, A).self, 70 - 20 - 20);
    ptc_session_free(s);
}

static void test_exceptions(void)
{
    struct tw *w = begin("exceptions", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    /* b throws: its unwind stub runs, a catches (landing) and returns */
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 10}, {TW_E(B), 20}, {TW_U(B), 30}, {TW_L(A), 40},
         {TW_X(A), 50});
    /* c throws without an unwind stub (no cleanup): caught in main */
    HITS(st, {TW_E(A), 60}, {TW_E(C), 70}, {TW_L(MAIN), 80}, {TW_X(MAIN), 100});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("exceptions", 0);
    CHECK_STR(logbuf, ">main >a >b <b/unwind=10 !a <a=40 >a >c <c/landing=10 <a/landing=20 "
                      "!main <main=100");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.unwound, 2);
    CHECK_EQ(t.repairs, 0);
    CHECK_EQ(t.unmatched, 0);
    CHECK_EQ(fs(s, A).calls, 2);
    CHECK_EQ(fs(s, A).total, 60);
    CHECK_EQ(fs(s, MAIN).self, 100 - 60);
    ptc_session_free(s);
}

static void test_gap_and_drops(void)
{
    struct tw *w = begin("gaps", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 10});
    tw_flush(st);
    tw_skip_seq(w, 100, 100, 1); /* one chunk lost */
    HITS(st, {TW_X(A), 50}, {TW_X(MAIN), 60}, {TW_E(B), 70});
    tw_drop(st, 5, 75);
    HITS(st, {TW_X(B), 80}, {TW_E(C), 90}, {TW_X(C), 95});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("gaps", 0);
    CHECK_STR(logbuf, ">main >a <a/broken=0 <main/broken=10 gap(0) ?a ?main >b <b/broken=0 "
                      "gap(5) ?b >c <c=5");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.gaps, 2);
    CHECK_EQ(t.missing_chunks, 1);
    CHECK_EQ(t.lost_events, 5);
    CHECK_EQ(t.broken_frames, 3);
    CHECK_EQ(t.unmatched, 3);
    CHECK_EQ(t.lossy_threads, 1);
    CHECK_EQ(fs(s, MAIN).total, 10);
    ptc_session_free(s);
}

static void fork_trace(const char *name, int child_first)
{
    struct tw *w = begin(name, 1);
    struct tw_stream *p = tw_stream(w, 100, 100, 1, 0);
    struct tw_stream *c = tw_stream(w, 200, 200, 1, 0);
    HITS(p, {TW_E(MAIN), 0}, {TW_E(A), 10});
    tw_fork(p, 200, 15);
    HITS(p, {TW_X(A), 20}, {TW_X(MAIN), 30});
    tw_process(w, 200, PTC_PROC_FORK, 100, 100, "/bin/prog");
    HITS(c, {TW_X(A), 40}, {TW_E(B), 45}, {TW_X(B), 50}, {TW_X(MAIN), 60});
    if (child_first) { /* the child has even ended before the fork record is written */
        tw_flush(c);
        tw_thread(w, 200, 200, PTC_THREAD_EXIT, "child");
        tw_process_end(w, 200, 0);
        tw_flush(p);
    } else {
        tw_flush(p);
        tw_flush(c);
        tw_process_end(w, 200, 0);
    }
    tw_stream_free(p);
    tw_stream_free(c);
    end_trace(w);
}

static void test_fork(void)
{
    for (int order = 0; order < 2; order++) {
        const char *name = order ? "fork-child-first" : "fork-parent-first";
        fork_trace(name, order);
        log_tids = 1;
        struct ptc_session *s = decode(name, 0);
        log_tids = 0;
        if (order)
            CHECK_STR(logbuf, "100:>main 100:>a 100:fork(200) 200:forked(2) 200:<a=25 200:>b "
                              "200:<b=5 200:<main=45 100:<a=10 100:<main=30");
        else
            CHECK_STR(logbuf, "100:>main 100:>a 100:fork(200) 100:<a=10 100:<main=30 "
                              "200:forked(2) 200:<a=25 200:>b 200:<b=5 200:<main=45");
        struct ptc_totals t;
        ptc_session_totals(s, &t);
        CHECK_EQ(t.processes, 2);
        CHECK_EQ(t.threads, 2);
        CHECK_EQ(t.unmatched, 0);
        CHECK_EQ(t.fork_unknown, 0);
        CHECK_EQ(t.open_at_end, 0);
        CHECK_EQ(fs(s, MAIN).calls, 1); /* the child does not call main again */
        CHECK_EQ(fs(s, A).calls, 1);
        CHECK_EQ(fs(s, B).calls, 1);
        CHECK_EQ(edge(s, MAIN, B), 1);
        CHECK_EQ(fs(s, MAIN).total, 30 + 45);
        CHECK_EQ(fs(s, A).total, 10 + 25);
        ptc_session_free(s);
    }
}

static void test_untimed_threads(void)
{
    struct tw *w = begin("untimed", 0);
    struct tw_stream *t1 = tw_stream(w, 100, 100, 0, 2);
    struct tw_stream *t2 = tw_stream(w, 100, 101, 0, 2);
    tw_thread(w, 100, 101, PTC_THREAD_START, "worker");
    HITS(t1, {TW_E(MAIN), 0}, {TW_E(A), 0});
    HITS(t2, {TW_E(B), 0}, {TW_E(C), 0});
    HITS(t1, {TW_X(A), 0}, {TW_E(C), 0});
    HITS(t2, {TW_X(C), 0}, {TW_X(B), 0});
    HITS(t1, {TW_X(C), 0}, {TW_X(MAIN), 0});
    tw_stream_free(t1);
    tw_stream_free(t2);
    tw_thread(w, 100, 101, PTC_THREAD_EXIT, "worker");
    tw_raw_chunk(w, 200, PTC_CHUNK_F_OPTIONAL, 0, 0, "future", 6); /* skipped */
    end_trace(w);
    log_tids = 1;
    struct ptc_session *s = decode("untimed", 0);
    log_tids = 0;
    CHECK_STR(logbuf, "100:>main 100:>a 101:>b 101:>c 100:<a 100:>c 101:<c 101:<b 100:<c "
                      "100:<main");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK(!t.timed);
    CHECK_EQ(t.threads, 2);
    CHECK_EQ(t.skipped_chunks, 1);
    CHECK_EQ(fs(s, C).calls, 2);
    CHECK_EQ(fs(s, C).total, 0);
    CHECK_EQ(edge(s, MAIN, C), 1);
    CHECK_EQ(edge(s, B, C), 1);
    ptc_session_free(s);
}

static void check_whole_calls(struct ptc_session *s)
{
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.whole_calls, 4);
    CHECK_EQ(t.events, 12);
    CHECK_EQ(t.calls, 6);
    CHECK_EQ(t.unmatched, 0);
    CHECK_EQ(t.repairs, 0);
    CHECK_EQ(fs(s, A).calls, 3);
    CHECK_EQ(edge(s, MAIN, A), 2);
    CHECK_EQ(edge(s, B, C), 1);
    CHECK_EQ(edge(s, MAIN, B), 1);
}

/* Untimed soft traces record a leaf's call as one hit of a PTC_STUB_CALL stub: the decoder
 * gives the entry and the return, counts the call and the edge from the caller, and counts
 * two events for the record. */
static void test_whole_calls(void)
{
    struct tw *w = tw_open(path_for("whole"), PTC_BACKEND_SOFT, 0);
    tw_record_info(w, 0, "./prog");
    tw_process(w, 100, PTC_PROC_START, 1, 0, "/bin/prog");
    tw_module_ex(w, 100, 0, 0, 0x400000, "/bin/prog", NAMES, NF, 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 0, 3);
    HITS(st, {TW_C(NF, A), 0}, {TW_E(MAIN), 0}, {TW_C(NF, A), 0}, {TW_C(NF, A), 0},
         {TW_E(B), 0}, {TW_C(NF, C), 0}, {TW_X(B), 0}, {TW_X(MAIN), 0});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("whole", 0);
    CHECK_STR(logbuf, ">a <a >main >a <a >a <a >b >c <c <b <main");
    check_whole_calls(s);
    ptc_session_free(s);
    /* the same without the call hook: the specialised loop */
    s = ptc_session_new();
    CHECK_EQ(ptc_decode_file(s, path_for("whole"), 0), 0);
    check_whole_calls(s);
    ptc_session_free(s);
}

static void test_bad_stub_and_unknown_required(void)
{
    struct tw *w = begin("badstub", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    HITS(st, {TW_E(MAIN), 0}, {999, 5}, {TW_X(MAIN), 10});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("badstub", 0);
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.bad_stubs, 1);
    CHECK_EQ(t.gaps, 1);
    CHECK_EQ(t.unmatched, 1);
    ptc_session_free(s);

    w = begin("required", 1);
    tw_raw_chunk(w, 77, 0, 0, 0, "x", 1);
    end_trace(w);
    s = decode("required", -PTC_E_UNSUPPORTED);
    CHECK(strstr(ptc_session_errmsg(s), "type 77") != NULL);
    ptc_session_free(s);
}

/* A MODULE_ARMED chunk of process pid for module 0 (NF functions): armed bit set,
 * num_armed as given (the bits' count when -1), the selection text. */
static void armed_chunk(struct tw *w, uint32_t pid, uint8_t bits, int num_armed, const char *spec)
{
    uint8_t buf[sizeof(struct ptc_module_armed) + 1 + 64];
    struct ptc_module_armed h = {.module_id = 0, .num_funcs = NF,
                                 .num_armed = num_armed >= 0 ? (uint32_t)num_armed
                                                             : (uint32_t)__builtin_popcount(bits),
                                 .spec_size = (uint32_t)strlen(spec) + 1};
    memcpy(buf, &h, sizeof(h));
    buf[sizeof(h)] = bits;
    memcpy(buf + sizeof(h) + 1, spec, h.spec_size);
    tw_raw_chunk(w, PTC_CHUNK_MODULE_ARMED, PTC_CHUNK_F_OPTIONAL, pid, 0, buf,
                 (uint32_t)(sizeof(h) + 1 + h.spec_size));
}

static void check_armed(struct ptc_session *s)
{
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    CHECK_EQ(sel.selected, 1);
    CHECK_STR(sel.spec, "--only 'main' --only 'a' --only 'b'");
    CHECK_EQ(sel.funcs, NF);
    CHECK_EQ(sel.traced, 3); /* b: left out by pid 100, armed by pid 101 */
    CHECK_EQ(ptc_session_func_traced(s, MAIN), 1);
    CHECK_EQ(ptc_session_func_traced(s, A), 1);
    CHECK_EQ(ptc_session_func_traced(s, B), 1);
    CHECK_EQ(ptc_session_func_traced(s, C), 0);
    CHECK_EQ(ptc_session_func_traced(s, NF), 0); /* no such function */
    CHECK_EQ(fs(s, A).calls, 3);
    CHECK_EQ(fs(s, C).calls, 0);
}

/* Record-time selection: MODULE_ARMED says which functions were armed; a function is traced
 * unless every module listing it left it out; traces without the chunk traced everything;
 * the chunk must name a module announced before it, with its number of functions. */
static void test_armed(void)
{
    const char *spec = "--only 'main' --only 'a' --only 'b'";
    struct tw *w = begin("armed", 1);
    armed_chunk(w, 100, 1u << MAIN | 1u << A, -1, spec);
    tw_process(w, 101, PTC_PROC_START, 1, 0, "/bin/prog");
    tw_module(w, 101, 0, 0, 0x400000, "/bin/prog", NAMES, NF);
    armed_chunk(w, 101, 1u << B, -1, spec);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 2);
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 1}, {TW_X(A), 2}, {TW_E(A), 3}, {TW_X(A), 4},
         {TW_X(MAIN), 5});
    tw_stream_free(st);
    st = tw_stream(w, 100, 101, 1, 2); /* a second thread: the parallel driver can split */
    HITS(st, {TW_E(A), 6}, {TW_X(A), 7});
    tw_stream_free(st);
    tw_process_end(w, 101, 0);
    end_trace(w);
    struct ptc_session *s = decode("armed", 0);
    check_armed(s);
    ptc_session_free(s);
    s = ptc_session_new(); /* the parallel driver reads the process-level chunks in every worker */
    CHECK_EQ(ptc_decode_file_threads(s, path_for("armed"), 0, 2), 0);
    CHECK_EQ(ptc_session_decode_threads(s), 2);
    check_armed(s);
    ptc_session_free(s);

    s = decode("badstub", 0); /* no MODULE_ARMED: every function traced */
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    CHECK(!sel.selected && sel.traced == sel.funcs && !strcmp(sel.spec, ""));
    ptc_session_free(s);

    w = tw_open(path_for("armed-first"), PTC_BACKEND_SOFT, 0);
    tw_process(w, 100, PTC_PROC_START, 1, 0, "/bin/prog");
    armed_chunk(w, 100, 1, -1, spec); /* before its MODULE chunk */
    end_trace(w);
    s = decode("armed-first", -PTC_E_CORRUPT);
    CHECK(strstr(ptc_session_errmsg(s), "did not announce") != NULL);
    ptc_session_free(s);
    w = begin("armed-count", 0);
    armed_chunk(w, 100, 3, 1, spec); /* two bits, one said */
    end_trace(w);
    s = decode("armed-count", -PTC_E_CORRUPT);
    CHECK(strstr(ptc_session_errmsg(s), "1 functions said armed, 2 bits set") != NULL);
    ptc_session_free(s);
}

static void test_exec_and_lookup(void)
{
    struct tw *w = begin("exec", 1);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 0);
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 10});
    tw_stream_free(st);
    /* exec: the new image starts its streams from seq 0 again */
    tw_close(w);
    /* append a second life by hand: a fresh writer would restart the seq counters */
    struct tw *x = tw_open(path_for("exec-tail"), PTC_BACKEND_SOFT, PTC_FILE_F_TIMED);
    tw_process(x, 100, PTC_PROC_EXEC, 1, 0, "/bin/other");
    static const char *const other[] = {"omain"};
    tw_module(x, 100, 0, 0, 0x500000, "/bin/other", other, 1);
    struct tw_stream *s2 = tw_stream(x, 100, 100, 1, 0);
    HITS(s2, {TW_E(0), 100}, {TW_X(0), 110});
    tw_stream_free(s2);
    tw_process_end(x, 100, 0);
    tw_close(x);
    char cmd[1200];
    char tail[600];
    snprintf(tail, sizeof(tail), "%s", path_for("exec-tail"));
    snprintf(cmd, sizeof(cmd), "tail -c +65 %s >> %s", tail, path_for("exec"));
    CHECK_EQ(system(cmd), 0);
    struct ptc_session *s = decode("exec", 0);
    CHECK_STR(logbuf, ">main >a <a/end=0 <main/end=10 >omain <omain=10");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.missing_chunks, 0);
    CHECK_EQ(t.open_at_end, 2);
    uint32_t id = 0;
    CHECK_EQ(ptc_session_lookup_stub(s, 100, 0x500010, &id), 0);
    CHECK_EQ(id, 1);
    CHECK_EQ(ptc_session_lookup_stub(s, 100, 0x400010, &id), -PTC_E_BADSTUB);
    CHECK_EQ(ptc_session_lookup_stub(s, 100, 0x500008, &id), -PTC_E_BADSTUB);
    ptc_session_free(s);
}

static void test_direct_feed(void)
{
    /* the interface the Intel PT front-end uses */
    struct tw *w = begin("feed", 1);
    tw_close(w);
    struct ptc_session *s = ptc_session_new();
    cur = s;
    FILE *f = fopen(path_for("feed"), "rb");
    static uint8_t buf[65536];
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    struct ptc_reader *r;
    CHECK_EQ(ptc_reader_open_memory(&r, buf, n), 0);
    struct ptc_chunk c;
    int modules = 0;
    while (ptc_reader_next(r, &c) == 1)
        if (c.h.type == PTC_CHUNK_MODULE) {
            CHECK_EQ(ptc_session_add_module(s, 7, c.payload, c.h.payload_size), 0);
            modules++;
        }
    ptc_reader_close(r);
    CHECK_EQ(modules, 1);
    uint32_t e = 0, x = 0;
    CHECK_EQ(ptc_session_lookup_stub(s, 7, 0x400000 + 16 * TW_E(A), &e), 0);
    CHECK_EQ(ptc_session_lookup_stub(s, 7, 0x400000 + 16 * TW_X(A), &x), 0);
    struct ptc_ev ev[3] = {{.type = PTC_EV_HIT, .has_time = 1, .stub_id = e, .tsc = 5},
                           {.type = PTC_EV_HIT, .has_time = 1, .stub_id = x, .tsc = 9},
                           {.type = PTC_EV_GAP, .count = 3}};
    CHECK_EQ(ptc_session_feed(s, 7, 8, ev, 3), 0);
    struct ptc_loss loss = {.kind = PTC_LOSS_PT_OVERFLOW, .tid = 8, .count = 1};
    CHECK_EQ(ptc_session_add_loss(s, 7, &loss, "ovf"), 0);
    CHECK_EQ(ptc_session_finish(s), 0);
    CHECK_EQ(fs(s, A).calls, 1);
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.lost_events, 3);
    CHECK_EQ(t.lost_other, 1);
    CHECK_EQ(t.events, 2);
    ptc_session_free(s);
}

/* A session told to skip its aggregates (a view computes its own) hands the hook the same
 * calls, keeps the totals, and reports zero per-function figures and no edges. */
static void test_skip_aggregates(void)
{
    struct ptc_session *s = ptc_session_new();
    cur = s;
    logbuf[0] = 0;
    ptc_session_set_call_hook(s, hook, NULL);
    ptc_session_skip_aggregates(s);
    CHECK_EQ(ptc_decode_file(s, path_for("basic"), 0), 0);
    size_t l = strlen(logbuf);
    if (l && logbuf[l - 1] == ' ')
        logbuf[l - 1] = 0;
    CHECK_STR(logbuf, ">main >a >b <b=10 <a=30 >a <a=10 <main=100");
    CHECK_EQ(fs(s, MAIN).calls, 0);
    CHECK_EQ(fs(s, A).total, 0);
    CHECK_EQ(edge(s, MAIN, A), 0);
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.calls, 0); /* counted from the per-function figures */
    CHECK_EQ(t.events, 8);
    ptc_session_free(s);
}

/* A SPAWN chunk of thread (pid, tid) (docs/trace-format.md 4.15), damaged as told: how 0
 * whole, 1 shorter than its header, 2 a path_size one too large, 3 the path's NUL replaced,
 * 4 child pid 0. */
static void spawn_chunk(struct tw *w, uint32_t pid, uint32_t tid, uint32_t child, uint64_t tsc,
                        int how)
{
    static const char path[] = "/bin/child";
    uint8_t buf[sizeof(struct ptc_spawn) + sizeof(path)];
    struct ptc_spawn h = {.tid = tid, .child_pid = how == 4 ? 0 : child, .tsc = tsc,
                          .path_size = (uint32_t)sizeof(path) + (how == 2)};
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), path, sizeof(path));
    if (how == 3)
        buf[sizeof(buf) - 1] = 'x';
    tw_raw_chunk(w, PTC_CHUNK_SPAWN, PTC_CHUNK_F_OPTIONAL, pid, 0, buf,
                 how == 1 ? 12 : (uint32_t)sizeof(buf));
}

/* SPAWN: the spawning thread gets a spawn point where the chunk sits among its events, at the
 * chunk's time; its stack is unchanged and the child, a new program, starts from an empty
 * one (no fork point is waited for); the serial and the parallel decode count it. A damaged
 * chunk is corrupt, with where. */
static void test_spawn(void)
{
    struct tw *w = begin("spawn", 1);
    struct tw_stream *p = tw_stream(w, 100, 100, 1, 0);
    HITS(p, {TW_E(MAIN), 0}, {TW_E(A), 10});
    tw_flush(p);
    spawn_chunk(w, 100, 100, 200, 12, 0);
    HITS(p, {TW_X(A), 20}, {TW_X(MAIN), 30});
    tw_flush(p);
    tw_process(w, 200, PTC_PROC_START, 100, 0, "/bin/prog"); /* the same program again */
    tw_timebase(w, 200, 0, 1, 0);
    tw_module(w, 200, 0, 0, 0x400000, "/bin/prog", NAMES, NF);
    struct tw_stream *c = tw_stream(w, 200, 200, 1, 0);
    HITS(c, {TW_E(MAIN), 40}, {TW_E(B), 45}, {TW_X(B), 50}, {TW_X(MAIN), 60});
    tw_stream_free(c);
    tw_process_end(w, 200, 0);
    tw_stream_free(p);
    end_trace(w);
    log_tids = 1;
    struct ptc_session *s = decode("spawn", 0);
    log_tids = 0;
    CHECK_STR(logbuf, "100:>main 100:>a 100:spawn(200@2) 100:<a=10 100:<main=30 200:>main "
                      "200:>b 200:<b=5 200:<main=20");
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.spawns, 1);
    CHECK_EQ(t.processes, 2);
    CHECK_EQ(t.fork_unknown, 0);
    CHECK_EQ(t.open_at_end, 0);
    CHECK_EQ(fs(s, MAIN).calls, 2); /* the child calls main itself: one row per program */
    ptc_session_free(s);
    s = ptc_session_new();
    CHECK_EQ(ptc_decode_file_threads(s, path_for("spawn"), 0, 2), 0);
    ptc_session_totals(s, &t);
    CHECK_EQ(t.spawns, 1);
    CHECK_EQ(fs(s, MAIN).calls, 2);
    ptc_session_free(s);

    static const char *const says[] = {NULL, "shorter than its header", "does not fill its",
                                       "does not fill its", "names child pid 0"};
    for (int how = 1; how <= 4; how++) {
        char name[32];
        snprintf(name, sizeof(name), "spawn-bad%d", how);
        w = begin(name, 1);
        p = tw_stream(w, 100, 100, 1, 0);
        HITS(p, {TW_E(MAIN), 0});
        tw_stream_free(p);
        spawn_chunk(w, 100, 100, 200, 12, how);
        end_trace(w);
        s = decode(name, -PTC_E_CORRUPT);
        const char *m = ptc_session_errmsg(s);
        CHECK(strstr(m, "is corrupt: chunk 5 at byte ") != NULL); /* after the events */
        CHECK(strstr(m, "SPAWN chunk of pid 100") != NULL);
        CHECK(strstr(m, says[how]) != NULL);
        if (!strstr(m, "SPAWN chunk of pid 100") || !strstr(m, says[how]))
            fprintf(stderr, "  %s\n", m);
        ptc_session_free(s);
    }
}

/* A MODULE_REFUSED chunk of process pid (docs/trace-format.md 4.16), damaged as told: how 0
 * whole, 1 shorter than its header, 2 a path_size one too large, 3 the reason's NUL replaced,
 * 4 a NUL inside the path. */
static void refused_chunk(struct tw *w, uint32_t pid, const char *path, const char *reason,
                          int how)
{
    uint8_t buf[sizeof(struct ptc_module_refused) + 256];
    struct ptc_module_refused h = {.tsc = 42, .path_size = (uint32_t)strlen(path) + 1,
                                   .reason_size = (uint32_t)strlen(reason) + 1};
    uint32_t size = (uint32_t)sizeof(h) + h.path_size + h.reason_size;
    if (how == 2)
        h.path_size++;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), path, strlen(path) + 1);
    memcpy(buf + sizeof(h) + strlen(path) + 1, reason, strlen(reason) + 1);
    if (how == 3)
        buf[size - 1] = 'x';
    if (how == 4)
        buf[sizeof(h) + 1] = 0;
    tw_raw_chunk(w, PTC_CHUNK_MODULE_REFUSED, PTC_CHUNK_F_OPTIONAL, pid, 0, buf,
                 how == 1 ? 12 : size);
}

static void check_refused(struct ptc_session *s)
{
    struct ptc_totals t;
    ptc_session_totals(s, &t);
    CHECK_EQ(t.refused_objects, 1);
    CHECK_EQ(ptc_session_num_refused(s), 1);
    struct ptc_refused_object r;
    CHECK_EQ(ptc_session_refused(s, 0, &r), 0);
    CHECK_EQ(r.pid, 100);
    CHECK_EQ(r.tsc, 42);
    CHECK_STR(r.path, "/lib/libbad.so");
    CHECK_STR(r.reason, "corrupt ptcall_map section (x at offset 8)");
    CHECK_EQ(ptc_session_refused(s, 1, &r), -PTC_E_ARG);
    CHECK_EQ(fs(s, A).calls, 1); /* the traced object's figures are unchanged */
}

/* MODULE_REFUSED: an instrumented object the runtime left untraced is listed with its
 * process, path and reason, and counted in the totals (readers then say the trace is not
 * complete), by the serial and the parallel decode; a damaged one is corrupt, with where. */
static void test_refused(void)
{
    struct tw *w = begin("refused", 1);
    refused_chunk(w, 100, "/lib/libbad.so", "corrupt ptcall_map section (x at offset 8)", 0);
    struct tw_stream *st = tw_stream(w, 100, 100, 1, 2);
    HITS(st, {TW_E(MAIN), 0}, {TW_E(A), 1}, {TW_X(A), 2}, {TW_X(MAIN), 3});
    tw_stream_free(st);
    st = tw_stream(w, 100, 101, 1, 2); /* a second thread: the parallel driver can split */
    HITS(st, {TW_E(B), 6}, {TW_X(B), 7});
    tw_stream_free(st);
    end_trace(w);
    struct ptc_session *s = decode("refused", 0);
    check_refused(s);
    ptc_session_free(s);
    s = ptc_session_new(); /* every worker reads process-level chunks: worker 0's list stays */
    CHECK_EQ(ptc_decode_file_threads(s, path_for("refused"), 0, 2), 0);
    CHECK_EQ(ptc_session_decode_threads(s), 2);
    check_refused(s);
    ptc_session_free(s);
    s = decode("badstub", 0); /* none */
    CHECK_EQ(ptc_session_num_refused(s), 0);
    ptc_session_free(s);

    static const char *const says[] = {NULL, "shorter than its 16-byte header",
                                       "do not fill its", "reason does not end with its only NUL",
                                       "path does not end with its only NUL"};
    for (int how = 1; how <= 4; how++) {
        char name[32];
        snprintf(name, sizeof(name), "refused-bad%d", how);
        w = begin(name, 1);
        refused_chunk(w, 100, "/lib/libbad.so", "why", how);
        end_trace(w);
        s = decode(name, -PTC_E_CORRUPT);
        const char *m = ptc_session_errmsg(s);
        /* chunk 4 (RECORD_INFO, PROCESS, TIMEBASE, MODULE before it) and its offset */
        CHECK(strstr(m, "is corrupt: chunk 4 at byte ") != NULL);
        CHECK(strstr(m, "MODULE_REFUSED chunk of pid 100") != NULL);
        CHECK(strstr(m, says[how]) != NULL);
        if (!strstr(m, says[how]))
            fprintf(stderr, "  %s\n", m);
        ptc_session_free(s);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/ptc-test-session-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    test_basic();
    test_skip_aggregates();
    test_recursion();
    test_longjmp();
    test_exceptions();
    test_gap_and_drops();
    test_fork();
    test_untimed_threads();
    test_whole_calls();
    test_bad_stub_and_unknown_required();
    test_exec_and_lookup();
    test_armed();
    test_refused();
    test_spawn();
    test_direct_feed();
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "%s", getenv("KEEP") ? "true" : "rm -rf"); strcat(cmd, " "); strcat(cmd, tmpdir);
    if (system(cmd)) {
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all session tests passed\n");
    return 0;
}
