/* The pages' HTML shells (web_page.h). */
#include "web_page.h"

#include <string.h>

static const char *const page_names[WP_NONE] = {"runs",      "hot",      "function",
                                                "run",       "diff",     "campaigns",
                                                "campaign",  "campaign-compare",
                                                "timeline"};

static void nav(struct sbuf *b)
{
    sb_puts(b, "<header><span class=\"brand\">ptcall</span><nav>"
               "<a id=\"nav-runs\" href=\"/runs\">Runs</a>"
               "<a id=\"nav-hot\" href=\"/hot\">Hot functions</a>"
               "<a id=\"nav-diff\" href=\"/diff\">Compare runs</a>"
               "<a id=\"nav-campaigns\" href=\"/campaigns\">Campaigns</a></nav></header>\n"
               "<main id=\"main\"><p class=\"loading\">Loading...</p></main>\n");
}

void web_page_served(struct sbuf *b, enum web_page kind)
{
    sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
               "<meta name=\"viewport\" content=\"width=device-width\">"
               "<title>ptcall</title>"
               "<link rel=\"stylesheet\" href=\"/static/uPlot.min.css\">"
               "<link rel=\"stylesheet\" href=\"/static/app.css\">"
               "<link rel=\"stylesheet\" href=\"/static/campaign.css\">"
               "<link rel=\"stylesheet\" href=\"/static/d3-flamegraph.css\">"
               "<link rel=\"stylesheet\" href=\"/static/flame.css\">"
               "<script src=\"/static/uPlot.iife.min.js\" defer></script>"
               /* first: campaign.js and app.js take the table helpers from it */
               "<script src=\"/static/tables.js\" defer></script>"
               /* the flame graph: d3 first (d3-flame-graph needs the global d3) */
               "<script src=\"/static/d3.min.js\" defer></script>"
               "<script src=\"/static/d3-flamegraph.umd.min.js\" defer></script>"
               "<script src=\"/static/flame.js\" defer></script>"
               /* before app.js: app.js routes /campaigns... to what it defines */
               "<script src=\"/static/campaign.js\" defer></script>"
               "<script src=\"/static/callgraph.js\" defer></script>"
               "<script src=\"/static/timeline.js\" defer></script>"
               "<script src=\"/static/app.js\" defer></script></head>\n");
    sb_printf(b, "<body data-page=\"%s\" data-mode=\"server\">\n",
              kind < WP_NONE ? page_names[kind] : "none");
    nav(b);
    sb_puts(b, "</body></html>\n");
}

/* An inlined file: a script or style body must not hold its own end tag. The files are
 * ptcall's own (app.js) and uPlot's, checked here all the same: "</" inside is written
 * "<\/" in scripts, which means the same to JavaScript in strings and regular expressions. */
static void inline_body(struct sbuf *b, const char *p, size_t n, int script)
{
    size_t start = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] == '<' && p[i + 1] == '/' && script) {
            sb_add(b, p + start, i + 1 - start);
            sb_puts(b, "\\");
            start = i + 1;
        }
    }
    sb_add(b, p + start, n - start);
}

/* The name Graphviz's ES module exports its class under: "export{...,It as Graphviz,...}"
 * at its end gives "It". An inline module cannot be imported, so the page's module block
 * hands the class to the classic scripts (callgraph.js) itself; NULL when not found. */
static const char *graphviz_local(const char *p, size_t n, size_t *len)
{
    static const char key[] = " as Graphviz";
    const char *hit = NULL;
    for (size_t i = 0; i + sizeof(key) - 1 <= n; i++)
        if (p[i] == ' ' && !memcmp(p + i, key, sizeof(key) - 1))
            hit = p + i;
    if (!hit)
        return NULL;
    const char *s = hit;
    while (s > p && (s[-1] == '_' || s[-1] == '$' || (s[-1] >= '0' && s[-1] <= '9') ||
                     ((s[-1] | 32) >= 'a' && (s[-1] | 32) <= 'z')))
        s--;
    *len = (size_t)(hit - s);
    return *len ? s : NULL;
}

/* Graphviz as a module block: the library's text, then one line that publishes its class
 * (window.ptcallGraphviz) and tells callgraph.js it is there. */
static void inline_graphviz(struct sbuf *b, const struct web_static *s, const char *nonce)
{
    size_t n = 0;
    const char *local = graphviz_local(s->data[WS_GRAPHVIZ_JS], s->len[WS_GRAPHVIZ_JS], &n);
    if (!local) /* the call graph then says that Graphviz is missing */
        return;
    sb_printf(b, "<script type=\"module\" nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_GRAPHVIZ_JS], s->len[WS_GRAPHVIZ_JS], 1);
    sb_printf(b, "\n;window.ptcallGraphviz = %.*s;"
                 "window.dispatchEvent(new Event(\"ptcall-graphviz\"));</script>\n",
              (int)n, local);
}

void web_page_inline(struct sbuf *b, const struct web_static *s, const char *nonce,
                     const char *data, size_t len)
{
    sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    sb_printf(b, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "script-src 'nonce-%s' 'wasm-unsafe-eval'; style-src 'nonce-%s' "
                 WEB_CSP_FLAMEGRAPH_STYLE "; img-src data:; base-uri 'none'; form-action 'none'\">",
                 nonce, nonce);
    sb_puts(b, "<meta name=\"viewport\" content=\"width=device-width\"><title>ptcall report"
               "</title>\n");
    sb_printf(b, "<style nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_UPLOT_CSS], s->len[WS_UPLOT_CSS], 0);
    inline_body(b, s->data[WS_APP_CSS], s->len[WS_APP_CSS], 0);
    inline_body(b, s->data[WS_FLAMEGRAPH_CSS], s->len[WS_FLAMEGRAPH_CSS], 0);
    inline_body(b, s->data[WS_FLAME_CSS], s->len[WS_FLAME_CSS], 0);
    sb_puts(b, "</style>\n");
    sb_puts(b, "<script type=\"application/json\" id=\"ptcall-data\">");
    sb_add(b, data, len);
    sb_puts(b, "</script>\n");
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_UPLOT_JS], s->len[WS_UPLOT_JS], 1);
    sb_puts(b, "</script>\n");
    /* the flame graph: d3, d3-flame-graph (it needs the global d3), flame.js */
    for (int i = WS_D3_JS; i <= WS_FLAME_JS; i++) {
        if (i == WS_FLAMEGRAPH_CSS)
            continue;
        sb_printf(b, "<script nonce=\"%s\">", nonce);
        inline_body(b, s->data[i], s->len[i], 1);
        sb_puts(b, "</script>\n");
    }
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_TABLES_JS], s->len[WS_TABLES_JS], 1);
    sb_puts(b, "</script>\n");
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_APP_JS], s->len[WS_APP_JS], 1);
    sb_puts(b, "</script>\n");
    /* the call graph's script and Graphviz (callgraph.js, graphviz.js) */
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_CALLGRAPH_JS], s->len[WS_CALLGRAPH_JS], 1);
    sb_puts(b, "</script>\n");
    inline_graphviz(b, s, nonce);
    sb_puts(b, "</head>\n<body data-page=\"hot\" data-mode=\"file\">\n");
    sb_puts(b, "<header><span class=\"brand\">ptcall</span><nav>"
               "<a id=\"nav-runs\" href=\"#/runs\">Runs</a>"
               "<a id=\"nav-hot\" href=\"#/hot\">Hot functions</a>"
               "<a id=\"nav-diff\" href=\"#/diff\">Compare runs</a></nav></header>\n"
               "<main id=\"main\"><p class=\"loading\">Loading...</p></main>\n");
    sb_puts(b, "</body></html>\n");
}
