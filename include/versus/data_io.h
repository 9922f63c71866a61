/* versus/data_io.h - reading real data from disk: our own inflate (raw deflate, zlib, gzip),
 * CRC-32 / Adler-32, and loaders for MNIST-style IDX files and TU Dortmund graph sets.
 *
 * Ownership: every buffer returned through a `uint8_t **` is malloc'ed and owned by the caller
 * (release with free(); it is never NULL on success, even for zero bytes).  Every vs_dataset
 * returned through `vs_dataset **` is owned by the caller (release with vs_dataset_free()).  On
 * failure nothing is returned (*out is left NULL) and err says which file, line or byte was wrong.
 * Inputs are never trusted: truncated, corrupt or hostile data yields VS_ERR_FORMAT, sizes that
 * would overflow or exceed the decompression limit yield VS_ERR_NOMEM; nothing crashes. */
#ifndef VERSUS_DATA_IO_H
#define VERSUS_DATA_IO_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "versus/dataset.h"
#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- checksums (update style: pass the previous value, start from the initial one) ---- */

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320) of buf appended to crc; start with 0.
 * vs_crc32(0, "123456789", 9) == 0xCBF43926.  Used by gzip and PNG. */
uint32_t vs_crc32(uint32_t crc, const void *buf, size_t n);
/* Adler-32 (a = 1 + sum bytes, b = sum a, both mod 65521; value b << 16 | a) of buf appended to
 * adler; start with 1.  Used by zlib streams (PNG IDAT). */
uint32_t vs_adler32(uint32_t adler, const void *buf, size_t n);

/* ---- decompression ---- */

/* Default cap on decompressed output: 2 GiB or the memory budget, the smaller.  Protects against
 * decompression bombs (deflate can expand 1032:1).  vs_decompress() takes any other cap. */
#define VS_INFLATE_MAX_DEFAULT ((size_t)1 << 31)

typedef enum vs_zformat {
    VS_ZFORMAT_RAW = 0, /* bare RFC 1951 deflate stream; bytes after its last block are an error */
    VS_ZFORMAT_ZLIB,    /* RFC 1950: 2-byte header, deflate, Adler-32 (big-endian) */
    VS_ZFORMAT_GZIP     /* RFC 1952: one or more members, each CRC-32 and ISIZE checked */
} vs_zformat;

/* Decompress in[0..n) of the given format into a new buffer *out of *out_n bytes; fails with
 * VS_ERR_NOMEM as soon as the output would exceed max_out bytes (0 means VS_INFLATE_MAX_DEFAULT). */
vs_status vs_decompress(vs_zformat fmt, const uint8_t *in, size_t n, size_t max_out, uint8_t **out,
                        size_t *out_n, vs_error *err);
/* The first min(want, all) bytes of the decompressed data, inflating no further (memory: want + 64 KiB):
 * a header is checked before a bomb is inflated.  A stream cut by want is not checksummed. */
vs_status vs_decompress_head(vs_zformat fmt, const uint8_t *in, size_t n, size_t want, uint8_t **out, size_t *out_n,
                             vs_error *err);
/* vs_decompress(VS_ZFORMAT_GZIP, ...) with the default cap.  Trailing zero padding is ignored. */
vs_status vs_gunzip(const uint8_t *in, size_t n, uint8_t **out, size_t *out_n, vs_error *err);
/* vs_decompress(VS_ZFORMAT_ZLIB, ...) with the default cap.  Preset dictionaries are refused. */
vs_status vs_zlib_inflate(const uint8_t *in, size_t n, uint8_t **out, size_t *out_n, vs_error *err);

/* Whole file into a new buffer (*buf, *n): a regular file up to the memory budget (checked before
 * reading), a pipe up to it; devices and directories are refused. */
vs_status vs_read_file(const char *path, uint8_t **buf, size_t *n, vs_error *err);
/* Whole file; when it starts with the gzip magic 1f 8b it is gunzipped (default cap), otherwise
 * returned as is.  Error messages start with the path. */
vs_status vs_read_file_maybe_gz(const char *path, uint8_t **buf, size_t *n, vs_error *err);

/* ---- text outputs ---- */

/* A text output written through stdio and replaced atomically, like every other output: the text goes
 * to a temporary file beside path, which vs_out_commit() flushes, fsyncs and renames over path; a
 * symbolic link at path is replaced, never followed; a device or a pipe is written in place.  With
 * path NULL the output is stdout (commit only flushes it).  path must outlive o. */
typedef struct vs_out {
    FILE *f;    /* write here between open and commit/abort */
    void *priv; /* the temporary file (internal) */
} vs_out;

vs_status vs_out_open(vs_out *o, const char *path, vs_error *err);
/* Flush and replace path; a write error (ferror, a full disk) fails naming path and leaves it untouched.
 * Closes o whatever happens. */
vs_status vs_out_commit(vs_out *o, vs_error *err);
/* Close o and remove the temporary file: path keeps its old contents.  Harmless on a closed o. */
void vs_out_abort(vs_out *o);

/* ---- IDX images + labels (MNIST, Fashion-MNIST) ---- */

/* Parse an IDX image file (magic 0x00000803: unsigned bytes, dims [count, rows, cols] big-endian)
 * and an IDX label file (magic 0x00000801, dims [count]) already in memory and uncompressed.
 * Result: kind VS_DATA_IMAGES, shape [1, rows, cols], X = pixel / 255 in [0, 1], y = label in
 * 0..9, n_classes 10; class_names are the clothing names when name is "fashion-mnist", else the
 * digits "0".."9".  Counts must agree and each file's length must match its header exactly.
 * Messages call the buffers "IDX images" and "IDX labels" (vs_load_idx names the files). */
vs_status vs_parse_idx_mem(const uint8_t *images, size_t images_n, const uint8_t *labels, size_t labels_n,
                           const char *name, vs_dataset **out, vs_error *err);
/* vs_parse_idx_mem on two files, .gz or plain; a .gz file's header is checked before the rest is
 * inflated, and inflating stops where the header says the data ends. */
vs_status vs_load_idx(const char *images_path, const char *labels_path, const char *name, vs_dataset **out,
                      vs_error *err);
/* MNIST from dir (name "mnist").  Test: t10k-{images-idx3,labels-idx1}-ubyte[.gz].  Train: the full
 * train-{images-idx3,labels-idx1}-ubyte[.gz] pair when both exist, else the 10k subset
 * train10k-{images-idx3,labels-idx1}-ubyte[.gz]. */
vs_status vs_load_mnist(const char *dir, bool train, vs_dataset **out, vs_error *err);
/* Fashion-MNIST (name "fashion-mnist") from dir, or from /usr/share/datasets/fashion-mnist (Debian
 * package dataset-fashion-mnist) when dir is NULL; same file names as MNIST's full sets. */
vs_status vs_load_fashion_mnist(const char *dir, bool train, vs_dataset **out, vs_error *err);
#define VS_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/* ---- TU Dortmund graph sets (MUTAG, PROTEINS, ...) ---- */

/* One text file of a TU set in memory: data[0..n) and the name used in error messages.
 * data == NULL means the (optional) file is absent. */
typedef struct vs_tu_part {
    const uint8_t *data;
    size_t n;
    const char *name;
} vs_tu_part;

typedef struct vs_tu_files {
    vs_tu_part A;               /* required: "i, j" per line, global 1-based node ids */
    vs_tu_part graph_indicator; /* required: graph id (1-based) of node i on line i */
    vs_tu_part graph_labels;    /* required: class label of graph g on line g */
    vs_tu_part node_labels;     /* optional: integer label of node i */
    vs_tu_part node_attributes; /* optional: comma-separated reals, same count on every line */
    vs_tu_part edge_labels;     /* optional: integer label of the edge on the same line of A */
} vs_tu_files;

/* Build a graph data set (kind VS_DATA_GRAPHS, name = prefix) from the parts of a TU set.
 * Graph labels map to classes 0..k-1 in increasing order of value; class_names are the original
 * values ("-1", "1").  Node ids become local to their graph.  Each undirected edge (listed in A in
 * one or both directions, possibly repeated) is stored exactly twice, (u,v) then (v,u) with u <= v,
 * paired by rev[], sorted by (u, v).  Node features x [n_nodes, n_node_features]: one-hot of the
 * node label (distinct values in increasing order) followed by the node attributes; a set with
 * neither gets the single constant feature 1.  edge_label holds the index of the edge's label
 * among the distinct values in increasing order; both directions of an edge must agree. */
vs_status vs_parse_tu_mem(const vs_tu_files *files, const char *prefix, vs_dataset **out, vs_error *err);
/* Read dir/PREFIX_A.txt, PREFIX_graph_indicator.txt, PREFIX_graph_labels.txt and the optional
 * PREFIX_node_labels.txt, PREFIX_node_attributes.txt, PREFIX_edge_labels.txt (a file holding gzip
 * data is gunzipped), then vs_parse_tu_mem; messages name the file path and line. */
vs_status vs_load_tu(const char *dir, const char *prefix, vs_dataset **out, vs_error *err);
/* A folder of graphs: what `versus data export` writes for graphs (node_features.npy [nodes, F],
 * node_graph.npy [nodes] nondecreasing graph ids, edges.npy [E, 2] global node ids grouped by graph,
 * each edge both ways, y.npy optional) or a TU folder holding one PREFIX_A.txt.  Name "graphs" or the
 * TU prefix; classes 0..max label. */
vs_status vs_load_graph_dir(const char *dir, vs_dataset **out, vs_error *err);

#ifdef __cplusplus
}
#endif
#endif
