/* Loads libplugin.so (path in argv[1]) and calls plugin_entry(3): plugin_helper runs 3 times. */
#include <dlfcn.h>
#include <stdio.h>
#include "e2e.h"
NOINLINE int load_and_call(const char *path)
{
    void *h = dlopen(path, RTLD_NOW);
    if (!h) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    int (*entry)(int) = (int (*)(int))dlsym(h, "plugin_entry");
    if (!entry)
        return 1;
    entry(3);
    dlclose(h);
    return 0;
}
int main(int argc, char **argv) { return argc < 2 ? 2 : NOTAIL(load_and_call(argv[1])); }
