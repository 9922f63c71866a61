/* describe.c - vs_dataset_describe_json: a data set summarised as JSON (rows, classes, features or
 * shape or graph sizes).  The data set is checked first, so nothing is printed for a broken one. */
#include "versus/describe.h"

#include <stdint.h>
#include <stdlib.h>

static void json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static const char *kind_name(vs_data_kind k)
{
    switch (k) {
    case VS_DATA_TABULAR: return "tabular";
    case VS_DATA_IMAGES: return "images";
    case VS_DATA_GRAPHS: return "graphs";
    }
    return "unknown";
}

/* 1 when everything the printer reads is present and consistent. */
static int consistent(const vs_dataset *d)
{
    if (d->n < 0 || d->n_classes < 0 || (d->n > 0 && !d->y)) return 0;
    for (int64_t i = 0; i < d->n; i++)
        if (d->y[i] < 0 || d->y[i] >= d->n_classes) return 0;
    switch (d->kind) {
    case VS_DATA_TABULAR: {
        if (d->dim < 0 || (d->n > 0 && d->dim > 0 && !d->X) || (d->dim > 0 && !d->feature_names)) return 0;
        if (d->n_groups < 0 || (d->n_groups > 0 && !d->groups)) return 0;
        int64_t next = 0;
        for (int64_t g = 0; g < d->n_groups; g++) {
            if (d->groups[g].first != next || d->groups[g].count < 0) return 0;
            next += d->groups[g].count;
        }
        return next == d->dim;
    }
    case VS_DATA_IMAGES:
        return d->ndim >= 1 && d->ndim <= 3;
    case VS_DATA_GRAPHS:
        if (d->n > 0 && !d->graphs) return 0;
        for (int64_t i = 0; i < d->n; i++)
            if (d->graphs[i].n_nodes < 0 || d->graphs[i].n_edges < 0) return 0;
        return 1;
    }
    return 0;
}

static void print_classes(const vs_dataset *d, const int64_t *count, FILE *f)
{
    fputs("  \"classes\": [", f);
    for (int64_t k = 0; k < d->n_classes; k++) {
        fputs(k ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        if (d->class_names) json_str(f, d->class_names[k]);
        else fprintf(f, "\"%lld\"", (long long)k);
        fprintf(f, ", \"count\": %lld}", (long long)count[k]);
    }
    fputs(d->n_classes ? "\n  ]" : "]", f);
}

/* Major features with their minor features and how many rows have each minor feature set. */
static void print_tabular(const vs_dataset *d, const int64_t *rows, FILE *f)
{
    fprintf(f, ",\n  \"dim\": %lld,\n  \"major_features\": [", (long long)d->dim);
    for (int64_t g = 0; g < d->n_groups; g++) {
        const vs_feature_group *gr = &d->groups[g];
        fputs(g ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        json_str(f, gr->name);
        fprintf(f, ", \"first\": %lld, \"count\": %lld, \"minor\": [", (long long)gr->first, (long long)gr->count);
        for (int64_t j = gr->first; j < gr->first + gr->count; j++) {
            fputs(j > gr->first ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
            json_str(f, d->feature_names[j]);
            fprintf(f, ", \"rows\": %lld}", (long long)rows[j]);
        }
        fputs(gr->count ? "\n    ]}" : "]}", f);
    }
    fputs(d->n_groups ? "\n  ]" : "]", f);
}

static void print_stats(FILE *f, const char *key, const vs_dataset *d, int edges)
{
    int64_t total = 0, lo = 0, hi = 0;
    for (int64_t i = 0; i < d->n; i++) {
        /* each undirected edge is stored in both directions */
        int64_t v = edges ? d->graphs[i].n_edges / 2 : d->graphs[i].n_nodes;
        total += v;
        if (i == 0 || v < lo) lo = v;
        if (i == 0 || v > hi) hi = v;
    }
    fprintf(f, ",\n  \"%s\": {\"total\": %lld, \"min\": %lld, \"max\": %lld, \"mean\": %.6g}", key, (long long)total,
            (long long)lo, (long long)hi, d->n ? (double)total / (double)d->n : 0.0);
}

vs_status vs_dataset_describe_json(const vs_dataset *d, FILE *f)
{
    if (!d || !f || !consistent(d)) return VS_ERR_ARG;
    int64_t *count = calloc(d->n_classes > 0 ? (size_t)d->n_classes : 1, sizeof *count);
    int64_t *rows = d->kind == VS_DATA_TABULAR ? calloc(d->dim > 0 ? (size_t)d->dim : 1, sizeof *rows) : NULL;
    if (!count || (d->kind == VS_DATA_TABULAR && !rows)) {
        free(count);
        free(rows);
        return VS_ERR_NOMEM;
    }
    for (int64_t i = 0; i < d->n; i++) count[d->y[i]]++;
    for (int64_t i = 0; rows && i < d->n; i++) /* rows having each minor feature, in one pass over X */
        for (int64_t j = 0; j < d->dim; j++) rows[j] += d->X[(size_t)i * (size_t)d->dim + (size_t)j] != 0.0f;
    int truth = d->feature_truth || d->group_truth;
    for (int64_t i = 0; d->kind == VS_DATA_GRAPHS && i < d->n; i++) truth |= d->graphs[i].edge_truth != NULL;
    fputs("{\n  \"name\": ", f);
    json_str(f, d->name);
    fprintf(f, ",\n  \"kind\": \"%s\",\n  \"rows\": %lld,\n", kind_name(d->kind), (long long)d->n);
    print_classes(d, count, f);
    free(count);
    switch (d->kind) {
    case VS_DATA_TABULAR:
        print_tabular(d, rows, f);
        break;
    case VS_DATA_IMAGES:
        fputs(",\n  \"shape\": [", f);
        for (int k = 0; k < d->ndim; k++) fprintf(f, k ? ", %lld" : "%lld", (long long)d->shape[k]);
        fprintf(f, "],\n  \"dim\": %lld", (long long)d->dim);
        break;
    case VS_DATA_GRAPHS:
        fprintf(f, ",\n  \"node_features\": %lld", (long long)d->n_node_features);
        print_stats(f, "nodes", d, 0);
        print_stats(f, "edges", d, 1);
        break;
    }
    fprintf(f, ",\n  \"ground_truth\": %s\n}\n", truth ? "true" : "false");
    free(rows);
    return ferror(f) ? VS_ERR_IO : VS_OK;
}
