/* Writing trace-file chunks (docs/trace-format.md). Shared by the runtime, `ptcall record`,
 * the Intel PT recorder, `ptcall import` and the test writers. */
#ifndef PTC_CHUNK_WRITE_H
#define PTC_CHUNK_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "ptcall/trace_format.h"

/* Fills the 64-byte file header. */
void ptc_file_header_init(struct ptc_file_header *h, uint32_t backend, uint32_t flags,
                          uint64_t created_ns);

/* Writes one chunk whose payload is the concatenation of parts[0..nparts), with its
 * header, CRC and padding, as a single writev() so that concurrent O_APPEND writers never
 * interleave inside a chunk. Retries on EINTR and finishes short writes. Returns 0, or
 * -errno. nparts must be at most 14. */
int ptc_write_chunk(int fd, uint16_t type, uint16_t flags, uint32_t pid, uint32_t tid,
                    uint32_t seq, const struct iovec *parts, int nparts);

/* ptc_write_chunk for a writer that goes on after a failed write (a disk that filled up and
 * then freed space): *owed (start at 0) holds how many bytes of a chunk a failed write cut
 * short; the next call first appends that many zeros, so the cut chunk keeps its announced
 * length (it fails its CRC and a reader skips it whole) and this chunk starts on a chunk
 * boundary. Without it every chunk after the cut one was read at the wrong offset. */
int ptc_write_chunk_owed(int fd, uint64_t *owed, uint16_t type, uint16_t flags, uint32_t pid,
                         uint32_t tid, uint32_t seq, const struct iovec *parts, int nparts);

/* Fills *h for a chunk with the given payload (computes size and CRC). */
void ptc_chunk_header_init(struct ptc_chunk_header *h, uint16_t type, uint16_t flags,
                           uint32_t pid, uint32_t tid, uint32_t seq,
                           const struct iovec *parts, int nparts);

/* Bytes of zero padding after a payload of n bytes. */
static inline size_t ptc_chunk_padding(size_t n) { return (8 - (n & 7)) & 7; }

/* FNV-1a 64: the hash used for unit and module identities. */
uint64_t ptc_fnv1a64(uint64_t h, const void *data, size_t n);
#define PTC_FNV1A64_INIT 0xcbf29ce484222325ULL

/* What ptc_create_trace found at the path. */
struct ptc_trace_path {
    int created;         /* 1: the file is new (the caller may remove it again), 0: a trace emptied */
    unsigned long dev;   /* the file's device and inode, to check before removing it */
    unsigned long ino;
};

/* Creates a trace file for writing, or empties an earlier trace of the caller's: mode 0600
 * (a trace holds the command line and the program's paths). It never writes through a
 * symbolic link (errno ELOOP), and never empties or replaces anything but a regular file
 * that is a ptcall trace (or empty) and is the caller's own (errno EEXIST): a device, a
 * FIFO, a directory, another user's file or a file of other content is left as it is.
 * Returns the descriptor (offset 0, blocking), or -1 with errno. tp may be NULL. */
int ptc_create_trace(const char *path, struct ptc_trace_path *tp);
/* What to say after ptc_create_trace(path) failed with err: "P is ...: why; what to do"
 * into buf. */
void ptc_create_trace_error(char *buf, size_t n, const char *path, int err);

/* Removes path if it is still the file ptc_create_trace created (tp->created, same device
 * and inode). 0 when removed, -1 when it was not ours to remove. */
int ptc_remove_created_trace(const char *path, const struct ptc_trace_path *tp);

#endif
