#!/bin/sh
# torch_composite.sh - composite models (StarGAN generator and critic, VAE) round trip between PyTorch
# and versus (tests/torch_composite.py, run by Debian's /usr/bin/python3); skipped without torch.
PY=/usr/bin/python3
if [ ! -x "$PY" ] || ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
    echo "SKIP: $PY cannot import torch and numpy (Debian package python3-torch)"
    exit 77
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/versus_torch_composite.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
"$PY" "$(dirname "$0")/torch_composite.py" ./tests/composite_tool "$dir"
