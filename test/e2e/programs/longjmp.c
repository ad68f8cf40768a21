/* deep() longjmps over deeper()/deep() back into jumper(); then leaf() runs in jumper. */
#include <setjmp.h>
#include "e2e.h"
static jmp_buf env;
static volatile int sink;
NOINLINE void deeper(int x) { if (x) longjmp(env, x); sink = 1; }
NOINLINE void deep(int x) { deeper(x); sink = 2; }
NOINLINE void leaf(void) { sink += 3; }
NOINLINE int jumper(void)
{
    int r = setjmp(env);
    if (r == 0)
        deep(1);
    leaf();
    return r;
}
int main(void)
{
    sink = jumper();
    leaf();
    return 0;
}
