/* The objects' side of the estimate: their ELF load spans (to place code callgrind reports
 * at run-time addresses) and their disassembly, which gives every executed instruction its
 * kind (conditional, direct or indirect jump/call, return, syscall) and a symbol label.
 * The disassembler is GNU objdump (binutils), else llvm-objdump; PTCALL_OBJDUMP overrides. */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fullpt_int.h"

int fpt_which(const char *name, char *buf, size_t size)
{
    if (strchr(name, '/')) {
        if (access(name, X_OK))
            return -1;
        snprintf(buf, size, "%s", name);
        return 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *e = strchr(path, ':');
        size_t len = e ? (size_t)(e - path) : strlen(path);
        if (len && (size_t)snprintf(buf, size, "%.*s/%s", (int)len, path, name) < size &&
            access(buf, X_OK) == 0)
            return 0;
        path += len + (e != NULL);
    }
    return -1;
}

const char *fpt_objdump(char *buf, size_t size)
{
    const char *env = getenv("PTCALL_OBJDUMP");
    if (env && *env)
        return fpt_which(env, buf, size) ? NULL : buf;
    static const char *const names[] = {"objdump", "llvm-objdump", "llvm-objdump-14"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (fpt_which(names[i], buf, size) == 0)
            return buf;
    return NULL;
}

int fpt_elf_span(struct fpt_obj *o)
{
    if (o->elf)
        return 0;
    int fd = open(o->path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int rc = -1;
    if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr) &&
        eh.e_phnum > 0 && eh.e_phnum < 4096) {
        Elf64_Phdr *ph = malloc(eh.e_phnum * sizeof *ph);
        size_t sz = eh.e_phnum * sizeof *ph;
        if (ph && pread(fd, ph, sz, (off_t)eh.e_phoff) == (ssize_t)sz) {
            uint64_t lo = UINT64_MAX, hi = 0;
            for (unsigned i = 0; i < eh.e_phnum; i++) {
                if (ph[i].p_type != PT_LOAD)
                    continue;
                uint64_t a = ph[i].p_vaddr & ~0xfffull, b = ph[i].p_vaddr + ph[i].p_memsz;
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
            if (hi > lo) {
                o->lo = lo;
                o->hi = hi;
                o->dyn = eh.e_type == ET_DYN;
                o->elf = 1;
                rc = 0;
            }
        }
        free(ph);
    }
    close(fd);
    return rc;
}

/* ------------------------------------------------------------------ classification */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}


static int is_prefix(const char *w, size_t len)
{
    static const char *const p[] = {"notrack", "bnd",  "rep",    "repz",   "repe",   "repnz",
                                    "repne",   "lock", "data16", "data32", "addr32", "addr16",
                                    "cs",      "ds",   "es",     "ss",     "fs",     "gs",
                                    "rex",     "rex.W", "{disp32}", "{disp8}", "{vex}", "{evex}"};
    for (size_t i = 0; i < sizeof p / sizeof *p; i++)
        if (strlen(p[i]) == len && memcmp(p[i], w, len) == 0)
            return 1;
    return len > 3 && memcmp(w, "rex.", 4) == 0;
}

static int word_is(const char *w, size_t len, const char *s)
{
    return strlen(s) == len && memcmp(w, s, len) == 0;
}

/* The kind of an instruction from its mnemonic w[0..len) and operands s. */
static enum fpt_kind kind_of(const char *w, size_t len, const char *s, int indirect)
{
    /* operand-size suffixes of LLVM's and older GNU output: retq, jmpq, callq */
    if (len == 4 && (word_is(w, len, "retq") || word_is(w, len, "retl") || word_is(w, len, "retw")))
        len = 3;
    if (word_is(w, len, "ret") || word_is(w, len, "retn"))
        return FPT_RET;
    if ((len == 4 || len == 5) && (memcmp(w, "jmp", 3) == 0 || memcmp(w, "call", 4) == 0) &&
        (w[len - 1] == 'q' || w[len - 1] == 'l' || w[len - 1] == 'w') && !word_is(w, len, "call"))
        len--;
    if (word_is(w, len, "jmp"))
        return indirect ? FPT_IJMP : FPT_JMP;
    if (word_is(w, len, "call"))
        return indirect ? FPT_ICALL : FPT_CALL;
    if (w[0] == 'j')
        return FPT_COND; /* Jcc, JCXZ/JECXZ/JRCXZ */
    if (len >= 4 && memcmp(w, "loop", 4) == 0)
        return FPT_COND; /* LOOP, LOOPE/Z, LOOPNE/NZ */
    if (word_is(w, len, "syscall") || word_is(w, len, "sysenter"))
        return FPT_SYS;
    if (word_is(w, len, "int") && *s == '$')
        return FPT_SYS;
    if (word_is(w, len, "ljmp") || word_is(w, len, "lcall") || word_is(w, len, "ljmpq") ||
        word_is(w, len, "lcallq") || (len >= 4 && memcmp(w, "lret", 4) == 0) ||
        (len >= 4 && memcmp(w, "iret", 4) == 0) || (len >= 6 && memcmp(w, "sysret", 6) == 0) ||
        word_is(w, len, "sysexit"))
        return FPT_FAR;
    return FPT_OTHER;
}

/* The kind of an instruction from its disassembled text (AT&T syntax, GNU or LLVM); for a
 * direct branch *target gets its target address ("call 1030 <f@plt>", "callq 0x1030 <...>"). */
static enum fpt_kind classify(const char *s, uint64_t *target)
{
    *target = 0;
    const char *w;
    size_t len;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        w = s;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n' && *s != '\r')
            s++;
        len = (size_t)(s - w);
        if (!len)
            return FPT_OTHER;
        if (!is_prefix(w, len))
            break;
    }
    while (*s == ' ' || *s == '\t')
        s++;
    int indirect = *s == '*';
    enum fpt_kind k = kind_of(w, len, s, indirect);
    if (k == FPT_COND || k == FPT_JMP || k == FPT_CALL) {
        const char *t = s;
        if (t[0] == '0' && t[1] == 'x')
            t += 2;
        uint64_t v = 0;
        int nd = 0, d;
        while ((d = hexval((unsigned char)*t)) >= 0 && nd < 17) {
            v = v << 4 | (uint64_t)d;
            t++;
            nd++;
        }
        if (nd && (*t == ' ' || *t == '<' || *t == '\n' || *t == '\t' || !*t))
            *target = v;
    }
    return k;
}


/* ------------------------------------------------------------------ disassembled objects */

/* One object's instructions, as the disassembler listed them. */
struct fpt_dobj {
    char *path;
    dev_t dev;
    ino_t ino;
    struct timespec mtime;
    int ok;                 /* 1: disassembled; 0: could not be (err says why) */
    char err[1200];
    uint64_t *addr;         /* instruction addresses, ascending */
    uint8_t *kind;
    uint32_t *label;        /* in labels */
    uint64_t *target;       /* a direct branch's target, else 0 */
    size_t n, cap;
    struct fpt_strtab labels;
};

struct fpt_dcache {
    struct fpt_dobj **o;    /* each allocated alone: classification keeps pointers */
    size_t n, cap;
    char tool[4096];
    int have_tool;
    int no_debug_files; /* the tool takes --debug-file-directory (llvm-objdump 16 and later) */
};

struct fpt_dcache *fpt_dcache_new(void)
{
    return calloc(1, sizeof(struct fpt_dcache));
}

void fpt_dcache_free(struct fpt_dcache *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->o[i]->path);
        free(c->o[i]->addr);
        free(c->o[i]->kind);
        free(c->o[i]->label);
        free(c->o[i]->target);
        fpt_str_free(&c->o[i]->labels);
        free(c->o[i]);
    }
    free(c->o);
    free(c);
}

static int dobj_add(struct fpt_dobj *d, uint64_t addr, uint8_t kind, uint32_t label,
                    uint64_t target)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 4096;
        uint64_t *a = realloc(d->addr, cap * sizeof *a);
        if (!a)
            return -1;
        d->addr = a;
        uint8_t *k = realloc(d->kind, cap * sizeof *k);
        if (!k)
            return -1;
        d->kind = k;
        uint32_t *l = realloc(d->label, cap * sizeof *l);
        if (!l)
            return -1;
        d->label = l;
        uint64_t *t = realloc(d->target, cap * sizeof *t);
        if (!t)
            return -1;
        d->target = t;
        d->cap = cap;
    }
    d->addr[d->n] = addr;
    d->kind[d->n] = kind;
    d->label[d->n] = label;
    d->target[d->n] = target;
    d->n++;
    return 0;
}

struct sortrec {
    uint64_t addr, target;
    uint32_t label;
    uint8_t kind;
};

static int sortrec_cmp(const void *a, const void *b)
{
    const struct sortrec *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Sections are listed in file order, which is almost always address order; sort if not. */
static int dobj_sort(struct fpt_dobj *d)
{
    size_t i = 1;
    while (i < d->n && d->addr[i - 1] <= d->addr[i])
        i++;
    if (i >= d->n)
        return 0;
    struct sortrec *v = malloc(d->n * sizeof *v);
    if (!v)
        return -1;
    for (i = 0; i < d->n; i++)
        v[i] = (struct sortrec){d->addr[i], d->target[i], d->label[i], d->kind[i]};
    qsort(v, d->n, sizeof *v, sortrec_cmp);
    for (i = 0; i < d->n; i++) {
        d->addr[i] = v[i].addr;
        d->label[i] = v[i].label;
        d->kind[i] = v[i].kind;
        d->target[i] = v[i].target;
    }
    free(v);
    return 0;
}

/* Runs argv[0] with its standard output into the returned stream (its errors to /dev/null);
 * *pid is the child, for waitpid after fclose. NULL with err set when it could not start. */
static FILE *tool_output(const char *const argv[], pid_t *pid, char *err, size_t n)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC)) {
        snprintf(err, n, "pipe: %s", strerror(errno));
        return NULL;
    }
    *pid = fork();
    if (*pid < 0) {
        snprintf(err, n, "fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return NULL;
    }
    if (*pid == 0) {
        dup2(pfd[1], 1);
        int dn = open("/dev/null", O_WRONLY);
        if (dn >= 0)
            dup2(dn, 2);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    FILE *f = fdopen(pfd[0], "r");
    if (!f) {
        snprintf(err, n, "fdopen: %s", strerror(errno));
        close(pfd[0]);
        waitpid(*pid, NULL, 0);
    }
    return f;
}

/* Whether TOOL's --help names OPTION. */
static int tool_has_option(const char *tool, const char *option)
{
    const char *const argv[] = {tool, "--help", NULL};
    char err[128];
    pid_t pid;
    FILE *f = tool_output(argv, &pid, err, sizeof err);
    if (!f)
        return 0;
    int found = 0;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0)
        if (strstr(line, option))
            found = 1;
    free(line);
    fclose(f);
    waitpid(pid, NULL, 0);
    return found;
}

/* llvm-objdump 16 and later disassemble a library's separate debug file when one is installed
 * (Debian's libc6-dbg under /usr/lib/debug/.build-id), whose code sections are empty: an
 * empty directory for debug files keeps them to the library itself. */
static const char no_debug_dir[] = "--debug-file-directory=/nonexistent/ptcall";

/* Runs the disassembler on d->path and keeps every instruction. 0; -1 with d->err set when
 * it could not run (d->ok stays 0); -2 when out of memory. */
static int dobj_load(struct fpt_dobj *d, const char *tool, int no_debug_files)
{
    const char *argv[6];
    int argc = 0;
    argv[argc++] = tool;
    argv[argc++] = "-d";
    argv[argc++] = "--no-show-raw-insn";
    if (!strstr(tool, "llvm"))
        argv[argc++] = "-w"; /* GNU objdump: one line per instruction, however long */
    else if (no_debug_files)
        argv[argc++] = no_debug_dir;
    argv[argc++] = d->path;
    argv[argc] = NULL;
    pid_t pid;
    FILE *f = tool_output(argv, &pid, d->err, sizeof d->err);
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    uint32_t label = 0;
    int oom = fpt_str_init(&d->labels);
    while (!oom && (len = getline(&line, &cap, f)) > 0) {
        /* "0000000000401000 <_start>:" is a label, "  401000:\tmov ..." an instruction (LLVM
         * does not indent addresses of 9 digits and more) */
        const char *p = line;
        while (*p == ' ')
            p++;
        uint64_t addr = 0;
        int v, nd = 0;
        while ((v = hexval((unsigned char)*p)) >= 0 && nd < 17) {
            addr = addr << 4 | (uint64_t)v;
            p++;
            nd++;
        }
        if (!nd)
            continue;
        if (*p == ' ' && p[1] == '<') {
            const char *a = p + 1, *b = strrchr(a, '>');
            if (b && b > a + 1) {
                uint32_t l = fpt_str_intern(&d->labels, a + 1, (size_t)(b - a - 1));
                if (l == UINT32_MAX)
                    oom = 1;
                else
                    label = l;
            }
            continue;
        }
        if (*p != ':')
            continue;
        uint64_t target;
        uint8_t kind = (uint8_t)classify(p + 1, &target);
        if (dobj_add(d, addr, kind, label, target))
            oom = 1;
    }
    free(line);
    fclose(f);
    int st = 0;
    waitpid(pid, &st, 0);
    if (oom || dobj_sort(d))
        return -2;
    if (!d->n && (!WIFEXITED(st) || WEXITSTATUS(st))) {
        snprintf(d->err, sizeof d->err, "%.200s -d %.900s failed (exit status %d)", tool, d->path,
                 WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        return -1;
    }
    d->ok = 1;
    return 0;
}

/* The cached disassembly of path (made now if it is not there or the file changed), NULL
 * when out of memory; why set when the disassembler is missing (fatal). */
static struct fpt_dobj *dcache_get(struct fpt_dcache *c, const char *path, char *why, size_t n)
{
    struct stat st;
    int have = stat(path, &st) == 0;
    for (size_t i = 0; i < c->n; i++) {
        struct fpt_dobj *d = c->o[i];
        if (strcmp(d->path, path))
            continue;
        if (!have || (d->dev == st.st_dev && d->ino == st.st_ino &&
                      d->mtime.tv_sec == st.st_mtim.tv_sec &&
                      d->mtime.tv_nsec == st.st_mtim.tv_nsec))
            return d;
    }
    if (!c->have_tool) {
        if (!fpt_objdump(c->tool, sizeof c->tool)) {
            snprintf(why, n, "objdump not found (it tells direct from indirect branches): "
                             "apt-get install binutils, or set PTCALL_OBJDUMP");
            return NULL;
        }
        c->have_tool = 1;
        c->no_debug_files = strstr(c->tool, "llvm") && tool_has_option(c->tool, "--debug-file-directory");
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct fpt_dobj **o = realloc(c->o, cap * sizeof *o);
        if (!o)
            goto oom;
        c->o = o;
        c->cap = cap;
    }
    struct fpt_dobj *d = calloc(1, sizeof *d);
    if (!d)
        goto oom;
    if (!(d->path = strdup(path))) {
        free(d);
        goto oom;
    }
    c->o[c->n++] = d;
    if (!have) {
        snprintf(d->err, sizeof d->err, "cannot read %.900s (%.200s)", path, strerror(errno));
        return d;
    }
    d->dev = st.st_dev;
    d->ino = st.st_ino;
    d->mtime = st.st_mtim;
    if (access(path, R_OK)) {
        snprintf(d->err, sizeof d->err, "cannot read %.900s (%.200s)", path, strerror(errno));
        return d;
    }
    if (dobj_load(d, c->tool, c->no_debug_files) == -2)
        goto oom;
    return d;
oom:
    snprintf(why, n, "out of memory disassembling %s", path);
    return NULL;
}

static int addr_cmp(const void *key, const void *elt)
{
    uint64_t a = *(const uint64_t *)key, b = *(const uint64_t *)elt;
    return a < b ? -1 : a > b;
}

int fpt_classify(struct fpt_run *r, struct fpt_dcache *cache, char **notes, char *why, size_t n)
{
    struct fpt_dcache *own = NULL;
    if (!cache && !(cache = own = fpt_dcache_new())) {
        snprintf(why, n, "out of memory");
        return -1;
    }
    uint64_t *ninsn = calloc(r->nobj, sizeof *ninsn);
    struct fpt_dobj **dobj = calloc(r->nobj, sizeof *dobj);
    int rc = 0;
    if (!ninsn || !dobj) {
        snprintf(why, n, "out of memory");
        rc = -1;
        goto out;
    }
    for (size_t j = 0; j < r->capinsn; j++)
        if (r->insn[j].key)
            ninsn[FPT_KEY_OBJ(r->insn[j].key)]++;
    for (uint32_t i = 1; i < r->nobj; i++) {
        struct fpt_obj *o = &r->obj[i];
        if (!ninsn[i]) /* valgrind's own objects too: their PLT calls place their PLT */
            continue;
        if (!(dobj[i] = dcache_get(cache, o->path, why, n))) {
            rc = -1;
            goto out;
        }
        if (!o->disasm && !dobj[i]->ok && !o->excluded)
            fpt_note(notes, "%s: its branches are not counted", dobj[i]->err);
        o->disasm = dobj[i]->ok ? 1 : -1;
    }
    /* every executed instruction: its kind, label and target from its object's listing */
    for (size_t j = 0; j < r->capinsn; j++) {
        struct fpt_insn *in = &r->insn[j];
        if (!in->key || in->kind != FPT_UNSEEN)
            continue;
        const struct fpt_dobj *d = dobj[FPT_KEY_OBJ(in->key)];
        uint64_t a = FPT_KEY_ADDR(in->key);
        const uint64_t *hit = d && d->ok ? bsearch(&a, d->addr, d->n, sizeof *d->addr, addr_cmp)
                                         : NULL;
        if (!hit)
            continue;
        size_t k = (size_t)(hit - d->addr);
        in->kind = d->kind[k];
        in->target = d->target[k];
        if (d->label[k]) {
            const char *l = d->labels.s[d->label[k]];
            uint32_t x = fpt_str_intern(&r->labels, l, strlen(l));
            if (x == UINT32_MAX) {
                snprintf(why, n, "out of memory");
                rc = -1;
                goto out;
            }
            in->label = x;
        }
    }
out:
    free(ninsn);
    free(dobj);
    fpt_dcache_free(own);
    return rc;
}

void fpt_note_unseen(const struct fpt_run *r, char **notes)
{
    uint64_t *unseen = calloc(r->nobj, sizeof *unseen);
    if (!unseen)
        return;
    for (size_t j = 0; j < r->capinsn; j++) {
        const struct fpt_insn *in = &r->insn[j];
        if (in->key && in->ir && in->kind == FPT_UNSEEN)
            unseen[FPT_KEY_OBJ(in->key)] += in->ir;
    }
    for (uint32_t i = 0; i < r->nobj; i++)
        if (unseen[i] && !r->obj[i].excluded && r->obj[i].disasm >= 0)
            fpt_note(notes, "code executed in %s at addresses its disassembly does not list: "
                            "its branches are not counted",
                     i == FPT_OBJ_UNKNOWN ? "no known object" : r->obj[i].path);
    free(unseen);
}
