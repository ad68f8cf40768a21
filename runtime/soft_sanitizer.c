/* A program stopped by a sanitizer (docs/runtime.md, "Sanitizers"). ASan, UBSan (with
 * halt_on_error) and the others end a process after their report with a raw exit system
 * call: no exit handler runs, no signal is sent, and the trace lost every buffered event and
 * its PROCESS_END (record then blamed SIGKILL or a write error). Their runtimes call a
 * death callback first, which the program sets with __sanitizer_set_death_callback; where
 * that function is present (looked up at run time: the runtime is never built with a
 * sanitizer; soft_register.c registers it at activation) the final flush runs there, after
 * an END_CAUSE chunk that names the sanitizer.
 *
 * The callback is one slot: a program that sets its own later replaces this one (then the
 * trace ends as before, unfinished). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "soft_internal.h"

/* The sanitizer whose report is ending the process, and the environment variable of its
 * options, with the exit status it uses unless they say otherwise. */
struct sanitizer {
    const char *name, *options_var;
    int exitcode;
};

static int present(const char *sym) { return dlsym(RTLD_DEFAULT, sym) != NULL; }

static struct sanitizer which_sanitizer(void)
{
    int (*asan_report)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "__asan_report_present");
    if (asan_report && asan_report())
        return (struct sanitizer){"AddressSanitizer", "ASAN_OPTIONS", 1};
    if (present("__tsan_init"))
        return (struct sanitizer){"ThreadSanitizer", "TSAN_OPTIONS", 66};
    if (present("__msan_init"))
        return (struct sanitizer){"MemorySanitizer", "MSAN_OPTIONS", 77};
    if (present("__ubsan_handle_add_overflow") || present("__ubsan_handle_add_overflow_abort"))
        return (struct sanitizer){"UndefinedBehaviorSanitizer", "UBSAN_OPTIONS", 1};
    if (present("__asan_init")) /* no report of its own: its leak check */
        return (struct sanitizer){"LeakSanitizer", "ASAN_OPTIONS", 1};
    return (struct sanitizer){"a sanitizer", NULL, 1};
}

/* The value of option key in a sanitizer's options (key=value, separated by ':', ',' or
 * blanks; the last one counts), or NULL */
static const char *option(const char *opts, const char *key, char *val, size_t valsz)
{
    const char *found = NULL;
    size_t kl = strlen(key);
    for (const char *p = opts; p && *p;) {
        p += strspn(p, ": ,\t\n");
        size_t len = strcspn(p, ": ,\t\n");
        if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
            size_t vl = len - kl - 1 < valsz - 1 ? len - kl - 1 : valsz - 1;
            memcpy(val, p + kl + 1, vl);
            val[vl] = 0;
            found = val;
        }
        p += len;
    }
    return found;
}

static _Atomic int died;

static void on_sanitizer_death(void)
{
    if (atomic_exchange(&died, 1) || !rt.enabled || !atomic_load(&rt.active) ||
        (uint32_t)getpid() != rt.pid)
        return;
    struct sanitizer san = which_sanitizer();
    const char *opts = san.options_var ? getenv(san.options_var) : NULL;
    char val[32];
    int how = PTC_END__EXIT, status = san.exitcode;
    if (option(opts, "exitcode", val, sizeof(val)))
        status = atoi(val);
    if (option(opts, "abort_on_error", val, sizeof(val)) && (val[0] == '1' || val[0] == 't')) {
        how = PTC_END_SIGNAL; /* it aborts after the callbacks */
        status = SIGABRT;
    }
    if (rt.fd >= 0) {
        struct ptc_end_cause c = {.kind = PTC_CAUSE_SANITIZER, .status = status, .tsc = rdtsc_()};
        struct iovec v[2] = {{&c, sizeof(c)}, {(void *)san.name, strlen(san.name) + 1}};
        write_proc_chunk_flags(PTC_CHUNK_END_CAUSE, PTC_CHUNK_F_OPTIONAL, v, 2);
    }
    /* other threads run on (the sanitizer stops none): bounded waits, as for a crash */
    finish(how, status, 1);
}

void sanitizer_death_init(void)
{
    void (*set)(void (*)(void)) =
        (void (*)(void (*)(void)))dlsym(RTLD_DEFAULT, "__sanitizer_set_death_callback");
    if (set)
        set(on_sanitizer_death);
}
