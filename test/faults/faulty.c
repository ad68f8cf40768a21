/* A program that ends in the way its first argument names, after making calls (each call of
 * work() is two events): for the fault suite (faults_test.py).
 *   faulty MODE CALLS
 * MODE: ok, fail (exit 3), kill (SIGKILL itself), segv, abort, _exit, thread_exit (exit() from
 * a second thread while the first still calls)
 *   faulty cutkill N    N calls, 0.3 s (the periodic flush writes them), then appends to
 *                       its own trace (PTCALL_OUTPUT) the first 100 bytes of a SOFT_EVENTS
 *                       chunk that announces 4,096 bytes and 500 records, as a drain's write
 *                       cut by SIGKILL leaves it, and kills itself with SIGKILL
 *   faulty exitrace N FILE
 * the main thread calls work_main() until a second thread, after N calls of work(), sets a
 * flag and calls exit(4); main stops calling once it sees the flag, and keeps in FILE (shared
 * memory) how many calls it made: all of them must be in the trace. Run with
 * PTCALL_TEST_QUEUE_DELAY_US, main is nearly always handing a full buffer over when exit()
 * begins (the final flush must wait for it)
 *   faulty slow FILE
 * calls work() 10 times every 100 us until killed, keeping in FILE (shared memory) how many
 * calls it made and when it started: for the SIGKILL loss bound (faults_test.py)
 *   faulty forkstorm N
 * forks N times (each child calls work() and exits; the parent waits for it) while a 10 kHz
 * SIGALRM handler calls on_alarm(); prints how often the handler ran
 *   faulty forkexec N
 * N times: fork; the child calls work() and execs this program as `faulty ok 1`; the parent
 * waits for it. Every child's events must start with its parent's stack at the fork
 *   faulty execsh N     N calls, then exec /bin/true (an uninstrumented program)
 *   faulty vfork N      N calls; vfork, the child execs this program as `faulty ok N`
 *   faulty spawn N      N calls; posix_spawn of this program as `faulty ok N`, waited for
 *   faulty spawnp N     the same with posix_spawnp
 *   faulty forkpty N    N calls; forkpty(): the child calls work() N times on the new
 *                       terminal and exits 0; the parent reads the terminal until the child
 *                       has gone and waits for it
 *   faulty daemon N MS FILE
 *                       daemon(): the parent exits 0 at once; the daemon calls work() N
 *                       times over about MS milliseconds, then creates FILE and exits
 *   faulty churn N      two threads call work() N times each while main creates and joins
 *                       1,000 short threads (100 calls each) one after another
 *   faulty dropfork N   two threads call work() N times each while main forks 20 times (each
 *                       child calls work() 10 times and _exits); prints the calls made
 *   faulty closeall N HOW
 *                       N calls; closes every descriptor above 2 (HOW: close_range,
 *                       closefrom, each (close() of each entry of /proc/self/fd), dup2 (dup2 of
 *                       /dev/null onto each)); N calls more
 *   faulty storm N
 * calls work() N times while a second thread sends SIGUSR1 to the first as fast as it can,
 * whose handler calls on_alarm(); prints how often the handler ran */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) static long work(long x)
{
    sink += x;
    return x * 2 + 1;
}

static void calls(long n)
{
    for (long i = 0; i < n; i++)
        work(i);
}

static void *exiter(void *arg)
{
    calls((long)arg);
    exit(4);
}

/* What the test reads after killing the program; calls is updated after each batch. */
struct progress {
    volatile long calls;
    volatile double t0; /* CLOCK_MONOTONIC seconds */
    volatile int pid;
};

__attribute__((noinline)) static long work_main(long x)
{
    sink += x;
    return x * 2 + 1;
}

static volatile int exiting;

static void *race_exiter(void *arg)
{
    calls((long)arg);
    struct timespec nap = {0, 5 * 1000 * 1000}; /* main is asleep in the runtime by now */
    nanosleep(&nap, NULL);
    exiting = 1;
    exit(4);
}

static int exitrace(long n, const char *file)
{
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(long)) != 0)
        return 2;
    volatile long *made = mmap(NULL, sizeof(long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (made == MAP_FAILED)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, race_exiter, (void *)n) != 0)
        return 2;
    for (long i = 0; !exiting; i++) {
        work_main(i);
        *made = i + 1;
    }
    for (;;) /* exit() in the other thread ends the process */
        pause();
}

static int slow(const char *file)
{
    int fd = open(file, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct progress)) != 0)
        return 2;
    struct progress *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        return 2;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    p->t0 = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    p->pid = (int)getpid();
    for (;;) {
        calls(10);
        p->calls += 10;
        usleep(100);
    }
}

static volatile sig_atomic_t handled;

__attribute__((noinline)) void on_alarm(void) { sink++; }

static void alarm_handler(int sig)
{
    (void)sig;
    handled++;
    on_alarm();
}

static int forkstorm(long n)
{
    struct sigaction sa = {0};
    sa.sa_handler = alarm_handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct itimerval it = {{0, 100}, {0, 100}};
    if (sigaction(SIGALRM, &sa, NULL) != 0 || setitimer(ITIMER_REAL, &it, NULL) != 0)
        return 2;
    for (long i = 0; i < n; i++) {
        pid_t c = fork();
        if (c == 0) {
            work(i);
            _exit(0);
        }
        if (c < 0)
            return 2;
        while (waitpid(c, NULL, 0) < 0)
            ;
        work(i);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    printf("handled %d\n", (int)handled);
    return 0;
}

__attribute__((noinline)) static int spawn_one(const char *self, long i)
{
    pid_t c = fork();
    if (c == 0) {
        work(i);
        execl(self, self, "ok", "1", (char *)NULL);
        _exit(127);
    }
    if (c < 0)
        return -1;
    int st;
    while (waitpid(c, &st, 0) < 0)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int forkexec(const char *self, long n)
{
    for (long i = 0; i < n; i++)
        if (spawn_one(self, i) < 0)
            return 2;
    printf("made %ld children\n", n);
    return 0;
}

extern char **environ;

/* how: 'v' vfork and execv, 's' posix_spawn, 'p' posix_spawnp */
__attribute__((noinline)) static int run_self(const char *self, long n, char how)
{
    char num[32];
    snprintf(num, sizeof(num), "%ld", n);
    char *argv[] = {(char *)self, "ok", num, NULL};
    pid_t c;
    if (how == 'v') {
        c = vfork();
        if (c == 0) {
            execv(self, argv);
            _exit(127);
        }
    } else if ((how == 's' ? posix_spawn : posix_spawnp)(&c, self, NULL, NULL, argv, environ)) {
        return 2;
    }
    if (c < 0)
        return 2;
    int st;
    while (waitpid(c, &st, 0) < 0)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2;
}

/* forkpty() forks inside libc (glibc's own fork, not the PLT's): the child's fork point is
 * what the fault suite checks */
static int run_forkpty(long n)
{
    int master;
    pid_t c = forkpty(&master, NULL, NULL, NULL);
    if (c < 0)
        return 2;
    if (c == 0) {
        calls(n);
        printf("child made %ld calls\n", n);
        return 0;
    }
    char buf[256];
    while (read(master, buf, sizeof(buf)) > 0) /* EIO once the child's side is closed */
        ;
    close(master);
    int st;
    while (waitpid(c, &st, 0) < 0)
        ;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2;
}

static int run_daemon(long n, long ms, const char *file)
{
    if (daemon(1, 1) != 0)
        return 2;
    for (long i = 0; i < n; i++) {
        work(i);
        if (n >= ms && i % (n / ms) == 0)
            usleep(1000);
    }
    int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0)
        close(fd);
    return 0;
}

static void *short_thread(void *arg)
{
    (void)arg;
    calls(100);
    return NULL;
}

static void *busy_thread(void *arg)
{
    calls((long)arg);
    return NULL;
}

static int churn(long n)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, busy_thread, (void *)n) ||
        pthread_create(&b, NULL, busy_thread, (void *)n))
        return 2;
    for (int i = 0; i < 1000; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, short_thread, NULL) != 0)
            return 2;
        pthread_join(t, NULL);
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("made %ld calls\n", 2 * n + 1000 * 100);
    return 0;
}

static int dropfork(long n)
{
    pthread_t a, b;
    if (pthread_create(&a, NULL, busy_thread, (void *)n) ||
        pthread_create(&b, NULL, busy_thread, (void *)n))
        return 2;
    for (int i = 0; i < 20; i++) {
        calls(1000);
        pid_t c = fork();
        if (c == 0) {
            calls(10);
            _exit(0);
        }
        if (c < 0)
            return 2;
        while (waitpid(c, NULL, 0) < 0)
            ;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("made %ld calls\n", 2 * n + 20 * 1000 + 20 * 10);
    return 0;
}

static int close_all(long n, const char *how)
{
    calls(n);
    if (!strcmp(how, "close_range")) {
        if (close_range(3, ~0u, 0) != 0)
            return 2;
    } else if (!strcmp(how, "closefrom")) {
        closefrom(3);
    } else {
        int null = open("/dev/null", O_RDWR);
        DIR *d = opendir("/proc/self/fd");
        if (!d || null < 0)
            return 2;
        int fds[4096], nfd = 0;
        struct dirent *e;
        while ((e = readdir(d)) && nfd < 4096)
            if (e->d_name[0] != '.')
                fds[nfd++] = atoi(e->d_name);
        closedir(d);
        for (int i = 0; i < nfd; i++) {
            if (fds[i] <= 2 || fds[i] == null)
                continue;
            if (!strcmp(how, "dup2"))
                dup2(null, fds[i]);
            else
                close(fds[i]);
        }
    }
    calls(n);
    printf("made %ld calls\n", 2 * n);
    return 0;
}

static volatile int storm_stop;
static pthread_t storm_target;

static void *pester(void *arg)
{
    (void)arg;
    while (!storm_stop)
        pthread_kill(storm_target, SIGUSR1);
    return NULL;
}

static int storm(long n)
{
    struct sigaction sa = {0};
    sa.sa_handler = alarm_handler;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0)
        return 2;
    storm_target = pthread_self();
    pthread_t t;
    if (pthread_create(&t, NULL, pester, NULL) != 0)
        return 2;
    calls(n);
    storm_stop = 1;
    pthread_join(t, NULL); /* a signal still pending is delivered on the way back */
    printf("handled %d\n", (int)handled);
    return 0;
}

/* A disk that fills up and frees space again while the program calls: calls, then another
 * process (here the program itself) fills the file system but for 8 KiB, so that the next
 * chunk is cut after 8 KiB; more calls; the space comes back; more calls. */
static int fill_free(long n, const char *filler)
{
    static char block[65536];
    calls(n);
    usleep(300 * 1000); /* the periodic flush writes them */
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return 2;
    off_t size = 0;
    for (;;) {
        ssize_t w = write(fd, block, sizeof(block));
        if (w <= 0)
            break;
        size += w;
    }
    if (ftruncate(fd, size > 8192 ? size - 8192 : 0) != 0)
        return 2;
    close(fd);
    calls(n);
    usleep(300 * 1000);
    unlink(filler);
    calls(n);
    printf("made %ld calls\n", 3 * n);
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "ok";
    long n = argc > 2 ? atol(argv[2]) : 100000;
    if (!strcmp(mode, "slow"))
        return argc > 2 ? slow(argv[2]) : 2;
    if (!strcmp(mode, "exitrace"))
        return argc > 3 ? exitrace(n, argv[3]) : 2;
    if (!strcmp(mode, "forkstorm"))
        return forkstorm(argc > 2 ? atol(argv[2]) : 1000);
    if (!strcmp(mode, "daemon"))
        return argc > 4 ? run_daemon(n, atol(argv[3]), argv[4]) : 2;
    if (!strcmp(mode, "closeall"))
        return argc > 3 ? close_all(n, argv[3]) : 2;
    if (!strcmp(mode, "dropfork"))
        return dropfork(n);
    if (!strcmp(mode, "churn"))
        return churn(n);
    if (!strcmp(mode, "forkexec"))
        return forkexec(argv[0], argc > 2 ? atol(argv[2]) : 1000);
    if (!strcmp(mode, "fillfree"))
        return argc > 3 ? fill_free(n, argv[3]) : 2;
    if (!strcmp(mode, "storm"))
        return storm(argc > 2 ? atol(argv[2]) : 300000);
    calls(n);
    printf("made %ld calls\n", n);
    fflush(stdout);
    if (!strcmp(mode, "execsh")) {
        execl("/bin/true", "true", (char *)NULL);
        return 127;
    }
    if (!strcmp(mode, "vfork") || !strcmp(mode, "spawn") || !strcmp(mode, "spawnp"))
        return run_self(argv[0], n, mode[0] == 'v' ? 'v' : mode[5] ? 'p' : 's');
    if (!strcmp(mode, "forkpty"))
        return run_forkpty(n);
    if (!strcmp(mode, "fail"))
        return 3;
    if (!strcmp(mode, "cutkill") || !strcmp(mode, "cutgoon")) {
        usleep(300 * 1000); /* the periodic flush writes the calls first */
        const char *out = getenv("PTCALL_OUTPUT");
        int fd = out ? open(out, O_WRONLY | O_APPEND) : -1;
        uint8_t part[100] = {7, 0, 0, 0, 0x00, 0x10, 0, 0}; /* SOFT_EVENTS, 4,096 bytes */
        part[24 + 16] = 500 & 0xff; /* its num_records, which the cut leaves */
        part[24 + 17] = 500 >> 8;
        if (fd < 0 || write(fd, part, sizeof(part)) != (ssize_t)sizeof(part))
            return 2;
        if (mode[3] == 'k')
            raise(SIGKILL);
        /* cutgoon: the process goes on, its chunks now after a cut one (as another process's
         * after one cut by a full disk or a kill) */
        calls(n);
        printf("made %ld calls\n", n);
        return 0;
    }
    if (!strcmp(mode, "kill"))
        raise(SIGKILL);
    if (!strcmp(mode, "segv"))
        *(volatile int *)(uintptr_t)8 = 1;
    if (!strcmp(mode, "abort"))
        abort();
    if (!strcmp(mode, "_exit"))
        _exit(5);
    if (!strcmp(mode, "thread_exit")) {
        pthread_t t;
        pthread_create(&t, NULL, exiter, (void *)n);
        for (;;)
            calls(1000);
    }
    return 0;
}
