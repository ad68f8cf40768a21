/* What the coverage component's files share and nobody else needs. */
#ifndef PTC_COV_INT_H
#define PTC_COV_INT_H

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

#endif
