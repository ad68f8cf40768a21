/* Decoding streams side by side (DESIGN decision 6: per-CPU streams decode independently).
 * When the feeder needs the next item of a stream whose queue is empty, the next bytes of
 * every stream with an empty queue are decoded at once, one stream per thread, a bounded
 * amount each (so the queues stay bounded too). (Also taking streams whose queues are only
 * low was tried: more memory, no gain - the feeding, which is serial, dominates.) Each stream's decoder runs exactly the
 * steps it would run on the feeder's thread, so the result does not depend on threads. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pt_front_int.h"

#define PREDECODE_BYTES (256u << 10) /* per stream and batch: items of 48 bytes for every 4-10 */
/* Below this much work in a batch, starting threads costs more than it saves (a recorder
 * round of a light trace holds a few KiB per CPU): the feeder then decodes lazily alone.
 * PTCALL_PT_PAR_MIN_BYTES changes it (the tests use 1, to run threads on small traces). */
#define PAR_MIN_BYTES (512u << 10)

struct batch {
    struct ptc_pt_sdec *d[64];
    size_t n, next;
    int err;
    pthread_mutex_t mu;
};

static void *run(void *arg)
{
    struct batch *b = arg;
    for (;;) {
        pthread_mutex_lock(&b->mu);
        size_t i = b->next < b->n ? b->next++ : b->n;
        pthread_mutex_unlock(&b->mu);
        if (i >= b->n)
            return NULL;
        if (ptc_pt_sdec_prefetch(b->d[i], PREDECODE_BYTES)) {
            pthread_mutex_lock(&b->mu);
            b->err = 1;
            pthread_mutex_unlock(&b->mu);
        }
    }
}

int ptc_front_predecode(struct ptc_pt_front *f)
{
    const char *e = getenv("PTCALL_PT_PAR_MIN_BYTES");
    long min_bytes = e ? strtol(e, NULL, 10) : (long)PAR_MIN_BYTES;
    struct batch b;
    memset(&b, 0, sizeof(b));
    uint64_t work = 0;
    for (size_t i = 0; i < f->streams.n && b.n < 64; i++) {
        struct ptc_pt_sdec *d = f->streams.v[i]->dec;
        uint64_t u = d && !ptc_pt_sdec_queued(d) ? ptc_pt_sdec_undecoded(d) : 0;
        if (u) {
            b.d[b.n++] = d;
            work += u < PREDECODE_BYTES ? u : PREDECODE_BYTES;
        }
    }
    if (b.n < 2 || work < (uint64_t)min_bytes)
        return 0; /* nothing worth sharing: the feeder decodes it lazily */
    pthread_mutex_init(&b.mu, NULL);
    pthread_t th[8];
    int nt = f->threads - 1, started = 0;
    if (nt > 8)
        nt = 8;
    if ((size_t)nt > b.n - 1)
        nt = (int)(b.n - 1);
    for (int t = 0; t < nt; t++)
        if (!pthread_create(&th[t], NULL, run, &b))
            started++; /* fewer helpers: slower, not wrong */
    run(&b); /* this thread is one of them */
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    pthread_mutex_destroy(&b.mu);
    return b.err ? -1 : 0;
}
