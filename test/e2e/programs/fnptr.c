/* Calls through a table of function pointers: each op once, apply() three times. */
#include "e2e.h"
static volatile int sink;
NOINLINE int add(int a, int b) { return a + b; }
NOINLINE int sub(int a, int b) { return a - b; }
NOINLINE int mul(int a, int b) { return a * b; }
typedef int (*op_fn)(int, int);
static op_fn ops[] = {add, sub, mul};
NOINLINE int apply(op_fn f, int a, int b) { return NOTAIL(f(a, b)); }
int main(void)
{
    for (int i = 0; i < 3; i++)
        sink = apply(ops[i], 7, 3);
    return 0;
}
