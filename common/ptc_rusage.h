/* CPU time of the processes a recorder waited for: RECORD_END's cpu_ns (trace format 2.7),
 * which `record --overhead --from-counts` budgets against. */
#ifndef PTC_RUSAGE_H
#define PTC_RUSAGE_H

#include <stdint.h>

/* User + system CPU time of the children this process has waited for (getrusage
 * RUSAGE_CHILDREN), ns; 0 when it cannot be read. A recorder takes it before and after the
 * command: what ran before it (a calibration) is not the command's. */
uint64_t ptc_children_cpu_ns(void);

#endif
