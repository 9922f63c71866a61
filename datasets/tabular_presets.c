/* tabular_presets.c - the shared tabular data sets by name (adult, adult-all, bank, compas, credit):
 * where their files are, how to read them, which columns are features and which rows count.
 * The row and class counts in each description are checked against the files by tests/test_tabular.c
 * and agree with the folders' SOURCE.md. */
#include "versus/tabular.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* UCI Adult has no header; the names are those of adult.names, the label is called "income". */
static const char *const adult_names[] = {
    "age",          "workclass",    "fnlwgt",         "education",      "education-num",
    "marital-status", "occupation", "relationship",   "race",           "sex",
    "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
    NULL};
static const char *const adult_drop[] = {"fnlwgt", "education-num", NULL};

static const char *const bank_drop[] = {"duration", NULL};

static const char *const compas_keep[] = {"sex", "age", "race", "juv_fel_count", "juv_misd_count",
                                          "juv_other_count", "priors_count", "c_charge_degree", NULL};

/* UCI_Credit_Card.csv's header is ID,X1..X23,Y; these are UCI's names for the same columns. */
static const char *const credit_names[] = {
    "ID",        "LIMIT_BAL", "SEX",       "EDUCATION", "MARRIAGE",  "AGE",      "PAY_0",
    "PAY_2",     "PAY_3",     "PAY_4",     "PAY_5",     "PAY_6",     "BILL_AMT1", "BILL_AMT2",
    "BILL_AMT3", "BILL_AMT4", "BILL_AMT5", "BILL_AMT6", "PAY_AMT1",  "PAY_AMT2", "PAY_AMT3",
    "PAY_AMT4",  "PAY_AMT5",  "PAY_AMT6",  "default.payment.next.month", NULL};
static const char *const credit_drop[] = {"ID", NULL};
static const char *const credit_categorical[] = {"SEX",   "EDUCATION", "MARRIAGE", "PAY_0", "PAY_2",
                                                 "PAY_3", "PAY_4",     "PAY_5",    "PAY_6", NULL};

typedef enum preset_id { P_ADULT, P_ADULT_ALL, P_BANK, P_COMPAS, P_CREDIT, P_IRIS, P_WINE, P_BREAST_CANCER, P_DIGITS } preset_id;

typedef struct preset {
    const char *name, *folder, *file, *description;
} preset;

static const preset presets[] = {
    [P_ADULT] = {"adult", "adult", "adult.data",
                 "UCI Adult (1994 US census, Kohavi and Becker), adult.data: 32,561 rows; label income: "
                 "<=50K 24,720, >50K 7,841. 12 major features: age, workclass, education, marital-status, "
                 "occupation, relationship, race, sex, capital-gain, capital-loss, hours-per-week, native-country. "
                 "fnlwgt (a census sampling weight, not a property of the person) and education-num (a numeric "
                 "recoding of education) are dropped. A '?' (2,399 rows have one) is a minor feature of its own; "
                 "numeric columns are cut into 5 quantile bins."},
    [P_ADULT_ALL] = {"adult-all", "adult", "adult.data",
                     "UCI Adult, adult.data followed by adult.test: 48,842 rows (the first 32,561 are adult.data); "
                     "label income: <=50K 37,155, >50K 11,687 (the test labels' trailing '.' is removed). Features "
                     "as for adult; bin edges are fitted on the adult.data rows only."},
    [P_BANK] = {"bank", "bank_marketing", "bank-full.csv",
                "UCI Bank Marketing (Moro et al. 2011), bank-full.csv: 45,211 rows; label y (term deposit "
                "subscribed): no 39,922, yes 5,289. 15 major features: age, job, marital, education, default, "
                "balance, housing, loan, contact, day, month, campaign, pdays, previous, poutcome. duration is "
                "dropped: the call's length is known only once the call is over, when y is known too (a 0 s call "
                "always means no), so it leaks the label; UCI's notes on the data say to discard it for a "
                "realistic model. 'unknown' is an ordinary category."},
    [P_COMPAS] = {"compas", "compas", "compas-scores-two-years.csv",
                  "ProPublica COMPAS (Broward County, 2013-2014), compas-scores-two-years.csv filtered as in "
                  "ProPublica's analysis (days_b_screening_arrest in [-30, 30], is_recid != -1, c_charge_degree "
                  "!= O, score_text != N/A): 6,172 of 7,214 rows; label two_year_recid: 0 3,363, 1 2,809. "
                  "8 major features: sex, age, race, juv_fel_count, juv_misd_count, juv_other_count, priors_count, "
                  "c_charge_degree. COMPAS's own scores (decile_score, score_text, v_*) are the audited model's "
                  "output and are left out, as are names, dates, case numbers and later-event columns; counts "
                  "with more than 5 distinct values are cut into 5 quantile bins."},
    [P_CREDIT] = {"credit", "credit_default_taiwan", "UCI_Credit_Card.csv",
                  "UCI Default of Credit Card Clients (Taiwan 2005, Yeh and Lien 2009): 30,000 rows; label "
                  "default.payment.next.month: 0 23,364, 1 6,636. 23 major features under UCI's names (the file's "
                  "header says X1..X23): SEX, EDUCATION, MARRIAGE and the repayment statuses PAY_0, PAY_2..PAY_6 "
                  "are categorical; LIMIT_BAL, AGE, BILL_AMT1..6 and PAY_AMT1..6 are cut into 5 quantile bins. "
                  "ID is dropped."},
    /* scikit-learn's bundled CSVs: the first line is "n_samples,n_features,class names...", then
     * unnamed feature columns and the class index last; digits has no such line. */
    [P_IRIS] = {"iris", "sklearn_small", "iris.csv",
                "Fisher's Iris (scikit-learn's copy): 150 rows, 50 per class (setosa, versicolor, virginica); 4 "
                "numeric features cut into 5 quantile bins."},
    [P_WINE] = {"wine", "sklearn_small", "wine_data.csv",
                "UCI Wine (scikit-learn's copy): 178 rows, classes 0: 59, 1: 71, 2: 48; 13 numeric features cut into "
                "5 quantile bins."},
    [P_BREAST_CANCER] = {"breast-cancer", "sklearn_small", "breast_cancer.csv",
                         "Breast Cancer Wisconsin (Diagnostic), scikit-learn's copy: 569 rows, 0 malignant 212, 1 benign "
                         "357; 30 numeric features cut into 5 quantile bins."},
    [P_DIGITS] = {"digits", "sklearn_small", "digits.csv.gz",
                  "UCI Optical Recognition of Handwritten Digits (test set, scikit-learn's copy, gzipped): 1,797 rows "
                  "of 64 pixel counts 0..16 (8x8 images) and the digit 0..9; pixels with more than 10 distinct "
                  "values are cut into 5 quantile bins, the others are categorical."},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

static const char *const preset_names[] = {"adult", "adult-all", "bank",          "compas", "credit",
                                           "iris",  "wine",      "breast-cancer", "digits", NULL};

const char *const *vs_tabular_preset_names(void) { return preset_names; }

static const preset *find_preset(const char *name)
{
    for (size_t i = 0; name && i < N_PRESETS; i++)
        if (strcmp(presets[i].name, name) == 0) return &presets[i];
    return NULL;
}

const char *vs_tabular_preset_description(const char *name)
{
    const preset *p = find_preset(name);
    return p ? p->description : NULL;
}

/* ---- COMPAS: ProPublica's row filter --------------------------------------------------------- */

typedef struct compas_cols {
    long days, is_recid, degree, score_text;
} compas_cols;

static int compas_keep_row(const vs_csv_table *t, size_t row, void *ctx)
{
    const compas_cols *c = ctx;
    double days;
    const char *recid = vs_csv_cell(t, row, (size_t)c->is_recid);
    const char *degree = vs_csv_cell(t, row, (size_t)c->degree);
    const char *score = vs_csv_cell(t, row, (size_t)c->score_text);
    return vs_csv_number(vs_csv_cell(t, row, (size_t)c->days), &days) && days >= -30 && days <= 30 && recid &&
           strcmp(recid, "-1") != 0 && degree && strcmp(degree, "O") != 0 && score && strcmp(score, "N/A") != 0;
}

static vs_status compas_columns(const vs_csv_table *t, compas_cols *c, vs_error *err)
{
    const char *names[4] = {"days_b_screening_arrest", "is_recid", "c_charge_degree", "score_text"};
    long *dst[4] = {&c->days, &c->is_recid, &c->degree, &c->score_text};
    for (int k = 0; k < 4; k++)
        if ((*dst[k] = vs_csv_column(t, names[k])) < 0)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: no column '%s' (needed to filter COMPAS rows)", t->source,
                                names[k]);
    return VS_OK;
}

/* ---- loading --------------------------------------------------------------------------------- */

static void preset_opts(preset_id id, vs_csv_opts *o)
{
    *o = vs_csv_opts_defaults();
    switch (id) {
    case P_ADULT:
    case P_ADULT_ALL:
        o->delimiter = ',';
        o->no_header = 1;
        o->column_names = adult_names;
        o->label = "income";
        o->drop = adult_drop;
        break;
    case P_BANK:
        o->delimiter = ';';
        o->no_header = -1;
        o->label = "y";
        o->drop = bank_drop;
        break;
    case P_COMPAS:
        o->delimiter = ',';
        o->no_header = -1;
        o->label = "two_year_recid";
        o->keep = compas_keep;
        o->numeric_min_distinct = 5;
        break;
    case P_CREDIT:
        o->delimiter = ',';
        o->no_header = -1;
        o->column_names = credit_names;
        o->label = "default.payment.next.month";
        o->drop = credit_drop;
        o->categorical = credit_categorical;
        break;
    case P_IRIS:
    case P_WINE:
    case P_BREAST_CANCER:
        o->delimiter = ',';
        o->no_header = 1;
        o->skip_lines = 1; /* scikit-learn's "n_samples,n_features,..." line */
        o->label_index = -1;
        break;
    case P_DIGITS:
        o->delimiter = ',';
        o->no_header = 1;
        o->label_index = -1;
        break;
    }
}

static char *join_path(const char *a, const char *b, const char *c)
{
    const char *fmt = c ? "%s/%s/%s" : "%s/%s";
    int len = snprintf(NULL, 0, fmt, a, b, c);
    char *s = len < 0 ? NULL : malloc((size_t)len + 1);
    if (s) snprintf(s, (size_t)len + 1, fmt, a, b, c);
    return s;
}

/* The data file `file` of preset p: path_or_dir itself when it is a file and file is the preset's
 * main file, else file in path_or_dir's folder (or in $VERSUS_DATA/<folder> when it is NULL). */
static vs_status preset_path(const preset *p, const char *path_or_dir, const char *file, char **out, vs_error *err)
{
    struct stat sb;
    const char *env = getenv("VERSUS_DATA");
    *out = NULL;
    if (!path_or_dir) {
        if (!env || !*env)
            return vs_error_set(err, VS_ERR_ARG, "data set '%s': no path given and VERSUS_DATA is not set", p->name);
        *out = join_path(env, p->folder, file);
    } else if (stat(path_or_dir, &sb) == 0 && !S_ISDIR(sb.st_mode)) {
        /* "dir/x" + "" -> "dir/x/"; cutting it at the last '/' of path_or_dir leaves "dir". */
        const char *slash = strrchr(path_or_dir, '/');
        char *copy = join_path(path_or_dir, "", NULL);
        if (copy && strcmp(file, p->file) == 0) {
            copy[strlen(path_or_dir)] = '\0';
            *out = copy;
            copy = NULL;
        } else if (copy) {
            if (slash) copy[slash - path_or_dir] = '\0';
            *out = join_path(slash ? copy : ".", file, NULL);
        }
        free(copy);
    } else {
        *out = join_path(path_or_dir, file, NULL);
    }
    return *out ? VS_OK : vs_error_set(err, VS_ERR_NOMEM, "out of memory");
}

/* path opened for a peek at its first line, only when it is a regular file: a FIFO would block the
 * open and lose what the peek reads (the parser reads the file again). */
static FILE *open_regular(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISREG(sb.st_mode) ? fopen(path, "rb") : NULL;
}

/* Parse an Adult file: adult.test starts with a "|1x3 Cross validator" line and its labels end in '.'. */
static vs_status parse_adult(const char *path, vs_csv_opts *o, vs_csv_table **t, vs_error *err)
{
    FILE *f = open_regular(path);
    o->skip_lines = f && fgetc(f) == '|';
    if (f) fclose(f);
    vs_status st = vs_csv_parse_file(path, o, t, err);
    if (st != VS_OK) return st;
    long label = vs_csv_column(*t, "income");
    for (size_t i = 0; i < (*t)->n_rows; i++) {
        char *s = (*t)->cells[i * (*t)->n_cols + (size_t)label];
        size_t n = s ? strlen(s) : 0;
        if (n > 0 && s[n - 1] == '.') s[n - 1] = '\0';
    }
    return VS_OK;
}

/* scikit-learn's first line "n_samples,n_features,name_0,name_1,..." names the classes 0, 1, ...
 * (classes are sorted numerically, so class k is index k).  Names stay "0", "1", ... when it does not fit. */
static void name_sklearn_classes(const char *path, vs_dataset *d)
{
    FILE *f = open_regular(path);
    char line[1024];
    if (!f) return;
    bool ok = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    if (!ok) return;
    line[strcspn(line, "\r\n")] = '\0';
    char *tok[64];
    int n = 0;
    for (char *p = line, *end; p && n < 64; p = end) {
        end = strchr(p, ',');
        if (end) *end++ = '\0';
        tok[n++] = p;
    }
    if (n - 2 != d->n_classes) return;
    for (int64_t k = 0; k < d->n_classes; k++) {
        char buf[32];
        snprintf(buf, sizeof buf, "%lld", (long long)k);
        if (strcmp(d->class_names[k], buf) != 0) return; /* not the 0..k-1 indices we expect */
    }
    for (int64_t k = 0; k < d->n_classes; k++) {
        char *name = strdup(tok[k + 2]);
        if (!name) return;
        free(d->class_names[k]);
        d->class_names[k] = name;
    }
}

vs_status vs_load_preset_tabular(const char *name, const char *path_or_dir, vs_dataset **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "vs_load_preset_tabular: NULL argument");
    *out = NULL;
    const preset *p = find_preset(name);
    if (!p)
        return vs_error_set(err, VS_ERR_ARG,
                            "unknown tabular data set '%s' (expected adult, adult-all, bank, compas, credit, iris, wine, "
                            "breast-cancer or digits)",
                            name ? name : "(null)");
    preset_id id = (preset_id)(p - presets);
    vs_csv_opts o;
    preset_opts(id, &o);
    char *path = NULL, *path2 = NULL;
    vs_csv_table *t = NULL, *t2 = NULL;
    compas_cols cols;
    vs_status st = preset_path(p, path_or_dir, p->file, &path, err);
    if (st != VS_OK) goto done;
    if (id == P_ADULT || id == P_ADULT_ALL) {
        st = parse_adult(path, &o, &t, err);
        if (st == VS_OK && id == P_ADULT_ALL) {
            o.fit_rows = t->n_rows;
            if ((st = preset_path(p, path_or_dir, "adult.test", &path2, err)) == VS_OK &&
                (st = parse_adult(path2, &o, &t2, err)) == VS_OK)
                st = vs_csv_table_append(t, &t2, err);
        }
    } else {
        st = vs_csv_parse_file(path, &o, &t, err);
    }
    if (st == VS_OK && id == P_COMPAS && (st = compas_columns(t, &cols, err)) == VS_OK) {
        o.row_filter = compas_keep_row;
        o.row_filter_ctx = &cols;
    }
    if (st == VS_OK) st = vs_tabular_encode(t, &o, p->name, out, err);
    if (st == VS_OK && (id == P_IRIS || id == P_WINE || id == P_BREAST_CANCER)) name_sklearn_classes(path, *out);
done:
    vs_csv_table_free(t);
    vs_csv_table_free(t2);
    free(path);
    free(path2);
    return st;
}
