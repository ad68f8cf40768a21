/* common/ptc_seqtab: each (pid, tid) stream counts its own chunks from 0, however many
 * streams there are (the recorder and import once shared the 1024th stream's count among all
 * later ones, which readers then reported as missing chunks). */
#include <stdio.h>

#include "ptc_seqtab.h"

int main(void)
{
    struct ptc_seqtab t = {0};
    enum { STREAMS = 5000, ROUNDS = 3 };
    int bad = 0;
    for (uint32_t r = 0; r < ROUNDS; r++)
        for (uint32_t i = 0; i < STREAMS; i++) {
            uint32_t seq;
            /* pids and tids that share low bits, and tid 0 (a process's own stream) */
            uint32_t pid = 1000 + i / 7, tid = i % 7 ? pid + i % 7 : 0;
            if (ptc_seq_next(&t, pid, tid, &seq) || seq != r) {
                printf("FAIL stream %u/%u round %u: seq %u\n", pid, tid, r, seq);
                bad = 1;
            }
        }
    printf("%s %d streams x %d chunks: each numbered 0..%d on its own (%zu slots)\n",
           bad ? "FAIL" : "ok  ", STREAMS, ROUNDS, ROUNDS - 1, t.cap);
    ptc_seq_free(&t);
    return bad;
}
