/* The Intel PT recorder (runtime/pt, library ptcall_pt_recorder), in pieces that can be
 * tested without the hardware: PMU discovery from a sysfs tree, the perf_event_attr builder,
 * address filters from ELF files, and the data/AUX ring consumers. record_pt() and
 * pt_available() (ptc_record_options.h) put them together. */
#ifndef PTC_PT_REC_H
#define PTC_PT_REC_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "ptc_map_read.h"
#include "ptc_record_options.h"

/* ---- PMU discovery ------------------------------------------------------------------ */

#define PTC_PT_MAX_FORMAT 32

struct ptc_pt_format {
    char name[32];
    uint8_t lo, hi;            /* config bits lo..hi ("config:N" or "config:A-B") */
};

struct ptc_pt_pmu {
    int present;
    uint32_t type;
    struct ptc_pt_format format[PTC_PT_MAX_FORMAT];
    int nformat;
    /* caps/ (hexadecimal files); -1 when the file is absent */
    int64_t num_address_ranges, ip_filtering, mtc, mtc_periods, psb_cyc, psb_periods,
        cycle_thresholds, topa_output, topa_multiple_entries, single_range_output, ptwrite,
        power_event_trace;
    int64_t nr_addr_filters;   /* PMU root; absent = 0 ranges */
    int64_t max_nonturbo_ratio;/* PMU root, decimal */
    uint32_t tsc_art_num, tsc_art_den; /* PMU root "num:den" = CPUID.15H EBX:EAX */
    char root[256];
};

/* Reads <root>/type, format/, caps/, ... root is normally
 * "/sys/bus/event_source/devices/intel_pt". Returns 0, or -1 with a one-line reason (what
 * is missing and what to do) in why. */
int ptc_pt_pmu_read(const char *root, struct ptc_pt_pmu *pmu, char *why, size_t why_size);
/* The bit range of a format term, or NULL. */
const struct ptc_pt_format *ptc_pt_pmu_format(const struct ptc_pt_pmu *pmu, const char *name);
/* Sets term = value in *config (value must fit); returns 0 or -1 if the term is unknown. */
int ptc_pt_pmu_set(const struct ptc_pt_pmu *pmu, uint64_t *config, const char *name,
                   uint64_t value);
/* Sysfs root override for tests: PTCALL_PT_SYSFS, else the real path. */
const char *ptc_pt_sysfs_root(void);

/* ---- perf_event_attr ----------------------------------------------------------------- */

struct ptc_pt_attr_req {
    enum record_timing timing; /* TIMING_DEFAULT = mtc */
    int snapshot;
    int mtc_period;            /* -1 = nearest valid to 3 */
    int psb_period;            /* -1 = nearest valid to 0 (densest sync points) */
    int cyc_thresh;            /* -1 = 0 */
};

struct ptc_pt_attrs {
    struct perf_event_attr pt;     /* the intel_pt event */
    struct perf_event_attr dummy;  /* sideband: tracking event (software dummy) */
    uint32_t flags;                /* PTC_PT_F_* for the config chunk */
    uint8_t mtc_freq, cyc_thresh, psb_period;
};

/* Builds both attributes for user-space tracing of a launched command (disabled,
 * enable_on_exec, inherit) or an attached process. Returns 0, or -1 with the reason. */
int ptc_pt_build_attrs(const struct ptc_pt_pmu *pmu, const struct ptc_pt_attr_req *req,
                       int attach, struct ptc_pt_attrs *out, char *why, size_t why_size);

/* ---- address filters ----------------------------------------------------------------- */

#define PTC_PT_LOADS_MAX 16
struct ptc_pt_elf_sections {
    int has_stubs, has_map;
    uint64_t stubs_offset, stubs_size, stubs_addr;  /* sh_offset, sh_size, sh_addr */
    uint64_t map_offset, map_size, map_addr;
    uint64_t text_vaddr_min;                        /* lowest PT_LOAD p_vaddr */
    int pie;                                        /* ET_DYN */
    /* the PT_LOAD segments' pages at link-time addresses, with their PF_R/W/X, for the map
     * reader's object checks (ptc_map_read.h); nloads -1: more than PTC_PT_LOADS_MAX */
    struct ptc_map_segment loads[PTC_PT_LOADS_MAX];
    int nloads;
};

/* Finds ptcall_stubs / ptcall_map with libelf. Returns 0 (has_* say what was found) or -1
 * with the reason (not an ELF file, unreadable). */
int ptc_pt_elf_sections(const char *path, struct ptc_pt_elf_sections *s, char *why,
                        size_t why_size);

struct ptc_pt_module_req {
    char path[4096];           /* absolute, resolved */
    struct ptc_pt_elf_sections sec;
    int traced;                /* got an address range */
};

/* Builds "filter 0x<off>/0x<size>@<path>[ ...]" for up to max_ranges modules that have a
 * ptcall_stubs section (marks them traced). Returns the number of filters, or -1 when the
 * string does not fit. Modules beyond max_ranges stay untraced: the caller names them. */
int ptc_pt_filter_string(struct ptc_pt_module_req *mods, int n, int max_ranges, char *out,
                         size_t out_size);

/* The PTC_CHUNK_MODULE payload of an instrumented file loaded with the given bias (run-time
 * address minus ELF address): the map is read from the file. Returns the payload size
 * (malloc'ed in *out) or -1 with the reason. */
long ptc_pt_build_module(const char *path, const struct ptc_pt_elf_sections *sec, uint64_t bias,
                         uint32_t module_id, uint32_t first_stub_id, void **out,
                         uint32_t *num_stubs, char *why, size_t why_size);

/* The same with ptc_map_build_module flags: PTC_MAP_BUILD_LEAF_CALLS when the program's
 * runtime leaves leaves' exits unarmed (record --timing none without --leaf-exits). */
long ptc_pt_build_module_flags(const char *path, const struct ptc_pt_elf_sections *sec,
                               uint64_t bias, uint32_t module_id, uint32_t first_stub_id,
                               unsigned flags, void **out, uint32_t *num_stubs, char *why,
                               size_t why_size);

/* The ptcall_map section of an instrumented file (malloc'ed, sec->map_size bytes), or NULL
 * with the reason. */
void *ptc_pt_read_map(const char *path, const struct ptc_pt_elf_sections *sec, char *why,
                      size_t why_size);

/* The PTC_CHUNK_MODULE_ARMED payload of that file for selection sel (record's --only/--skip,
 * spec its text): which functions the runtime armed. Units armed whole (ungated or gated v2,
 * whose functions cannot be chosen one by one) count as armed. Returns the payload size
 * (malloc'ed in *out) or -1 with the reason. */
struct ptc_select;
long ptc_pt_build_armed(const char *path, const struct ptc_pt_elf_sections *sec, uint64_t bias,
                        uint32_t module_id, struct ptc_select *sel, const char *spec,
                        void **out, char *why, size_t why_size);

/* ---- ring buffers -------------------------------------------------------------------- */

/* The consumer side of one AUX area. pc is the mmapped control page, base the AUX mapping. */
struct ptc_pt_aux_ring {
    struct perf_event_mmap_page *pc;
    uint8_t *base;
    uint64_t size;             /* power of two */
    int overwrite;             /* snapshot mode: mapped PROT_READ, aux_head is an offset */
    uint64_t copied;           /* bytes handed to the sink so far */
};

/* Normal mode: copies [aux_tail, aux_head) to sink in at most two pieces (wrap-around),
 * then publishes aux_tail (release). sink gets the free-running AUX offset of the piece.
 * Returns bytes consumed, or -1 if the sink failed (tail then stays where it was). */
typedef int (*ptc_pt_sink_fn)(void *ctx, uint64_t aux_offset, const void *p, size_t n);
long ptc_pt_aux_drain(struct ptc_pt_aux_ring *r, ptc_pt_sink_fn sink, void *ctx);
/* Snapshot mode: the whole buffer ending at aux_head (oldest first). wrapped says whether
 * the buffer has filled at least once (then all of it is valid). */
long ptc_pt_aux_snapshot(struct ptc_pt_aux_ring *r, int wrapped, ptc_pt_sink_fn sink,
                         void *ctx);

/* Successive snapshots of an overwrite-mode buffer (perf's method): if the 64 bytes before
 * where the last snapshot ended are unchanged, the hardware has not come round since and only
 * [last end, aux_head) is new (a continuation); otherwise the whole valid buffer is copied and
 * *gap is set when data may have been lost before it (not the first snapshot). */
struct ptc_pt_snap {
    uint64_t off;
    uint8_t ref[64];
    int have;
};
long ptc_pt_aux_snapshot_next(struct ptc_pt_aux_ring *r, struct ptc_pt_snap *st,
                              ptc_pt_sink_fn sink, void *ctx, int *gap);

/* The data (sideband) ring: records, each starting with struct perf_event_header; a record
 * that wraps around the end is reassembled. rec gets each whole record. */
struct ptc_pt_data_ring {
    struct perf_event_mmap_page *pc;
    uint8_t *base;             /* data area (pc->data_offset) */
    uint64_t size;             /* pc->data_size */
    uint8_t bounce[65536 + 8];
};
typedef int (*ptc_pt_rec_fn)(void *ctx, const struct perf_event_header *h, const void *rec);
long ptc_pt_data_drain(struct ptc_pt_data_ring *r, ptc_pt_rec_fn rec, void *ctx);

/* perf time from TSC with a control page's time_zero/mult/shift (seqlock read). Returns 0
 * and fills the three values, or -1 when cap_user_time_zero is 0. */
int ptc_pt_time_conv(const struct perf_event_mmap_page *pc, uint16_t *shift, uint32_t *mult,
                     uint64_t *zero);

/* CPUID family/model/stepping (display values), 0 when not x86 or not Intel. */
void ptc_pt_cpuid(uint16_t *family, uint8_t *model, uint8_t *stepping, uint32_t *vendor_intel,
                  uint32_t *eax15, uint32_t *ebx15);

/* Error advice for perf_event_open / mmap / ioctl failures (one line, what to do). */
const char *ptc_pt_advice(const char *what, int err);

/* ---- pt_arm.c's process checks, for the software attach (attach_soft.c) ----------------- */

#include <stdio.h>
/* The words of later messages: the command to run and what was being done ("attached to"). */
void proc_say_as(const char *cmd, const char *doing);
/* /proc/PID/maps opened, or NULL with why: no such process, exited, hidden, refused. */
FILE *proc_open_maps(int pid, char *why, size_t n);
/* The message for access what to process pid failing with errno e (exited meanwhile,
 * permission denied: whose process, which setting refuses). */
void proc_say_failure(int pid, int e, const char *what, char *why, size_t n);
int proc_gone(int pid); /* exited: reaped, or a zombie */

#endif
