/* Linked first into the replacement binary of arm_proc_test.py (the "replaced" case): its
 * functions come before arm_main's in the code, the stub section, the map and the sled table,
 * so every ptcall section of the replacement lies elsewhere than in the binary the running
 * process mapped. A tool that read the replacement as if it were the mapped object would
 * look for the stubs, map and sleds at the wrong addresses. */
#include "e2e.h"
#define PAD(n)                                                                                    \
    NOINLINE int arm_pad##n(int x)                                                                \
    {                                                                                             \
        int r = x;                                                                                \
        for (int i = 0; i < x + n; i++)                                                           \
            r = NOTAIL(r * 7 + i) ^ (r >> 3);                                                     \
        return r;                                                                                 \
    }
PAD(0) PAD(1) PAD(2) PAD(3) PAD(4) PAD(5) PAD(6) PAD(7) PAD(8) PAD(9)
PAD(10) PAD(11) PAD(12) PAD(13) PAD(14) PAD(15) PAD(16) PAD(17) PAD(18) PAD(19)
