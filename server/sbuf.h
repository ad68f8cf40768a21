/* A growable byte buffer for the web views (JSON bodies, HTML pages), and the escaping every
 * user-supplied string goes through (common/ptc_escape.h, the one escaping of every output):
 * JSON strings safe to embed in HTML (<, >, & and the line separators as \u escapes) and
 * HTML text/attributes. Allocation failures are kept
 * in the buffer (oom) and checked once at the end, so view code stays linear. */
#ifndef PTCALL_SBUF_H
#define PTCALL_SBUF_H

#include <stddef.h>
#include <stdint.h>

struct sbuf {
    char *p;
    size_t n, cap;
    int oom;
};

void sb_init(struct sbuf *b);
void sb_free(struct sbuf *b);
/* Hands the bytes over (the caller frees them); NULL when an allocation failed. */
char *sb_take(struct sbuf *b, size_t *len);
void sb_add(struct sbuf *b, const void *s, size_t n);
void sb_puts(struct sbuf *b, const char *s);
void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string literal (quotes included); NULL as null. Bytes that are not valid UTF-8
 * are written as U+FFFD so the document stays valid JSON. */
void sb_json_str(struct sbuf *b, const char *s);
/* A JSON number: whole numbers as integers, others with two decimals; NaN/inf as null. */
void sb_json_num(struct sbuf *b, double v);
/* Text for HTML element content or a quoted attribute value: & < > " ' escaped, and what
 * XML 1.0 does not allow as U+FFFD (PTC_ESC_XML). */
void sb_html(struct sbuf *b, const char *s);

#endif
