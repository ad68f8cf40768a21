/* Call-site sleds of an object from its ELF file (see sites.h). */
#include "sites.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_sorted.h"
#include "ptcall/map_format.h"

struct elf_sec {
    const uint8_t *data;
    size_t size;
    uint64_t addr;
    int found;
};

static void find_sections(Elf *e, size_t shstrndx, struct elf_sec *stubs,
                          struct elf_sec *sites)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        struct elf_sec *want = !name                                   ? NULL
                               : !strcmp(name, PTCALL_STUB_SECTION)   ? stubs
                               : !strcmp(name, PTCALL_SITES_SECTION)  ? sites
                                                                       : NULL;
        if (!want)
            continue;
        want->found = 1;
        want->addr = sh.sh_addr;
        want->size = sh.sh_size;
        Elf_Data *d = want == sites ? elf_getdata(scn, NULL) : NULL;
        if (d && d->d_buf && d->d_size >= sh.sh_size)
            want->data = d->d_buf;
    }
}

static int cmp_pair(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* Fills out from the sites table (addresses of the file, plus bias). */
static int build(const struct elf_sec *sites, uint64_t bias, struct ptc_sites *out)
{
    size_t n = sites->size / sizeof(struct ptcall_map_site);
    uint64_t *pairs = malloc((n ? n : 1) * 2 * sizeof(uint64_t));
    out->stub = malloc((n ? n : 1) * sizeof(uint64_t));
    out->ret = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!pairs || !out->stub || !out->ret) {
        free(pairs);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        struct ptcall_map_site e;
        memcpy(&e, sites->data + i * sizeof(e), sizeof(e));
        uint64_t at = sites->addr + i * sizeof(e); /* the entry's site_rel field */
        uint64_t site = at + (uint64_t)(int64_t)e.site_rel;
        uint64_t stub = at + 4 + (uint64_t)(int64_t)e.stub_rel;
        int ret_sled = (stub & PTCALL_SITE_RET) != 0;
        pairs[2 * i] = (stub & ~(uint64_t)PTCALL_SITE_RET) + bias;
        /* a sled's `call` returns behind the sled; a ret sled's stub returns to the caller */
        pairs[2 * i + 1] = ret_sled ? PTC_SITE_RET_CALLER : site + bias + PTCALL_SLED_SIZE;
    }
    qsort(pairs, n, 2 * sizeof(uint64_t), cmp_pair);
    for (size_t i = 0; i < n; i++) {
        out->stub[i] = pairs[2 * i];
        out->ret[i] = pairs[2 * i + 1];
    }
    out->n = n;
    free(pairs);
    return 0;
}

int ptc_sites_read(const char *path, uint64_t load_bias, uint64_t stubs_start,
                   uint64_t stubs_end, struct ptc_sites *out, char *why, size_t why_size)
{
    memset(out, 0, sizeof(*out));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    Elf *e = NULL;
    size_t shstrndx;
    if (elf_version(EV_CURRENT) == EV_NONE || !(e = elf_begin(fd, ELF_C_READ, NULL)) ||
        elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx)) {
        snprintf(why, why_size, "%s is not an ELF file libelf can read", path);
        goto done;
    }
    struct elf_sec stubs = {0}, sites = {0};
    find_sections(e, shstrndx, &stubs, &sites);
    if (!stubs.found || stubs.addr + load_bias != stubs_start ||
        stubs.addr + stubs.size + load_bias < stubs_end) {
        snprintf(why, why_size,
                 "%s is not the object the trace recorded (its stub section moved: rebuilt "
                 "since?)", path);
        goto done;
    }
    if (!sites.found || !sites.data) {
        snprintf(why, why_size, "%s has no call-site table (built before map version 3)",
                 path);
        goto done;
    }
    if (build(&sites, load_bias, out)) {
        snprintf(why, why_size, "out of memory");
        ptc_sites_free(out);
        goto done;
    }
    rc = 0;
done:
    if (e)
        elf_end(e);
    close(fd);
    return rc;
}

uint64_t ptc_sites_ret(const struct ptc_sites *s, uint64_t stub)
{
    size_t k = s->n ? ptc_sorted_find(s->stub, s->n, stub) : 0;
    return k < s->n ? s->ret[k] : 0;
}

void ptc_sites_free(struct ptc_sites *s)
{
    free(s->stub);
    free(s->ret);
    memset(s, 0, sizeof(*s));
}
