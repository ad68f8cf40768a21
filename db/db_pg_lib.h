/* libpq, loaded when a PostgreSQL database is first opened (db_pg_lib.c): a command that never
 * opens one does not load it, nor the libraries it needs (Kerberos, LDAP, OpenSSL), which cost
 * every command 8 ms of its start on the development VM. db_pg.c's calls keep libpq's names:
 * each is a macro for the loaded function. Include this instead of <libpq-fe.h>. */
#ifndef PTCALL_DB_PG_LIB_H
#define PTCALL_DB_PG_LIB_H

#include <libpq-fe.h>
#include <stddef.h>

#define DB_PG_FUNCS(X)                                                                             \
    X(PQclear) X(PQresultStatus) X(PQgetvalue) X(PQerrorMessage) X(PQstatus)                     \
    X(PQsetNoticeProcessor) X(PQresultErrorMessage) X(PQresultErrorField) X(PQprepare)           \
    X(PQntuples) X(PQnfields) X(PQgetisnull) X(PQftype) X(PQfinish) X(PQexecPrepared)            \
    X(PQexecParams) X(PQexec) X(PQconnectdb)

struct db_pg_lib {
#define DB_PG_FIELD(f) __typeof__(f) *f;
    DB_PG_FUNCS(DB_PG_FIELD)
#undef DB_PG_FIELD
};

/* Loads libpq once (any thread). 0, or -1 with a line in err that says what to install. */
int db_pg_lib_load(char *err, size_t n);
/* The loaded functions: only after db_pg_lib_load returned 0. */
const struct db_pg_lib *db_pg_lib(void);

#ifndef DB_PG_LIB_LOADER /* db_pg_lib.c names the fields */
#define PQclear (db_pg_lib()->PQclear)
#define PQresultStatus (db_pg_lib()->PQresultStatus)
#define PQgetvalue (db_pg_lib()->PQgetvalue)
#define PQerrorMessage (db_pg_lib()->PQerrorMessage)
#define PQstatus (db_pg_lib()->PQstatus)
#define PQsetNoticeProcessor (db_pg_lib()->PQsetNoticeProcessor)
#define PQresultErrorMessage (db_pg_lib()->PQresultErrorMessage)
#define PQresultErrorField (db_pg_lib()->PQresultErrorField)
#define PQprepare (db_pg_lib()->PQprepare)
#define PQntuples (db_pg_lib()->PQntuples)
#define PQnfields (db_pg_lib()->PQnfields)
#define PQgetisnull (db_pg_lib()->PQgetisnull)
#define PQftype (db_pg_lib()->PQftype)
#define PQfinish (db_pg_lib()->PQfinish)
#define PQexecPrepared (db_pg_lib()->PQexecPrepared)
#define PQexecParams (db_pg_lib()->PQexecParams)
#define PQexec (db_pg_lib()->PQexec)
#define PQconnectdb (db_pg_lib()->PQconnectdb)
#endif

#endif
