/* Blocks and lines over a campaign (map version 7 data, `ptcall-cc -fptcall-cov`): which
 * blocks and source lines each input and the union reached, per file and per function. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

void cov_blocks_analysis_free(struct cov_blocks_analysis *b)
{
    free(b->count);
    free(b->inputs);
    free(b->ulines);
    free(b->uline_of);
    free(b->files);
    free(b->func_blocks);
    free(b->func_reached);
    free(b->in_blocks);
    free(b->in_lines);
    memset(b, 0, sizeof(*b));
}

static const struct cov_data *sort_d;
static int by_file_line(const void *pa, const void *pb)
{
    const struct cov_line *a = &sort_d->lines[*(const uint32_t *)pa];
    const struct cov_line *b = &sort_d->lines[*(const uint32_t *)pb];
    if (a->file != b->file)
        return a->file < b->file ? -1 : 1;
    return a->line < b->line ? -1 : a->line > b->line;
}

/* The distinct (file, line) of d->lines, sorted, and each entry's index among them. */
static int unique_lines(const struct cov_data *d, struct cov_blocks_analysis *b)
{
    uint32_t *ord = malloc(((size_t)d->nlines + 1) * sizeof(*ord));
    b->uline_of = malloc(((size_t)d->nlines + 1) * sizeof(*b->uline_of));
    b->ulines = calloc((size_t)d->nlines + 1, sizeof(*b->ulines));
    if (!ord || !b->uline_of || !b->ulines) {
        free(ord);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < d->nlines; i++)
        ord[i] = i;
    sort_d = d;
    qsort(ord, d->nlines, sizeof(*ord), by_file_line);
    for (uint32_t k = 0; k < d->nlines; k++) {
        const struct cov_line *l = &d->lines[ord[k]];
        if (!b->nulines || b->ulines[b->nulines - 1].file != l->file ||
            b->ulines[b->nulines - 1].line != l->line)
            b->ulines[b->nulines++] = (struct cov_uline){l->file, l->line, 0, 0};
        b->uline_of[ord[k]] = b->nulines - 1;
    }
    free(ord);
    return 0;
}

int cov_analyse_blocks(const struct cov_data *d, struct cov_blocks_analysis *b)
{
    memset(b, 0, sizeof(*b));
    if (!d->nblocks)
        return 0;
    size_t nb = d->nblocks, nf = (size_t)d->nfuncs + 1, ni = (size_t)d->ninputs + 1;
    b->nblocks = d->nblocks;
    b->count = calloc(nb, sizeof(*b->count));
    b->inputs = calloc(nb, sizeof(*b->inputs));
    b->files = calloc((size_t)d->nfiles + 1, sizeof(*b->files));
    b->func_blocks = calloc(nf, sizeof(*b->func_blocks));
    b->func_reached = calloc(nf, sizeof(*b->func_reached));
    b->in_blocks = calloc(ni, sizeof(*b->in_blocks));
    b->in_lines = calloc(ni, sizeof(*b->in_lines));
    /* per line: the last input that reached it (+1), to count each line once per input */
    uint32_t *seen = NULL;
    if (!b->count || !b->inputs || !b->files || !b->func_blocks || !b->func_reached ||
        !b->in_blocks || !b->in_lines || unique_lines(d, b) ||
        !(seen = calloc((size_t)b->nulines + 1, sizeof(*seen)))) {
        cov_blocks_analysis_free(b);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < d->ninputs; i++) {
        const struct cov_input *in = &d->inputs[i];
        b->in_blocks[i] = in->nbhits;
        for (uint32_t k = 0; k < in->nbhits; k++) {
            const struct cov_block *k_ = &d->blocks[in->bhits[k].block];
            b->count[in->bhits[k].block] += in->bhits[k].count;
            b->inputs[in->bhits[k].block]++;
            for (uint32_t j = 0; j < k_->nlines; j++) {
                uint32_t u = b->uline_of[k_->first_line + j];
                if (seen[u] != i + 1) {
                    seen[u] = i + 1;
                    b->in_lines[i]++;
                    b->ulines[u].inputs++;
                }
            }
        }
    }
    free(seen);
    for (uint32_t k = 0; k < d->nblocks; k++) {
        const struct cov_block *blk = &d->blocks[k];
        int hit = b->inputs[k] > 0;
        b->reached += hit;
        b->func_blocks[blk->func]++;
        b->func_reached[blk->func] += hit;
        if (blk->nlines) {
            struct cov_file_lines *fl = &b->files[d->lines[blk->first_line].file];
            fl->blocks++;
            fl->blocks_reached += hit;
        }
        for (uint32_t j = 0; j < blk->nlines; j++) {
            struct cov_uline *u = &b->ulines[b->uline_of[blk->first_line + j]];
            if (b->count[k] > u->count)
                u->count = b->count[k];
        }
    }
    for (uint32_t u = 0; u < b->nulines; u++) {
        struct cov_file_lines *fl = &b->files[b->ulines[u].file];
        fl->lines++;
        if (b->ulines[u].inputs) {
            fl->lines_reached++;
            b->ulines_reached++;
        }
    }
    return 0;
}
