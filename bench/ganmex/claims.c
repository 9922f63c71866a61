/* bench/ganmex/claims.c - the GANMEX paper's claims (Tables 1-2, Fig. 3G) checked against one run, each
 * marked reproduced, in direction only, not reproduced or not measured, with the reason. */
#include "bench/ganmex/ganmex_bench.h"
#include "versus/json.h"
#include "versus/report.h"

#include <math.h>
#include <stdio.h>

/* Whether cell (m, b) has the largest value of metric k (0 AOPC_L, 1 AOPC_all, 2 Gini, 3 faithfulness,
 * 4 monotonicity) among every method and baseline of the run. */
static double metric(const gx_cell *c, int k) { return k == 0 ? c->aopc_l : k == 1 ? c->aopc_all : k == 2 ? c->gini : k == 3 ? c->faith : c->mono; }

static bool leads(const gx_run *run, int m, int b, int k)
{
    const gx_cell *c = &run->cell[m][b];
    if (!c->done || isnan(metric(c, k))) return false;
    for (int i = 0; i < GX_N_METHODS; i++)
        for (int j = 0; j < GX_N_BASELINES; j++)
            if (run->cell[i][j].done && metric(&run->cell[i][j], k) > metric(c, k)) return false;
    return true;
}

static vs_claim_verdict both_either(bool a, bool b) { return a && b ? VS_CLAIM_REPRODUCED : a || b ? VS_CLAIM_DIRECTION : VS_CLAIM_NOT_REPRODUCED; }

void vs_gx_claims(const gx_run *run, vs_report *r, vs_json *data)
{
    const gx_cell(*cl)[GX_N_BASELINES] = run->cell;
    vs_report_table *t = vs_report_claims_table(r, "GANMEX, ICLR 2021 submission");
    vs_json *c = vs_json_new_array();
    char m[160];
    const double rate = run->target_rate;
    snprintf(m, sizeof m, "%.3f", rate);
    vs_report_claim(t, c, "GANMEX baselines are classified as the target class", "the GAN's class term (no figure)", m,
                    isnan(rate) ? VS_CLAIM_NOT_MEASURED : rate >= 0.9 ? VS_CLAIM_REPRODUCED : rate >= 0.5 ? VS_CLAIM_DIRECTION : VS_CLAIM_NOT_REPRODUCED,
                    "share of the explained images whose GANMEX baseline S assigns to the target class (reproduced: >= 0.9)");
    const double dg = run->dist[GX_GANMEX], dm = run->dist[GX_MDTS];
    snprintf(m, sizeof m, "GANMEX %.2f, MDTS %.2f", dg, dm);
    vs_report_claim(t, c, "GANMEX baselines are closer to the input than MDTS (Table 1)", "MNIST 7.17 vs 7.18", m,
                    dg < dm ? VS_CLAIM_REPRODUCED : VS_CLAIM_NOT_REPRODUCED, "mean L2 distance between the input and its baseline");
    const bool ig = cl[GX_IG][GX_GANMEX].aopc_l > cl[GX_IG][GX_ZERO].aopc_l, dl = cl[GX_DEEPLIFT][GX_GANMEX].aopc_l > cl[GX_DEEPLIFT][GX_ZERO].aopc_l;
    snprintf(m, sizeof m, "IG %.2f vs %.2f, DeepLIFT %.2f vs %.2f", cl[GX_IG][GX_GANMEX].aopc_l, cl[GX_IG][GX_ZERO].aopc_l,
             cl[GX_DEEPLIFT][GX_GANMEX].aopc_l, cl[GX_DEEPLIFT][GX_ZERO].aopc_l);
    vs_report_claim(t, c, "AOPC_L with GANMEX baselines above the zero baseline (Table 2)", "higher for IG and DeepLIFT", m, both_either(ig, dl),
                    "reproduced when both methods gain, in direction only when one does");
    int above = 0, n = 0;
    for (int k = GX_IG; k <= GX_DEEPSHAP; k++)
        if (cl[k][GX_GANMEX].done && cl[k][GX_MDTS].done)
            n++, above += cl[k][GX_GANMEX].aopc_l > cl[k][GX_MDTS].aopc_l && cl[k][GX_GANMEX].aopc_all > cl[k][GX_MDTS].aopc_all;
    snprintf(m, sizeof m, "%d of %d methods above on both AOPCs", above, n);
    vs_report_claim(t, c, "GANMEX baselines above MDTS on AOPC_L and AOPC_all (Table 2)", "every method", m,
                    n == 0 ? VS_CLAIM_NOT_MEASURED : above == n ? VS_CLAIM_REPRODUCED : 2 * above > n ? VS_CLAIM_DIRECTION : VS_CLAIM_NOT_REPRODUCED,
                    "IG, DeepLIFT, Occlusion-1 and DeepSHAP compared baseline against baseline");
    const bool ef = leads(run, GX_EG, GX_ZERO, 3), em = leads(run, GX_EG, GX_ZERO, 4);
    snprintf(m, sizeof m, "EG faithfulness %.3f (%s), monotonicity %.3f (%s)", cl[GX_EG][GX_ZERO].faith, ef ? "best" : "not best",
             cl[GX_EG][GX_ZERO].mono, em ? "best" : "not best");
    vs_report_claim(t, c, "class-targeted expected gradients lead faithfulness and monotonicity (Table 2)", "best on both", m, both_either(ef, em),
                    "against every method and baseline of the run");
    const bool al = leads(run, GX_IG, GX_GANMEX, 0), aa = leads(run, GX_IG, GX_GANMEX, 1);
    snprintf(m, sizeof m, "IG+GANMEX AOPC_L %.2f (%s), AOPC_all %.2f (%s)", cl[GX_IG][GX_GANMEX].aopc_l, al ? "best" : "not best",
             cl[GX_IG][GX_GANMEX].aopc_all, aa ? "best" : "not best");
    vs_report_claim(t, c, "IG with GANMEX baselines has the best AOPC (Table 2)", "best on both AOPCs", m, both_either(al, aa),
                    "against every method and baseline of the run, class-targeted EG included");
    const double gg = cl[GX_IG][GX_GANMEX].gini, gz = cl[GX_IG][GX_ZERO].gini, gm = cl[GX_IG][GX_MDTS].gini;
    snprintf(m, sizeof m, "IG Gini: GANMEX %.3f, zero %.3f, MDTS %.3f", gg, gz, gm);
    vs_report_claim(t, c, "GANMEX baselines give sparser maps (Gini, Table 2)", "higher Gini", m, both_either(gg > gz, gg > gm),
                    "reproduced when above both other baselines, in direction only when above one");
    const double lg = cl[GX_IG][GX_GANMEX].invloc, lz = cl[GX_IG][GX_ZERO].invloc, lm = cl[GX_IG][GX_MDTS].invloc;
    snprintf(m, sizeof m, "IG: GANMEX %.3f, zero %.3f, MDTS %.3f; x - b: %.3f, %.3f, %.3f", lg, lz, lm, run->diff_invloc[GX_GANMEX],
             run->diff_invloc[GX_ZERO], run->diff_invloc[GX_MDTS]);
    vs_report_claim(t, c, "GANMEX baselines localise better (inverse localisation, Table 2; SVHN in the paper)", "lower", m,
                    isnan(lg) ? VS_CLAIM_NOT_MEASURED : both_either(lg < lz, lg < lm),
                    "path methods multiply x - b: where the data's edges are empty (MNIST) x - b is zero there for the zero baseline, so "
                    "the ratio follows the baseline's residue at the edges (the x - b figures), not the map's focus");
    /* Fig. 3G: the zero baseline's maps barely change as S's layers are randomised; GANMEX's re-trained ones do */
    double z = 0, g = 0;
    int layers = 0;
    for (int l = 0; l < GX_N_LAYERS; l++)
        if (!isnan(run->cascade[GX_CASCADE_ZERO][l]) && !isnan(run->cascade[GX_CASCADE_RETRAINED][l]))
            z += run->cascade[GX_CASCADE_ZERO][l], g += run->cascade[GX_CASCADE_RETRAINED][l], layers++;
    if (layers) snprintf(m, sizeof m, "mean Spearman of |IG| over %d layers: zero %.2f, GANMEX re-trained %.2f", layers, z / layers, g / layers);
    else snprintf(m, sizeof m, "not run (--cascade 0 or --cascade-steps 0)");
    vs_report_claim(t, c, "maps with GANMEX baselines follow S's randomisation, the zero baseline's barely (Fig. 3G)", "zero near 1, GANMEX lower", m,
                    !layers ? VS_CLAIM_NOT_MEASURED : g < z - 0.05 ? VS_CLAIM_REPRODUCED : g < z ? VS_CLAIM_DIRECTION : VS_CLAIM_NOT_REPRODUCED,
                    "rank correlation of each map with the trained S's map (lower: the map depends on S); reproduced when GANMEX's is lower by "
                    "more than 0.05");
    if (vs_json_set(data, "claims", c) != VS_OK) r->oom = true;
}
