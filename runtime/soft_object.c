/* The loaded object a ptcall_map section belongs to, as the map reader's object checks need
 * it (common/ptc_map_read.h, struct ptc_map_object): a map can pass every check of its own
 * bytes and still name a slot or call sites outside the object, in a gap between its
 * segments, or in its read-only data, where writing the slot or reading a sled faults. The
 * loader's program headers say what is mapped, and how. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "soft_internal.h"

#define PAGE 4096u

struct find {
    uint64_t addr;            /* an address inside the object: its map section */
    struct object_layout *out;
    int found, too_many;
};

/* Appends [start, end) with prot to the layout; 0, or -1 when it is full. */
static int add_segment(struct object_layout *l, uint64_t start, uint64_t end, unsigned prot)
{
    if (end <= start)
        return 0;
    if (l->nsegs == OBJECT_SEGS_MAX)
        return -1;
    l->segs[l->nsegs++] = (struct ptc_map_segment){start, end, prot};
    return 0;
}

/* What the loader's mprotect of PT_GNU_RELRO leaves writable: segments are split around
 * [r0, r1) (whole pages, rounded down at the end as the loader does), which loses PF_W. */
static int apply_relro(struct object_layout *l, uint64_t r0, uint64_t r1)
{
    size_t n = l->nsegs;
    for (size_t i = 0; i < n; i++) {
        struct ptc_map_segment g = l->segs[i];
        if (!(g.prot & PTC_MAP_SEG_W) || r1 <= g.start || r0 >= g.end)
            continue;
        uint64_t lo = r0 > g.start ? r0 : g.start, hi = r1 < g.end ? r1 : g.end;
        l->segs[i].end = lo; /* may become empty: then it holds nothing */
        if (add_segment(l, lo, hi, g.prot & ~PTC_MAP_SEG_W) < 0 ||
            add_segment(l, hi, g.end, g.prot) < 0)
            return -1;
    }
    return 0;
}

/* The object's mapped pieces from its program headers, loaded at bias. */
static int fill_layout(struct object_layout *l, uint64_t bias, const ElfW(Phdr) *ph, int n)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    l->nsegs = 0;
    for (int i = 0; i < n; i++) {
        if (ph[i].p_type != PT_LOAD || !ph[i].p_memsz)
            continue;
        /* the loader maps whole pages: the rest of a segment's last page is readable too */
        uint64_t s = (bias + ph[i].p_vaddr) & ~(uint64_t)(PAGE - 1);
        uint64_t e = (bias + ph[i].p_vaddr + ph[i].p_memsz + PAGE - 1) & ~(uint64_t)(PAGE - 1);
        unsigned prot = ph[i].p_flags & (PTC_MAP_SEG_R | PTC_MAP_SEG_W | PTC_MAP_SEG_X);
        if (add_segment(l, s, e, prot) < 0)
            return -1;
        lo = s < lo ? s : lo;
        hi = e > hi ? e : hi;
    }
    for (int i = 0; i < n; i++)
        if (ph[i].p_type == PT_GNU_RELRO &&
            apply_relro(l, (bias + ph[i].p_vaddr) & ~(uint64_t)(PAGE - 1),
                        (bias + ph[i].p_vaddr + ph[i].p_memsz) & ~(uint64_t)(PAGE - 1)) < 0)
            return -1;
    l->obj = (struct ptc_map_object){.bytes = (const void *)(uintptr_t)lo, .start = lo,
                                     .size = (size_t)(hi - lo), .segs = l->segs,
                                     .nsegs = l->nsegs};
    return hi > lo ? 0 : -1;
}

/* dl_iterate_phdr callback: the object one of whose PT_LOAD segments holds f->addr */
static int find_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
    struct find *f = ctx;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uint64_t s = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && f->addr >= s && f->addr - s < p->p_memsz) {
            f->found = 1;
            f->too_many = fill_layout(f->out, info->dlpi_addr, info->dlpi_phdr,
                                      info->dlpi_phnum) < 0;
            return 1;
        }
    }
    return 0;
}

int object_layout(const void *addr, struct object_layout *out, char *why, size_t why_size)
{
    struct find f = {.addr = (uint64_t)(uintptr_t)addr, .out = out};
    memset(out, 0, sizeof(*out));
    dl_iterate_phdr(find_object, &f);
    if (!f.found) {
        snprintf(why, why_size, "no loaded object holds its ptcall_map section at %p", addr);
        return -1;
    }
    if (f.too_many) {
        snprintf(why, why_size, "its program headers describe no mapping, or more than %d "
                                "segments", OBJECT_SEGS_MAX);
        return -1;
    }
    return 0;
}
