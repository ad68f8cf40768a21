/* Error texts: ptc_strerror() and the session's message. The floor every other decoder
 * file may call, so that no floor has to reach up to the session's API for its errors. */
#include <stdarg.h>
#include <stdio.h>

#include "dec_core.h"

static const char *const errnames[] = {
    [PTC_OK] = "success",
    [PTC_E_IO] = "read error",
    [PTC_E_FORMAT] = "not a ptcall trace file",
    [PTC_E_VERSION] = "unsupported trace format version",
    [PTC_E_TRUNCATED] = "truncated trace",
    [PTC_E_CORRUPT] = "corrupt trace",
    [PTC_E_NOMEM] = "out of memory",
    [PTC_E_NOMODULE] = "the trace holds no instrumented module",
    [PTC_E_BADSTUB] = "event names an unknown stub",
    [PTC_E_ARG] = "invalid argument",
    [PTC_E_UNSUPPORTED] = "unsupported trace content",
};

const char *ptc_strerror(int err)
{
    if (err < 0)
        err = -err;
    if (err >= 0 && (size_t)err < sizeof(errnames) / sizeof(errnames[0]) && errnames[err])
        return errnames[err];
    return "unknown error";
}

int ptc_session_set_error(struct ptc_session *s, int err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->msg, sizeof(s->msg), fmt, ap);
    va_end(ap);
    return -err;
}
