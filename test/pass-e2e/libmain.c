int lib_entry(int x);
int main(void) { return lib_entry(3) == 22 ? 0 : 1; }
