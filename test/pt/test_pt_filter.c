/* pt-filter: the address filter string computed from real ELF files built by the test suite
 * (a PIE executable and a shared library with a ptcall_stubs section), checked against
 * readelf; more modules than address ranges leaves the extra ones untraced. Also what the
 * recorder makes of `record --only/--skip` from those files: the MODULE_ARMED chunk, and the
 * check of --only before the command starts. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_map_read.h"
#include "ptc_pt_rec.h"
#include "ptc_select.h"
#include "ptcall/trace_format.h"

#include "pt_check.h"

/* readelf -SW: "[Nr] Name Type Address Off Size ..." */
static int readelf_section(const char *path, const char *name, unsigned long long *addr,
                           unsigned long long *off, unsigned long long *size)
{
    char cmd[16384 + 64], line[16384];
    snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int found = -1;
    while (fgets(line, sizeof(line), p)) {
        char *b = strchr(line, ']');
        char nm[128], type[64];
        if (!b || sscanf(b + 1, "%127s %63s %llx %llx %llx", nm, type, addr, off, size) != 5)
            continue;
        if (!strcmp(nm, name))
            found = 0;
        if (!found)
            break;
    }
    pclose(p);
    return found;
}

/* The MODULE_ARMED chunk of stubprog (functions work, leaf, main; a version 1 unit, whose
 * call sites always call their stubs) for --only 'le*': the Intel PT recorder counts the unit
 * armed whole (its stubs run whatever was chosen); the software backend's rule (flags 0)
 * counts only leaf, the stubs of the others staying `ret`. */
static void check_armed(const struct ptc_pt_module_req *m)
{
    struct ptc_select sel = {.only = {"le*"}, .nonly = 1};
    void *buf = NULL;
    char why[512];
    long n = ptc_pt_build_armed(m->path, &m->sec, 0x1000, 7, &sel, "--only 'le*'", &buf, why,
                                sizeof(why));
    struct ptc_module_armed h = {0};
    if (n > 0)
        memcpy(&h, buf, sizeof(h));
    CHECK(n == (long)(sizeof(h) + 1 + sizeof("--only 'le*'")) && h.module_id == 7 &&
              h.num_funcs == 3 && h.num_armed == 3 && ((uint8_t *)buf)[sizeof(h)] == 7 &&
              !strcmp((char *)buf + sizeof(h) + 1, "--only 'le*'") &&
              h.spec_size == sizeof("--only 'le*'"),
          "pt armed chunk: %ld bytes (%s), %u of %u armed", n, n < 0 ? why : "", h.num_armed,
          h.num_funcs);
    CHECK(sel.only_hit == 1, "the glob's hit is noted");
    free(buf);
    uint8_t *map = ptc_pt_read_map(m->path, &m->sec, why, sizeof(why));
    struct ptc_map_summary sum;
    CHECK(map && ptc_map_scan(map, m->sec.map_size, m->sec.map_addr, 0, 0, &sum, NULL) == 0,
          "map: %s", why);
    uint8_t out[256];
    n = map ? ptc_select_build_armed(&sel, map, m->sec.map_size, m->sec.map_addr, &sum, 7, 0, "x",
                                     out, sizeof(out))
            : -1;
    memcpy(&h, out, sizeof(h));
    CHECK(n > 0 && h.num_armed == 1 && out[sizeof(h)] == 2, "soft armed: %u, bits %x",
          h.num_armed, out[sizeof(h)]);
    free(map);
    printf("armed: pt counts the version 1 unit whole, soft only the chosen function\n");
}

/* record_check_select(): --only against the files before the command starts */
static void check_only(const char *exe)
{
    const char *only[1] = {"leaf"};
    struct record_options o = {.only = only, .num_only = 1};
    CHECK(record_check_select(&o, exe) == 0, "--only leaf matches stubprog");
    only[0] = "nomatch";
    fprintf(stderr, "(an error about 'nomatch' is expected here)\n");
    CHECK(record_check_select(&o, exe) == -1, "--only nomatch is refused");
    CHECK(record_check_select(&o, "/bin/sh") == 1, "/bin/sh has nothing to check against");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_pt_filter EXE LIB\n");
        return 2;
    }
    struct ptc_pt_module_req m[3];
    memset(m, 0, sizeof(m));
    char why[512];
    for (int i = 0; i < 2; i++) {
        CHECK(realpath(argv[1 + i], m[i].path), "realpath %s", argv[1 + i]);
        CHECK(ptc_pt_elf_sections(m[i].path, &m[i].sec, why, sizeof(why)) == 0, "%s", why);
        unsigned long long a, o, s;
        CHECK(readelf_section(m[i].path, "ptcall_stubs", &a, &o, &s) == 0,
              "readelf finds no ptcall_stubs in %s", m[i].path);
        CHECK(m[i].sec.has_stubs && m[i].sec.stubs_offset == o && m[i].sec.stubs_size == s &&
                  m[i].sec.stubs_addr == a,
              "%s: libelf off %llx size %llx addr %llx, readelf off %llx size %llx addr %llx",
              m[i].path, (unsigned long long)m[i].sec.stubs_offset,
              (unsigned long long)m[i].sec.stubs_size, (unsigned long long)m[i].sec.stubs_addr,
              o, s, a);
        CHECK(s > 5 * 16, "6 stubs on a 16-byte stride: size %llx", s);
        printf("%s: ptcall_stubs at file offset 0x%llx, size 0x%llx, address 0x%llx\n",
               m[i].path, o, s, a);
    }
    /* a module without stubs: the C library */
    snprintf(m[2].path, sizeof(m[2].path), "%s", "/bin/sh");
    CHECK(ptc_pt_elf_sections(m[2].path, &m[2].sec, why, sizeof(why)) == 0, "%s", why);
    CHECK(!m[2].sec.has_stubs, "/bin/sh has no stubs");
    CHECK(ptc_pt_elf_sections("/etc/passwd", &m[2].sec, why, sizeof(why)) == -1 &&
              strstr(why, "not an ELF"),
          "non-ELF: %s", why);
    m[2].sec.has_stubs = 0;

    char f[16384], want[16384];
    int n = ptc_pt_filter_string(m, 3, 2, f, sizeof(f));
    snprintf(want, sizeof(want), "filter 0x%llx/0x%llx@%s filter 0x%llx/0x%llx@%s",
             (unsigned long long)m[0].sec.stubs_offset, (unsigned long long)m[0].sec.stubs_size,
             m[0].path, (unsigned long long)m[1].sec.stubs_offset,
             (unsigned long long)m[1].sec.stubs_size, m[1].path);
    CHECK(n == 2 && !strcmp(f, want), "filter '%s', want '%s'", f, want);
    CHECK(m[0].traced && m[1].traced && !m[2].traced, "traced flags");
    printf("filter: %s\n", f);
    /* one range only: the library is not traced */
    n = ptc_pt_filter_string(m, 3, 1, f, sizeof(f));
    CHECK(n == 1 && m[0].traced && !m[1].traced, "1 range: %d '%s'", n, f);
    /* the offset is a file offset, not an address: for these files they differ or match
     * only by layout; check the relation the kernel uses */
    CHECK(m[0].sec.stubs_offset % 4096 == m[0].sec.stubs_addr % 4096,
          "offset and address agree modulo the page size");
    /* the MODULE chunk built from the file's ptcall_map (ptc_map_read) at a load bias */
    uint64_t bias = 0x555555554000ull;
    void *mod = NULL;
    uint32_t ns = 0;
    long len = ptc_pt_build_module(m[0].path, &m[0].sec, bias, 0, 0, &mod, &ns, why,
                                   sizeof(why));
    CHECK(len > 0 && ns == 6, "module: %ld bytes, %u stubs (%s)", len, ns, len < 0 ? why : "");
    if (len > 0) {
        struct ptc_module h;
        memcpy(&h, mod, sizeof(h));
        CHECK(h.num_stubs == 6 && h.num_funcs == 3 && h.stubs_start == m[0].sec.stubs_addr + bias &&
                  h.load_bias == bias,
              "module header");
        for (uint32_t i = 0; i < h.num_stubs && i < 6; i++) {
            struct ptc_module_stub st;
            memcpy(&st, (char *)mod + sizeof(h) + i * sizeof(st), sizeof(st));
            CHECK(st.address == h.stubs_start + 16 * i && st.kind == i % 2 && st.func == i / 2,
                  "stub %u: %llx kind %u func %u", i, (unsigned long long)st.address, st.kind,
                  st.func);
        }
        printf("module: %u stubs, %u functions, stubs at 0x%llx..0x%llx\n", h.num_stubs,
               h.num_funcs, (unsigned long long)h.stubs_start, (unsigned long long)h.stubs_end);
    }
    free(mod);
    check_armed(&m[0]);
    check_only(m[0].path);
    printf("%s\n", pt_check_fails ? "FAIL" : "PASS");
    return pt_check_fails ? 1 : 0;
}
