/* Built as a shared library with ptcall and loaded with dlopen by dlopen_main.c. */
#include "e2e.h"
static volatile int sink;
NOINLINE static void plugin_helper(int x) { sink += x; }
int plugin_entry(int n)
{
    for (int i = 0; i < n; i++)
        plugin_helper(i);
    return sink;
}
