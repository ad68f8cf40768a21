/* Campaigns from .ptcov files (cov_campaign.c): `cov add`'s storing, shared with `db add`. */
#ifndef PTCALL_COV_CAMPAIGN_H
#define PTCALL_COV_CAMPAIGN_H

#include <stddef.h>

#include "db_conn.h"
#include "db_ingest.h"
#include "options.h"

/* Whether path starts with the .ptcov magic. */
int cov_is_ptcov(const char *path);
/* Stores path as one part of campaign (NULL: PROGRAM-DAY) in d. Returns 0, or 1 after
 * saying why on stderr (cmd names the command). */
int cov_add_file(const char *cmd, struct db *d, const char *path, const char *campaign,
                 const struct db_tag *tags, size_t ntags);
/* --tag NAME=VALUE values into tags and their names (free with cov_tags_free). */
int cov_tags_of(enum cli_cmd which, const struct cli_values *v, struct db_tag **tags,
                char ***names);
void cov_tags_free(const struct cli_values *v, struct db_tag *tags, char **names);

#endif
