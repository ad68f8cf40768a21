/* A libFuzzer harness that aborts on inputs starting with "crash" (test/cov/shapes_test.py):
 * run under libFuzzer's main by `cov run`, the input must be recorded as signal 6, as with
 * every other shape (libFuzzer's own handler turned it into exit status 77), and nothing left
 * in the directory cov run was started in. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void boom(void)
{
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 5 && !memcmp(data, "crash", 5))
        boom();
    return 0;
}
