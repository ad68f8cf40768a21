/* Exits with status 7 through exit() from a nested call: record must propagate it and the
 * events before exit() must all be written. */
#include <stdlib.h>
#include "e2e.h"
NOINLINE void bye(void) { exit(7); }
NOINLINE void before(void) { bye(); BARRIER(); }
int main(void) { before(); return 0; }
