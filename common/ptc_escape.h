/* The one escaping of names for every output (docs/usage.md, Names in outputs;
 * docs/reliability.md, Names in every output).
 *
 * Function names, source paths, module paths, labels and tags come from binaries and the
 * file system: legal ELF symbols and legal Linux paths may hold any byte but NUL, and bytes
 * that are not UTF-8. Every writer of JSON, XML/HTML, CSV, DOT and text tables (outputs/,
 * tools/, server/, cov/) writes them through ptc_escape(), so that each document stays valid
 * for its parser and a text table keeps its rows and leaves the terminal alone:
 *
 * - bytes that start no well-formed UTF-8 sequence become U+FFFD (JSON `\ufffd`, XML and CSV
 *   the character itself); text tables and DOT labels show them as `\xHH`;
 * - control characters are escaped: JSON `\n`, `\t`, `\r`, `\u00XX`; XML `&#9;`, `&#10;`,
 *   `&#13;` and U+FFFD for the others XML 1.0 does not allow (and U+FFFE, U+FFFF); text
 *   `\n`, `\t`, `\r`, `\xHH`, C1 controls `\u0080`..`\u009f`; CSV keeps them inside a quoted
 *   field.
 *
 * Nothing here allocates: the writer hands a function that appends bytes to its own buffer
 * (ptc_wbuf, the web views' sbuf, a FILE). */
#ifndef PTC_ESCAPE_H
#define PTC_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

enum ptc_esc_mode {
    PTC_ESC_JSON,        /* the inside of a JSON string literal */
    PTC_ESC_JSON_SCRIPT, /* the same, and <, >, & as \u escapes: a JSON document inside an
                            HTML <script> block can never end it */
    PTC_ESC_XML,         /* XML 1.0 (and HTML) text or a quoted attribute value: & < > " '
                            as references */
    PTC_ESC_TEXT,        /* a cell of a text table: one line, no terminal control */
    PTC_ESC_CSV,         /* the inside of a quoted CSV field: " doubled (ptc_escape_csv
                            writes a whole field) */
    PTC_ESC_DOT,         /* the inside of a Graphviz DOT string used as a label: " and \
                            escaped, the rest as PTC_ESC_TEXT shows it */
};

/* Appends n bytes to the writer's output. */
typedef void (*ptc_esc_put_fn)(void *ctx, const char *s, size_t n);

/* Writes the n bytes at s escaped for mode through put (runs of bytes that need nothing in
 * one call each). s may hold any bytes; a NUL ends nothing here. */
void ptc_escape(const char *s, size_t n, enum ptc_esc_mode mode, ptc_esc_put_fn put,
                void *ctx);

/* A whole RFC 4180 CSV field (RFC 4180 and OWASP's CSV injection advice): quoted when it
 * holds a comma, a quote, a control character, or starts with = + - @ tab or CR; such a
 * formula-like start is kept from spreadsheets by a ' inside the quotes ("'=HYPERLINK(..)").
 * Invalid UTF-8 as U+FFFD. */
void ptc_escape_csv(const char *s, size_t n, ptc_esc_put_fn put, void *ctx);

/* The same for FILE writers. NULL is written as "" (ptc_fput_json: as null). */
void ptc_fput_json(FILE *f, const char *s);    /* a JSON string literal, quotes included */
void ptc_fput_csv(FILE *f, const char *s);     /* a CSV field (ptc_escape_csv) */
void ptc_fput_xml(FILE *f, const char *s);     /* XML/HTML text or attribute value */
void ptc_fput_text(FILE *f, const char *s);    /* a text table's cell */
void ptc_fput_esc(FILE *f, const char *s, enum ptc_esc_mode mode); /* no quotes */

#endif
