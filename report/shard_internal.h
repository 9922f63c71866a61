/* report/shard_internal.h - the journal file format shared by runs (shard.c) and their merge
 * (shard_merge.c).  Private.
 *
 * A journal is a sequence of records: "VSJ1", item (int64 LE; -1 for the header), payload length
 * (uint64 LE), the payload, and an FNV-1a 64 checksum (LE) of item, length and payload.  The first
 * record is the header, a JSON object (format "versus-journal/1": verb, argv, seed, version, items,
 * shard [k, n]).  Reading stops at the first record that is cut short or fails its checksum. */
#ifndef VERSUS_REPORT_SHARD_INTERNAL_H
#define VERSUS_REPORT_SHARD_INTERNAL_H

#include "versus/shard.h"

#include <stdio.h>

#define JOURNAL_FORMAT "versus-journal/1"
#define JOURNAL_MAGIC "VSJ1"
#define JOURNAL_FRAME 28 /* magic, item, length, checksum */

/* A journal read back: its header and the payloads of its finished items (pointing into buf). */
typedef struct journal {
    vs_run_header h;
    int64_t begin, end;          /* the shard's items */
    const unsigned char **data;  /* [end - begin]; NULL: not finished */
    size_t *len;
    int64_t done;
    size_t valid;                /* bytes up to the end of the last valid record */
    bool torn;                   /* bytes after it (a record cut short by a kill) */
    unsigned char *buf;          /* the file */
} journal;

/* Read path; errors name it (a file that is not a journal, a header without its fields). */
vs_status journal_read(const char *path, journal *j, vs_error *err);
void journal_clear(journal *j);

/* One framed record into a new buffer (caller frees); NULL when out of memory. */
unsigned char *journal_record(int64_t item, const unsigned char *payload, size_t len, size_t *out_len);
/* The header's JSON text (caller frees), or NULL when out of memory. */
char *journal_header_text(const vs_run_header *h);
/* Copy argv without --shard, --resume and --threads (and their values) into h. */
vs_status journal_set_argv(vs_run_header *h, int argc, char *const *argv, vs_error *err);
/* Whether two headers name the same command: verb and words equal, --out's value aside.  When not,
 * what differs into why. */
bool journal_same_command(const vs_run_header *a, const vs_run_header *b, char *why, size_t n);

#endif
