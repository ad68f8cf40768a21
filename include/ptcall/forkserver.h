/* ptcall fork server protocol, version 1 (docs/cov.md, "Fork server protocol v1").
 *
 * The tool starts the target with PTCALL_FORKSERVER=<ctl_fd>,<st_fd> (ctl: the read end of a
 * pipe tool -> target; st: the write end of a pipe target -> tool) and
 * PTCALL_COUNTS_FD=<fd> (a file of size 0 the child inherits; counts_format.h). Counting
 * mode is implied. Right before main (every constructor of the executable and of the
 * libraries loaded with it has run, so every such instrumented object has registered) the
 * runtime lays out and maps the counts file, then serves:
 *
 *   (the server unsets both variables, so that a program a child execs runs uncounted)
 *   target -> tool   u32 PTCFS_HELLO
 *   loop:
 *     tool -> target u32 command: PTCFS_CMD_RUN (EOF on ctl: the server exits with status 0)
 *     the server zeroes the counters and forks; the child closes ctl and st and runs main
 *     target -> tool u32 the child's pid
 *     target -> tool u32 the child's raw wait status (waitpid), once it has ended
 *
 * The tool reads the counters from its own mapping of the counts file after the status. For
 * a timeout it kills the pid itself (SIGKILL) and still reads the status. All integers in
 * host byte order (little-endian). A command other than PTCFS_CMD_RUN makes the server write
 * PTCFS_ERROR and exit with status 2.
 */
#ifndef PTCALL_FORKSERVER_H
#define PTCALL_FORKSERVER_H

#include <stdint.h>

#define PTCFS_VERSION 1u
/* "PFS" and the version in the low byte: 0x50465301 */
#define PTCFS_HELLO (0x50465300u | PTCFS_VERSION)
#define PTCFS_CMD_RUN 1u
/* Written instead of a pid when the server cannot go on (fork failed, unknown command);
 * the server then exits. */
#define PTCFS_ERROR 0xffffffffu

#define PTCFS_ENV "PTCALL_FORKSERVER"    /* "<ctl_fd>,<st_fd>" */
#define PTCFS_COUNTS_ENV "PTCALL_COUNTS_FD" /* "<fd>" */
/* "1": the server starts where the program calls ptcall_forkserver_start() (ptcall.h), not
 * before main; the hello comes from there. A program whose main returns without calling it
 * writes PTCFS_ERROR instead of the hello and exits with status 2. */
#define PTCFS_DEFER_ENV "PTCALL_FORKSERVER_DEFER"
/* "<fd>": the server starts at the first call of LLVMFuzzerTestOneInput (ptcall-cc's entry
 * hook, __ptcall_fuzz_input), deferred as above; each child reads the whole of fd's file (the
 * tool's work file, written before the run command) and runs the harness once on it, in
 * place of the arguments it was called with; a second call in the child ends it (status 0).
 * A program that ends without calling the harness writes PTCFS_ERROR instead of the hello. */
#define PTCFS_HARNESS_ENV "PTCALL_FORKSERVER_HARNESS"
#define PTCFS_INPUT_FD 196 /* the descriptor the tool gives it (a convention) */
#define PTCFS_CTL_FD 198 /* the descriptors the tool uses (a convention, not a requirement) */
#define PTCFS_ST_FD 199

#endif
