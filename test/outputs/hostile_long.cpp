// A C++ function whose display name is 200,014 characters: take<T>(T) for a struct whose
// name is 100,000 'A's, made by the preprocessor (65536 + 32768 + 1024 + 512 + 128 + 32).
// test/outputs/names_test.py compiles it without -g: its functions have no source line.
#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define D1(x) CAT(x, x)
#define D2(x) D1(D1(x))
#define D4(x) D2(D2(x))
#define D5(x) D1(D4(x))
#define D7(x) D2(D5(x))
#define D8(x) D4(D4(x))
#define D9(x) D1(D8(x))
#define D10(x) D2(D8(x))
#define D15(x) D8(D7(x))
#define D16(x) D8(D8(x))
#define LONG CAT(D16(A), CAT(D15(A), CAT(D10(A), CAT(D9(A), CAT(D7(A), D5(A))))))

struct LONG {
    int v;
};

template <class T> __attribute__((noinline)) int take(T t)
{
    return t.v + 1;
}

extern "C" int long_name_entry(int x)
{
    LONG a{x};
    return take(a);
}
