/* ptc_pt_read_file(): the decoder's trace reader (decoder/reader.c) with the checks and the
 * messages of `ptcall stat`, the import checks and the PT tests: the CRC is checked here so
 * that a bad one is reported in these words, and a damaged file stops the reading. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ptc_crc.h"
#include "ptc_pt_decode.h"

static int no_crc(void *ctx, const struct ptc_chunk_header *h)
{
    (void)ctx;
    (void)h;
    return 1;
}

/* The message and code of an error of ptc_reader_open(). */
static int open_error(struct ptc_reader *r, int rc, const char *path, char *err,
                      size_t err_size)
{
    const struct ptc_file_header *hdr = ptc_reader_header(r);
    struct stat st;
    if (rc == -PTC_E_IO && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        rc = -PTC_E_FORMAT; /* no trace file header to be read: as `stat` has always said */
    switch (-rc) {
    case PTC_E_FORMAT:
    case PTC_E_TRUNCATED: /* shorter than a file header: no magic to trust */
        snprintf(err, err_size, "%s is not a ptcall trace file (bad magic)", path);
        return -PTC_E_FORMAT;
    case PTC_E_VERSION:
        snprintf(err, err_size, "%s has trace format version %u.%u; this ptcall reads %u.x to %u.x",
                 path, hdr->version_major, hdr->version_minor, PTC_VERSION_MAJOR_MIN,
                 PTC_VERSION_MAJOR);
        return rc;
    default: /* cannot open or read it, header_size corrupt, out of memory */
        snprintf(err, err_size, "%s", ptc_reader_errmsg(r));
        return rc;
    }
}

/* The message and code of an error of ptc_reader_next(). */
static int chunk_error(struct ptc_reader *r, int rc, const char *path, char *err,
                       size_t err_size)
{
    struct ptc_chunk_header h;
    uint64_t at;
    int have = ptc_reader_failed_chunk(r, &h, &at);
    struct stat st;
    if (rc == -PTC_E_CORRUPT && have && stat(path, &st) == 0 &&
        at + sizeof(h) + h.payload_size > (uint64_t)st.st_size)
        rc = -PTC_E_TRUNCATED; /* an absurd size past the end: `stat` calls that truncated */
    if (rc == -PTC_E_TRUNCATED && !have)
        snprintf(err, err_size, "%s: file ends inside a chunk header at offset %llu", path,
                 (unsigned long long)ptc_reader_offset(r));
    else if (rc == -PTC_E_TRUNCATED)
        snprintf(err, err_size, "%s: file ends inside a chunk (type %u, %u bytes) at offset %llu",
                 path, h.type, h.payload_size, (unsigned long long)at);
    else if (rc == -PTC_E_NOMEM)
        snprintf(err, err_size, "out of memory reading %s", path);
    else /* a read error, or damage the reader checks for (type 0, padding) */
        snprintf(err, err_size, "%s", ptc_reader_errmsg(r));
    return rc;
}

int ptc_pt_read_file(const char *path, struct ptc_file_header *hdr,
                     int (*fn)(void *ctx, const struct ptc_chunk_header *h,
                               const void *payload),
                     void *ctx, char *err, size_t err_size)
{
    struct ptc_reader *r;
    int rc = ptc_reader_open(&r, path);
    if (!r) {
        snprintf(err, err_size, "out of memory reading %s", path);
        return -PTC_E_NOMEM;
    }
    *hdr = *ptc_reader_header(r);
    if (rc) {
        rc = open_error(r, rc, path, err, err_size);
        ptc_reader_close(r);
        return rc;
    }
    ptc_reader_set_crc_skip(r, no_crc, NULL);
    struct ptc_chunk c;
    for (;;) {
        int got = ptc_reader_next(r, &c);
        if (got == 0)
            break;
        if (got < 0) {
            rc = chunk_error(r, got, path, err, err_size);
            break;
        }
        if (ptc_chunk_crc(&c.h, c.payload, c.h.payload_size, hdr->version_major) != c.h.crc32) {
            snprintf(err, err_size, "%s: bad CRC in chunk (type %u) at offset %llu", path,
                     c.h.type, (unsigned long long)c.offset);
            rc = -PTC_E_CORRUPT;
            break;
        }
        if (fn && (rc = fn(ctx, &c.h, c.payload)) < 0) {
            snprintf(err, err_size, "%s: chunk (type %u) at offset %llu: %s", path, c.h.type,
                     (unsigned long long)c.offset, ptc_pt_strerror(-rc));
            break;
        }
    }
    ptc_reader_close(r);
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
