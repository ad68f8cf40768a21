// pass-e2e: a second C++ unit that emits the same inline (linkonce_odr) functions as
// prog.cpp. The linker keeps one body of each; both units keep their stubs and records, and
// only the kept copy's stubs run.
#include <string>
#include <vector>

namespace pe2e {
template <typename T> struct Acc {
    T sum{};
    __attribute__((noinline)) void add(T v) { sum += v; }
};

__attribute__((noinline)) int second_cxx_unit(int n)
{
    Acc<long> acc;
    std::vector<std::string> v;
    for (int i = 0; i < n; i++) {
        acc.add(i);
        v.push_back(std::to_string(i));
    }
    return static_cast<int>(acc.sum) + static_cast<int>(v.size());
}
} // namespace pe2e
