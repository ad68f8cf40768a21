/* Reading a perf.data file recorded with `perf record -e intel_pt//u` (to a file, without
 * -z): its header, attribute table and HEADER_CPUID feature, and its records in file order.
 * The AUX data of each perf buffer comes out assembled (perf pads each AUXTRACE record's
 * data), the kernel sideband records as written. What to make of them -- `ptcall import`
 * writes a trace file -- is the caller's. docs/pt.md "Importing". */
#ifndef PTC_PERF_DATA_H
#define PTC_PERF_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/trace_format_pt.h"

/* An executable mapping of a file named by an absolute path (PERF_RECORD_MMAP2). */
struct ptc_perf_mmap {
    uint32_t pid, prot;
    uint64_t addr, len, pgoff;
    const char *file;
};

/* Callbacks, in file order. Each returns 0, or nonzero to stop reading: that value is then
 * ptc_perf_data_read()'s (the callback says what went wrong). */
struct ptc_perf_data_ops {
    void *ctx;
    /* n bytes of the AUX data of CPU cpu from AUX offset off; per-thread mode (cpu is
     * PTC_PT_CPU_THREAD): of thread tid of process pid, else pid and tid are 0. */
    int (*aux)(void *ctx, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t off,
               const uint8_t *p, size_t n);
    int (*mmap)(void *ctx, const struct ptc_perf_mmap *m);
    /* a new process (PERF_RECORD_FORK with pid != ppid) */
    int (*fork)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t ptid);
    /* a kernel sideband record (header included) of the stream of CPU cpu */
    int (*sideband)(void *ctx, uint32_t cpu, const uint8_t *rec, size_t size);
};

struct ptc_perf_data_info {
    struct ptc_pt_config cfg; /* AUXTRACE_INFO, the intel_pt event's config, HEADER_CPUID */
    uint64_t sample_type;     /* the sample_id fields of every event (0: none) */
    uint64_t auxtrace, aux_bytes, sideband; /* AUXTRACE records, their bytes, sideband records */
};

/* Reads perf.data file path into ops and *info. Returns 0; nonzero with a one-line message in
 * err when the file cannot be read or is not what this reader takes; or a callback's value
 * (err is then ""). */
/* Reads the whole file at path into a malloc'ed buffer (one byte more than its size) and
 * stores its length; NULL when it cannot be opened or read into memory. A short read leaves
 * the bytes read so far (the callers compare the length with what they expect). */
uint8_t *ptc_read_whole_file(const char *path, size_t *len);

int ptc_perf_data_read(const char *path, const struct ptc_perf_data_ops *ops,
                       struct ptc_perf_data_info *info, char *err, size_t err_size);
/* The same over the file's bytes buf[0..len) already in memory (name: what the messages
 * call it). */
int ptc_perf_data_parse(const uint8_t *buf, size_t len, const char *name,
                        const struct ptc_perf_data_ops *ops, struct ptc_perf_data_info *info,
                        char *err, size_t err_size);

#endif
