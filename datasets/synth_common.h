/* datasets/synth_common.h - small allocation helpers shared by the generators and pairs.c (internal). */
#ifndef VERSUS_DATASETS_SYNTH_COMMON_H
#define VERSUS_DATASETS_SYNTH_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"

/* Zeroed count * size bytes; NULL with VS_ERR_NOMEM in err ("<what>: ...") on overflow or OOM.
 * count == 0 allocates one byte so a valid empty array is never confused with failure. */
void *vs_data_calloc(size_t count, size_t size, const char *what, vs_error *err);

/* New array of copies of s[0..k) (NULL entries stay NULL); NULL with err set on OOM. */
char **vs_data_strings_copy(const char *const *s, int64_t k, const char *what, vs_error *err);

/* d->n_classes = k and d->class_names = copies of names[0..k). */
vs_status vs_data_set_classes(vs_dataset *d, int64_t k, const char *const *names, vs_error *err);

/* New empty data set or NULL with err set. */
vs_dataset *vs_data_new(vs_data_kind kind, const char *name, vs_error *err);

#endif
