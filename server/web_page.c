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
               "<script src=\"/static/uPlot.iife.min.js\" defer></script>"
               /* before app.js: app.js routes /campaigns... to what it defines */
               "<script src=\"/static/campaign.js\" defer></script>"
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

void web_page_inline(struct sbuf *b, const struct web_static *s, const char *nonce,
                     const char *data, size_t len)
{
    sb_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    sb_printf(b, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
                 "script-src 'nonce-%s'; style-src 'nonce-%s'; img-src data:; base-uri 'none'; "
                 "form-action 'none'\">", nonce, nonce);
    sb_puts(b, "<meta name=\"viewport\" content=\"width=device-width\"><title>ptcall report"
               "</title>\n");
    sb_printf(b, "<style nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_UPLOT_CSS], s->len[WS_UPLOT_CSS], 0);
    inline_body(b, s->data[WS_APP_CSS], s->len[WS_APP_CSS], 0);
    sb_puts(b, "</style>\n");
    sb_puts(b, "<script type=\"application/json\" id=\"ptcall-data\">");
    sb_add(b, data, len);
    sb_puts(b, "</script>\n");
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_UPLOT_JS], s->len[WS_UPLOT_JS], 1);
    sb_puts(b, "</script>\n");
    sb_printf(b, "<script nonce=\"%s\">", nonce);
    inline_body(b, s->data[WS_APP_JS], s->len[WS_APP_JS], 1);
    sb_puts(b, "</script></head>\n<body data-page=\"hot\" data-mode=\"file\">\n");
    sb_puts(b, "<header><span class=\"brand\">ptcall</span><nav>"
               "<a id=\"nav-runs\" href=\"#/runs\">Runs</a>"
               "<a id=\"nav-hot\" href=\"#/hot\">Hot functions</a>"
               "<a id=\"nav-diff\" href=\"#/diff\">Compare runs</a></nav></header>\n"
               "<main id=\"main\"><p class=\"loading\">Loading...</p></main>\n");
    sb_puts(b, "</body></html>\n");
}
