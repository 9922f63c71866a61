#!/usr/bin/env python3
"""torch_to_versus.py - a PyTorch module as a versus model directory (model.json + model.safetensors).

Needs only torch (Debian: python3-torch); the safetensors file is written here, no safetensors package.

    python3 datasets/io/torch_to_versus.py --module mynet.py:Net [--kwargs '{"hidden": 64}'] [--weights net.pt]
                                     --input x=1,28,28 [--input r=1,28,28] --out DIR

--module FILE.py:NAME names a class (built with --kwargs) or a function returning the module; --weights
loads a state_dict saved with torch.save(model.state_dict(), PATH) (or a whole pickled module);
--input NAME=SHAPE gives each forward argument's shape for one example (no batch dimension), in the
order of forward's arguments.  From Python:

    import torch_to_versus
    torch_to_versus.save(model, "DIR", {"x": (1, 28, 28)})

What is written:
  * an nn.Sequential of layers -> {"sequential": [...], "input": SHAPE} (versus/model.h);
  * any other module -> a composite (versus/composite.h): forward is traced with torch.fx, each direct
    child the forward calls becomes a model ("call" nodes; a child called twice shares its weights, as a
    Siamese encoder does), and torch.cat, +, *, flatten, view/reshape and the activations become wiring
    nodes.  A module with two inputs is a pair model in versus (predict / attribute / evaluate
    --reference), whatever its head computes.
Layers: Linear, Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, BatchNorm1d/2d, InstanceNorm2d, LayerNorm
(one normalised dimension), Dropout, Flatten, ReLU, LeakyReLU, ELU, Tanh, Sigmoid, Softplus (beta 1).
Anything else is refused with the module's name and type.  The module is written in evaluation mode;
parameters and buffers keep their state_dict names, so versus reads the weights torch had.
"""
import argparse
import importlib.util
import json
import operator
import os
import struct
import sys

try:
    import torch
    import torch.fx
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # pragma: no cover - the message is the point
    sys.exit(f"torch_to_versus: {e}; install PyTorch (Debian: apt-get install python3-torch)")


class ExportError(Exception):
    """A module or operation versus's model format cannot express."""


def _one(v, what, name):
    """A square kernel/stride/padding as one integer."""
    if isinstance(v, (tuple, list)):
        if len(set(v)) != 1:
            raise ExportError(f"{name}: {what} {tuple(v)} is not square; versus takes one value for both axes")
        v = v[0]
    if isinstance(v, str):
        raise ExportError(f"{name}: padding '{v}' is not supported; give the number of pixels")
    return int(v)


def layer_spec(m, name):
    """model.json's LAYER object of one torch layer."""
    if isinstance(m, nn.Linear):
        return {"op": "linear", "in": m.in_features, "out": m.out_features, "bias": m.bias is not None}
    if isinstance(m, (nn.Conv2d, nn.ConvTranspose2d)):
        if m.groups != 1:
            raise ExportError(f"{name}: grouped convolutions (groups={m.groups}) are not supported")
        if m.padding_mode != "zeros":
            raise ExportError(f"{name}: padding_mode '{m.padding_mode}' is not supported (zeros only)")
        s = {"op": "conv2d" if isinstance(m, nn.Conv2d) else "conv_transpose2d", "in": m.in_channels, "out": m.out_channels,
             "kernel": _one(m.kernel_size, "kernel", name), "stride": _one(m.stride, "stride", name),
             "padding": _one(m.padding, "padding", name), "dilation": _one(m.dilation, "dilation", name),
             "bias": m.bias is not None}
        if isinstance(m, nn.ConvTranspose2d):
            s["output_padding"] = _one(m.output_padding, "output_padding", name)
        return s
    if isinstance(m, nn.MaxPool2d):
        if m.return_indices:
            raise ExportError(f"{name}: MaxPool2d(return_indices=True) is not supported")
        return {"op": "max_pool2d", "kernel": _one(m.kernel_size, "kernel", name),
                "stride": _one(m.stride if m.stride is not None else m.kernel_size, "stride", name),
                "padding": _one(m.padding, "padding", name), "dilation": _one(m.dilation, "dilation", name),
                "ceil_mode": bool(m.ceil_mode)}
    if isinstance(m, nn.AvgPool2d):
        if not m.count_include_pad and _one(m.padding, "padding", name):
            raise ExportError(f"{name}: AvgPool2d(count_include_pad=False) with padding is not supported")
        return {"op": "avg_pool2d", "kernel": _one(m.kernel_size, "kernel", name),
                "stride": _one(m.stride if m.stride is not None else m.kernel_size, "stride", name),
                "padding": _one(m.padding, "padding", name), "ceil_mode": bool(m.ceil_mode)}
    if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
        if not m.affine or not m.track_running_stats:
            raise ExportError(f"{name}: batch norm without affine or running statistics is not supported")
        return {"op": "batch_norm1d" if isinstance(m, nn.BatchNorm1d) else "batch_norm2d", "features": m.num_features,
                "eps": m.eps, "momentum": m.momentum if m.momentum is not None else 0.1}
    if isinstance(m, nn.InstanceNorm2d):
        return {"op": "instance_norm2d", "features": m.num_features, "eps": m.eps,
                "momentum": m.momentum if m.momentum is not None else 0.1, "affine": bool(m.affine),
                "track_running_stats": bool(m.track_running_stats)}
    if isinstance(m, nn.LayerNorm):
        if len(m.normalized_shape) != 1 or not m.elementwise_affine:
            raise ExportError(f"{name}: LayerNorm over {tuple(m.normalized_shape)} (versus: one dimension, affine)")
        return {"op": "layer_norm", "features": m.normalized_shape[0], "eps": m.eps}
    if isinstance(m, nn.Dropout):
        return {"op": "dropout", "p": m.p}
    if isinstance(m, nn.Flatten):
        if m.start_dim != 1 or m.end_dim != -1:
            raise ExportError(f"{name}: Flatten({m.start_dim}, {m.end_dim}) (versus flattens all but the batch dimension)")
        return {"op": "flatten"}
    if isinstance(m, nn.LeakyReLU):
        return {"op": "leaky_relu", "slope": m.negative_slope}
    if isinstance(m, nn.ELU):
        return {"op": "elu", "alpha": m.alpha}
    if isinstance(m, nn.Softplus):
        if m.beta != 1:
            raise ExportError(f"{name}: Softplus(beta={m.beta}) (versus: beta 1)")
        return {"op": "softplus"}
    for cls, op in ((nn.ReLU, "relu"), (nn.Tanh, "tanh"), (nn.Sigmoid, "sigmoid")):
        if isinstance(m, cls):
            return {"op": op}
    raise ExportError(f"{name}: {type(m).__name__} is not a layer versus knows (torch_to_versus.py --help lists them)")


def model_spec(m, name):
    """A child of a composite: a sequential of layers, or one layer."""
    if isinstance(m, nn.Sequential):
        return {"sequential": [layer_spec(c, f"{name}.{i}") for i, c in enumerate(m)]}
    return layer_spec(m, name)


class _ChildrenAreLeaves(torch.fx.Tracer):
    """Trace the root's forward only: each direct child is one call."""

    def __init__(self, root):
        super().__init__()
        self.root_children = {id(c) for c in root.children()}

    def is_leaf_module(self, m, qualname):
        return id(m) in self.root_children or super().is_leaf_module(m, qualname)


_UNARY_FUNCS = {torch.relu: "relu", F.relu: "relu", torch.tanh: "tanh", torch.sigmoid: "sigmoid", F.elu: "elu",
                F.leaky_relu: "leaky_relu", F.softplus: "softplus", torch.flatten: "flatten"}
_UNARY_METHODS = {"relu": "relu", "tanh": "tanh", "sigmoid": "sigmoid", "flatten": "flatten"}


def composite_spec(module, inputs):
    """The composite object of module, traced with torch.fx; returns (spec, names of the children used)."""
    tracer = _ChildrenAreLeaves(module)
    graph = tracer.trace(module)
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(inputs):
        raise ExportError(f"forward takes {[n.target for n in placeholders]}, --input gives {list(inputs)}")
    names, spec_inputs, models, nodes, outputs, used = {}, {}, {}, [], [], []
    for n, (iname, shape) in zip(placeholders, inputs.items()):
        if iname != n.target:
            raise ExportError(f"--input {iname}: forward's arguments are {[p.target for p in placeholders]}, in that order")
        names[n] = n.target
        spec_inputs[n.target] = list(shape)
    sizes = set()  # x.size(0) / x.shape[0]: the batch dimension in a view

    def val(a, node):
        if not isinstance(a, torch.fx.Node) or a not in names:
            raise ExportError(f"{node.format_node()}: argument {a!r} is not a tensor value versus can wire")
        return names[a]

    def emit(node, spec):
        names[node] = node.name
        spec["out"] = node.name
        nodes.append(spec)

    for n in graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "call_module":
            child = n.target
            if "." in child:
                raise ExportError(f"{n.format_node()}: calls {child}, inside a child; call direct children only")
            if child not in models:
                models[child] = model_spec(module.get_submodule(child), child)
                used.append(child)
            emit(n, {"call": child, "in": val(n.args[0], n) if len(n.args) == 1 else [val(a, n) for a in n.args]})
        elif n.op == "call_function" and n.target in (torch.cat, getattr(torch, "concat", torch.cat)):
            dim = n.kwargs.get("dim", n.args[1] if len(n.args) > 1 else 0)
            if dim == 0:
                raise ExportError(f"{n.format_node()}: concatenating along the batch dimension")
            emit(n, {"op": "concat", "in": [val(a, n) for a in n.args[0]], "axis": dim})
        elif n.op == "call_function" and n.target in (operator.add, torch.add, operator.mul, torch.mul):
            op = "add" if n.target in (operator.add, torch.add) else "mul"
            emit(n, {"op": op, "in": [val(a, n) for a in n.args]})
        elif (n.op == "call_function" and n.target in _UNARY_FUNCS) or (n.op == "call_method" and n.target in _UNARY_METHODS):
            op = _UNARY_FUNCS[n.target] if n.op == "call_function" else _UNARY_METHODS[n.target]
            extra = list(n.args[1:]) + list(n.kwargs.values())
            if op == "flatten" and extra not in ([], [1]):
                raise ExportError(f"{n.format_node()}: flatten from dimension {extra} (versus: from 1)")
            if op != "flatten" and extra:
                raise ExportError(f"{n.format_node()}: {op} with arguments {extra}; use the nn.{op} layer")
            emit(n, {"op": op, "in": val(n.args[0], n)})
        elif n.op == "call_method" and n.target == "size" and list(n.args[1:]) == [0]:
            sizes.add(n)
        elif n.op == "call_function" and n.target is getattr and n.args[1] == "shape":
            sizes.add(n)  # x.shape; only x.shape[0] may follow
        elif n.op == "call_function" and n.target is operator.getitem and n.args[0] in sizes and n.args[1] == 0:
            sizes.add(n)
        elif n.op == "call_method" and n.target in ("view", "reshape"):
            shape = list(n.args[1:])
            if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
                shape = list(shape[0])
            if not shape or not (shape[0] in sizes or shape[0] == -1) or not all(isinstance(s, int) for s in shape[1:]):
                raise ExportError(f"{n.format_node()}: a view must keep the batch dimension first (x.view(x.size(0), ...))")
            emit(n, {"op": "reshape", "in": val(n.args[0], n), "shape": shape[1:]})
        elif n.op == "output":
            outs = n.args[0] if isinstance(n.args[0], (tuple, list)) else [n.args[0]]
            outputs = [val(a, n) for a in outs]
        else:
            raise ExportError(f"{n.format_node()}: versus's composite program has no node for this")
    return {"inputs": spec_inputs, "models": models, "graph": nodes, "outputs": outputs}, used


def save_safetensors(path, state):
    """state (name -> tensor) as a safetensors file of float32 tensors."""
    header, blobs, off = {}, [], 0
    for name, t in state.items():
        b = t.detach().cpu().contiguous().float().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(tmp, path)


def save(module, directory, inputs):
    """Write module as DIR/model.json + DIR/model.safetensors.  inputs: {name: shape of one example}, in
    the order of forward's arguments (a sequential takes one).  Returns the model.json object."""
    module = module.eval()
    if isinstance(module, nn.Sequential):
        if len(inputs) != 1:
            raise ExportError(f"a sequential takes one input, --input gives {list(inputs)}")
        doc = {"format": "versus-model/1", "input": list(next(iter(inputs.values()))),
               "sequential": [layer_spec(c, str(i)) for i, c in enumerate(module)]}
        keep = None
    else:
        spec, used = composite_spec(module, inputs)
        doc = {"format": "versus-model/1", "composite": spec}
        keep = tuple(u + "." for u in used)
    state = {k: v for k, v in module.state_dict().items()
             if not k.endswith("num_batches_tracked") and (keep is None or k.startswith(keep))}
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, "model.json.tmp")
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(tmp, os.path.join(directory, "model.json"))
    save_safetensors(os.path.join(directory, "model.safetensors"), state)
    return doc


def _load_module(ref, kwargs):
    path, _, name = ref.rpartition(":")
    if not path or not name:
        raise SystemExit(f"torch_to_versus: --module expects FILE.py:NAME, got '{ref}'")
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    if spec is None:
        raise SystemExit(f"torch_to_versus: cannot import {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    if not hasattr(mod, name):
        raise SystemExit(f"torch_to_versus: {path} defines no '{name}'")
    return getattr(mod, name)(**kwargs)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Write a PyTorch module as a versus model directory (model.json + model.safetensors).",
                                 epilog=__doc__.split("\n\n", 2)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--module", required=True, help="FILE.py:NAME, a class or a function that returns the module")
    ap.add_argument("--kwargs", default="{}", help="JSON object of keyword arguments for NAME")
    ap.add_argument("--weights", help="a state_dict (or a whole module) saved with torch.save, e.g. model.pt")
    ap.add_argument("--input", action="append", required=True, metavar="NAME=SHAPE",
                    help="a forward argument and the shape of one example, e.g. x=1,28,28 (repeat for each argument)")
    ap.add_argument("--out", required=True, help="model directory to write")
    a = ap.parse_args(argv)
    inputs = {}
    for item in a.input:
        name, eq, shape = item.partition("=")
        try:
            inputs[name] = tuple(int(s) for s in shape.split(",")) if eq else None
        except ValueError:
            inputs[name] = None
        if not eq or not name or inputs[name] is None or any(s < 1 for s in inputs[name]):
            raise SystemExit(f"torch_to_versus: --input expects NAME=D1,D2,... (positive sizes), got '{item}'")
    module = _load_module(a.module, json.loads(a.kwargs))
    if a.weights:
        w = torch.load(a.weights, map_location="cpu")
        if isinstance(w, nn.Module):
            module = w
        else:
            module.load_state_dict(w.get("state_dict", w) if isinstance(w, dict) else w)
    try:
        doc = save(module, a.out, inputs)
    except ExportError as e:
        raise SystemExit(f"torch_to_versus: {e}")
    kind = "sequential" if "sequential" in doc else f"composite with inputs {list(doc['composite']['inputs'])}"
    print(f"wrote {a.out}/model.json ({kind}) and {a.out}/model.safetensors")


if __name__ == "__main__":
    main()
