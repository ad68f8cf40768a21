/* `cov report --format lcov`: the campaign's union as an lcov tracefile (geninfo(1)'s format,
 * which genhtml and Codecov read). Per source file: FN/FNDA for the functions whose blocks lie
 * in it (calls: entries over all inputs), DA for every line a block attributes (hits: the
 * line's count, the largest of its blocks' runs), FNF/FNH/LF/LH. No BRDA: a block counter
 * says which blocks ran, not which outcome of which source condition, so no branch record
 * would be exact. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "cov.h"

/* An lcov field ends at the line's end: a path or name with a newline cannot be written. */
static void lcov_str(FILE *f, const char *s)
{
    for (; *s; s++)
        fputc(*s == '\n' || *s == '\r' ? '?' : *s, f);
}

int cov_view_lcov(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    (void)o;
    const struct cov_data *d = a->d;
    const struct cov_blocks_analysis *b = &a->blk;
    /* each function's file: that of the first line of its first block with lines */
    uint32_t *ffile = malloc(((size_t)d->nfuncs + 1) * sizeof(*ffile));
    if (!ffile)
        return -ENOMEM;
    for (uint32_t i = 0; i < d->nfuncs; i++)
        ffile[i] = UINT32_MAX;
    for (uint32_t k = 0; k < d->nblocks; k++) {
        const struct cov_block *blk = &d->blocks[k];
        if (blk->nlines && ffile[blk->func] == UINT32_MAX)
            ffile[blk->func] = d->lines[blk->first_line].file;
    }
    uint32_t u = 0;
    for (uint32_t fi = 0; fi < d->nfiles; fi++) {
        fprintf(f, "TN:\nSF:");
        lcov_str(f, d->files[fi]);
        fputc('\n', f);
        uint32_t fnf = 0, fnh = 0;
        for (uint32_t i = 0; i < d->nfuncs; i++) {
            if (ffile[i] != fi)
                continue;
            fprintf(f, "FN:%u,", d->funcs[i].line ? d->funcs[i].line : 1);
            lcov_str(f, d->funcs[i].linkage);
            fprintf(f, "\nFNDA:%" PRIu64 ",", a->calls[i]);
            lcov_str(f, d->funcs[i].linkage);
            fputc('\n', f);
            fnf++;
            fnh += a->inputs_reaching[i] > 0;
        }
        fprintf(f, "FNF:%u\nFNH:%u\n", fnf, fnh);
        uint32_t lf = 0, lh = 0;
        for (; u < b->nulines && b->ulines[u].file == fi; u++) {
            fprintf(f, "DA:%u,%" PRIu64 "\n", b->ulines[u].line, b->ulines[u].count);
            lf++;
            lh += b->ulines[u].count > 0;
        }
        fprintf(f, "LF:%u\nLH:%u\nend_of_record\n", lf, lh);
    }
    free(ffile);
    return fflush(f) || ferror(f) ? -EIO : 0;
}
