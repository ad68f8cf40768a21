/* Test tool: makes the shapes an attach or a snapshot gives (docs/trace-format.md 4.19) out
 * of a real trace the soft runtime recorded whole, so that the decoder and the views meet
 * them before `record --pid` and the flight recorder write them (their own tests check the
 * real producers). Each thread's events are cut to a window: the events before it dropped
 * (its stack then is not empty: returns of calls entered before it come first), and with
 * --to those after it too (calls still open at its end). The SOFT_EVENTS chunks are
 * re-encoded, PROCESS says ATTACH or SNAPSHOT, each thread gets a WINDOW chunk before its
 * events, PROCESS_END says DETACH or SNAPSHOT, and a snapshot gets its SNAPSHOT chunk.
 *
 * usage: window_cut IN OUT --how attach|snapshot --from F [--to F] [--wrapped] [--crash SIG]
 *                   [--gap F]
 *   F: the fraction of each thread's events where the window begins/ends (0..1); --gap puts
 *   a LOSS record (5 events lost) at that fraction of each thread's window
 * Prints one line per thread: pid tid kept dropped_before dropped_after tsc_from tsc_to. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_varint.h"
#include "ptcall/decode.h"

#define MIN_GAP 64 /* ticks between the events either side of a cut: times stay apart in ns */

struct ev {
    uint64_t v, op, tsc; /* record value, control operand, time */
};

struct thr {
    uint32_t pid, tid;
    struct ev *ev;
    size_t n, cap, from, to;
    int timed, written;
    uint32_t seq;
};

struct stream {
    uint32_t pid, tid, seq;
};

static struct thr *thrs;
static size_t nthr;
static struct stream *streams;
static size_t nstreams;

static void die(const char *m)
{
    fprintf(stderr, "window_cut: %s\n", m);
    exit(2);
}

static struct thr *thr_of(uint32_t pid, uint32_t tid)
{
    for (size_t i = 0; i < nthr; i++)
        if (thrs[i].pid == pid && thrs[i].tid == tid)
            return &thrs[i];
    thrs = realloc(thrs, (nthr + 1) * sizeof(*thrs));
    if (!thrs)
        die("out of memory");
    memset(&thrs[nthr], 0, sizeof(*thrs));
    thrs[nthr].pid = pid;
    thrs[nthr].tid = tid;
    return &thrs[nthr++];
}

static uint32_t next_seq(uint32_t pid, uint32_t tid)
{
    for (size_t i = 0; i < nstreams; i++)
        if (streams[i].pid == pid && streams[i].tid == tid)
            return streams[i].seq++;
    streams = realloc(streams, (nstreams + 1) * sizeof(*streams));
    if (!streams)
        die("out of memory");
    streams[nstreams++] = (struct stream){pid, tid, 1};
    return 0;
}

/* The records of one SOFT_EVENTS chunk into t's list. */
static void take_events(struct thr *t, const struct ptc_chunk *c)
{
    struct ptc_soft_events h;
    if (c->h.payload_size < sizeof(h))
        die("short SOFT_EVENTS chunk");
    memcpy(&h, c->payload, sizeof(h));
    t->timed = (h.flags & PTC_SOFT_F_TIMED) != 0;
    if (!t->timed)
        die("the trace is untimed: record it with times (the window's times need them)");
    const uint8_t *p = c->payload + sizeof(h), *end = c->payload + c->h.payload_size;
    uint64_t tsc = h.start_tsc;
    while (p < end) {
        uint64_t v, op = 0, d;
        if (ptc_varint_get(&p, end, &v))
            die("undecodable record");
        if (v == PTC_SOFT_FORK)
            die("the trace has a fork: cut a trace without one");
        if (v < PTC_SOFT_ID_BASE && ptc_varint_get(&p, end, &op))
            die("undecodable operand");
        if (ptc_varint_get(&p, end, &d))
            die("undecodable time delta");
        tsc += (uint64_t)ptc_unzigzag(d);
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 1024;
            if (!(t->ev = realloc(t->ev, t->cap * sizeof(*t->ev))))
                die("out of memory");
        }
        t->ev[t->n++] = (struct ev){v, op, tsc};
    }
}

/* Where t's window begins and ends: at the fractions, moved to events well apart in time. */
static void place(struct thr *t, double from, double to)
{
    size_t n = t->n;
    size_t a = (size_t)(from * (double)n), b = (size_t)(to * (double)n + 0.5);
    if (b > n)
        b = n;
    while (a > 0 && a < n && t->ev[a].tsc - t->ev[a - 1].tsc < MIN_GAP)
        a++;
    while (b < n && b > a + 1 && t->ev[b].tsc - t->ev[b - 1].tsc < MIN_GAP)
        b--;
    if (a >= b) { /* too few events to cut: the thread's whole stream */
        a = 0;
        b = n;
    }
    t->from = a;
    t->to = b;
}

static void put(int fd, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                const void *a, size_t an, const void *b, size_t bn)
{
    struct iovec v[2] = {{(void *)a, an}, {(void *)b, bn}};
    if (ptc_write_chunk(fd, type, flags, pid, tid, next_seq(pid, tid), v, b ? 2 : 1))
        die("write failed");
}

/* t's WINDOW chunk and its kept events, as one SOFT_EVENTS chunk. */
static void write_thread(int fd, struct thr *t, int snapshot, int wrapped, double gap)
{
    struct ptc_window w = {.tsc_from = t->ev[t->from].tsc,
                           .tsc_to = snapshot ? t->ev[t->to - 1].tsc : 0,
                           .flags = PTC_WINDOW_F_MIDSTACK |
                                    (snapshot ? PTC_WINDOW_F_OPEN_END : 0) |
                                    (wrapped ? PTC_WINDOW_F_WRAPPED : 0),
                           .lost_before = wrapped ? t->from : 0};
    put(fd, PTC_CHUNK_WINDOW, PTC_CHUNK_F_OPTIONAL, t->pid, t->tid, &w, sizeof(w), NULL, 0);
    size_t cap = (t->to - t->from) * 30 + 16, len = 0;
    uint8_t *buf = malloc(cap);
    if (!buf)
        die("out of memory");
    uint64_t prev = w.tsc_from;
    size_t at = gap > 0 ? t->from + (size_t)(gap * (double)(t->to - t->from)) : SIZE_MAX;
    uint32_t extra = 0;
    for (size_t i = t->from; i < t->to; i++) {
        const struct ev *e = &t->ev[i];
        if (i == at && i > t->from) { /* a loss here, at the previous event's time */
            len += ptc_varint_put(buf + len, PTC_SOFT_LOSS);
            len += ptc_varint_put(buf + len, 5);
            len += ptc_varint_put(buf + len, 0);
            extra = 1;
        }
        len += ptc_varint_put(buf + len, e->v);
        if (e->v < PTC_SOFT_ID_BASE)
            len += ptc_varint_put(buf + len, e->op);
        len += ptc_varint_put(buf + len, ptc_zigzag((int64_t)(e->tsc - prev)));
        prev = e->tsc;
    }
    struct ptc_soft_events h = {.start_tsc = w.tsc_from, .end_tsc = prev,
                                .num_records = (uint32_t)(t->to - t->from) + extra,
                                .flags = PTC_SOFT_F_TIMED};
    put(fd, PTC_CHUNK_SOFT_EVENTS, 0, t->pid, t->tid, &h, sizeof(h), buf, len);
    free(buf);
    t->written = 1;
    printf("%u %u %zu %zu %zu %llu %llu\n", t->pid, t->tid, t->to - t->from, t->from,
           t->n - t->to, (unsigned long long)w.tsc_from,
           (unsigned long long)t->ev[t->to - 1].tsc);
}

int main(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *how = NULL;
    double from = -1, to = 1;
    int wrapped = 0, crash = 0;
    double gap = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--how") && i + 1 < argc)
            how = argv[++i];
        else if (!strcmp(argv[i], "--from") && i + 1 < argc)
            from = atof(argv[++i]);
        else if (!strcmp(argv[i], "--to") && i + 1 < argc)
            to = atof(argv[++i]);
        else if (!strcmp(argv[i], "--wrapped"))
            wrapped = 1;
        else if (!strcmp(argv[i], "--gap") && i + 1 < argc)
            gap = atof(argv[++i]);
        else if (!strcmp(argv[i], "--crash") && i + 1 < argc)
            crash = atoi(argv[++i]);
        else if (!in)
            in = argv[i];
        else if (!out)
            out = argv[i];
        else
            die("usage: window_cut IN OUT --how attach|snapshot --from F [--to F] [--wrapped] "
                "[--crash SIG]");
    }
    if (!in || !out || !how || from < 0 || from >= 1 || to <= from || to > 1 ||
        (strcmp(how, "attach") && strcmp(how, "snapshot")))
        die("usage: window_cut IN OUT --how attach|snapshot --from F [--to F] [--wrapped] "
            "[--crash SIG]");
    int snapshot = !strcmp(how, "snapshot");
    if (!snapshot && to < 1)
        die("an attach's window runs to the threads' ends here: --to needs --how snapshot");
    /* pass 1: every thread's events */
    struct ptc_reader *r;
    struct ptc_chunk c;
    int e;
    if (ptc_reader_open(&r, in))
        die("cannot open the input trace");
    while ((e = ptc_reader_next(r, &c)) == 1)
        if (c.h.type == PTC_CHUNK_SOFT_EVENTS)
            take_events(thr_of(c.h.pid, c.h.tid), &c);
    if (e)
        die(ptc_reader_errmsg(r));
    struct ptc_file_header fh = *ptc_reader_header(r);
    ptc_reader_close(r);
    uint64_t end_tsc = 0;
    for (size_t i = 0; i < nthr; i++) {
        place(&thrs[i], from, to);
        if (thrs[i].ev[thrs[i].to - 1].tsc > end_tsc)
            end_tsc = thrs[i].ev[thrs[i].to - 1].tsc;
    }
    /* pass 2: the trace with each thread's window */
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, &fh, sizeof(fh)) != (ssize_t)sizeof(fh))
        die("cannot write the output trace");
    if (ptc_reader_open(&r, in))
        die("cannot open the input trace");
    while ((e = ptc_reader_next(r, &c)) == 1) {
        uint32_t pid = c.h.pid, tid = c.h.tid, type = c.h.type;
        uint8_t *pl = malloc(c.h.payload_size + 1);
        if (!pl)
            die("out of memory");
        memcpy(pl, c.payload, c.h.payload_size);
        if (type == PTC_CHUNK_SOFT_EVENTS) {
            struct thr *t = thr_of(pid, tid);
            if (!t->written)
                write_thread(fd, t, snapshot, wrapped, gap);
            free(pl);
            continue;
        }
        if (type == PTC_CHUNK_THREAD && snapshot && c.h.payload_size >= 4 &&
            *(uint32_t *)pl == PTC_THREAD_EXIT) { /* the threads ran on after the snapshot */
            free(pl);
            continue;
        }
        if (type == PTC_CHUNK_PROCESS && c.h.payload_size >= 8)
            ((struct ptc_process *)pl)->how = snapshot ? PTC_PROC_SNAPSHOT : PTC_PROC_ATTACH;
        if (type == PTC_CHUNK_PROCESS_END && c.h.payload_size >= sizeof(struct ptc_process_end)) {
            struct ptc_process_end *pe = (struct ptc_process_end *)pl;
            pe->how = snapshot ? PTC_END_SNAPSHOT : PTC_END_DETACH;
            if (snapshot)
                pe->tsc = end_tsc;
        }
        put(fd, (uint16_t)type, c.h.flags, pid, tid, pl, c.h.payload_size, NULL, 0);
        free(pl);
        if (type == PTC_CHUNK_PROCESS && snapshot) {
            static const char why_api[] = "window_cut test", why_crash[] = "SIGSEGV";
            const char *why = crash ? why_crash : why_api;
            struct ptc_snapshot sh = {.kind = crash ? PTC_SNAP_CRASH : PTC_SNAP_API,
                                      .tid = pid, .tsc = end_tsc, .signo = crash,
                                      .addr = crash ? 0xdeadbeef : 0};
            put(fd, PTC_CHUNK_SNAPSHOT, PTC_CHUNK_F_OPTIONAL, pid, 0, &sh, sizeof(sh), why,
                strlen(why) + 1);
        }
    }
    if (e)
        die(ptc_reader_errmsg(r));
    ptc_reader_close(r);
    if (close(fd))
        die("cannot write the output trace");
    return 0;
}
