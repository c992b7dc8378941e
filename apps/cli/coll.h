/*
 * coll.h - what the river command's two collection files share: the
 * options of the collection commands and their parser (apps/cli/coll.c;
 * the commands are there and in apps/cli/coll_info.c).
 */
#ifndef RIVER_APPS_CLI_COLL_H
#define RIVER_APPS_CLI_COLL_H

#include "cli.h"

/* Options, by bit, so each subcommand says which it accepts. */
enum {
  OPT_ROOT = 1 << 0, OPT_DISKS = 1 << 1, OPT_DIRECT = 1 << 2,
  OPT_RECORDS = 1 << 3, OPT_ASCII = 1 << 4, OPT_SKEW = 1 << 5,
  OPT_SEED = 1 << 6, OPT_MIRROR = 1 << 7, OPT_LAYOUT = 1 << 8,
  OPT_BLOCK = 1 << 9, OPT_SCHEMA = 1 << 10, OPT_OUT = 1 << 11,
  OPT_READ = 1 << 12, OPT_FORCE = 1 << 13, OPT_REMOVE = 1 << 14,
  OPT_INPUT = 1 << 15, OPT_MEMORY = 1 << 16, OPT_STATIC = 1 << 17,
  OPT_DISK_RATE = 1 << 18, OPT_CPU_RATE = 1 << 19, OPT_PERTURB = 1 << 20,
  OPT_SYNC = 1 << 21, OPT_KEY = 1 << 22, OPT_REPLICATE = 1 << 23
};
#define OPT_COMMON (OPT_ROOT | OPT_DISKS | OPT_DIRECT)

struct args {
  const char *cmd;
  river_pcoll_opts opts;
  const char *pos[3];
  int npos;
  uint64_t records;
  int have_records;
  unsigned gen_flags;
  uint64_t seed;
  const char *schema;
  const char *out;
  river_gd_policy read_policy;
  int force;            /* rm --force */
  int remove;           /* gc --remove */
  const char *input;    /* valsort --input */
  const char *memory;   /* sort --memory (checked by the flow) */
  int is_static;        /* sort --static: the static baseline */
  const char *disk_rate;  /* sort --disk-rate, --cpu-rate, --perturb */
  const char *cpu_rate;
  const char *perturb;
  int sync;             /* sort --sync: fsync a file: OUT */
  const char *key;      /* join --key FIELD */
  int replicate;        /* join --replicate: the robust variant */
};

/* Parse argv for a subcommand accepting `allowed` options and exactly
 * npos positional arguments (named in `posnames` for messages); a bad
 * option is logged and gives RIVER_EINVAL (the same on every rank). */
int cli_coll_args(int argc, char **argv, unsigned allowed, int npos,
                        const char *posnames, struct args *a);

/* The progress line (river/progress.h) of a graduated declustering
 * read whose client is rank 0 (copy-out, valsort of node-local data):
 * rank 0 counts the records it has taken in records and bytes; every
 * rank's work is what its disks served and it received
 * (river_gd_stats_get of gd, while it is open; base keeps what closed
 * reads did). */
struct gd_progress {
  river_progress *p;
  const char *label;       /* the command's name (a string literal) */
  river_gd *gd;
  uint64_t records, bytes, base;
};

/* Start it (collective; rc, this rank's outcome so far, is agreed
 * first): the agreed rc; g->p NULL where it is not RIVER_SUCCESS. */
int gd_progress_begin(struct gd_progress *g, const char *label,
                      const river_pcoll_info *info, int rc);

/* Before river_gd_close(g->gd), on every rank: keep what it did (and
 * with --stats, add it to the stats file: river_stats_add_gd). */
void gd_progress_closing(struct gd_progress *g);

/* End it (collective; every rank has one, or none has) into rc. */
int gd_progress_finish(struct gd_progress *g, int rc);

#endif /* RIVER_APPS_CLI_COLL_H */
