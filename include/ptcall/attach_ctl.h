/* ptcall attach control channel, version 1 (docs/runtime.md, "Attaching to a running
 * process"): how `ptcall record --pid PID` and `ptcall snapshot PID` talk to the runtime of an
 * instrumented process that was started without ptcall.
 *
 * The runtime of such a process (no PTCALL_BACKEND, not counting, PTCALL_ATTACH not 0) runs a
 * thread `ptcall-ctl` blocked in accept() on the abstract Unix socket "\0ptcall-ctl.<pid>".
 * Who may use it is exactly who may ptrace the process:
 *   1. the recorder finds libptcall.so in /proc/PID/maps and the symbol PTC_CTL_MAILBOX_SYM in
 *      its dynamic symbol table, and writes a fresh random token into the mailbox's token
 *      with process_vm_writev: the kernel lets it only with PTRACE_MODE_ATTACH_REALCREDS
 *      (same uid or CAP_SYS_PTRACE, Yama, dumpable);
 *   2. it connects, checks SO_PEERCRED.pid == PID (anyone may bind an abstract name: a
 *      squatter is refused), and sends a request holding the token;
 *   3. the runtime accepts only a token equal to the mailbox's, which it then clears (one use).
 * Messages are whole structs, one per send (SOCK_SEQPACKET), host byte order.
 *
 *   ATTACH:   recorder -> struct ptc_ctl_request (op ATTACH, token, only/skip globs)
 *             runtime  -> struct ptc_ctl_reply (status 0: flags = PTC_FILE_F_* it records
 *                         with; the recorder writes the file header and RECORD_INFO)
 *             recorder -> struct ptc_ctl_request (op FD) with the trace file's descriptor
 *                         (SCM_RIGHTS, open for writing, O_APPEND)
 *             runtime  -> struct ptc_ctl_reply (status 0: attached; its chunks follow)
 *             ... the connection stays open while attached; its end detaches ...
 *             recorder -> struct ptc_ctl_request (op DETACH)
 *             runtime  -> struct ptc_ctl_reply (status 0, totals: detached, descriptor closed)
 *   SNAPSHOT: recorder -> request (op SNAPSHOT, token, why in text)
 *             runtime  -> reply (status 0: send the file; else why not)
 *             recorder -> request (op FD) with the snapshot file's descriptor
 *             runtime  -> reply (status 0: written)
 * A refusal is a reply with status an errno value (EBUSY: attached already, holder_* say by
 * whom; EPERM: wrong token; ENOTSUP: no ring mode) and a one-line msg.
 */
#ifndef PTCALL_ATTACH_CTL_H
#define PTCALL_ATTACH_CTL_H

#include <stdint.h>

#define PTC_CTL_VERSION 1u
#define PTC_CTL_MAGIC (0x50544300u | PTC_CTL_VERSION) /* "PTC" and the version */
#define PTC_CTL_TOKEN_SIZE 32
#define PTC_CTL_SOCKET_FMT "ptcall-ctl.%d" /* abstract: preceded by a NUL byte */
#define PTC_CTL_MAILBOX_SYM "__ptcall_ctl_mailbox"

/* The mailbox: an exported variable of libptcall.so. state says what the runtime does with
 * the channel, so that a recorder can say why it cannot attach before connecting. */
enum ptc_ctl_state {
    PTC_CTL_STATE_OFF = 0,      /* no control thread: PTCALL_ATTACH=0, nothing instrumented
                                   registered yet, or a fork child (docs/runtime.md) */
    PTC_CTL_STATE_LISTENING = 1,
    PTC_CTL_STATE_ATTACHED = 2, /* a recorder is attached (holder_pid) */
    PTC_CTL_STATE_TRACED = 3,   /* traced from its start (ptcall record, PTCALL_BACKEND) */
    PTC_CTL_STATE_COUNTING = 4, /* counting mode or a fork server: no channel */
    PTC_CTL_STATE_FAILED = 5,   /* the control thread could not start (said on its stderr) */
    PTC_CTL_STATE_STARTING = 6, /* the initial value: libptcall.so's constructor has not run */
};
struct ptc_ctl_mailbox {
    uint32_t magic;             /* PTC_CTL_MAGIC */
    uint32_t state;             /* enum ptc_ctl_state */
    uint32_t holder_pid;        /* PTC_CTL_STATE_ATTACHED: the recorder's pid */
    uint32_t reserved;
    uint8_t token[PTC_CTL_TOKEN_SIZE]; /* written by the recorder; all zero: none */
};

enum ptc_ctl_op {
    PTC_CTL_ATTACH = 1,
    PTC_CTL_FD = 2,
    PTC_CTL_DETACH = 3,
    PTC_CTL_SNAPSHOT = 4,
};

#define PTC_CTL_TEXT 4096
struct ptc_ctl_request {
    uint32_t magic;
    uint32_t op;                /* enum ptc_ctl_op */
    uint8_t token[PTC_CTL_TOKEN_SIZE];
    uint32_t only_len;          /* ATTACH: text[0, only_len) = --only globs, one per line */
    uint32_t skip_len;          /* ATTACH: then skip_len bytes of --skip globs */
    char text[PTC_CTL_TEXT];    /* SNAPSHOT: why, NUL-terminated */
};

struct ptc_ctl_reply {
    uint32_t magic;
    int32_t status;             /* 0, or an errno value */
    uint32_t flags;             /* ATTACH: PTC_FILE_F_* of the recording */
    uint32_t holder_pid;        /* EBUSY: the recorder attached */
    uint32_t holder_uid;
    uint32_t threads;           /* DETACH: threads in the window */
    uint64_t events;            /* DETACH: events recorded */
    uint64_t dropped;           /* DETACH: events dropped (LOSS) */
    uint64_t write_errors;      /* DETACH: chunks that could not be written */
    uint64_t attach_ns;         /* FD after ATTACH: CLOCK_MONOTONIC when tracing started */
    uint64_t detach_ns;         /* DETACH: how long detaching took in the runtime */
    char msg[256];              /* a refusal: one line saying why and what to do */
};

#endif
