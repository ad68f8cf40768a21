/* counts_test.py's libFuzzer-style harness, linked with the ptcall fuzz driver
 * (ptcall-cc -fptcall-fuzz-driver): 'a' calls parse_a once, 'b' parse_b twice, "crash" a
 * SIGSEGV; LLVMFuzzerInitialize once. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

volatile int sink;
__attribute__((noinline)) int parse_a(const uint8_t *d, size_t n) { sink++; return n > 1 ? d[1] : 0; }
__attribute__((noinline)) int parse_b(const uint8_t *d, size_t n) { sink++; return (int)n + d[0]; }
__attribute__((noinline)) void boom(void) { *(volatile int *)(sink - sink) = 1; }
__attribute__((noinline)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    sink++;
    return 0;
}
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n && d[0] == 'a')
        sink += parse_a(d, n);
    if (n && d[0] == 'b') {
        sink += parse_b(d, n);
        sink += parse_b(d, n);
    }
    if (n >= 5 && !memcmp(d, "crash", 5))
        boom();
    return 0;
}
