/* The clock of timed events (issue 28, docs/runtime.md *The ticker clock*): `tsc` (rdtsc per
 * event) or `ticker[:PERIOD]` (a runtime thread stores the TSC every PERIOD; events load it).
 * One parser for PTCALL_CLOCK and `ptcall record --clock`. */
#ifndef PTC_CLOCK_H
#define PTC_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* The ticker's period when none is given: 100 us (docs/runtime.md says why). */
#define PTC_CLOCK_TICKER_DEFAULT_NS 100000u
#define PTC_CLOCK_TICKER_MIN_NS 1000u
#define PTC_CLOCK_TICKER_MAX_NS 1000000000u

/* "tsc" -> *period_ns = 0; "ticker" -> the default; "ticker:P" with P a whole number of
 * microseconds or a number with a unit (ns, us, ms, s) in [1 us, 1 s]. NULL or "" is tsc.
 * 0, or -1 with a one-line reason in err. */
int ptc_clock_parse(const char *text, uint32_t *period_ns, char *err, size_t errsz);

/* "10 µs", "1.5 ms": a period for people (buf of at least 32 bytes). */
const char *ptc_clock_period_text(uint32_t period_ns, char *buf, size_t n);

#endif
