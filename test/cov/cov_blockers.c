/* A target of test/cov/cov_test.py for the blockers list: two reached functions (p1, p2)
 * share an unreached callee (rare), which the list must show once, with both callers; p1
 * has another unreached callee of its own (rare2). No input of the test starts with 'r'. */
#include <unistd.h>

__attribute__((noinline)) static int rare(int x) { return x * 7 + 1; }
__attribute__((noinline)) static int rare2(int x) { return x * 5 - 2; }

__attribute__((noinline)) static int p1(const char *b, int n)
{
    if (b[0] == 'r')
        return rare(n) + rare2(n);
    return n;
}

__attribute__((noinline)) static int p2(const char *b, int n)
{
    if (b[0] == 'r')
        return rare(n + 1);
    return n + 1;
}

int main(void)
{
    char b[16] = {0};
    int n = (int)read(0, b, sizeof(b) - 1);
    return (p1(b, n) + p2(b, n)) > 1000;
}
