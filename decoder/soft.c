/* Soft front-end: PTC_CHUNK_SOFT_EVENTS chunks -> runs of stub hits straight onto the
 * shadow stack (soft_fast.c) and struct ptc_ev batches for everything else. */
#include <stdio.h>
#include <string.h>

#include "dec_fork.h"
#include "dec_soft.h"
#include "dec_stack.h"
#include "dec_tables.h"
#include "ptc_varint.h"

#define BATCH 512

static int soft_corrupt(struct ptc_session *s, const struct ptc_chunk *c, size_t at,
                        const char *what)
{
    return ptc_session_set_error(s, PTC_E_CORRUPT,
                                 "%s is corrupt: soft event chunk %llu at byte %llu (pid %u, "
                                 "tid %u, seq %u): %s at payload byte %zu",
                                 s->src_name, (unsigned long long)c->index,
                                 (unsigned long long)c->offset, c->h.pid, c->h.tid, c->h.seq,
                                 what, at);
}

static inline int get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
    const uint8_t *p = *pp;
    if (likely(p < end && *p < 0x80)) {
        *v = *p;
        *pp = p + 1;
        return 0;
    }
    return ptc_varint_get(pp, end, v);
}

/* Decodes the record at *pp that no fast path took (a stub id of 3 or more bytes, or a
 * control record) into ev's type, stub_id and count, and advances *pp past it (the time
 * delta of a timed record follows). Returns 0 or -PTC_E_CORRUPT. */
static int decode_record(struct ptc_session *s, const struct ptc_chunk *c, const uint8_t **pp,
                         const uint8_t *end, struct ptc_ev *ev)
{
    size_t at = (size_t)(*pp - c->payload);
    uint64_t v, op;
    if (get_varint(pp, end, &v))
        return soft_corrupt(s, c, at, "undecodable record");
    ev->stub_id = 0;
    ev->count = 0;
    if (v >= PTC_SOFT_ID_BASE) {
        if (v - PTC_SOFT_ID_BASE > UINT32_MAX)
            return soft_corrupt(s, c, at, "stub id out of range");
        ev->type = PTC_EV_HIT;
        ev->stub_id = (uint32_t)(v - PTC_SOFT_ID_BASE);
    } else if (v == PTC_SOFT_LOSS || v == PTC_SOFT_FORK) {
        if (get_varint(pp, end, &op))
            return soft_corrupt(s, c, at, "undecodable operand");
        ev->type = v == PTC_SOFT_LOSS ? PTC_EV_GAP : PTC_EV_FORK;
        ev->count = op;
    } else {
        return soft_corrupt(s, c, at, "unknown control record");
    }
    return 0;
}

int ptc_soft_chunk(struct ptc_session *s, const struct ptc_chunk *c)
{
    struct ptc_soft_events h;
    if (c->h.tid == 0)
        return soft_corrupt(s, c, 0, "thread id 0");
    if (c->h.payload_size < sizeof(h))
        return soft_corrupt(s, c, c->h.payload_size, "payload shorter than its header");
    memcpy(&h, c->payload, sizeof(h));
    struct thread *t = ptc_thread_get(s, c->h.pid, c->h.tid);
    if (!t)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    const uint8_t *const base = c->payload;
    const uint8_t *p = base + sizeof(h), *end = base + c->h.payload_size;
    struct ptc_ev batch[BATCH];
    size_t n = 0;
    uint64_t records = 0;
    int e;
    if (!(h.flags & PTC_SOFT_F_TIMED)) {
        uint64_t none = 0;
        while (p < end) {
            if (n == 0 && ptc_thread_ready(t)) { /* fused fast path, no staging */
                if ((e = ptc_thread_soft_fast(s, t, &p, end, 0, &none, &records)))
                    return e;
                if (p >= end)
                    break;
            }
            /* staged path: a run of one-byte stub hits */
            while (likely(p < end) && likely(*p < 0x80) && likely(*p >= PTC_SOFT_ID_BASE) &&
                   n < BATCH) {
                struct ptc_ev *ev = &batch[n++];
                ev->type = PTC_EV_HIT;
                ev->has_time = 0;
                ev->size = 1;
                ev->stub_id = (uint32_t)(*p++ - PTC_SOFT_ID_BASE);
                ev->tsc = 0;
                ev->count = 0;
                records++;
            }
            if (n == BATCH) {
                if ((e = ptc_thread_feed(s, t, batch, n)))
                    return e;
                n = 0;
                continue;
            }
            if (p >= end)
                break;
            struct ptc_ev *ev = &batch[n];
            memset(ev, 0, sizeof(*ev));
            const uint8_t *rec = p;
            if ((e = decode_record(s, c, &p, end, ev)))
                return e;
            ev->size = (uint16_t)(p - rec);
            n++;
            records++;
            if (ptc_thread_ready(t)) { /* keep order: feed before the fast path resumes */
                if ((e = ptc_thread_feed(s, t, batch, n)))
                    return e;
                n = 0;
            }
        }
    } else {
        uint64_t tsc = h.start_tsc;
        while (p < end) {
            if (n == 0 && ptc_thread_ready(t)) { /* fused fast path, no staging */
                if ((e = ptc_thread_soft_fast(s, t, &p, end, 1, &tsc, &records)))
                    return e;
                if (p >= end)
                    break;
            }
            const uint8_t *rec = p;
            struct ptc_ev *ev = &batch[n];
            if (likely(end - p >= 2 && p[0] < 0x80 && p[0] >= PTC_SOFT_ID_BASE && p[1] < 0x80)) {
                ev->type = PTC_EV_HIT;
                ev->stub_id = (uint32_t)(p[0] - PTC_SOFT_ID_BASE);
                tsc += (uint64_t)ptc_unzigzag(p[1]);
                p += 2;
                ev->count = 0;
            } else {
                uint64_t d;
                if ((e = decode_record(s, c, &p, end, ev)))
                    return e;
                if (get_varint(&p, end, &d))
                    return soft_corrupt(s, c, (size_t)(rec - base), "undecodable time delta");
                tsc += (uint64_t)ptc_unzigzag(d);
            }
            ev->has_time = 1;
            ev->size = (uint16_t)(p - rec < 65535 ? p - rec : 65535);
            ev->tsc = tsc;
            records++;
            if (++n == BATCH || ptc_thread_ready(t)) {
                if ((e = ptc_thread_feed(s, t, batch, n)))
                    return e;
                n = 0;
            }
        }
    }
    if (n && (e = ptc_thread_feed(s, t, batch, n)))
        return e;
    if (records != h.num_records) {
        char what[96];
        snprintf(what, sizeof(what), "%llu records where the header says %u",
                 (unsigned long long)records, h.num_records);
        return soft_corrupt(s, c, c->h.payload_size, what);
    }
    return 0;
}
