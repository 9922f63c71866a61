/* cli/cli.h - the `versus` program: verb table and flag parsing shared by every verb. */
#ifndef VERSUS_CLI_H
#define VERSUS_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "versus/data_spec.h"
#include "versus/shard.h"
#include "versus/train.h"

/* A flag a verb accepts.  has_arg: 0 = switch, 1 = takes a value. */
typedef struct vs_cli_opt {
    const char *name;   /* without the leading "--" */
    int has_arg;
    const char *help;   /* one line for `versus help VERB` */
} vs_cli_opt;
/* Whether the table opts (NULL-name terminated; may be NULL) has the flag name. */
bool vs_cli_opts_have(const vs_cli_opt *opts, const char *name);
/* `versus help`'s paragraph on --shard, --resume and `versus merge` (verbs that take --shard). */
void vs_help_shards(void);

#define VS_ARGS_MAX 64

/* Parsed flags of one verb: name/value pairs (value NULL for switches), in command-line order. */
typedef struct vs_args {
    const char *verb;
    int n;
    const char *name[VS_ARGS_MAX];
    const char *value[VS_ARGS_MAX];
    int n_pos;                       /* positional words (data SPECs, sub-verbs) */
    const char *pos[VS_ARGS_MAX];
} vs_args;

/* Parse argv[0..argc) against opts (terminated by a {NULL} entry).  Returns 0, or 2 after printing
 * "versus: ..." and a usage hint for unknown flags, missing values and repeated flags. */
int vs_args_parse(const char *verb, const vs_cli_opt *opts, int argc, char **argv, vs_args *a);
const char *vs_args_get(const vs_args *a, const char *name);   /* value, or NULL when absent */
bool vs_args_has(const vs_args *a, const char *name);
/* Typed getters: return 0 and set *out (def when absent); return 2 after printing a message when
 * the value is not a number in [lo, hi]. */
int vs_args_int(const vs_args *a, const char *name, int64_t def, int64_t lo, int64_t hi, int64_t *out);
int vs_args_float(const vs_args *a, const char *name, double def, double lo, double hi, double *out);
/* Print "versus: <msg>" on stderr; returns 2 (usage) for use as `return vs_usage_error(...)`. */
int vs_usage_error(const char *verb, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Print "versus: <msg>" on stderr; returns 1 (bad data or failed run). */
int vs_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* The flags of a data SPEC, for a verb's option table: VS_DATA_CLI_OPTS, then its own entries. */
#define VS_DATA_CLI_OPTS                                                                    \
    {"path", 1, "folder or file of a preset data set"},                                   \
    {"delimiter", 1, "CSV delimiter: , ; | tab, or space/whitespace (runs of blanks; default: sniffed)"}, \
    {"no-header", 0, "CSV: the first line is data (default: sniffed)"},                    \
    {"header", 0, "CSV: the first line names the columns (default: sniffed)"},             \
    {"label", 1, "CSV: label column, name or 0-based index (default: last)"},              \
    {"drop", 1, "CSV: columns to leave out, COL,..."},                                     \
    {"categorical", 1, "CSV: columns to treat as categorical, COL,..."},                   \
    {"bins", 1, "CSV: quantile bins per numeric column (default 5)"},                      \
    {"missing", 1, "CSV: token read as a missing value (default ?)"},                      \
    {"n", 1, "synthetic data: number of examples"},                                        \
    {"seed", 1, "random seed (default 1)"}

/* Fill f from the parsed flags; 0, or 2 after a usage message. */
int vs_cli_data_flags(const vs_args *a, vs_data_flags *f);

/* The flags of a verb that loops over independent items (rows, pairs): VS_RUN_CLI_OPTS in its table. */
#define VS_RUN_CLI_OPTS                                                                                    \
    {"shard", 1, "do shard K of N of the items (K/N) and write the partial result to --out (versus merge)"}, \
    {"resume", 0, "continue a killed run from its journal (OUT.journal, or the part with --shard)"}

/* A run's options from --shard and --resume: the journal at OUT.journal, or at OUT (the part) with a
 * shard; argc/argv are the words after the verb (the command the journal names).  r must outlive the
 * run's options.  0, or 2 after a usage message. */
typedef struct vs_cli_run {
    vs_run_opts o;
    char path[4096];
} vs_cli_run;
int vs_cli_run_opts(const vs_args *a, const char *out, uint64_t seed, const char *unit, int argc, char **argv, vs_cli_run *r);

/* What of a model's outputs attribute and evaluate explain: VS_OUTPUT_CLI_OPTS in their tables. */
#define VS_OUTPUT_CLI_OPTS                                                                                 \
    {"target", 1, "explained class, or output element of the flattened output row (an image: c*H*W + y*W + x), or T.npy [N] "  \
                  "of one per row (default: the predicted class, the largest output)"},                          \
    {"target-mask", 1, "explain sum m f(x): M.npy weights of the output row, one row [1, ...] or one per row [N, ...] (a region: 0/1)"}, \
    {"score", 1, "explain a scalar of the whole output row: sum, norm (L2) or reconstruction (||f(x) - x||^2, an autoencoder's error)"}

/* --target (an integer >= 0 into *target, or a file into *targets), --target-mask, --score; 0, or 2
 * after a usage message. */
int vs_cli_output_flags(const vs_args *a, int64_t *target, const char **targets, const char **mask, const char **score);

/* A number in JSON output: %.9g, or null when it is NaN or infinite (JSON has neither). */
void vs_cli_put_num(FILE *f, double v);

/* `versus explain svae` (cli/explain_svae.c): argv[0] is "svae"; it parses its own flags; 0, 1 or 2. */
int vs_explain_svae(int argc, char **argv);

/* A verb of the program. */
typedef struct vs_verb {
    const char *name;
    const char *summary;           /* one line for `versus help` */
    const char *usage;             /* synopsis and description for `versus help VERB` */
    const vs_cli_opt *opts;        /* flags, for the help text and the parser */
    int (*run)(int argc, char **argv); /* argv[0] is the first word after the verb */
    void (*more_help)(void);       /* printed after usage by `versus help VERB` (registries); may be NULL */
} vs_verb;

extern const vs_verb *const vs_verbs[];  /* NULL-terminated, in help order */
const vs_verb *vs_find_verb(const char *name);

/* Fill the attribute verb's option table and manual from the method registry (before any verb runs). */
void vs_cli_attribute_init(void);

/* Verbs. */
extern const vs_verb vs_verb_help;
/* `versus help bench NAME`: one benchmark's usage and manual; 0, or 2 when NAME is no benchmark. */
int vs_bench_topic_help(const char *name);
extern const vs_verb vs_verb_demo;
extern const vs_verb vs_verb_data;
extern const vs_verb vs_verb_train;
extern const vs_verb vs_verb_predict;
extern const vs_verb vs_verb_attribute;
extern const vs_verb vs_verb_evaluate;
extern const vs_verb vs_verb_explain;
extern const vs_verb vs_verb_bench;
extern const vs_verb vs_verb_report;
extern const vs_verb vs_verb_import;
extern const vs_verb vs_verb_merge;

#endif
