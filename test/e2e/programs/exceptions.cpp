// thrower() throws through middle() (no handler, no cleanup) into catcher(), which catches.
// Then after_catch() runs inside catcher, so the stack must be repaired: depth correct.
#include "e2e.h"
static volatile int sink;
NOINLINE void thrower(int x) { if (x > 0) throw x; sink = x; }
NOINLINE void middle(int x) { thrower(x); sink += 1; }
NOINLINE void after_catch() { sink += 2; }
NOINLINE int catcher(int x)
{
    try {
        middle(x);
    } catch (int v) {
        after_catch();
        return v;
    }
    return 0;
}
int main()
{
    sink = catcher(1);
    sink = catcher(0);
    BARRIER();
    return 0;
}
