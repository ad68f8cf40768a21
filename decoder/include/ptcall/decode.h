/* libptcall-decode: the interface between trace front-ends (soft event chunks, Intel PT
 * streams) and the analyses. Every front-end turns its input into per-thread sequences of
 * struct ptc_ev and feeds them to a session; the session keeps per-process module tables and
 * per-thread shadow stacks and drives the analyses. Memory grows with processes, threads,
 * stack depth and functions, never with trace length. */
#ifndef PTCALL_DECODE_H
#define PTCALL_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ptcall/trace_format.h"

enum ptc_ev_type {
    PTC_EV_HIT = 1,  /* a stub ran: stub_id (per process), tsc if has_time */
    PTC_EV_GAP = 2,  /* events are missing here: count hits if known (0 = unknown);
                        the shadow stack is marked broken rather than guessed */
    PTC_EV_FORK = 3, /* this thread forked: count = child pid; the child's first thread
                        starts from a copy of this thread's shadow stack */
};

struct ptc_ev {
    uint8_t type;     /* enum ptc_ev_type */
    uint8_t has_time; /* tsc is valid */
    uint16_t reserved;
    uint32_t stub_id;
    uint64_t tsc;
    uint64_t count;
};

struct ptc_session;

/* Error codes returned (negated) by decoder functions; ptc_strerror() describes them. */
enum ptc_err {
    PTC_OK = 0,
    PTC_E_IO = 1,        /* read error (errno kept in the session) */
    PTC_E_FORMAT = 2,    /* not a ptcall trace file */
    PTC_E_VERSION = 3,   /* a major version this decoder does not read */
    PTC_E_TRUNCATED = 4, /* the file ends inside a chunk */
    PTC_E_CORRUPT = 5,   /* bad CRC, bad sizes, undecodable records */
    PTC_E_NOMEM = 6,
    PTC_E_NOMODULE = 7,  /* the trace holds no instrumented module */
    PTC_E_BADSTUB = 8,   /* an event names a stub no module has */
    PTC_E_ARG = 9,
    PTC_E_UNSUPPORTED = 10,
};
const char *ptc_strerror(int err);

/* Module tables: the payload of a PTC_CHUNK_MODULE chunk (struct ptc_module and what
 * follows), for process pid. Returns 0 or -PTC_E_*. */
int ptc_session_add_module(struct ptc_session *s, uint32_t pid, const void *payload,
                           size_t size);

/* Maps a run-time instruction address inside some module's stub section of process pid to
 * its per-process stub id. Returns 0, or -PTC_E_BADSTUB when ip is not a stub. */
int ptc_session_lookup_stub(const struct ptc_session *s, uint32_t pid, uint64_t ip,
                            uint32_t *stub_id);

/* Feeds events of one thread, in that thread's order. Returns 0 or -PTC_E_*. */
int ptc_session_feed(struct ptc_session *s, uint32_t pid, uint32_t tid,
                     const struct ptc_ev *ev, size_t n);

/* Records a loss that is not attached to one event stream (struct ptc_loss semantics). */
int ptc_session_add_loss(struct ptc_session *s, uint32_t pid, const struct ptc_loss *loss,
                         const char *note);

#endif
