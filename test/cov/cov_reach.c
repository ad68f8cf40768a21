/* A target of test/cov/reach_test.py with known unreachable code (docs/cov.md, *Reachability
 * and the frontier*). The harness (LLVMFuzzerTestOneInput, called by main on the file named
 * by argv[1]) dispatches through a table of handlers of type int(const uint8_t *, size_t):
 *   - api_unused -> api_mid -> api_deep: never called by anything: unreachable;
 *   - cb_other (void(int)): address taken, but no call through a pointer has its type:
 *     unreachable;
 *   - cb_match (the handlers' type): address taken, stored and never called: reachable by
 *     pointer, not reached;
 *   - h_beta: in the table, its slot never chosen by the corpus (every input starts with an
 *     even byte): reachable, not reached;
 *   - rare -> rare_deep: called by dispatch for inputs starting with 'R' (none): the frontier
 *     callee with the most code behind it;
 *   - the branch on 'Z' at position 2: never taken (no input has it): a branch frontier.
 * Compiled -O0 so that the calls stay as written. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*handler_fn)(const uint8_t *, size_t);
typedef void (*log_fn)(int);

int sink;

__attribute__((noinline)) void api_deep(int x) { sink += x * 3; }
__attribute__((noinline)) void api_mid(int x) { api_deep(x + 1); sink ^= x; }
__attribute__((noinline)) void api_unused(int x) { api_mid(x); api_mid(x + 2); }

__attribute__((noinline)) void cb_other(int x) { sink -= x; }
__attribute__((noinline)) int cb_match(const uint8_t *d, size_t n) { return (int)n + d[0]; }

__attribute__((noinline)) static int h_alpha(const uint8_t *d, size_t n) { return n > 1 && d[1] == 'x'; }
__attribute__((noinline)) static int h_beta(const uint8_t *d, size_t n) { return (int)n * 2 + d[0]; }

static const handler_fn table[2] = {h_alpha, h_beta};
handler_fn spare = cb_match;
log_fn logger = cb_other;

__attribute__((noinline)) int rare_deep(int x)
{
    int s = 0;
    for (int i = 0; i < x; i++)
        s += i * i;
    return s;
}
__attribute__((noinline)) int rare(int x) { return rare_deep(x) + rare_deep(x + 1) + 7; }

__attribute__((noinline)) static int dispatch(const uint8_t *d, size_t n)
{
    int r = table[d[0] & 1](d, n);
    if (d[0] == 'R')
        r += rare((int)n);
    if (n > 3 && d[2] == 'Z') {
        r += 11;
        sink += r * 5;
        sink ^= 0x55;
    }
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    if (n == 0)
        return 0;
    sink += dispatch(d, n);
    return 0;
}

int main(int argc, char **argv)
{
    uint8_t buf[256];
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    if (!f)
        return 1;
    size_t n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    return LLVMFuzzerTestOneInput(buf, n);
}
