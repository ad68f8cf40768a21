/* `cov report --format json`: everything the report knows, functions named once and
 * referred to by index elsewhere (a queue of 10,000 inputs would otherwise repeat every name
 * thousands of times). docs/schema/cov-report.schema.json is its schema. */
#include <errno.h>
#include <inttypes.h>

#include "cov.h"

static void ids_sep(FILE *f, int *first)
{
    if (!*first)
        fputc(',', f);
    *first = 0;
}

int cov_view_json(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    fprintf(f, "{\"format_version\":1,\"tool\":\"ptcall cov report\",\"ptcov\":");
    cov_json_str(f, o->ptcov);
    fprintf(f, ",\"target\":");
    cov_json_str(f, d->target);
    if (d->harness) {
        /* the HARNESS record (docs/cov.md, "Harness shapes"); absent in older files */
        static const char *const kinds[] = {"plain", "driver", "libfuzzer", "own_main"};
        fprintf(f, ",\"harness\":{\"shape\":\"%s\",\"afl_loop\":%s,\"afl_init\":%s,"
                   "\"afl_testcase\":%s,\"text\":",
                d->harness_kind < 4 ? kinds[d->harness_kind] : "unknown",
                d->harness_flags & COV_HARNESS_F_AFL_LOOP ? "true" : "false",
                d->harness_flags & COV_HARNESS_F_AFL_INIT ? "true" : "false",
                d->harness_flags & COV_HARNESS_F_AFL_TESTCASE ? "true" : "false");
        cov_json_str(f, d->harness);
        fputc('}', f);
    }
    fprintf(f, ",\"timeout_ms\":%u,\n\"union\":{\"functions\":%u,\"reached\":%u},\n", d->timeout_ms,
            d->nfuncs, a->reached);
    unsigned pl = cov_data_placement(d);
    fprintf(f, "\"universe\":{\"placement\":\"%s\",\"counts\":", cov_placement_name(pl));
    cov_json_str(f, cov_universe_text(pl));
    fprintf(f, "},\n");
    fprintf(f, "\"outcomes\":{\"exited\":%u,\"signal\":%u,\"timeout\":%u,\"error\":%u},\n",
            a->counted[COV_EXITED], a->counted[COV_SIGNALED], a->counted[COV_TIMEOUT],
            a->counted[COV_ERROR]);
    fprintf(f, "\"modules\":[");
    for (uint32_t m = 0; m < d->nmodules; m++) {
        fprintf(f, "%s\n{\"path\":", m ? "," : "");
        cov_json_str(f, d->modules[m].path);
        fprintf(f, ",\"build_id\":");
        cov_json_str(f, d->modules[m].build_id);
        fprintf(f, ",\"identity\":\"%016" PRIx64 "\",\"functions\":%u,\"reached\":%u,"
                   "\"placement\":\"%s\",\"units_early\":%u,\"units_late\":%u}",
                d->modules[m].identity, a->modules[m].funcs, a->modules[m].reached,
                cov_placement_name(d->modules[m].placement), d->modules[m].units_early,
                d->modules[m].units_late);
    }
    fprintf(f, "],\n\"files\":[");
    for (uint32_t i = 0; i < a->nfiles; i++) {
        fprintf(f, "%s\n{\"file\":", i ? "," : "");
        cov_json_str(f, a->files[i].name);
        fprintf(f, ",\"functions\":%u,\"reached\":%u}", a->files[i].funcs, a->files[i].reached);
    }
    fprintf(f, "],\n\"functions\":[");
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        const struct cov_func *fn = &d->funcs[i];
        fprintf(f, "%s\n{\"id\":%u,\"name\":", i ? "," : "", i);
        cov_json_str(f, cov_func_name(d, i));
        fprintf(f, ",\"linkage_name\":");
        cov_json_str(f, fn->linkage);
        fprintf(f, ",\"module\":%u,\"file\":", fn->module);
        cov_json_str(f, fn->file);
        fprintf(f, ",\"line\":%u,\"inputs\":%u,\"calls\":%" PRIu64 ",\"first_input\":", fn->line,
                a->inputs_reaching[i], a->calls[i]);
        if (a->first_input[i] == UINT32_MAX)
            fprintf(f, "null}");
        else
            fprintf(f, "%u}", a->first_input[i]);
    }
    fprintf(f, "],\n\"inputs\":[");
    for (uint32_t i = 0; i < d->ninputs; i++) {
        const struct cov_input *in = &d->inputs[i];
        fprintf(f, "%s\n{\"id\":%u,\"name\":", i ? "," : "", i);
        cov_json_str(f, in->name);
        fprintf(f, ",\"kind\":\"%s\",\"time_ms\":", cov_kind_name(in->kind));
        if (in->time_ms >= 0)
            fprintf(f, "%" PRId64, in->time_ms);
        else
            fprintf(f, "null");
        fprintf(f, ",\"outcome\":\"%s\",\"value\":%d,\"exec_us\":%" PRIu64 ",\"functions\":[",
                cov_outcome_name(in->outcome), in->value, in->exec_us);
        int first = 1;
        for (uint32_t k = 0; k < in->nhits; k++) {
            ids_sep(f, &first);
            fprintf(f, "%u", in->hits[k].func);
        }
        fprintf(f, "],\"calls\":[");
        first = 1;
        for (uint32_t k = 0; k < in->nhits; k++) {
            ids_sep(f, &first);
            fprintf(f, "%" PRIu64, in->hits[k].count);
        }
        fprintf(f, "],\"first\":[");
        first = 1;
        for (uint32_t k = 0; k < in->nhits; k++)
            if (a->first_input[in->hits[k].func] == i) {
                ids_sep(f, &first);
                fprintf(f, "%u", in->hits[k].func);
            }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"curve\":[");
    for (uint32_t i = 0; i < a->ncurve; i++) {
        fprintf(f, "%s{\"time_ms\":", i ? "," : "");
        if (a->curve[i].time_ms >= 0)
            fprintf(f, "%" PRId64, a->curve[i].time_ms);
        else
            fprintf(f, "null");
        fprintf(f, ",\"input\":%u,\"reached\":%u}", a->curve[i].input, a->curve[i].reached);
    }
    fprintf(f, "],\n\"campaign_end_ms\":");
    if (a->end_ms >= 0)
        fprintf(f, "%" PRId64, a->end_ms);
    else
        fprintf(f, "null");
    fprintf(f, ",\n\"never_reached\":[");
    int first = 1;
    for (uint32_t i = 0; i < d->nfuncs; i++)
        if (!a->inputs_reaching[i]) {
            ids_sep(f, &first);
            fprintf(f, "%u", i);
        }
    fprintf(f, "]");
    if (o->blockers) {
        fprintf(f, ",\n\"blockers_sized\":%s,\"blockers\":[", a->have_sizes ? "true" : "false");
        for (uint32_t i = 0; i < a->nblockers; i++) {
            const struct cov_blocker *b = &a->blockers[i];
            fprintf(f, "%s\n{\"function\":%u,\"unreached_insns\":%" PRIu64
                       ",\"unreached_blocks\":%" PRIu64 ",\"unreached_callees\":[",
                    i ? "," : "", b->func, b->insns, b->blocks);
            first = 1;
            for (uint32_t k = 0; k < b->nunreached; k++) {
                ids_sep(f, &first);
                fprintf(f, "%u", a->blocker_callees[b->first + k]);
            }
            /* each callee with all its reached callers (it is listed under this one only) */
            fprintf(f, "],\"callers\":[");
            for (uint32_t k = 0; k < b->nunreached; k++) {
                uint32_t c = a->blocker_callees[b->first + k];
                fprintf(f, "%s[", k ? "," : "");
                for (uint32_t j = a->callers_start[c]; j < a->callers_start[c + 1]; j++)
                    fprintf(f, "%s%u", j > a->callers_start[c] ? "," : "", a->callers[j]);
                fputc(']', f);
            }
            fprintf(f, "]}");
        }
        fprintf(f, "]");
    }
    if (cov_view_json_blocks(f, a) || cov_view_json_reach(f, a))
        return -EIO;
    fprintf(f, "}\n");
    return fflush(f) || ferror(f) ? -EIO : 0;
}
