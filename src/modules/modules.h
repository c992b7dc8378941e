/*
 * modules.h - what the built-in modules (src/modules/) share: each
 * file's registration function, called from builtin.c, and the
 * order-independent content digest that count (and the tests) use.
 * The modules are written against River's public API alone (this
 * header includes nothing else), so that each can serve as an example
 * of a user's module.
 */
#ifndef RIVER_MODULES_H
#define RIVER_MODULES_H

#include <river.h>
#include <river/flow.h>
#include <river/module.h>

#include <stddef.h>
#include <stdint.h>

/* Register every built-in module (builtin.c). The module registry
 * (src/module.c) calls it once, on first use: the one call from the
 * library into this directory. */
void river__modules_builtin(void);

void river__module_gen(void);    /* gen.c */
void river__module_count(void);  /* count.c: count, null */
void river__module_null(void);   /* count.c */
void river__module_coll_read(void);   /* coll.c */
void river__module_coll_write(void);  /* coll.c */
void river__module_file_read(void);   /* file.c */
void river__module_file_write(void);  /* file.c */
void river__module_stdin(void);       /* stdio.c */
void river__module_stdout(void);      /* stdio.c */
void river__module_sort(void);   /* sort.c */
void river__module_merge(void);  /* merge.c */
void river__module_coll_merge(void);  /* merge.c */
void river__module_partition(void); /* partition.c */
void river__module_filter(void); /* filter.c */
void river__module_join(void);   /* join.c */

/* An order-independent digest of records: their number, and the sum and
 * xor of their CRC32Cs (a record lost and another duplicated change the
 * sum or the xor unless their CRCs collide). */
struct river__digest {
  uint64_t records, sum, xor_;
};

void river__digest_add(struct river__digest *d, const void *records,
                       size_t n, size_t record_size);

/* ----------------------------------------------------------- file.c */

/* The file: endpoints of coll_read and coll_write (`coll: file:PATH`;
 * path is PATH). Check time: the schema of the records of file path,
 * the stage's `schema` argument (default gensort's), if it is a regular
 * file of whole records. */
int river__file_schema(river_ctx *ctx, const char *path,
                       river_schema **schema);
/* Read instance i's slice of the file, records [N i/n, N (i+1)/n), onto
 * output 0, charging the stage's emulated disk i. */
int river__file_read_slice(river_ctx *ctx, const char *path);
/* Write input 0 into the one file path: each message at the position its
 * tag gives (river_get_tag: a sorted run's first record), continuing
 * from there for the messages that follow with the same tag; untagged
 * input in arrival order (one instance only). Written under a temporary
 * name and renamed over path once every instance is done (fsynced first
 * if the `sync` argument is set). Collective over the stage. */
int river__file_write_placed(river_ctx *ctx, const char *path);

/* Whether path may be written (file.c): absent, or with replace a
 * regular file; else RIVER_EEXIST, said through ctx. */
int river__file_replaceable(river_ctx *ctx, const char *path, int replace);

/* ---------------------------------------------------------- radix.c */

/* river_key, river_key_of, river_key_norm: river/schema.h. */

/* Stable LSD radix sort of n records at recs by key k: order[i] gets the
 * index of the i-th record in key order. It allocates 2 n (k->size + 8)
 * bytes while it runs. RIVER_ENOMEM if it cannot. */
int river__radix_order(const river_key *k, const void *recs,
                       size_t n, size_t *order);

#endif /* RIVER_MODULES_H */
