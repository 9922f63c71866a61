/* versus/zoo.h - the architectures `versus train --arch NAME` builds, by name.
 *
 * Each entry builds a model for a data set (input sizes and class counts come from the data) with
 * the constructors of versus/arch.h; the task follows the model (versus/task.h).  An entry may carry
 * default task options (DIP-VAE's penalties), which the user's options override.  Papers' data
 * presets (CEM-MAF's shoes and clothes) live with their experiment under bench/, not here.
 */
#ifndef VERSUS_ZOO_H
#define VERSUS_ZOO_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/nn.h"
#include "versus/rng.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_zoo_entry {
    const char *name;            /* "ganmex-mnist" */
    const char *help;            /* one or two lines for `versus help train` */
    vs_data_kind kind;           /* the data it trains on */
    const char *task_opts;       /* default task options ("dip=i,lambda_od=10"), or NULL */
    vs_module *(*build)(const vs_dataset *d, vs_rng *r, vs_error *err);
} vs_zoo_entry;

const vs_zoo_entry *vs_zoo_at(int i);              /* i-th entry, NULL past the end */
const vs_zoo_entry *vs_zoo_find(const char *name); /* NULL when unknown */
/* The model of entry e for data d (weights drawn from r), owned by the caller.  NULL with err set
 * ("siamese-gcn trains on graphs; adult holds tabular data") when d does not fit. */
vs_module *vs_zoo_build(const vs_zoo_entry *e, const vs_dataset *d, vs_rng *r, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
