/* cem_flags.c - the CEM-MAF hyperparameter flags shared by `versus explain cem` and `versus bench cem`. */
#include "cli/cem_cli.h"

int vs_cli_cem_opts(const vs_args *a, vs_cem_opts *o)
{
    vs_cem_opts_init(o);
    struct {
        const char *name;
        float *at;
        double lo, hi;
    } fl[] = {{"kappa", &o->kappa, 0, 1e6},   {"gamma", &o->gamma, 0, 1e9}, {"beta-pn", &o->beta_pn, 0, 1e9}, {"beta-pp", &o->beta_pp, 0, 1e9},
              {"eta", &o->eta, 0, 1e9},       {"nu", &o->nu, 0, 1e9},       {"c0", &o->c0, 1e-9, 1e12},       {"pn-step", &o->pn_step, 1e-12, 1e6},
              {"pp-step", &o->pp_step, 1e-12, 1e6}};
    int rc;
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) {
        double v;
        if ((rc = vs_args_float(a, fl[i].name, *fl[i].at, fl[i].lo, fl[i].hi, &v))) return rc;
        *fl[i].at = (float)v;
    }
    int64_t s, pn, pp;
    if ((rc = vs_args_int(a, "searches", o->searches, 1, 1000, &s)) || (rc = vs_args_int(a, "pn-iters", o->pn_iters, 1, 10000000, &pn)) ||
        (rc = vs_args_int(a, "pp-iters", o->pp_iters, 1, 10000000, &pp)))
        return rc;
    o->searches = (int)s, o->pn_iters = (int)pn, o->pp_iters = (int)pp;
    o->fista = vs_args_has(a, "fista");
    return 0;
}
