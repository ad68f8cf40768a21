/* The target of test/cov/cov_test.py: its input (argv[1], or stdin) picks what runs, so each
 * input's function set is known: 'a' f_a, 'b' f_b, 'c' a crash (SIGSEGV), 'h' a hang, 'x'
 * exit status 3, anything else main only. Built with early placement: every function stays
 * in the map whatever the optimiser inlines. A build without ptcall (PLAIN) touches the file
 * named by $COV_RAN when it runs, so the test sees that a refused target never ran. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int f_a(int x) { return x + 1; }
static int f_b(int x) { return x * 2; }
static void crash(void) { *(volatile int *)0 = 1; }
static void hang(void) { for (;;) pause(); }
#ifdef VARIANT
/* another build of the target (the test's --binary check) */
int variant(void) { return VARIANT; }
#endif

int main(int argc, char **argv)
{
#ifdef PLAIN
    if (getenv("COV_RAN"))
        close(open(getenv("COV_RAN"), O_CREAT | O_WRONLY, 0600));
#endif
    char b[64] = {0};
    ssize_t n;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (!f)
            return 2;
        n = (ssize_t)fread(b, 1, sizeof(b) - 1, f);
        fclose(f);
    } else {
        n = read(0, b, sizeof(b) - 1);
    }
    int r = 0;
    if (n > 0 && b[0] == 'a')
        r = f_a((int)n);
    if (n > 0 && b[0] == 'b')
        r = f_b((int)n);
    if (n > 0 && b[0] == 'c')
        crash();
    if (n > 0 && b[0] == 'h')
        hang();
    if (n > 0 && b[0] == 'x')
        return 3;
    return r > 100;
}
