/* A small program with a hand-made ptcall_stubs section and ptcall_map (what the pass emits:
 * one `ret` per 16-byte stub, and a map blob describing them; include/ptcall/map_format.h),
 * for the filter-string, import and hardware tests. Three functions, entry and exit stubs. */
#include <stdint.h>

#define STUB(n)                                                                            \
    __attribute__((naked, noinline, used, section("ptcall_stubs"), aligned(16))) static    \
    void stub_##n(void) { __asm__ volatile("ret # stub " #n); }
STUB(0)
STUB(1)
STUB(2)
STUB(3)
STUB(4)
STUB(5)

uint64_t ptcall_stubprog_slot __attribute__((used, visibility("hidden")));

/* map blob: header (64 bytes), 6 stubs, 3 functions, strings */
__asm__(".pushsection ptcall_map,\"a\",@progbits\n"
        ".balign 8\n"
        "1:\n"
        ".long 0x4d435450\n .short 1\n .short 64\n .long 9f-1b\n .long 2\n"
        ".quad 0x5eed5eed5eed5eed\n"
        ".long 6\n .long 3\n .long 2f-1b\n .long 3f-1b\n .long 4f-1b\n .long 5f-4f\n"
        ".quad ptcall_stubprog_slot-.\n"
        ".long 0\n .long 0\n"
        "2:\n"
        ".quad stub_0-.\n .long 0\n .short 0\n .short 0\n"
        ".quad stub_1-.\n .long 0\n .short 1\n .short 0\n"
        ".quad stub_2-.\n .long 1\n .short 0\n .short 0\n"
        ".quad stub_3-.\n .long 1\n .short 1\n .short 0\n"
        ".quad stub_4-.\n .long 2\n .short 0\n .short 0\n"
        ".quad stub_5-.\n .long 2\n .short 1\n .short 0\n"
        "3:\n"
        ".long 11\n .long 11\n .long 0\n .long 10\n"
        ".long 16\n .long 16\n .long 0\n .long 20\n"
        ".long 21\n .long 21\n .long 0\n .long 30\n"
        "4:\n"
        ".asciz \"stubprog.c\"\n" /* 0 */
        ".asciz \"work\"\n"       /* 11 */
        ".asciz \"leaf\"\n"       /* 16 */
        ".asciz \"main\"\n"       /* 21 */
        "5:\n"
        ".balign 8\n"
        "9:\n"
        ".popsection\n");

static int leaf(int i)
{
    stub_2();
    int r = i * 3;
    stub_3();
    return r;
}

int stubprog_work(int n)
{
    stub_0();
    int s = 0;
    for (int i = 0; i < n; i++)
        s += leaf(i);
    stub_1();
    return s;
}

#ifndef STUBLIB
int main(int argc, char **argv)
{
    (void)argv;
    stub_4();
    int r = stubprog_work(argc * 1000) == 42;
    stub_5();
    return r;
}
#endif
