"""tests/onnx/make_fixtures.py - the small committed ONNX files test_onnx reads without torch, with an input
and PyTorch's output for each (run once with Debian's /usr/bin/python3; the outputs are committed).
small_cnn.onnx: grouped, dilated and depthwise convs, batch norm, Relu, Clip, HardSwish, a residual Add,
MaxPool with ceil_mode, a view() flatten (Shape -> Gather -> Unsqueeze -> Concat -> Reshape), Gemm, Softmax.
mlp.onnx: MatMul + Add (a Linear without bias plus a constant), Sigmoid, Sub, Div, ReduceMean, Sqrt."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(7)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.c2 = nn.Conv2d(4, 4, 3, padding=2, dilation=2, groups=2)
        self.dw = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)
        self.fc = nn.Linear(4 * 2 * 2, 3)

    def forward(self, x):
        h = torch.relu(self.bn(self.c1(x)))
        h = h + F.relu6(self.c2(h))
        h = F.hardswish(self.dw(h))
        h = F.max_pool2d(h, 2, ceil_mode=True)
        return torch.softmax(self.fc(h.view(h.size(0), -1)), dim=1)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(5, 6, bias=False)
        self.l2 = nn.Linear(6, 2)

    def forward(self, x):
        h = torch.sigmoid(self.l1(x) + 0.5)
        h = (h - h.mean(dim=1, keepdim=True)) / torch.sqrt(h.mean(dim=1, keepdim=True) + 1.0)
        return self.l2(h)


def write(name, m, shape):
    m.eval()
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.2, 0.2)
            mod.running_var.uniform_(0.5, 1.5)
    x = torch.randn(2, *shape)
    torch.onnx.export(m, x[:1], f"{name}.onnx", opset_version=13, input_names=["x"], output_names=["y"])
    np.save(f"{name}_x.npy", x.numpy())
    with torch.no_grad():
        np.save(f"{name}_y.npy", m(x).numpy())


write("small_cnn", SmallCNN(), (3, 8, 8))
write("mlp", MLP(), (5,))
