#include "tw.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_varint.h"

struct seqent {
    uint32_t pid, tid, seq;
};

struct tw {
    int fd;
    struct seqent seqs[4096];
    int nseqs;
};

struct tw_stream {
    struct tw *w;
    uint32_t pid, tid;
    int timed;
    uint32_t max_records;
    uint8_t *buf;
    size_t len, cap;
    uint32_t records;
    uint64_t start_tsc, last_tsc;
};

static void die(const char *what)
{
    perror(what);
    abort();
}

static uint32_t *seqp(struct tw *w, uint32_t pid, uint32_t tid)
{
    for (int i = 0; i < w->nseqs; i++)
        if (w->seqs[i].pid == pid && w->seqs[i].tid == tid)
            return &w->seqs[i].seq;
    if (w->nseqs == 4096)
        die("tw: too many streams");
    w->seqs[w->nseqs] = (struct seqent){pid, tid, 0};
    return &w->seqs[w->nseqs++].seq;
}

static void chunk(struct tw *w, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                  const struct iovec *parts, int nparts)
{
    uint32_t *seq = seqp(w, pid, tid);
    if (ptc_write_chunk(w->fd, type, flags, pid, tid, (*seq)++, parts, nparts))
        die("tw: write");
}

void tw_raw_chunk(struct tw *w, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                  const void *payload, uint32_t size)
{
    struct iovec iov = {(void *)payload, size};
    chunk(w, type, flags, pid, tid, &iov, 1);
}

void tw_skip_seq(struct tw *w, uint32_t pid, uint32_t tid, uint32_t n) { *seqp(w, pid, tid) += n; }

struct tw *tw_open(const char *path, uint32_t backend, uint32_t file_flags)
{
    struct tw *w = calloc(1, sizeof(*w));
    if (!w)
        die("tw: calloc");
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (w->fd < 0)
        die(path);
    struct ptc_file_header h;
    ptc_file_header_init(&h, backend, file_flags, 1700000000000000000ULL);
    if (write(w->fd, &h, sizeof(h)) != (ssize_t)sizeof(h))
        die("tw: write header");
    return w;
}

void tw_close(struct tw *w)
{
    close(w->fd);
    free(w);
}

void tw_record_info(struct tw *w, uint32_t flags, const char *cmd)
{
    struct ptc_record_info ri = {.backend = PTC_BACKEND_SOFT, .flags = flags, .start_ns = 1000,
                                 .argc = 1};
    struct iovec iov[2] = {{&ri, sizeof(ri)}, {(void *)cmd, strlen(cmd) + 1}};
    chunk(w, PTC_CHUNK_RECORD_INFO, 0, 0, 0, iov, 2);
}

void tw_record_end(struct tw *w, int32_t wait_status)
{
    struct ptc_record_end re = {.wait_status = wait_status, .wall_ns = 12345};
    struct iovec iov = {&re, sizeof(re)};
    chunk(w, PTC_CHUNK_RECORD_END, 0, 0, 0, &iov, 1);
}

void tw_process(struct tw *w, uint32_t pid, uint32_t how, uint32_t ppid, uint32_t parent_tid,
                const char *exe)
{
    struct ptc_process p = {.ppid = ppid, .how = how, .parent_tid = parent_tid};
    struct iovec iov[2] = {{&p, sizeof(p)}, {(void *)exe, strlen(exe) + 1}};
    chunk(w, PTC_CHUNK_PROCESS, 0, pid, 0, iov, 2);
}

void tw_process_end(struct tw *w, uint32_t pid, int32_t status)
{
    struct ptc_process_end e = {.how = PTC_END_EXIT, .status = status};
    struct iovec iov = {&e, sizeof(e)};
    chunk(w, PTC_CHUNK_PROCESS_END, 0, pid, 0, &iov, 1);
}

void tw_timebase(struct tw *w, uint32_t pid, uint16_t shift, uint32_t mult, uint64_t zero)
{
    struct ptc_timebase tb = {.source = PTC_TIME_CALIBRATED, .time_shift = shift,
                              .time_mult = mult, .time_zero = zero, .tsc_hz = 1000000000};
    struct iovec iov = {&tb, sizeof(tb)};
    chunk(w, PTC_CHUNK_TIMEBASE, 0, pid, 0, &iov, 1);
}

void tw_module(struct tw *w, uint32_t pid, uint32_t module_id, uint32_t first_stub,
               uint64_t stubs_start, const char *path, const char *const *names,
               uint32_t nfuncs)
{
    tw_module_ex(w, pid, module_id, first_stub, stubs_start, path, names, nfuncs, 0);
}

void tw_module_ex(struct tw *w, uint32_t pid, uint32_t module_id, uint32_t first_stub,
                  uint64_t stubs_start, const char *path, const char *const *names,
                  uint32_t nfuncs, int whole_calls)
{
    size_t nst = (size_t)nfuncs * (whole_calls ? 5 : 4);
    struct ptc_module_stub *st = calloc(nst ? nst : 1, sizeof(*st));
    struct ptc_module_func *fn = calloc(nfuncs ? nfuncs : 1, sizeof(*fn));
    size_t scap = strlen(path) + 1 + 1;
    for (uint32_t i = 0; i < nfuncs; i++)
        scap += 2 * strlen(names[i]) + 2 + 4 + 16;
    char *strings = calloc(1, scap);
    if (!st || !fn || !strings)
        die("tw: calloc");
    size_t sl = 0;
    strcpy(strings, path);
    sl = strlen(path) + 1;
    size_t src = sl;
    strcpy(strings + sl, "synthetic.c");
    sl += strlen("synthetic.c") + 1;
    for (uint32_t i = 0; i < nfuncs; i++) {
        fn[i].name = (uint32_t)sl;
        strcpy(strings + sl, names[i]);
        sl += strlen(names[i]) + 1;
        fn[i].linkage_name = fn[i].name;
        fn[i].file = (uint32_t)src;
        fn[i].line = 10 * (i + 1);
        for (uint32_t k = 0; k < 4; k++) {
            st[4 * i + k].address = stubs_start + 16 * (4 * i + k);
            st[4 * i + k].func = i;
            st[4 * i + k].kind = (uint16_t)k;
            st[4 * i + k].site = 0;
        }
        if (whole_calls) {
            size_t c = TW_C(nfuncs, i);
            st[c].address = stubs_start + 16 * c;
            st[c].func = i;
            st[c].kind = PTC_STUB_CALL;
            st[c].site = 0;
        }
    }
    struct ptc_module m = {.module_id = module_id, .first_stub_id = first_stub,
                           .num_stubs = (uint32_t)nst, .num_funcs = nfuncs,
                           .load_bias = stubs_start & ~0xfffffULL, .stubs_start = stubs_start,
                           .stubs_end = stubs_start + 16 * nst, .identity = 42, .path = 0,
                           .strings_size = (uint32_t)sl};
    struct iovec iov[4] = {{&m, sizeof(m)}, {st, nst * sizeof(*st)},
                           {fn, nfuncs * sizeof(*fn)}, {strings, sl}};
    chunk(w, PTC_CHUNK_MODULE, 0, pid, 0, iov, 4);
    free(st);
    free(fn);
    free(strings);
}

void tw_thread(struct tw *w, uint32_t pid, uint32_t tid, uint32_t event, const char *name)
{
    struct ptc_thread t = {.event = event};
    struct iovec iov[2] = {{&t, sizeof(t)}, {(void *)name, strlen(name) + 1}};
    chunk(w, PTC_CHUNK_THREAD, 0, pid, tid, iov, 2);
}

void tw_loss_chunk(struct tw *w, uint32_t pid, uint32_t tid, uint32_t kind, uint64_t count)
{
    struct ptc_loss l = {.kind = kind, .tid = tid, .count = count};
    const char *note = "test loss";
    struct iovec iov[2] = {{&l, sizeof(l)}, {(void *)note, strlen(note) + 1}};
    chunk(w, PTC_CHUNK_LOSS, 0, pid, 0, iov, 2);
}

struct tw_stream *tw_stream(struct tw *w, uint32_t pid, uint32_t tid, int timed,
                            uint32_t max_records)
{
    struct tw_stream *s = calloc(1, sizeof(*s));
    if (!s)
        die("tw: calloc");
    s->w = w;
    s->pid = pid;
    s->tid = tid;
    s->timed = timed;
    s->max_records = max_records;
    return s;
}

static void put(struct tw_stream *s, uint64_t v)
{
    if (s->len + PTC_VARINT_MAX > s->cap) {
        s->cap = s->cap ? s->cap * 2 : 4096;
        s->buf = realloc(s->buf, s->cap);
        if (!s->buf)
            die("tw: realloc");
    }
    s->len += ptc_varint_put(s->buf + s->len, v);
}

static void record_done(struct tw_stream *s, uint64_t tsc)
{
    if (s->timed) {
        if (!s->records && !s->len) {
            /* cannot happen: put() was called first */
        }
        put(s, ptc_zigzag((int64_t)(tsc - s->last_tsc)));
        s->last_tsc = tsc;
    }
    s->records++;
    if (s->max_records && s->records >= s->max_records)
        tw_flush(s);
}

static void begin(struct tw_stream *s, uint64_t tsc)
{
    if (!s->records) {
        s->start_tsc = tsc;
        s->last_tsc = tsc;
    }
}

void tw_hit(struct tw_stream *s, uint32_t stub_id, uint64_t tsc)
{
    begin(s, tsc);
    put(s, (uint64_t)stub_id + PTC_SOFT_ID_BASE);
    record_done(s, tsc);
}

void tw_drop(struct tw_stream *s, uint64_t count, uint64_t tsc)
{
    begin(s, tsc);
    put(s, PTC_SOFT_LOSS);
    put(s, count);
    record_done(s, tsc);
}

void tw_fork(struct tw_stream *s, uint32_t child_pid, uint64_t tsc)
{
    begin(s, tsc);
    put(s, PTC_SOFT_FORK);
    put(s, child_pid);
    record_done(s, tsc);
}

void tw_flush(struct tw_stream *s)
{
    if (!s->records)
        return;
    struct ptc_soft_events h = {.start_tsc = s->start_tsc, .end_tsc = s->last_tsc,
                                .num_records = s->records,
                                .flags = s->timed ? PTC_SOFT_F_TIMED : 0};
    struct iovec iov[2] = {{&h, sizeof(h)}, {s->buf, s->len}};
    chunk(s->w, PTC_CHUNK_SOFT_EVENTS, 0, s->pid, s->tid, iov, 2);
    s->len = 0;
    s->records = 0;
}

void tw_stream_free(struct tw_stream *s)
{
    tw_flush(s);
    free(s->buf);
    free(s);
}
