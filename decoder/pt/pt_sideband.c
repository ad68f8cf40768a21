/* Sideband of the PT front-end: perf records as the kernel wrote them (PT_SIDEBAND chunks)
 * become AUX pieces with their owners, task switches, forks and truncation breaks. Only
 * what attribution needs is kept, and pt_feed.c drops it once fed. */
#include <linux/perf_event.h>
#include <string.h>

#include "perf_sample.h"
#include "pt_front_int.h"

/* a TRUNCATED/PARTIAL piece: bytes after it are lost. Its bytes normally arrived before the
 * record (the kernel moves aux_head before it writes PERF_RECORD_AUX, and the recorder
 * drains the data ring first); if not, the break waits for them. */
static int truncated_piece(struct ptc_pt_front *f, struct stream *s, const struct auxrec *a)
{
    if (s->have_next && a->aux_off + a->size <= s->next_aux)
        return ptc_front_break(f, s, ptc_front_aux_to_pos(s, a->aux_off + a->size), 0);
    return VPUSH(s->dbreaks, *a);
}

static int add_fork(struct ptc_pt_front *f, const struct forkrec *k)
{
    if (VPUSH(f->forks, *k))
        return -1;
    size_t i = f->forks.n - 1; /* keep them sorted by time (they come nearly sorted) */
    while (i && f->forks.v[i - 1].time > k->time) {
        f->forks.v[i] = f->forks.v[i - 1];
        i--;
    }
    f->forks.v[i] = *k;
    return 0;
}

static int add_task(struct stream *s, const struct taskev *t)
{
    if (VPUSH(s->tasks, *t))
        return -1;
    size_t i = s->tasks.n - 1; /* sorted by time: owner_by_time searches them */
    while (i && s->tasks.v[i - 1].time > t->time) {
        s->tasks.v[i] = s->tasks.v[i - 1];
        i--;
    }
    s->tasks.v[i] = *t;
    return 0;
}

int ptc_front_sideband(struct ptc_pt_front *f, const struct ptc_pt_sideband *sb,
                       const uint8_t *p, size_t n)
{
    size_t tsz = ptc_perf_trailer_size(sb->sample_type);
    struct stream *s0 = ptc_front_stream(f, sb->cpu, 0, 0);
    if (!s0)
        return -PTC_E_NOMEM;
    s0->sb_bytes += n;
    size_t off = 0;
    while (off + sizeof(struct perf_event_header) <= n) {
        struct perf_event_header h;
        memcpy(&h, p + off, sizeof(h));
        if (h.size < sizeof(h) || off + h.size > n)
            return -PTC_E_CORRUPT;
        const uint8_t *r = p + off + sizeof(h);
        size_t body = h.size - sizeof(h);
        struct ptc_perf_sid sid;
        memset(&sid, 0, sizeof(sid));
        if (h.type != PERF_RECORD_SAMPLE && body >= tsz)
            ptc_perf_parse_trailer(r + body - tsz, sb->sample_type, &sid);
        if (sid.have_time && sid.time > f->sb_max)
            f->sb_max = sid.time;
        struct stream *s = s0;
        if (sid.have_cpu && sb->cpu != PTC_PT_CPU_THREAD && sid.cpu != sb->cpu) {
            s = ptc_front_stream(f, sid.cpu, 0, 0);
            if (!s)
                return -PTC_E_NOMEM;
        }
        size_t si = 0;
        while (f->streams.v[si] != s)
            si++;
        s0->sb_records++;
        int r_ = 0;
        switch (h.type) {
        case PERF_RECORD_AUX:
            if (body >= 24) {
                struct auxrec a = {.time = sid.time, .pid = sid.pid, .tid = sid.tid,
                                   .stream = si, .seq = f->aux_seq++};
                memcpy(&a.aux_off, r, 8);
                memcpy(&a.size, r + 8, 8);
                memcpy(&a.flags, r + 16, 8);
                s->has_records = 1;
                if (a.flags & (PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL))
                    r_ = truncated_piece(f, s, &a);
                if (!r_ && a.size)
                    r_ = VPUSH(f->pending, a);
            }
            break;
        case PERF_RECORD_FORK:
            if (body >= 24) {
                /* {pid, ppid, tid, ptid, time}: a new process when pid != ppid */
                struct forkrec k;
                uint32_t v[4];
                memcpy(v, r, 16);
                memcpy(&k.time, r + 16, 8);
                k.pid = v[0];
                k.ppid = v[1];
                k.ptid = v[3];
                k.done = 0;
                if (v[0] != v[1] && v[2] == v[0])
                    r_ = add_fork(f, &k);
            }
            break;
        case PERF_RECORD_ITRACE_START:
            if (body >= 8) {
                struct taskev t = {.time = sid.time, .in = 1};
                memcpy(&t.pid, r, 4);
                memcpy(&t.tid, r + 4, 4);
                r_ = add_task(s, &t);
            }
            break;
        case PERF_RECORD_SWITCH:
            if (sid.have_tid) {
                struct taskev t = {.time = sid.time, .pid = sid.pid, .tid = sid.tid,
                                   .in = !(h.misc & PERF_RECORD_MISC_SWITCH_OUT)};
                r_ = add_task(s, &t);
            }
            break;
        case PERF_RECORD_SWITCH_CPU_WIDE:
            if (body >= 8) {
                /* next_prev: on switch-out the next task, on switch-in the previous one;
                 * the sample_id names the task on the other side */
                struct taskev t = {.time = sid.time, .in = 1};
                if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
                    memcpy(&t.pid, r, 4);
                    memcpy(&t.tid, r + 4, 4);
                } else {
                    t.pid = sid.pid;
                    t.tid = sid.tid;
                }
                r_ = add_task(s, &t);
            }
            break;
        default:
            break;
        }
        if (r_)
            return r_ < -1 ? r_ : -PTC_E_NOMEM;
        off += h.size;
    }
    return 0;
}
