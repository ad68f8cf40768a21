/* A flame graph as one SVG file, written by ptcall itself: the outermost frames at the
 * bottom, each frame as wide as its weight (calls in its subtree, or its total time), one
 * <g class="frame"> per frame with a <title> tooltip. By default it carries ptcall's own
 * script (svg_script.js: zoom, search, details) for the file opened on its own; names reach
 * it only as attribute values and text, which it reads and writes as text. svg_static (export
 * --svg-static, the web pages' <img>) leaves the script and its controls out. */
#include <stdlib.h>
#include <string.h>

#include "cct.h"
#include "ptc_clock.h"
#include "views.h"

#define SVG_WIDTH 1200.0
#define ROW 17.0
#define MARGIN 10.0
#define MIN_WIDTH 0.1 /* narrower frames are left out (their weight stays in the parent) */

struct svg_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int weight, ns;
    uint32_t resolution_ns; /* the ticker clock (issue 28): a time under it is "< PERIOD" */
    const char *title;
    int script;             /* write svg_script.js and its controls */
    struct ptc_cct t;
    uint64_t *wsum;         /* per node: weight of its subtree */
};

static int svg_begin(void *view, const struct ptc_out_info *info)
{
    struct svg_view *v = view;
    if (v->weight != PTC_WEIGHT_CALLS && !info->timed)
        return PTC_VIEW_E_UNTIMED;
    v->ns = info->ns;
    struct ptc_totals t;
    ptc_session_totals(info->s, &t);
    v->resolution_ns = t.resolution_ns;
    return 0;
}

static int svg_event(void *view, const struct ptc_out_event *e)
{
    struct svg_view *v = view;
    return ptc_cct_feed(&v->t, e);
}

/* A warm colour from the name, stable across runs. */
static void colour(const char *name, char *out, size_t n)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    snprintf(out, n, "rgb(%u,%u,%u)", 205 + (h % 50), 80 + ((h >> 8) % 130), 30 + ((h >> 16) % 55));
}

/* A trace recorded within a budget: its counted functions have calls but no frames here (no
 * events), said in the bottom margin, under the root frame (docs/usage.md, Traces recorded within a budget). */
static void svg_budget_note(struct svg_view *v, double height)
{
    struct ptc_func_states st;
    if (!v->s)
        return;
    ptc_session_func_states(v->s, &st);
    if (!st.mixed)
        return;
    char b[480], dem[160] = "";
    if (st.demoted) /* a governor's demotion (trace format 2.8) */
        snprintf(dem, sizeof(dem), " (%u only until the budget's governor demoted them: their "
                 "later calls were counted)", st.demoted);
    snprintf(b, sizeof(b), "%u functions traced%s; %u counted, not traced: not in this graph "
             "(their calls, exact, are in ptcall report)", st.traced, dem, st.counted);
    struct ptc_budget_info bi;
    ptc_wb_str(v->w, "<text class=\"budget-note\" x=\"");
    ptc_wb_double(v->w, MARGIN, 0);
    ptc_wb_str(v->w, "\" y=\"");
    ptc_wb_double(v->w, height - 1, 0);
    ptc_wb_str(v->w, "\" font-size=\"11\">");
    ptc_wb_xml_str(v->w, b);
    if (ptc_session_num_budgets(v->s) && ptc_session_budget(v->s, 0, &bi) == 0) {
        ptc_wb_str(v->w, "; budget ");
        ptc_wb_xml_str(v->w, ptc_budget_kind_name(bi.kind));
        ptc_wb_str(v->w, " ");
        ptc_wb_xml_str(v->w, ptc_budget_outcome_name(bi.outcome));
        ptc_wb_str(v->w, ": ");
        ptc_wb_xml_str(v->w, bi.note);
    }
    /* the governor's last word, if it spoke (BUDGET source GOVERNOR, trace format 2.8) */
    for (uint32_t i = ptc_session_num_budgets(v->s); i-- > 1;) {
        if (ptc_session_budget(v->s, i, &bi) != 0 || bi.source != PTC_BUDGET_SRC_GOVERNOR)
            continue;
        ptc_wb_str(v->w, "; then ");
        ptc_wb_xml_str(v->w, bi.note);
        break;
    }
    ptc_wb_str(v->w, "</text>\n");
}

static void put_weight(struct svg_view *v, uint64_t wgt)
{
    char b[40];
    if (v->weight == PTC_WEIGHT_CALLS)
        snprintf(b, sizeof(b), "%llu call%s", (unsigned long long)wgt, wgt == 1 ? "" : "s");
    else if (!v->ns)
        snprintf(b, sizeof(b), "%llu ticks", (unsigned long long)wgt);
    else if (v->resolution_ns && wgt < v->resolution_ns) {
        char p[32];
        snprintf(b, sizeof(b), "< %s", ptc_clock_period_text(v->resolution_ns, p, sizeof(p)));
    } else if (wgt < 1000)
        snprintf(b, sizeof(b), "%llu ns", (unsigned long long)wgt);
    else if (wgt < 1000000)
        snprintf(b, sizeof(b), "%.3f us", (double)wgt / 1e3);
    else if (wgt < 1000000000)
        snprintf(b, sizeof(b), "%.3f ms", (double)wgt / 1e6);
    else
        snprintf(b, sizeof(b), "%.3f s", (double)wgt / 1e9);
    ptc_wb_str(v->w, b);
}

static void frame(struct svg_view *v, uint32_t id, double x, double width, uint32_t maxdepth,
                  uint64_t rootw)
{
    struct ptc_wbuf *w = v->w;
    const struct ptc_cct_node *nd = &v->t.nodes[id];
    char nb[1024], col[32];
    const char *name = "all";
    if (id != PTC_CCT_ROOT) {
        name = ptc_cct_func_name(v->s, nd->func, nb, sizeof(nb));
    }
    double y = MARGIN + 24.0 + (double)(maxdepth - nd->depth) * ROW;
    colour(name, col, sizeof(col));
    /* a blocking call (trace format 2.6): waited, not ran, in a cold blue-grey */
    int blocked = id != PTC_CCT_ROOT && ptc_session_func_blocking(v->s, nd->func);
    if (blocked)
        snprintf(col, sizeof(col), "rgb(%u,%u,%u)", 120u + nd->func % 20u, 140u + nd->func % 25u,
                 180u + nd->func % 30u);
    ptc_wb_str(w, "<g class=\"frame\" data-name=\"");
    ptc_wb_xml_str(w, name);
    ptc_wb_str(w, "\" data-weight=\"");
    ptc_wb_u64(w, v->wsum[id]);
    ptc_wb_str(w, "\" data-depth=\"");
    ptc_wb_u64(w, nd->depth);
    if (blocked)
        ptc_wb_str(w, "\" data-blocked=\"1");
    if (nd->open) { /* its thread's trace ended inside it: its times are lower bounds */
        ptc_wb_str(w, "\" data-still-open=\"");
        ptc_wb_u64(w, nd->open);
    }
    ptc_wb_str(w, "\"><title>");
    ptc_wb_xml_str(w, name);
    ptc_wb_str(w, " (");
    put_weight(v, v->wsum[id]);
    ptc_wb_str(w, ", ");
    ptc_wb_double(w, rootw ? 100.0 * (double)v->wsum[id] / (double)rootw : 0.0, 2);
    ptc_wb_str(w, "%)</title><rect x=\"");
    ptc_wb_double(w, x, 3);
    ptc_wb_str(w, "\" y=\"");
    ptc_wb_double(w, y, 1);
    ptc_wb_str(w, "\" width=\"");
    ptc_wb_double(w, width, 3);
    ptc_wb_str(w, "\" height=\"");
    ptc_wb_double(w, ROW - 1, 1);
    ptc_wb_str(w, "\" fill=\"");
    ptc_wb_str(w, col);
    ptc_wb_str(w, "\" rx=\"2\"/>");
    size_t fit = width > 14 ? (size_t)((width - 6) / 7) : 0;
    if (fit >= 3) {
        ptc_wb_str(w, "<text x=\"");
        ptc_wb_double(w, x + 3, 3);
        ptc_wb_str(w, "\" y=\"");
        ptc_wb_double(w, y + ROW - 5, 1);
        ptc_wb_str(w, "\">");
        size_t len = strlen(name);
        if (len <= fit) {
            ptc_wb_xml_str(w, name);
        } else {
            size_t k = fit - 2 < 1023 ? fit - 2 : 1023;
            while (k && ((unsigned char)name[k] & 0xc0) == 0x80)
                k--; /* not inside a character */
            ptc_wb_esc(w, name, k, PTC_ESC_XML);
            ptc_wb_str(w, "..");
        }
        ptc_wb_str(w, "</text>");
    }
    ptc_wb_str(w, "</g>\n");
}

extern const char ptc_svg_script[]; /* svg_script.js, made a C array by svg_embed.cmake */

/* A control of the script: a text element it finds by id (hidden: until it applies). */
static void control(struct ptc_wbuf *w, const char *id, double x, double y, const char *anchor,
                    int hidden, const char *text)
{
    ptc_wb_str(w, "<text id=\"");
    ptc_wb_str(w, id);
    ptc_wb_str(w, "\" class=\"ptc-ctl\" x=\"");
    ptc_wb_double(w, x, 0);
    ptc_wb_str(w, "\" y=\"");
    ptc_wb_double(w, y, 0);
    ptc_wb_str(w, "\" text-anchor=\"");
    ptc_wb_str(w, anchor);
    ptc_wb_str(w, hidden ? "\" display=\"none\">" : "\">");
    ptc_wb_str(w, text);
    ptc_wb_str(w, "</text>\n");
}

/* The script's controls (top right), its lines under the root frame (details at the left,
 * the share matched at the right; rowy: the top of that row) and the script itself. */
static void svg_script(struct ptc_wbuf *w, double rowy)
{
    double right = SVG_WIDTH + MARGIN;
    control(w, "ptc-search", right, MARGIN + 12, "end", 0, "Search");
    control(w, "ptc-reset", right - 110, MARGIN + 12, "end", 1, "Reset zoom");
    control(w, "ptc-details", MARGIN, rowy + 13, "start", 0, "");
    control(w, "ptc-matched", right, rowy + 13, "end", 0, "");
    ptc_wb_str(w, "<script type=\"text/ecmascript\"><![CDATA[\n");
    ptc_wb_str(w, ptc_svg_script);
    ptc_wb_str(w, "]]></script>\n");
}

static int svg_end(void *view, const struct ptc_out_info *info)
{
    struct svg_view *v = view;
    struct ptc_wbuf *w = v->w;
    uint32_t n = v->t.n;
    v->wsum = calloc(n, sizeof(*v->wsum));
    uint32_t *order = malloc((size_t)n * sizeof(*order));
    double *xs = malloc((size_t)n * sizeof(*xs));
    if (!v->wsum || !order || !xs) {
        free(order);
        free(xs);
        return 1;
    }
    /* nodes are created after their parents: a reverse walk sums subtrees */
    uint32_t maxdepth = 0;
    for (uint32_t i = n; i-- > 1;) {
        const struct ptc_cct_node *nd = &v->t.nodes[i];
        v->wsum[i] += v->weight == PTC_WEIGHT_CALLS ? nd->calls : nd->self;
        v->wsum[nd->parent] += v->wsum[i];
        if (nd->depth > maxdepth && v->wsum[i])
            maxdepth = nd->depth;
    }
    uint64_t rootw = v->wsum[PTC_CCT_ROOT];
    double rowy = MARGIN + 24.0 + (double)(maxdepth + 1) * ROW; /* under the root frame */
    /* with the script, a row under the root for its details and matched share */
    double height = rowy + MARGIN + (v->script ? ROW : 0.0);
    ptc_wb_str(w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                  "version=\"1.1\" width=\"");
    ptc_wb_double(w, SVG_WIDTH + 2 * MARGIN, 0);
    ptc_wb_str(w, "\" height=\"");
    ptc_wb_double(w, height, 0);
    ptc_wb_str(w, "\" font-family=\"monospace\" font-size=\"12\" data-ptcall-format=\"1\" data-weight=\"");
    ptc_wb_str(w, v->weight == PTC_WEIGHT_CALLS ? "calls" : v->weight == PTC_WEIGHT_SELF ? "self" : "total");
    ptc_wb_str(w, v->script ? "\">\n<style>.frame:hover rect{stroke:#000;stroke-width:0.5}"
                              ".frame,.ptc-ctl{cursor:pointer}.ptc-ctl{fill:#1a4a9a}</style>\n"
                            : "\">\n<style>.frame:hover rect{stroke:#000;stroke-width:0.5}</style>\n");
    ptc_wb_str(w, "<rect width=\"100%\" height=\"100%\" fill=\"#fdfdf6\"/>\n<text x=\"");
    ptc_wb_double(w, MARGIN, 0);
    ptc_wb_str(w, "\" y=\"");
    ptc_wb_double(w, MARGIN + 12, 0);
    ptc_wb_str(w, "\" font-size=\"14\">");
    ptc_wb_xml_str(w, v->title ? v->title : "ptcall flame graph");
    ptc_wb_str(w, " — width: ");
    ptc_wb_str(w, v->weight == PTC_WEIGHT_CALLS ? "calls" : "time");
    if (info->filtered)
        ptc_wb_str(w, " (filtered)");
    ptc_wb_str(w, "</text>\n");
    svg_budget_note(v, height);
    if (rootw) {
        /* preorder: each frame, then its children */
        uint32_t sp = 0;
        order[sp++] = PTC_CCT_ROOT;
        xs[PTC_CCT_ROOT] = MARGIN;
        while (sp) {
            uint32_t id = order[--sp];
            double width = SVG_WIDTH * (double)v->wsum[id] / (double)rootw;
            if (width < MIN_WIDTH || !v->wsum[id])
                continue;
            frame(v, id, xs[id], width, maxdepth, rootw);
            /* children left to right from the frame's left edge, in the order they were
             * first called (the list holds the newest first: place them from the right end
             * of their run) */
            uint64_t kids = 0;
            for (uint32_t c = v->t.nodes[id].first_child; c; c = v->t.nodes[c].next_sibling)
                kids += v->wsum[c];
            double x = xs[id] + SVG_WIDTH * (double)kids / (double)rootw;
            for (uint32_t c = v->t.nodes[id].first_child; c; c = v->t.nodes[c].next_sibling) {
                x -= SVG_WIDTH * (double)v->wsum[c] / (double)rootw;
                xs[c] = x;
                order[sp++] = c;
            }
        }
    } else {
        ptc_wb_str(w, "<text x=\"20\" y=\"60\">no calls to show</text>\n");
    }
    if (v->script && rootw)
        svg_script(w, rowy);
    ptc_wb_str(w, "</svg>\n");
    free(order);
    free(xs);
    return 0;
}

static void svg_free(void *view)
{
    struct svg_view *v = view;
    ptc_cct_free(&v->t);
    free(v->wsum);
    free(v);
}

static const struct ptc_output_ops svg_ops = {
    .name = "svg",
    .begin = svg_begin,
    .enter = svg_event,
    .ret = svg_event,
    .end = svg_end,
    .free = svg_free,
};

void *ptc_view_svg(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    struct svg_view *v = calloc(1, sizeof(*v));
    if (!v || ptc_cct_init(&v->t)) {
        free(v);
        return NULL;
    }
    v->w = o->out;
    v->s = o->s;
    v->weight = o->weight == PTC_WEIGHT_CALLS ? PTC_WEIGHT_CALLS : PTC_WEIGHT_SELF;
    v->title = o->title;
    v->script = !o->svg_static;
    *ops = &svg_ops;
    return v;
}
