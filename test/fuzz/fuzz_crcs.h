/* What the trace-file fuzz targets share (fuzz_decode.c, fuzz_pt_trace.c). */
#ifndef FUZZ_CRCS_H
#define FUZZ_CRCS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ptcall/trace_format.h"

/* Random mutations almost never keep a chunk's CRC valid, which would keep the fuzzer in
 * the reader. So a second pass decodes a copy whose chunk CRCs (and padding) are fixed up,
 * taking the chunk sizes as they come: that reaches the front-end and the session. */
static inline uint8_t *fix_crcs(const uint8_t *data, size_t size)
{
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return NULL;
    memcpy(b, data, size);
    size_t off = 64;
    while (off + 24 <= size) {
        struct ptc_chunk_header h;
        memcpy(&h, b + off, sizeof(h));
        size_t end = off + 24 + (size_t)h.payload_size;
        if (end > size || h.payload_size > size)
            break;
        uint16_t major;
        memcpy(&major, b + 8, 2);
        h.crc32 = (uint32_t)crc32(crc32(0L, Z_NULL, 0), b + off + 24, h.payload_size);
        if (major >= 2) /* format 2: the header's first 20 bytes too */
            h.crc32 = (uint32_t)crc32(h.crc32, (const Bytef *)&h, 20);
        memcpy(b + off, &h, sizeof(h));
        size_t pad = (8 - (h.payload_size & 7)) & 7;
        for (size_t i = 0; i < pad && end + i < size; i++)
            b[end + i] = 0;
        off = end + pad;
    }
    return b;
}

#endif
