/* The web views' buffer and escaping (sbuf.h). */
#include "sbuf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_escape.h"

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

static void put_sb(void *ctx, const char *s, size_t n)
{
    sb_add(ctx, s, n);
}

void sb_json_str(struct sbuf *b, const char *s)
{
    if (!s) {
        sb_puts(b, "null");
        return;
    }
    sb_add(b, "\"", 1);
    /* <, > and & as escapes: a JSON document embedded in an HTML <script> block can then
     * never close it, whatever a function is called */
    ptc_escape(s, strlen(s), PTC_ESC_JSON_SCRIPT, put_sb, b);
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
    if (s)
        ptc_escape(s, strlen(s), PTC_ESC_XML, put_sb, b);
}
