/* The views' buffered writer (wbuf.h). */
#include "wbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int ptc_wbuf_init(struct ptc_wbuf *w, int fd, size_t cap)
{
    memset(w, 0, sizeof(*w));
    w->fd = fd;
    /* views ask for at most 4 KiB + 64 bytes of room at a time (wbuf.h): with 8 KiB at
     * least, room always fits after a flush */
    w->cap = cap < 8192 ? 8192 : cap;
    w->buf = malloc(w->cap);
    return w->buf ? 0 : -1;
}

void ptc_wbuf_free(struct ptc_wbuf *w)
{
    free(w->buf);
    w->buf = NULL;
    w->len = w->cap = 0;
}

int ptc_wbuf_flush(struct ptc_wbuf *w)
{
    if (w->fd < 0 && !w->err) /* a memory buffer keeps its bytes */
        return 0;
    size_t off = 0, n = w->len;
    if (w->limit && !w->over_limit && w->written + n > w->limit) {
        n = w->written < w->limit ? (size_t)(w->limit - w->written) : 0;
        w->over_limit = 1;
    } else if (w->over_limit) {
        n = 0;
    }
    while (!w->err && off < n) {
        ssize_t k = write(w->fd, w->buf + off, n - off);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            w->err = errno;
            break;
        }
        off += (size_t)k;
    }
    w->written += off;
    w->len = 0;
    return w->err || w->over_limit ? -1 : 0;
}

void ptc_wbuf_drain(struct ptc_wbuf *w, size_t n)
{
    if (w->fd < 0) { /* a memory buffer (a line held for time order, a fragment) grows */
        size_t nc = w->cap * 2 > w->len + n ? w->cap * 2 : w->len + n;
        char *b = realloc(w->buf, nc);
        if (b) {
            w->buf = b;
            w->cap = nc;
            return;
        }
        w->err = ENOMEM; /* what is held is dropped, and the flush says so */
    }
    ptc_wbuf_flush(w);
    (void)n; /* n <= 4 KiB + 64 < cap (ptc_wbuf_init) */
}

void ptc_wb_put_long(struct ptc_wbuf *w, const char *s, size_t n)
{
    while (n) {
        size_t k = w->cap - w->len;
        if (!k) {
            ptc_wbuf_drain(w, 1);
            k = w->cap - w->len;
        }
        if (k > n)
            k = n;
        memcpy(w->buf + w->len, s, k);
        w->len += k;
        s += k;
        n -= k;
    }
}

static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* Writes v's digits ending at end; returns where they start. */
static char *u64_digits(char *end, uint64_t v)
{
    char *p = end;
    while (v >= 100) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digits2[i + 1];
        *--p = digits2[i];
    }
    if (v >= 10) {
        unsigned i = (unsigned)v * 2;
        *--p = digits2[i + 1];
        *--p = digits2[i];
    } else {
        *--p = (char)('0' + v);
    }
    return p;
}

/* Copies n <= 32 bytes from src, which has 32 readable bytes, in fixed-size moves (a memcpy
 * of variable length is a library call; these numbers are written on every line). */
static inline void copy32(char *dst, const char *src, size_t n)
{
    __builtin_memcpy(dst, src, 16);
    if (n > 16)
        __builtin_memcpy(dst + 16, src + 16, 16);
}

/* Writes the n <= 32 characters at p (with 32 readable bytes) right-aligned in width. */
static inline void put_right(struct ptc_wbuf *w, const char *p, size_t n, unsigned width)
{
    if (width > 64)
        width = 64;
    size_t pad = n < width ? width - n : 0;
    char *o = ptc_wb_room(w, pad + 32);
    if (pad) {
        memset(o, ' ', pad);
        o += pad;
    }
    copy32(o, p, n);
    w->len += pad + n;
}

void ptc_wb_u64w(struct ptc_wbuf *w, uint64_t v, unsigned width)
{
    char tmp[64];
    char *end = tmp + 24; /* 40 bytes of slack after the digits for copy32 */
    char *p = u64_digits(end, v);
    put_right(w, p, (size_t)(end - p), width);
}

void ptc_wb_i64(struct ptc_wbuf *w, int64_t v)
{
    if (v < 0) {
        ptc_wb_char(w, '-');
        ptc_wb_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        ptc_wb_u64(w, (uint64_t)v);
    }
}

void ptc_wb_fixed(struct ptc_wbuf *w, uint64_t v, unsigned decimals, unsigned width)
{
    char tmp[48];
    char *end = tmp + sizeof(tmp);
    char *p = end;
    if (decimals > 18)
        decimals = 18;
    unsigned d = decimals;
    for (; d >= 2; d -= 2) {
        unsigned i = (unsigned)(v % 100) * 2;
        v /= 100;
        *--p = digits2[i + 1];
        *--p = digits2[i];
    }
    if (d) {
        *--p = (char)('0' + v % 10);
        v /= 10;
    }
    if (decimals)
        *--p = '.';
    p = u64_digits(p, v);
    size_t n = (size_t)(end - p);
    if (width > 64)
        width = 64;
    char *o = ptc_wb_room(w, n + width);
    if (n < width) {
        memset(o, ' ', width - n);
        o += width - n;
        w->len += width - n;
    }
    memcpy(o, p, n);
    w->len += n;
}

/* x < 1000 as three digits at o. */
static inline void put3(char *o, uint32_t x)
{
    o[0] = (char)('0' + x / 100);
    memcpy(o + 1, digits2 + (x % 100) * 2, 2);
}

void ptc_wb_sec9(struct ptc_wbuf *w, uint64_t ns, unsigned width)
{
    uint64_t sec = ns / 1000000000u;
    uint32_t frac = (uint32_t)(ns % 1000000000u);
    char tmp[80];
    char *end = tmp + 40, *p = end - 9; /* 40 bytes of slack after the digits */
    uint32_t a = frac / 1000000u, b = frac / 1000u % 1000u, c = frac % 1000u;
    put3(p, a);
    put3(p + 3, b);
    put3(p + 6, c);
    *--p = '.';
    p = u64_digits(p, sec);
    put_right(w, p, (size_t)(end - p), width);
}

static void put_wb(void *ctx, const char *s, size_t n)
{
    ptc_wb_put(ctx, s, n);
}

void ptc_wb_esc(struct ptc_wbuf *w, const char *s, size_t n, enum ptc_esc_mode mode)
{
    ptc_escape(s, n, mode, put_wb, w);
}

struct put_map {
    struct ptc_wbuf *w;
    char from, to;
};

static void put_wb_map(void *ctx, const char *s, size_t n)
{
    const struct put_map *m = ctx;
    while (n) {
        size_t k = n < 4096 ? n : 4096;
        char *o = ptc_wb_room(m->w, k);
        for (size_t i = 0; i < k; i++)
            o[i] = s[i] == m->from ? m->to : s[i];
        m->w->len += k;
        s += k;
        n -= k;
    }
}

void ptc_wb_esc_map(struct ptc_wbuf *w, const char *s, size_t n, enum ptc_esc_mode mode,
                    char from, char to)
{
    struct put_map m = {w, from, to};
    ptc_escape(s, n, mode, put_wb_map, &m);
}

void ptc_wb_json_str(struct ptc_wbuf *w, const char *s)
{
    ptc_wb_char(w, '"');
    ptc_wb_esc(w, s, strlen(s), PTC_ESC_JSON);
    ptc_wb_char(w, '"');
}

void ptc_wb_json_script_str(struct ptc_wbuf *w, const char *s)
{
    ptc_wb_char(w, '"');
    ptc_wb_esc(w, s, strlen(s), PTC_ESC_JSON_SCRIPT);
    ptc_wb_char(w, '"');
}

void ptc_wb_json_chars(struct ptc_wbuf *w, const char *s)
{
    ptc_wb_esc(w, s, strlen(s), PTC_ESC_JSON);
}

void ptc_wb_csv_str(struct ptc_wbuf *w, const char *s)
{
    ptc_escape_csv(s, strlen(s), put_wb, w);
}

void ptc_wb_xml_str(struct ptc_wbuf *w, const char *s)
{
    ptc_wb_esc(w, s, strlen(s), PTC_ESC_XML);
}

void ptc_wb_text_str(struct ptc_wbuf *w, const char *s)
{
    ptc_wb_esc(w, s, strlen(s), PTC_ESC_TEXT);
}

void ptc_wb_double(struct ptc_wbuf *w, double v, int decimals)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof(tmp), "%.*f", decimals, v);
    if (n > 0)
        ptc_wb_put(w, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}
