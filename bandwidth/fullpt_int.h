/* What the full-PT estimator's files share (fullpt.h is the public side). Floors, bottom up:
 *   fullpt_tables.c   the tables of one callgrind output: objects, instructions, edges, names
 *   fullpt_cg.c       reading callgrind's output and valgrind's log into those tables
 *   fullpt_disasm.c   ELF spans of the objects and their disassembly (cached across the
 *                     outputs of a run): the kind of each executed instruction; finding tools
 *   fullpt_count.c    the tables into counts per function; ptc_fullpt_parse, merge, free
 *   fullpt_collect.c  running the program under valgrind
 *   fullpt_model.c    counts into packets and bytes (uses only fullpt.h) */
#ifndef PTC_FULLPT_INT_H
#define PTC_FULLPT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fullpt.h"

/* Kind of an executed instruction, from the disassembly. */
enum fpt_kind {
    FPT_UNSEEN = 0, /* no disassembly covered its address */
    FPT_OTHER,      /* not a branch */
    FPT_COND,       /* Jcc, JrCXZ, LOOP* */
    FPT_JMP,        /* direct JMP */
    FPT_CALL,       /* direct CALL */
    FPT_IJMP,       /* indirect JMP */
    FPT_ICALL,      /* indirect CALL */
    FPT_RET,        /* near RET */
    FPT_SYS,        /* SYSCALL, SYSENTER, INT n */
    FPT_FAR         /* far transfers user code does not make (LJMP, LCALL, IRET, ...) */
};

/* Interned strings: index 0 is "" (none). */
struct fpt_strtab {
    char **s;
    size_t n, cap;
    uint32_t *slot; /* open addressing over s, 0 = empty, else index + 1 */
    size_t nslot;
};
int fpt_str_init(struct fpt_strtab *t);
void fpt_str_free(struct fpt_strtab *t);
/* Index of s[0..len) (added if new), or UINT32_MAX when out of memory. */
uint32_t fpt_str_intern(struct fpt_strtab *t, const char *s, size_t len);

#define FPT_OBJ_UNKNOWN 0 /* object 0: code at absolute addresses no object covers */

struct fpt_obj {
    char *path;
    int excluded;       /* valgrind's own code (vgpreload_*, the tool) */
    int is_main;        /* the main executable */
    int elf;            /* 1: the file was read: lo, hi, dyn valid */
    int dyn;            /* ET_DYN (shared object or PIE) */
    int disasm;         /* 1: disassembled, 0: not yet, -1: could not be */
    uint64_t lo, hi;    /* link-time span of its PT_LOAD segments */
    uint64_t *bias;     /* load biases seen in valgrind's log (avma - svma) */
    size_t nbias;
};

/* One executed instruction, by key (object << 48 | link-time address). */
struct fpt_insn {
    uint64_t key;
    uint64_t ir;        /* times executed */
    uint64_t taken;     /* conditional: times taken */
    uint32_t fn;        /* callgrind's function (index in run.fn) */
    uint32_t label;     /* the disassembly's symbol label (index in run.labels), 0 none */
    uint8_t kind;       /* enum fpt_kind */
    uint64_t target;    /* a direct branch's target (link-time address), else 0 */
};

/* A call (calls=) or jump (jump=/jcnd=) callgrind recorded: source and target keys. */
struct fpt_edge {
    uint64_t src, dst, count;
    uint32_t level;     /* calls: recursion level of the callee (callgrind's f'N), 1 = none */
    uint8_t call;
};

/* A callgrind function name without its recursion suffix, and the level it carried. */
struct fpt_fn {
    uint32_t base;      /* index in run.names */
    uint32_t level;
};

struct fpt_run {
    struct fpt_obj *obj;
    size_t nobj, capobj;
    struct fpt_insn *insn;      /* open addressing, key 0 = empty */
    size_t ninsn, capinsn;
    struct fpt_edge *edge;
    size_t nedge, capedge;
    struct fpt_fn *fn;
    size_t nfn, capfn;
    struct fpt_strtab names;    /* function names */
    struct fpt_strtab fnkeys;   /* callgrind's full names (with 'N) -> fn index */
    struct fpt_strtab labels;   /* disassembly labels */
    char *cmd;                  /* callgrind's cmd: line */
    char *log_cmd;              /* the program valgrind's log names ("Command:"), first word */
    int main_obj;               /* index of the main executable, -1 if not known */
};

#define FPT_KEY(obj, addr) (((uint64_t)(obj) << 48) | ((addr) & 0xffffffffffffull))
#define FPT_KEY_OBJ(k) ((uint32_t)((k) >> 48))
#define FPT_KEY_ADDR(k) ((k) & 0xffffffffffffull)

int fpt_run_init(struct fpt_run *r);
void fpt_run_free(struct fpt_run *r);
/* Index of the object with this path (added if new), -1 when out of memory. */
int fpt_run_obj(struct fpt_run *r, const char *path);
/* The instruction record of key (added with zero counts if new), NULL when out of memory. */
struct fpt_insn *fpt_run_insn(struct fpt_run *r, uint64_t key);
/* The instruction record of key if it exists. */
struct fpt_insn *fpt_run_find(const struct fpt_run *r, uint64_t key);
int fpt_run_edge(struct fpt_run *r, uint64_t src, uint64_t dst, uint64_t count, uint32_t level,
                 int call);
/* fn index of callgrind's function name s[0..len) ("f" or "f'3"), UINT32_MAX if no memory. */
uint32_t fpt_run_fn(struct fpt_run *r, const char *s, size_t len);
/* The key of an absolute (run-time) address: the object whose load span covers it, at its
 * link-time address; FPT_OBJ_UNKNOWN with the address itself if none does. */
uint64_t fpt_run_abs_key(const struct fpt_run *r, uint64_t addr);
/* Moves the instructions and edges recorded at absolute addresses (object 0) to the objects
 * whose spans (fpt_elf_span) and biases cover them. 0, or -1 when out of memory. */
int fpt_run_rekey(struct fpt_run *r);
/* Appends a formatted line to *notes (malloc'd) unless it is there already; ignores failures. */
void fpt_note(char **notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* fullpt_cg.c */
int fpt_read_vglog(struct fpt_run *r, const char *path, char *why, size_t n);
int fpt_read_callgrind(struct fpt_run *r, const char *path, char *why, size_t n);

/* fullpt_disasm.c */
/* Reads the ELF header and program headers of o->path (lo, hi, dyn). 0, or -1. */
int fpt_elf_span(struct fpt_obj *o);
/* The disassembler to use ("objdump", else llvm-objdump; PTCALL_OBJDUMP) into buf; NULL if
 * none is installed. */
const char *fpt_objdump(char *buf, size_t size);
/* Disassembled objects, kept across the callgrind outputs of one run (processes share
 * ld.so and libc). */
struct fpt_dcache;
struct fpt_dcache *fpt_dcache_new(void);
void fpt_dcache_free(struct fpt_dcache *c);
/* Disassembles every object with executed instructions (through cache, or a cache of its own
 * when NULL) and sets the kind, label and target of those still FPT_UNSEEN (so it can run
 * again after fpt_run_rekey). Objects that cannot be read are named in *notes (appended).
 * 0, or -1 with why. */
int fpt_classify(struct fpt_run *r, struct fpt_dcache *cache, char **notes, char *why, size_t n);
/* Notes the objects with executed code their disassembly does not list. */
void fpt_note_unseen(const struct fpt_run *r, char **notes);

/* fullpt_count.c */
/* ptc_fullpt_parse through a cache of disassembled objects (NULL: one of its own). */
int fpt_parse_run(const char *callgrind_file, const char *vg_log, struct fpt_dcache *cache,
                  struct ptc_fullpt_profile **out, char *why, size_t n);
int fpt_merge(struct ptc_fullpt_profile *into, struct ptc_fullpt_profile *from, char *why,
              size_t n);

/* fullpt_disasm.c: name's executable in PATH (like execvp), into buf; 0 or -1. */
int fpt_which(const char *name, char *buf, size_t size);

#endif
