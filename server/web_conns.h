/* The HTTP server's guard against clients that hold connections without asking anything
 * (slow or idle clients: docs/web.md, *Safety*). All of them come from 127.0.0.1, so no
 * per-address limit can tell them apart; instead every connection has deadlines that its
 * bytes do not renew, and a new connection past a soft limit evicts the oldest one that has
 * no request in progress, so that a client that asks gets its answer. Evicting is a
 * shutdown(2) of the socket: its own thread then sees the end and closes it. */
#ifndef PTCALL_WEB_CONNS_H
#define PTCALL_WEB_CONNS_H

struct web_conns_cfg {
    unsigned soft_limit;  /* connections kept before the oldest waiting one is evicted */
    unsigned idle_ms;     /* a connection without a request line by then is closed */
    unsigned header_ms;   /* one whose request header is not whole by then is closed */
    unsigned send_ms;     /* one whose answer is not sent by then is closed */
};

struct web_conns;
struct web_conn;

/* Starts the guard (a thread that closes connections past their deadlines). NULL when out of
 * memory or no thread can be started. */
struct web_conns *web_conns_new(const struct web_conns_cfg *cfg);
void web_conns_free(struct web_conns *g);

/* A connection on socket fd was accepted: waiting for a request from now on. At the soft
 * limit the oldest connection without a request in progress is evicted first. NULL when out
 * of memory (the connection is then not guarded). */
struct web_conn *web_conns_opened(struct web_conns *g, int fd);
/* Its request line arrived (the idle deadline no longer applies). */
void web_conns_request_line(struct web_conns *g, struct web_conn *c);
/* Its request header is whole: the request is being answered (never evicted meanwhile). */
void web_conns_handling(struct web_conns *g, struct web_conn *c);
/* Its answer is queued: being sent (evicted after send_ms, or before waiting connections'
 * turn ends when none are left). */
void web_conns_sending(struct web_conns *g, struct web_conn *c);
/* Its request is done: waiting for the next one (a kept-alive connection), deadlines anew. */
void web_conns_request_done(struct web_conns *g, struct web_conn *c);
/* It is closed (by either side): forgets it. */
void web_conns_closed(struct web_conns *g, struct web_conn *c);

/* For tests and messages: connections guarded now, and evicted or timed out so far. */
void web_conns_counts(struct web_conns *g, unsigned *open, unsigned long *evicted,
                      unsigned long *timed_out);

#endif
