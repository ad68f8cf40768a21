/* ptcall: record function-level traces and analyse them. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
};

static const struct subcommand subcommands[] = {
    {"record", cmd_record, "run a command and record its function calls"},
    {"report", cmd_report, "per-function calls, inclusive and self time, hottest first"},
    {"diff", cmd_diff, "per-function changes between two runs, largest first"},
    {"calls", cmd_calls, "the indented call sequence of each thread"},
    {"graph", cmd_graph, "the dynamic call graph in Graphviz DOT"},
    {"stat", cmd_stat, "what a trace holds: bytes, packets, hits, gaps, per CPU and thread"},
    {"import", cmd_import, "make a trace file from raw Intel PT streams or perf.data"},
    {"export", cmd_export, "write decoded events in another tool's format"},
    {"arm", cmd_arm, "arm (or disarm) the call sites of a running process for Intel PT"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: ptcall COMMAND [ARGS...]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        if (subcommands[i].run)
            fprintf(out, "  %-8s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(out, "\n'ptcall COMMAND --help' describes a command. See docs/usage.md.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ptcall %s\n", PTCALL_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
        if (subcommands[i].run && !strcmp(argv[1], subcommands[i].name))
            return subcommands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "ptcall: unknown command '%s'; run 'ptcall --help' for the list\n", argv[1]);
    return 2;
}
