/* `ptcall help --man PAGE | --man-pages | --bash-completion`: the manual pages and the bash
 * completion script that packages install (docs/install.md), made from the one option table
 * (options.c) and the environment table (common/ptc_env.c), so that they say what `--help`
 * says. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "commands.h"
#include "options.h"
#include "ptc_env.h"

#ifndef PTCALL_VERSION
#define PTCALL_VERSION "unknown"
#endif

/* ---- roff ---------------------------------------------------------------------------- */

/* Text for roff, from the start of a line: a backslash is \e, a hyphen-minus \- (so that an
 * option copied from the page is what one types), a '\n' ends the paragraph; a line that
 * would start with '.' or '\'' (a request) starts with \&. */
static void roff(FILE *f, const char *s)
{
    int bol = 1;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        bol = 0;
        if (*s == '\\') {
            fputs("\\e", f);
        } else if (*s == '-') {
            fputs("\\-", f);
        } else if (*s == '\n') {
            fputs("\n.PP\n", f);
            bol = 1;
            while (s[1] == ' ')
                s++;
        } else {
            fputc(*s, f);
        }
    }
}

/* "db add" -> "ptcall-db-add" */
static void page_name(enum cli_cmd c, char *buf, size_t n)
{
    snprintf(buf, n, "ptcall-%s", cli_commands[c].name);
    for (char *p = buf; *p; p++)
        if (*p == ' ')
            *p = '-';
}

static void th(FILE *f, const char *page)
{
    char up[64];
    size_t i = 0;
    for (; page[i] && i + 1 < sizeof(up); i++)
        up[i] = (char)toupper((unsigned char)page[i]);
    up[i] = 0;
    fputs(".TH ", f);
    roff(f, up);
    fprintf(f, " 1 \"\" \"ptcall %s\" \"ptcall manual\"\n", PTCALL_VERSION);
    fputs(".nh\n", f); /* no hyphens inside option and file names */
}

/* A summary is a fragment ("run a command and ..."); alone it starts a sentence. */
static void sentence(FILE *f, const char *summary)
{
    char buf[400];
    snprintf(buf, sizeof(buf), "%s.", summary);
    buf[0] = (char)toupper((unsigned char)buf[0]);
    roff(f, buf);
    fputc('\n', f);
}

/* .TP with the option's names in bold and its value in italics, then its help and the words
 * of a choice that have their own help. */
static void man_row(FILE *f, const struct cli_opt *o)
{
    const struct cli_choice *words = cli_opt_choices(o);
    fputs(".TP\n", f);
    if (o->alias) {
        fputs("\\fB", f);
        roff(f, o->alias);
        fputs("\\fR, ", f);
    }
    fputs("\\fB", f);
    roff(f, o->name);
    fputs("\\fR", f);
    if (o->metavar) {
        fputs(" \\fI", f);
        roff(f, o->metavar);
        fputs("\\fR", f);
    } else if (words) {
        fputs(" \\fI", f);
        for (int i = 0; words[i].word; i++) {
            fputs(i ? "\\fR|\\fI" : "", f);
            roff(f, words[i].word);
        }
        fputs("\\fR", f);
    }
    char text[1200];
    cli_opt_help(o, text, sizeof(text));
    fputc('\n', f);
    roff(f, text);
    fputc('\n', f);
    int any = 0;
    for (int i = 0; words && words[i].word; i++)
        any |= words[i].help != NULL;
    if (!any)
        return;
    fputs(".RS\n", f);
    for (int i = 0; words[i].word; i++) {
        fputs(".TP\n\\fB", f);
        roff(f, words[i].word);
        fputs("\\fR\n", f);
        roff(f, words[i].help ? words[i].help : "");
        fputc('\n', f);
    }
    fputs(".RE\n", f);
}

static void see_also(FILE *f, enum cli_cmd self)
{
    fputs(".SH SEE ALSO\n.BR ptcall (1),\n.BR ptcall\\-cc (1)", f);
    /* the other subcommands of a two-word command ("db add": db list, db show, ...) */
    const char *sp = self < CMD_COUNT ? strchr(cli_commands[self].name, ' ') : NULL;
    for (int c = 0; sp && c < CMD_COUNT; c++) {
        size_t n = (size_t)(sp - cli_commands[self].name);
        if (c == (int)self || strncmp(cli_commands[c].name, cli_commands[self].name, n) ||
            cli_commands[c].name[n] != ' ')
            continue;
        char name[64];
        page_name((enum cli_cmd)c, name, sizeof(name));
        fputs(",\n.BR ", f);
        roff(f, name);
        fputs(" (1)", f);
    }
    fputs("\n.PP\nThe documentation in docs/ of the ptcall sources: docs/usage.md, "
          "docs/options.md, docs/install.md.\n", f);
}

static void man_command(FILE *f, enum cli_cmd cmd)
{
    const struct cli_command *c = &cli_commands[cmd];
    char page[64];
    page_name(cmd, page, sizeof(page));
    th(f, page);
    fputs(".SH NAME\n", f);
    roff(f, page);
    fputs(" \\- ", f);
    roff(f, c->summary);
    fputs("\n.SH SYNOPSIS\n.nf\n", f);
    for (const char *s = c->synopsis; *s;) {
        size_t n = strcspn(s, "\n");
        char line[600];
        snprintf(line, sizeof(line), "%.*s", (int)n, s);
        fputs("\\fBptcall ", f);
        roff(f, c->name);
        fputs("\\fR ", f);
        roff(f, line);
        fputc('\n', f);
        s += n + (s[n] == '\n');
    }
    fputs(".fi\n.SH DESCRIPTION\n", f);
    sentence(f, c->summary);
    if (c->notes) {
        fputs(".PP\n", f);
        roff(f, c->notes);
        fputc('\n', f);
    }
    size_t nrows;
    const struct cli_opt *rows = cli_rows(&nrows);
    const struct cli_group *g[16];
    int ng = cli_groups_of(cmd, g, 16);
    fputs(".SH OPTIONS\n", f);
    for (int k = 0; k < ng; k++) {
        if (g[k]) {
            fputs(".SS\n", f);
            roff(f, g[k]->title);
            fputc('\n', f);
        }
        for (size_t i = 0; i < nrows; i++)
            if (cli_opt_in_cmd(&rows[i], cmd) && rows[i].group == g[k])
                man_row(f, &rows[i]);
        if (g[k] && g[k]->note) {
            fputs(".PP\n", f);
            roff(f, g[k]->note);
            fputc('\n', f);
        }
    }
    fputs(".SH EXIT STATUS\n0 on success; 2 after a usage error (a one\\-line message "
          "naming what is wrong, then the synopsis), 1 after other errors, each with a "
          "message on standard error.\n", f);
    see_also(f, cmd);
}

static void man_ptcall(FILE *f)
{
    th(f, "ptcall");
    fputs(".SH NAME\nptcall \\- record function\\-level traces of C and C++ programs and "
          "analyse them\n"
          ".SH SYNOPSIS\n.nf\n\\fBptcall\\fR \\fICOMMAND\\fR [\\fIARGS\\fR...]\n"
          "\\fBptcall\\fR \\-\\-help | \\-\\-version\n.fi\n"
          ".SH DESCRIPTION\n"
          "ptcall is a function\\-level tracer for C and C++ on Linux x86\\-64. A program "
          "built with the compiler wrappers\n.BR ptcall\\-cc (1)\nor\n.BR ptcall\\-c++ (1)\n"
          "has a call to an entry stub at the start of every function and to an exit stub "
          "before each return, disarmed until tracing starts. The same binary runs untraced, "
          "traced by Intel Processor Trace (\\-\\-backend pt) or by the software backend "
          "(\\-\\-backend soft, no special hardware); both give the same decoded events: "
          "per\\-thread call sequences, call counts, hot functions, call graphs, inclusive "
          "and self times.\n"
          ".PP\n\\&'ptcall COMMAND \\-\\-help' prints what a command's page says.\n"
          ".SH COMMANDS\n",
          f);
    for (int c = 0; c < CMD_COUNT; c++) {
        char page[64];
        page_name((enum cli_cmd)c, page, sizeof(page));
        fputs(".TP\n.BR ", f);
        roff(f, page);
        fputs(" (1)\n", f);
        sentence(f, cli_commands[c].summary);
    }
    fputs(".SH EXAMPLES\n.nf\n"
          "ptcall\\-cc \\-O2 \\-g app.c \\-o app\n"
          "ptcall record \\-o app.ptc \\-\\- ./app ARGS\n"
          "ptcall report app.ptc \\-\\-top 20\n"
          "ptcall calls app.ptc \\-\\-max\\-depth 4\n"
          "ptcall export app.ptc \\-\\-format chrome \\-o app.json\n"
          ".fi\n"
          ".SH ENVIRONMENT\n"
          "The traced program's runtime and the commands read these variables; an invalid "
          "value is an error that names the variable.\n",
          f);
    for (int i = 0; i < PTC_ENV_COUNT; i++) {
        const struct ptc_env_var *v = &ptc_env_table[i];
        char kind[96], text[1400];
        size_t h = strlen(v->help);
        snprintf(text, sizeof(text), "%s%s Values: %s; default: %s; read by: %s.", v->help,
                 h && v->help[h - 1] == '.' ? "" : ".", env_kind_text(v, kind, sizeof(kind)),
                 *v->def ? v->def : "unset", v->reader);
        /* the table's help is also Markdown (docs/runtime.md): no code spans here */
        char *w = text;
        for (const char *r = text; *r; r++)
            if (*r != '`')
                *w++ = *r;
        *w = 0;
        fputs(".TP\n.B ", f);
        roff(f, v->name);
        fputc('\n', f);
        roff(f, text);
        fputc('\n', f);
    }
    fputs(".SH EXIT STATUS\n0 on success, 2 after a usage error, 1 after other errors; "
          "ptcall record exits with the status of the command it ran.\n", f);
    fputs(".SH SEE ALSO\n.BR ptcall\\-cc (1)", f);
    for (int c = 0; c < CMD_COUNT; c++) {
        char page[64];
        page_name((enum cli_cmd)c, page, sizeof(page));
        fputs(",\n.BR ", f);
        roff(f, page);
        fputs(" (1)", f);
    }
    fputs("\n.PP\nThe documentation in docs/ of the ptcall sources: docs/usage.md, "
          "docs/options.md, docs/install.md.\n", f);
}

int cli_print_man(const char *page, FILE *out)
{
    if (!strcmp(page, "ptcall")) {
        man_ptcall(out);
        return 0;
    }
    for (int c = 0; c < CMD_COUNT; c++) {
        char name[64];
        page_name((enum cli_cmd)c, name, sizeof(name));
        if (!strcmp(name, page)) {
            man_command(out, (enum cli_cmd)c);
            return 0;
        }
    }
    return -1;
}

static void man_pages(FILE *out, const char *sep)
{
    fputs("ptcall", out);
    for (int c = 0; c < CMD_COUNT; c++) {
        char name[64];
        page_name((enum cli_cmd)c, name, sizeof(name));
        fprintf(out, "%s%s", sep, name);
    }
}

void cli_print_man_pages(FILE *out)
{
    man_pages(out, "\n");
    fputc('\n', out);
}

/* ---- bash completion ------------------------------------------------------------------ */

/* The first words of the commands ("db" once for db add, db list, ...), space-separated. */
static void first_words(FILE *f)
{
    for (int c = 0; c < CMD_COUNT; c++) {
        const char *n = cli_commands[c].name;
        size_t len = strcspn(n, " ");
        int seen = 0;
        for (int k = 0; k < c; k++)
            seen |= !strncmp(cli_commands[k].name, n, len) &&
                    strcspn(cli_commands[k].name, " ") == len;
        if (!seen)
            fprintf(f, "%s%.*s", c ? " " : "", (int)len, n);
    }
}

void cli_print_bash_completion(FILE *f)
{
    size_t nrows;
    const struct cli_opt *rows = cli_rows(&nrows);
    fprintf(f, "# bash completion for ptcall %s: commands, each one's options and the words of "
               "its choices.\n# Generated by 'ptcall help --bash-completion' from ptcall's "
               "option table: do not edit.\n# shellcheck shell=bash disable=SC2207\n",
            PTCALL_VERSION);
    fputs("_ptcall()\n{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev='' cmd='' i\n"
          "    (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
          "    COMPREPLY=()\n"
          "    # --name=VALUE: bash splits the word at '=' (COMP_WORDBREAKS)\n"
          "    if [[ $cur == = ]]; then\n"
          "        cur=\n"
          "    elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then\n"
          "        prev=${COMP_WORDS[COMP_CWORD-2]}\n"
          "    fi\n"
          "    if (( COMP_CWORD == 1 )); then\n"
          "        COMPREPLY=($(compgen -W '",
          f);
    first_words(f);
    fputs(" --help --version' -- \"$cur\"))\n        return 0\n    fi\n"
          "    cmd=${COMP_WORDS[1]}\n    case $cmd in\n",
          f);
    /* two-word commands: the second word */
    for (int c = 0; c < CMD_COUNT; c++) {
        const char *n = cli_commands[c].name;
        const char *sp = strchr(n, ' ');
        if (!sp)
            continue;
        size_t len = (size_t)(sp - n);
        int seen = 0;
        for (int k = 0; k < c; k++)
            seen |= !strncmp(cli_commands[k].name, n, len) && cli_commands[k].name[len] == ' ';
        if (seen)
            continue;
        fprintf(f, "        %.*s)\n            if (( COMP_CWORD == 2 )); then\n"
                   "                COMPREPLY=($(compgen -W '",
                (int)len, n);
        int first = 1;
        for (int k = c; k < CMD_COUNT; k++)
            if (!strncmp(cli_commands[k].name, n, len) && cli_commands[k].name[len] == ' ') {
                fprintf(f, "%s%s", first ? "" : " ", cli_commands[k].name + len + 1);
                first = 0;
            }
        fputs("' -- \"$cur\"))\n                return 0\n            fi\n"
              "            cmd=\"$cmd ${COMP_WORDS[2]}\" ;;\n",
              f);
    }
    fputs("    esac\n"
          "    # after '--': the traced command's words (record, bandwidth, cov run)\n"
          "    for (( i = 2; i < COMP_CWORD; i++ )); do\n"
          "        [[ ${COMP_WORDS[i]} == -- ]] && return 0\n"
          "    done\n"
          "    # the value of an option: the words of a choice; files otherwise (complete -o "
          "default)\n"
          "    case \"$cmd|$prev\" in\n",
          f);
    for (int c = 0; c < CMD_COUNT; c++)
        for (size_t i = 0; i < nrows; i++) {
            const struct cli_opt *o = &rows[i];
            if (!cli_opt_in_cmd(o, (enum cli_cmd)c) || o->kind == CLI_FLAG)
                continue;
            fprintf(f, "        '%s|%s'", cli_commands[c].name, o->name);
            if (o->alias)
                fprintf(f, "|'%s|%s'", cli_commands[c].name, o->alias);
            fputc(')', f);
            const struct cli_choice *w = cli_opt_choices(o);
            if (c == CMD_HELP && !strcmp(o->name, "--man")) {
                fputs("\n            COMPREPLY=($(compgen -W '", f);
                man_pages(f, " ");
                fputs("' -- \"$cur\"))\n            return 0 ;;\n", f);
            } else if (w) {
                fputs("\n            COMPREPLY=($(compgen -W '", f);
                for (int k = 0; w[k].word; k++)
                    fprintf(f, "%s%s", k ? " " : "", w[k].word);
                fputs("' -- \"$cur\"))\n            return 0 ;;\n", f);
            } else {
                fputs(" return 0 ;;\n", f);
            }
        }
    fputs("    esac\n    [[ $cur == -* ]] || return 0\n    case $cmd in\n", f);
    for (int c = 0; c < CMD_COUNT; c++) {
        fprintf(f, "        '%s') COMPREPLY=($(compgen -W '", cli_commands[c].name);
        int first = 1;
        for (size_t i = 0; i < nrows; i++) {
            const struct cli_opt *o = &rows[i];
            if (!cli_opt_in_cmd(o, (enum cli_cmd)c))
                continue;
            fprintf(f, "%s%s%s%s", first ? "" : " ", o->alias ? o->alias : "",
                    o->alias ? " " : "", o->name);
            first = 0;
        }
        fputs("' -- \"$cur\")) ;;\n", f);
    }
    fputs("    esac\n    return 0\n}\ncomplete -o default -F _ptcall ptcall\n", f);
}
