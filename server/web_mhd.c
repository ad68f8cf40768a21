/* Loading libmicrohttpd when `ptcall serve` starts (web_mhd.h says why). The loaded functions
 * are kept for the process's life, as the dynamic linker keeps what it loads at start. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define WEB_MHD_LOADER
#include "ptc_dlib.h"
#include "web_mhd.h"

#ifndef PTCALL_LIBMHD_SONAME
#define PTCALL_LIBMHD_SONAME "libmicrohttpd.so.12"
#endif
#ifndef PTCALL_LIBMHD_PACKAGE
#define PTCALL_LIBMHD_PACKAGE "libmicrohttpd12"
#endif

#define WEB_MHD_NAME(f) #f,
static const char *const names[] = {WEB_MHD_FUNCS(WEB_MHD_NAME)};
#undef WEB_MHD_NAME
#define NFUNCS (sizeof(names) / sizeof(names[0]))

static struct web_mhd lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *fns[NFUNCS];
    if (ptc_dlib_open(PTCALL_LIBMHD_SONAME, PTCALL_LIBMHD_PACKAGE, "the HTTP server library",
                      names, fns, NFUNCS, load_error, sizeof(load_error)) < 0)
        return;
    size_t i = 0; /* POSIX: a dlsym result converts to the function's pointer type */
#define WEB_MHD_SET(f) memcpy(&lib.f, &fns[i++], sizeof(lib.f));
    WEB_MHD_FUNCS(WEB_MHD_SET)
#undef WEB_MHD_SET
}

int web_mhd_load(char *err, size_t n)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    snprintf(err, n, "%s", load_error);
    return -1;
}

const struct web_mhd *web_mhd(void) { return &lib; }
