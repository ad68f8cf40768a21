/* Subcommands of `ptcall`. Each lives in its own cmd_NAME.c; ptcall.c lists them. A
 * subcommand returns the process exit status (0 ok, 1 failure, 2 usage error). */
#ifndef PTCALL_COMMANDS_H
#define PTCALL_COMMANDS_H

#define PTCALL_WEAK __attribute__((weak))

int cmd_record(int argc, char **argv) PTCALL_WEAK;
int cmd_report(int argc, char **argv) PTCALL_WEAK;
int cmd_diff(int argc, char **argv) PTCALL_WEAK;
int cmd_calls(int argc, char **argv) PTCALL_WEAK;
int cmd_graph(int argc, char **argv) PTCALL_WEAK;
int cmd_stat(int argc, char **argv) PTCALL_WEAK;
int cmd_import(int argc, char **argv) PTCALL_WEAK;
int cmd_export(int argc, char **argv) PTCALL_WEAK;
int cmd_arm(int argc, char **argv) PTCALL_WEAK;
int cmd_bandwidth(int argc, char **argv) PTCALL_WEAK;
int cmd_db_add(int argc, char **argv) PTCALL_WEAK;   /* cmd_db.c: `ptcall db SUB` */
int cmd_db_list(int argc, char **argv) PTCALL_WEAK;
int cmd_db_show(int argc, char **argv) PTCALL_WEAK;
int cmd_db_rm(int argc, char **argv) PTCALL_WEAK;
int cmd_db_query(int argc, char **argv) PTCALL_WEAK;
int cmd_serve(int argc, char **argv) PTCALL_WEAK;   /* cmd_serve.c */
int cmd_html(int argc, char **argv) PTCALL_WEAK;    /* cmd_html.c */
int cmd_cov_run(int argc, char **argv) PTCALL_WEAK;    /* cmd_cov.c: `ptcall cov SUB` */
int cmd_cov_report(int argc, char **argv) PTCALL_WEAK;
int cmd_cov_diff(int argc, char **argv) PTCALL_WEAK;
int cmd_cov_merge(int argc, char **argv) PTCALL_WEAK; /* cov_campaign.c */
int cmd_cov_add(int argc, char **argv) PTCALL_WEAK;
int cmd_cov_list(int argc, char **argv) PTCALL_WEAK; /* cov_campaign_list.c */
int cmd_cov_show(int argc, char **argv) PTCALL_WEAK;
int cmd_snapshot(int argc, char **argv) PTCALL_WEAK; /* cmd_snapshot.c */
int cmd_calibrate(int argc, char **argv) PTCALL_WEAK; /* cmd_calibrate.c */

#include <stdio.h>
/* `ptcall help --env` (env_doc.c) */
void env_print_markdown(FILE *f);
/* What values variable v takes, as text ("0 or 1 (...)", "size, 1..2 bytes (K/M/G)"). */
struct ptc_env_var;
const char *env_kind_text(const struct ptc_env_var *v, char *buf, size_t n);

#endif
