/* counts_test.py's target for the deferred fork server (`ptcall cov run --deferred`,
 * docs/cov.md): main initialises (setup, which appends "init" to argv[2]), then calls
 * ptcall_forkserver_start(); each input's child goes on from there and reads argv[1]:
 * "a" calls on_a, anything else on_b. With a deferred server setup runs once in all and
 * is counted in no input; without --deferred it runs (and counts) in every child.
 *   argv[3] "nostart": main never calls ptcall_forkserver_start() */
#include <stdio.h>
#include <string.h>

#include "ptcall/ptcall.h"

static volatile int sink;

__attribute__((noinline)) void setup(const char *log)
{
    FILE *f = fopen(log, "a");
    if (f) {
        fputs("init\n", f);
        fclose(f);
    }
    sink++;
}
__attribute__((noinline)) void on_a(void) { sink += 2; }
__attribute__((noinline)) void on_b(void) { sink += 3; }

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    setup(argv[2]);
    if (argc < 4 || strcmp(argv[3], "nostart"))
        ptcall_forkserver_start();
    char b[16] = "";
    FILE *in = fopen(argv[1], "r");
    if (!in)
        return 2;
    if (!fgets(b, sizeof(b), in))
        b[0] = 0;
    fclose(in);
    if (b[0] == 'a')
        on_a();
    else
        on_b();
    return 0;
}
