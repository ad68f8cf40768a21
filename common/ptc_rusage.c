#include "ptc_rusage.h"

#include <sys/resource.h>

uint64_t ptc_children_cpu_ns(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_CHILDREN, &u) != 0)
        return 0;
    return (uint64_t)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000u +
           (uint64_t)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000u;
}
