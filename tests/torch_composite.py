"""tests/torch_composite.py - composite models round trip between PyTorch and versus.

StarGAN's Generator and PatchGAN Discriminator (yunjey/stargan model.py, the image channel count made
a parameter) and PyTorch's VAE example, as their authors wrote them:
  1. PyTorch -> versus: the classes' weights (random running statistics included) are written with a
     safetensors writer of our own; versus loads them with the architecture's model.json (for the VAE a
     model.json written here, as a user would) and its outputs match PyTorch's to 1e-5.
  2. versus -> PyTorch: versus-built models (running statistics moved by a training-mode forward) load
     into the same classes with load_state_dict(strict=True) and give versus's outputs.
usage: torch_composite.py COMPOSITE_TOOL WORKDIR; exit 0 pass, 1 fail, 77 skip (torch missing).
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # the test is skipped without torch
    print(f"SKIP: {e} (install python3-torch)")
    sys.exit(77)


# The classes (StarGAN's Generator and Discriminator, PyTorch's VAE example) live in bench/torch_models.py.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from torch_models import Discriminator, Generator, VAE  # noqa: E402


# A model.json for the VAE, written as a user would (README's composite form).
VAE_JSON = {
    "format": "versus-model/1",
    "composite": {
        "inputs": {"x": [1, 28, 28]},
        "models": {"fc1": {"op": "linear", "in": 784, "out": 400},
                   "fc21": {"op": "linear", "in": 400, "out": 20},
                   "fc22": {"op": "linear", "in": 400, "out": 20},
                   "fc3": {"op": "linear", "in": 20, "out": 400},
                   "fc4": {"op": "linear", "in": 400, "out": 784}},
        "graph": [{"op": "flatten", "in": "x", "out": "xf"},
                  {"call": "fc1", "in": "xf", "out": "a1"},
                  {"op": "relu", "in": "a1", "out": "h1"},
                  {"call": "fc21", "in": "h1", "out": "mu"},
                  {"call": "fc22", "in": "h1", "out": "logvar"},
                  {"op": "reparameterize", "in": ["mu", "logvar"], "out": "z"},
                  {"call": "fc3", "in": "z", "out": "a3"},
                  {"op": "relu", "in": "a3", "out": "h3"},
                  {"call": "fc4", "in": "h3", "out": "logits"},
                  {"op": "reshape", "in": "logits", "shape": [1, 28, 28], "out": "x_logits"}],
        "outputs": ["mu", "logvar", "x_logits"],
        "task": "vae"}}


# ---- safetensors: tests/torch_io.py ----------------------------------------------------------------
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_io import load_safetensors, save_safetensors  # noqa: E402


# ---- driving versus ---------------------------------------------------------------------------------
TOOL, WORK = sys.argv[1], sys.argv[2]
failures = 0


def run(*args):
    r = subprocess.run([TOOL, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: composite_tool {' '.join(args)}: {r.stderr.strip()}")


def versus_eval(model_dir, inputs):
    out = os.path.join(model_dir, "out")
    os.makedirs(out, exist_ok=True)
    pairs = []
    for name, t in inputs.items():
        p = os.path.join(model_dir, f"in_{name}.npy")
        np.save(p, t.numpy().astype(np.float32))
        pairs.append(f"{name}={p}")
    run("eval", model_dir, out, *pairs)
    return lambda name: torch.from_numpy(np.load(os.path.join(out, f"{name}.npy")))


def compare(what, got, want, tol=1e-5):
    global failures
    err = (got - want).abs().max().item()
    scale = max(1.0, want.abs().max().item())
    ok = got.shape == want.shape and err <= tol * scale
    print(f"{'ok' if ok else 'FAIL'}: {what}: max |versus - torch| = {err:.3g} (shape {tuple(got.shape)})")
    failures += not ok


def randomize_running_stats(m, g):
    for name, b in m.named_buffers():
        if name.endswith("running_mean"):
            b.copy_(torch.randn(b.shape, generator=g) * 0.2)
        elif name.endswith("running_var"):
            b.copy_(torch.rand(b.shape, generator=g) + 0.5)


def models():
    """(versus arch, torch class instance, inputs, torch outputs by versus name)."""
    def gen_out(m, x):
        return {"y": m(x["x"], x["c"])}

    def critic_out(m, x):
        src, cls = m(x["x"])
        return {"src": src, "cls": cls}

    def vae_out(m, x):
        mu, logvar = m.encode(x["x"].view(-1, 784))
        # versus evaluates without a generator: z = mu; x_logits are the decoder's logits
        return {"mu": mu, "logvar": logvar, "x_logits": m.fc4(F.relu(m.fc3(mu))).view(-1, 1, 28, 28)}

    g = torch.Generator().manual_seed(3)
    c = torch.zeros(5, 3)
    c[torch.arange(5), torch.arange(5) % 3] = 1
    return [
        ("stargan-gen", lambda: Generator(conv_dim=8, c_dim=3, repeat_num=2, channels=1),
         {"x": torch.rand(5, 1, 28, 28, generator=g) * 2 - 1, "c": c}, gen_out),
        ("stargan-critic", lambda: Discriminator(image_size=32, conv_dim=8, c_dim=5, repeat_num=3, channels=3),
         {"x": torch.rand(5, 3, 32, 32, generator=g) * 2 - 1}, critic_out),
        ("vae", VAE, {"x": torch.rand(5, 1, 28, 28, generator=g)}, vae_out),
    ]


torch.manual_seed(0)
for arch, make, inputs, outputs in models():
    # 1. PyTorch -> versus
    d = os.path.join(WORK, f"{arch}-from-torch")
    os.makedirs(d, exist_ok=True)
    m = make()
    with torch.no_grad():
        randomize_running_stats(m, torch.Generator().manual_seed(5))
    m.eval()
    if arch == "vae":
        with open(os.path.join(d, "model.json"), "w") as f:
            json.dump(VAE_JSON, f, indent=1)
    else:
        run("build", arch, d)  # the architecture's model.json; its weights are replaced below
    save_safetensors(os.path.join(d, "model.safetensors"), m.state_dict())
    got = versus_eval(d, inputs)
    with torch.no_grad():
        for name, want in outputs(m, inputs).items():
            compare(f"{arch} PyTorch -> versus, {name}", got(name), want)

    # 2. versus -> PyTorch
    d = os.path.join(WORK, f"{arch}-from-versus")
    run("build", arch, d)
    m = make()
    m.load_state_dict(load_safetensors(os.path.join(d, "model.safetensors")), strict=True)
    m.eval()
    got = versus_eval(d, inputs)
    with torch.no_grad():
        for name, want in outputs(m, inputs).items():
            compare(f"{arch} versus -> PyTorch, {name}", got(name), want)

sys.exit(1 if failures else 0)
