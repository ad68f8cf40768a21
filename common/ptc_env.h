/* ptcall's environment variables: one table (name, kind, range, default, who reads it, help)
 * from which the runtime's parsing and validation and docs/runtime.md's table come
 * (`ptcall help --env`). A value that is set but not valid is an error with a message, never
 * coerced: `PTCALL_MODE=DROP` used to mean "wait", `PTCALL_TIMESTAMPS=no` "timed".
 * Nothing here allocates or prints: the runtime reads it in its constructor. */
#ifndef PTC_ENV_H
#define PTC_ENV_H

#include <stddef.h>
#include <stdint.h>

enum ptc_env_id {
    PTC_ENV_BACKEND,
    PTC_ENV_ARM,
    PTC_ENV_OUTPUT,
    PTC_ENV_TIMESTAMPS,
    PTC_ENV_MODE,
    PTC_ENV_BUFFER,
    PTC_ENV_BUFFERS,
    PTC_ENV_FLUSH_MS,
    PTC_ENV_LEAF_EXITS,
    PTC_ENV_ONLY,
    PTC_ENV_SKIP,
    PTC_ENV_TRAMPOLINES,
    PTC_ENV_DEBUG,
    PTC_ENV_TEST_QUEUE_DELAY_US,
    PTC_ENV_TEST_DRAIN_DELAY_US,
    PTC_ENV_TEST_CTL_START_DELAY_US,
    PTC_ENV_TIMEBASE,
    PTC_ENV_EXEC_PID,
    PTC_ENV_COUNTS,
    PTC_ENV_COUNTS_FD,
    PTC_ENV_FORKSERVER,
    PTC_ENV_FORKSERVER_DEFER,
    PTC_ENV_FORKSERVER_HARNESS,
    /* the flight recorder (runtime/soft_ring*.c) */
    PTC_ENV_RING,
    PTC_ENV_SNAPSHOT_DIR,
    PTC_ENV_TRIGGER,
    PTC_ENV_TEST_SNAPSHOT_FAULT,
    PTC_ENV_RUNTIME,
    PTC_ENV_PT_SYSFS,
    PTC_ENV_PT_DECODER,
    PTC_ENV_PT_THREADS,
    PTC_ENV_PT_PAR_MIN_BYTES,
    PTC_ENV_PT_DEBUG,
    PTC_ENV_OBJDUMP,
    PTC_ENV_DB,
    PTC_ENV_DB_PAUSE,
    PTC_ENV_WEB_DIR,
    PTC_ENV_ATTACH, /* issue 31: attach and detach (runtime/soft_ctl.c) */
    /* issue 28: counted and traced in one run (runtime/soft_mixed_config.c) */
    PTC_ENV_COUNT_REST,
    PTC_ENV_COUNT_ATOMIC,
    PTC_ENV_TRACE_SET,
    PTC_ENV_OVERHEAD, /* issue 28: a budget's pilot (runtime/soft_pilot.c) */
    PTC_ENV_PILOT_MS,
    PTC_ENV_COSTS,
    PTC_ENV_GOVERNOR_MS,
    PTC_ENV_CLOCK,  /* issue 28: the ticker clock (runtime/soft_ticker.c) */
    PTC_ENV_BLOCKING, /* issue 27: blocking calls recorded (runtime/soft_blocking.c) */
    PTC_ENV_TIMELINE_BUDGET, /* issue 27: what a timeline answer decodes (tools/web_timeline.c) */
    PTC_ENV_TEST_SERVE_DECODES, /* serve's decodes said on stderr (tools/web_flame.c) */
    PTC_ENV_COUNT
};

enum ptc_env_kind {
    PTC_ENV_BOOL,   /* 0/1, no/yes, off/on, false/true */
    PTC_ENV_CHOICE, /* one of `choices` ("wait|drop"); the value is its index */
    PTC_ENV_SIZE,   /* bytes, with an optional K/M/G suffix, in [min, max] */
    PTC_ENV_INT,    /* a decimal integer in [min, max] */
    PTC_ENV_PATH,   /* a file name */
    PTC_ENV_TEXT    /* free text (globs, one per line) */
};

struct ptc_env_var {
    const char *name;
    enum ptc_env_kind kind;
    const char *choices; /* PTC_ENV_CHOICE */
    uint64_t min, max;   /* PTC_ENV_SIZE, PTC_ENV_INT */
    const char *def;     /* the value when unset, as text; "" = none */
    const char *reader;  /* who reads it: "runtime", "record", "decoder", "bandwidth", ... */
    const char *help;
};

extern const struct ptc_env_var ptc_env_table[PTC_ENV_COUNT];

/* Parses text as variable id's kind (text may be NULL: unset). Returns 0 when unset or empty
 * (*num and *str get the default), 1 when set and valid, -1 when set but invalid, with a
 * message "NAME=VALUE: what is wrong" in err (errsz bytes). *num receives BOOL/CHOICE/SIZE/INT
 * values, *str the text itself (PATH/TEXT; may be NULL when unset). */
int ptc_env_parse(enum ptc_env_id id, const char *text, uint64_t *num, const char **str,
                  char *err, size_t errsz);

/* ptc_env_parse of secure_getenv(name): a set-user-ID or set-group-ID process (AT_SECURE)
 * sees every variable unset, as glibc's secure mode does, so that its caller cannot steer a
 * process that holds rights the caller lacks (docs/reliability.md, *Local attackers*). */
int ptc_env_get(enum ptc_env_id id, uint64_t *num, const char **str, char *err, size_t errsz);

/* 1 in a set-user-ID or set-group-ID process (the kernel's AT_SECURE), where ptc_env_get
 * reads nothing; 0 otherwise. */
int ptc_env_secure(void);

/* The first PTCALL_* variable of the environment (its "NAME=VALUE" text), or NULL. */
const char *ptc_env_first_set(void);

#endif
