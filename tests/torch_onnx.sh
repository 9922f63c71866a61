#!/bin/sh
# torch_onnx.sh - ONNX graphs exported by PyTorch (torchvision's five classification families and a small
# network at three opsets) against PyTorch's outputs and gradients (tests/torch_onnx.py); skipped
# without torch.
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, torchvision, numpy' 2>/dev/null; then
    echo "SKIP: $PY cannot import torch, torchvision and numpy (Debian packages python3-torch, python3-torchvision)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/versus_torch_onnx.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$PY" "$(dirname "$0")/torch_onnx.py" ./versus "$dir" "$@"
