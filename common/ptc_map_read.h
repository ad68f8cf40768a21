/* Reading the `ptcall_map` section (include/ptcall/map_format.h, docs/map-format.md).
 *
 * Shared by the software runtime (which reads the section in its own memory) and the Intel PT
 * recorder (which reads it from the ELF file): every function takes the section's bytes and
 * the run-time address those bytes live at (for a file: the section's sh_addr plus the load
 * bias), so relative fields resolve the same way in both cases. Bytes need no alignment.
 *
 * Nothing here allocates. Building a PTC_CHUNK_MODULE payload is two calls:
 *     struct ptc_map_summary s;
 *     if (ptc_map_scan(bytes, size, addr, stubs_start, stubs_end, &s, &bad) == 0) {
 *         buf = alloc(ptc_map_module_size(&s, path));
 *         ptc_map_build_module(bytes, size, addr, &s, &info, path, 0, buf, size_of_buf);
 *     }
 */
#ifndef PTC_MAP_READ_H
#define PTC_MAP_READ_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/map_format.h"
#include "ptcall/trace_format.h"

/* Error codes (negative). ptc_map_strerror() names them. */
enum ptc_map_error {
    PTC_MAP_OK = 0,
    PTC_MAP_E_TRUNCATED = -1,     /* a blob or header runs past the end of the section */
    PTC_MAP_E_MAGIC = -2,         /* non-zero bytes that are not PTCALL_MAP_MAGIC */
    PTC_MAP_E_VERSION = -3,       /* unknown map version */
    PTC_MAP_E_HEADER_SIZE = -4,   /* header_size too small or past total_size */
    PTC_MAP_E_TOTAL_SIZE = -5,    /* total_size not a multiple of 8 or smaller than the header */
    PTC_MAP_E_STUBS_BOUNDS = -6,  /* stub table outside the blob or misaligned */
    PTC_MAP_E_FUNCS_BOUNDS = -7,  /* function table outside the blob or misaligned */
    PTC_MAP_E_STRINGS_BOUNDS = -8,/* string table outside the blob, empty, or not NUL-ended */
    PTC_MAP_E_STRING_OFFSET = -9, /* a string offset past the string table */
    PTC_MAP_E_FUNC_INDEX = -10,   /* a stub names a function the table does not have */
    PTC_MAP_E_KIND = -11,         /* unknown stub kind */
    PTC_MAP_E_STUB_RANGE = -12,   /* a stub outside [stubs_start, stubs_end) */
    PTC_MAP_E_STUB_ALIGN = -13,   /* a stub not on a PTCALL_STUB_STRIDE boundary */
    PTC_MAP_E_TOO_BIG = -14,      /* counts overflow a 32-bit field of the module chunk */
    PTC_MAP_E_BUFFER = -15,       /* output buffer too small */
    PTC_MAP_E_CALLBACK = -16,     /* the walk callback returned non-zero */
    PTC_MAP_E_EMPTY = -17,        /* the section holds no blob */
    PTC_MAP_E_SITES = -18,        /* v3 call-site table bounds reversed or misaligned */
    PTC_MAP_E_SLOT = -19,         /* the soft-handler slot misaligned, over the map or the
                                     stubs, or outside the object (its writable segments) */
    PTC_MAP_E_SITES_PLACE = -20,  /* the call-site table over the map or the stubs, outside
                                     the object (its segments), or not the same in every
                                     unit */
    PTC_MAP_E_SITE = -21,         /* a call site outside the object (its code segments), or
                                     naming a stub outside [stubs_start, stubs_end) */
    PTC_MAP_E_BLOCKS = -23,       /* v7: the blocks part out of bounds, its sizes inconsistent,
                                     a block naming a missing function or lines, a line a
                                     missing string, or the counter pointer misaligned,
                                     over the map or outside the object's writable data */
    PTC_MAP_E_GRAPH = -24,        /* v8: the call-graph part out of bounds, its sizes
                                     inconsistent, or a record naming a missing icall,
                                     block, successor or string */
    PTC_MAP_E_EXT = -22,          /* v6: the sizes-and-callees extension out of bounds, its
                                     sizes inconsistent, or a callee record naming a missing
                                     function or string */
};

const char *ptc_map_strerror(int err);

/* One validated blob, as handed to a walk callback. Pointers point into the caller's bytes
 * and may be unaligned: read elements with ptc_map_get_stub()/ptc_map_get_func(). */
struct ptc_map_unit {
    struct ptcall_map_header hdr;  /* copy of the header */
    const uint8_t *blob;           /* first byte of the blob */
    uint64_t addr;                 /* run-time address of the blob */
    size_t offset;                 /* of the blob within the section */
    uint32_t index;                /* blob number within the section, from 0 */
    const char *strings;           /* hdr.strings_size bytes, the last one NUL */
    uint64_t slot_addr;            /* run-time address of the soft-handler slot */
    uint64_t sites_start;          /* PTCALL_MAP_F_SLEDS: run-time bounds of the object's */
    uint64_t sites_end;            /* struct ptcall_map_site table; else 0, 0 */
};

/* Map version 6 (docs/map-format.md, "Sizes and callees"): function i's IR instructions,
 * basic blocks and direct callees, of a validated unit. 1 when the unit says (version 6
 * with an extension), else 0 with *out zeroed (older units do not know). */
int ptc_map_get_func_ext(const struct ptc_map_unit *u, uint32_t i,
                         struct ptcall_map_func_ext *out);
/* Callee j of the unit (j < ext.num_callees: records first_callee .. + num_callees of a
 * function); its name is u->strings + out->name. */
void ptc_map_get_callee(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_callee *out);

/* Map version 7 (PTCALL_MAP_F_BLOCKS): the unit's blocks part. 1 and *out filled (and
 * *ptr_addr: the run-time address of the unit's counter pointer) when the unit has block
 * counters, else 0. */
int ptc_map_get_blocks(const struct ptc_map_unit *u, struct ptcall_map_blocks *out,
                       uint64_t *ptr_addr);
/* Block i / line j of a unit with blocks (i < num_blocks, j < num_lines). */
void ptc_map_get_block(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_block *out);
void ptc_map_get_line(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_line *out);

/* Map version 8 (docs/map-format.md, "Call graph for reachability"): the unit's call-graph
 * part. 1 and *out filled when the unit has one, else 0 (older units: no address-taken
 * flags, type ids, indirect calls or successors). */
int ptc_map_get_graph(const struct ptc_map_unit *u, struct ptcall_map_graph *out);
/* Function i's record (i < num_funcs), indirect call j (j < num_icalls), taken record j
 * (j < num_taken), block i's successor range (i < num_blocks) and successor j (j < num_succs)
 * of a unit with a graph part. */
void ptc_map_get_func_graph(const struct ptc_map_unit *u, uint32_t i,
                            struct ptcall_map_func_graph *out);
void ptc_map_get_icall(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_icall *out);
void ptc_map_get_taken(const struct ptc_map_unit *u, uint32_t j, struct ptcall_map_taken *out);
void ptc_map_get_block_succ(const struct ptc_map_unit *u, uint32_t i,
                            struct ptcall_map_block_succ *out);
uint32_t ptc_map_get_succ(const struct ptc_map_unit *u, uint32_t j);

/* Reads stub i (run-time address in *addr) / function i of a validated unit. */
void ptc_map_get_stub(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_stub *out,
                      uint64_t *addr);
void ptc_map_get_func(const struct ptc_map_unit *u, uint32_t i, struct ptcall_map_func *out);

/* Calls fn for each blob in [data, data+size) after validating it (zero padding between
 * blobs is skipped). When stubs_end > stubs_start every stub must lie on a 16-byte boundary
 * inside [stubs_start, stubs_end); pass 0, 0 to skip that check. Returns the number of blobs
 * (>= 0), or an error with the offending section offset in *bad_offset (if not NULL). The
 * whole section is validated before the first callback runs. */
typedef int (*ptc_map_unit_fn)(void *ctx, const struct ptc_map_unit *u);
int ptc_map_walk(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, ptc_map_unit_fn fn, void *ctx, size_t *bad_offset);

/* What the process may do in a piece of a loaded object: the PF_R / PF_W / PF_X of its
 * PT_LOAD segment (the same values), less PF_W where PT_GNU_RELRO made it read-only. */
#define PTC_MAP_SEG_X 0x1u
#define PTC_MAP_SEG_W 0x2u
#define PTC_MAP_SEG_R 0x4u

/* One mapped piece of a loaded object, [start, end): a PT_LOAD segment's pages. */
struct ptc_map_segment {
    uint64_t start, end;
    unsigned prot;      /* PTC_MAP_SEG_* */
};

/* The loaded object a section belongs to, for the checks only the object can answer: that
 * each unit's soft-handler slot (which the runtime writes) and the call-site table and the
 * sleds it names (which the runtime reads and patches) lie inside it. bytes: the object's
 * bytes from run-time address start on, readable here (the runtime: (void *)start), or NULL
 * when they are not (a reader of another process): then the call-site table's entries are
 * not checked, and the caller checks them with ptc_map_check_sites once it has read them.
 * segs: optional (NULL, 0: the whole extent is readable and writable). The gaps between an
 * object's PT_LOAD segments may be unmapped or PROT_NONE, and a slot in read-only memory
 * cannot be written: with segs each place must also lie inside one segment that allows what
 * the runtime does there (the slot PTC_MAP_SEG_W, the call-site table PTC_MAP_SEG_R, each
 * sled's aligned word and its 5 bytes PTC_MAP_SEG_X). */
struct ptc_map_object {
    const void *bytes;
    uint64_t start;
    size_t size;        /* the object is [start, start + size) */
    const struct ptc_map_segment *segs;
    size_t nsegs;
};

/* Whether [a, a + n) lies inside the object and, when it lists its segments, inside one of
 * them that allows every access in prot (PTC_MAP_SEG_*). For readers that check the places a
 * validated map names before they touch them (ptcall arm, through /proc/PID/mem). */
int ptc_map_object_holds(const struct ptc_map_object *o, uint64_t a, uint64_t n, unsigned prot);

/* ptc_map_walk, and with obj also those checks (obj NULL: as ptc_map_walk). Without obj the
 * reader still refuses a slot or call-site table whose address wraps around, is misaligned,
 * or lies over the map section or the stub range, and call-site tables that differ between
 * units (every unit of an object names the same one); it cannot tell that they lie inside
 * the object. */
int ptc_map_walk_in(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                    uint64_t stubs_end, const struct ptc_map_object *obj, ptc_map_unit_fn fn,
                    void *ctx, size_t *bad_offset);

/* Every entry of the call-site table [start, end) (run-time addresses), whose bytes are at
 * table: each sled (the aligned word the runtime stores, and the 5 bytes of a ret sled)
 * inside the object (with segments: its code), each stub inside [stubs_start, stubs_end) on
 * a stub boundary (when stubs_end > stubs_start). Returns 0, or PTC_MAP_E_SITE with the
 * entry's index in *bad. */
int ptc_map_check_sites(const void *table, uint64_t start, uint64_t end, uint64_t stubs_start,
                        uint64_t stubs_end, const struct ptc_map_object *obj, uint64_t *bad);

/* Totals over a section, from ptc_map_scan. */
struct ptc_map_summary {
    uint32_t num_units;
    uint32_t num_stubs;
    uint32_t num_funcs;
    uint64_t strings_size;  /* sum of the units' string tables */
    uint64_t identity;      /* FNV-1a 64 over the units' unit_hash values (8 bytes LE each) */
    uint64_t stubs_min;     /* lowest / highest stub run-time address (0, 0 if no stubs) */
    uint64_t stubs_max;
    uint32_t flags_or;      /* OR of the units' flags */
};

/* Validates the whole section and fills *s. Returns 0 or an error (see ptc_map_walk). An
 * empty section (no blob) is PTC_MAP_E_EMPTY. */
int ptc_map_scan(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                 uint64_t stubs_end, struct ptc_map_summary *s, size_t *bad_offset);
/* The same with the object's checks (ptc_map_walk_in). */
int ptc_map_scan_in(const void *data, size_t size, uint64_t addr, uint64_t stubs_start,
                    uint64_t stubs_end, const struct ptc_map_object *obj,
                    struct ptc_map_summary *s, size_t *bad_offset);

/* Bytes of the PTC_CHUNK_MODULE payload for this summary and object path. */
size_t ptc_map_module_size(const struct ptc_map_summary *s, const char *path);

/* Whether the sites of this stub may stay disarmed while its function's entry is recorded
 * as the whole call (PTC_STUB_CALL): a leaf's stub (map version 4) in a unit whose call
 * sites are sleds, so that its exits can be left unarmed. The soft runtime and the MODULE
 * chunk it writes both decide by this. */
static inline int ptc_map_leaf_quiet(const struct ptc_map_unit *u, const struct ptcall_map_stub *st)
{
    return u->hdr.version >= 4 && (u->hdr.flags & PTCALL_MAP_F_SLEDS) &&
           (st->kind & PTCALL_STUB_F_LEAF);
}

/* ptc_map_build_module flags: the ENTRY stubs of leaves (ptc_map_leaf_quiet) get kind
 * PTC_STUB_CALL, for a recorder that leaves their exits unarmed. */
#define PTC_MAP_BUILD_LEAF_CALLS 0x1u

/* Writes the PTC_CHUNK_MODULE payload into out: struct ptc_module, then one ptc_module_stub
 * per map stub (blob order, so stub id = first_stub_id + position), one ptc_module_func per
 * function (function indices renumbered object-wide: unit k's functions follow unit k-1's),
 * then the strings (each unit's table, offsets rebased, then the path). module_id,
 * first_stub_id, load_bias, stubs_start and stubs_end are taken from *info; the counts,
 * identity, path and strings_size are filled in. Returns the payload size, or an error. */
long ptc_map_build_module(const void *data, size_t size, uint64_t addr,
                          const struct ptc_map_summary *s, const struct ptc_module *info,
                          const char *path, unsigned flags, void *out, size_t out_size);

#endif
