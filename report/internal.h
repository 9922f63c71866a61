/* report/internal.h - what the report writers share (private): cell text, footnote marks, the
 * figure renderers. */
#ifndef VERSUS_REPORT_INTERNAL_H
#define VERSUS_REPORT_INTERNAL_H

#include "versus/report.h"

#include <stddef.h>

/* The number or p-value of a cell as text, without marks ("0.123 (0.045)", "0.031", "1.2e-05"):
 * numbers with their decimals, p-values with 2 significant digits. */
void vs_report_cell_number(const vs_report_cell *c, char *buf, size_t n);
/* Footnote mark i as superscript digits (UTF-8) into buf. */
void vs_report_note_mark(int i, char *buf, size_t n);
/* The significance mark of a p-value cell: "◦", "†" or "". */
const char *vs_report_sig_mark(vs_cell_sig s);
/* "↓", "↑" or "". */
const char *vs_report_arrow(vs_better b);
/* The SVG document of a MATRIX figure (report_matrix.c). */
vs_status vs_report_matrix_svg(const vs_report_figure *f, char **out, size_t *len, vs_error *err);
/* vs_report_html for a page written into dir: each PNG a paragraph or item names in backticks
 * (`fig2_pairs.png`) and dir holds is embedded after it (base64; dir NULL: none). */
vs_status vs_report_html_in(const vs_report *r, const char *dir, char **out, size_t *len, vs_error *err);


#endif
