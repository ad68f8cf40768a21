/* A minimal streaming reader of ptcall trace files (docs/trace-format.md), used by
 * `ptcall stat`, `ptcall import` checks and the PT tests. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ptc_crc.h"

#include "ptc_pt_decode.h"

int ptc_pt_read_file(const char *path, struct ptc_file_header *hdr,
                     int (*fn)(void *ctx, const struct ptc_chunk_header *h,
                               const void *payload),
                     void *ctx, char *err, size_t err_size)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, err_size, "cannot open %s: %s", path, strerror(errno));
        return -PTC_E_IO;
    }
    int rc = 0;
    uint8_t *buf = NULL;
    size_t cap = 0;
    if (fread(hdr, sizeof(*hdr), 1, fp) != 1 || memcmp(hdr->magic, PTC_FILE_MAGIC, 8)) {
        snprintf(err, err_size, "%s is not a ptcall trace file (bad magic)", path);
        rc = -PTC_E_FORMAT;
        goto out;
    }
    if (hdr->version_major != PTC_VERSION_MAJOR) {
        snprintf(err, err_size, "%s has trace format version %u.%u; this ptcall reads %u.x",
                 path, hdr->version_major, hdr->version_minor, PTC_VERSION_MAJOR);
        rc = -PTC_E_VERSION;
        goto out;
    }
    if (hdr->header_size > sizeof(*hdr) &&
        fseek(fp, (long)hdr->header_size, SEEK_SET) != 0) {
        snprintf(err, err_size, "%s: cannot seek past the file header", path);
        rc = -PTC_E_IO;
        goto out;
    }
    uint64_t off = hdr->header_size;
    for (;;) {
        struct ptc_chunk_header h;
        size_t got = fread(&h, 1, sizeof(h), fp);
        if (got == 0)
            break;
        if (got != sizeof(h)) {
            snprintf(err, err_size, "%s: file ends inside a chunk header at offset %llu",
                     path, (unsigned long long)off);
            rc = -PTC_E_TRUNCATED;
            goto out;
        }
        size_t n = h.payload_size + ((8 - (h.payload_size & 7)) & 7);
        if (n > cap) {
            void *v = realloc(buf, n);
            if (!v) {
                snprintf(err, err_size, "out of memory reading %s", path);
                rc = -PTC_E_NOMEM;
                goto out;
            }
            buf = v;
            cap = n;
        }
        if (n && fread(buf, 1, n, fp) != n) {
            snprintf(err, err_size,
                     "%s: file ends inside a chunk (type %u, %u bytes) at offset %llu", path,
                     h.type, h.payload_size, (unsigned long long)off);
            rc = -PTC_E_TRUNCATED;
            goto out;
        }
        uint32_t crc = ptc_crc32(buf, h.payload_size);
        if (crc != h.crc32) {
            snprintf(err, err_size, "%s: bad CRC in chunk (type %u) at offset %llu", path,
                     h.type, (unsigned long long)off);
            rc = -PTC_E_CORRUPT;
            goto out;
        }
        if (fn && (rc = fn(ctx, &h, buf)) < 0) {
            snprintf(err, err_size, "%s: chunk (type %u) at offset %llu: %s", path, h.type,
                     (unsigned long long)off, ptc_pt_strerror(-rc));
            goto out;
        }
        off += sizeof(h) + n;
    }
out:
    free(buf);
    fclose(fp);
    return rc;
}

const char *ptc_pt_strerror(int err)
{
    switch (err) {
    case PTC_OK: return "ok";
    case PTC_E_IO: return "read error";
    case PTC_E_FORMAT: return "not a ptcall trace file";
    case PTC_E_VERSION: return "unsupported format version";
    case PTC_E_TRUNCATED: return "file ends inside a chunk";
    case PTC_E_CORRUPT: return "corrupt data";
    case PTC_E_NOMEM: return "out of memory";
    case PTC_E_NOMODULE: return "no instrumented module";
    case PTC_E_BADSTUB: return "unknown stub";
    case PTC_E_ARG: return "bad argument";
    case PTC_E_UNSUPPORTED: return "unsupported";
    default: return "error";
    }
}
