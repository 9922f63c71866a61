/* test_idx.c - IDX parsing (synthetic files, each kind of corruption), the MNIST / Fashion-MNIST
 * directory loaders, and the real MNIST sets when VERSUS_DATA has them. */
#include "vs_check.h"
#include "versus/data_io.h"

#include <stdint.h>
#include <unistd.h>

static size_t put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
    return 4;
}

/* IDX bytes: magic, dims[0..nd), then data[0..data_n). */
static size_t make_idx(uint8_t *buf, uint32_t magic, const uint32_t *dims, int nd, const uint8_t *data, size_t data_n)
{
    size_t k = put_be32(buf, magic);
    for (int i = 0; i < nd; i++) k += put_be32(buf + k, dims[i]);
    memcpy(buf + k, data, data_n);
    return k + data_n;
}

/* Three 2x3 images and their labels. */
static const uint8_t pixels[18] = {0, 255, 51, 102, 153, 204, 1, 2, 3, 4, 5, 6, 250, 251, 252, 253, 254, 255};
static const uint8_t labels3[3] = {0, 9, 4};

typedef struct idx_pair {
    uint8_t img[64], lab[32];
    size_t img_n, lab_n;
} idx_pair;

static idx_pair good_pair(void)
{
    idx_pair p;
    const uint32_t idim[3] = {3, 2, 3}, ldim[1] = {3};
    p.img_n = make_idx(p.img, 0x803, idim, 3, pixels, sizeof pixels);
    p.lab_n = make_idx(p.lab, 0x801, ldim, 1, labels3, sizeof labels3);
    return p;
}

START_TEST(test_parse_good)
{
    idx_pair p = good_pair();
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_int_eq(vs_parse_idx_mem(p.img, p.img_n, p.lab, p.lab_n, "mnist", &d, &e), VS_OK);
    ck_assert_int_eq(d->kind, VS_DATA_IMAGES);
    ck_assert_str_eq(d->name, "mnist");
    ck_assert_int_eq(d->n, 3);
    ck_assert_int_eq(d->ndim, 3);
    ck_assert_int_eq(d->shape[0], 1);
    ck_assert_int_eq(d->shape[1], 2);
    ck_assert_int_eq(d->shape[2], 3);
    ck_assert_int_eq(d->dim, 6);
    for (int i = 0; i < 18; i++) ck_assert_float_eq(d->X[i], (float)pixels[i] / 255.0f);
    ck_assert_float_eq(d->X[1], 1.0f);
    ck_assert_float_eq(d->X[2], 0.2f);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(d->y[i], labels3[i]);
    ck_assert_int_eq(d->n_classes, 10);
    ck_assert_str_eq(d->class_names[0], "0");
    ck_assert_str_eq(d->class_names[9], "9");
    vs_dataset_free(d);
    ck_assert_int_eq(vs_parse_idx_mem(p.img, p.img_n, p.lab, p.lab_n, "fashion-mnist", &d, &e), VS_OK);
    ck_assert_str_eq(d->class_names[0], "T-shirt/top");
    ck_assert_str_eq(d->class_names[6], "Shirt");
    ck_assert_str_eq(d->class_names[9], "Ankle boot");
    vs_dataset_free(d);
}
END_TEST

static void expect_bad(const idx_pair *p, const char *part)
{
    vs_dataset *d = (vs_dataset *)&d; /* must be reset to NULL */
    vs_error e;
    vs_error_clear(&e);
    ck_assert_int_eq(vs_parse_idx_mem(p->img, p->img_n, p->lab, p->lab_n, "mnist", &d, &e), VS_ERR_FORMAT);
    ck_assert_ptr_null(d);
    ck_assert_msg(strstr(e.msg, part) != NULL, "message \"%s\" lacks \"%s\"", e.msg, part);
}

START_TEST(test_parse_bad)
{
    idx_pair p = good_pair();
    p.img[3] = 0x01; /* a label file given as images */
    expect_bad(&p, "IDX images: IDX magic 0x00000801, expected 0x00000803");
    p = good_pair();
    p.lab[2] = 0x0d; /* signed bytes */
    expect_bad(&p, "IDX labels: IDX magic 0x00000d01, expected 0x00000801");
    p = good_pair();
    p.img_n = 10;
    expect_bad(&p, "truncated IDX header (10 bytes, need 16)");
    p = good_pair();
    p.img_n--;
    expect_bad(&p, "17 bytes of data after the IDX header, its dimensions need 18");
    p = good_pair();
    p.lab[p.lab_n++] = 1; /* one byte too many */
    expect_bad(&p, "IDX labels: 4 bytes of data after the IDX header, its dimensions need 3");
    p = good_pair();
    put_be32(p.lab + 4, 2);
    p.lab_n--;
    expect_bad(&p, "IDX images holds 3 images but IDX labels holds 2 labels");
    p = good_pair();
    p.lab[9] = 10;
    expect_bad(&p, "label 10 of example 1 is not a class 0..9");
    p = good_pair();
    put_be32(p.img + 4, 0xffffffffu);
    put_be32(p.img + 8, 0xffffffffu);
    put_be32(p.img + 12, 0xffffffffu);
    expect_bad(&p, "IDX dimensions overflow");
    p = good_pair();
    put_be32(p.img + 8, 0);
    expect_bad(&p, "dimension 1 of the IDX header is 0");
}
END_TEST

/* Write data to path, as a gzip file of stored blocks when gz (exercises the .gz path). */
static void write_file(const char *path, const uint8_t *data, size_t n, int gz)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    if (gz) {
        const uint8_t hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255};
        fwrite(hdr, 1, sizeof hdr, f);
        uint8_t bh[5] = {1, (uint8_t)n, (uint8_t)(n >> 8), (uint8_t)~n, (uint8_t)(~n >> 8)};
        ck_assert_uint_lt(n, 65536);
        fwrite(bh, 1, 5, f);
        fwrite(data, 1, n, f);
        uint32_t crc = vs_crc32(0, data, n), len = (uint32_t)n;
        uint8_t tr[8] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24),
                         (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16), (uint8_t)(len >> 24)};
        fwrite(tr, 1, 8, f);
    } else {
        fwrite(data, 1, n, f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(test_mnist_dir)
{
    char dir[512], path[640];
    snprintf(dir, sizeof dir, "%s/vs_idx_XXXXXX", vs_test_tmpdir());
    ck_assert_ptr_nonnull(mkdtemp(dir));
    static const char *const files[] = {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte.gz",
                                        "train10k-images-idx3-ubyte.gz", "train10k-labels-idx1-ubyte",
                                        "train-images-idx3-ubyte", "train-labels-idx1-ubyte"};
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_int_eq(vs_load_mnist(dir, false, &d, &e), VS_ERR_IO);
    ck_assert_ptr_nonnull(strstr(e.msg, "no mnist files in"));
    ck_assert_ptr_nonnull(strstr(e.msg, "t10k-images-idx3-ubyte[.gz] + t10k-labels-idx1-ubyte[.gz]"));

    idx_pair p = good_pair();
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        write_file(path, i % 2 ? p.lab : p.img, i % 2 ? p.lab_n : p.img_n, strstr(files[i], ".gz") != NULL);
    }
    ck_assert_msg(vs_load_mnist(dir, false, &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(d->n, 3);
    ck_assert_int_eq(d->y[1], 9);
    vs_dataset_free(d);
    ck_assert_msg(vs_load_mnist(dir, true, &d, &e) == VS_OK, "%s", e.msg); /* falls back to train10k */
    ck_assert_int_eq(d->n, 3);
    vs_dataset_free(d);
    /* with the full training pair present it is preferred: make it 1 image */
    const uint32_t idim[3] = {1, 2, 3}, ldim[1] = {1};
    uint8_t img[64], lab[16];
    size_t img_n = make_idx(img, 0x803, idim, 3, pixels, 6), lab_n = make_idx(lab, 0x801, ldim, 1, labels3 + 2, 1);
    snprintf(path, sizeof path, "%s/%s", dir, files[4]);
    write_file(path, img, img_n, 0);
    ck_assert_int_eq(vs_load_mnist(dir, true, &d, &e), VS_OK); /* labels missing: still train10k */
    ck_assert_int_eq(d->n, 3);
    vs_dataset_free(d);
    snprintf(path, sizeof path, "%s/%s", dir, files[5]);
    write_file(path, lab, lab_n, 0);
    ck_assert_int_eq(vs_load_mnist(dir, true, &d, &e), VS_OK);
    ck_assert_int_eq(d->n, 1);
    ck_assert_int_eq(d->y[0], 4);
    vs_dataset_free(d);
    /* a corrupt file: the message names it */
    snprintf(path, sizeof path, "%s/%s", dir, files[5]);
    write_file(path, lab, lab_n - 1, 0);
    ck_assert_int_eq(vs_load_mnist(dir, true, &d, &e), VS_ERR_FORMAT);
    ck_assert_ptr_null(d);
    ck_assert_ptr_nonnull(strstr(e.msg, path));
    ck_assert_int_eq(vs_load_fashion_mnist(dir, false, &d, &e), VS_OK); /* same file names, clothing classes */
    ck_assert_str_eq(d->name, "fashion-mnist");
    ck_assert_str_eq(d->class_names[d->y[2]], "Coat");
    vs_dataset_free(d);
    for (int i = 0; i < 6; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        ck_assert_int_eq(remove(path), 0);
    }
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static void check_counts(const vs_dataset *d, const int64_t *want)
{
    int64_t count[10] = {0};
    for (int64_t i = 0; i < d->n; i++) {
        ck_assert(d->y[i] >= 0 && d->y[i] < 10);
        count[d->y[i]]++;
    }
    for (int k = 0; k < 10; k++) ck_assert_int_eq(count[k], want[k]);
}

START_TEST(test_real_mnist)
{
    char path[1024];
    if (!vs_test_data_path(path, sizeof path, "mnist/t10k-images-idx3-ubyte.gz")) return;
    snprintf(path, sizeof path, "%s/mnist", vs_test_data_dir());
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_load_mnist(path, false, &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_int_eq(d->n, 10000);
    ck_assert_int_eq(d->dim, 784);
    ck_assert_int_eq(d->shape[1], 28);
    ck_assert_int_eq(d->shape[2], 28);
    static const int64_t test_counts[10] = {980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009};
    check_counts(d, test_counts);
    ck_assert_int_eq(d->y[0], 7); /* the first test digits are 7, 2, 1 */
    ck_assert_int_eq(d->y[1], 2);
    ck_assert_int_eq(d->y[2], 1);
    double sum = 0;
    float lo = 1, hi = 0;
    for (int64_t i = 0; i < d->n * d->dim; i++) {
        sum += d->X[i];
        lo = d->X[i] < lo ? d->X[i] : lo;
        hi = d->X[i] > hi ? d->X[i] : hi;
    }
    ck_assert_float_eq(lo, 0.0f);
    ck_assert_float_eq(hi, 1.0f);
    ck_assert_double_eq_tol(sum / (double)(d->n * d->dim), 0.1325, 0.001); /* MNIST mean intensity */
    ck_assert_float_eq(d->X[0], 0.0f); /* corners are background */
    vs_dataset_free(d);

    ck_assert_msg(vs_load_mnist(path, true, &d, &e) == VS_OK, "%s", e.msg); /* train10k subset */
    ck_assert_int_eq(d->n, 10000);
    static const int64_t train10k_counts[10] = {1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978};
    check_counts(d, train10k_counts);
    static const int64_t first[5] = {5, 0, 4, 1, 9}; /* the first training digits */
    for (int i = 0; i < 5; i++) ck_assert_int_eq(d->y[i], first[i]);
    vs_dataset_free(d);
}
END_TEST

START_TEST(test_real_fashion)
{
    if (access(VS_FASHION_MNIST_DIR "/t10k-images-idx3-ubyte.gz", R_OK) != 0) {
        printf("SKIP: %s not installed (apt-get install dataset-fashion-mnist)\n", VS_FASHION_MNIST_DIR);
        return;
    }
    vs_dataset *d = NULL;
    vs_error e;
    ck_assert_msg(vs_load_fashion_mnist(NULL, false, &d, &e) == VS_OK, "%s", e.msg);
    ck_assert_str_eq(d->name, "fashion-mnist");
    ck_assert_int_eq(d->n, 10000);
    ck_assert_int_eq(d->dim, 784);
    static const int64_t counts[10] = {1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
    check_counts(d, counts);
    ck_assert_int_eq(d->y[0], 9); /* the first test item is an ankle boot */
    ck_assert_str_eq(d->class_names[d->y[0]], "Ankle boot");
    vs_dataset_free(d);
}
END_TEST

static Suite *idx_suite(void)
{
    Suite *s = suite_create("idx");
    TCase *tc = vs_tcase(s, "synthetic", 20);
    tcase_add_test(tc, test_parse_good);
    tcase_add_test(tc, test_parse_bad);
    tcase_add_test(tc, test_mnist_dir);
    tc = vs_tcase(s, "real", 120);
    tcase_add_test(tc, test_real_mnist);
    tcase_add_test(tc, test_real_fashion);
    return s;
}

VS_TEST_MAIN(idx_suite)
