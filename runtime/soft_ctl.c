/* The attach control channel (include/ptcall/attach_ctl.h, docs/runtime.md, *Attaching to a
 * running process*): in a program started without ptcall (and not counting, PTCALL_ATTACH not
 * 0) a thread `ptcall-ctl` waits in accept() on the abstract socket "ptcall-ctl.<pid>" for
 * `ptcall record --pid` and `ptcall snapshot`.
 *
 * Who may use it is who may ptrace the process, checked by the kernel rather than here: only
 * a process allowed to write this process's memory (process_vm_writev, which takes
 * PTRACE_MODE_ATTACH_REALCREDS: same uid or CAP_SYS_PTRACE, Yama, dumpable) can put the token
 * in the mailbox that a request must carry; a token is good for one request. The peer's
 * credentials (SO_PEERCRED) name the holder of an attach to whoever is refused a second one.
 * The connection of an attach stays open: its end, whatever ends it (the recorder detaching,
 * killed, its machine's Ctrl-C), detaches. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "ptcall/attach_ctl.h"
#include "soft_attach.h"
#include "soft_internal.h"

/* The flight recorder's snapshot (soft_ring*.c, when built in): 0, or -1 with errno (ENOTSUP:
 * ring mode is off). */
int ring_snapshot_to_fd(int fd, uint32_t kind, const char *why) __attribute__((weak));

#pragma GCC visibility push(default)
/* Written by recorders with process_vm_writev (the token); read with process_vm_readv. */
struct ptc_ctl_mailbox __ptcall_ctl_mailbox = {.magic = PTC_CTL_MAGIC,
                                                .state = PTC_CTL_STATE_STARTING};
#pragma GCC visibility pop

static int listen_fd = -1, holder_fd = -1;
static struct ucred holder;

#define IO_TIMEOUT_S 5 /* a recorder that stops talking mid-request does not hold the thread */

static void set_state(uint32_t s, uint32_t holder_pid)
{
    __atomic_store_n(&__ptcall_ctl_mailbox.holder_pid, holder_pid, __ATOMIC_RELAXED);
    __atomic_store_n(&__ptcall_ctl_mailbox.state, s, __ATOMIC_RELEASE);
}

static void sys_close(int fd)
{
    if (fd >= 0)
        syscall(SYS_close, fd);
}

/* Whether the request carries the mailbox's token; a good one is used up. */
static int token_ok(const struct ptc_ctl_request *q)
{
    volatile uint8_t *box = __ptcall_ctl_mailbox.token;
    uint8_t diff = 0, any = 0;
    for (int i = 0; i < PTC_CTL_TOKEN_SIZE; i++) {
        diff |= (uint8_t)(box[i] ^ q->token[i]);
        any |= box[i];
    }
    if (diff || !any)
        return 0;
    for (int i = 0; i < PTC_CTL_TOKEN_SIZE; i++)
        box[i] = 0;
    return 1;
}

static void reply(int c, struct ptc_ctl_reply *r)
{
    r->magic = PTC_CTL_MAGIC;
    ssize_t w = send(c, r, sizeof(*r), MSG_NOSIGNAL);
    (void)w;
}

static void refuse(int c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void refuse(int c, int status, const char *fmt, ...)
{
    struct ptc_ctl_reply r;
    memset(&r, 0, sizeof(r));
    r.status = status;
    if (status == EBUSY) {
        r.holder_pid = (uint32_t)holder.pid;
        r.holder_uid = (uint32_t)holder.uid;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
    va_end(ap);
    reply(c, &r);
}

/* One request of size sizeof(*q), with a descriptor when fd is not NULL. 0 or -1. */
static int receive(int c, struct ptc_ctl_request *q, int *fd)
{
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec v = {q, sizeof(*q)};
    struct msghdr m = {.msg_iov = &v, .msg_iovlen = 1};
    if (fd) {
        *fd = -1;
        m.msg_control = u.buf;
        m.msg_controllen = sizeof(u.buf);
    }
    ssize_t n = recvmsg(c, &m, MSG_CMSG_CLOEXEC);
    if (fd && n > 0) {
        for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h))
            if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS &&
                h->cmsg_len == CMSG_LEN(sizeof(int)))
                memcpy(fd, CMSG_DATA(h), sizeof(int));
    }
    if (n != (ssize_t)sizeof(*q) || q->magic != PTC_CTL_MAGIC ||
        (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
        if (fd && *fd >= 0) {
            sys_close(*fd);
            *fd = -1;
        }
        return -1;
    }
    q->text[PTC_CTL_TEXT - 1] = 0;
    return 0;
}

static void do_attach(int c, const struct ucred *peer, struct ptc_ctl_request *q)
{
    if (q->only_len > PTC_CTL_TEXT - 2 || q->skip_len > PTC_CTL_TEXT - 2 - q->only_len) {
        refuse(c, EINVAL, "malformed attach request");
        return;
    }
    char only[PTC_CTL_TEXT], skip[PTC_CTL_TEXT];
    memcpy(only, q->text, q->only_len);
    only[q->only_len] = 0;
    memcpy(skip, q->text + q->only_len, q->skip_len);
    skip[q->skip_len] = 0;
    struct ptc_ctl_reply r;
    memset(&r, 0, sizeof(r));
    r.flags = (rt.timed ? PTC_FILE_F_TIMED : 0) | (rt.drop ? PTC_FILE_F_DROP : 0);
    reply(c, &r); /* the recorder writes the file's header, then hands it over */
    int fd;
    if (receive(c, q, &fd) < 0 || q->op != PTC_CTL_FD || fd < 0) {
        sys_close(fd);
        refuse(c, EINVAL, "expected the trace file's descriptor");
        return;
    }
    char why[200];
    int e = attach_start(fd, only, skip, why, sizeof(why));
    sys_close(fd); /* the runtime keeps its own duplicate */
    if (e < 0) {
        refuse(c, EAGAIN, "%s", why);
        return;
    }
    holder = *peer;
    holder_fd = c;
    set_state(PTC_CTL_STATE_ATTACHED, (uint32_t)peer->pid);
    memset(&r, 0, sizeof(r));
    r.attach_ns = mono_ns();
    reply(c, &r);
}

static void do_snapshot(int c, struct ptc_ctl_request *q)
{
    if (!ring_snapshot_to_fd) {
        refuse(c, ENOTSUP, "not in ring mode: start it with PTCALL_RING=SIZE or record --ring");
        return;
    }
    char why[PTC_CTL_TEXT];
    snprintf(why, sizeof(why), "%s", q->text[0] ? q->text : "ptcall snapshot");
    struct ptc_ctl_reply r;
    memset(&r, 0, sizeof(r));
    reply(c, &r);
    int fd;
    if (receive(c, q, &fd) < 0 || q->op != PTC_CTL_FD || fd < 0) {
        sys_close(fd);
        refuse(c, EINVAL, "expected the snapshot file's descriptor");
        return;
    }
    int e = ring_snapshot_to_fd(fd, PTC_SNAP_EXTERNAL, why);
    int err = errno;
    sys_close(fd);
    if (e < 0 && (err == ENOTSUP || err == EOPNOTSUPP))
        refuse(c, ENOTSUP, "not in ring mode: start it with PTCALL_RING=SIZE or record --ring");
    else if (e < 0)
        refuse(c, err ? err : EIO, "the snapshot could not be written: %s", strerror(err));
    else
        reply(c, &r);
}

/* A new connection: one request, then closed, unless it attached. */
static void serve(int c)
{
    struct timeval to = {IO_TIMEOUT_S, 0};
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &to, sizeof(to));
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &to, sizeof(to));
    struct ucred peer;
    socklen_t len = sizeof(peer);
    struct ptc_ctl_request q;
    memset(&q, 0, sizeof(q));
    if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0 || receive(c, &q, NULL) < 0) {
        sys_close(c);
        return;
    }
    if (!token_ok(&q)) {
        refuse(c, EPERM, "the request's token is not the one in the mailbox (another recorder "
                         "attaching at the same time?); try again");
    } else if (q.op == PTC_CTL_ATTACH && rt.ring) {
        refuse(c, EBUSY, "process %d runs the flight recorder (PTCALL_RING): take its events "
                         "with `ptcall snapshot %d`", (int)getpid(), (int)getpid());
    } else if (q.op == PTC_CTL_ATTACH && holder_fd >= 0) {
        refuse(c, EBUSY, "process %d is already attached to by ptcall (pid %d, uid %u): end "
                         "that recording first", (int)getpid(), (int)holder.pid,
               (unsigned)holder.uid);
    } else if (q.op == PTC_CTL_ATTACH) {
        do_attach(c, &peer, &q);
        if (holder_fd == c)
            return; /* kept open while attached */
    } else if (q.op == PTC_CTL_SNAPSHOT) {
        do_snapshot(c, &q);
    } else {
        refuse(c, EINVAL, "unknown request %u", q.op);
    }
    sys_close(c);
}

/* The holder's connection is readable: a DETACH request, or its end (the recorder is gone). */
static void serve_holder(void)
{
    struct ptc_ctl_request q;
    memset(&q, 0, sizeof(q));
    int asked = receive(holder_fd, &q, NULL) == 0 && q.op == PTC_CTL_DETACH;
    struct attach_totals tot;
    int e = attach_stop(&tot);
    if (asked) {
        struct ptc_ctl_reply r;
        memset(&r, 0, sizeof(r));
        if (e < 0) {
            r.status = ESRCH;
            snprintf(r.msg, sizeof(r.msg), "the process is exiting: its trace ends at its exit");
        }
        r.threads = tot.threads;
        r.events = tot.events;
        r.dropped = tot.dropped;
        r.write_errors = tot.write_errors;
        r.detach_ns = tot.detach_ns;
        reply(holder_fd, &r);
    }
    sys_close(holder_fd);
    holder_fd = -1;
    memset(&holder, 0, sizeof(holder));
    set_state(PTC_CTL_STATE_LISTENING, 0);
}

static void *ctl_main(void *arg)
{
    (void)arg;
    ptc_tls.state = TS_IGNORE; /* instrumented code reached from here is not traced */
    prctl(PR_SET_NAME, "ptcall-ctl");
    for (;;) {
        struct pollfd p[2] = {{.fd = listen_fd, .events = POLLIN},
                              {.fd = holder_fd, .events = POLLIN}};
        int np = holder_fd >= 0 ? 2 : 1;
        if (poll(p, (nfds_t)np, -1) < 0) {
            struct timespec nap = {0, 10 * 1000 * 1000};
            nanosleep(&nap, NULL);
            continue;
        }
        if (np == 2 && p[1].revents)
            serve_holder();
        if (p[0].revents & POLLIN) {
            int c = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
            if (c >= 0)
                serve(c);
        }
    }
    return NULL;
}

static void ctl_after_fork(void)
{
    /* no control thread in a fork child (soft_lifecycle.c): its copies of the sockets go,
     * so that the name is free once the parent is gone */
    sys_close(listen_fd);
    sys_close(holder_fd);
    listen_fd = holder_fd = -1;
    set_state(PTC_CTL_STATE_OFF, 0);
    memset((void *)__ptcall_ctl_mailbox.token, 0, PTC_CTL_TOKEN_SIZE);
    attach_after_fork();
}

static int ctl_listen(void)
{
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct sockaddr_un a;
    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    int n = snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, PTC_CTL_SOCKET_FMT, (int)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
    if (bind(s, (struct sockaddr *)&a, len) != 0 || listen(s, 4) != 0) {
        int e = errno;
        sys_close(s);
        errno = e;
        return -1;
    }
    listen_fd = s;
    return 0;
}

__attribute__((constructor(102))) static void ctl_start(void)
{
    runtime_init();
    if (__builtin_expect(rt.test_ctl_start_delay_ns != 0, 0)) {
        struct timespec d = {(time_t)(rt.test_ctl_start_delay_ns / 1000000000u),
                             (long)(rt.test_ctl_start_delay_ns % 1000000000u)};
        nanosleep(&d, NULL);
    }
    if (!rt.enabled || !(rt.attachable || (rt.ring && rt.ring_ctl))) {
        set_state(rt.counting ? PTC_CTL_STATE_COUNTING
                  : rt.enabled || rt.arm_only ? PTC_CTL_STATE_TRACED : PTC_CTL_STATE_OFF, 0);
        return;
    }
    if (ctl_listen() < 0) {
        warn("ptcall: cannot listen for `ptcall record --pid` on the abstract socket "
             PTC_CTL_SOCKET_FMT ": %s; this process cannot be attached to", (int)getpid(),
             strerror(errno));
        set_state(PTC_CTL_STATE_FAILED, 0);
        return;
    }
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 128 << 10);
    sigset_t old; /* it starts with every signal blocked: the program's handlers never run on it */
    block_all_signals(&old);
    pthread_t t;
    int r = pthread_create(&t, &a, ctl_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
    if (r) {
        warn("ptcall: cannot start the thread for `ptcall record --pid`: %s; this process "
             "cannot be attached to", strerror(r));
        sys_close(listen_fd);
        listen_fd = -1;
        set_state(PTC_CTL_STATE_FAILED, 0);
        return;
    }
    pthread_atfork(NULL, NULL, ctl_after_fork);
    set_state(PTC_CTL_STATE_LISTENING, 0);
}
