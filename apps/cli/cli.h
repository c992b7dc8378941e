/*
 * cli.h - what the river command's files share: the command signature,
 * option parsing helpers, the agreed exit and the subcommands.
 */
#ifndef RIVER_APPS_CLI_H
#define RIVER_APPS_CLI_H

#include <river.h>
#include <stdint.h>

#include "../common/number.h"   /* app_parse_u64: option values */

/* A subcommand: argv[0] is its name. Returns a River code (the same on
 * every rank: commands agree before returning). */
typedef int (*cli_fn)(int argc, char **argv);

int cli_rank(void);

/* The edit distance (insertions, deletions, substitutions) between a
 * and b, counted up to 9 (more: 9), for "did you mean" (names are
 * short: the table's one row is on the stack). */
int cli_edit_distance(const char *a, const char *b);

/* "s" where a count n is other than one: "%d partition%s". */
#define CLI_S(n) ((n) == 1 ? "" : "s")
int cli_size(void);


/* Every rank gets the most negative rc of any rank (RIVER_EMPI if the
 * reduction fails, RIVER_ETIMEDOUT if the watchdog ended its wait or
 * had fired before: then nothing is started).
 * Waits backing off, like every wait of River's. */
int cli_agree(int rc);

/* The element-wise minimum of v[0..n) over every rank, into v (as
 * cli_agree: RIVER_SUCCESS, RIVER_EMPI or RIVER_ETIMEDOUT). */
int cli_agree_min(int *v, int n);

/* Around a step every rank takes alike (loading a flow spec, plugins),
 * whose messages would be the same on every rank: rank 0 says its
 * own, the others keep theirs; cli_hush_end agrees on rc (as cli_agree)
 * and, if rank 0 did not fail but others did, the lowest of them says
 * what it kept (a file missing on one node only). */
void cli_hush_begin(void);
int cli_hush_end(int rc);

/* Load the plugins paths[0..n) on every rank (river_plugin_load), said
 * once (cli_hush_begin/end); the agreed outcome. */
int cli_plugins(char *const *paths, int n);

/* Take every `--plugin PATH` (or --plugin=PATH) out of argv (argv[0]:
 * the command's name) into paths[0..*n), at most max: RIVER_EINVAL
 * (said, a usage error) for a missing value or too many. */
#define CLI_PLUGINS_MAX 16
int cli_take_plugins(int *argc, char **argv, char **paths, int max, int *n);

/* Rank 0's `bytes` bytes at buf, on every rank of MPI_COMM_WORLD
 * (RIVER_SUCCESS, RIVER_EMPI, or RIVER_ETIMEDOUT as cli_agree). Waits
 * backing off. */
int cli_bcast(void *buf, int bytes);

/* Load the flow spec at path with params kv[0..nkv) (key=value), run it
 * on MPI_COMM_WORLD with a progress line named label (of total records,
 * 0 if not known: river_flow_progress) and print its stages' totals
 * (river run); *seconds (if not NULL) gets the run's time. */
int cli_run_flow(const char *path, const char *const *kv, int nkv,
                 const char *label, uint64_t total, double *seconds);

/* What `river --bind` did on this rank (RIVER_BIND_DONE or
 * RIVER_BIND_KEPT); 0 without --bind. Set by main. */
extern int cli_bind_outcome;

/* The run's stats file (river --stats FILE), or NULL: each flow a
 * command runs is added to it (cli_run_flow), and the numbers of its
 * report. Set by main. */
extern river_stats *cli_stats;

/* With --stats: add this rank's records and bytes done since t0
 * (river_wtime) as the stats file's work named label (collective: every
 * rank calls it; river_stats_add_work). Returns rc, or the stats' error
 * where rc is RIVER_SUCCESS; nothing without --stats. */
int cli_stats_work(const char *label, uint64_t records, uint64_t bytes,
                   double t0, int rc);

/* The job's topology report (river topo), printed by rank 0: each node's
 * machine once and its ranks' bindings and disk directories (opts: the
 * root and disk pattern, NULL for the defaults). Collective; returns the
 * same code on every rank. */
int cli_topo_report(const river_pcoll_opts *opts);

int cmd_topo(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_copy_in(int argc, char **argv);
int cmd_copy_out(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_fsck(int argc, char **argv);
int cmd_rm(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_flow(int argc, char **argv);
int cmd_modules(int argc, char **argv);
int cmd_valsort(int argc, char **argv);
int cmd_sort(int argc, char **argv);
int cmd_join(int argc, char **argv);

#endif /* RIVER_APPS_CLI_H */
