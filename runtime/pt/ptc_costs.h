/* The measured cost model of a budget (`ptcall calibrate`, `ptcall record --overhead`;
 * docs/usage.md, Tracing within a budget): what one traced event costs the program in each
 * timing mode of the software backend, and what one counted call costs, measured on this
 * machine by running the calibration program (runtime/pt/calib_prog.c, built with the pass)
 * plain and traced in paired runs; cached per CPU model, kernel and libptcall build. The
 * tools call these through weak references, as the recorder's other entry points. */
#ifndef PTC_COSTS_H
#define PTC_COSTS_H

#include <stddef.h>
#include <stdint.h>

#define PTC_COSTS_MAX_MODES 8

/* One measured figure: the median over the repeats, and their smallest and largest. */
struct ptc_cost_fig {
    int ok;            /* measured (else why says why not: a mode the runtime refuses) */
    double ns, min, max;
    char why[160];
};

struct ptc_costs {
    /* the key: a cached figure is used only on the machine and build it was measured on */
    char cpu[128];      /* /proc/cpuinfo's model name */
    char kernel[128];   /* uname's release */
    char build_id[80];  /* libptcall.so's GNU build id (hex) */
    /* the figures */
    char calibrated[32]; /* UTC time of the measurement, 2026-11-29T14:03:00Z */
    double seconds;      /* how long measuring took */
    uint64_t calls;      /* calls of the calibration loop per traced run (5 times more counted) */
    unsigned repeats;    /* paired runs per figure */
    unsigned nmodes;
    struct {
        char name[16];   /* timed, untimed, ticker, ...: ptc_costs_mode_names order */
        struct ptc_cost_fig f; /* ns per traced event */
    } mode[PTC_COSTS_MAX_MODES];
    struct ptc_cost_fig count; /* ns per counted call */
    struct ptc_cost_fig count_atomic; /* ns per counted call with locked increments
                                         (PTCALL_COUNT_ATOMIC=1, record --atomic-counts),
                                         one thread: the lock's own price, no contention */
};

/* The timing modes measured, NULL-terminated: "timed" (the default), "untimed", "ticker"
 * (PTCALL_CLOCK=ticker: skipped when the runtime does not write a ticker time base). */
extern const char *const ptc_costs_mode_names[];

/* Fills c's key for the runtime library at runtime. 0, or -1 with why. */
int ptc_costs_key(const char *runtime, struct ptc_costs *c, char *why, size_t n)
    __attribute__((weak));

/* Measures c's figures (key kept) by running prog (the calibration program) repeats times
 * per figure, plain and with runtime preloaded, tracing into files under tmpdir. 0, or -1
 * with why (the program cannot run, or no figure could be measured). */
int ptc_costs_measure(const char *prog, const char *runtime, const char *tmpdir,
                      unsigned repeats, struct ptc_costs *c, char *why, size_t n)
    __attribute__((weak));

/* The cache file: $XDG_CACHE_HOME/ptcall/costs.json, else ~/.cache/ptcall/costs.json.
 * 0, or -1 (no home: no cache). */
int ptc_costs_cache_path(char *out, size_t n) __attribute__((weak));

/* Reads the entry of c's key from the cache at path into c. 1 found, 0 none (no file, no
 * entry for this key), -1 with why (a file ptcall did not write, or a damaged one). */
int ptc_costs_load(const char *path, struct ptc_costs *c, char *why, size_t n)
    __attribute__((weak));

/* Writes c into the cache at path (replacing the entry of its key, keeping the others),
 * creating its directory. A file there that ptcall did not write is never replaced. 0, or
 * -1 with why. */
int ptc_costs_save(const char *path, const struct ptc_costs *c, char *why, size_t n)
    __attribute__((weak));

/* The figure of a counted call: locked (atomic set) or not; NULL when it was not measured. */
const struct ptc_cost_fig *ptc_costs_count(const struct ptc_costs *c, int atomic)
    __attribute__((weak));

/* The figure of mode name in c, or NULL when it was not measured. */
const struct ptc_cost_fig *ptc_costs_mode(const struct ptc_costs *c, const char *name)
    __attribute__((weak));

#endif
