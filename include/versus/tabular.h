/* versus/tabular.h - CSV files to one-hot tabular data sets (the major/minor features of SNX).
 *
 * Two layers.  vs_csv_parse_* reads RFC 4180 text into a vs_csv_table of strings (quoted fields
 * with "" escapes, embedded delimiters and newlines, CRLF or LF, sniffed or chosen delimiter, or
 * whitespace-separated text).
 * vs_tabular_encode turns a table into a VS_DATA_TABULAR vs_dataset: every used column becomes one
 * major feature (a vs_feature_group) whose minor features are one-hot columns of X:
 *   categorical column "workclass" -> "workclass=Federal-gov", ..., "workclass=Private", ...
 *   numeric column "age"           -> "age < 25", "age in [25,32)", ..., "age >= 57"  (quantile bins)
 *   a missing value                -> its own minor feature "workclass=?" / "age=?"
 * so every row has exactly one 1 in every group.  vs_load_csv does both; vs_load_preset_tabular
 * knows the options for the shared Adult, Bank, COMPAS and Credit files.
 *
 * Ownership: a vs_csv_table owns its strings and is freed with vs_csv_table_free(); a vs_dataset
 * returned here is owned by the caller (vs_dataset_free()).  Option structs are only read. */
#ifndef VERSUS_TABULAR_H
#define VERSUS_TABULAR_H

#include <stddef.h>
#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct vs_csv_table;

/* The delimiter value for whitespace-separated text (UCI *.data files, fixed-width numbers): a run
 * of spaces and tabs is one separator, and blanks at the start and end of a line separate nothing. */
#define VS_CSV_WHITESPACE ' '

/* Keep (1) or drop (0) table row `row` before encoding (presets filter rows this way). */
typedef int (*vs_csv_row_filter)(const struct vs_csv_table *t, size_t row, void *ctx);

/* Options for parsing and encoding; start from vs_csv_opts_defaults().  Name lists are
 * NULL-terminated arrays of column names (after the renaming of duplicates described below). */
typedef struct vs_csv_opts {
    /* parsing (vs_csv_parse_mem / vs_csv_parse_file) */
    char delimiter;                    /* ',', ';', '\t', '|' or VS_CSV_WHITESPACE; 0 = sniff */
    int no_header;                     /* 1: the first record is data, columns are named c0, c1, ...;
                                          -1: it is the header; 0: sniffed - data when a column holds
                                          a number there and numbers in the records below it */
    const char *const *column_names;   /* names replacing the header's (or supplying them); NULL = keep */
    const char *const *missing;        /* tokens read as missing besides ""; NULL = {"?"}; {NULL} = none */
    size_t skip_lines;                 /* physical lines skipped before the first record */
    size_t max_rows;                   /* stop after this many data rows; 0 = all */

    /* encoding (vs_tabular_encode / vs_load_csv) */
    const char *label;                 /* label column by name; NULL = by label_index */
    long label_index;                  /* 0-based; negative counts from the end (-1 = last column) */
    const char *const *keep;           /* only these feature columns, in this order; NULL = all */
    const char *const *drop;           /* columns that are not features (ignored when keep is set) */
    const char *const *categorical;    /* columns treated as categorical even when numeric */
    int bins;                          /* quantile bins per numeric column; 0 = 5 */
    int numeric_min_distinct;          /* numeric needs more distinct values than this; 0 = 10 */
    int drop_missing_rows;             /* 1: rows with a missing feature or label are removed */
    size_t fit_rows;                   /* bin edges come from table rows [0, fit_rows); 0 = all rows */
    vs_csv_row_filter row_filter;      /* NULL = keep every row */
    void *row_filter_ctx;
} vs_csv_opts;

/* Defaults: sniffed delimiter and header, missing {"?"}, label = last column, 5 bins, threshold 10. */
vs_csv_opts vs_csv_opts_defaults(void);

/* A parsed CSV file: n_rows x n_cols strings.  Column names are made unique the pandas way: the
 * second "priors_count" becomes "priors_count.1".  Surrounding spaces/tabs of unquoted fields are
 * trimmed; a field that is empty or equal to a missing token is stored as NULL.  Whitespace-only
 * lines are skipped. */
typedef struct vs_csv_table {
    size_t n_rows, n_cols;
    char **names;             /* [n_cols] unique column names */
    char **cells;             /* [n_rows * n_cols] row-major, NUL-terminated; NULL = missing */
    int64_t *line;            /* [n_rows] 1-based line on which each row starts */
    const char **file;        /* [n_rows] file (or buffer name) each row comes from */
    char delimiter;           /* the delimiter used (given or sniffed) */
    const char *source;       /* name of the first file or buffer, for messages */
    /* storage, private */
    char **blocks;
    size_t n_blocks;
} vs_csv_table;

/* Parse len bytes of CSV text; `source` names the buffer in messages ("x.csv:7: ...").
 * On success *out is a new table; on failure *out is NULL and err says file:line and why. */
vs_status vs_csv_parse_mem(const char *data, size_t len, const char *source, const vs_csv_opts *o,
                           vs_csv_table **out, vs_error *err);
/* Read and parse the file at path (messages name path). */
vs_status vs_csv_parse_file(const char *path, const vs_csv_opts *o, vs_csv_table **out, vs_error *err);
/* Move the rows of *b (same number of columns) to the end of a; *b is freed and set to NULL. */
vs_status vs_csv_table_append(vs_csv_table *a, vs_csv_table **b, vs_error *err);
void vs_csv_table_free(vs_csv_table *t);
/* Index of the column named name, or -1. */
long vs_csv_column(const vs_csv_table *t, const char *name);
/* Cell (row, col): a string, or NULL when missing. */
const char *vs_csv_cell(const vs_csv_table *t, size_t row, size_t col);
/* Parse a whole cell as a finite number: 1 and *v set, or 0 (NULL, empty, trailing text, NaN/Inf). */
int vs_csv_number(const char *cell, double *v);

/* Encode table rows as a one-hot tabular data set named `name`.  Column kinds: numeric when every
 * present value is a finite number and there are more than numeric_min_distinct distinct values
 * (and the column is not listed in categorical), else categorical.  Numeric bin edges e_1<...<e_k
 * (k <= bins-1) are quantiles of the fit rows: e_j is the data value splitting the sorted values
 * nearest to fraction j/bins (ties stay in one bin; edges are deduplicated, empty bins dropped).
 * Categories and classes are sorted (numerically when all are numbers, else by strcmp).
 * y[i] = index of row i's label in class_names.  A missing label is an error naming file:line
 * unless drop_missing_rows is set.  Names in keep/drop/categorical must exist (else VS_ERR_ARG). */
vs_status vs_tabular_encode(const vs_csv_table *t, const vs_csv_opts *o, const char *name,
                            vs_dataset **out, vs_error *err);

/* vs_csv_parse_file + vs_tabular_encode; the data set is named after the file's base name. */
vs_status vs_load_csv(const char *path, const vs_csv_opts *o, vs_dataset **out, vs_error *err);

/* Load a shared data set by name: "adult" (adult.data), "adult-all" (adult.data then adult.test,
 * bins fitted on adult.data), "bank", "compas", "credit".  path_or_dir is the data set's folder or
 * file; NULL = $VERSUS_DATA/<folder> (adult, bank_marketing, compas, credit_default_taiwan). */
vs_status vs_load_preset_tabular(const char *name, const char *path_or_dir, vs_dataset **out,
                                 vs_error *err);
/* NULL-terminated list of the preset names. */
const char *const *vs_tabular_preset_names(void);
/* One paragraph about a preset: source, rows, classes with counts, features and why some are left
 * out; NULL for an unknown name. */
const char *vs_tabular_preset_description(const char *name);

#ifdef __cplusplus
}
#endif
#endif
