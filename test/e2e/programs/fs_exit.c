/* counts_test.py's target for the fork server's exit path (docs/cov.md, "Fork server protocol
 * v1"): argv[1] the input file, argv[2] a file main appends a line to through stdio and never
 * closes.
 *   "atexit"   main registers an exit handler (on_exit_handler, which calls bye): the child
 *              takes the whole exit path, the handler runs and is counted
 *   other      no exit handler: the child ends as main returns, the line must reach the file
 *              all the same (stdio is flushed); the destructor fini does not run there */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;

__attribute__((noinline)) void bye(void) { sink++; }
__attribute__((noinline)) void on_exit_handler(void) { bye(); }
__attribute__((noinline, destructor)) void fini(void) { sink--; }

int main(int argc, char **argv)
{
    char b[32] = "";
    if (argc < 3)
        return 2;
    FILE *in = fopen(argv[1], "r");
    if (!in)
        return 2;
    if (!fgets(b, sizeof(b), in))
        b[0] = 0;
    fclose(in);
    b[strcspn(b, "\n")] = 0;
    FILE *out = fopen(argv[2], "a");
    if (!out)
        return 2;
    fprintf(out, "ran %s\n", b); /* no fclose: flushing is the exit path's */
    if (!strcmp(b, "atexit") && atexit(on_exit_handler) != 0)
        return 3;
    return 0;
}
