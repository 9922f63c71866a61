/* versus/snx.h - SNX: explaining Siamese networks with self-learned global invariants
 * (Siamese Network eXplainer; two-stage masks, gradient descent-ascent), and its baselines.
 *
 * The explained model is a Siamese network f(xs, xt) = cos(emb(xs), emb(xt)) on tabular rows
 * (one-hot minor features grouped into major features) or graphs (edges masked by weights).
 * A mask m in [0,1] multiplies the input: tabular m (x) x, graphs edge weights.  Masks are always
 * sigmoid outputs of free logits (the paper's footnote 3).
 *
 * Faithfulness loss (Eq. 1): a similarity is mapped to a probability p = (1 + cos) / 2 and
 *     l(f, f') = BCE(p, p') = -(p log p' + (1 - p) log(1 - p')),   p' clamped to [1e-6, 1 - 1e-6]
 * (the soft target p is the unmasked prediction; so l >= H(p), the bound Pick-all reaches).
 *
 * Methods (vs_snx_method; stage 1 and every optimised stage-2 mask run one optimiser, vs_gda_minimize):
 *   stage 1 (global mask M of one instance x, Eq. 4):  min_M l(f(x,x), f(x, M x)) + gamma |a(M)|_1
 *     tabular: a(M)_i = 1 - prod_j (1 - M_ij) over major feature i's one-hot group, no constraints;
 *     graphs:  a(M) = M, one mask value per undirected edge (both directions share it), and the
 *              adjacency constraints of Eq. 10, |M_j - M_k| - eps <= 0 for edges sharing a node, by GDA.
 *   stage 2 (local masks of a pair, Eq. 6):  min l(f(xs,xt), f(ms xs, mt xt)) + gamma (|a(ms)| + |a(mt)|)
 *     tabular: one shared mask m = ms = mt, constraints a(m)_i - a(Ms)_i <= 0 (Eq. 7, i over majors);
 *     graphs:  m = [ms; mt], constraints ms - Ms <= 0 and mt - Mt <= 0 per edge (Eqs. 7-8).
 *     SNX (GDA, Algorithm 1): pre_iters unconstrained steps, then GDA on the Lagrangian (Eq. 11-12).
 *     SNX-KL (Eq. 9): the constraints become beta KL(a(m) || a(M)) (Bernoulli means), plain descent
 *       over the same pre_iters + max_iters steps.
 *     SNX-UC: no constraints.  SNX-inter / SNX-union (tabular): GDA with min(Ms,Mt) / max(Ms,Mt).
 *     SNX-DES: GDA with the DES mask as Ms.  SNX-global / DES / Pick-all: a global mask used as is.
 *   baselines: SM (|d l_SN / d xs|, l_SN = BCE(y_st, (1 + cos) / 2), scaled to max 1 per pair),
 *     GNNExplainer (per pair), PGExplainer (shared edge-mask MLP).
 *
 * Step rule.  Eq. 12 writes plain gradient steps; with gamma = 1e-3 and 50-100 steps of 0.1 a plain
 * step barely moves sigmoid logits (gradients ~1e-3), so the default primal step is Adam with the
 * same step size (as PyTorch mask explainers do); VS_GDA_SGD gives the literal Eq. 12.
 * Dual (Algorithm 1, line 3 and Eq. 12).  The paper rescales lambda to unit length after each ascent
 * (VS_GDA_DUAL_UNIT).  With its eta2 = 1e-3 lambda then stays near 1/sqrt(c) for every constraint,
 * satisfied or not, so the primal step is about dg0/dm + (1/sqrt c) da/dm whatever the bounds a(M):
 * SNX behaves like SNX-UC with a stronger L1 and SNX, -inter, -union and -DES coincide.  The default
 * is therefore the bounded projected dual VS_GDA_DUAL_BALL (lambda >= 0, |lambda| <= dual_radius,
 * Lin et al. 2020, the bounded domain the paper's convergence argument asks for) with eta2 = 0.5: a
 * satisfied constraint's multiplier falls to 0 and a violated one's grows until the bound holds, so
 * the local mask obeys a(m) <= a(M) and different bounds give different masks.  dual_radius =
 * INFINITY gives the plain projection onto lambda >= 0.  The paper's dual: VS_GDA_DUAL_UNIT, eta2 1e-3.
 * Present features (tabular, present_only, the default).  A mask value on a minor feature the rows do
 * not have (x_j = 0, one-hot data) changes no prediction, yet it enters a(m), the L1 term and the
 * bounds; starting at 0.5 such values outrank the present features the optimiser shrinks.  With
 * present_only every tabular mask is restricted to the features the rows have, in both stages and
 * for every method alike: stage 1 and DES give M (x) 1[x != 0], stage 2 and SM give
 * m (x) 1[x_s != 0 or x_t != 0]; a(.) and the objective see only those entries.  false: the paper's
 * masks over every minor feature (DES: its gate over every feature).
 *
 * Ownership: result objects (vs_snx_expl, vs_snx_des, vs_snx_pg) are allocated by the library and
 * freed with their _free function; every input (model, data set, pairs, masks) stays the caller's.
 * Functions open their own tensor scope and leave no tensors behind.  Determinism: all randomness
 * comes from opts.seed. */
#ifndef VERSUS_SNX_H
#define VERSUS_SNX_H

#include <stdbool.h>
#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"
#include "versus/optimize.h"
#include "versus/pairs.h"
#include "versus/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the explained model ---------------------------------------------------------------------- */

/* f(xs, xt) = cos(emb(xs), emb(xt)).  Embeddings must be differentiable ops of their inputs (eval
 * mode, rows not mixed).  Tabular methods need embed; graph methods embed_graph; PGExplainer also
 * uses embed_nodes when given (else the node features x are the node embeddings). */
typedef struct vs_siamese {
    /* embeddings [N, d] of rows x [N, p] (tabular) */
    vs_tensor *(*embed)(void *ctx, vs_tensor *x);
    /* embedding [1, d] of one graph with node features g->x and per-edge weights w [n_edges] that
     * gradients flow into (NULL = all ones) */
    vs_tensor *(*embed_graph)(void *ctx, const vs_graph *g, vs_tensor *edge_weight);
    /* optional: node embeddings [n_nodes, d'] of one graph with edge weights as above */
    vs_tensor *(*embed_nodes)(void *ctx, const vs_graph *g, vs_tensor *edge_weight);
    void *ctx;
} vs_siamese;

/* The vs_siamese of a Siamese nn module (vs_siamese_new / model.json "siamese"): embed runs the
 * encoder on rows, embed_graph on one graph with its edge weights, embed_nodes the encoder up to
 * its readout.  Graphs need the data set's n_node_features.  The struct and the module stay the
 * caller's (they must outlive the vs_siamese); the module is put in evaluation mode. */
typedef struct vs_siamese_module {
    struct vs_module *module;
    int64_t n_node_features;
} vs_siamese_module;
vs_siamese vs_siamese_from_module(vs_siamese_module *sm);

/* ---- building blocks (differentiable) --------------------------------------------------------- */

/* a(M)_i = 1 - prod_{j in group i} (1 - M_j); m [..., p] -> [..., q] for the q groups over p columns. */
vs_tensor *vs_snx_group_importance(vs_tensor *m, const vs_feature_group *groups, int64_t q);
/* KL(n || N) = n ln(n/N) + (1-n) ln((1-n)/(1-N)) elementwise, Bernoulli means (both clamped to [1e-6, 1-1e-6]). */
vs_tensor *vs_snx_bernoulli_kl(vs_tensor *n, vs_tensor *N);
/* l = -(p ln p' + (1-p) ln(1-p')) elementwise, p' clamped to [1e-6, 1-1e-6]; p constant. */
vs_tensor *vs_snx_faithfulness_loss(vs_tensor *p, vs_tensor *p_masked);

/* ---- gradient descent-ascent (Eqs. 11-12), the one mask optimiser ---------------------------- */

/* vs_gda_minimize and its problem, options and traces live in the optimisation toolbox
 * (versus/optimize.h).  For SNX theta holds mask logits (m = sigmoid(theta)), so theta is the primal
 * variable the descent and the traces refer to; traces give Figs. 5 (|dL/dtheta|, |dL/dlambda|) and 6
 * (fraction of constraints violated). */
typedef vs_opt_trace vs_snx_trace;
void vs_snx_trace_clear(vs_snx_trace *t);  /* = vs_opt_trace_clear */

/* ---- methods and options ---------------------------------------------------------------------- */

typedef enum vs_snx_method {
    VS_SNX_PICK_ALL = 0,     /* all-ones mask */
    VS_SNX_DES,              /* DES unsupervised feature selection, the query's mask (tabular) */
    VS_SNX_GLOBAL,           /* SNX-global: the stage-1 mask used as the local mask */
    VS_SNX_SM,               /* saliency map |d l_SN / d xs| (graphs: d / d edge weights of both) */
    VS_SNX_UC,               /* SNX-UC: Eq. 6 without constraints */
    VS_SNX_KL,               /* SNX-KL: Eq. 9 */
    VS_SNX_DES_GDA,          /* SNX-DES: GDA with DES global masks (tabular) */
    VS_SNX_INTER,            /* SNX-inter: GDA with min(Ms, Mt) (tabular) */
    VS_SNX_UNION,            /* SNX-union: GDA with max(Ms, Mt) (tabular) */
    VS_SNX_GDA,              /* SNX: Algorithm 1 */
    VS_SNX_GNNEXPLAINER,     /* GNNExplainer per pair (graphs) */
    VS_SNX_PGEXPLAINER,      /* PGExplainer, generator trained on training pairs (graphs) */
    VS_SNX_RANDOM,           /* chance level: mask values U(0, 1) from the seed (present features, shared
                                tabular mask; graphs one value per undirected edge) */
    VS_SNX_METHOD_COUNT
} vs_snx_method;

/* Each method is an entry of the method registry (versus/method.h, family VS_METHOD_SNX) named in the
 * registry's spelling ("snx_kl"), its older dashed spelling ("snx-kl") the entry's alias. */
struct vs_method;
const struct vs_method *vs_snx_method_entry(vs_snx_method m);  /* NULL outside the enum */
int vs_snx_method_of(const struct vs_method *entry);          /* its vs_snx_method, or -1 (not SNX's) */
/* The label SNX's outputs print (explanation.json, the experiment's tables and results.json): the
 * entry's alias when it has one, else its name: "snx", "snx-kl", "gnnexplainer", ... */
const char *vs_snx_method_name(vs_snx_method m);
int vs_snx_method_from_name(const char *name);      /* by registry name or alias ("snx_kl", "snx-kl"); -1 when unknown */
/* The global masks a local method reads: VS_SNX_GLOBAL, VS_SNX_DES, or -1 (none). */
int vs_snx_method_global(vs_snx_method m);

typedef struct vs_snx_opts {
    /* stage 1, Eq. 4 */
    float gamma_global;     /* tabular 1e-3; graphs 0.1 (Molecule; BP 1e-4) */
    float lr_global;        /* 0.1 */
    int global_iters;       /* tabular 50, graphs 200 */
    float eps_adjacent;     /* Eq. 10 epsilon; not given in the paper: 0.1 */
    /* stage 2, Eqs. 6-9 */
    float gamma_local;      /* as gamma_global */
    float eta1, eta2;       /* 0.1, 0.5 (Eq. 12; the paper's eta2 is 1e-3 with its unit dual) */
    float beta;             /* SNX-KL: 1 */
    int pre_iters;          /* tabular 50, graphs 0 */
    int max_iters;          /* tabular 100, graphs 400 */
    vs_gda_step step;       /* VS_GDA_ADAM */
    vs_gda_dual dual;       /* VS_GDA_DUAL_BALL (the paper: VS_GDA_DUAL_UNIT with eta2 1e-3; see Dual above) */
    float dual_radius;      /* for VS_GDA_DUAL_BALL: 10 (INFINITY: projection onto lambda >= 0 only) */
    bool present_only;      /* tabular: masks on the features the rows have (see above): true */
    float init_logit;       /* starting logit of every SNX mask entry: 0 (m = 0.5) */
    float violation_tol;    /* 1e-3 */
    int batch;              /* problems optimised together (tabular rows per forward): 64 */
    bool trace;             /* keep GDA traces in the result */
    /* GNNExplainer (Ying et al. 2019): per graph of the pair, its edge mask against the other graph
     * held unmasked, loss -ln P(the model's predicted relation | masked pair) + size |m|_1 + ent mean
     * H(m).  PyG's size 0.005; 300 Adam steps of 0.1 (PyG: 100 of 0.01, which stop short); no entropy by
     * default: with PyG's 1.0 the edges the model ignores saturate at 1 while those it leans on stay
     * inside (0, 1) to tune the prediction, which ranks a planted motif below random masks. */
    int gnn_iters;          /* 300 */
    float gnn_lr;           /* 0.1 */
    float gnn_size;         /* edge size coefficient 0.005 (sum of the mask) */
    float gnn_ent;          /* edge entropy coefficient 0 (mean entropy; PyG: 1.0) */
    /* PGExplainer (Luo et al. 2020, PyG defaults) */
    int pg_epochs;          /* 30 */
    float pg_lr;            /* 0.003 */
    float pg_size, pg_ent;  /* 0.05, 1.0 */
    float pg_t0, pg_t1;     /* concrete temperature annealed from 5 to 2 */
    int pg_hidden;          /* 64 */
    int pg_batch;           /* pairs per step: 16 */
    /* DES */
    int des_knn;            /* neighbours for pseudo-labels: 5 */
    int des_pool;           /* at most this many training rows take part: 2000 */
    int des_iters;          /* 300 */
    float des_lr;           /* 0.05 */
    float des_l1;           /* sparsity weight on the mean gate: 0.05 */
    uint64_t seed;          /* 1 */
    int64_t first_item;     /* index of this call's first item in a larger run (a shard): per-item seeds; 0 */
} vs_snx_opts;

/* Section IV-H defaults for tabular data (VS_DATA_TABULAR) or graphs (VS_DATA_GRAPHS). */
void vs_snx_opts_init(vs_snx_opts *o, vs_data_kind kind);

/* ---- explanations ------------------------------------------------------------------------------ */

/* Masks from one method.  Global: n rows, item k explains row s[k] (t[k] = s[k]) with mask ms.
 * Local: n pairs (s[k], t[k]) with masks ms over x_s and mt over x_t (tabular: the same values).
 * Mask k over x_s is ms[s_off[k] .. s_off[k+1]): tabular p values (minor features); graphs one
 * value per directed edge (equal on an edge and its reverse).  mt/t_off are NULL for global masks. */
typedef struct vs_snx_expl {
    vs_snx_method method;
    bool global;
    int64_t n;
    int64_t *s, *t;
    int64_t *s_off, *t_off;
    float *ms, *mt;
    vs_snx_trace trace;     /* filled by GDA-based methods when opts.trace, else zeros */
} vs_snx_expl;

void vs_snx_expl_free(vs_snx_expl *e);   /* NULL is fine */
/* Index k of the item explaining data set row `row` in a global explanation, or -1. */
int64_t vs_snx_expl_find(const vs_snx_expl *e, int64_t row);

/* DES-style unsupervised feature selection (the paper's baseline [47], simplified): pseudo-labels
 * from kNN over training rows (j among i's des_knn nearest: 1, des_knn random others: 0), a gate
 * g = sigmoid(u) in [0,1]^p learned so that sigmoid(b - softplus(a) sum_f g_f (x_if - x_jf)^2)
 * predicts them, with des_l1 * mean(g) for sparsity.  The mask of row r is g (x) 1[x_r != 0] with
 * opts.present_only (as every SNX mask), else g. */
typedef struct vs_snx_des {
    int64_t p;
    float *gate;            /* [p] */
} vs_snx_des;
vs_status vs_snx_des_fit(const vs_dataset *d, const int64_t *rows, int64_t n_rows, const vs_snx_opts *o, vs_snx_des **out,
                         vs_error *err);
void vs_snx_des_free(vs_snx_des *des);

/* PGExplainer: an MLP [h_u; h_v] -> hidden (ReLU) -> logit, shared by all graphs, symmetrised over
 * an edge and its reverse; trained on training pairs with concrete (Gumbel-sigmoid) samples,
 * loss = faithfulness + pg_size sum(m) + pg_ent mean H(m), Adam. */
typedef struct vs_snx_pg vs_snx_pg;
vs_status vs_snx_pg_train(const vs_siamese *f, const vs_dataset *d, const vs_pairs *train, const vs_snx_opts *o, vs_snx_pg **out,
                          vs_error *err);
void vs_snx_pg_free(vs_snx_pg *pg);

/* Stage 1: global masks of rows[0..n_rows) (NULL: every row) by VS_SNX_GLOBAL (Eq. 4),
 * VS_SNX_DES (des required), VS_SNX_PICK_ALL or VS_SNX_RANDOM (the chance level). */
vs_status vs_snx_global(const vs_siamese *f, const vs_dataset *d, const int64_t *rows, int64_t n_rows, vs_snx_method method,
                        const vs_snx_des *des, const vs_snx_opts *o, vs_snx_expl **out, vs_error *err);

/* Stage 2: local masks of every pair by any method.  global: masks of every row the pairs use, as
 * vs_snx_method_global(method) says (SNX-global masks, or DES masks for VS_SNX_DES and
 * VS_SNX_DES_GDA; or any masks given as domain knowledge); NULL when the method needs none.  pg: a
 * trained generator for VS_SNX_PGEXPLAINER.  SM needs pair labels (pairs->label). */
vs_status vs_snx_local(const vs_siamese *f, const vs_dataset *d, const vs_pairs *pairs, vs_snx_method method,
                       const vs_snx_expl *global, const vs_snx_pg *pg, const vs_snx_opts *o, vs_snx_expl **out,
                       vs_error *err);

/* Everything a method needs, in one call: DES fitted on train_rows, PGExplainer trained on
 * train_pairs, SNX-global masks of the rows of test_pairs; then the local masks of test_pairs. */
vs_status vs_snx_explain(const vs_siamese *f, const vs_dataset *d, const int64_t *train_rows, int64_t n_train,
                         const vs_pairs *train_pairs, const vs_pairs *test_pairs, vs_snx_method method, const vs_snx_opts *o,
                         vs_snx_expl **out, vs_error *err);

/* ---- evaluation (Section IV-A) ----------------------------------------------------------------- */

typedef struct vs_snx_eval_opts {
    bool select;            /* true: evaluate binary top selections; false: the soft masks as they are */
    int64_t top_k;          /* tabular: minor features selected (10) */
    double top_frac;        /* graphs: fraction of (undirected) edges selected (0.75) */
    int64_t truth_k;        /* precision/recall@k against planted truth; 0: k = number of true items */
    float violation_tol;    /* a(m)_i - a(M)_i > tol counts as violated (1e-3) */
    bool present_only;      /* tabular: take the top_k among the minor features the item has: a local mask
                               times 1[x_s or x_t], a global mask times 1[x], before FA, CF and conformity
                               select (a mask value on an absent feature changes no prediction).  false:
                               over every minor feature, as the paper.  Violations (raw masks) and
                               precision (ranked by a(m (x) x_s)) are the same either way; graphs ignore it. */
} vs_snx_eval_opts;
void vs_snx_eval_opts_init(vs_snx_eval_opts *o, vs_data_kind kind);

/* Scores of one explained item (NAN where not applicable). */
typedef struct vs_snx_eval {
    double fa;              /* Eq. 1: l(f(xs,xt), f(S(ms) xs, S(mt) xt)); global: l(f(x,x), f(x, S(M) x)) */
    double cf;              /* Eq. 2: the same with 1 - S(m) */
    double conformity;      /* Jaccard(a(S(M)), a(S(m))): majors (tabular) / edges, mean of s and t (graphs) */
    int64_t violated;       /* constraints a(m)_i - a(M)_i > tol on the raw masks (Eqs. 7-8); -1 without M */
    int64_t n_constraints;
    double precision, recall; /* @k against group_truth (majors ranked by a(m (x) x_s)) or edge_truth
                                 (undirected edges of both graphs ranked by mask); NAN without truth */
} vs_snx_eval;

/* Evaluate every item of e; global (may be NULL) gives the global masks for conformity and
 * violations of local masks.  out[e->n]. */
vs_status vs_snx_evaluate(const vs_siamese *f, const vs_dataset *d, const vs_snx_expl *e, const vs_snx_expl *global,
                          const vs_snx_eval_opts *o, vs_snx_eval *out, vs_error *err);
/* Fig. 7: mean FA and CF over the items for each selection level (tabular: k = levels[i] minor
 * features; graphs: fraction levels[i] of edges).  o (NULL: the defaults) gives the other options,
 * e.g. present_only; its top_k / top_frac are replaced by the levels.  fa[n_levels], cf[n_levels]. */
vs_status vs_snx_sensitivity(const vs_siamese *f, const vs_dataset *d, const vs_snx_expl *e, const vs_snx_eval_opts *o,
                             const double *levels, int n_levels, double *fa, double *cf, vs_error *err);

/* sel[i] = 1 for the k largest v (ties: lower index first), else 0; k clamped to [0, n]. */
void vs_snx_topk(const float *v, int64_t n, int64_t k, uint8_t *sel);
/* Precision and recall of the k highest scores against truth[n] (k <= 0: k = number of true items);
 * the slots left at a tie on the k-th score go to the tied items at random (expected hits), so a
 * constant mask scores the chance level.  NAN when there is no true item. */
void vs_snx_precision_recall(const float *score, const uint8_t *truth, int64_t n, int64_t k, double *precision, double *recall);

/* ---- one pair, explained and scored (`versus explain snx`) -------------------------------------- */

/* What the pairs of one data set share, fitted once on its training portion: DES (for methods that
 * read DES masks, vs_snx_method_global) and PGExplainer's generator (for VS_SNX_PGEXPLAINER); NULL
 * where the method needs neither.  Owned; vs_snx_fitted_clear frees both. */
typedef struct vs_snx_fitted {
    vs_snx_des *des;
    vs_snx_pg *pg;
} vs_snx_fitted;
vs_status vs_snx_fit(const vs_siamese *f, const vs_dataset *d, const int64_t *train_rows, int64_t n_train, const vs_pairs *train_pairs,
                     vs_snx_method method, const vs_snx_opts *o, vs_snx_fitted *out, vs_error *err);
void vs_snx_fitted_clear(vs_snx_fitted *fit);

/* One pair explained: the SNX-global masks (Eq. 4) of its query (item 0) and reference (item 1), the
 * method's local masks (one item), the local masks' scores (conformity and violations against the
 * global masks the method reads) and the global masks' own.  Owned; vs_snx_pair_expl_clear frees it. */
typedef struct vs_snx_pair_expl {
    vs_snx_expl *global;
    vs_snx_expl *local;
    vs_snx_eval eval;
    vs_snx_eval global_eval[2];
} vs_snx_pair_expl;
/* Rows (s, t) of d, same: whether they are of one class (SM's loss), by method with what fit holds
 * (vs_snx_fit), options o and scores eo, into *out. */
vs_status vs_snx_explain_pair(const vs_siamese *f, const vs_dataset *d, int64_t s, int64_t t, bool same, vs_snx_method method,
                              const vs_snx_fitted *fit, const vs_snx_opts *o, const vs_snx_eval_opts *eo, vs_snx_pair_expl *out,
                              vs_error *err);
void vs_snx_pair_expl_clear(vs_snx_pair_expl *p);
/* The model's similarity of rows s and t: cos(emb(x_s), emb(x_t)) (graphs unweighted); NAN on failure. */
double vs_snx_similarity(const vs_siamese *f, const vs_dataset *d, int64_t s, int64_t t);

/* ---- statistics --------------------------------------------------------------------------------- */

/* Mean and sample standard deviation (n - 1) of the finite values of x; count returned (NAN if none). */
int64_t vs_mean_std(const double *x, int64_t n, double *mean, double *std);
/* Regularised incomplete beta I_x(a, b), a, b > 0, x in [0, 1] (continued fraction, Lentz). */
double vs_incomplete_beta(double a, double b, double x);
/* Paired t-test of the pairs (a_i, b_i) where both are finite: d = a - b, t = mean(d) / (sd(d) / sqrt n),
 * df = n - 1, two-sided p = I_{df/(df+t^2)}(df/2, 1/2); all d equal: p = 1 when they are 0, else 0.
 * VS_ERR_ARG with fewer than 2 pairs.  (The experiment's tests: every method explains the same pairs.) */
vs_status vs_paired_t_test(const double *a, const double *b, int64_t n, double *t, double *df, double *p, vs_error *err);
/* Welch's unequal-variance t-test of the finite values of a and b: t, Welch-Satterthwaite df and the
 * two-sided p = I_{df/(df+t^2)}(df/2, 1/2).  VS_ERR_ARG with fewer than 2 values per side. */
vs_status vs_welch_t_test(const double *a, int64_t na, const double *b, int64_t nb, double *t, double *df, double *p,
                          vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
