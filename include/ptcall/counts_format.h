/* ptcall shared counts file, version 2 (docs/cov.md, "The counts file").
 *
 * The runtime's counting mode keeps one uint64_t counter per instrumented function. Given
 * PTCALL_COUNTS_FD=<fd> (a memfd or regular file of the tool that runs the program), the
 * runtime lays the counters out in that file with this header in front, and maps the file
 * MAP_SHARED, so the tool reads every function's calls from its own mapping of the same file
 * without any copy, after each run (fork server: after each input; docs/cov.md).
 *
 *   offset 0                 struct ptc_counts_file (header_size bytes)
 *   modules_offset           struct ptc_counts_file_module[num_modules]
 *   strings_offset           strings_size bytes of NUL-terminated strings (module paths)
 *   counters_offset          uint64_t counters[num_counters] (page-aligned: 4096)
 *   blocks_offset            uint64_t blocks[num_blocks] (v2; page-aligned, after the
 *                            counters' whole pages; absent when num_blocks is 0)
 *   total_size               = the end of the last part, rounded up to 4096
 *
 * Module i's function j (j < num_funcs, in the order of the MODULE chunk the runtime writes
 * for it: the object's ptcall_map blobs in section order, each blob's function table in
 * order) counts in counters[first_counter + j]. Version 2: block j of module i (map version 7,
 * ptcall-cc -fptcall-cov: the object's units in section order, each unit's blocks in order)
 * counts in blocks[first_block + j], j < num_blocks; a module built without block counters
 * has num_blocks 0. Version 1 (no blocks) is refused by version 2 readers' peers: a reader
 * checks the version it knows. The modules are the instrumented objects
 * registered when the runtime laid the file out (before main: the executable and the
 * libraries loaded with it); objects dlopen'd later count in private memory, not here.
 * Little-endian (x86-64 host order). Readers check magic and version, and that every offset
 * and size lies inside total_size; a reader skips header_size - sizeof(struct) extra bytes.
 */
#ifndef PTCALL_COUNTS_FORMAT_H
#define PTCALL_COUNTS_FORMAT_H

#include <stdint.h>

#define PTC_COUNTS_FILE_MAGIC "PTCCOUNT" /* 8 bytes, no NUL */
#define PTC_COUNTS_FILE_VERSION 2u
#define PTC_COUNTS_FILE_ALIGN 4096u      /* counters_offset is a multiple of this */

struct ptc_counts_file {
    char magic[8];            /* PTC_COUNTS_FILE_MAGIC */
    uint32_t version;         /* PTC_COUNTS_FILE_VERSION */
    uint32_t header_size;     /* sizeof(struct ptc_counts_file): 64 in version 1, 80 in 2 */
    uint64_t total_size;      /* bytes of the whole layout (the file's size) */
    uint32_t num_modules;
    uint32_t pid;             /* the process that laid it out (the fork server) */
    uint64_t num_counters;    /* sum of the modules' num_funcs */
    uint32_t modules_offset;  /* from the file's start */
    uint32_t strings_offset;
    uint32_t strings_size;
    uint32_t reserved0;       /* 0 */
    uint64_t counters_offset; /* multiple of PTC_COUNTS_FILE_ALIGN */
    /* version 2: */
    uint64_t num_blocks;      /* sum of the modules' num_blocks */
    uint64_t blocks_offset;   /* multiple of PTC_COUNTS_FILE_ALIGN */
};

struct ptc_counts_file_module {
    uint64_t identity;        /* as the trace's MODULE chunk: FNV-1a 64 over the object's
                                 unit hashes (docs/trace-format.md 4.4) */
    uint64_t first_counter;   /* index of its function 0 in counters[] */
    uint32_t num_funcs;
    uint32_t path;            /* offset into the strings: the object's path */
    uint32_t module_id;       /* the MODULE chunk's module_id (registration order) */
    uint32_t reserved;        /* 0 */
    /* version 2 (48 bytes each): */
    uint64_t first_block;     /* index of its block 0 in blocks[] */
    uint32_t num_blocks;      /* 0: built without -fptcall-cov */
    uint32_t reserved2;       /* 0 */
};

#endif
