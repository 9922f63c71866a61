/* explain/snx_internal.h - what the SNX files share: a batch of masked Siamese predictions (the
 * "task"), the mask objective handed to vs_gda_minimize, undirected edge maps
 * and explanation allocation.  Not installed. */
#ifndef VERSUS_EXPLAIN_SNX_INTERNAL_H
#define VERSUS_EXPLAIN_SNX_INTERNAL_H

#include "versus/ops.h"
#include "versus/snx.h"

#define SNX_PROB_EPS 1e-6f   /* clamp of probabilities inside logs */

/* ---- graphs ------------------------------------------------------------------------------------ */
/* und[e] in [0, n_und): an edge and its reverse share one id, numbered by their lowest directed
 * index; returns n_und. */
int64_t snx_undirected(const vs_graph *g, int64_t *und);

/* ---- masked predictions of B problems ---------------------------------------------------------- */
/* Problem b has two sides, 2b (query) and 2b+1 (reference), each a data set row that is either
 * unmasked or multiplied by a mask read from the flat variable vector:
 *   global  (Eq. 4):  side 0 unmasked, side 1 = the same row masked by variables of b (with tt:
 *                     side 0 = s[b] unmasked, side 1 = tt[b] masked: one side explained, the other held);
 *   shared  (tabular Eq. 6): both sides masked by the same p variables;
 *   separate (graphs Eq. 6): side 0 by the first block of b's variables, side 1 by the rest.
 * Graph masks have one variable per undirected edge when tie, else one per directed edge.
 * The prediction is p = (1 + cos(emb(side 0), emb(side 1))) / 2. */
typedef enum snx_layout { SNX_LAYOUT_GLOBAL, SNX_LAYOUT_SHARED, SNX_LAYOUT_SEPARATE } snx_layout;

typedef struct snx_task {
    const vs_siamese *f;
    const vs_dataset *d;
    bool graph, tie;
    snx_layout layout;
    int64_t B, p;           /* problems; tabular columns */
    int64_t n_vars;
    int64_t *var_off;       /* [B + 1] */
    int64_t *side_item;     /* [2B] data set rows */
    int64_t *side_mi;       /* [2B] index among masked sides, -1 when unmasked */
    int64_t n_masked;
    int64_t *masked;        /* [n_masked] side ids */
    int64_t *elem_off;      /* [n_masked + 1] element offsets (tabular p each, graphs n_edges) */
    int64_t *expand;        /* [elem_off[n_masked]] variable of every masked element */
    int64_t *side_row;      /* [2B] row of the side's embedding in [masked embeddings; E0] */
    vs_tensor *Xm;          /* tabular: rows of the masked sides [n_masked, p] */
    vs_tensor *E0;          /* embeddings of the unmasked sides [n_const, d], or NULL */
    float *p0;              /* [B] prediction without masks */
} snx_task;

/* Build the task for pairs (s[b], t[b]) (global: t NULL, or the one-sided pairs above).  Tensors are created in the current
 * scope; snx_task_free releases them. */
vs_status snx_task_init(snx_task *t, const vs_siamese *f, const vs_dataset *d, const int64_t *s, const int64_t *tt, int64_t B,
                        snx_layout layout, bool tie, vs_error *err);
void snx_task_free(snx_task *t);
/* p' [B] for mask values m [n_vars] (differentiable in m). */
vs_tensor *snx_task_predict(const snx_task *t, vs_tensor *m);
/* Elements of a side (tabular p, graphs n_edges). */
int64_t snx_side_elems(const snx_task *t, int64_t side);
/* Mask of a masked side per element from variable values vars [n_vars]. */
void snx_task_side_mask(const snx_task *t, int64_t side, const float *vars, float *out);
/* Graph masks as variables: for side `side` write out[var] = mask[e] for each directed edge e
 * (with tie, the value of the lower-indexed direction). */
void snx_task_side_vars(const snx_task *t, int64_t side, const float *mask, float *out);

/* ---- the mask objective --------------------------------------------------------------------------- */
typedef enum snx_constraint { SNX_CON_NONE, SNX_CON_BOUND, SNX_CON_ADJACENT } snx_constraint;

/* m = sigmoid(theta) (x) present (present: all ones when NULL);
 * g0_b = l(y_b, p'_b) + gamma |a(m_b)|_1 + size |m_b|_1 + ent mean H(m_b) + beta KL(a(m_b) || A_b),
 * m = sigmoid(theta); a(m) per major feature of the shared tabular mask, identity on graphs.
 * y_b = p0_b (faithfulness), or with hard 1[p0_b > 1/2]: GNNExplainer's mutual-information term
 * -ln P(Y = the model's prediction | masked input).
 * Constraints: BOUND a(m) - A <= 0; ADJACENT |m_j - m_k| - eps <= 0 over pairs (j, k). */
typedef struct snx_obj {
    const snx_task *task;
    int64_t n_aux;
    int64_t *aux_of_var;    /* [n_vars] tabular: aux entry (major feature of the block); NULL: identity */
    int64_t *aux_block;     /* [n_aux] block of every aux entry */
    int64_t *var_block;     /* [n_vars] */
    float *ent_w;           /* [n_vars] 1 / (variables of the block) */
    float gamma, size, ent, beta;
    bool hard;              /* loss against the predicted class 1[p0 > 1/2], not p0 */
    float *target;          /* [n_aux] A: bound and KL target, or NULL */
    float *present;         /* [n_vars] tabular present_only: 1[x_s,j != 0 or x_t,j != 0] of the block's rows
                               (the mask is m (x) present everywhere), or NULL: every entry counts */
    snx_constraint con;
    int64_t n_pairs;
    int64_t *pj, *pk;       /* [n_pairs] ADJACENT variable pairs */
    float eps;
    int64_t *con_off;       /* [B + 1] */
} snx_obj;

/* Aux structure (a(m) layout, blocks) for a task; coefficients, target and constraints are set by
 * the caller afterwards (snx_obj_adjacent builds the Eq. 10 pairs). */
vs_status snx_obj_init(snx_obj *o, const snx_task *t, vs_error *err);
vs_status snx_obj_adjacent(snx_obj *o, float eps, vs_error *err);
/* Restrict a tabular objective to the present features (o->present from the task's rows). */
vs_status snx_obj_present(snx_obj *o, vs_error *err);
void snx_obj_free(snx_obj *o);
vs_tensor *snx_obj_value(void *ctx, vs_tensor *theta);   /* vs_gda_problem.objective */
vs_tensor *snx_obj_constraints(void *ctx, vs_tensor *theta);                  /* vs_gda_problem.constraints */
/* a(M) of constant masks M [n, p] -> out [n, q]. */
vs_status snx_group_values(const float *M, int64_t n, int64_t p, const vs_feature_group *groups, int64_t q, float *out);
/* 1 - exp(sum over groups of l), l = ln(1 - m): the group importance from log complements. */
vs_tensor *snx_group_from_log(vs_tensor *l, int axis, const int64_t *idx, int64_t q);

/* PGExplainer masks of the pairs of a local explanation (snx_pg.c). */
vs_status snx_pg_masks(const vs_snx_pg *pg, const vs_siamese *f, const vs_dataset *d, vs_snx_expl *e, vs_error *err);

/* ---- explanations ---------------------------------------------------------------------------------- */
/* New explanation with n items, sizes from the data set (tabular p, graphs n_edges of the row). */
vs_status snx_expl_new(vs_snx_method method, bool global, const vs_dataset *d, const int64_t *s, const int64_t *tt, int64_t n,
                       vs_snx_expl **out, vs_error *err);
/* [d->n] map row -> item index of a global explanation (-1 when absent); caller frees. */
int64_t *snx_row_map(const vs_snx_expl *e, int64_t n_rows, vs_error *err);
/* Checks shared by the entry points: model callbacks, data kind, rows in range. */
vs_status snx_check(const vs_siamese *f, const vs_dataset *d, const int64_t *rows, int64_t n_rows, const char *who, vs_error *err);
/* Check that global masks exist for every row and match the data set's sizes. */
vs_status snx_check_global(const vs_snx_expl *g, const vs_dataset *d, const int64_t *map, const int64_t *rows, int64_t n,
                           const char *who, vs_error *err);

#endif
