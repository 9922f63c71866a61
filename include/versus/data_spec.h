/* versus/data_spec.h - one way to name a data set, shared by every verb that reads data.
 *
 * SPEC is a preset or a typed path:
 *   adult | adult-all | bank | compas | credit     shared tabular sets (folder: --path or $VERSUS_DATA/<folder>)
 *   iris | wine | breast-cancer | digits           scikit-learn's small CSVs ($VERSUS_DATA/sklearn_small)
 *   mutag                                          TU graphs ($VERSUS_DATA/mutag/MUTAG_*.txt or --path DIR)
 *   mnist | mnist-train                            MNIST test / first 10k train images (--path DIR or $VERSUS_DATA/mnist)
 *   fashion-mnist | fashion-mnist-train            Fashion-MNIST (--path DIR or /usr/share/datasets/fashion-mnist)
 *   synthetic-tabular | synthetic-graph | synthetic-shapes    generated from --seed (and --n)
 *   colored-mnist                                  MNIST test tinted with one of three colours (--seed)
 *   csv:FILE   tu:DIR/PREFIX   idx:IMAGES,LABELS   any file in those formats
 *   graphs:DIR                                     an exported graph set or a TU folder (vs_load_graph_dir)
 * The returned data set is owned by the caller (vs_dataset_free). */
#ifndef VERSUS_DATA_SPEC_H
#define VERSUS_DATA_SPEC_H

#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vs_data_flags {
    const char *path;         /* --path: folder or file of a preset */
    char delimiter;           /* --delimiter (CSV); 0 = sniff */
    int no_header;            /* --no-header 1, --header -1, 0 = sniff (see vs_csv_opts) */
    const char *label;        /* --label COL: name or 0-based index */
    const char *drop;         /* --drop COL,... */
    const char *categorical;  /* --categorical COL,... */
    int bins;                 /* --bins N; 0 = default 5 */
    const char *missing;      /* --missing TOKEN */
    uint64_t seed;            /* --seed for synthetic sets */
    int64_t n;                /* --n rows for synthetic sets; 0 = the generator's default */
} vs_data_flags;

/* Load SPEC with flags; err names the SPEC or the file and what was wrong. */
vs_status vs_load_spec(const char *spec, const vs_data_flags *flags, vs_dataset **out, vs_error *err);

/* One line per accepted SPEC form (for help texts). */
const char *vs_data_spec_help(void);

#ifdef __cplusplus
}
#endif
#endif
