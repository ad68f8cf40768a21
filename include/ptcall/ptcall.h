/* ptcall user header: what an instrumented program may use. */
#ifndef PTCALL_H
#define PTCALL_H

/* Keeps the ptcall pass away from a function (as no_instrument_function does). */
#define PTCALL_NO_INSTRUMENT __attribute__((annotate("ptcall_no_instrument")))

#endif
