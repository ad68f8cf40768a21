/* `ptcall serve`'s HTTP server (libmicrohttpd): read-only GETs of the pages, the JSON API
 * and the static files, one thread per connection, database connections pooled. */
#ifndef PTCALL_WEB_HTTP_H
#define PTCALL_WEB_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "web.h"

struct web_server_cfg {
    const char *db_url;
    const char *addr;         /* an IPv4 address to bind ("127.0.0.1") */
    uint16_t port;            /* 0: any free port */
    const char *data_dir;     /* the static files (web_static.h) */
    web_flame_fn flame;
    web_threads_fn threads;   /* the run page's threads (NULL: none) */
    web_flame_json_fn flame_json;
    web_timeline_fn timeline; /* NULL: no timelines */
    void *timeline_ctx;       /* its first argument */
    web_trace_same_fn trace_same; /* NULL: flame graphs and threads are never cached */
    /* called once listening, with the URL (tests and scripts read it from stdout) */
    void (*ready)(const char *url, const char *where);
};
/* Serves until SIGINT or SIGTERM. 0 after a clean stop, or -1 with err set (the database
 * cannot be opened: *db_code is its -DB_E_* then, else 0; the address cannot be bound, a
 * static file is missing). */
int web_serve(const struct web_server_cfg *cfg, int *db_code, char *err, size_t n);

#endif
