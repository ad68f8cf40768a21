/* What the campaign views share (api_campaign.c, api_campaign_compare.c). */
#ifndef PTCALL_WEB_CAMPAIGN_H
#define PTCALL_WEB_CAMPAIGN_H

#include "db_campaign.h"
#include "sbuf.h"
#include "web.h"

/* A campaign as the list shows it (docs/web.md, *Campaigns*). */
void web_json_campaign(struct sbuf *b, const struct db_campaign *c);
/* A curve: [[t_ms, functions, blocks|null], ...] ([t_ms, functions] when blocks is 0). */
void web_json_points(struct sbuf *b, const struct db_cpoint *p, size_t n, int blocks);
/* program= and tag= (repeatable) into f, their values in buf (WEB_MAX_ARGS of them): 0, or
 * 1 with a 400 response in r, or -1 when it could not be made. */
int web_campaign_filter(const struct web_args *a, struct db_cfilter *f, const char **buf,
                        struct web_resp *r);

int web_api_campaigns(const struct web_ctx *c, struct db *d, const struct web_args *a,
                      struct web_resp *r);
int web_api_campaign(const struct web_ctx *c, struct db *d, int64_t id,
                     const struct web_args *a, struct web_resp *r);
int web_api_campaign_compare(const struct web_ctx *c, struct db *d, const struct web_args *a,
                             struct web_resp *r);

#endif
