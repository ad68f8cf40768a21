/* The shape of a fuzzing target, from its ELF file and its function table (docs/cov.md,
 * "Harness shapes"): who calls LLVMFuzzerTestOneInput (ptcall's fuzz driver, libFuzzer's
 * main, the harness's own main), or nobody (a plain program); whether it uses ptcall-cc's
 * AFL++ macros. `cov run` measures each shape its own way and refuses one it cannot tell:
 * a guess here merged every input of a batch (issue 29). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cov.h"

#define TOI "LLVMFuzzerTestOneInput"

static void note_symbol(struct cov_shape *s, const char *name, int defined)
{
    if (defined) {
        if (!strcmp(name, TOI))
            s->toi_symbol = 1;
        else if (!strcmp(name, "main"))
            s->main_symbol = 1;
        else if (!strcmp(name, "LLVMFuzzerRunDriver") || !strncmp(name, "_ZN6fuzzer", 10))
            s->libfuzzer = 1;
    } else {
        /* only libFuzzer's runtime refers to these (weakly): in .dynsym, so a stripped
         * -fsanitize=fuzzer build is still told */
        if (!strcmp(name, "__start___libfuzzer_extra_counters") ||
            !strcmp(name, "LLVMFuzzerCustomCrossOver"))
            s->libfuzzer = 1;
        /* ptcall-cc's __AFL_* macros call these (runtime/soft_afl.c) */
        else if (!strcmp(name, "__ptcall_afl_loop"))
            s->afl_loop = 1;
        else if (!strcmp(name, "__ptcall_afl_init"))
            s->afl_init = 1;
        else if (!strcmp(name, "__ptcall_afl_testcase_len"))
            s->afl_testcase = 1;
        /* ptcall-cc's entry hook in LLVMFuzzerTestOneInput (a weak reference: .dynsym) */
        else if (!strcmp(name, "__ptcall_fuzz_input"))
            s->fuzz_hook = 1;
    }
}

static int read_elf(const char *path, struct cov_shape *s)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (elf_version(EV_CURRENT) == EV_NONE) {
        close(fd);
        return -ENOEXEC;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t shstrndx;
    if (!e || elf_getshdrstrndx(e, &shstrndx)) {
        if (e)
            elf_end(e);
        close(fd);
        return -ENOEXEC;
    }
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *sname = elf_strptr(e, shstrndx, sh.sh_name);
        /* runtime/fuzz_driver.c's marker: a section, which strip keeps */
        if (sname && !strcmp(sname, "ptcall_fuzz_driver"))
            s->driver = 1;
        if (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM)
            continue;
        s->symtab |= sh.sh_type == SHT_SYMTAB;
        Elf_Data *data = elf_getdata(scn, NULL);
        size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t i = 1; data && i < n; i++) {
            GElf_Sym sym;
            if (!gelf_getsym(data, (int)i, &sym))
                continue;
            const char *name = elf_strptr(e, sh.sh_link, sym.st_name);
            if (name && *name)
                note_symbol(s, name, sym.st_shndx != SHN_UNDEF);
        }
    }
    elf_end(e);
    close(fd);
    return 0;
}

int cov_shape_detect(const char *path, const struct cov_data *d, struct cov_shape *s)
{
    memset(s, 0, sizeof(*s));
    s->toi = UINT32_MAX;
    int rc = read_elf(path, s);
    if (rc)
        return rc;
    /* the target's own functions (module 0): the map survives strip, unlike .symtab */
    for (uint32_t i = 0; i < d->nfuncs; i++) {
        const struct cov_func *f = &d->funcs[i];
        if (f->module != 0 || !f->linkage)
            continue;
        if (!strcmp(f->linkage, TOI) && s->toi == UINT32_MAX)
            s->toi = i;
        else if (!strcmp(f->linkage, "main"))
            s->main_instrumented = 1;
    }
    int has_toi = s->toi != UINT32_MAX || s->toi_symbol;
    if (!has_toi)
        s->kind = COV_SHAPE_PLAIN;
    else if (s->driver)
        s->kind = COV_SHAPE_DRIVER;
    else if (s->libfuzzer)
        s->kind = COV_SHAPE_LIBFUZZER;
    else if (s->main_instrumented || s->main_symbol)
        s->kind = COV_SHAPE_OWN_MAIN;
    else
        s->kind = COV_SHAPE_UNKNOWN;
    return 0;
}

const char *cov_shape_name(const struct cov_shape *s)
{
    switch (s->kind) {
    case COV_SHAPE_PLAIN:
        return s->afl_loop ? "a program with __AFL_LOOP (one input per fork-server child)"
                           : "a program (one input per process)";
    case COV_SHAPE_DRIVER:
        return "ptcall's fuzz driver (batches, a mark per input)";
    case COV_SHAPE_LIBFUZZER:
        return s->fuzz_hook ? "libFuzzer's main (-fsanitize=fuzzer: one input per fork-server "
                              "child, forked at the harness's entry)"
                            : "libFuzzer's main (-fsanitize=fuzzer: one input file per process)";
    case COV_SHAPE_OWN_MAIN:
        return s->afl_loop ? "a harness with its own main and __AFL_LOOP (one input per "
                             "fork-server child)"
                           : "a harness with its own main (one input per process)";
    default:
        return "unknown";
    }
}

int cov_shape_refuse(const struct cov_shape *s, const char *target, int has_at, char *why,
                     size_t n)
{
    if (s->kind == COV_SHAPE_UNKNOWN) {
        snprintf(why, n,
                 "cannot tell who calls LLVMFuzzerTestOneInput in %s: its main is not "
                 "instrumented and it has no symbol table to tell libFuzzer's main, ptcall's "
                 "fuzz driver or a main of its own (stripped?): give the unstripped build, or "
                 "link it with ptcall-cc -fptcall-fuzz-driver",
                 target);
        return -EINVAL;
    }
    if (s->kind != COV_SHAPE_PLAIN && s->kind != COV_SHAPE_DRIVER && s->toi == UINT32_MAX) {
        /* its calls per input are the boundary this side checks */
        snprintf(why, n,
                 "%s defines LLVMFuzzerTestOneInput but ptcall did not instrument it (built "
                 "without ptcall-cc, or left out by -fptcall-exclude/-fptcall-min-size), so "
                 "how many times each input ran it cannot be checked: build the harness's "
                 "file with ptcall-cc",
                 target);
        return -EINVAL;
    }
    if (s->afl_testcase && has_at) {
        snprintf(why, n,
                 "%s reads its input with __AFL_FUZZ_TESTCASE_BUF/LEN, which ptcall-cc makes "
                 "read standard input: remove @@ from the command (the input comes on stdin)",
                 target);
        return -EINVAL;
    }
    return 0;
}

/* Calls of LLVMFuzzerTestOneInput in one input's run. */
static uint64_t toi_calls(const struct cov_shape *s, const struct cov_result *r)
{
    for (uint32_t i = 0; i < r->nhits; i++)
        if (r->hits[i].func == s->toi)
            return r->hits[i].count;
    return 0;
}

int cov_shape_check(const struct cov_shape *s, const struct cov_entries *e,
                    const struct cov_result *results, const int *ran, FILE *out,
                    const char *cmd)
{
    size_t zero = 0, many = 0, nonempty = 0, unread = 0;
    int said = 0;
    for (size_t i = 0; i < e->n; i++) {
        const struct cov_result *r = &results[i];
        if (!ran[i] || r->outcome == COV_ERROR)
            continue;
        if (e->v[i].size > 0 && r->outcome == COV_EXITED) {
            nonempty++;
            unread += r->stdin_unread;
        }
        if (s->toi == UINT32_MAX || s->kind == COV_SHAPE_PLAIN)
            continue;
        uint64_t c = toi_calls(s, r);
        if (c == 1)
            continue;
        zero += c == 0;
        many += c > 1;
        if (said++ < 10) {
            char sh[768];
            fprintf(out,
                    "%s: %s ran LLVMFuzzerTestOneInput %llu times, not once: its functions "
                    "are %s\n",
                    cmd, cov_shown(e->v[i].name, sh, sizeof(sh)), (unsigned long long)c,
                    c ? "those of all these runs together (a harness that loops, or extra "
                        "inputs its main ran)"
                      : "those of a run that never reached the harness");
        }
    }
    if (zero + many)
        fprintf(out,
                "%s: %zu input%s ran LLVMFuzzerTestOneInput other than once (%zu never, %zu "
                "more than once%s): their sets are not one run of the harness each\n",
                cmd, zero + many, zero + many == 1 ? "" : "s", zero, many,
                said > 10 ? "; the first 10 above" : "");
    /* all, or nearly all (a few may legitimately ignore their input): a forgotten @@ */
    if (nonempty && unread * 10 >= nonempty * 9)
        fprintf(out,
                "%s: the target never read its standard input (%zu of %zu non-empty inputs "
                "left it unread): if it reads a file, put @@ where the path goes\n",
                cmd, unread, nonempty);
    return (int)(zero + many);
}

/* libFuzzer handles these signals itself by default: it writes crash-<sha1> into the
 * current directory and exits with a status instead of the signal. Off, a crash is the
 * signal, as in every other shape. Its own memory and time limits (oom-, timeout- files)
 * and leak checks are off too: `cov run` has its --timeout. */
static const char *const lf_flags[] = {
    "-handle_segv=0", "-handle_bus=0", "-handle_abrt=0", "-handle_ill=0", "-handle_fpe=0",
    "-rss_limit_mb=0", "-malloc_limit_mb=0", "-timeout=0", "-detect_leaks=0",
};
#define NLF (sizeof(lf_flags) / sizeof(lf_flags[0]))

int cov_shape_libfuzzer_argv(char **argv, int has_at, char ***out)
{
    size_t argc = 0;
    while (argv[argc])
        argc++;
    char **v = calloc(argc + NLF + 2, sizeof(*v));
    if (!v)
        return -ENOMEM;
    size_t k = 0;
    v[k++] = argv[0];
    for (size_t i = 0; i < NLF; i++)
        v[k++] = (char *)lf_flags[i];
    for (size_t i = 1; i < argc; i++)
        v[k++] = argv[i];
    if (!has_at)
        v[k++] = "@@";
    v[k] = NULL;
    *out = v;
    return 0;
}
