/* The ptcall sections of an ELF file (libelf) and the address filter string.
 * A file-backed filter takes a FILE OFFSET (the kernel matches it against
 * vma->vm_pgoff << PAGE_SHIFT, kernel/events/core.c perf_addr_filter_vma_adjust), so the
 * range of a module is the section's sh_offset/sh_size, never its address. */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptc_pt_rec.h"
#include "ptc_map_read.h"
#include "ptc_select.h"
#include "ptcall/map_format.h"

/* Notes a PT_LOAD segment's pages (the loader maps whole ones) in s->loads. */
static void add_load(struct ptc_pt_elf_sections *s, const GElf_Phdr *ph)
{
    if (s->nloads < 0 || !ph->p_memsz)
        return;
    if (s->nloads == PTC_PT_LOADS_MAX) {
        s->nloads = -1;
        return;
    }
    s->loads[s->nloads++] = (struct ptc_map_segment){
        .start = ph->p_vaddr & ~(uint64_t)4095,
        .end = (ph->p_vaddr + ph->p_memsz + 4095) & ~(uint64_t)4095,
        .prot = ph->p_flags & (PTC_MAP_SEG_R | PTC_MAP_SEG_W | PTC_MAP_SEG_X)};
}

int ptc_pt_elf_sections(const char *path, struct ptc_pt_elf_sections *s, char *why,
                        size_t why_size)
{
    memset(s, 0, sizeof(*s));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        snprintf(why, why_size, "libelf is out of date");
        return -1;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    size_t shstrndx;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
        elf_getshdrstrndx(e, &shstrndx)) {
        snprintf(why, why_size, "%s is not an ELF file", path);
        if (e)
            elf_end(e);
        close(fd);
        return -1;
    }
    s->pie = eh.e_type == ET_DYN;
    size_t nph = 0;
    s->text_vaddr_min = UINT64_MAX;
    if (!elf_getphdrnum(e, &nph))
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
                continue;
            if (ph.p_vaddr < s->text_vaddr_min)
                s->text_vaddr_min = ph.p_vaddr;
            add_load(s, &ph);
        }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            continue;
        if (!strcmp(name, PTCALL_STUB_SECTION)) {
            s->has_stubs = 1;
            s->stubs_offset = sh.sh_offset;
            s->stubs_size = sh.sh_size;
            s->stubs_addr = sh.sh_addr;
        } else if (!strcmp(name, PTCALL_MAP_SECTION)) {
            s->has_map = 1;
            s->map_offset = sh.sh_offset;
            s->map_size = sh.sh_size;
            s->map_addr = sh.sh_addr;
        }
    }
    elf_end(e);
    close(fd);
    return 0;
}

int ptc_pt_filter_string(struct ptc_pt_module_req *mods, int n, int max_ranges, char *out,
                         size_t out_size)
{
    size_t len = 0;
    int used = 0;
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        mods[i].traced = 0;
        if (!mods[i].sec.has_stubs || !mods[i].sec.stubs_size || used >= max_ranges)
            continue;
        int w = snprintf(out + len, out_size - len, "%sfilter 0x%llx/0x%llx@%s",
                         used ? " " : "", (unsigned long long)mods[i].sec.stubs_offset,
                         (unsigned long long)mods[i].sec.stubs_size, mods[i].path);
        if (w < 0 || (size_t)w >= out_size - len)
            return -1;
        len += (size_t)w;
        mods[i].traced = 1;
        used++;
    }
    return used;
}

void *ptc_pt_read_map(const char *path, const struct ptc_pt_elf_sections *sec, char *why,
                      size_t why_size)
{
    if (!sec->has_stubs || !sec->has_map) {
        snprintf(why, why_size, "%s has no %s section: it was not built with ptcall-cc", path,
                 sec->has_stubs ? "ptcall_map" : "ptcall_stubs");
        return NULL;
    }
    uint8_t *map = malloc(sec->map_size ? sec->map_size : 1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!map || fd < 0 ||
        pread(fd, map, sec->map_size, (off_t)sec->map_offset) != (ssize_t)sec->map_size) {
        snprintf(why, why_size, "cannot read the ptcall_map section of %s: %s", path,
                 strerror(errno));
        free(map);
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    close(fd);
    return map;
}

long ptc_pt_build_module(const char *path, const struct ptc_pt_elf_sections *sec, uint64_t bias,
                         uint32_t module_id, uint32_t first_stub_id, void **out,
                         uint32_t *num_stubs, char *why, size_t why_size)
{
    return ptc_pt_build_module_flags(path, sec, bias, module_id, first_stub_id, 0, out,
                                     num_stubs, why, why_size);
}

long ptc_pt_build_module_flags(const char *path, const struct ptc_pt_elf_sections *sec,
                               uint64_t bias, uint32_t module_id, uint32_t first_stub_id,
                               unsigned flags, void **out, uint32_t *num_stubs, char *why,
                               size_t why_size)
{
    *out = NULL;
    uint8_t *map = ptc_pt_read_map(path, sec, why, why_size);
    if (!map)
        return -1;
    struct ptc_map_summary s;
    size_t bad = 0;
    uint64_t start = sec->stubs_addr + bias, end = start + sec->stubs_size;
    int e = ptc_map_scan(map, sec->map_size, sec->map_addr + bias, start, end, &s, &bad);
    if (e < 0) {
        snprintf(why, why_size, "%s: ptcall_map is unreadable (%s at offset %zu); rebuild it "
                                "with ptcall-cc",
                 path, ptc_map_strerror(e), bad);
        free(map);
        return -1;
    }
    size_t sz = ptc_map_module_size(&s, path);
    void *buf = malloc(sz);
    struct ptc_module info = {.module_id = module_id, .first_stub_id = first_stub_id,
                              .load_bias = bias, .stubs_start = start, .stubs_end = end};
    long n = buf ? ptc_map_build_module(map, sec->map_size, sec->map_addr + bias, &s, &info,
                                        path, flags, buf, sz)
                 : -1;
    free(map);
    if (n <= 0) {
        snprintf(why, why_size, "%s: cannot build its module table (%s)", path,
                 n < 0 ? ptc_map_strerror((int)n) : "empty");
        free(buf);
        return -1;
    }
    *out = buf;
    *num_stubs = s.num_stubs;
    return n;
}

long ptc_pt_build_armed(const char *path, const struct ptc_pt_elf_sections *sec, uint64_t bias,
                        uint32_t module_id, struct ptc_select *sel, const char *spec,
                        void **out, char *why, size_t why_size)
{
    *out = NULL;
    uint8_t *map = ptc_pt_read_map(path, sec, why, why_size);
    if (!map)
        return -1;
    struct ptc_map_summary s;
    uint64_t start = sec->stubs_addr + bias, end = start + sec->stubs_size;
    void *buf = NULL;
    long n = ptc_map_scan(map, sec->map_size, sec->map_addr + bias, start, end, &s, NULL);
    if (n == 0) {
        size_t sz = ptc_select_armed_size(&s, spec);
        buf = malloc(sz);
        /* the hardware sees every stub that runs: units armed whole count whole */
        n = !buf ? PTC_MAP_E_BUFFER
                 : ptc_select_build_armed(sel, map, sec->map_size, sec->map_addr + bias, &s,
                                          module_id, PTC_SELECT_WHOLE_UNITS, spec, buf, sz);
    }
    free(map);
    if (n <= 0) {
        snprintf(why, why_size, "%s: cannot say which of its functions are armed (%s)", path,
                 n == PTC_MAP_E_BUFFER && !buf ? "out of memory" : ptc_map_strerror((int)n));
        free(buf);
        return -1;
    }
    *out = buf;
    return n;
}
