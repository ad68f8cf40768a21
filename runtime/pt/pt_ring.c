/* Consumers of the perf data ring and the AUX area (include/uapi/linux/perf_event.h):
 * read the head with acquire semantics (smp_rmb after the load), copy, then publish the
 * tail with release semantics (smp_mb before the store). Head and tail are free-running
 * byte counters; data wraps at the end of the mapping and is copied in two pieces. */
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "ptc_pt_rec.h"

long ptc_pt_aux_drain(struct ptc_pt_aux_ring *r, ptc_pt_sink_fn sink, void *ctx)
{
    uint64_t head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->pc->aux_tail;
    if (head == tail)
        return 0;
    if (head - tail > r->size)
        tail = head - r->size; /* cannot happen in normal mode; never read stale bytes */
    uint64_t mask = r->size - 1;
    uint64_t n = head - tail;
    uint64_t start = tail & mask;
    uint64_t first = r->size - start < n ? r->size - start : n;
    if (sink(ctx, tail, r->base + start, (size_t)first))
        return -1;
    if (n > first && sink(ctx, tail + first, r->base, (size_t)(n - first)))
        return -1;
    __atomic_store_n(&r->pc->aux_tail, head, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    r->copied += n;
    return (long)n;
}

long ptc_pt_aux_snapshot(struct ptc_pt_aux_ring *r, int wrapped, ptc_pt_sink_fn sink,
                         void *ctx)
{
    /* overwrite mode: aux_head is updated when the event stops; it is an offset in the
     * buffer (the kernel keeps it modulo the size for PT snapshots) */
    uint64_t head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE);
    uint64_t mask = r->size - 1;
    uint64_t off = head & mask;
    long total = 0;
    if (wrapped) {
        if (sink(ctx, r->copied, r->base + off, (size_t)(r->size - off)))
            return -1;
        total += (long)(r->size - off);
        r->copied += r->size - off;
    }
    if (off && sink(ctx, r->copied, r->base, (size_t)off))
        return -1;
    total += (long)off;
    r->copied += off;
    return total;
}

long ptc_pt_aux_snapshot_next(struct ptc_pt_aux_ring *r, struct ptc_pt_snap *st,
                              ptc_pt_sink_fn sink, void *ctx, int *gap)
{
    uint64_t size = r->size, mask = size - 1;
    uint64_t head = __atomic_load_n(&r->pc->aux_head, __ATOMIC_ACQUIRE) & mask;
    long total = 0;
    *gap = 0;
    int cont = 0;
    if (st->have) {
        uint8_t now[64];
        for (int k = 0; k < 64; k++)
            now[k] = r->base[(st->off - 64 + (uint64_t)k) & mask];
        cont = !memcmp(now, st->ref, 64);
    }
    if (cont) {
        uint64_t from = st->off;
        uint64_t n = (head - from) & mask;
        uint64_t first = size - from < n ? size - from : n;
        if (first && sink(ctx, r->copied, r->base + from, (size_t)first))
            return -1;
        r->copied += first;
        if (n > first) {
            if (sink(ctx, r->copied, r->base, (size_t)(n - first)))
                return -1;
            r->copied += n - first;
        }
        total = (long)n;
    } else {
        /* the last 4 KiB non-zero: the buffer filled at least once (perf does the same) */
        int wrapped = 0;
        for (uint64_t k = size > 4096 ? size - 4096 : 0; k < size && !wrapped; k++)
            wrapped = r->base[k] != 0;
        *gap = st->have;
        total = ptc_pt_aux_snapshot(r, wrapped, sink, ctx);
        if (total < 0)
            return -1;
    }
    st->off = head;
    for (int k = 0; k < 64; k++)
        st->ref[k] = r->base[(head - 64 + (uint64_t)k) & mask];
    st->have = 1;
    return total;
}

long ptc_pt_data_drain(struct ptc_pt_data_ring *r, ptc_pt_rec_fn rec, void *ctx)
{
    uint64_t head = __atomic_load_n(&r->pc->data_head, __ATOMIC_ACQUIRE);
    uint64_t tail = r->pc->data_tail;
    uint64_t mask = r->size - 1;
    long n = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        uint64_t o = tail & mask;
        if (o + sizeof(h) <= r->size) {
            memcpy(&h, r->base + o, sizeof(h));
        } else {
            size_t a = (size_t)(r->size - o);
            memcpy(&h, r->base + o, a);
            memcpy((uint8_t *)&h + a, r->base, sizeof(h) - a);
        }
        if (h.size < sizeof(h) || tail + h.size > head)
            break; /* a torn record: wait for the writer (or a corrupt ring) */
        const void *p;
        if (o + h.size <= r->size) {
            p = r->base + o;
        } else {
            size_t a = (size_t)(r->size - o);
            memcpy(r->bounce, r->base + o, a);
            memcpy(r->bounce + a, r->base, h.size - a);
            p = r->bounce;
        }
        if (rec(ctx, &h, p))
            return -1;
        tail += h.size;
        n++;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&r->pc->data_tail, tail, __ATOMIC_RELEASE);
    return n;
}

int ptc_pt_time_conv(const struct perf_event_mmap_page *pc, uint16_t *shift, uint32_t *mult,
                     uint64_t *zero)
{
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
        if (seq & 1)
            continue;
        int cap = pc->cap_user_time_zero;
        uint16_t s = pc->time_shift;
        uint32_t m = pc->time_mult;
        uint64_t z = pc->time_zero;
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&pc->lock, __ATOMIC_RELAXED) != seq)
            continue;
        if (!cap)
            return -1;
        *shift = s;
        *mult = m;
        *zero = z;
        return 0;
    }
    return -1;
}

void ptc_pt_cpuid(uint16_t *family, uint8_t *model, uint8_t *stepping, uint32_t *vendor_intel,
                  uint32_t *eax15, uint32_t *ebx15)
{
    *family = 0;
    *model = *stepping = 0;
    *vendor_intel = 0;
    *eax15 = *ebx15 = 0;
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return;
    unsigned max = a;
    *vendor_intel = b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e; /* GenuineIntel */
    __get_cpuid(1, &a, &b, &c, &d);
    unsigned fam = (a >> 8) & 0xf, mod = (a >> 4) & 0xf;
    if (fam == 0xf)
        fam += (a >> 20) & 0xff;
    if (fam == 0x6 || fam >= 0xf)
        mod += ((a >> 16) & 0xf) << 4;
    *family = (uint16_t)fam;
    *model = (uint8_t)mod;
    *stepping = (uint8_t)(a & 0xf);
    if (max >= 0x15) {
        __cpuid(0x15, a, b, c, d);
        *eax15 = a;
        *ebx15 = b;
    }
#endif
}
