/* A client of the fork server protocol v1 (include/ptcall/forkserver.h, docs/cov.md), as a
 * coverage tool speaks it, for counts_test.py: a reference for the tool side too.
 *
 *   fs_harness TIMEOUT_MS INPUT_FILE -- TARGET [ARGS...]
 *
 * Starts TARGET with PTCALL_FORKSERVER=198,199 and PTCALL_COUNTS_FD=<memfd> (libptcall.so in
 * LD_PRELOAD when PTCALL_RUNTIME names it), reads the hello, then for each line of its own
 * stdin writes the line's text into INPUT_FILE (which TARGET's arguments name, as `@@`
 * would) and into the target's stdin (a second file it rewinds), runs one input and prints
 * one line: `status=<raw wait status> hang=<0|1> counts=<module>:<c0>,<c1>,...;...`. A
 * child still running after TIMEOUT_MS is killed (SIGKILL) and reported as a hang. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ptcall/counts_format.h"
#include "ptcall/forkserver.h"

static int read_u32(int fd, uint32_t *v, int timeout_ms)
{
    size_t got = 0;
    while (got < 4) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, timeout_ms);
        if (r == 0)
            return 0; /* timed out */
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        ssize_t n = read(fd, (char *)v + got, 4 - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return 1;
}

static void put_file(int fd, const char *text)
{
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, strlen(text), 0) < 0 ||
        lseek(fd, 0, SEEK_SET) != 0) {
        perror("fs_harness: input");
        exit(1);
    }
}

static void print_counts(int memfd)
{
    struct stat sb;
    if (fstat(memfd, &sb) != 0 || sb.st_size < (off_t)sizeof(struct ptc_counts_file)) {
        printf(" counts=none\n");
        return;
    }
    uint8_t *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_SHARED, memfd, 0);
    if (m == MAP_FAILED) {
        perror("fs_harness: mmap");
        exit(1);
    }
    const struct ptc_counts_file *h = (const void *)m;
    if (memcmp(h->magic, PTC_COUNTS_FILE_MAGIC, 8) || h->version != PTC_COUNTS_FILE_VERSION ||
        h->total_size != (uint64_t)sb.st_size ||
        h->counters_offset + 8 * h->num_counters > h->total_size) {
        printf(" counts=bad\n");
        exit(1);
    }
    const struct ptc_counts_file_module *mods = (const void *)(m + h->modules_offset);
    const uint64_t *c = (const uint64_t *)(m + h->counters_offset);
    printf(" counts=");
    for (uint32_t i = 0; i < h->num_modules; i++) {
        const char *path = (const char *)m + h->strings_offset + mods[i].path;
        const char *base = strrchr(path, '/');
        printf("%s%s:", i ? ";" : "", base ? base + 1 : path);
        for (uint32_t j = 0; j < mods[i].num_funcs; j++)
            printf("%s%llu", j ? "," : "", (unsigned long long)c[mods[i].first_counter + j]);
    }
    printf("\n");
    munmap(m, (size_t)sb.st_size);
}

int main(int argc, char **argv)
{
    if (argc < 5 || strcmp(argv[3], "--")) {
        fprintf(stderr, "usage: fs_harness TIMEOUT_MS INPUT_FILE -- TARGET [ARGS...]\n");
        return 2;
    }
    int timeout = atoi(argv[1]);
    int in = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
    char stdin_path[4096];
    snprintf(stdin_path, sizeof(stdin_path), "%s.stdin", argv[2]);
    int sin = open(stdin_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    int memfd = memfd_create("ptcall-counts", MFD_CLOEXEC);
    int ctl[2], st[2];
    if (in < 0 || sin < 0 || memfd < 0 || pipe(ctl) || pipe(st)) {
        perror("fs_harness");
        return 1;
    }
    pid_t server = fork();
    if (server == 0) {
        /* ctl's read end and st's write end at the protocol's numbers; the memfd kept */
        if (dup2(ctl[0], PTCFS_CTL_FD) < 0 || dup2(st[1], PTCFS_ST_FD) < 0 || dup2(sin, 0) < 0)
            _exit(127);
        int cfd = dup(memfd); /* without CLOEXEC */
        char fs[32], cf[32];
        snprintf(fs, sizeof(fs), "%d,%d", PTCFS_CTL_FD, PTCFS_ST_FD);
        snprintf(cf, sizeof(cf), "%d", cfd);
        setenv(PTCFS_ENV, fs, 1);
        setenv(PTCFS_COUNTS_ENV, cf, 1);
        const char *rtlib = getenv("PTCALL_RUNTIME");
        if (rtlib && *rtlib)
            setenv("LD_PRELOAD", rtlib, 1);
        close(ctl[0]);
        close(ctl[1]);
        close(st[0]);
        close(st[1]);
        execv(argv[4], argv + 4);
        _exit(127);
    }
    close(ctl[0]);
    close(st[1]);
    uint32_t v;
    if (read_u32(st[0], &v, 10000) != 1 || v != PTCFS_HELLO) {
        fprintf(stderr, "fs_harness: no hello from the target (got %s 0x%x)\n",
                read_u32(st[0], &v, 0) ? "something" : "nothing", v);
        return 1;
    }
    printf("hello=0x%08x\n", v);
    fflush(stdout);
    char line[4096];
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\n")] = 0;
        put_file(in, line);
        put_file(sin, line);
        uint32_t cmd = PTCFS_CMD_RUN, pid, status;
        if (write(ctl[1], &cmd, 4) != 4 || read_u32(st[0], &pid, 10000) != 1 ||
            pid == PTCFS_ERROR) {
            fprintf(stderr, "fs_harness: the server did not start a child\n");
            return 1;
        }
        int hang = 0;
        int r = read_u32(st[0], &status, timeout);
        if (r == 0) { /* the tool's timeout: kill it, the status still comes */
            hang = 1;
            kill((pid_t)pid, SIGKILL);
            r = read_u32(st[0], &status, 10000);
        }
        if (r != 1) {
            fprintf(stderr, "fs_harness: no status from the server\n");
            return 1;
        }
        printf("status=%u hang=%d", status, hang);
        print_counts(memfd);
        fflush(stdout);
    }
    close(ctl[1]); /* EOF: the server exits 0 */
    int ws;
    waitpid(server, &ws, 0);
    printf("server=%d\n", ws);
    return 0;
}
