/* Hot paths (`ptcall report --paths`): the call paths (root ... function) whose calls or
 * inclusive time pass a threshold, from the calling-context tree; what a monitor of a
 * running program reports as its hot paths. */
#include <stdlib.h>
#include <string.h>

#include "cct.h"
#include "views.h"

struct paths_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    struct ptc_cct t;
    struct ptc_paths_opts o;
    int timed, ns;
};

static int paths_begin(void *view, const struct ptc_out_info *info)
{
    struct paths_view *v = view;
    v->timed = info->timed;
    v->ns = info->ns;
    return 0;
}

static int paths_event(void *view, const struct ptc_out_event *e)
{
    return ptc_cct_feed(&((struct paths_view *)view)->t, e);
}

/* A path to list, with its sort keys copied out of the tree (qsort takes no context). */
struct hot {
    uint64_t key, calls;
    uint32_t id;
};

static int cmp_hot(const void *a, const void *b)
{
    const struct hot *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    if (x->calls != y->calls)
        return x->calls > y->calls ? -1 : 1;
    return x->id < y->id ? -1 : 1;
}

static void put_time(struct paths_view *v, uint64_t t)
{
    char b[40];
    if (!v->ns)
        snprintf(b, sizeof(b), "%llu ticks", (unsigned long long)t);
    else if (t < 1000)
        snprintf(b, sizeof(b), "%llu ns", (unsigned long long)t);
    else if (t < 1000000)
        snprintf(b, sizeof(b), "%.3f us", (double)t / 1e3);
    else if (t < 1000000000)
        snprintf(b, sizeof(b), "%.3f ms", (double)t / 1e6);
    else
        snprintf(b, sizeof(b), "%.3f s", (double)t / 1e9);
    size_t n = strlen(b);
    if (n < 14)
        ptc_wb_spaces(v->w, 14 - n);
    ptc_wb_str(v->w, b);
}

static int paths_end(void *view, const struct ptc_out_info *info)
{
    struct paths_view *v = view;
    struct ptc_wbuf *w = v->w;
    const struct ptc_cct *t = &v->t;
    /* 100 %: the time in outermost frames, or (untimed) all calls */
    uint64_t all = 0;
    if (v->timed)
        for (uint32_t c = t->nodes[PTC_CCT_ROOT].first_child; c; c = t->nodes[c].next_sibling)
            all += t->nodes[c].total;
    else
        for (uint32_t i = 1; i < t->n; i++)
            all += t->nodes[i].calls;
    struct hot *hot = malloc((size_t)t->n * sizeof(*hot));
    uint32_t *ids = malloc((size_t)t->n * sizeof(*ids));
    if (!hot || !ids) {
        free(hot);
        free(ids);
        return 1;
    }
    uint32_t n = 0;
    for (uint32_t i = 1; i < t->n; i++) {
        const struct ptc_cct_node *nd = &t->nodes[i];
        if (!nd->calls && !nd->total)
            continue;
        double share = all ? 100.0 * (double)(v->timed ? nd->total : nd->calls) / (double)all : 0;
        if ((v->o.min_calls && nd->calls >= v->o.min_calls) || share >= v->o.min_share)
            hot[n++] = (struct hot){v->timed ? nd->total : nd->calls, nd->calls, i};
    }
    qsort(hot, n, sizeof(*hot), cmp_hot);
    for (uint32_t k = 0; k < n; k++)
        ids[k] = hot[k].id;
    free(hot);
    uint32_t shown = v->o.top && v->o.top < n ? (uint32_t)v->o.top : n;
    if (v->o.format == PTC_PATHS_TABLE) {
        ptc_wb_str(w, "# hot paths of ");
        ptc_wb_text_str(w, info->trace);
        ptc_wb_str(w, ": call paths with ");
        if (v->o.min_calls) {
            ptc_wb_str(w, "at least ");
            ptc_wb_u64(w, v->o.min_calls);
            ptc_wb_str(w, " calls or ");
        }
        ptc_wb_str(w, "at least ");
        ptc_wb_double(w, v->o.min_share, 2);
        ptc_wb_str(w, v->timed ? "% of the time in outermost frames\n"
                               : "% of all calls (untimed trace)\n");
        if (v->timed)
            ptc_wb_str(w, "       calls          total  share           self  path\n");
        else
            ptc_wb_str(w, "       calls  share  path\n");
        for (uint32_t k = 0; k < shown; k++) {
            const struct ptc_cct_node *nd = &t->nodes[ids[k]];
            ptc_wb_u64w(w, nd->calls, 12);
            double share = all ? 100.0 * (double)(v->timed ? nd->total : nd->calls) / (double)all : 0;
            if (v->timed) {
                ptc_wb_char(w, ' ');
                put_time(v, nd->total);
                ptc_wb_char(w, ' ');
                char b[16];
                snprintf(b, sizeof(b), "%5.1f%%", share);
                ptc_wb_str(w, b);
                ptc_wb_char(w, ' ');
                put_time(v, nd->self);
            } else {
                char b[16];
                snprintf(b, sizeof(b), " %5.1f%%", share);
                ptc_wb_str(w, b);
            }
            ptc_wb_str(w, "  ");
            ptc_cct_put_path(t, v->s, ids[k], w, " > ");
            ptc_wb_char(w, '\n');
        }
        if (shown < n) {
            ptc_wb_char(w, '(');
            ptc_wb_u64(w, n - shown);
            ptc_wb_str(w, " more paths pass the thresholds; --top 0 shows all)\n");
        }
        if (!n)
            ptc_wb_str(w, "(no path passes the thresholds: lower --min-share or --min-calls)\n");
    } else if (v->o.format == PTC_PATHS_CSV) {
        ptc_wb_str(w, "rank,path,depth,calls,total,self,share\n");
        for (uint32_t k = 0; k < shown; k++) {
            const struct ptc_cct_node *nd = &t->nodes[ids[k]];
            struct ptc_wbuf tmp;
            if (ptc_wbuf_init(&tmp, -1, 1 << 16)) {
                free(ids);
                return 1;
            }
            ptc_cct_put_path(t, v->s, ids[k], &tmp, ";");
            ptc_wb_char(&tmp, 0);
            ptc_wb_u64(w, k + 1);
            ptc_wb_char(w, ',');
            ptc_wb_csv_str(w, tmp.buf);
            ptc_wbuf_free(&tmp);
            ptc_wb_char(w, ',');
            ptc_wb_u64(w, nd->depth);
            ptc_wb_char(w, ',');
            ptc_wb_u64(w, nd->calls);
            ptc_wb_char(w, ',');
            if (v->timed) {
                ptc_wb_u64(w, nd->total);
                ptc_wb_char(w, ',');
                ptc_wb_u64(w, nd->self);
            } else {
                ptc_wb_char(w, ',');
            }
            ptc_wb_char(w, ',');
            ptc_wb_double(w, all ? 100.0 * (double)(v->timed ? nd->total : nd->calls) / (double)all : 0, 2);
            ptc_wb_char(w, '\n');
        }
    } else {
        ptc_wb_str(w, "{\n  \"format_version\": 1,\n  \"tool\": \"ptcall report --paths\",\n  \"trace\": ");
        ptc_wb_json_str(w, info->trace);
        ptc_wb_str(w, v->timed ? ",\n  \"timed\": true" : ",\n  \"timed\": false");
        ptc_wb_str(w, ",\n  \"time_unit\": \"");
        ptc_wb_str(w, !v->timed ? "none" : v->ns ? "ns" : "ticks");
        ptc_wb_str(w, "\",\n  \"min_calls\": ");
        ptc_wb_u64(w, v->o.min_calls);
        ptc_wb_str(w, ",\n  \"min_share\": ");
        ptc_wb_double(w, v->o.min_share, 2);
        ptc_wb_str(w, ",\n  \"filtered\": ");
        ptc_wb_str(w, info->filtered ? "true" : "false");
        ptc_wb_str(w, ",\n  \"paths\": [");
        for (uint32_t k = 0; k < shown; k++) {
            const struct ptc_cct_node *nd = &t->nodes[ids[k]];
            ptc_wb_str(w, k ? ",\n    {\"path\": [" : "\n    {\"path\": [");
            uint32_t d = nd->depth, node = ids[k];
            uint32_t *chain = malloc(d * sizeof(*chain));
            if (!chain) {
                free(ids);
                return 1;
            }
            for (uint32_t i = d; i-- > 0; node = t->nodes[node].parent)
                chain[i] = t->nodes[node].func;
            for (uint32_t i = 0; i < d; i++) {
                const struct ptc_func_info *fi = ptc_session_func(v->s, chain[i]);
                char nb[64];
                if (i)
                    ptc_wb_str(w, ", ");
                ptc_wb_json_str(w, fi ? fi->name : ptc_cct_func_name(v->s, chain[i], nb, sizeof(nb)));
            }
            free(chain);
            ptc_wb_str(w, "], \"calls\": ");
            ptc_wb_u64(w, nd->calls);
            if (v->timed) {
                ptc_wb_str(w, ", \"total\": ");
                ptc_wb_u64(w, nd->total);
                ptc_wb_str(w, ", \"self\": ");
                ptc_wb_u64(w, nd->self);
            } else {
                ptc_wb_str(w, ", \"total\": null, \"self\": null");
            }
            ptc_wb_str(w, ", \"share\": ");
            ptc_wb_double(w, all ? 100.0 * (double)(v->timed ? nd->total : nd->calls) / (double)all : 0, 2);
            ptc_wb_char(w, '}');
        }
        ptc_wb_str(w, "\n  ],\n  \"more\": ");
        ptc_wb_u64(w, n - shown);
        ptc_wb_str(w, "\n}\n");
    }
    free(ids);
    return 0;
}

static void paths_free(void *view)
{
    struct paths_view *v = view;
    ptc_cct_free(&v->t);
    free(v);
}

static const struct ptc_output_ops paths_ops = {
    .name = "paths",
    .begin = paths_begin,
    .enter = paths_event,
    .ret = paths_event,
    .end = paths_end,
    .free = paths_free,
};

void *ptc_view_paths(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct paths_view *v = calloc(1, sizeof(*v));
    if (!v || ptc_cct_init(&v->t)) {
        free(v);
        return NULL;
    }
    v->w = o->out;
    v->s = o->s;
    if (o->paths)
        v->o = *o->paths;
    *ops = &paths_ops;
    return v;
}
