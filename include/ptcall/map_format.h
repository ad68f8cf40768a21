/* ptcall map section format, version 5 (contract 1: the instrumented binary).
 *
 * Every translation unit compiled with the ptcall pass contributes one *map blob* to the
 * allocated, read-only ELF section `ptcall_map`, and its stubs to the code section
 * `ptcall_stubs`. The linker concatenates the blobs of all units of an object (executable
 * or shared library); a reader walks them by `total_size`. All addresses are stored
 * relative to the field that holds them, so the blob needs no dynamic relocations and
 * can be read from the ELF file on disk as well as from memory.
 *
 * Documented in docs/map-format.md. Little-endian, x86-64 only.
 */
#ifndef PTCALL_MAP_FORMAT_H
#define PTCALL_MAP_FORMAT_H

#include <stdint.h>

#define PTCALL_MAP_MAGIC 0x4d435450u /* "PTCM" read as little-endian u32 */
#define PTCALL_MAP_VERSION 8u
/* Oldest map version readers still accept (v1: every call site always calls its stub). */
#define PTCALL_MAP_VERSION_MIN 1u
/* header_size of versions 1 and 2 (no sled table fields) */
#define PTCALL_MAP_HEADER_SIZE_V2 64u

#define PTCALL_STUB_SECTION "ptcall_stubs"
#define PTCALL_MAP_SECTION "ptcall_map"
/* v3: one struct ptcall_map_site per call-site sled, for the whole object */
#define PTCALL_SITES_SECTION "ptcall_sites"
/* Every stub starts on this boundary and owns this many bytes: room for the soft
 * backend's patch (optional endbr64, `call *slot(%rip)`, `ret`). */
#define PTCALL_STUB_STRIDE 16u

/* What executing a stub means. */
enum ptcall_stub_kind {
    PTCALL_STUB_ENTRY = 0,   /* first thing the function does */
    PTCALL_STUB_EXIT = 1,    /* right before a return (site = which return) */
    PTCALL_STUB_UNWIND = 2,  /* right before `resume`: the frame is left by unwinding */
    PTCALL_STUB_LANDING = 3, /* at a landing pad or after a returns_twice call: the
                                function's frame is on top again; pop whatever is above */
};
/* struct ptcall_map_stub.kind: the kind in the low byte, flags above (version 4). */
#define PTCALL_STUB_KIND_MASK 0xffu
#define PTCALL_STUB_F_LEAF 0x100u /* v4, on the ENTRY and EXIT records of a function that
                                     calls nothing: between its entry and a return of the
                                     same activation no instrumented code can run on its
                                     thread except a signal handler */

/* map blob flags */
#define PTCALL_MAP_F_EARLY 0x1u    /* placement early (before inlining); else late */
#define PTCALL_MAP_F_EXITS 0x2u    /* exit stubs were emitted */
#define PTCALL_MAP_F_CET 0x4u      /* stubs begin with endbr64 */
#define PTCALL_MAP_F_GATED 0x8u    /* v2: call sites are `cmpq $0, slot(%rip); je 1f;
                                      call stub; 1:` -- they call no stub until the
                                      runtime arms the unit by making its slot non-zero */
#define PTCALL_MAP_F_SCRATCH_R11 0x10u /* v2: stub calls declare %r11 clobbered, so a patched
                                          stub may pass its id in %r11 */
#define PTCALL_MAP_F_SLEDS 0x20u   /* v3: call sites are 5-byte nop sleds, listed in the
                                      object's ptcall_sites table; the runtime arms a site by
                                      writing `call stub` over its sled */

#define PTCALL_MAP_F_SCRATCH_R10 0x40u /* v3: stub calls also declare %r10 clobbered, so a
                                          handler reached from a patched stub may use it */
#define PTCALL_MAP_F_BLOCKS 0x100u  /* v7: every basic block of the unit's instrumented
                                        functions counts its runs (ptcall-cc -fptcall-cov):
                                        struct ptcall_map_blocks at ext.blocks_offset */
#define PTCALL_MAP_F_RET_SLEDS 0x80u /* v5: the unit was compiled where exit sleds may be
                                        moved behind their `ret` (ret sleds, below) */

/* The disarmed and armed forms of a sled (PTCALL_MAP_F_SLEDS). A sled never straddles an
 * 8-byte boundary, so one aligned 8-byte store switches it. */
#define PTCALL_SLED_SIZE 5u
#define PTCALL_SLED_NOP {0x0f, 0x1f, 0x44, 0x00, 0x00} /* nopl 0(%rax,%rax) */
#define PTCALL_SLED_CALL 0xe8u                         /* call rel32 */
#define PTCALL_SLED_JMP 0xe9u  /* jmp rel32: soft backend, untimed, to a call-site trampoline */

/* Ret sleds (v5): a ptcall_sites entry whose stub has this bit set names a function's
 * `ret` (c3), followed by 4 bytes that are never executed. Armed, the `ret` becomes
 * `jmp stub` (e9 rel32, the rel32 written first, the opcode byte last) and the stub's own
 * `ret` returns to the function's caller; disarmed, the opcode byte is c3 again. Stubs are
 * PTCALL_STUB_STRIDE-aligned, so the bit is free. */
#define PTCALL_SITE_RET 1u
#define PTCALL_SLED_RET 0xc3u /* ret: a disarmed ret sled */

struct ptcall_map_header {
    uint32_t magic;          /* PTCALL_MAP_MAGIC */
    uint16_t version;        /* PTCALL_MAP_VERSION */
    uint16_t header_size;    /* sizeof(struct ptcall_map_header) for this version */
    uint32_t total_size;     /* whole blob, multiple of 8 */
    uint32_t flags;          /* PTCALL_MAP_F_* */
    uint64_t unit_hash;      /* identity: FNV-1a 64 of source name and function names */
    uint32_t num_stubs;
    uint32_t num_funcs;
    uint32_t stubs_offset;   /* from blob start: struct ptcall_map_stub[num_stubs] */
    uint32_t funcs_offset;   /* from blob start: struct ptcall_map_func[num_funcs] */
    uint32_t strings_offset; /* from blob start: NUL-terminated strings */
    uint32_t strings_size;
    int64_t soft_slot_rel;   /* address of this unit's soft-handler slot (a uint64_t in
                                writable data) minus the address of this field. With
                                PTCALL_MAP_F_GATED it is also the unit's arm gate: 0 =
                                disarmed (the initial value), else armed */
    uint32_t source_name;    /* string offset: the unit's main source file */
    uint32_t ext_offset;     /* version 6: from blob start, struct ptcall_map_ext (the
                                functions' sizes and direct callees); before: 0 */
    /* version 3 (header_size >= 80): */
    int64_t sites_rel;       /* with PTCALL_MAP_F_SLEDS: address of the object's first
                                struct ptcall_map_site (__start_ptcall_sites) minus the
                                address of this field; every unit of an object names the
                                same table */
    int64_t sites_end_rel;   /* __stop_ptcall_sites minus the address of this field */
};

/* One call site (v3, section ptcall_sites, 4-byte aligned, 8 bytes each). */
struct ptcall_map_site {
    int32_t site_rel;        /* the sled's address minus the address of this field */
    int32_t stub_rel;        /* the stub it calls when armed, minus the address of this field;
                                v5: + PTCALL_SITE_RET for a ret sled */
};

struct ptcall_map_stub {
    int64_t stub_rel;        /* stub address minus the address of this field */
    uint32_t func_index;     /* into this blob's function table */
    uint16_t kind;           /* enum ptcall_stub_kind, | PTCALL_STUB_F_LEAF (v4) */
    uint16_t site;           /* exit / landing number within the function, 0 for entry */
};

struct ptcall_map_func {
    uint32_t name;           /* string offset: display name (demangled) */
    uint32_t linkage_name;   /* string offset: symbol name (mangled) */
    uint32_t file;           /* string offset: source file ("" if unknown) */
    uint32_t line;           /* 0 if unknown */
};

/* Version 6: what each function is and calls, for coverage reports (docs/map-format.md,
 * "Sizes and callees"). At ext_offset (8-aligned): this header, then
 * struct ptcall_map_func_ext[num_funcs] (same order as the function table), then
 * struct ptcall_map_callee[num_callees]. */
struct ptcall_map_ext {
    uint32_t ext_size;       /* bytes of the whole extension: 16 + 16 * num_funcs +
                                8 * num_callees */
    uint32_t num_callees;
    uint32_t blocks_offset;  /* v7 with PTCALL_MAP_F_BLOCKS: from blob start, struct
                                ptcall_map_blocks; else 0 (reserved, 0, before v7) */
    uint32_t graph_offset;   /* v8: from blob start, struct ptcall_map_graph (what reachability
                                needs); 0: none (reserved, 0, before v8) */
};

struct ptcall_map_func_ext {
    uint32_t num_insts;      /* IR instructions of the function when the pass ran (before its
                                stub calls; after inlining with the late placement) */
    uint32_t num_blocks;     /* its basic blocks */
    uint32_t first_callee;   /* its direct callees: callee records [first_callee,
                                first_callee + num_callees) */
    uint32_t num_callees;
};

/* A direct callee: a call or invoke of a named function (not through a pointer, not an
 * intrinsic but memcpy/memmove/memset), each callee once per caller, in first-call order. */
struct ptcall_map_callee {
    uint32_t func;           /* index into this blob's function table when the callee is
                                instrumented in this unit, else PTCALL_MAP_NO_FUNC */
    uint32_t name;           /* string offset: the callee's linkage name (always set: a callee
                                of another unit or object is found by it) */
};
#define PTCALL_MAP_NO_FUNC 0xffffffffu

/* Version 7 (PTCALL_MAP_F_BLOCKS, docs/map-format.md "Blocks and lines"): the unit's block
 * counters and each block's function and source lines. 8-aligned, followed by
 * struct ptcall_map_block[num_blocks] and struct ptcall_map_line[num_lines]. Block i of the
 * unit counts in counters[i] of the uint64_t array the unit's counter pointer points to:
 * the pointer starts at the unit's own zeroed array, the runtime may repoint it before main
 * (counting mode: into the shared counts file). Every block runs one
 * `load pointer; increment counters[i]` (64-bit, wrapping only after 2^64 runs). */
struct ptcall_map_blocks {
    uint32_t blocks_size;    /* 24 + 12 * num_blocks + 8 * num_lines */
    uint32_t num_blocks;
    uint32_t num_lines;
    uint32_t reserved;       /* 0 */
    int64_t counters_rel;    /* address of the unit's counter pointer (a uint64_t * in writable
                                data, 8-aligned) minus the address of this field */
};

struct ptcall_map_block {
    uint32_t func;           /* index into this blob's function table */
    uint32_t first_line;     /* its lines: line records [first_line, first_line + num_lines) */
    uint32_t num_lines;      /* distinct (file, line) of its instructions, first seen first;
                                0 when none has a debug location */
};

struct ptcall_map_line {
    uint32_t file;           /* string offset: the source path (directory joined when the
                                debug info names it relative) */
    uint32_t line;           /* 1-based */
};

/* Version 8 (docs/map-format.md, "Call graph for reachability"): what a reachability
 * analysis needs beyond the direct callees. At ext.graph_offset (8-aligned): this header, then
 * struct ptcall_map_func_graph[num_funcs] (function-table order),
 * struct ptcall_map_icall[num_icalls], struct ptcall_map_taken[num_taken],
 * struct ptcall_map_block_succ[num_blocks], uint32_t succ[num_succs], zero padding to 8. */
struct ptcall_map_graph {
    uint32_t graph_size;     /* 24 + 24 * num_funcs + 16 * num_icalls + 16 * num_taken +
                                8 * num_blocks + 4 * num_succs, rounded up to 8 */
    uint32_t num_icalls;
    uint32_t num_taken;
    uint32_t num_blocks;     /* the blocks part's num_blocks (PTCALL_MAP_F_BLOCKS), else 0 */
    uint32_t num_succs;
    uint32_t reserved;       /* 0 */
};

#define PTCALL_MAP_FUNC_F_ADDRESS_TAKEN 0x1u /* used other than as a direct call's callee */

struct ptcall_map_func_graph {
    uint64_t type_id;        /* FNV-1a 64 of the function type's canonical spelling */
    uint32_t flags;          /* PTCALL_MAP_FUNC_F_* */
    uint32_t first_icall;    /* its indirect call sites: icall records [first_icall,
                                first_icall + num_icalls) */
    uint32_t num_icalls;
    uint32_t reserved;       /* 0 */
};

/* A call or invoke through a pointer: the type id of the called function type. One record
 * per (type, block) of a function. */
struct ptcall_map_icall {
    uint64_t type_id;
    uint32_t block;          /* the unit's block holding it (PTCALL_MAP_F_BLOCKS), else
                                PTCALL_MAP_NO_BLOCK */
    uint32_t reserved;       /* 0 */
};
#define PTCALL_MAP_NO_BLOCK 0xffffffffu

/* A function whose address the unit takes but that is not in its function table (declared
 * here, defined elsewhere): found by name. */
struct ptcall_map_taken {
    uint64_t type_id;        /* of its type as declared here */
    uint32_t name;           /* string offset: linkage name */
    uint32_t reserved;       /* 0 */
};

/* Block i's successors in the CFG (after the critical-edge split): succ[first_succ ..
 * first_succ + num_succs), unit block indices. */
struct ptcall_map_block_succ {
    uint32_t first_succ;
    uint32_t num_succs;
};

/* Registration ABI between instrumented objects and the runtime (decision 4).
 * Each unit's constructor calls, if the runtime is present (weak reference):
 *     __ptcall_register_object(__start_ptcall_map, __stop_ptcall_map,
 *                              __start_ptcall_stubs, __stop_ptcall_stubs);
 * with the linker-defined (hidden) bounds of its own object. The runtime registers each
 * object once, however many of its units call. The matching destructor calls
 * __ptcall_unregister_object(__start_ptcall_map) (dlclose). */
#define PTCALL_REGISTER_SYMBOL "__ptcall_register_object"
#define PTCALL_UNREGISTER_SYMBOL "__ptcall_unregister_object"

#endif
