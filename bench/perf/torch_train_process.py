#!/usr/bin/python3
"""bench/perf/torch_train_process.py - what `versus train --arch ganmex-mnist --data mnist-train --test-data mnist
--epochs 1` does, in PyTorch, as one process: read the gzipped IDX files of $VERSUS_DATA/mnist (pixels / 255),
build the GANMEX MNIST classifier, one epoch of Adam (lr 1e-3, batches of 64 in a shuffled order) with the
running train accuracy, then the test accuracy in evaluation mode without gradients.

    torch_train_process.py THREADS [SEED]

Prints "accuracy: train A test B" as versus does.  bench/perf/train_process.py times it against versus.
"""
import gzip
import os
import struct
import sys


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    import numpy as np
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def main(argv):
    threads = int(argv[1]) if len(argv) > 1 else 1
    seed = int(argv[2]) if len(argv) > 2 else 1
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    root = os.path.join(os.environ.get("VERSUS_DATA", "/work/shared/datasets"), "mnist")
    x_train = torch.from_numpy(read_idx(os.path.join(root, "train10k-images-idx3-ubyte.gz")).copy()).float().div_(255)
    y_train = torch.from_numpy(read_idx(os.path.join(root, "train10k-labels-idx1-ubyte.gz")).astype("int64"))
    x_test = torch.from_numpy(read_idx(os.path.join(root, "t10k-images-idx3-ubyte.gz")).copy()).float().div_(255)
    y_test = torch.from_numpy(read_idx(os.path.join(root, "t10k-labels-idx1-ubyte.gz")).astype("int64"))
    x_train, x_test = x_train.unsqueeze(1), x_test.unsqueeze(1)
    m = nn.Sequential(nn.Conv2d(1, 32, 6, 2, 2), nn.ReLU(), nn.Conv2d(32, 64, 6, 2, 2), nn.ReLU(), nn.Flatten(),
                      nn.Linear(3136, 256), nn.ReLU(), nn.Dropout(0.5), nn.Linear(256, 10))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    m.train()
    order = torch.randperm(len(x_train))
    correct = 0
    for k in range(0, len(order), 64):
        idx = order[k:k + 64]
        logits = m(x_train[idx])
        loss = F.cross_entropy(logits, y_train[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        correct += int((logits.argmax(1) == y_train[idx]).sum())
    m.eval()
    hits = 0
    with torch.no_grad():
        for k in range(0, len(x_test), 256):
            hits += int((m(x_test[k:k + 256]).argmax(1) == y_test[k:k + 256]).sum())
    print("accuracy: train %.4f test %.4f" % (correct / len(x_train), hits / len(x_test)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
