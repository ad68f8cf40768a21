/* libipt's query decoder as the decoder of record: turns PT bytes into the same abstract
 * events as the fast path (pt_fast.c). */
#include <intel-pt.h>
#include <string.h>

#include "ptc_pt_decode.h"

static void fill_config(struct pt_config *c, const struct ptc_pt_dcfg *d, const uint8_t *buf,
                        size_t len)
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

static int push(struct ptc_pt_aevs *out, uint8_t type, int ip_valid, uint64_t ip,
                const struct pt_event *ev, uint64_t off)
{
    struct ptc_pt_aev e = {.type = type, .ip_valid = (uint8_t)ip_valid, .ip = ip, .off = off};
    if (ev && ev->has_tsc) {
        e.has_time = 1;
        e.tsc = ev->tsc;
    }
    return ptc_pt_aevs_push(out, &e);
}

int ptc_pt_ipt_decode(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                      uint64_t base, struct ptc_pt_aevs *out)
{
    struct pt_config c;
    if (!len)
        return 0;
    fill_config(&c, cfg, buf, len);
    struct pt_query_decoder *q = pt_qry_alloc_decoder(&c);
    if (!q)
        return -pte_nomem;
    uint64_t ip;
    int status = pt_qry_sync_forward(q, &ip);
    if (status >= 0) {
        uint64_t so = 0;
        pt_qry_get_sync_offset(q, &so);
        push(out, PTC_AEV_PSB, 0, 0, NULL, base + so + 16);
    }
    while (status != -pte_eos) {
        if (status < 0) {
            /* undecodable: report and resynchronise at the next PSB */
            uint64_t off = 0;
            pt_qry_get_offset(q, &off);
            struct ptc_pt_aev e = {.type = PTC_AEV_ERROR, .err = status, .off = base + off};
            ptc_pt_aevs_push(out, &e);
            status = pt_qry_sync_forward(q, &ip);
            if (status >= 0) {
                uint64_t so = 0;
                pt_qry_get_sync_offset(q, &so);
                push(out, PTC_AEV_PSB, 0, 0, NULL, base + so + 16);
            }
            continue;
        }
        if (status & pts_event_pending) {
            struct pt_event ev;
            uint64_t off = 0;
            pt_qry_get_offset(q, &off);
            status = pt_qry_event(q, &ev, sizeof(ev));
            if (status < 0)
                continue;
            if (ev.status_update) {
                /* PSB+ content: a synchronisation point */
                if (!out->n || out->v[out->n - 1].type != PTC_AEV_PSB)
                    push(out, PTC_AEV_PSB, 0, 0, NULL, base + off);
                continue;
            }
            off += base;
            switch (ev.type) {
            case ptev_enabled:
                push(out, PTC_AEV_ENABLE, 1, ev.variant.enabled.ip, &ev, off);
                break;
            case ptev_disabled:
                push(out, PTC_AEV_DISABLE, !ev.ip_suppressed, ev.variant.disabled.ip, &ev,
                     off);
                break;
            case ptev_async_disabled:
                push(out, PTC_AEV_ASYNC_DISABLE, 1, ev.variant.async_disabled.at, &ev, off);
                break;
            case ptev_overflow:
                push(out, PTC_AEV_OVF, !ev.ip_suppressed, ev.variant.overflow.ip, &ev, off);
                break;
            default:
                break;
            }
            continue;
        }
        if (status & pts_eos)
            break;
        /* No event pending: consume control flow the stubs do not produce but a foreign
         * trace might (TNT, TIP). */
        int taken;
        int st = pt_qry_cond_branch(q, &taken);
        if (st == -pte_bad_query) {
            uint64_t tip;
            st = pt_qry_indirect_branch(q, &tip);
        }
        status = st;
    }
    pt_qry_free_decoder(q);
    return 0;
}
