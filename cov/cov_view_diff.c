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

int cov_view_diff(FILE *f, int format, const struct cov_analysis *a, const char *pa,
                  const struct cov_analysis *b, const char *pb, const struct cov_diff_row *rows,
                  uint32_t nrows, uint32_t common)
{
    uint32_t only[2] = {0, 0};
    for (uint32_t i = 0; i < nrows; i++)
        only[rows[i].side]++;
    if (format == 1) {
        fprintf(f, "only_in,name,linkage_name,module,file,line,inputs\n");
    } else if (format == 2) {
        fprintf(f, "{\"format_version\":1,\"tool\":\"ptcall cov diff\",\"a\":{\"ptcov\":");
        cov_json_str(f, pa);
        fprintf(f, ",\"reached\":%u,\"functions\":%u},\"b\":{\"ptcov\":", a->reached,
                a->d->nfuncs);
        cov_json_str(f, pb);
        fprintf(f, ",\"reached\":%u,\"functions\":%u},\"both\":%u,\"only\":[", b->reached,
                b->d->nfuncs, common);
    } else {
        fputs("A: ", f);
        cov_text_str(f, pa);
        fprintf(f, ": %u functions reached of %u\nB: ", a->reached, a->d->nfuncs);
        cov_text_str(f, pb);
        fprintf(f, ": %u functions reached of %u\nreached by both: %u; only by A: %u; only by "
                   "B: %u\n", b->reached, b->d->nfuncs, common, only[0], only[1]);
    }
    for (uint32_t i = 0; i < nrows; i++) {
        const struct cov_diff_row *r = &rows[i];
        const struct cov_data *d = side_of(r, a, b)->d;
        const struct cov_func *fn = &d->funcs[r->func];
        const char *who = r->side ? "B" : "A";
        if (format == 1) {
            fprintf(f, "%s,", who);
            cov_csv_str(f, cov_func_name(d, r->func));
            fputc(',', f);
            cov_csv_str(f, fn->linkage);
            fputc(',', f);
            cov_csv_str(f, d->modules[fn->module].path);
            fputc(',', f);
            cov_csv_str(f, fn->file);
            fputc(',', f);
            cov_csv_line(f, fn->line);
            fprintf(f, ",%u\n", r->inputs);
        } else if (format == 2) {
            fprintf(f, "%s\n{\"only_in\":\"%s\",\"name\":", i ? "," : "", who);
            cov_json_str(f, cov_func_name(d, r->func));
            fprintf(f, ",\"linkage_name\":");
            cov_json_str(f, fn->linkage);
            fprintf(f, ",\"module\":");
            cov_json_str(f, d->modules[fn->module].path);
            fprintf(f, ",\"file\":");
            cov_json_str(f, fn->file);
            fprintf(f, ",\"line\":%u,\"inputs\":%u}", fn->line, r->inputs);
        } else {
            if (i == 0 || rows[i - 1].side != r->side)
                fprintf(f, "\nonly reached by %s (inputs reaching it):\n", who);
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
