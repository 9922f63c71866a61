/* report_claims.c - a paper's claims against a run: one table per report, the same rows as data, and
 * four verdicts shared by every bench so that `make reproduce` can count them. */
#include "versus/json.h"
#include "versus/report.h"

#include <stdio.h>

const char *vs_claim_verdict_name(vs_claim_verdict v)
{
    switch (v) {
    case VS_CLAIM_REPRODUCED: return "reproduced";
    case VS_CLAIM_DIRECTION: return "in direction only";
    case VS_CLAIM_NOT_REPRODUCED: return "not reproduced";
    case VS_CLAIM_NOT_MEASURED: return "not measured";
    }
    return "not measured";
}

vs_report_table *vs_report_claims_table(vs_report *r, const char *paper)
{
    char claim[160];
    snprintf(claim, sizeof claim, "claim (%s)", paper);
    const char *const header[] = {claim, "paper", "measured", "verdict", "why"};
    vs_report_heading(r, 2, "Claims");
    return vs_report_table_new(r, "The paper's claims against this run", 5, header, NULL);
}

void vs_report_claim(vs_report_table *t, vs_json *claims, const char *claim, const char *paper, const char *measured,
                     vs_claim_verdict v, const char *why)
{
    int row = t ? vs_report_table_row(t) : -1;
    const char *const cells[5] = {claim, paper, measured, vs_claim_verdict_name(v), why};
    for (int c = 0; row >= 0 && c < 5; c++) vs_report_text(t, row, c, cells[c]);
    if (!claims) return;
    vs_json *o = vs_json_new_object();
    static const char *const keys[5] = {"claim", "paper", "measured", "verdict", "why"};
    for (int c = 0; o && c < 5; c++) vs_json_set(o, keys[c], vs_json_new_string(cells[c]));
    vs_json_push(claims, o);
}
