/* The parent calls parent_work() twice, the child child_work() three times; both run in_both()
 * once after the fork, inside forker(). */
#include <sys/wait.h>
#include <unistd.h>
#include "e2e.h"
static volatile int sink;
NOINLINE void parent_work(void) { sink += 1; }
NOINLINE void child_work(void) { sink += 2; }
NOINLINE void in_both(void) { sink += 3; }
NOINLINE int forker(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    in_both();
    if (pid == 0) {
        for (int i = 0; i < 3; i++)
            child_work();
        _exit(0);
    }
    for (int i = 0; i < 2; i++)
        parent_work();
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
int main(void) { return NOTAIL(forker()); }
