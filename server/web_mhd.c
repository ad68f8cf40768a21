/* Loading libmicrohttpd when `ptcall serve` starts (web_mhd.h says why). The loaded functions
 * are kept for the process's life, as the dynamic linker keeps what it loads at start. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define WEB_MHD_LOADER
#include "web_mhd.h"

#ifndef PTCALL_LIBMHD_SONAME
#define PTCALL_LIBMHD_SONAME "libmicrohttpd.so.12"
#endif
#ifndef PTCALL_LIBMHD_PACKAGE
#define PTCALL_LIBMHD_PACKAGE "libmicrohttpd12"
#endif

static struct web_mhd lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen(PTCALL_LIBMHD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof(load_error),
                 "the HTTP server library cannot be loaded (%s): install Debian's %s package",
                 e ? e : PTCALL_LIBMHD_SONAME, PTCALL_LIBMHD_PACKAGE);
        return;
    }
#define WEB_MHD_LOAD(f)                                                                            \
    if (!load_error[0]) {                                                                          \
        *(void **)&lib.f = dlsym(h, #f);                                                           \
        if (!lib.f)                                                                                \
            snprintf(load_error, sizeof(load_error),                                               \
                     "%s has no %s: it is not the libmicrohttpd ptcall was built with; install "  \
                     "Debian's %s package",                                                        \
                     PTCALL_LIBMHD_SONAME, #f, PTCALL_LIBMHD_PACKAGE);                             \
    }
    WEB_MHD_FUNCS(WEB_MHD_LOAD)
#undef WEB_MHD_LOAD
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
