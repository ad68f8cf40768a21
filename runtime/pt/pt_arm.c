/* Arming and disarming the call sites of a running process from outside (docs/map-format.md,
 * "Call-site sleds" and "Gated call sites"): `ptcall arm PID`, and `ptcall record --pid` for a
 * process that was not started with PTCALL_ARM=1. For every instrumented module mapped in the
 * process, the units are found through the module's ptcall_map section (read from its file)
 * and the load bias of the mapping that holds its stubs.
 * - v3 units (sleds): every sled of the module's ptcall_sites table (read from the process)
 *   gets `call stub` (arm) or the nop back (disarm), one aligned 8-byte word per sled written
 *   through /proc/PID/mem, which may write the process's read-only code (as a debugger does).
 * - v2 units (gated by their slot): the slot is written with process_vm_writev, 0 -> 1 to arm,
 *   1 -> 0 to disarm. Slots holding a soft handler's address (a process traced by the
 *   software backend) are left alone. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "ptc_map_read.h"
#include "ptc_sled.h"
#include "ptc_pt_rec.h"
#include "ptcall/map_format.h"
#include "ptc_record_options.h"

struct arm_walk {
    pid_t pid;
    int on;
    uint64_t from, to; /* write `to` into v2 slots that hold `from` */
    int changed, gated, err;
    uint64_t sites_start, sites_end; /* the module's sled table (v3), in the process */
};

static int slot_rw(pid_t pid, uint64_t addr, uint64_t *val, int write)
{
    struct iovec local = {val, sizeof(*val)};
    struct iovec remote = {(void *)(uintptr_t)addr, sizeof(*val)};
    ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                      : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return n == (ssize_t)sizeof(*val) ? 0 : -1;
}

/* One nop sled: 1 if changed, 0 if already so or not a sled we know (left alone), -1 */
static int switch_sled(int fd, uint64_t site, uint64_t stub, int on)
{
    uint64_t word, now;
    off_t at = (off_t)ptc_sled_word_addr(site);
    if (pread(fd, &word, 8, at) != 8)
        return -1;
    if (ptc_sled_patch(site, stub, on, word, &now) != PTC_SLED_CHANGED)
        return 0;
    return pwrite(fd, &now, 8, at) == 8 ? 1 : -1;
}

/* One ret sled (map v5), armed as `jmp stub`: one write of its aligned word when it fits in
 * one, else the ordered steps of ptc_ret_sled_steps (the opcode byte last). */
static int switch_ret_sled(int fd, uint64_t site, uint64_t stub, int on)
{
    uint8_t cur[PTC_RET_SLED_SIZE], out[PTC_RET_SLED_SIZE];
    if (pread(fd, cur, sizeof(cur), (off_t)site) != (ssize_t)sizeof(cur))
        return -1;
    if (ptc_ret_sled_patch(site, stub, on, cur, out) != PTC_SLED_CHANGED)
        return 0;
    if (ptc_ret_sled_fits(site)) {
        uint64_t word;
        off_t at = (off_t)ptc_sled_word_addr(site);
        if (pread(fd, &word, 8, at) != 8)
            return -1;
        memcpy((uint8_t *)&word + (site & 7), out, sizeof(out));
        return pwrite(fd, &word, 8, at) == 8 ? 1 : -1;
    }
    struct ptc_ret_step steps[3];
    int n = ptc_ret_sled_steps(cur, out, steps);
    for (int k = 0; k < n; k++)
        if (pwrite(fd, steps[k].bytes, steps[k].len, (off_t)(site + steps[k].off)) !=
            (ssize_t)steps[k].len)
            return -1;
    return 1;
}

/* Arms or disarms every sled of [w->sites_start, w->sites_end) in the process. A unit counts
 * as changed when at least one of its module's sleds did (reported per module). */
static int switch_sleds(struct arm_walk *w, int units)
{
    uint64_t bytes = w->sites_end - w->sites_start;
    uint8_t *table = malloc(bytes ? bytes : 1);
    char mem_path[64];
    snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", (int)w->pid);
    int fd = open(mem_path, O_RDWR | O_CLOEXEC);
    if (!table || fd < 0 ||
        pread(fd, table, bytes, (off_t)w->sites_start) != (ssize_t)bytes) {
        w->err = errno ? errno : EIO;
        free(table);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int changed = 0;
    for (uint64_t i = 0; i < bytes / sizeof(struct ptcall_map_site) && !w->err; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry(table, w->sites_start, i, &site, &stub, &ret_sled);
        int e = ret_sled ? switch_ret_sled(fd, site, stub, w->on)
                         : switch_sled(fd, site, stub, w->on);
        if (e < 0)
            w->err = errno ? errno : EIO;
        else
            changed |= e;
    }
    free(table);
    close(fd);
    if (w->err)
        return -1;
    w->gated += units;
    if (changed)
        w->changed += units;
    return 0;
}

static int arm_unit_cb(void *ctx, const struct ptc_map_unit *u)
{
    struct arm_walk *w = ctx;
    if (u->hdr.flags & PTCALL_MAP_F_SLEDS) {
        w->sites_start = u->sites_start;
        w->sites_end = u->sites_end;
        return 0;
    }
    if (!(u->hdr.flags & PTCALL_MAP_F_GATED) || u->hdr.soft_slot_rel == 0)
        return 0;
    w->gated++;
    uint64_t v = 0;
    if (slot_rw(w->pid, u->slot_addr, &v, 0) < 0) {
        w->err = errno;
        return -1;
    }
    if (v != w->from)
        return 0;
    v = w->to;
    if (slot_rw(w->pid, u->slot_addr, &v, 1) < 0) {
        w->err = errno;
        return -1;
    }
    w->changed++;
    return 0;
}

/* One module mapped at [start, start+len) from file offset pgoff. */
static int arm_module(pid_t pid, const char *path, uint64_t start, uint64_t len, uint64_t pgoff,
                      struct arm_walk *w, char *why, size_t why_size)
{
    struct ptc_pt_elf_sections sec;
    char ewhy[256];
    if (ptc_pt_elf_sections(path, &sec, ewhy, sizeof(ewhy)) < 0 || !sec.has_stubs ||
        !sec.has_map)
        return 0; /* not instrumented (or not an ELF file we can read): nothing to arm */
    if (sec.stubs_offset < pgoff || sec.stubs_offset >= pgoff + len)
        return 0; /* this mapping does not hold the stubs */
    uint64_t bias = start + (sec.stubs_offset - pgoff) - sec.stubs_addr;
    uint8_t *map = malloc(sec.map_size ? sec.map_size : 1);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!map || fd < 0 ||
        pread(fd, map, sec.map_size, (off_t)sec.map_offset) != (ssize_t)sec.map_size) {
        snprintf(why, why_size, "cannot read the ptcall_map section of %s: %s", path,
                 strerror(errno));
        free(map);
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    size_t bad = 0;
    w->sites_start = w->sites_end = 0;
    int e = ptc_map_walk(map, sec.map_size, sec.map_addr + bias, 0, 0, arm_unit_cb, w, &bad);
    free(map);
    if (e > 0 && w->sites_end > w->sites_start)
        switch_sleds(w, e);
    if (w->err) {
        snprintf(why, why_size, "cannot write to process %d: %s%s", (int)pid, strerror(w->err),
                 w->err == EPERM ? " (it is not yours, or ptrace is restricted: "
                                   "/proc/sys/kernel/yama/ptrace_scope; try as root)"
                                 : "");
        return -1;
    }
    if (e < 0) {
        snprintf(why, why_size, "%s: ptcall_map is unreadable (%s at offset %zu)", path,
                 ptc_map_strerror(e), bad);
        return -1;
    }
    return 0;
}

int arm_process(int pid, int on, int *changed, int *gated, char *why, size_t why_size)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", pid);
    FILE *f = fopen(path, "re");
    if (!f) {
        snprintf(why, why_size, "no process %d (%s)", pid, strerror(errno));
        return -1;
    }
    struct arm_walk w = {.pid = (pid_t)pid, .on = on, .from = on ? 0 : 1, .to = on ? 1 : 0};
    char line[4352];
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        uint64_t lo, hi, off;
        char perms[8], file[4096];
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %4095s", &lo, &hi,
                   perms, &off, file) != 5 || file[0] != '/' || !strchr(perms, 'x'))
            continue;
        rc = arm_module(pid, file, lo, hi - lo, off, &w, why, why_size);
    }
    fclose(f);
    if (changed)
        *changed = w.changed;
    if (gated)
        *gated = w.gated;
    return rc;
}
