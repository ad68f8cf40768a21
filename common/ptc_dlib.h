/* A shared library loaded when a command first needs it, not at every command's start
 * (cmake/PtcallLoadedLib.cmake says which and why). */
#ifndef PTC_DLIB_H
#define PTC_DLIB_H

#include <stddef.h>

/* Opens `soname` and resolves its n functions `names` into `fns`. 0, or -1 with one line in
 * err naming `what` (the library's purpose, for the message) and the Debian `package` to
 * install. Nothing is kept: the caller keeps the functions (once per process). */
int ptc_dlib_open(const char *soname, const char *package, const char *what,
                  const char *const *names, void **fns, size_t n, char *err, size_t errn);

#endif
