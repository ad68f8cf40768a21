/* Loading libpq at the first PostgreSQL database (db_pg_lib.h says why). The loaded functions
 * are kept for the process's life, as the dynamic linker keeps what it loads at start. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define DB_PG_LIB_LOADER
#include "db_pg_lib.h"

#ifndef PTCALL_LIBPQ_SONAME
#define PTCALL_LIBPQ_SONAME "libpq.so.5"
#endif
#ifndef PTCALL_LIBPQ_PACKAGE
#define PTCALL_LIBPQ_PACKAGE "libpq5"
#endif

static struct db_pg_lib lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *h = dlopen(PTCALL_LIBPQ_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(load_error, sizeof(load_error),
                 "PostgreSQL's client library cannot be loaded (%s): install Debian's %s package",
                 e ? e : PTCALL_LIBPQ_SONAME, PTCALL_LIBPQ_PACKAGE);
        return;
    }
#define DB_PG_LOAD(f)                                                                              \
    if (!load_error[0]) {                                                                          \
        *(void **)&lib.f = dlsym(h, #f);                                                           \
        if (!lib.f)                                                                                \
            snprintf(load_error, sizeof(load_error),                                               \
                     "%s has no %s: it is not the libpq ptcall was built with; install Debian's " \
                     "%s package",                                                                 \
                     PTCALL_LIBPQ_SONAME, #f, PTCALL_LIBPQ_PACKAGE);                               \
    }
    DB_PG_FUNCS(DB_PG_LOAD)
#undef DB_PG_LOAD
}

int db_pg_lib_load(char *err, size_t n)
{
    pthread_once(&once, load);
    if (!load_error[0])
        return 0;
    snprintf(err, n, "%s", load_error);
    return -1;
}

const struct db_pg_lib *db_pg_lib(void) { return &lib; }
