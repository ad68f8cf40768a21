/* ptcall trace file format: Intel PT chunks (types 32..63 of enum ptc_chunk_type).
 *
 * A trace recorded with the Intel PT backend (or made by `ptcall import`) holds, besides
 * the common chunks of trace_format.h (RECORD_INFO, MODULE, LOSS, RECORD_END ...):
 *
 *   PTC_CHUNK_PT_CONFIG    once, pid 0, before any other PT chunk: how the trace was
 *                          configured (CPU, timing, perf time conversion, filters).
 *   PTC_CHUNK_PT_AUX       raw Intel PT bytes of one CPU (or one thread), in stream order.
 *   PTC_CHUNK_PT_SIDEBAND  raw perf_event records (struct perf_event_header + body +
 *                          sample_id trailer) from the data ring of one CPU.
 *   PTC_CHUNK_PT_GAP       bytes of one stream are missing at a known stream position.
 *   PTC_CHUNK_PT_STUBS     beside every MODULE chunk: its run-time stub range, so that the
 *                          PT decoder knows every stub range without parsing MODULE chunks.
 *   PTC_CHUNK_PT_ROUND     after every pass of the recorder that drained all CPUs: lets the
 *                          decoder stream (decode and drop what is safe) with bounded memory.
 *
 * All little-endian. Documented in docs/trace-format-pt.md.
 */
#ifndef PTCALL_TRACE_FORMAT_PT_H
#define PTCALL_TRACE_FORMAT_PT_H

#include <stdint.h>

#include "ptcall/trace_format.h"

enum ptc_pt_chunk_type {
    PTC_CHUNK_PT_CONFIG = 32,   /* struct ptc_pt_config + filters + strings */
    PTC_CHUNK_PT_AUX = 33,      /* struct ptc_pt_aux + raw PT bytes */
    PTC_CHUNK_PT_SIDEBAND = 34, /* struct ptc_pt_sideband + raw perf records */
    PTC_CHUNK_PT_GAP = 35,      /* struct ptc_pt_gap + NUL-terminated note */
    PTC_CHUNK_PT_STUBS = 36,    /* struct ptc_pt_stubs: run-time stub range of a module */
    PTC_CHUNK_PT_ROUND = 37,    /* struct ptc_pt_round: end of a drain pass over all CPUs */
};

/* Stream number for a per-thread stream (the chunk header's pid/tid name the thread). */
#define PTC_PT_CPU_THREAD 0xffffffffu

/* ptc_pt_config.flags */
#define PTC_PT_F_TSC 0x1u        /* TSC packets enabled (config tsc) */
#define PTC_PT_F_MTC 0x2u        /* MTC packets enabled (mtc_freq valid) */
#define PTC_PT_F_CYC 0x4u        /* CYC packets enabled (cyc_thresh valid) */
#define PTC_PT_F_NORETCOMP 0x8u  /* return compression disabled */
#define PTC_PT_F_SNAPSHOT 0x10u  /* AUX buffers were in overwrite (snapshot) mode */
#define PTC_PT_F_TIME_ZERO 0x20u /* time_zero/mult/shift valid (cap_user_time_zero) */
#define PTC_PT_F_PER_THREAD 0x40u /* streams are per thread, not per CPU */

struct ptc_pt_config {
    uint32_t size;            /* sizeof(struct ptc_pt_config) of the writer */
    uint32_t flags;           /* PTC_PT_F_* */
    uint32_t cpu_vendor;      /* 1 = Intel (libipt pcv_intel), 0 = unknown */
    uint16_t cpu_family;      /* CPUID.1 display family */
    uint8_t cpu_model;        /* CPUID.1 display model */
    uint8_t cpu_stepping;
    uint8_t mtc_freq;         /* RTIT_CTL.MTCFreq field value (perf mtc_period), 0..15 */
    uint8_t cyc_thresh;       /* perf cyc_thresh */
    uint8_t psb_period;       /* perf psb_period */
    uint8_t nom_freq;         /* MSR_PLATFORM_INFO[15:8] = sysfs max_nonturbo_ratio */
    uint32_t cpuid_0x15_eax;  /* TSC:crystal denominator (sysfs tsc_art_ratio second) */
    uint32_t cpuid_0x15_ebx;  /* TSC:crystal numerator (sysfs tsc_art_ratio first) */
    uint32_t pmu_type;        /* perf_event_attr.type that was used */
    uint32_t num_cpus;        /* streams are numbered 0..num_cpus-1 */
    uint64_t config;          /* perf_event_attr.config of the PT event */
    uint64_t sample_type;     /* sample_type of the sideband records (PERF_SAMPLE_*) */
    /* perf time (ns) from TSC, as perf_event_mmap_page (trace_format.h timebase formula) */
    uint16_t time_shift;
    uint16_t reserved0;
    uint32_t time_mult;
    uint64_t time_zero;
    uint64_t aux_size;        /* AUX buffer bytes per CPU */
    uint32_t num_filters;     /* struct ptc_pt_filter entries that follow */
    uint32_t strings_size;    /* bytes of strings after the filters */
    /* then struct ptc_pt_filter[num_filters], then char strings[strings_size] */
};

/* One address filter range as given to PERF_EVENT_IOC_SET_FILTER:
 * "filter <file_offset>/<size>@<path>". */
struct ptc_pt_filter {
    uint64_t file_offset;     /* of the ptcall_stubs section in the file */
    uint64_t size;
    uint64_t vaddr;           /* ELF sh_addr of the section (link-time address) */
    uint32_t path;            /* string offset: absolute path */
    uint32_t flags;           /* PTC_PT_FILTER_* */
};

#define PTC_PT_FILTER_ACTIVE 0x1u     /* the range was programmed */
#define PTC_PT_FILTER_NO_RANGE 0x2u   /* instrumented but not traced: no free range */

/* PTC_CHUNK_PT_AUX: chunk header pid/tid are 0 for a per-CPU stream, or the thread for a
 * per-thread stream (cpu = PTC_PT_CPU_THREAD). */
struct ptc_pt_aux {
    uint32_t cpu;             /* stream number */
    uint32_t flags;           /* PTC_PT_AUX_F_* */
    uint64_t offset;          /* position of the first byte in the stream (free-running AUX
                                 offset); a jump from the previous chunk's end = lost bytes */
    /* then the PT bytes (payload_size - sizeof(struct ptc_pt_aux)) */
};

#define PTC_PT_AUX_F_SNAPSHOT 0x1u /* bytes of one snapshot: may start mid-packet */

/* PTC_CHUNK_PT_SIDEBAND: records exactly as the kernel wrote them, concatenated. */
struct ptc_pt_sideband {
    uint32_t cpu;             /* data ring the records came from */
    uint32_t flags;           /* 0 */
    uint64_t sample_type;     /* PERF_SAMPLE_* of the sample_id trailers (sample_id_all) */
    /* then records: struct perf_event_header {u32 type; u16 misc; u16 size;} + body */
};

enum ptc_pt_gap_kind {
    PTC_PT_GAP_TRUNCATED = 1, /* AUX buffer full (PERF_AUX_FLAG_TRUNCATED) */
    PTC_PT_GAP_LOST = 2,      /* bytes missing between chunks (count in lost_bytes) */
    PTC_PT_GAP_PARTIAL = 3,   /* PERF_AUX_FLAG_PARTIAL: hardware stopped (VMX) */
    PTC_PT_GAP_SNAPSHOT = 4,  /* snapshot boundary: what ran between snapshots is unknown */
};

struct ptc_pt_gap {
    uint32_t cpu;             /* stream number */
    uint32_t kind;            /* enum ptc_pt_gap_kind */
    uint64_t offset;          /* stream position where bytes are missing */
    uint64_t lost_bytes;      /* 0 = unknown */
    uint64_t time;            /* perf time of the event that reported it, 0 = unknown */
    /* then a NUL-terminated note */
};

/* PTC_CHUNK_PT_STUBS: chunk header pid = the process (as for its MODULE chunk). */
struct ptc_pt_stubs {
    uint32_t module_id;       /* as in the MODULE chunk */
    uint32_t reserved;
    uint64_t stubs_start;     /* run-time [start, end) of the module's ptcall_stubs */
    uint64_t stubs_end;
};

/* PTC_CHUNK_PT_ROUND (pid/tid 0, flags PTC_CHUNK_F_OPTIONAL: a decoder that does not stream
 * loses nothing by skipping it). The recorder writes one after every pass that drained the
 * data ring and the AUX area of every CPU. Its promise: every perf record that comes after
 * round k in the file has a time later than every record that came before round k-1, so a
 * decoder that has read round k may decode and feed every AUX piece whose PERF_RECORD_AUX
 * time is <= the largest record time seen before round k-1 ("safe time"), in time order,
 * and drop its bytes. (The same rule as perf's FINISHED_ROUND.) */
#define PTC_PT_ROUND_VERSION 1u
struct ptc_pt_round {
    uint32_t size;            /* sizeof(struct ptc_pt_round) of the writer */
    uint32_t version;         /* PTC_PT_ROUND_VERSION */
    uint64_t seq;             /* 0, 1, 2, ... */
    uint64_t time;            /* perf time when the pass began, 0 = unknown (informational:
                                 decoders use the record times, not this clock) */
};

#endif
