/* Unit tests of common/ptc_map_read.c: valid sections (one and several blobs, padding,
 * bytes read at a different address than their run-time one), the module chunk payload,
 * and each corruption the reader must reject. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_chunk_write.h"
#include "ptc_map_read.h"
#include "ptc_sled.h"
#include "rt_check.h"


/* The test lays out a section in `sec` as if it lived at run-time address SEC_ADDR, with
 * stubs at STUBS_ADDR. */
#define SEC_ADDR 0x500000ull
#define STUBS_ADDR 0x400000ull
#define STUBS_SIZE 0x1000ull
static uint8_t sec[4096] __attribute__((aligned(16)));

static const char strings1[] = "\0unit1.c\0main\0_Z4mainv\0helper\0";
/* offsets in strings1: "" 0, unit1.c 1, main 9, _Z4mainv 14, helper 23 */

/* Writes a blob with nfuncs functions (main, helper) and 2 stubs per function at off;
 * stub k of the blob is at STUBS_ADDR + (first_slot + k) * 16. Returns its size. */
static size_t put_blob(size_t off, uint64_t hash, uint32_t first_slot)
{
    struct ptcall_map_header h;
    memset(&h, 0, sizeof(h));
    h.magic = PTCALL_MAP_MAGIC;
    h.version = PTCALL_MAP_VERSION;
    h.header_size = sizeof(h);
    h.flags = PTCALL_MAP_F_EXITS;
    h.unit_hash = hash;
    h.num_stubs = 4;
    h.num_funcs = 2;
    h.stubs_offset = sizeof(h);
    h.funcs_offset = h.stubs_offset + 4 * sizeof(struct ptcall_map_stub);
    h.strings_offset = h.funcs_offset + 2 * sizeof(struct ptcall_map_func);
    h.strings_size = sizeof(strings1);
    h.total_size = (h.strings_offset + h.strings_size + 7) & ~7u;
    h.source_name = 1;
    uint64_t blob_addr = SEC_ADDR + off;
    uint64_t slot = 0x600000 + off;
    h.soft_slot_rel = (int64_t)(slot - (blob_addr + offsetof(struct ptcall_map_header, soft_slot_rel)));
    memcpy(sec + off, &h, sizeof(h));
    for (uint32_t k = 0; k < 4; k++) {
        struct ptcall_map_stub st;
        uint64_t field = blob_addr + h.stubs_offset + k * sizeof(st);
        st.stub_rel = (int64_t)(STUBS_ADDR + (first_slot + k) * 16 - field);
        st.func_index = k / 2;
        st.kind = k % 2 ? PTCALL_STUB_EXIT : PTCALL_STUB_ENTRY;
        st.site = 0;
        memcpy(sec + off + h.stubs_offset + k * sizeof(st), &st, sizeof(st));
    }
    struct ptcall_map_func f[2] = {{9, 14, 1, 10}, {23, 23, 1, 20}};
    memcpy(sec + off + h.funcs_offset, f, sizeof(f));
    memcpy(sec + off + h.strings_offset, strings1, sizeof(strings1));
    return h.total_size;
}

static struct ptcall_map_header *hdr_at(size_t off) { return (struct ptcall_map_header *)(sec + off); }

static int count_cb(void *ctx, const struct ptc_map_unit *u)
{
    int *n = ctx;
    (*n)++;
    /* stub addresses and slot */
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        CHECK(a >= STUBS_ADDR && a < STUBS_ADDR + STUBS_SIZE && a % 16 == 0);
    }
    CHECK(u->slot_addr == 0x600000 + u->offset);
    CHECK(!strcmp(u->strings + u->hdr.source_name, "unit1.c"));
    return 0;
}

static void test_valid(void)
{
    memset(sec, 0, sizeof(sec));
    size_t n1 = put_blob(0, 0x1111, 0);
    size_t off2 = n1 + 16; /* 16 bytes of zero padding between blobs */
    size_t n2 = put_blob(off2, 0x2222, 4);
    size_t size = off2 + n2 + 8; /* trailing padding */
    int units = 0;
    size_t bad = 99;
    CHECK(ptc_map_walk(sec, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, count_cb, &units,
                       &bad) == 2);
    CHECK(units == 2);

    struct ptc_map_summary s;
    CHECK(ptc_map_scan(sec, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s, &bad) == 0);
    CHECK(s.num_units == 2 && s.num_stubs == 8 && s.num_funcs == 4);
    CHECK(s.strings_size == 2 * sizeof(strings1));
    CHECK(s.stubs_min == STUBS_ADDR && s.stubs_max == STUBS_ADDR + 7 * 16);
    uint64_t id = PTC_FNV1A64_INIT, h1 = 0x1111, h2 = 0x2222;
    id = ptc_fnv1a64(id, &h1, 8);
    id = ptc_fnv1a64(id, &h2, 8);
    CHECK(s.identity == id);

    /* the same bytes copied elsewhere (as from an ELF file) resolve to the same addresses */
    uint8_t *copy = malloc(size + 3);
    memcpy(copy + 3, sec, size); /* unaligned on purpose */
    struct ptc_map_summary s2;
    CHECK(ptc_map_scan(copy + 3, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s2, &bad) == 0);
    CHECK(!memcmp(&s, &s2, sizeof(s)));

    const char *path = "/usr/bin/thing";
    size_t need = ptc_map_module_size(&s, path);
    uint8_t *out = malloc(need);
    struct ptc_module info;
    memset(&info, 0, sizeof(info));
    info.module_id = 3;
    info.first_stub_id = 100;
    info.load_bias = 0x1000;
    info.stubs_start = STUBS_ADDR;
    info.stubs_end = STUBS_ADDR + STUBS_SIZE;
    CHECK(ptc_map_build_module(copy + 3, size, SEC_ADDR, &s, &info, path, 0, out, need - 1) ==
          PTC_MAP_E_BUFFER);
    long len = ptc_map_build_module(copy + 3, size, SEC_ADDR, &s, &info, path, 0, out, need);
    CHECK(len == (long)need);
    struct ptc_module m;
    memcpy(&m, out, sizeof(m));
    CHECK(m.module_id == 3 && m.first_stub_id == 100 && m.num_stubs == 8 && m.num_funcs == 4);
    CHECK(m.identity == id && m.load_bias == 0x1000);
    CHECK(m.strings_size == 2 * sizeof(strings1) + strlen(path) + 1);
    const struct ptc_module_stub *ms = (const void *)(out + sizeof(m));
    const struct ptc_module_func *mf = (const void *)(out + sizeof(m) + 8 * sizeof(*ms));
    const char *str = (const char *)(mf + 4);
    for (int k = 0; k < 8; k++) {
        CHECK(ms[k].address == STUBS_ADDR + (uint64_t)k * 16);
        CHECK(ms[k].func == (uint32_t)(k / 2)); /* renumbered: unit 2's funcs are 2, 3 */
        CHECK(ms[k].kind == (k % 2 ? PTCALL_STUB_EXIT : PTCALL_STUB_ENTRY));
    }
    CHECK(!strcmp(str + mf[0].name, "main") && !strcmp(str + mf[0].linkage_name, "_Z4mainv"));
    CHECK(!strcmp(str + mf[1].name, "helper") && mf[1].line == 20);
    CHECK(!strcmp(str + mf[2].name, "main") && !strcmp(str + mf[3].file, "unit1.c"));
    CHECK(mf[2].name == mf[0].name + sizeof(strings1));
    CHECK(!strcmp(str + m.path, path));
    free(out);
    free(copy);
}

/* Leaf records (version 4): the MODULE chunk keeps kinds as they are unless asked for whole
 * calls, and then only in units whose sites are sleds, and only for the entries. */
static void test_leaf_calls(void)
{
    memset(sec, 0, sizeof(sec));
    size_t size = put_blob(0, 0x1111, 0);
    struct ptcall_map_header *h = hdr_at(0);
    for (uint32_t k = 0; k < 2; k++) { /* main (stubs 0, 1) is a leaf, helper is not */
        uint16_t kind = (k % 2 ? PTCALL_STUB_EXIT : PTCALL_STUB_ENTRY) | PTCALL_STUB_F_LEAF;
        memcpy(sec + h->stubs_offset + k * sizeof(struct ptcall_map_stub) + 12, &kind, 2);
    }
    struct ptc_map_summary s;
    size_t bad;
    /* an empty call-site table of the object's (0x700000): with sites_rel 0 the table
     * would be the header's own bytes, which the reader refuses */
    h->sites_rel = (int64_t)(0x700000 - (SEC_ADDR + offsetof(struct ptcall_map_header, sites_rel)));
    h->sites_end_rel =
        (int64_t)(0x700000 - (SEC_ADDR + offsetof(struct ptcall_map_header, sites_end_rel)));
    for (int sleds = 0; sleds < 2; sleds++) {
        h->flags = PTCALL_MAP_F_EXITS | (sleds ? PTCALL_MAP_F_SLEDS : 0);
        CHECK(ptc_map_scan(sec, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s, &bad) == 0);
        struct ptc_module info;
        memset(&info, 0, sizeof(info));
        size_t need = ptc_map_module_size(&s, "x");
        uint8_t *out = malloc(need);
        for (unsigned fl = 0; fl < 2; fl++) {
            CHECK(ptc_map_build_module(sec, size, SEC_ADDR, &s, &info, "x",
                                       fl ? PTC_MAP_BUILD_LEAF_CALLS : 0, out, need) == (long)need);
            const struct ptc_module_stub *ms = (const void *)(out + sizeof(struct ptc_module));
            int whole = fl && sleds;
            CHECK(ms[0].kind == (whole ? PTC_STUB_CALL : PTCALL_STUB_ENTRY));
            CHECK(ms[1].kind == PTCALL_STUB_EXIT); /* the flag never reaches the trace */
            CHECK(ms[2].kind == PTCALL_STUB_ENTRY && ms[3].kind == PTCALL_STUB_EXIT);
        }
        free(out);
    }
}

typedef void (*corrupt_fn)(size_t *size);

static void c_magic(size_t *s) { (void)s; hdr_at(0)->magic ^= 1; }
static void c_version(size_t *s) { (void)s; hdr_at(0)->version = PTCALL_MAP_VERSION + 1; }
static void c_version0(size_t *s) { (void)s; hdr_at(0)->version = PTCALL_MAP_VERSION_MIN - 1; }
static void c_hsize(size_t *s) { (void)s; hdr_at(0)->header_size = 8; }
static void c_total_odd(size_t *s) { (void)s; hdr_at(0)->total_size += 4; }
static void c_total_big(size_t *s) { (void)s; hdr_at(0)->total_size += 4096; }
static void c_trunc_hdr(size_t *s) { *s = 40; }
static void c_trunc_tail(size_t *s) { *s -= 8; }
static void c_stubs(size_t *s) { (void)s; hdr_at(0)->num_stubs = 1000; }
static void c_stubs_off(size_t *s) { (void)s; hdr_at(0)->stubs_offset = 4; }
static void c_funcs(size_t *s) { (void)s; hdr_at(0)->funcs_offset = 0xfffffff0u; }
static void c_strings(size_t *s) { (void)s; hdr_at(0)->strings_size += 64; }
static void c_strings_nul(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    sec[h->strings_offset + h->strings_size - 1] = 'x';
}
static void c_source(size_t *s) { (void)s; hdr_at(0)->source_name = 1000; }
static void c_fname(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    uint32_t bad = 5000;
    memcpy(sec + h->funcs_offset + 4, &bad, 4); /* linkage_name of func 0 */
}
static void c_findex(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    uint32_t bad = 2;
    memcpy(sec + h->stubs_offset + 16 + 8, &bad, 4);
}
static void c_kind(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    uint16_t bad = 9;
    memcpy(sec + h->stubs_offset + 12, &bad, 2);
}
/* the leaf flag on a landing record, an unknown flag, the flag in a version 3 blob */
static void set_kind(uint16_t k)
{
    memcpy(sec + hdr_at(0)->stubs_offset + 12, &k, 2);
}
static void c_leaf_landing(size_t *s) { (void)s; set_kind(PTCALL_STUB_LANDING | PTCALL_STUB_F_LEAF); }
static void c_kind_flag(size_t *s) { (void)s; set_kind(PTCALL_STUB_ENTRY | 0x200); }
static void c_leaf_v3(size_t *s)
{
    (void)s;
    hdr_at(0)->version = 3;
    set_kind(PTCALL_STUB_ENTRY | PTCALL_STUB_F_LEAF);
}
static void c_range(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    int64_t rel;
    memcpy(&rel, sec + h->stubs_offset, 8);
    rel += (int64_t)STUBS_SIZE;
    memcpy(sec + h->stubs_offset, &rel, 8);
}
static void c_align(size_t *s)
{
    (void)s;
    struct ptcall_map_header *h = hdr_at(0);
    int64_t rel;
    memcpy(&rel, sec + h->stubs_offset, 8);
    rel += 4;
    memcpy(sec + h->stubs_offset, &rel, 8);
}
static void c_empty(size_t *s) { memset(sec, 0, *s); }
static void c_garbage_after(size_t *s) { sec[*s] = 0x7f; *s += 8; }

static void test_corrupt(void)
{
    static const struct {
        const char *name;
        corrupt_fn fn;
        int err;
    } cases[] = {
        {"magic", c_magic, PTC_MAP_E_MAGIC},
        {"version", c_version, PTC_MAP_E_VERSION},
        {"version-too-old", c_version0, PTC_MAP_E_VERSION},
        {"header size", c_hsize, PTC_MAP_E_HEADER_SIZE},
        {"total size odd", c_total_odd, PTC_MAP_E_TOTAL_SIZE},
        {"total size too big", c_total_big, PTC_MAP_E_TRUNCATED},
        {"truncated header", c_trunc_hdr, PTC_MAP_E_TRUNCATED},
        {"truncated blob", c_trunc_tail, PTC_MAP_E_TRUNCATED},
        {"stub count", c_stubs, PTC_MAP_E_STUBS_BOUNDS},
        {"stub offset", c_stubs_off, PTC_MAP_E_STUBS_BOUNDS},
        {"func offset", c_funcs, PTC_MAP_E_FUNCS_BOUNDS},
        {"strings size", c_strings, PTC_MAP_E_STRINGS_BOUNDS},
        {"strings NUL", c_strings_nul, PTC_MAP_E_STRINGS_BOUNDS},
        {"source name", c_source, PTC_MAP_E_STRING_OFFSET},
        {"func string", c_fname, PTC_MAP_E_STRING_OFFSET},
        {"func index", c_findex, PTC_MAP_E_FUNC_INDEX},
        {"kind", c_kind, PTC_MAP_E_KIND},
        {"leaf flag on a landing", c_leaf_landing, PTC_MAP_E_KIND},
        {"unknown kind flag", c_kind_flag, PTC_MAP_E_KIND},
        {"leaf flag before version 4", c_leaf_v3, PTC_MAP_E_KIND},
        {"stub range", c_range, PTC_MAP_E_STUB_RANGE},
        {"stub align", c_align, PTC_MAP_E_STUB_ALIGN},
        {"empty", c_empty, PTC_MAP_E_EMPTY},
        {"garbage after blob", c_garbage_after, PTC_MAP_E_MAGIC},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memset(sec, 0, sizeof(sec));
        size_t size = put_blob(0, 0x1111, 0);
        cases[i].fn(&size);
        struct ptc_map_summary s;
        size_t bad = 0;
        int err = ptc_map_scan(sec, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s, &bad);
        if (err != cases[i].err) {
            fprintf(stderr, "corrupt case '%s': got %d (%s), want %d\n", cases[i].name, err,
                    ptc_map_strerror(err), cases[i].err);
            failures++;
        }
        CHECK(bad <= size);
        /* a walk with a callback must not call it for a corrupt section */
        int units = 0;
        CHECK(ptc_map_walk(sec, size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, count_cb,
                           &units, NULL) < 0 ||
              cases[i].err == PTC_MAP_E_EMPTY);
        CHECK(units == 0);
    }
    /* the oldest supported version still reads (v1: ungated call sites) */
    {
        memset(sec, 0, sizeof(sec));
        size_t sz = put_blob(0, 0x1111, 0);
        hdr_at(0)->version = PTCALL_MAP_VERSION_MIN;
        struct ptc_map_summary s1;
        CHECK(ptc_map_scan(sec, sz, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s1, NULL) == 0);
    }
    /* without stub bounds, range and alignment are not checked */
    memset(sec, 0, sizeof(sec));
    size_t size = put_blob(0, 1, 0);
    c_align(&size);
    struct ptc_map_summary s;
    CHECK(ptc_map_scan(sec, size, SEC_ADDR, 0, 0, &s, NULL) == 0);
    for (int e = 0; e >= -18; e--)
        CHECK(strlen(ptc_map_strerror(e)) > 0);
}

static int sites_cb(void *ctx, const struct ptc_map_unit *u)
{
    uint64_t *out = ctx;
    out[0] = u->sites_start;
    out[1] = u->sites_end;
    return 0;
}

/* v3 sled table bounds resolve relative to their fields; reversed or misaligned bounds are
 * rejected; a v2 blob (64-byte header) still reads, with no sled table. */
static void test_sites(void)
{
    memset(sec, 0, sizeof(sec));
    size_t sz = put_blob(0, 0x2222, 0);
    struct ptcall_map_header *h = hdr_at(0);
    h->flags |= PTCALL_MAP_F_SLEDS;
    h->sites_rel = (int64_t)(0x700000 - (SEC_ADDR + offsetof(struct ptcall_map_header, sites_rel)));
    h->sites_end_rel = (int64_t)(0x700000 + 5 * sizeof(struct ptcall_map_site) -
                                 (SEC_ADDR + offsetof(struct ptcall_map_header, sites_end_rel)));
    uint64_t got[2] = {0, 0};
    CHECK(ptc_map_walk(sec, sz, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, sites_cb, got,
                       NULL) == 1);
    CHECK(got[0] == 0x700000 && got[1] == 0x700000 + 5 * sizeof(struct ptcall_map_site));
    h->sites_end_rel -= 3; /* not a whole number of entries */
    CHECK(ptc_map_walk(sec, sz, SEC_ADDR, 0, 0, sites_cb, got, NULL) == PTC_MAP_E_SITES);
    h->sites_end_rel -= 64; /* end before start */
    CHECK(ptc_map_walk(sec, sz, SEC_ADDR, 0, 0, sites_cb, got, NULL) == PTC_MAP_E_SITES);

    /* a version 2 blob: 64-byte header, the table at offset 64; F_SLEDS means nothing there */
    memset(sec, 0, sizeof(sec));
    sz = put_blob(0, 0x3333, 0);
    h = hdr_at(0);
    size_t shift = sizeof(*h) - PTCALL_MAP_HEADER_SIZE_V2;
    memmove(sec + PTCALL_MAP_HEADER_SIZE_V2, sec + sizeof(*h), sz - sizeof(*h));
    h->version = 2;
    h->header_size = PTCALL_MAP_HEADER_SIZE_V2;
    h->stubs_offset -= (uint32_t)shift;
    h->funcs_offset -= (uint32_t)shift;
    h->strings_offset -= (uint32_t)shift;
    h->total_size = (h->strings_offset + h->strings_size + 7) & ~7u;
    h->flags |= PTCALL_MAP_F_SLEDS;
    for (uint32_t k = 0; k < 4; k++) { /* the stub fields moved closer to their stubs */
        struct ptcall_map_stub st;
        memcpy(&st, sec + h->stubs_offset + k * sizeof(st), sizeof(st));
        st.stub_rel += (int64_t)shift;
        memcpy(sec + h->stubs_offset + k * sizeof(st), &st, sizeof(st));
    }
    got[0] = got[1] = 1;
    CHECK(ptc_map_walk(sec, h->total_size, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE,
                       sites_cb, got, NULL) == 1);
    CHECK(got[0] == 0 && got[1] == 0);
}

/* Sled arithmetic: nop <-> call rel32 inside one aligned word, idempotence, and the sites it
 * must leave alone. */
static void test_sled_patch(void)
{
    const uint8_t nop[5] = PTCALL_SLED_NOP;
    uint8_t w[8] = {0xaa, 0xbb, 0xcc, 0, 0, 0, 0, 0xdd};
    memcpy(w + 2, nop, 5); /* sled at offset 2 of the word */
    uint64_t word, armed, back;
    memcpy(&word, w, 8);
    uint64_t site = 0x401002, stub = 0x402000;
    CHECK(ptc_sled_word_addr(site) == 0x401000);
    CHECK(ptc_sled_patch(site, stub, 1, word, &armed) == PTC_SLED_CHANGED);
    uint8_t a[8];
    memcpy(a, &armed, 8);
    int32_t rel;
    memcpy(&rel, a + 3, 4);
    CHECK(a[0] == 0xaa && a[1] == 0xbb && a[7] == 0xdd && a[2] == PTCALL_SLED_CALL);
    CHECK(rel == (int32_t)(stub - (site + 5)));
    CHECK(ptc_sled_patch(site, stub, 1, armed, &back) == PTC_SLED_ALREADY);
    CHECK(ptc_sled_patch(site, stub, 0, armed, &back) == PTC_SLED_CHANGED && back == word);
    CHECK(ptc_sled_patch(site, stub, 0, word, &back) == PTC_SLED_ALREADY);
    CHECK(ptc_sled_patch(site, stub, 1, 0, &back) == PTC_SLED_E_CODE);
    CHECK(ptc_sled_patch(site, site + 0x100000000ull, 1, word, &back) == PTC_SLED_E_FAR);
    CHECK(ptc_sled_patch(0x401004, stub, 1, word, &back) == PTC_SLED_E_ALIGN);
    /* the trampoline form: jmp instead of call, switchable from and to either state */
    uint64_t tramp = 0x7f0000, jumped, called;
    CHECK(ptc_sled_patch(site, tramp, PTC_SLED_WANT_JMP, word, &jumped) == PTC_SLED_CHANGED);
    memcpy(a, &jumped, 8);
    memcpy(&rel, a + 3, 4);
    CHECK(a[2] == PTCALL_SLED_JMP && rel == (int32_t)(tramp - (site + 5)) && a[7] == 0xdd);
    CHECK(ptc_sled_patch(site, tramp, PTC_SLED_WANT_JMP, jumped, &back) == PTC_SLED_ALREADY);
    CHECK(ptc_sled_patch(site, stub, PTC_SLED_WANT_CALL, jumped, &called) == PTC_SLED_CHANGED &&
          called == armed);
    CHECK(ptc_sled_patch(site, tramp, PTC_SLED_WANT_JMP, armed, &back) == PTC_SLED_CHANGED &&
          back == jumped);
    CHECK(ptc_sled_patch(site, 0, PTC_SLED_WANT_NOP, jumped, &back) == PTC_SLED_CHANGED &&
          back == word);
    /* a table entry resolves relative to its fields */
    struct ptcall_map_site e = {.site_rel = 0x100, .stub_rel = -0x200};
    uint64_t s2, t2;
    int is_ret = -1;
    ptc_sled_entry(&e, 0x9000, 0, &s2, &t2, &is_ret);
    CHECK(s2 == 0x9100 && t2 == 0x9004 - 0x200 && is_ret == 0);
    /* v5: bit 0 of the stub marks a ret sled and is not part of the stub */
    struct ptcall_map_site r = {.site_rel = 0x100, .stub_rel = -0x200 + (int32_t)PTCALL_SITE_RET};
    ptc_sled_entry(&r, 0x9000, 0, &s2, &t2, &is_ret);
    CHECK(s2 == 0x9100 && t2 == 0x9004 - 0x200 && is_ret == 1);
}

/* Ret sleds (map v5): `ret` + 4 never-executed bytes; armed `jmp stub`, written rel32 first. */
static void test_ret_sled_patch(void)
{
    const uint8_t disarmed[5] = {PTCALL_SLED_RET, 0xcc, 0xcc, 0xcc, 0xcc};
    uint8_t out[5], back[5];
    uint64_t site = 0x401006, stub = 0x402010, tramp = 0x7f0000;
    int32_t rel;
    CHECK(!ptc_ret_sled_fits(site) && ptc_ret_sled_fits(0x401003) && !ptc_ret_sled_fits(0x401004));
    /* both armed forms are a jump: the target's ret returns to the function's caller */
    CHECK(ptc_ret_sled_patch(site, stub, PTC_SLED_WANT_CALL, disarmed, out) == PTC_SLED_CHANGED);
    memcpy(&rel, out + 1, 4);
    CHECK(out[0] == PTCALL_SLED_JMP && rel == (int32_t)(stub - (site + 5)));
    CHECK(ptc_ret_sled_patch(site, stub, PTC_SLED_WANT_JMP, out, back) == PTC_SLED_ALREADY);
    /* arming from c3: the rel32, then the opcode byte */
    struct ptc_ret_step st[3];
    int n = ptc_ret_sled_steps(disarmed, out, st);
    CHECK(n == 2 && st[0].off == 1 && st[0].len == 4 && memcmp(st[0].bytes, out + 1, 4) == 0 &&
          st[1].off == 0 && st[1].len == 1 && st[1].bytes[0] == PTCALL_SLED_JMP);
    /* retargeting an armed sled goes through ret */
    CHECK(ptc_ret_sled_patch(site, tramp, PTC_SLED_WANT_JMP, out, back) == PTC_SLED_CHANGED);
    n = ptc_ret_sled_steps(out, back, st);
    CHECK(n == 3 && st[0].off == 0 && st[0].bytes[0] == PTCALL_SLED_RET && st[1].off == 1 &&
          st[2].off == 0 && st[2].bytes[0] == PTCALL_SLED_JMP);
    /* disarming writes the opcode byte only */
    CHECK(ptc_ret_sled_patch(site, 0, PTC_SLED_WANT_NOP, out, back) == PTC_SLED_CHANGED);
    CHECK(back[0] == PTCALL_SLED_RET && memcmp(back + 1, out + 1, 4) == 0);
    n = ptc_ret_sled_steps(out, back, st);
    CHECK(n == 1 && st[0].off == 0 && st[0].len == 1 && st[0].bytes[0] == PTCALL_SLED_RET);
    CHECK(ptc_ret_sled_patch(site, 0, PTC_SLED_WANT_NOP, disarmed, back) == PTC_SLED_ALREADY);
    /* anything but c3 or e9 at the site is not ours; out of reach is refused */
    const uint8_t nop[5] = PTCALL_SLED_NOP;
    CHECK(ptc_ret_sled_patch(site, stub, PTC_SLED_WANT_CALL, nop, out) == PTC_SLED_E_CODE);
    CHECK(ptc_ret_sled_patch(site, site + 0x100000000ull, PTC_SLED_WANT_CALL, disarmed, out) ==
          PTC_SLED_E_FAR);
}

/* Every truncation and every single-byte change of a valid section must be rejected or
 * accepted without reading out of bounds (ASan build), and accepted sections must build. */
static void test_fuzz(void)
{
    memset(sec, 0, sizeof(sec));
    size_t n = put_blob(0, 7, 0);
    uint8_t orig[512];
    memcpy(orig, sec, n);
    for (size_t cut = 0; cut <= n; cut++) {
        uint8_t *b = malloc(cut ? cut : 1);
        memcpy(b, orig, cut);
        struct ptc_map_summary s;
        int err = ptc_map_scan(b, cut, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s, NULL);
        CHECK(cut == n ? err == 0 : err < 0);
        free(b);
    }
    for (size_t i = 0; i < n; i++) {
        for (int bit = 0; bit < 8; bit++) {
            uint8_t *b = malloc(n);
            memcpy(b, orig, n);
            b[i] ^= (uint8_t)(1 << bit);
            struct ptc_map_summary s;
            int err = ptc_map_scan(b, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, &s, NULL);
            if (err == 0) {
                size_t need = ptc_map_module_size(&s, "x");
                uint8_t *out = malloc(need);
                struct ptc_module info;
                memset(&info, 0, sizeof(info));
                CHECK(ptc_map_build_module(b, n, SEC_ADDR, &s, &info, "x", 0, out, need) == (long)need);
                free(out);
            }
            free(b);
        }
    }
}

/* Where a unit's slot and call-site table lie: a map can pass every check of its own bytes
 * and still send the runtime to write its slot, or read and patch sleds, anywhere. Without
 * the object the reader refuses what cannot be right anywhere (misaligned, over the map or
 * the stubs, wrapping, units that disagree); with it (ptc_map_walk_in), whatever is not
 * inside it. An object is laid out in obj[]: stubs, code with sleds, the map, the call-site
 * table and the slot, at their real addresses (as the runtime reads them). */
static uint8_t obj[0x2000] __attribute__((aligned(4096)));
enum { O_STUBS = 0x0, O_TEXT = 0x400, O_MAP = 0x800, O_SITES = 0x1000, O_SLOT = 0x1100 };
#define OBJ ((uint64_t)(uintptr_t)obj)

/* one v5 blob with sleds at O_MAP (4 stubs), 3 call sites; returns its size */
static size_t put_object(void)
{
    memset(obj, 0, sizeof(obj));
    struct ptcall_map_header h;
    memset(&h, 0, sizeof(h));
    h.magic = PTCALL_MAP_MAGIC;
    h.version = PTCALL_MAP_VERSION;
    h.header_size = sizeof(h);
    h.flags = PTCALL_MAP_F_EXITS | PTCALL_MAP_F_SLEDS;
    h.num_stubs = 4;
    h.num_funcs = 2;
    h.stubs_offset = sizeof(h);
    h.funcs_offset = h.stubs_offset + 4 * sizeof(struct ptcall_map_stub);
    h.strings_offset = h.funcs_offset + 2 * sizeof(struct ptcall_map_func);
    h.strings_size = sizeof(strings1);
    h.total_size = (h.strings_offset + h.strings_size + 7) & ~7u;
    h.source_name = 1;
    uint64_t blob = OBJ + O_MAP;
    h.soft_slot_rel = (int64_t)(OBJ + O_SLOT - (blob + offsetof(struct ptcall_map_header, soft_slot_rel)));
    h.sites_rel = (int64_t)(OBJ + O_SITES - (blob + offsetof(struct ptcall_map_header, sites_rel)));
    h.sites_end_rel = (int64_t)(OBJ + O_SITES + 3 * sizeof(struct ptcall_map_site) -
                                (blob + offsetof(struct ptcall_map_header, sites_end_rel)));
    memcpy(obj + O_MAP, &h, sizeof(h));
    for (uint32_t k = 0; k < 4; k++) {
        struct ptcall_map_stub st = {.func_index = k / 2,
                                     .kind = k % 2 ? PTCALL_STUB_EXIT : PTCALL_STUB_ENTRY};
        uint64_t field = blob + h.stubs_offset + k * sizeof(st);
        st.stub_rel = (int64_t)(OBJ + O_STUBS + 16 * k - field);
        memcpy(obj + O_MAP + h.stubs_offset + k * sizeof(st), &st, sizeof(st));
        obj[O_STUBS + 16 * k] = 0xc3;
    }
    struct ptcall_map_func f[2] = {{9, 14, 1, 10}, {23, 23, 1, 20}};
    memcpy(obj + O_MAP + h.funcs_offset, f, sizeof(f));
    memcpy(obj + O_MAP + h.strings_offset, strings1, sizeof(strings1));
    /* sites: two nop sleds calling stubs 0 and 2, a ret sled jumping to stub 3 */
    static const uint64_t site[3] = {O_TEXT + 0x10, O_TEXT + 0x40, O_TEXT + 0x83};
    static const uint64_t stub[3] = {0, 2, 3};
    for (int i = 0; i < 3; i++) {
        uint64_t e = OBJ + O_SITES + (uint64_t)i * sizeof(struct ptcall_map_site);
        struct ptcall_map_site ms;
        ms.site_rel = (int32_t)(int64_t)(OBJ + site[i] - (e + offsetof(struct ptcall_map_site, site_rel)));
        ms.stub_rel = (int32_t)(int64_t)(OBJ + O_STUBS + 16 * stub[i] -
                                          (e + offsetof(struct ptcall_map_site, stub_rel))) +
                      (i == 2 ? (int32_t)PTCALL_SITE_RET : 0);
        memcpy(obj + O_SITES + (size_t)i * sizeof(ms), &ms, sizeof(ms));
    }
    return h.total_size;
}

static int walk_obj(size_t size, int with_object)
{
    struct ptc_map_object o = {.bytes = obj, .start = OBJ, .size = sizeof(obj)};
    return ptc_map_walk_in(obj + O_MAP, size, OBJ + O_MAP, OBJ + O_STUBS, OBJ + O_STUBS + 0x400,
                           with_object ? &o : NULL, NULL, NULL, NULL);
}

static struct ptcall_map_header *obj_hdr(void) { return (struct ptcall_map_header *)(obj + O_MAP); }

/* moves a relative field of the header so that it names target */
static void point(int64_t *field, uint64_t target)
{
    *field = (int64_t)(target - (uint64_t)(uintptr_t)field);
}

/* sets call-site entry i to name site and stub (run-time addresses) */
static void set_site(int i, uint64_t site, uint64_t stub)
{
    uint64_t e = OBJ + O_SITES + (uint64_t)i * sizeof(struct ptcall_map_site);
    struct ptcall_map_site ms;
    ms.site_rel = (int32_t)(int64_t)(site - (e + offsetof(struct ptcall_map_site, site_rel)));
    ms.stub_rel = (int32_t)(int64_t)(stub - (e + offsetof(struct ptcall_map_site, stub_rel)));
    memcpy(obj + O_SITES + (size_t)i * sizeof(ms), &ms, sizeof(ms));
}

static void test_places(void)
{
    size_t size = put_object();
    CHECK(walk_obj(size, 0) == 1 && walk_obj(size, 1) == 1);
    struct ptc_map_summary sum;
    struct ptc_map_object o = {.bytes = obj, .start = OBJ, .size = sizeof(obj)};
    CHECK(ptc_map_scan_in(obj + O_MAP, size, OBJ + O_MAP, OBJ, OBJ + 0x400, &o, &sum, NULL) == 0 &&
          sum.num_stubs == 4);

    /* the slot: outside the object (the reader alone cannot tell), misaligned, over the
     * map, over the stubs, wrapping around */
    point(&obj_hdr()->soft_slot_rel, OBJ + sizeof(obj) + 4096);
    CHECK(walk_obj(size, 0) == 1 && walk_obj(size, 1) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + sizeof(obj) - 4); /* its last 4 bytes outside */
    CHECK(walk_obj(size, 1) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + O_SLOT + 4);
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + O_MAP + 8);
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + O_STUBS + 16);
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SLOT);
    obj_hdr()->soft_slot_rel = INT64_MAX;
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SLOT);
    obj_hdr()->soft_slot_rel = 0; /* no slot at all: nothing to check */
    CHECK(walk_obj(size, 1) == 1);
    CHECK(!strstr(ptc_map_strerror(PTC_MAP_E_SLOT), "unknown") &&
          strstr(ptc_map_strerror(PTC_MAP_E_SLOT), "soft_slot_rel"));

    /* the call-site table: outside the object, over the map, wrapping, misaligned */
    size = put_object();
    point(&obj_hdr()->sites_rel, OBJ + sizeof(obj) + 64);
    point(&obj_hdr()->sites_end_rel, OBJ + sizeof(obj) + 64 + 3 * sizeof(struct ptcall_map_site));
    CHECK(walk_obj(size, 0) == 1 && walk_obj(size, 1) == PTC_MAP_E_SITES_PLACE);
    point(&obj_hdr()->sites_rel, OBJ + O_MAP);
    point(&obj_hdr()->sites_end_rel, OBJ + O_MAP + 16);
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SITES_PLACE);
    obj_hdr()->sites_rel = INT64_MAX;
    obj_hdr()->sites_end_rel = INT64_MAX;
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SITES);
    point(&obj_hdr()->sites_rel, OBJ + O_SITES + 2);
    point(&obj_hdr()->sites_end_rel, OBJ + O_SITES + 2 + sizeof(struct ptcall_map_site));
    CHECK(walk_obj(size, 0) == PTC_MAP_E_SITES);
    CHECK(strstr(ptc_map_strerror(PTC_MAP_E_SITES_PLACE), "sites_rel") != NULL);

    /* an entry of the table: a sled outside the object, half outside, a stub outside the
     * stub section, a stub between two stubs */
    size = put_object();
    set_site(1, OBJ + sizeof(obj) + 0x100, OBJ + O_STUBS + 32);
    CHECK(walk_obj(size, 0) == 1 && walk_obj(size, 1) == PTC_MAP_E_SITE);
    set_site(1, OBJ + sizeof(obj) - 2, OBJ + O_STUBS + 32);
    CHECK(walk_obj(size, 1) == PTC_MAP_E_SITE);
    set_site(1, OBJ + O_TEXT + 0x40, OBJ + O_STUBS + 0x1000);
    CHECK(walk_obj(size, 1) == PTC_MAP_E_SITE);
    set_site(1, OBJ + O_TEXT + 0x40, OBJ + O_STUBS + 24);
    CHECK(walk_obj(size, 1) == PTC_MAP_E_SITE);
    set_site(1, OBJ + O_TEXT + 0x40, OBJ + O_STUBS + 32);
    CHECK(walk_obj(size, 1) == 1);

    /* two units that name different tables: every unit names the object's one */
    size = put_object();
    memcpy(obj + O_MAP + size, obj + O_MAP, size); /* a second unit, same table: fine */
    struct ptcall_map_header *h2 = (struct ptcall_map_header *)(obj + O_MAP + size);
    point(&h2->soft_slot_rel, OBJ + O_SLOT + 8);
    point(&h2->sites_rel, OBJ + O_SITES);
    point(&h2->sites_end_rel, OBJ + O_SITES + 3 * sizeof(struct ptcall_map_site));
    for (uint32_t k = 0; k < 4; k++) { /* its stubs: the same stubs, seen from its fields */
        struct ptcall_map_stub st;
        size_t at = O_MAP + size + h2->stubs_offset + k * sizeof(st);
        memcpy(&st, obj + at, sizeof(st));
        st.stub_rel = (int64_t)(OBJ + O_STUBS + 16 * k - (OBJ + at));
        memcpy(obj + at, &st, sizeof(st));
    }
    CHECK(walk_obj(2 * size, 1) == 2);
    point(&h2->sites_end_rel, OBJ + O_SITES + 2 * sizeof(struct ptcall_map_site));
    CHECK(walk_obj(2 * size, 0) == PTC_MAP_E_SITES_PLACE);
}

/* The object as the runtime sees it loaded: PT_LOAD pieces with gaps between them (unmapped
 * or PROT_NONE in a process) and what may be done in each. obj[] is laid out as: stubs and
 * text [0, 0x800) R+X, the map [0x800, 0xc00) R, a gap, the call-site table
 * [0x1000, 0x1080) R, a gap, the slot's data [0x1100, 0x2000) R+W. */
static const struct ptc_map_segment segs[] = {
    {OBJ + 0, OBJ + 0x800, PTC_MAP_SEG_R | PTC_MAP_SEG_X},
    {OBJ + 0x800, OBJ + 0xc00, PTC_MAP_SEG_R},
    {OBJ + 0x1000, OBJ + 0x1080, PTC_MAP_SEG_R},
    {OBJ + 0x1100, OBJ + 0x2000, PTC_MAP_SEG_R | PTC_MAP_SEG_W},
};

static int walk_segs(size_t size)
{
    struct ptc_map_object o = {.bytes = obj, .start = OBJ, .size = sizeof(obj), .segs = segs,
                               .nsegs = sizeof(segs) / sizeof(segs[0])};
    return ptc_map_walk_in(obj + O_MAP, size, OBJ + O_MAP, OBJ + O_STUBS, OBJ + O_STUBS + 0x400,
                           &o, NULL, NULL, NULL);
}

static void test_segments(void)
{
    size_t size = put_object();
    CHECK(walk_segs(size) == 1);
    struct ptc_map_object o = {.bytes = obj, .start = OBJ, .size = sizeof(obj), .segs = segs,
                               .nsegs = 4};
    CHECK(ptc_map_object_holds(&o, OBJ + 0x1100, 8, PTC_MAP_SEG_W) &&
          !ptc_map_object_holds(&o, OBJ + 0x10f8, 16, PTC_MAP_SEG_R) && /* across a gap */
          !ptc_map_object_holds(&o, OBJ + 0xc00, 8, 0) &&                /* in a gap */
          !ptc_map_object_holds(&o, OBJ + 0x2000, 1, 0) &&               /* past the end */
          ptc_map_object_holds(&o, OBJ + 0x7f8, 8, PTC_MAP_SEG_X) &&
          !ptc_map_object_holds(&o, OBJ + 0x7fc, 8, PTC_MAP_SEG_R)); /* across two pieces */

    /* the slot: inside the object but in its code or read-only data (writing it faults),
     * or in a gap; the whole object would take them */
    point(&obj_hdr()->soft_slot_rel, OBJ + O_TEXT + 0x200);
    CHECK(walk_obj(size, 1) == 1 && walk_segs(size) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + O_SITES + 0x80);
    CHECK(walk_obj(size, 1) == 1 && walk_segs(size) == PTC_MAP_E_SLOT);
    point(&obj_hdr()->soft_slot_rel, OBJ + 0xc00);
    CHECK(walk_obj(size, 1) == 1 && walk_segs(size) == PTC_MAP_E_SLOT);

    /* the call-site table running into a gap, or lying in one */
    size = put_object();
    point(&obj_hdr()->sites_end_rel, OBJ + O_SITES + 0x100); /* zero entries: bad sites */
    CHECK(walk_obj(size, 1) == PTC_MAP_E_SITE && walk_segs(size) == PTC_MAP_E_SITES_PLACE);
    point(&obj_hdr()->sites_rel, OBJ + 0xc00);
    point(&obj_hdr()->sites_end_rel, OBJ + 0xc00 + 3 * sizeof(struct ptcall_map_site));
    memcpy(obj + 0xc00, obj + O_SITES, 3 * sizeof(struct ptcall_map_site));
    CHECK(walk_segs(size) == PTC_MAP_E_SITES_PLACE);

    /* a sled in the data (it would be made executable and patched) or in a gap */
    size = put_object();
    set_site(1, OBJ + 0x1200, OBJ + O_STUBS + 32);
    CHECK(walk_obj(size, 1) == 1 && walk_segs(size) == PTC_MAP_E_SITE);
    set_site(1, OBJ + 0xc10, OBJ + O_STUBS + 32);
    CHECK(walk_obj(size, 1) == 1 && walk_segs(size) == PTC_MAP_E_SITE);
}

/* Map version 6: the sizes-and-callees extension after put_blob's blob (main calls helper
 * and an external "main"-named function, helper calls nothing); its reading, and each
 * inconsistency refused as PTC_MAP_E_EXT. */
static size_t put_ext(void)
{
    memset(sec, 0, sizeof(sec));
    size_t n = put_blob(0, 0x1111, 0);
    struct ptcall_map_header *h = hdr_at(0);
    struct ptcall_map_ext e = {.ext_size = sizeof(e) + 2 * sizeof(struct ptcall_map_func_ext) +
                                           2 * sizeof(struct ptcall_map_callee),
                               .num_callees = 2};
    struct ptcall_map_func_ext f[2] = {{12, 3, 0, 2}, {1, 1, 2, 0}};
    struct ptcall_map_callee c[2] = {{1, 23}, {PTCALL_MAP_NO_FUNC, 9}};
    h->ext_offset = (uint32_t)n;
    memcpy(sec + n, &e, sizeof(e));
    memcpy(sec + n + sizeof(e), f, sizeof(f));
    memcpy(sec + n + sizeof(e) + sizeof(f), c, sizeof(c));
    h->total_size = (uint32_t)(n + e.ext_size);
    return h->total_size;
}

static int ext_cb(void *ctx, const struct ptc_map_unit *u)
{
    (void)ctx;
    struct ptcall_map_func_ext f;
    struct ptcall_map_callee c;
    CHECK(ptc_map_get_func_ext(u, 0, &f) == 1);
    CHECK(f.num_insts == 12 && f.num_blocks == 3 && f.first_callee == 0 && f.num_callees == 2);
    ptc_map_get_callee(u, 0, &c);
    CHECK(c.func == 1 && !strcmp(u->strings + c.name, "helper"));
    ptc_map_get_callee(u, 1, &c);
    CHECK(c.func == PTCALL_MAP_NO_FUNC && !strcmp(u->strings + c.name, "main"));
    CHECK(ptc_map_get_func_ext(u, 1, &f) == 1 && f.num_insts == 1 && f.num_callees == 0);
    return 0;
}

static int noop_cb(void *ctx, const struct ptc_map_unit *u)
{
    (void)ctx;
    (void)u;
    return 0;
}

static void test_ext(void)
{
    size_t n = put_ext(), bad;
    CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, ext_cb, NULL, &bad) == 1);
    /* older versions: the field was reserved, readers ignore it */
    struct ptcall_map_func_ext f;
    struct ptc_map_unit u = {.hdr = *hdr_at(0), .blob = sec};
    u.hdr.version = 5;
    CHECK(ptc_map_get_func_ext(&u, 0, &f) == 0 && f.num_insts == 0);
    /* each inconsistency */
    size_t e = hdr_at(0)->ext_offset;
    const size_t callees = e + 16 + 2 * sizeof(struct ptcall_map_func_ext);
    static const struct {
        size_t at;
        uint32_t value;
    } bads[] = {
        {offsetof(struct ptcall_map_header, ext_offset), 4},      /* misaligned */
        {offsetof(struct ptcall_map_header, ext_offset), 0x10000}, /* past the blob */
        {0, 1},                                                    /* ext_size */
        {4, 3},                                                    /* num_callees */
        {16 + 8, 1},                                               /* first_callee + n > 2 */
        {16 + 12, 3},
        {0, 0},                                                    /* callee 0's function */
        {4, 1000},                                                 /* callee 0's name */
    };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        put_ext();
        size_t at = i < 2 ? bads[i].at : i < 6 ? e + bads[i].at : callees + bads[i].at;
        uint32_t v = i == 6 ? 5 : bads[i].value;
        memcpy(sec + at, &v, 4);
        CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, noop_cb, NULL,
                           &bad) == PTC_MAP_E_EXT);
    }
}

/* Map version 7: put_ext's unit with a blocks part after the extension (main: 2 blocks,
 * helper: 1; 3 lines); its reading, each inconsistency refused as PTC_MAP_E_BLOCKS, and the
 * part ignored in a version 6 unit (the field was reserved). */
#define PTR_ADDR 0x600000ull /* the unit's counter pointer: outside the map and the stubs */
static size_t put_blocks(void)
{
    size_t n = put_ext();
    struct ptcall_map_header *h = hdr_at(0);
    h->flags |= PTCALL_MAP_F_BLOCKS;
    struct ptcall_map_blocks b = {.blocks_size = sizeof(b) + 3 * sizeof(struct ptcall_map_block) +
                                                 3 * sizeof(struct ptcall_map_line),
                                  .num_blocks = 3, .num_lines = 3};
    b.counters_rel = (int64_t)(PTR_ADDR - (SEC_ADDR + n + offsetof(struct ptcall_map_blocks,
                                                                   counters_rel)));
    struct ptcall_map_block k[3] = {{0, 0, 2}, {0, 2, 0}, {1, 2, 1}};
    struct ptcall_map_line l[3] = {{1, 10}, {1, 11}, {1, 20}};
    uint32_t bo = (uint32_t)n;
    memcpy(sec + h->ext_offset + 8, &bo, 4); /* ext.blocks_offset */
    memcpy(sec + n, &b, sizeof(b));
    memcpy(sec + n + sizeof(b), k, sizeof(k));
    memcpy(sec + n + sizeof(b) + sizeof(k), l, sizeof(l));
    h->total_size = (uint32_t)((n + b.blocks_size + 7) & ~(size_t)7);
    return h->total_size;
}

static int blocks_cb(void *ctx, const struct ptc_map_unit *u)
{
    (void)ctx;
    struct ptcall_map_blocks b;
    struct ptcall_map_block k;
    struct ptcall_map_line l;
    uint64_t ptr;
    CHECK(ptc_map_get_blocks(u, &b, &ptr) == 1 && b.num_blocks == 3 && b.num_lines == 3 &&
          ptr == PTR_ADDR);
    ptc_map_get_block(u, 2, &k);
    CHECK(k.func == 1 && k.first_line == 2 && k.num_lines == 1);
    ptc_map_get_line(u, 2, &l);
    CHECK(l.line == 20 && l.file == 1);
    return 0;
}

static void test_blocks(void)
{
    size_t n = put_blocks(), bad;
    CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, blocks_cb, NULL,
                       &bad) == 1);
    /* version 6 with the same bytes: no blocks (the flag and the field mean nothing there) */
    struct ptcall_map_blocks b;
    uint64_t ptr;
    struct ptc_map_unit u = {.hdr = *hdr_at(0), .blob = sec};
    u.hdr.version = 6;
    CHECK(ptc_map_get_blocks(&u, &b, &ptr) == 0);
    size_t bo = hdr_at(0)->total_size - ((sizeof(b) + 3 * 12 + 3 * 8 + 7) & ~(size_t)7);
    const size_t blocks = bo + sizeof(b), lines = blocks + 3 * sizeof(struct ptcall_map_block);
    static const struct {
        int part; /* 0: ext.blocks_offset, 1: blocks header, 2: block 2, 3: line 0 */
        size_t at;
        uint32_t value;
    } bads[] = {
        {0, 0, 4},           /* misaligned (bo + 4 below) */
        {0, 0, 0},           /* the flag without the part */
        {1, 0, 1},           /* blocks_size */
        {1, 4, 4},           /* num_blocks */
        {1, 16, 4},          /* counter pointer misaligned (counters_rel + 4) */
        {2, 0, 2},           /* a missing function */
        {2, 4, 3},           /* lines past num_lines */
        {3, 0, 1000},        /* a missing string */
    };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        put_blocks();
        size_t base = bads[i].part == 0 ? hdr_at(0)->ext_offset + 8
                      : bads[i].part == 1 ? bo : bads[i].part == 2 ? blocks + 24 : lines;
        uint32_t v = bads[i].value;
        if (i == 0)
            v = (uint32_t)bo + 4;
        if (i == 4) {
            int64_t rel;
            memcpy(&rel, sec + bo + 16, 8);
            rel += 4;
            memcpy(sec + bo + 16, &rel, 8);
        } else {
            memcpy(sec + base + bads[i].at, &v, 4);
        }
        CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, noop_cb, NULL,
                           &bad) == PTC_MAP_E_BLOCKS);
    }
    /* the counter pointer over the map section: the runtime would write into the map */
    put_blocks();
    int64_t rel = (int64_t)(SEC_ADDR + 8 - (SEC_ADDR + bo + 16));
    memcpy(sec + bo + 16, &rel, 8);
    CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, noop_cb, NULL,
                       &bad) == PTC_MAP_E_BLOCKS);
}

/* Map version 8: put_blocks's unit with a call-graph part after the blocks part (main takes
 * no address and calls through a pointer in its block 1; helper is address taken; one taken
 * declaration; block 0 -> 1); its reading, each inconsistency refused as PTC_MAP_E_GRAPH,
 * and the part ignored in a version 7 unit (the field was reserved). */
static size_t graph_at_;
static size_t put_graph(void)
{
    size_t n = put_blocks();
    struct ptcall_map_header *h = hdr_at(0);
    struct ptcall_map_graph g = {.num_icalls = 1, .num_taken = 1, .num_blocks = 3,
                                 .num_succs = 1};
    g.graph_size = (uint32_t)((sizeof(g) + 2 * sizeof(struct ptcall_map_func_graph) +
                               sizeof(struct ptcall_map_icall) + sizeof(struct ptcall_map_taken) +
                               3 * sizeof(struct ptcall_map_block_succ) + 4 + 7) & ~(size_t)7);
    struct ptcall_map_func_graph f[2] = {{0x1111, 0, 0, 1, 0},
                                         {0x2222, PTCALL_MAP_FUNC_F_ADDRESS_TAKEN, 1, 0, 0}};
    struct ptcall_map_icall ic = {0x2222, 1, 0};
    struct ptcall_map_taken tk = {0x2222, 1, 0};
    struct ptcall_map_block_succ bs[3] = {{0, 1}, {1, 0}, {1, 0}};
    uint32_t succ[2] = {1, 0};
    uint8_t *p = sec + n;
    memset(p, 0, g.graph_size);
    memcpy(p, &g, sizeof(g));
    memcpy(p += sizeof(g), f, sizeof(f));
    memcpy(p += sizeof(f), &ic, sizeof(ic));
    memcpy(p += sizeof(ic), &tk, sizeof(tk));
    memcpy(p += sizeof(tk), bs, sizeof(bs));
    memcpy(p += sizeof(bs), succ, sizeof(succ));
    uint32_t go = (uint32_t)n;
    memcpy(sec + h->ext_offset + 12, &go, 4); /* ext.graph_offset */
    graph_at_ = n;
    h->total_size = (uint32_t)(n + g.graph_size);
    return h->total_size;
}

static int graph_cb(void *ctx, const struct ptc_map_unit *u)
{
    (void)ctx;
    struct ptcall_map_graph g;
    struct ptcall_map_func_graph f;
    struct ptcall_map_icall ic;
    struct ptcall_map_taken tk;
    struct ptcall_map_block_succ bs;
    CHECK(ptc_map_get_graph(u, &g) == 1 && g.num_icalls == 1 && g.num_blocks == 3);
    ptc_map_get_func_graph(u, 1, &f);
    CHECK(f.type_id == 0x2222 && f.flags == PTCALL_MAP_FUNC_F_ADDRESS_TAKEN);
    ptc_map_get_icall(u, 0, &ic);
    CHECK(ic.type_id == 0x2222 && ic.block == 1);
    ptc_map_get_taken(u, 0, &tk);
    CHECK(tk.name == 1);
    ptc_map_get_block_succ(u, 0, &bs);
    CHECK(bs.num_succs == 1 && ptc_map_get_succ(u, bs.first_succ) == 1);
    return 0;
}

static void test_graph(void)
{
    size_t n = put_graph(), bad;
    CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, graph_cb, NULL,
                       &bad) == 1);
    struct ptcall_map_graph g;
    struct ptc_map_unit u = {.hdr = *hdr_at(0), .blob = sec};
    u.hdr.version = 7;
    CHECK(ptc_map_get_graph(&u, &g) == 0);
    const size_t go = graph_at_, funcs = go + sizeof(g),
                 icalls = funcs + 2 * sizeof(struct ptcall_map_func_graph),
                 taken = icalls + sizeof(struct ptcall_map_icall),
                 bsucc = taken + sizeof(struct ptcall_map_taken), succ = bsucc + 3 * 8;
    static const struct {
        int part; /* 0: ext.graph_offset, 1: the graph part, then as the sizes above */
        size_t at;
        uint32_t value;
    } bads[] = {
        {0, 0, 0},            /* misaligned (go + 4) */
        {0, 0, 0x10000},      /* past the blob */
        {1, 0, 8},            /* graph_size */
        {1, 12, 2},           /* num_blocks not the blocks part's */
        {2, 12, 2},           /* main's icalls past num_icalls */
        {3, 8, 3},            /* an icall in a missing block */
        {4, 8, 1000},         /* a taken name past the strings */
        {5, 4, 2},            /* block 0's successors past num_succs */
        {6, 0, 3},            /* a successor that is no block */
    };
    for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
        put_graph();
        size_t base[] = {hdr_at(0)->ext_offset + 12, go, funcs, icalls, taken, bsucc, succ};
        uint32_t v = i == 0 ? (uint32_t)go + 4 : bads[i].value;
        memcpy(sec + base[bads[i].part] + bads[i].at, &v, 4);
        CHECK(ptc_map_walk(sec, n, SEC_ADDR, STUBS_ADDR, STUBS_ADDR + STUBS_SIZE, noop_cb, NULL,
                           &bad) == PTC_MAP_E_GRAPH);
    }
}

int main(void)
{
    test_valid();
    test_leaf_calls();
    test_corrupt();
    test_fuzz();
    test_sites();
    test_places();
    test_segments();
    test_sled_patch();
    test_ret_sled_patch();
    test_ext();
    test_blocks();
    test_graph();
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("map reader: all tests passed\n");
    return 0;
}
