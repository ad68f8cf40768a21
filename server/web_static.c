/* Reading the page's static files (web_static.h). */
#include "web_static.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const names[WS_COUNT] = {"app.js",        "app.css",     "uPlot.iife.min.js",
                                            "uPlot.min.css", "campaign.js", "campaign.css",
                                            "callgraph.js",  "graphviz.js",
                                            "tables.js",
                                            "d3.min.js", "d3-flamegraph.umd.min.js",
                                            "d3-flamegraph.css", "flame.js", "flame.css",
                                            "timeline.js"};
static const char *const types[WS_COUNT] = {
    "text/javascript; charset=utf-8", "text/css; charset=utf-8",
    "text/javascript; charset=utf-8", "text/css; charset=utf-8",
    "text/javascript; charset=utf-8", "text/css; charset=utf-8",
    "text/javascript; charset=utf-8", "text/javascript; charset=utf-8",
    "text/javascript; charset=utf-8",
    "text/javascript; charset=utf-8", "text/javascript; charset=utf-8",
    "text/css; charset=utf-8",        "text/javascript; charset=utf-8",
    "text/css; charset=utf-8",
    "text/javascript; charset=utf-8"};

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *p = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            char *q = realloc(p, cap);
            if (!q) {
                free(p);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            p = q;
        }
        size_t k = fread(p + n, 1, 65536, f);
        n += k;
        if (k < 65536)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(p);
        errno = EIO;
        return NULL;
    }
    p[n] = 0;
    *len = n;
    return p;
}

int web_static_load(const char *dir, struct web_static *s, char *err, size_t n)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < WS_COUNT; i++) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        s->name[i] = names[i];
        s->type[i] = types[i];
        if (!(s->data[i] = slurp(path, &s->len[i]))) {
            snprintf(err, n, "cannot read %s: %s", path, strerror(errno));
            web_static_free(s);
            return -1;
        }
    }
    return 0;
}

void web_static_free(struct web_static *s)
{
    for (int i = 0; i < WS_COUNT; i++)
        free(s->data[i]);
    memset(s->data, 0, sizeof(s->data));
}

void web_static_dir(const char *exe, char *buf, size_t n)
{
    const char *env = getenv("PTCALL_WEB_DIR");
    if (env && *env) {
        snprintf(buf, n, "%s", env);
        return;
    }
    char self[4096];
    /* /proc/self/exe: where this ptcall really is, whatever PATH found it by */
    ssize_t k = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (k <= 0)
        snprintf(self, sizeof(self), "%s", exe);
    else
        self[k] = 0;
    snprintf(buf, n, "%s/../share/ptcall/web", dirname(self));
}
