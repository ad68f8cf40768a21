/* The content hash that identifies a trace in the runs database: XXH3-128 of the whole file
 * (libxxhash), made of the bytes the decoder reads as it reads them (db_hash_stream_*, the
 * decoder's read hook), or on a second thread that reads the file itself (db_hash_start:
 * parallel decodes).
 *
 * Why not SHA-256: `db add` must cost at most 10 % more than `ptcall report` (issue 17), and
 * SHA-256 of a trace costs about a quarter of report's time even with the CPU's SHA
 * instructions (OpenSSL: 2.1 GB/s against report's 0.45 GB/s on a 287 MB trace), which only
 * a free second core hides; XXH3 of bytes still in the cache costs about 1 % (AVX-512). Its
 * 128 bits make an accidental collision of two different traces practically impossible (1e9
 * traces: about 1e-21); it is no defence against traces crafted to collide, which a runs
 * database need not fear. */
#ifndef PTCALL_DB_HASH_H
#define PTCALL_DB_HASH_H

#include <stddef.h>
#include <stdint.h>

#define DB_HASH_HEX 33 /* 32 hex digits (XXH3-128, high 64 bits first, as xxhsum -H2) + NUL */

struct db_hash;
/* Starts hashing path. Returns NULL only when out of memory; an unreadable file is reported
 * by db_hash_finish(). */
struct db_hash *db_hash_start(const char *path);
/* Waits for the hash: 0 with its hex digits in hex and the file's size in *bytes, or -1 with
 * what went wrong in err. Frees h. */
int db_hash_finish(struct db_hash *h, char hex[DB_HASH_HEX], uint64_t *bytes, char *err,
                   size_t n);

/* The same hash of bytes handed in as something else reads them (the decoder's read hook):
 * no second read of the file and no second thread, for a machine whose cores are busy. NULL
 * when out of memory. */
struct db_hash_stream;
struct db_hash_stream *db_hash_stream_new(void);
/* ctx: the stream (the signature of ptc_read_hook) */
void db_hash_stream_update(void *ctx, const void *data, size_t n);
/* The hex digits and how many bytes went in. Frees h. */
void db_hash_stream_finish(struct db_hash_stream *h, char hex[DB_HASH_HEX], uint64_t *bytes);

#endif
