// Clones (test/outputs/names_test.py clones): a C++20 coroutine, which the compiler splits
// into the ramp counter(int), counter(int) (.resume) and counter(int) (.destroy), three
// functions that the outputs must keep apart; and two functions named as LLVM names the clones
// it makes of foo(int), a cold part (.cold) and ThinLTO's renamed copy (.llvm.N) (asm labels:
// the same symbols as the compiler's own clones, so the same demangled names).
#include <coroutine>
#include <cstdio>
#include <cstdlib>

struct gen {
    struct promise_type {
        int value = 0;
        gen get_return_object() { return gen{std::coroutine_handle<promise_type>::from_promise(*this)}; }
        std::suspend_always initial_suspend() noexcept { return {}; }
        std::suspend_always final_suspend() noexcept { return {}; }
        std::suspend_always yield_value(int v) noexcept { value = v; return {}; }
        void return_void() noexcept {}
        void unhandled_exception() { std::abort(); }
    };
    std::coroutine_handle<promise_type> h;
    explicit gen(std::coroutine_handle<promise_type> h) : h(h) {}
    gen(gen &&o) noexcept : h(o.h) { o.h = {}; }
    ~gen() { if (h) h.destroy(); }
    bool next() { h.resume(); return !h.done(); }
    int value() const { return h.promise().value; }
};

__attribute__((noinline)) gen counter(int n)
{
    for (int i = 0; i < n; i++)
        co_yield i;
}

__attribute__((noinline)) int foo(int x) { return x + 1; }
__attribute__((noinline)) int foo_cold(int x) __asm__("_Z3fooi.cold");
__attribute__((noinline)) int foo_cold(int x) { return x * 3; }
__attribute__((noinline)) int foo_llvm(int x) __asm__("_Z3fooi.llvm.4242");
__attribute__((noinline)) int foo_llvm(int x) { return x * 5; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5, sum = 0;
    gen g = counter(n);
    while (g.next())
        sum += g.value();
    sum += foo(n) + foo_cold(n) + foo_cold(n + 1) + foo_llvm(n) + foo_llvm(n + 1) + foo_llvm(n + 2);
    printf("%d\n", sum);
    return 0;
}
