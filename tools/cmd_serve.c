/* ptcall serve: the runs database's web page (server/, docs/web.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "db_cli.h"
#include "db_conn.h"
#include "options.h"
#include "ptc_env.h"
#include "web_flame.h"
#include "web_threads.h"
#include "web_http.h"
#include "web_static.h"
#include "web_timeline.h"
#include "web_tl_cache.h"

static void ready(const char *url, const char *where)
{
    /* one line a script can wait for, then how to stop */
    printf("ptcall serve: %s (database %s; read-only; Ctrl-C stops)\n", url, where);
    fflush(stdout);
}

/* "ADDR:PORT" into addr and port; 0, or -1 when it is not that. */
static int parse_listen(const char *s, char *addr, size_t n, unsigned *port)
{
    const char *colon = strrchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= n)
        return -1;
    char *end;
    unsigned long p = strtoul(colon + 1, &end, 10);
    if (!colon[1] || *end || p > 65535)
        return -1;
    snprintf(addr, n, "%.*s", (int)(colon - s), s);
    *port = (unsigned)p;
    return 0;
}

int cmd_serve(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_SERVE, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    char addr[64];
    unsigned port;
    struct web_tl_serve tl = {0}; /* the timeline's open indexes, its budget */
    uint64_t say = 0;
    char eerr[300];
    if (v.npos) {
        r = cli_usage_error(CMD_SERVE, "'%s': serve takes no file (--db names the database)",
                            v.pos[0]);
    } else if (parse_listen(v.serve.listen, addr, sizeof(addr), &port)) {
        r = cli_usage_error(CMD_SERVE, "--listen '%s' is not ADDR:PORT (e.g. 127.0.0.1:8080)",
                            v.serve.listen);
    } else if (ptc_env_get(PTC_ENV_TIMELINE_BUDGET, &tl.budget, NULL, eerr, sizeof(eerr)) < 0) {
        r = cli_fail("serve", eerr, "unset it or give a size such as 4M");
    } else if (ptc_env_get(PTC_ENV_TEST_SERVE_DECODES, &say, NULL, eerr, sizeof(eerr)) < 0) {
        r = cli_fail("serve", eerr, "unset it or give 0 or 1");
    } else if (!(tl.cache = web_tl_cache_new(WEB_TL_CACHE_COUNT, WEB_TL_CACHE_BYTES))) {
        r = cli_fail("serve", "out of memory", "free some memory and run it again");
    } else {
        web_say_decodes = say != 0;
        char dir[4200], err[1600];
        web_static_dir(argv[0], dir, sizeof(dir));
        struct web_server_cfg cfg = {.db_url = v.db.url ? v.db.url : db_default_url(),
                                     .addr = addr, .port = (uint16_t)port, .data_dir = dir,
                                     .flame = web_flame_svg, .flame_json = web_flame_json,
                                     .threads = web_threads_json,
                                     .trace_same = web_trace_same,
                                     .timeline = web_timeline_json, .timeline_ctx = &tl,
                                     .ready = ready};
        int db_code = 0;
        if (web_serve(&cfg, &db_code, err, sizeof(err)))
            r = cli_fail("serve", err,
                         db_code ? db_cli_advice(db_url_is_pg(cfg.db_url), db_code) :
                         strstr(err, "cannot read") ?
                         "reinstall ptcall, or build it (its data directory holds the page's "
                         "script); $PTCALL_WEB_DIR names another" :
                         "choose another --listen ADDR:PORT");
        else
            r = 0;
    }
    web_tl_cache_free(tl.cache);
    cli_values_free(&v);
    return r;
}
