/* The recorder's side of the attach control channel (include/ptcall/attach_ctl.h,
 * docs/runtime.md, *Attaching to a running process*): `ptcall record --pid PID` with the
 * software backend, and `ptcall snapshot PID`.
 *
 * Permission is the kernel's: the token goes into the target's mailbox with
 * process_vm_writev, which succeeds only for who may ptrace it; a refusal is worded as
 * `ptcall arm` words it (pt_arm.c). The socket's owner must be the target (SO_PEERCRED), not
 * a process squatting on its name. The trace file is created here (ptc_create_trace) and only
 * its descriptor is handed over: the target never opens a path. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ptc_chunk_write.h"
#include "ptc_pt_rec.h"
#include "ptcall/attach_ctl.h"
#include "ptcall/trace_format.h"

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- finding the mailbox -------------------------------------------------------------- */

/* st_value of symbol name in the dynamic symbol table of the ELF file fd, and the lowest
 * PT_LOAD's p_vaddr. 0, or -1. */
static int elf_symbol(int fd, const char *name, uint64_t *value, uint64_t *first_vaddr)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    if (!e)
        return -1;
    int found = -1;
    size_t nph = 0;
    *first_vaddr = UINT64_MAX;
    if (elf_getphdrnum(e, &nph) == 0)
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < *first_vaddr)
                *first_vaddr = ph.p_vaddr & ~(uint64_t)4095;
        }
    Elf_Scn *scn = NULL;
    while (found < 0 && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Sym s;
            const char *n;
            if (gelf_getsym(d, (int)i, &s) && s.st_shndx != SHN_UNDEF &&
                (n = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(n, name)) {
                *value = s.st_value;
                found = 0;
                break;
            }
        }
    }
    elf_end(e);
    return found < 0 || *first_vaddr == UINT64_MAX ? -1 : 0;
}

/* The mailbox's address in process pid: libptcall.so in its maps, the symbol in that very
 * file (its device and inode as mapped). 0, -2 with why when no libptcall.so is mapped (yet),
 * or -1 with why. */
static int find_mailbox(int pid, uint64_t *addr, char *why, size_t n)
{
    FILE *f = proc_open_maps(pid, why, n);
    if (!f)
        return -1;
    char *line = NULL, path[PATH_MAX] = "";
    size_t cap = 0;
    uint64_t base = UINT64_MAX, ino = 0;
    unsigned dmaj = 0, dmin = 0;
    while (getline(&line, &cap, f) > 0) {
        uint64_t lo, hi, off, i;
        unsigned ma, mi;
        char perms[8];
        int at = 0;
        if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &lo,
                   &hi, perms, &off, &ma, &mi, &i, &at) != 7 || !at || line[at] != '/')
            continue;
        char *p = line + at, *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        const char *b = strrchr(p, '/') + 1;
        if (strncmp(b, "libptcall.so", 12) || (b[12] && b[12] != '.'))
            continue;
        if (off == 0 && lo < base) {
            base = lo;
            snprintf(path, sizeof(path), "%s", p);
            ino = i;
            dmaj = ma;
            dmin = mi;
        }
    }
    free(line);
    fclose(f);
    if (base == UINT64_MAX) {
        if (proc_gone(pid))
            snprintf(why, n, "process %d exited while it was being attached to", pid);
        else
            snprintf(why, n, "process %d is not instrumented: no libptcall.so is mapped in it "
                             "(build it with ptcall-cc; see docs/pass.md)", pid);
        return -2;
    }
    /* the file the process mapped: its map_files entry (needs CAP_SYS_ADMIN), else the path
     * once it is shown to be the same file */
    char mf[128];
    snprintf(mf, sizeof(mf), "/proc/%d/root%s", pid, path);
    int fd = open(mf, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_ino != ino ||
        major(st.st_dev) != dmaj || minor(st.st_dev) != dmin) {
        if (fd >= 0)
            close(fd);
        snprintf(why, n, "the libptcall.so mapped in process %d (%s) cannot be read or was "
                         "replaced on disk since the process started: restart it to attach",
                 pid, path);
        return -1;
    }
    uint64_t value = 0, first = 0;
    int e = elf_symbol(fd, PTC_CTL_MAILBOX_SYM, &value, &first);
    close(fd);
    if (e < 0) {
        snprintf(why, n, "the libptcall.so of process %d (%s) has no attach control channel: "
                         "it is older than this ptcall; rebuild and restart the program",
                 pid, path);
        return -1;
    }
    *addr = base - first + value;
    return 0;
}

static int mem_io(int pid, uint64_t addr, void *buf, size_t len, int write)
{
    struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
    ssize_t k = write ? process_vm_writev(pid, &l, 1, &r, 1, 0)
                      : process_vm_readv(pid, &l, 1, &r, 1, 0);
    return k == (ssize_t)len ? 0 : -1;
}

/* ---- the conversation ------------------------------------------------------------------ */

struct ctl_conn {
    int pid, sock;
    uint64_t mailbox;
};

static const char *state_text(uint32_t s)
{
    switch (s) {
    case PTC_CTL_STATE_OFF:
        return "its control thread is off (started with PTCALL_ATTACH=0, a fork child, which "
               "has none until it execs, or no instrumented code registered)";
    case PTC_CTL_STATE_TRACED:
        return "it is traced from its start already (ptcall record, PTCALL_BACKEND)";
    case PTC_CTL_STATE_COUNTING:
        return "it runs in counting mode or as a fork server, which has no control channel";
    case PTC_CTL_STATE_FAILED:
        return "its control thread could not start (its stderr says why)";
    default:
        return NULL;
    }
}

/* How long a process may have been running and still be loading its libraries or running
 * their constructors: `svc & ptcall record --pid $!` attaches while the dynamic loader or
 * libptcall.so's constructor has not finished. Longer than that, "not instrumented" and
 * "starting" are answers, not a moment to wait through. */
#define CTL_START_WAIT_NS (3000u * 1000000u)

/* Seconds process pid has run, from its start time in /proc/PID/stat; -1 if unknown. */
static double proc_age_s(int pid)
{
    char p[64], buf[1024];
    snprintf(p, sizeof(p), "/proc/%d/stat", pid);
    FILE *f = fopen(p, "re");
    if (!f)
        return -1;
    size_t k = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[k] = 0;
    char *r = strrchr(buf, ')'); /* the command name may hold spaces and parentheses */
    unsigned long long start = 0;
    if (!r || sscanf(r + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
                            "%*d %*d %*d %llu", &start) != 1)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_BOOTTIME, &now);
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? (double)now.tv_sec + now.tv_nsec / 1e9 - (double)start / (double)hz : -1;
}

/* The mailbox, read: 0 with *box, or -1 with why. A process that has just started is waited
 * for while libptcall.so is not mapped yet or its constructor has not run (state STARTING). */
static int ctl_read_box(struct ctl_conn *c, struct ptc_ctl_mailbox *box, char *why, size_t n)
{
    uint64_t until = mono_ns() + CTL_START_WAIT_NS;
    for (;;) {
        int e = find_mailbox(c->pid, &c->mailbox, why, n);
        memset(box, 0, sizeof(*box));
        if (e == 0 && mem_io(c->pid, c->mailbox, box, sizeof(*box), 0) < 0) {
            char what[96];
            snprintf(what, sizeof(what), "reading process %d's memory (process_vm_readv)",
                     c->pid);
            proc_say_failure(c->pid, errno, what, why, n);
            return -1;
        }
        int starting = e == -2 || (e == 0 && box->magic == PTC_CTL_MAGIC &&
                                   box->state == PTC_CTL_STATE_STARTING);
        if (e == -1 || !starting)
            return e == 0 ? 0 : -1;
        double age = proc_age_s(c->pid);
        if (age < 0 || age * 1e9 > CTL_START_WAIT_NS || mono_ns() > until) {
            if (e == 0)
                snprintf(why, n, "process %d cannot be attached to: its libptcall.so has not "
                                 "started (its constructors have not run after %.1f s: is it "
                                 "stopped, or blocked in another library's constructor?)",
                         c->pid, age);
            return -1;
        }
        struct timespec d = {0, 2 * 1000 * 1000};
        nanosleep(&d, NULL);
    }
}

/* Token, connection, request: 0 with c->sock connected and the request sent, or -1. */
static int ctl_open(struct ctl_conn *c, struct ptc_ctl_request *q, char *why, size_t n)
{
    c->sock = -1;
    struct ptc_ctl_mailbox box;
    if (ctl_read_box(c, &box, why, n) < 0)
        return -1;
    if (box.magic != PTC_CTL_MAGIC) {
        snprintf(why, n, "process %d's libptcall.so speaks another version of the control "
                         "channel (%#x, this ptcall %#x): use the ptcall it was built with",
                 c->pid, box.magic, PTC_CTL_MAGIC);
        return -1;
    }
    const char *off = state_text(box.state);
    if (off) {
        snprintf(why, n, "process %d cannot be attached to: %s", c->pid, off);
        return -1;
    }
    if (getrandom(q->token, sizeof(q->token), 0) != (ssize_t)sizeof(q->token)) {
        snprintf(why, n, "cannot draw a random token: %s", strerror(errno));
        return -1;
    }
    /* the permission check: the kernel lets only who may ptrace the process write here */
    if (mem_io(c->pid, c->mailbox + offsetof(struct ptc_ctl_mailbox, token), q->token,
               sizeof(q->token), 1) < 0) {
        char what[96];
        snprintf(what, sizeof(what), "writing process %d's memory (process_vm_writev)", c->pid);
        proc_say_failure(c->pid, errno, what, why, n);
        return -1;
    }
    c->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    int k = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, PTC_CTL_SOCKET_FMT, c->pid);
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
    struct timeval to = {10, 0};
    if (c->sock < 0 || connect(c->sock, (struct sockaddr *)&a, len) != 0) {
        int e = errno;
        if (proc_gone(c->pid))
            snprintf(why, n, "process %d exited while it was being attached to", c->pid);
        else
            snprintf(why, n, "cannot reach process %d's control socket @" PTC_CTL_SOCKET_FMT
                             ": %s (it may have exec'd meanwhile: try again; or it runs in "
                             "another network namespace, a container, whose sockets are not "
                             "ours)", c->pid, c->pid, strerror(e));
        return -1;
    }
    struct ucred cr;
    socklen_t cl = sizeof(cr);
    if (getsockopt(c->sock, SOL_SOCKET, SO_PEERCRED, &cr, &cl) != 0 || cr.pid != c->pid) {
        snprintf(why, n, "the socket @" PTC_CTL_SOCKET_FMT " belongs to process %d, not to "
                         "process %d: another program took its name; not attaching",
                 c->pid, (int)cr.pid, c->pid);
        return -1;
    }
    setsockopt(c->sock, SOL_SOCKET, SO_RCVTIMEO, &to, sizeof(to));
    setsockopt(c->sock, SOL_SOCKET, SO_SNDTIMEO, &to, sizeof(to));
    q->magic = PTC_CTL_MAGIC;
    if (send(c->sock, q, sizeof(*q), MSG_NOSIGNAL) != (ssize_t)sizeof(*q)) {
        snprintf(why, n, "cannot send the request to process %d: %s", c->pid, strerror(errno));
        return -1;
    }
    return 0;
}

static volatile sig_atomic_t stop_signal;
static void on_stop(int sig) { stop_signal = sig; }

/* The runtime's reply. 0 (status 0), or -1 with why. */
static int ctl_reply(struct ctl_conn *c, struct ptc_ctl_reply *r, char *why, size_t n)
{
    ssize_t k = recv(c->sock, r, sizeof(*r), 0);
    if (k != (ssize_t)sizeof(*r) || r->magic != PTC_CTL_MAGIC) {
        int e = errno;
        if (proc_gone(c->pid))
            snprintf(why, n, "process %d exited while it was being attached to", c->pid);
        else if (k == 0)
            snprintf(why, n, "process %d closed its control channel (it exec'd or is "
                             "exiting); try again", c->pid);
        else if (k < 0 && e == EINTR && stop_signal)
            snprintf(why, n, "stopped by signal %d before process %d had attached: nothing "
                             "recorded (the process detaches by itself when it finds the "
                             "recorder gone)", (int)stop_signal, c->pid);
        else
            snprintf(why, n, "no answer from process %d: %s", c->pid,
                     k < 0 ? strerror(e) : "a malformed reply");
        return -1;
    }
    r->msg[sizeof(r->msg) - 1] = 0;
    if (r->status) {
        snprintf(why, n, "process %d refused: %s", c->pid, r->msg);
        return -1;
    }
    return 0;
}

static int send_fd(struct ctl_conn *c, int fd)
{
    struct ptc_ctl_request q;
    memset(&q, 0, sizeof(q));
    q.magic = PTC_CTL_MAGIC;
    q.op = PTC_CTL_FD;
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof(u));
    struct iovec v = {&q, sizeof(q)};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof(u.buf)};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof(int));
    return sendmsg(c->sock, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(q) ? 0 : -1;
}

/* ---- record --pid ------------------------------------------------------------------------ */


/* The target's command line, NUL-separated, for RECORD_INFO. */
static size_t target_cmdline(int pid, char *buf, size_t cap, uint32_t *argc)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t k = fd >= 0 ? read(fd, buf, cap - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (k <= 0) {
        k = snprintf(buf, cap, "pid %d", pid) + 1;
    } else if (buf[k - 1] != 0) {
        buf[k++] = 0;
    }
    *argc = 0;
    for (ssize_t i = 0; i < k; i++)
        *argc += buf[i] == 0;
    return (size_t)k;
}

static int write_head(int fd, int pid, uint32_t flags)
{
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct ptc_file_header fh;
    ptc_file_header_init(&fh, PTC_BACKEND_SOFT, flags,
                         (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec);
    static char args[8192];
    struct ptc_record_info ri = {.backend = PTC_BACKEND_SOFT, .flags = flags,
                                 .start_ns = mono_ns()};
    size_t len = target_cmdline(pid, args, sizeof(args), &ri.argc);
    struct iovec parts[2] = {{&ri, sizeof(ri)}, {args, len}};
    if (write(fd, &fh, sizeof(fh)) != (ssize_t)sizeof(fh) ||
        ptc_write_chunk(fd, PTC_CHUNK_RECORD_INFO, 0, 0, 0, 0, parts, 2) < 0)
        return -1;
    return 0;
}

/* The globs of list, one per line, into out (cap bytes). Their length, or -1. */
static int join_globs(const char **v, int n, char *out, size_t cap)
{
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(v[i]);
        if (at + l + 2 > cap)
            return -1;
        memcpy(out + at, v[i], l);
        at += l;
        if (i + 1 < n)
            out[at++] = '\n';
    }
    return (int)at;
}

/* Sends request q, reads the runtime's first reply into r, then creates the file out that
 * will be handed over (ptc_create_trace: only a new file or the caller's own earlier trace).
 * Its descriptor, or -1 after saying why on stderr (who: the command) with the connection
 * closed. */
static int request_file(struct ctl_conn *c, struct ptc_ctl_request *q, struct ptc_ctl_reply *r,
                        const char *out, struct ptc_trace_path *made, const char *who)
{
    char why[1024];
    if (ctl_open(c, q, why, sizeof(why)) < 0 || ctl_reply(c, r, why, sizeof(why)) < 0) {
        fprintf(stderr, "%s: %s\n", who, why);
        if (c->sock >= 0)
            close(c->sock);
        return -1;
    }
    int fd = ptc_create_trace(out, made);
    if (fd < 0) {
        ptc_create_trace_error(why, sizeof(why), out, errno);
        fprintf(stderr, "%s: %s\n", who, why);
        close(c->sock);
        return -1;
    }
    return fd;
}

static int attach_run(const struct record_options *o, const char *out, struct ctl_conn *cp,
                      struct ptc_ctl_request *qp, struct attach_outcome *res, uint64_t t0);

int record_soft_attach(const struct record_options *o, const char *out,
                       struct attach_outcome *res)
{
    memset(res, 0, sizeof(*res));
    uint64_t t0 = mono_ns();
    struct ctl_conn c = {.pid = o->attach_pid, .sock = -1};
    struct ptc_ctl_request q;
    memset(&q, 0, sizeof(q));
    q.op = PTC_CTL_ATTACH;
    int ol = join_globs(o->only, o->num_only, q.text, sizeof(q.text));
    int sl = ol < 0 ? -1 : join_globs(o->skip, o->num_skip, q.text + ol, sizeof(q.text) - (size_t)ol);
    if (sl < 0) {
        fprintf(stderr, "ptcall: --only/--skip: more than %d bytes of globs for an attach\n",
                PTC_CTL_TEXT - 2);
        return -1;
    }
    q.only_len = (uint32_t)ol;
    q.skip_len = (uint32_t)sl;
    proc_say_as("ptcall record --pid", "attached to");
    /* from here a stop signal ends the recording (at once if it comes during the handshake):
     * the target must never be left attached by a recorder that died of it */
    stop_signal = 0;
    struct sigaction sa = {.sa_handler = on_stop}, old[3];
    sigemptyset(&sa.sa_mask); /* no SA_RESTART: poll returns */
    const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &sa, &old[i]);
    int rc = attach_run(o, out, &c, &q, res, t0);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    return rc;
}

static int attach_run(const struct record_options *o, const char *out, struct ctl_conn *cp,
                      struct ptc_ctl_request *qp, struct attach_outcome *res, uint64_t t0)
{
    char why[1024];
    struct ctl_conn c = *cp;
    struct ptc_ctl_request q = *qp;
    struct ptc_ctl_reply r;
    struct ptc_trace_path made;
    int fd = request_file(&c, &q, &r, out, &made, "ptcall");
    if (fd < 0)
        return -1; /* the target goes on, never attached */
    if (write_head(fd, c.pid, r.flags) < 0 || fcntl(fd, F_SETFL, O_APPEND) < 0) {
        fprintf(stderr, "ptcall: cannot write %s: %s; choose another file with -o\n", out,
                strerror(errno));
        close(fd);
        ptc_remove_created_trace(out, &made);
        close(c.sock);
        return -1;
    }
    int sent = send_fd(&c, fd);
    if (sent < 0 || ctl_reply(&c, &r, why, sizeof(why)) < 0) {
        if (sent < 0)
            snprintf(why, sizeof(why), "cannot hand the trace file to process %d: %s", c.pid,
                     strerror(errno));
        fprintf(stderr, "ptcall: %s\n", why);
        close(fd);
        close(c.sock);
        /* nothing of the target's in it: the file record made goes again */
        ptc_remove_created_trace(out, &made);
        return -1;
    }
    res->attach_ns = mono_ns() - t0;
    if (!o->quiet)
        fprintf(stderr, "ptcall: attached to process %d in %.1f ms; recording until %s\n",
                c.pid, (double)res->attach_ns / 1e6,
                o->duration_ns ? "the duration ends, Ctrl-C or its exit"
                               : "Ctrl-C or its exit");
    uint64_t started = mono_ns();
    int ended = 0; /* the target closed the channel: exit or exec */
    for (;;) {
        if (stop_signal)
            break;
        int wait_ms = -1;
        if (o->duration_ns) {
            uint64_t el = mono_ns() - started;
            if (el >= o->duration_ns)
                break;
            wait_ms = (int)((o->duration_ns - el + 999999) / 1000000);
        }
        struct pollfd p = {.fd = c.sock, .events = POLLIN};
        int k = poll(&p, 1, wait_ms);
        if (k > 0) {
            ended = 1;
            break;
        }
    }
    res->seconds = (double)(mono_ns() - started) / 1e9;
    if (!ended) {
        uint64_t d0 = mono_ns();
        memset(&q, 0, sizeof(q));
        q.magic = PTC_CTL_MAGIC;
        q.op = PTC_CTL_DETACH;
        struct timeval to = {60, 0}; /* a large flush to a slow disk */
        setsockopt(c.sock, SOL_SOCKET, SO_RCVTIMEO, &to, sizeof(to));
        if (send(c.sock, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
            ctl_reply(&c, &r, why, sizeof(why)) < 0) {
            ended = 1;
        } else {
            res->detached = 1;
            res->detach_ns = mono_ns() - d0;
            res->runtime_detach_ns = r.detach_ns;
            res->threads = r.threads;
            res->events = r.events;
            res->dropped = r.dropped;
        }
    }
    close(c.sock);
    if (ended) {
        res->exited = proc_gone(c.pid);
        res->execed = !res->exited;
    }
    /* RECORD_END: an attach launched nothing, so no wait status of ours */
    struct ptc_record_end re = {.wall_ns = mono_ns() - t0, .child_pid = (uint32_t)c.pid};
    struct iovec v = {&re, sizeof(re)};
    int e = ptc_write_chunk(fd, PTC_CHUNK_RECORD_END, 0, 0, 0, 1, &v, 1);
    if (e < 0 || close(fd) != 0) {
        fprintf(stderr, "ptcall: cannot finish %s: %s\n", out, strerror(e < 0 ? -e : errno));
        return 1;
    }
    return 0;
}

/* ---- snapshot ---------------------------------------------------------------------------- */

int snapshot_soft(int pid, const char *out, const char *why_text)
{
    char why[1024];
    struct ctl_conn c = {.pid = pid, .sock = -1};
    struct ptc_ctl_request q;
    memset(&q, 0, sizeof(q));
    q.op = PTC_CTL_SNAPSHOT;
    snprintf(q.text, sizeof(q.text), "%s", why_text ? why_text : "ptcall snapshot");
    proc_say_as("ptcall snapshot", "asked for a snapshot");
    struct ptc_ctl_reply r;
    struct ptc_trace_path made;
    int fd = request_file(&c, &q, &r, out, &made, "ptcall snapshot");
    if (fd < 0)
        return -1;
    int sent = send_fd(&c, fd);
    close(fd);
    if (sent < 0 || ctl_reply(&c, &r, why, sizeof(why)) < 0) {
        if (sent < 0)
            snprintf(why, sizeof(why), "cannot hand the file to process %d: %s", pid,
                     strerror(errno));
        fprintf(stderr, "ptcall snapshot: %s\n", why);
        close(c.sock);
        ptc_remove_created_trace(out, &made);
        return -1;
    }
    close(c.sock);
    return 0;
}
