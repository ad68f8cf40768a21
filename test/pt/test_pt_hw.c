/* pt-hw: records a real program with Intel PT. Needs the hardware: without the intel_pt PMU
 * it prints a SKIP line and exits 77 (ctest SKIP_RETURN_CODE), so the skip is visible. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "ptc_pt_decode.h"
#include "ptc_pt_rec.h"

int main(int argc, char **argv)
{
    struct stat st;
    const char *root = "/sys/bus/event_source/devices/intel_pt";
    if (stat(root, &st)) {
        printf("SKIP: no Intel PT on this machine (%s is absent)\n", root);
        return 77;
    }
    char why[512];
    if (!pt_available(why, sizeof(why))) {
        printf("SKIP: Intel PT is present but unusable for ptcall (%s)\n", why);
        return 77;
    }
    if (argc < 3)
        return 2;
    char *args[] = {argv[1], NULL};
    struct record_options o;
    memset(&o, 0, sizeof(o));
    o.output = argv[2];
    o.backend = RECORD_PT;
    o.timing = TIMING_MTC;
    o.argv = args;
    int ws = 0;
    int pr = record_pt(&o, &ws);
    if (pr) {
        printf("FAIL: record_pt %s (see above)\n", pr < 0 ? "failed" : "says the trace is incomplete");
        return 1;
    }
    struct ptc_pt_sink sink = {0};
    struct ptc_pt_front *f = ptc_pt_front_new(&sink, PTC_PT_MODE_FAST);
    struct ptc_file_header fh;
    int e = ptc_pt_read_file(argv[2], &fh, (int (*)(void *, const struct ptc_chunk_header *,
                                                    const void *))ptc_pt_front_chunk,
                             f, why, sizeof(why));
    if (!e)
        e = ptc_pt_front_finish(f);
    const struct ptc_pt_cpu_stats *cs;
    size_t n = ptc_pt_front_cpus(f, &cs);
    uint64_t pge = 0;
    for (size_t i = 0; i < n; i++) {
        struct ptc_pt_pktstat ps;
        ptc_pt_front_packets(f, i, &ps);
        pge += ps.count[7]; /* ppt_tip_pge */
    }
    /* stubprog runs 1000 iterations with two stub calls each */
    printf("%s: %llu TIP.PGE packets (expected >= 2000)\n", pge >= 2000 ? "PASS" : "FAIL",
           (unsigned long long)pge);
    ptc_pt_front_free(f);
    return e || pge < 2000;
}
