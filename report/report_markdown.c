/* report_markdown.c - a vs_report as Markdown: headings, paragraphs, bullet lists, pipe tables with
 * direction arrows and marks, figures as image links with their captions. */
#include "report/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void vs_report_cell_number(const vs_report_cell *c, char *buf, size_t n)
{
    if (c->kind == VS_CELL_PVALUE) {
        snprintf(buf, n, "%.2g", c->value);
    } else {
        int d = c->digits < 0 ? -c->digits : c->digits;
        const char *f = c->digits < 0 ? (isnan(c->spread) ? "%.*e" : "%.*e (%.*e)") : (isnan(c->spread) ? "%.*f" : "%.*f (%.*f)");
        snprintf(buf, n, f, d, c->value, d, c->spread);
    }
}

void vs_report_note_mark(int i, char *buf, size_t n)
{
    static const char *const sup[10] = {"⁰", "¹", "²", "³", "⁴", "⁵", "⁶", "⁷", "⁸", "⁹"};
    char digits[16];
    snprintf(digits, sizeof digits, "%d", i + 1);
    buf[0] = 0;
    for (const char *d = digits; *d && strlen(buf) + 4 < n; d++) strcat(buf, sup[*d - '0']);
}

const char *vs_report_sig_mark(vs_cell_sig s) { return s == VS_SIG_BETTER ? "◦" : s == VS_SIG_WORSE ? "†" : ""; }

const char *vs_report_arrow(vs_better b) { return b == VS_BETTER_LOWER ? "↓" : b == VS_BETTER_HIGHER ? "↑" : ""; }

/* Text for a pipe table cell: '|' escaped, line breaks as spaces. */
static void md_cell_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else fputc(*s == '\n' ? ' ' : *s, f);
    }
}

static void md_cell(FILE *f, const vs_report_cell *c)
{
    char buf[96], mark[32];
    fputc(' ', f);
    switch (c->kind) {
    case VS_CELL_MISSING:
        vs_report_note_mark(c->note, mark, sizeof mark);
        fprintf(f, "–%s", mark);
        break;
    case VS_CELL_TEXT: md_cell_text(f, c->text); break;
    case VS_CELL_NUMBER:
        vs_report_cell_number(c, buf, sizeof buf);
        fprintf(f, "%s%s%s%s", c->rank == VS_RANK_BEST ? "**" : "", buf, c->rank == VS_RANK_BEST ? "**" : "",
                c->rank == VS_RANK_SECOND ? " *" : "");
        break;
    case VS_CELL_PVALUE:
        vs_report_cell_number(c, buf, sizeof buf);
        fprintf(f, "%s%s%s", buf, c->sig ? " " : "", vs_report_sig_mark(c->sig));
        break;
    }
    fputs(" |", f);
}

static void md_table(FILE *f, const vs_report_table *t)
{
    if (t->caption) fprintf(f, "%s\n\n", t->caption);
    fputc('|', f);
    for (int c = 0; c < t->n_cols; c++) {
        fputc(' ', f);
        md_cell_text(f, t->header[c]);
        fprintf(f, "%s%s |", t->better[c] ? " " : "", vs_report_arrow(t->better[c]));
    }
    fputs("\n|", f);
    for (int c = 0; c < t->n_cols; c++) fputs("---|", f);
    fputc('\n', f);
    for (int r = 0; r < t->n_rows; r++) {
        fputc('|', f);
        for (int c = 0; c < t->n_cols; c++) md_cell(f, &t->cells[r * t->n_cols + c]);
        fputc('\n', f);
    }
    for (int i = 0; i < t->n_notes; i++) {
        char mark[32];
        vs_report_note_mark(i, mark, sizeof mark);
        fprintf(f, "%s– %s: %s\n", i ? "" : "\n", mark, t->notes[i]);
    }
}

vs_status vs_report_markdown(const vs_report *r, FILE *f, vs_error *err)
{
    if (!r || !f) return vs_error_set(err, VS_ERR_ARG, "report: no report or file");
    if (r->oom) return vs_error_set(err, VS_ERR_NOMEM, "report: out of memory while it was built");
    for (size_t i = 0; i < r->n_blocks; i++) {
        const vs_report_block *b = &r->blocks[i];
        bool in_list = b->kind == VS_BLOCK_ITEM;
        if (i > 0 && !(in_list && r->blocks[i - 1].kind == VS_BLOCK_ITEM)) fputc('\n', f);
        switch (b->kind) {
        case VS_BLOCK_HEADING: fprintf(f, "%.*s %s\n", b->level, "###", b->text); break;
        case VS_BLOCK_PARAGRAPH: fprintf(f, "%s\n", b->text); break;
        case VS_BLOCK_ITEM: fprintf(f, "- %s\n", b->text); break;
        case VS_BLOCK_TABLE: md_table(f, b->table); break;
        case VS_BLOCK_FIGURE: {
            const vs_report_figure *g = b->figure;
            fprintf(f, "![%s](%s.svg)\n\n*%s.svg*: %s\n", g->title ? g->title : g->name, g->name, g->name, g->caption ? g->caption : "");
            break;
        }
        }
    }
    return ferror(f) ? vs_error_set(err, VS_ERR_IO, "report: write failed") : VS_OK;
}
