/* Plain corpus directories (`cov run --corpus DIR`): the files directly inside, each checked
 * before the run starts, so a bad entry is reported once, by name, and never reaches the
 * target. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cov.h"
#include "cov_int.h"

void cov_entries_free(struct cov_entries *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].path);
        free(e->v[i].name);
    }
    free(e->v);
    memset(e, 0, sizeof(*e));
}

int cov_entries_push(struct cov_entries *e, const char *path, const char *name, unsigned kind,
                     int64_t time_ms, const struct stat *st)
{
    if (e->n == e->cap) {
        size_t nc = e->cap ? e->cap * 2 : 256;
        struct cov_entry *v = realloc(e->v, nc * sizeof(*v));
        if (!v)
            return -ENOMEM;
        e->v = v;
        e->cap = nc;
    }
    struct cov_entry *x = &e->v[e->n];
    x->path = strdup(path);
    x->name = strdup(name);
    if (!x->path || !x->name) {
        free(x->path);
        free(x->name);
        return -ENOMEM;
    }
    x->kind = (uint8_t)kind;
    x->file_time = 0;
    x->time_ms = time_ms;
    x->size = (uint64_t)st->st_size;
    x->mtime_ms = (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
    e->n++;
    return 0;
}

/* Writes s for a message line: bytes that are not printable ASCII or part of valid UTF-8
 * (a newline, a terminal escape, a Latin-1 byte of an old file name) as \xNN, and a
 * backslash as \\, so that a hostile name is still one line that says which file. */
const char *cov_shown(const char *s, char *out, size_t n)
{
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && k + 5 < n) {
        size_t len = 0;
        if (*p >= 0x20 && *p < 0x7f)
            len = 1;
        else if (*p >= 0xc2 && *p <= 0xdf)
            len = 2;
        else if (*p >= 0xe0 && *p <= 0xef)
            len = 3;
        else if (*p >= 0xf0 && *p <= 0xf4)
            len = 4;
        for (size_t i = 1; i < len; i++)
            if ((p[i] & 0xc0) != 0x80)
                len = 0;
        /* overlong forms, surrogates, past U+10FFFF, and the C1 controls (U+0080-U+009F,
         * which some terminals obey) are escaped too */
        if ((len == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
            (len == 3 && p[0] == 0xe0 && p[1] < 0xa0) ||
            (len == 3 && p[0] == 0xed && p[1] >= 0xa0) ||
            (len == 4 && p[0] == 0xf0 && p[1] < 0x90) ||
            (len == 4 && p[0] == 0xf4 && p[1] >= 0x90))
            len = 0;
        if (len == 1 && *p == '\\') {
            out[k++] = '\\';
            out[k++] = '\\';
        } else if (len && k + len < n) {
            memcpy(out + k, p, len);
            k += len;
        } else {
            len = 1;
            k += (size_t)snprintf(out + k, n - k, "\\x%02x", *p);
        }
        p += len;
    }
    if (*p && n > 4) {
        k = k < n - 4 ? k : n - 4;
        memcpy(out + k, "...", 3);
        k += 3;
    }
    out[n ? (k < n ? k : n - 1) : 0] = 0;
    return out;
}

/* Whether path is an input: a regular, readable file (empty ones too). Says why not on warn. stat
 * first (no side effect: a device is never opened), then open without blocking and check
 * again with fstat (a FIFO swapped in between is refused, not waited on). Symbolic links are
 * followed: a link to a regular file is an input, a loop of them is reported (ELOOP). */
int cov_entry_check(const char *path, const char *shown, struct stat *st, FILE *warn)
{
    char sh[768];
    cov_shown(shown, sh, sizeof(sh));
    if (stat(path, st)) {
        fprintf(warn, "ptcall cov: skipping %s: %s\n", sh, strerror(errno));
        return 0;
    }
    if (S_ISDIR(st->st_mode)) {
        fprintf(warn, "ptcall cov: skipping %s: a directory (corpora are read one level deep)\n",
                sh);
        return 0;
    }
    if (!S_ISREG(st->st_mode)) {
        fprintf(warn, "ptcall cov: skipping %s: not a regular file (%s)\n", sh,
                S_ISFIFO(st->st_mode)    ? "a FIFO"
                : S_ISSOCK(st->st_mode) ? "a socket"
                : S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "a device"
                                                              : "another kind of file");
        return 0;
    }
    /* an empty file is an input: libFuzzer runs the empty input and llvm-cov measures it
     * (15 of 200 inputs of a plain corpus were skipped) */
    /* open, not access(): the effective rights of this process, as the run will need them */
    int fd = cov_open_input(path, st);
    if (fd < 0) {
        fprintf(warn, "ptcall cov: skipping %s: %s\n", sh,
                fd == -EINVAL ? "not a regular file any more" : strerror(-fd));
        return 0;
    }
    close(fd);
    return 1;
}

int cov_open_input(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -errno;
    if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
        close(fd);
        return -EINVAL;
    }
    return fd;
}

/* Sorted names of dir's entries (not . and ..): the order the user sees in `ls`. */
int cov_list_dir(const char *dir, char ***names, size_t *count)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return -errno;
    char **v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(dp))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            char **nv = realloc(v, nc * sizeof(*nv));
            if (!nv) {
                rc = -ENOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        if (!(v[n] = strdup(de->d_name))) {
            rc = -ENOMEM;
            break;
        }
        n++;
    }
    closedir(dp);
    if (rc) {
        cov_free_names(v, n);
        return rc;
    }
    if (n > 1)   /* an empty directory (as a watched corpus starts) has no array at all */
        qsort(v, n, sizeof(*v), cov_cmp_str);
    *names = v;
    *count = n;
    return 0;
}

int cov_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void cov_free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

int cov_corpus_add_dir(struct cov_entries *e, const char *dir, FILE *warn, char *why, size_t n)
{
    char **names;
    size_t count;
    int rc = cov_list_dir(dir, &names, &count);
    if (rc) {
        snprintf(why, n, "cannot read the corpus directory %s: %s", dir, strerror(-rc));
        return rc;
    }
    /* the name shown keeps the directory as given, so two corpora's inputs stay apart */
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    for (size_t i = 0; i < count && !rc; i++) {
        if (names[i][0] == '.')
            continue;
        char *path = NULL;
        if (asprintf(&path, "%.*s/%s", (int)dl, dir, names[i]) < 0) {
            rc = -ENOMEM;
            break;
        }
        struct stat st;
        if (cov_entry_check(path, path, &st, warn)) {
            rc = cov_entries_push(e, path, path, COV_KIND_QUEUE, -1, &st);
            if (!rc)
                e->v[e->n - 1].file_time = 1;
        } else
            e->skipped++;
        free(path);
    }
    cov_free_names(names, count);
    if (rc)
        snprintf(why, n, "out of memory");
    return rc;
}

void cov_corpus_times(struct cov_entries *e)
{
    int64_t t0 = INT64_MAX;
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].file_time && e->v[i].mtime_ms < t0)
            t0 = e->v[i].mtime_ms;
    /* AFL++ entries whose time could not be read stay unknown (-1): placed among the
     * corpus's file times they would claim a moment nothing says they had */
    for (size_t i = 0; i < e->n; i++)
        if (e->v[i].file_time)
            e->v[i].time_ms = e->v[i].mtime_ms - t0;
}
