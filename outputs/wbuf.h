/* A buffered writer for views: formatting numbers and escaped strings by hand is what lets
 * a view print tens of millions of lines a second, where printf is the bottleneck. Errors
 * (a full disk, a closed pipe) are kept and reported by ptc_wbuf_flush(), never lost. */
#ifndef PTCALL_WBUF_H
#define PTCALL_WBUF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ptc_escape.h"

struct ptc_wbuf {
    int fd;
    char *buf;
    size_t len, cap;
    int err;                /* errno of the first failed write, 0 if none */
    uint64_t written;       /* bytes handed to the file so far */
    uint64_t limit;         /* stop writing past this many bytes (0: no limit) */
    int over_limit;         /* the limit was reached: the rest was not written */
};

/* Returns 0, or -1 when out of memory. fd < 0 makes a memory buffer, which grows instead of
 * being written out. */
int ptc_wbuf_init(struct ptc_wbuf *w, int fd, size_t cap);
void ptc_wbuf_free(struct ptc_wbuf *w);
/* Writes what is buffered. Returns 0, or -1 with w->err set (or w->over_limit). */
int ptc_wbuf_flush(struct ptc_wbuf *w);
/* Out of line: writes the buffer out and makes room for n bytes. Callers ask for at most
 * 4 KiB + 64 bytes at a time (longer strings go through ptc_wb_put, which splits them); the
 * buffer holds at least 8 KiB. */
void ptc_wbuf_drain(struct ptc_wbuf *w, size_t n);

#define PTC_WB_INLINE static inline __attribute__((always_inline))

/* Out of line: writes n bytes that may be longer than the buffer. */
void ptc_wb_put_long(struct ptc_wbuf *w, const char *s, size_t n);

PTC_WB_INLINE char *ptc_wb_room(struct ptc_wbuf *w, size_t n)
{
    if (w->cap - w->len < n)
        ptc_wbuf_drain(w, n);
    return w->buf + w->len;
}

PTC_WB_INLINE void ptc_wb_put(struct ptc_wbuf *w, const char *s, size_t n)
{
    if (__builtin_expect(n > 4096, 0)) {
        ptc_wb_put_long(w, s, n);
        return;
    }
    memcpy(ptc_wb_room(w, n), s, n);
    w->len += n;
}

PTC_WB_INLINE void ptc_wb_str(struct ptc_wbuf *w, const char *s) { ptc_wb_put(w, s, strlen(s)); }

PTC_WB_INLINE void ptc_wb_char(struct ptc_wbuf *w, char c)
{
    *ptc_wb_room(w, 1) = c;
    w->len++;
}

PTC_WB_INLINE void ptc_wb_spaces(struct ptc_wbuf *w, size_t n)
{
    while (n) { /* an indentation can be deeper than the buffer is long */
        size_t k = n < 4096 ? n : 4096;
        memset(ptc_wb_room(w, k), ' ', k);
        w->len += k;
        n -= k;
    }
}

/* Decimal digits of v, right-aligned in a field of at least width characters. */
void ptc_wb_u64w(struct ptc_wbuf *w, uint64_t v, unsigned width);
static inline void ptc_wb_u64(struct ptc_wbuf *w, uint64_t v) { ptc_wb_u64w(w, v, 0); }
void ptc_wb_i64(struct ptc_wbuf *w, int64_t v);
/* v / 10^decimals with exactly that many decimals ("12.345678"), right-aligned in width. */
void ptc_wb_fixed(struct ptc_wbuf *w, uint64_t v, unsigned decimals, unsigned width);
/* Copies n bytes from s, which has at least 16 readable bytes past its end (a string from
 * ptc_strcache), in 16-byte moves: names written on every line are short, and a call to
 * memcpy per name cost more than the copy. */
PTC_WB_INLINE void ptc_wb_put_padded(struct ptc_wbuf *w, const char *s, size_t n)
{
    if (n > 256) {
        ptc_wb_put(w, s, n);
        return;
    }
    char *d = ptc_wb_room(w, n + 16);
    for (size_t i = 0; i < n; i += 16)
        __builtin_memcpy(d + i, s + i, 16);
    w->len += n;
}

/* ns as seconds with nine decimals ("12.345678901"), right-aligned in width: the time
 * column of `ptcall calls`, in three-digit groups. */
void ptc_wb_sec9(struct ptc_wbuf *w, uint64_t ns, unsigned width);
/* Names (functions, paths, labels) in every format go through common/ptc_escape.h: these
 * write them to a view. */
/* s (n bytes) escaped for mode, without quotes. */
void ptc_wb_esc(struct ptc_wbuf *w, const char *s, size_t n, enum ptc_esc_mode mode);
/* The same with each `from` of the result written as `to` (folded stacks: ';' ends a frame). */
void ptc_wb_esc_map(struct ptc_wbuf *w, const char *s, size_t n, enum ptc_esc_mode mode,
                    char from, char to);
/* A JSON string literal (quotes included). */
void ptc_wb_json_str(struct ptc_wbuf *w, const char *s);
/* The same with <, > and & as \u escapes (PTC_ESC_JSON_SCRIPT, as the server's answers): for
 * JSON that pages embed in a <script> block */
void ptc_wb_json_script_str(struct ptc_wbuf *w, const char *s);
/* The same without the quotes: a part of a string literal ("mark: " + a label). */
void ptc_wb_json_chars(struct ptc_wbuf *w, const char *s);
/* A CSV field (ptc_escape_csv: quoted when needed, formula-like starts guarded). */
void ptc_wb_csv_str(struct ptc_wbuf *w, const char *s);
/* Text for XML/HTML content and attribute values (PTC_ESC_XML). */
void ptc_wb_xml_str(struct ptc_wbuf *w, const char *s);
/* A name in a text table (PTC_ESC_TEXT: one line, no terminal control). */
void ptc_wb_text_str(struct ptc_wbuf *w, const char *s);
/* A double in %.*f form (slow path: printf), for the few numbers that need it. */
void ptc_wb_double(struct ptc_wbuf *w, double v, int decimals);

#endif
