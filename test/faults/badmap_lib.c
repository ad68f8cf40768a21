/* libbadmap.so for runtime-bad-map (badmap_test.py): 1 call of lib_entry, n of lib_work. */
__attribute__((noinline)) int lib_work(int x) { return x * 3 + 1; }

int lib_entry(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += lib_work(i);
    return s;
}
