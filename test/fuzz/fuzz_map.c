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
 * (or an explicit check) stops the run. Seeds: images of objects the suite builds
 * (map_seeds.py). */
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
};

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
        volatile uint64_t *slot = (volatile uint64_t *)(uintptr_t)un->slot_addr;
        uint64_t v = *slot;
        *slot = v;
    }
    if (h->flags & PTCALL_MAP_F_SLEDS) { /* sites_switch, tramps_build */
        uint64_t n = (un->sites_end - un->sites_start) / sizeof(struct ptcall_map_site);
        for (uint64_t i = 0; i < n; i++) {
            uint64_t site, stub;
            int ret;
            ptc_sled_entry((const void *)(uintptr_t)un->sites_start, un->sites_start, i, &site,
                           &stub, &ret);
            uint64_t word;
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
