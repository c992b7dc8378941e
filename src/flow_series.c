/*
 * flow_series.c - each stage instance's counters over time, for the
 * stats file's throughput and timeline (river/stats.h: "series").
 *
 * A rank takes a row of every instance it runs that has not returned,
 * once a step of a fixed grid from the run's start (a second), from
 * the calls a module makes anyway: every get and put, and every turn it
 * waits (flow_io.c). No timer, no thread: a rank whose instances are all
 * computing takes no row until one of them calls River again, and the
 * row then says when it was taken. The counts are the instances' own
 * (river_module_stats), so the last row, taken as an instance returns,
 * equals what the stats file gives as its totals.
 *
 * At most SERIES_MAX rows an instance: when the running instances'
 * rows are full, every other row is dropped and the step doubles (a
 * day-long run keeps a row every two minutes), so a rank's memory for
 * them stays bounded whatever the run's length.
 */
#include "flow_run_internal.h"

#include <stdlib.h>
#include <string.h>

#define SERIES_STEP 1.0    /* seconds between rows at the start */
#define SERIES_MAX 1024    /* rows an instance, then the step doubles */

static void take_row(struct river__inst *in, double t0, double now);

/* The grid, and every instance's row at 0 (its first interval's
 * start). */
void river__series_start(struct river__run *r)
{
  int i;

  r->series_t0 = river_wtime();
  r->series_every = SERIES_STEP;
  r->series_due = r->series_t0 + SERIES_STEP;
  for (i = 0; i < r->ninst; i++)
    take_row(&r->inst[i], r->series_t0, r->series_t0);
}

/* Append in's counters at now; a row dropped without memory (the
 * series is a report, not the run: the run goes on). */
static void take_row(struct river__inst *in, double t0, double now)
{
  struct river__series *s = &in->series;
  double *row;

  if (s->n == s->cap) {
    int cap = s->cap > 0 ? 2 * s->cap : 16;
    double *v = realloc(s->v, (size_t)cap * RIVER__SERIES_COLS * sizeof *v);
    if (v != NULL) {
      s->v = v;
      s->cap = cap;
    } else if (s->n > 0) {
      s->n--;   /* no room: this row replaces the last (so the last row
                   still gives the totals at the end) */
    } else {
      return;   /* none at all: the stats file gives a row of the
                   totals (flow_stats.c) */
    }
  }
  row = s->v + (size_t)s->n * RIVER__SERIES_COLS;
  river__series_fill(in, now - t0, row);
  s->n++;
}

void river__series_fill(const struct river__inst *in, double t, double *row)
{
  row[0] = t;
  row[1] = (double)in->st.records_in;
  row[2] = (double)in->st.bytes_in;
  row[3] = (double)in->st.records_out;
  row[4] = (double)in->st.bytes_out;
  row[5] = in->st.get_wait_seconds;
  row[6] = in->st.put_wait_seconds;
}

/* Keep rows 0, 2, 4, ... of in's. */
static void halve(struct river__series *s)
{
  int i;

  for (i = 1; 2 * i < s->n; i++)
    memcpy(s->v + (size_t)i * RIVER__SERIES_COLS,
           s->v + (size_t)2 * i * RIVER__SERIES_COLS,
           RIVER__SERIES_COLS * sizeof *s->v);
  s->n = (s->n + 1) / 2;
}

void river__series_tick(struct river__inst *in)
{
  struct river__run *r = in->ctx.flow->run;
  double now, cpu;
  int i, full = 0;

  if (r == NULL || r->series_every <= 0)
    return;
  now = river_wtime();
  r->series_ticks++;
  if (now < r->series_due)
    return;
  cpu = river__thread_cpu();
  for (i = 0; i < r->ninst; i++)
    if (!r->inst[i].series.ended) {
      take_row(&r->inst[i], r->series_t0, now);
      full |= r->inst[i].series.n >= SERIES_MAX;
    }
  if (full) {
    for (i = 0; i < r->ninst; i++)
      if (!r->inst[i].series.ended)
        halve(&r->inst[i].series);
    r->series_every *= 2;
  }
  /* The next step of the grid after now (a rank that took no row for a
   * while skips the steps it missed: its row says when it was taken). */
  r->series_due = r->series_t0 + r->series_every
                  * (double)((long long)((now - r->series_t0)
                                         / r->series_every) + 1);
  r->series_spent += river__thread_cpu() - cpu;
}

void river__series_report(const struct river__run *r)
{
  river_log(RIVER_LOG_DEBUG, "flow series: %llu ticks, rows took %.3f ms "
            "of CPU in %.3f s", (unsigned long long)r->series_ticks,
            1e3 * r->series_spent, river_wtime() - r->series_t0);
}

void river__series_end(struct river__inst *in)
{
  struct river__run *r = in->ctx.flow->run;

  if (r != NULL && !in->series.ended)
    take_row(in, r->series_t0, river_wtime());
  in->series.ended = 1;
}

void river__series_free(struct river__inst *in)
{
  free(in->series.v);
  memset(&in->series, 0, sizeof in->series);
}
