#!/bin/sh
# cli.sh - the `versus` program as a user meets it: help, version, usage errors, data verbs.
set -u
. "$(dirname "$0")/cli_lib.sh"
V=./versus

check "help lists verbs" 0 $V help
grep_out "help names demo" "demo" out.txt
check "help of a verb" 0 $V help data
grep_out "data help documents SPEC" "synthetic-tabular" out.txt
# help for users: every verb answers --help; kernel details live under 'help bench perf'
for verb in demo data train predict attribute evaluate explain bench report merge; do
    check "$verb --help" 0 $V $verb --help
    grep_out "$verb --help is its manual" "usage: versus $verb" out.txt
done
check "a topic's --help" 0 $V bench perf --help
grep_out "bench perf --help" "Winograd" out.txt
check "help bench perf" 0 $V help bench perf
grep_out "help bench perf names the kernels" "VERSUS_CONV=direct" out.txt
check "help bench with an unknown topic" 2 $V help bench nope
check "help methods" 0 $V help methods
grep_out "help methods: an attribution method" "^  integrated_gradients " out.txt
grep_out "help methods: an SNX method with its old spelling" "^  snx_kl (snx-kl) " out.txt
grep_out "help methods: the explainers with verbs" "versus explain cem" out.txt
check "unknown explainer" 2 $V explain nope
grep_out "unknown explainer names the others" "unknown explainer 'nope' (snx, svae or cem" err.txt
# a paper bench's own manual and flags, by either spelling
check "bench snx --help" 0 $V bench snx --help
grep_out "bench snx --help lists its flags" "^  --pairing X" out.txt
grep_out "bench snx --help explains shards" "^Shards and resume" out.txt
check "help bench cem" 0 $V help bench cem
grep_out "help bench cem lists its flags" "^  --vae-epochs X" out.txt
check "top-level help" 0 $V help
if grep -q "Winograd\|F(4x4" out.txt; then bad "top-level help speaks of kernels"; else ok; fi
grep_out "top-level help points at PyTorch models" "torch_to_versus.py" out.txt
check "help attribute" 0 $V help attribute
grep_out "--samples per method: coalitions" "lime, kernel_shap: coalitions evaluated" out.txt
grep_out "--samples per method: noisy copies" "smoothgrad, noise_tunnel: noisy copies" out.txt
grep_out "--layer of the layer methods" "module path of the layer" out.txt
grep_out "--layer of Grad-CAM" "gradcam, guided_gradcam: the conv layer" out.txt
check "help evaluate" 0 $V help evaluate
head -1 out.txt | grep -q -- "--reference" && ok || bad "evaluate's first usage line names --reference"
# the changelog's count of attribution methods is the registry's
$V help attribute >out.txt 2>err.txt
n=$(sed -n '/^Methods (--method):/,/^Options:/p' out.txt | grep -c '^  [a-z][a-z_0-9]* ')
readme="$(dirname "$0")/../README.md"
grep -q "explain: $n attribution methods" "$readme" && ok || bad "README's changelog counts $n attribution methods (registry)"
check "version" 0 $V --version
grep_out "version string" "versus [0-9]" out.txt
# the commit compiled in is what autograd/build_commit.sh says of the source tree
grep_out "version names the build's commit" "^versus [0-9.]* (commit $(sh "$VERSUS_SRCDIR/autograd/build_commit.sh" "$VERSUS_SRCDIR"))\$" out.txt
check "unknown verb" 2 $V frobnicate
grep_out "one-line message" "^versus: unknown verb 'frobnicate'" err.txt
check "unknown flag" 2 $V demo --bogus
grep_out "flag named" "unknown option '--bogus'" err.txt
check "bad number" 2 $V demo --seed abc
check "threads must be positive" 2 $V data describe synthetic-tabular --threads 0
grep_out "threads named" "option '--threads'" err.txt
check "no verb" 2 $V
check "describe synthetic tabular" 0 $V data describe synthetic-tabular --n 200 --seed 3
grep_out "rows reported" '"rows": 200' out.txt
check "describe synthetic graphs" 0 $V data describe synthetic-graph --n 30
grep_out "graph kind" '"kind": "graphs"' out.txt
check "unknown SPEC" 1 $V data describe nope
grep_out "SPEC named" "unknown data SPEC 'nope'" err.txt
check "missing csv" 1 $V data describe csv:/nonexistent/file.csv
grep_out "file named" "/nonexistent/file.csv" err.txt
printf 'a,b,label\n1,x,yes\n2,y,no\n3,x,yes\n4,"y, quoted",no\n' >cli.csv
check "describe csv" 0 $V data describe csv:cli.csv --label label
grep_out "quoted category" 'b=y, quoted' out.txt
printf 'a,b\n1,2\n3\n' >cli_bad.csv
check "ragged csv" 1 $V data describe csv:cli_bad.csv
grep_out "line named" "cli_bad.csv:3" err.txt
rm -rf cli_export
check "export with pairs" 0 $V data export synthetic-tabular --n 100 --out cli_export --pairs
for f in X.npy y.npy features.txt pairs.npy pair_labels.npy pair_portion.npy; do
    if [ -s "cli_export/$f" ]; then pass=$((pass + 1)); else fails=$((fails + 1)); echo "FAIL: export wrote no $f"; fi
done
check "export needs --out" 2 $V data export synthetic-tabular
check "demo runs" 0 $V demo --out cli_demo
grep_out "demo explains" "integrated_gradients" out.txt
rm -rf out.txt err.txt cli.csv cli_bad.csv cli_export cli_demo
echo "cli: $pass passed, $fails failed"
[ "$fails" -eq 0 ]
