/* outer() returns inner()'s value: a tail call at -O1 and above. The exit stub goes before
 * the tail call, so with optimisation inner shows as outer's sibling; at -O0 as its child. */
#include "e2e.h"
static volatile int sink;
NOINLINE int inner(int x) { sink = x; return x + 1; }
NOINLINE int outer(int x) { return inner(x * 2); }
int main(void) { sink = outer(3); BARRIER(); return 0; }
