/* Folded stacks ("main;parse;lex 1234"), the input of flamegraph.pl, inferno and
 * speedscope: one line per distinct call path, weighted by calls or by self time. Tools sum
 * a path's line into its ancestors, so with self time a frame's width is its total time. */
#include <stdlib.h>

#include "cct.h"
#include "views.h"

struct folded_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int weight;
    struct ptc_cct t;
};

static int folded_begin(void *view, const struct ptc_out_info *info)
{
    struct folded_view *v = view;
    /* self time of an untimed trace would be all zeros: an empty graph, said as nothing */
    return v->weight != PTC_WEIGHT_CALLS && !info->timed ? PTC_VIEW_E_UNTIMED : 0;
}

static int folded_event(void *view, const struct ptc_out_event *e)
{
    struct folded_view *v = view;
    return ptc_cct_feed(&v->t, e);
}

static int folded_end(void *view, const struct ptc_out_info *info)
{
    struct folded_view *v = view;
    (void)info;
    /* depth first, children in the order they were first seen: the same input gives the
     * same output */
    uint32_t *stack = malloc((size_t)v->t.n * sizeof(*stack));
    if (!stack)
        return 1;
    uint32_t sp = 0;
    for (uint32_t c = v->t.nodes[PTC_CCT_ROOT].first_child; c; c = v->t.nodes[c].next_sibling)
        stack[sp++] = c;
    while (sp) {
        uint32_t id = stack[--sp];
        const struct ptc_cct_node *nd = &v->t.nodes[id];
        uint64_t wgt = v->weight == PTC_WEIGHT_CALLS ? nd->calls : nd->self;
        if (wgt) {
            ptc_cct_put_path(&v->t, v->s, id, v->w, ";");
            ptc_wb_char(v->w, ' ');
            ptc_wb_u64(v->w, wgt);
            ptc_wb_char(v->w, '\n');
        }
        for (uint32_t c = nd->first_child; c; c = v->t.nodes[c].next_sibling)
            stack[sp++] = c;
    }
    free(stack);
    return 0;
}

static void folded_free(void *view)
{
    struct folded_view *v = view;
    ptc_cct_free(&v->t);
    free(v);
}

static const struct ptc_output_ops folded_ops = {
    .name = "folded",
    .begin = folded_begin,
    .enter = folded_event,
    .ret = folded_event,
    .end = folded_end,
    .free = folded_free,
};

void *ptc_view_folded(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct folded_view *v = calloc(1, sizeof(*v));
    if (!v || ptc_cct_init(&v->t)) {
        free(v);
        return NULL;
    }
    v->w = o->out;
    v->s = o->s;
    v->weight = o->weight;
    *ops = &folded_ops;
    return v;
}
