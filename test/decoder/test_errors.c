/* Error handling: truncation at every byte offset, flipped bytes, wrong magic, newer major
 * version, empty and missing files. Each must give the right error code and never crash
 * (this test also runs under ASan+UBSan). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptcall/decode.h"
#include "ptc_crc.h"
#include "tw.h"

static int failures;
#define CHECK(cond)                                                                         \
    do {                                                                                    \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);        \
            failures++;                                                                     \
        }                                                                                   \
    } while (0)

static const char *const NAMES[] = {"main", "a", "b"};

static uint8_t *load(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n ? *n : 1);
    if (fread(b, 1, *n, f) != *n)
        abort();
    fclose(f);
    return b;
}

static void save(const char *path, const void *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b, 1, n, f) != n)
        abort();
    fclose(f);
}

static int decode_mem(const uint8_t *b, size_t n, unsigned flags, struct ptc_totals *t)
{
    /* a private copy, exactly n bytes long, so ASan sees any overread */
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b, n);
    struct ptc_session *s = ptc_session_new();
    int rc = ptc_decode_memory(s, copy, n, flags);
    CHECK(ptc_session_errmsg(s) != NULL);
    if (rc)
        CHECK(ptc_session_errmsg(s)[0] != 0);
    if (t)
        ptc_session_totals(s, t);
    ptc_session_free(s);
    free(copy);
    return rc;
}

int main(void)
{
    char dir[] = "/tmp/ptc-test-errors-XXXXXX", path[300];
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof(path), "%s/small.ptc", dir);
    struct tw *w = tw_open(path, PTC_BACKEND_SOFT, PTC_FILE_F_TIMED);
    tw_record_info(w, PTC_FILE_F_TIMED, "./small");
    tw_process(w, 10, PTC_PROC_START, 1, 0, "/bin/small");
    tw_timebase(w, 10, 1, 3, 0);
    tw_module(w, 10, 0, 0, 0x1000, "/bin/small", NAMES, 3);
    struct tw_stream *st = tw_stream(w, 10, 10, 1, 4);
    tw_hit(st, TW_E(0), 100);
    tw_hit(st, TW_E(1), 110);
    tw_hit(st, TW_E(2), 120);
    tw_hit(st, TW_X(2), 400);
    tw_drop(st, 2, 410);
    tw_hit(st, TW_X(1), 100000);
    tw_fork(st, 11, 100010);
    tw_hit(st, TW_X(0), 100020);
    tw_stream_free(st);
    tw_process_end(w, 10, 0);
    tw_record_end(w, 0);
    tw_close(w);
    size_t n = 0;
    uint8_t *full = load(path, &n);
    CHECK(full != NULL);

    /* chunk boundaries */
    char *boundary = calloc(n + 1, 1);
    struct ptc_reader *r;
    CHECK(ptc_reader_open_memory(&r, full, n) == 0);
    struct ptc_chunk c;
    boundary[64] = 1;
    int nchunks = 0;
    while (ptc_reader_next(r, &c) == 1) {
        boundary[ptc_reader_offset(r)] = 1;
        nchunks++;
    }
    ptc_reader_close(r);
    CHECK(boundary[n]);
    CHECK(decode_mem(full, n, 0, NULL) == 0);

    /* truncated at every byte offset */
    int bad = 0;
    for (size_t len = 0; len < n; len++) {
        int rc = decode_mem(full, len, 0, NULL);
        int want = len < 8 ? -PTC_E_FORMAT : len < 64 ? -PTC_E_TRUNCATED
                   : boundary[len]       ? 0
                                         : -PTC_E_TRUNCATED;
        if (rc != want) {
            if (bad++ < 10)
                fprintf(stderr, "truncated at %zu: rc %d, expected %d\n", len, rc, want);
            failures++;
        }
        if (len > 64 && !boundary[len]) { /* salvage keeps what precedes */
            struct ptc_totals t;
            rc = decode_mem(full, len, PTC_DECODE_SALVAGE, &t);
            CHECK(rc == -PTC_E_TRUNCATED);
        }
    }
    /* the message says where and how much */
    {
        struct ptc_session *s = ptc_session_new();
        CHECK(ptc_decode_memory(s, full, n - 5, 0) == -PTC_E_TRUNCATED);
        CHECK(strstr(ptc_session_errmsg(s), "truncated") != NULL);
        CHECK(strstr(ptc_session_errmsg(s), "5 of its") != NULL);
        ptc_session_free(s);
    }

    /* every byte flipped, two ways */
    uint8_t *mut = malloc(n);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 2; k++) {
            memcpy(mut, full, n);
            mut[i] ^= k ? 0xff : 0x01;
            int rc = decode_mem(mut, n, 0, NULL);
            CHECK(rc <= 0 && rc >= -PTC_E_UNSUPPORTED && rc != -PTC_E_NOMEM);
            if (i < 8)
                CHECK(rc == -PTC_E_FORMAT);
            else if (i < 10)
                CHECK(rc == -PTC_E_VERSION);
            rc = decode_mem(mut, n, PTC_DECODE_SALVAGE, NULL);
            CHECK(rc <= 0 && rc >= -PTC_E_UNSUPPORTED && rc != -PTC_E_NOMEM);
        }
    /* payload bytes are covered by the CRC: a flip there is CORRUPT, naming the chunk */
    CHECK(ptc_reader_open_memory(&r, full, n) == 0);
    while (ptc_reader_next(r, &c) == 1) {
        for (uint32_t j = 0; j < c.h.payload_size; j++) {
            size_t i = (size_t)c.offset + 24 + j;
            memcpy(mut, full, n);
            mut[i] ^= 0x40;
            struct ptc_session *s = ptc_session_new();
            int rc = ptc_decode_memory(s, mut, n, 0);
            CHECK(rc == -PTC_E_CORRUPT);
            CHECK(strstr(ptc_session_errmsg(s), "CRC") != NULL);
            ptc_session_free(s);
            /* salvage skips the chunk and goes on */
            struct ptc_totals t;
            rc = decode_mem(mut, n, PTC_DECODE_SALVAGE, &t);
            CHECK(rc == -PTC_E_CORRUPT);
            CHECK(t.skipped_chunks >= 1);
        }
    }
    ptc_reader_close(r);

    /* wrong magic, newer major version, empty, missing, directory */
    struct ptc_session *s = ptc_session_new();
    memcpy(mut, full, n);
    memcpy(mut, "PTCALLXX", 8);
    save(path, mut, n);
    CHECK(ptc_decode_file(s, path, 0) == -PTC_E_FORMAT);
    CHECK(strstr(ptc_session_errmsg(s), "not a ptcall trace file") != NULL);
    ptc_session_free(s);

    s = ptc_session_new();
    memcpy(mut, full, n);
    mut[8] = 3;
    save(path, mut, n);
    CHECK(ptc_decode_file(s, path, 0) == -PTC_E_VERSION);
    CHECK(strstr(ptc_session_errmsg(s), "reads versions 1.x to 2.x") != NULL);
    ptc_session_free(s);

    /* format 2: a flipped bit in a chunk's header (its type) fails the CRC; before 2.0 it
     * made a SOFT_EVENTS chunk another known type and its events vanished silently */
    {
        memcpy(mut, full, n);
        size_t at = 64;
        int flipped = 0;
        while (at + 24 <= n) {
            uint16_t ty;
            uint32_t sz;
            memcpy(&ty, mut + at, 2);
            memcpy(&sz, mut + at + 4, 4);
            if (ty == PTC_CHUNK_SOFT_EVENTS) {
                mut[at] ^= 0x02; /* 7 -> 5: MODULE_UNLOAD */
                flipped = 1;
                break;
            }
            at += 24 + sz + ((8 - sz % 8) % 8);
        }
        CHECK(flipped);
        s = ptc_session_new();
        CHECK(ptc_decode_memory(s, mut, n, 0) == -PTC_E_CORRUPT);
        CHECK(strstr(ptc_session_errmsg(s), "fails its CRC check") != NULL);
        ptc_session_free(s);
    }

    /* a 1.x trace (the CRC of the payload only) is still read */
    {
        memcpy(mut, full, n);
        mut[8] = 1;
        size_t at = 64;
        while (at + 24 <= n) {
            uint32_t sz;
            memcpy(&sz, mut + at + 4, 4);
            uint32_t c = ptc_crc32(mut + at + 24, sz);
            memcpy(mut + at + 20, &c, 4);
            at += 24 + sz + ((8 - sz % 8) % 8);
        }
        s = ptc_session_new();
        CHECK(ptc_decode_memory(s, mut, n, 0) == 0);
        ptc_session_free(s);
        s = ptc_session_new();
        CHECK(ptc_decode_memory(s, full, n, 0) == 0);
        ptc_session_free(s);
    }

    s = ptc_session_new();
    memcpy(mut, full, n);
    mut[10] = 7; /* newer minor: fine */
    save(path, mut, n);
    CHECK(ptc_decode_file(s, path, 0) == 0);
    ptc_session_free(s);

    s = ptc_session_new();
    save(path, "", 0);
    CHECK(ptc_decode_file(s, path, 0) == -PTC_E_FORMAT);
    CHECK(strstr(ptc_session_errmsg(s), "empty") != NULL);
    ptc_session_free(s);

    s = ptc_session_new();
    snprintf(path, sizeof(path), "%s/does-not-exist.ptc", dir);
    CHECK(ptc_decode_file(s, path, 0) == -PTC_E_IO);
    CHECK(strstr(ptc_session_errmsg(s), "No such file") != NULL);
    ptc_session_free(s);

    s = ptc_session_new();
    CHECK(ptc_decode_file(s, dir, 0) == -PTC_E_IO);
    ptc_session_free(s);

    /* the same file through the file reader (buffered path) truncated mid-chunk */
    snprintf(path, sizeof(path), "%s/trunc.ptc", dir);
    save(path, full, n - 3);
    s = ptc_session_new();
    CHECK(ptc_decode_file(s, path, 0) == -PTC_E_TRUNCATED);
    ptc_session_free(s);

    CHECK(strcmp(ptc_strerror(-PTC_E_TRUNCATED), "truncated trace") == 0);
    CHECK(strcmp(ptc_strerror(999), "unknown error") == 0);

    free(mut);
    free(full);
    free(boundary);
    char cmd[400];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd)) {
    }
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all error tests passed (%zu bytes, %d chunks)\n", n, nchunks);
    return 0;
}
