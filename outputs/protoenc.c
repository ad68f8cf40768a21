/* The Protocol Buffers encoder (protoenc.h). */
#include "protoenc.h"

#include <stdlib.h>
#include <string.h>

#include "ptc_escape.h"

void ptc_pb_init(struct ptc_pb *p)
{
    memset(p, 0, sizeof(*p));
}

void ptc_pb_free(struct ptc_pb *p)
{
    free(p->buf);
    memset(p, 0, sizeof(*p));
}

static int room(struct ptc_pb *p, size_t n)
{
    if (p->err)
        return 0;
    if (p->cap - p->len >= n)
        return 1;
    size_t nc = p->cap ? p->cap * 2 : 256;
    while (nc - p->len < n)
        nc *= 2;
    uint8_t *b = realloc(p->buf, nc);
    if (!b) {
        p->err = 1;
        return 0;
    }
    p->buf = b;
    p->cap = nc;
    return 1;
}

static size_t varint_to(uint8_t *d, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        d[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    d[n++] = (uint8_t)v;
    return n;
}

void ptc_pb_varint(struct ptc_pb *p, uint64_t v)
{
    if (room(p, 10))
        p->len += varint_to(p->buf + p->len, v);
}

static void tag(struct ptc_pb *p, uint32_t field, unsigned wire)
{
    ptc_pb_varint(p, ((uint64_t)field << 3) | wire);
}

void ptc_pb_uint(struct ptc_pb *p, uint32_t field, uint64_t v)
{
    tag(p, field, PTC_PB_VARINT);
    ptc_pb_varint(p, v);
}

void ptc_pb_bytes(struct ptc_pb *p, uint32_t field, const void *data, size_t n)
{
    tag(p, field, PTC_PB_LEN);
    ptc_pb_varint(p, n);
    if (n && room(p, n)) {
        memcpy(p->buf + p->len, data, n);
        p->len += n;
    }
}

void ptc_pb_str(struct ptc_pb *p, uint32_t field, const char *s)
{
    ptc_pb_bytes(p, field, s, strlen(s));
}

size_t ptc_pb_open(struct ptc_pb *p, uint32_t field)
{
    tag(p, field, PTC_PB_LEN);
    if (room(p, 1))
        p->buf[p->len++] = 0;
    return p->len;
}

void ptc_pb_close(struct ptc_pb *p, size_t start)
{
    if (p->err)
        return;
    size_t n = p->len - start;
    uint8_t v[10];
    size_t k = varint_to(v, n);
    if (k > 1) { /* the reserved byte holds one; move the content for the rest */
        if (!room(p, k - 1))
            return;
        memmove(p->buf + start + k - 1, p->buf + start, n);
        p->len += k - 1;
    }
    memcpy(p->buf + start - 1, v, k);
}

static void put_raw(void *ctx, const char *s, size_t n)
{
    struct ptc_pb *p = ctx;
    if (n && room(p, n)) {
        memcpy(p->buf + p->len, s, n);
        p->len += n;
    }
}

void ptc_pb_text2(struct ptc_pb *p, uint32_t field, const char *a, const char *b)
{
    size_t at = ptc_pb_open(p, field); /* a string's length goes in front as a message's */
    ptc_escape(a, strlen(a), PTC_ESC_TEXT, put_raw, p);
    if (b)
        ptc_escape(b, strlen(b), PTC_ESC_TEXT, put_raw, p);
    ptc_pb_close(p, at);
}

void ptc_pb_text(struct ptc_pb *p, uint32_t field, const char *s)
{
    ptc_pb_text2(p, field, s, NULL);
}
