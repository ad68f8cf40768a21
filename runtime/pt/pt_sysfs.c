/* PMU discovery from sysfs (a configurable root so tests use a fixture tree).
 * Layout (kernel arch/x86/events/intel/pt.c): <root>/type (decimal), format/<term>
 * ("config:N" or "config:A-B"), caps/<name> (hexadecimal, "%x"), and at the PMU root
 * max_nonturbo_ratio (decimal), tsc_art_ratio ("num:den"), nr_addr_filters (decimal; absent
 * when the PMU has no address filters). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_env.h"
#include "ptc_pt_rec.h"

const char *ptc_pt_sysfs_root(void)
{
    const char *r; /* the default is the table's (common/ptc_env.c) */
    ptc_env_get(PTC_ENV_PT_SYSFS, NULL, &r, NULL, 0);
    return r;
}

static int read_line(const char *root, const char *rel, char *buf, size_t n)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", root, rel);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    if (!fgets(buf, (int)n, f)) {
        fclose(f);
        return -1;
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static int64_t read_num(const char *root, const char *rel, int base)
{
    char b[64];
    if (read_line(root, rel, b, sizeof(b)))
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(b, &end, base);
    if (errno || end == b)
        return -1;
    return v;
}

static int parse_format(const char *s, uint8_t *lo, uint8_t *hi)
{
    unsigned a, b;
    if (strncmp(s, "config:", 7))
        return -1; /* config1/config2 terms are not used by ptcall */
    s += 7;
    if (sscanf(s, "%u-%u", &a, &b) == 2) {
        if (a > b || b > 63)
            return -1;
    } else if (sscanf(s, "%u", &a) == 1) {
        b = a;
        if (a > 63)
            return -1;
    } else {
        return -1;
    }
    *lo = (uint8_t)a;
    *hi = (uint8_t)b;
    return 0;
}

int ptc_pt_pmu_read(const char *root, struct ptc_pt_pmu *pmu, char *why, size_t why_size)
{
    memset(pmu, 0, sizeof(*pmu));
    snprintf(pmu->root, sizeof(pmu->root), "%s", root);
    int64_t type = read_num(root, "type", 10);
    if (type < 0) {
        snprintf(why, why_size,
                 "no Intel PT on this machine (%s/type is missing: the CPU has no Intel PT, "
                 "or this is a VM that does not expose it); use --backend soft",
                 root);
        return -1;
    }
    pmu->present = 1;
    pmu->type = (uint32_t)type;
    char fdir[512];
    snprintf(fdir, sizeof(fdir), "%s/format", root);
    DIR *d = opendir(fdir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) && pmu->nformat < PTC_PT_MAX_FORMAT) {
            if (e->d_name[0] == '.')
                continue;
            char rel[300], val[64];
            snprintf(rel, sizeof(rel), "format/%s", e->d_name);
            struct ptc_pt_format *f = &pmu->format[pmu->nformat];
            if (read_line(root, rel, val, sizeof(val)) || parse_format(val, &f->lo, &f->hi))
                continue;
            snprintf(f->name, sizeof(f->name), "%.31s", e->d_name);
            pmu->nformat++;
        }
        closedir(d);
    }
    pmu->num_address_ranges = read_num(root, "caps/num_address_ranges", 16);
    pmu->ip_filtering = read_num(root, "caps/ip_filtering", 16);
    pmu->mtc = read_num(root, "caps/mtc", 16);
    pmu->mtc_periods = read_num(root, "caps/mtc_periods", 16);
    pmu->psb_cyc = read_num(root, "caps/psb_cyc", 16);
    pmu->psb_periods = read_num(root, "caps/psb_periods", 16);
    pmu->cycle_thresholds = read_num(root, "caps/cycle_thresholds", 16);
    pmu->topa_output = read_num(root, "caps/topa_output", 16);
    pmu->topa_multiple_entries = read_num(root, "caps/topa_multiple_entries", 16);
    pmu->single_range_output = read_num(root, "caps/single_range_output", 16);
    pmu->ptwrite = read_num(root, "caps/ptwrite", 16);
    pmu->power_event_trace = read_num(root, "caps/power_event_trace", 16);
    pmu->nr_addr_filters = read_num(root, "nr_addr_filters", 10);
    if (pmu->nr_addr_filters < 0)
        pmu->nr_addr_filters = 0; /* the file is hidden when the PMU has none */
    pmu->max_nonturbo_ratio = read_num(root, "max_nonturbo_ratio", 10);
    char r[64];
    if (!read_line(root, "tsc_art_ratio", r, sizeof(r)))
        sscanf(r, "%u:%u", &pmu->tsc_art_num, &pmu->tsc_art_den);
    if (pmu->nformat == 0) {
        snprintf(why, why_size, "%s/format is missing or empty: cannot build the event "
                                "configuration; use --backend soft",
                 root);
        return -1;
    }
    return 0;
}

const struct ptc_pt_format *ptc_pt_pmu_format(const struct ptc_pt_pmu *pmu, const char *name)
{
    for (int i = 0; i < pmu->nformat; i++)
        if (!strcmp(pmu->format[i].name, name))
            return &pmu->format[i];
    return NULL;
}

int ptc_pt_pmu_set(const struct ptc_pt_pmu *pmu, uint64_t *config, const char *name,
                   uint64_t value)
{
    const struct ptc_pt_format *f = ptc_pt_pmu_format(pmu, name);
    if (!f)
        return -1;
    unsigned w = (unsigned)(f->hi - f->lo + 1);
    uint64_t mask = w >= 64 ? ~0ULL : ((1ULL << w) - 1);
    if (value & ~mask)
        return -1;
    *config = (*config & ~(mask << f->lo)) | (value << f->lo);
    return 0;
}
