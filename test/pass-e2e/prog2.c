/* pass-e2e: a second translation unit, so that the program holds two map blobs (and
 * full LTO merges two instrumented modules). */
__attribute__((noinline)) int second_unit(int x)
{
    return x > 3 ? second_unit(x - 1) + 1 : x;
}
