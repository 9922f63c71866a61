/* cli/cem_cli.h - what `versus explain cem` and `versus bench cem` share: the flags of the CEM-MAF
 * hyperparameters (versus/cem.h) and their parsing.  Private to the program. */
#ifndef VERSUS_CLI_CEM_H
#define VERSUS_CLI_CEM_H

#include "cli/cli.h"
#include "versus/cem.h"

#define VS_CEM_CLI_OPTS                                                                             \
    {"kappa", 1, "margin of the class losses (default 5)"},                                        \
    {"gamma", 1, "weight of the attribute hinges (default 100)"},                                  \
    {"beta-pn", 1, "attribute sparsity of the PN (default 100)"},                                  \
    {"beta-pp", 1, "L1 weight of the PP mask (default 0.1)"},                                      \
    {"eta", 1, "input proximity of the PN (default 1)"},                                           \
    {"nu", 1, "latent proximity of the PN (default 1)"},                                           \
    {"c0", 1, "first c of the search (default 1; x10 without a result, /2 with one)"},             \
    {"searches", 1, "runs of the c search (default 9)"},                                           \
    {"pn-iters", 1, "subgradient iterations per run (default 1000)"},                              \
    {"pp-iters", 1, "ISTA iterations per run (default 100)"},                                      \
    {"pn-step", 1, "subgradient step eta_0, step k = eta_0/sqrt(k+1) (default 0.002)"},             \
    {"pp-step", 1, "ISTA step (default 0.01)"},                                                    \
    {"fista", 0, "FISTA momentum for the PP (the paper: ISTA)"}

/* o from the flags of a (defaults: vs_cem_opts_init); 0, or 2 after a usage message. */
int vs_cli_cem_opts(const vs_args *a, vs_cem_opts *o);

/* `versus explain cem` (cli/explain_cem.c) and `versus bench cem` (bench/cem/cli.c): argv[0] is
 * "cem"; return 0, 1 (bad data, failed run) or 2 (usage). */
int vs_explain_cem(int argc, char **argv);

#endif
