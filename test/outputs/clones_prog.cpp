// A C++20 coroutine (test/outputs/names_test.py clones): the compiler splits counter(int)
// into the ramp, counter(int) (.resume) and counter(int) (.destroy), three functions that
// the outputs must keep apart.
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

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5, sum = 0;
    gen g = counter(n);
    while (g.next())
        sum += g.value();
    printf("%d\n", sum);
    return 0;
}
