/* The CRC-32 of chunk payloads (zlib's crc32(): docs/trace-format.md section 3). Every
 * payload byte passes through it, so it is a fixed share of decode time: zlib 1.2.13's
 * table-driven loop does about 4 GB/s here, libdeflate's PCLMULQDQ folding (same polynomial
 * and conditioning) about 14 GB/s. libdeflate is used when the build found it. */
#include "decode_internal.h"

#ifdef PTC_HAVE_LIBDEFLATE
#include <libdeflate.h>

uint32_t ptc_crc32(const void *p, size_t n) { return libdeflate_crc32(0, p, n); }
#else
#include <zlib.h>

uint32_t ptc_crc32(const void *p, size_t n)
{
    const uint8_t *b = p;
    uLong crc = crc32(0L, Z_NULL, 0);
    while (n) { /* zlib's length is an uInt */
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        crc = crc32(crc, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)crc;
}
#endif
