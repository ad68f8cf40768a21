/* An instrumented ELF file's function table, from its ptcall_map section (docs/map-format.md),
 * and its build id. `cov run` reads the target this way before any input runs: a binary
 * without the section was not built with ptcall, and nothing could be counted. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cov.h"
#include "ptc_map_read.h"

struct elf_info {
    void *map;            /* ptcall_map bytes (malloc'ed) */
    size_t map_size;
    uint64_t map_addr;
    char build_id[80];
};

/* The hex of an NT_GNU_BUILD_ID note in data, into out ("" if none). */
static void find_build_id(Elf_Data *data, char *out, size_t n)
{
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            !memcmp((char *)data->d_buf + name_off, "GNU", 4)) {
            const unsigned char *id = (const unsigned char *)data->d_buf + desc_off;
            size_t k = 0;
            for (size_t i = 0; i < nh.n_descsz && k + 3 <= n; i++)
                k += (size_t)snprintf(out + k, n - k, "%02x", id[i]);
            return;
        }
    }
}

static int read_elf(const char *path, struct elf_info *ei, char *why, size_t n)
{
    memset(ei, 0, sizeof(*ei));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, n, "cannot open %s: %s", path, strerror(e));
        return -e;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        snprintf(why, n, "libelf is out of date");
        return -ENOEXEC;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    if (!e || elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
        if (e)
            elf_end(e);
        close(fd);
        snprintf(why, n, "%s is not an ELF file (a script or wrapper? give the program itself)",
                 path);
        return -ENOEXEC;
    }
    int rc = -ENODATA;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (sh.sh_type == SHT_NOTE && !ei->build_id[0]) {
            Elf_Data *data = elf_getdata(scn, NULL);
            if (data)
                find_build_id(data, ei->build_id, sizeof(ei->build_id));
        }
        if (!name || strcmp(name, "ptcall_map") || sh.sh_type == SHT_NOBITS)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || data->d_size == 0)
            continue;
        free(ei->map);
        ei->map = malloc(data->d_size);
        if (!ei->map) {
            rc = -ENOMEM;
            break;
        }
        memcpy(ei->map, data->d_buf, data->d_size);
        ei->map_size = data->d_size;
        ei->map_addr = sh.sh_addr;
        rc = 0;
    }
    elf_end(e);
    close(fd);
    if (rc == -ENODATA)
        snprintf(why, n,
                 "%s was not built with ptcall (it has no ptcall_map section): build it with "
                 "ptcall-cc / ptcall-c++ (docs/pass.md)",
                 path);
    else if (rc == -ENOMEM)
        snprintf(why, n, "out of memory");
    return rc;
}

/* A callee named only by its linkage name (another unit's function): resolved once the
 * whole module is read. */
struct pending {
    uint32_t func, slot;
    char *name;
};

struct load_ctx {
    struct cov_data *d;
    uint32_t module;
    uint32_t units_early, units_late;   /* by the units' PTCALL_MAP_F_EARLY flag */
    int err;
    int all_ext;             /* every unit had the version 6 extension */
    int all_graph;           /* every unit had the version 8 call graph */
    struct pending *pend;
    size_t npend, cap;
};

static char *dup_str(const struct ptc_map_unit *u, uint32_t off)
{
    return strdup(off < u->hdr.strings_size ? u->strings + off : "");
}

/* Function i's sizes and direct callees (map version 6); callees in this unit get their
 * global index now, the others a pending entry. */
static int add_ext(struct load_ctx *c, const struct ptc_map_unit *u, uint32_t i, uint32_t first,
                   struct cov_func *f, uint32_t fi)
{
    struct ptcall_map_func_ext x;
    if (!ptc_map_get_func_ext(u, i, &x)) {
        c->all_ext = 0;
        return 0;
    }
    f->insns = x.num_insts;
    f->blocks = x.num_blocks;
    if (!x.num_callees)
        return 0;
    if (!(f->callees = malloc(x.num_callees * sizeof(*f->callees))))
        return -ENOMEM;
    for (uint32_t j = 0; j < x.num_callees; j++) {
        struct ptcall_map_callee ce;
        ptc_map_get_callee(u, x.first_callee + j, &ce);
        if (ce.func != PTCALL_MAP_NO_FUNC && ce.func < u->hdr.num_funcs) {
            f->callees[f->ncallees++] = first + ce.func;
            continue;
        }
        if (c->npend == c->cap) {
            size_t nc = c->cap ? c->cap * 2 : 256;
            struct pending *p = realloc(c->pend, nc * sizeof(*p));
            if (!p)
                return -ENOMEM;
            c->pend = p;
            c->cap = nc;
        }
        char *name = dup_str(u, ce.name);
        if (!name)
            return -ENOMEM;
        c->pend[c->npend++] = (struct pending){fi, f->ncallees++, name};
        f->callees[f->ncallees - 1] = UINT32_MAX;
    }
    return 0;
}

/* Map version 7: the unit's blocks (functions from first on) and their lines, files
 * interned in d->files. 0 or -ENOMEM. */
static int add_blocks(struct cov_data *d, const struct ptc_map_unit *u, uint32_t first)
{
    struct ptcall_map_blocks b;
    uint64_t ptr;
    if (!ptc_map_get_blocks(u, &b, &ptr))
        return 0;
    uint32_t last_off = UINT32_MAX;
    int64_t last_file = -1;
    for (uint32_t i = 0; i < b.num_blocks; i++) {
        struct ptcall_map_block mb;
        ptc_map_get_block(u, i, &mb);
        struct cov_block *k = cov_data_add_block(d);
        if (!k)
            return -ENOMEM;
        k->func = first + mb.func;
        k->first_line = d->nlines;
        k->nlines = mb.num_lines;
        for (uint32_t j = 0; j < mb.num_lines; j++) {
            struct ptcall_map_line ml;
            ptc_map_get_line(u, mb.first_line + j, &ml);
            if (ml.file != last_off) {
                last_file = cov_data_file(d, u->strings + ml.file);
                if (last_file < 0)
                    return -ENOMEM;
                last_off = ml.file;
            }
            struct cov_line *l = cov_data_add_line(d);
            if (!l)
                return -ENOMEM;
            l->file = (uint32_t)last_file;
            l->line = ml.line;
        }
    }
    return 0;
}

/* Map version 8: the unit's call graph (functions from first on, blocks from first_block
 * on), after blank entries for what earlier units without one hold. 0, or -ENOMEM. */
static int add_graph(struct load_ctx *c, const struct ptc_map_unit *u, uint32_t first,
                     uint32_t first_block)
{
    struct cov_data *d = c->d;
    struct ptcall_map_graph gh;
    if (!ptc_map_get_graph(u, &gh)) {
        c->all_graph = 0;
        return 0;
    }
    struct cov_graph *g = cov_graph_get(d);
    if (!g)
        return -ENOMEM;
    while (g->nfuncs < first)
        if (cov_graph_add_func(g, 0, 0, 0, NULL, NULL))
            return -ENOMEM;
    uint64_t *types = malloc(((size_t)gh.num_icalls + 1) * sizeof(*types));
    uint32_t *blocks = malloc(((size_t)gh.num_icalls + 1) * sizeof(*blocks));
    int rc = types && blocks ? 0 : -ENOMEM;
    for (uint32_t i = 0; i < u->hdr.num_funcs && !rc; i++) {
        struct ptcall_map_func_graph fg;
        ptc_map_get_func_graph(u, i, &fg);
        for (uint32_t k = 0; k < fg.num_icalls; k++) {
            struct ptcall_map_icall ic;
            ptc_map_get_icall(u, fg.first_icall + k, &ic);
            types[k] = ic.type_id;
            blocks[k] = ic.block == PTCALL_MAP_NO_BLOCK ? UINT32_MAX : first_block + ic.block;
        }
        rc = cov_graph_add_func(g, fg.flags & PTCALL_MAP_FUNC_F_ADDRESS_TAKEN ? COV_GRAPH_TAKEN : 0,
                                fg.type_id, fg.num_icalls, types, blocks);
    }
    free(types);
    free(blocks);
    for (uint32_t j = 0; j < gh.num_taken && !rc; j++) {
        struct ptcall_map_taken t;
        ptc_map_get_taken(u, j, &t);
        rc = cov_graph_add_name(g, u->strings + t.name);
    }
    if (gh.num_blocks && !rc) {
        while (g->nblocks < first_block && !rc)
            rc = cov_graph_add_block(g, 0, NULL);
        uint32_t *buf = malloc(((size_t)gh.num_succs + 1) * sizeof(*buf));
        if (!buf)
            rc = -ENOMEM;
        for (uint32_t i = 0; i < gh.num_blocks && !rc; i++) {
            struct ptcall_map_block_succ bs;
            ptc_map_get_block_succ(u, i, &bs);
            for (uint32_t k = 0; k < bs.num_succs; k++)
                buf[k] = first_block + ptc_map_get_succ(u, bs.first_succ + k);
            rc = cov_graph_add_block(g, bs.num_succs, buf);
        }
        free(buf);
    }
    return rc;
}

static int add_unit(void *vctx, const struct ptc_map_unit *u)
{
    struct load_ctx *c = vctx;
    uint32_t first = c->d->nfuncs;
    if (u->hdr.flags & PTCALL_MAP_F_EARLY)
        c->units_early++;
    else
        c->units_late++;
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++) {
        struct ptcall_map_func mf;
        ptc_map_get_func(u, i, &mf);
        struct cov_func *f = cov_data_add_func(c->d);
        if (!f) {
            c->err = -ENOMEM;
            return 1;
        }
        f->module = c->module;
        f->name = dup_str(u, mf.name);
        f->linkage = dup_str(u, mf.linkage_name);
        f->file = dup_str(u, mf.file);
        f->line = mf.line;
        if (!f->name || !f->linkage || !f->file ||
            add_ext(c, u, i, first, f, c->d->nfuncs - 1)) {
            c->err = -ENOMEM;
            return 1;
        }
    }
    uint32_t first_block = c->d->nblocks;
    if (add_blocks(c->d, u, first) < 0 || add_graph(c, u, first, first_block) < 0) {
        c->err = -ENOMEM;
        return 1;
    }
    return 0;
}

static const struct cov_data *sort_data;
static int by_linkage(const void *a, const void *b)
{
    return strcmp(sort_data->funcs[*(const uint32_t *)a].linkage,
                  sort_data->funcs[*(const uint32_t *)b].linkage);
}

/* Pending callees by linkage name among the module's functions (a callee that is nowhere
 * instrumented, such as a C library function, is dropped: no counter can reach it). */
static int resolve(struct load_ctx *c, uint32_t first, uint32_t n)
{
    struct cov_data *d = c->d;
    uint32_t *idx = malloc(((size_t)n + 1) * sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        idx[i] = first + i;
    sort_data = d;   /* cov run loads maps on one thread only (cmd_cov.c) */
    qsort(idx, n, sizeof(*idx), by_linkage);
    for (size_t k = 0; k < c->npend; k++) {
        struct pending *p = &c->pend[k];
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            int cmp = strcmp(d->funcs[idx[mid]].linkage, p->name);
            if (cmp < 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < n && !strcmp(d->funcs[idx[lo]].linkage, p->name))
            d->funcs[p->func].callees[p->slot] = idx[lo];
    }
    free(idx);
    /* drop the unresolved ones, keep the order */
    for (uint32_t i = first; i < first + n; i++) {
        struct cov_func *f = &d->funcs[i];
        uint32_t k = 0;
        for (uint32_t j = 0; j < f->ncallees; j++)
            if (f->callees[j] != UINT32_MAX)
                f->callees[k++] = f->callees[j];
        f->ncallees = k;
    }
    return 0;
}

int cov_map_load(struct cov_data *d, const char *path, char *why, size_t n)
{
    struct elf_info ei;
    int rc = read_elf(path, &ei, why, n);
    if (rc)
        return rc;
    struct ptc_map_summary s;
    size_t bad = 0;
    rc = ptc_map_scan(ei.map, ei.map_size, ei.map_addr, 0, 0, &s, &bad);
    if (rc) {
        snprintf(why, n, "%s: its ptcall_map section is damaged at offset %zu: %s", path, bad,
                 ptc_map_strerror(rc));
        free(ei.map);
        return -EINVAL;
    }
    uint32_t first = d->nfuncs;
    struct cov_module *m = cov_data_add_module(d);
    char *p = realpath(path, NULL);
    if (!m || !(p = p ? p : strdup(path))) {
        free(ei.map);
        snprintf(why, n, "out of memory");
        return -ENOMEM;
    }
    m->path = p;
    memcpy(m->build_id, ei.build_id, sizeof(m->build_id));
    m->identity = s.identity;
    m->first = first;
    m->first_block = d->nblocks;
    struct load_ctx c = {d, d->nmodules - 1, 0, 0, 0, 1, 1, NULL, 0, 0};
    rc = ptc_map_walk(ei.map, ei.map_size, ei.map_addr, 0, 0, add_unit, &c, &bad);
    free(ei.map);
    m = &d->modules[c.module];   /* (add_unit grew funcs, not modules) */
    m->nfuncs = d->nfuncs - first;
    m->nblocks = d->nblocks - m->first_block;
    if (rc >= 0 && !c.err)
        c.err = resolve(&c, first, m->nfuncs);
    m->has_callees = c.all_ext && m->nfuncs > 0;
    if (d->graph && !c.err) {   /* map v8: blank entries for units without one, to the end */
        if (c.all_graph && m->nfuncs)
            d->graph->modules_with++;
        while (d->graph->nfuncs < d->nfuncs && !c.err)
            c.err = cov_graph_add_func(d->graph, 0, 0, 0, NULL, NULL);
        while (d->graph->nblocks && d->graph->nblocks < d->nblocks && !c.err)
            c.err = cov_graph_add_block(d->graph, 0, NULL);
    }
    m->units_early = c.units_early;
    m->units_late = c.units_late;
    m->placement = (uint8_t)cov_placement_of(c.units_early, c.units_late);
    for (size_t k = 0; k < c.npend; k++)
        free(c.pend[k].name);
    free(c.pend);
    if (rc < 0 || c.err) {
        snprintf(why, n, "out of memory reading %s", path);
        return c.err ? c.err : -EINVAL;
    }
    return 0;
}

int cov_map_ids(const char *path, char *build_id, size_t bn, uint64_t *identity, char *why,
                size_t n)
{
    struct elf_info ei;
    int rc = read_elf(path, &ei, why, n);
    if (rc)
        return rc;
    struct ptc_map_summary s;
    size_t bad = 0;
    rc = ptc_map_scan(ei.map, ei.map_size, ei.map_addr, 0, 0, &s, &bad);
    free(ei.map);
    if (rc) {
        snprintf(why, n, "%s: its ptcall_map section is damaged at offset %zu: %s", path, bad,
                 ptc_map_strerror(rc));
        return -EINVAL;
    }
    snprintf(build_id, bn, "%s", ei.build_id);
    *identity = s.identity;
    return 0;
}
