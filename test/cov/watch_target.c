/* The target of test/cov/watch_test.py: a small parser AFL++ finds its way into within
 * seconds, one function per stage, so a live campaign grows a queue and its coverage for a
 * while and then stops finding anything. Its input: argv[1] (@@) or stdin. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int st_w(const unsigned char *b, size_t n) { return n > 1 && b[1] == 'A' ? 2 : 1; }
static int st_wa(const unsigned char *b, size_t n) { return n > 2 && b[2] == 'T' ? 3 : 2; }
static int st_wat(const unsigned char *b, size_t n) { return n > 3 && b[3] == 'C' ? 4 : 3; }
static int st_watc(const unsigned char *b, size_t n) { return n > 4 && b[4] == 'H' ? 5 : 4; }
static int digits(const unsigned char *b, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n && b[i] >= '0' && b[i] <= '9'; i++)
        k++;
    return k;
}
static int many_digits(int k) { return k * 3; }
static int letters(const unsigned char *b, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += (b[i] | 0x20) >= 'a' && (b[i] | 0x20) <= 'z';
    return k;
}
static int spaces(const unsigned char *b, size_t n)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += b[i] == ' ';
    return k;
}
static int long_input(size_t n) { return (int)(n / 16); }
/* "SPIN": about 20 ms of CPU, for the test of --cpu (AFL++ does not find four bytes in a
 * short campaign) */
static int spin(void)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 20000000ul; i++)
        x += i;
    return (int)(x & 1);
}

int main(int argc, char **argv)
{
    unsigned char b[256];
    size_t n = 0;
    if (argc > 1) {
        FILE *f = fopen(argv[1], "rb");
        if (!f)
            return 2;
        n = fread(b, 1, sizeof(b), f);
        fclose(f);
    } else {
        ssize_t k = read(0, b, sizeof(b));
        n = k > 0 ? (size_t)k : 0;
    }
    int r = 0;
    if (n && b[0] == 'W') {
        r = st_w(b, n);
        if (r >= 2)
            r = st_wa(b, n);
        if (r >= 3)
            r = st_wat(b, n);
        if (r >= 4)
            r = st_watc(b, n);
    }
    if (n >= 4 && !memcmp(b, "SPIN", 4))
        r += spin();
    int d = digits(b, n);
    if (d > 3)
        r += many_digits(d);
    if (n && letters(b, n) > 4)
        r++;
    if (spaces(b, n) > 2)
        r++;
    if (n > 64)
        r += long_input(n);
    return r > 1000;
}
