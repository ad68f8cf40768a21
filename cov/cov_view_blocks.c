/* The blocks-and-lines parts of `cov report` (table and JSON; docs/cov.md, *Blocks and
 * lines*): per input and in union the blocks and source lines reached, per file, and per
 * reached function the blocks it left unreached (where inside it the fuzzer stops). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cov.h"

static double pct(uint32_t a, uint32_t b)
{
    return b ? 100.0 * a / b : 0.0;
}

/* Reached functions with unreached blocks, the most unreached first. */
static uint32_t *stuck_functions(const struct cov_analysis *a, uint32_t *n)
{
    const struct cov_blocks_analysis *b = &a->blk;
    uint32_t *v = malloc(((size_t)a->d->nfuncs + 1) * sizeof(*v));
    *n = 0;
    if (!v)
        return NULL;
    for (uint32_t i = 0; i < a->d->nfuncs; i++)
        if (b->func_reached[i] && b->func_reached[i] < b->func_blocks[i])
            v[(*n)++] = i;
    /* insertion sort by unreached blocks, descending: stable, and n is a few hundred */
    for (uint32_t i = 1; i < *n; i++) {
        uint32_t x = v[i], ux = b->func_blocks[x] - b->func_reached[x], j = i;
        while (j && b->func_blocks[v[j - 1]] - b->func_reached[v[j - 1]] < ux) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
    return v;
}

int cov_view_table_blocks(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    const struct cov_blocks_analysis *b = &a->blk;
    if (!b->nblocks) {
        fprintf(f, "\nblocks and lines: not counted (a target built with ptcall-cc "
                   "-fptcall-cov and run by the fork server or --exec counts them)\n");
        return fflush(f) || ferror(f) ? -EIO : 0;
    }
    fprintf(f, "\nblocks reached: %u of %u (%.1f %%); source lines reached: %u of %u "
               "(%.1f %%)\n", b->reached, b->nblocks, pct(b->reached, b->nblocks),
            b->ulines_reached, b->nulines, pct(b->ulines_reached, b->nulines));
    fprintf(f, "\nlines and blocks per source file:\n");
    for (uint32_t i = 0; i < d->nfiles; i++) {
        const struct cov_file_lines *fl = &b->files[i];
        fprintf(f, "  lines %6u / %-6u %5.1f %%  blocks %6u / %-6u  ", fl->lines_reached,
                fl->lines, pct(fl->lines_reached, fl->lines), fl->blocks_reached, fl->blocks);
        cov_text_str(f, d->files[i]);
        fputc('\n', f);
    }
    uint32_t ns;
    uint32_t *st = stuck_functions(a, &ns);
    if (!st)
        return -ENOMEM;
    fprintf(f, "\nreached functions with blocks never reached (where the fuzzer stops):\n"
               "  reached / blocks  function: lines of the blocks never reached\n");
    uint32_t shown = o->top && o->top < ns ? (uint32_t)o->top : ns;
    for (uint32_t s = 0; s < shown; s++) {
        uint32_t fn = st[s];
        fprintf(f, "  %7u / %-6u  ", b->func_reached[fn], b->func_blocks[fn]);
        cov_text_str(f, cov_func_name(d, fn));
        fputc(':', f);
        uint32_t listed = 0, last = 0;
        /* a function's blocks are consecutive (the map lists them function by function) */
        uint32_t lo = 0, hi = d->nblocks;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (d->blocks[mid].func < fn)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (uint32_t k = lo; k < d->nblocks && d->blocks[k].func == fn && listed < 8; k++) {
            const struct cov_block *blk = &d->blocks[k];
            if (b->inputs[k] || !blk->nlines || d->lines[blk->first_line].line == last)
                continue;
            last = d->lines[blk->first_line].line;
            fprintf(f, " %u", last);
            listed++;
        }
        fputc('\n', f);
    }
    if (shown < ns)
        fprintf(f, "  ... %u more (--top 0 shows all)\n", ns - shown);
    free(st);
    fprintf(f, "\nblocks and lines per input (campaign order):\n  blocks  lines  input\n");
    uint32_t ni = o->top && o->top < d->ninputs ? (uint32_t)o->top : d->ninputs;
    for (uint32_t i = 0; i < ni; i++) {
        fprintf(f, "  %6u %6u  ", b->in_blocks[i], b->in_lines[i]);
        cov_text_str(f, d->inputs[i].name);
        fputc('\n', f);
    }
    if (ni < d->ninputs)
        fprintf(f, "  ... %u more (--top 0 shows all)\n", d->ninputs - ni);
    return fflush(f) || ferror(f) ? -EIO : 0;
}

int cov_view_json_blocks(FILE *f, const struct cov_analysis *a)
{
    const struct cov_data *d = a->d;
    const struct cov_blocks_analysis *b = &a->blk;
    if (!b->nblocks)
        return 0; /* no "blocks" member: the target was not built with -fptcall-cov */
    fprintf(f, ",\n\"blocks\":{\"total\":%u,\"reached\":%u,\"lines\":%u,\"lines_reached\":%u,"
               "\n\"files\":[", b->nblocks, b->reached, b->nulines, b->ulines_reached);
    for (uint32_t i = 0; i < d->nfiles; i++) {
        const struct cov_file_lines *fl = &b->files[i];
        fprintf(f, "%s\n{\"file\":", i ? "," : "");
        cov_json_str(f, d->files[i]);
        fprintf(f, ",\"lines\":%u,\"lines_reached\":%u,\"blocks\":%u,\"blocks_reached\":%u}",
                fl->lines, fl->lines_reached, fl->blocks, fl->blocks_reached);
    }
    fprintf(f, "],\n\"functions\":[");
    int first = 1;
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        if (!b->func_blocks[i])
            continue;
        fprintf(f, "%s\n{\"function\":%u,\"blocks\":%u,\"reached\":%u}", first ? "" : ",", i,
                b->func_blocks[i], b->func_reached[i]);
        first = 0;
    }
    fprintf(f, "],\n\"table\":[");
    for (uint32_t k = 0; k < d->nblocks; k++) {
        const struct cov_block *blk = &d->blocks[k];
        fprintf(f, "%s\n{\"function\":%u,\"inputs\":%u,\"count\":%" PRIu64 ",\"lines\":[",
                k ? "," : "", blk->func, b->inputs[k], b->count[k]);
        for (uint32_t j = 0; j < blk->nlines; j++) {
            const struct cov_line *l = &d->lines[blk->first_line + j];
            fprintf(f, "%s[%u,%u]", j ? "," : "", l->file, l->line);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "],\n\"lines_list\":[");
    for (uint32_t u = 0; u < b->nulines; u++) {
        const struct cov_uline *l = &b->ulines[u];
        fprintf(f, "%s\n{\"file\":%u,\"line\":%u,\"count\":%" PRIu64 ",\"inputs\":%u}",
                u ? "," : "", l->file, l->line, l->count, l->inputs);
    }
    fprintf(f, "],\n\"inputs\":[");
    for (uint32_t i = 0; i < d->ninputs; i++) {
        const struct cov_input *in = &d->inputs[i];
        fprintf(f, "%s\n{\"input\":%u,\"blocks\":%u,\"lines\":%u,\"reached\":[", i ? "," : "",
                i, b->in_blocks[i], b->in_lines[i]);
        for (uint32_t k = 0; k < in->nbhits; k++)
            fprintf(f, "%s%u", k ? "," : "", in->bhits[k].block);
        fprintf(f, "],\"counts\":[");
        for (uint32_t k = 0; k < in->nbhits; k++)
            fprintf(f, "%s%" PRIu64, k ? "," : "", in->bhits[k].count);
        fprintf(f, "]}");
    }
    fprintf(f, "]}");
    return ferror(f) ? -EIO : 0;
}
