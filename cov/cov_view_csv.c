/* `cov report --format csv`: one row per instrumented function (the per-function view;
 * per-input sets are in the JSON output), the frontier with --frontier. Columns in
 * docs/cov.md. */
#include <errno.h>
#include <inttypes.h>

#include "cov.h"

int cov_view_csv(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    if (o->blockers)
        return cov_view_csv_reach(f, a);
    fprintf(f, "name,linkage_name,module,file,line,reached,inputs,calls,first_input,"
               "first_time_ms\n");
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        cov_csv_func(f, d, i);
        fprintf(f, ",%d,%u,%" PRIu64 ",", a->inputs_reaching[i] > 0, a->inputs_reaching[i],
                a->calls[i]);
        if (a->first_input[i] != UINT32_MAX) {
            const struct cov_input *in = &d->inputs[a->first_input[i]];
            cov_csv_str(f, in->name);
            if (in->time_ms >= 0)
                fprintf(f, ",%" PRId64 "\n", in->time_ms);
            else
                fputs(",\n", f);
        } else {
            fputs(",\n", f);
        }
    }
    return fflush(f) || ferror(f) ? -EIO : 0;
}
