/* The campaign pages' paths (docs/web.md, Pages): /campaigns, /campaigns/ID,
 * /campaigns/compare. web/app/campaign.js fills them from /api/v1/campaigns... */
#ifndef PTCALL_WEB_PAGE_CAMPAIGN_H
#define PTCALL_WEB_PAGE_CAMPAIGN_H

#include "web.h"

/* 2 when path is not a campaign page; else as web_page_of: 0 with *kind set, 1 with an
 * error response in *r (a campaign id that is not a number: 400; a path below a campaign:
 * 404), -1 out of memory. */
int web_page_campaign(const char *path, const struct web_args *a, enum web_page *kind,
                      struct web_resp *r);

#endif
