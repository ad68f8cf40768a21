/* map_check OBJECT: runs the map reader's checks that need no loaded object (ptc_map_scan)
 * on OBJECT's ptcall_map section, read from the file at its link-time addresses. Prints
 * "ok: N units" and exits 0 when the map passes, else the reader's message and exits 1.
 * runtime-bad-map (badmap_test.py) uses it to show that the maps it damages pass every check
 * a reader can make without the object, so that only the runtime's object checks stop them. */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_map_read.h"

/* The whole file in memory; NULL after a message. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    unsigned char *b = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (b = malloc((size_t)n)) && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (f)
        fclose(f);
    if (!b)
        fprintf(stderr, "map_check: cannot read %s\n", path);
    *size = n > 0 ? (size_t)n : 0;
    return b;
}

/* Section `name` of the ELF64 file b, or NULL. */
static const Elf64_Shdr *section(const unsigned char *b, size_t size, const char *name)
{
    Elf64_Ehdr eh;
    if (size < sizeof(eh) || memcmp(b, ELFMAG, SELFMAG) || b[EI_CLASS] != ELFCLASS64)
        return NULL;
    memcpy(&eh, b, sizeof(eh));
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shstrndx >= eh.e_shnum ||
        eh.e_shoff > size || (size - eh.e_shoff) / sizeof(Elf64_Shdr) < eh.e_shnum)
        return NULL;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh.e_shoff);
    const Elf64_Shdr *str = &sh[eh.e_shstrndx];
    for (unsigned i = 0; i < eh.e_shnum; i++)
        if (str->sh_offset + sh[i].sh_name < size &&
            !strncmp((const char *)b + str->sh_offset + sh[i].sh_name, name, strlen(name) + 1))
            return &sh[i];
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: map_check OBJECT\n");
        return 2;
    }
    size_t size;
    unsigned char *b = slurp(argv[1], &size);
    if (!b)
        return 2;
    const Elf64_Shdr *map = section(b, size, "ptcall_map");
    const Elf64_Shdr *stubs = section(b, size, "ptcall_stubs");
    if (!map || !stubs || map->sh_offset > size || size - map->sh_offset < map->sh_size) {
        fprintf(stderr, "map_check: %s has no readable ptcall_map and ptcall_stubs\n", argv[1]);
        free(b);
        return 2;
    }
    struct ptc_map_summary s;
    size_t bad = 0;
    int e = ptc_map_scan(b + map->sh_offset, map->sh_size, map->sh_addr, stubs->sh_addr,
                         stubs->sh_addr + stubs->sh_size, &s, &bad);
    if (e < 0)
        printf("%s: %s at offset %zu\n", argv[1], ptc_map_strerror(e), bad);
    else
        printf("ok: %u units\n", s.num_units);
    free(b);
    return e < 0;
}
