/* Test trace writer: synthetic ptcall traces with known content, built on
 * common/ptc_chunk_write. Used by the decoder tests, the fuzzer's seed corpus and the
 * decode benchmark. Not a library for production use: it aborts on write errors. */
#ifndef PTC_TW_H
#define PTC_TW_H

#include <stdint.h>

#include "ptcall/trace_format.h"

/* Every module written by tw_module() gives function i these per-process stub ids
 * (relative to the module's first_stub): */
#define TW_E(f) (4u * (f) + 0u) /* entry */
#define TW_X(f) (4u * (f) + 1u) /* exit */
#define TW_U(f) (4u * (f) + 2u) /* unwind */
#define TW_L(f) (4u * (f) + 3u) /* landing */
/* tw_module_ex(..., whole_calls = 1) adds, after those, one PTC_STUB_CALL stub per function */
#define TW_C(nfuncs, f) (4u * (nfuncs) + (f))

struct tw;
struct tw_stream;

struct tw *tw_open(const char *path, uint32_t backend, uint32_t file_flags);
void tw_close(struct tw *w);
void tw_record_info(struct tw *w, uint32_t flags, const char *cmd);
void tw_record_end(struct tw *w, int32_t wait_status);
void tw_process(struct tw *w, uint32_t pid, uint32_t how, uint32_t ppid, uint32_t parent_tid,
                const char *exe);
void tw_process_end(struct tw *w, uint32_t pid, int32_t status);
/* ns = zero + tsc * mult >> shift */
void tw_timebase(struct tw *w, uint32_t pid, uint16_t shift, uint32_t mult, uint64_t zero);
/* A module with nfuncs functions named names[i] (linkage name "_Z" + name when cxx), four
 * stubs per function (TW_E..TW_L) from first_stub; stubs at stubs_start + 16 * k. */
void tw_module(struct tw *w, uint32_t pid, uint32_t module_id, uint32_t first_stub,
               uint64_t stubs_start, const char *path, const char *const *names,
               uint32_t nfuncs);
void tw_module_ex(struct tw *w, uint32_t pid, uint32_t module_id, uint32_t first_stub,
                  uint64_t stubs_start, const char *path, const char *const *names,
                  uint32_t nfuncs, int whole_calls);
void tw_thread(struct tw *w, uint32_t pid, uint32_t tid, uint32_t event, const char *name);
void tw_loss_chunk(struct tw *w, uint32_t pid, uint32_t tid, uint32_t kind, uint64_t count);
/* Writes a chunk of an arbitrary type (for unknown-type tests). */
void tw_raw_chunk(struct tw *w, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                  const void *payload, uint32_t size);
/* Skips n seq numbers of (pid, tid): as if chunks were lost. */
void tw_skip_seq(struct tw *w, uint32_t pid, uint32_t tid, uint32_t n);

/* Soft event streams of one thread; events are written as chunks by tw_flush (and
 * automatically every max_records records if max_records > 0). */
struct tw_stream *tw_stream(struct tw *w, uint32_t pid, uint32_t tid, int timed,
                            uint32_t max_records);
void tw_hit(struct tw_stream *s, uint32_t stub_id, uint64_t tsc);
void tw_drop(struct tw_stream *s, uint64_t count, uint64_t tsc);
void tw_fork(struct tw_stream *s, uint32_t child_pid, uint64_t tsc);
void tw_flush(struct tw_stream *s);
void tw_stream_free(struct tw_stream *s); /* flushes */

#endif
