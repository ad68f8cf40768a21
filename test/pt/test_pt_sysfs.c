/* pt-sysfs: PMU discovery and perf_event_attr construction from fixture sysfs trees
 * (test/pt/fixtures), and pt_available()'s reasons. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_pt_rec.h"
#include "ptcall/trace_format_pt.h"

#include "pt_check.h"

static uint64_t config_for(const struct ptc_pt_pmu *pmu, enum record_timing t, int *rc,
                           char *why, struct ptc_pt_attrs *at)
{
    struct ptc_pt_attr_req req = {.timing = t, .mtc_period = -1, .psb_period = -1,
                                  .cyc_thresh = -1};
    *rc = ptc_pt_build_attrs(pmu, &req, 0, at, why, 512);
    return at->pt.config;
}

int main(int argc, char **argv)
{
    const char *fx = argc > 1 ? argv[1] : "fixtures";
    char root[512], why[512];
    struct ptc_pt_pmu pmu;
    struct ptc_pt_attrs at;
    int rc;

    /* Skylake-like machine */
    snprintf(root, sizeof(root), "%s/skylake/intel_pt", fx);
    CHECK(ptc_pt_pmu_read(root, &pmu, why, sizeof(why)) == 0, "read: %s", why);
    CHECK(pmu.type == 8, "type %u", pmu.type);
    const struct ptc_pt_format *f = ptc_pt_pmu_format(&pmu, "mtc_period");
    CHECK(f && f->lo == 14 && f->hi == 17, "mtc_period range");
    f = ptc_pt_pmu_format(&pmu, "noretcomp");
    CHECK(f && f->lo == 11 && f->hi == 11, "noretcomp bit");
    CHECK(pmu.mtc_periods == 0x249, "caps are hex: mtc_periods %llx",
          (unsigned long long)pmu.mtc_periods);
    CHECK(pmu.psb_periods == 0x3f && pmu.cycle_thresholds == 0x3fff, "psb/cyc caps");
    CHECK(pmu.num_address_ranges == 2 && pmu.nr_addr_filters == 2, "ranges");
    CHECK(pmu.max_nonturbo_ratio == 26, "max_nonturbo_ratio");
    CHECK(pmu.tsc_art_num == 216 && pmu.tsc_art_den == 2, "tsc_art_ratio");

    /* pt|branch (0,13) noretcomp (11) tsc (10) mtc (9) mtc_period=3 (14-17) */
    uint64_t c = config_for(&pmu, TIMING_DEFAULT, &rc, why, &at);
    CHECK(rc == 0 && c == 0xEE01, "default (mtc) config %llx (%s)", (unsigned long long)c, why);
    CHECK(at.mtc_freq == 3 && (at.flags & PTC_PT_F_MTC) && (at.flags & PTC_PT_F_TSC) &&
              (at.flags & PTC_PT_F_NORETCOMP),
          "mtc flags");
    c = config_for(&pmu, TIMING_CYC, &rc, why, &at);
    CHECK(rc == 0 && c == 0xEE03, "cyc config %llx", (unsigned long long)c);
    c = config_for(&pmu, TIMING_TSC, &rc, why, &at);
    CHECK(rc == 0 && c == 0x2C01, "tsc config %llx", (unsigned long long)c);
    c = config_for(&pmu, TIMING_NONE, &rc, why, &at);
    CHECK(rc == 0 && c == 0x2801, "none config %llx", (unsigned long long)c);
    CHECK(at.pt.type == 8 && at.pt.exclude_kernel && at.pt.disabled && at.pt.enable_on_exec &&
              at.pt.inherit && at.pt.sample_id_all && at.pt.context_switch,
          "pt attr flags");
    CHECK(at.pt.sample_type == (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                PERF_SAMPLE_IDENTIFIER),
          "sample_type");
    CHECK(at.dummy.type == PERF_TYPE_SOFTWARE && at.dummy.config == PERF_COUNT_SW_DUMMY &&
              at.dummy.mmap && at.dummy.mmap2 && at.dummy.comm && at.dummy.task &&
              at.dummy.sample_id_all,
          "dummy: mmap=1 is needed for filter re-resolution");
    /* explicit periods are validated against caps like the kernel does */
    struct ptc_pt_attr_req req = {.timing = TIMING_MTC, .mtc_period = 2, .psb_period = -1,
                                  .cyc_thresh = -1};
    CHECK(ptc_pt_build_attrs(&pmu, &req, 0, &at, why, sizeof(why)) == -1 &&
              strstr(why, "mtc_period 2"),
          "mtc_period 2 must be refused (mtc_periods 0x249): %s", why);
    req.mtc_period = 6;
    CHECK(ptc_pt_build_attrs(&pmu, &req, 0, &at, why, sizeof(why)) == 0 &&
              ((at.pt.config >> 14) & 0xf) == 6,
          "mtc_period 6");
    req.mtc_period = -1;
    req.psb_period = 7;
    CHECK(ptc_pt_build_attrs(&pmu, &req, 0, &at, why, sizeof(why)) == -1, "psb_period 7");
    /* attach: no inherit, no enable_on_exec */
    req.psb_period = -1;
    CHECK(ptc_pt_build_attrs(&pmu, &req, 1, &at, why, sizeof(why)) == 0 && !at.pt.inherit &&
              !at.pt.enable_on_exec,
          "attach attrs");
    setenv("PTCALL_PT_SYSFS", root, 1);
    CHECK(pt_available(why, sizeof(why)) == 1, "available: %s", why);
    printf("skylake: %s; default config 0xEE01\n", why);

    /* Broadwell-like: no filtering, no MTC */
    snprintf(root, sizeof(root), "%s/broadwell/intel_pt", fx);
    CHECK(ptc_pt_pmu_read(root, &pmu, why, sizeof(why)) == 0, "read bdw: %s", why);
    CHECK(pmu.nr_addr_filters == 0 && pmu.num_address_ranges == 0, "bdw ranges");
    c = config_for(&pmu, TIMING_MTC, &rc, why, &at);
    CHECK(rc == -1 && strstr(why, "MTC"), "bdw mtc must fail: %s", why);
    printf("broadwell --timing mtc: %s\n", why);
    c = config_for(&pmu, TIMING_TSC, &rc, why, &at);
    CHECK(rc == 0 && c == 0xC00, "bdw tsc config %llx (no pt/branch terms)", (unsigned long long)c);
    setenv("PTCALL_PT_SYSFS", root, 1);
    CHECK(pt_available(why, sizeof(why)) == 0 && strstr(why, "num_address_ranges = 0") &&
              strstr(why, "--backend soft"),
          "bdw not available: %s", why);
    printf("broadwell: %s\n", why);

    /* no PMU at all */
    setenv("PTCALL_PT_SYSFS", "/nonexistent/intel_pt", 1);
    CHECK(pt_available(why, sizeof(why)) == 0 && strstr(why, "no Intel PT") &&
              strstr(why, "--backend soft"),
          "absent: %s", why);
    printf("absent: %s\n", why);
    printf("%s\n", pt_check_fails ? "FAIL" : "PASS");
    return pt_check_fails ? 1 : 0;
}
