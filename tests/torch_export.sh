#!/bin/sh
# torch_export.sh - a PyTorch user's models into versus through datasets/io/torch_to_versus.py, predicted,
# explained and evaluated (tests/torch_export.py, run by Debian's /usr/bin/python3); skipped without torch.
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
    echo "SKIP: $PY cannot import torch and numpy (Debian package python3-torch)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/versus_torch_export.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
src=$(cd "$(dirname "$0")/.." && pwd)
PYTHONDONTWRITEBYTECODE=1 "$PY" "$src/tests/torch_export.py" ./versus "$src" "$dir"
