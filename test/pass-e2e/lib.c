/* pass-e2e shared library */
__attribute__((noinline)) static int lib_inner(int x) { return x * 7; }
__attribute__((noinline)) int lib_entry(int x) { return lib_inner(x) + 1; }
