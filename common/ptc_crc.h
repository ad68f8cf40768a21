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

#endif
