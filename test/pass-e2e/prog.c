/* pass-e2e C program: leaves, recursion, several returns, tail calls, setjmp/longjmp,
 * static functions, function pointers, and the two ways to opt out. */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include "ptcall/ptcall.h"

static jmp_buf env;
volatile int sink;

__attribute__((noinline)) int leaf_add(int a, int b) { return a + b; }

__attribute__((noinline)) int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

__attribute__((noinline)) int classify(int x)
{
    if (x < 0)
        return -1;
    if (x == 0)
        return 0;
    if (x > 100)
        return 2;
    return 1;
}

__attribute__((noinline)) int tail_target(int x) { sink = x; return x * 3; }
__attribute__((noinline)) int tail_caller(int x) { return tail_target(x + 1); }

__attribute__((noinline)) void jumper(int v) { longjmp(env, v); }

__attribute__((noinline)) int use_setjmp(void)
{
    int r = setjmp(env);
    if (r == 0) {
        jumper(7);
        return -100;
    }
    return r;
}

__attribute__((noinline)) static int static_helper(int x) { return x ^ 0x55; }

int second_unit(int x);
int third_unit(int x);

typedef int (*op_fn)(int, int);
__attribute__((noinline)) int apply(op_fn f, int a, int b) { return f(a, b); }

__attribute__((no_instrument_function, noinline)) int not_instrumented_cyg(int x) { return x + 11; }
PTCALL_NO_INSTRUMENT __attribute__((noinline)) int not_instrumented_annot(int x) { return x + 13; }

int main(int argc, char **argv)
{
    (void)argv;
    int n = 10 + (argc > 100);
    int total = 0;
    total += leaf_add(2, 3);
    total += fib(n);
    total += classify(-5) + classify(0) + classify(50) + classify(500);
    total += tail_caller(4);
    total += use_setjmp();
    total += static_helper(argc);
    total += apply(leaf_add, 20, 22);
    total += not_instrumented_cyg(1) + not_instrumented_annot(1);
    total += second_unit(n); /* 10 */
    total += third_unit(argc); /* 6 */
    printf("total=%d\n", total);
    return total == 5 + 55 + 2 + 15 + 7 + 84 + 42 + 26 + 10 + 6 ? 0 : 1;
}
