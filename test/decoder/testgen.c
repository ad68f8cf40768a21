/* ptc_testgen: writes synthetic ptcall traces with known content.
 *   ptc_testgen golden FILE          the trace behind the golden report/calls/graph outputs
 *   ptc_testgen untimed FILE         the same calls without timestamps
 *   ptc_testgen seeds DIR            small traces: the fuzzer's seed corpus
 *   ptc_testgen bench FILE N [timed] about N stub hits of a random call tree (worst case)
 *   ptc_testgen bench-program FILE N [timed|untimed [NFUNCS]]  N hits of repeated
 *                                    program-like call patterns over NFUNCS functions (24)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptcall/map_format.h"
#include "tw.h"

static const char *const NAMES[] = {"main", "parse", "lex", "eval", "fib", "is_even", "is_odd",
                                    "throw_error", "handle", "longjmp_target", "worker",
                                    "compute", "std::vector<int, std::allocator<int> >::push_back"};
enum { MAIN, PARSE, LEX, EVAL, FIB, EVEN, ODD, THROWER, HANDLE, LJ, WORKER, COMPUTE, PUSH, NF };

/* fib(n) recursively, 10 ticks per call level */
static void fib(struct tw_stream *s, uint64_t *t, int n)
{
    tw_hit(s, TW_E(FIB), *t += 10);
    if (n > 1) {
        fib(s, t, n - 1);
        fib(s, t, n - 2);
    }
    tw_hit(s, TW_X(FIB), *t += 10);
}

static void parity(struct tw_stream *s, uint64_t *t, int n)
{
    int f = n % 2 ? ODD : EVEN;
    tw_hit(s, TW_E(f), *t += 7);
    if (n)
        parity(s, t, n - 1);
    tw_hit(s, TW_X(f), *t += 7);
}

static void golden(const char *path, int timed)
{
    uint32_t ff = timed ? PTC_FILE_F_TIMED : 0;
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, ff);
    tw_record_info(w, ff, "./prog");
    tw_process(w, 1000, PTC_PROC_START, 1, 0, "/usr/bin/prog");
    tw_timebase(w, 1000, 1, 1, 0); /* 2 ticks per ns */
    tw_module(w, 1000, 0, 0, 0x401000, "/usr/bin/prog", NAMES, NF);
    struct tw_stream *m = tw_stream(w, 1000, 1000, timed, 16);
    uint64_t t = 1000000;
    tw_hit(m, TW_E(MAIN), t);
    for (int i = 0; i < 3; i++) {
        tw_hit(m, TW_E(PARSE), t += 100);
        for (int j = 0; j < 4; j++) {
            tw_hit(m, TW_E(LEX), t += 20);
            tw_hit(m, TW_X(LEX), t += 80);
        }
        tw_hit(m, TW_X(PARSE), t += 50);
        tw_hit(m, TW_E(EVAL), t += 10);
        fib(m, &t, 4);
        parity(m, &t, 3);
        tw_hit(m, TW_E(PUSH), t += 5);
        tw_hit(m, TW_X(PUSH), t += 5);
        tw_hit(m, TW_X(EVAL), t += 30);
    }
    /* an exception: thrower -> handle catches (landing), one frame's exit skipped */
    tw_hit(m, TW_E(HANDLE), t += 40);
    tw_hit(m, TW_E(THROWER), t += 40);
    tw_hit(m, TW_E(LEX), t += 40);
    tw_hit(m, TW_U(THROWER), t += 400); /* lex's exit skipped: repaired */
    tw_hit(m, TW_L(HANDLE), t += 100);
    tw_hit(m, TW_X(HANDLE), t += 100);
    /* longjmp: two frames unwound by a landing */
    tw_hit(m, TW_E(LJ), t += 40);
    tw_hit(m, TW_E(COMPUTE), t += 40);
    tw_hit(m, TW_E(COMPUTE), t += 40);
    tw_hit(m, TW_L(LJ), t += 40);
    tw_hit(m, TW_X(LJ), t += 40);
    /* a worker thread */
    tw_thread(w, 1000, 1001, PTC_THREAD_START, "worker");
    struct tw_stream *wk = tw_stream(w, 1000, 1001, timed, 8);
    uint64_t tw_ = t;
    tw_hit(wk, TW_E(WORKER), tw_ += 10);
    for (int i = 0; i < 5; i++) {
        tw_hit(wk, TW_E(COMPUTE), tw_ += 10);
        tw_hit(wk, TW_X(COMPUTE), tw_ += 300);
    }
    tw_drop(wk, 3, tw_ += 5); /* 3 events dropped: worker's stack is broken */
    tw_hit(wk, TW_E(COMPUTE), tw_ += 10);
    tw_hit(wk, TW_X(COMPUTE), tw_ += 200);
    tw_hit(wk, TW_X(WORKER), tw_ += 10);
    tw_stream_free(wk);
    tw_thread(w, 1000, 1001, PTC_THREAD_EXIT, "worker");
    /* fork: the child continues in main */
    tw_fork(m, 1002, t += 50);
    tw_flush(m);
    tw_process(w, 1002, PTC_PROC_FORK, 1000, 1000, "/usr/bin/prog");
    struct tw_stream *c = tw_stream(w, 1002, 1002, timed, 0);
    uint64_t tc = t;
    tw_hit(c, TW_E(COMPUTE), tc += 100);
    tw_hit(c, TW_X(COMPUTE), tc += 900);
    tw_hit(c, TW_X(MAIN), tc += 10);
    tw_stream_free(c);
    tw_process_end(w, 1002, 0);
    tw_hit(m, TW_E(WORKER), t += 20);
    tw_hit(m, TW_X(WORKER), t += 20);
    tw_hit(m, TW_X(MAIN), t += 20);
    tw_stream_free(m);
    tw_process_end(w, 1000, 0);
    tw_record_end(w, 0);
    tw_close(w);
}

static uint64_t rng = 88172645463325252ULL;
static uint64_t xr(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void bench(const char *path, uint64_t n, int timed)
{
    static const char *names[24];
    static char buf[24][16];
    for (int i = 0; i < 24; i++) {
        snprintf(buf[i], sizeof(buf[i]), "func%02d", i);
        names[i] = buf[i];
    }
    uint32_t ff = timed ? PTC_FILE_F_TIMED : 0;
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, ff);
    tw_record_info(w, ff, "./bench");
    tw_process(w, 1, PTC_PROC_START, 0, 0, "/bench");
    tw_timebase(w, 1, 0, 1, 0);
    tw_module(w, 1, 0, 0, 0x1000, "/bench", names, 24); /* 96 stubs: one-byte ids */
    struct tw_stream *s = tw_stream(w, 1, 1, timed, 1 << 16);
    uint32_t stack[64];
    int depth = 0;
    uint64_t t = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = xr();
        t += 1 + (r >> 60);
        if (depth == 0 || (depth < 60 && (r & 0xff) < 128 + 8 * (depth < 8))) {
            uint32_t f = (uint32_t)((r >> 8) % 24);
            stack[depth++] = f;
            tw_hit(s, TW_E(f), t);
        } else {
            tw_hit(s, TW_X(stack[--depth]), t);
        }
    }
    while (depth)
        tw_hit(s, TW_X(stack[--depth]), ++t);
    tw_stream_free(s);
    tw_process_end(w, 1, 0);
    tw_record_end(w, 0);
    tw_close(w);
}

/* A program-like trace: a main loop over request handlers, each a fixed call pattern with
 * leaves in loops and a recursive helper (what hot code of real programs looks like). */
static uint32_t g_nfuncs = 24;

static void program_call(struct tw_stream *s, uint64_t *t, uint64_t *n, uint32_t f, int depth)
{
    tw_hit(s, TW_E(f), *t += 3);
    (*n)++;
    if (depth < 6) {
        uint32_t kids = 1 + (f % 4);
        for (uint32_t k = 0; k < kids; k++) {
            uint32_t g = 1 + (f * 7 + k * 3 + (uint32_t)depth) % (g_nfuncs - 1);
            int reps = (k == 0) ? 3 : 1;
            for (int r = 0; r < reps; r++)
                program_call(s, t, n, g, depth + 1 + (int)(g % 2));
        }
    }
    tw_hit(s, TW_X(f), *t += 5);
    (*n)++;
}

/* A program-like trace: a main loop over request handlers, each a fixed call pattern with
 * leaves in loops (what hot code of real programs looks like). nfuncs > 28 gives stub ids
 * of 2 bytes, as in real programs. */
static void bench_program(const char *path, uint64_t n, int timed, uint32_t nfuncs)
{
    g_nfuncs = nfuncs < 2 ? 2 : nfuncs;
    const char **names = calloc(g_nfuncs, sizeof(*names));
    char *buf = calloc(g_nfuncs, 16);
    for (uint32_t i = 0; i < g_nfuncs; i++) {
        snprintf(buf + 16 * i, 16, "func%04u", i);
        names[i] = buf + 16 * i;
    }
    uint32_t ff = timed ? PTC_FILE_F_TIMED : 0;
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, ff);
    tw_record_info(w, ff, "./bench");
    tw_process(w, 1, PTC_PROC_START, 0, 0, "/bench");
    tw_timebase(w, 1, 0, 1, 0);
    tw_module(w, 1, 0, 0, 0x1000, "/bench", names, g_nfuncs);
    struct tw_stream *s = tw_stream(w, 1, 1, timed, 1 << 16);
    uint64_t t = 0, done = 0;
    tw_hit(s, TW_E(0), t);
    while (done < n)
        program_call(s, &t, &done, 1 + (uint32_t)(xr() % (g_nfuncs - 1)), 0);
    tw_hit(s, TW_X(0), ++t);
    tw_stream_free(s);
    tw_process_end(w, 1, 0);
    tw_record_end(w, 0);
    tw_close(w);
    free(names);
    free(buf);
}

/* A seed with the chunks of format 2.2: a posix_spawn (SPAWN) on the parent's timeline, the
 * spawned program's own process, and an object the runtime refused (MODULE_REFUSED). */
static void spawn_seed(const char *path)
{
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, PTC_FILE_F_TIMED);
    tw_record_info(w, PTC_FILE_F_TIMED, "./prog");
    tw_process(w, 1000, PTC_PROC_START, 1, 0, "/usr/bin/prog");
    tw_timebase(w, 1000, 1, 1, 0);
    tw_module(w, 1000, 0, 0, 0x401000, "/usr/bin/prog", NAMES, NF);
    static const char refused[] = "/usr/lib/libbad.so\0corrupt ptcall_map section (x at offset 8)";
    struct ptc_module_refused r = {.tsc = 1000010, .path_size = 19,
                                   .reason_size = (uint32_t)sizeof(refused) - 19};
    uint8_t rb[sizeof(r) + sizeof(refused)];
    memcpy(rb, &r, sizeof(r));
    memcpy(rb + sizeof(r), refused, sizeof(refused));
    tw_raw_chunk(w, PTC_CHUNK_MODULE_REFUSED, PTC_CHUNK_F_OPTIONAL, 1000, 0, rb, sizeof(rb));
    struct tw_stream *m = tw_stream(w, 1000, 1000, 1, 0);
    tw_hit(m, TW_E(MAIN), 1000100);
    tw_hit(m, TW_E(PARSE), 1000200);
    tw_flush(m);
    static const char exe[] = "/usr/bin/child";
    struct ptc_spawn sp = {.tid = 1000, .child_pid = 1001, .tsc = 1000250,
                           .path_size = (uint32_t)sizeof(exe)};
    uint8_t sb[sizeof(sp) + sizeof(exe)];
    memcpy(sb, &sp, sizeof(sp));
    memcpy(sb + sizeof(sp), exe, sizeof(exe));
    tw_raw_chunk(w, PTC_CHUNK_SPAWN, PTC_CHUNK_F_OPTIONAL, 1000, 0, sb, sizeof(sb));
    tw_hit(m, TW_X(PARSE), 1000300);
    tw_hit(m, TW_X(MAIN), 1000400);
    tw_stream_free(m);
    tw_process(w, 1001, PTC_PROC_START, 1000, 0, exe);
    tw_timebase(w, 1001, 1, 1, 0);
    tw_module(w, 1001, 0, 0, 0x401000, exe, NAMES, NF);
    struct tw_stream *c = tw_stream(w, 1001, 1001, 1, 0);
    tw_hit(c, TW_E(MAIN), 1000500);
    tw_hit(c, TW_X(MAIN), 1000600);
    tw_stream_free(c);
    tw_thread(w, 1001, 1001, PTC_THREAD_EXIT, "child");
    tw_process_end(w, 1001, 0);
    tw_thread(w, 1000, 1000, PTC_THREAD_EXIT, "prog");
    tw_process_end(w, 1000, 0);
    tw_record_end(w, 0);
    tw_close(w);
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "golden")) {
        golden(argv[2], 1);
    } else if (argc >= 3 && !strcmp(argv[1], "untimed")) {
        golden(argv[2], 0);
    } else if (argc >= 3 && !strcmp(argv[1], "seeds")) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/golden.ptc", argv[2]);
        golden(p, 1);
        snprintf(p, sizeof(p), "%s/untimed.ptc", argv[2]);
        golden(p, 0);
        snprintf(p, sizeof(p), "%s/bench-small.ptc", argv[2]);
        bench(p, 300, 1);
        snprintf(p, sizeof(p), "%s/bench-small-untimed.ptc", argv[2]);
        bench(p, 300, 0);
        snprintf(p, sizeof(p), "%s/spawn-refused.ptc", argv[2]);
        spawn_seed(p);
    } else if (argc >= 4 && !strcmp(argv[1], "bench-program")) {
        bench_program(argv[2], strtoull(argv[3], NULL, 0), argc > 4 && !strcmp(argv[4], "timed"),
                      argc > 5 ? (uint32_t)strtoul(argv[5], NULL, 0) : 24);
    } else if (argc >= 4 && !strcmp(argv[1], "bench")) {
        bench(argv[2], strtoull(argv[3], NULL, 0), argc > 4 && !strcmp(argv[4], "timed"));
    } else {
        fprintf(stderr, "usage: ptc_testgen golden|untimed FILE | seeds DIR | bench|bench-program FILE N [timed]\n");
        return 2;
    }
    return 0;
}
