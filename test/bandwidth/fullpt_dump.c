/* fullpt_dump: prints what the full-PT estimator makes of a program (a helper for the tests
 * and for measuring the estimator; `ptcall bandwidth --full-pt` is the user's way in).
 *
 *   fullpt_dump [-w WORKDIR] [-d SECONDS] [-f] -- PROGRAM [ARGS...]   run it under valgrind
 *   fullpt_dump [-d SECONDS] [-f] -p CALLGRIND_OUT [VALGRIND_LOG]      read a saved output
 *
 * -d: the run's duration for the timing modes (default 1 s); -f: per function as well. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fullpt.h"

static void print_counts(const char *what, const struct ptc_fullpt_counts *c)
{
    printf("%-28s insns %llu cond %llu (taken %llu) jmp %llu call %llu ijmp %llu icall %llu "
           "ret %llu (deep %llu) sys %llu\n",
           what, (unsigned long long)c->insns, (unsigned long long)c->cond,
           (unsigned long long)c->cond_taken, (unsigned long long)c->jmp,
           (unsigned long long)c->call, (unsigned long long)c->ijmp,
           (unsigned long long)c->icall, (unsigned long long)c->ret,
           (unsigned long long)c->ret_deep, (unsigned long long)c->sys);
}

int main(int argc, char **argv)
{
    const char *workdir = NULL, *cg = NULL, *log = NULL;
    double seconds = 1.0;
    int per_func = 0, i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
            workdir = argv[++i];
        else if (strcmp(argv[i], "-d") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "-f") == 0)
            per_func = 1;
        else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
            cg = argv[++i];
            if (i + 1 < argc)
                log = argv[++i];
        } else if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else {
            fprintf(stderr, "usage: fullpt_dump [-w DIR] [-d S] [-f] -- PROG ARGS | -p CG [LOG]\n");
            return 2;
        }
    }
    char why[1024];
    struct ptc_fullpt_profile *p;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = cg ? ptc_fullpt_parse(cg, log, &p, why, sizeof why)
                : ptc_fullpt_collect((const char *const *)argv + i, workdir, &p, why, sizeof why);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (rc) {
        fprintf(stderr, "fullpt_dump: %s\n", why);
        return 1;
    }
    double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    printf("full PT, ESTIMATED from callgrind: %u process(es), %zu functions, main %s\n",
           p->processes, p->nfunc, p->main_module ? p->main_module : "?");
    printf("estimator: %.3f s (program under valgrind %.3f s)\n", el, p->run_seconds);
    if (p->notes)
        printf("notes:\n%s\n", p->notes);
    printf("unclassified insns %llu, valgrind's own %llu\n",
           (unsigned long long)p->unclassified_insns, (unsigned long long)p->excluded_insns);
    print_counts("total", &p->total);
    print_counts("main executable", &p->main);
    struct ptc_fullpt_bytes *fb = per_func ? calloc(p->nfunc + 1, sizeof *fb) : NULL;
    static const char *const tname[] = {"none", "tsc", "mtc", "cyc"};
    for (int t = 0; t <= PTC_FULLPT_CYC; t++) {
        for (int retc = 1; retc >= 0; retc--) {
            struct ptc_fullpt_cfg cfg;
            ptc_fullpt_cfg_default(&cfg);
            cfg.timing = t;
            cfg.ret_compression = retc;
            cfg.duration_tsc = (uint64_t)(seconds * (double)cfg.tsc_hz);
            struct ptc_fullpt_bytes b;
            if (ptc_fullpt_estimate(p, &cfg, &b, fb, why, sizeof why)) {
                printf("%s: %s\n", tname[t], why);
                continue;
            }
            printf("timing %-4s retcomp %-3s: %llu bytes (main %llu), %.1f MB/s estimated; TNT "
                   "bits %llu, TIPs %llu;",
                   tname[t], retc ? "on" : "off", (unsigned long long)b.total,
                   (unsigned long long)b.main_bytes, b.bytes_per_sec / 1e6,
                   (unsigned long long)b.tnt_bits, (unsigned long long)b.tips);
            for (int k = 0; k < PTC_FULLPT_NPKT; k++)
                if (b.packets[k])
                    printf(" %s %llu/%lluB", ptc_fullpt_pkt_name(k),
                           (unsigned long long)b.packets[k], (unsigned long long)b.bytes[k]);
            printf("\n");
            if (fb && t == PTC_FULLPT_NONE && retc)
                for (size_t f = 0; f < p->nfunc; f++) {
                    char what[512];
                    snprintf(what, sizeof what, "  %s [%s]%s", p->func[f].name,
                             strrchr(p->func[f].module, '/') ? strrchr(p->func[f].module, '/') + 1
                                                             : p->func[f].module,
                             p->func[f].in_main ? " *" : "");
                    print_counts(what, &p->func[f].c);
                    printf("      bytes %llu\n", (unsigned long long)fb[f].total);
                }
        }
    }
    free(fb);
    ptc_fullpt_free(p);
    return 0;
}
