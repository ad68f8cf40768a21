/* pt_module_dump FILE LEAF_CALLS: the Intel PT recorder's MODULE chunk of an instrumented
 * file (ptc_pt_build_module_flags, with PTC_MAP_BUILD_LEAF_CALLS when LEAF_CALLS is 1), one
 * line per stub: "KIND FUNCTION". For pt-leaf-exits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_map_read.h"
#include "ptc_pt_rec.h"
#include "ptcall/trace_format.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pt_module_dump FILE 0|1\n");
        return 2;
    }
    struct ptc_pt_elf_sections sec;
    char why[512];
    if (ptc_pt_elf_sections(argv[1], &sec, why, sizeof(why)) != 0) {
        fprintf(stderr, "pt_module_dump: %s\n", why);
        return 1;
    }
    void *buf = NULL;
    uint32_t ns = 0;
    long n = ptc_pt_build_module_flags(argv[1], &sec, 0, 0, 0,
                                       atoi(argv[2]) ? PTC_MAP_BUILD_LEAF_CALLS : 0, &buf, &ns,
                                       why, sizeof(why));
    if (n <= 0) {
        fprintf(stderr, "pt_module_dump: %s\n", why);
        return 1;
    }
    const struct ptc_module *m = buf;
    const struct ptc_module_stub *st = (const void *)(m + 1);
    const struct ptc_module_func *fn = (const void *)(st + m->num_stubs);
    const char *strs = (const char *)(fn + m->num_funcs);
    for (uint32_t i = 0; i < m->num_stubs; i++)
        printf("%u %s\n", st[i].kind,
               st[i].func < m->num_funcs ? strs + fn[st[i].func].name : "?");
    free(buf);
    return 0;
}
