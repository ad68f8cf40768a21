/* Reading callgrind's output (format: valgrind.org/docs/manual/cl-format.html, as written by
 * callgrind 3.x with --dump-instr=yes --collect-jumps=yes) and valgrind's -v -v log into the
 * tables of fullpt_int.h.
 *
 * What the output holds, as read here:
 *   - "positions: instr line", "events: Ir": a cost line is "<instr> <line> <Ir>", each
 *     position absolute (0x...), relative to the last cost line's ("+N", "-N") or the same
 *     ("*"). Addresses are link-time addresses of the object (ob=) the function is in;
 *     for an object callgrind has no debug information for ("???": PLT sections, .init)
 *     they are run-time addresses.
 *   - "calls=<count> <target>" is followed by the line of the call's source position with
 *     the call's inclusive cost (not the instruction's own cost); the target is in the
 *     object cob= names (else the current one) and the function cfn= names, whose "'N"
 *     suffix is the recursion level with --separate-recs.
 *   - "jump=<count> <target>" and "jcnd=<taken>/<executed> <target>" are followed by the
 *     source position's line without cost. Neither those lines nor the targets move the
 *     position relative ones are counted from.
 *   - Names are compressed: "(id) name" defines id, "(id)" refers to it; objects (ob=, cob=)
 *     and functions (fn=, cfn=, jfn=) each have their own ids. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fullpt_int.h"

/* ------------------------------------------------------------------ valgrind's log */

int fpt_read_vglog(struct fpt_run *r, const char *path, char *why, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, n, "cannot open valgrind's log %s: %s", path, strerror(errno));
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int cur = -1, rc = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' '))
            line[--len] = 0;
        const char *cmd = strstr(line, "== Command: ");
        if (cmd && !r->log_cmd) { /* the program's path: up to a space not escaped by '\' */
            cmd += 12;
            char *w = malloc(strlen(cmd) + 1), *o = w;
            if (!w) {
                rc = -1;
                break;
            }
            for (; *cmd && *cmd != ' '; cmd++)
                *o++ = *cmd == '\\' && cmd[1] ? *++cmd : *cmd;
            *o = 0;
            r->log_cmd = w;
            continue;
        }
        const char *p = strstr(line, "Reading syms from ");
        if (p) {
            cur = fpt_run_obj(r, p + 18);
            if (cur < 0) {
                rc = -1;
                break;
            }
            if (r->main_obj < 0) /* the first object valgrind loads is the program */
                r->main_obj = cur;
            continue;
        }
        const char *s = strstr(line, "svma 0x"), *a = strstr(line, "avma 0x");
        if (s && a && cur > 0) {
            uint64_t svma = strtoull(s + 5, NULL, 16), avma = strtoull(a + 5, NULL, 16);
            struct fpt_obj *o = &r->obj[cur];
            uint64_t *b = realloc(o->bias, (o->nbias + 1) * sizeof *b);
            if (!b) {
                rc = -1;
                break;
            }
            o->bias = b;
            o->bias[o->nbias++] = avma - svma;
            cur = -1;
        }
    }
    free(line);
    fclose(f);
    if (rc)
        snprintf(why, n, "out of memory reading %s", path);
    return rc;
}

/* ------------------------------------------------------------------ callgrind's output */

struct idmap {
    uint32_t *v;
    size_t n;
};

static int idmap_set(struct idmap *m, unsigned long id, uint32_t val)
{
    if (id > 100000000ul)
        return -1;
    if (id >= m->n) {
        size_t n = m->n ? m->n : 256;
        while (n <= id)
            n *= 2;
        uint32_t *v = realloc(m->v, n * sizeof *v);
        if (!v)
            return -1;
        memset(v + m->n, 0xff, (n - m->n) * sizeof *v);
        m->v = v;
        m->n = n;
    }
    m->v[id] = val;
    return 0;
}

static uint32_t idmap_get(const struct idmap *m, unsigned long id)
{
    return id < m->n ? m->v[id] : UINT32_MAX;
}

enum { NS_OBJ, NS_FN };

struct cg {
    struct fpt_run *r;
    struct idmap ids[2];
    int npos, instr_col, ir_col;
    uint32_t cur_obj, cur_fn, cob, cfn;
    uint64_t last;
    /* the call or jump whose source line comes next */
    int pending; /* 0, 'c' call, 'j' jump, 'n' conditional jump */
    uint64_t p_count, p_taken, p_dst;
    uint32_t p_level;
    unsigned long lineno;
    const char *path;
    char *why;
    size_t n;
};

static int cg_fail(struct cg *c, const char *what)
{
    snprintf(c->why, c->n, "%s:%lu: %s (is it a callgrind output written with --dump-instr=yes?)",
             c->path, c->lineno, what);
    return -1;
}

/* The value of a name spec ("(id) name", "(id)" or "name") in namespace ns: an object index
 * or a function index; UINT32_MAX on error. */
static uint32_t cg_name(struct cg *c, int ns, const char *v)
{
    unsigned long id = 0;
    int has_id = 0;
    if (*v == '(') {
        char *e;
        id = strtoul(v + 1, &e, 10);
        if (*e != ')')
            return UINT32_MAX;
        has_id = 1;
        v = e + 1;
        while (*v == ' ')
            v++;
        if (!*v)
            return idmap_get(&c->ids[ns], id);
    }
    uint32_t val;
    if (ns == NS_OBJ) {
        int o = fpt_run_obj(c->r, v);
        val = o < 0 ? UINT32_MAX : (uint32_t)o;
    } else {
        val = fpt_run_fn(c->r, v, strlen(v));
    }
    if (val != UINT32_MAX && has_id && idmap_set(&c->ids[ns], id, val))
        return UINT32_MAX;
    return val;
}

/* Reads the instr subposition (and skips the others) of a position list at *s; the address
 * relative to c->last. Returns 0 or -1. */
static int cg_pos(struct cg *c, char **s, uint64_t *addr)
{
    *addr = c->last;
    for (int col = 0; col < c->npos; col++) {
        char *p = *s, *e;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            return -1;
        uint64_t v = c->last;
        if (*p == '*') {
            e = p + 1;
        } else if (*p == '+' || *p == '-') {
            uint64_t d = strtoull(p + 1, &e, 10);
            v = *p == '+' ? c->last + d : c->last - d;
        } else if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
            v = strtoull(p, &e, 16);
        } else {
            v = strtoull(p, &e, 10);
        }
        if (e == p || (*e && *e != ' ' && *e != '\t' && *e != '\n'))
            return -1;
        if (col == c->instr_col)
            *addr = v;
        *s = e;
    }
    return 0;
}

static int cg_header(struct cg *c, const char *key, char *v)
{
    if (strcmp(key, "positions") == 0) {
        c->npos = 0;
        c->instr_col = -1;
        for (char *t = strtok(v, " \t"); t; t = strtok(NULL, " \t")) {
            if (strcmp(t, "instr") == 0)
                c->instr_col = c->npos;
            c->npos++;
        }
    } else if (strcmp(key, "events") == 0) {
        int i = 0;
        c->ir_col = -1;
        for (char *t = strtok(v, " \t"); t; t = strtok(NULL, " \t"), i++)
            if (strcmp(t, "Ir") == 0)
                c->ir_col = i;
    } else if (strcmp(key, "cmd") == 0) {
        while (*v == ' ')
            v++;
        free(c->r->cmd);
        c->r->cmd = strdup(v);
    }
    return 0;
}

static int cg_cost(struct cg *c, char *s)
{
    if (c->instr_col < 0)
        return cg_fail(c, "no instruction addresses (\"positions: instr\")");
    if (c->ir_col < 0)
        return cg_fail(c, "no Ir event");
    uint64_t addr;
    if (cg_pos(c, &s, &addr))
        return cg_fail(c, "bad position");
    struct fpt_run *r = c->r;
    uint64_t src = FPT_KEY(c->cur_obj, addr);
    if (c->pending) {
        int kind = c->pending;
        c->pending = 0;
        struct fpt_insn *i = fpt_run_insn(r, src);
        if (!i)
            return cg_fail(c, "out of memory");
        if (kind == 'n') {
            i->taken += c->p_taken;
            return 0;
        }
        if (fpt_run_edge(r, src, c->p_dst, c->p_count, c->p_level, kind == 'c'))
            return cg_fail(c, "out of memory");
        return 0;
    }
    c->last = addr;
    uint64_t ir = 0;
    for (int k = 0; k <= c->ir_col; k++) {
        char *e;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s || *s == '\n')
            break;
        uint64_t v = strtoull(s, &e, 10);
        if (e == s)
            return cg_fail(c, "bad cost");
        if (k == c->ir_col)
            ir = v;
        s = e;
    }
    if (!ir)
        return 0;
    struct fpt_insn *i = fpt_run_insn(r, src);
    if (!i)
        return cg_fail(c, "out of memory");
    i->ir += ir;
    if (i->fn == UINT32_MAX)
        i->fn = c->cur_fn;
    return 0;
}

/* calls=, jump=, jcnd=: remember it for the source line that follows. */
static int cg_branch(struct cg *c, const char *key, char *v)
{
    char *e;
    uint64_t a = strtoull(v, &e, 10), b = 0;
    if (e == v)
        return cg_fail(c, "bad count");
    if (*e == '/') {
        char *f = e + 1;
        b = strtoull(f, &e, 10);
        if (e == f)
            return cg_fail(c, "bad count");
    }
    uint64_t dst;
    if (cg_pos(c, &e, &dst))
        return cg_fail(c, "bad target position");
    if (key[0] == 'c') {
        uint32_t obj = c->cob != UINT32_MAX ? c->cob : c->cur_obj;
        c->pending = 'c';
        c->p_count = a;
        c->p_dst = FPT_KEY(obj, dst);
        c->p_level = c->cfn != UINT32_MAX ? c->r->fn[c->cfn].level : 1;
        c->cob = c->cfn = UINT32_MAX;
    } else if (key[1] == 'c') { /* jcnd=<taken>/<executed> */
        c->pending = 'n';
        c->p_taken = a;
        (void)b;
    } else {
        c->pending = 'j';
        c->p_count = a;
        c->p_dst = FPT_KEY(c->cur_obj, dst);
        c->p_level = 1;
    }
    return 0;
}

static int cg_line(struct cg *c, char *line)
{
    if (!*line || *line == '#')
        return 0;
    char ch = *line;
    if ((ch >= '0' && ch <= '9') || ch == '+' || ch == '-' || ch == '*')
        return cg_cost(c, line);
    char *eq = strchr(line, '='), *colon = strchr(line, ':');
    if (colon && (!eq || colon < eq)) {
        *colon = 0;
        return cg_header(c, line, colon + 1);
    }
    if (!eq)
        return 0;
    *eq = 0;
    const char *key = line;
    char *v = eq + 1;
    if (c->pending) /* a call or jump without its source line */
        return cg_fail(c, "calls=/jump= not followed by a position");
    uint32_t x;
    if (strcmp(key, "ob") == 0 || strcmp(key, "cob") == 0) {
        if ((x = cg_name(c, NS_OBJ, v)) == UINT32_MAX)
            return cg_fail(c, "bad object name");
        if (key[0] == 'o')
            c->cur_obj = x;
        else
            c->cob = x;
    } else if (strcmp(key, "fn") == 0 || strcmp(key, "cfn") == 0 || strcmp(key, "jfn") == 0) {
        if ((x = cg_name(c, NS_FN, v)) == UINT32_MAX)
            return cg_fail(c, "bad function name");
        if (key[0] == 'f')
            c->cur_fn = x;
        else if (key[0] == 'c')
            c->cfn = x;
    } else if (strcmp(key, "calls") == 0 || strcmp(key, "jump") == 0 ||
               strcmp(key, "jcnd") == 0) {
        return cg_branch(c, key, v);
    }
    /* fl=, fi=, fe=, cfi=, cfl=, jfi=, ln=, ...: source files and lines are not needed */
    return 0;
}

int fpt_read_callgrind(struct fpt_run *r, const char *path, char *why, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(why, n, "cannot open callgrind output %s: %s", path, strerror(errno));
        return -1;
    }
    struct cg c = {.r = r, .npos = 1, .instr_col = -1, .ir_col = -1, .cur_obj = FPT_OBJ_UNKNOWN,
                   .cur_fn = 0, .cob = UINT32_MAX, .cfn = UINT32_MAX, .path = path, .why = why,
                   .n = n};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0, seen_events = 0;
    while ((len = getline(&line, &cap, f)) > 0) {
        c.lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (strncmp(line, "events:", 7) == 0)
            seen_events = 1;
        if ((rc = cg_line(&c, line)))
            break;
    }
    int rerr = ferror(f);
    free(line);
    fclose(f);
    free(c.ids[0].v);
    free(c.ids[1].v);
    if (rc)
        return rc;
    if (rerr) {
        snprintf(why, n, "reading %s failed", path);
        return -1;
    }
    if (!seen_events) {
        snprintf(why, n, "%s is not a callgrind output (no \"events:\" line)", path);
        return -1;
    }
    if (c.pending) {
        c.lineno++;
        return cg_fail(&c, "calls=/jump= at the end of the file");
    }
    return 0;
}
