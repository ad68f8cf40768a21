/* fib(5) calls fib 15 times; is_even/is_odd recurse into each other. */
#include "e2e.h"
static volatile int sink;
NOINLINE int fib(int n) { return n < 2 ? n : NOTAIL(fib(n - 1) + fib(n - 2)); }
NOINLINE int is_odd(int n);
NOINLINE int is_even(int n) { return n == 0 ? 1 : NOTAIL(is_odd(n - 1)); }
NOINLINE int is_odd(int n) { return n == 0 ? 0 : NOTAIL(is_even(n - 1)); }
int main(void)
{
    sink = fib(5);
    sink = is_even(3);
    return 0;
}
