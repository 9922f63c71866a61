#!/bin/sh
# torch_captum.sh - `versus attribute` against Captum's definitions computed in PyTorch
# (tests/torch_captum.py, run by Debian's /usr/bin/python3); skipped without torch.
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
    echo "SKIP: $PY cannot import torch and numpy (Debian package python3-torch)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/versus_torch_captum.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$PY" "$(dirname "$0")/torch_captum.py" ./versus "$dir"
