"""tests/torch_onnx.py - ONNX graphs exported by PyTorch, run by versus against PyTorch's own outputs.

torchvision's classification families (resnet18, vgg11, densenet121, mobilenet_v2, squeezenet1_1; random
weights, randomised batch-norm statistics, small inputs) are exported with torch.onnx.export in eval mode
and fed to `versus predict --model FILE.onnx`; the logits must equal torch's to 1e-4 relative (to the
largest logit).  On resnet18: `versus import` writes a model directory that predicts bit for bit the same,
and saliency and integrated gradients (Gauss-Legendre, as versus's default rule) equal the same
computations in PyTorch.  A small residual CNN is exported at opsets 11, 13 and 17, and a torchvision model
with the x.view(x.size(0), -1) flatten exercises the folding of Shape -> Gather -> Unsqueeze -> Concat ->
Reshape.
usage: torch_onnx.py VERSUS WORKDIR [NAME...]; exit 0 pass, 1 fail, 77 skip (torch missing).
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torchvision
except ImportError as e:  # the test is skipped without torch
    print(f"SKIP: {e} (install python3-torch and python3-torchvision)")
    sys.exit(77)

VERSUS, WORK = sys.argv[1], sys.argv[2]
ONLY = set(sys.argv[3:])
torch.manual_seed(5)
failures = 0


def run(*args):
    r = subprocess.run([VERSUS, *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: versus {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def compare(what, got, want, tol=1e-4):
    global failures
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64).reshape(np.shape(got))
    scale = max(float(np.abs(want).max()), 1e-6)
    err = float(np.abs(got - want).max()) / scale
    ok = err <= tol and float(np.abs(want).max()) > 0
    print(f"{'ok' if ok else 'FAIL'}: {what}: max |versus - torch| / max |torch| = {err:.2e}")
    if not ok:
        failures += 1


def randomize(m):
    """Batch-norm statistics and affine parameters away from their defaults, so that they matter."""
    g = torch.Generator().manual_seed(11)
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
            mod.running_var.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.weight.data.copy_(torch.rand(mod.num_features, generator=g) + 0.5)
            mod.bias.data.copy_(torch.randn(mod.num_features, generator=g) * 0.1)
    return m.eval()


def export(name, m, shape, opset=13, dynamic=False):
    """dynamic: the batch as a named dim, so that x.view(x.size(0), -1) exports its Shape chain."""
    path = os.path.join(WORK, f"{name}.onnx")
    x = torch.randn(1, *shape)
    axes = {"x": {0: "n"}, "y": {0: "n"}} if dynamic else None
    torch.onnx.export(m, x, path, opset_version=opset, input_names=["x"], output_names=["y"], dynamic_axes=axes)
    return path


def predict(path, x, out_name):
    xp, yp = os.path.join(WORK, f"{out_name}_X.npy"), os.path.join(WORK, f"{out_name}_Y.npy")
    np.save(xp, x.numpy().astype(np.float32))
    run("predict", "--model", path, "--input", xp, "--out", yp)
    return np.load(yp)


def check_model(name, m, shape, n=2, opset=13, dynamic=False):
    m = randomize(m)
    path = export(f"{name}_o{opset}", m, shape, opset, dynamic)
    x = torch.randn(n, *shape)
    with torch.no_grad():
        want = m(x)
    compare(f"{name} (opset {opset}) logits", predict(path, x, f"{name}_o{opset}"), want)
    return m, path, x


class Residual(nn.Module):
    """A small network of the ops the families share, with a view() flatten (Shape/Gather/Concat/Reshape)."""
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=2, dilation=2, groups=2)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        h = torch.relu(self.bn(self.c1(x)))
        h = h + torch.nn.functional.relu6(self.c2(h))
        h = torch.nn.functional.hardswish(self.dw(h))
        h = torch.nn.functional.max_pool2d(h, 2, ceil_mode=True)
        return torch.softmax(self.fc(h.view(h.size(0), -1)), dim=1)


def wanted(name):
    return not ONLY or name in ONLY


if wanted("residual"):
    for opset in (11, 13, 17):
        check_model("residual", Residual(), (3, 16, 16), opset=opset, dynamic=opset == 13)

families = [("resnet18", lambda: torchvision.models.resnet18(num_classes=10), (3, 64, 64)),
            ("vgg11", lambda: torchvision.models.vgg11(num_classes=10), (3, 32, 32)),
            ("densenet121", lambda: torchvision.models.densenet121(num_classes=10), (3, 32, 32)),
            ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(num_classes=10), (3, 32, 32)),
            ("squeezenet1_1", lambda: torchvision.models.squeezenet1_1(num_classes=10), (3, 48, 48))]
for name, build, shape in families:
    if not wanted(name):
        continue
    m = build()
    if name == "vgg11":  # torchvision's 7x7 adaptive pool exports only for inputs of 224 and up
        m.avgpool = nn.AdaptiveAvgPool2d(1)
        m.classifier[0] = nn.Linear(512, 4096)
    m, path, x = check_model(name, m, shape)
    if name != "resnet18":
        continue
    # import: a model directory that predicts the same bits
    d = os.path.join(WORK, "resnet18_dir")
    run("import", path, "--out", d)
    a, b = predict(path, x, "r18a"), predict(d, x, "r18b")
    same = a.tobytes() == b.tobytes()
    print(f"{'ok' if same else 'FAIL'}: resnet18 imported directory predicts the same bits as the .onnx file")
    failures += not same
    # saliency and integrated gradients of the target logit, one image
    x1, target, steps = x[:1].clone(), 3, 16
    xp, ap = os.path.join(WORK, "ig_X.npy"), os.path.join(WORK, "ig_A.npy")
    np.save(xp, x1.numpy())
    run("attribute", "--model", path, "--input", xp, "--method", "saliency", "--target", str(target), "--out", ap)
    xs = x1.clone().requires_grad_(True)
    m(xs)[0, target].backward()
    compare("resnet18 saliency", np.load(ap), xs.grad, tol=1e-3)
    run("attribute", "--model", path, "--input", xp, "--method", "integrated_gradients", "--target", str(target),
        "--steps", str(steps), "--out", ap)
    nodes, weights = np.polynomial.legendre.leggauss(steps)
    alphas, weights = (nodes + 1) / 2, weights / 2
    path_x = torch.cat([a * x1 for a in alphas]).requires_grad_(True)
    m(path_x)[:, target].sum().backward()
    ig = x1[0] * sum(float(w) * path_x.grad[k] for k, w in enumerate(weights))
    compare("resnet18 integrated gradients (16 Gauss-Legendre steps)", np.load(ap), ig, tol=1e-3)

print(f"{failures} failure(s)")
sys.exit(1 if failures else 0)
