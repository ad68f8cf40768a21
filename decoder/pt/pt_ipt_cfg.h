/* libipt's configuration for a span of PT bytes, from the decoder's: one filling for the
 * query decoder (pt_ipt.c) and the packet statistics (pt_pktstat.c), so that both apply
 * the same errata workarounds (pt_cpu_errata: SKZ84's corrupted TMA, BDM70, ...) for the
 * CPU the trace's PT_CONFIG names. Internal to decoder/pt. */
#ifndef PTC_PT_IPT_CFG_H
#define PTC_PT_IPT_CFG_H

#include <intel-pt.h>

#include "ptc_pt_decode.h"

static inline void ptc_pt_fill_config(struct pt_config *c, const struct ptc_pt_dcfg *d,
                                      const uint8_t *buf, size_t len)
{
    pt_config_init(c);
    c->begin = (uint8_t *)buf;
    c->end = (uint8_t *)buf + len;
    c->cpu.vendor = d->cpu_family ? pcv_intel : pcv_unknown;
    c->cpu.family = d->cpu_family;
    c->cpu.model = d->cpu_model;
    c->cpu.stepping = d->cpu_stepping;
    if (d->cpu_family)
        (void)pt_cpu_errata(&c->errata, &c->cpu); /* -pte_bad_cpu for new models: fine */
    c->cpuid_0x15_eax = d->cpuid_0x15_eax;
    c->cpuid_0x15_ebx = d->cpuid_0x15_ebx;
    c->mtc_freq = d->mtc_freq;
    c->nom_freq = d->nom_freq;
}

#endif
