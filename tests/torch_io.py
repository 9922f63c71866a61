"""tests/torch_io.py - safetensors files from PyTorch state dicts and back, for the PyTorch round-trip
tests (Debian's torch has no safetensors module)."""
import json
import struct

import numpy as np
import torch


def save_safetensors(path, state):
    header, blobs, off = {}, [], 0
    for name, t in state.items():
        if name.endswith("num_batches_tracked"):
            continue
        b = t.detach().contiguous().float().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (name, e["dtype"])
        a, b = e["data_offsets"]
        arr = np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f4").reshape(e["shape"])
        out[name] = torch.from_numpy(arr.copy())
    return out
