/* A fuzzing harness for zlib (Debian's zlib 1.2.13 sources), AFL++-style: the input is the
 * file named by argv[1] (@@) or stdin. Its first byte picks what zlib does with the rest:
 *   0 inflate (zlib or gzip header, auto-detected)     1 raw inflate
 *   2 deflate with level/strategy/memLevel from the next bytes, then inflate back, compare
 *   3 uncompress()                                     4 inflateBack() (raw deflate)
 *   5 the gz* file API over the bytes (gzdopen on a memfd)
 *   6 inflate with a preset dictionary (zlib header asking for one)
 * so one campaign reaches most of zlib. Built three ways by bench/cov/zlib-campaign.sh:
 * afl-clang-fast (the campaign), ptcall-cc early placement (ptcall cov), clang-14
 * -fprofile-instr-generate -fcoverage-mapping (llvm-cov). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "zlib.h"

#define MAX_IN (1 << 20)
#define MAX_OUT (1 << 22)

static unsigned char in_buf[MAX_IN], out_buf[MAX_OUT], back_buf[MAX_IN];
static const unsigned char dict[] = "the quick brown fox jumps over the lazy dog 0123456789";

static int do_inflate(const unsigned char *p, size_t n, int wbits, int use_dict)
{
    z_stream s;
    memset(&s, 0, sizeof(s));
    if (inflateInit2(&s, wbits) != Z_OK)
        return 1;
    s.next_in = (unsigned char *)p;
    s.avail_in = (uInt)n;
    int rc;
    do {
        s.next_out = out_buf;
        s.avail_out = sizeof(out_buf);
        rc = inflate(&s, Z_NO_FLUSH);
        if (rc == Z_NEED_DICT && use_dict)
            rc = inflateSetDictionary(&s, dict, sizeof(dict) - 1);
    } while (rc == Z_OK && s.avail_in > 0);
    uLong crc = crc32(0L, out_buf, (uInt)(sizeof(out_buf) - s.avail_out));
    inflateEnd(&s);
    return rc == Z_STREAM_END ? (int)(crc & 1) : 2;
}

static int do_roundtrip(const unsigned char *p, size_t n)
{
    if (n < 3)
        return 1;
    int level = p[0] % 11 - 1, strategy = p[1] % 5, mem = p[2] % 9 + 1;
    p += 3;
    n -= 3;
    z_stream s;
    memset(&s, 0, sizeof(s));
    if (deflateInit2(&s, level, Z_DEFLATED, (p[0] & 1) ? 15 : -15, mem, strategy) != Z_OK)
        return 1;
    if (n > 8 && (p[1] & 1))
        deflateSetDictionary(&s, dict, sizeof(dict) - 1);
    uLong bound = deflateBound(&s, (uLong)n);
    if (bound > sizeof(out_buf)) {
        deflateEnd(&s);
        return 1;
    }
    s.next_in = (unsigned char *)p;
    s.avail_in = (uInt)n / 2;
    s.next_out = out_buf;
    s.avail_out = sizeof(out_buf);
    deflate(&s, (p[0] & 2) ? Z_FULL_FLUSH : Z_SYNC_FLUSH);
    if (p[0] & 4)
        deflateParams(&s, (level + 3) % 10, (strategy + 1) % 5);
    s.avail_in += (uInt)(n - n / 2);
    int rc = deflate(&s, Z_FINISH);
    size_t clen = sizeof(out_buf) - s.avail_out;
    deflateEnd(&s);
    if (rc != Z_STREAM_END)
        return 2;
    z_stream t;
    memset(&t, 0, sizeof(t));
    inflateInit2(&t, (p[0] & 1) ? 15 : -15);
    t.next_in = out_buf;
    t.avail_in = (uInt)clen;
    t.next_out = back_buf;
    t.avail_out = sizeof(back_buf);
    rc = inflate(&t, Z_FINISH);
    if (rc == Z_NEED_DICT) {
        inflateSetDictionary(&t, dict, sizeof(dict) - 1);
        rc = inflate(&t, Z_FINISH);
    } else if (rc == Z_DATA_ERROR && !(p[0] & 1)) {
        /* raw streams made with a dictionary need it before the data */
        inflateReset(&t);
        inflateSetDictionary(&t, dict, sizeof(dict) - 1);
        t.next_in = out_buf;
        t.avail_in = (uInt)clen;
        t.next_out = back_buf;
        t.avail_out = sizeof(back_buf);
        rc = inflate(&t, Z_FINISH);
    }
    size_t got = sizeof(back_buf) - t.avail_out;
    inflateEnd(&t);
    if (rc == Z_STREAM_END && (got != n || memcmp(back_buf, p, n)))
        abort(); /* zlib lost data: a real bug */
    return 0;
}

static unsigned back_in(void *d, z_const unsigned char **buf)
{
    unsigned char **pp = d;
    *buf = pp[0];
    unsigned n = (unsigned)(pp[1] - pp[0]);
    pp[0] = pp[1];
    return n;
}

static int back_out(void *d, unsigned char *buf, unsigned len)
{
    (void)d;
    return crc32(0, buf, len) == 0x12345678u; /* never: keep going */
}

static int do_back(const unsigned char *p, size_t n)
{
    static unsigned char window[32768];
    z_stream s;
    memset(&s, 0, sizeof(s));
    if (inflateBackInit(&s, 15, window) != Z_OK)
        return 1;
    unsigned char *pp[2] = {(unsigned char *)p, (unsigned char *)p + n};
    int rc = inflateBack(&s, back_in, pp, back_out, NULL);
    inflateBackEnd(&s);
    return rc != Z_STREAM_END;
}

static int do_gz(const unsigned char *p, size_t n)
{
    int fd = memfd_create("gz", 0);
    if (fd < 0 || write(fd, p, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) != 0)
        return 1;
    gzFile g = gzdopen(fd, "rb");
    if (!g)
        return 1;
    gzbuffer(g, 1024);
    char line[256];
    int total = 0, r;
    if (gzgets(g, line, sizeof(line)))
        total++;
    while ((r = gzread(g, out_buf, 4096)) > 0)
        total += r;
    int err;
    gzerror(g, &err);
    gzclose(g);
    return total > 0 && err == Z_OK ? 0 : 2;
}

int main(int argc, char **argv)
{
    size_t n;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (!f)
            return 3;
        n = fread(in_buf, 1, sizeof(in_buf), f);
        fclose(f);
    } else {
        n = (size_t)read(0, in_buf, sizeof(in_buf));
        if ((ssize_t)n < 0)
            return 3;
    }
    if (n < 1)
        return 0;
    const unsigned char *p = in_buf + 1;
    size_t len = n - 1;
    switch (in_buf[0] % 7) {
    case 0: return do_inflate(p, len, 15 + 32, 0);
    case 1: return do_inflate(p, len, -15, 0);
    case 2: return do_roundtrip(p, len);
    case 3: {
        uLongf dl = sizeof(out_buf);
        return uncompress(out_buf, &dl, p, (uLong)len) != Z_OK;
    }
    case 4: return do_back(p, len);
    case 5: return do_gz(p, len);
    default: return do_inflate(p, len, 15, 1);
    }
}
