/* The one escaping of names for every output (ptc_escape.h). */
#include "ptc_escape.h"

#include <stdint.h>
#include <string.h>

#define B(c) ((uint64_t)1 << ((unsigned)(c)&63))
#define CTRL 0x00000000ffffffffull /* U+0000..U+001F */

/* Per mode, the ASCII characters that are not written as they are: bits 0-63 and 64-127. */
static const uint64_t special[][2] = {
    [PTC_ESC_JSON] = {CTRL | B('"'), B('\\') | B(127)},
    [PTC_ESC_JSON_SCRIPT] = {CTRL | B('"') | B('<') | B('>') | B('&'), B('\\') | B(127)},
    [PTC_ESC_XML] = {CTRL | B('&') | B('<') | B('>') | B('"') | B('\''), 0},
    [PTC_ESC_TEXT] = {CTRL, B(127)},
    [PTC_ESC_CSV] = {B('"'), 0},
    [PTC_ESC_DOT] = {CTRL | B('"'), B('\\') | B(127)},
};

static const char hex[] = "0123456789abcdef";
static const char fffd[] = "\xef\xbf\xbd"; /* U+FFFD REPLACEMENT CHARACTER */

/* The length of the well-formed UTF-8 sequence at p (n bytes left; 2..4, its code point in
 * *cp), or 0 when p[0] starts none (a stray continuation byte, an overlong form, a
 * surrogate, beyond U+10FFFF, cut short). p[0] >= 0x80. */
static size_t utf8_seq(const unsigned char *p, size_t n, uint32_t *cp)
{
    unsigned c = p[0];
    size_t k = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!k || k > n)
        return 0;
    for (size_t i = 1; i < k; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] >= 0xa0) ||
        (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] >= 0x90))
        return 0;
    uint32_t v = c & (0x7f >> k);
    for (size_t i = 1; i < k; i++)
        v = v << 6 | (p[i] & 0x3f);
    *cp = v;
    return k;
}

/* "\xHH" (with the backslash doubled for DOT, whose labels read escapes). */
static void put_xhh(unsigned c, enum ptc_esc_mode mode, ptc_esc_put_fn put, void *ctx)
{
    char b[6] = {'\\', '\\', 'x', hex[c >> 4], hex[c & 15]};
    if (mode == PTC_ESC_DOT)
        put(ctx, b, 5);
    else
        put(ctx, b + 1, 4);
}

/* "\uXXXX" (its backslash doubled for DOT). */
static void put_u(uint32_t cp, enum ptc_esc_mode mode, ptc_esc_put_fn put, void *ctx)
{
    char b[7] = {'\\', '\\', 'u', hex[cp >> 12 & 15], hex[cp >> 8 & 15], hex[cp >> 4 & 15],
                 hex[cp & 15]};
    if (mode == PTC_ESC_DOT)
        put(ctx, b, 7);
    else
        put(ctx, b + 1, 6);
}

/* An ASCII character special in mode (special[][]). */
static void put_ascii(unsigned c, enum ptc_esc_mode mode, ptc_esc_put_fn put, void *ctx)
{
    switch (mode) {
    case PTC_ESC_JSON:
    case PTC_ESC_JSON_SCRIPT:
        if (c == '"')
            put(ctx, "\\\"", 2);
        else if (c == '\\')
            put(ctx, "\\\\", 2);
        else if (c == '\n')
            put(ctx, "\\n", 2);
        else if (c == '\t')
            put(ctx, "\\t", 2);
        else if (c == '\r')
            put(ctx, "\\r", 2);
        else
            put_u(c, mode, put, ctx);
        return;
    case PTC_ESC_XML:
        switch (c) {
        case '&': put(ctx, "&amp;", 5); return;
        case '<': put(ctx, "&lt;", 4); return;
        case '>': put(ctx, "&gt;", 4); return;
        case '"': put(ctx, "&quot;", 6); return;
        case '\'': put(ctx, "&#39;", 5); return;
        /* as references: an attribute value keeps them (raw, they become spaces) */
        case '\t': put(ctx, "&#9;", 4); return;
        case '\n': put(ctx, "&#10;", 5); return;
        case '\r': put(ctx, "&#13;", 5); return;
        default: put(ctx, fffd, 3); return; /* not a character of XML 1.0 */
        }
    case PTC_ESC_CSV: /* '"' */
        put(ctx, "\"\"", 2);
        return;
    case PTC_ESC_DOT:
        if (c == '"' || c == '\\') {
            put(ctx, c == '"' ? "\\\"" : "\\\\", 2);
            return;
        }
        break; /* a control character: shown as a text table shows it */
    case PTC_ESC_TEXT:
        break;
    }
    if (c == '\n' || c == '\t' || c == '\r') {
        char b[3] = {'\\', '\\', c == '\n' ? 'n' : c == '\t' ? 't' : 'r'};
        if (mode == PTC_ESC_DOT)
            put(ctx, b, 3);
        else
            put(ctx, b + 1, 2);
    } else {
        put_xhh(c, mode, put, ctx);
    }
}

void ptc_escape(const char *s, size_t n, enum ptc_esc_mode mode, ptc_esc_put_fn put, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n, *run = p;
    const uint64_t lo = special[mode][0], hi = special[mode][1];
    while (p < end) {
        unsigned c = *p;
        if (c < 0x80) {
            if (!((c < 64 ? lo >> c : hi >> (c - 64)) & 1)) {
                p++;
                continue;
            }
            if (p > run)
                put(ctx, (const char *)run, (size_t)(p - run));
            put_ascii(c, mode, put, ctx);
            run = ++p;
            continue;
        }
        uint32_t cp = 0;
        size_t k = utf8_seq(p, (size_t)(end - p), &cp);
        int plain = k && !((mode == PTC_ESC_TEXT || mode == PTC_ESC_DOT) && cp <= 0x9f) &&
                    !((mode == PTC_ESC_JSON || mode == PTC_ESC_JSON_SCRIPT) &&
                      (cp == 0x2028 || cp == 0x2029)) &&
                    !(mode == PTC_ESC_XML && (cp == 0xfffe || cp == 0xffff));
        if (plain) {
            p += k;
            continue;
        }
        if (p > run)
            put(ctx, (const char *)run, (size_t)(p - run));
        if (!k) { /* one byte that starts no character */
            if (mode == PTC_ESC_TEXT || mode == PTC_ESC_DOT)
                put_xhh(c, mode, put, ctx);
            else if (mode == PTC_ESC_XML || mode == PTC_ESC_CSV)
                put(ctx, fffd, 3);
            else
                put(ctx, "\\ufffd", 6);
            run = ++p;
            continue;
        }
        if (mode == PTC_ESC_XML) /* U+FFFE, U+FFFF: not characters of XML 1.0 */
            put(ctx, fffd, 3);
        else /* C1 controls in text (U+009B is a CSI to some terminals); U+2028/9 in JSON,
              * line ends to older JavaScript */
            put_u(cp, mode, put, ctx);
        p += k;
        run = p;
    }
    if (p > run)
        put(ctx, (const char *)run, (size_t)(p - run));
}

void ptc_escape_csv(const char *s, size_t n, ptc_esc_put_fn put, void *ctx)
{
    const unsigned char *p = (const unsigned char *)s;
    /* a cell a spreadsheet would read as a formula (OWASP, CSV injection) */
    int formula = n && (p[0] == '=' || p[0] == '+' || p[0] == '-' || p[0] == '@' ||
                        p[0] == '\t' || p[0] == '\r');
    int quote = formula;
    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"' || p[i] < 0x20 || p[i] == 0x7f;
    if (quote)
        put(ctx, formula ? "\"'" : "\"", formula ? 2 : 1);
    ptc_escape(s, n, PTC_ESC_CSV, put, ctx);
    if (quote)
        put(ctx, "\"", 1);
}

static void put_file(void *ctx, const char *s, size_t n)
{
    fwrite(s, 1, n, ctx);
}

void ptc_fput_esc(FILE *f, const char *s, enum ptc_esc_mode mode)
{
    if (s)
        ptc_escape(s, strlen(s), mode, put_file, f);
}

void ptc_fput_json(FILE *f, const char *s)
{
    if (!s) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    ptc_escape(s, strlen(s), PTC_ESC_JSON, put_file, f);
    fputc('"', f);
}

void ptc_fput_csv(FILE *f, const char *s)
{
    if (s)
        ptc_escape_csv(s, strlen(s), put_file, f);
}

void ptc_fput_xml(FILE *f, const char *s)
{
    ptc_fput_esc(f, s, PTC_ESC_XML);
}

void ptc_fput_text(FILE *f, const char *s)
{
    ptc_fput_esc(f, s, PTC_ESC_TEXT);
}
