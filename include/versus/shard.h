/* versus/shard.h - long runs over independent items (rows, pairs): shards, per-item seeds, a journal
 * of finished items for --resume, partial results and their merge.
 *
 * A verb or an experiment that loops over n items opens a vs_run.  The run owns one file, its
 * journal: a header (the command's words, seed, version, item count, shard) and one record per
 * finished item (the item's results as bytes, written by the caller with vs_item_buf).  Each record
 * is one append (write) carrying its length and a checksum, so a run killed at any moment (SIGKILL)
 * leaves a journal whose complete records are all valid; reopening it with resume keeps them, cuts
 * off a torn last record, and the caller computes only the missing items.  Appends are not fsync'd
 * one by one (a kill does not lose the page cache; a power cut may lose the last records, which are
 * then done again); vs_run_finish flushes the journal to disk.
 *
 * Sharding: shard K of N does the contiguous items [floor((K-1) n / N), floor(K n / N)).  Its journal,
 * once every item of its range is in, is the shard's partial result.  vs_run_merge checks a set of
 * parts (one command, seed and version, shards 1..N each once, each complete) and writes their union
 * as the journal of a whole run; resuming that run finds every item done and writes exactly the
 * files a single run writes.  Item randomness must come from vs_item_seed(seed, item), never from a
 * generator shared across items, so that any N (and any thread count) gives the same bits.
 *
 * Ownership: a vs_run is freed by vs_run_free (which closes the journal and keeps it); payloads
 * returned by vs_run_get are the run's, valid until vs_run_free.  vs_item_buf data is the caller's
 * (vs_item_buf_clear).  Errors name the file and what was expected. */
#ifndef VERSUS_SHARD_H
#define VERSUS_SHARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shards and seeds ---------------------------------------------------------------------------- */

typedef struct vs_shard {
    int64_t k, n;               /* shard k of n, 1 <= k <= n; {1, 1}: every item */
} vs_shard;

/* "K/N" with 1 <= K <= N <= 1000000 into *out; VS_ERR_ARG with a message otherwise. */
vs_status vs_shard_parse(const char *text, vs_shard *out, vs_error *err);
/* Items of shard s among n_items: [begin, end), begin = floor((k-1) n_items / n), end = floor(k n_items / n). */
void vs_shard_range(vs_shard s, int64_t n_items, int64_t *begin, int64_t *end);
/* Seed of item i of a run seeded with seed: splitmix64(seed ^ splitmix64(i)); never 0-correlated. */
uint64_t vs_item_seed(uint64_t seed, int64_t item);

/* ---- item payloads: little-endian arrays, bit for bit ------------------------------------------- */

typedef struct vs_item_buf {
    unsigned char *data;
    size_t len, cap;
    bool oom;                   /* a put ran out of memory: vs_run_put refuses the buffer */
} vs_item_buf;

void vs_item_put_f32(vs_item_buf *b, const float *x, size_t n);
void vs_item_put_f64(vs_item_buf *b, const double *x, size_t n);
void vs_item_put_i64(vs_item_buf *b, const int64_t *x, size_t n);
void vs_item_buf_reset(vs_item_buf *b);   /* len = 0, memory kept */
void vs_item_buf_clear(vs_item_buf *b);   /* frees the memory */

/* Reading a payload back in the order it was put; a read past the end sets bad and fills zeros. */
typedef struct vs_item_reader {
    const unsigned char *p;
    size_t len, pos;
    bool bad;
} vs_item_reader;

void vs_item_get_f32(vs_item_reader *r, float *x, size_t n);
void vs_item_get_f64(vs_item_reader *r, double *x, size_t n);
void vs_item_get_i64(vs_item_reader *r, int64_t *x, size_t n);

/* ---- runs and their journals --------------------------------------------------------------------- */

typedef struct vs_run_opts {
    const char *path;           /* the journal (with a shard: the part file) */
    const char *verb;           /* the CLI verb ("attribute", "bench", ...) */
    int argc;                   /* the words after the verb, as given; --shard, --resume and --threads */
    char *const *argv;          /* are dropped, and --out's value is ignored when runs are compared */
    uint64_t seed;
    vs_shard shard;             /* {0, 0} or {1, 1} without sharding */
    bool sharded;               /* --shard given: the journal is the run's only output */
    bool resume;                /* keep the finished items of path's journal (same command required) */
    const char *unit;           /* "rows", "pairs": the progress lines' word for items */
    FILE *progress;             /* items done, rate and time left, at most once a second; NULL: quiet */
} vs_run_opts;

typedef struct vs_run vs_run;

/* Open the run of n_items: with resume and an existing journal at o->path, check that it is this
 * command's (same words, seed, version, items and shard; the message names what differs) and load
 * its finished items; otherwise start a new journal there. */
vs_status vs_run_open(const vs_run_opts *o, int64_t n_items, vs_run **out, vs_error *err);
/* The run's items, all shards', and this process's: [vs_run_begin, vs_run_end). */
int64_t vs_run_items(const vs_run *r);
int64_t vs_run_begin(const vs_run *r);
int64_t vs_run_end(const vs_run *r);
bool vs_run_sharded(const vs_run *r);
/* The payload of a finished item (borrowed), or NULL when item is still to do. */
const unsigned char *vs_run_get(const vs_run *r, int64_t item, size_t *len);
/* Record item as finished with its payload: one append to the journal, then a progress line when
 * due.  Refuses items outside the range, repeated items and an out-of-memory buffer. */
vs_status vs_run_put(vs_run *r, int64_t item, const vs_item_buf *payload, vs_error *err);
/* Items of the range still to do. */
int64_t vs_run_missing(const vs_run *r);
/* A whole run has written its final files: remove the journal (with a shard: flush it and keep it,
 * it is the result). */
vs_status vs_run_finish(vs_run *r, vs_error *err);
void vs_run_free(vs_run *r);    /* NULL is fine; keeps the journal on disk */

/* ---- partial results ------------------------------------------------------------------------------ */

/* What a journal's header says. */
typedef struct vs_run_header {
    char *verb;
    int argc;
    char **argv;                /* the words after the verb, --shard/--resume/--threads dropped */
    uint64_t seed;
    char *version;
    int64_t items;
    vs_shard shard;
} vs_run_header;

void vs_run_header_clear(vs_run_header *h);

/* Check parts[0..n_parts) (journals of shards 1..N of one command, each complete) and write their
 * items, in order, as the journal of the whole run at journal_path (atomically).  *h receives the
 * command with --out's value replaced by out, for the caller to run again with --resume.  Mixed
 * commands, seeds, versions or item counts, missing or repeated shards and incomplete parts are
 * refused (VS_ERR_ARG) with a message naming the parts. */
vs_status vs_run_merge(const char *const *parts, int n_parts, const char *out, const char *journal_path, vs_run_header *h,
                       vs_error *err);
/* The same, with check(ctx, h, err) run on the command (the parts are data) before anything is
 * written: it may refuse it (nothing is written then) or rewrite h->argv, which the merged journal
 * then records (so the resumed command matches it). */
typedef vs_status (*vs_run_check_fn)(void *ctx, vs_run_header *h, vs_error *err);
vs_status vs_run_merge_checked(const char *const *parts, int n_parts, const char *out, const char *journal_path,
                               vs_run_check_fn check, void *ctx, vs_run_header *h, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
