/* Call-site sleds of an instrumented object, read from its ELF file (the ptcall_sites table,
 * include/ptcall/map_format.h): for every stub, the address a TIP.PGD leaving it carries --
 * the instruction after the sled that called it -- which the simulator needs for the IP
 * compression of exits and of the next entry. */
#ifndef PTC_BW_SITES_H
#define PTC_BW_SITES_H

#include <stddef.h>
#include <stdint.h>

#define PTC_SITE_RET_CALLER 1u /* a ret sled: the stub returns to its function's caller */

struct ptc_sites {
    uint64_t *stub;  /* run-time stub addresses, sorted */
    uint64_t *ret;   /* the run-time return address, or PTC_SITE_RET_CALLER */
    size_t n;
};

/* Reads the sites of the object at path, loaded with load_bias, whose ptcall_stubs section
 * runs at [stubs_start, stubs_end). Returns 0; -1 with why filled when the file cannot be
 * read, has no sites table, or its stub section is not the one the trace recorded (rebuilt
 * since). */
int ptc_sites_read(const char *path, uint64_t load_bias, uint64_t stubs_start,
                   uint64_t stubs_end, struct ptc_sites *out, char *why, size_t why_size);
/* The return address for a stub (run-time address), or 0 when the table has none. */
uint64_t ptc_sites_ret(const struct ptc_sites *s, uint64_t stub);
void ptc_sites_free(struct ptc_sites *s);

#endif
