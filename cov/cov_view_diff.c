/* `cov diff A.ptcov B.ptcov`: the functions only one of two campaigns reached (table, csv,
 * json; docs/cov.md). */
#include <errno.h>

#include "cov.h"

static const struct cov_analysis *side_of(const struct cov_diff_row *r,
                                          const struct cov_analysis *a,
                                          const struct cov_analysis *b)
{
    return r->side ? b : a;
}

/* One side's header line: what it reached, of what universe. */
static void side_line(FILE *f, const char *who, const char *path, const struct cov_analysis *a)
{
    fprintf(f, "%s: ", who);
    cov_text_str(f, path);
    fprintf(f, ": %u functions reached of %u; counted: %s\n", a->reached, a->d->nfuncs,
            cov_universe_text(cov_data_placement(a->d)));
}

int cov_view_diff(FILE *f, int format, const struct cov_analysis *a, const char *pa,
                  const struct cov_analysis *b, const char *pb, const struct cov_diff_row *rows,
                  uint32_t nrows, uint32_t common)
{
    uint32_t only[2] = {0, 0}, uninst[2] = {0, 0};
    for (uint32_t i = 0; i < nrows; i++) {
        only[rows[i].side] += rows[i].instrumented_other;
        uninst[rows[i].side] += !rows[i].instrumented_other;
    }
    unsigned pla = cov_data_placement(a->d), plb = cov_data_placement(b->d);
    if (format == 1) {
        fprintf(f, "only_in,name,linkage_name,module,file,line,inputs,other_build\n");
    } else if (format == 2) {
        fprintf(f, "{\"format_version\":1,\"tool\":\"ptcall cov diff\",\"a\":{\"ptcov\":");
        cov_json_str(f, pa);
        fprintf(f, ",\"reached\":%u,\"functions\":%u,\"placement\":\"%s\"},\"b\":{\"ptcov\":",
                a->reached, a->d->nfuncs, cov_placement_name(pla));
        cov_json_str(f, pb);
        fprintf(f, ",\"reached\":%u,\"functions\":%u,\"placement\":\"%s\"},\"both\":%u,"
                   "\"only\":[",
                b->reached, b->d->nfuncs, cov_placement_name(plb), common);
    } else {
        side_line(f, "A", pa, a);
        side_line(f, "B", pb, b);
        if (pla != plb)
            fprintf(f, "note: A and B count different functions (%s placement, %s placement): "
                       "a function one build inlined away is not in its list\n",
                    cov_placement_name(pla), cov_placement_name(plb));
        fprintf(f, "reached by both: %u; only by A: %u; only by B: %u", common, only[0],
                only[1]);
        if (uninst[0] || uninst[1])
            fprintf(f, "; reached by A, not instrumented in B's build: %u; reached by B, not "
                       "instrumented in A's build: %u", uninst[0], uninst[1]);
        fputc('\n', f);
    }
    for (uint32_t i = 0; i < nrows; i++) {
        const struct cov_diff_row *r = &rows[i];
        const struct cov_data *d = side_of(r, a, b)->d;
        const struct cov_func *fn = &d->funcs[r->func];
        const char *who = r->side ? "B" : "A", *other = r->side ? "A" : "B";
        if (format == 1) {
            fprintf(f, "%s,", who);
            cov_csv_func(f, d, r->func);
            fprintf(f, ",%u,%s\n", r->inputs,
                    r->instrumented_other ? "instrumented" : "not instrumented");
        } else if (format == 2) {
            fprintf(f, "%s\n{\"only_in\":\"%s\",\"name\":", i ? "," : "", who);
            cov_json_str(f, cov_func_name(d, r->func));
            fprintf(f, ",\"linkage_name\":");
            cov_json_str(f, fn->linkage);
            fprintf(f, ",\"module\":");
            cov_json_str(f, d->modules[fn->module].path);
            fprintf(f, ",\"file\":");
            cov_json_str(f, fn->file);
            fprintf(f, ",\"line\":%u,\"inputs\":%u,\"instrumented_in_other\":%s}", fn->line,
                    r->inputs, r->instrumented_other ? "true" : "false");
        } else {
            if (i == 0 || rows[i - 1].side != r->side ||
                rows[i - 1].instrumented_other != r->instrumented_other) {
                if (r->instrumented_other)
                    fprintf(f, "\nonly reached by %s (inputs reaching it):\n", who);
                else
                    fprintf(f, "\nreached by %s, not instrumented in %s's build (its inputs "
                               "could not show it; inputs reaching it):\n", who, other);
            }
            fprintf(f, "  %6u  ", r->inputs);
            cov_text_str(f, cov_func_name(d, r->func));
            fputs("  ", f);
            cov_text_str(f, fn->file);
            fprintf(f, ":%u\n", fn->line);
        }
    }
    if (format == 2)
        fprintf(f, "]}\n");
    return fflush(f) || ferror(f) ? -EIO : 0;
}
