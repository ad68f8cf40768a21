/* Protocol Buffers' wire format by hand (https://protobuf.dev/programming-guides/encoding/):
 * varints, and length-delimited fields whose length is known once their content is written.
 * Enough for writing one message (a Perfetto TracePacket) into memory, then to a view's
 * writer; no library, no schema at run time. */
#ifndef PTCALL_PROTOENC_H
#define PTCALL_PROTOENC_H

#include <stddef.h>
#include <stdint.h>

enum { PTC_PB_VARINT = 0, PTC_PB_LEN = 2 };

struct ptc_pb {
    uint8_t *buf;
    size_t len, cap;
    int err;                /* out of memory: what follows is dropped */
};

void ptc_pb_init(struct ptc_pb *p);
void ptc_pb_free(struct ptc_pb *p);
void ptc_pb_varint(struct ptc_pb *p, uint64_t v);
/* A varint field (uint32/64, int32/64 of non-negative values, bool, enum). */
void ptc_pb_uint(struct ptc_pb *p, uint32_t field, uint64_t v);
/* A length-delimited field holding n bytes (string, bytes). */
void ptc_pb_bytes(struct ptc_pb *p, uint32_t field, const void *data, size_t n);
void ptc_pb_str(struct ptc_pb *p, uint32_t field, const char *s);
/* A string field of text made safe to show (common/ptc_escape.h, PTC_ESC_TEXT: valid UTF-8,
 * one line, no control characters): the names of functions, threads and labels, which may
 * hold any byte. */
void ptc_pb_text(struct ptc_pb *p, uint32_t field, const char *s);
/* The same of two parts ("mark: " and a label). */
void ptc_pb_text2(struct ptc_pb *p, uint32_t field, const char *a, const char *b);
/* A nested message: ptc_pb_open writes its tag and returns where its content starts;
 * ptc_pb_close puts the content's length in front of it (one byte reserved: longer
 * lengths move the content). */
size_t ptc_pb_open(struct ptc_pb *p, uint32_t field);
void ptc_pb_close(struct ptc_pb *p, size_t start);

#endif
