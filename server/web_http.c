/* The HTTP server (web_http.h). libmicrohttpd: Debian's libmicrohttpd-dev, a small, well-kept
 * embedded server (GNU), with a thread per connection so a slow answer (the first ranking
 * over a thousand runs) does not hold up other clients. */
#include "web_http.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_conn.h"
#include "db_schema.h"
#include "web_cache.h"
#include "web_conns.h"
#include "web_mhd.h"
#include "web_page.h"
#include "web_static.h"

#define POOL_MAX 32

struct server {
    const struct web_server_cfg *cfg;
    struct web_ctx ctx;
    struct web_static st;
    pthread_mutex_t mu;
    struct db *pool[POOL_MAX]; /* idle connections */
    int npool;
    char ctx_where_buf[512];
    struct web_conns *guard;
};

/* The connections MHD keeps at most (it refuses more at once); the guard keeps fewer
 * (guard_cfg.soft_limit), evicting, so that this one is not reached by clients that do not
 * ask. */
#define HARD_LIMIT 512u
/* The guard's deadlines (web_conns.h), which bytes do not renew (Apache's mod_reqtimeout
 * does the same): a local client sends its request line and header at once, and a browser
 * that keeps a connection alive opens another when it finds it closed. */
static const struct web_conns_cfg guard_cfg = {
    .soft_limit = 192, .idle_ms = 5000, .header_ms = 10000, .send_ms = 60000};
/* MHD's own timeout, renewed by every byte: what is left to it is a request being answered
 * (a long ranking) and an answer read slowly */
#define IDLE_TIMEOUT_S 30u

static struct web_conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? web_conns_opened(s->guard, ci->connect_fd) : NULL;
    } else {
        web_conns_closed(s->guard, *socket_context);
        *socket_context = NULL;
    }
}

/* What on_uri found in the request line as it came (MHD hands the access handler a path
 * already unescaped, where a %00 would end it early: /api/v1/runs/1%00/flame.svg would be
 * answered as /api/v1/runs/1). It becomes the access handler's *con_cls at its first call. */
static char uri_plain, uri_nul;

/* The request line arrived (MHD calls this before it reads the header). */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct server *s = cls;
    web_conns_request_line(s->guard, conn_of(conn));
    const char *end = uri + strcspn(uri, "?");
    for (const char *p = uri; p + 2 < end; p++)
        if (p[0] == '%' && p[1] == '0' && p[2] == '0')
            return &uri_nul;
    return &uri_plain;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)con_cls;
    (void)toe;
    struct server *s = cls;
    web_conns_request_done(s->guard, conn_of(conn));
}

/* A connection to the database: an idle one, else a new one (each thread uses its own
 * while it answers: neither SQLite's nor libpq's connections are shared between threads).
 * NULL with *code (-DB_E_*) and err set when it cannot be opened. */
static struct db *db_get(struct server *s, int *code, char *err, size_t n)
{
    pthread_mutex_lock(&s->mu);
    struct db *d = s->npool ? s->pool[--s->npool] : NULL;
    pthread_mutex_unlock(&s->mu);
    if (d)
        return d;
    if (!(d = calloc(1, sizeof(*d)))) {
        *code = -DB_E_NOMEM;
        snprintf(err, n, "out of memory");
        return NULL;
    }
    int e = db_open(d, s->cfg->db_url, DB_READ);
    if (e) {
        *code = e;
        snprintf(err, n, "%s", d->err);
        free(d);
        return NULL;
    }
    return d;
}

/* Back to the pool; a connection that never sees later changes (d->frozen: another user's
 * SQLite file read while no writer had it open) is closed, so the next answer opens a
 * new one and sees the runs added meanwhile. */
static void db_put(struct server *s, struct db *d)
{
    pthread_mutex_lock(&s->mu);
    if (s->npool < POOL_MAX && !d->frozen) {
        s->pool[s->npool++] = d;
        d = NULL;
    }
    pthread_mutex_unlock(&s->mu);
    if (d) {
        db_close(d);
        free(d);
    }
}

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                              const char *value)
{
    (void)kind;
    struct web_args *a = cls;
    if (a->n < WEB_MAX_ARGS) {
        a->k[a->n] = key;
        a->v[a->n] = value ? value : "";
        a->n++;
    } else {
        a->dropped++;
    }
    return MHD_YES;
}

static enum MHD_Result reply(struct MHD_Connection *conn, int status, const char *type,
                            char *body, size_t len, int cache)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", type);
    MHD_add_response_header(resp, "Content-Security-Policy", WEB_CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "Cache-Control", cache ? "max-age=3600" : "no-store");
    enum MHD_Result rc = MHD_queue_response(conn, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result send_copy(struct MHD_Connection *conn, int status, const char *type,
                                 const char *body, size_t len, int cache)
{
    char *p = malloc(len + 1);
    if (!p)
        return MHD_NO;
    memcpy(p, body, len);
    return reply(conn, status, type, p, len, cache);
}

/* The answer is queued (rc says whether): the request's connection is being sent. */
static enum MHD_Result sending(struct server *s, struct MHD_Connection *conn, enum MHD_Result rc)
{
    web_conns_sending(s->guard, conn_of(conn));
    return rc;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *conn, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **con_cls)
{
    (void)version;
    (void)upload;
    struct server *s = cls;
    /* the first call (*con_cls is on_uri's, later s): the header is whole, a request in
     * progress, which the guard keeps */
    int first = *con_cls != s;
    if (first)
        web_conns_handling(s->guard, conn_of(conn));
    if (first && *con_cls == &uri_nul) {
        struct web_resp r = {0};
        if (web_error(&r, 400, "the path holds a NUL byte (%%00)"))
            return MHD_NO;
        return sending(s, conn, reply(conn, 400, r.type, r.body, r.len, 0));
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
        /* answered at the first call, before any body is read (MHD then drops the body) */
        struct web_resp r = {0};
        if (web_error(&r, 405, "this server is read-only: GET only"))
            return MHD_NO;
        return sending(s, conn, reply(conn, 405, r.type, r.body, r.len, 0));
    }
    if (first) { /* the first call only sees the headers */
        /* a GET has no body: one announced would be read slowly while the request holds
         * its connection as being answered */
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
        if ((cl && strcmp(cl, "0")) ||
            MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Transfer-Encoding")) {
            struct web_resp r = {0};
            if (web_error(&r, 400, "a GET request has no body"))
                return MHD_NO;
            return sending(s, conn, reply(conn, 400, r.type, r.body, r.len, 0));
        }
        *con_cls = s;
        return MHD_YES;
    }
    if (*upload_size)
        *upload_size = 0;
    if (!strncmp(url, "/static/", 8)) {
        for (int i = 0; i < WS_COUNT; i++)
            if (!strcmp(url + 8, s->st.name[i]))
                return sending(s, conn, send_copy(conn, 200, s->st.type[i], s->st.data[i],
                                                  s->st.len[i], 1));
    }
    struct web_args a = {0};
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, &a);
    if (a.dropped) {
        struct web_resp r = {0};
        if (web_error(&r, 400, "%d query arguments: this server takes at most %d",
                      a.n + a.dropped, WEB_MAX_ARGS))
            return MHD_NO;
        return sending(s, conn, reply(conn, 400, r.type, r.body, r.len, 0));
    }
    char err[1200];
    int code = 0;
    struct db *d = db_get(s, &code, err, sizeof(err));
    struct web_resp r = {0};
    int rc;
    if (!d) {
        rc = web_error(&r, 503, "the database cannot be opened: %s", err);
    } else if (!strncmp(url, "/api/", 5)) {
        rc = web_api(&s->ctx, d, url, &a, &r);
    } else {
        enum web_page kind;
        rc = web_page_of(d, url, &a, &kind, &r);
        if (rc == 0) {
            struct sbuf b;
            sb_init(&b);
            web_page_served(&b, kind);
            r.status = 200;
            r.type = "text/html; charset=utf-8";
            r.body = sb_take(&b, &r.len);
            rc = r.body ? 0 : -1;
        } else if (rc == 1 && r.body) {
            /* a page's error as a page: the message as text, escaped */
            struct sbuf b;
            sb_init(&b);
            sb_puts(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                        "<title>ptcall: not found</title>"
                        "<link rel=\"stylesheet\" href=\"/static/app.css\"></head><body>"
                        "<header><span class=\"brand\">ptcall</span><nav><a href=\"/runs\">Runs"
                        "</a><a href=\"/hot\">Hot functions</a><a href=\"/campaigns\">Campaigns</a></nav></header><main id=\"main\"><p "
                        "class=\"error\" id=\"error\">");
            sb_html(&b, r.message);
            sb_puts(&b, "</p></main></body></html>\n");
            free(r.body);
            r.type = "text/html; charset=utf-8";
            r.body = sb_take(&b, &r.len);
            rc = r.body ? 0 : -1;
        }
    }
    if (d)
        db_put(s, d);
    if (rc < 0 || !r.body) {
        free(r.body);
        return MHD_NO;
    }
    return sending(s, conn, reply(conn, r.status, r.type, r.body, r.len, 0));
}

int web_serve(const struct web_server_cfg *cfg, int *db_code, char *err, size_t n)
{
    *db_code = 0;
    struct server s;
    memset(&s, 0, sizeof(s));
    s.cfg = cfg;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons(cfg->port);
    if (inet_pton(AF_INET, cfg->addr, &sa.sin_addr) != 1) {
        snprintf(err, n, "'%s' is not an IPv4 address", cfg->addr);
        return -1;
    }
    if (web_mhd_load(err, n) < 0)
        return -1;
    pthread_mutex_init(&s.mu, NULL);
    if (web_static_load(cfg->data_dir, &s.st, err, n))
        return -1;
    /* the database must open now: a wrong --db is said at once, not on the first page */
    struct db *d = db_get(&s, db_code, err, n);
    if (!d) {
        web_static_free(&s.st);
        return -1;
    }
    snprintf(s.ctx_where_buf, sizeof(s.ctx_where_buf), "%s", d->where);
    db_put(&s, d);
    s.ctx.where = s.ctx_where_buf;
    s.ctx.flame = cfg->flame;
    s.ctx.threads = cfg->threads;
    s.ctx.flame_json = cfg->flame_json;
    s.ctx.timeline = cfg->timeline;
    s.ctx.timeline_ctx = cfg->timeline_ctx;
    s.ctx.trace_same = cfg->trace_same;
    s.ctx.cache = web_cache_new(WEB_CACHE_ENTRIES, WEB_CACHE_BYTES);
    /* SIGINT/SIGTERM are waited for below, in this thread only */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    s.guard = web_conns_new(&guard_cfg);
    /* poll, not select: descriptors above FD_SETSIZE (1024) may come with many connections */
    struct MHD_Daemon *md = !s.guard ? NULL : MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG,
        cfg->port, NULL, NULL, answer, &s, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_CONNECTION_LIMIT, HARD_LIMIT, MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT_S,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, &s, MHD_OPTION_URI_LOG_CALLBACK, on_uri,
        &s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, &s, MHD_OPTION_END);
    int rc = 0;
    if (!s.guard) {
        snprintf(err, n, "out of memory, or no thread can be started");
        rc = -1;
    } else if (!md) {
        snprintf(err, n, "cannot listen on %s:%u (is the port in use?)", cfg->addr,
                 (unsigned)cfg->port);
        rc = -1;
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(md, MHD_DAEMON_INFO_BIND_PORT);
        char url[128];
        snprintf(url, sizeof(url), "http://%s:%u/", cfg->addr,
                 info ? (unsigned)info->port : (unsigned)cfg->port);
        if (cfg->ready)
            cfg->ready(url, s.ctx.where);
        /* the hot-function page over every run is the first most people open: its answer is
         * computed now, while nobody waits, and then comes from the cache */
        int ignored;
        struct db *wd = db_get(&s, &ignored, err, n);
        if (wd) {
            struct web_args none = {0};
            struct web_resp r = {0};
            web_api(&s.ctx, wd, "/api/v1/hot", &none, &r);
            web_resp_free(&r);
            db_put(&s, wd);
        }
        int sig;
        sigwait(&set, &sig);
        MHD_stop_daemon(md);
    }
    web_conns_free(s.guard);
    for (int i = 0; i < s.npool; i++) {
        db_close(s.pool[i]);
        free(s.pool[i]);
    }
    web_cache_free(s.ctx.cache);
    web_static_free(&s.st);
    pthread_mutex_destroy(&s.mu);
    return rc;
}
