/* Ret sleds armed and disarmed in-process by the runtime's sites_switch (soft_sites.c), and
 * executed: each site is the `ret` of a tiny function (`mov $1, %eax; ret; int3 x 4`) whose
 * stub, once the site is armed as `jmp stub`, is `mov $2, %eax; ret`. Sites are placed so that
 * one fits an aligned 8-byte word, one straddles two words and one crosses a page boundary;
 * a nop sled and a site holding foreign code ride along. Every call must return 1 disarmed
 * and 2 armed, the bytes must be exactly the documented forms, and re-arming changes nothing. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "ptc_sled.h"
#include "rt_check.h"
#include "ptcall/map_format.h"
#include "soft_internal.h"

/* soft_sites.c asks for trampolines only through a plan; this test passes none */
uint64_t tramp_at(const struct tramps *t, uint64_t i)
{
    (void)t;
    (void)i;
    return 0;
}


enum { NFUNC = 3 };

int main(void)
{
    uint8_t *code = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    memset(code, 0xcc, 3 * 4096);
    /* where each function's ret lands: in one word, across two words, across pages */
    const uint64_t ret_at[NFUNC] = {0x102, 0x206, 4096 - 2};
    static const uint8_t body[] = {0xb8, 0x01, 0, 0, 0, 0xc3, 0xcc, 0xcc, 0xcc, 0xcc};
    static const uint8_t stub_code[] = {0xb8, 0x02, 0, 0, 0, 0xc3};
    uint8_t *stub = code + 2 * 4096 + 0x100; /* 16-byte aligned */
    memcpy(stub, stub_code, sizeof(stub_code));
    int (*fn[NFUNC])(void);
    for (int k = 0; k < NFUNC; k++) {
        memcpy(code + ret_at[k] - 5, body, sizeof(body));
        fn[k] = (int (*)(void))(void *)(code + ret_at[k] - 5);
    }
    /* a nop sled and a site with foreign bytes */
    const uint8_t nop[5] = PTCALL_SLED_NOP;
    uint8_t *nop_site = code + 0x300, *foreign = code + 0x400;
    memcpy(nop_site, nop, 5);
    memset(foreign, 0x90, 5);

    /* the table holds 32-bit offsets: it lives next to the code, as in an ELF object */
    struct ptcall_map_site *table = (struct ptcall_map_site *)(void *)(code + 2 * 4096 + 0x200);
    const uint8_t *sites[NFUNC + 2] = {code + ret_at[0], code + ret_at[1], code + ret_at[2],
                                       nop_site, foreign};
    for (int i = 0; i < NFUNC + 2; i++) {
        uint64_t at = (uint64_t)(uintptr_t)&table[i];
        table[i].site_rel = (int32_t)((int64_t)(uintptr_t)sites[i] - (int64_t)at);
        table[i].stub_rel = (int32_t)((int64_t)(uintptr_t)stub - (int64_t)(at + 4) +
                                      (i == NFUNC + 1 || i < NFUNC ? PTCALL_SITE_RET : 0));
    }
    uint64_t t0 = (uint64_t)(uintptr_t)table, t1 = t0 + (NFUNC + 2) * sizeof(*table);
    CHECK(ptc_ret_sled_fits((uint64_t)(uintptr_t)sites[0]) &&
          !ptc_ret_sled_fits((uint64_t)(uintptr_t)sites[1]));

    for (int k = 0; k < NFUNC; k++)
        CHECK(fn[k]() == 1);

    struct sites_result r = {0};
    CHECK(sites_switch(t0, t1, 1, NULL, &r) == 0);
    CHECK(r.bad_code == 1 && r.far == 0 && r.unpatched == 0);
    for (int k = 0; k < NFUNC; k++) {
        const uint8_t *s = sites[k];
        int32_t rel;
        memcpy(&rel, s + 1, 4);
        CHECK(s[0] == PTCALL_SLED_JMP && rel == (int32_t)(stub - (s + 5)));
        CHECK(fn[k]() == 2);
    }
    CHECK(nop_site[0] == PTCALL_SLED_CALL);
    CHECK(foreign[0] == 0x90);

    /* arming again changes nothing */
    uint8_t before[3 * 4096];
    memcpy(before, code, sizeof(before));
    memset(&r, 0, sizeof(r));
    CHECK(sites_switch(t0, t1, 1, NULL, &r) == 0);
    CHECK(memcmp(before, code, sizeof(before)) == 0);

    /* disarmed: the opcode byte is ret again, the rel32 stays */
    memset(&r, 0, sizeof(r));
    CHECK(sites_switch(t0, t1, 0, NULL, &r) == 0);
    for (int k = 0; k < NFUNC; k++) {
        const uint8_t *was = before + (sites[k] - code);
        CHECK(sites[k][0] == PTCALL_SLED_RET && memcmp(sites[k] + 1, was + 1, 4) == 0);
        CHECK(fn[k]() == 1);
    }
    CHECK(memcmp(nop_site, nop, 5) == 0);

    /* and armed once more from that state */
    memset(&r, 0, sizeof(r));
    CHECK(sites_switch(t0, t1, 1, NULL, &r) == 0);
    for (int k = 0; k < NFUNC; k++)
        CHECK(fn[k]() == 2);

    if (failures)
        fprintf(stderr, "ret sled test: %d checks failed\n", failures);
    else
        printf("ret sled test: %d ret sleds armed, run, disarmed and re-armed\n", NFUNC);
    return failures != 0;
}
