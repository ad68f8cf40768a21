/* Reading the `ptcall_map` section; see ptc_map_read.h. */
#include "ptc_map_read.h"

#include <string.h>

#include "ptc_chunk_write.h"

const char *ptc_map_strerror(int err)
{
    switch (err) {
    case PTC_MAP_OK: return "ok";
    case PTC_MAP_E_TRUNCATED: return "map blob truncated (runs past the end of the section)";
    case PTC_MAP_E_MAGIC: return "bad map blob magic";
    case PTC_MAP_E_VERSION: return "unsupported map version";
    case PTC_MAP_E_SITES: return "call-site table bounds out of order or misaligned";
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
    u->slot_addr = u->addr + offsetof(struct ptcall_map_header, soft_slot_rel) +
                   (uint64_t)h.soft_slot_rel;
    u->sites_start = u->sites_end = 0;
    if (h.flags & PTCALL_MAP_F_SLEDS) {
        u->sites_start = u->addr + offsetof(struct ptcall_map_header, sites_rel) +
                         (uint64_t)h.sites_rel;
        u->sites_end = u->addr + offsetof(struct ptcall_map_header, sites_end_rel) +
                       (uint64_t)h.sites_end_rel;
        if (u->sites_end < u->sites_start ||
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
    *bad = off;
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

int ptc_map_walk(const void *data_, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, ptc_map_unit_fn fn, void *ctx, size_t *bad_offset)
{
    const uint8_t *data = data_;
    size_t bad = 0;
    int n = 0;
    /* pass 0 validates everything; pass 1 runs the callbacks */
    for (int pass = 0; pass < 2; pass++) {
        n = 0;
        for (size_t off = skip_padding(data, size, 0); off < size;) {
            struct ptc_map_unit u;
            int err = check_blob(data, size, off, addr, stubs_start, stubs_end, &u, &bad);
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

int ptc_map_scan(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, struct ptc_map_summary *s, size_t *bad_offset)
{
    memset(s, 0, sizeof(*s));
    s->identity = PTC_FNV1A64_INIT;
    int n = ptc_map_walk(data, size, addr, stubs_start, stubs_end, scan_unit, s, bad_offset);
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
