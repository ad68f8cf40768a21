/* XXH3-128 of a trace file on a second thread (db_hash.h). */
#include "db_hash.h"

#include <errno.h>
#include <fcntl.h>
#include <xxhash.h>
#ifdef PTCALL_XXH_DISPATCH
/* libxxhash's run-time choice of SSE2, AVX2 or AVX-512 (Debian builds it with it): on bytes
 * still in L2 (the decoder's read hook) AVX-512 hashes a 275 MB trace in 3 ms of CPU, SSE2 in
 * 14 ms. The plain names stay the baseline build's. */
#define XXH_DISPATCH_DISABLE_REPLACE
#include <xxh_x86dispatch.h>
#define xxh3_update XXH3_128bits_update_dispatch
#else
#define xxh3_update XXH3_128bits_update
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Read in blocks of 1 MiB: XXH3 of a 287 MB trace from the page cache costs 40 ms of CPU
 * this way, and 42-48 ms mapped (mmap: the page faults cost what the copy saves). */
#define BLOCK (1u << 20)

struct db_hash {
    char *path;
    pthread_t th;
    int started;
    int rc;
    char hex[DB_HASH_HEX];
    uint64_t bytes;
    char err[512];
};

static void hex_of(struct db_hash *h, XXH128_hash_t d)
{
    snprintf(h->hex, sizeof(h->hex), "%016llx%016llx", (unsigned long long)d.high64,
             (unsigned long long)d.low64);
}

static void hash_file(struct db_hash *h)
{
    h->rc = -1;
    int fd = open(h->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(h->err, sizeof(h->err), "cannot open %s: %s", h->path, strerror(errno));
        return;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    unsigned char *buf = malloc(BLOCK);
    XXH3_state_t *st = XXH3_createState();
    if (!buf || !st || XXH3_128bits_reset(st) != XXH_OK) {
        snprintf(h->err, sizeof(h->err), "cannot hash %s: out of memory", h->path);
        goto out;
    }
    for (;;) {
        ssize_t n = read(fd, buf, BLOCK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            snprintf(h->err, sizeof(h->err), "cannot read %s: %s", h->path, strerror(errno));
            goto out;
        }
        if (n == 0)
            break;
        xxh3_update(st, buf, (size_t)n);
        h->bytes += (uint64_t)n;
    }
    hex_of(h, XXH3_128bits_digest(st));
    h->rc = 0;
out:
    XXH3_freeState(st);
    free(buf);
    close(fd);
}

static void *work(void *arg)
{
    hash_file(arg);
    return NULL;
}

struct db_hash *db_hash_start(const char *path)
{
    struct db_hash *h = calloc(1, sizeof(*h));
    if (!h || !(h->path = strdup(path))) {
        free(h);
        return NULL;
    }
    /* without a thread the hash is made in db_hash_finish(), on this one */
    h->started = pthread_create(&h->th, NULL, work, h) == 0;
    return h;
}

int db_hash_finish(struct db_hash *h, char hex[DB_HASH_HEX], uint64_t *bytes, char *err,
                   size_t n)
{
    if (h->started)
        pthread_join(h->th, NULL);
    else
        hash_file(h);
    int rc = h->rc;
    if (!rc) {
        memcpy(hex, h->hex, DB_HASH_HEX);
        *bytes = h->bytes;
    } else {
        snprintf(err, n, "%s", h->err);
    }
    free(h->path);
    free(h);
    return rc;
}

struct db_hash_stream {
    XXH3_state_t *st;
    uint64_t bytes;
};

struct db_hash_stream *db_hash_stream_new(void)
{
    struct db_hash_stream *h = calloc(1, sizeof(*h));
    if (h && (!(h->st = XXH3_createState()) || XXH3_128bits_reset(h->st) != XXH_OK)) {
        XXH3_freeState(h->st);
        free(h);
        h = NULL;
    }
    return h;
}

void db_hash_stream_update(void *ctx, const void *data, size_t n)
{
    struct db_hash_stream *h = ctx;
    xxh3_update(h->st, data, n);
    h->bytes += n;
}

void db_hash_stream_finish(struct db_hash_stream *h, char hex[DB_HASH_HEX], uint64_t *bytes)
{
    XXH128_hash_t d = XXH3_128bits_digest(h->st);
    snprintf(hex, DB_HASH_HEX, "%016llx%016llx", (unsigned long long)d.high64,
             (unsigned long long)d.low64);
    *bytes = h->bytes;
    XXH3_freeState(h->st);
    free(h);
}
