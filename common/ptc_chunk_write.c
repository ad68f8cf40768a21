#include "ptc_chunk_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ptc_crc.h"

void ptc_file_header_init(struct ptc_file_header *h, uint32_t backend, uint32_t flags,
                          uint64_t created_ns)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, PTC_FILE_MAGIC, 8);
    h->version_major = PTC_VERSION_MAJOR;
    h->version_minor = PTC_VERSION_MINOR;
    h->header_size = sizeof(*h);
    h->created_ns = created_ns;
    h->backend = backend;
    h->flags = flags;
}

void ptc_chunk_header_init(struct ptc_chunk_header *h, uint16_t type, uint16_t flags,
                           uint32_t pid, uint32_t tid, uint32_t seq,
                           const struct iovec *parts, int nparts)
{
    size_t size = 0;
    uint32_t crc = 0;
    for (int i = 0; i < nparts; i++) {
        size += parts[i].iov_len;
        crc = ptc_crc32_update(crc, parts[i].iov_base, parts[i].iov_len);
    }
    h->type = type;
    h->flags = flags;
    h->payload_size = (uint32_t)size;
    h->pid = pid;
    h->tid = tid;
    h->seq = seq;
    /* PTC_VERSION_MAJOR 2: the header's first 20 bytes after the payload (ptc_chunk_crc) */
    h->crc32 = ptc_crc32_update(crc, h, 20);
}

int ptc_write_chunk(int fd, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                    uint32_t seq, const struct iovec *parts, int nparts)
{
    static const uint8_t zeros[8];
    struct ptc_chunk_header h;
    struct iovec iov[16];
    if (nparts < 0 || nparts > 14)
        return -EINVAL;
    ptc_chunk_header_init(&h, type, flags, pid, tid, seq, parts, nparts);
    iov[0].iov_base = &h;
    iov[0].iov_len = sizeof(h);
    int n = 1;
    for (int i = 0; i < nparts; i++)
        if (parts[i].iov_len)
            iov[n++] = parts[i];
    size_t pad = ptc_chunk_padding(h.payload_size);
    if (pad) {
        iov[n].iov_base = (void *)zeros;
        iov[n].iov_len = pad;
        n++;
    }
    struct iovec *cur = iov;
    while (n > 0) {
        ssize_t w = writev(fd, cur, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        while (n > 0 && (size_t)w >= cur->iov_len) {
            w -= (ssize_t)cur->iov_len;
            cur++;
            n--;
        }
        if (n > 0) {
            cur->iov_base = (uint8_t *)cur->iov_base + w;
            cur->iov_len -= (size_t)w;
        }
    }
    return 0;
}

uint64_t ptc_fnv1a64(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

int ptc_create_trace(const char *path)
{
    return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void ptc_create_trace_error(char *buf, size_t n, const char *path, int err)
{
    if (err == ELOOP)
        snprintf(buf, n, "%s is a symbolic link: a trace is not written through one (it could "
                         "overwrite the file it names); give the file itself with -o", path);
    else
        snprintf(buf, n, "cannot create %s: %s; choose another file with -o", path,
                 strerror(err));
}
