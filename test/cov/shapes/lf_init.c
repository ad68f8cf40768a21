/* Linked into test/cov/shapes_test.py's libFuzzer-main harness only: libFuzzer's main calls
 * LLVMFuzzerInitialize once in its start-up, so each call appending a line to
 * $SHAPES_INIT_LOG counts how many times that start-up ran (once per fork server when the
 * fork is at the harness; once per input when it was before main). */
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *path = getenv("SHAPES_INIT_LOG");
    FILE *f = path ? fopen(path, "a") : NULL;
    if (f) {
        fputs("init\n", f);
        fclose(f);
    }
    return 0;
}
