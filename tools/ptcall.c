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
    [CMD_DB_ADD] = cmd_db_add, [CMD_DB_LIST] = cmd_db_list, [CMD_DB_SHOW] = cmd_db_show,
    [CMD_DB_RM] = cmd_db_rm, [CMD_DB_QUERY] = cmd_db_query,
    [CMD_SERVE] = cmd_serve, [CMD_HTML] = cmd_html,
    [CMD_COV_RUN] = cmd_cov_run, [CMD_COV_REPORT] = cmd_cov_report,
    [CMD_COV_DIFF] = cmd_cov_diff, [CMD_COV_MERGE] = cmd_cov_merge, [CMD_COV_ADD] = cmd_cov_add,
    [CMD_COV_LIST] = cmd_cov_list, [CMD_COV_SHOW] = cmd_cov_show,
    [CMD_SNAPSHOT] = cmd_snapshot, [CMD_CALIBRATE] = cmd_calibrate,
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

/* The command named by words (one, or two for "db add"), or CMD_COUNT. */
static int command_named(const char *const *words, int n)
{
    char name[64];
    snprintf(name, sizeof(name), "%s%s%s", words[0], n > 1 ? " " : "", n > 1 ? words[1] : "");
    int c = 0;
    while (c < CMD_COUNT && strcmp(cli_commands[c].name, name))
        c++;
    return c;
}

/* ptcall help [COMMAND] | --markdown | --readme | --env | --check | --man PAGE | --man-pages
 * | --bash-completion */

static int run_help(const struct cli_values *v)
{
    if (v->npos > 2 || (v->npos == 2 && command_named(v->pos, 2) == CMD_COUNT))
        return cli_usage_error(CMD_HELP, "one command at a time ('%s' and '%s')", v->pos[0],
                               v->pos[1]);
    int modes = v->help_cmd.markdown + v->help_cmd.readme + v->help_cmd.check +
                v->help_cmd.env + (v->npos > 0) + (v->help_cmd.man != NULL) +
                v->help_cmd.man_pages + v->help_cmd.bash_completion;
    if (modes > 1)
        return cli_usage_error(CMD_HELP, "give one of COMMAND, --markdown, --readme, --env, "
                                         "--check, --man, --man-pages, --bash-completion");
    if (v->help_cmd.check)
        return cli_check_table(stderr);
    if (v->help_cmd.man) {
        if (cli_print_man(v->help_cmd.man, stdout))
            return cli_usage_error(CMD_HELP, "no manual page '%s' ('ptcall help --man-pages' "
                                             "lists them)", v->help_cmd.man);
    } else if (v->help_cmd.man_pages) {
        cli_print_man_pages(stdout);
    } else if (v->help_cmd.bash_completion) {
        cli_print_bash_completion(stdout);
    } else if (v->help_cmd.markdown) {
        cli_print_markdown(stdout);
    } else if (v->help_cmd.readme) {
        cli_print_readme(stdout);
    } else if (v->help_cmd.env) {
        env_print_markdown(stdout);
    } else if (v->npos) {
        int c = command_named(v->pos, v->npos);
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
    /* commands of two words ("db add"): argv[1] is the first, argv[2] the second */
    char subs[200] = "";
    size_t n1 = strlen(argv[1]), k = 0;
    for (int c = 0; c < CMD_COUNT; c++) {
        const char *name = cli_commands[c].name;
        if (!runs[c] || strncmp(name, argv[1], n1) || name[n1] != ' ')
            continue;
        if (argc > 2 && !strcmp(name + n1 + 1, argv[2]))
            return runs[c](argc - 2, argv + 2);
        k += (size_t)snprintf(subs + k, k < sizeof(subs) ? sizeof(subs) - k : 0, "%s%s",
                              k ? ", " : "", name + n1 + 1);
    }
    if (k && argc > 2 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        printf("usage: ptcall %s SUB [ARGS...]\n\nsubcommands:\n", argv[1]);
        for (int c = 0; c < CMD_COUNT; c++)
            if (runs[c] && !strncmp(cli_commands[c].name, argv[1], n1) &&
                cli_commands[c].name[n1] == ' ')
                printf("  %-8s %s\n", cli_commands[c].name + n1 + 1, cli_commands[c].summary);
        printf("\n'ptcall %s SUB --help' describes each.\n", argv[1]);
        return cli_flush_output(argv[1], "the help");
    }
    if (k) {
        if (argc > 2)
            fprintf(stderr, "ptcall %s: unknown subcommand '%s': give one of %s ('ptcall %s SUB "
                            "--help' describes each)\n", argv[1], argv[2], subs, argv[1]);
        else
            fprintf(stderr, "ptcall %s: give a subcommand: %s ('ptcall %s SUB --help' describes "
                            "each)\n", argv[1], subs, argv[1]);
        return 2;
    }
    fprintf(stderr, "ptcall: unknown command '%s'; run 'ptcall --help' for the list\n", argv[1]);
    return 2;
}
