/* Loading libpq at the first PostgreSQL database (db_pg_lib.h says why). The loaded functions
 * are kept for the process's life, as the dynamic linker keeps what it loads at start. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define DB_PG_LIB_LOADER
#include "db_pg_lib.h"
#include "ptc_dlib.h"

#ifndef PTCALL_LIBPQ_SONAME
#define PTCALL_LIBPQ_SONAME "libpq.so.5"
#endif
#ifndef PTCALL_LIBPQ_PACKAGE
#define PTCALL_LIBPQ_PACKAGE "libpq5"
#endif

#define DB_PG_NAME(f) #f,
static const char *const names[] = {DB_PG_FUNCS(DB_PG_NAME)};
#undef DB_PG_NAME
#define NFUNCS (sizeof(names) / sizeof(names[0]))

static struct db_pg_lib lib;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void)
{
    void *fns[NFUNCS];
    if (ptc_dlib_open(PTCALL_LIBPQ_SONAME, PTCALL_LIBPQ_PACKAGE, "PostgreSQL's client library",
                      names, fns, NFUNCS, load_error, sizeof(load_error)) < 0)
        return;
    size_t i = 0; /* POSIX: a dlsym result converts to the function's pointer type */
#define DB_PG_SET(f) memcpy(&lib.f, &fns[i++], sizeof(lib.f));
    DB_PG_FUNCS(DB_PG_SET)
#undef DB_PG_SET
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
