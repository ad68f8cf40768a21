/* Exact lookup in a sorted array of addresses (stub tables are kept sorted by address). */
#ifndef PTC_SORTED_H
#define PTC_SORTED_H

#include <stddef.h>
#include <stdint.h>

/* Index of key in v[0..n), or n when absent. */
static inline size_t ptc_sorted_find(const uint64_t *v, size_t n, uint64_t key)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo] == key ? lo : n;
}

#endif
