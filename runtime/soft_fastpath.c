/* The fast id handlers of units whose call sites clobber %r10 and %r11
 * (PTCALL_MAP_F_SCRATCH_R10): copies of a template in soft_handler.S, in a page of their own,
 * with the %fs offsets of this runtime's ptc_tls as immediates. The shared handlers must
 * first load that offset from the GOT and save the registers they use; these touch no stack
 * (untimed) and spend about half the instructions per event. The page is written, then made
 * read+execute (never writable and executable at once). */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "soft_internal.h"

extern const uint8_t ptc_tpl_id[], ptc_tpl_id_pos[], ptc_tpl_id_end[], ptc_tpl_id_slow[],
    ptc_tpl_id_go[], ptc_tpl_id_nogo[];
extern const uint64_t ptc_tpl_id_size;
extern const uint8_t ptc_tpl_idt[], ptc_tpl_idt_pos[], ptc_tpl_idt_end[], ptc_tpl_idt_slow[],
    ptc_tpl_idt_go[], ptc_tpl_idt_nogo[];
extern const uint64_t ptc_tpl_idt_size;
extern const uint8_t ptc_tpl_idk[], ptc_tpl_idk_pos[], ptc_tpl_idk_end[], ptc_tpl_idk_slow[],
    ptc_tpl_idk_go[], ptc_tpl_idk_nogo[], ptc_tpl_idk_clk[];
extern const uint64_t ptc_tpl_idk_size;
void ptc_fast_slow_idt(void);
void ptc_fast_slow_idk(void);

/* timed: 0 untimed, 1 rdtsc, 2 the ticker's clock word (soft_ticker.c) */
void *fastpath_build(int timed)
{
    const uint8_t *tpl = ptc_tpl_id, *pos = ptc_tpl_id_pos, *end = ptc_tpl_id_end,
                  *slow = ptc_tpl_id_slow, *go = ptc_tpl_id_go, *nogo = ptc_tpl_id_nogo;
    uint64_t size = ptc_tpl_id_size;
    void (*slow_entry)(void) = ptc_fast_slow_id;
    if (timed == 1) {
        tpl = ptc_tpl_idt, pos = ptc_tpl_idt_pos, end = ptc_tpl_idt_end;
        slow = ptc_tpl_idt_slow, go = ptc_tpl_idt_go, nogo = ptc_tpl_idt_nogo;
        size = ptc_tpl_idt_size;
        slow_entry = ptc_fast_slow_idt;
    } else if (timed == 2) {
        tpl = ptc_tpl_idk, pos = ptc_tpl_idk_pos, end = ptc_tpl_idk_end;
        slow = ptc_tpl_idk_slow, go = ptc_tpl_idk_go, nogo = ptc_tpl_idk_nogo;
        size = ptc_tpl_idk_size;
        slow_entry = ptc_fast_slow_idk;
    }
    if (size > 4096)
        return NULL;
    int32_t d_pos, d_end;
    if (tls_offsets(&d_pos, &d_end) != 0)
        return NULL;
    uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return NULL;
    memcpy(page, tpl, size);
    memcpy(page + (pos - tpl) - 4, &d_pos, 4);
    memcpy(page + (end - tpl) - 4, &d_end, 4);
    uint64_t slow_addr = (uint64_t)(uintptr_t)slow_entry;
    memcpy(page + (slow - tpl), &slow_addr, 8);
    if (timed == 2) {
        uint64_t clk = (uint64_t)(uintptr_t)&ptc_clock.word;
        memcpy(page + (ptc_tpl_idk_clk - tpl) - 8, &clk, 8);
    }
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) {
        munmap(page, 4096);
        return NULL;
    }
    /* the compare after the xadd sits where the template's pos label is */
    uint64_t base = (uint64_t)(uintptr_t)page;
    check_point_add(base + (uint64_t)(pos - tpl), base + (uint64_t)(go - tpl),
                    base + (uint64_t)(nogo - tpl));
    return page;
}
