/* `ptcall help --env`: the environment variables' table (common/ptc_env.c) as the Markdown
 * table of docs/runtime.md, which test/decoder/options_doc.py keeps in step with it; the
 * values' text is also the ENVIRONMENT section of ptcall(1) (cli_man.c). */
#include <stdio.h>

#include "commands.h"
#include "ptc_env.h"

const char *env_kind_text(const struct ptc_env_var *v, char *buf, size_t n)
{
    switch (v->kind) {
    case PTC_ENV_BOOL: return "0 or 1 (also no/yes, off/on, false/true)";
    case PTC_ENV_CHOICE: snprintf(buf, n, "%s", v->choices); return buf;
    case PTC_ENV_SIZE:
        snprintf(buf, n, "size, %llu..%llu bytes (K/M/G)", (unsigned long long)v->min,
                 (unsigned long long)v->max);
        return buf;
    case PTC_ENV_INT:
        snprintf(buf, n, "integer, %llu..%llu", (unsigned long long)v->min,
                 (unsigned long long)v->max);
        return buf;
    case PTC_ENV_PATH: return "file name";
    case PTC_ENV_TEXT: return "text";
    }
    return "";
}

/* Markdown table cells: `|` would end the cell */
static void cell(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else
            fputc(*s, f);
    }
}

void env_print_markdown(FILE *f)
{
    fputs("| variable | values | default | read by | meaning |\n|---|---|---|---|---|\n", f);
    for (int i = 0; i < PTC_ENV_COUNT; i++) {
        const struct ptc_env_var *v = &ptc_env_table[i];
        char buf[96];
        fprintf(f, "| `%s` | ", v->name);
        cell(f, env_kind_text(v, buf, sizeof(buf)));
        fputs(" | ", f);
        if (*v->def) {
            fputc('`', f);
            cell(f, v->def);
            fputc('`', f);
        } else {
            fputs("unset", f);
        }
        fprintf(f, " | %s | ", v->reader);
        cell(f, v->help);
        fputs(" |\n", f);
    }
}
