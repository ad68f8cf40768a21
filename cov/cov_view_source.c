/* The source view of `cov report --format html` (map version 7 builds, -fptcall-cov): every
 * source file a block attributes lines to, its text with each line's hits over the campaign
 * (green: ran, red: has code that never ran, plain: no code of its own), behind a per-file
 * table ranked by lines never reached, so the page says where inside a reached function
 * the fuzzer stops without another tool (genhtml needs the lcov view first).
 *
 * The text is read from the path the debug information names, when the report is made: a
 * file that cannot be read then is said in the page (with the reason), never left out
 * silently; a file changed since the build shows its lines as they are now, which the page
 * cannot tell, so it says when the file is newer than the .ptcov. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cov.h"
#include "ptc_escape.h"

/* A source bigger than this is not shown (its lines' hits still are): a page for people. */
#define SRC_MAX_BYTES (64u << 20)

/* Opens a source path named by the .ptcov for reading, or says in why why not: only a
 * regular file (the path comes from a file that may be hostile: a FIFO or a device named as
 * a source must not hang or flood the report). */
static FILE *open_source(const char *path, char *why, size_t n)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        snprintf(why, n, "%s", strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > SRC_MAX_BYTES) {
        snprintf(why, n, "%s", !S_ISREG(st.st_mode) ? "not a regular file"
                                                    : "larger than 64 MiB");
        close(fd);
        return NULL;
    }
    FILE *in = fdopen(fd, "r");
    if (!in) {
        snprintf(why, n, "%s", strerror(errno));
        close(fd);
    }
    return in;
}

struct src_file {
    uint32_t file;                /* index into d->files */
    uint32_t first, n;            /* its lines: ulines[first .. first + n) */
    uint32_t reached;
};

static int by_unreached(const void *pa, const void *pb)
{
    const struct src_file *a = pa, *b = pb;
    uint32_t ua = a->n - a->reached, ub = b->n - b->reached;
    if (ua != ub)
        return ua > ub ? -1 : 1;
    return a->file < b->file ? -1 : a->file > b->file;
}

/* One file's text as a table of lines; lines beyond the file's end (a file that shrank since
 * the build) are listed with their hits and no text. */
static void source_table(FILE *f, const struct cov_data *d, const struct cov_blocks_analysis *b,
                         const struct src_file *s, const struct cov_view_opts *o)
{
    const char *path = d->files[s->file];
    char why[64];
    FILE *in = open_source(path, why, sizeof why);
    if (!in) {
        fprintf(f, "<p class=no>The source is not readable here (");
        ptc_fput_xml(f, why);
        fprintf(f, "): make the report where the build's sources are. Its lines with code, "
                   "with their hits:</p>\n<table class=src>");
    } else {
        struct stat sst, pst;
        if (o->ptcov && !fstat(fileno(in), &sst) && !stat(o->ptcov, &pst) &&
            sst.st_mtime > pst.st_mtime)
            fprintf(f, "<p class=no>This file was changed after the .ptcov was made: the lines "
                       "below are as the file is now and may not be the ones counted.</p>\n");
        fprintf(f, "<table class=src>");
    }
    char *line = NULL;
    size_t cap = 0;
    uint32_t no = 0, u = s->first, end = s->first + s->n;
    for (;;) {
        ssize_t len = in ? getline(&line, &cap, in) : -1;
        if (len < 0 && u >= end)
            break;
        /* past the end of the text (a file that shrank): only the lines with hits */
        no = len < 0 ? b->ulines[u].line : no + 1;
        while (u < end && b->ulines[u].line < no)
            u++;                    /* line 0: code the compiler made, of no line */
        if (len > 0 && line[len - 1] == '\n')
            line[--len] = 0;
        const struct cov_uline *ul = u < end && b->ulines[u].line == no ? &b->ulines[u++] : NULL;
        if (ul)
            fprintf(f, "<tr class=%s><td class=n>%u</td><td class=n>%" PRIu64 "</td><td>",
                    ul->count ? "hit" : "miss", no, ul->count);
        else
            fprintf(f, "<tr><td class=n>%u</td><td></td><td>", no);
        if (len >= 0)
            ptc_fput_xml(f, line);
        fprintf(f, "</td></tr>\n");
    }
    free(line);
    if (in)
        fclose(in);
    fprintf(f, "</table>\n");
}

int cov_view_html_source(FILE *f, const struct cov_analysis *a, const struct cov_view_opts *o)
{
    const struct cov_data *d = a->d;
    const struct cov_blocks_analysis *b = &a->blk;
    if (!b->nulines)
        return 0;
    struct src_file *sf = calloc(d->nfiles ? d->nfiles : 1, sizeof(*sf));
    if (!sf)
        return -ENOMEM;
    uint32_t n = 0;
    for (uint32_t u = 0; u < b->nulines;) {
        struct src_file *s = &sf[n++];
        s->file = b->ulines[u].file;
        s->first = u;
        for (; u < b->nulines && b->ulines[u].file == s->file; u++) {
            s->n++;
            s->reached += b->ulines[u].count > 0;
        }
    }
    qsort(sf, n, sizeof(*sf), by_unreached);
    fprintf(f, "<h2 id=\"source\">Source lines</h2>\n<p>%u of %u lines with code reached "
               "(%.1f %%), in %u files. A line counts as reached when a block holding code of "
               "it ran; its hits are the most runs of such a block over all inputs. Files with "
               "the most lines never reached first.</p>\n<table><tr><th>file</th><th>lines</th>"
               "<th>reached</th><th>never reached</th><th>%%</th></tr>\n",
            b->ulines_reached, b->nulines,
            b->nulines ? 100.0 * b->ulines_reached / b->nulines : 0.0, n);
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "<tr><td><a href=\"#src%u\">", sf[i].file);
        ptc_fput_xml(f, d->files[sf[i].file]);
        fprintf(f, "</a></td><td class=n>%u</td><td class=n>%u</td><td class=n>%u</td>"
                   "<td class=n>%.1f</td></tr>\n",
                sf[i].n, sf[i].reached, sf[i].n - sf[i].reached, 100.0 * sf[i].reached / sf[i].n);
    }
    fprintf(f, "</table>\n");
    for (uint32_t i = 0; i < n; i++) {
        fprintf(f, "<details id=\"src%u\"><summary><code>", sf[i].file);
        ptc_fput_xml(f, d->files[sf[i].file]);
        fprintf(f, "</code>: %u of %u lines reached</summary>\n", sf[i].reached, sf[i].n);
        source_table(f, d, b, &sf[i], o);
        fprintf(f, "</details>\n");
    }
    free(sf);
    return ferror(f) ? -EIO : 0;
}
