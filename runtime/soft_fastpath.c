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
void ptc_fast_slow_idt(void);

void *fastpath_build(int timed)
{
    const uint8_t *tpl = timed ? ptc_tpl_idt : ptc_tpl_id;
    const uint8_t *pos = timed ? ptc_tpl_idt_pos : ptc_tpl_id_pos;
    const uint8_t *end = timed ? ptc_tpl_idt_end : ptc_tpl_id_end;
    const uint8_t *slow = timed ? ptc_tpl_idt_slow : ptc_tpl_id_slow;
    const uint8_t *go = timed ? ptc_tpl_idt_go : ptc_tpl_id_go;
    const uint8_t *nogo = timed ? ptc_tpl_idt_nogo : ptc_tpl_id_nogo;
    uint64_t size = timed ? ptc_tpl_idt_size : ptc_tpl_id_size;
    void (*slow_entry)(void) = timed ? ptc_fast_slow_idt : ptc_fast_slow_id;
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
