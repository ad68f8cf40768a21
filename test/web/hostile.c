/* A program whose function names are markup: the web views must show them as text and run
 * none of them (test/web/web_test.py). The asm labels give the functions these exact
 * symbol names; the assembler takes any bytes in a quoted symbol. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int script_fn(int x) __asm__("<script>alert(1)</script>");
__attribute__((noinline)) int img_fn(int x) __asm__("<img src=x onerror=alert(2)>&amp;\"'");

__attribute__((noinline)) int script_fn(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int img_fn(int x)
{
    return script_fn(x) ^ 5;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 100, acc = 0;
    for (int i = 0; i < n; i++)
        acc += img_fn(i) + script_fn(i);
    printf("%d\n", acc);
    return 0;
}
