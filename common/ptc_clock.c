/* PTCALL_CLOCK / --clock values (ptc_clock.h). */
#include "ptc_clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int unit_ns(const char *u, uint64_t *mult)
{
    if (!*u || !strcmp(u, "us"))
        *mult = 1000u; /* a bare number is microseconds, as PTCALL_CLOCK=ticker:US says */
    else if (!strcmp(u, "ns"))
        *mult = 1u;
    else if (!strcmp(u, "ms"))
        *mult = 1000000u;
    else if (!strcmp(u, "s"))
        *mult = 1000000000u;
    else
        return -1;
    return 0;
}

int ptc_clock_parse(const char *text, uint32_t *period_ns, char *err, size_t errsz)
{
    *period_ns = 0;
    if (!text || !*text || !strcmp(text, "tsc"))
        return 0;
    if (strncmp(text, "ticker", 6) != 0 || (text[6] && text[6] != ':')) {
        snprintf(err, errsz, "clock '%s' is not tsc or ticker[:PERIOD] (e.g. ticker:50us)",
                 text);
        return -1;
    }
    if (!text[6]) {
        *period_ns = PTC_CLOCK_TICKER_DEFAULT_NS;
        return 0;
    }
    const char *p = text + 7;
    char *end;
    errno = 0;
    unsigned long long v = (*p >= '0' && *p <= '9') ? strtoull(p, &end, 10) : 0;
    uint64_t mult;
    if (!(*p >= '0' && *p <= '9') || errno || unit_ns(end, &mult) < 0 ||
        v > PTC_CLOCK_TICKER_MAX_NS || v * mult < PTC_CLOCK_TICKER_MIN_NS ||
        v * mult > PTC_CLOCK_TICKER_MAX_NS) {
        snprintf(err, errsz,
                 "ticker period '%s' is not a whole number of us (or with ns, us, ms, s) "
                 "from 1us to 1s, e.g. ticker:50us",
                 p);
        return -1;
    }
    *period_ns = (uint32_t)(v * mult);
    return 0;
}

const char *ptc_clock_period_text(uint32_t period_ns, char *buf, size_t n)
{
    if (period_ns >= 1000000000u && period_ns % 1000000000u == 0)
        snprintf(buf, n, "%u s", period_ns / 1000000000u);
    else if (period_ns >= 1000000u)
        snprintf(buf, n, "%g ms", period_ns / 1e6);
    else if (period_ns >= 1000u)
        snprintf(buf, n, "%g us", period_ns / 1e3);
    else
        snprintf(buf, n, "%u ns", period_ns);
    return buf;
}
