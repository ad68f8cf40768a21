/* Counting mode (docs/runtime.md, "Counting mode"): each armed entry site adds one to its
 * function's counter; no buffers, no drain, exits stay disarmed. The counts leave as COUNTS
 * chunks (docs/trace-format.md 4.13) at each ptcall_mark and at the end, and, given
 * PTCALL_COUNTS_FD, live in a file the caller maps too (include/ptcall/counts_format.h).
 *
 * An entry site of a unit that gives up %r10 and %r11 jumps to a counting trampoline,
 * `movabs $counter, %r11; incq (%r11); jmp back` (18 bytes: no call, no return, no load of
 * a base), others call their stub, patched to pass the counter's index to ptc_count_handler.
 * The counters are one fixed reservation, so their addresses can be built into code: the
 * shared file is mapped over its start (MAP_FIXED) when it is laid out. */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "ptc_sled.h"
#include "ptcall/counts_format.h"
#include "soft_internal.h"

int counts_init(void)
{
    void *p = mmap(NULL, (size_t)COUNTERS_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        warn("ptcall: cannot reserve the counters of counting mode (%s): not counting",
             strerror(errno));
        return -1;
    }
    ptc_counters = p;
    /* block counters: a failure leaves the units' own arrays counting, privately */
    p = mmap(NULL, (size_t)BLOCKS_MAX * sizeof(uint64_t), PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
        warn("ptcall: cannot reserve the block counters of counting mode (%s): blocks are "
             "not counted", strerror(errno));
    else
        ptc_blocks = p;
    return 0;
}

struct blocks_ctx {
    struct object *o;
    uint32_t full; /* units whose blocks did not fit under BLOCKS_MAX */
};

static int blocks_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct blocks_ctx *c = ctx;
    struct ptcall_map_blocks b;
    uint64_t ptr;
    if (!ptc_map_get_blocks(u, &b, &ptr))
        return 0;
    if (c->full || rt.nblocks + b.num_blocks > BLOCKS_MAX) { /* the rest too: in order */
        c->full++;
        return 0;
    }
    /* validated: 8-aligned in the object's writable data (ptc_map_walk_in) */
    *(uint64_t **)(uintptr_t)ptr = &ptc_blocks[rt.nblocks];
    rt.nblocks += b.num_blocks;
    c->o->num_blocks += b.num_blocks;
    return 0;
}

void counts_blocks_register(struct object *o, const void *map_start, size_t map_size,
                            uint64_t stubs_start, uint64_t stubs_end,
                            const struct ptc_map_object *obj)
{
    if (!ptc_blocks)
        return;
    struct blocks_ctx c = {.o = o};
    o->first_block = rt.nblocks;
    o->num_blocks = 0;
    ptc_map_walk_in(map_start, map_size, (uint64_t)(uintptr_t)map_start, stubs_start,
                    stubs_end, obj, blocks_unit, &c, NULL);
    if (c.full)
        warn("ptcall: %s: more than %u blocks in all: %u of its units count their blocks "
             "privately (not in the counts file)", o->path, BLOCKS_MAX, c.full);
}

uint64_t counters_in_use(void)
{
    uint64_t n = 0;
    uint32_t nobj = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < nobj; i++) {
        const struct object *o = rt.objs[i];
        if (o->num_funcs && o->first_counter + o->num_funcs > n)
            n = o->first_counter + o->num_funcs;
    }
    return n;
}

void counts_zero(void)
{
    memset(ptc_counters, 0, (size_t)rt.ncounters * 8);
    if (ptc_blocks)
        memset(ptc_blocks, 0, (size_t)rt.nblocks * 8);
}

/* The trampoline: movabs $imm64, %r11 (49 bb imm64); [lock (f0)] incq (%r11) (49 ff 03);
 * jmp rel32. The lock prefix with PTCALL_COUNT_ATOMIC=1. */
static void count_tramp(uint8_t *tr, uint64_t tr_addr, uint64_t counter, uint64_t back)
{
    size_t k = 0;
    tr[k++] = 0x49;
    tr[k++] = 0xbb;
    memcpy(tr + k, &counter, 8);
    k += 8;
    if (rt.count_atomic)
        tr[k++] = 0xf0;
    tr[k++] = 0x49;
    tr[k++] = 0xff;
    tr[k++] = 0x03;
    tr[k++] = 0xe9;
    int32_t rel = (int32_t)(int64_t)(back - (tr_addr + k + 4));
    memcpy(tr + k, &rel, 4);
    k += 4;
    memset(tr + k, 0xcc, TRAMP_SIZE - k);
}

/* The trampolines of the entry sites whose stub slot has flag in slot_use, counting into
 * ptc_counters[idx[slot]] (counting mode: o->ids; counted beside tracing: o->cidx) */
static int build_counting(const struct object *o, const uint8_t *slot_use, unsigned flag,
                          const uint32_t *idx_of, uint64_t sites_start, uint64_t sites_end,
                          struct tramps *out)
{
    memset(out, 0, sizeof(*out));
    uint64_t n = (sites_end - sites_start) / sizeof(struct ptcall_map_site);
    if (!n)
        return -1;
    size_t size; /* the same layout as tramps_build's (tramp_at) */
    uint8_t *m = map_tramps_near(sites_start, n, &size);
    if (!m)
        return -1;
    uint64_t base = (uint64_t)(uintptr_t)m, made = 0;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry((const void *)(uintptr_t)sites_start, sites_start, i, &site, &stub,
                       &ret_sled);
        if (ret_sled || stub < o->stubs_start || stub >= o->stubs_end || (stub & 15))
            continue; /* exits are never counted */
        uint64_t slot = stub_slot(o, stub);
        uint32_t idx = idx_of[slot];
        if (!(slot_use[slot] & flag) || idx >= COUNTERS_MAX)
            continue;
        uint64_t a = base + TRAMP_SIZE + i * TRAMP_SIZE;
        count_tramp(m + TRAMP_SIZE + i * TRAMP_SIZE, a, (uint64_t)(uintptr_t)&ptc_counters[idx],
                    site + PTCALL_SLED_SIZE);
        made++;
    }
    if (!made || mprotect(m, size, PROT_READ | PROT_EXEC) != 0) {
        munmap(m, size);
        return -1;
    }
    out->base = base;
    out->n = n;
    out->made = made;
    return 0;
}

int count_tramps_build(const struct object *o, const uint8_t *slot_use, uint64_t sites_start,
                       uint64_t sites_end, struct tramps *out)
{
    return build_counting(o, slot_use, SLOT_TRAMP, o->ids, sites_start, sites_end, out);
}

int count_tramps_build_mixed(const struct object *o, const uint8_t *slot_use,
                             uint64_t sites_start, uint64_t sites_end, struct tramps *out)
{
    if (!o->cidx)
        return -1;
    return build_counting(o, slot_use, SLOT_COUNT, o->cidx, sites_start, sites_end, out);
}

/* The objects whose counters are in the array: registered, with counters handed out */
static int counted(const struct object *o) { return o->num_funcs != 0; }

void counts_write_segment(uint32_t flags, const char *label)
{
    if (rt.fd < 0 || !ptc_counters)
        return;
    uint32_t n = atomic_load(&rt.nobjs), nm = 0;
    uint64_t nf = 0;
    for (uint32_t i = 0; i < n; i++)
        if (counted(rt.objs[i])) {
            nm++;
            nf += rt.objs[i]->num_funcs;
        }
    if (!label)
        label = "";
    size_t lsize = strlen(label) + 1;
    if (lsize > 4096)
        lsize = 4096; /* a label is a name, not data: keep chunks small */
    size_t size = sizeof(struct ptc_counts) + nm * sizeof(struct ptc_counts_module) + nf * 8 +
                  lsize;
    size_t mapped = page_round_up(size);
    uint8_t *buf = map_anon(mapped); /* not malloc: this runs in signal handlers too */
    if (!buf) {
        warn("ptcall: out of memory for a COUNTS chunk: segment %u not written", rt.segment);
        return;
    }
    struct ptc_counts h = {.segment = rt.segment++, .flags = flags, .num_modules = nm,
                           .label_size = (uint32_t)lsize, .tsc = rdtsc_()};
    memcpy(buf, &h, sizeof(h));
    struct ptc_counts_module *mods = (struct ptc_counts_module *)(buf + sizeof(h));
    uint8_t *cnt = (uint8_t *)(mods + nm);
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct object *o = rt.objs[i];
        if (!counted(o))
            continue;
        mods[k].module_id = o->module_id;
        mods[k].num_funcs = o->num_funcs;
        mods[k].identity = o->identity;
        k++;
        uint64_t *c = &ptc_counters[o->first_counter];
        /* after a pilot: its segment is the counters at its end (count_base), and later
         * segments what was counted since (the counters are never reset then, so that no
         * increment falls between the two) */
        uint64_t *b = rt.count_base && o->first_counter + o->num_funcs <= rt.count_base_n
                          ? &rt.count_base[o->first_counter]
                          : NULL;
        if (b && (flags & PTC_COUNTS_F_PILOT)) {
            memcpy(cnt, b, (size_t)o->num_funcs * 8);
        } else if (b) {
            for (uint32_t j = 0; j < o->num_funcs; j++) {
                uint64_t d = c[j] - b[j];
                memcpy(cnt + (size_t)j * 8, &d, 8);
            }
        } else {
            memcpy(cnt, c, (size_t)o->num_funcs * 8);
        }
        /* a mark's next segment starts from 0 (an increment racing this is lost, as any);
         * the end leaves shared counters to the caller that reads them */
        if (flags & PTC_COUNTS_F_MARK) {
            memset(c, 0, (size_t)o->num_funcs * 8);
            if (b)
                memset(b, 0, (size_t)o->num_funcs * 8);
        }
        cnt += (size_t)o->num_funcs * 8;
    }
    memcpy(cnt, label, lsize - 1);
    cnt[lsize - 1] = 0;
    struct iovec v = {buf, size};
    write_chunk_flags(PTC_CHUNK_COUNTS, PTC_CHUNK_F_OPTIONAL, 0, &rt.proc_seq, &v, 1);
    munmap(buf, mapped);
}

void counts_finish(int how, int status, int crash)
{
    if (!rt.enabled || !atomic_load(&rt.active))
        return;
    if (atomic_exchange(&rt.finishing, FINISH_FINAL))
        return;
    /* crashing, the lock may be held by the thread that crashed inside a write */
    int locked = 0;
    for (int i = 0; i < (crash ? 500 : 5000) && !locked; i++) {
        locked = pthread_mutex_trylock(&rt.proc_mu) == 0;
        if (!locked) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    counts_write_segment(how == PTC_END_SIGNAL ? PTC_COUNTS_F_END | PTC_COUNTS_F_CRASH
                                               : PTC_COUNTS_F_END, "");
    if (rt.fd >= 0) {
        struct ptc_process_end e = {.how = (uint32_t)how, .status = status, .tsc = rdtsc_()};
        struct iovec v = {&e, sizeof(e)};
        write_chunk(PTC_CHUNK_PROCESS_END, 0, &rt.proc_seq, &v, 1);
    }
    if (locked)
        pthread_mutex_unlock(&rt.proc_mu);
}

/* Writes the whole layout's front (header, modules, strings) into buf (counters_offset
 * bytes) for the objects counted now. */
static void layout_front(uint8_t *buf, uint64_t counters_offset, uint64_t blocks_offset,
                         uint64_t total, uint32_t nm, uint32_t strings_size, int blocks)
{
    struct ptc_counts_file h;
    memset(&h, 0, sizeof(h));
    memcpy(h.magic, PTC_COUNTS_FILE_MAGIC, 8);
    h.version = PTC_COUNTS_FILE_VERSION;
    h.header_size = sizeof(h);
    h.total_size = total;
    h.num_modules = nm;
    h.pid = (uint32_t)getpid();
    h.num_counters = rt.ncounters;
    h.modules_offset = sizeof(h);
    h.strings_offset = (uint32_t)(sizeof(h) + nm * sizeof(struct ptc_counts_file_module));
    h.strings_size = strings_size;
    h.counters_offset = counters_offset;
    h.num_blocks = blocks ? rt.nblocks : 0;
    h.blocks_offset = blocks ? blocks_offset : 0;
    memcpy(buf, &h, sizeof(h));
    struct ptc_counts_file_module *m = (struct ptc_counts_file_module *)(buf + sizeof(h));
    char *str = (char *)(buf + h.strings_offset);
    uint32_t so = 0, k = 0, n = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < n; i++) {
        const struct object *o = rt.objs[i];
        if (!counted(o))
            continue;
        m[k].identity = o->identity;
        m[k].first_counter = o->first_counter;
        m[k].num_funcs = o->num_funcs;
        m[k].path = so;
        m[k].module_id = o->module_id;
        m[k].first_block = blocks ? o->first_block : 0;
        m[k].num_blocks = blocks ? o->num_blocks : 0;
        size_t l = strlen(o->path) + 1;
        memcpy(str + so, o->path, l);
        so += (uint32_t)l;
        k++;
    }
}

int counts_share(void)
{
    if (rt.counts_fd < 0 || !ptc_counters || rt.counts_shared)
        return rt.counts_shared ? 0 : -1;
    uint32_t n = atomic_load(&rt.nobjs), nm = 0;
    uint64_t strings = 0;
    for (uint32_t i = 0; i < n; i++)
        if (counted(rt.objs[i])) {
            nm++;
            strings += strlen(rt.objs[i]->path) + 1;
        }
    uint64_t front = sizeof(struct ptc_counts_file) + nm * sizeof(struct ptc_counts_file_module) +
                     strings;
    uint64_t coff = (front + PTC_COUNTS_FILE_ALIGN - 1) & ~(uint64_t)(PTC_COUNTS_FILE_ALIGN - 1);
    /* whole pages of counters, so that every counter the mapping covers is in the file */
    uint64_t cbytes = page_round_up((size_t)(rt.ncounters ? rt.ncounters * 8 : 8));
    /* version 2: the block counters follow, whole pages too (none: no part) */
    uint64_t boff = coff + cbytes;
    uint64_t bbytes = rt.nblocks ? page_round_up((size_t)rt.nblocks * 8) : 0;
    uint64_t total = boff + bbytes;
    if (ftruncate(rt.counts_fd, (off_t)total) != 0) {
        warn("ptcall: PTCALL_COUNTS_FD=%d: cannot size it to %llu bytes (%s): the counts stay "
             "private", rt.counts_fd, (unsigned long long)total, strerror(errno));
        return -1;
    }
    uint8_t *hdr = mmap(NULL, coff, PROT_READ | PROT_WRITE, MAP_SHARED, rt.counts_fd, 0);
    if (hdr == MAP_FAILED) {
        warn("ptcall: PTCALL_COUNTS_FD=%d: cannot map it (%s): the counts stay private",
             rt.counts_fd, strerror(errno));
        return -1;
    }
    /* the blocks first, over the start of their own reservation (never over a unit's data:
     * the units' pointers were pointed into it at registration); when that fails the front
     * says no blocks rather than zeros */
    int blocks_ok = 1;
    if (bbytes && (pwrite(rt.counts_fd, ptc_blocks, bbytes, (off_t)boff) != (ssize_t)bbytes ||
                   mmap(ptc_blocks, bbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                        rt.counts_fd, (off_t)boff) == MAP_FAILED)) {
        warn("ptcall: PTCALL_COUNTS_FD=%d: cannot map its block counters (%s): the blocks "
             "stay private", rt.counts_fd, strerror(errno));
        blocks_ok = 0;
    }
    memset(hdr, 0, coff);
    layout_front(hdr, coff, boff, total, nm, (uint32_t)strings, blocks_ok);
    munmap(hdr, coff);
    /* the counts so far (constructors) go along; then the file replaces the private pages */
    if (pwrite(rt.counts_fd, ptc_counters, cbytes, (off_t)coff) != (ssize_t)cbytes ||
        mmap(ptc_counters, cbytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, rt.counts_fd,
             (off_t)coff) == MAP_FAILED) {
        warn("ptcall: PTCALL_COUNTS_FD=%d: cannot map its counters (%s): the counts stay "
             "private", rt.counts_fd, strerror(errno));
        return -1;
    }
    rt.counts_shared = 1;
    return 0;
}

void counts_after_fork(void)
{
    rt.parent_pid = rt.pid;
    rt.pid = (uint32_t)getpid();
    rt.start_how = PTC_PROC_FORK;
    rt.proc_seq = 0;
    rt.segment = 0;
    /* shared counters are the caller's to read: a child of the program counts into them
     * too (the fork server's child zeroes them itself); private ones start again at 0 */
    if (!rt.counts_shared && ptc_counters)
        counts_zero();
    if (rt.fd < 0)
        return;
    write_process_start();
    uint32_t n = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < n; i++)
        if (atomic_load(&rt.objs[i]->live))
            write_module(rt.objs[i]);
}
