/* ptcall_mark with several labels on two threads, one of them hostile (quotes, backslash,
 * </script>, non-ASCII, a newline), inside calls and outside them, and 100 labels marked once
 * each, as a fuzzing driver marks each input with its path (test/outputs/marks_test.py).
 * Writes, to the file named by argv[1], one JSON object per label with the marks it made,
 * so the test compares ptcall's figures with what the program did. */
#include <pthread.h>
#include <stdio.h>

#include "ptcall/ptcall.h"

#define NOINLINE __attribute__((noinline))
#define INPUTS 100

static const char HOSTILE[] = "in\"put\\ </script><b>&amp; \xc3\xa9\xe2\x9c\x93\nnext\tline";
/* not UTF-8 (a stray byte, a cut sequence, a surrogate): shown with U+FFFD for each byte
 * that starts no valid sequence (decode.h, ptc_session_mark_label) */
static const char BAD_UTF8[] = "raw\xff \xc3( \xed\xa0\x80.";
static const char BAD_UTF8_SHOWN[] = "raw\xef\xbf\xbd \xef\xbf\xbd( "
                                     "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd.";

static volatile unsigned sink;
static unsigned long made[4]; /* frame, HOSTILE, worker, "" */

NOINLINE static void work(unsigned n)
{
    for (unsigned i = 0; i < n * 200; i++)
        sink += i;
}

NOINLINE static void frame(unsigned i)
{
    work(i + 1);
    ptcall_mark("frame"); /* inside two calls: depth 2 */
    made[0]++;
}

NOINLINE static void *worker(void *arg)
{
    (void)arg;
    for (unsigned i = 0; i < 3; i++) {
        work(2);
        ptcall_mark("worker");
        made[2]++;
    }
    return NULL;
}

static void put(FILE *f, const char *label, unsigned long n)
{
    fputc('{', f);
    fputs("\"label\": \"", f);
    for (const unsigned char *p = (const unsigned char *)label; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fprintf(f, "\", \"marks\": %lu}\n", n);
}

int main(int argc, char **argv)
{
    pthread_t th;
    if (pthread_create(&th, NULL, worker, NULL))
        return 2;
    for (unsigned i = 0; i < 5; i++)
        frame(i);
    for (unsigned i = 0; i < 2; i++) {
        work(1);
        ptcall_mark(HOSTILE);
        made[1]++;
    }
    ptcall_mark(NULL); /* "" */
    made[3]++;
    ptcall_mark(BAD_UTF8);
    for (unsigned i = 0; i < INPUTS; i++) {
        char label[32];
        snprintf(label, sizeof(label), "input %u", i);
        work(1);
        ptcall_mark(label);
    }
    pthread_join(th, NULL);
    FILE *f = argc > 1 ? fopen(argv[1], "w") : stdout;
    if (!f)
        return 2;
    put(f, "frame", made[0]);
    put(f, HOSTILE, made[1]);
    put(f, "worker", made[2]);
    put(f, "", made[3]);
    put(f, BAD_UTF8_SHOWN, 1);
    for (unsigned i = 0; i < INPUTS; i++) {
        char label[32];
        snprintf(label, sizeof(label), "input %u", i);
        put(f, label, 1);
    }
    return fclose(f) ? 2 : 0;
}
