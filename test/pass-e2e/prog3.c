/* pass-e2e: a third unit whose ptcall_stubs section is byte-identical to prog2.c's
 * (one function: one entry and one exit stub), so that identical code folding
 * (lld --icf=all) would merge them if it were allowed to. */
__attribute__((noinline)) int third_unit(int x)
{
    return x * 5 + 1;
}
