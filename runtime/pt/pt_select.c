/* record_check_select() (ptc_record_options.h): `ptcall record --only GLOB` is checked before
 * the command starts, against the functions the program's instrumented files hold: the
 * executable, the libraries it names in DT_NEEDED (resolved the way the dynamic linker
 * would, roughly: RUNPATH/RPATH with $ORIGIN, LD_LIBRARY_PATH, the system directories) and
 * every --module PATH. A glob that matches none of them would trace nothing that the user
 * can see before running; libraries the program dlopens cannot be seen here, hence
 * --module. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptc_map_read.h"
#include "ptc_pt_rec.h"
#include "ptc_record_options.h"
#include "ptc_select.h"

#define MAX_OBJECTS 64

struct objects {
    char path[MAX_OBJECTS][PATH_MAX];
    int n;
};

static void add_object(struct objects *o, const char *path)
{
    char rp[PATH_MAX];
    if (!realpath(path, rp))
        return;
    for (int i = 0; i < o->n; i++)
        if (!strcmp(o->path[i], rp))
            return;
    if (o->n < MAX_OBJECTS)
        snprintf(o->path[o->n++], PATH_MAX, "%s", rp);
}

/* The dynamic section's DT_NEEDED names and search path of an ELF file, as strings copied
 * into needed (NUL-separated, count in *nneeded) and runpath. 0, or -1 (not a dynamic ELF
 * file: nothing to add). */
static int read_dynamic(const char *path, char *needed, size_t nsize, int *nneeded,
                        char *runpath, size_t rsize)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t used = 0;
    *nneeded = 0;
    runpath[0] = 0;
    for (Elf_Scn *scn = NULL; e && (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !(d = elf_getdata(scn, NULL)))
            continue;
        for (size_t i = 0; i < sh.sh_size / (sh.sh_entsize ? sh.sh_entsize : 16); i++) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(d, (int)i, &dyn))
                break;
            const char *s = NULL;
            if (dyn.d_tag == DT_NEEDED || dyn.d_tag == DT_RUNPATH || dyn.d_tag == DT_RPATH)
                s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
            if (!s)
                continue;
            if (dyn.d_tag == DT_NEEDED && used + strlen(s) + 1 <= nsize) {
                memcpy(needed + used, s, strlen(s) + 1);
                used += strlen(s) + 1;
                (*nneeded)++;
            } else if (dyn.d_tag != DT_NEEDED && (dyn.d_tag == DT_RUNPATH || !runpath[0])) {
                snprintf(runpath, rsize, "%s", s); /* RUNPATH wins over RPATH */
            }
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return 0;
}

/* Looks for name in the ':'-separated directories of dirs ($ORIGIN = origin); adds the first
 * hit. 1 if found. */
static int find_in(struct objects *o, const char *dirs, const char *origin, const char *name)
{
    while (dirs && *dirs) {
        const char *colon = strchr(dirs, ':');
        size_t len = colon ? (size_t)(colon - dirs) : strlen(dirs);
        char dir[PATH_MAX], cand[PATH_MAX];
        if (len < sizeof(dir)) {
            memcpy(dir, dirs, len);
            dir[len] = 0;
            const char *tail = !strncmp(dir, "$ORIGIN", 7)     ? dir + 7
                               : !strncmp(dir, "${ORIGIN}", 9) ? dir + 9
                                                               : NULL;
            int w = tail ? snprintf(cand, sizeof(cand), "%s%s/%s", origin, tail, name)
                         : snprintf(cand, sizeof(cand), "%s/%s", dir, name);
            if (w > 0 && (size_t)w < sizeof(cand) && access(cand, R_OK) == 0) {
                add_object(o, cand);
                return 1;
            }
        }
        dirs = colon ? colon + 1 : NULL;
    }
    return 0;
}

/* Adds the libraries exe names in DT_NEEDED that can be found. */
static void add_needed(struct objects *o, const char *exe)
{
    char needed[8192], runpath[4096], origin[PATH_MAX];
    int n;
    if (read_dynamic(exe, needed, sizeof(needed), &n, runpath, sizeof(runpath)) < 0)
        return;
    snprintf(origin, sizeof(origin), "%s", exe);
    char *slash = strrchr(origin, '/');
    if (slash)
        *slash = 0;
    static const char sys[] = "/lib/x86_64-linux-gnu:/usr/lib/x86_64-linux-gnu:/lib64:"
                              "/usr/lib64:/lib:/usr/lib:/usr/local/lib";
    const char *p = needed;
    for (int i = 0; i < n; i++, p += strlen(p) + 1) {
        if (strchr(p, '/')) {
            add_object(o, p);
            continue;
        }
        if (!find_in(o, runpath, origin, p) && !find_in(o, getenv("LD_LIBRARY_PATH"), origin, p))
            find_in(o, sys, origin, p);
    }
}

struct count_ctx {
    struct ptc_select *sel;
    uint32_t funcs;
};

static int count_unit(void *ctx, const struct ptc_map_unit *u)
{
    struct count_ctx *c = ctx;
    for (uint32_t i = 0; i < u->hdr.num_funcs; i++) {
        struct ptcall_map_func f;
        ptc_map_get_func(u, i, &f);
        ptc_select_func(c->sel, u->strings + f.name, u->strings + f.linkage_name);
    }
    c->funcs += u->hdr.num_funcs;
    return 0;
}

/* Matches the globs of sel against the functions of path; adds their number to *funcs.
 * 1 if path has a readable ptcall_map section, 0 if not. */
static int check_object(const char *path, struct ptc_select *sel, uint32_t *funcs)
{
    struct ptc_pt_elf_sections sec;
    char why[512];
    if (ptc_pt_elf_sections(path, &sec, why, sizeof(why)) < 0 || !sec.has_map || !sec.has_stubs)
        return 0;
    void *map = ptc_pt_read_map(path, &sec, why, sizeof(why));
    if (!map)
        return 0;
    struct count_ctx c = {.sel = sel};
    int e = ptc_map_walk(map, sec.map_size, sec.map_addr, 0, 0, count_unit, &c, NULL);
    free(map);
    if (e < 0)
        return 0; /* the runtime will say the map is corrupt */
    *funcs += c.funcs;
    return 1;
}

static const char *base(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int record_check_select(const struct record_options *opts, const char *exe)
{
    if (!opts->num_only)
        return 0;
    static struct objects o; /* PATH_MAX per object: too big for the stack */
    o.n = 0;
    add_object(&o, exe);
    add_needed(&o, exe);
    for (int i = 0; i < opts->num_modules; i++)
        add_object(&o, opts->modules[i]);
    struct ptc_select sel = {.nonly = 0};
    for (int i = 0; i < opts->num_only && i < PTC_SELECT_MAX; i++)
        sel.only[sel.nonly++] = opts->only[i];
    uint32_t funcs = 0;
    int with_map = 0;
    char names[1024] = "";
    size_t len = 0;
    for (int i = 0; i < o.n; i++)
        if (check_object(o.path[i], &sel, &funcs)) {
            int w = snprintf(names + len, sizeof(names) - len, "%s%s", with_map ? ", " : "",
                             with_map ? base(o.path[i]) : o.path[i]);
            if (w > 0 && (size_t)w < sizeof(names) - len)
                len += (size_t)w;
            with_map++;
        }
    if (!with_map)
        return 1;
    int bad = 0;
    for (int k = 0; k < sel.nonly; k++)
        if (!(sel.only_hit & ((uint64_t)1 << k))) {
            fprintf(stderr, "ptcall record: --only '%s' matches none of the %u functions of %s%s: "
                            "nothing would be traced. See the names with 'ptcall report --top 0' "
                            "of a recording without --only (or 'nm'); a function of a library "
                            "the program dlopens is checked only when that library is named "
                            "with --module PATH\n",
                    sel.only[k], funcs, names,
                    with_map > 1 ? " (the instrumented objects it links)" : "");
            bad = 1;
        }
    return bad ? -1 : 0;
}
