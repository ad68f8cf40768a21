/* `cov run` on libFuzzer-style harnesses (cov_libfuzzer.c). */
#ifndef PTCALL_COV_LIBFUZZER_H
#define PTCALL_COV_LIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

#include "cov.h"

/* Runs every entry of e through the harness target_argv (NULL-terminated; the entries'
 * paths are appended, in batches) in counting mode with runtime preloaded, and fills
 * results[i] / ran[i] per entry. Crashes and hangs end a batch at the input after the last
 * mark; the next batch starts after it. Returns 0, or an error with why. */
int cov_libfuzzer_run(char **target_argv, const char *runtime, uint32_t timeout_ms,
                      const char *workdir, struct cov_data *d, const struct cov_entries *e,
                      struct cov_result *results, int *ran, char *why, size_t n);

#endif
