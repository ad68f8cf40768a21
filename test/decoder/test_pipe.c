/* common/ptc_pipe: every slot handed over is consumed once, in order, whole; the producer
 * can fill far more slots than the pipe holds; drain leaves the consumer's state complete;
 * a pipe drained with a partly filled slot pending does not consume it. Built plainly and
 * with ThreadSanitizer (decoder-pipe-tsan), which watches the hand-over for races. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_pipe.h"

#define PER_SLOT 1000

struct slot {
    size_t n;
    uint64_t v[PER_SLOT];
};

struct sink {
    uint64_t next, sum, slots;
    int bad;
};

static void consume(void *ctx, void *p)
{
    struct sink *k = ctx;
    const struct slot *s = p;
    for (size_t i = 0; i < s->n; i++) {
        if (s->v[i] != k->next)
            k->bad = 1;
        k->next++;
        k->sum += s->v[i];
    }
    k->slots++;
}

static int run(unsigned nslots, uint64_t values)
{
    struct sink k;
    memset(&k, 0, sizeof(k));
    struct ptc_pipe *p = ptc_pipe_new(sizeof(struct slot), nslots, consume, &k);
    if (!p) {
        fprintf(stderr, "FAIL: ptc_pipe_new\n");
        return 1;
    }
    struct slot *s = ptc_pipe_slot(p);
    s->n = 0;
    uint64_t puts = 0;
    for (uint64_t v = 0; v < values; v++) {
        s->v[s->n++] = v;
        /* uneven fills: a slot is handed over at 1..PER_SLOT values */
        if (s->n == PER_SLOT || (v * 2654435761u) % 97 == 0) {
            s = ptc_pipe_put(p);
            s->n = 0;
            puts++;
        }
    }
    if (s->n) {
        s = ptc_pipe_put(p);
        puts++;
    }
    ptc_pipe_drain(p);
    uint64_t want = values * (values - 1) / 2;
    int ok = !k.bad && k.next == values && k.sum == want && k.slots == puts;
    printf("%s %u slots, %llu values in %llu hand-overs: consumed %llu slots, in order %s\n",
           ok ? "ok  " : "FAIL", nslots, (unsigned long long)values, (unsigned long long)puts,
           (unsigned long long)k.slots, k.bad ? "no" : "yes");
    ptc_pipe_free(p);
    return !ok;
}

int main(void)
{
    int fails = 0;
    fails += run(2, 1);
    fails += run(2, 500000);
    fails += run(4, 2000000);
    fails += run(16, 100000);
    /* freed without a drain: it drains itself */
    struct sink k;
    memset(&k, 0, sizeof(k));
    struct ptc_pipe *p = ptc_pipe_new(sizeof(struct slot), 3, consume, &k);
    struct slot *s = ptc_pipe_slot(p);
    s->n = 1;
    s->v[0] = 0;
    s = ptc_pipe_put(p);
    s->n = 0; /* pending and empty: never handed over */
    ptc_pipe_free(p);
    if (k.slots != 1 || k.next != 1) {
        printf("FAIL free without drain: %llu slots consumed\n", (unsigned long long)k.slots);
        fails++;
    }
    return fails ? 1 : 0;
}
