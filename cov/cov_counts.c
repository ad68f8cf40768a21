/* The counts file the runtime lays out in the memfd `cov run` hands it (PTCALL_COUNTS_FD,
 * include/ptcall/counts_format.h): parsed once after the fork server's hello (or after each
 * exec), then read in place after every input. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "ptcall/counts_format.h"

int cov_counts_parse(const void *base, size_t size, struct cov_counts *c, char *why, size_t n)
{
    memset(c, 0, sizeof(*c));
    struct ptc_counts_file h;
    if (size < sizeof(h)) {
        snprintf(why, n, "the counts file holds %zu bytes, less than its header: the runtime "
                         "did not lay it out (is libptcall.so loaded?)", size);
        return -EINVAL;
    }
    memcpy(&h, base, sizeof(h));
    if (memcmp(h.magic, PTC_COUNTS_FILE_MAGIC, 8)) {
        snprintf(why, n, "the counts file has no PTCCOUNT header");
        return -EINVAL;
    }
    if (h.version != PTC_COUNTS_FILE_VERSION) {
        snprintf(why, n, "the runtime wrote counts file version %u; this ptcall reads %u: use "
                         "the libptcall.so of the same build", h.version, PTC_COUNTS_FILE_VERSION);
        return -EPROTO;
    }
    uint64_t mod_end = (uint64_t)h.modules_offset + (uint64_t)h.num_modules *
                                                        sizeof(struct ptc_counts_file_module);
    uint64_t str_end = (uint64_t)h.strings_offset + h.strings_size;
    if (h.header_size < sizeof(h) || h.total_size > size || mod_end > h.total_size ||
        str_end > h.total_size || h.num_counters > (h.total_size / 8) ||
        h.counters_offset > h.total_size - 8 * h.num_counters || h.counters_offset % 8 ||
        h.num_blocks > (h.total_size / 8) || h.blocks_offset % 8 ||
        (h.num_blocks && h.blocks_offset > h.total_size - 8 * h.num_blocks) ||
        (h.strings_size && ((const char *)base)[str_end - 1])) {
        snprintf(why, n, "the counts file's layout is inconsistent (%llu bytes, %u modules, "
                         "%llu counters)", (unsigned long long)h.total_size, h.num_modules,
                 (unsigned long long)h.num_counters);
        return -EINVAL;
    }
    c->modules = calloc(h.num_modules ? h.num_modules : 1, sizeof(*c->modules));
    if (!c->modules) {
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    const char *strings = (const char *)base + h.strings_offset;
    for (uint32_t i = 0; i < h.num_modules; i++) {
        struct ptc_counts_file_module m;
        memcpy(&m, (const char *)base + h.modules_offset + i * sizeof(m), sizeof(m));
        if (m.first_counter + m.num_funcs > h.num_counters ||
            m.first_block + m.num_blocks > h.num_blocks ||
            (h.strings_size ? m.path >= h.strings_size : m.path != 0)) {
            snprintf(why, n, "the counts file's module %u lies outside its counters", i);
            free(c->modules);
            c->modules = NULL;
            return -EINVAL;
        }
        c->modules[i].identity = m.identity;
        c->modules[i].path = h.strings_size ? strings + m.path : "";
        c->modules[i].first = (uint32_t)m.first_counter;
        c->modules[i].nfuncs = m.num_funcs;
        c->modules[i].first_block = m.first_block;
        c->modules[i].nblocks = m.num_blocks;
    }
    c->base = base;
    c->size = size;
    c->nmodules = h.num_modules;
    c->ncounters = h.num_counters;
    c->counters = (const volatile uint64_t *)((const char *)base + h.counters_offset);
    c->nblocks = h.num_blocks;
    c->blocks = h.num_blocks ? (const volatile uint64_t *)((const char *)base + h.blocks_offset)
                             : NULL;
    return 0;
}

void cov_counts_match_blocks(const struct cov_counts *c, const struct cov_data *d,
                             uint64_t *bmap, uint32_t *mismatched, char *why, size_t n)
{
    *mismatched = 0;
    for (uint32_t i = 0; i < d->nblocks; i++)
        bmap[i] = UINT64_MAX;
    for (uint32_t k = 0; k < c->nmodules; k++) {
        const struct cov_counts_module *cm = &c->modules[k];
        uint32_t m = 0;
        while (m < d->nmodules && d->modules[m].identity != cm->identity)
            m++;
        if (m == d->nmodules || !d->modules[m].nblocks)
            continue;
        if (d->modules[m].nblocks != cm->nblocks) {
            /* a runtime out of block counters for some of its units: not numbered alike */
            snprintf(why, n, "%s: the runtime counts %u blocks, its map lists %u: its blocks "
                             "are left out", cm->path, cm->nblocks, d->modules[m].nblocks);
            (*mismatched)++;
            continue;
        }
        for (uint32_t j = 0; j < cm->nblocks; j++)
            bmap[d->modules[m].first_block + j] = cm->first_block + j;
    }
}

void cov_counts_free(struct cov_counts *c)
{
    free(c->modules);
    c->modules = NULL;
}

int cov_counts_match(const struct cov_counts *c, const struct cov_data *d, uint64_t *map,
                     char *why, size_t n)
{
    for (uint32_t i = 0; i < d->nfuncs; i++)
        map[i] = UINT64_MAX;
    int matched = 0;
    for (uint32_t k = 0; k < c->nmodules; k++) {
        const struct cov_counts_module *cm = &c->modules[k];
        uint32_t m = 0;
        while (m < d->nmodules && d->modules[m].identity != cm->identity)
            m++;
        if (m == d->nmodules) {
            /* an instrumented library `cov run` did not load beforehand: its counts are left
             * out (the tool loads the libraries the area names, see cov_fsrv.c) */
            continue;
        }
        if (d->modules[m].nfuncs != cm->nfuncs) {
            snprintf(why, n, "%s: the runtime counts %u functions, its map lists %u",
                     cm->path, cm->nfuncs, d->modules[m].nfuncs);
            return -EINVAL;
        }
        for (uint32_t j = 0; j < cm->nfuncs; j++)
            map[d->modules[m].first + j] = (uint64_t)cm->first + j;
        matched++;
    }
    if (!matched && d->nmodules) {
        snprintf(why, n, "none of the modules the runtime counts is %s (another build?)",
                 d->modules[0].path);
        return -ENOENT;
    }
    return 0;
}
