/* What the coverage component's files share and nobody else needs. */
#ifndef PTC_COV_INT_H
#define PTC_COV_INT_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "cov.h"

/* cov_corpus.c */
int cov_entries_push(struct cov_entries *e, const char *path, const char *name, unsigned kind,
                     int64_t time_ms, const struct stat *st);
int cov_entry_check(const char *path, const char *shown, struct stat *st, FILE *warn);
int cov_list_dir(const char *dir, char ***names, size_t *count);
int cov_cmp_str(const void *a, const void *b);
void cov_free_names(char **v, size_t n);

/* cov_file.c: the .ptcov's payload writer and reader (LEB128 integers, strings), which
 * record 11's payload (cov_watch_file.c) is written and read with too. A writer that ran out
 * of memory sets oom and writes nothing more; a reader past its end or on a damaged integer
 * sets bad (2: out of memory) and reads 0 / NULL from then on. */
struct cov_buf {
    uint8_t *p;
    size_t n, cap;
    int oom;
};
void cov_buf_put(struct cov_buf *b, const void *src, size_t n);
void cov_buf_put_v(struct cov_buf *b, uint64_t v);
void cov_buf_put_s(struct cov_buf *b, const char *s);   /* NULL: the empty string */
struct cov_rd {
    const uint8_t *p, *end;
    int bad;
};
uint64_t cov_rd_v(struct cov_rd *r);
char *cov_rd_s(struct cov_rd *r);                       /* malloc'ed, NUL-terminated */

/* cov_afl.c: an AFL++ instance's fuzzer_stats (INST/fuzzer_stats, opened as an input is:
 * never waited on), the one reader of it for `--afl` and `--watch`. Each field as written
 * (seconds, a pid), COV_AFL_STAT_NONE when absent. 0, or the open's negative errno
 * (-EINVAL: not a regular file; -ENAMETOOLONG: the path). */
#define COV_AFL_STAT_NONE LLONG_MIN
struct cov_afl_stats {
    long long start_time, last_update, run_time, fuzzer_pid;
};
int cov_afl_read_stats(const char *inst, struct cov_afl_stats *s);

#endif
