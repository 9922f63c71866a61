#!/usr/bin/env python3
# tests/hostile/make_corpus.py - writes the hostile-input corpus beside it (the files are committed;
# run this only to change them).  Every file is small and every one must make versus exit 1 with a
# "versus: " message (tests/cli_hostile.sh runs them).  Layout: npy/*.npy (given to predict as X),
# safetensors/*.safetensors and model/*.json (a model directory's weights or spec), csv/*.csv
# (data describe), idx/CASE/{images,labels}, tu/CASE/DS_*.txt and graphs/CASE/*.npy (data describe);
# round 2: composite/*.json (a model.json whose graph does not fit its shapes) and train_csv/*.csv
# (train refuses them); onnx/*.onnx (given to predict as --model).  Journals, parts and checkpoints are forged at test time (forge.py).
import gzip, json, os, shutil, struct

here = os.path.dirname(os.path.abspath(__file__))


def put(rel, data):
    path = os.path.join(here, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        f.write(data.encode() if isinstance(data, str) else data)


def npy_bytes(header, data=b'', version=(1, 0)):
    h = header.encode()
    h += b' ' * (63 - (10 + len(h)) % 64) + b'\n'
    return b'\x93NUMPY' + bytes(version) + struct.pack('<H', len(h)) + h + data


for d in ['npy', 'safetensors', 'model', 'csv', 'idx', 'tu', 'graphs', 'composite', 'train_csv', 'onnx']:
    shutil.rmtree(os.path.join(here, d), ignore_errors=True)

# ---- .npy: the preamble, the header dict, the sizes it claims -------------------------------------
good = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 37), }"
put('npy/empty.npy', b'')
put('npy/bad_magic.npy', b'\x93NUMPX' + npy_bytes(good)[6:])
put('npy/truncated_preamble.npy', b'\x93NUMPY\x01')
put('npy/header_len_past_end.npy', b'\x93NUMPY\x01\x00\xff\xff{')
put('npy/version_9.npy', npy_bytes(good, b'\0' * 296, (9, 0)))
put('npy/data_short.npy', npy_bytes(good, b'\0' * 7))
put('npy/data_long.npy', npy_bytes(good, b'\0' * 400))
put('npy/shape_overflow.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }"))
put('npy/shape_huge.npy', npy_bytes("{'descr': '<u1', 'fortran_order': False, 'shape': (1000000, 1000000), }", b'\0' * 64))
put('npy/shape_negative.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 37), }"))
put('npy/descr_complex.npy', npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (1, 37), }", b'\0' * 592))
put('npy/descr_big_endian.npy', npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1, 37), }", b'\0' * 148))
put('npy/descr_object.npy', npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1, 37), }", b'\0' * 296))
put('npy/header_not_dict.npy', npy_bytes("[1, 2, 3]"))
put('npy/header_unterminated.npy', npy_bytes("{'descr': '<f4', 'shape': (2, 37"))
put('npy/header_missing_shape.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, }", b'\0' * 4))
put('npy/header_nul.npy', npy_bytes("{'descr': '<f4\x00', 'fortran_order': False, 'shape': (1, 37), }", b'\0' * 148))
put('npy/zero_rows.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 37), }"))
nan37 = struct.pack('<74f', *([0.5] * 36 + [float('nan')] + [0.5] * 36 + [float('inf')]))
put('npy/nan_values.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 37), }", nan37))
put('npy/wrong_width.npy', npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 5), }", b'\0' * 20))


# ---- safetensors: length prefix, header JSON, offsets and shapes of the weights of the mlp -----------
def st_bytes(header, data=b'', length=None):
    h = json.dumps(header).encode() if not isinstance(header, bytes) else header
    return struct.pack('<Q', len(h) if length is None else length) + h + data


put('safetensors/empty.safetensors', b'')
put('safetensors/short_prefix.safetensors', b'\x08\x00\x00')
put('safetensors/header_len_huge.safetensors', st_bytes({}, length=1 << 62))
put('safetensors/header_len_past_end.safetensors', st_bytes({}, length=1000))
put('safetensors/header_not_json.safetensors', st_bytes(b'{"0.weight": [1, 2'))
put('safetensors/header_not_object.safetensors', st_bytes([1, 2, 3]))
put('safetensors/offsets_past_end.safetensors', st_bytes({'0.weight': {'dtype': 'F32', 'shape': [64, 37], 'data_offsets': [0, 9472]}}, b'\0' * 16))
put('safetensors/offsets_overlap.safetensors', st_bytes({'a': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]},
                                                         'b': {'dtype': 'F32', 'shape': [2], 'data_offsets': [4, 12]}}, b'\0' * 12))
put('safetensors/shape_vs_offsets.safetensors', st_bytes({'a': {'dtype': 'F32', 'shape': [3], 'data_offsets': [0, 8]}}, b'\0' * 8))
put('safetensors/dtype_unknown.safetensors', st_bytes({'a': {'dtype': 'F99', 'shape': [2], 'data_offsets': [0, 8]}}, b'\0' * 8))
put('safetensors/shape_overflow.safetensors', st_bytes({'a': {'dtype': 'F32', 'shape': [4294967296, 4294967296, 4294967296], 'data_offsets': [0, 8]}}, b'\0' * 8))
put('safetensors/missing_weights.safetensors', st_bytes({'x': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}, b'\0' * 8))
put('safetensors/wrong_shape.safetensors', st_bytes({'0.weight': {'dtype': 'F32', 'shape': [2], 'data_offsets': [0, 8]}}, b'\0' * 8))

# ---- model.json: structure, unknown fields, -1 is not "absent", sizes ------------------------------
def model(layers, inp=(37,), **extra):
    m = {'format': 'versus-model/1', 'input': list(inp), 'sequential': layers}
    m.update(extra)
    return json.dumps(m)


mlp = [{'op': 'linear', 'in': 37, 'out': 64, 'bias': True}, {'op': 'relu'}, {'op': 'linear', 'in': 64, 'out': 2, 'bias': True}]
conv = lambda **f: model([dict({'op': 'conv2d', 'in': 1, 'out': 2, 'kernel': 3}, **f), {'op': 'flatten'}], (1, 8, 8))
put('model/empty.json', '')
put('model/not_json.json', '{"format": "versus-model/1", "sequential": [')
put('model/format_unknown.json', json.dumps({'format': 'versus-model/99', 'sequential': mlp}))
put('model/op_unknown.json', model([{'op': 'frobnicate'}]))
put('model/stride_minus_one.json', conv(stride=-1))
put('model/padding_minus_one.json', conv(padding=-1))
put('model/bias_minus_one.json', model([{'op': 'linear', 'in': 37, 'out': 2, 'bias': -1}]))
put('model/kernel_minus_one.json', conv(kernel=-1))
put('model/width_huge.json', model([{'op': 'linear', 'in': 37, 'out': 1000000000}]))
put('model/width_budget.json', model([{'op': 'linear', 'in': 37, 'out': 1000000}, {'op': 'linear', 'in': 1000000, 'out': 1000000}]))
put('model/width_fraction.json', model([{'op': 'linear', 'in': 37, 'out': 2.5}]))
put('model/field_foreign.json', model([{'op': 'relu', 'kernel': 3}]))
put('model/duplicate_key.json', '{"format": "versus-model/1", "format": "versus-model/1", "sequential": []}')
put('model/deep_nesting.json', '{"format": "versus-model/1", "sequential": ' + '[' * 5000 + ']' * 5000 + '}')
put('model/invalid_utf8.json', b'{"format": "versus-model/1", "sequential": [{"op": "\xff\xfe"}]}')
put('model/input_mismatch.json', model(mlp, (5,)))


# ---- composites (round 2): graphs that do not fit their inputs' shapes, refused when read -----------
def composite(graph, outputs, inputs=None):
    return json.dumps({'format': 'versus-model/1', 'composite': {'inputs': inputs or {'x': [37]}, 'models': {}, 'graph': graph,
                                                                  'outputs': outputs}})


put('composite/reshape_overflow.json', composite([{'op': 'reshape', 'in': 'x', 'out': 'y', 'shape': [1 << 40, 1 << 40, 1 << 40]}], ['y']))
put('composite/add_mismatch.json', composite([{'op': 'add', 'in': ['x', 'r'], 'out': 'y'}], ['y'], {'x': [37], 'r': [5]}))
put('composite/concat_mismatch.json', composite([{'op': 'concat', 'in': ['x', 'r'], 'out': 'y', 'axis': 1}], ['y'], {'x': [3, 4], 'r': [2, 5]}))
put('composite/split_mismatch.json', composite([{'op': 'split', 'in': 'x', 'out': ['a', 'b'], 'axis': 1, 'sizes': [30, 30]}], ['a']))
put('composite/unused_mismatch.json', composite([{'op': 'relu', 'in': 'x', 'out': 'y'}, {'op': 'add', 'in': ['x', 'r'], 'out': 'z'}], ['y'],
                                                {'x': [37], 'r': [5]}))
put('composite/outputs_empty.json', composite([{'op': 'relu', 'in': 'x', 'out': 'y'}], []))

# ---- CSVs a model cannot be trained on (they describe fine) -------------------------------------------
put('train_csv/one_class.csv', 'a,b,label\n' + ''.join('%d,%d,x\n' % (i, i % 3) for i in range(40)))
put('train_csv/one_row.csv', 'a,b,label\n1,2,x\n')

# ---- CSV: structure the parser or the encoder refuses ----------------------------------------------
put('csv/empty.csv', '')
put('csv/blank_lines.csv', '\n  \n\t\n')
put('csv/ragged.csv', 'a,b,label\n1,2,x\n3,y\n')
put('csv/unterminated_quote.csv', 'a,label\n"open,1\n2,x\n')
put('csv/junk_after_quote.csv', 'a,label\n"q"z,1\n')
put('csv/nul_byte.csv', b'a,label\n1\x00,x\n2,y\n')
put('csv/header_only.csv', 'a,b,label\n')
put('csv/label_missing.csv', 'a,label\n1,?\n2,?\n')
put('csv/one_column.csv', 'label\nx\ny\n')
put('csv/binary.csv', bytes(range(256)) * 4)


# ---- IDX: headers, lengths, labels; gzip wrapped ones -----------------------------------------------
def idx_images(n, r, c, pixels=None, magic=0x803):
    return struct.pack('>IIII', magic, n, r, c) + (bytes(n * r * c) if pixels is None else pixels)


def idx_labels(labels, magic=0x801):
    return struct.pack('>II', magic, len(labels)) + bytes(labels)


def idx_case(name, images, labels):
    put('idx/%s/images' % name, images)
    put('idx/%s/labels' % name, labels)


ok_labels = idx_labels([1, 2])
idx_case('bad_magic', idx_images(2, 4, 4, magic=0x802), ok_labels)
idx_case('truncated_header', b'\x00\x00\x08\x03\x00\x00', ok_labels)
idx_case('claims_more', idx_images(2, 28, 28, bytes(100)), ok_labels)
idx_case('claims_1gib', idx_images(1 << 20, 32, 32, bytes(4096)), idx_labels([0] * 16))
idx_case('zero_rows', idx_images(2, 0, 4, b''), ok_labels)
idx_case('count_mismatch', idx_images(3, 4, 4), ok_labels)
idx_case('label_12', idx_images(2, 4, 4), idx_labels([1, 12]))
idx_case('gz_bad_magic', gzip.compress(idx_images(64, 32, 32, magic=0x0d0a), mtime=0), ok_labels)
idx_case('gz_truncated', gzip.compress(idx_images(2, 4, 4), mtime=0)[:-9], ok_labels)
idx_case('gz_corrupt_crc', gzip.compress(idx_images(2, 4, 4), mtime=0)[:-8] + b'\0\0\0\0' + struct.pack('<I', 48), ok_labels)


# ---- TU graph sets: indices, counts, numbers -------------------------------------------------------
def tu_case(name, A, indicator, graph_labels, node_labels=None):
    put('tu/%s/DS_A.txt' % name, A)
    put('tu/%s/DS_graph_indicator.txt' % name, indicator)
    put('tu/%s/DS_graph_labels.txt' % name, graph_labels)
    if node_labels is not None:
        put('tu/%s/DS_node_labels.txt' % name, node_labels)


tu_case('node_past_end', '1, 2\n2, 9\n', '1\n1\n1\n', '1\n')
tu_case('node_zero', '0, 1\n', '1\n1\n', '1\n')
tu_case('graph_past_labels', '1, 2\n', '1\n2\n', '1\n')
tu_case('edge_across_graphs', '1, 2\n', '1\n2\n', '1\n0\n')
tu_case('not_a_number', '1, x\n', '1\n1\n', '1\n')
tu_case('three_columns', '1, 2, 3\n', '1\n1\n1\n', '1\n')
tu_case('empty_indicator', '1, 2\n', '', '1\n')
tu_case('node_labels_short', '1, 2\n', '1\n1\n', '1\n', '0\n')
tu_case('huge_number', '1, 99999999999999999999999\n', '1\n1\n', '1\n')


# ---- exported graph sets (graphs:DIR): node ids, graph ids, reverse edges --------------------------------
def arr(shape, values, code):
    fmt = {'<f4': 'f', '<i8': 'q'}[code]
    dims = '(%d,)' % shape[0] if len(shape) == 1 else '(' + ', '.join(str(x) for x in shape) + ')'
    return npy_bytes("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (code, dims), struct.pack('<%d%s' % (len(values), fmt), *values))


def graph_case(name, nodes, node_graph, edges, y=None, feats=None):
    f = feats if feats is not None else [1.0] * nodes
    put('graphs/%s/node_features.npy' % name, arr((nodes, len(f) // nodes if nodes else 1), f, '<f4'))
    put('graphs/%s/node_graph.npy' % name, arr((len(node_graph),), node_graph, '<i8'))
    put('graphs/%s/edges.npy' % name, arr((len(edges) // 2, 2), edges, '<i8'))
    if y is not None:
        put('graphs/%s/y.npy' % name, arr((len(y),), y, '<i8'))


graph_case('no_reverse', 3, [0, 0, 0], [0, 1, 1, 2, 2, 1])
graph_case('node_past_end', 2, [0, 0], [0, 5, 5, 0])
graph_case('across_graphs', 2, [0, 1], [0, 1, 1, 0])
graph_case('graph_ids_decrease', 3, [1, 0, 1], [])
graph_case('graph_id_negative', 2, [-1, 0], [])
graph_case('rows_mismatch', 3, [0, 0], [])
graph_case('edges_not_pairs', 2, [0, 0], [0, 1, 1, 0], feats=[1.0, 1.0])
put('graphs/edges_not_pairs/edges.npy', arr((4,), [0, 1, 1, 0], '<i8'))
graph_case('label_negative', 2, [0, 1], [], y=[0, -3])
graph_case('node_graph_float', 2, [0, 0], [])
put('graphs/node_graph_float/node_graph.npy', arr((2,), [0.5, 0.0], '<f4'))


# ---- .onnx: the wire format, the graph, the import -------------------------------------------------
def pb_varint(v):
    v &= (1 << 64) - 1
    out = b''
    while True:
        b = v & 0x7f
        v >>= 7
        out += bytes([b | (0x80 if v else 0)])
        if not v:
            return out


def pb_int(field, v):
    return pb_varint(field << 3) + pb_varint(v)


def pb_bytes(field, data):
    data = data.encode() if isinstance(data, str) else data
    return pb_varint(field << 3 | 2) + pb_varint(len(data)) + data


def onnx_value(name, dims):  # ValueInfoProto of float, dims None: no shape (unknown rank)
    tt = pb_int(1, 1) + (pb_bytes(2, b''.join(pb_bytes(1, pb_int(1, d)) for d in dims)) if dims is not None else b'')
    return pb_bytes(1, name) + pb_bytes(2, pb_bytes(1, tt))


def onnx_node(op, ins, outs, attrs=b''):
    return b''.join(pb_bytes(1, i) for i in ins) + b''.join(pb_bytes(2, o) for o in outs) + pb_bytes(3, outs[0]) + pb_bytes(4, op) + attrs


def onnx_model(nodes, inits=(), inputs=(('x', [1, 4]),), outputs=(('y', [1, 4]),), opset=13):
    g = b''.join(pb_bytes(1, n) for n in nodes) + b''.join(pb_bytes(5, t) for t in inits)
    g += b''.join(pb_bytes(11, onnx_value(n, d)) for n, d in inputs) + b''.join(pb_bytes(12, onnx_value(n, d)) for n, d in outputs)
    return pb_int(1, 8) + pb_bytes(8, pb_int(2, opset)) + pb_bytes(7, g)


def onnx_tensor(name, dims, raw):
    return b''.join(pb_int(1, d) for d in dims) + pb_int(2, 1) + pb_bytes(8, name) + pb_bytes(9, raw)


relu = onnx_model([onnx_node('Relu', ['x'], ['y'])])
put('onnx/empty.onnx', b'')
put('onnx/truncated_varint.onnx', b'\x08\x80')
put('onnx/length_past_end.onnx', pb_varint(7 << 3 | 2) + pb_varint(1 << 20))
put('onnx/truncated.onnx', relu[:-3])
put('onnx/group_wire_type.onnx', pb_varint(7 << 3 | 3))
put('onnx/huge_length.onnx', pb_varint(7 << 3 | 2) + pb_varint((1 << 63) - 1))
put('onnx/negative_dim.onnx', onnx_model([onnx_node('Add', ['x', 'w'], ['y'])], [onnx_tensor('w', [-4], struct.pack('<4f', 1, 2, 3, 4))]))
put('onnx/overflowing_dims.onnx', onnx_model([onnx_node('Add', ['x', 'w'], ['y'])],
                                               [onnx_tensor('w', [1 << 31, 1 << 31, 1 << 31], b'\0' * 16)]))
put('onnx/short_data.onnx', onnx_model([onnx_node('Add', ['x', 'w'], ['y'])], [onnx_tensor('w', [4], b'\0' * 12)]))
put('onnx/cycle.onnx', onnx_model([onnx_node('Relu', ['b'], ['a']), onnx_node('Relu', ['a'], ['b'])], outputs=(('b', [1, 4]),)))
put('onnx/undefined_output.onnx', onnx_model([onnx_node('Relu', ['x'], ['z'])]))
put('onnx/written_twice.onnx', onnx_model([onnx_node('Relu', ['x'], ['y']), onnx_node('Relu', ['x'], ['y'])]))
put('onnx/unknown_rank.onnx', onnx_model([onnx_node('Relu', ['x'], ['y'])], inputs=(('x', None),)))
put('onnx/unsupported_op.onnx', onnx_model([onnx_node('Erf', ['x'], ['y'])]))
put('onnx/old_opset.onnx', onnx_model([onnx_node('Relu', ['x'], ['y'])], opset=7))
put('onnx/no_graph.onnx', pb_int(1, 8) + pb_bytes(8, pb_int(2, 13)))
put('onnx/external_escape.onnx', onnx_model([onnx_node('Add', ['x', 'w'], ['y'])], [
    pb_int(1, 4) + pb_int(2, 1) + pb_bytes(8, 'w') + pb_bytes(13, pb_bytes(1, 'location') + pb_bytes(2, '../../etc/passwd')) + pb_int(14, 1)]))
put('onnx/external_missing.onnx', onnx_model([onnx_node('Add', ['x', 'w'], ['y'])], [
    pb_int(1, 4) + pb_int(2, 1) + pb_bytes(8, 'w') + pb_bytes(13, pb_bytes(1, 'location') + pb_bytes(2, 'missing.bin')) + pb_int(14, 1)]))
put('onnx/conv_bad_weight.onnx', onnx_model([onnx_node('Conv', ['x', 'w'], ['y'])], [onnx_tensor('w', [2, 3], b'\0' * 24)],
                                             inputs=(('x', [1, 3, 4, 4]),), outputs=(('y', [1, 2, 4, 4]),)))
