/* libFuzzer target: the map-section reader (common/ptc_map_read.c) and what the runtime does
 * with a map it validated. The input is an object as the loader lays it out: 16 bytes of
 * header (offsets and sizes, in the image, of the ptcall_map section and of the stub range)
 * then the image, which the target holds at a fresh address. The reader validates the
 * section against the image (ptc_map_scan_in, the object's checks) and without it; then,
 * for a map that passed, the target does what runtime/soft_register.c, soft_sites.c and
 * soft_tramp.c do: reads every stub's code, every function's strings, reads and writes each
 * unit's soft-handler slot, reads every call-site entry and the sled it names, indexes the
 * per-stub tables by each site's stub, and builds the MODULE chunk payload. A map that passes
 * validation but sends any of that outside the object is the reader's bug: AddressSanitizer
 * (or an explicit check) stops the run. The image is also cut into a code piece (R+X) and a
 * data piece (R+W) with a gap between them, cuts taken from the header, as the runtime
 * describes a loaded object's PT_LOAD segments (struct ptc_map_segment): a map that passes
 * with them must have passed without, and must put the slot in the data piece, the call-site
 * table in a piece and every sled in the code piece (explicit checks). Seeds: images of
 * objects the suite builds (map_seeds.py). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_map_read.h"
#include "ptc_sled.h"

struct use {
    uint64_t s0, s1;       /* stub range */
    uint8_t *slot_use;     /* one byte per stub slot, as the runtime's */
    uint64_t sum;
    const struct ptc_map_object *segs; /* the object cut into pieces, or NULL */
};

/* with pieces: [a, a + n) inside one that allows prot, as the reader promised */
static void in_piece(const struct use *u, uint64_t a, uint64_t n, unsigned prot)
{
    if (u->segs && !ptc_map_object_holds(u->segs, a, n, prot))
        __builtin_trap();
}

static void rd(struct use *u, uint64_t addr, size_t n)
{
    const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)addr;
    for (size_t i = 0; i < n; i++)
        u->sum += p[i];
}

static int use_unit(void *ctx, const struct ptc_map_unit *un)
{
    struct use *u = ctx;
    const struct ptcall_map_header *h = &un->hdr;
    for (uint32_t i = 0; i < h->num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(un, i, &st, &a);
        if (a < u->s0 || a >= u->s1 || (a - u->s0) % PTCALL_STUB_STRIDE ||
            st.func_index >= h->num_funcs)
            __builtin_trap(); /* the reader promised a stub inside the range */
        rd(u, a, 1);      /* patch_stub reads the stub's code */
        u->slot_use[(a - u->s0) / PTCALL_STUB_STRIDE] |= 1;
        u->sum += (uint64_t)ptc_map_leaf_quiet(un, &st);
    }
    for (uint32_t i = 0; i < h->num_funcs; i++) {
        struct ptcall_map_func f;
        ptc_map_get_func(un, i, &f);
        if (f.name >= h->strings_size || f.linkage_name >= h->strings_size ||
            f.file >= h->strings_size)
            __builtin_trap();
        u->sum += strlen(un->strings + f.name) + strlen(un->strings + f.linkage_name) +
                  strlen(un->strings + f.file);
    }
    u->sum += strlen(un->strings + h->source_name);
    if (h->soft_slot_rel != 0) { /* patch_unit and arm_unit store the handler there */
        in_piece(u, un->slot_addr, 8, PTC_MAP_SEG_W);
        volatile uint64_t *slot = (volatile uint64_t *)(uintptr_t)un->slot_addr;
        uint64_t v = *slot;
        *slot = v;
    }
    if (h->flags & PTCALL_MAP_F_SLEDS) { /* sites_switch, tramps_build */
        uint64_t n = (un->sites_end - un->sites_start) / sizeof(struct ptcall_map_site);
        if (n)
            in_piece(u, un->sites_start, un->sites_end - un->sites_start, PTC_MAP_SEG_R);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t site, stub;
            int ret;
            ptc_sled_entry((const void *)(uintptr_t)un->sites_start, un->sites_start, i, &site,
                           &stub, &ret);
            uint64_t word;
            in_piece(u, ptc_sled_word_addr(site), 8, PTC_MAP_SEG_X);
            in_piece(u, site, PTCALL_SLED_SIZE, PTC_MAP_SEG_X);
            memcpy(&word, (const void *)(uintptr_t)ptc_sled_word_addr(site), 8);
            uint8_t cur[PTC_RET_SLED_SIZE], out[PTC_RET_SLED_SIZE];
            memcpy(cur, (const void *)(uintptr_t)site, sizeof(cur));
            uint64_t now;
            u->sum += (uint64_t)ptc_sled_patch(site, stub, PTC_SLED_WANT_CALL, word, &now);
            u->sum += (uint64_t)ptc_ret_sled_patch(site, stub, PTC_SLED_WANT_JMP, cur, out);
            /* left_off(): the per-stub table, indexed by the site's stub */
            u->sum += u->slot_use[(stub - u->s0) / PTCALL_STUB_STRIDE];
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16 + 16)
        return 0;
    uint32_t hd[4];
    memcpy(hd, data, 16);
    size_t len = size - 16;
    uint8_t *img = malloc(len);
    if (!img)
        return 0;
    memcpy(img, data + 16, len);
    size_t map_off = hd[0] % len, map_size = hd[1] % (len - map_off + 1);
    size_t stubs_off = (hd[2] % len) & ~(size_t)15;
    size_t stubs_size = (hd[3] % (len - stubs_off + 1)) & ~(size_t)15;
    if (!stubs_size) { /* the runtime always has the object's stub range */
        free(img);
        return 0;
    }
    uint64_t base = (uint64_t)(uintptr_t)img;
    uint64_t addr = base + map_off, s0 = base + stubs_off, s1 = s0 + stubs_size;
    struct ptc_map_object obj = {.bytes = img, .start = base, .size = len};
    struct ptc_map_summary sum, sum_in;
    size_t bad = 0, bad_in = 0;
    int e = ptc_map_scan(img + map_off, map_size, addr, s0, s1, &sum, &bad);
    int e_in = ptc_map_scan_in(img + map_off, map_size, addr, s0, s1, &obj, &sum_in, &bad_in);
    if ((e && !ptc_map_strerror(e)[0]) || (e_in && !ptc_map_strerror(e_in)[0]))
        __builtin_trap();
    if (e_in == 0 && e != 0)
        __builtin_trap(); /* the object's checks come on top of the others */
    if ((e && bad > map_size) || (e_in && bad_in > map_size))
        __builtin_trap(); /* the offending offset is inside the section */
    /* the pieces: code [0, cut), a gap, data [cut + gap, len) */
    size_t cut = (size_t)((hd[1] ^ hd[3]) % (len + 1)), gap = (size_t)(hd[2] >> 24) * 16;
    struct ptc_map_segment pieces[2] = {
        {base, base + cut, PTC_MAP_SEG_R | PTC_MAP_SEG_X},
        {base + (gap < len - cut ? cut + gap : len), base + len, PTC_MAP_SEG_R | PTC_MAP_SEG_W},
    };
    struct ptc_map_object cut_obj = obj;
    cut_obj.segs = pieces;
    cut_obj.nsegs = 2;
    struct ptc_map_summary sum_cut;
    int e_cut = ptc_map_scan_in(img + map_off, map_size, addr, s0, s1, &cut_obj, &sum_cut, NULL);
    if (e_cut == 0 && e_in != 0)
        __builtin_trap(); /* the pieces' checks come on top of the object's */
    if (e_cut == 0) {
        struct use u = {.s0 = s0, .s1 = s1, .segs = &cut_obj};
        u.slot_use = calloc(stubs_size / PTCALL_STUB_STRIDE + 1, 1);
        if (u.slot_use) {
            if (ptc_map_walk_in(img + map_off, map_size, addr, s0, s1, &cut_obj, use_unit, &u,
                                NULL) != (int)sum_cut.num_units)
                __builtin_trap();
            free(u.slot_use);
        }
    }
    if (e_in == 0) {
        struct use u = {.s0 = s0, .s1 = s1};
        u.slot_use = calloc(stubs_size / PTCALL_STUB_STRIDE + 1, 1);
        if (u.slot_use) {
            int n = ptc_map_walk_in(img + map_off, map_size, addr, s0, s1, &obj, use_unit, &u,
                                    NULL);
            if (n != (int)sum_in.num_units)
                __builtin_trap();
            free(u.slot_use);
        }
        /* the MODULE chunk payload: exactly the size announced, stubs inside the range */
        size_t need = ptc_map_module_size(&sum_in, "/fuzz/obj");
        uint8_t *out = malloc(need);
        if (out) {
            struct ptc_module info;
            memset(&info, 0, sizeof(info));
            info.stubs_start = s0;
            info.stubs_end = s1;
            long got = ptc_map_build_module(img + map_off, map_size, addr, &sum_in, &info,
                                            "/fuzz/obj", PTC_MAP_BUILD_LEAF_CALLS, out, need);
            if (got != (long)need)
                __builtin_trap();
            struct ptc_module m;
            memcpy(&m, out, sizeof(m));
            for (uint32_t i = 0; i < m.num_stubs; i++) {
                struct ptc_module_stub ms;
                memcpy(&ms, out + sizeof(m) + (size_t)i * sizeof(ms), sizeof(ms));
                if (ms.address < s0 || ms.address >= s1 || ms.func >= m.num_funcs)
                    __builtin_trap();
            }
            if (out[need - 1] != 0)
                __builtin_trap(); /* the strings end with the path's NUL */
            free(out);
        }
    }
    free(img);
    return 0;
}
