/* The CHECK macro the Intel PT unit tests share: report a failed condition with its place
 * and keep going, so one run lists every failure; main() returns pt_check_fails != 0. */
#ifndef PT_CHECK_H
#define PT_CHECK_H

#include <stdio.h>

static int pt_check_fails;
#define CHECK(c, ...)                                                                      \
    do {                                                                                   \
        if (!(c)) {                                                                        \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                    \
            printf(__VA_ARGS__);                                                           \
            printf("\n");                                                                  \
            pt_check_fails++;                                                              \
        }                                                                                  \
    } while (0)

#endif
