/* Strings a view makes once per function or thread (a short name, an escaped JSON
 * fragment) and writes on every line: making them per line was most of the views' time. */
#ifndef PTCALL_STRCACHE_H
#define PTCALL_STRCACHE_H

#include <stddef.h>
#include <stdint.h>

struct ptc_strcache {
    char **s;
    size_t *len;
    uint32_t n;
};

/* The string for id, or NULL when not made yet. */
static inline const char *ptc_strcache_get(const struct ptc_strcache *c, uint32_t id, size_t *len)
{
    if (id >= c->n || !c->s[id])
        return NULL;
    *len = c->len[id];
    return c->s[id];
}
/* Keeps a copy of str[0..len) for id, NUL-terminated and followed by 16 readable bytes
 * (ptc_wb_put_padded). Returns the copy, or NULL when out of memory. */
const char *ptc_strcache_set(struct ptc_strcache *c, uint32_t id, const char *str, size_t len);
void ptc_strcache_free(struct ptc_strcache *c);

#endif
