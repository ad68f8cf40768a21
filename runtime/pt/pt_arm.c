/* Arming and disarming the call sites of a running process from outside (docs/map-format.md,
 * "Call-site sleds" and "Gated call sites"; docs/pt.md, "Arming"): `ptcall arm PID`, and
 * `ptcall record --pid` for a process that was not started with PTCALL_ARM=1. For every
 * instrumented module mapped in the process, the units are found through the module's
 * ptcall_map section and the load bias of the mapping that holds its stubs.
 * - The module is read from the object the process mapped, never from whatever has its name
 *   now: through /proc/PID/map_files/START-END (the mapped inode, even when the file was
 *   removed or replaced on disk; the kernel lets only CAP_SYS_ADMIN/CAP_CHECKPOINT_RESTORE
 *   open it), else through its path once fstat shows the device and inode that
 *   /proc/PID/maps gives for the mapping. A module that cannot be shown to be the mapped one
 *   is left alone with a warning. Either way its ptcall_map must equal the copy in the
 *   process's memory (the section is allocated and holds only relative offsets), so no
 *   address is ever taken from another layout.
 * - v3 units (sleds): every sled of the module's ptcall_sites table (read from the process)
 *   gets `call stub` (arm) or the nop back (disarm), one aligned 8-byte word per sled written
 *   through /proc/PID/mem, which may write the process's read-only code (as a debugger does).
 * - v2 units (gated by their slot): the slot is written with process_vm_writev, 0 -> 1 to arm,
 *   1 -> 0 to disarm. Slots holding a soft handler's address (a process traced by the
 *   software backend) are left alone.
 * - Before anything is written the map is checked against the module as the process maps it
 *   (its PT_LOAD pages): slots in writable segments, the sled table in a segment, every sled
 *   in an executable one calling a stub of ptcall_stubs. A map that fails (damaged, or naming
 *   places outside the module) leaves the module alone with a warning.
 * Every failure says which access failed and why, told apart by errno and by looking at the
 * process again: no such process, permission denied (whose process, which setting refuses),
 * the process exited meanwhile. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
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
    int mem;           /* /proc/PID/mem, read-write */
    struct arm_result res;
    arm_warn_fn *warn;
    void *warn_ctx;
    dev_t last_skip_dev; /* the object skipped last: one warning for its several mappings */
    uint64_t last_skip_ino;
    int err;            /* the first failed access to the process: errno, and what it was */
    char err_what[160];
    uint64_t sites_start, sites_end; /* the module's sled table (v3), in the process */
};

/* One mapping of a file, as /proc/PID/maps gives it. */
struct mapped {
    uint64_t lo, hi, pgoff, ino;
    unsigned dmaj, dmin;
    const char *path; /* without " (deleted)" */
    int deleted;      /* the kernel says the mapped file has no name any more */
};

/* ---- the process's state, for the messages ------------------------------------------- */

/* The state letter of /proc/PID/stat ('R', 'S', 'Z', ...), 0 when there is no such entry
 * (no such process, or /proc hides it), '?' when it cannot be read. */
static char proc_state(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ESRCH ? 0 : '?';
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return '?';
    buf[n] = 0;
    /* the command name in parentheses may hold anything, ')' too: the state follows the last */
    char *p = strrchr(buf, ')');
    return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/* Whether process pid has exited: reaped (kill says ESRCH) or a zombie. kill(pid, 0) alone
 * cannot tell, as it succeeds on a zombie; EPERM from it means the process exists. */
static int proc_exited(pid_t pid)
{
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return 1;
    char s = proc_state(pid);
    return s == 'Z' || s == 'X';
}

/* The second field of the "Uid:" line of /proc/PID/status (the effective user id), -1 if
 * unknown. That file is readable by everyone who may see the process. */
static long proc_euid(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    long uid = -1, real;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "Uid: %ld %ld", &real, &uid) == 2)
            break;
    if (f)
        fclose(f);
    return uid;
}

/* /proc/sys/kernel/yama/ptrace_scope, or -1 without Yama. */
static int yama_scope(void)
{
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    int v = -1;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = -1;
        fclose(f);
    }
    return v;
}

/* What to do when the kernel refused us process pid (EPERM, EACCES): whose it is, and the
 * settings that refuse even its owner. Writing into a process takes what attaching a
 * debugger takes (PTRACE_MODE_ATTACH). */
/* Whose words: `ptcall arm`'s, or the attach's (proc_say_as) */
static const char *say_cmd = "ptcall arm", *say_doing;

static void perm_hint(pid_t pid, char *out, size_t n)
{
    long uid = proc_euid(pid);
    uid_t me = geteuid();
    struct stat st;
    int scope = yama_scope();
    int k;
    char self[64];
    snprintf(self, sizeof(self), "/proc/%d/stat", (int)pid);
    if (me != 0 && uid == 0)
        k = snprintf(out, n, "process %d runs as root: run %s as root", (int)pid,
                     say_cmd);
    else if (me != 0 && uid > 0 && (uid_t)uid != me)
        k = snprintf(out, n, "process %d runs as uid %ld and you are uid %u: run %s as "
                             "uid %ld or as root",
                     (int)pid, uid, (unsigned)me, say_cmd, uid);
    else if (me != 0 && uid > 0 && stat(self, &st) == 0 && st.st_uid == 0)
        /* the kernel makes root the owner of the files (not the directory) in /proc/PID
         * of a process that is not dumpable */
        k = snprintf(out, n, "process %d is not dumpable (a set-user-ID or set-group-ID "
                             "program, or prctl(PR_SET_DUMPABLE, 0)): only root can %s it",
                     (int)pid, say_doing ? "attach to" : "arm");
    else if (me == 0)
        k = snprintf(out, n, "even root was refused: by Yama, a security module (SELinux, "
                             "AppArmor) or because the process lives in another user namespace");
    else if (scope >= 1)
        k = snprintf(out, n, "the process is yours, but Yama refuses"); /* said next */
    else
        k = snprintf(out, n, "run %s as the process's user or as root", say_cmd);
    if (k < 0 || (size_t)k >= n)
        return;
    if (scope == 1 && me != 0)
        snprintf(out + k, n - (size_t)k, "; /proc/sys/kernel/yama/ptrace_scope=1 lets only a "
                                         "process's ancestors attach to it: run as root "
                                         "(CAP_SYS_PTRACE) or set it to 0");
    else if (scope == 2 && me != 0)
        snprintf(out + k, n - (size_t)k, "; /proc/sys/kernel/yama/ptrace_scope=2 lets only root "
                                         "(CAP_SYS_PTRACE) attach to a process");
    else if (scope == 3)
        snprintf(out + k, n - (size_t)k, "; /proc/sys/kernel/yama/ptrace_scope=3 forbids "
                                         "attaching to any process, even as root, until reboot");
}

/* The message for a failed access to process pid (errno e; what: the access) once the
 * process was found: the process may have exited since, and a refusal says what to do. */
static void say_failure(pid_t pid, int on, int e, const char *what, char *why, size_t n)
{
    char hint[512];
    if (proc_exited(pid)) {
        snprintf(why, n, "process %d exited while it was being %s (%s: %s)", (int)pid,
                 say_doing ? say_doing : on ? "armed" : "disarmed", what, strerror(e));
    } else if (e == EPERM || e == EACCES) {
        perm_hint(pid, hint, sizeof(hint));
        snprintf(why, n, "permission denied: %s: %s; %s", what, strerror(e), hint);
    } else if (e == EIO && !strncmp(what, "writing", 7)) {
        snprintf(why, n, "%s: %s (does the kernel forbid writing code through /proc/PID/mem? "
                         "proc_mem.force_override=never on its command line does)",
                 what, strerror(e));
    } else {
        snprintf(why, n, "%s: %s", what, strerror(e));
    }
}

static void fail_access(struct arm_walk *w, int e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Notes the first failed access: errno e and what was done. */
static void fail_access(struct arm_walk *w, int e, const char *fmt, ...)
{
    if (w->err)
        return;
    w->err = e ? e : EIO;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err_what, sizeof(w->err_what), fmt, ap);
    va_end(ap);
}

static void skip_object(struct arm_walk *w, dev_t dev, uint64_t ino, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Leaves an object alone, with one warning (also for an object mapped several times). */
static void skip_object(struct arm_walk *w, dev_t dev, uint64_t ino, const char *fmt, ...)
{
    if (w->res.skipped && w->last_skip_dev == dev && w->last_skip_ino == ino)
        return;
    w->res.skipped++;
    w->last_skip_dev = dev;
    w->last_skip_ino = ino;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (w->warn)
        w->warn(w->warn_ctx, msg);
}

/* ---- reading and writing the process ------------------------------------------------- */

/* Reads n bytes of the process at addr through /proc/PID/mem. 0, or -1 with errno: a short
 * read means the address is not mapped (EIO), none at all that the process has no memory
 * any more (it exited: ESRCH). */
static int mem_read(int fd, void *buf, size_t n, uint64_t addr)
{
    ssize_t got = pread(fd, buf, n, (off_t)addr);
    if (got == (ssize_t)n)
        return 0;
    if (got >= 0)
        errno = got == 0 && n ? ESRCH : EIO;
    return -1;
}

static int mem_write(int fd, const void *buf, size_t n, uint64_t addr)
{
    ssize_t put = pwrite(fd, buf, n, (off_t)addr);
    if (put == (ssize_t)n)
        return 0;
    if (put >= 0)
        errno = put == 0 && n ? ESRCH : EIO;
    return -1;
}

static int slot_rw(pid_t pid, uint64_t addr, uint64_t *val, int write)
{
    struct iovec local = {val, sizeof(*val)};
    struct iovec remote = {(void *)(uintptr_t)addr, sizeof(*val)};
    ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                      : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n == (ssize_t)sizeof(*val))
        return 0;
    if (n >= 0)
        errno = EFAULT; /* a partial transfer: the slot crosses into unmapped memory */
    return -1;
}

/* One nop sled: 1 if changed, 0 if already so or not a sled we know (left alone), -1 */
static int switch_sled(struct arm_walk *w, uint64_t site, uint64_t stub)
{
    uint64_t word, now, at = ptc_sled_word_addr(site);
    if (mem_read(w->mem, &word, 8, at) < 0) {
        fail_access(w, errno, "reading the sled at 0x%" PRIx64 " through /proc/%d/mem", site,
                    (int)w->pid);
        return -1;
    }
    if (ptc_sled_patch(site, stub, w->on, word, &now) != PTC_SLED_CHANGED)
        return 0;
    if (mem_write(w->mem, &now, 8, at) < 0) {
        fail_access(w, errno, "writing the sled at 0x%" PRIx64 " through /proc/%d/mem", site,
                    (int)w->pid);
        return -1;
    }
    return 1;
}

/* One ret sled (map v5), armed as `jmp stub`: one write of its aligned word when it fits in
 * one, else the ordered steps of ptc_ret_sled_steps (the opcode byte last). */
static int switch_ret_sled(struct arm_walk *w, uint64_t site, uint64_t stub)
{
    uint8_t cur[PTC_RET_SLED_SIZE], out[PTC_RET_SLED_SIZE];
    if (mem_read(w->mem, cur, sizeof(cur), site) < 0) {
        fail_access(w, errno, "reading the ret sled at 0x%" PRIx64 " through /proc/%d/mem",
                    site, (int)w->pid);
        return -1;
    }
    if (ptc_ret_sled_patch(site, stub, w->on, cur, out) != PTC_SLED_CHANGED)
        return 0;
    if (ptc_ret_sled_fits(site)) {
        uint64_t word, at = ptc_sled_word_addr(site);
        if (mem_read(w->mem, &word, 8, at) < 0) {
            fail_access(w, errno, "reading the ret sled at 0x%" PRIx64 " through /proc/%d/mem",
                        site, (int)w->pid);
            return -1;
        }
        memcpy((uint8_t *)&word + (site & 7), out, sizeof(out));
        if (mem_write(w->mem, &word, 8, at) < 0) {
            fail_access(w, errno, "writing the ret sled at 0x%" PRIx64 " through /proc/%d/mem",
                        site, (int)w->pid);
            return -1;
        }
        return 1;
    }
    struct ptc_ret_step steps[3];
    int n = ptc_ret_sled_steps(cur, out, steps);
    for (int k = 0; k < n; k++)
        if (mem_write(w->mem, steps[k].bytes, steps[k].len, site + steps[k].off) < 0) {
            fail_access(w, errno, "writing the ret sled at 0x%" PRIx64 " through /proc/%d/mem",
                        site, (int)w->pid);
            return -1;
        }
    return 1;
}

/* The module's sled table [w->sites_start, w->sites_end), read from the process; NULL after
 * fail_access. The caller frees it. */
static uint8_t *read_sled_table(struct arm_walk *w)
{
    uint64_t bytes = w->sites_end - w->sites_start;
    uint8_t *table = malloc(bytes ? bytes : 1);
    if (!table) {
        fail_access(w, ENOMEM, "reading the sled table (%" PRIu64 " bytes)", bytes);
        return NULL;
    }
    if (mem_read(w->mem, table, bytes, w->sites_start) < 0) {
        fail_access(w, errno, "reading the sled table at 0x%" PRIx64 " through /proc/%d/mem",
                    w->sites_start, (int)w->pid);
        free(table);
        return NULL;
    }
    return table;
}

/* Arms or disarms every sled of the module's table (read_sled_table, checked) in the
 * process. A unit counts as changed when at least one of its module's sleds did (reported
 * per module). Frees table. */
static int switch_sleds(struct arm_walk *w, uint8_t *table, int units)
{
    uint64_t bytes = w->sites_end - w->sites_start;
    int changed = 0;
    for (uint64_t i = 0; i < bytes / sizeof(struct ptcall_map_site) && !w->err; i++) {
        uint64_t site, stub;
        int ret_sled;
        ptc_sled_entry(table, w->sites_start, i, &site, &stub, &ret_sled);
        int e = ret_sled ? switch_ret_sled(w, site, stub) : switch_sled(w, site, stub);
        if (e > 0)
            changed = 1;
    }
    free(table);
    if (w->err)
        return -1;
    w->res.gated += units;
    if (changed)
        w->res.changed += units;
    return 0;
}

/* The module's sled table (every v3 unit names the same one) */
static int note_sites_cb(void *ctx, const struct ptc_map_unit *u)
{
    struct arm_walk *w = ctx;
    if (u->hdr.flags & PTCALL_MAP_F_SLEDS) {
        w->sites_start = u->sites_start;
        w->sites_end = u->sites_end;
    }
    return 0;
}

static int arm_unit_cb(void *ctx, const struct ptc_map_unit *u)
{
    struct arm_walk *w = ctx;
    if (u->hdr.flags & PTCALL_MAP_F_SLEDS)
        return 0;
    if (!(u->hdr.flags & PTCALL_MAP_F_GATED) || u->hdr.soft_slot_rel == 0)
        return 0;
    w->res.gated++;
    uint64_t v = 0;
    if (slot_rw(w->pid, u->slot_addr, &v, 0) < 0) {
        fail_access(w, errno, "reading the unit slot at 0x%" PRIx64 " (process_vm_readv)",
                    u->slot_addr);
        return -1;
    }
    if (v != w->from)
        return 0;
    v = w->to;
    if (slot_rw(w->pid, u->slot_addr, &v, 1) < 0) {
        fail_access(w, errno, "writing the unit slot at 0x%" PRIx64 " (process_vm_writev)",
                    u->slot_addr);
        return -1;
    }
    w->res.changed++;
    return 0;
}

/* ---- the object behind a mapping ------------------------------------------------------ */

/* Names that /proc/PID/maps marks "(deleted)" without a file ever having been there: memfd
 * (JIT code), System V shared memory, shared anonymous memory. Not replaced binaries. */
static int anonymous_file(const char *path)
{
    return !strncmp(path, "/memfd:", 7) || !strncmp(path, "/SYSV", 5) ||
           !strcmp(path, "/dev/zero");
}

/* Filesystems whose stat() may give another device (btrfs subvolumes) or inode (overlayfs)
 * than /proc/PID/maps for the same file: there the comparison of the ptcall_map with the
 * process's memory (always made) decides. */
static int fs_numbers_differ(int fd)
{
    struct statfs sf;
    if (fstatfs(fd, &sf) < 0)
        return 0;
    unsigned long type = (unsigned long)sf.f_type;
    return type == OVERLAYFS_SUPER_MAGIC || type == BTRFS_SUPER_MAGIC;
}

/* Opens the object mapped at m for reading. Returns the descriptor; -1 when the object is
 * left alone (warned, or silently when it is not a regular file); -2 with why when the
 * process has gone. */
static int open_mapped(struct arm_walk *w, const struct mapped *m, char *why, size_t why_size)
{
    const char *verb = w->on ? "armed" : "disarmed";
    dev_t dev = makedev(m->dmaj, m->dmin);
    char mf[96];
    snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)w->pid, m->lo,
             m->hi);
    /* the mapped inode itself, whatever happened to its name since */
    struct stat st;
    int fd = open(mf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd >= 0) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            return fd;
        close(fd); /* a device or the like: no ELF object to arm */
        return -1;
    }
    int mfe = errno;
    if (proc_exited(w->pid)) {
        say_failure(w->pid, w->on, mfe, "opening the mapped object through /proc/PID/map_files",
                    why, why_size);
        return -2;
    }
    char how[256];
    if (geteuid() == 0)
        snprintf(how, sizeof(how), "reading the mapped copy through %s was refused too (%s; "
                                   "it needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE in the "
                                   "initial user namespace): restart the process",
                 mf, strerror(mfe));
    else
        snprintf(how, sizeof(how), "run ptcall arm as root, which reads the mapped copy "
                                   "through /proc/%d/map_files, or restart the process",
                 (int)w->pid);
    if (m->deleted) {
        if (!anonymous_file(m->path))
            skip_object(w, dev, m->ino,
                        "%s was replaced on disk or removed since process %d mapped it "
                        "(/proc/%d/maps says \"(deleted)\"): its call sites, if any, were not "
                        "%s; %s",
                        m->path, (int)w->pid, (int)w->pid, verb, how);
        return -1;
    }
    fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT)
            skip_object(w, dev, m->ino,
                        "%s was replaced on disk or removed since process %d mapped it (it is "
                        "gone): its call sites, if any, were not %s; %s",
                        m->path, (int)w->pid, verb, how);
        else
            skip_object(w, dev, m->ino,
                        "cannot read %s, which process %d maps (%s): its call sites, if any, "
                        "were not %s; %s",
                        m->path, (int)w->pid, strerror(e), verb,
                        e == EACCES || e == EPERM ? "run ptcall arm as root" : how);
        return -1;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd); /* not an ELF object, or one we cannot look at: nothing to arm */
        return -1;
    }
    if ((st.st_dev == dev && (uint64_t)st.st_ino == m->ino) || fs_numbers_differ(fd))
        return fd;
    skip_object(w, dev, m->ino,
                "%s is not the file process %d mapped (/proc/%d/maps: device %x:%x inode "
                "%" PRIu64 "; that path now: device %x:%x inode %" PRIu64 "): it was replaced on "
                "disk since the process mapped it (renamed or mounted over), or the process "
                "sees another mount namespace; its call sites, if any, were not %s; %s",
                m->path, (int)w->pid, (int)w->pid, m->dmaj, m->dmin, m->ino, major(st.st_dev),
                minor(st.st_dev), (uint64_t)st.st_ino, verb, how);
    close(fd);
    return -1;
}

/* The module as the process maps it (its PT_LOAD pages at bias): every place its map names
 * must lie in it, in memory that allows what arming does there, since /proc/PID/mem writes
 * even read-only code: a damaged map must not have us patch another object or the heap.
 * (RELRO is not taken from the slots' pages here: process_vm_writev refuses read-only
 * memory, and that failure is said.) */
static int module_object(const struct ptc_pt_elf_sections *sec, uint64_t bias,
                         struct ptc_map_segment *segs, struct ptc_map_object *obj)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    if (sec->nloads <= 0)
        return -1;
    for (int i = 0; i < sec->nloads; i++) {
        segs[i] = sec->loads[i];
        segs[i].start += bias;
        segs[i].end += bias;
        lo = segs[i].start < lo ? segs[i].start : lo;
        hi = segs[i].end > hi ? segs[i].end : hi;
    }
    /* bytes NULL: the sled table is in the process; arm_checked checks it once read */
    *obj = (struct ptc_map_object){.bytes = NULL, .start = lo, .size = (size_t)(hi - lo),
                                   .segs = segs, .nsegs = (size_t)sec->nloads};
    return 0;
}

/* Validates the module's map against the module (the slots, the sled table and each sled
 * and stub it names), then arms or disarms it; a map that fails leaves the module alone with
 * one warning. 0, or -1 after fail_access (w->err). */
static int arm_checked(struct arm_walk *w, const struct mapped *m,
                       const struct ptc_pt_elf_sections *sec, uint64_t bias, const uint8_t *map)
{
    const char *verb = w->on ? "armed" : "disarmed";
    struct ptc_map_segment segs[PTC_PT_LOADS_MAX];
    struct ptc_map_object obj;
    dev_t dev = makedev(m->dmaj, m->dmin);
    if (module_object(sec, bias, segs, &obj) < 0) {
        skip_object(w, dev, m->ino, "%s: its program headers describe no segment or more than "
                    "%d: its call sites were not %s", m->path, PTC_PT_LOADS_MAX, verb);
        return 0;
    }
    uint64_t s0 = sec->stubs_addr + bias, s1 = s0 + sec->stubs_size, at = sec->map_addr + bias;
    size_t bad = 0;
    w->sites_start = w->sites_end = 0;
    int e = ptc_map_walk_in(map, sec->map_size, at, s0, s1, &obj, note_sites_cb, w, &bad);
    uint8_t *table = NULL;
    if (e > 0 && w->sites_end > w->sites_start) {
        if (!(table = read_sled_table(w)))
            return -1;
        uint64_t i = 0;
        if (ptc_map_check_sites(table, w->sites_start, w->sites_end, s0, s1, &obj, &i) < 0) {
            e = PTC_MAP_E_SITE;
            bad = (size_t)i; /* the entry, said below */
        }
    }
    if (e < 0) {
        free(table);
        skip_object(w, dev, m->ino, "%s: ptcall_map is unreadable (%s at %s %zu): its call "
                    "sites were not %s; rebuild it with ptcall-cc", m->path,
                    ptc_map_strerror(e), e == PTC_MAP_E_SITE && table ? "entry" : "offset",
                    bad, verb);
        return 0;
    }
    e = ptc_map_walk_in(map, sec->map_size, at, s0, s1, &obj, arm_unit_cb, w, NULL);
    if (table && e > 0)
        switch_sleds(w, table, e); /* frees it */
    else
        free(table);
    return w->err ? -1 : 0;
}

/* One executable file mapping. 0 (armed, or nothing to arm, or left alone with a warning),
 * or -1 with why. */
static int arm_module(struct arm_walk *w, const struct mapped *m, char *why, size_t why_size)
{
    int fd = open_mapped(w, m, why, why_size);
    if (fd < 0)
        return fd == -2 ? -1 : 0;
    /* libelf opens by name: /proc/self/fd/N reopens the inode we hold, even a removed one */
    char fdpath[64];
    snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
    struct ptc_pt_elf_sections sec;
    char ewhy[256];
    if (ptc_pt_elf_sections(fdpath, &sec, ewhy, sizeof(ewhy)) < 0 || !sec.has_stubs ||
        !sec.has_map || sec.stubs_offset < m->pgoff ||
        sec.stubs_offset >= m->pgoff + (m->hi - m->lo)) {
        close(fd); /* not instrumented, not an ELF file, or this mapping does not hold the stubs */
        return 0;
    }
    uint64_t bias = m->lo + (sec.stubs_offset - m->pgoff) - sec.stubs_addr;
    uint8_t *map = malloc(sec.map_size ? sec.map_size : 1);
    uint8_t *live = malloc(sec.map_size ? sec.map_size : 1);
    if (!map || !live ||
        pread(fd, map, sec.map_size, (off_t)sec.map_offset) != (ssize_t)sec.map_size) {
        snprintf(why, why_size, "cannot read the ptcall_map section of %s: %s", m->path,
                 !map || !live ? strerror(ENOMEM) : strerror(errno ? errno : EIO));
        free(map);
        free(live);
        close(fd);
        return -1;
    }
    close(fd);
    /* The layout read from the file must be the process's: its ptcall_map, at the address
     * this layout gives, must hold the same bytes. */
    if (mem_read(w->mem, live, sec.map_size, sec.map_addr + bias) < 0 ||
        memcmp(map, live, sec.map_size)) {
        int e = errno;
        free(map);
        free(live);
        if (proc_exited(w->pid)) {
            say_failure(w->pid, w->on, e, "reading its ptcall_map", why, why_size);
            return -1;
        }
        skip_object(w, makedev(m->dmaj, m->dmin), m->ino,
                    "the ptcall_map of %s is not the one in process %d's memory at 0x%" PRIx64
                    ": the file was replaced or changed on disk since the process mapped it; its "
                    "call sites were not %s; restart the process",
                    m->path, (int)w->pid, sec.map_addr + bias, w->on ? "armed" : "disarmed");
        return 0;
    }
    free(live);
    int e = arm_checked(w, m, &sec, bias, map);
    free(map);
    if (w->err) {
        say_failure(w->pid, w->on, w->err, w->err_what, why, why_size);
        return -1;
    }
    return e;
}

/* ---- the process ---------------------------------------------------------------------- */

/* Opens /proc/PID/maps, or says why not: no such process, exited, or permission denied
 * (also when /proc hides other users' processes, hidepid=, which gives ENOENT). */
static FILE *open_maps(pid_t pid, int on, char *why, size_t why_size)
{
    if (kill(pid, 0) < 0 && errno == ESRCH) {
        snprintf(why, why_size, "no process %d (no such process)", (int)pid);
        return NULL;
    }
    char s = proc_state(pid);
    if (s == 'Z' || s == 'X') {
        snprintf(why, why_size, "process %d has exited (a zombie that its parent has not "
                                "reaped yet): there is nothing to %s",
                 (int)pid, say_doing ? "attach to" : on ? "arm" : "disarm");
        return NULL;
    }
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (f)
        return f;
    int e = errno;
    char what[96];
    snprintf(what, sizeof(what), "opening %s", path);
    if (e == ENOENT && kill(pid, 0) < 0 && errno == EPERM) {
        char hint[512];
        perm_hint(pid, hint, sizeof(hint));
        snprintf(why, why_size, "permission denied: process %d exists but /proc hides it "
                                "(mounted with hidepid=): %s",
                 (int)pid, hint);
    } else if (e == ENOENT && proc_exited(pid)) {
        snprintf(why, why_size, "no process %d (it has exited)", (int)pid);
    } else {
        say_failure(pid, on, e, what, why, why_size);
    }
    return NULL;
}

int arm_process_ex(int pid, int on, struct arm_result *res, arm_warn_fn *warn, void *warn_ctx,
                   char *why, size_t why_size)
{
    memset(res, 0, sizeof(*res));
    FILE *f = open_maps((pid_t)pid, on, why, why_size);
    if (!f)
        return -1;
    /* Writing into the process takes what attaching a debugger takes: ask once, up front, so
     * that a refusal is said before anything is read or written. */
    char mem_path[64];
    snprintf(mem_path, sizeof(mem_path), "/proc/%d/mem", pid);
    int mem = open(mem_path, O_RDWR | O_CLOEXEC);
    if (mem < 0) {
        char what[96];
        snprintf(what, sizeof(what), "opening %s for writing", mem_path);
        say_failure((pid_t)pid, on, errno, what, why, why_size);
        fclose(f);
        return -1;
    }
    struct arm_walk w = {.pid = (pid_t)pid, .on = on, .from = on ? 0 : 1, .to = on ? 1 : 0,
                         .mem = mem, .warn = warn, .warn_ctx = warn_ctx};
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, lines = 0;
    errno = 0;
    while (rc == 0 && getline(&line, &cap, f) > 0) {
        struct mapped m = {0};
        char perms[8];
        int at = 0;
        lines++;
        /* START-END PERMS OFFSET MAJ:MIN INODE PATH; the path is the rest of the line: it may
         * hold spaces, and ends in " (deleted)" when the mapped file lost its name */
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &m.lo,
                   &m.hi, perms, &m.pgoff, &m.dmaj, &m.dmin, &m.ino, &at) != 7 ||
            at == 0 || line[at] != '/' || strlen(perms) < 3 || perms[2] != 'x')
            continue;
        char *path = line + at;
        size_t len = strlen(path);
        if (len && path[len - 1] == '\n')
            path[--len] = 0;
        static const char del[] = " (deleted)";
        if (len > sizeof(del) - 1 && !strcmp(path + len - (sizeof(del) - 1), del)) {
            path[len - (sizeof(del) - 1)] = 0;
            m.deleted = 1;
        }
        m.path = path;
        rc = arm_module(&w, &m, why, why_size);
    }
    int read_err = rc == 0 && ferror(f) ? errno : 0;
    free(line);
    fclose(f);
    close(mem);
    if (read_err) {
        char what[96];
        snprintf(what, sizeof(what), "reading /proc/%d/maps", pid);
        say_failure((pid_t)pid, on, read_err, what, why, why_size);
        return -1;
    }
    if (rc == 0 && lines == 0 && proc_exited((pid_t)pid)) {
        /* a process that exits leaves an empty map behind before it is gone */
        snprintf(why, why_size, "process %d exited while it was being %s", pid,
                 on ? "armed" : "disarmed");
        return -1;
    }
    *res = w.res;
    return rc;
}

static void warn_stderr(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "ptcall: warning: %s\n", msg);
}

int arm_process(int pid, int on, int *changed, int *gated, char *why, size_t why_size)
{
    struct arm_result res;
    int rc = arm_process_ex(pid, on, &res, warn_stderr, NULL, why, why_size);
    if (changed)
        *changed = res.changed;
    if (gated)
        *gated = res.gated;
    return rc;
}

/* ---- for the software attach (attach_soft.c): the same checks and words ---------------- */

void proc_say_as(const char *cmd, const char *doing)
{
    say_cmd = cmd;
    say_doing = doing;
}

FILE *proc_open_maps(int pid, char *why, size_t n) { return open_maps((pid_t)pid, 1, why, n); }

void proc_say_failure(int pid, int e, const char *what, char *why, size_t n)
{
    say_failure((pid_t)pid, 1, e, what, why, n);
}

int proc_gone(int pid) { return proc_exited((pid_t)pid); }
