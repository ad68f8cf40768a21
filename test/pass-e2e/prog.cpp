// pass-e2e C++ program: exceptions (landing pads, cleanups, rethrow), classes, templates.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace pe2e {

struct Guard {
    int *counter;
    explicit Guard(int *c) : counter(c) { ++*counter; }
    ~Guard() { --*counter; }
};

__attribute__((noinline)) int thrower(int x)
{
    if (x > 2)
        throw std::runtime_error("too big: " + std::to_string(x));
    return x * 2;
}

__attribute__((noinline)) int with_cleanup(int x, int *live)
{
    Guard g(live);
    return thrower(x) + 1;
}

__attribute__((noinline)) int catcher(int x, int *live)
{
    try {
        return with_cleanup(x, live);
    } catch (const std::runtime_error &e) {
        return -static_cast<int>(std::string(e.what()).size());
    }
}

__attribute__((noinline)) void rethrower(int x, int *live)
{
    try {
        with_cleanup(x, live);
    } catch (...) {
        throw;
    }
}

template <typename T> struct Acc {
    T sum{};
    __attribute__((noinline)) void add(T v) { sum += v; }
};

int second_cxx_unit(int n);
} // namespace pe2e

int main()
{
    int live = 0, total = 0;
    total += pe2e::catcher(1, &live);  // 3
    total += pe2e::catcher(5, &live);  // -10 ("too big: 5")
    try {
        pe2e::rethrower(9, &live);
    } catch (const std::exception &) {
        total += 100;
    }
    pe2e::Acc<long> acc;
    for (int i = 0; i < 4; i++)
        acc.add(i);
    total += static_cast<int>(acc.sum); // 6
    std::vector<int> v{1, 2, 3};
    total += static_cast<int>(v.size());
    total += pe2e::second_cxx_unit(3); // 3 + 3
    std::printf("total=%d live=%d\n", total, live);
    return total == 3 - 10 + 100 + 6 + 3 + 6 && live == 0 ? 0 : 1;
}
