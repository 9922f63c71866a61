/* cli/explain_pairs.h - `versus explain snx --pairs all` for cmd_explain.c (the one part of the CLI
 * that needs SNX's types, kept out of cli.h).  Private to the program. */
#ifndef VERSUS_CLI_EXPLAIN_PAIRS_H
#define VERSUS_CLI_EXPLAIN_PAIRS_H

#include "cli/cli.h"
#include "versus/snx.h"
#include "versus/train.h"

/* `versus explain snx --pairs all` (cli/explain_pairs.c): every test pair of sp with method, options o
 * and scores eo; the model, data and split are the caller's.  0, 1 or 2. */
int vs_explain_snx_pairs(const vs_args *a, int argc, char **argv, vs_module *m, const vs_dataset *d, const vs_train_split *sp,
                         vs_snx_method method, const vs_snx_opts *o, const vs_snx_eval_opts *eo, const char *spec, const char *out);

#endif
