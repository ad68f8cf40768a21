/* What ptcall-cc's AFL++ macros call (pass/ptcall-wrapper.sh.in; docs/cov.md, "Harness
 * shapes"): a harness written for afl-clang-fast's persistent and deferred modes builds with
 * ptcall-cc and is measured exactly per input, one input per fork-server child.
 *
 *   __AFL_LOOP(n)             __ptcall_afl_loop: true once per process. Each fork-server
 *                             child is a new process, so each runs the loop's body for one
 *                             input: the boundary is exact (AFL++ reuses a process for n
 *                             inputs; its maps are reset in between, ptcall's counters are not).
 *   __AFL_INIT()              __ptcall_afl_init: the deferred fork server starts here
 *                             (ptcall_forkserver_start; `cov run` defers by itself, as afl-fuzz
 *                             does for a target built with it).
 *   __AFL_FUZZ_TESTCASE_LEN   __ptcall_afl_testcase_len: the input, read from stdin into the
 *                             buffer below at its first use in each pass of the loop.
 *   __AFL_FUZZ_TESTCASE_BUF   __ptcall_afl_testcase_buf: that buffer (its address is fixed,
 *                             as harnesses take it once before the loop). At most AFL++'s
 *                             MAX_FILE (1 MiB) is read, as AFL++ does; longer inputs are cut
 *                             there, and that is said once on stderr. */
#include <errno.h>
#include <unistd.h>

#include "soft_internal.h"

void __ptcall_forkserver_start(void); /* soft_forkserver.c */

#define AFL_MAX_FILE (1u << 20)

static unsigned char afl_buf[AFL_MAX_FILE];
static int afl_passes;      /* loop passes begun in this process */
static int afl_len = -1;    /* this pass's input length, -1: not read yet */
static int afl_cut_said;

PTC_API int __ptcall_afl_loop(unsigned int max)
{
    (void)max;
    afl_len = -1;
    return afl_passes++ == 0;
}

PTC_API void __ptcall_afl_init(void)
{
    __ptcall_forkserver_start();
}

PTC_API unsigned char *__ptcall_afl_testcase_buf(void)
{
    return afl_buf;
}

PTC_API int __ptcall_afl_testcase_len(void)
{
    if (afl_len >= 0)
        return afl_len;
    size_t got = 0;
    while (got < sizeof(afl_buf)) {
        ssize_t k = read(0, afl_buf + got, sizeof(afl_buf) - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    char more;
    if (got == sizeof(afl_buf) && !afl_cut_said && read(0, &more, 1) == 1) {
        afl_cut_said = 1;
        warn("ptcall: __AFL_FUZZ_TESTCASE_LEN: the input is longer than %u bytes (AFL++'s "
             "MAX_FILE): only its first %u bytes are used, as AFL++ does", AFL_MAX_FILE,
             AFL_MAX_FILE);
    }
    afl_len = (int)got;
    return afl_len;
}
