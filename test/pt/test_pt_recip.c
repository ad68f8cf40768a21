/* pt-recip: the fast path times CYC hits with floor(n / CBR) computed by a multiplication
 * (pt_ftime.h recip_div); it must equal the division for every divisor 1..255, at the
 * edges of each quotient and beyond 2^56 (where it falls back to dividing). */
#include <stdio.h>

#include "pt_ftime.h"

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

int main(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ULL, bad = 0, n_checked = 0;
    for (uint32_t d = 0; d < 256; d++) {
        struct ptc_recip r = recip_init(d);
        for (int i = 0; i < 20000; i++) {
            uint64_t n = rnd(&seed);
            switch (i % 4) {
            case 0: n >>= 8 + (n & 31); break;            /* small and mid-size sums */
            case 1: n = (n >> 8) / (d ? d : 1) * (d ? d : 1) - (i & 1); break; /* edges */
            case 2: n = (1ULL << 56) - 1 - (n & 0xffff); break; /* just below the limit */
            default: break;                               /* anything (falls back) */
            }
            uint64_t want = d ? n / d : 0;
            if (recip_div(&r, n) != want && bad++ < 10)
                fprintf(stderr, "FAIL: %llu / %u: %llu, want %llu\n", (unsigned long long)n,
                        d, (unsigned long long)recip_div(&r, n), (unsigned long long)want);
            n_checked++;
        }
    }
    printf("%s: %llu divisions, %llu wrong\n", bad ? "FAIL" : "PASS",
           (unsigned long long)n_checked, (unsigned long long)bad);
    return bad != 0;
}
