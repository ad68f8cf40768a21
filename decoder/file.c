/* The file driver: a trace file (or memory) chunk by chunk from the reader into the chunk
 * dispatcher, with the salvage policy (which errors end the input and which skip a chunk),
 * then the end of the input. */
#include <stdio.h>

#include "dec_chunk.h"
#include "dec_file.h"

int ptc_decode_reader(struct ptc_session *s, struct ptc_reader *r, int rc, unsigned flags,
                      const char *name)
{
    s->src_name = name;
    if (rc) {
        ptc_session_set_error(s, -rc, "%s", ptc_reader_errmsg(r));
        ptc_reader_close(r);
        /* the input ends here too: chunk handlers (the Intel PT front-end) free what they
         * hold only when the session finishes */
        char msg[sizeof(s->msg)];
        snprintf(msg, sizeof(msg), "%s", s->msg);
        ptc_session_finish(s);
        snprintf(s->msg, sizeof(s->msg), "%s", msg);
        return rc;
    }
    const struct ptc_file_header *fh = ptc_reader_header(r);
    s->backend = fh->backend;
    s->file_flags = fh->flags;
    s->created_ns = fh->created_ns;
    int first_err = 0;
    char first_msg[sizeof(s->msg)] = "";
    struct ptc_chunk c;
    for (;;) {
        rc = ptc_reader_next(r, &c);
        if (rc == 0)
            break;
        if (rc == 1) {
            int e = ptc_session_chunk(s, &c);
            if (!e)
                continue;
            if (!(flags & PTC_DECODE_SALVAGE) || e == -PTC_E_NOMEM) {
                ptc_reader_close(r);
                return e;
            }
            if (!first_err) {
                first_err = e;
                snprintf(first_msg, sizeof(first_msg), "%s", s->msg);
            }
            s->tot.skipped_chunks++;
            continue;
        }
        /* reader error */
        if (!first_err) {
            first_err = rc;
            snprintf(first_msg, sizeof(first_msg), "%s", ptc_reader_errmsg(r));
        }
        if (!(flags & PTC_DECODE_SALVAGE)) {
            ptc_session_set_error(s, -rc, "%s", ptc_reader_errmsg(r));
            ptc_reader_close(r);
            return rc;
        }
        /* a damaged or cut chunk: go on at the next whole chunk, wherever the damage left it
         * (a chunk cut by a full disk used to hide every chunk written after it) */
        uint64_t skipped;
        if (ptc_reader_resync(r, &skipped) > 0) {
            s->tot.skipped_chunks++;
            continue;
        }
        if (ptc_reader_can_continue(r)) {
            s->tot.skipped_chunks++;
            continue;
        }
        break;
    }
    ptc_reader_close(r);
    int e = ptc_session_finish(s);
    if (first_err) {
        ptc_session_set_error(s, -first_err, "%s", first_msg);
        return first_err;
    }
    return e;
}

int ptc_decode_file(struct ptc_session *s, const char *path, unsigned flags)
{
    struct ptc_reader *r;
    if (!s || !path)
        return -PTC_E_ARG;
    int rc = ptc_reader_open(&r, path);
    if (!r)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    if (s->read_hook)
        ptc_reader_set_read_hook(r, s->read_hook, s->read_hook_ctx);
    return ptc_decode_reader(s, r, rc, flags, path);
}

int ptc_decode_memory(struct ptc_session *s, const void *data, size_t size, unsigned flags)
{
    struct ptc_reader *r;
    if (!s)
        return -PTC_E_ARG;
    int rc = ptc_reader_open_memory(&r, data, size);
    if (!r)
        return ptc_session_set_error(s, PTC_E_NOMEM, "out of memory");
    return ptc_decode_reader(s, r, rc, flags, "(memory)");
}
