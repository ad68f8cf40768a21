/* Reading the `ptcall_map` section; see ptc_map_read.h. */
#include "ptc_map_read.h"

#include <string.h>

#include "ptc_chunk_write.h"
#include "ptc_sled.h"

const char *ptc_map_strerror(int err)
{
    switch (err) {
    case PTC_MAP_OK: return "ok";
    case PTC_MAP_E_TRUNCATED: return "map blob truncated (runs past the end of the section)";
    case PTC_MAP_E_MAGIC: return "bad map blob magic";
    case PTC_MAP_E_VERSION: return "unsupported map version";
    case PTC_MAP_E_SITES: return "call-site table bounds out of order, misaligned or wrapping";
    case PTC_MAP_E_SLOT:
        return "soft-handler slot (soft_slot_rel) misaligned, wrapping, over the map or stub "
               "section, or outside the object's writable data";
    case PTC_MAP_E_SITES_PLACE:
        return "call-site table (sites_rel) over the map or stub section, outside the "
               "object's loaded segments, or not the same in every unit";
    case PTC_MAP_E_SITE:
        return "a call site outside the object's code, or calling a stub outside ptcall_stubs";
    case PTC_MAP_E_HEADER_SIZE: return "bad map header size";
    case PTC_MAP_E_TOTAL_SIZE: return "bad map blob size";
    case PTC_MAP_E_STUBS_BOUNDS: return "stub table out of bounds";
    case PTC_MAP_E_FUNCS_BOUNDS: return "function table out of bounds";
    case PTC_MAP_E_STRINGS_BOUNDS: return "string table out of bounds or not NUL-terminated";
    case PTC_MAP_E_STRING_OFFSET: return "string offset out of bounds";
    case PTC_MAP_E_FUNC_INDEX: return "stub refers to a missing function";
    case PTC_MAP_E_KIND: return "unknown stub kind";
    case PTC_MAP_E_STUB_RANGE: return "stub outside the ptcall_stubs section";
    case PTC_MAP_E_STUB_ALIGN: return "stub not on a 16-byte boundary";
    case PTC_MAP_E_TOO_BIG: return "map too big";
    case PTC_MAP_E_BUFFER: return "output buffer too small";
    case PTC_MAP_E_CALLBACK: return "callback failed";
    case PTC_MAP_E_EMPTY: return "no map blob in the section";
    case PTC_MAP_E_BLOCKS:
        return "block table out of bounds or inconsistent (map version 7)";
    case PTC_MAP_E_GRAPH:
        return "call-graph table (map version 8) out of bounds, inconsistent, or naming a "
               "missing record or string";
    case PTC_MAP_E_EXT:
        return "sizes-and-callees table (v6) out of bounds, inconsistent, or naming a missing "
               "function or string";
    default: return "unknown map error";
    }
}

void ptc_map_get_stub(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_stub *out,
                      uint64_t *addr)
{
    size_t off = (size_t)u->hdr.stubs_offset + (size_t)i * sizeof(struct ptcall_map_stub);
    memcpy(out, u->blob + off, sizeof(*out));
    if (addr)
        *addr = u->addr + off + (uint64_t)out->stub_rel; /* relative to the field */
}

void ptc_map_get_func(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_func *out)
{
    size_t off = (size_t)u->hdr.funcs_offset + (size_t)i * sizeof(struct ptcall_map_func);
    memcpy(out, u->blob + off, sizeof(*out));
}

/* A stub record's kind field: a known kind, and from version 4 the leaf flag on an ENTRY or
 * EXIT record. */
static int kind_valid(uint16_t version, uint16_t raw)
{
    uint16_t kind = raw & PTCALL_STUB_KIND_MASK, flags = raw & ~PTCALL_STUB_KIND_MASK;
    if (kind > PTCALL_STUB_LANDING)
        return 0;
    if (!flags)
        return 1;
    return version >= 4 && flags == PTCALL_STUB_F_LEAF &&
           (kind == PTCALL_STUB_ENTRY || kind == PTCALL_STUB_EXIT);
}

/* The run-time address a relative field at address field names (field + rel); -1 when it
 * wraps around the address space (damage: no object spans that). */
static int rel_target(uint64_t field, int64_t rel, uint64_t *out)
{
    uint64_t t = field + (uint64_t)rel;
    if (rel < 0 ? t > field : t < field)
        return -1;
    *out = t;
    return 0;
}

/* [a, a + n) and [b0, b1) share a byte */
static int overlaps(uint64_t a, uint64_t n, uint64_t b0, uint64_t b1)
{
    return b1 > b0 && a < b1 && a + n > b0;
}

/* [a, a + n) lies inside [start, start + size) */
static int in_range(uint64_t start, uint64_t size, uint64_t a, uint64_t n)
{
    return a >= start && n <= size && a - start <= size - n;
}

int ptc_map_object_holds(const struct ptc_map_object *o, uint64_t a, uint64_t n, unsigned prot)
{
    if (!in_range(o->start, o->size, a, n))
        return 0;
    if (!o->segs || !o->nsegs)
        return 1;
    for (size_t i = 0; i < o->nsegs; i++) {
        const struct ptc_map_segment *g = &o->segs[i];
        if (g->end > g->start && in_range(g->start, g->end - g->start, a, n) &&
            (g->prot & prot) == prot)
            return 1;
    }
    return 0;
}

/* The places a unit names outside its blob: its slot (written by the runtime) and the call-
 * site table (read), against the map section [addr, addr + size), the stubs and the object
 * (and its segments: a slot in read-only memory would fault when the runtime writes it). */
static int check_places(const struct ptc_map_unit *u, uint64_t addr, size_t size,
                        uint64_t stubs_start, uint64_t stubs_end,
                        const struct ptc_map_object *obj)
{
    if (u->hdr.soft_slot_rel != 0) {
        uint64_t a = u->slot_addr;
        if (a % 8 || a > UINT64_MAX - 8 || overlaps(a, 8, addr, addr + size) ||
            overlaps(a, 8, stubs_start, stubs_end) ||
            (obj && !ptc_map_object_holds(obj, a, 8, PTC_MAP_SEG_W)))
            return PTC_MAP_E_SLOT;
    }
    if (u->hdr.flags & PTCALL_MAP_F_SLEDS) {
        uint64_t a = u->sites_start, n = u->sites_end - u->sites_start;
        if (n && (overlaps(a, n, addr, addr + size) || overlaps(a, n, stubs_start, stubs_end) ||
                  (obj && !ptc_map_object_holds(obj, a, n, PTC_MAP_SEG_R))))
            return PTC_MAP_E_SITES_PLACE;
    }
    struct ptcall_map_blocks b;
    uint64_t p;
    if (ptc_map_get_blocks(u, &b, &p) &&
        (p > UINT64_MAX - 8 || overlaps(p, 8, addr, addr + size) ||
         overlaps(p, 8, stubs_start, stubs_end) ||
         (obj && !ptc_map_object_holds(obj, p, 8, PTC_MAP_SEG_W))))
        return PTC_MAP_E_BLOCKS; /* the runtime writes the counter pointer */
    return 0;
}

int ptc_map_check_sites(const void *table_, uint64_t start, uint64_t end, uint64_t stubs_start,
                        uint64_t stubs_end, const struct ptc_map_object *obj, uint64_t *bad)
{
    const uint8_t *table = table_;
    uint64_t n = (end - start) / sizeof(struct ptcall_map_site);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub;
        int ret;
        ptc_sled_entry(table, start, i, &site, &stub, &ret);
        uint64_t word = ptc_sled_word_addr(site);
        *bad = i;
        if (!ptc_map_object_holds(obj, word, 8, PTC_MAP_SEG_X) ||
            !ptc_map_object_holds(obj, site, PTCALL_SLED_SIZE, PTC_MAP_SEG_X))
            return PTC_MAP_E_SITE;
        if (stubs_end > stubs_start &&
            (stub < stubs_start || stub >= stubs_end || (stub - stubs_start) % PTCALL_STUB_STRIDE))
            return PTC_MAP_E_SITE;
    }
    return 0;
}

static int check_ext(const struct ptc_map_unit *u, size_t off, size_t *bad);
static int check_blocks(const struct ptc_map_unit *u, size_t off, size_t *bad);
static int check_graph(const struct ptc_map_unit *u, size_t off, size_t *bad);

/* Validates the blob at data[off..size); on success fills *u and *next (offset after it). */
static int check_blob(const uint8_t *data, size_t size, size_t off, uint64_t addr,
                      uint64_t stubs_start, uint64_t stubs_end, struct ptc_map_unit *u,
                      size_t *bad)
{
    size_t hs = PTCALL_MAP_HEADER_SIZE_V2; /* until the version says more */
    size_t rem = size - off;
    *bad = off;
    if (rem < 8) {
        uint32_t magic = 0;
        memcpy(&magic, data + off, rem < 4 ? rem : 4);
        return rem >= 4 && magic != PTCALL_MAP_MAGIC ? PTC_MAP_E_MAGIC : PTC_MAP_E_TRUNCATED;
    }
    struct ptcall_map_header h;
    memset(&h, 0, sizeof(h));
    memcpy(&h, data + off, rem < hs ? rem : hs);
    if (h.magic != PTCALL_MAP_MAGIC)
        return PTC_MAP_E_MAGIC;
    if (h.version < PTCALL_MAP_VERSION_MIN || h.version > PTCALL_MAP_VERSION)
        return PTC_MAP_E_VERSION;
    if (h.version >= 3) {
        hs = sizeof(struct ptcall_map_header);
        memcpy(&h, data + off, rem < hs ? rem : hs);
    } else {
        h.sites_rel = h.sites_end_rel = 0;
        h.flags &= ~PTCALL_MAP_F_SLEDS;
    }
    if (rem < hs)
        return PTC_MAP_E_TRUNCATED;
    if (h.header_size < hs || h.header_size > h.total_size)
        return PTC_MAP_E_HEADER_SIZE;
    if (h.total_size % 8 || h.total_size < hs)
        return PTC_MAP_E_TOTAL_SIZE;
    if (h.total_size > rem)
        return PTC_MAP_E_TRUNCATED;
    uint64_t total = h.total_size;
    if (h.stubs_offset < h.header_size || h.stubs_offset % 8 ||
        h.stubs_offset + (uint64_t)h.num_stubs * sizeof(struct ptcall_map_stub) > total)
        return PTC_MAP_E_STUBS_BOUNDS;
    if (h.funcs_offset < h.header_size || h.funcs_offset % 4 ||
        h.funcs_offset + (uint64_t)h.num_funcs * sizeof(struct ptcall_map_func) > total)
        return PTC_MAP_E_FUNCS_BOUNDS;
    if (h.strings_offset < h.header_size || h.strings_size == 0 ||
        h.strings_offset + (uint64_t)h.strings_size > total ||
        data[off + h.strings_offset + h.strings_size - 1] != 0)
        return PTC_MAP_E_STRINGS_BOUNDS;
    if (h.source_name >= h.strings_size)
        return PTC_MAP_E_STRING_OFFSET;

    u->hdr = h;
    u->blob = data + off;
    u->addr = addr + off;
    u->offset = off;
    u->strings = (const char *)data + off + h.strings_offset;
    u->slot_addr = 0;
    if (rel_target(u->addr + offsetof(struct ptcall_map_header, soft_slot_rel),
                   h.soft_slot_rel, &u->slot_addr))
        return PTC_MAP_E_SLOT;
    u->sites_start = u->sites_end = 0;
    if (h.flags & PTCALL_MAP_F_SLEDS) {
        if (rel_target(u->addr + offsetof(struct ptcall_map_header, sites_rel), h.sites_rel,
                       &u->sites_start) ||
            rel_target(u->addr + offsetof(struct ptcall_map_header, sites_end_rel),
                       h.sites_end_rel, &u->sites_end) ||
            u->sites_end < u->sites_start || u->sites_start % 4 ||
            (u->sites_end - u->sites_start) % sizeof(struct ptcall_map_site))
            return PTC_MAP_E_SITES;
    }

    for (uint32_t i = 0; i < h.num_funcs; i++) {
        struct ptcall_map_func f;
        ptc_map_get_func(u, i, &f);
        if (f.name >= h.strings_size || f.linkage_name >= h.strings_size ||
            f.file >= h.strings_size) {
            *bad = off + h.funcs_offset + (size_t)i * sizeof(f);
            return PTC_MAP_E_STRING_OFFSET;
        }
    }
    for (uint32_t i = 0; i < h.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        *bad = off + h.stubs_offset + (size_t)i * sizeof(st);
        uint64_t field = u->addr + h.stubs_offset + (uint64_t)i * sizeof(st);
        if (rel_target(field, st.stub_rel, &a))
            return PTC_MAP_E_STUB_RANGE; /* wraps around: nowhere */
        if (st.func_index >= h.num_funcs)
            return PTC_MAP_E_FUNC_INDEX;
        if (!kind_valid(h.version, st.kind))
            return PTC_MAP_E_KIND;
        if (stubs_end > stubs_start) {
            if (a < stubs_start || a >= stubs_end)
                return PTC_MAP_E_STUB_RANGE;
            if ((a - stubs_start) % PTCALL_STUB_STRIDE)
                return PTC_MAP_E_STUB_ALIGN;
        }
    }
    int e = check_ext(u, off, bad);
    if (!e)
        e = check_blocks(u, off, bad);
    if (!e)
        e = check_graph(u, off, bad);
    if (e)
        return e;
    *bad = off;
    return 0;
}

/* The v6 extension's header, if the unit has one: 1, else 0 */
static int ext_header(const struct ptc_map_unit *u, struct ptcall_map_ext *e)
{
    if (u->hdr.version < 6 || !u->hdr.ext_offset)
        return 0;
    memcpy(e, u->blob + u->hdr.ext_offset, sizeof(*e));
    return 1;
}

int ptc_map_get_func_ext(const struct ptc_map_unit *u, uint32_t i,
                         struct ptcall_map_func_ext *out)
{
    struct ptcall_map_ext e;
    memset(out, 0, sizeof(*out));
    if (!ext_header(u, &e))
        return 0;
    memcpy(out, u->blob + u->hdr.ext_offset + sizeof(e) + (size_t)i * sizeof(*out),
           sizeof(*out));
    return 1;
}

void ptc_map_get_callee(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_callee *out)
{
    size_t at = (size_t)u->hdr.ext_offset + sizeof(struct ptcall_map_ext) +
                (size_t)u->hdr.num_funcs * sizeof(struct ptcall_map_func_ext) +
                (size_t)j * sizeof(*out);
    memcpy(out, u->blob + at, sizeof(*out));
}

/* Version 6: the extension inside the blob, its sizes consistent, every function's callee
 * range inside the callee table, every callee's function and name present. 0 or
 * PTC_MAP_E_EXT with *bad at the record. */
static int check_ext(const struct ptc_map_unit *u, size_t off, size_t *bad)
{
    const struct ptcall_map_header *h = &u->hdr;
    struct ptcall_map_ext e;
    *bad = off + offsetof(struct ptcall_map_header, ext_offset);
    if (h->version < 6 || !h->ext_offset)
        return 0;
    if (h->ext_offset < h->header_size || h->ext_offset % 8 ||
        h->ext_offset + (uint64_t)sizeof(e) > h->total_size)
        return PTC_MAP_E_EXT;
    ext_header(u, &e);
    *bad = off + h->ext_offset;
    if (e.ext_size != sizeof(e) + (uint64_t)h->num_funcs * sizeof(struct ptcall_map_func_ext) +
                          (uint64_t)e.num_callees * sizeof(struct ptcall_map_callee) ||
        h->ext_offset + (uint64_t)e.ext_size > h->total_size)
        return PTC_MAP_E_EXT;
    for (uint32_t i = 0; i < h->num_funcs; i++) {
        struct ptcall_map_func_ext f;
        ptc_map_get_func_ext(u, i, &f);
        if ((uint64_t)f.first_callee + f.num_callees > e.num_callees) {
            *bad = off + h->ext_offset + sizeof(e) + (size_t)i * sizeof(f);
            return PTC_MAP_E_EXT;
        }
    }
    for (uint32_t j = 0; j < e.num_callees; j++) {
        struct ptcall_map_callee c;
        ptc_map_get_callee(u, j, &c);
        if ((c.func != PTCALL_MAP_NO_FUNC && c.func >= h->num_funcs) ||
            c.name >= h->strings_size) {
            *bad = off + h->ext_offset + sizeof(e) +
                   (size_t)h->num_funcs * sizeof(struct ptcall_map_func_ext) + j * sizeof(c);
            return PTC_MAP_E_EXT;
        }
    }
    return 0;
}

static uint32_t blocks_offset(const struct ptc_map_unit *u)
{
    struct ptcall_map_ext e;
    if (u->hdr.version < 7 || !(u->hdr.flags & PTCALL_MAP_F_BLOCKS) || !ext_header(u, &e))
        return 0;
    return e.blocks_offset;
}

int ptc_map_get_blocks(const struct ptc_map_unit *u, struct ptcall_map_blocks *out,
                       uint64_t *ptr_addr)
{
    uint32_t bo = blocks_offset(u);
    memset(out, 0, sizeof(*out));
    *ptr_addr = 0;
    if (!bo)
        return 0;
    memcpy(out, u->blob + bo, sizeof(*out));
    rel_target(u->addr + bo + offsetof(struct ptcall_map_blocks, counters_rel), out->counters_rel,
               ptr_addr);
    return 1;
}

void ptc_map_get_block(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_block *out)
{
    memcpy(out, u->blob + blocks_offset(u) + sizeof(struct ptcall_map_blocks) +
                    (size_t)i * sizeof(*out), sizeof(*out));
}

void ptc_map_get_line(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_line *out)
{
    struct ptcall_map_blocks b;
    uint32_t bo = blocks_offset(u);
    memcpy(&b, u->blob + bo, sizeof(b));
    memcpy(out, u->blob + bo + sizeof(b) + (size_t)b.num_blocks * sizeof(struct ptcall_map_block) +
                    (size_t)j * sizeof(*out), sizeof(*out));
}

/* Version 7: the blocks part inside the blob, its sizes consistent, every block's function
 * and lines present, every line's file a string; the counter pointer 8-aligned and not in
 * the map. 0 or PTC_MAP_E_BLOCKS with *bad at the record. */
static int check_blocks(const struct ptc_map_unit *u, size_t off, size_t *bad)
{
    const struct ptcall_map_header *h = &u->hdr;
    struct ptcall_map_ext e;
    if (h->version < 7 || !(h->flags & PTCALL_MAP_F_BLOCKS))
        return 0;
    *bad = off + h->ext_offset;
    if (!ext_header(u, &e) || !e.blocks_offset)
        return PTC_MAP_E_BLOCKS;
    uint32_t bo = e.blocks_offset;
    struct ptcall_map_blocks b;
    if (bo < h->header_size || bo % 8 || bo + (uint64_t)sizeof(b) > h->total_size)
        return PTC_MAP_E_BLOCKS;
    memcpy(&b, u->blob + bo, sizeof(b));
    *bad = off + bo;
    if (b.blocks_size != sizeof(b) + (uint64_t)b.num_blocks * sizeof(struct ptcall_map_block) +
                             (uint64_t)b.num_lines * sizeof(struct ptcall_map_line) ||
        bo + (uint64_t)b.blocks_size > h->total_size)
        return PTC_MAP_E_BLOCKS;
    uint64_t ptr;
    if (rel_target(u->addr + bo + offsetof(struct ptcall_map_blocks, counters_rel),
                   b.counters_rel, &ptr) || ptr % 8 ||
        (ptr + 8 > u->addr - u->offset && ptr < u->addr + h->total_size))
        return PTC_MAP_E_BLOCKS;
    for (uint32_t i = 0; i < b.num_blocks; i++) {
        struct ptcall_map_block k;
        ptc_map_get_block(u, i, &k);
        if (k.func >= h->num_funcs || (uint64_t)k.first_line + k.num_lines > b.num_lines) {
            *bad = off + bo + sizeof(b) + (size_t)i * sizeof(k);
            return PTC_MAP_E_BLOCKS;
        }
    }
    for (uint32_t j = 0; j < b.num_lines; j++) {
        struct ptcall_map_line l;
        ptc_map_get_line(u, j, &l);
        if (l.file >= h->strings_size) {
            *bad = off + bo + sizeof(b) + (size_t)b.num_blocks * sizeof(struct ptcall_map_block) +
                   (size_t)j * sizeof(l);
            return PTC_MAP_E_BLOCKS;
        }
    }
    return 0;
}

/* ---- version 8: the call graph ---- */

static uint32_t graph_offset(const struct ptc_map_unit *u)
{
    struct ptcall_map_ext e;
    if (u->hdr.version < 8 || !ext_header(u, &e))
        return 0;
    return e.graph_offset;
}

int ptc_map_get_graph(const struct ptc_map_unit *u, struct ptcall_map_graph *out)
{
    uint32_t go = graph_offset(u);
    memset(out, 0, sizeof(*out));
    if (!go)
        return 0;
    memcpy(out, u->blob + go, sizeof(*out));
    return 1;
}

/* Offsets of the graph part's arrays, from blob start. */
struct graph_at {
    size_t funcs, icalls, taken, bsucc, succ;
};

static struct graph_at graph_at(const struct ptc_map_unit *u)
{
    struct ptcall_map_graph g;
    struct graph_at a;
    uint32_t go = graph_offset(u);
    memcpy(&g, u->blob + go, sizeof(g));
    a.funcs = (size_t)go + sizeof(g);
    a.icalls = a.funcs + (size_t)u->hdr.num_funcs * sizeof(struct ptcall_map_func_graph);
    a.taken = a.icalls + (size_t)g.num_icalls * sizeof(struct ptcall_map_icall);
    a.bsucc = a.taken + (size_t)g.num_taken * sizeof(struct ptcall_map_taken);
    a.succ = a.bsucc + (size_t)g.num_blocks * sizeof(struct ptcall_map_block_succ);
    return a;
}

void ptc_map_get_func_graph(const struct ptc_map_unit *u, uint32_t i,
                            struct ptcall_map_func_graph *out)
{
    memcpy(out, u->blob + graph_at(u).funcs + (size_t)i * sizeof(*out), sizeof(*out));
}

void ptc_map_get_icall(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_icall *out)
{
    memcpy(out, u->blob + graph_at(u).icalls + (size_t)j * sizeof(*out), sizeof(*out));
}

void ptc_map_get_taken(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_taken *out)
{
    memcpy(out, u->blob + graph_at(u).taken + (size_t)j * sizeof(*out), sizeof(*out));
}

void ptc_map_get_block_succ(const struct ptc_map_unit *u, uint32_t i,
                            struct ptcall_map_block_succ *out)
{
    memcpy(out, u->blob + graph_at(u).bsucc + (size_t)i * sizeof(*out), sizeof(*out));
}

uint32_t ptc_map_get_succ(const struct ptc_map_unit *u, uint32_t j)
{
    uint32_t v;
    memcpy(&v, u->blob + graph_at(u).succ + (size_t)j * sizeof(v), sizeof(v));
    return v;
}

/* Version 8: the graph part inside the blob and 8-aligned, its size what its counts say,
 * its block count the blocks part's, every function's icall range inside the icall table,
 * every icall's block a block of the unit, every taken name a string, every successor range
 * inside the successor table and every successor a block. 0 or PTC_MAP_E_GRAPH with *bad at
 * the record. */
static int check_graph(const struct ptc_map_unit *u, size_t off, size_t *bad)
{
    const struct ptcall_map_header *h = &u->hdr;
    struct ptcall_map_ext e;
    if (h->version < 8 || !ext_header(u, &e) || !e.graph_offset)
        return 0;
    uint32_t go = e.graph_offset;
    struct ptcall_map_graph g;
    *bad = off + h->ext_offset + offsetof(struct ptcall_map_ext, graph_offset);
    if (go < h->header_size || go % 8 || go + (uint64_t)sizeof(g) > h->total_size)
        return PTC_MAP_E_GRAPH;
    memcpy(&g, u->blob + go, sizeof(g));
    *bad = off + go;
    uint64_t want = sizeof(g) + (uint64_t)h->num_funcs * sizeof(struct ptcall_map_func_graph) +
                    (uint64_t)g.num_icalls * sizeof(struct ptcall_map_icall) +
                    (uint64_t)g.num_taken * sizeof(struct ptcall_map_taken) +
                    (uint64_t)g.num_blocks * sizeof(struct ptcall_map_block_succ) +
                    (uint64_t)g.num_succs * sizeof(uint32_t);
    want = (want + 7) & ~(uint64_t)7;
    struct ptcall_map_blocks b;
    uint64_t ptr;
    ptc_map_get_blocks(u, &b, &ptr);
    if (g.graph_size != want || go + want > h->total_size || g.num_blocks != b.num_blocks)
        return PTC_MAP_E_GRAPH;
    struct graph_at a = graph_at(u);
    for (uint32_t i = 0; i < h->num_funcs; i++) {
        struct ptcall_map_func_graph f;
        ptc_map_get_func_graph(u, i, &f);
        if ((uint64_t)f.first_icall + f.num_icalls > g.num_icalls) {
            *bad = off + a.funcs + (size_t)i * sizeof(f);
            return PTC_MAP_E_GRAPH;
        }
    }
    for (uint32_t j = 0; j < g.num_icalls; j++) {
        struct ptcall_map_icall c;
        ptc_map_get_icall(u, j, &c);
        if (c.block != PTCALL_MAP_NO_BLOCK && c.block >= g.num_blocks) {
            *bad = off + a.icalls + (size_t)j * sizeof(c);
            return PTC_MAP_E_GRAPH;
        }
    }
    for (uint32_t j = 0; j < g.num_taken; j++) {
        struct ptcall_map_taken t;
        ptc_map_get_taken(u, j, &t);
        if (t.name >= h->strings_size) {
            *bad = off + a.taken + (size_t)j * sizeof(t);
            return PTC_MAP_E_GRAPH;
        }
    }
    for (uint32_t i = 0; i < g.num_blocks; i++) {
        struct ptcall_map_block_succ s;
        ptc_map_get_block_succ(u, i, &s);
        if ((uint64_t)s.first_succ + s.num_succs > g.num_succs) {
            *bad = off + a.bsucc + (size_t)i * sizeof(s);
            return PTC_MAP_E_GRAPH;
        }
    }
    for (uint32_t j = 0; j < g.num_succs; j++)
        if (ptc_map_get_succ(u, j) >= g.num_blocks) {
            *bad = off + a.succ + (size_t)j * sizeof(uint32_t);
            return PTC_MAP_E_GRAPH;
        }
    return 0;
}

/* Offset of the next blob at or after off, skipping zero padding; size if none. */
static size_t skip_padding(const uint8_t *data, size_t size, size_t off)
{
    while (off < size && data[off] == 0)
        off++;
    /* the magic's first byte is non-zero, so a blob starts at the first non-zero byte */
    return off;
}

int ptc_map_walk_in(const void *data_, size_t size, uint64_t addr, uint64_t stubs_start,
                    uint64_t stubs_end, const struct ptc_map_object *obj, ptc_map_unit_fn fn,
                    void *ctx, size_t *bad_offset)
{
    const uint8_t *data = data_;
    size_t bad = 0;
    int n = 0;
    /* pass 0 validates everything; pass 1 runs the callbacks */
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        int have_sites = 0;
        uint64_t sites[2] = {0, 0};
        for (size_t off = skip_padding(data, size, 0); off < size;) {
            struct ptc_map_unit u;
            int err = check_blob(data, size, off, addr, stubs_start, stubs_end, &u, &bad);
            if (!err && pass == 0) {
                err = check_places(&u, addr, size, stubs_start, stubs_end, obj);
                if (!err && (u.hdr.flags & PTCALL_MAP_F_SLEDS)) {
                    /* every unit of an object names the object's one table */
                    if (have_sites && (u.sites_start != sites[0] || u.sites_end != sites[1]))
                        err = PTC_MAP_E_SITES_PLACE;
                    if (!err && !have_sites && obj && obj->bytes) {
                        uint64_t i;
                        const uint8_t *table =
                            (const uint8_t *)obj->bytes + (u.sites_start - obj->start);
                        err = ptc_map_check_sites(table, u.sites_start, u.sites_end,
                                                  stubs_start, stubs_end, obj, &i);
                        (void)i;
                    }
                    have_sites = 1;
                    sites[0] = u.sites_start;
                    sites[1] = u.sites_end;
                }
            }
            if (err) {
                if (bad_offset)
                    *bad_offset = bad;
                return err;
            }
            u.index = (uint32_t)n;
            if (pass == 1 && fn && fn(ctx, &u)) {
                if (bad_offset)
                    *bad_offset = off;
                return PTC_MAP_E_CALLBACK;
            }
            n++;
            off = skip_padding(data, size, off + u.hdr.total_size);
        }
        if (!fn)
            break;
    }
    return n;
}

int ptc_map_walk(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, ptc_map_unit_fn fn, void *ctx, size_t *bad_offset)
{
    return ptc_map_walk_in(data, size, addr, stubs_start, stubs_end, NULL, fn, ctx, bad_offset);
}

static int scan_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct ptc_map_summary *s = ctx;
    if ((uint64_t)s->num_stubs + u->hdr.num_stubs > UINT32_MAX / 2 ||
        (uint64_t)s->num_funcs + u->hdr.num_funcs > UINT32_MAX / 2)
        return 1;
    s->num_units++;
    s->num_stubs += u->hdr.num_stubs;
    s->num_funcs += u->hdr.num_funcs;
    s->strings_size += u->hdr.strings_size;
    s->flags_or |= u->hdr.flags;
    uint64_t h = u->hdr.unit_hash;
    uint8_t le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (uint8_t)(h >> (8 * i));
    s->identity = ptc_fnv1a64(s->identity, le, 8);
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        if (!s->stubs_max && !s->stubs_min) {
            s->stubs_min = s->stubs_max = a;
        } else {
            if (a < s->stubs_min)
                s->stubs_min = a;
            if (a > s->stubs_max)
                s->stubs_max = a;
        }
    }
    return 0;
}

int ptc_map_scan_in(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                    uint64_t stubs_end, const struct ptc_map_object *obj,
                    struct ptc_map_summary *s, size_t *bad_offset)
{
    memset(s, 0, sizeof(*s));
    s->identity = PTC_FNV1A64_INIT;
    int n = ptc_map_walk_in(data, size, addr, stubs_start, stubs_end, obj, scan_unit, s,
                            bad_offset);
    if (n == PTC_MAP_E_CALLBACK)
        return PTC_MAP_E_TOO_BIG;
    if (n < 0)
        return n;
    if (n == 0) {
        if (bad_offset)
            *bad_offset = 0;
        return PTC_MAP_E_EMPTY;
    }
    if (s->strings_size + 4096 > UINT32_MAX)
        return PTC_MAP_E_TOO_BIG;
    return 0;
}

int ptc_map_scan(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, struct ptc_map_summary *s, size_t *bad_offset)
{
    return ptc_map_scan_in(data, size, addr, stubs_start, stubs_end, NULL, s, bad_offset);
}

size_t ptc_map_module_size(const struct ptc_map_summary *s, const char *path)
{
    return sizeof(struct ptc_module) + (size_t)s->num_stubs * sizeof(struct ptc_module_stub) +
           (size_t)s->num_funcs * sizeof(struct ptc_module_func) + (size_t)s->strings_size +
           strlen(path ? path : "") + 1;
}

struct build_ctx {
    uint8_t *stubs, *funcs, *strings;
    uint32_t nstub, nfunc;
    uint64_t strpos;
    uint32_t limit_stubs, limit_funcs;
    uint64_t limit_strings;
    int leaf_calls;
};

static int build_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct build_ctx *b = ctx;
    if (b->nstub + (uint64_t)u->hdr.num_stubs > b->limit_stubs ||
        b->nfunc + (uint64_t)u->hdr.num_funcs > b->limit_funcs ||
        b->strpos + u->hdr.strings_size > b->limit_strings)
        return 1; /* the summary does not match these bytes */
    uint32_t func_base = b->nfunc;
    uint32_t str_base = (uint32_t)b->strpos;
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        struct ptc_module_stub ms;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        ms.address = a;
        ms.func = func_base + st.func_index;
        ms.kind = st.kind & PTCALL_STUB_KIND_MASK;
        if (b->leaf_calls && ptc_map_leaf_quiet(u, &st) && ms.kind == PTCALL_STUB_ENTRY)
            ms.kind = PTC_STUB_CALL;
        ms.site = st.site;
        memcpy(b->stubs + (size_t)b->nstub++ * sizeof(ms), &ms, sizeof(ms));
    }
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++) {
        struct ptcall_map_func f;
        struct ptc_module_func mf;
        ptc_map_get_func(u, i, &f);
        mf.name = str_base + f.name;
        mf.linkage_name = str_base + f.linkage_name;
        mf.file = str_base + f.file;
        mf.line = f.line;
        memcpy(b->funcs + (size_t)b->nfunc++ * sizeof(mf), &mf, sizeof(mf));
    }
    memcpy(b->strings + b->strpos, u->strings, u->hdr.strings_size);
    b->strpos += u->hdr.strings_size;
    return 0;
}

long ptc_map_build_module(const void *data, size_t size, uint64_t addr,
                          const struct ptc_map_summary *s, const struct ptc_module *info,
                          const char *path, unsigned flags, void *out, size_t out_size)
{
    if (!path)
        path = "";
    size_t need = ptc_map_module_size(s, path);
    if (out_size < need)
        return PTC_MAP_E_BUFFER;
    uint8_t *o = out;
    struct ptc_module m = *info;
    m.num_stubs = s->num_stubs;
    m.num_funcs = s->num_funcs;
    m.identity = s->identity;
    m.path = (uint32_t)s->strings_size;
    m.strings_size = (uint32_t)(s->strings_size + strlen(path) + 1);
    memcpy(o, &m, sizeof(m));
    struct build_ctx b = {
        .stubs = o + sizeof(m),
        .funcs = o + sizeof(m) + (size_t)s->num_stubs * sizeof(struct ptc_module_stub),
        .limit_stubs = s->num_stubs,
        .limit_funcs = s->num_funcs,
        .limit_strings = s->strings_size,
        .leaf_calls = (flags & PTC_MAP_BUILD_LEAF_CALLS) != 0,
    };
    b.strings = b.funcs + (size_t)s->num_funcs * sizeof(struct ptc_module_func);
    int n = ptc_map_walk(data, size, addr, 0, 0, build_unit, &b, NULL);
    if (n < 0)
        return n;
    if (b.nstub != s->num_stubs || b.nfunc != s->num_funcs || b.strpos != s->strings_size)
        return PTC_MAP_E_CALLBACK;
    memcpy(b.strings + b.strpos, path, strlen(path) + 1);
    return (long)need;
}
