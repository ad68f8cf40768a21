/* ptcall: record function-level traces and analyse them. The commands' names, synopses and
 * summaries are in the option table (options.c); this file dispatches to them. */
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"

static int cmd_help(int argc, char **argv);

/* Indexed by enum cli_cmd; a command not linked in (weak) is NULL. */
static int (*const runs[CMD_COUNT])(int argc, char **argv) = {
    [CMD_RECORD] = cmd_record, [CMD_REPORT] = cmd_report, [CMD_DIFF] = cmd_diff,
    [CMD_CALLS] = cmd_calls,   [CMD_GRAPH] = cmd_graph,   [CMD_STAT] = cmd_stat,
    [CMD_IMPORT] = cmd_import, [CMD_EXPORT] = cmd_export, [CMD_ARM] = cmd_arm,
    [CMD_BANDWIDTH] = cmd_bandwidth,
    [CMD_HELP] = cmd_help,
};

static void usage(FILE *out)
{
    fprintf(out, "usage: ptcall COMMAND [ARGS...]\n\ncommands:\n");
    for (int c = 0; c < CMD_COUNT; c++)
        if (runs[c])
            fprintf(out, "  %-8s %s\n", cli_commands[c].name, cli_commands[c].summary);
    fprintf(out, "\n'ptcall COMMAND --help' describes a command; 'ptcall help --markdown' all of "
                 "their options.\nSee docs/usage.md and docs/options.md.\n");
}

/* ptcall help [COMMAND] | --markdown | --readme | --env | --check */
static int run_help(const struct cli_values *v)
{
    if (v->npos > 1)
        return cli_usage_error(CMD_HELP, "one command at a time ('%s' and '%s')", v->pos[0],
                               v->pos[1]);
    int modes = v->help_cmd.markdown + v->help_cmd.readme + v->help_cmd.check +
                v->help_cmd.env + (v->npos > 0);
    if (modes > 1)
        return cli_usage_error(CMD_HELP,
                               "give one of COMMAND, --markdown, --readme, --env, --check");
    if (v->help_cmd.check)
        return cli_check_table(stderr);
    if (v->help_cmd.markdown) {
        cli_print_markdown(stdout);
    } else if (v->help_cmd.readme) {
        cli_print_readme(stdout);
    } else if (v->help_cmd.env) {
        env_print_markdown(stdout);
    } else if (v->npos) {
        int c = 0;
        while (c < CMD_COUNT && strcmp(cli_commands[c].name, v->pos[0]))
            c++;
        if (c == CMD_COUNT)
            return cli_usage_error(CMD_HELP, "unknown command '%s'", v->pos[0]);
        cli_print_help((enum cli_cmd)c, stdout);
    } else {
        usage(stdout);
    }
    if (fflush(stdout) || ferror(stdout)) {
        fprintf(stderr, "ptcall help: cannot write the help: check the output device\n");
        return 1;
    }
    return 0;
}

static int cmd_help(int argc, char **argv)
{
    struct cli_values v;
    int r = cli_parse(CMD_HELP, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    r = run_help(&v);
    cli_values_free(&v);
    return r;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ptcall %s\n", PTCALL_VERSION);
        return 0;
    }
    for (int c = 0; c < CMD_COUNT; c++)
        if (runs[c] && !strcmp(argv[1], cli_commands[c].name))
            return runs[c](argc - 1, argv + 1);
    fprintf(stderr, "ptcall: unknown command '%s'; run 'ptcall --help' for the list\n", argv[1]);
    return 2;
}
