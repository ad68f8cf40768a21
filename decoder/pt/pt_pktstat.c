/* Packet statistics for `ptcall stat`: libipt's packet decoder over a stream. */
#include <intel-pt.h>
#include <string.h>

#include "pt_ipt_cfg.h"

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

int ptc_pt_count_packets(const struct ptc_pt_dcfg *cfg, const uint8_t *buf, size_t len,
                         int psb_after, struct ptc_pt_pktstat *st)
{
    if (!len)
        return 0;
    struct pt_config c;
    ptc_pt_fill_config(&c, cfg, buf, len);
    struct pt_packet_decoder *d = pt_pkt_alloc_decoder(&c);
    if (!d)
        return -1;
    int s = pt_pkt_sync_forward(d);
    uint64_t off = 0;
    if (s >= 0) {
        pt_pkt_get_sync_offset(d, &off);
        st->unsynced_bytes += off;
    } else {
        st->unsynced_bytes += len; /* no PSB at all */
    }
    while (s >= 0) {
        struct pt_packet p;
        pt_pkt_get_offset(d, &off);
        s = pt_pkt_next(d, &p, sizeof(p));
        if (s == -pte_eos) {
            /* the end, or a packet cut by it: its bytes are undecodable, and before a
             * PSB they are an error (the decoders say so too: pt_stream.c) */
            if (off < len) {
                st->unsynced_bytes += len - off;
                st->errors += psb_after != 0;
            }
            break;
        }
        if (s < 0) {
            /* undecodable from here to the next PSB, or to the end when there is none */
            st->errors++;
            s = pt_pkt_sync_forward(d);
            uint64_t next = len;
            if (s >= 0)
                pt_pkt_get_sync_offset(d, &next);
            /* libipt looks for the PSB from 15 bytes back (one the bad packet ran into may
             * start there): those bytes are counted already (fuzz_pt_raw: an underflow) */
            if (next > off)
                st->unsynced_bytes += next - off;
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
