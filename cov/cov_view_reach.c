/* The reachability parts of the table, CSV, HTML and JSON views (docs/cov.md, *Reachability and the
 * frontier*): how the never-reached functions divide, the frontier of functions and, with
 * blocks, the branches where reached functions stop. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "ptc_escape.h"

static void line_at(FILE *f, const struct cov_data *d, struct cov_line l)
{
    if (l.file == UINT32_MAX || l.file >= d->nfiles) {
        fputs("?", f);
        return;
    }
    cov_text_str(f, d->files[l.file]);
    fprintf(f, ":%u", l.line);
}

static const char *entry_name(const struct cov_analysis *a)
{
    return a->reach.entry == UINT32_MAX ? NULL : cov_func_name(a->d, a->reach.entry);
}

int cov_view_table_reach(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    const struct cov_reach *r = &a->reach;
    const char *entry = entry_name(a);
    fprintf(f, "\nreachability from ");
    cov_text_str(f, entry ? entry : "(no LLVMFuzzerTestOneInput or main: reached code only)");
    fprintf(f, ": of %u never-reached functions, %u reachable, not reached; %u unreachable "
               "from the harness (no input through this harness can reach them)\n",
            d->nfuncs - a->reached, r->nreachable, r->nunreachable);
    if (!r->indirect)
        fputs("  (direct calls only: the map has no call graph (built before map version 8), "
              "so calls through pointers were not followed and some 'unreachable' functions "
              "may be reachable)\n", f);
    if (r->unexplained) {
        fprintf(f, "  (%u reached functions have no path from the entry in the graph: main and "
                   "its helpers, constructors, or callbacks of uninstrumented code:", r->unexplained);
        uint32_t k = 0;
        for (uint32_t i = 0; i < d->nfuncs; i++)
            if (r->no_path[i] && (!o->top || k++ < o->top)) {
                fputc(' ', f);
                cov_text_str(f, cov_func_name(d, i));
            }
        fputs(")\n", f);
    }
    uint64_t top = o->top;
    uint32_t shown = 0;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        if (r->cls[i] != COV_R_UNREACHABLE)
            continue;
        if (!top || shown < top) {
            fputs("  unreachable  ", f);
            cov_text_str(f, cov_func_name(d, i));
            fputc('\n', f);
        }
        shown++;
    }
    if (top && shown > top)
        fprintf(f, "  ... %" PRIu64 " more (--top 0 shows all)\n", shown - top);
    if (!o->blockers)
        return ferror(f) ? -EIO : 0;

    fputs("\nfrontier: never-reached functions that reached code calls (directly, or through "
          "a pointer of their type), by the never-reached code behind each\n", f);
    fprintf(f, "  %7s %8s %7s %6s  %s\n", "funcs", "insns", "blocks", "lines",
            "function  <- reached callers");
    uint32_t n = top && top < r->nfront ? (uint32_t)top : r->nfront;
    for (uint32_t i = 0; i < n; i++) {
        const struct cov_frontier *x = &r->front[i];
        fprintf(f, "  %7u %8" PRIu64 " %7" PRIu64 " ", x->funcs, x->insns, x->blocks);
        if (a->blk.nblocks)
            fprintf(f, "%6" PRIu64 "  ", x->lines);
        else
            fprintf(f, "%6s  ", "-");
        cov_text_str(f, cov_func_name(d, x->callee));
        fputs(x->indirect ? "  <- (by pointer) " : "  <- ", f);
        for (uint32_t k = 0; k < x->ncallers; k++) {
            if (k)
                fputs(", ", f);
            cov_text_str(f, cov_func_name(d, r->callers[x->first_caller + k]));
        }
        fputc('\n', f);
    }
    if (n < r->nfront)
        fprintf(f, "  ... %u more (--top 0 shows all)\n", r->nfront - n);
    if (!r->have_succs) {
        fputs("\nbranches where reached functions stop: not known (needs a -fptcall-cov build "
              "with map version 8)\n", f);
        return ferror(f) ? -EIO : 0;
    }
    fputs("\nbranches where reached functions stop: a reached block whose successor never ran, "
          "by the never-run lines behind it in that function\n", f);
    fprintf(f, "  %6s %7s  %s\n", "lines", "blocks", "function  branch -> first line never run");
    n = top && top < r->nbfront ? (uint32_t)top : r->nbfront;
    for (uint32_t i = 0; i < n; i++) {
        const struct cov_bfrontier *x = &r->bfront[i];
        fprintf(f, "  %6u %7u  ", x->lines, x->blocks);
        cov_text_str(f, cov_func_name(d, d->blocks[x->block].func));
        fputs("  ", f);
        line_at(f, d, x->at);
        fputs(" -> ", f);
        line_at(f, d, x->to);
        fputc('\n', f);
    }
    if (n < r->nbfront)
        fprintf(f, "  ... %u more (--top 0 shows all)\n", r->nbfront - n);
    return ferror(f) ? -EIO : 0;
}

static void html_line(FILE *f, const struct cov_data *d, struct cov_line l)
{
    if (l.file == UINT32_MAX || l.file >= d->nfiles) {
        fputs("?", f);
        return;
    }
    ptc_fput_xml(f, d->files[l.file]);
    fprintf(f, ":%u", l.line);
}

int cov_view_html_reach(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    const struct cov_reach *r = &a->reach;
    const char *entry = entry_name(a);
    fputs("<h2>Reachability</h2>\n<p>From ", f);
    ptc_fput_xml(f, entry ? entry : "reached code (no LLVMFuzzerTestOneInput or main)");
    fprintf(f, ": of %u never-reached functions, <b>%u reachable, not reached</b>; <b>%u "
               "unreachable from the harness</b> (no input through this harness can reach "
               "them)%s.</p>\n",
            d->nfuncs - a->reached, r->nreachable, r->nunreachable,
            r->indirect ? "" : " (direct calls only: the map has no call graph, built before "
                               "map version 8)");
    fputs("<p class=unreachable>Unreachable:", f);
    for (uint32_t i = 0; i < d->nfuncs; i++)
        if (r->cls[i] == COV_R_UNREACHABLE) {
            fputc(' ', f);
            ptc_fput_xml(f, cov_func_name(d, i));
        }
    fputs("</p>\n", f);
    if (!o->blockers)
        return ferror(f) ? -EIO : 0;
    fputs("<h2>Frontier</h2>\n<p>Never-reached functions that reached code calls (directly or "
          "through a pointer of their type), by the never-reached code behind each.</p>\n"
          "<table><tr><th>function</th><th>functions</th><th>insns</th><th>blocks</th>"
          "<th>lines</th><th>reached callers</th></tr>\n", f);
    for (uint32_t i = 0; i < r->nfront; i++) {
        const struct cov_frontier *x = &r->front[i];
        fputs("<tr><td>", f);
        ptc_fput_xml(f, cov_func_name(d, x->callee));
        fprintf(f, "</td><td class=n>%u</td><td class=n>%" PRIu64 "</td><td class=n>%" PRIu64
                   "</td><td class=n>",
                x->funcs, x->insns, x->blocks);
        if (a->blk.nblocks)
            fprintf(f, "%" PRIu64, x->lines);
        fputs(x->indirect ? "</td><td>(by pointer) " : "</td><td>", f);
        for (uint32_t k = 0; k < x->ncallers; k++) {
            if (k)
                fputs(", ", f);
            ptc_fput_xml(f, cov_func_name(d, r->callers[x->first_caller + k]));
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (!r->have_succs)
        return ferror(f) ? -EIO : 0;
    fputs("<h2>Branches where reached functions stop</h2>\n<table><tr><th>function</th>"
          "<th>branch</th><th>first line never run</th><th>blocks</th><th>lines</th></tr>\n",
          f);
    for (uint32_t i = 0; i < r->nbfront; i++) {
        const struct cov_bfrontier *x = &r->bfront[i];
        fputs("<tr><td>", f);
        ptc_fput_xml(f, cov_func_name(d, d->blocks[x->block].func));
        fputs("</td><td>", f);
        html_line(f, d, x->at);
        fputs("</td><td>", f);
        html_line(f, d, x->to);
        fprintf(f, "</td><td class=n>%u</td><td class=n>%u</td></tr>\n", x->blocks, x->lines);
    }
    fputs("</table>\n", f);
    return ferror(f) ? -EIO : 0;
}

static void json_line(FILE *f, const struct cov_data *d, struct cov_line l)
{
    if (l.file == UINT32_MAX || l.file >= d->nfiles) {
        fputs("null", f);
        return;
    }
    fputs("{\"file\":", f);
    cov_json_str(f, d->files[l.file]);
    fprintf(f, ",\"line\":%u}", l.line);
}

int cov_view_json_reach(FILE *f, const struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    const struct cov_reach *r = &a->reach;
    fputs(",\n\"reachability\":{\"entry\":", f);
    if (r->entry == UINT32_MAX)
        fputs("null", f);
    else
        fprintf(f, "%u", r->entry);
    fprintf(f, ",\"indirect_calls\":%s,\"reachable_not_reached\":%u,\"unreachable\":%u,"
               "\"reached_without_path\":[",
            r->indirect ? "true" : "false", r->nreachable, r->nunreachable);
    for (uint32_t i = 0, k = 0; i < d->nfuncs; i++)
        if (r->no_path[i])
            fprintf(f, "%s%u", k++ ? "," : "", i);
    fputs("],\"classes\":[", f);
    static const char *const names[] = {"\"reached\"", "\"reachable\"", "\"unreachable\""};
    for (uint32_t i = 0; i < d->nfuncs; i++)
        fprintf(f, "%s%s", i ? "," : "", names[r->cls[i] < 3 ? r->cls[i] : 2]);
    fputs("],\n\"frontier\":[", f);
    for (uint32_t i = 0; i < r->nfront; i++) {
        const struct cov_frontier *x = &r->front[i];
        fprintf(f, "%s\n{\"function\":%u,\"by_pointer_only\":%s,\"callers\":[", i ? "," : "",
                x->callee, x->indirect ? "true" : "false");
        for (uint32_t k = 0; k < x->ncallers; k++)
            fprintf(f, "%s%u", k ? "," : "", r->callers[x->first_caller + k]);
        fprintf(f, "],\"functions_behind\":%u,\"insns_behind\":%" PRIu64
                   ",\"blocks_behind\":%" PRIu64,
                x->funcs, x->insns, x->blocks);
        if (a->blk.nblocks)
            fprintf(f, ",\"lines_behind\":%" PRIu64, x->lines);
        fputc('}', f);
    }
    fputs("]", f);
    if (r->have_succs) {
        fputs(",\n\"branch_frontier\":[", f);
        for (uint32_t i = 0; i < r->nbfront; i++) {
            const struct cov_bfrontier *x = &r->bfront[i];
            fprintf(f, "%s\n{\"function\":%u,\"block\":%u,\"successor\":%u,\"at\":", i ? "," : "",
                    d->blocks[x->block].func, x->block, x->succ);
            json_line(f, d, x->at);
            fputs(",\"first_unrun\":", f);
            json_line(f, d, x->to);
            fprintf(f, ",\"blocks_behind\":%u,\"lines_behind\":%u}", x->blocks, x->lines);
        }
        fputs("]", f);
    }
    fputs("}", f);
    return ferror(f) ? -EIO : 0;
}

/* The frontier as CSV rows (--frontier): its reached callers in one field, joined by "; ",
 * so that a row stays a never-reached function as in the table. */
int cov_view_csv_reach(FILE *f, const struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    const struct cov_reach *r = &a->reach;
    fprintf(f, "name,linkage_name,module,file,line,by_pointer_only,callers,functions_behind,"
               "insns_behind,blocks_behind,lines_behind\n");
    for (uint32_t i = 0; i < r->nfront; i++) {
        const struct cov_frontier *x = &r->front[i];
        size_t len = 1;
        for (uint32_t k = 0; k < x->ncallers; k++)
            len += strlen(cov_func_name(d, r->callers[x->first_caller + k])) + 2;
        char *callers = malloc(len);
        if (!callers)
            return -ENOMEM;
        callers[0] = 0;
        for (uint32_t k = 0; k < x->ncallers; k++) {
            if (k)
                strcat(callers, "; ");
            strcat(callers, cov_func_name(d, r->callers[x->first_caller + k]));
        }
        cov_csv_func(f, d, x->callee);
        fprintf(f, ",%d,", x->indirect ? 1 : 0);
        cov_csv_str(f, callers);
        free(callers);
        fprintf(f, ",%u,%" PRIu64 ",%" PRIu64 ",", x->funcs, x->insns, x->blocks);
        if (a->blk.nblocks)
            fprintf(f, "%" PRIu64, x->lines);
        fputc('\n', f);
    }
    return fflush(f) || ferror(f) ? -EIO : 0;
}
