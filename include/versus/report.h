/* versus/report.h - an experiment's results as data, and the writers that turn them into pages.
 *
 * An experiment (explain/experiment_*.c) returns a vs_report: a flat sequence of blocks (headings,
 * paragraphs, bullet lists, tables, figures) plus its raw numbers as a JSON object (`data`, in the
 * experiment's own format: settings, per-pair values).  Tables hold typed cells: numbers with a
 * spread, rank marks (best, runner-up) and the direction of their column (lower or higher is
 * better); p-values with a significance mark; text; and missing values, which are a kind of their
 * own carrying a footnote - a page never shows NaN or a -1 sentinel.  A number set to NaN becomes a
 * missing cell.  Figures are data too: line and bar plots (drawn by versus/plot.h) and node-link
 * drawings of a graph with one panel per edge weighting (vs_graph_plot), and matrices (an [F, F]
 * interaction matrix, a query x retrieved correspondence) drawn as heatmaps on a diverging
 * colour-blind-safe scale centred at 0 with a colour bar; each figure has a file stem and a caption
 * saying what to see.  Text may use `code` and **bold**.
 *
 * Writers: Markdown (figures linked as STEM.svg), JSON (the data object plus a "report" member with
 * every block; vs_report_from_json reads it back), one SVG per figure, and one self-contained HTML
 * page (inline CSS, figures inlined as SVG; no script, no network).
 *
 * Ownership: the caller frees a report with vs_report_free.  Builders copy their strings and
 * arrays; the tables and figures they return are borrowed, valid until vs_report_free.  The JSON
 * given to vs_report_set_data becomes the report's.  Builders never fail loudly: running out of
 * memory marks the report, and every writer then fails with VS_ERR_NOMEM. */
#ifndef VERSUS_REPORT_H
#define VERSUS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "versus/error.h"
#include "versus/json.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum vs_better {
    VS_BETTER_NONE = 0, /* a column without a direction (counts, seconds, names) */
    VS_BETTER_LOWER,    /* shown with a down arrow */
    VS_BETTER_HIGHER    /* shown with an up arrow */
} vs_better;

typedef enum vs_cell_kind {
    VS_CELL_MISSING = 0, /* a dash and a footnote saying why */
    VS_CELL_TEXT,
    VS_CELL_NUMBER,      /* value (spread) with `digits` decimals */
    VS_CELL_PVALUE       /* p with 2 significant digits and a significance mark */
} vs_cell_kind;

typedef enum vs_cell_rank { VS_RANK_NONE = 0, VS_RANK_BEST, VS_RANK_SECOND } vs_cell_rank;

/* Significance of the table's reference method against this row: better (◦) or worse (†). */
typedef enum vs_cell_sig { VS_SIG_NONE = 0, VS_SIG_BETTER, VS_SIG_WORSE } vs_cell_sig;

typedef struct vs_report_cell {
    vs_cell_kind kind;
    char *text;         /* TEXT */
    double value;       /* NUMBER: the value; PVALUE: p */
    double spread;      /* NUMBER: standard deviation shown in parentheses; NaN: none */
    int digits;         /* NUMBER: decimals (0..9); -1..-9: exponent notation with that many decimals */
    vs_cell_rank rank;
    vs_cell_sig sig;
    int note;           /* MISSING: index into the table's notes */
} vs_report_cell;

typedef struct vs_report_table {
    char *caption;
    int n_cols;
    char **header;
    vs_better *better;
    int n_rows, cap_rows;
    vs_report_cell *cells;  /* [n_rows * n_cols], row-major; new cells are missing */
    int n_notes;
    char **notes;           /* footnotes of the missing cells, each once */
    struct vs_report *owner;
} vs_report_table;

typedef enum vs_figure_kind {
    VS_FIGURE_LINE = 0, /* y against x per series */
    VS_FIGURE_BAR,      /* grouped bars over categories */
    VS_FIGURE_GRAPH,    /* node-link panels: one per series, each series one weight per edge */
    VS_FIGURE_MATRIX    /* a heatmap: one series per row (name: its label), categories: the columns */
} vs_figure_kind;

typedef struct vs_figure_series {
    char *name;
    size_t n;
    float *x, *y, *err; /* x and err may be NULL */
} vs_figure_series;

typedef struct vs_report_figure {
    vs_figure_kind kind;
    char *name;         /* file stem: NAME.svg; letters, digits, '.', '_' and '-' */
    char *title, *xlabel, *ylabel, *caption;
    bool log_y;
    size_t n_series;
    vs_figure_series *series;
    size_t n_categories;
    char **categories;  /* BAR */
    /* GRAPH: nodes 0..n_nodes-1 with optional labels, edges src[e]-dst[e]; hot_edge marks the planted
     * motif (may be NULL) */
    int64_t n_nodes, n_edges;
    char **node_labels;
    int64_t *src, *dst;
    bool *hot_edge;
    struct vs_report *owner;
} vs_report_figure;

typedef enum vs_block_kind {
    VS_BLOCK_HEADING = 0, /* level 1..3 */
    VS_BLOCK_PARAGRAPH,
    VS_BLOCK_ITEM,        /* one bullet; consecutive items form one list */
    VS_BLOCK_TABLE,
    VS_BLOCK_FIGURE
} vs_block_kind;

typedef struct vs_report_block {
    vs_block_kind kind;
    int level;
    char *text;
    vs_report_table *table;
    vs_report_figure *figure;
} vs_report_block;

typedef struct vs_report {
    size_t n_blocks, cap_blocks;
    vs_report_block *blocks;
    vs_json *data;      /* the experiment's raw numbers (an object) or NULL */
    bool oom;
} vs_report;

/* ---- building ----------------------------------------------------------------------------------- */
vs_report *vs_report_new(void);   /* NULL when out of memory */
void vs_report_free(vs_report *r);
/* The report's raw data: obj (an object) becomes the report's, replacing any earlier one. */
void vs_report_set_data(vs_report *r, vs_json *obj);
void vs_report_heading(vs_report *r, int level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void vs_report_paragraph(vs_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void vs_report_item(vs_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A table of n_cols columns: header[c] and better[c] (better may be NULL: no directions).  NULL
 * when out of memory (the report is marked). */
vs_report_table *vs_report_table_new(vs_report *r, const char *caption, int n_cols, const char *const *header,
                                     const vs_better *better);
/* Append a row of missing cells; its index, or -1 when out of memory. */
int vs_report_table_row(vs_report_table *t);
void vs_report_text(vs_report_table *t, int row, int col, const char *text);
/* value (spread) with digits decimals (negative: |digits| in exponent notation); spread NaN: none;
 * value NaN: a missing cell "not defined". */
void vs_report_number(vs_report_table *t, int row, int col, double value, double spread, int digits);
/* p-value (NaN: missing, "no test") with its significance mark. */
void vs_report_pvalue(vs_report_table *t, int row, int col, double p, vs_cell_sig sig);
/* A dash with the footnote `why` (one note per distinct text). */
void vs_report_missing(vs_report_table *t, int row, int col, const char *why);
/* Mark the best and the runner-up number of column col by its direction (first wins ties); rows
 * with skip[row] true (skip may be NULL) take no part. */
void vs_report_rank(vs_report_table *t, int col, const bool *skip);
/* The cell at (row, col) (borrowed), or NULL when out of range. */
const vs_report_cell *vs_report_cell_at(const vs_report_table *t, int row, int col);

/* A paper's claims checked against a run: vs_report_claims_table adds the heading "Claims" and a table
 * (claim, the paper's figure, measured, verdict, why); each vs_report_claim adds a row, and the same
 * row as an object to claims (a JSON array the caller puts into the report's data as "claims"; may be
 * NULL).  `make reproduce` gathers every report's verdicts from its table.md. */
typedef enum vs_claim_verdict {
    VS_CLAIM_REPRODUCED,      /* the paper's figure or ordering holds */
    VS_CLAIM_DIRECTION,       /* the effect is there, not its size */
    VS_CLAIM_NOT_REPRODUCED,
    VS_CLAIM_NOT_MEASURED     /* this run cannot tell (say why) */
} vs_claim_verdict;
const char *vs_claim_verdict_name(vs_claim_verdict v); /* "reproduced", "in direction only", ... */
vs_report_table *vs_report_claims_table(vs_report *r, const char *paper);   /* paper: "Hamilton et al. 2022" */
void vs_report_claim(vs_report_table *t, vs_json *claims, const char *claim, const char *paper, const char *measured,
                     vs_claim_verdict v, const char *why);

/* A figure named name (the SVG file stem) with its caption; NULL when out of memory. */
vs_report_figure *vs_report_figure_new(vs_report *r, vs_figure_kind kind, const char *name, const char *title,
                                       const char *xlabel, const char *ylabel, const char *caption);
/* A series of n points (copied); x may be NULL (0..n-1), err may be NULL.  On a graph figure y holds
 * one weight in [0,1] per edge (n = n_edges) and draws one panel. */
void vs_report_series(vs_report_figure *f, const char *name, size_t n, const float *x, const float *y, const float *err);
void vs_report_categories(vs_report_figure *f, size_t n, const char *const *labels);
/* The graph of a GRAPH figure: undirected edges src[e]-dst[e]; labels (may be NULL) name the nodes;
 * hot (may be NULL) marks the planted edges. */
void vs_report_graph(vs_report_figure *f, int64_t n_nodes, const char *const *labels, int64_t n_edges, const int64_t *src,
                     const int64_t *dst, const bool *hot);

/* The values of a MATRIX figure: rows x cols values (row-major, NaN: a grey cell "not defined"),
 * labels of the rows and columns (copied; NULL entries are empty).  Drawn as a heatmap of at most
 * 300 x 300 cells, blue < 0 < red on a scale symmetric around 0 (its ends: the largest |value|); row
 * and column labels thinned to every k-th when the cells are smaller than the text. */
void vs_report_matrix(vs_report_figure *f, size_t rows, size_t cols, const char *const *row_labels, const char *const *col_labels,
                      const float *values);

/* ---- writing ------------------------------------------------------------------------------------ */
/* Markdown: tables as pipe tables (arrows in the headers, **best**, runner-up *, ◦/† after p-values,
 * missing cells as "–" with a footnote), figures as ![title](NAME.svg) with the caption. */
vs_status vs_report_markdown(const vs_report *r, FILE *f, vs_error *err);
/* The SVG document of one figure (a new malloc'd string). */
vs_status vs_report_figure_svg(const vs_report_figure *fig, char **out, size_t *len, vs_error *err);
/* One self-contained HTML page (a new malloc'd string). */
vs_status vs_report_html(const vs_report *r, char **out, size_t *len, vs_error *err);
/* The JSON document: a copy of data (or a new object) with "report": the blocks (caller frees). */
vs_status vs_report_to_json(const vs_report *r, vs_json **out, vs_error *err);
/* The report written as JSON by vs_report_to_json, read back; errors name the file (name) and the
 * field.  The data object is kept as it is (without "report"). */
vs_status vs_report_from_json(const vs_json *doc, const char *name, vs_report **out, vs_error *err);
/* Everything into dir (created when missing): results.json, table.md, index.html and NAME.svg per
 * figure, each written atomically.  Errors name the file. */
vs_status vs_report_write_dir(const vs_report *r, const char *dir, vs_error *err);
/* mkdir -p dir (a report directory and its parents); errors name the directory that could not be made. */
vs_status vs_report_make_dirs(const char *dir, vs_error *err);
/* Rebuild dir/index.html from dir/results.json (as written by vs_report_write_dir). */
vs_status vs_report_rebuild_html(const char *dir, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
