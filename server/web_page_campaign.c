/* The campaign pages' paths (web_page_campaign.h). Whether a campaign exists is the API's
 * answer: the page's script asks /api/v1/campaigns/ID and shows its 404 message, so that
 * the page costs the database nothing beyond the document it shows. */
#include "web_page_campaign.h"

#include <string.h>

#include "web_internal.h"

int web_page_campaign(const char *path, const struct web_args *a, enum web_page *kind,
                      struct web_resp *r)
{
    (void)a; /* the filters and selections are the API's to check */
    if (strncmp(path, "/campaigns", 10) || (path[10] && path[10] != '/'))
        return 2;
    const char *rest = path + 10;
    if (!*rest || !strcmp(rest, "/")) {
        *kind = WP_CAMPAIGNS;
        return 0;
    }
    rest++;
    if (!strcmp(rest, "compare")) {
        *kind = WP_CAMPAIGN_COMPARE;
        return 0;
    }
    if (strchr(rest, '/'))
        return web_error(r, 404, "no such page: %s", path) ? -1 : 1;
    int64_t id = web_id_arg(rest, "campaign id", r);
    if (id <= 0)
        return id < 0 ? -1 : 1;
    *kind = WP_CAMPAIGN;
    return 0;
}
