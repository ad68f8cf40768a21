#include "ptc_crc.h"

#ifdef PTC_HAVE_LIBDEFLATE
#include <libdeflate.h>

uint32_t ptc_crc32_update(uint32_t crc, const void *p, size_t n)
{
    return n ? libdeflate_crc32(crc, p, n) : crc;
}
#else
#include <zlib.h>

uint32_t ptc_crc32_update(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    uLong c = crc;
    while (n) { /* zlib's length is an uInt */
        uInt k = n > (1u << 30) ? 1u << 30 : (uInt)n;
        c = crc32(c, b, k);
        b += k;
        n -= k;
    }
    return (uint32_t)c;
}
#endif
