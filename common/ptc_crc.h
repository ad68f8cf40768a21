/* The CRC-32 of chunk payloads (docs/trace-format.md section 3): zlib's crc32(), the same
 * polynomial and conditioning, computed by libdeflate's PCLMULQDQ folding when the build
 * found it (about 3.5x zlib 1.2.13's table loop here), else by zlib. One place for the
 * writers (runtime, recorder, tools) and the readers (decoder, PT front-end). */
#ifndef PTC_CRC_H
#define PTC_CRC_H

#include <stddef.h>
#include <stdint.h>

/* crc extended by n bytes at p; start from 0 */
uint32_t ptc_crc32_update(uint32_t crc, const void *p, size_t n);

static inline uint32_t ptc_crc32(const void *p, size_t n) { return ptc_crc32_update(0, p, n); }

/* The CRC a chunk header of a trace of format major version `major` carries: of the payload,
 * and from major 2 on continued over the header's first 20 bytes (type, flags, payload_size,
 * pid, tid, seq), so that a flipped bit in a header is an error, not a different chunk.
 * header is a struct ptc_chunk_header (trace_format.h) as stored, little-endian. */
static inline uint32_t ptc_chunk_crc(const void *header, const void *payload, size_t n,
                                     unsigned major)
{
    uint32_t c = ptc_crc32_update(0, payload, n);
    return major >= 2 ? ptc_crc32_update(c, header, 20) : c;
}

#endif
