/* The CHECK macro of the runtime's unit tests: report a failed condition with its place and
 * keep going, so one run lists every failure; main() returns failures != 0. */
#ifndef RT_CHECK_H
#define RT_CHECK_H

#include <stdio.h>

static int failures;
#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c);         \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#endif
