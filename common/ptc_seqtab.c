/* ptc_seqtab.h: open addressing on (pid << 32 | tid), grown at half full. */
#include "ptc_seqtab.h"

#include <stdlib.h>

static size_t slot_of(const struct ptc_seqtab *t, uint64_t key)
{
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 32) & (t->cap - 1);
    while (t->v[i].used && t->v[i].key != key)
        i = (i + 1) & (t->cap - 1);
    return i;
}

static int grow(struct ptc_seqtab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 64;
    struct ptc_seq_slot *old = t->v;
    size_t oldcap = t->cap;
    t->v = calloc(cap, sizeof(*t->v));
    if (!t->v) {
        t->v = old;
        return -1;
    }
    t->cap = cap;
    for (size_t i = 0; i < oldcap; i++)
        if (old[i].used)
            t->v[slot_of(t, old[i].key)] = old[i];
    free(old);
    return 0;
}

int ptc_seq_next(struct ptc_seqtab *t, uint32_t pid, uint32_t tid, uint32_t *seq)
{
    if ((t->n + 1) * 2 > t->cap && grow(t))
        return -1;
    uint64_t key = (uint64_t)pid << 32 | tid;
    struct ptc_seq_slot *s = &t->v[slot_of(t, key)];
    if (!s->used) {
        s->used = 1;
        s->key = key;
        s->next = 0;
        t->n++;
    }
    *seq = s->next++;
    return 0;
}

void ptc_seq_free(struct ptc_seqtab *t)
{
    free(t->v);
    t->v = NULL;
    t->cap = t->n = 0;
}
