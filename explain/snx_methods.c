/* snx_methods.c - SNX's methods as entries of the method registry (family VS_METHOD_SNX, listed in
 * explain/registry.c), and the map between an entry and the vs_snx_method that vs_snx_global /
 * vs_snx_local switch on.  The names live in the entries alone: the registry's underscore spelling
 * (snx_kl), the older dashed one (snx-kl) as the alias.  The alias is also the label the SNX outputs
 * print (explanation.json, the experiment's tables and results.json), so that results stay comparable
 * with earlier runs.  The methods themselves are in snx_explain.c, snx_des.c and snx_pg.c. */
#include "explain/snx_internal.h"
#include "versus/method.h"

/* No options of their own here: vs_snx_opts carries SNX's (versus/snx.h). */
static const vs_method_param no_params[] = {{NULL, 0, 0, 0, 0, NULL, NULL}};

#define SNX_ENTRY(id, nm, al, hlp)                                                                                           \
    const vs_method id = {.name = nm, .help = hlp, .output = VS_OUTPUT_MASK, .params = no_params, .family = VS_METHOD_SNX, \
                          .alias = al}

SNX_ENTRY(vs_method_pick_all, "pick_all", "pick-all", "the all-ones mask: every feature or edge kept (the bound of Table II)");
SNX_ENTRY(vs_method_snx_random, "random", NULL, "mask values U(0, 1) from the seed on the present features or edges: the chance level");
SNX_ENTRY(vs_method_des, "des", NULL, "DES unsupervised feature selection (a gate fitted on kNN pseudo-labels), the query's mask (tabular)");
SNX_ENTRY(vs_method_snx_global, "snx_global", "snx-global", "SNX-global: the stage-1 invariant mask of the query (Eq. 4; graphs Eq. 10) as the local mask");
SNX_ENTRY(vs_method_sm, "sm", NULL, "saliency map |d l_SN / d input| of the pair's loss, scaled to a maximum of 1");
SNX_ENTRY(vs_method_snx_uc, "snx_uc", "snx-uc", "SNX-UC: the local mask of Eq. 6 without the global mask's constraints");
SNX_ENTRY(vs_method_snx_kl, "snx_kl", "snx-kl", "SNX-KL: Eq. 9, the global mask entering as a beta KL term instead of constraints");
SNX_ENTRY(vs_method_snx_des, "snx_des", "snx-des", "SNX-DES: Algorithm 1 with DES masks as the global masks (tabular)");
SNX_ENTRY(vs_method_snx_inter, "snx_inter", "snx-inter", "SNX-inter: Algorithm 1 bounded by min(Ms, Mt) of both rows' global masks (tabular)");
SNX_ENTRY(vs_method_snx_union, "snx_union", "snx-union", "SNX-union: Algorithm 1 bounded by max(Ms, Mt) of both rows' global masks (tabular)");
SNX_ENTRY(vs_method_snx, "snx", NULL, "SNX, Algorithm 1: gradient descent-ascent with the global masks as constraints (Eqs. 6-8)");
SNX_ENTRY(vs_method_gnnexplainer, "gnnexplainer", NULL, "GNNExplainer (Ying et al. 2019): each graph's edge mask against the other held unmasked (graphs)");
SNX_ENTRY(vs_method_pgexplainer, "pgexplainer", NULL, "PGExplainer (Luo et al. 2020): an edge-mask MLP trained on the training pairs (graphs)");

/* The entry of each vs_snx_method, in the enum's order. */
static const vs_method *const entries[VS_SNX_METHOD_COUNT] = {
    [VS_SNX_PICK_ALL] = &vs_method_pick_all, [VS_SNX_DES] = &vs_method_des,           [VS_SNX_GLOBAL] = &vs_method_snx_global,
    [VS_SNX_SM] = &vs_method_sm,             [VS_SNX_UC] = &vs_method_snx_uc,         [VS_SNX_KL] = &vs_method_snx_kl,
    [VS_SNX_DES_GDA] = &vs_method_snx_des,   [VS_SNX_INTER] = &vs_method_snx_inter,   [VS_SNX_UNION] = &vs_method_snx_union,
    [VS_SNX_GDA] = &vs_method_snx,           [VS_SNX_GNNEXPLAINER] = &vs_method_gnnexplainer,
    [VS_SNX_PGEXPLAINER] = &vs_method_pgexplainer, [VS_SNX_RANDOM] = &vs_method_snx_random,
};

const vs_method *vs_snx_method_entry(vs_snx_method m) { return (int)m >= 0 && m < VS_SNX_METHOD_COUNT ? entries[m] : NULL; }

int vs_snx_method_of(const vs_method *entry)
{
    for (int i = 0; entry && i < VS_SNX_METHOD_COUNT; i++)
        if (entries[i] == entry) return i;
    return -1;
}

const char *vs_snx_method_name(vs_snx_method m)
{
    const vs_method *e = vs_snx_method_entry(m);
    return !e ? NULL : e->alias ? e->alias : e->name;
}

int vs_snx_method_from_name(const char *name) { return vs_snx_method_of(vs_method_find(name)); }

int vs_snx_method_global(vs_snx_method m)
{
    switch (m) {
    case VS_SNX_DES:
    case VS_SNX_DES_GDA: return VS_SNX_DES;
    case VS_SNX_GLOBAL:
    case VS_SNX_KL:
    case VS_SNX_INTER:
    case VS_SNX_UNION:
    case VS_SNX_GDA: return VS_SNX_GLOBAL;
    default: return -1;
    }
}
