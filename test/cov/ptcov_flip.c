/* ptcov_flip FILE.ptcov: flips every bit of a real .ptcov, one at a time, and reads each
 * copy with the reader `ptcall cov report` uses (cov_file_parse): every copy must be refused
 * with one line (a version 2 file carries CRCs over its header and records, docs/cov.md);
 * version 1 had none and read half of all flips as other figures. Prints how many were
 * refused; exit 1 when one was read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: ptcov_flip FILE.ptcov\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    static uint8_t buf[1 << 20];
    size_t size = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    char why[1024];
    struct cov_data d;
    cov_data_init(&d);
    int rc = cov_file_parse(&d, buf, size, argv[1], why, sizeof(why));
    cov_data_free(&d);
    if (rc) {
        printf("FAIL: the undamaged file is refused: %s\n", why);
        return 1;
    }
    unsigned long read_as_other = 0, refused = 0, multiline = 0;
    for (size_t bit = 0; bit < size * 8; bit++) {
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        cov_data_init(&d);
        why[0] = 0;
        rc = cov_file_parse(&d, buf, size, "x.ptcov", why, sizeof(why));
        cov_data_free(&d);
        buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        if (!rc) {
            if (read_as_other++ < 5)
                printf("FAIL: bit %zu (byte %zu) flipped: read as other figures\n", bit,
                       bit / 8);
        } else {
            refused++;
            if (!why[0] || strchr(why, '\n'))
                multiline++;
        }
    }
    printf("%s: %zu bytes, %zu bit flips: %lu refused, %lu read as other figures, %lu "
           "without a one-line reason\n",
           argv[1], size, size * 8, refused, read_as_other, multiline);
    return read_as_other || multiline ? 1 : 0;
}
