"""tests/torch_captum.py - `versus attribute` against Captum's definitions, computed here in PyTorch.

Captum is not installed, so each method below is Captum's definition transcribed from its source
(captum/attr/_core/...): guided backprop and deconvolution as its backward hooks on nn.ReLU, Guided
Grad-CAM with nearest-neighbour upsampling, LRP's rules (lrp_rules.py) layer by layer, feature
ablation with a feature mask, and the layer and neuron methods with Gauss-Legendre nodes
(np.polynomial.legendre.leggauss, as approximation_methods.py).  An MLP and a CNN of the model
contract's ops with random weights are written as versus models, and a Siamese MLP whose encoder's
layers (--layer encoder.I, reference fixed) are compared with the layer methods on x -> cos(enc(x),
enc(r)); versus explains them from the command line and must agree to 1e-4 (relative to the largest
attribution).
usage: torch_captum.py VERSUS WORKDIR; exit 0 pass, 1 fail, 77 skip (torch missing).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_io import save_safetensors  # noqa: E402

VERSUS, WORK = sys.argv[1], sys.argv[2]
torch.manual_seed(3)
failures = 0


# ---- models and their versus twins --------------------------------------------------------------------
def mlp():
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))


MLP_JSON = [{"op": "linear", "in": 6, "out": 8}, {"op": "relu"}, {"op": "linear", "in": 8, "out": 8}, {"op": "relu"},
            {"op": "linear", "in": 8, "out": 3}]


def cnn():
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                         nn.AvgPool2d(2), nn.Flatten(), nn.Linear(16, 3))


CNN_JSON = [{"op": "conv2d", "in": 2, "out": 4, "kernel": 3, "padding": 1}, {"op": "relu"}, {"op": "max_pool2d", "kernel": 2},
            {"op": "conv2d", "in": 4, "out": 4, "kernel": 3, "padding": 1}, {"op": "relu"}, {"op": "avg_pool2d", "kernel": 2},
            {"op": "flatten"}, {"op": "linear", "in": 16, "out": 3}]


def write_model(d, m, layers, shape):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.json"), "w") as f:
        json.dump({"format": "versus-model/1", "input": list(shape), "sequential": layers}, f)
    save_safetensors(os.path.join(d, "model.safetensors"), m.state_dict())


def attribute(d, x, method, target, *flags):
    np.save(os.path.join(d, "X.npy"), x.numpy().astype(np.float32))
    out = os.path.join(d, "A.npy")
    r = subprocess.run([VERSUS, "attribute", "--model", d, "--input", os.path.join(d, "X.npy"), "--method", method, "--target",
                        str(target), *flags, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: versus attribute --method {method}: {r.stderr.strip()}")
    return torch.from_numpy(np.load(out))


def compare(what, got, want, tol=1e-4):
    global failures
    want = want.detach().reshape(got.shape)
    scale = max(float(want.abs().max()), 1e-6)
    err = float((got - want).abs().max()) / scale
    ok = err <= tol and float(want.abs().max()) > 0
    print(f"{'ok' if ok else 'FAIL'}: {what}: max |versus - captum| / max |captum| = {err:.2e}")
    if not ok:
        failures += 1


# ---- Captum's definitions -------------------------------------------------------------------------------
def grad_of(m, x, target):
    x = x.clone().requires_grad_()
    m(x)[:, target].sum().backward()
    return x.grad


def modified_relu(m, x, target, use_grad_output):
    """ModifiedReluGradientAttribution: a backward hook on every nn.ReLU returning relu of the gradient
    at its input (GuidedBackprop) or at its output (Deconvolution)."""
    def hook(module, grad_input, grad_output):
        return (F.relu(grad_output[0] if use_grad_output else grad_input[0]),)
    hs = [mod.register_full_backward_hook(hook) for mod in m.modules() if isinstance(mod, nn.ReLU)]
    g = grad_of(m, x, target)
    for h in hs:
        h.remove()
    return g


def gradcam(m, x, target, layer):
    """LayerGradCam: relu(sum_c mean_hw(dS/dA_c) A_c), then LayerAttribution.interpolate (nearest)."""
    acts = m[:layer + 1](x).detach().requires_grad_()
    m[layer + 1:](acts)[:, target].sum().backward()
    cam = F.relu((acts.grad.mean(dim=(2, 3), keepdim=True) * acts).sum(dim=1, keepdim=True))
    return F.interpolate(cam, size=x.shape[2:], mode="nearest")


def lrp(m, x, target, rule="epsilon", eps=1e-9, gamma=0.25):
    """LRP: output relevance f(x)[target]; a layer with a rule passes a * J'^T (R / (z' + eps sign z'))
    (EpsilonRule, GammaRule w + gamma w+, Alpha1_Beta0_Rule w+; pools take EpsilonRule); ReLU passes R."""
    acts = [x]
    with torch.no_grad():
        for layer in m:
            acts.append(layer(acts[-1]))
    R = torch.zeros_like(acts[-1])
    R[:, target] = acts[-1][:, target]
    for i in range(len(m) - 1, -1, -1):
        layer, a = m[i], acts[i]
        if isinstance(layer, (nn.ReLU, nn.Flatten)):
            R = R.reshape(a.shape)
            continue
        a = a.clone().requires_grad_()
        if isinstance(layer, (nn.Linear, nn.Conv2d)):
            w = layer.weight.detach()
            w = w + gamma * w.clamp(min=0) if rule == "gamma" else w.clamp(min=0) if rule == "alpha1beta0" else w
            z = F.linear(a, w, layer.bias) if isinstance(layer, nn.Linear) else F.conv2d(a, w, layer.bias, padding=layer.padding)
            e = eps if rule == "epsilon" else 1e-9
        else:
            z, e = layer(a), eps
        sign = torch.sign(z.detach())
        sign[sign == 0] = 1
        s = R / (z.detach() + e * sign)
        (g,) = torch.autograd.grad(z, a, s)
        R = a.detach() * g
    return R


def ablation(m, x, target, mask):
    """FeatureAblation with a feature mask and a zero baseline: every element of a group gets its drop."""
    with torch.no_grad():
        base = m(x)[0, target]
        out = torch.zeros_like(x)
        for k in mask.unique():
            xa = torch.where(mask == k, torch.zeros_like(x), x)
            out += (base - m(xa)[0, target]) * (mask == k)
    return out


def leggauss(n):
    nodes, weights = np.polynomial.legendre.leggauss(n)
    return 0.5 * (1 + nodes), 0.5 * weights


def split_grads(m, layer, pts, target):
    """A = head(pts) and dS/dA through the tail."""
    A = m[:layer + 1](pts).detach().requires_grad_()
    m[layer + 1:](A)[:, target].sum().backward()
    return A.detach(), A.grad


def layer_ig(m, x, target, layer, n=50):
    alphas, w = leggauss(n)
    with torch.no_grad():
        a1, a0 = m[:layer + 1](x), m[:layer + 1](torch.zeros_like(x))
    pts = torch.cat([a0 + float(al) * (a1 - a0) for al in alphas])
    pts.requires_grad_()
    m[layer + 1:](pts)[:, target].sum().backward()
    g = (pts.grad * torch.tensor(w, dtype=torch.float32).view(-1, *([1] * (pts.dim() - 1)))).sum(0, keepdim=True)
    return (a1 - a0) * g


def layer_conductance(m, x, target, layer, n=50):
    alphas, _ = leggauss(n + 1)
    pts = torch.cat([float(al) * x for al in alphas])
    A, g = split_grads(m, layer, pts, target)
    return (g[:-1] * (A[1:] - A[:-1])).sum(0, keepdim=True)


def neuron_path(m, x, target, layer, neuron, conductance, n=50):
    alphas, w = leggauss(n)
    pts = torch.cat([float(al) * x for al in alphas]).requires_grad_()
    A = m[:layer + 1](pts)
    Af = A.reshape(A.shape[0], -1)
    (gx,) = torch.autograd.grad(Af[:, neuron].sum(), pts, retain_graph=True)
    scale = torch.tensor(w, dtype=torch.float32)
    if conductance:
        _, gA = split_grads(m, layer, pts.detach(), target)
        scale = scale * gA.reshape(gA.shape[0], -1)[:, neuron]
    return x * (gx * scale.view(-1, *([1] * (x.dim() - 1)))).sum(0, keepdim=True)


# ---- the comparisons --------------------------------------------------------------------------------------
for name, make, layers, shape, layer in (("mlp", mlp, MLP_JSON, (6,), 2), ("cnn", cnn, CNN_JSON, (2, 8, 8), 3)):
    m = make().eval()
    d = os.path.join(WORK, name)
    write_model(d, m, layers, shape)
    x = torch.randn(1, *shape)
    t = 1
    compare(f"{name} guided_backprop", attribute(d, x, "guided_backprop", t), modified_relu(m, x, t, False))
    compare(f"{name} deconvolution", attribute(d, x, "deconvolution", t), modified_relu(m, x, t, True))
    for rule in ("epsilon", "gamma", "alpha1beta0"):
        compare(f"{name} lrp {rule}", attribute(d, x, "lrp", t, "--lrp-rule", rule), lrp(m, x, t, rule))
    compare(f"{name} lrp epsilon 0.1", attribute(d, x, "lrp", t, "--lrp-epsilon", "0.1"), lrp(m, x, t, "epsilon", 0.1))
    mask = torch.arange(x.numel()).reshape(x.shape) % 3
    np.save(os.path.join(d, "mask.npy"), mask.numpy()[0].astype(np.float32))
    compare(f"{name} feature_ablation (mask of 3 groups)",
            attribute(d, x, "feature_ablation", t, "--feature-mask", os.path.join(d, "mask.npy")), ablation(m, x, t, mask))
    compare(f"{name} feature_ablation (elements)", attribute(d, x, "feature_ablation", t),
            ablation(m, x, t, torch.arange(x.numel()).reshape(x.shape)))
    compare(f"{name} layer_activation", attribute(d, x, "layer_activation", t, "--layer", str(layer)), m[:layer + 1](x))
    A, g = split_grads(m, layer, x, t)
    compare(f"{name} layer_gradient_x_activation", attribute(d, x, "layer_gradient_x_activation", t, "--layer", str(layer)), A * g)
    compare(f"{name} layer_integrated_gradients", attribute(d, x, "layer_integrated_gradients", t, "--layer", str(layer)),
            layer_ig(m, x, t, layer))
    compare(f"{name} layer_conductance", attribute(d, x, "layer_conductance", t, "--layer", str(layer)),
            layer_conductance(m, x, t, layer))
    top = int(A.reshape(-1).argmax())  # the default neuron: the most active unit at x
    for neuron, flags in ((0, ["--neuron", "0"]), (top, [])):
        compare(f"{name} neuron_integrated_gradients {neuron}",
                attribute(d, x, "neuron_integrated_gradients", t, "--layer", str(layer), *flags),
                neuron_path(m, x, t, layer, neuron, False))
        compare(f"{name} neuron_conductance {neuron}", attribute(d, x, "neuron_conductance", t, "--layer", str(layer), *flags),
                neuron_path(m, x, t, layer, neuron, True))
    if name == "cnn":
        compare("cnn guided_gradcam", attribute(d, x, "guided_gradcam", t, "--layer", str(layer)),
                modified_relu(m, x, t, False) * gradcam(m, x, t, layer))

# ---- a Siamese pair: the query's encoder layer, the reference fixed (Captum's layer methods on the
# forward x -> cos(enc(x), enc(r)) with the hook on enc[layer]); LRP's cosine rule is versus's own --------
class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))


def split_grads_fn(head, tail, pts):
    A = head(pts).detach().requires_grad_()
    tail(A).sum().backward()
    return A.detach(), A.grad


sm = Siamese().eval()
d = os.path.join(WORK, "siamese")
os.makedirs(d, exist_ok=True)
with open(os.path.join(d, "model.json"), "w") as f:
    json.dump({"format": "versus-model/1", "input": [6], "siamese": {"encoder": {"sequential": MLP_JSON[:2] + [
        {"op": "linear", "in": 8, "out": 4}]}, "similarity": "cosine"}}, f)
save_safetensors(os.path.join(d, "model.safetensors"), sm.state_dict())
x, ref = torch.randn(1, 6), torch.randn(1, 6)
np.save(os.path.join(d, "R.npy"), ref.numpy().astype(np.float32))
enc = sm.encoder
with torch.no_grad():
    e_ref = enc(ref)


def pair(method, *flags):
    np.save(os.path.join(d, "X.npy"), x.numpy().astype(np.float32))
    out = os.path.join(d, "A.npy")
    r = subprocess.run([VERSUS, "attribute", "--model", d, "--input", os.path.join(d, "X.npy"), "--reference", os.path.join(d, "R.npy"),
                        "--method", method, *flags, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: versus attribute --method {method} on a pair: {r.stderr.strip()}")
    return torch.from_numpy(np.load(out))


for layer in (0, 1):
    head = enc[:layer + 1]
    tail = lambda A: F.cosine_similarity(enc[layer + 1:](A), e_ref.expand(A.shape[0], -1), dim=1, eps=1e-8)  # noqa: E731
    path = f"encoder.{layer}"
    compare(f"siamese {path} layer_activation", pair("layer_activation", "--layer", path), head(x))
    A, g = split_grads_fn(head, tail, x)
    compare(f"siamese {path} layer_gradient_x_activation", pair("layer_gradient_x_activation", "--layer", path), A * g)
    alphas, w = leggauss(50)
    with torch.no_grad():
        a1, a0 = head(x), head(torch.zeros_like(x))
    pts = torch.cat([a0 + float(al) * (a1 - a0) for al in alphas])
    _, gp = split_grads_fn(lambda p: p, tail, pts)
    compare(f"siamese {path} layer_integrated_gradients", pair("layer_integrated_gradients", "--layer", path),
            (a1 - a0) * (gp * torch.tensor(w, dtype=torch.float32).view(-1, 1)).sum(0, keepdim=True))
    alphas, _ = leggauss(51)
    A, g = split_grads_fn(head, tail, torch.cat([float(al) * x for al in alphas]))
    compare(f"siamese {path} layer_conductance", pair("layer_conductance", "--layer", path),
            (g[:-1] * (A[1:] - A[:-1])).sum(0, keepdim=True))

sys.exit(1 if failures else 0)
