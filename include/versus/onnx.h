/* versus/onnx.h - ONNX model files (ModelProto), read into a bounded, validated graph.
 *
 * The reader knows no models and no ops: it yields the default-domain opset, the graph's nodes (op
 * type, name, input and output names, attributes), its initializers as float or int64 arrays, and its
 * inputs and outputs with their shapes.  Translating a graph into a versus model is nn/'s job
 * (vs_onnx_import, versus/model.h's loading path).
 *
 * Bounds: the file is read whole under the memory budget; every length is checked against the bytes
 * that remain, dims must be non-negative with a product below 2^40, an initializer's data must hold
 * exactly its element count, and each allocation an input decides passes vs_mem_check first.
 * Validation: the graph is in topological order (every node input is an initializer, a graph input or
 * an earlier node's output: a graph with a cycle fails here), every value is written once, and every
 * graph output is defined.  External-data initializers are read from files beside the model (a
 * relative location without ".."), others are refused with a message.  Messages name the file, the
 * offset or the node ("resnet18.onnx: node 12 (Conv \"/conv1/Conv\"): ...").
 *
 * Ownership: vs_onnx_model owns everything it points to; vs_onnx_free frees it.
 */
#ifndef VERSUS_ONNX_H
#define VERSUS_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "versus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VS_ONNX_MAX_DIMS 8

/* TensorProto.DataType values this reader converts (others are refused where data is needed). */
enum {
    VS_ONNX_FLOAT = 1, VS_ONNX_UINT8 = 2, VS_ONNX_INT8 = 3, VS_ONNX_INT32 = 6, VS_ONNX_INT64 = 7,
    VS_ONNX_BOOL = 9, VS_ONNX_FLOAT16 = 10, VS_ONNX_DOUBLE = 11
};

/* AttributeProto.AttributeType. */
typedef enum vs_onnx_attr_type {
    VS_ONNX_ATTR_FLOAT = 1, VS_ONNX_ATTR_INT = 2, VS_ONNX_ATTR_STRING = 3, VS_ONNX_ATTR_TENSOR = 4,
    VS_ONNX_ATTR_GRAPH = 5, VS_ONNX_ATTR_FLOATS = 6, VS_ONNX_ATTR_INTS = 7, VS_ONNX_ATTR_STRINGS = 8
} vs_onnx_attr_type;

/* A constant: elements in row-major order; float types in f (f32), integer and bool types in i. */
typedef struct vs_onnx_tensor {
    char *name;
    int dtype;                           /* VS_ONNX_FLOAT, ... */
    int ndim;
    int64_t dims[VS_ONNX_MAX_DIMS];
    int64_t n;                           /* product of dims (1 for a scalar) */
    float *f;                            /* n floats, or NULL */
    int64_t *i;                          /* n integers, or NULL */
} vs_onnx_tensor;

typedef struct vs_onnx_attr {
    char *name;
    vs_onnx_attr_type type;
    float f;                             /* FLOAT */
    int64_t i;                           /* INT */
    char *s;                             /* STRING (NUL-terminated) */
    float *floats;                       /* FLOATS: n */
    int64_t *ints;                       /* INTS: n */
    int64_t n;
    vs_onnx_tensor *t;                   /* TENSOR */
} vs_onnx_attr;

typedef struct vs_onnx_node {
    char *name, *op_type, *domain;       /* name may be ""; domain "" is the default ONNX domain */
    int n_in, n_out, n_attr;
    char **in, **out;                    /* "" marks an omitted optional input */
    vs_onnx_attr *attr;
} vs_onnx_node;

/* A graph input or output: its element type and shape (dims[i] -1 where symbolic, ndim -1 when the
 * rank is unknown). */
typedef struct vs_onnx_value {
    char *name;
    int elem_type;
    int ndim;
    int64_t dims[VS_ONNX_MAX_DIMS];
} vs_onnx_value;

typedef struct vs_onnx_model {
    int64_t ir_version;
    int64_t opset;                       /* version of the default ("" or "ai.onnx") domain */
    char *producer;
    int n_nodes, n_init, n_inputs, n_outputs;
    vs_onnx_node *nodes;
    vs_onnx_tensor *init;
    vs_onnx_value *inputs;               /* the graph inputs that are not initializers */
    vs_onnx_value *outputs;
} vs_onnx_model;

/* Read and validate an ONNX file.  *out is NULL on failure. */
vs_status vs_onnx_read_file(const char *path, vs_onnx_model **out, vs_error *err);
/* The same from memory; path names it in messages and locates external data (NULL: refused). */
vs_status vs_onnx_read_buffer(const uint8_t *buf, size_t len, const char *path, vs_onnx_model **out, vs_error *err);
void vs_onnx_free(vs_onnx_model *m);

/* Lookups (NULL when absent). */
const vs_onnx_tensor *vs_onnx_initializer(const vs_onnx_model *m, const char *name);
const vs_onnx_attr *vs_onnx_attr_get(const vs_onnx_node *n, const char *name);

#ifdef __cplusplus
}
#endif
#endif
