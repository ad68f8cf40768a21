/* The page's script, styles and chart library (uPlot, from npm), read once from ptcall's
 * data directory: installed as PREFIX/share/ptcall/web, or the build tree's share/ptcall/web
 * (CMake copies them there), never fetched from the internet. */
#ifndef PTCALL_WEB_STATIC_H
#define PTCALL_WEB_STATIC_H

#include <stddef.h>

enum { WS_APP_JS, WS_APP_CSS, WS_UPLOT_JS, WS_UPLOT_CSS, WS_CAMPAIGN_JS, WS_CAMPAIGN_CSS,
       /* the call graph: its script and Graphviz (an ES module, @hpcc-js/wasm-graphviz) */
       WS_CALLGRAPH_JS, WS_GRAPHVIZ_JS,
       WS_TABLES_JS,
       /* the interactive flame graph: d3, d3-flame-graph (npm), web/app/flame.js */
       WS_D3_JS, WS_FLAMEGRAPH_JS, WS_FLAMEGRAPH_CSS, WS_FLAME_JS, WS_FLAME_CSS,
       WS_TIMELINE_JS, WS_COUNT };
struct web_static {
    const char *name[WS_COUNT]; /* the file names, as /static/NAME serves them */
    const char *type[WS_COUNT]; /* Content-Type */
    char *data[WS_COUNT];
    size_t len[WS_COUNT];
};
/* Reads the files from dir. 0, or -1 with err naming the file that is missing. */
int web_static_load(const char *dir, struct web_static *s, char *err, size_t n);
void web_static_free(struct web_static *s);
/* The data directory beside the executable exe: EXEDIR/../share/ptcall/web (installed, and
 * the build tree's layout), into buf; $PTCALL_WEB_DIR overrides it. */
void web_static_dir(const char *exe, char *buf, size_t n);

#endif
