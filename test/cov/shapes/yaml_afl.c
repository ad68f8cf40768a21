/* An AFL++ persistent-mode harness (instrumentation/README.persistent_mode.md), as written
 * for afl-clang-fast: deferred start, shared-memory test cases, a loop of 10000 inputs.
 * ptcall-cc defines these macros itself (docs/cov.md, "Harness shapes"). */
#include <stdint.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__AFL_FUZZ_INIT();

int main(void)
{
    __AFL_INIT();
    unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000)) {
        int len = __AFL_FUZZ_TESTCASE_LEN;
        LLVMFuzzerTestOneInput(buf, (size_t)len);
    }
    return 0;
}
