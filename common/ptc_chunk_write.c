#include "ptc_chunk_write.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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

/* Appends n zero bytes: what a chunk cut by an earlier failed write still owes. */
static int write_zeros(int fd, uint64_t *n)
{
    static const uint8_t zeros[4096];
    while (*n) {
        ssize_t w = write(fd, zeros, *n < sizeof(zeros) ? (size_t)*n : sizeof(zeros));
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? -errno : -EIO;
        *n -= (uint64_t)w;
    }
    return 0;
}

int ptc_write_chunk_owed(int fd, uint64_t *owed, uint16_t type, uint16_t flags, uint32_t pid,
                         uint32_t tid, uint32_t seq, const struct iovec *parts, int nparts)
{
    static const uint8_t zeros[8];
    struct ptc_chunk_header h;
    struct iovec iov[16];
    if (nparts < 0 || nparts > 14)
        return -EINVAL;
    if (owed && *owed) { /* finish the cut chunk first, so this one starts on a boundary */
        int e = write_zeros(fd, owed);
        if (e)
            return e;
    }
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
    uint64_t total = sizeof(h) + h.payload_size + pad, done = 0;
    struct iovec *cur = iov;
    while (n > 0) {
        ssize_t w = writev(fd, cur, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            if (owed && done) /* part of the chunk is in the file: the rest is owed */
                *owed = total - done;
            return -e;
        }
        done += (uint64_t)w;
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

int ptc_write_chunk(int fd, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                    uint32_t seq, const struct iovec *parts, int nparts)
{
    return ptc_write_chunk_owed(fd, NULL, type, flags, pid, tid, seq, parts, nparts);
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

/* An existing path is emptied only when it is a regular file of the caller's that holds a
 * trace or nothing: `record -o /dev/null` used to truncate the device and later unlink it. */
static int reusable_trace(int fd, const struct stat *seen)
{
    struct stat st;
    char magic[8];
    if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_dev != seen->st_dev ||
        st.st_ino != seen->st_ino || st.st_uid != geteuid())
        return 0;
    return st.st_size == 0 || (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
                               !memcmp(magic, PTC_FILE_MAGIC, sizeof(magic)));
}

int ptc_create_trace(const char *path, struct ptc_trace_path *tp)
{
    struct stat st;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    int created = fd >= 0;
    if (fd < 0) {
        if (errno != EEXIST || lstat(path, &st))
            return -1;
        if (S_ISLNK(st.st_mode)) {
            errno = ELOOP;
            return -1;
        }
        if (!S_ISREG(st.st_mode)) { /* opening a FIFO or a device could block or act */
            errno = EEXIST;
            return -1;
        }
        fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
            return -1;
        int e = reusable_trace(fd, &st) ? 0 : EEXIST;
        if (!e && (ftruncate(fd, 0) || fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)))
            e = errno;
        if (e) {
            close(fd);
            errno = e;
            return -1;
        }
    }
    if (fstat(fd, &st)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (tp)
        *tp = (struct ptc_trace_path){created, (unsigned long)st.st_dev, (unsigned long)st.st_ino};
    return fd;
}

int ptc_remove_created_trace(const char *path, const struct ptc_trace_path *tp)
{
    struct stat st;
    if (!tp->created || lstat(path, &st) || !S_ISREG(st.st_mode) ||
        (unsigned long)st.st_dev != tp->dev || (unsigned long)st.st_ino != tp->ino)
        return -1;
    return unlink(path);
}

static const char *file_kind(mode_t m)
{
    return S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
           S_ISFIFO(m) ? "a FIFO" : S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" :
           "not a regular file";
}

void ptc_create_trace_error(char *buf, size_t n, const char *path, int err)
{
    struct stat st;
    if (err == ELOOP) {
        snprintf(buf, n, "%s is a symbolic link: a trace is not written through one (it could "
                         "overwrite the file it names); give the file itself with -o", path);
    } else if (err == EEXIST && !lstat(path, &st) && !S_ISREG(st.st_mode)) {
        snprintf(buf, n, "%s is %s, not a trace file: ptcall writes traces only to regular "
                         "files; choose a file name with -o", path, file_kind(st.st_mode));
    } else if (err == EEXIST && !lstat(path, &st) && st.st_uid != geteuid()) {
        snprintf(buf, n, "%s belongs to another user (uid %u): ptcall replaces only its own "
                         "traces; choose another file with -o", path, (unsigned)st.st_uid);
    } else if (err == EEXIST) {
        snprintf(buf, n, "%s exists and is not a ptcall trace: ptcall replaces only earlier "
                         "traces (and empty files); remove it yourself or choose another file "
                         "with -o", path);
    } else {
        snprintf(buf, n, "cannot create %s: %s; choose another file with -o", path,
                 strerror(err));
    }
}
