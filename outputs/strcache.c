/* strcache.h */
#include "strcache.h"

#include <stdlib.h>
#include <string.h>

const char *ptc_strcache_set(struct ptc_strcache *c, uint32_t id, const char *str, size_t len)
{
    if (id >= c->n) {
        uint32_t nc = c->n ? c->n : 256;
        while (nc <= id)
            nc *= 2;
        char **s = realloc(c->s, (size_t)nc * sizeof(*s));
        if (!s)
            return NULL;
        c->s = s;
        size_t *l = realloc(c->len, (size_t)nc * sizeof(*l));
        if (!l)
            return NULL;
        c->len = l;
        memset(c->s + c->n, 0, (size_t)(nc - c->n) * sizeof(*s));
        c->n = nc;
    }
    char *copy = malloc(len + 17); /* 16 bytes over: ptc_wb_put_padded() reads them */
    if (!copy)
        return NULL;
    memcpy(copy, str, len);
    memset(copy + len, 0, 17);
    free(c->s[id]);
    c->s[id] = copy;
    c->len[id] = len;
    return copy;
}

void ptc_strcache_free(struct ptc_strcache *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        free(c->s[i]);
    free(c->s);
    free(c->len);
    memset(c, 0, sizeof(*c));
}
