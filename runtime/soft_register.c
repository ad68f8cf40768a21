/* Registration: each instrumented object's constructor registers it; the first registration
 * starts tracing in the process. The runtime validates the object's map, gives its stubs
 * dense stub ids, writes its MODULE chunk and only then patches its stubs to call the
 * handler. An object it cannot trace (a map that names places outside the object, no memory
 * for its tables) is refused: one warning and a MODULE_REFUSED chunk, so that the trace says
 * its functions are missing. Unregistration (its destructor) queues a MODULE_UNLOAD. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_map_read.h"
#include "ptc_env.h"
#include "soft_blocking.h"
#include "soft_internal.h"

/* How this process starts its record: PTCALL_EXEC_PID=pid, set by our exec wrappers, says
 * this image replaces a traced one. Its streams start again at seq 0 (a new life of the pid,
 * docs/trace-format.md 4.2). */
static uint32_t start_how(void)
{
    uint64_t ep;
    char err[160];
    if (ptc_env_get(PTC_ENV_EXEC_PID, &ep, NULL, err, sizeof(err)) < 0) {
        warn("ptcall: %s: taken as a start, not an exec", err);
        ep = 0;
    }
    return ep == rt.pid ? PTC_PROC_EXEC : PTC_PROC_START;
}

/* Starts tracing in this process: the trace file, PROCESS + TIMEBASE, the drain, the
 * signal handlers. Caller holds reg_mu. */
static int activate(void)
{
    if (rt.ring) { /* the flight recorder: no trace file, no drain thread (soft_ring.c) */
        rt.fd = -1;
        rt.pid = (uint32_t)getpid();
        timebase_init();
        if (ticker_start() < 0) /* PTCALL_CLOCK=ticker (soft_ticker.c) */
            return -1;
        rt.ring_start_tsc = rdtsc_();
        if (drain_start() < 0) /* ring mode: the encoder's buffer only */
            return -1;
        (void)ring_writer_start(); /* without it, snapshots are forked */
        install_signals();
        wrap_program_handlers();
        atomic_store(&rt.active, 1);
        return 0;
    }
    if (rt.counting) { /* no drain, no buffers; the trace file only when one was named */
        if (rt.output[0] && open_trace_file() < 0)
            return -1;
        rt.pid = (uint32_t)getpid();
        rt.start_how = start_how();
        if (rt.fd >= 0) {
            timebase_init();
            write_process_start();
            install_signals(); /* a crash writes its segment */
            sanitizer_death_init(); /* so does a sanitizer's report */
        }
        atomic_store(&rt.active, 1);
        return 0;
    }
    if (open_trace_file() < 0)
        return -1;
    rt.pid = (uint32_t)getpid();
    rt.start_how = start_how();
    timebase_init();
    if (ticker_start() < 0) /* PTCALL_CLOCK=ticker (soft_ticker.c) */
        return -1;
    write_process_start();
    budget_write_previous(); /* record --overhead --from-counts: its choice, said */
    blocking_write_module(); /* the [blocking] module first: its stub ids came first */
    if (drain_start() < 0)
        return -1;
    install_signals();
    sanitizer_death_init(); /* a sanitizer's report ends the process without a signal */
    /* before any event: a program handler may interrupt a reservation (soft_resume.c) */
    wrap_program_handlers();
    atomic_store(&rt.active, 1);
    blocking_set_handler(rt.handler_id);
    return 0;
}

/* Writes a 16-byte stub slot: bytes past the first 8 first (not reachable until the first
 * 8 change), then the first 8 in one store, so a thread running the stub meanwhile sees the
 * old `ret` or the whole new code. */
static void write_stub(uint8_t *p, const uint8_t code[16])
{
    uint64_t lo, hi;
    memcpy(&lo, code, 8);
    memcpy(&hi, code + 8, 8);
    __atomic_store_n((uint64_t *)(p + 8), hi, __ATOMIC_RELEASE);
    __atomic_store_n((uint64_t *)p, lo, __ATOMIC_RELEASE);
}

/* Patches the stub at a: with id_tag (PTCALL_MAP_F_SCRATCH_R11 units) to
 * `[endbr64] movl $id_tag, %r11d; jmp *slot(%rip)` (exactly 16 bytes with endbr64), else to
 * `[endbr64] call *slot(%rip); ret`. 0, -1 when the stub does not hold `ret`, -2 when the
 * slot is out of rel32 reach. */
static int patch_stub(uint64_t a, uint64_t slot, uint32_t id_tag)
{
    uint8_t *p = (uint8_t *)(uintptr_t)a;
    int off = (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) ? 4 : 0;
    if ((p[off] == 0xff && p[off + 1] == 0x15) || (p[off] == 0x41 && p[off + 1] == 0xbb))
        return 0; /* already patched */
    if (p[off] != 0xc3)
        return -1;
    uint8_t code[16];
    memcpy(code, p, 16);
    int jmp_at = off + (id_tag ? 6 : 0);
    int64_t rel = (int64_t)slot - (int64_t)(a + (uint64_t)jmp_at + 6);
    if (rel < INT32_MIN || rel > INT32_MAX)
        return -2;
    int32_t r32 = (int32_t)rel;
    if (id_tag) {
        code[off] = 0x41; /* movl $imm32, %r11d */
        code[off + 1] = 0xbb;
        memcpy(code + off + 2, &id_tag, 4);
        code[jmp_at] = 0xff; /* jmp *rel32(%rip) */
        code[jmp_at + 1] = 0x25;
    } else {
        code[off] = 0xff; /* call *rel32(%rip) */
        code[off + 1] = 0x15;
        code[off + 6] = 0xc3;
    }
    memcpy(code + jmp_at + 2, &r32, 4);
    write_stub(p, code);
    return 0;
}

struct reg_ctx {
    struct object *o;       /* NULL in arm-only mode */
    uint32_t next_id;
    int bad_code, far;
    uint64_t stubs_start, stubs_end; /* the object's stub section */
    uint64_t sites_start, sites_end; /* the object's sled table (every v3 unit names it) */
    uint8_t *slot_use; /* per stub slot, SLOT_*: what its sites become (NULL: plain calls) */
    uint32_t func_base;  /* counting: the object-wide index of the unit's function 0 */
    int uncounted;       /* counting: stubs of units whose stubs cannot name a counter */
};

static void note_sites(struct reg_ctx *c, const struct ptc_map_unit *u)
{
    if (u->sites_end > u->sites_start) {
        c->sites_start = u->sites_start;
        c->sites_end = u->sites_end;
    }
}

/* Arms the object's sleds after its stubs are ready; says what it could not arm. Untimed,
 * the sites of units with a generated handler get trampolines when they can be placed. */
static void arm_sites(const struct reg_ctx *c, const char *path)
{
    if (c->sites_end <= c->sites_start)
        return;
    struct tramps tr = {0};
    if (c->o && c->o->kept_tr.base) /* attachable: the trampolines of an earlier attach */
        tr = c->o->kept_tr;
    else if (c->slot_use && rt.tramps && rt.counting)
        (void)count_tramps_build(c->o, c->slot_use, c->sites_start, c->sites_end, &tr);
    else if (c->slot_use && rt.tramps) /* on failure tr stays empty: sites call their stubs */
        (void)tramps_build(c->o, c->slot_use, c->sites_start, c->sites_end, &tr);
    if (c->o && rt.attachable) /* never unmapped: a thread may still run one after detach */
        c->o->kept_tr = tr;
    struct arm_plan plan = {.tramps = &tr, .count_tramps = c->o ? &c->o->count_tr : NULL,
                            .stubs_start = c->stubs_start,
                            .stubs_end = c->stubs_end, .slot_use = c->slot_use};
    struct sites_result r = {0};
    int e = sites_switch(c->sites_start, c->sites_end, 1, &plan, &r);
    if (rt.debug)
        warn("ptcall[%d]: %s: %llu call sites: %llu use trampolines, %d leaf exits left "
             "unarmed, %d sites %s left unarmed",
             (int)getpid(), path,
             (unsigned long long)((c->sites_end - c->sites_start) /
                                  sizeof(struct ptcall_map_site)),
             (unsigned long long)tr.made, r.quiet, r.off,
             rt.counting ? "not counted (exits, functions not chosen)"
                         : "of functions not chosen");
    if (e < 0)
        warn("ptcall: %s: cannot make code writable to arm %d call sites (%s); those are not "
             "traced", path, r.unpatched, strerror(r.prot_errno));
    if (r.bad_code)
        warn("ptcall: %s: %d call sites hold neither a sled nor a call; left alone", path,
             r.bad_code);
    if (r.far)
        warn("ptcall: %s: %d call sites are out of reach of their stubs; left alone", path, r.far);
}

static int note_sites_unit(void *ctx, const struct ptc_map_unit *u)
{
    note_sites(ctx, u);
    return 0;
}

static int fill_ids(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    note_sites(c, u);
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        c->o->ids[stub_slot(c->o, a)] = c->next_id++;
    }
    return 0;
}

/* Counting mode: marks which stubs of unit u count. Entry stubs count (their slot gets the
 * function's counter index in o->ids); every other stub, and every stub of a unit whose
 * stubs cannot pass an index (no %r11 to give up), stays `ret` behind disarmed sites. 1
 * when the unit has nothing to patch. */
static int count_unit(struct reg_ctx *c, const struct ptc_map_unit *u)
{
    int by_id = (u->hdr.flags & PTCALL_MAP_F_SCRATCH_R11) && u->hdr.soft_slot_rel != 0;
    int counted = c->o->num_funcs != 0; /* else out of counters (said at registration) */
    by_id = by_id && counted;
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        uint64_t k = stub_slot(c->o, a);
        uint64_t idx = c->o->first_counter + c->func_base + st.func_index;
        if (by_id && (st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_ENTRY &&
            idx < COUNTERS_MAX) {
            c->o->ids[k] = (uint32_t)idx;
        } else {
            c->o->ids[k] = UINT32_MAX;
            c->slot_use[k] |= SLOT_OFF;
            if (counted && (st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_ENTRY)
                c->uncounted++;
        }
    }
    c->func_base += u->hdr.num_funcs;
    return !by_id;
}

static int patch_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    note_sites(c, u); /* an attach's context saw no fill_ids walk */
    /* first: the unit's functions take their counter indices even when it has no stubs */
    if (rt.counting && count_unit(c, u))
        return 0;
    if (!u->hdr.num_stubs)
        return 0;
    if (u->hdr.soft_slot_rel == 0) { /* no slot: leave this unit's stubs alone */
        c->far += (int)u->hdr.num_stubs;
        return 0;
    }
    int by_id = (u->hdr.flags & PTCALL_MAP_F_SCRATCH_R11) != 0;
    for (uint32_t i = 0; i < u->hdr.num_stubs && by_id; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        uint32_t id = c->o->ids[stub_slot(c->o, a)];
        if (id > RECORD_ID_MAX && !(rt.counting && id == UINT32_MAX)) /* counting: unused */
            by_id = 0; /* more stubs than a 32-bit immediate can tag: address records */
    }
    /* a gated unit's call sites start calling its stubs here; they are still `ret` */
    uintptr_t handler = (uintptr_t)rt.handler;
    if (by_id)
        handler = (u->hdr.flags & PTCALL_MAP_F_SCRATCH_R10) ? (uintptr_t)rt.handler_fast
                                                            : (uintptr_t)rt.handler_id;
    __atomic_store_n((uint64_t *)(uintptr_t)u->slot_addr, (uint64_t)handler, __ATOMIC_RELEASE);
    /* rt.tramps implies the generated handler */
    int fast = rt.tramps && by_id && (u->hdr.flags & PTCALL_MAP_F_SCRATCH_R10);
    /* counted beside tracing: mixed_plan marked the slots before the MODULE chunk */
    if (c->slot_use && ptc_select_active(&rt.sel) && !rt.mixed)
        select_mark_unit(u, c->stubs_start, c->slot_use, 1);
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        uint64_t k = stub_slot(c->o, a);
        uint8_t *use = c->slot_use ? &c->slot_use[k] : NULL;
        /* a function not chosen: its sites stay nops and its stubs `ret`, so that call sites
         * that always call their stubs (ungated units) record nothing either */
        if (use && (*use & SLOT_OFF))
            continue;
        /* the same test as the MODULE chunk's (ptc_map_build_module): a leaf's exit stays
         * disarmed exactly when its entry was announced as the whole call */
        if (use && rt.leaf_calls && ptc_map_leaf_quiet(u, &st) &&
            (st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_EXIT)
            *use = SLOT_QUIET;
        else if (use && fast)
            *use = SLOT_TRAMP;
        uint32_t tag = by_id ? c->o->ids[k] << 4 | RECORD_ID_TAG : 0;
        uint64_t slot = u->slot_addr;
        /* record --trigger: the watched function's stubs jump through the trigger's slot,
         * and its sites call them (no trampoline, no quiet leaf exit) */
        uint64_t trig = by_id && trigger_active() ? trigger_slot(c->o, u, &st, c->o->ids[k]) : 0;
        if (trig) {
            slot = trig;
            if (use)
                *use = 0;
        }
        int r = patch_stub(a, slot, tag);
        if (r == -1)
            c->bad_code++;
        else if (r == -2)
            c->far++;
    }
    return 0;
}

/* Arm-only mode: make the slot of every v2 gated unit non-zero and arm the sleds of v3
 * units, so their call sites call their stubs (which stay `ret`). 1 is not a handler
 * address: no stub is patched to use it. */
static int arm_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    note_sites(c, u);
    if (c->slot_use)
        select_mark_unit(u, c->stubs_start, c->slot_use, 0);
    /* the same test as the Intel PT recorder's MODULE chunk (PTC_MAP_BUILD_LEAF_CALLS) */
    for (uint32_t i = 0; c->slot_use && rt.leaf_calls && i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        if (ptc_map_leaf_quiet(u, &st) && (st.kind & PTCALL_STUB_KIND_MASK) == PTCALL_STUB_EXIT)
            c->slot_use[(a - c->stubs_start) / PTCALL_STUB_STRIDE] |= SLOT_QUIET;
    }
    /* a gated unit is armed whole: its functions cannot be chosen one by one (the Intel PT
     * recorder's MODULE_ARMED chunk counts them all as armed) */
    if ((u->hdr.flags & PTCALL_MAP_F_GATED) && u->hdr.soft_slot_rel != 0)
        __atomic_store_n((uint64_t *)(uintptr_t)u->slot_addr, (uint64_t)1, __ATOMIC_RELEASE);
    return 0;
}

static void arm_object(const void *map_start, size_t map_size, uint64_t s0, uint64_t s1)
{
    /* every unit's constructor registers its object: arm each object's sleds once */
    static const void *armed[MAX_OBJECTS];
    static unsigned narmed;
    for (unsigned i = 0; i < narmed; i++)
        if (armed[i] == map_start)
            return;
    if (narmed < MAX_OBJECTS)
        armed[narmed++] = map_start;
    /* no final flush in this mode: say at exit which globs matched nothing */
    if (rt.armed_objects++ == 0 && ptc_select_active(&rt.sel)) {
        rt.pid = (uint32_t)getpid(); /* a fork child runs the handler too: it must not say it */
        runtime_atexit(select_report_unmatched);
    }
    size_t bad = 0;
    struct reg_ctx c = {.stubs_start = s0, .stubs_end = s0 + ((s1 - s0 + 15) & ~(uint64_t)15)};
    char path[PATH_MAX] = "";
    Dl_info di;
    if (dladdr(map_start, &di) && di.dli_fname)
        snprintf(path, sizeof(path), "%s", di.dli_fname);
    if (!path[0])
        exe_path(path);
    size_t nslots = (size_t)((c.stubs_end - s0) / PTCALL_STUB_STRIDE);
    if ((ptc_select_active(&rt.sel) || rt.leaf_calls) &&
        !(c.slot_use = map_anon(nslots ? nslots : 1))) {
        warn("ptcall: %s: out of memory for its call-site table; its call sites stay disarmed",
             path);
        return;
    }
    struct object_layout lay;
    char why[160];
    int e = object_layout(map_start, &lay, why, sizeof(why));
    if (e < 0)
        warn("ptcall: %s: %s; its call sites stay disarmed", path, why);
    else if ((e = ptc_map_walk_in(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1,
                                  &lay.obj, arm_unit, &c, &bad)) < 0)
        warn("ptcall: %s: corrupt ptcall_map section (%s at offset %zu); its call sites stay "
             "disarmed", path, ptc_map_strerror(e), bad);
    else
        arm_sites(&c, path);
    if (c.slot_use)
        munmap(c.slot_use, nslots ? nslots : 1);
}


/* The maps of the objects refused so far: every unit's constructor registers its object, and
 * an object is refused (said, and written) once. Under reg_mu. */
static const void *refused_maps[MAX_OBJECTS];
static unsigned nrefused_maps;

static int was_refused(const void *map_start)
{
    for (unsigned i = 0; i < nrefused_maps; i++)
        if (refused_maps[i] == map_start)
            return 1;
    return 0;
}

/* Leaves the instrumented object at path untraced for the reason fmt says: one line on stderr
 * and, where this process writes a trace, a MODULE_REFUSED chunk, so that readers say the
 * trace lacks that object's functions (docs/trace-format.md 4.16) instead of reading the run
 * as complete. A refusal before any object was traced starts tracing as a traced object
 * would: the chunk must follow this process's PROCESS chunk, and a program all of whose
 * objects are refused still leaves a trace that says why it holds nothing. Caller holds
 * reg_mu. */
/* Attachable: the objects refused while nobody was attached, said in each attach's trace. */
#define KEPT_REFUSALS 64
static struct kept_refusal {
    const void *map;
    char path[PTC_REFUSED_PATH_MAX];
    char reason[PTC_REFUSED_REASON_MAX];
} kept_refusals[KEPT_REFUSALS];
static unsigned nkept_refusals;

static void refuse(const void *map_start, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(const void *map_start, const char *path, const char *fmt, ...)
{
    if (nrefused_maps < MAX_OBJECTS)
        refused_maps[nrefused_maps++] = map_start;
    char reason[PTC_REFUSED_REASON_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (n < 0)
        snprintf(reason, sizeof(reason), "refused");
    if (rt.attachable && !atomic_load(&rt.active)) {
        /* untraced now: nothing to say to a program nobody traces; each attach says it in its
         * trace (objects_attach) and leaves the object alone (was_refused) */
        if (nkept_refusals < KEPT_REFUSALS) {
            struct kept_refusal *k = &kept_refusals[nkept_refusals++];
            k->map = map_start;
            snprintf(k->path, sizeof(k->path), "%s", path);
            snprintf(k->reason, sizeof(k->reason), "%s", reason);
        }
        return;
    }
    warn("ptcall: %s: %s; not traced", path, reason);
    if (!atomic_load(&rt.active) && activate() < 0) {
        rt.enabled = 0; /* as for a traced object: the trace cannot be written */
        return;
    }
    if (rt.fd >= 0) /* counting mode without a trace file writes none */
        write_module_refused(path, reason);
}

/* Starts tracing object o (its stub ids filled): its MODULE and MODULE_ARMED chunks, then its
 * stubs patched and its call sites armed. n: its index in rt.objs, published here before its
 * stubs are patched (the drain must know them before the first event); an object published
 * already (an attach) passes UINT32_MAX. Caller holds reg_mu, tracing active. */
static void object_arm(struct object *o, const struct object_layout *lay, uint32_t n)
{
    const void *map_start = o->map_start;
    size_t map_size = o->map_size;
    uint64_t s0 = o->stubs_start, s1 = o->stubs_end;
    const char *path = o->path;
    struct reg_ctx c = {.o = o, .next_id = o->first_stub_id, .stubs_start = o->stubs_start,
                        .stubs_end = o->stubs_end};
    size_t nslots = (size_t)((o->stubs_end - s0) / 16);
    int need_use = rt.leaf_calls || rt.counting || ptc_select_active(&rt.sel) || rt.mixed;
    if (rt.tramps || need_use) {
        c.slot_use = map_anon(nslots);
        if (!c.slot_use && need_use) {
            /* the MODULE chunk would announce whole calls whose exits then run, or functions
             * left out would be traced: give up */
            if (n != UINT32_MAX) {
                munmap(o->ids, (size_t)((o->stubs_end - s0) / 16) * sizeof(uint32_t));
                munmap(o, sizeof(*o));
            }
            refuse(map_start, path, "out of memory for its call-site table");
            return;
        }
    }
    if (rt.mixed && mixed_plan(o, lay, c.slot_use) < 0) {
        if (n != UINT32_MAX) {
            munmap(o->ids, (size_t)((o->stubs_end - s0) / 16) * sizeof(uint32_t));
            munmap(o, sizeof(*o));
        }
        munmap(c.slot_use, nslots);
        refuse(map_start, path, "out of memory for its table of counted functions");
        return;
    }
    if ((!rt.counting || rt.fd >= 0) && write_module(o)) {
        if (rt.mixed) /* the traced and the counted functions (soft_mixed.c) */
            mixed_write_module_chunks(o);
        else
            write_module_armed(o);
    } /* right behind it: which of its functions are traced */
    /* publish before patching: the drain must know the stubs before the first event */
    if (n != UINT32_MAX) {
        rt.objs[n] = o;
        atomic_store_explicit(&rt.nobjs, n + 1, memory_order_release);
    }
    if (code_writable(s0, s1) != 0) {
        /* its MODULE chunk is written: the MODULE_REFUSED chunk after it says its functions
         * were never armed */
        refuse(map_start, path, "cannot make the stub section writable (%s)", strerror(errno));
        if (c.slot_use)
            munmap(c.slot_use, nslots);
        return;
    }
    ptc_map_walk_in(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1, &lay->obj,
                    patch_unit, &c, NULL);
    code_executable(s0, s1);
    arm_sites(&c, path); /* the stubs are ready: now let the call sites reach them */
    if (c.slot_use)
        munmap(c.slot_use, nslots);
    if (c.bad_code)
        warn("ptcall: %s: %d stubs do not hold `ret`; left alone", path, c.bad_code);
    if (c.far)
        warn("ptcall: %s: %d stubs have no soft-handler slot in reach; left alone", path, c.far);
    if (c.uncounted)
        warn("ptcall: %s: %d functions are in units built before map version 2 (or by hand "
             "without %%r11 to give up): their calls are not counted", path, c.uncounted);
}

PTC_API void __ptcall_register_object(const void *map_start, const void *map_stop,
                                      const void *stubs_start, const void *stubs_stop)
{
    runtime_init();
    if (!map_start || map_stop <= map_start || stubs_stop <= stubs_start)
        return;
    if (rt.arm_only) {
        arm_object(map_start, (size_t)((const char *)map_stop - (const char *)map_start),
                   (uint64_t)(uintptr_t)stubs_start, (uint64_t)(uintptr_t)stubs_stop);
        return;
    }
    if (!rt.enabled || (atomic_load(&rt.finishing) && !rt.attachable))
        return;
    pthread_mutex_lock(&rt.reg_mu);
    /* attachable: a detach holds reg_mu and ends with `finishing` clear, so an object loaded
     * meanwhile is kept; still set, the process is ending (or a fork child) */
    if (atomic_load(&rt.finishing))
        goto out;
    uint32_t n = atomic_load(&rt.nobjs);
    for (uint32_t i = 0; i < n; i++)
        if (rt.objs[i]->map_start == map_start && atomic_load(&rt.objs[i]->live))
            goto out;
    if (was_refused(map_start)) /* another unit of an object already refused */
        goto out;
    size_t map_size = (size_t)((const char *)map_stop - (const char *)map_start);
    uint64_t s0 = (uint64_t)(uintptr_t)stubs_start, s1 = (uint64_t)(uintptr_t)stubs_stop;
    struct ptc_map_summary sum;
    size_t bad = 0;
    /* the object's extent and segments: a map that names places outside them would have the
     * runtime write or patch memory that is not there (docs/reliability.md) */
    struct object_layout lay;
    char why[160];
    int placed = object_layout(map_start, &lay, why, sizeof(why));
    int err = placed < 0 ? 0
                         : ptc_map_scan_in(map_start, map_size, (uint64_t)(uintptr_t)map_start,
                                           s0, s1, &lay.obj, &sum, &bad);
    Dl_info di;
    struct link_map *lm = NULL;
    char path[PATH_MAX] = "";
    uint64_t bias = 0;
    if (dladdr1(map_start, &di, (void **)&lm, RTLD_DL_LINKMAP) && lm) {
        bias = lm->l_addr;
        if (lm->l_name && lm->l_name[0])
            snprintf(path, sizeof(path), "%s", lm->l_name);
    }
    /* dlopen("./lib.so") leaves the loader a relative name; the trace is read elsewhere and
     * later, so name the object by its absolute path (the constructor runs inside dlopen,
     * in the directory the name is relative to) */
    char abs[PATH_MAX];
    if (path[0] && path[0] != '/' && realpath(path, abs))
        snprintf(path, sizeof(path), "%s", abs);
    if (!path[0])
        exe_path(path);
    if (placed < 0) {
        refuse(map_start, path, "%s", why);
        goto out;
    }
    if (err < 0) {
        refuse(map_start, path, "corrupt ptcall_map section (%s at offset %zu)",
               ptc_map_strerror(err), bad);
        goto out;
    }
    if (n >= MAX_OBJECTS) { /* after the checks: a damaged map says so first */
        refuse(map_start, path, "more than %d instrumented objects in one process",
               MAX_OBJECTS);
        goto out;
    }
    if (!rt.attachable && !atomic_load(&rt.active) && activate() < 0) {
        rt.enabled = 0;
        goto out;
    }
    struct object *o = map_anon(sizeof(*o));
    if (!o) {
        refuse(map_start, path, "out of memory for its object record");
        goto out;
    }
    o->map_start = map_start;
    o->map_size = map_size;
    o->stubs_start = s0;
    o->stubs_end = s0 + ((s1 - s0 + 15) & ~(uint64_t)15);
    size_t ids_bytes = (size_t)((o->stubs_end - s0) / 16) * sizeof(uint32_t);
    o->ids = map_anon(ids_bytes);
    if (!o->ids) {
        munmap(o, sizeof(*o));
        refuse(map_start, path, "out of memory for its stub table");
        goto out;
    }
    memset(o->ids, 0xff, ids_bytes);
    o->module_id = n;
    o->first_stub_id = rt.next_stub_id;
    o->load_bias = bias;
    snprintf(o->path, sizeof(o->path), "%s", path);
    o->unload.it.type = IT_UNLOAD;
    atomic_store(&o->live, 1);
    rt.next_stub_id += sum.num_stubs;
    o->identity = sum.identity;
    o->total_funcs = sum.num_funcs;
    if ((rt.counting || rt.mixed) && rt.ncounters + sum.num_funcs <= COUNTERS_MAX) {
        o->first_counter = rt.ncounters;
        o->num_funcs = sum.num_funcs;
        rt.ncounters += sum.num_funcs;
    } else if (rt.counting || rt.mixed) {
        warn("ptcall: %s: more than %u functions in all: its calls are not counted", path,
             COUNTERS_MAX);
    }
    struct reg_ctx c = {.o = o, .next_id = o->first_stub_id, .stubs_start = o->stubs_start,
                        .stubs_end = o->stubs_end};
    ptc_map_walk_in(map_start, map_size, (uint64_t)(uintptr_t)map_start, s0, s1, &lay.obj,
                    fill_ids, &c, NULL);
    if (rt.counting)
        counts_blocks_register(o, map_start, map_size, s0, s1, &lay.obj);
    if (rt.attachable && !atomic_load(&rt.active)) {
        /* not traced now: kept, with its stub ids, for an attach (soft_attach.c) */
        rt.objs[n] = o;
        atomic_store_explicit(&rt.nobjs, n + 1, memory_order_release);
        goto out;
    }
    object_arm(o, &lay, n);
out:
    pthread_mutex_unlock(&rt.reg_mu);
}

PTC_API void __ptcall_unregister_object(const void *map_start)
{
    if (!rt.enabled)
        return;
    /* attachable: an object unloaded while detached must never be armed by a later attach */
    if (!rt.attachable && (!atomic_load(&rt.active) || atomic_load(&rt.finishing)))
        return;
    pthread_mutex_lock(&rt.reg_mu);
    /* a refused object unloaded: another may be loaded at its address later */
    for (unsigned i = 0; i < nkept_refusals;) {
        if (kept_refusals[i].map == map_start)
            kept_refusals[i] = kept_refusals[--nkept_refusals];
        else
            i++;
    }
    for (unsigned i = 0; i < nrefused_maps;) {
        if (refused_maps[i] == map_start)
            refused_maps[i] = refused_maps[--nrefused_maps];
        else
            i++;
    }
    uint32_t n = atomic_load(&rt.nobjs);
    for (uint32_t i = n; i-- > 0;) {
        struct object *o = rt.objs[i];
        if (o->map_start == map_start && atomic_load(&o->live)) {
            atomic_store(&o->live, 0);
            if (rt.counting) /* no drain: its counts stay until the next COUNTS chunk */
                break;
            if (!atomic_load(&rt.active) || atomic_load(&rt.finishing))
                break; /* attachable, not attached: no trace to say it in */
            /* the caller's own events so far belong before the unload */
            hand_over_current(traced_thread());
            o->unload.tsc = rdtsc_();
            push(&o->unload.it);
            break;
        }
    }
    pthread_mutex_unlock(&rt.reg_mu);
}

/* ---- a budget's pilot (soft_pilot.c) --------------------------------------------------- */

int object_rearm(struct object *o)
{
    if (!atomic_load(&o->live) || was_refused(o->map_start))
        return 0;
    struct object_layout lay;
    char why[160];
    if (object_layout(o->map_start, &lay, why, sizeof(why)) < 0) {
        warn("ptcall: %s: %s: its functions stay counted, none traced", o->path, why);
        return -1;
    }
    struct reg_ctx c = {.o = o, .next_id = o->first_stub_id, .stubs_start = o->stubs_start,
                        .stubs_end = o->stubs_end};
    size_t nslots = (size_t)((o->stubs_end - o->stubs_start) / 16);
    c.slot_use = map_anon(nslots);
    if (!c.slot_use || mixed_plan(o, &lay, c.slot_use) < 0) {
        warn("ptcall: %s: out of memory for its call-site table: its functions stay counted, "
             "none traced", o->path);
        if (c.slot_use)
            munmap(c.slot_use, nslots);
        return -1;
    }
    if (code_writable(o->stubs_start, o->stubs_end) != 0) {
        warn("ptcall: %s: cannot make the stub section writable (%s): its functions stay "
             "counted, none traced", o->path, strerror(errno));
        munmap(c.slot_use, nslots);
        return -1;
    }
    /* the chosen functions' stubs first, then their sites: no call reaches a stub before it
     * is ready */
    ptc_map_walk_in(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                    o->stubs_start, o->stubs_end, &lay.obj, patch_unit, &c, NULL);
    code_executable(o->stubs_start, o->stubs_end);
    arm_sites(&c, o->path);
    munmap(c.slot_use, nslots);
    if (c.bad_code || c.far)
        warn("ptcall: %s: %d stubs could not be armed after the pilot; left alone", o->path,
             c.bad_code + c.far);
    return 0;
}

/* ---- attach and detach (soft_attach.c) ------------------------------------------------ */

/* Arms every live object kept while the runtime was inactive: its MODULE chunks, stubs and
 * call sites, as registration does for a traced run. Caller holds reg_mu, tracing active. */
void objects_attach(void)
{
    uint32_t n = atomic_load(&rt.nobjs);
    rt.cache = NULL;
    for (unsigned i = 0; i < nkept_refusals; i++)
        if (was_refused(kept_refusals[i].map)) /* not unloaded since */
            write_module_refused(kept_refusals[i].path, kept_refusals[i].reason);
    for (uint32_t i = 0; i < n; i++) {
        struct object *o = rt.objs[i];
        o->drain_dead = !atomic_load(&o->live);
        if (o->drain_dead || was_refused(o->map_start))
            continue;
        struct object_layout lay;
        char why[160];
        if (object_layout(o->map_start, &lay, why, sizeof(why)) < 0) {
            refuse(o->map_start, o->path, "%s", why);
            continue;
        }
        object_arm(o, &lay, UINT32_MAX);
    }
}

/* Puts `ret` back as the stub's first instruction (after its endbr64): one 8-byte store, so
 * a thread running the stub meanwhile sees the whole old or the whole new code (the bytes
 * behind `ret` are never reached). */
static void unpatch_stub(uint64_t a)
{
    uint8_t *p = (uint8_t *)(uintptr_t)a;
    int off = (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa) ? 4 : 0;
    if (!((p[off] == 0xff && p[off + 1] == 0x15) || (p[off] == 0x41 && p[off + 1] == 0xbb)))
        return; /* never patched (not chosen, or left alone) */
    uint64_t lo;
    memcpy(&lo, p, 8);
    ((uint8_t *)&lo)[off] = 0xc3;
    __atomic_store_n((uint64_t *)p, lo, __ATOMIC_RELEASE);
}

static int unpatch_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct reg_ctx *c = ctx;
    note_sites(c, u);
    for (uint32_t i = 0; i < u->hdr.num_stubs; i++) {
        struct ptcall_map_stub st;
        uint64_t a;
        ptc_map_get_stub(u, i, &st, &a);
        unpatch_stub(a);
    }
    return 0;
}

/* Disarms every live object's call sites and puts its stubs back to `ret`: the process runs
 * at the untraced build's cost again (v2 gated units keep calling their `ret` stubs: their
 * slot, which a stub may be reading, is never cleared). Caller holds reg_mu. Returns the
 * stubs' objects switched. */
int objects_detach(void)
{
    uint32_t n = atomic_load(&rt.nobjs);
    int done = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct object *o = rt.objs[i];
        if (!atomic_load(&o->live) || was_refused(o->map_start))
            continue;
        struct object_layout lay;
        char why[160];
        if (object_layout(o->map_start, &lay, why, sizeof(why)) < 0)
            continue; /* it was never armed either (objects_attach refused it) */
        struct reg_ctx c = {.o = o, .stubs_start = o->stubs_start, .stubs_end = o->stubs_end};
        /* the sites first: no call reaches a stub while it changes back */
        ptc_map_walk_in(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                        o->stubs_start, o->stubs_end, &lay.obj, note_sites_unit, &c, NULL);
        if (c.sites_end > c.sites_start) {
            struct sites_result r = {0};
            if (sites_switch(c.sites_start, c.sites_end, 0, NULL, &r) < 0)
                warn("ptcall: %s: cannot make code writable to disarm %d call sites (%s): they "
                     "still call their stubs, which return at once", o->path, r.unpatched,
                     strerror(r.prot_errno));
        }
        if (code_writable(o->stubs_start, o->stubs_end) != 0) {
            warn("ptcall: %s: cannot make the stub section writable (%s): its stubs still "
                 "call the handler, which records nothing while detached", o->path,
                 strerror(errno));
            continue;
        }
        ptc_map_walk_in(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                        o->stubs_start, o->stubs_end, &lay.obj, unpatch_unit, &c, NULL);
        code_executable(o->stubs_start, o->stubs_end);
        done++;
    }
    return done;
}
