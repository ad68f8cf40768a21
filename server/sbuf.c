/* The web views' buffer and escaping (sbuf.h). */
#include "sbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_init(struct sbuf *b)
{
    memset(b, 0, sizeof(*b));
}

void sb_free(struct sbuf *b)
{
    free(b->p);
    sb_init(b);
}

char *sb_take(struct sbuf *b, size_t *len)
{
    if (b->oom || !b->p) {
        if (!b->oom && !b->p) { /* an empty body is still a body */
            char *e = calloc(1, 1);
            if (len)
                *len = 0;
            return e;
        }
        sb_free(b);
        return NULL;
    }
    char *p = b->p;
    if (len)
        *len = b->n;
    sb_init(b);
    return p;
}

static int grow(struct sbuf *b, size_t more)
{
    if (b->oom)
        return -1;
    if (b->n + more + 1 <= b->cap)
        return 0;
    size_t nc = b->cap ? b->cap : 4096;
    while (nc < b->n + more + 1)
        nc *= 2;
    char *p = realloc(b->p, nc);
    if (!p) {
        b->oom = 1;
        return -1;
    }
    b->p = p;
    b->cap = nc;
    return 0;
}

void sb_add(struct sbuf *b, const void *s, size_t n)
{
    if (grow(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void sb_puts(struct sbuf *b, const char *s)
{
    sb_add(b, s, strlen(s));
}

void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
    va_end(ap);
    if (k < 0)
        return;
    if ((size_t)k < sizeof(tmp)) {
        sb_add(b, tmp, (size_t)k);
        return;
    }
    if (grow(b, (size_t)k))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* The length of the valid UTF-8 sequence at s (1..4), or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
                             : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (!n || (n == 2 && c < 0xc2) || (n == 4 && c > 0xf4))
        return 0;
    for (size_t i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if (n == 3 && c == 0xe0 && s[1] < 0xa0)
        return 0;
    if (n == 3 && c == 0xed && s[1] >= 0xa0) /* surrogates */
        return 0;
    if (n == 4 && c == 0xf0 && s[1] < 0x90)
        return 0;
    if (n == 4 && c == 0xf4 && s[1] >= 0x90)
        return 0;
    return n;
}

void sb_json_str(struct sbuf *b, const char *s)
{
    if (!s) {
        sb_puts(b, "null");
        return;
    }
    sb_add(b, "\"", 1);
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        unsigned c = *u;
        /* <, > and & as escapes: a JSON document embedded in an HTML <script> block can then
         * never close it, whatever a function is called */
        if (c < 0x20 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' ||
            c == 0x7f) {
            if (c == '"' || c == '\\')
                sb_printf(b, "\\%c", c);
            else if (c == '\n')
                sb_puts(b, "\\n");
            else if (c == '\t')
                sb_puts(b, "\\t");
            else
                sb_printf(b, "\\u%04x", c);
            u++;
            continue;
        }
        size_t n = utf8_len(u);
        if (!n) {
            sb_puts(b, "\\ufffd");
            u++;
            continue;
        }
        /* U+2028/2029 end a line in older JavaScript */
        if (n == 3 && u[0] == 0xe2 && u[1] == 0x80 && (u[2] == 0xa8 || u[2] == 0xa9)) {
            sb_printf(b, "\\u%04x", u[2] == 0xa8 ? 0x2028 : 0x2029);
        } else {
            sb_add(b, u, n);
        }
        u += n;
    }
    sb_add(b, "\"", 1);
}

void sb_json_num(struct sbuf *b, double v)
{
    if (!isfinite(v))
        sb_puts(b, "null");
    else if (v == floor(v) && fabs(v) < 9.007199254740992e15)
        sb_printf(b, "%.0f", v);
    else
        sb_printf(b, "%.2f", v);
}

void sb_html(struct sbuf *b, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': sb_puts(b, "&amp;"); break;
        case '<': sb_puts(b, "&lt;"); break;
        case '>': sb_puts(b, "&gt;"); break;
        case '"': sb_puts(b, "&quot;"); break;
        case '\'': sb_puts(b, "&#39;"); break;
        default: sb_add(b, s, 1);
        }
    }
}
