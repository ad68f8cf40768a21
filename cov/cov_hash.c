/* An input's content hash for INPUT_HASH (docs/cov.md, *Origins and input hashes*): XXH3-128
 * from libxxhash, the hash the runs database identifies traces by (db/db_hash.h), stored as
 * its canonical bytes (high 64 bits first, as `xxhsum -H2` prints it). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

#include "cov.h"

#define HASH_BUF (64 * 1024)

int cov_hash_fd(int fd, uint64_t len, uint8_t out[16])
{
    XXH3_state_t *st = XXH3_createState();
    char *buf = malloc(HASH_BUF);
    int rc = st && buf ? 0 : -ENOMEM;
    if (!rc)
        XXH3_128bits_reset(st);
    /* pread: the runner's copy left the input's offset alone, and holes read as zeros */
    for (uint64_t off = 0; !rc && off < len;) {
        size_t want = len - off < HASH_BUF ? (size_t)(len - off) : HASH_BUF;
        ssize_t k = pread(fd, buf, want, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            rc = k < 0 ? -errno : -ENODATA;
            break;
        }
        XXH3_128bits_update(st, buf, (size_t)k);
        off += (uint64_t)k;
    }
    if (!rc) {
        XXH128_canonical_t c;
        XXH128_canonicalFromHash(&c, XXH3_128bits_digest(st));
        memcpy(out, c.digest, 16);
    }
    free(buf);
    XXH3_freeState(st);
    return rc;
}

void cov_hash_hex(const uint8_t h[16], char hex[33])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        hex[2 * i] = digits[h[i] >> 4];
        hex[2 * i + 1] = digits[h[i] & 15];
    }
    hex[32] = 0;
}
