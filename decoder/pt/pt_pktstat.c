/* Packet statistics for `ptcall stat`: libipt's packet decoder over a stream. */
#include <intel-pt.h>
#include <string.h>

#include "ptc_pt_decode.h"

static const char *const names[] = {
    [ppt_invalid] = "invalid", [ppt_unknown] = "unknown", [ppt_pad] = "PAD",
    [ppt_psb] = "PSB", [ppt_psbend] = "PSBEND", [ppt_fup] = "FUP", [ppt_tip] = "TIP",
    [ppt_tip_pge] = "TIP.PGE", [ppt_tip_pgd] = "TIP.PGD", [ppt_tnt_8] = "TNT8",
    [ppt_tnt_64] = "TNT64", [ppt_mode] = "MODE", [ppt_pip] = "PIP", [ppt_vmcs] = "VMCS",
    [ppt_cbr] = "CBR", [ppt_tsc] = "TSC", [ppt_tma] = "TMA", [ppt_mtc] = "MTC",
    [ppt_cyc] = "CYC", [ppt_stop] = "STOP", [ppt_ovf] = "OVF", [ppt_mnt] = "MNT",
    [ppt_exstop] = "EXSTOP", [ppt_mwait] = "MWAIT", [ppt_pwre] = "PWRE", [ppt_pwrx] = "PWRX",
    [ppt_ptw] = "PTW",
};

const char *ptc_pt_packet_name(int type)
{
    if (type < 0 || (size_t)type >= sizeof(names) / sizeof(names[0]) || !names[type])
        return "?";
    return names[type];
}

int ptc_pt_count_packets(const uint8_t *buf, size_t len, struct ptc_pt_pktstat *st)
{
    if (!len)
        return 0;
    struct pt_config c;
    pt_config_init(&c);
    c.begin = (uint8_t *)buf;
    c.end = (uint8_t *)buf + len;
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
    if (!d)
        return -1;
    int s = pt_pkt_sync_forward(d);
    if (s >= 0) {
        uint64_t off = 0;
        pt_pkt_get_sync_offset(d, &off);
        st->unsynced_bytes += off;
    }
    while (s >= 0) {
        struct pt_packet p;
        s = pt_pkt_next(d, &p, sizeof(p));
        if (s == -pte_eos)
            break;
        if (s < 0) {
            st->errors++;
            uint64_t before = 0, after = 0;
            pt_pkt_get_offset(d, &before);
            s = pt_pkt_sync_forward(d);
            if (s >= 0) {
                pt_pkt_get_offset(d, &after);
                st->unsynced_bytes += after - before;
            }
            continue;
        }
        if ((unsigned)p.type < PTC_PT_NPKT) {
            st->count[p.type]++;
            st->bytes[p.type] += (uint64_t)s;
        }
    }
    pt_pkt_free_decoder(d);
    return 0;
}
