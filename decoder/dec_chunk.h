/* Floor 5 (chunk.c): chunk dispatch. */
#ifndef PTC_DEC_CHUNK_H
#define PTC_DEC_CHUNK_H

#include "dec_core.h"

/* One CRC-checked chunk of the input, in file order. Returns 0 or -PTC_E_*. */
int ptc_session_chunk(struct ptc_session *s, const struct ptc_chunk *c);

#endif
