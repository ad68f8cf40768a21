/* What the runtime writes: the trace file (opening it, chunks, the process-level PROCESS,
 * TIMEBASE and MODULE chunks) and its one-line messages on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ptc_chunk_write.h"
#include "ptc_map_read.h"

#include "soft_internal.h"

void warn(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if (n > (int)sizeof(msg) - 2)
        n = sizeof(msg) - 2;
    msg[n++] = '\n';
    ssize_t r = write(2, msg, (size_t)n);
    (void)r;
}

static uint32_t file_flags(void)
{
    return (rt.timed ? PTC_FILE_F_TIMED : 0) | (rt.drop ? PTC_FILE_F_DROP : 0);
}

/* An existing PTCALL_OUTPUT is appended to only when it is a trace (ptcall record made it,
 * or an earlier process of the program): never another file, never through a symbolic link
 * (the trace could otherwise be steered onto any file the user may write). */
static int is_trace_file(int fd)
{
    char magic[8];
    struct stat st; /* a device or FIFO is never a trace, whatever reading it gives */
    return !fstat(fd, &st) && S_ISREG(st.st_mode) &&
           pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
           !memcmp(magic, PTC_FILE_MAGIC, sizeof(magic));
}

int open_trace_file(void)
{
    /* 0600: a trace holds the command line and the program's paths */
    int fd = open(rt.output, O_WRONLY | O_APPEND | O_CLOEXEC | O_CREAT | O_EXCL | O_NOFOLLOW,
                  0600);
    if (fd >= 0) { /* nobody prepared the file (no `ptcall record`): write its header */
        struct ptc_file_header h;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        ptc_file_header_init(&h, PTC_BACKEND_SOFT, file_flags(),
                             (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
        if (write(fd, &h, sizeof(h)) != (ssize_t)sizeof(h)) {
            close(fd);
            fd = -1;
        }
    } else if (errno == EEXIST) {
        /* O_NONBLOCK: a FIFO must not hold the program; is_trace_file refuses it */
        fd = open(rt.output, O_RDWR | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd >= 0 && (!is_trace_file(fd) || fcntl(fd, F_SETFL, O_APPEND))) {
            close(fd);
            warn("ptcall: %s exists and is not a ptcall trace: not tracing (PTCALL_OUTPUT "
                 "must name a new file or a trace; the file was left as it was)", rt.output);
            return -1;
        }
    }
    if (fd < 0) {
        if (errno == ELOOP) {
            warn("ptcall: %s is a symbolic link: not tracing (a trace is not written through "
                 "one; give the file itself)", rt.output);
            return -1;
        }
        warn("ptcall: cannot open the trace file %s: %s; not tracing", rt.output, strerror(errno));
        return -1;
    }
    /* keep away from the low descriptors programs like to close or dup2 over */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 900);
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    rt.fd = fd;
    return 0;
}

void exe_path(char path[PATH_MAX])
{
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX - 1);
    path[n > 0 ? n : 0] = 0;
}

void write_chunk_flags(uint16_t type, uint16_t flags, uint32_t tid, uint32_t *seq,
                       const struct iovec *parts, int n)
{
    if (rt.ring) {
        /* ring mode: chunks go only to the snapshot being written (soft_ring.c, under its
         * lock); the snapshot says its own errors */
        if (rt.fd >= 0) {
            int e = ptc_write_chunk(rt.fd, type, flags, rt.pid, tid, (*seq)++, parts, n);
            if (e < 0 && !rt.ring_errno)
                rt.ring_errno = -e;
        }
        return;
    }
    /* taken, not read: two threads must not both pay what one cut chunk owes */
    uint64_t owed = atomic_exchange(&rt.write_owed, 0);
    int r = ptc_write_chunk_owed(rt.fd, &owed, type, flags, rt.pid, tid, (*seq)++, parts, n);
    if (owed)
        atomic_fetch_add(&rt.write_owed, owed);
    if (r < 0 && type == PTC_CHUNK_SOFT_EVENTS && n >= 1 &&
        parts[0].iov_len >= sizeof(struct ptc_soft_events)) {
        struct ptc_soft_events h;
        memcpy(&h, parts[0].iov_base, sizeof(h));
        atomic_fetch_add(&rt.write_lost_records, h.num_records);
    }
    if (r < 0 && atomic_fetch_add(&rt.write_errors, 1) == 0) {
        rt.write_first_errno = -r;
        warn("ptcall: cannot write the trace file %s: %s", rt.output, strerror(-r));
    }
}

void write_chunk(uint16_t type, uint32_t tid, uint32_t *seq, const struct iovec *parts, int n)
{
    write_chunk_flags(type, 0, tid, seq, parts, n);
}

void write_proc_chunk_flags(uint16_t type, uint16_t flags, const struct iovec *parts, int n)
{
    if (rt.ring) { /* only a snapshot writes, under its own lock (a signal may hold proc_mu) */
        write_chunk_flags(type, flags, 0, &rt.proc_seq, parts, n);
        return;
    }
    pthread_mutex_lock(&rt.proc_mu);
    write_chunk_flags(type, flags, 0, &rt.proc_seq, parts, n);
    pthread_mutex_unlock(&rt.proc_mu);
}

void write_proc_chunk(uint16_t type, const struct iovec *parts, int n)
{
    write_proc_chunk_flags(type, 0, parts, n);
}

void write_process_start(void)
{
    char exe[PATH_MAX];
    exe_path(exe);
    struct ptc_process p;
    memset(&p, 0, sizeof(p));
    p.ppid = rt.start_how == PTC_PROC_FORK ? rt.parent_pid : (uint32_t)getppid();
    p.how = rt.start_how;
    p.parent_tid = rt.parent_tid;
    p.flags = file_flags();
    p.tsc = rdtsc_();
    p.time_ns = mono_ns();
    struct iovec v[2] = {{&p, sizeof(p)}, {exe, strlen(exe) + 1}};
    write_proc_chunk(PTC_CHUNK_PROCESS, v, 2);
    struct iovec t = {&rt.tb, sizeof(rt.tb)};
    write_proc_chunk(PTC_CHUNK_TIMEBASE, &t, 1);
}

int write_module(struct object *o)
{
    unsigned flags = rt.leaf_calls ? PTC_MAP_BUILD_LEAF_CALLS : 0;
    /* an attachable process keeps what it built: attaching again only writes it (building
     * took 40-65 ms of the 80 ms an attach to 100,000 functions cost, measured) */
    if (o->module_len && o->module_flags == flags) {
        struct iovec v = {o->module_buf, o->module_len};
        write_proc_chunk(PTC_CHUNK_MODULE, &v, 1);
        return 1;
    }
    struct ptc_map_summary s;
    if (ptc_map_scan(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start, o->stubs_start,
                     o->stubs_end, &s, NULL) < 0)
        return 0;
    size_t n = ptc_map_module_size(&s, o->path);
    size_t mapped = page_round_up(n);
    /* populated at once: a fault per page costs more than the build on a VM */
    void *buf = mmap(NULL, mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (buf == MAP_FAILED)
        return 0;
    struct ptc_module info;
    memset(&info, 0, sizeof(info));
    info.module_id = o->module_id;
    info.first_stub_id = o->first_stub_id;
    info.load_bias = o->load_bias;
    info.stubs_start = o->stubs_start;
    info.stubs_end = o->stubs_end;
    long len = ptc_map_build_module(o->map_start, o->map_size, (uint64_t)(uintptr_t)o->map_start,
                                    &s, &info, o->path, flags, buf, n);
    if (len > 0) {
        struct iovec v = {buf, (size_t)len};
        write_proc_chunk(PTC_CHUNK_MODULE, &v, 1);
    }
    if (len > 0 && rt.attachable && !o->module_len) {
        o->module_buf = buf;
        o->module_mapped = mapped;
        o->module_flags = flags;
        o->module_len = (size_t)len;
    } else {
        munmap(buf, mapped);
    }
    return len > 0;
}

void write_module_refused(const char *path, const char *reason)
{
    /* the sizes the reader accepts (docs/trace-format.md 4.16): a longer text is cut, an
     * empty path (the executable's could not be read) says so */
    static const char nul = 0;
    if (!path[0])
        path = "(unknown object)";
    size_t pl = strnlen(path, PTC_REFUSED_PATH_MAX - 1);
    size_t rl = strnlen(reason[0] ? reason : "refused", PTC_REFUSED_REASON_MAX - 1);
    if (!reason[0])
        reason = "refused";
    struct ptc_module_refused m = {.tsc = rdtsc_(), .path_size = (uint32_t)pl + 1,
                                   .reason_size = (uint32_t)rl + 1};
    struct iovec v[5] = {{&m, sizeof(m)},
                         {(void *)(uintptr_t)path, pl},
                         {(void *)(uintptr_t)&nul, 1},
                         {(void *)(uintptr_t)reason, rl},
                         {(void *)(uintptr_t)&nul, 1}};
    write_proc_chunk_flags(PTC_CHUNK_MODULE_REFUSED, PTC_CHUNK_F_OPTIONAL, v, 5);
}
