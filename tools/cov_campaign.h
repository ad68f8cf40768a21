/* Campaigns from .ptcov files (cov_campaign.c): `cov add`'s storing, shared with `db add`. */
#ifndef PTCALL_COV_CAMPAIGN_H
#define PTCALL_COV_CAMPAIGN_H

#include <stddef.h>

#include "db_campaign.h"
#include "db_conn.h"
#include "db_ingest.h"
#include "options.h"

/* Whether path starts with the .ptcov magic. */
int cov_is_ptcov(const char *path);
/* Stores path as one part of campaign (NULL: PROGRAM-DAY) in d. Returns 0, or 1 after
 * saying why on stderr (cmd names the command). */
int cov_add_file(const char *cmd, struct db *d, const char *path, const char *campaign,
                 const struct db_tag *tags, size_t ntags);
/* The part's reachability and top frontier rows into c (c->has_reach stays 0 when d has no
 * call graph), their arrays in m (free with cov_reach_rows_free after the add). 0 or -1 when
 * out of memory. */
struct cov_data;
struct cov_reach_rows {
    struct db_cfront *front;
    const char **callers;
};
int cov_campaign_reach(const struct cov_data *d, struct db_campaign_in *c,
                       struct cov_reach_rows *m);
void cov_reach_rows_free(struct cov_reach_rows *m);
/* --tag NAME=VALUE values into tags and their names (free with cov_tags_free). */
int cov_tags_of(enum cli_cmd which, const struct cli_values *v, struct db_tag **tags,
                char ***names);
void cov_tags_free(const struct cli_values *v, struct db_tag *tags, char **names);

#endif
