/* A library ptcall loads when first needed (cmake/PtcallLoadedLib.cmake) that is not on the
 * machine: db_pg_lib.c and web_mhd.c are compiled here with the name of one that does not
 * exist, and each must answer -1 with one line naming the Debian package to install, and
 * the same line again (loaded once, its failure kept). */
#include <stdio.h>
#include <string.h>

int db_pg_lib_load(char *err, size_t n);
int web_mhd_load(char *err, size_t n);

static int check(const char *what, int (*load)(char *, size_t), const char *package)
{
    char err[512] = "", again[512] = "";
    int r = load(err, sizeof(err));
    int r2 = load(again, sizeof(again));
    int ok = r == -1 && r2 == -1 && strstr(err, "install Debian's ") && strstr(err, package) &&
             !strchr(err, '\n') && !strcmp(err, again);
    printf("%s %s: %s\n", ok ? "ok" : "FAIL", what, err);
    return ok ? 0 : 1;
}

int main(void)
{
    int bad = check("libpq missing", db_pg_lib_load, "libpq5");
    bad += check("libmicrohttpd missing", web_mhd_load, "libmicrohttpd12");
    return bad ? 1 : 0;
}
