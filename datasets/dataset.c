/* dataset.c - allocation and release of vs_dataset. */
#include "versus/dataset.h"

#include <stdlib.h>
#include <string.h>

vs_dataset *vs_dataset_new(vs_data_kind kind, const char *name)
{
    vs_dataset *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->kind = kind;
    if (name && !(d->name = strdup(name))) {
        free(d);
        return NULL;
    }
    return d;
}

static void free_strings(char **s, int64_t n)
{
    if (!s) return;
    for (int64_t i = 0; i < n; i++) free(s[i]);
    free(s);
}

void vs_graph_clear(vs_graph *g)
{
    if (!g) return;
    free(g->src);
    free(g->dst);
    free(g->rev);
    free(g->x);
    free(g->edge_label);
    free(g->edge_truth);
    memset(g, 0, sizeof *g);
}

void vs_dataset_free(vs_dataset *d)
{
    if (!d) return;
    free(d->name);
    free_strings(d->class_names, d->n_classes);
    free(d->y);
    free(d->X);
    free_strings(d->feature_names, d->dim);
    if (d->groups)
        for (int64_t i = 0; i < d->n_groups; i++) free(d->groups[i].name);
    free(d->groups);
    if (d->graphs)
        for (int64_t i = 0; i < d->n; i++) vs_graph_clear(&d->graphs[i]);
    free(d->graphs);
    free(d->feature_truth);
    free(d->group_truth);
    free(d);
}
