/* The one escaping of names (common/ptc_escape.c), byte by byte: each mode on the cases the
 * hostile-names test (names_test.py) cannot reach through a compiler and an assembler:
 * sequences cut short, overlong forms, surrogates, code points past U+10FFFF, U+FFFE, 4-byte
 * characters, C1 controls, every formula-like start of a CSV cell, runs longer than a buffer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_escape.h"

struct out {
    char buf[1 << 16];
    size_t n;
};

static void put(void *ctx, const char *s, size_t n)
{
    struct out *o = ctx;
    if (o->n + n < sizeof(o->buf)) {
        memcpy(o->buf + o->n, s, n);
        o->n += n;
    }
    o->buf[o->n] = 0;
}

static int failed;

static void expect(const char *what, enum ptc_esc_mode mode, int csv_field, const char *in,
                   size_t n, const char *want)
{
    struct out o = {.n = 0};
    o.buf[0] = 0;
    if (csv_field)
        ptc_escape_csv(in, n, put, &o);
    else
        ptc_escape(in, n, mode, put, &o);
    int ok = o.n == strlen(want) && !memcmp(o.buf, want, o.n);
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) {
        printf("     got  [%s]\n     want [%s]\n", o.buf, want);
        failed = 1;
    }
}

#define E(what, mode, in, want) expect(what, mode, 0, in, sizeof(in) - 1, want)
#define CSV(what, in, want) expect(what, 0, 1, in, sizeof(in) - 1, want)

int main(void)
{
    /* JSON */
    E("json: plain ASCII as it is", PTC_ESC_JSON, "ns::f<int>(A&)", "ns::f<int>(A&)");
    E("json: quote, backslash, newline, tab, CR", PTC_ESC_JSON, "a\"b\\c\nd\te\rf",
      "a\\\"b\\\\c\\nd\\te\\rf");
    E("json: other controls and DEL as \\u00XX", PTC_ESC_JSON, "\x01\x1b\x7f",
      "\\u0001\\u001b\\u007f");
    E("json: a byte that is not UTF-8", PTC_ESC_JSON, "a\xff" "b", "a\\ufffdb");
    E("json: valid 2, 3, 4-byte characters kept", PTC_ESC_JSON, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
      "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
    E("json: a sequence cut short (each byte)", PTC_ESC_JSON, "\xe2\x82" "x", "\\ufffd\\ufffdx");
    E("json: cut at the end of the string", PTC_ESC_JSON, "x\xf0\x9f\x98", "x\\ufffd\\ufffd\\ufffd");
    E("json: overlong forms", PTC_ESC_JSON, "\xc0\xaf\xe0\x80\xaf", "\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
    E("json: a surrogate", PTC_ESC_JSON, "\xed\xa0\x80", "\\ufffd\\ufffd\\ufffd");
    E("json: past U+10FFFF", PTC_ESC_JSON, "\xf4\x90\x80\x80", "\\ufffd\\ufffd\\ufffd\\ufffd");
    E("json: U+2028, U+2029 escaped", PTC_ESC_JSON, "\xe2\x80\xa8\xe2\x80\xa9", "\\u2028\\u2029");
    E("json: < > & kept", PTC_ESC_JSON, "</script>&", "</script>&");
    E("json in a script: < > & escaped", PTC_ESC_JSON_SCRIPT, "</script>&",
      "\\u003c/script\\u003e\\u0026");
    /* XML */
    E("xml: markup as references", PTC_ESC_XML, "<a href=\"x\">'&'</a>",
      "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
    E("xml: tab, LF, CR as references", PTC_ESC_XML, "a\tb\nc\rd", "a&#9;b&#10;c&#13;d");
    E("xml: other controls as U+FFFD", PTC_ESC_XML, "a\x1b" "b\x01", "a\xef\xbf\xbd" "b\xef\xbf\xbd");
    E("xml: invalid bytes as U+FFFD", PTC_ESC_XML, "\xff\xfe", "\xef\xbf\xbd\xef\xbf\xbd");
    E("xml: U+FFFE, U+FFFF as U+FFFD", PTC_ESC_XML, "\xef\xbf\xbe\xef\xbf\xbf",
      "\xef\xbf\xbd\xef\xbf\xbd");
    E("xml: DEL and C1 kept (XML 1.0 allows them)", PTC_ESC_XML, "\x7f\xc2\x9b", "\x7f\xc2\x9b");
    /* text */
    E("text: newline, tab, CR", PTC_ESC_TEXT, "a\nb\tc\rd", "a\\nb\\tc\\rd");
    E("text: ESC, DEL", PTC_ESC_TEXT, "\x1b[31m\x7f", "\\x1b[31m\\x7f");
    E("text: C1 controls", PTC_ESC_TEXT, "\xc2\x80\xc2\x9b\xc2\xa0", "\\u0080\\u009b\xc2\xa0");
    E("text: invalid bytes as \\xHH", PTC_ESC_TEXT, "\xff\xe2\x82", "\\xff\\xe2\\x82");
    E("text: quotes and backslashes as they are", PTC_ESC_TEXT, "\"a\\b\"", "\"a\\b\"");
    /* DOT */
    E("dot: quote and backslash escaped", PTC_ESC_DOT, "\"a\\N\"", "\\\"a\\\\N\\\"");
    E("dot: controls shown as text shows them", PTC_ESC_DOT, "a\nb\x1b\xff",
      "a\\\\nb\\\\x1b\\\\xff");
    /* CSV fields */
    CSV("csv: plain field unquoted", "main", "main");
    CSV("csv: comma and quote", "f(a, \"b\")", "\"f(a, \"\"b\"\")\"");
    CSV("csv: a newline quoted", "a\nb", "\"a\nb\"");
    CSV("csv: ESC quoted, kept", "a\x1b" "b", "\"a\x1b" "b\"");
    CSV("csv: = guarded", "=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\"");
    CSV("csv: + guarded", "+1", "\"'+1\"");
    CSV("csv: - guarded", "-1", "\"'-1\"");
    CSV("csv: @ guarded", "@SUM(A1)", "\"'@SUM(A1)\"");
    CSV("csv: tab guarded", "\tx", "\"'\tx\"");
    CSV("csv: CR guarded", "\rx", "\"'\rx\"");
    CSV("csv: = inside a name is no formula", "operator=", "operator=");
    CSV("csv: invalid bytes as U+FFFD", "a\xff", "a\xef\xbf\xbd");
    CSV("csv: empty", "", "");
    /* a run longer than any buffer of the writers, and a NUL inside the bytes given */
    {
        static char big[40000], want[40000 + 8];
        memset(big, 'A', sizeof(big));
        big[20000] = '\n';
        memcpy(want, big, 20000);
        memcpy(want + 20000, "\\n", 2);
        memcpy(want + 20002, big + 20001, sizeof(big) - 20001);
        want[sizeof(big) + 1] = 0;
        expect("text: a 40,000-byte name", PTC_ESC_TEXT, 0, big, sizeof(big), want);
    }
    expect("json: a NUL byte in the bytes given", PTC_ESC_JSON, 0, "a\0b", 3, "a\\u0000b");
    return failed;
}
