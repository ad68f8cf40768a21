/* The costs record --overhead and calibrate use (budget.h): the cache entry of this machine
 * and libptcall, or a calibration run, cached. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "record_ring.h"

#ifndef PTCALL_CALIB_BUILD_PATH
#define PTCALL_CALIB_BUILD_PATH ""
#endif
#ifndef PTCALL_CALIB_INSTALL_REL
#define PTCALL_CALIB_INSTALL_REL "../lib/ptcall/ptcall-calib"
#endif

/* The calibration program: beside the install tree's plugins, else the build tree's. */
static int find_calib(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (k > 0) {
        exe[k] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            const char *rel[] = {PTCALL_CALIB_INSTALL_REL, "../runtime/pt/ptcall-calib"};
            for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
                char cand[PATH_MAX];
                if (snprintf(cand, sizeof(cand), "%s/%s", exe, rel[i]) < (int)sizeof(cand) &&
                    access(cand, X_OK) == 0 && realpath(cand, out))
                    return 0;
            }
        }
    }
    if (PTCALL_CALIB_BUILD_PATH[0] && access(PTCALL_CALIB_BUILD_PATH, X_OK) == 0) {
        snprintf(out, n, "%s", PTCALL_CALIB_BUILD_PATH);
        return 0;
    }
    return -1;
}

int budget_costs_get(int measure, int quiet, struct ptc_costs *c, int *measured)
{
    memset(c, 0, sizeof(*c));
    *measured = 0;
    if (!ptc_costs_measure) {
        fprintf(stderr, "ptcall: this ptcall was built without the recorder library (libelf): "
                        "no cost model\n");
        return -1;
    }
    char rt[PATH_MAX], prog[PATH_MAX], why[PATH_MAX + 300], cache[PATH_MAX];
    if (find_runtime(rt, sizeof(rt)) != 0) {
        fprintf(stderr, "ptcall: libptcall.so not found next to ptcall: nothing to calibrate "
                        "(set PTCALL_RUNTIME=/path/to/libptcall.so)\n");
        return -1;
    }
    if (ptc_costs_key(rt, c, why, sizeof(why)) != 0) {
        fprintf(stderr, "ptcall: %s\n", why);
        return -1;
    }
    int have_cache = ptc_costs_cache_path(cache, sizeof(cache)) == 0;
    if (!measure && have_cache) {
        int r = ptc_costs_load(cache, c, why, sizeof(why));
        if (r > 0)
            return 0;
        if (r < 0 && !quiet)
            fprintf(stderr, "ptcall: %s; measuring\n", why);
    }
    if (find_calib(prog, sizeof(prog)) != 0) {
        fprintf(stderr, "ptcall: the calibration program ptcall-calib is not installed beside "
                        "ptcall (lib/ptcall/): reinstall ptcall\n");
        return -1;
    }
    const char *tmp = getenv("TMPDIR");
    if (!tmp || tmp[0] != '/')
        tmp = "/tmp";
    if (ptc_costs_measure(prog, rt, tmp, 0, c, why, sizeof(why)) != 0) {
        fprintf(stderr, "ptcall: cannot calibrate: %s\n", why);
        return -1;
    }
    *measured = 1;
    if (!have_cache) {
        if (!quiet)
            fprintf(stderr, "ptcall: neither XDG_CACHE_HOME nor HOME is set: the costs are not "
                            "cached\n");
    } else if (ptc_costs_save(cache, c, why, sizeof(why)) != 0) {
        if (!quiet)
            fprintf(stderr, "ptcall: %s\n", why);
    }
    return 0;
}
