/* Helpers for the end-to-end programs. NOTAIL(v) keeps a call whose value is returned from
 * becoming a tail call (or accumulator recursion a loop), so the call tree stays the same at
 * every -O level; the tailcall case checks what happens without it. */
#define NOINLINE __attribute__((noinline))
#define NOTAIL(v) ({ __typeof__(v) notail_ = (v); __asm__ volatile("" : "+r"(notail_)); notail_; })
#define BARRIER() __asm__ volatile("" ::: "memory")
