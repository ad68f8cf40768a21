/* Choosing functions by name; see ptc_select.h. */
#include "ptc_select.h"

#include <fnmatch.h>
#include <string.h>

#include "ptcall/trace_format.h"

/* Strips " const", " &", ... from the end of buf (len bytes); returns the new length. */
static size_t strip_qualifiers(char *buf, size_t len)
{
    static const char *const quals[] = {" const", " volatile", " &&", " &", " noexcept"};
    for (int again = 1; again;) {
        again = 0;
        for (size_t q = 0; q < sizeof(quals) / sizeof(quals[0]); q++) {
            size_t ql = strlen(quals[q]);
            if (len > ql && !strcmp(buf + len - ql, quals[q])) {
                len -= ql;
                buf[len] = 0;
                again = 1;
            }
        }
    }
    return len;
}

/* Where the clone suffixes at the end of name[0..len) start (len when it has none): LLVM's
 * demangler writes a clone's suffix as " (.resume)", " (.destroy)" (C++20 coroutines),
 * " (.cold)", " (.llvm.123)", GNU's as " [clone .cold]" (one per suffix). They make a clone
 * a function of its own, so they stay in the short name. */
static size_t clone_suffixes(const char *name, size_t len)
{
    for (;;) {
        char open = len && name[len - 1] == ')' ? '(' : len && name[len - 1] == ']' ? '[' : 0;
        if (!open)
            return len;
        size_t i = len - 1;
        while (i > 0 && name[i - 1] != open && name[i - 1] != '(' && name[i - 1] != ')' &&
               name[i - 1] != '[' && name[i - 1] != ']')
            i--;
        /* name[i - 1] opens the group, name[i..len - 1) is its inside */
        if (i < 2 || name[i - 1] != open || name[i - 2] != ' ')
            return len;
        if (open == '(' ? name[i] != '.' : strncmp(name + i, "clone .", 7))
            return len;
        len = i - 2;
    }
}

const char *ptc_func_short_name(const char *name, char *buf, size_t n)
{
    size_t all = strlen(name);
    if (all >= n)
        return name;
    size_t len = clone_suffixes(name, all);
    memcpy(buf, name, len);
    buf[len] = 0;
    len = strip_qualifiers(buf, len);
    if (!len || buf[len - 1] != ')')
        return name;
    /* the parameter list is the last balanced (...) group */
    int depth = 0;
    for (size_t i = len; i-- > 0;) {
        if (buf[i] == ')')
            depth++;
        else if (buf[i] == '(' && --depth == 0) {
            if (i == 0)
                return name;
            size_t cut = clone_suffixes(name, all);
            memcpy(buf + i, name + cut, all - cut + 1); /* the suffixes, and the NUL */
            return buf;
        }
    }
    return name;
}

/* The length of the glob's literal head: up to its first '*', '?', '[' or backslash. */
static size_t literal_head(const char *glob)
{
    size_t n = 0;
    while (glob[n] && glob[n] != '*' && glob[n] != '?' && glob[n] != '[' && glob[n] != '\\')
        n++;
    return n;
}

/* ptc_glob_func with the length of the glob's literal head known. fnmatch without flags
 * matches that head character for character: a name without it cannot match, nor can the
 * short name, a prefix of it. Testing it first spares most fnmatch calls (which may convert
 * both strings to wide characters): the runtime asks for every stub of every object. */
static int glob_func(const char *glob, size_t lit, const char *name, const char *linkage)
{
    if (!strncmp(glob, name, lit)) {
        char buf[1024];
        if (!fnmatch(glob, name, 0))
            return 1;
        const char *sh = ptc_func_short_name(name, buf, sizeof(buf));
        if (sh != name && !fnmatch(glob, sh, 0))
            return 1;
    }
    /* a C function's linkage name is its name: asked above */
    return linkage && strcmp(linkage, name) && !strncmp(glob, linkage, lit) &&
           !fnmatch(glob, linkage, 0);
}

int ptc_glob_func(const char *glob, const char *name, const char *linkage)
{
    return glob_func(glob, literal_head(glob), name, linkage);
}

int ptc_select_add_lines(const char **list, int *n, char *text)
{
    char *p = text;
    while (p && *p) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = 0;
        if (*p) {
            if (*n >= PTC_SELECT_MAX)
                return -1;
            list[(*n)++] = p;
        }
        p = nl ? nl + 1 : NULL;
    }
    return 0;
}

/* Bit mask of the globs of list[0..n) (literal heads lit[]) that match the function. */
static uint64_t matches(const char *const *list, const uint16_t *lit, int n, const char *name,
                        const char *linkage)
{
    uint64_t m = 0;
    for (int k = 0; k < n; k++)
        if (glob_func(list[k], lit[k], name, linkage))
            m |= (uint64_t)1 << k;
    return m;
}

int ptc_select_func(struct ptc_select *s, const char *name, const char *linkage)
{
    if (!s->lits_known) { /* once: the selection is asked about every stub */
        for (int k = 0; k < s->nonly; k++)
            s->only_lit[k] = (uint16_t)literal_head(s->only[k]);
        for (int k = 0; k < s->nskip; k++)
            s->skip_lit[k] = (uint16_t)literal_head(s->skip[k]);
        s->lits_known = 1;
    }
    /* every glob is tried (not just until one matches), so that the hit masks are exact */
    uint64_t in = matches(s->only, s->only_lit, s->nonly, name, linkage);
    uint64_t out = matches(s->skip, s->skip_lit, s->nskip, name, linkage);
    s->only_hit |= in;
    s->skip_hit |= out;
    return (s->nonly == 0 || in) && !out;
}

/* Appends str to out[*len..n), keeping room for the NUL; 0, or -1 when it does not fit. */
static int append(char *out, size_t n, size_t *len, const char *str)
{
    size_t l = strlen(str);
    if (*len + l + 1 > n)
        return -1;
    memcpy(out + *len, str, l + 1);
    *len += l;
    return 0;
}

static int describe_list(char *out, size_t n, size_t *len, const char *opt,
                         const char *const *list, int k)
{
    for (int i = 0; i < k; i++)
        if (append(out, n, len, *len ? " " : "") || append(out, n, len, opt) ||
            append(out, n, len, " '") || append(out, n, len, list[i]) ||
            append(out, n, len, "'"))
            return -1;
    return 0;
}

size_t ptc_select_describe(const struct ptc_select *s, char *out, size_t n)
{
    size_t len = 0;
    if (!n)
        return 0;
    out[0] = 0;
    if (describe_list(out, n, &len, "--only", s->only, s->nonly) == 0 &&
        describe_list(out, n, &len, "--skip", s->skip, s->nskip) == 0)
        return len;
    /* cut short: say so rather than show a selection that looks complete */
    if (n < 4)
        return len;
    len = len + 4 > n ? n - 4 : len;
    memcpy(out + len, "...", 4);
    return len + 3;
}

/* The names of function i of unit u (validated by ptc_map_walk: offsets are in bounds). */
static void func_names(const struct ptc_map_unit *u, uint32_t i, const char **name,
                       const char **linkage)
{
    struct ptcall_map_func f;
    ptc_map_get_func(u, i, &f);
    *name = u->strings + f.name;
    *linkage = u->strings + f.linkage_name;
}

int ptc_select_stub(struct ptc_select *s, const struct ptc_map_unit *u,
                    const struct ptcall_map_stub *st)
{
    const char *name, *linkage;
    func_names(u, st->func_index, &name, &linkage);
    return ptc_select_func(s, name, linkage);
}

int ptc_select_unit(struct ptc_select *s, const struct ptc_map_unit *u, uint8_t *bits,
                    size_t nbytes)
{
    if (((size_t)u->hdr.num_funcs + 7) / 8 > nbytes)
        return -1;
    memset(bits, 0, ((size_t)u->hdr.num_funcs + 7) / 8);
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++) {
        const char *name, *linkage;
        func_names(u, i, &name, &linkage);
        if (ptc_select_func(s, name, linkage))
            bits[i / 8] |= (uint8_t)(1u << (i % 8));
    }
    return 0;
}

size_t ptc_select_armed_size(const struct ptc_map_summary *sum, const char *spec)
{
    return sizeof(struct ptc_module_armed) + ((size_t)sum->num_funcs + 7) / 8 +
           strlen(spec ? spec : "") + 1;
}

struct armed_ctx {
    struct ptc_select *s;
    uint8_t *bits;
    uint32_t next, limit, armed;
    int whole_units;
};

/* Sets the bits of unit u's armed functions; they follow the previous units' (the MODULE
 * chunk's numbering, ptc_map_build_module). */
static int armed_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct armed_ctx *a = ctx;
    if (a->next + (uint64_t)u->hdr.num_funcs > a->limit)
        return 1; /* the summary does not match these bytes */
    int whole = a->whole_units && !ptc_select_per_function(u);
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++, a->next++) {
        const char *name, *linkage;
        func_names(u, i, &name, &linkage);
        /* ask even for whole units: their globs' hits count */
        if (ptc_select_func(a->s, name, linkage) || whole) {
            a->bits[a->next / 8] |= (uint8_t)(1u << (a->next % 8));
            a->armed++;
        }
    }
    return 0;
}

long ptc_select_build_armed(struct ptc_select *s, const void *data, size_t size, uint64_t addr,
                            const struct ptc_map_summary *sum, uint32_t module_id,
                            unsigned flags, const char *spec, void *out, size_t out_size)
{
    if (!spec)
        spec = "";
    size_t need = ptc_select_armed_size(sum, spec);
    if (out_size < need)
        return PTC_MAP_E_BUFFER;
    uint8_t *o = out;
    size_t nbits = ((size_t)sum->num_funcs + 7) / 8;
    struct armed_ctx a = {.s = s, .bits = o + sizeof(struct ptc_module_armed),
                          .limit = sum->num_funcs,
                          .whole_units = (flags & PTC_SELECT_WHOLE_UNITS) != 0};
    memset(a.bits, 0, nbits);
    int n = ptc_map_walk(data, size, addr, 0, 0, armed_unit, &a, NULL);
    if (n < 0)
        return n;
    if (a.next != sum->num_funcs)
        return PTC_MAP_E_CALLBACK;
    struct ptc_module_armed h = {.module_id = module_id, .num_funcs = sum->num_funcs,
                                 .num_armed = a.armed,
                                 .spec_size = (uint32_t)(strlen(spec) + 1)};
    memcpy(o, &h, sizeof(h));
    memcpy(o + sizeof(h) + nbits, spec, h.spec_size);
    return (long)need;
}
