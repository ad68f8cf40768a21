/* The ticker clock's word and settings (soft_ticker.c sets them; rdtsc_() in
 * soft_internal.h and the *_ticker handlers read them). A file of its own, depending on
 * nothing: every file that reads the runtime's clock sits above it. */
#include "soft_internal.h"

struct ptc_clock_line ptc_clock;
int ptc_ticker_on;
uint32_t ptc_ticker_period; /* ns; set with ptc_ticker_on */

uint32_t ticker_period_ns(void) { return ptc_ticker_on ? ptc_ticker_period : 0; }
