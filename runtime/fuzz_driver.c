/* libptcall_fuzz_driver.a: main() for a libFuzzer-style harness (docs/cov.md, "Marks"),
 * linked by `ptcall-cc -fptcall-fuzz-driver`.
 *
 *   ./harness [-flag=value ...] FILE|DIR...
 *
 * Calls LLVMFuzzerInitialize(&argc, &argv) if the harness defines it, then
 * LLVMFuzzerTestOneInput once per input: each FILE, and each regular file directly inside
 * each DIR (sorted by name), in the order given, and ptcall_mark(path) after each, so that
 * counting mode (`ptcall record --counts`) writes one COUNTS segment per input, labelled with
 * its path, as soon as the input is done: an input that crashes the process leaves the
 * earlier inputs' segments in the file, and its own is the crash segment. Arguments starting
 * with '-' are libFuzzer's flags: ignored. Unreadable files and entries that are not regular
 * files are reported on stderr and skipped. Each input is passed in a buffer of exactly its
 * size (malloc'd), so a sanitizer sees reads past its end. Exit status 0, or 1 when an
 * input could not be read.
 *
 * Not instrumented, and it uses nothing of the runtime but the weak ptcall_mark: without the
 * runtime it runs the inputs and marks nothing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptcall/ptcall.h"

/* How `ptcall cov run` tells this driver's main from libFuzzer's or a harness's own (docs/
 * cov.md, "Harness shapes"): a section of its own, which strip keeps and which is in the
 * program whenever main comes from here (same object). */
__attribute__((used, section("ptcall_fuzz_driver"))) static const char driver_marker[] =
    "ptcall fuzz driver 1";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

/* Reads path whole into a buffer of its exact size (1 byte for an empty file, so that data
 * is never NULL). 0, or -1 after a message. */
static int read_input(const char *path, uint8_t **data, size_t *size)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (!f || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "ptcall fuzz driver: cannot read %s: %s; skipped\n", path,
                strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    size_t n = (size_t)st.st_size;
    uint8_t *b = malloc(n ? n : 1);
    if (!b || fread(b, 1, n, f) != n) {
        fprintf(stderr, "ptcall fuzz driver: cannot read %s: %s; skipped\n", path,
                b ? "short read" : "out of memory");
        free(b);
        fclose(f);
        return -1;
    }
    fclose(f);
    *data = b;
    *size = n;
    return 0;
}

static int run_file(const char *path)
{
    uint8_t *data;
    size_t size;
    if (read_input(path, &data, &size) != 0)
        return -1;
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    ptcall_mark(path);
    return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int only_entries(const struct dirent *d)
{
    return strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
}

/* Each regular file directly inside dir, sorted by name. Returns the number of failures. */
static int run_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, only_entries, by_name);
    if (n < 0) {
        fprintf(stderr, "ptcall fuzz driver: cannot list %s: %s; skipped\n", dir,
                strerror(errno));
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(dir) + strlen(names[i]->d_name) + 2;
        char *path = malloc(len);
        struct stat st;
        if (!path) {
            bad++;
        } else {
            snprintf(path, len, "%s/%s", dir, names[i]->d_name);
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
                fprintf(stderr, "ptcall fuzz driver: %s is not a regular file; skipped\n",
                        path);
            } else if (run_file(path) != 0) {
                bad++;
            }
        }
        free(path);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    int bad = 0, inputs = 0;
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue; /* a libFuzzer flag */
        inputs++;
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            bad += run_dir(argv[i]);
        else
            bad += run_file(argv[i]) != 0;
    }
    if (!inputs)
        fprintf(stderr, "usage: %s FILE|DIR... (the ptcall fuzz driver runs "
                        "LLVMFuzzerTestOneInput on each input)\n", argv[0]);
    return bad || !inputs ? 1 : 0;
}
