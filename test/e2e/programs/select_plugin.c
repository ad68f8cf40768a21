/* Loaded with dlopen by select_main.c: aplug_entry -> bplug_helper -> aplug_leaf. */
#include "e2e.h"
static volatile int sink;
NOINLINE static void aplug_leaf(int x) { sink += x; }
NOINLINE static void bplug_helper(int x)
{
    aplug_leaf(x);
    aplug_leaf(-x);
}
int aplug_entry(int n)
{
    for (int i = 0; i < n; i++)
        bplug_helper(i);
    return sink;
}
