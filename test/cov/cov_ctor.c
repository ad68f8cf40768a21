/* A target of test/cov/cov_test.py that crashes in a constructor, before main and before
 * the runtime's fork server starts: cov run must say so (it read "did not start a fork
 * server" and ran every input into the same crash). */
#include <stdio.h>

__attribute__((constructor)) static void boom(void)
{
    fputs("cov_ctor: about to crash in a constructor\n", stderr);
    *(volatile int *)0 = 1;
}

int main(void)
{
    return 0;
}
