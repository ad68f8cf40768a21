/* A dynamically linked program for the full-PT estimator's test (test_fullpt.c "dynamic"):
 * spin()'s inline-asm loop runs its jnz exactly 500 times (499 taken); the libc calls go
 * through PLT stubs. */
#include <unistd.h>

__attribute__((noinline)) void spin(void)
{
    __asm__ volatile("mov $500, %%ecx\n"
                     "1:\n\t"
                     "dec %%ecx\n\t"
                     "jnz 1b"
                     :
                     :
                     : "ecx", "cc");
}

int main(void)
{
    spin();
    pid_t a = getpid(), b = getppid(), c = getpid();
    return a == c && b != a ? 0 : 1;
}
