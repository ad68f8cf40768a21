/* The pages' HTML: one shell per page that web/app/app.js fills from the JSON API (all user
 * strings reach the page as JSON and are set as text by the script, never as markup). */
#ifndef PTCALL_WEB_PAGE_H
#define PTCALL_WEB_PAGE_H

#include "sbuf.h"
#include "web.h"
#include "web_static.h"

/* The page of kind for the server: its script and styles by URL (/static/...). */
void web_page_served(struct sbuf *b, enum web_page kind);
/* The self-contained report (`ptcall html`): the script, styles and chart library inlined
 * under a Content-Security-Policy that allows only those blocks (nonce), and data, a JSON
 * object of API answers by path, in a non-executed <script type="application/json">
 * (sb_json_str escapes <, > and & in it, so no string can end that block). */
void web_page_inline(struct sbuf *b, const struct web_static *s, const char *nonce,
                     const char *data, size_t len);

#endif
