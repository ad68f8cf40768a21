/* Instrumented (by hand) shared library for the dlopen test. */
#include "rt_lib_stubs.h"
#define NOINLINE __attribute__((noinline))
static volatile long sink3;
NOINLINE void lib_helper(void)
{
    PTC_ENTER(lib_helper);
    sink3++;
    PTC_EXIT(lib_helper);
}
__attribute__((visibility("default"))) NOINLINE void lib_entry(long n)
{
    PTC_ENTER(lib_entry);
    for (long i = 0; i < n; i++)
        lib_helper();
    PTC_EXIT(lib_entry);
}
