/* Trace file reader: file header, then chunk by chunk with size and CRC checks
 * (docs/trace-format.md). Streaming: holds one chunk (plus read-ahead) at a time. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dec_core.h"
#include "ptc_chunk_write.h"
#include "ptc_crc.h"

/* Bytes read at a time: small enough that a chunk just read is still in L2 when its CRC is
 * checked and its events decoded (a 4 MiB buffer was no faster and 4 MiB more RSS). */
#define READ_CHUNK (256u << 10)

struct ptc_reader {
    int fd;                 /* -1 for memory input */
    const uint8_t *mem;     /* memory input */
    size_t mem_size;
    uint8_t *buf;           /* file input: buf[pos, len) holds unread bytes */
    size_t cap, pos, len;
    uint64_t buf_off;       /* file offset of buf[0] */
    int eof;
    int final_err;          /* sticky error, 0 if none */
    uint64_t off;           /* offset of the next unread byte */
    uint64_t index;
    uint64_t file_size;     /* regular files: size at open; else UINT64_MAX */
    char path[256];
    struct ptc_file_header hdr;
    int (*crc_skip)(void *ctx, const struct ptc_chunk_header *h);
    void *crc_skip_ctx;
    ptc_read_hook read_hook; /* every byte read, in order */
    void *read_hook_ctx;
    uint64_t hooked;        /* bytes handed to read_hook so far (a resync reads some again) */
    uint64_t last_at;       /* where the chunk ptc_reader_next last tried starts */
    uint64_t resync_crc_bytes; /* bytes ptc_reader_resync checked CRCs of so far */
    struct ptc_chunk_header fail_h; /* the chunk the last error is about, if fail_have */
    uint64_t fail_at;
    int fail_have;
    char msg[512];
};

void ptc_reader_set_crc_skip(struct ptc_reader *r,
                             int (*skip)(void *ctx, const struct ptc_chunk_header *h), void *ctx)
{
    r->crc_skip = skip;
    r->crc_skip_ctx = ctx;
}

void ptc_reader_set_read_hook(struct ptc_reader *r, ptc_read_hook fn, void *ctx)
{
    r->read_hook = fn;
    r->read_hook_ctx = ctx;
    /* what was read before: the whole input in memory, or the file's first read (right after
     * ptc_reader_open() nothing has been moved out of the buffer yet: buf_off is 0; later, the
     * bytes before buf_off are not handed over, which a caller counting them sees) */
    if (fn && r->fd < 0 && r->mem_size)
        fn(ctx, r->mem, r->mem_size);
    else if (fn && r->fd >= 0 && r->len && !r->buf_off)
        fn(ctx, r->buf, r->len);
    r->hooked = r->fd < 0 ? r->mem_size : r->buf_off + r->len;
}

static int rerr(struct ptc_reader *r, int err, int final, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int rerr(struct ptc_reader *r, int err, int final, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
    va_end(ap);
    if (final)
        r->final_err = err;
    return -err;
}

/* Makes at least n bytes available at *p (from the current position), or fewer at end of
 * input; returns how many are available (<= n requested is guaranteed only if the input
 * ends), or -1 on a read error. */
static long long avail(struct ptc_reader *r, size_t n, const uint8_t **p)
{
    if (r->fd < 0) {
        size_t left = r->mem_size - (size_t)r->off;
        *p = r->mem + r->off;
        return (long long)(left < n ? left : n);
    }
    size_t have = r->len - r->pos;
    if (have < n && !r->eof) {
        if (r->pos) {
            memmove(r->buf, r->buf + r->pos, have);
            r->buf_off += r->pos;
            r->len = have;
            r->pos = 0;
        }
        size_t want = n > READ_CHUNK ? n : READ_CHUNK;
        if (want > r->cap) {
            uint8_t *nb = realloc(r->buf, want);
            if (!nb)
                return -2;
            r->buf = nb;
            r->cap = want;
        }
        while (r->len < n && !r->eof) {
            ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                return -1;
            }
            if (got == 0) {
                r->eof = 1;
            } else if (r->read_hook && r->buf_off + r->len + (uint64_t)got > r->hooked) {
                uint64_t from = r->buf_off + r->len, skip = r->hooked > from ? r->hooked - from : 0;
                r->read_hook(r->read_hook_ctx, r->buf + r->len + skip, (size_t)got - skip);
                r->hooked = from + (uint64_t)got;
            }
            r->len += (size_t)got;
        }
        have = r->len - r->pos;
    }
    *p = r->buf + r->pos;
    return (long long)(have < n ? have : n);
}

static void consume(struct ptc_reader *r, size_t n)
{
    r->off += n;
    if (r->fd >= 0)
        r->pos += n;
}

static int read_header(struct ptc_reader *r)
{
    const uint8_t *p;
    long long got = avail(r, sizeof(struct ptc_file_header), &p);
    if (got == -2)
        return rerr(r, PTC_E_NOMEM, 1, "out of memory");
    if (got < 0)
        return rerr(r, PTC_E_IO, 1, "cannot read %s: %s", r->path, strerror(errno));
    if (got == 0)
        return rerr(r, PTC_E_FORMAT, 1, "not a ptcall trace file (%s): the file is empty",
                    r->path);
    if (got < 8 || memcmp(p, PTC_FILE_MAGIC, 8))
        return rerr(r, PTC_E_FORMAT, 1,
                    "not a ptcall trace file (%s): it does not start with \"PTCALLTR\"",
                    r->path);
    if (got < (long long)sizeof(struct ptc_file_header))
        return rerr(r, PTC_E_TRUNCATED, 1,
                    "%s is truncated: the file ends at byte %lld inside the 64-byte file "
                    "header (%lld bytes missing)",
                    r->path, got, (long long)sizeof(struct ptc_file_header) - got);
    memcpy(&r->hdr, p, sizeof(r->hdr));
    if (r->hdr.version_major < PTC_VERSION_MAJOR_MIN || r->hdr.version_major > PTC_VERSION_MAJOR)
        return rerr(r, PTC_E_VERSION, 1,
                    "%s is a version %u.%u trace; this ptcall reads versions %u.x to %u.x",
                    r->path, r->hdr.version_major, r->hdr.version_minor,
                    PTC_VERSION_MAJOR_MIN, PTC_VERSION_MAJOR);
    uint32_t hs = r->hdr.header_size;
    if (hs < sizeof(struct ptc_file_header) || (hs & 7) || hs > 65536)
        return rerr(r, PTC_E_CORRUPT, 1, "%s: corrupt file header: header_size %u", r->path,
                    hs);
    consume(r, sizeof(struct ptc_file_header));
    if (hs > sizeof(struct ptc_file_header)) { /* a newer minor's longer header */
        size_t extra = hs - sizeof(struct ptc_file_header);
        got = avail(r, extra, &p);
        if (got < 0)
            return rerr(r, got == -2 ? PTC_E_NOMEM : PTC_E_IO, 1, "cannot read %s: %s",
                        r->path, got == -2 ? "out of memory" : strerror(errno));
        if ((size_t)got < extra)
            return rerr(r, PTC_E_TRUNCATED, 1,
                        "%s is truncated: the file ends inside its %u-byte header", r->path,
                        hs);
        consume(r, extra);
    }
    return 0;
}

static int open_common(struct ptc_reader *r, struct ptc_reader **out)
{
    int e = read_header(r);
    *out = r;
    return e;
}

int ptc_reader_open(struct ptc_reader **out, const char *path)
{
    *out = NULL;
    struct ptc_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return -PTC_E_NOMEM;
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (r->fd < 0) {
        int e = errno;
        *out = r;
        r->fd = -1;
        r->mem = (const uint8_t *)"";
        return rerr(r, PTC_E_IO, 1, "cannot open %s: %s", path, strerror(e));
    }
    struct stat st;
    if (fstat(r->fd, &st) != 0)
        st.st_mode = 0;
    if (S_ISDIR(st.st_mode)) {
        *out = r;
        return rerr(r, PTC_E_IO, 1, "cannot read %s: it is a directory", path);
    }
    r->file_size = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : UINT64_MAX;
    posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return open_common(r, out);
}

int ptc_reader_open_memory(struct ptc_reader **out, const void *data, size_t size)
{
    *out = NULL;
    struct ptc_reader *r = calloc(1, sizeof(*r));
    if (!r)
        return -PTC_E_NOMEM;
    snprintf(r->path, sizeof(r->path), "(memory)");
    r->fd = -1;
    r->mem = data ? data : (const void *)"";
    r->mem_size = data ? size : 0;
    r->file_size = r->mem_size;
    return open_common(r, out);
}

const struct ptc_file_header *ptc_reader_header(const struct ptc_reader *r) { return &r->hdr; }
const char *ptc_reader_errmsg(const struct ptc_reader *r) { return r ? r->msg : ""; }
uint64_t ptc_reader_offset(const struct ptc_reader *r) { return r->off; }

int ptc_reader_can_continue(const struct ptc_reader *r) { return r->final_err == 0; }

int ptc_reader_seek(struct ptc_reader *r, uint64_t offset, uint64_t index)
{
    if (r->final_err)
        return -r->final_err;
    if (r->fd < 0) {
        if (offset > r->mem_size)
            return -PTC_E_ARG;
    } else if (lseek(r->fd, (off_t)offset, SEEK_SET) < 0) {
        return rerr(r, PTC_E_IO, 1, "cannot seek in %s: %s", r->path, strerror(errno));
    }
    /* what is buffered is of the old place: read afresh from the new one */
    r->pos = r->len = 0;
    r->buf_off = offset;
    r->eof = 0;
    r->off = offset;
    r->index = index;
    return 0;
}

int ptc_reader_failed_chunk(const struct ptc_reader *r, struct ptc_chunk_header *h,
                            uint64_t *offset)
{
    if (!r->fail_have)
        return 0;
    *h = r->fail_h;
    *offset = r->fail_at;
    return 1;
}

void ptc_reader_close(struct ptc_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->buf);
    free(r);
}

/* Whether a chunk's padding, p[from, to), is zero as writers leave it. */
static int zero_padding(const uint8_t *p, size_t from, size_t to)
{
    for (size_t i = from; i < to; i++)
        if (p[i])
            return 0;
    return 1;
}

int ptc_reader_next(struct ptc_reader *r, struct ptc_chunk *c)
{
    if (r->final_err)
        return -r->final_err;
    r->fail_have = 0;
    const uint8_t *p;
    uint64_t at = r->off;
    r->last_at = at;
    long long got = avail(r, sizeof(struct ptc_chunk_header), &p);
    if (got == -2)
        return rerr(r, PTC_E_NOMEM, 1, "out of memory");
    if (got < 0)
        return rerr(r, PTC_E_IO, 1, "cannot read %s: %s", r->path, strerror(errno));
    if (got == 0)
        return 0;
    if (got < (long long)sizeof(struct ptc_chunk_header))
        return rerr(r, PTC_E_TRUNCATED, 1,
                    "%s is truncated: the file ends at byte %llu inside the header of chunk "
                    "%llu (%lld of its 24 header bytes missing)",
                    r->path, (unsigned long long)(at + (uint64_t)got),
                    (unsigned long long)r->index, 24 - got);
    struct ptc_chunk_header h;
    memcpy(&h, p, sizeof(h));
    r->fail_h = h;
    r->fail_at = at;
    r->fail_have = 1;
    if (h.payload_size > PTC_MAX_CHUNK_PAYLOAD)
        return rerr(r, PTC_E_CORRUPT, 1,
                    "%s is corrupt: chunk %llu at byte %llu claims an implausible payload of "
                    "%u bytes (type %u)",
                    r->path, (unsigned long long)r->index, (unsigned long long)at,
                    h.payload_size, h.type);
    if (h.type == 0)
        return rerr(r, PTC_E_CORRUPT, 1,
                    "%s is corrupt: chunk %llu at byte %llu has type 0 (no such chunk type)",
                    r->path, (unsigned long long)r->index, (unsigned long long)at);
    size_t total = sizeof(h) + h.payload_size + ptc_chunk_padding(h.payload_size);
    if (r->fd >= 0 && r->file_size != UINT64_MAX && at + total > r->file_size) {
        struct stat st; /* the file may have grown since it was opened */
        if (fstat(r->fd, &st) == 0)
            r->file_size = (uint64_t)st.st_size;
    }
    if (r->file_size != UINT64_MAX && at + total > r->file_size)
        got = (long long)(r->file_size - at); /* do not buffer what cannot be there */
    else
        got = avail(r, total, &p);
    if (got == -2)
        return rerr(r, PTC_E_NOMEM, 1, "out of memory");
    if (got < 0)
        return rerr(r, PTC_E_IO, 1, "cannot read %s: %s", r->path, strerror(errno));
    if ((size_t)got < total)
        return rerr(r, PTC_E_TRUNCATED, 1,
                    "%s is truncated: the file ends at byte %llu inside chunk %llu (type %u, "
                    "starting at byte %llu): %llu of its %zu bytes are missing",
                    r->path, (unsigned long long)(at + (uint64_t)got),
                    (unsigned long long)r->index, h.type, (unsigned long long)at,
                    (unsigned long long)(total - (size_t)got), total);
    const uint8_t *payload = p + sizeof(h);
    if (!zero_padding(p, sizeof(h) + h.payload_size, total)) {
        uint64_t idx = r->index++;
        consume(r, total);
        return rerr(r, PTC_E_CORRUPT, 0,
                    "%s is corrupt: chunk %llu (type %u) at byte %llu has non-zero padding",
                    r->path, (unsigned long long)idx, h.type, (unsigned long long)at);
    }
    uint32_t crc = r->crc_skip && r->crc_skip(r->crc_skip_ctx, &h)
                       ? h.crc32
                       : ptc_chunk_crc(p, payload, h.payload_size, r->hdr.version_major);
    uint64_t idx = r->index++;
    consume(r, total);
    if (crc != h.crc32)
        return rerr(r, PTC_E_CORRUPT, 0,
                    "%s is corrupt: chunk %llu (type %u, pid %u, tid %u, seq %u) at byte %llu "
                    "fails its CRC check",
                    r->path, (unsigned long long)idx, h.type, h.pid, h.tid, h.seq,
                    (unsigned long long)at);
    r->fail_have = 0;
    c->h = h;
    c->payload = payload;
    c->offset = at;
    c->index = idx;
    return 1;
}

int ptc_reader_resync(struct ptc_reader *r, uint64_t *skipped)
{
    uint64_t from = r->last_at + 1;
    *skipped = 0;
    if (r->final_err == PTC_E_NOMEM || r->final_err == PTC_E_IO || r->final_err == PTC_E_FORMAT ||
        r->final_err == PTC_E_VERSION || !r->last_at)
        return -1; /* nothing to pass over: the input cannot be read, or is not a trace */
    /* back to the byte after the failed chunk's start: that chunk was read into the buffer
     * whole (or up to the end of the file), so it is still there */
    if (r->fd < 0) {
        if (from > r->mem_size)
            return -1;
        r->off = from;
    } else {
        if (from < r->buf_off || from > r->buf_off + r->len)
            return -1;
        r->pos = (size_t)(from - r->buf_off);
        r->off = from;
    }
    r->final_err = 0;
    r->fail_have = 0;
    for (;;) {
        const uint8_t *p;
        long long got = avail(r, sizeof(struct ptc_chunk_header), &p);
        if (got < 0) {
            rerr(r, got == -2 ? PTC_E_NOMEM : PTC_E_IO, 1, "cannot read %s: %s", r->path,
                 got == -2 ? "out of memory" : strerror(errno));
            return -1;
        }
        if (got < (long long)sizeof(struct ptc_chunk_header)) { /* nothing whole after it */
            *skipped = r->off + (uint64_t)got - r->last_at;
            consume(r, (size_t)got);
            return 0;
        }
        struct ptc_chunk_header h;
        memcpy(&h, p, sizeof(h));
        size_t total = sizeof(h) + (size_t)h.payload_size + ptc_chunk_padding(h.payload_size);
        /* a chunk type writers use (1..63) and flags they set, inside the file: only then
         * is its CRC computed, within a budget, so that input full of header-like bytes
         * cannot make the scan quadratic */
        if (h.type != 0 && h.type <= PTC_CHUNK_PT_LAST && !(h.flags & ~PTC_CHUNK_F_OPTIONAL) &&
            h.payload_size <= PTC_MAX_CHUNK_PAYLOAD &&
            (r->file_size == UINT64_MAX || r->off + total <= r->file_size)) {
            if (r->resync_crc_bytes > (64ull << 20) + 2 * (r->file_size == UINT64_MAX
                                                              ? r->off : r->file_size)) {
                *skipped = r->off - r->last_at;
                rerr(r, PTC_E_CORRUPT, 1, "%s: no whole chunk found between byte %llu and byte "
                     "%llu, and the search stops there (the rest is lost)", r->path,
                     (unsigned long long)r->last_at, (unsigned long long)r->off);
                return -1;
            }
            r->resync_crc_bytes += total;
            got = avail(r, total, &p);
            if (got == (long long)total && zero_padding(p, sizeof(h) + h.payload_size, total) &&
                ptc_chunk_crc(p, p + sizeof(h), h.payload_size, r->hdr.version_major) ==
                    h.crc32) {
                *skipped = r->off - r->last_at;
                return 1; /* ptc_reader_next reads it */
            }
        }
        consume(r, 1);
    }
}
