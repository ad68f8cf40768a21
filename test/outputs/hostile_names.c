/* A program whose function names and source paths hold what legal ELF symbols and Linux
 * paths may hold and outputs must not pass on raw (test/outputs/names_test.py): bytes that
 * are not UTF-8, a newline, terminal escape sequences, CSV formula prefixes, a tab, quotes,
 * a backslash, the frames' separator of folded stacks, markup, DEL and a C1 control (U+009B,
 * a CSI to some terminals). The asm labels give the functions these exact symbol names (the
 * assembler takes any bytes in a quoted symbol); #line gives the later ones a source path
 * with an invalid byte, an ESC and a newline. */
#include <stdio.h>
#include <stdlib.h>

#define NI __attribute__((noinline))
NI int bad_utf8(int x) __asm__("bad\xff\xfe" "name");
NI int newline_fn(int x) __asm__("new\nline");
NI int esc_fn(int x) __asm__("esc\x1b[31mred\x1b[0m");
NI int formula_fn(int x) __asm__("=HYPERLINK(\"http://x\",\"y\")");
NI int plus_fn(int x) __asm__("+plus");
NI int minus_fn(int x) __asm__("-minus");
NI int at_fn(int x) __asm__("@at");
NI int misc_fn(int x) __asm__("tab\tq\"uote\\back;semi,comma<amp&>\x7f\xc2\x9b" "csi");
int long_name_entry(int x); /* hostile_long.cpp */

NI int bad_utf8(int x) { return x + 1; }
NI int newline_fn(int x) { return bad_utf8(x) * 2; }
NI int esc_fn(int x) { return newline_fn(x) ^ 3; }
#line 1 "dir\xff\x1b/file\nname.c"
NI int formula_fn(int x) { return esc_fn(x) + 4; }
NI int plus_fn(int x) { return formula_fn(x) - 1; }
NI int minus_fn(int x) { return plus_fn(x) + 7; }
NI int at_fn(int x) { return minus_fn(x) * 3; }
NI int misc_fn(int x) { return at_fn(x) + 1; }

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 3, acc = 0;
    for (int i = 0; i < n; i++)
        acc += misc_fn(i) + long_name_entry(i);
    printf("%d\n", acc);
    return 0;
}
