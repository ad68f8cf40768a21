/* pt_gen_trace OUT [SEED] [TIMING 0..3]: writes a synthetic Intel PT trace file (ptgen.h)
 * and prints the expected totals, for the `ptcall stat` / CLI tests. */
#include <stdio.h>
#include <stdlib.h>

#include "ptcall/decode.h"
#include "ptgen.h"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: pt_gen_trace OUT [SEED] [TIMING]\n");
        return 2;
    }
    struct ptgen_opts o;
    ptgen_default(&o, argc > 2 ? strtoull(argv[2], NULL, 0) : 7);
    if (argc > 3)
        o.timing = atoi(argv[3]);
    struct ptgen_result r;
    if (ptgen_write(&o, argv[1], &r)) {
        perror(argv[1]);
        return 1;
    }
    size_t hits = 0, gaps = 0;
    for (size_t i = 0; i < r.nev; i++)
        r.ev[i].type == PTC_EV_HIT ? hits++ : gaps++;
    printf("expected hits %zu gaps %zu\n", hits, gaps);
    ptgen_free(&r);
    return 0;
}
