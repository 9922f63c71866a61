/* idx.c - IDX image and label files (MNIST, Fashion-MNIST) into a vs_dataset of images. */
#include "versus/data_io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { IDX_CLASSES = 10 };

static const char *const digit_names[IDX_CLASSES] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
/* label order 0..9 of the Fashion-MNIST README (Xiao, Rasul and Vollgraf, Zalando Research) */
static const char *const fashion_names[IDX_CLASSES] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                       "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

/* Check an IDX header of unsigned bytes with ndims dimensions (magic 0x0000080N); dims[] receives the
 * sizes and *total their product (the data bytes after the header). */
static vs_status idx_dims(const uint8_t *p, size_t n, const char *src, unsigned ndims, uint32_t dims[3], size_t *total,
                          vs_error *err)
{
    const uint32_t want = 0x0800u | ndims;
    size_t hdr = 4 + 4 * (size_t)ndims;
    if (n < hdr)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: truncated IDX header (%zu bytes, need %zu)", src, n, hdr);
    uint32_t magic = be32(p);
    if (magic != want)
        return vs_error_set(err, VS_ERR_FORMAT,
                            "%s: IDX magic 0x%08x, expected 0x%08x (unsigned bytes, %u dimension%s)", src, magic,
                            want, ndims, ndims > 1 ? "s" : "");
    *total = 1;
    for (unsigned i = 0; i < ndims; i++) {
        dims[i] = be32(p + 4 + 4 * i);
        if (dims[i] == 0) return vs_error_set(err, VS_ERR_FORMAT, "%s: dimension %u of the IDX header is 0", src, i);
        if (!vs_size_mul(*total, dims[i], total) || *total > SIZE_MAX - hdr)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: IDX dimensions overflow the size type", src);
    }
    return VS_OK;
}

/* idx_dims, and the file holds exactly the data bytes its header announces. */
static vs_status idx_header(const uint8_t *p, size_t n, const char *src, unsigned ndims, uint32_t dims[3], vs_error *err)
{
    size_t total, hdr = 4 + 4 * (size_t)ndims;
    vs_status st = idx_dims(p, n, src, ndims, dims, &total, err);
    if (st == VS_OK && n - hdr != total)
        return vs_error_set(err, VS_ERR_FORMAT, "%s: %zu bytes of data after the IDX header, its dimensions need %zu",
                            src, n - hdr, total);
    return st;
}

/* An IDX file, gunzipped when it starts with the gzip magic.  A gzip file's header is checked on
 * its first bytes before the rest is inflated, and the rest is inflated no further than the header
 * announces, with the bytes and the floats they become checked against the memory budget first. */
static vs_status read_idx(const char *path, unsigned ndims, uint8_t **buf, size_t *n, vs_error *err)
{
    uint8_t *raw, *head = NULL;
    size_t rn, hn, total, hdr = 4 + 4 * (size_t)ndims;
    uint32_t dims[3];
    vs_status st = vs_read_file(path, &raw, &rn, err);
    if (st || rn < 2 || raw[0] != 0x1f || raw[1] != 0x8b) {
        *buf = st ? NULL : raw;
        *n = st ? 0 : rn;
        return st;
    }
    vs_error e;
    st = vs_decompress_head(VS_ZFORMAT_GZIP, raw, rn, hdr, &head, &hn, &e);
    if (st) st = vs_error_set(err, st, "%s: %s", path, e.msg);
    if (!st) st = idx_dims(head, hn, path, ndims, dims, &total, err);
    free(head);
    if (!st) st = vs_mem_check(total, ndims == 3 ? 1 + sizeof(float) : 1 + sizeof(int64_t), path, err);
    if (!st && (st = vs_decompress(VS_ZFORMAT_GZIP, raw, rn, hdr + total, buf, n, &e)))
        st = vs_error_set(err, st, "%s: %s%s", path, e.msg, st == VS_ERR_NOMEM ? " (more data than the IDX header announces)" : "");
    free(raw);
    return st;
}

static vs_status parse_idx(const uint8_t *images, size_t images_n, const char *images_src, const uint8_t *labels,
                           size_t labels_n, const char *labels_src, const char *name, vs_dataset **out, vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "vs_parse_idx_mem: out is NULL");
    *out = NULL;
    if ((!images && images_n) || (!labels && labels_n))
        return vs_error_set(err, VS_ERR_ARG, "vs_parse_idx_mem: NULL buffer");
    uint32_t idim[3], ldim[3];
    vs_status st = idx_header(images, images_n, images_src, 3, idim, err);
    if (!st) st = idx_header(labels, labels_n, labels_src, 1, ldim, err);
    if (st) return st;
    if (idim[0] != ldim[0])
        return vs_error_set(err, VS_ERR_FORMAT, "%s holds %u images but %s holds %u labels", images_src, idim[0],
                            labels_src, ldim[0]);
    const uint8_t *lab = labels + 8, *pix = images + 16;
    size_t n = idim[0], dim = (size_t)idim[1] * idim[2], total = n * dim, bytes; /* fit: checked by idx_header */
    for (size_t i = 0; i < n; i++)
        if (lab[i] >= IDX_CLASSES)
            return vs_error_set(err, VS_ERR_FORMAT, "%s: label %u of example %zu is not a class 0..%d", labels_src,
                                lab[i], i, IDX_CLASSES - 1);
    if (!vs_size_mul(total, sizeof(float), &bytes))
        return vs_error_set(err, VS_ERR_NOMEM, "%s: %zu pixels overflow the size type", images_src, total);
    if ((st = vs_mem_check(total, sizeof(float), images_src, err))) return st;

    const char *dname = name ? name : "idx";
    const char *const *cls = strcmp(dname, "fashion-mnist") == 0 ? fashion_names : digit_names;
    vs_dataset *d = vs_dataset_new(VS_DATA_IMAGES, dname);
    if (!d) return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory", images_src);
    d->n = (int64_t)n;
    d->ndim = 3;
    d->shape[0] = 1;
    d->shape[1] = idim[1];
    d->shape[2] = idim[2];
    d->dim = (int64_t)dim;
    d->X = malloc(bytes);
    d->y = malloc(n * sizeof *d->y);
    d->class_names = calloc(IDX_CLASSES, sizeof *d->class_names);
    if (d->class_names) d->n_classes = IDX_CLASSES;
    int ok = d->X && d->y && d->class_names;
    for (int k = 0; ok && k < IDX_CLASSES; k++) ok = (d->class_names[k] = strdup(cls[k])) != NULL;
    if (!ok) {
        vs_dataset_free(d);
        return vs_error_set(err, VS_ERR_NOMEM, "%s: out of memory for %zu images", images_src, n);
    }
    float scale[256]; /* pixel byte -> [0, 1] */
    for (int v = 0; v < 256; v++) scale[v] = (float)v / 255.0f;
    for (size_t i = 0; i < total; i++) d->X[i] = scale[pix[i]];
    for (size_t i = 0; i < n; i++) d->y[i] = lab[i];
    *out = d;
    return VS_OK;
}

vs_status vs_parse_idx_mem(const uint8_t *images, size_t images_n, const uint8_t *labels, size_t labels_n,
                           const char *name, vs_dataset **out, vs_error *err)
{
    return parse_idx(images, images_n, "IDX images", labels, labels_n, "IDX labels", name, out, err);
}

vs_status vs_load_idx(const char *images_path, const char *labels_path, const char *name, vs_dataset **out,
                      vs_error *err)
{
    if (!out) return vs_error_set(err, VS_ERR_ARG, "vs_load_idx: out is NULL");
    *out = NULL;
    if (!images_path || !labels_path) return vs_error_set(err, VS_ERR_ARG, "vs_load_idx: NULL path");
    uint8_t *img = NULL, *lab = NULL;
    size_t img_n = 0, lab_n = 0;
    vs_status st = read_idx(images_path, 3, &img, &img_n, err);
    if (!st) st = read_idx(labels_path, 1, &lab, &lab_n, err);
    if (!st) st = parse_idx(img, img_n, images_path, lab, lab_n, labels_path, name, out, err);
    free(img);
    free(lab);
    return st;
}

/* path = dir/stem or dir/stem.gz, whichever is readable (plain first); 0 when neither is. */
static int find_file(const char *dir, const char *stem, char *path, size_t cap)
{
    static const char *const suffix[2] = {"", ".gz"};
    for (int i = 0; i < 2; i++) {
        int len = snprintf(path, cap, "%s/%s%s", dir, stem, suffix[i]);
        if (len > 0 && (size_t)len < cap && access(path, R_OK) == 0) return 1;
    }
    return 0;
}

/* Load the first of the (images, labels) stem pairs whose two files both exist in dir. */
static vs_status load_first_pair(const char *dir, const char *const stems[][2], int n_pairs, const char *name,
                                 vs_dataset **out, vs_error *err)
{
    char img[PATH_MAX], lab[PATH_MAX], tried[512] = "";
    for (int i = 0; i < n_pairs; i++) {
        if (find_file(dir, stems[i][0], img, sizeof img) && find_file(dir, stems[i][1], lab, sizeof lab))
            return vs_load_idx(img, lab, name, out, err);
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, "%s%s[.gz] + %s[.gz]", i ? ", " : "", stems[i][0], stems[i][1]);
    }
    return vs_error_set(err, VS_ERR_IO, "no %s files in %s (looked for %s)", name, dir, tried);
}

static const char *const full_train[2] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
static const char *const full_test[2] = {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

vs_status vs_load_mnist(const char *dir, bool train, vs_dataset **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!dir || !out) return vs_error_set(err, VS_ERR_ARG, "vs_load_mnist: NULL directory or out");
    const char *const train_pairs[2][2] = {{full_train[0], full_train[1]},
                                           {"train10k-images-idx3-ubyte", "train10k-labels-idx1-ubyte"}};
    const char *const test_pairs[1][2] = {{full_test[0], full_test[1]}};
    return train ? load_first_pair(dir, train_pairs, 2, "mnist", out, err)
                 : load_first_pair(dir, test_pairs, 1, "mnist", out, err);
}

vs_status vs_load_fashion_mnist(const char *dir, bool train, vs_dataset **out, vs_error *err)
{
    if (out) *out = NULL;
    if (!out) return vs_error_set(err, VS_ERR_ARG, "vs_load_fashion_mnist: out is NULL");
    const char *const pair[1][2] = {{train ? full_train[0] : full_test[0], train ? full_train[1] : full_test[1]}};
    return load_first_pair(dir ? dir : VS_FASHION_MNIST_DIR, pair, 1, "fashion-mnist", out, err);
}
