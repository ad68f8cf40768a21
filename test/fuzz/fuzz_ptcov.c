/* libFuzzer target: the .ptcov reader behind `ptcall cov report|diff` (cov/cov_file.c,
 * docs/cov.md) on arbitrary files, versions 1 (no CRC) and 2. Every refusal must come with a
 * one-line message; a file read must hold only what the analyses can take (function indices
 * in range and in order, callees in range), which every view and the diff then walk under
 * AddressSanitizer. Mutations of version 2 files mostly fail their CRCs: the target also
 * reads each input with its CRCs made right (fix_crcs), so that the mutated payloads reach
 * the record readers. Seeds: real .ptcov files the cov tests wrote (seeds.sh ptcov). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cov.h"
#include "ptc_crc.h"

static FILE *devnull;

static void check_one_line(const char *why)
{
    if (!why[0] || strchr(why, '\n'))
        __builtin_trap();
}

/* Reads the file and, when read, puts it through the analyses and every view. */
static void read_all(const uint8_t *data, size_t size)
{
    char why[1024] = "";
    struct cov_data d;
    cov_data_init(&d);
    int rc = cov_file_parse(&d, data, size, "fuzz.ptcov", why, sizeof(why));
    if (rc) {
        check_one_line(why);
        cov_data_free(&d);
        return;
    }
    for (uint32_t i = 0; i < d.ninputs; i++)
        for (uint32_t k = 0; k < d.inputs[i].nhits; k++)
            if (d.inputs[i].hits[k].func >= d.nfuncs)
                __builtin_trap();
    cov_data_sort_inputs(&d);
    struct cov_analysis a;
    if (cov_analyse(&d, &a) == 0) {
        struct cov_view_opts o = {"fuzz.ptcov", 1, 0};
        cov_view_table(devnull, &a, &o);
        cov_view_csv(devnull, &a, &o);
        cov_view_json(devnull, &a, &o);
        cov_view_html(devnull, &a, &o);
        cov_view_lcov(devnull, &a, &o);
        o.blockers = 0;
        cov_view_csv(devnull, &a, &o);
        struct cov_diff_row *rows = NULL;
        uint32_t nrows = 0, common = 0;
        if (cov_diff(&a, &a, &rows, &nrows, &common) == 0) {
            if (nrows)
                __builtin_trap();   /* a set differs from itself */
            for (int f = 0; f < 3; f++)
                cov_view_diff(devnull, f, &a, "a", &a, "b", rows, nrows, common);
        }
        free(rows);
        cov_analysis_free(&a);
    }
    cov_data_free(&d);
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A version 2 file's header and record CRCs recomputed in place, as far as the records'
 * lengths lead. 0 when it is not one. */
static int fix_crcs(uint8_t *b, size_t n)
{
    if (n < 20 || memcmp(b, COV_FILE_MAGIC, 8) || le32(b + 8) != 2)
        return 0;
    put32(b + 16, ptc_crc32(b, 16));
    size_t p = le32(b + 12);
    while (p < n) {
        size_t start = p++, len = 0;
        int shift = 0;
        while (p < n && shift < 63) {
            len |= (size_t)(b[p] & 0x7f) << shift;
            shift += 7;
            if (!(b[p++] & 0x80))
                break;
        }
        if (len > n || p + len + 4 > n)
            break;
        put32(b + p + len, ptc_crc32(b + start, p + len - start));
        p += len + 4;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!devnull && !(devnull = fopen("/dev/null", "w")))
        abort();
    read_all(data, size);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    if (fix_crcs(copy, size))
        read_all(copy, size);
    free(copy);
    return 0;
}
