/* A libFuzzer-style harness for test/cov/cov_test.py (built with ptcall-cc
 * -fptcall-fuzz-driver): the same paths as cov_target.c, per input. */
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

static int f_a(int x) { return x + 1; }
static int f_b(int x) { return x * 2; }
static void crash(void) { *(volatile int *)0 = 1; }
static void hang(void) { for (;;) pause(); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    volatile int r = 0;
    if (size > 0 && data[0] == 'a')
        r = f_a((int)size);
    if (size > 0 && data[0] == 'b')
        r = f_b((int)size);
    if (size > 0 && data[0] == 'c')
        crash();
    if (size > 0 && data[0] == 'h')
        hang();
    return r > 1000;
}
