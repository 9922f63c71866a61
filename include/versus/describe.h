/* versus/describe.h - a JSON summary of a vs_dataset (for `versus data describe`).
 *
 * Works for the three kinds: rows and classes with counts always; for tabular data the major
 * features with their minor features (description and how many rows have each); for images the
 * shape; for graphs node and edge count statistics.  The caller owns the FILE. */
#ifndef VERSUS_DESCRIBE_H
#define VERSUS_DESCRIBE_H

#include <stdio.h>

#include "versus/dataset.h"
#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Print d as one JSON object to f.  VS_ERR_ARG when d is inconsistent (a label outside
 * [0, n_classes), groups not covering X's columns, missing arrays), VS_ERR_IO when writing fails. */
vs_status vs_dataset_describe_json(const vs_dataset *d, FILE *f);

#ifdef __cplusplus
}
#endif
#endif
