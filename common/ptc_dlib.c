/* Loading a library when first needed (ptc_dlib.h). */
#define _GNU_SOURCE
#include "ptc_dlib.h"

#include <dlfcn.h>
#include <stdio.h>

int ptc_dlib_open(const char *soname, const char *package, const char *what,
                  const char *const *names, void **fns, size_t n, char *err, size_t errn)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(err, errn, "%s cannot be loaded (%s): install Debian's %s package", what,
                 e ? e : soname, package);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        fns[i] = dlsym(h, names[i]);
        if (!fns[i]) {
            snprintf(err, errn, "%s has no %s: it is not the library ptcall was built with; "
                                "install Debian's %s package", soname, names[i], package);
            return -1;
        }
    }
    return 0;
}
