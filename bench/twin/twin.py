#!/usr/bin/env python3
"""twin.py - the PyTorch twin of a classifier versus trained: the same architecture (read from the
versus model directory's model.json), data, split, epochs, batch size and optimiser, trained by
PyTorch from PyTorch's own initialisation; prints one JSON object with its test accuracy and wall time.

    /usr/bin/python3 bench/twin/twin.py --model DIR --train DIR --test DIR [--out FILE.json]

--model DIR is what `versus train` wrote (model.json; metrics.json gives epochs, batch_size, optimizer,
lr, seed); --train and --test are folders from `versus data export` (X.npy, y.npy).  Only sequential
models of the layers below are twinned; anything else is refused with the layer's op.  Needs torch
(Debian: python3-torch).  bench/twin/run.sh runs versus and the twin on the benches' classifiers.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch
from torch import nn


class TwinError(Exception):
    pass


def layer(spec):
    op = spec.get("op")
    g = spec.get
    if op == "linear":
        return nn.Linear(g("in"), g("out"), bias=g("bias", True))
    if op == "conv2d":
        return nn.Conv2d(g("in"), g("out"), g("kernel"), stride=g("stride", 1), padding=g("padding", 0),
                         dilation=g("dilation", 1), groups=g("groups", 1), bias=g("bias", True))
    if op == "max_pool2d":
        return nn.MaxPool2d(g("kernel"), stride=g("stride", g("kernel")), padding=g("padding", 0),
                            dilation=g("dilation", 1), ceil_mode=g("ceil_mode", False))
    if op == "avg_pool2d":
        return nn.AvgPool2d(g("kernel"), stride=g("stride", g("kernel")), padding=g("padding", 0),
                            ceil_mode=g("ceil_mode", False))
    if op == "global_avg_pool":
        return nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
    if op == "batch_norm1d":
        return nn.BatchNorm1d(g("features"), eps=g("eps", 1e-5), momentum=g("momentum", 0.1))
    if op == "batch_norm2d":
        return nn.BatchNorm2d(g("features"), eps=g("eps", 1e-5), momentum=g("momentum", 0.1))
    if op == "dropout":
        return nn.Dropout(g("p", 0.5))
    if op == "flatten":
        return nn.Flatten()
    simple = {"relu": nn.ReLU, "tanh": nn.Tanh, "sigmoid": nn.Sigmoid, "softplus": nn.Softplus}
    if op in simple:
        return simple[op]()
    if op == "leaky_relu":
        return nn.LeakyReLU(g("slope", 0.01))
    if op == "elu":
        return nn.ELU(g("alpha", 1.0))
    raise TwinError(f"layer op {op!r} has no twin here (twin.py knows the layers of a sequential classifier)")


def load_model(d):
    with open(os.path.join(d, "model.json")) as f:
        doc = json.load(f)
    if "sequential" not in doc:
        raise TwinError(f"{d}/model.json: only sequential models are twinned (this one has {sorted(doc)})")
    with open(os.path.join(d, "metrics.json")) as f:
        metrics = json.load(f)
    if metrics.get("task") != "classifier":
        raise TwinError(f"{d}/metrics.json: task {metrics.get('task')!r}, the twin trains classifiers")
    torch.manual_seed(metrics.get("seed", 1))  # PyTorch's own initialisation, seeded
    return nn.Sequential(*[layer(s) for s in doc["sequential"]]), metrics


def load_data(d):
    X = np.load(os.path.join(d, "X.npy")).astype(np.float32)
    y = np.load(os.path.join(d, "y.npy")).astype(np.int64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise TwinError(f"{d}: X.npy has {X.shape[0]} rows, y.npy {y.shape[0]}")
    return torch.from_numpy(X), torch.from_numpy(y)


def accuracy(model, X, y, batch=1000):
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, X.shape[0], batch):
            right += int((model(X[i:i + batch]).argmax(1) == y[i:i + batch]).sum())
    return right / X.shape[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    try:
        model, m = load_model(a.model)
        Xtr, ytr = load_data(a.train)
        Xte, yte = load_data(a.test)
    except (OSError, ValueError, TwinError) as e:
        print(f"twin: {e}", file=sys.stderr)
        return 2
    if m.get("optimizer", "adam") != "adam" or m.get("weight_decay", 0) or m.get("optimizers"):
        print(f"twin: {a.model}: only plain Adam runs are twinned", file=sys.stderr)
        return 2
    epochs, batch, lr, seed = m["epochs"], m["batch_size"], m["lr"], m.get("seed", 1)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(seed)
    t0 = time.monotonic()
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(Xtr.shape[0], generator=g)
        for i in range(0, Xtr.shape[0], batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            loss_fn(model(Xtr[idx]), ytr[idx]).backward()
            opt.step()
    seconds = time.monotonic() - t0
    out = {"impl": "pytorch", "torch": torch.__version__, "threads": a.threads, "epochs": epochs, "batch_size": batch,
           "lr": lr, "seed": seed, "train_rows": int(Xtr.shape[0]), "test_rows": int(Xte.shape[0]),
           "test_accuracy": accuracy(model, Xte, yte), "train_seconds": seconds}
    text = json.dumps(out)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
