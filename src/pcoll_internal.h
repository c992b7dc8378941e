/*
 * pcoll_internal.h - what the files of parallel collections share and
 * nothing else sees: the handle, the path limits, and the river__pcoll_*
 * functions one file provides to another.
 *
 *   pcoll.c        lifecycle, write, block reads, verify
 *   pcoll_commit.c the commit protocol
 *   pcoll_open.c   a reader's open: the metadata and the copies' files
 *                  this rank reads, held open against concurrent commits
 *                  and removes
 *   pcoll_remove.c remove; a partition's files; where a collection is
 *   pcoll_lock.c   the writers' lock of a name
 *   pcoll_gc.c     leftovers under a root (gc, purge)
 *   pcoll_outside.c  what a root records of things outside it: scratch
 *                  claims, and gc's scan of those records (outputs'
 *                  temporaries, scratch collections)
 *   pcoll_meta.c   the HDF5 metadata file (the only file that speaks HDF5)
 *   pcoll_seal.c   its River header: the whole file's checksum, and where
 *                  River's own record of the metadata lies
 *   pcoll_path.c   names, the root, disk patterns, file names, listing
 *   pcoll_ship.c   node-local disks: copies sent to their disk's node at
 *                  the commit
 *   pcoll_layout.c which records a partition holds, stripe order
 *
 * A partition copy is a single-disk collection, and the two are one
 * concept (doc/collections.md): this header includes
 * collection_internal.h, whose river__coll_* calls pcoll.c, pcoll_open.c
 * and pcoll_commit.c use beyond river/collection.h.
 */
#ifndef RIVER_PCOLL_INTERNAL_H
#define RIVER_PCOLL_INTERNAL_H

#include "river_internal.h"
#include "collection_internal.h"
#include "file_internal.h"

#include <sys/types.h>

#define RIVER_PCOLL_FORMAT 3      /* metadata format written and read */
#define RIVER_PCOLL_SEAL_SIZE 512 /* the smallest user block of a metadata
                                     file (HDF5's); pcoll_seal.c */
#define RIVER_PCOLL_SEAL_HDR 64   /* its River header; the record follows */
#define RIVER_PCOLL_META_MAX (1ULL << 30) /* largest metadata file written
                                     or read (bytes) */
#define RIVER_PCOLL_ROOT_MAX (RIVER_PATH_MAX / 2) /* the rest is for the
                                     disk pattern and file names */
#define RIVER_PCOLL_NODE_LEN 256   /* a node's name, NUL included */
#define RIVER_PCOLL_PATH_LEN (RIVER_PCOLL_NAME_MAX + 64) /* a data file's
                                     name relative to its disk */

/* Which file a path named when looked at (exists 0: none). */
struct river__file_id {
  int exists;
  unsigned long long dev, ino;
};

/* A partition begun with river_pcoll_begin_partition and ended (by the
 * next one or the commit): its files written out under provisional
 * names, renamed at the commit. */
struct river__wpart {
  river_coll **copies;          /* replication finished writers; NULL
                                   entries once renamed */
  unsigned char *keys;          /* its key min then max */
  uint64_t order;
  uint64_t nrecords;
  int ordered_ok;
  int final;                    /* its partition number, once known */
};

/*
 * The handle: what the metadata says (info, schema, the partition table),
 * plus, for a writer, this rank's open copies and running key range and,
 * for a reader, a slot per (partition, copy) file, holding its
 * descriptor if it was opened with the metadata (pcoll_open.c), and a
 * handle per copy made when it is first read.
 */
struct river_pcoll {
  MPI_Comm comm;
  int rank, size;
  int writing;
  char root[RIVER_PATH_MAX];
  char disks[RIVER_PATH_MAX];   /* pattern as recorded (may be relative) */
  river_schema *schema;
  size_t key_off, key_size;
  river_pcoll_info info;
  river_pcoll_part *parts;      /* npartitions entries (reader; a writer's
                                   rank 0 fills them at commit) */
  int direct_io;
  int exclusive;           /* writer: never replace (river_pcoll_opts) */
  int meta_level;               /* what a metadata read that fails says
                                   it at: RIVER_LOG_ERROR (0, the
                                   default), or RIVER_LOG_WARN where the
                                   caller copes and says its own error
                                   when it fails (river__pcoll_where) */
  uid_t meta_uid;               /* the owner of the metadata file read
                                   (river__pcoll_meta_read) */
  /* writer */
  int lock_fd;                  /* rank 0: the writers' lock, else -1 */
  struct river__file_id prev;   /* rank 0: the metadata file this write
                                   replaces, checked again just before
                                   the commit */
  int record;                   /* rank 0: this write's record exists
                                   (pcoll_record.c) */
  river_coll **wcopies;         /* replication entries */
  char wpath[RIVER_PCOLL_PATH_LEN];
  uint64_t wcount;
  unsigned char *key_min, *key_max, *key_last; /* key_size bytes each */
  int ordered_ok;
  int failed;                   /* river_pcoll_begin_partition failed:
                                   only the commit (which fails) or close
                                   is left */
  /* writer of partitions begun with river_pcoll_begin_partition: the
   * current one in wcopies... above, the finished ones here */
  int keyed;                    /* this rank began one */
  uint64_t worder;              /* the current one's order */
  struct river__wpart *wparts;
  int nwparts, wparts_cap;
  /* reader */
  int hold;                     /* river_pcoll_hold: what the open held */
  int pin;                      /* rank 0: the metadata file read, held
                                   open (so its inode number cannot be
                                   reused) to check that a later hold
                                   (river_pcoll_hold_partitions) still
                                   has it; else -1 */
  unsigned long long pin_dev, pin_ino;  /* rank 0: which file pin is */
  unsigned char *held;          /* node-local disks held by a
                                   RIVER_PCOLL_HOLD_SERVED open: whether
                                   this rank's node held each disk then
                                   (ndisks entries), else NULL: looked at
                                   when asked (river_pcoll_disk_ranks) */
  size_t nslots;                /* npartitions * replication: the size of
                                   the three arrays below */
  river__file *rfiles;          /* each copy's file, opened with the
                                   metadata or by a later hold; fd -1 and
                                   nothing recorded: open it when read
                                   (not held, or over the budget) */
  river_coll **rcopies;         /* handles made when a copy is first read */
  unsigned char *rbad;          /* nonzero: that copy failed to open or
                                   match; -(the error code) */
  /* node-local disks (a pattern with %n; pcoll_ship.c) */
  char *nodes;                  /* size names of RIVER_PCOLL_NODE_LEN
                                   bytes: each rank's node, or NULL */
  char **shipped;               /* final paths of copies this rank
                                   received at the commit */
  int nshipped;
};

/* ------------------------------------------------------- pcoll_path.c */

/* Check a disk pattern: exactly one %d, at most one %n, otherwise only
 * %%, no ".." component. RIVER_SUCCESS or RIVER_EINVAL with a logged
 * reason. */
int river__pcoll_check_disks(const char *pat);

/* 1 if pattern pat has %n: its disks are node-local (each node expands
 * it with its own name and sees only its own disks' files). */
int river__pcoll_node_local(const char *pat);

/* The disk pattern of a write given none: $RIVER_DISKS if set and not
 * empty, else RIVER_PCOLL_DEFAULT_DISKS. */
const char *river__pcoll_default_disks(void);

/* This process's node name (river_node_name) into buf, checked to be
 * one path component: RIVER_EINVAL (logged) if not. */
int river__pcoll_this_node(char *buf, size_t size);

/* The root directory opts selects into root: opts->root, else
 * $RIVER_ROOT if set and not empty, else RIVER_PCOLL_DEFAULT_ROOT.
 * RIVER_EINVAL (logged) for an empty opts->root or a root longer than
 * RIVER_PCOLL_ROOT_MAX bytes (or size - 1): never cut short. */
int river__pcoll_resolve_root(const river_pcoll_opts *opts, char *root,
                              size_t size);

/* Disk d's directory: pattern pat with d for its %d and this node's name
 * for its %n, under root when pat is relative. RIVER_EOVERFLOW if it does not fit size bytes. */
int river__pcoll_disk_dir(const char *root, const char *pat, int d,
                          char *buf, size_t size);

/* The full path of a file named `file` on disk d of root and pattern. */
int river__pcoll_file_path(const char *root, const char *pat, int d,
                           const char *file, char *buf, size_t size);

/* The metadata file of collection `name` under root; tmp_gen != NULL:
 * a temporary name write tmp_gen writes it under before the rename
 * into place (with a fresh random tag: a new name at each call, which
 * no one can guess and plant a link at). */
int river__pcoll_meta_path(const char *root, const char *name,
                           const char *tmp_gen, char *buf, size_t size);

/* 16 random lowercase hex digits and a NUL (getrandom; where there is
 * none, a unique value mixed from the time, the pid and a counter). */
void river__pcoll_random_tag(char out[17]);

/* 1 if gen is a write generation as River makes them (river__pcoll_
 * random_tag: exactly 16 lowercase hex digits), 0 if not. Data file
 * names carry the generation, so a reader accepts no other from a
 * metadata file or write record (a sealed file may still be forged: a
 * generation holding "/.." would name a file outside the root). */
int river__pcoll_is_generation(const char *gen);

/* The record of write `gen` of collection `name` under root
 * (pcoll_record.c). */
int river__pcoll_record_path(const char *root, const char *name,
                             const char *gen, char *buf, size_t size);

/* The lock file of collection `name` under root (pcoll_lock.c). */
int river__pcoll_lock_path(const char *root, const char *name, char *buf,
                           size_t size);

/* The mkstemp template a stream staged for collection `name` uses. */
int river__pcoll_staging_path(const char *root, const char *name, char *buf,
                              size_t size);

/* What a directory entry is to River (river__pcoll_parse_entry). */
enum river__pcoll_file {
  RIVER__PCOLL_OTHER,     /* not River's */
  RIVER__PCOLL_META,      /* root: NAME.h5 */
  RIVER__PCOLL_META_TMP,  /* root: .tmp.NAME.GEN[.TAG].h5 */
  RIVER__PCOLL_LOCK,      /* root: .NAME.lock */
  RIVER__PCOLL_STAGING,   /* root: .NAME.copy-in.XXXXXX */
  RIVER__PCOLL_DATA,      /* disk: NAME.pP.GEN.rdat */
  RIVER__PCOLL_DATA_TMP,  /* disk: NAME.pP.GEN[.TAG].rdat.tmp */
  RIVER__PCOLL_RECORD     /* root: .NAME.GEN.write (last: gc removes
                             it after the files it claims) */
};

/* The parts of a River file name: the collection, the partition (-1 if
 * none) and the generation ("" if none). */
struct river__pcoll_entry {
  char name[RIVER_PCOLL_NAME_MAX + 1];
  int part;
  char gen[17];
};

/* Classify a name found in a root directory (in_root) or a disk
 * directory, filling e. Every format above is parsed here once. */
enum river__pcoll_file river__pcoll_parse_entry(const char *entry,
                                                int in_root,
                                                struct river__pcoll_entry *e);

/* The name (relative to its disk) of partition p's data file in the
 * write `gen` of collection `name`. */
int river__pcoll_data_name(const char *name, int p, const char *gen,
                           char *buf, size_t size);

/* The same while it is written: a fresh temporary name (random tag) at
 * each call. */
int river__pcoll_data_tmp_name(const char *name, int p, const char *gen,
                               char *buf, size_t size);

/* mkdir -p path (mode 0777 & ~umask); RIVER_EIO logged on failure. */
int river__pcoll_mkdirs(const char *path);

/* Make disk directory dir (mkdir -p) and check that River may write in
 * it: a symbolic link there is followed only if it is the caller's own
 * or root's (as Linux's protected_symlinks rule for sticky directories);
 * RIVER_EACCES (logged, naming it) if another user's, RIVER_EIO if it
 * is no directory. */
int river__pcoll_disk_ready(const char *dir);

/* ------------------------------------------------------------ pcoll.c */

/* Free a handle, whatever state it is in (releases a writer's lock). */
void river__pcoll_free(river_pcoll *pc);

/* Close the current partition's files: abandoned (keep 0: their
 * temporary files removed), or written out and moved to a new entry of
 * pc->wparts (keep 1). */
int river__pcoll_end_partition(river_pcoll *pc, int keep);

/* Which file path names now (exists 0 if none). */
struct river__file_id river__pcoll_file_id(const char *path);

/* ----------------------------------------------------- pcoll_remove.c */

/* What a collection's metadata says about where its files are. */
struct river__pcoll_where {
  int npartitions, ndisks, replication;
  int any_disk;          /* some partition's first copy is not on disk
                            p mod ndisks (partitions begun by writers):
                            look for files on every disk */
  char generation[17];
  char disks[RIVER_PATH_MAX];
  uid_t owner;           /* the metadata file's owner: not the caller's
                            effective user, its word moves no file
                            (river__pcoll_foreign) */
};

/* 1 if w was read from a metadata file the caller's effective user does
 * not own (root included). The seal has no secret, so anyone who can
 * create a file in a shared root can write metadata naming any
 * generation and disk directory: River removes no data file on the word
 * of such a file (rm refuses, rm --force and a replacing write leave the
 * files it names outside the root's own directories). */
int river__pcoll_foreign(const struct river__pcoll_where *w);

/* "user NAME (uid N)", or "uid N" where the name cannot be had, into
 * buf (for messages). */
void river__pcoll_owner_name(uid_t uid, char *buf, size_t size);

/* Remove this rank's files of write gen of partition p of collection
 * name (ndisks disks, repl copies from disk p mod ndisks, or any_disk:
 * wherever they are) under root and disk pattern disks; failures are
 * warnings. */
void river__pcoll_remove_files(const char *root, const char *disks,
                               const char *name, int p, const char *gen,
                               int ndisks, int repl, int any_disk);

/* Read collection name's metadata under root into *w (one process, no
 * communicator): RIVER_SUCCESS, RIVER_ENOTFOUND (no metadata file,
 * not logged), or the error river_pcoll_open would give (logged). */
int river__pcoll_where(const char *root, const char *name,
                       struct river__pcoll_where *w);

/* ------------------------------------------------------- pcoll_lock.c */

/* river__pcoll_lock's flags. */
enum {
  RIVER__LOCK_QUIET = 1,    /* do not log RIVER_EBUSY (the caller says
                               what it does instead) */
  RIVER__LOCK_REQUIRED = 2  /* no locks on this file system: fail with
                               RIVER_ENOTSUP instead of going on with a
                               warning (for removing what a writer might
                               still need) */
};

/* Take collection name's writers' lock under root (which must exist)
 * without waiting: *fd is the lock's descriptor, kept until
 * river__pcoll_unlock. RIVER_EBUSY (logged unless RIVER__LOCK_QUIET:
 * "collection X is in use") if another job holds it; RIVER_EIO /
 * RIVER_EACCES (logged) if the lock file cannot be opened. */
int river__pcoll_lock(const char *root, const char *name, int flags,
                      int *fd);

/* Release a lock from river__pcoll_lock (fd < 0: nothing); remove_file:
 * unlink the lock file first (no collection of that name is left). */
void river__pcoll_unlock(int fd, const char *root, const char *name,
                         int remove_file);

/* 1 if another open file description holds a write lock on path (a
 * stream being staged by the river command holds one). */
int river__file_in_use(const char *path);

/* ----------------------------------------------------- pcoll_record.c */

/* What a write's record says: its generation and where its data files
 * go. */
struct river__pcoll_record {
  char generation[17];
  char disks[RIVER_PATH_MAX];
  int ndisks;
};

/* Rank 0 of a writer, before any data file exists: create the record
 * of write pc->info.generation (O_EXCL|O_NOFOLLOW) naming pc->disks and
 * pc->info.ndisks, and fsync it; pc->record set. Errors logged. */
int river__pcoll_record_create(river_pcoll *pc);

/* Rank 0, after every rank has removed or committed its files: remove
 * the record (if pc->record). */
void river__pcoll_record_remove(river_pcoll *pc);

/* Read the record at path (a regular file, not followed if a link) into
 * *r: RIVER_SUCCESS, or RIVER_ECORRUPT for anything else (not logged:
 * gc then judges it by its name alone). */
int river__pcoll_record_read(const char *path, struct river__pcoll_record *r);

/* ---------------------------------------------------- pcoll_outside.c */

/* How gc removes a whole collection (river_pcoll_purge's shape). */
typedef int (*river__purge_fn)(const char *name,
                               const river_pcoll_opts *opts,
                               river_pcoll_leftover_fn report, void *arg,
                               uint64_t *nfiles, uint64_t *nbytes);

/* List (and remove, if asked) the temporaries outside root that dead
 * jobs' river_outfile left, and the scratch collections dead jobs'
 * river_pcoll_scratch_claim named, from root's records (river_pcoll_gc's
 * part for them; opts: the caller's, passed to purge, which removes a
 * dead job's scratch collection: the records know what to remove, gc
 * how): adds to *nfiles and *nbytes. */
int river__pcoll_outside_gc(const river_pcoll_opts *opts, const char *root,
                            int remove,
                            river_pcoll_leftover_fn report, void *arg,
                            river__purge_fn purge, uint64_t *nfiles,
                            uint64_t *nbytes);

/* ------------------------------------------------------- pcoll_meta.c */

/* Write pc's metadata file at path (rank 0 at commit) from pc->info,
 * pc->schema, pc->disks and pc->parts; keys holds each partition's
 * smallest then largest key (2 * key_size bytes per partition). fsyncs
 * the file. Errors are logged. */
int river__pcoll_meta_write(const river_pcoll *pc, const char *path,
                            const unsigned char *keys);

/* Read and check the metadata file at path into pc (info but the name,
 * schema, key_off/key_size, parts, and disks unless keep_disks). HDF5's
 * own error printing is off meanwhile. RIVER_ECORRUPT (logged) if the
 * file cannot be read or contradicts itself; RIVER_ENOMEM. */
int river__pcoll_meta_read(river_pcoll *pc, const char *path,
                           int keep_disks);

/* Read the metadata file at path, unparsed, into *img (malloc'd, *len
 * bytes) and its owner into pc->meta_uid, as river__pcoll_meta_read does
 * before parsing (a regular file only, never a FIFO; errors logged). */
int river__pcoll_meta_image(river_pcoll *pc, const char *path,
                            unsigned char **img, size_t *len);

/* Parse the metadata file image img (len bytes, as read from path) into
 * pc, as river__pcoll_meta_read does after reading the file: the seal is
 * checked, then River's record parsed (never the HDF5 part). Errors are
 * logged. */
int river__pcoll_meta_parse(river_pcoll *pc, const char *path,
                            const void *img, size_t len, int keep_disks);

/* ------------------------------------------------------- pcoll_seal.c */

/* The user block size of a metadata file whose River record is reclen
 * bytes: the smallest power of two >= RIVER_PCOLL_SEAL_SIZE that holds
 * the header and the record (> RIVER_PCOLL_META_MAX if none does). */
size_t river__pcoll_seal_ub(size_t reclen);

/* Seal the metadata file image img of len bytes: its first
 * RIVER_PCOLL_SEAL_HDR bytes become River's header, saying the user
 * block is ub bytes and the record (already at img +
 * RIVER_PCOLL_SEAL_HDR) reclen bytes, with the CRC32C of the whole. */
void river__pcoll_seal(unsigned char *img, size_t len, size_t ub,
                       size_t reclen);

/* Check the seal of the image img of len bytes, reading nothing past
 * img[len - 1]: RIVER_SUCCESS with *reclen (the record at img +
 * RIVER_PCOLL_SEAL_HDR, inside the image) if intact; RIVER_EFORMAT (an
 * older or other metadata format) or RIVER_ECORRUPT, with the reason (a
 * phrase that follows the file's name) in why (n bytes). Logs nothing. */
int river__pcoll_seal_check(const unsigned char *img, size_t len,
                            size_t *reclen, char *why, size_t n);

/* ------------------------------------------------------- pcoll_open.c */

/* The reader's part of river_pcoll_open, collective over pc->comm: read
 * the metadata at path (as river__pcoll_meta_read) and open the copies'
 * files pc->hold names within the descriptor budget, starting again (a
 * few times, then RIVER_EAGAIN, logged) while a commit or remove changes
 * the metadata meanwhile. Rank 0 keeps the metadata file open (pc->pin).
 * Returns the agreed code; on failure pc may hold partial state for
 * pcoll_free. */
int river__pcoll_open_reader(river_pcoll *pc, const char *path,
                             int keep_disks);

/* Close and free what a reader holds: its copies (handles first, then
 * their descriptors; pc->rcopies etc. are NULL after) and rank 0's pin
 * of the metadata file. */
void river__pcoll_drop_reader(river_pcoll *pc);

/* A handle for copy c of partition p at path: on the descriptor opened
 * with the metadata, or the failure met then reported now at level, or
 * (a copy over the budget) opened now. Failures are logged at level. */
int river__pcoll_open_slot(river_pcoll *pc, int p, int c, const char *path,
                           const river_coll_opts *co, int level,
                           river_coll **out);

/* ------------------------------------------------------- pcoll_ship.c */

/* Collective over comm: every rank's node name (RIVER_PCOLL_NODE_LEN
 * bytes each, in rank order) into *names (malloc'd; NULL on failure). */
int river__gather_nodes(MPI_Comm comm, char **names);

/* Rank's index among the ranks of its node in names (size of them), and
 * their number. */
void river__node_slot(const char *names, int rank, int size, int *index,
                      int *count);

/* Collective: every rank's node name into pc->nodes. */
int river__pcoll_gather_nodes(river_pcoll *pc);

/* Collective, at the commit once every file has its final name: with a
 * node-local pattern (%n), send each copy of this rank's partitions
 * (parts, nparts) whose disk d belongs to another node (that of rank d
 * mod size) to that rank, which writes it into its node's directory;
 * then remove this node's copies of them. Nothing to do without %n.
 * The same outcome on every rank. */
int river__pcoll_ship(river_pcoll *pc, const int *parts, int nparts);

/* A commit that failed after the shipping: remove what this rank
 * received. */
void river__pcoll_ship_undo(river_pcoll *pc);

/* Free what the shipping kept (with the handle). */
void river__pcoll_ship_free(river_pcoll *pc);

/* This rank's index among the ranks of its node, and their number
 * (after river__pcoll_gather_nodes; RIVER_EINVAL before). */
int river__pcoll_node_slot(const river_pcoll *pc, int *index, int *count);

#endif /* RIVER_PCOLL_INTERNAL_H */
