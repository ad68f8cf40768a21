/* The next chunk sequence number of every (pid, tid) stream a trace writer writes
 * (docs/trace-format.md section 5): a table that grows with the streams, so that a
 * recording of thousands of threads never gives two chunks of different streams one count
 * (which a reader reports as missing chunks that are not missing). */
#ifndef PTC_SEQTAB_H
#define PTC_SEQTAB_H

#include <stddef.h>
#include <stdint.h>

struct ptc_seqtab {
    struct ptc_seq_slot { uint64_t key; uint32_t next; uint32_t used; } *v;
    size_t cap, n;
};

/* The sequence number for the next chunk of stream (pid, tid), counted. 0, or -1 when out
 * of memory (nothing is counted then). */
int ptc_seq_next(struct ptc_seqtab *t, uint32_t pid, uint32_t tid, uint32_t *seq);
void ptc_seq_free(struct ptc_seqtab *t);

#endif
