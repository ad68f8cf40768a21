/* `ptcall record --ring SIZE [--trigger SPEC]`: the software flight recorder (record_ring.c). */
#ifndef PTC_RECORD_RING_H
#define PTC_RECORD_RING_H

#include "ptc_record_options.h"

/* cmd_record.c: puts libptcall.so in LD_PRELOAD. 0, or -1 after an error line. */
int preload_runtime(const struct record_options *o);
/* libptcall.so's path (cmd_record.c: $PTCALL_RUNTIME, the install tree, the build tree): 0,
 * or -1 when none is found. */
int find_runtime(char *out, size_t outsz);

/* Runs the command at cmdpath (o->argv) in ring mode: PTCALL_RING, PTCALL_TRIGGER and
 * PTCALL_SNAPSHOT_DIR (-o's directory unless set) for the runtime, then waits and lists the
 * snapshot files the run wrote. 0 with *wait_status set, or -1 after an error line. */
int record_ring(const struct record_options *o, const char *cmdpath, int *wait_status);

#endif
