/* A target of test/cov/hostile_test.py whose input 'g' leaves a process behind: its child
 * (the target's grandchild, seen from a fork server) goes on calling spin(), an instrumented
 * function, after the input's run ended, until it is killed. Its pid goes to $COV_PIDFILE.
 * Any other input reaches main only, so spin() in another input's set is a leftover's call
 * credited to the wrong input. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile unsigned long spun;
__attribute__((noinline)) static void spin(void) { spun++; }

int main(int argc, char **argv)
{
    char b[16] = {0};
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
    if (n > 0 && b[0] == 'g') {
        int p[2];
        if (pipe(p))
            return 2;
        pid_t pid = fork();
        if (pid == 0) {
            const char *pf = getenv("COV_PIDFILE");
            FILE *f = pf ? fopen(pf, "a") : NULL;
            if (f) {
                fprintf(f, "%d\n", (int)getpid());
                fclose(f);
            }
            spin();
            close(p[1]); /* started: the input may end */
            for (;;) {
                spin();
                usleep(100);
            }
        }
        close(p[1]);
        char c;
        (void)read(p[0], &c, 1); /* EOF once the grandchild runs */
    }
    return 0;
}
