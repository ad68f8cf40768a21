/* The calling-context tree (cct.h). */
#include <stdlib.h>
#include <string.h>

#include "cct.h"

static uint32_t hash(uint64_t k) { return (uint32_t)((k * 0x9E3779B97F4A7C15ULL) >> 32); }

int ptc_cct_init(struct ptc_cct *t)
{
    memset(t, 0, sizeof(*t));
    t->cap = 1024;
    t->nodes = calloc(t->cap, sizeof(*t->nodes));
    t->hcap = 2048;
    t->hkeys = malloc(t->hcap * sizeof(*t->hkeys));
    t->hvals = malloc(t->hcap * sizeof(*t->hvals));
    if (!t->nodes || !t->hkeys || !t->hvals) {
        ptc_cct_free(t);
        return -1;
    }
    memset(t->hkeys, 0xff, t->hcap * sizeof(*t->hkeys));
    t->nodes[0].func = UINT32_MAX;
    t->n = 1;
    return 0;
}

void ptc_cct_free(struct ptc_cct *t)
{
    free(t->nodes);
    free(t->hkeys);
    free(t->hvals);
    memset(t, 0, sizeof(*t));
}

static int rehash(struct ptc_cct *t)
{
    uint32_t nc = t->hcap * 2;
    uint64_t *k = malloc(nc * sizeof(*k));
    uint32_t *v = malloc(nc * sizeof(*v));
    if (!k || !v) {
        free(k);
        free(v);
        return -1;
    }
    memset(k, 0xff, nc * sizeof(*k));
    for (uint32_t i = 0; i < t->hcap; i++) {
        if (t->hkeys[i] == UINT64_MAX)
            continue;
        uint32_t b = hash(t->hkeys[i]) & (nc - 1);
        while (k[b] != UINT64_MAX)
            b = (b + 1) & (nc - 1);
        k[b] = t->hkeys[i];
        v[b] = t->hvals[i];
    }
    free(t->hkeys);
    free(t->hvals);
    t->hkeys = k;
    t->hvals = v;
    t->hcap = nc;
    return 0;
}

uint32_t ptc_cct_child(struct ptc_cct *t, uint32_t parent, uint32_t func)
{
    struct ptc_cct_node *pn = &t->nodes[parent];
    if (pn->hot_child && pn->hot_func == func)
        return pn->hot_child;
    uint64_t key = (uint64_t)parent << 32 | func;
    uint32_t b = hash(key) & (t->hcap - 1);
    while (t->hkeys[b] != UINT64_MAX) {
        if (t->hkeys[b] == key) {
            pn->hot_func = func;
            pn->hot_child = t->hvals[b];
            return t->hvals[b];
        }
        b = (b + 1) & (t->hcap - 1);
    }
    if (t->n == UINT32_MAX)
        return 0;
    if (t->n == t->cap) {
        uint32_t nc = t->cap * 2;
        struct ptc_cct_node *nn = realloc(t->nodes, (size_t)nc * sizeof(*nn));
        if (!nn)
            return 0;
        t->nodes = nn;
        t->cap = nc;
    }
    if ((t->n + 1) * 2 > t->hcap) {
        if (rehash(t))
            return 0;
        b = hash(key) & (t->hcap - 1);
        while (t->hkeys[b] != UINT64_MAX)
            b = (b + 1) & (t->hcap - 1);
    }
    uint32_t id = t->n++;
    struct ptc_cct_node *nd = &t->nodes[id];
    memset(nd, 0, sizeof(*nd));
    nd->parent = parent;
    nd->func = func;
    nd->depth = t->nodes[parent].depth + 1;
    nd->next_sibling = t->nodes[parent].first_child;
    t->nodes[parent].first_child = id;
    t->hkeys[b] = key;
    t->hvals[b] = id;
    t->nodes[parent].hot_func = func;
    t->nodes[parent].hot_child = id;
    return id;
}

/* The node of e's frame from its path, walked from the root: for frames whose enter the tree
 * did not see (inherited across fork). 0 when out of memory. */
static uint32_t walk(struct ptc_cct *t, const struct ptc_out_event *e)
{
    uint32_t node = PTC_CCT_ROOT;
    for (uint32_t i = 0; i <= e->depth; i++)
        if (!(node = ptc_cct_child(t, node, e->path[i])))
            return 0;
    return node;
}

int ptc_cct_feed(struct ptc_cct *t, const struct ptc_out_event *e)
{
    /* the node of each open frame lives in the driver's word for that frame */
    if (e->kind == PTC_CALL_ENTER) {
        uint32_t node;
        if (e->inherited) { /* not a call: its node, for its callees and its return */
            node = walk(t, e);
        } else {
            uint32_t parent = e->parent_user ? *e->parent_user : PTC_CCT_ROOT;
            if (e->parent_user && !parent) {
                struct ptc_out_event pe = *e;
                pe.depth = e->depth - 1;
                if (!(parent = walk(t, &pe)))
                    return 1;
            }
            if ((node = ptc_cct_child(t, parent, e->func)))
                t->nodes[node].calls++;
        }
        if (!node)
            return 1;
        *e->frame_user = node;
    } else if (e->kind == PTC_CALL_RETURN) {
        uint32_t node;
        if (e->before) { /* no enter: a call under the pseudo-root of such calls */
            uint32_t b = ptc_cct_child(t, PTC_CCT_ROOT, PTC_CCT_BEFORE);
            if (!b || !(node = ptc_cct_child(t, b, e->func)))
                return 1;
            t->nodes[node].calls++;
            t->nodes[b].total += e->dur;
        } else {
            node = *e->frame_user ? *e->frame_user : walk(t, e);
        }
        if (!node)
            return 1;
        t->nodes[node].open += e->how == PTC_RET_END;
        t->nodes[node].self += e->self;
        t->nodes[node].total += e->dur;
    }
    return 0;
}

const char *ptc_cct_func_name(const struct ptc_session *s, uint32_t func, char *buf, size_t n)
{
    if (func == PTC_CCT_BEFORE)
        return "[entered before the trace began]";
    const struct ptc_func_info *fi = ptc_session_func(s, func);
    return fi ? ptc_out_short_name(fi->name, buf, n) : "?";
}

void ptc_cct_put_path(const struct ptc_cct *t, const struct ptc_session *s, uint32_t node,
                      struct ptc_wbuf *w, const char *sep)
{
    uint32_t d = t->nodes[node].depth;
    uint32_t stackbuf[256], *ids = d <= 256 ? stackbuf : malloc(d * sizeof(*ids));
    if (!ids)
        return;
    for (uint32_t i = d; i-- > 0; node = t->nodes[node].parent)
        ids[i] = t->nodes[node].func;
    char buf[1024];
    for (uint32_t i = 0; i < d; i++) {
        if (i)
            ptc_wb_str(w, sep);
        const char *name = ptc_cct_func_name(s, ids[i], buf, sizeof(buf));
        /* a name of a text line (control characters and bytes that are not UTF-8 shown as
         * escapes: a newline would end the line), without the frames' separator */
        ptc_wb_esc_map(w, name, strlen(name), PTC_ESC_TEXT, ';', ':');
    }
    if (ids != stackbuf)
        free(ids);
}
