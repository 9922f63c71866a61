/* versus/method.h - the registry of explanation methods: every method is a descriptor (name, one-line
 * help, its own options with their parsing and help text, what it returns) living in its own file
 * under explain/, listed once in explain/registry.c.  `versus attribute`, `versus help attribute` and
 * this interface enumerate the registry; nothing else names a method.  SNX's masks (versus/snx.h)
 * are registry entries too, of their own family (explain/snx_methods.c): `versus explain snx` and
 * `versus bench snx --methods` look their names up here.
 *
 * A request explains rows of x one by one.  With a reference (a model that compares pairs, e.g. a
 * Siamese network; vs_model_fn.forward_pair) row i of x is paired with row i of the reference (or with
 * its only row), and `side` picks what is explained: the query (reference fixed), the reference (query
 * fixed) or both at once, as one joint input [2, ...] (query, reference) with baseline (x', r'), so that
 * completeness holds over both sides: for IG, sum of both sides' attributions = f(x, r) - f(x', r').
 *
 * Ownership: descriptors are static; vs_method_opts belong to the caller (vs_method_opts_free); the
 * explanation is a new tensor owned like any op result (current scope, or the caller). */
#ifndef VERSUS_METHOD_H
#define VERSUS_METHOD_H

#include <stddef.h>

#include "versus/explain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a method returns for each explained row. */
typedef enum vs_method_output {
    VS_OUTPUT_FEATURES,      /* one value per feature: the explained input's shape */
    VS_OUTPUT_INTERACTIONS,  /* one value per pair of features: [F, F], F = elements of the input */
    VS_OUTPUT_MASK,          /* a mask in [0, 1] of the input's shape */
    VS_OUTPUT_CONTRASTIVE,   /* a contrastive example of the input's shape, with a text */
    VS_OUTPUT_LAYER          /* one value per unit of a layer: the activation shape of the layer its `layer` option names */
} vs_method_output;
/* "features", "interactions", "mask", "contrastive", "layer" */
const char *vs_method_output_name(vs_method_output o);

/* Properties of a method (bit set). */
enum {
    VS_METHOD_COMPLETE = 1u << 0,     /* sum of the explanation = S(x) - S(x') (completeness / efficiency) */
    VS_METHOD_BASELINE_SET = 1u << 1, /* averages over a baseline set (request.baselines) */
    VS_METHOD_LAYERS = 1u << 2,       /* reads a layer's activations (vs_model_fn.sequential or .module) */
    VS_METHOD_SEGMENTS = 1u << 3,     /* features may be segments (request.segments) */
    VS_METHOD_CONSERVES = 1u << 4     /* sum of the explanation = S(x) (relevance conservation, LRP) */
};

typedef enum vs_param_kind {
    VS_PARAM_INT,     /* int, in [lo, hi] */
    VS_PARAM_FLOAT,   /* float, in [lo, hi] */
    VS_PARAM_SWITCH,  /* bool: given = true */
    VS_PARAM_CHOICE,  /* int index into choices "a|b|c" */
    VS_PARAM_INT3,    /* int[3]: "a,b,c", one to three integers in [lo, hi]; unset entries 0 */
    VS_PARAM_PATH     /* char[VS_PARAM_PATH_MAX]: a module path, names joined by dots ("encoder.3"); "" or "auto" = default */
} vs_param_kind;
#define VS_PARAM_PATH_MAX 128

/* One option of a method: `--name value` on the command line, name=value in the library. */
typedef struct vs_method_param {
    const char *name;
    vs_param_kind kind;
    size_t offset;            /* of the value in the method's options struct */
    double lo, hi;
    const char *choices;      /* VS_PARAM_CHOICE */
    const char *help;         /* one line */
} vs_method_param;

struct vs_attr_job;

/* Which engine runs a method.  One registry holds every family, so each method has one name. */
typedef enum vs_method_family {
    VS_METHOD_ATTRIBUTION,  /* one input (or one pair of inputs) of a vs_model_fn: vs_explain, `versus attribute` */
    VS_METHOD_SNX           /* masks of pairs of a data set's rows or graphs under a Siamese model (versus/snx.h):
                               vs_snx_explain, `versus explain snx`; vs_explain refuses them */
} vs_method_family;

typedef struct vs_method {
    const char *name;               /* "integrated_gradients" */
    const char *help;               /* one line: what it computes, after whom */
    vs_method_output output;
    unsigned flags;                 /* VS_METHOD_* */
    size_t opts_size;               /* the method's own options struct */
    void (*defaults)(void *opts);
    const vs_method_param *params;  /* terminated by an entry with name NULL */
    /* Explain one row: out has the output's size (features: elements of the input; interactions:
     * their square).  The job (explain/internal.h) holds the model, the row, its baseline, target. */
    vs_status (*run)(struct vs_attr_job *j, const void *opts, float *out);  /* NULL outside VS_METHOD_ATTRIBUTION */
    vs_method_family family;        /* VS_METHOD_ATTRIBUTION unless said */
    const char *alias;              /* an older spelling vs_method_find also accepts ("snx-kl"), or NULL */
} vs_method;

/* The registry, in help order: the methods vs_explain runs (family VS_METHOD_ATTRIBUTION). */
int vs_method_count(void);
const vs_method *vs_method_at(int i);                 /* NULL outside [0, count) */
/* The same for any family: vs_method_family_at(VS_METHOD_SNX, i) walks SNX's methods. */
int vs_method_family_count(vs_method_family f);
const vs_method *vs_method_family_at(vs_method_family f, int i);  /* NULL outside [0, count) */
/* Any family's method by its name or its alias; NULL when unknown. */
const vs_method *vs_method_find(const char *name);
/* The registered method nearest to a misspelt name (edit distance, case and '_' / '-' ignored, at
 * most a third of the name's letters), for "did you mean": "GradientShap" -> gradient_shap; or NULL.
 * vs_method_nearest looks among the attribution methods, vs_method_family_nearest among family f's. */
const vs_method *vs_method_nearest(const char *name);
const vs_method *vs_method_family_nearest(vs_method_family f, const char *name);
const vs_method_param *vs_method_param_find(const vs_method *m, const char *name);

/* Options of one method: its defaults, then name=value settings parsed against its params. */
typedef struct vs_method_opts vs_method_opts;
vs_method_opts *vs_method_opts_new(const vs_method *m);   /* NULL when out of memory */
void vs_method_opts_free(vs_method_opts *o);
const vs_method *vs_method_opts_method(const vs_method_opts *o);
/* Parse value (NULL for a switch) into option `name`; VS_ERR_ARG with a message naming the method,
 * the option and what was expected. */
vs_status vs_method_opts_set(vs_method_opts *o, const char *name, const char *value, vs_error *err);
/* Options of m from settings "name=value name=value ..." (a switch alone: true; NULL or "": the
 * defaults), as vs_method_opts_set parses each; NULL with err set when one does not parse.  E.g.
 * vs_method_opts_parse(vs_method_find("integrated_gradients"), "steps=200 ig-rule=middle", &err). */
vs_method_opts *vs_method_opts_parse(const vs_method *m, const char *settings, vs_error *err);
/* The current value of an option as text ("50", "gauss-legendre", "1,1,1", "true"), into buf. */
void vs_method_opts_format(const vs_method_opts *o, const vs_method_param *p, char *buf, size_t n);

typedef enum vs_side { VS_SIDE_QUERY, VS_SIDE_REFERENCE, VS_SIDE_BOTH } vs_side;
const char *vs_side_name(vs_side s);      /* "query", "reference", "both" */
int vs_side_from_name(const char *name);  /* -1 when unknown */

/* Everything a method sees besides its own options. */
typedef struct vs_explain_request {
    int64_t target;                 /* class of the explained score; -1: the predicted class (per row) */
    int64_t contrast;               /* -1: none */
    const vs_tensor *baseline;      /* [1, ...] baseline of the query (NULL: zeros) */
    const vs_tensor *baselines;     /* [B, ...] set, for VS_METHOD_BASELINE_SET methods (query side) */
    const int32_t *segments;        /* feature id of every element of one explained input, or NULL */
    int64_t n_segments;
    int batch;                      /* rows per model call (default 64) */
    uint64_t seed;
    const vs_tensor *reference;     /* [1 or N, ...] the pairs' other side, or NULL */
    const vs_tensor *reference_baseline; /* [1, ...] baseline of the reference (NULL: zeros) */
    vs_side side;                   /* with a reference: what is explained */
    bool plain;                     /* no accelerators: every method takes its plain path, their tested
                                       reference (occlusion's incremental forward, IG's path engine) */
} vs_explain_request;
void vs_explain_request_init(vs_explain_request *r);  /* target -1, contrast -1, batch 64, side query */

/* Shape of the explanation of x [N, ...] under r by m: features [N, ...] (side both: [N, 2, ...]),
 * interactions [N, F, F].  ndim and shape[VS_MAX_DIMS] receive it.  Layer outputs depend on the
 * model: vs_explain_layer_shape. */
vs_status vs_explain_shape(const vs_method *m, const vs_tensor *x, const vs_explain_request *r, int *ndim, int64_t *shape,
                           vs_error *err);

/* Shape [N, ...] of a VS_OUTPUT_LAYER method's explanation of x [N, ...] on model under opts (NULL:
 * defaults): the activation shape of the method's layer. */
vs_status vs_explain_layer_shape(const vs_model_fn *model, const vs_method *m, const vs_method_opts *opts, vs_tensor *x, int *ndim,
                                 int64_t *shape, vs_error *err);

/* Explain every row of x [N, ...] with the method of opts (NULL: the method's defaults).  report
 * (may be NULL) describes the last row, delta the largest |delta| over rows. */
vs_status vs_explain(const vs_model_fn *model, vs_tensor *x, const vs_method *m, const vs_method_opts *opts,
                     const vs_explain_request *r, vs_tensor **out, vs_attr_report *report, vs_error *err);

/* Completeness of any explanation expl [N, ...] of x under r (features, both sides or interactions):
 * gaps[i] = sum of row i of expl - (S(x_i) - S(x_i')), the score and baseline as vs_explain sees them. */
vs_status vs_explain_completeness(const vs_model_fn *model, vs_tensor *x, const vs_explain_request *r, const vs_tensor *expl,
                                  double *gaps, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
