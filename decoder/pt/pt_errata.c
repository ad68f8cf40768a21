/* Which of libipt's errata workarounds apply to the trace's CPU (ptc_pt_errata): the fast
 * path leaves the packets they concern to libipt. Its own file: the fast path (pt_fast.c)
 * and libipt's decoder (pt_ipt.c) both stand on it. */
#include <intel-pt.h>
#include <string.h>

#include "ptc_pt_decode.h"

unsigned ptc_pt_errata(const struct ptc_pt_dcfg *d)
{
    if (!d->cpu_family)
        return 0;
    struct pt_cpu cpu = {.vendor = pcv_intel, .family = d->cpu_family, .model = d->cpu_model,
                         .stepping = d->cpu_stepping};
    struct pt_errata e;
    memset(&e, 0, sizeof(e));
    (void)pt_cpu_errata(&e, &cpu); /* -pte_bad_cpu for models it does not know: none */
    return (e.bdm70 ? PTC_PT_ERRATUM_BDM70 : 0u) | (e.skd007 ? PTC_PT_ERRATUM_SKD007 : 0u) |
           (e.skd010 ? PTC_PT_ERRATUM_SKD010 : 0u) | (e.apl11 ? PTC_PT_ERRATUM_APL11 : 0u) |
           (e.apl12 ? PTC_PT_ERRATUM_APL12 : 0u);
}
