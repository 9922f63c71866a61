/* datasets/synth_graph.c - random background graphs with a planted motif in the positive class.
 *
 * Background: Barabasi-Albert (preferential attachment through an endpoint list) or Erdos-Renyi
 * made connected.  Positives get a motif (cycle, house, nitro ring) attached by 1-2 edges; node ids
 * are shuffled and directed edges sorted by (src, dst) so nothing betrays the motif's position.
 * Integer arithmetic and exact uniform comparisons only: bit-identical for a given seed. */
#include "versus/synth.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "datasets/synth_common.h"

#define MOTIF_MAX 9
#define RANDOM_TYPE (-1)

typedef struct motif_def {
    int nodes, edges;
    int e[MOTIF_MAX][2];
    int type[MOTIF_MAX];      /* atom type or RANDOM_TYPE (background distribution) */
    int n_attach;
    int attach[MOTIF_MAX];    /* motif nodes that may bond to the background */
} motif_def;

#define R RANDOM_TYPE
static const motif_def motifs[] = {
    [VS_MOTIF_NONE] = {0, 0, {{0, 0}}, {0}, 0, {0}},
    [VS_MOTIF_CYCLE5] = {5, 5, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 0}}, {R, R, R, R, R}, 5, {0, 1, 2, 3, 4}},
    [VS_MOTIF_CYCLE6] = {6, 6, {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}}, {R, R, R, R, R, R}, 6,
                         {0, 1, 2, 3, 4, 5}},
    [VS_MOTIF_HOUSE] = {5, 6, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 4}, {1, 4}}, {R, R, R, R, R}, 5, {0, 1, 2, 3, 4}},
    [VS_MOTIF_NITRO_RING] = {9, 9,
                             {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {5, 0}, {3, 6}, {6, 7}, {6, 8}},
                             {VS_ATOM_N, VS_ATOM_C, VS_ATOM_C, VS_ATOM_C, VS_ATOM_C, VS_ATOM_C, VS_ATOM_N, VS_ATOM_O,
                              VS_ATOM_O},
                             4, {1, 2, 4, 5}},
};
#undef R

static int motif_valid(vs_synth_motif m) { return m >= VS_MOTIF_NONE && m <= VS_MOTIF_NITRO_RING; }

int64_t vs_synth_motif_nodes(vs_synth_motif m) { return motif_valid(m) ? motifs[m].nodes : 0; }
int64_t vs_synth_motif_edges(vs_synth_motif m) { return motif_valid(m) ? motifs[m].edges : 0; }

void vs_synth_graph_defaults(vs_synth_graph_opts *o)
{
    memset(o, 0, sizeof *o);
    o->n = 200;
    o->min_nodes = 10;
    o->max_nodes = 30;
    o->background = VS_BG_BARABASI_ALBERT;
    o->ba_m = 1;
    o->er_p = 0.15;
    o->motif = VS_MOTIF_HOUSE;
    o->decoy = VS_MOTIF_NONE;
    o->positive_fraction = 0.5;
    o->attach_edges = 1;
    o->seed = 1;
}

static vs_status check_opts(const vs_synth_graph_opts *o, vs_error *err)
{
    const char *f = "synth_graphs";
    if (o->n < 1) return vs_error_set(err, VS_ERR_ARG, "%s: n = %lld, expected >= 1", f, (long long)o->n);
    if (o->min_nodes < 4 || o->max_nodes < o->min_nodes || o->max_nodes > 1000)
        return vs_error_set(err, VS_ERR_ARG, "%s: nodes range [%lld, %lld], expected 4 <= min <= max <= 1000", f,
                            (long long)o->min_nodes, (long long)o->max_nodes);
    if (o->background != VS_BG_BARABASI_ALBERT && o->background != VS_BG_ERDOS_RENYI)
        return vs_error_set(err, VS_ERR_ARG, "%s: background = %d, expected BA (0) or ER (1)", f, (int)o->background);
    if (!motif_valid(o->motif) || o->motif == VS_MOTIF_NONE)
        return vs_error_set(err, VS_ERR_ARG, "%s: motif = %d, expected a motif other than NONE", f, (int)o->motif);
    if (!motif_valid(o->decoy) || o->decoy == o->motif)
        return vs_error_set(err, VS_ERR_ARG, "%s: decoy = %d, expected NONE or a motif other than %d", f,
                            (int)o->decoy, (int)o->motif);
    /* The smallest negative background: min_nodes + motif nodes - decoy nodes. */
    int64_t smallest = o->min_nodes + motifs[o->motif].nodes - motifs[o->decoy].nodes;
    if (o->background == VS_BG_BARABASI_ALBERT && (o->ba_m < 1 || o->ba_m + 1 > smallest))
        return vs_error_set(err, VS_ERR_ARG, "%s: ba_m = %lld, expected 1..%lld (smallest background %lld nodes)", f,
                            (long long)o->ba_m, (long long)(smallest - 1), (long long)smallest);
    if (smallest < 2)
        return vs_error_set(err, VS_ERR_ARG, "%s: backgrounds of %lld nodes are too small for the decoy", f,
                            (long long)smallest);
    if (!(o->er_p >= 0.0 && o->er_p <= 1.0))
        return vs_error_set(err, VS_ERR_ARG, "%s: er_p = %g, expected [0, 1]", f, o->er_p);
    if (!(o->positive_fraction >= 0.0 && o->positive_fraction <= 1.0))
        return vs_error_set(err, VS_ERR_ARG, "%s: positive_fraction = %g, expected [0, 1]", f, o->positive_fraction);
    if (o->attach_edges < 1 || o->attach_edges > 2)
        return vs_error_set(err, VS_ERR_ARG, "%s: attach_edges = %lld, expected 1 or 2", f, (long long)o->attach_edges);
    return VS_OK;
}

/* One graph under construction: undirected edges (u[k], v[k]) plus a dense adjacency for lookups. */
typedef struct builder {
    int64_t n;           /* nodes */
    uint8_t *adj;        /* [n, n] */
    int *type;           /* [n] atom types */
    int64_t m, cap;      /* undirected edges used / allocated */
    int64_t *u, *v;      /* [cap] */
    uint8_t *truth;      /* [cap] */
} builder;

static void builder_free(builder *b)
{
    free(b->adj);
    free(b->type);
    free(b->u);
    free(b->v);
    free(b->truth);
}

/* Add the undirected edge {a, c} unless it is a loop or present; returns 1 when added. */
static int add_edge(builder *b, int64_t a, int64_t c, uint8_t truth)
{
    if (a == c || b->adj[a * b->n + c]) return 0;
    assert(b->m < b->cap);   /* cap = n (n - 1) / 2 and duplicates are refused above */
    b->adj[a * b->n + c] = b->adj[c * b->n + a] = 1;
    b->u[b->m] = a;
    b->v[b->m] = c;
    b->truth[b->m] = truth;
    b->m++;
    return 1;
}

static int random_type(vs_rng *r)
{
    uint64_t t = vs_rng_below(r, 8);   /* C 6/8, N 1/8, O 1/8 */
    return t < 6 ? VS_ATOM_C : t == 6 ? VS_ATOM_N : VS_ATOM_O;
}

/* Barabasi-Albert on nodes [0, nb): a (m+1)-clique, then each new node links to m distinct nodes
 * drawn with probability proportional to degree (uniform draws from the list of edge endpoints). */
static vs_status barabasi_albert(builder *b, int64_t nb, int64_t m, vs_rng *r, vs_error *err)
{
    int64_t *ends = vs_data_calloc((size_t)(2 * b->cap), sizeof *ends, "synth_graphs endpoints", err);
    if (!ends) return VS_ERR_NOMEM;
    int64_t ne = 0;
    for (int64_t a = 0; a <= m; a++)
        for (int64_t c = a + 1; c <= m; c++)
            if (add_edge(b, a, c, 0)) {
                ends[ne++] = a;
                ends[ne++] = c;
            }
    for (int64_t t = m + 1; t < nb; t++) {
        int64_t first = ne;
        for (int64_t k = 0; k < m;) {
            int64_t target = ends[vs_rng_below(r, (uint64_t)first)];
            if (add_edge(b, t, target, 0)) {
                ends[ne++] = t;
                ends[ne++] = target;
                k++;
            }
        }
    }
    free(ends);
    return VS_OK;
}

static int64_t find_root(int64_t *parent, int64_t a)
{
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
}

/* Erdos-Renyi G(nb, p) on nodes [0, nb), then every node outside node 0's component joins it by one
 * edge to a uniform node of that component (scanning nodes in order). */
static vs_status erdos_renyi(builder *b, int64_t nb, double p, vs_rng *r, vs_error *err)
{
    int64_t *parent = vs_data_calloc((size_t)nb, sizeof *parent, "synth_graphs components", err);
    int64_t *members = vs_data_calloc((size_t)nb, sizeof *members, "synth_graphs components", err);
    if (!parent || !members) {
        free(parent);
        free(members);
        return VS_ERR_NOMEM;
    }
    for (int64_t a = 0; a < nb; a++) parent[a] = a;
    for (int64_t a = 0; a < nb; a++)
        for (int64_t c = a + 1; c < nb; c++)
            if (vs_rng_uniform(r) < p) {
                add_edge(b, a, c, 0);
                parent[find_root(parent, a)] = find_root(parent, c);
            }
    for (int64_t a = 1; a < nb; a++) {
        int64_t main_root = find_root(parent, 0);
        if (find_root(parent, a) == main_root) continue;
        int64_t nm = 0;
        for (int64_t c = 0; c < nb; c++)
            if (find_root(parent, c) == main_root) members[nm++] = c;
        add_edge(b, a, members[vs_rng_below(r, (uint64_t)nm)], 0);
        parent[find_root(parent, a)] = main_root;
    }
    free(parent);
    free(members);
    return VS_OK;
}

/* Motif def on nodes [base, base + nodes), attached to the background [0, base) by n_attach edges. */
static void plant(builder *b, const motif_def *md, int64_t base, int truth, int64_t n_attach, vs_rng *r)
{
    for (int k = 0; k < md->nodes; k++) b->type[base + k] = md->type[k] == RANDOM_TYPE ? random_type(r) : md->type[k];
    for (int k = 0; k < md->edges; k++) add_edge(b, base + md->e[k][0], base + md->e[k][1], (uint8_t)truth);
    size_t pick[MOTIF_MAX];
    for (int k = 0; k < md->n_attach; k++) pick[k] = (size_t)md->attach[k];
    vs_rng_shuffle(r, pick, (size_t)md->n_attach);
    for (int64_t k = 0; k < n_attach; k++) add_edge(b, base + (int64_t)pick[k], (int64_t)vs_rng_below(r, (uint64_t)base), 0);
}

typedef struct dir_edge {
    int64_t src, dst;
    uint8_t truth;
} dir_edge;

static int cmp_edge(const void *pa, const void *pb)
{
    const dir_edge *a = pa, *b = pb;
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    return (a->dst > b->dst) - (a->dst < b->dst);
}

/* Relabel nodes through perm, store both directions sorted by (src, dst), pair reverses. */
static vs_status emit(const builder *b, const size_t *perm, vs_graph *g, vs_error *err)
{
    int64_t ne = 2 * b->m;
    dir_edge *de = vs_data_calloc((size_t)ne, sizeof *de, "synth_graphs edges", err);
    if (!de) return VS_ERR_NOMEM;
    for (int64_t k = 0; k < b->m; k++) {
        int64_t a = (int64_t)perm[b->u[k]], c = (int64_t)perm[b->v[k]];
        de[2 * k] = (dir_edge){a, c, b->truth[k]};
        de[2 * k + 1] = (dir_edge){c, a, b->truth[k]};
    }
    qsort(de, (size_t)ne, sizeof *de, cmp_edge);
    g->n_nodes = b->n;
    g->n_edges = ne;
    g->src = vs_data_calloc((size_t)ne, sizeof *g->src, "synth_graphs edges", err);
    g->dst = vs_data_calloc((size_t)ne, sizeof *g->dst, "synth_graphs edges", err);
    g->rev = vs_data_calloc((size_t)ne, sizeof *g->rev, "synth_graphs edges", err);
    g->edge_truth = vs_data_calloc((size_t)ne, sizeof *g->edge_truth, "synth_graphs edges", err);
    g->x = vs_data_calloc((size_t)b->n * VS_SYNTH_N_ATOMS, sizeof *g->x, "synth_graphs nodes", err);
    if (!g->src || !g->dst || !g->rev || !g->edge_truth || !g->x) {
        free(de);
        return VS_ERR_NOMEM;
    }
    for (int64_t e = 0; e < ne; e++) {
        g->src[e] = de[e].src;
        g->dst[e] = de[e].dst;
        g->edge_truth[e] = de[e].truth;
    }
    for (int64_t e = 0; e < ne; e++) {
        dir_edge key = {de[e].dst, de[e].src, 0};
        const dir_edge *hit = bsearch(&key, de, (size_t)ne, sizeof *de, cmp_edge);
        g->rev[e] = hit - de;   /* always found: both directions were stored */
    }
    for (int64_t a = 0; a < b->n; a++) g->x[(int64_t)perm[a] * VS_SYNTH_N_ATOMS + b->type[a]] = 1.0f;
    free(de);
    return VS_OK;
}

static vs_status make_graph(const vs_synth_graph_opts *o, int64_t label, vs_rng *r, vs_graph *g, vs_error *err)
{
    vs_synth_motif planted = label ? o->motif : o->decoy;
    int64_t total = o->min_nodes + (int64_t)vs_rng_below(r, (uint64_t)(o->max_nodes - o->min_nodes + 1)) +
                    motifs[o->motif].nodes;
    int64_t nb = total - motifs[planted].nodes;
    builder b = {.n = total, .cap = total * (total - 1) / 2};
    b.adj = vs_data_calloc((size_t)(total * total), 1, "synth_graphs adjacency", err);
    b.type = vs_data_calloc((size_t)total, sizeof *b.type, "synth_graphs nodes", err);
    b.u = vs_data_calloc((size_t)b.cap, sizeof *b.u, "synth_graphs edges", err);
    b.v = vs_data_calloc((size_t)b.cap, sizeof *b.v, "synth_graphs edges", err);
    b.truth = vs_data_calloc((size_t)b.cap, 1, "synth_graphs edges", err);
    size_t *perm = vs_data_calloc((size_t)total, sizeof *perm, "synth_graphs nodes", err);
    vs_status st = VS_ERR_NOMEM;
    if (!b.adj || !b.type || !b.u || !b.v || !b.truth || !perm) goto done;

    for (int64_t a = 0; a < nb; a++) b.type[a] = random_type(r);
    st = o->background == VS_BG_BARABASI_ALBERT ? barabasi_albert(&b, nb, o->ba_m, r, err)
                                                : erdos_renyi(&b, nb, o->er_p, r, err);
    if (st != VS_OK) goto done;
    if (planted != VS_MOTIF_NONE) plant(&b, &motifs[planted], nb, planted == o->motif, o->attach_edges, r);
    for (int64_t a = 0; a < total; a++) perm[a] = (size_t)a;
    vs_rng_shuffle(r, perm, (size_t)total);
    st = emit(&b, perm, g, err);
done:
    builder_free(&b);
    free(perm);
    return st;
}

vs_status vs_synth_graphs(const vs_synth_graph_opts *o, vs_dataset **out, vs_error *err)
{
    *out = NULL;
    vs_status st = check_opts(o, err);
    if (st != VS_OK) return st;
    /* The smallest graph has min_nodes + motif nodes, its one-hot rows and at least a spanning tree
     * (each edge twice: src, dst, rev, truth): the whole set is checked against the budget first. */
    size_t least = (size_t)(o->min_nodes + motifs[o->motif].nodes);
    size_t per_graph = sizeof(vs_graph) + least * VS_SYNTH_N_ATOMS * sizeof(float) + 2 * (least - 1) * (3 * sizeof(int64_t) + 1);
    if ((st = vs_mem_check((size_t)o->n, per_graph, "synth_graphs graphs", err)) != VS_OK) return st;
    vs_dataset *d = vs_data_new(VS_DATA_GRAPHS, "synthetic-graphs", err);
    if (!d) return VS_ERR_NOMEM;
    static const char *const classes[2] = {"negative", "positive"};
    if ((st = vs_data_set_classes(d, 2, classes, err)) != VS_OK) goto fail;
    d->n_node_features = VS_SYNTH_N_ATOMS;
    d->y = vs_data_calloc((size_t)o->n, sizeof *d->y, "synth_graphs labels", err);
    d->graphs = vs_data_calloc((size_t)o->n, sizeof *d->graphs, "synth_graphs graphs", err);
    d->n = o->n;
    if (!d->y || !d->graphs) {
        st = VS_ERR_NOMEM;
        goto fail;
    }
    vs_rng rng;
    vs_rng_seed(&rng, o->seed);
    for (int64_t i = 0; i < o->n; i++) {
        d->y[i] = vs_rng_uniform(&rng) < o->positive_fraction;
        if ((st = make_graph(o, d->y[i], &rng, &d->graphs[i], err)) != VS_OK) goto fail;
    }
    *out = d;
    return VS_OK;
fail:
    vs_dataset_free(d);
    return st;
}
