/* Floor 6 (file.c): the file driver. */
#ifndef PTC_DEC_FILE_H
#define PTC_DEC_FILE_H

#include "dec_core.h"

/* Decodes every chunk of r (opened with result rc) into s, then finishes s; closes r. */
int ptc_decode_reader(struct ptc_session *s, struct ptc_reader *r, int rc, unsigned flags,
                      const char *name);

#endif
