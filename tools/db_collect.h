/* What `ptcall db add` stores of a decoded trace: the session's figures, totals and the
 * recording's description as the runs database's input (db/db_ingest.h). */
#ifndef PTCALL_DB_COLLECT_H
#define PTCALL_DB_COLLECT_H

#include "db_ingest.h"
#include "ptcall/decode.h"

struct db_collected {
    struct db_run_in in;
    /* what in points into */
    struct db_func_in *funcs;
    struct db_edge_in *edges;
    struct db_module_in *mods;
    char (*build_ids)[80];   /* the mods' build ids, as found in their files */
    char *command, *trace;
    char host[256];
};
/* Fills c from decoded session s of the trace at path (its content hash and size given).
 * Returns 0, or -1 when out of memory. */
int db_collect(struct db_collected *c, struct ptc_session *s, const char *path,
               const char *content_hash, uint64_t bytes);
void db_collected_free(struct db_collected *c);

#endif
