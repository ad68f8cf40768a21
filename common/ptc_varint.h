/* LEB128 and zigzag coding used by the soft event stream (docs/trace-format.md). */
#ifndef PTC_VARINT_H
#define PTC_VARINT_H

#include <stddef.h>
#include <stdint.h>

#define PTC_VARINT_MAX 10 /* bytes a uint64_t can take */

static inline uint64_t ptc_zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (0 - ((uint64_t)v >> 63)); /* all ones when v < 0 */
}
static inline int64_t ptc_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* Writes v at p (which must have PTC_VARINT_MAX bytes of room); returns bytes written. */
static inline size_t ptc_varint_put(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/* Reads a value from [*pp, end). Returns 0 and advances *pp, or -1 if the bytes end
 * inside the value or it is longer than 10 bytes (corrupt input). */
static inline int ptc_varint_get(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 70 && p < end; shift += 7) {
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return -1;
}

#endif
